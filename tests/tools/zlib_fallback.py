#!/usr/bin/env python3
"""ctest build.zlib_fallback: the zlib-only variant (ISA-L compiled out) passes the zip
layer's unit tests and writes the same wheels as this build, judged by content: every
member's inflated bytes and RECORD, never the compressed bytes (ISA-L and zlib deflate
differently; docs/compression.md).

The variant is built with this build (tests/CMakeLists.txt: src/zip/codec.cpp compiled
without WHEELFIX_HAVE_ISAL, the CLI and the unit tests linked again from this build's
objects), not as a second tree: that cost CI minutes for nothing the test proves. Here:
it needs no libisal (linked --as-needed: it calls no ISA-L), --version says zlib, and a
WHEELFIX_ISAL=OFF configure (configure only, in <build>/zlib-fallback) picks zlib.
Environment: WHEELFIX (this build's binary), WHEELFIX_ZLIB, WHEELFIX_UNIT_TESTS_ZLIB,
WHEELFIX_SOURCE_DIR, WHEELFIX_BUILD_DIR."""
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SOURCE = Path(os.environ["WHEELFIX_SOURCE_DIR"])
CONFIGURE = Path(os.environ["WHEELFIX_BUILD_DIR"]) / "zlib-fallback"
THIS = Path(os.environ["WHEELFIX"])
FALLBACK = Path(os.environ["WHEELFIX_ZLIB"])
UNIT_TESTS = Path(os.environ["WHEELFIX_UNIT_TESTS_ZLIB"])
ZIP_TESTS = "codec*,*zip*,*splice*,inflate_indexed*,*deflate*,*seekable*,*stream*"
# Test cases that loop over compiled_backends() ("... with every backend") already run
# their zlib pass in this build's own unit tests (ctest unit), where zlib is one of the
# two backends; here they would repeat it (the 4 GiB stream alone: ~70 s of CPU).
ZIP_TESTS_EXCLUDED = "*every backend*"


def run(*args, **kwargs):
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.run([str(a) for a in args], check=True, **kwargs)


def needed(binary):
    dynamic = run("readelf", "-dW", binary, capture_output=True, text=True).stdout
    return [line.split("[")[1].split("]")[0] for line in dynamic.splitlines() if "(NEEDED)" in line]


def check_no_isal():
    for binary in (FALLBACK, UNIT_TESTS):
        libraries = needed(binary)
        print(f"{binary.name} needs {', '.join(libraries)}")
        if any("isal" in library for library in libraries):
            sys.exit(f"{binary} needs {libraries}: the zlib variant still calls ISA-L")
    if not any("isal" in library for library in needed(THIS)):
        sys.exit(f"{THIS} needs no libisal: this build is no ISA-L build, the comparison proves nothing")


def check_off_configure():
    """WHEELFIX_ISAL=OFF configures a zlib-only build (the option's path in CMake)."""
    proc = run("cmake", "-S", SOURCE, "-B", CONFIGURE, "-DCMAKE_BUILD_TYPE=Release", "-DWHEELFIX_ISAL=OFF",
               "-DWHEELFIX_BUILD_TESTS=OFF", capture_output=True, text=True)
    if "wheelfix: compression backend zlib" not in proc.stdout:
        sys.exit(f"a WHEELFIX_ISAL=OFF configure did not pick zlib:\n{proc.stdout}")


def contents(wheel):
    with zipfile.ZipFile(wheel) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def main():
    check_no_isal()
    check_off_configure()
    version = run(FALLBACK, "--version", capture_output=True, text=True).stdout
    print(version.strip())
    if ", zlib, " not in version:
        sys.exit(f"the zlib variant's --version names another backend: {version.strip()}")
    run(UNIT_TESTS, f"-tc={ZIP_TESTS}", f"-tce={ZIP_TESTS_EXCLUDED}")

    wheel = SOURCE / "sample_wheels" / "dist" / "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl"
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {}
        for name, binary in (("isal", THIS), ("zlib", FALLBACK)):
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
        run(FALLBACK, "verify", outputs["isal"], stdout=subprocess.DEVNULL)
        run(THIS, "verify", outputs["zlib"], stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
