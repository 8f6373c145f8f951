#!/usr/bin/env python3
"""wheelfix check benchmarks, each beside its baseline: median wall time over --runs
runs (interleaved) and peak RSS (/usr/bin/time -v).

    python3 bench/bench_check.py [--runs 5] [--build build] [--torch-wheel W] [scenario ...]

Scenarios (default: all that have their inputs):
  check-index       `check` of the sample sgl_kernel wheel against an index of the
                    torch-2.10.0 stand-in (target: under 50 ms), vs the same against
                    the stand-in tree, vs `true` (process start-up)
  check-real-index  the sample wheel against data/torch-index/torch-2.10.0+cu128.index.gz
                    (the shipped index of the real torch 2.10.0: 111k symbols)
  check-real-wheel  the sample wheel against a real torch wheel file (~900 MB; default
                    ~/.cache/wheelfix-torch/torch-2.10.0*.whl, see data/torch-index/README.md),
                    vs `unzip -p` of exactly the libraries check inflates (the floor of
                    one inflate each, which keeps everything), vs check against the same
                    torch unpacked into a directory
Nothing is written into the repository; temporary files go to a temp directory.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_wheels" / "dist"
SGL = SAMPLES / "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl"
REAL_INDEX = REPO / "data" / "torch-index" / "torch-2.10.0+cu128.index.gz"
CACHE = Path.home() / ".cache" / "wheelfix-torch"


def wall_time(cmd):
    """Seconds for one run, timed here (/usr/bin/time only has centiseconds)."""
    started = time.perf_counter()
    subprocess.run(["sh", "-c", cmd + " >/dev/null"], check=False)
    return time.perf_counter() - started


def peak_rss(cmd):
    """Peak RSS in MiB of one run, from /usr/bin/time -v."""
    proc = subprocess.run(["/usr/bin/time", "-v", "sh", "-c", cmd + " >/dev/null"], capture_output=True, text=True)
    for line in proc.stderr.splitlines():
        if line.strip().startswith("Maximum resident set size"):
            return int(line.split()[-1]) / 1024
    return float("nan")


def measure(cmd):
    return wall_time(cmd), peak_rss(cmd)


def run_scenario(name, commands, runs):
    """commands: [(label, shell command)], the first is the baseline."""
    times = {label: [] for label, _ in commands}
    peaks = {label: 0.0 for label, _ in commands}
    for _ in range(runs):
        for label, cmd in commands:
            wall, rss = measure(cmd)
            times[label].append(wall)
            peaks[label] = max(peaks[label], rss)
    base = max(statistics.median(times[commands[0][0]]), 1e-9)
    return [(name, label, statistics.median(times[label]), statistics.median(times[label]) / base, peaks[label])
            for label, _ in commands]


def q(path):
    return "'" + str(path).replace("'", "'\\''") + "'"


def libraries_check_reads(wheelfix, wheel):
    """The members `check -v` reports it inflated (one "wheelfix:   MEMBER ..." line each)."""
    proc = subprocess.run([wheelfix, "-v", "check", str(SGL), "--torch", str(wheel)], capture_output=True, text=True)
    members = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("wheelfix:   ")]
    if not members:
        sys.exit(f"bench: check -v did not report what it read:\n{proc.stderr}")
    return members


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=[])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default="build", help="build directory holding the wheelfix binary")
    ap.add_argument("--torch-wheel", type=Path, default=None)
    args = ap.parse_args()
    wheelfix = str(Path(args.build) / "wheelfix" if Path(args.build).is_absolute() else REPO / args.build / "wheelfix")
    torch_wheel = args.torch_wheel or next(iter(sorted(CACHE.glob("torch-2.10.0*.whl"))), None)
    scenarios = args.scenarios or ["check-index", "check-real-index"] + (["check-real-wheel"] if torch_wheel else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="wheelfix-bench-") as tmp:
        tmp = Path(tmp)
        for scenario in scenarios:
            if scenario == "check-index":
                index = tmp / "standin-2.10.0.idx"
                subprocess.run([wheelfix, "index", str(SAMPLES / "torch-2.10.0" / "torch"), "-o", str(index)],
                               check=True, capture_output=True)
                rows += run_scenario(scenario, [
                    ("true (process start)", "true"),
                    ("check --torch standin.idx", f"{q(wheelfix)} check {q(SGL)} --torch {q(index)}"),
                    ("check --torch standin tree",
                     f"{q(wheelfix)} check {q(SGL)} --torch {q(SAMPLES / 'torch-2.10.0' / 'torch')}"),
                ], args.runs)
            elif scenario == "check-real-index":
                rows += run_scenario(scenario, [
                    ("true (process start)", "true"),
                    ("check --torch torch-2.10.0+cu128.index.gz",
                     f"{q(wheelfix)} check {q(SGL)} --torch {q(REAL_INDEX)}"),
                ], args.runs)
            elif scenario == "check-real-wheel":
                if torch_wheel is None:
                    sys.exit("bench: no torch wheel; pass --torch-wheel (see data/torch-index/README.md)")
                members = libraries_check_reads(wheelfix, torch_wheel)
                tree = tmp / "tree"
                with zipfile.ZipFile(torch_wheel) as wheel:
                    for member in members + ["torch/version.py"]:
                        wheel.extract(member, tree)
                rows += run_scenario(scenario, [
                    ("unzip -p (same libraries)", f"unzip -p {q(torch_wheel)} " + " ".join(map(q, members))),
                    ("check --torch WHEEL", f"{q(wheelfix)} check {q(SGL)} --torch {q(torch_wheel)}"),
                    ("check --torch unpacked tree", f"{q(wheelfix)} check {q(SGL)} --torch {q(tree / 'torch')}"),
                ], args.runs)
            else:
                sys.exit(f"bench: unknown scenario {scenario}")
    print("| scenario | command | median s | x baseline | peak RSS MiB |")
    print("| --- | --- | --- | --- | --- |")
    for scenario, label, med, ratio, rss in rows:
        print(f"| {scenario} | {label} | {med:.4f} | {ratio:.2f} | {rss:.1f} |")


if __name__ == "__main__":
    main()
