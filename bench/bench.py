#!/usr/bin/env python3
"""wheelfix benchmark harness: each scenario side by side with its baseline.

Builds the benchmark wheels once into a cache outside the repository (default
~/.cache/wheelfix-bench; nothing large is ever written into the repo), then runs
every command of a scenario --runs times, interleaved, and reports the median wall
time, the ratio to the scenario's baseline, and the peak RSS (/usr/bin/time -v).

    python3 bench/bench.py [--runs 5] [--cache DIR] [--build build] [scenario ...]

Scenarios (default: all):
  inspect-big    wheelfix inspect of a wheel holding the 541 MB libcublasLt.so.13,
                 vs `unzip -p` of that member (the floor: one inflate), vs LIEF
                 parsing the extracted file (tests/tools/elf_dump_lief)
  inspect-small  wheelfix inspect of a wheel of 3000 small files and one small
                 extension, vs `true` (process start-up) and `unzip -t`
  relink-big     wheelfix relink of the libcublasLt.so.13 member, RUNPATH grown (a
                 300-character path) and in place (a short one), vs the auditwheel
                 way (bench/auditwheel_way.py: unzip all, patchelf, re-zip all at
                 level 6, fresh RECORD) and vs the floor `unzip -p | sha256sum`
"""
import argparse
import hashlib
import base64
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CUDA_LIB = Path("/usr/local/cuda/lib64")
EPOCH = (1980, 1, 1, 0, 0, 0)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(path, dist, version, files, tag="py3-none-manylinux_2_28_x86_64"):
    """files: list of (member name, bytes, mode). Writes a valid wheel at level 6."""
    dist_info = f"{dist}-{version}.dist-info"
    meta = [
        (f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(), 0o644),
        (f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: wheelfix-bench\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(), 0o644),
    ]
    tmp = path.with_suffix(".tmp")
    record = ""
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name, data, mode in list(files) + meta:
            info = zipfile.ZipInfo(name, EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compresslevel=6)
            record += record_line(name, data)
        record += f"{dist_info}/RECORD,,\n"
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", EPOCH)
        info.external_attr = (0o100644) << 16
        zf.writestr(info, record, compress_type=zipfile.ZIP_DEFLATED)
    tmp.rename(path)


def big_wheel(cache):
    path = cache / "bench_cublaslt-13.0-py3-none-manylinux_2_28_x86_64.whl"
    if not path.exists():
        lib = CUDA_LIB / "libcublasLt.so.13"
        if not lib.exists():
            sys.exit(f"bench: {lib} is needed for the big-wheel scenarios")
        print(f"bench: building {path.name} (one-time, ~40 s)", file=sys.stderr)
        write_wheel(path, "bench_cublaslt", "13.0", [("bench_cublaslt/lib/libcublasLt.so.13", lib.read_bytes(), 0o755)])
    return path


def small_wheel(cache):
    path = cache / "bench_small-1.0-py3-none-manylinux_2_28_x86_64.whl"
    if not path.exists():
        files = [(f"bench_small/mod{i:04d}.py", f"VALUE = {i}\n".encode() * 20, 0o644) for i in range(3000)]
        sample = next((REPO / "sample_wheels" / "dist").glob("plainext-*.whl"), None)
        if sample:
            with zipfile.ZipFile(sample) as zf:
                for name in zf.namelist():
                    if name.endswith(".so"):
                        files.append((f"bench_small/{Path(name).name}", zf.read(name), 0o755))
        write_wheel(path, "bench_small", "1.0", files)
    return path


def extracted_member(cache, wheel, member):
    out = cache / Path(member).name
    if not out.exists():
        with zipfile.ZipFile(wheel) as zf, open(out, "wb") as f:
            f.write(zf.read(member))
    return out


# One inflate of one member through zlib itself, in 1 MiB reads: the same inflate
# code wheelfix uses, so the ratio shows what wheelfix adds on top of it.
ZLIB_INFLATE = """
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as zf, zf.open(sys.argv[2]) as f:
    while f.read(1 << 20):
        pass
"""


def measure(cmd):
    """One run: wall seconds and peak RSS in KiB."""
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        return wall, int(rss.read().strip().splitlines()[-1])


def run_scenario(name, commands, runs):
    """commands: list of (label, argv); the first is the baseline."""
    samples = {label: [] for label, _ in commands}
    for _ in range(runs):
        for label, cmd in commands:
            samples[label].append(measure(cmd))
    base = statistics.median(w for w, _ in samples[commands[0][0]])
    rows = []
    for label, cmd in commands:
        walls = [w for w, _ in samples[label]]
        med = statistics.median(walls)
        rows.append((name, label, med, med / base if base else float("nan"),
                     max(r for _, r in samples[label]) / 1024))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["inspect-big", "inspect-small", "relink-big"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "wheelfix-bench")
    ap.add_argument("--build", type=Path, default=REPO / "build")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    wheelfix = str(args.build / "wheelfix")
    lief = str(args.build / "tests" / "elf_dump_lief")

    rows = []
    for scenario in args.scenarios:
        if scenario == "inspect-big":
            wheel = big_wheel(args.cache)
            member = "bench_cublaslt/lib/libcublasLt.so.13"
            extracted = extracted_member(args.cache, wheel, member)
            rows += run_scenario(scenario, [
                ("unzip -p member (floor: one inflate)", ["sh", "-c", f"unzip -p '{wheel}' '{member}' > /dev/null"]),
                ("zlib inflate of the member (python zipfile)", [sys.executable, "-c", ZLIB_INFLATE, str(wheel), member]),
                ("wheelfix inspect", [wheelfix, "inspect", str(wheel)]),
                ("wheelfix inspect --json", [wheelfix, "inspect", "--json", str(wheel)]),
                ("LIEF 0.9 parse of the extracted file", [lief, str(extracted)]),
            ], args.runs)
        elif scenario == "relink-big":
            wheel = big_wheel(args.cache)
            member = "bench_cublaslt/lib/libcublasLt.so.13"
            out = args.cache / "out"
            out.mkdir(exist_ok=True)
            long_rpath = "$ORIGIN/../../nvidia/cu13/lib:" + "/opt/long/build/tree" * 14
            rows += run_scenario(scenario, [
                ("auditwheel way (unzip all, patchelf, zip -6 all)",
                 [sys.executable, str(REPO / "bench" / "auditwheel_way.py"), str(wheel), member, long_rpath,
                  str(out / "auditwheel-way.whl")]),
                ("floor: unzip -p member | sha256sum", ["sh", "-c", f"unzip -p '{wheel}' '{member}' | sha256sum"]),
                ("wheelfix relink (RUNPATH grows)", [wheelfix, "relink", str(wheel), "-o", str(out / "grow"),
                                                     "--set-rpath", long_rpath]),
                # the member's RUNPATH is "$ORIGIN": a new value of the same length fits in place
                ("wheelfix relink (in place)", [wheelfix, "relink", str(wheel), "-o", str(out / "inplace"),
                                                "--set-rpath", "/nv/lib"]),
            ], args.runs)
        elif scenario == "inspect-small":
            wheel = small_wheel(args.cache)
            rows += run_scenario(scenario, [
                ("true (process start-up)", ["true"]),
                ("unzip -t", ["unzip", "-tqq", str(wheel)]),
                ("wheelfix inspect", [wheelfix, "inspect", str(wheel)]),
            ], args.runs)
        else:
            sys.exit(f"bench: unknown scenario {scenario}")

    print(f"machine: {os.uname().machine}, {os.cpu_count()} cores; runs: {args.runs}; "
          f"date: {time.strftime('%Y-%m-%d')}")
    print("| scenario | command | median s | x baseline | peak RSS MiB |")
    print("|---|---|---:|---:|---:|")
    for scenario, label, med, ratio, rss in rows:
        print(f"| {scenario} | {label} | {med:.3f} | {ratio:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
