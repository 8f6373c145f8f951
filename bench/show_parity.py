#!/usr/bin/env python3
"""The platform-tag verdict of `auditwheel show` against `wheelfix inspect`, one row a wheel.

    bench/show_parity.py [--wheelfix build/wheelfix] [WHEEL_OR_DIR ...]

With no wheels named it takes every *.whl under tests/data/auditwheel, recursively. The peer
is auditwheel from tests/e2e/peers.py (6.8.2 from the package index, in the shared
test venv under the build directory). Prints a Markdown table:

    wheel | auditwheel show | wheelfix inspect | same?

auditwheel's verdict is `overall_tag` of `show --json` (or its error: a wheel with no
platform ELF); wheelfix's is the wheel's honest tag with the architecture appended,
`linux_<arch>` when no manylinux/musllinux tag fits (libraries from outside the wheel
count, as auditwheel counts them: both run with this process's LD_LIBRARY_PATH), and
the abi-policy findings that cost a tag (blacklist, PyFPE_jbuf, UCS2, x86-64 ISA
level) and the outside libraries beside it. A row that
differs says why when the reason is a known, accepted one. Exit status 0 when every
row agrees or differs for a stated reason, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
DEFAULT_DIRS = [ROOT / "tests" / "data" / "auditwheel"]


def wheels(arguments):
    found = []
    for item in arguments or [d for d in DEFAULT_DIRS if d.is_dir()]:
        path = Path(item)
        found += sorted(path.rglob("*.whl")) if path.is_dir() else [path]
    return found


def auditwheel_verdict(wheel):
    """(verdict, its JSON report or None, the last line of its stderr)."""
    import peers
    proc = peers.auditwheel("show", "--json", wheel)
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return "error: " + last.split(":")[0].rsplit(".", 1)[-1], None, last
    if "overall_tag" in report:
        return report["overall_tag"], report, last
    return ("no platform ELF" if "platform wheel" in report.get("error", "") else "error"), report, last


def why_different(theirs, report, stderr, ours):
    """The reason a verdict differs, when it is one this project knows and accepts."""
    if report is None and "InvalidLibcError" in stderr:
        return "auditwheel cannot tell the libc (no NEEDED libc); wheelfix reads the Alpine toolchain in .comment"
    if theirs == "no platform ELF" and ours.startswith("linux_mips64"):
        return "neither has a policy for mips64 (auditwheel: unknown architecture, wheelfix: no tag fits)"
    if theirs == "no platform ELF" and ours.startswith("linux_armv5l"):
        return "auditwheel refuses armv5l's soft-float EABI; wheelfix calls it armv5l, which no manylinux tag covers"
    if theirs.startswith("musllinux_1_2") and ours.startswith("musllinux_1_1"):
        return "auditwheel takes the host's musl (1.2, the newest, on glibc); wheelfix the oldest the binary needs"
    return ""


def wheelfix_verdict(wheelfix, wheel):
    proc = subprocess.run([wheelfix, "inspect", "--json", str(wheel)], capture_output=True, text=True)
    if proc.returncode == 2:
        return "error: " + proc.stderr.strip()[:60], ""
    report = json.loads(proc.stdout)["inputs"][0]
    elves = report["elf_files"]
    if not elves:
        return "no platform ELF", ""
    arch = elves[0]["machine"]
    if arch == "arm":  # platform tags spell 32-bit ARM armv7l, as auditwheel's policy does
        arch = "armv7l"
    verdict = f"{report['honest_tag']}_{arch}" if report["honest_tag"] else f"linux_{arch}"
    costs = sorted({f"{c['kind']}" for c in report.get("abi_concerns", [])})
    costs += [f"{o['name']} {o['class']}" for o in report.get("outside_libraries", [])]
    return verdict, ", ".join(costs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheelfix", default=os.environ.get("WHEELFIX", str(ROOT / "build" / "wheelfix")))
    parser.add_argument("wheels", nargs="*")
    args = parser.parse_args()
    print("| wheel | auditwheel show | wheelfix inspect | same? | why not |")
    print("|---|---|---|---|---|")
    unexplained = 0
    for wheel in wheels(args.wheels):
        theirs, report, stderr = auditwheel_verdict(wheel)
        ours, costs = wheelfix_verdict(args.wheelfix, wheel)
        same = theirs == ours
        why = "" if same else why_different(theirs, report, stderr, ours)
        unexplained += not same and not why
        label = wheel.parent.name + "/" + wheel.name if wheel.parent.name in ("glibc", "musllinux_1_2") else wheel.name
        print(f"| {label} | {theirs} | {ours}{' (' + costs + ')' if costs else ''} | {'yes' if same else 'NO'} | {why} |")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
