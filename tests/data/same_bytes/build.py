"""Builds the gcc-made inputs of the same-bytes guard (tests/e2e/test_same_bytes.py)
into this directory; they are committed, so the guard's inputs never depend on the
compiler of the machine that runs it. Run once by hand (gcc, objcopy, python3 headers):

    python3 tests/data/same_bytes/build.py

- graftpkg-1.0-cp311-cp311-linux_x86_64.whl: a CPython extension NEEDING libfoo.so.1
  (graft-lib/), which NEEDS libbar.so.2, both with symbol versions (as test_graft.py).
- bigguard-1.0-cp311-cp311-linux_x86_64.whl: bigguard/libbig.so, 72 MiB (beyond
  repair/plan.hpp's kBoundedFrom, so the bounded read, the foresight and the
  speculation run), a fatbin of 4 MiB sm_90 entries (a random page each, zeros after:
  it deflates about 500:1, under the zip-bomb ratio) in .nv_fatbin; RUNPATH
  $ORIGIN and a build tree; NEEDED libhelper.so (in the wheel), libpriv.so.1
  (priv-lib/, grafted) and libc10_cuda.so, whose torch 2.9 function
  c10_cuda_check_implementation(..., int, bool) torch 2.10 lacks (shimmed).
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "e2e"))
import wfx  # noqa: E402
from test_graft import build_extension, build_libraries, graft_wheel  # noqa: E402
from test_repair_bounded import write_fatbin  # noqa: E402
from test_shim import FAKE_OLD_TORCH, OLD_CHECK  # noqa: E402

BLOB_MIB = 72
ENTRY = 4 << 20
BIG_SOURCE = r"""
int helper_value(void);
int priv_value(void);
void old_check(int, const char*, const char*, int, _Bool) __asm__("%s");
int big_value(void) { return helper_value() + priv_value(); }
void call_check(void) { old_check(0, "big.c", "call_check", 7, 1); }
""" % OLD_CHECK


def gcc(work, output, *args):
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wl,-z,noexecstack", "-o", str(output), *map(str, args)],
                   cwd=work, check=True)


def fatbin(path):
    write_fatbin(path, BLOB_MIB << 20, ENTRY, bytes(2 * ENTRY))


def build_graft(tmp):
    lib = build_libraries(tmp / "prefix")
    ext = build_extension(tmp, lib)
    wheel = graft_wheel(tmp, ext)
    shutil.rmtree(HERE / "graft-lib", ignore_errors=True)
    (HERE / "graft-lib").mkdir()
    for name in ("libfoo.so.1", "libbar.so.2"):
        shutil.copy(lib / name, HERE / "graft-lib" / name)
    shutil.copy(wheel, HERE / wheel.name)


def build_big(tmp):
    work = tmp / "big"
    work.mkdir()
    (work / "old.c").write_text(FAKE_OLD_TORCH)
    gcc(work, "libc10_cuda.so", "old.c", "-Wl,-soname,libc10_cuda.so")
    (work / "priv.c").write_text("int priv_value(void) { return 2; }\n")
    priv = HERE / "priv-lib"
    shutil.rmtree(priv, ignore_errors=True)
    priv.mkdir()
    gcc(work, priv / "libpriv.so.1", "priv.c", "-Wl,-soname,libpriv.so.1")
    (work / "helper.c").write_text("int helper_value(void) { return 40; }\n")
    gcc(work, "libhelper.so", "helper.c", "-Wl,-soname,libhelper.so")
    fatbin(work / "blob.bin")
    subprocess.run(["objcopy", "-I", "binary", "-O", "elf64-x86-64", "-B", "i386:x86-64",
                    "--rename-section", ".data=.nv_fatbin,alloc,load,readonly,data,contents", "blob.bin", "blob.o"],
                   cwd=work, check=True)
    (work / "big.c").write_text(BIG_SOURCE)
    gcc(work, "libbig.so", "big.c", "blob.o", f"-L{work}", f"-L{priv}", "-lhelper", "-l:libpriv.so.1", "-lc10_cuda",
        "-Wl,-rpath,$ORIGIN:/nonexistent/build-tree/lib", "-Wl,--enable-new-dtags")
    files = {"bigguard/__init__.py": b"", "bigguard/libbig.so": (work / "libbig.so").read_bytes(),
             "bigguard/libhelper.so": (work / "libhelper.so").read_bytes()}
    tag = "cp311-cp311-linux_x86_64"
    wfx.write_wheel(HERE / f"bigguard-1.0-{tag}.whl", {**files, **wfx.dist_info_members("bigguard", "1.0", tag)})


def main():
    with tempfile.TemporaryDirectory() as tmp:
        build_graft(Path(tmp))
        build_big(Path(tmp))


if __name__ == "__main__":
    main()
