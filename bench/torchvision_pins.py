#!/usr/bin/env python3
"""The torch atlas against real pins and the real loader (not in CI: downloads).

For each torchvision release given (default: one per torch minor since 2.4), download its
cp312 manylinux x86_64 wheel (pip download --no-deps, a few MB), read its
`Requires-Dist: torch (==X)` pin, and run `wheelfix check WHEEL --torch-release all --json`
against the bundled atlas. Agreement: the atlas says the wheel loads on the release it pins.

With --ldso TV=TORCH (repeatable, e.g. --ldso 0.24.1=2.10.0, a cross pair), the torch
wheel TORCH is downloaded and unpacked into a temporary directory with the torchvision
wheel, and ld.so itself is asked: python loads torch's libraries (RTLD_GLOBAL, as
`import torch` does) and then dlopens torchvision/_C.so with RTLD_NOW; the symbols
ld.so names are compared with the atlas's verdict for that release. That needs about
1 GB of download and 4 GB of disk per torch, deleted afterwards, and the CUDA runtime
libraries torch's CUDA libraries need (the nvidia-* wheels, several GB; without them
the row says "not judged", since ld.so never reaches torchvision's own symbols).

With --ldso-aarch64 TV=TORCH the same question goes to the aarch64 builds, which PyPI
publishes CPU-only (torch ~150 MB): ld.so itself, under qemu-aarch64 and in ldd -r's trace
mode (LD_TRACE_LOADED_OBJECTS, LD_BIND_NOW, LD_WARN: every relocation is resolved and each
undefined symbol named, no constructor runs, so no python is needed), resolves
torchvision/_C.so beside the torch's torch/lib; the symbols it names undefined in _C.so
(libtorch_python's own python imports left aside) are compared with the atlas's aarch64
verdict for that release and its first missing symbol.

Prints a Markdown table: wheel, pin, atlas verdict per release, agreement.
"""

import argparse
import ctypes  # noqa: F401  (used in the child process)
import email.parser
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"]
DEFAULT = ["0.19.1", "0.20.1", "0.21.0", "0.22.1", "0.23.0", "0.24.1", "0.25.0"]


def download(project, version, dest, platforms=None):
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--python-version",
               "3.12", "-d", str(dest), f"{project}=={version}"]
    for platform in platforms or PLATFORMS:
        command += ["--platform", platform]
    subprocess.run(command, check=True, capture_output=True)
    arch = "aarch64" if platforms and platforms[0].endswith("aarch64") else "x86_64"
    wheels = sorted(dest.glob(f"{project}-{version}-*{arch}.whl"))
    return wheels[0]


def torch_pin(wheel):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(name).decode())
    for requirement in metadata.get_all("Requires-Dist") or []:  # "torch (==2.9.1)" or "torch==2.9.1"
        match = re.match(r"torch\s*\(?\s*==\s*([0-9.]+)", requirement)
        if match:
            return match.group(1)
    return None


def atlas_verdicts(wheelfix, wheel, releases="all"):
    result = subprocess.run([str(wheelfix), "check", str(wheel), "--torch-release", releases, "--json"],
                            capture_output=True, text=True)
    if result.returncode not in (0, 1):
        raise SystemExit(f"check failed: {result.stderr}")
    document = json.loads(result.stdout)
    matrix = document["matrix"]
    verdicts = {}
    firsts = {}
    for column, release in enumerate(matrix["releases"]):
        version = release["torch_version"].split("+")[0]
        verdicts[version] = release["verdict"]
        firsts[version] = [m["cells"][column]["first_missing"] for m in matrix["members"]
                           if m["cells"][column]["verdict"] != "ok"]
    return verdicts, firsts


LOADER = r"""
import ctypes, glob, os, sys
root = sys.argv[1]
lib = os.path.join(root, "torch", "lib")
order = ["libc10.so", "libtorch_cpu.so", "libc10_cuda.so", "libtorch_cuda.so", "libtorch.so", "libtorch_python.so"]
for name in order:
    path = os.path.join(lib, name)
    if os.path.exists(path):
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as error:
            print("TORCH-LOAD-FAILED", error)
try:
    ctypes.CDLL(os.path.join(root, "torchvision", "_C.so"), mode=ctypes.RTLD_NOW)
    print("LOADS")
except OSError as error:
    print("FAILS", error)
"""


def ldso(torchvision_wheel, torch_version, work):
    torch_wheel = download("torch", torch_version, work)
    root = work / "site"
    for wheel in (torch_wheel, torchvision_wheel):
        with zipfile.ZipFile(wheel) as archive:
            members = [n for n in archive.namelist() if n.startswith(("torch/lib/", "torchvision/"))]
            archive.extractall(root, members)
    torch_wheel.unlink()
    result = subprocess.run([sys.executable, "-c", LOADER, str(root)], capture_output=True, text=True)
    subprocess.run(["rm", "-rf", str(root)])
    return result.stdout.strip()


AARCH64 = ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"]


def ldso_aarch64(wheelfix, tv, torch, work):
    """ld.so's undefined symbols of torchvision/_C.so beside torch's libraries, and the atlas's verdict."""
    tv_wheel = download("torchvision", tv, work, AARCH64)
    verdicts, firsts = atlas_verdicts(wheelfix, tv_wheel, torch)
    torch_wheel = download("torch", torch, work, AARCH64)
    root = work / "site-aarch64"
    for wheel in (torch_wheel, tv_wheel):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root, [n for n in archive.namelist() if n.startswith(("torch/lib/", "torchvision/"))])
    torch_wheel.unlink()
    lib = root / "torch" / "lib"
    result = subprocess.run(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-E", f"LD_LIBRARY_PATH={lib}",
                             "-E", "LD_TRACE_LOADED_OBJECTS=1", "-E", "LD_WARN=yes", "-E", "LD_BIND_NOW=yes",
                             "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1", str(root / "torchvision" / "_C.so")],
                            capture_output=True, text=True, timeout=900)
    subprocess.run(["rm", "-rf", str(root)])
    undefined = [line.split(":", 1)[1].strip().split("\t")[0] for line in (result.stdout + result.stderr).splitlines()
                 if line.startswith("undefined symbol:") and "_C.so)" in line]
    demangled = subprocess.run(["c++filt"], input="\n".join(undefined), capture_output=True, text=True).stdout.split("\n")
    return verdicts.get(torch, "not in atlas"), firsts.get(torch, []), [d for d in demangled if d]


def print_table_head(*columns):
    """A markdown table's header line and its separator."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("versions", nargs="*", default=DEFAULT)
    parser.add_argument("--wheelfix", type=pathlib.Path, default=ROOT / "build" / "wheelfix")
    parser.add_argument("--ldso", action="append", default=[], help="TV=TORCH: ask ld.so for this pair")
    parser.add_argument("--ldso-aarch64", action="append", default=[],
                        help="TV=TORCH: ask ld.so (qemu, trace mode) for this pair's aarch64 CPU builds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wheelfix-tv-") as temp:
        work = pathlib.Path(temp)
        rows = []
        wheels = {}
        for version in args.versions:
            wheel = download("torchvision", version, work)
            wheels[version] = wheel
            pin = torch_pin(wheel)
            verdicts, firsts = atlas_verdicts(args.wheelfix, wheel)
            loads = [v for v, verdict in verdicts.items() if verdict == "ok"]
            agree = pin in verdicts and verdicts[pin] == "ok"
            rows.append((wheel.name, str(pin), " ".join(f"{v}:{'ok' if d == 'ok' else d}" for v, d in verdicts.items()),
                         ", ".join(loads), "yes" if agree else ("pin not in atlas" if pin not in verdicts else "NO")))
        print_table_head("wheel", "pin", "atlas verdict per release", "loads on", "pinned release loads")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        if args.ldso:
            print()
            print_table_head("torchvision", "torch", "atlas", "ld.so", "agreement")
        for pair in args.ldso:
            tv, torch = pair.split("=")
            wheel = wheels.get(tv) or download("torchvision", tv, work)
            verdicts, firsts = atlas_verdicts(args.wheelfix, wheel)
            atlas = verdicts.get(torch, "not in atlas")
            loader = ldso(wheel, torch, work)
            detail = "; ".join(sorted(set(firsts.get(torch, []))))
            if "TORCH-LOAD-FAILED" in loader:
                # torch's own libraries need the nvidia-* runtime wheels (libcudart, cupti, ...): without them ld.so
                # never gets to torchvision's symbols, so there is nothing to compare.
                first = next(line for line in loader.splitlines() if "TORCH-LOAD-FAILED" in line)
                print(f"| {tv} | {torch} | {atlas} {detail} | not judged: {first[18:120]} | n/a |")
                continue
            loads = loader.endswith("LOADS")
            agree = (atlas == "ok") == loads
            print(f"| {tv} | {torch} | {atlas} {detail} | {loader[-200:]} | {'yes' if agree else 'NO'} |")
        if args.ldso_aarch64:
            print()
            print_table_head("torchvision (aarch64)", "torch", "atlas", "ld.so: undefined in _C.so", "agreement")
        for pair in args.ldso_aarch64:
            tv, torch = pair.split("=")
            atlas, firsts, undefined = ldso_aarch64(args.wheelfix, tv, torch, work)
            agree = (atlas == "ok") == (not undefined) and all(first in undefined for first in firsts)
            shown = "; ".join(name[:90] for name in undefined) or "none"
            print(f"| {tv} | {torch} | {atlas} {'; '.join(f[:90] for f in firsts)} | {shown} | {'yes' if agree else 'NO'} |")


if __name__ == "__main__":
    main()
