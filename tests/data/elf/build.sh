#!/bin/sh
# Builds the small ELF fixtures the unit tests read (tests/unit/test_elf.cpp).
#
# Contract: run from anywhere; writes the files next to this script, each a few KB,
# stripped (-s) and without a build id so rebuilding gives the same kind of file.
# Needs gcc (x86_64, and -m32 for the freestanding ELF32 pair); aarch64-linux-gnu-gcc
# and the auditwheel wheels are used when present. The test expectations (NEEDED,
# SONAME, RPATH vs RUNPATH, versions) are written against these exact recipes, so
# change both together.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/src"
cd "$here"
common="-O2 -fPIC -s -Wl,--build-id=none -Wl,-z,noseparate-code"

# x86_64: versioned symbols (verdef + verneed GLIBC_2.14), SONAME, DT_RPATH, both hash styles.
gcc $common -shared -o libversioned.so "$src/versioned.c" \
    -Wl,-soname,libversioned.so.1 -Wl,--version-script,"$src/versioned.map" \
    -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/../lib:/opt/wf' -Wl,--hash-style=both -lm

# x86_64: DT_RUNPATH, no SONAME, no versions of its own, DT_HASH only.
gcc $common -shared -o libplain.so "$src/plain.c" \
    -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' -Wl,--hash-style=sysv -Wl,--no-as-needed -lz

# x86_64 executable with a copy relocation (a defined symbol with a verneed version).
gcc -O2 -s -Wl,--build-id=none -Wl,-z,noseparate-code -fno-pie -no-pie \
    -Wl,--hash-style=gnu -o copyreloc "$src/copyreloc.c"

# x86_64 relocatable object: no dynamic section.
gcc -O2 -c -o object.o "$src/object.c"
strip --strip-unneeded object.o

# i386 (ELF32), freestanding: a base library with versions and a user that needs them.
m32="-m32 -O2 -fPIC -s -nostdlib -shared -Wl,--build-id=none -Wl,-z,noseparate-code"
gcc $m32 -o libwfbase32.so "$src/base32.c" -Wl,-soname,libwfbase32.so.1 \
    -Wl,--version-script,"$src/base32.map" -Wl,--hash-style=gnu
gcc $m32 -o libwfuser32.so "$src/user32.c" -Wl,-soname,libwfuser32.so \
    -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/base' -Wl,--hash-style=gnu \
    -L. -l:libwfbase32.so

# aarch64: the versioned library again, with RUNPATH and GNU hash only.
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
    aarch64-linux-gnu-gcc $common -Wl,-z,max-page-size=4096 -shared -o libversioned-aarch64.so "$src/versioned.c" \
        -Wl,-soname,libversioned.so.1 -Wl,--version-script,"$src/versioned.map" \
        -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' -Wl,--hash-style=gnu -lm
fi

# Big endian and MIPS from real third-party wheels (see ../auditwheel/README.md).
wheels="$here/../auditwheel/glibc"
if [ -d "$wheels" ]; then
    python3 - "$wheels" "$here" <<'PY'
import sys, zipfile, pathlib
wheels, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for arch, name in (("s390x", "testsimple-s390x.so"), ("mips64", "testsimple-mips64el.so")):
    wheel = zipfile.ZipFile(wheels / f"testsimple-0.0.1-cp313-cp313-linux_{arch}.whl")
    member = next(m for m in wheel.namelist() if m.endswith(".so"))
    (out / name).write_bytes(wheel.read(member))
PY
fi
ls -l "$here" | grep -v -e build.sh -e ' src$'
