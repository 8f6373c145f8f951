#!/bin/sh
# Builds the fixtures of the ELF editor's tests (tests/unit/test_elf_editor.cpp,
# tests/e2e/test_elf_editor_roundtrip.py) into edit/ next to this script.
#
# Contract: run from anywhere; sources in edit/src, outputs in edit/ (each a few KB,
# the big-dynstr library about 60 KB), no build ids, so a rebuild gives the same
# kind of file. The tests' expectations follow these exact recipes:
#   libshared-tail.so    x86_64, unstripped (.symtab with section symbols), DT_RPATH
#                        "tail_of_symbol" = tail of the symbol "wf_data_tail_of_symbol",
#                        NEEDED "libz.so.1" = tail of the symbol "wf_helper_libz.so.1"
#   libsysv.so           x86_64, --hash-style=sysv (no .gnu.hash), DT_RUNPATH "$ORIGIN"
#   libbigdynstr.so      x86_64, 600 long symbol names (.dynstr ~ 33 KB), no RPATH/RUNPATH
#   testsimple-{i686,armv7l,ppc64le,s390x}.so   copied out of ../auditwheel/glibc wheels
#                        (pypa/auditwheel, MIT; see ../auditwheel/README.md): ELF32 little
#                        endian (i686, armv7l), ELF64 little (ppc64le) and big (s390x) endian;
#                        this machine has no 32-bit libc for gcc -m32
#   {x86_64,aarch64}/app, libwfapp.so, libwfdep.so.2   a PIE program that needs
#                        libwfapp.so (RUNPATH /nonexistent/wheelfix/exe), which needs
#                        libwfdep.so.1 (RUNPATH /nonexistent/wheelfix/lib); the dependency
#                        is shipped as libwfdep.so.2 with SONAME libwfdep.so.1. As built the
#                        program cannot start; with both RUNPATHs set to $ORIGIN and the
#                        NEEDED replaced by libwfdep.so.2 it prints "wheelfix-edit-app 42".
#                        aarch64 uses the toolchain's default 64 KiB max-page-size (and
#                        -z norelro, which keeps the files small).
# Needs gcc and python3; aarch64-linux-gnu-gcc for the aarch64 set (skipped without it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/edit"
src="$out/src"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
common="-O2 -fPIC -Wl,--build-id=none -Wl,-z,noseparate-code"

gcc $common -shared -o "$out/libshared-tail.so" "$src/shared_tail.c" \
    -Wl,-soname,libshared-tail.so -Wl,--disable-new-dtags -Wl,-rpath,tail_of_symbol \
    -Wl,--no-as-needed -lz

gcc $common -s -shared -o "$out/libsysv.so" "$src/app_dep.c" \
    -Wl,-soname,libsysv.so -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' -Wl,--hash-style=sysv

i=0
while [ $i -lt 600 ]; do
    printf 'int wf_big_dynstr_symbol_with_a_deliberately_long_name_%04d;\n' $i
    i=$((i + 1))
done > "$work/bigdynstr.c"
gcc $common -s -shared -o "$out/libbigdynstr.so" "$work/bigdynstr.c" -Wl,-soname,libbigdynstr.so

# The program, its library and the library's dependency, for one toolchain.
build_app() {  # $1 compiler (and flags), $2 output directory
    mkdir -p "$2"
    $1 $common -s -shared -o "$2/libwfdep.so.2" "$src/app_dep.c" -Wl,-soname,libwfdep.so.1
    ln -sf "$2/libwfdep.so.2" "$work/libwfdep.so.1"
    ln -sf "$2/libwfdep.so.2" "$work/libwfdep.so"
    $1 $common -s -shared -o "$2/libwfapp.so" "$src/app_lib.c" -Wl,-soname,libwfapp.so \
        -Wl,--enable-new-dtags -Wl,-rpath,/nonexistent/wheelfix/lib -L"$work" -lwfdep
    $1 -O2 -fPIE -pie -s -Wl,--build-id=none -Wl,-z,noseparate-code -o "$2/app" "$src/app.c" \
        -Wl,--enable-new-dtags -Wl,-rpath,/nonexistent/wheelfix/exe -L"$2" -lwfapp \
        -Wl,-rpath-link,"$work"
    rm -f "$work/libwfdep.so.1" "$work/libwfdep.so"
}

build_app gcc "$out/x86_64"
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
    # -z norelro: RELRO's 4 KiB-aligned end would pad each file to 64 KiB.
    build_app "aarch64-linux-gnu-gcc -Wl,-z,norelro" "$out/aarch64"
else
    echo "build_edit_fixtures: aarch64-linux-gnu-gcc missing, aarch64 fixtures not rebuilt" >&2
fi

python3 - "$here/../auditwheel/glibc" "$out" <<'PY'
import sys, zipfile, pathlib
wheels, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for arch in ("i686", "armv7l", "ppc64le", "s390x"):
    with zipfile.ZipFile(wheels / f"testsimple-0.0.1-cp313-cp313-linux_{arch}.whl") as wheel:
        member = next(m for m in wheel.namelist() if m.endswith(".so"))
        (out / f"testsimple-{arch}.so").write_bytes(wheel.read(member))
PY
ls -l "$out" "$out/x86_64" "$out/aarch64" 2>/dev/null | grep -v -e ' src$'
