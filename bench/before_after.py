#!/usr/bin/env python3
"""Two wheelfix binaries side by side, interleaved, in one run: the write path's
"same speed, same memory" check (docs/decisions.md, "The write path's guard").

    python3 bench/before_after.py --before OLD/wheelfix --after build/wheelfix [--runs N] [scenario ...]

Scenarios (the wheels come from bench.py's builders, in ~/.cache/wheelfix-bench):
- relink-big: relink of the libcublasLt wheel, RUNPATH grown (a segment appended);
- repair-real: repair of the real sgl-kernel 0.3.21 wheel (pip download --no-deps
  sgl-kernel==0.3.21 -d ~/.cache/wheelfix-bench/sgl; never downloaded here),
  --target cuda13-blackwell --torch the shipped torch 2.10.0 index (exit 1 is the
  truth about that cu12 wheel and is accepted);
- repair-graft: repair -w of the 320 MB gcc-built extension grafting one library;
- inspect-big: inspect of the libcublasLt wheel;
- check-releases: check --torch-release all of the real sgl-kernel wheel and the
  libcublasLt wheel in one run (several wheels, every atlas release; exit 1, some
  release does not load, is the truth and is accepted).
Each command runs with --timings under /usr/bin/time; per binary the median wall
time, the highest peak RSS and the MB inflated (--timings' inflate line) are
printed, and the after/before ratios. Outputs go to the cache and are removed
before each run."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402

LONG_RUNPATH = "$ORIGIN/" + "/".join(["a-long-directory-name-for-the-benchmark"] * 8)


def scenarios(cache):
    big = bench.big_wheel(cache)
    graft, prefix = bench.graft_wheel(cache)
    sgl = cache / "sgl" / bench.SGL_REAL_NAME
    index = bench.REPO / "data" / "torch-index" / "torch-2.10.0+cu128.index.gz"
    out = cache / "out" / "before-after"
    found = {
        "relink-big": (lambda w, o: [w, "--timings", "relink", str(big), "-o", str(o), "--add-rpath", LONG_RUNPATH], (0,)),
        "repair-graft": (lambda w, o: [w, "--timings", "repair", "-w", str(o), str(graft), "--ldpaths", str(prefix),
                                       "--no-load-test"], (0,)),
        "inspect-big": (lambda w, o: [w, "--timings", "inspect", str(big)], (0,)),
    }
    if sgl.exists():
        found["repair-real"] = (lambda w, o: [w, "--timings", "repair", "-w", str(o), str(sgl), "--target",
                                              "cuda13-blackwell", "--torch", str(index), "--no-load-test"], (0, 1))
        found["check-releases"] = (lambda w, o: [w, "--timings", "check", "--torch-release", "all", str(sgl), str(big)],
                                   (0, 1))
    else:
        print(f"before_after: {sgl} is absent: repair-real skipped", file=sys.stderr)
    return found, out


def measure(command, accept):
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], capture_output=True, text=True)
    if proc.returncode not in accept:
        sys.exit(f"before_after: {' '.join(command)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    wall, rss_kib = proc.stderr.strip().splitlines()[-1].split()
    inflated = re.search(r"^\s*inflate\s+[\d.]+ s\s+\d+ scopes\s+([\d.]+) MB", proc.stderr, re.M)
    return float(wall), int(rss_kib), float(inflated.group(1)) if inflated else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*")
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "wheelfix-bench")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    found, out = scenarios(args.cache)
    names = args.scenarios or list(found)
    print(f"{'scenario':<14} {'binary':<7} {'wall s':>8} {'peak MiB':>9} {'inflated MB':>12}")
    for name in names:
        make, accept = found[name]
        samples = {"before": [], "after": []}
        for _ in range(args.runs):
            for side, binary in (("before", args.before), ("after", args.after)):
                target = out / name / side
                shutil.rmtree(target, ignore_errors=True)
                target.mkdir(parents=True)
                samples[side].append(measure(make(str(binary.resolve()), target), accept))
        result = {}
        for side in ("before", "after"):
            walls, rss, inflated = zip(*samples[side])
            result[side] = (statistics.median(walls), max(rss) / 1024, statistics.median(inflated))
            print(f"{name:<14} {side:<7} {result[side][0]:>8.3f} {result[side][1]:>9.1f} {result[side][2]:>12.1f}")
        b, a = result["before"], result["after"]
        print(f"{name:<14} {'ratio':<7} {a[0] / b[0]:>8.3f} {a[1] / b[1]:>9.3f} "
              f"{(a[2] / b[2]) if b[2] else 1.0:>12.3f}")
        shutil.rmtree(out / name, ignore_errors=True)


if __name__ == "__main__":
    main()
