#!/usr/bin/env python3
"""Our fatbin parser against NVIDIA's cuobjdump, entry by entry.

For every fixture in tests/data/fatbin (fixtures.tsv) and every ELF member of the
wheels in sample_wheels/dist, the ordered list of (kind, arch) that
`cuobjdump --list-elf --list-ptx` prints must equal what tests/tools/fatbin_dump
(our parser) prints, translated into cuobjdump's vocabulary:
  - cubin sm_100a -> ELF sm_100a; cuobjdump names a family cubin (sm_120f) by its
    plain SM (sm_120), so ours is compared with the `f` dropped;
  - ptx compute_120f -> PTX sm_120f;
  - LTO IR is not listed by cuobjdump, which warns "Can't deobfuscate entry" once
    per LTO IR entry instead: the counts must match.
Independently of cuobjdump, every ELF member that sample_wheels/dist/manifest.json
lists must hold exactly the entries of the -gencode list recorded there (as a set:
nvcc groups entries by virtual arch).
Environment (set by ctest): FATBIN_DUMP, WHEELFIX_TEST_DATA, WHEELFIX_SOURCE_DIR;
CUOBJDUMP may name the tool, else /usr/local/cuda/bin/cuobjdump or PATH. Without
cuobjdump that comparison is skipped with the reason printed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

LISTING = re.compile(r"^(ELF|PTX) file\s+\d+: .*\.(sm_[0-9]+[af]?)\.(?:cubin|ptx)$")
LTO_WARNING = "Can't deobfuscate entry"


def find_cuobjdump():
    for candidate in (os.environ.get("CUOBJDUMP"), "/usr/local/cuda/bin/cuobjdump", shutil.which("cuobjdump")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def cuobjdump_view(tool, path):
    """(ordered [(ELF|PTX, sm_..)], number of LTO IR warnings) from cuobjdump."""
    run = subprocess.run([tool, "--list-elf", "--list-ptx", path], capture_output=True, text=True)
    entries, unknown = [], []
    for line in run.stdout.splitlines():
        line = line.strip()
        match = LISTING.match(line)
        if match:
            entries.append((match.group(1), match.group(2)))
        elif line:
            unknown.append(line)
    if unknown:
        raise AssertionError(f"{path}: unexpected cuobjdump output {unknown!r}")
    return entries, run.stderr.count(LTO_WARNING)


def fatbin_dump_lines(tool, path):
    """[(kind, arch)] as our parser reports them, in order."""
    run = subprocess.run([tool, path], capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"{path}: fatbin_dump failed: {run.stderr.strip()}")
    return [tuple(line.split()[:2]) for line in run.stdout.splitlines()]


def our_view(tool, path):
    """fatbin_dump's entries in cuobjdump's vocabulary, and the LTO IR count."""
    entries, lto = [], 0
    for kind, arch in fatbin_dump_lines(tool, path):
        if kind == "ltoir":
            lto += 1
        elif kind == "cubin":
            entries.append(("ELF", arch[:-1] if arch.endswith("f") else arch))
        elif kind == "ptx":
            entries.append(("PTX", "sm_" + arch[len("compute_"):]))
        else:
            raise AssertionError(f"{path}: unexpected entry {kind} {arch}")
    return entries, lto


def expected_from_gencode(gencode_list):
    """["arch=compute_90,code=[sm_90,compute_90]", ...] -> sorted [(kind, arch)]."""
    kinds = {"sm": "cubin", "compute": "ptx", "lto": "ltoir"}
    out = []
    for gencode in gencode_list:
        codes = gencode.split("code=", 1)[1].strip("[]")
        out += [(kinds[code.split("_")[0]], code) for code in codes.split(",")]
    return sorted(out)


def fixture_files(data_dir):
    fatbin_dir = os.path.join(data_dir, "fatbin")
    with open(os.path.join(fatbin_dir, "fixtures.tsv"), encoding="utf-8") as table:
        for line in table:
            if line.strip() and not line.startswith("#"):
                yield os.path.join(fatbin_dir, line.split("\t")[0])


def wheel_elf_members(dist_dir, scratch):
    """Extracts every ELF member of every wheel in dist_dir: {(wheel, member): path}."""
    found = {}
    if not os.path.isdir(dist_dir):
        return found
    for wheel in sorted(os.listdir(dist_dir)):
        if not wheel.endswith(".whl"):
            continue
        with zipfile.ZipFile(os.path.join(dist_dir, wheel)) as archive:
            for member in archive.namelist():
                data = archive.read(member)
                if data[:4] != b"\x7fELF":
                    continue
                target = os.path.join(scratch, wheel, member)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    out.write(data)
                found[(wheel, member)] = target
    return found


class Tally:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, name, got, wanted, detail=""):
        if got == wanted:
            self.passed += 1
            print(f"ok   {name}{detail}")
        else:
            self.failed += 1
            print(f"FAIL {name}:\n  expected {wanted}\n  ours     {got}")


def check_manifest(tally, fatbin_dump, dist_dir, members):
    """Our entries for each manifest ELF equal the -gencode list nvcc was given."""
    with open(os.path.join(dist_dir, "manifest.json"), encoding="utf-8") as file:
        manifest = json.load(file)
    for wheel in manifest["wheels"]:
        for elf in wheel["elfs"]:
            key = (wheel["file"], elf["member"])
            if key not in members:
                tally.check(f"manifest {key}", "missing from the wheel", "present")
                continue
            ours = sorted(fatbin_dump_lines(fatbin_dump, members[key]))
            tally.check(f"gencode {elf['member']}", ours, expected_from_gencode(elf["gencode"]),
                        f": {len(ours)} entries")


def check_cuobjdump(tally, cuobjdump, fatbin_dump, files, scratch):
    for path in files:
        name = os.path.relpath(path, scratch) if path.startswith(scratch) else os.path.basename(path)
        ours = our_view(fatbin_dump, path)
        tally.check(f"cuobjdump {name}", ours, cuobjdump_view(cuobjdump, path),
                    f": {len(ours[0])} entries, {ours[1]} LTO IR")


def main():
    fatbin_dump = os.environ["FATBIN_DUMP"]
    data_dir = os.environ["WHEELFIX_TEST_DATA"]
    source_dir = os.environ.get("WHEELFIX_SOURCE_DIR", os.path.join(data_dir, "..", ".."))
    dist_dir = os.path.join(source_dir, "sample_wheels", "dist")
    tally = Tally()
    with tempfile.TemporaryDirectory() as scratch:
        members = wheel_elf_members(dist_dir, scratch)
        check_manifest(tally, fatbin_dump, dist_dir, members)
        cuobjdump = find_cuobjdump()
        if cuobjdump is None:
            print("SKIP cuobjdump comparison: cuobjdump not found "
                  "(set CUOBJDUMP, or install it at /usr/local/cuda/bin/cuobjdump)")
        else:
            fixtures = list(fixture_files(data_dir))
            tally.check("fixtures.tsv lists the 9 fixtures", len(fixtures) >= 9, True)
            check_cuobjdump(tally, cuobjdump, fatbin_dump, fixtures + sorted(members.values()), scratch)
    print(f"{tally.passed} passed, {tally.failed} failed")
    if tally.passed == 0:
        print("FAIL: nothing was checked")
        return 1
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
