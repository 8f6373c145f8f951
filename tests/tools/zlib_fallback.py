#!/usr/bin/env python3
"""ctest build.zlib_fallback: the zlib-only build (WHEELFIX_ISAL=OFF) builds, passes
the zip layer's unit tests, and writes the same wheels as this build, judged by
content: every member's inflated bytes and RECORD, never the compressed bytes
(ISA-L and zlib deflate differently; docs/compression.md).

Builds only the CLI and the unit test binary, in <build>/zlib-fallback (ccache
makes a rebuild cheap). Environment: WHEELFIX (this build's binary),
WHEELFIX_SOURCE_DIR, WHEELFIX_BUILD_DIR."""
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SOURCE = Path(os.environ["WHEELFIX_SOURCE_DIR"])
BUILD = Path(os.environ["WHEELFIX_BUILD_DIR"]) / "zlib-fallback"
THIS = Path(os.environ["WHEELFIX"])
ZIP_TESTS = "codec*,*zip*,*splice*,inflate_indexed*,*deflate*,*seekable*,*stream*"


def run(*args, **kwargs):
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.run([str(a) for a in args], check=True, **kwargs)


def build():
    env = dict(os.environ)
    if shutil.which("ccache"):
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
    run("cmake", "-S", SOURCE, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release", "-DWHEELFIX_ISAL=OFF",
        stdout=subprocess.DEVNULL, env=env)
    run("cmake", "--build", BUILD, "-j2", "--target", "wheelfix", "wheelfix_unit_tests", stdout=subprocess.DEVNULL, env=env)


def contents(wheel):
    with zipfile.ZipFile(wheel) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def main():
    build()
    fallback = BUILD / "wheelfix"
    version = subprocess.run([fallback, "--version"], capture_output=True, text=True, check=True).stdout
    print(version.strip())
    run(BUILD / "tests" / "wheelfix_unit_tests", f"-tc={ZIP_TESTS}")

    wheel = SOURCE / "sample_wheels" / "dist" / "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl"
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {}
        for name, binary in (("isal", THIS), ("zlib", fallback)):
            out = Path(tmp) / name
            run(binary, "relink", wheel, "-o", out, "--set-rpath", "$ORIGIN/" + "x" * 300, stdout=subprocess.DEVNULL)
            (written,) = out.glob("*.whl")
            run("unzip", "-tq", written)
            outputs[name] = written
        isal, zlib = contents(outputs["isal"]), contents(outputs["zlib"])
        if isal.keys() != zlib.keys():
            sys.exit(f"member lists differ: {sorted(isal.keys() ^ zlib.keys())}")
        differing = [name for name in isal if isal[name] != zlib[name]]
        if differing:
            sys.exit(f"inflated content differs between the ISA-L and the zlib build: {differing}")
        record = next(name for name in isal if name.endswith(".dist-info/RECORD"))
        print(f"{len(isal)} members, RECORD included ({record}): the same inflated bytes from both builds")
        run(fallback, "verify", outputs["isal"], stdout=subprocess.DEVNULL)
        run(THIS, "verify", outputs["zlib"], stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
