#!/usr/bin/env python3
"""The ELF editor round-trips real files: readers, eu-elflint and ld.so accept the result.

Contract: collects every regular lib*.so* in /usr/local/cuda/lib64 (the 541 MB
libcublasLt.so.13 included), every ELF file under $WHEELFIX_TEST_DATA and every ELF
member of every wheel under it (recursively) and under sample_wheels/dist, and the
stand-in torch libraries in sample_wheels/dist/torch-*/torch/lib. For each file,
`elf_edit IN OUT --set-rpath V` with V longer than 300 characters (a dead padding
entry, then the file's own search path with $ORIGIN spelled out, so the edited copy
still finds what the original finds) must grow the file and then:
(a) readelf -dW shows V in the file's own kind (DT_RUNPATH when it had none) and
    every other dynamic entry unchanged and in order; `elf_dump_ours` of the result
    equals `elf_dump_lief` of it, and equals ours of the input except for the
    search path; `readelf --dyn-syms -W` and `readelf -rW` print the same as for the
    input; readelf prints no warning it did not print for the input;
(b) `eu-elflint --gnu-ld` reports no message it did not report for the input (files
    whose input makes elflint crash or time out are skipped, and counted);
(c) every section other than .dynstr/.dynamic keeps its header and its bytes; in
    .symtab/.dynsym only symbols defined in a moved section may change, by exactly
    the section's move; exactly one PT_LOAD is added;
(d) an x86_64 file that the real loader opens before the edit (ctypes.CDLL with
    RTLD_NOW in a fresh python) opens after it too.
Files without a dynamic section must be refused with "no dynamic section". The small
files (< 50 MB) are also given nine more NEEDED entries (glibc's own libraries, so the
loader still finds them), which moves .dynamic into the appended segment, and are
checked the same way. Finally the relink fixtures of
tests/data/elf/edit run: the x86_64 program natively and the aarch64 one under
qemu-aarch64 -L /usr/aarch64-linux-gnu, each unable to start before the edit and
printing "wheelfix-edit-app 42" after RUNPATH=$ORIGIN and the NEEDED fix (skipped
with a reason when qemu or the aarch64 sysroot is missing).
Environment (set by ctest): ELF_EDIT, ELF_DUMP_OURS, ELF_DUMP_LIEF, WHEELFIX_TEST_DATA,
WHEELFIX_SOURCE_DIR. Run as a script; exits non-zero on failure.
"""

import concurrent.futures
import mmap
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

ELF_MAGIC = b"\x7fELF"
CUDA_LIB_DIR = Path("/usr/local/cuda/lib64")
WORKERS = 2
SMALL_FILE = 50 * 1024 * 1024
PADDING = "/nonexistent/wheelfix-roundtrip/" + "p" * 280
# glibc libraries every x86_64 and aarch64 system here has: enough new entries to
# overflow the spare DT_NULL slots linkers leave (four or five).
EXTRA_NEEDED = ["libm.so.6", "libdl.so.2", "librt.so.1", "libutil.so.1", "libpthread.so.0",
                "libresolv.so.2", "libanl.so.1", "libnss_files.so.2", "libnss_dns.so.2"]
ELFLINT_TIMEOUT = 120
QEMU_SYSROOT = Path("/usr/aarch64-linux-gnu")


ELF_EDIT = wfx.env_path("ELF_EDIT")
OURS = wfx.env_path("ELF_DUMP_OURS")
LIEF = wfx.env_path("ELF_DUMP_LIEF")
TEST_DATA = wfx.env_path("WHEELFIX_TEST_DATA")
SOURCE_DIR = wfx.env_path("WHEELFIX_SOURCE_DIR")
SAMPLES = SOURCE_DIR / "sample_wheels" / "dist"
EDIT_FIXTURES = TEST_DATA / "elf" / "edit"


def run(command, timeout=600, **kwargs):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, errors="replace",
                            timeout=timeout, **kwargs)
    return result.returncode, result.stdout, result.stderr


# --- the files ------------------------------------------------------------------

def is_elf_file(path):
    with open(path, "rb") as f:
        return f.read(4) == ELF_MAGIC


def collect_files(workdir):
    files = []
    for root in (TEST_DATA, SAMPLES):
        for wheel in sorted(root.rglob("*.whl")):
            files.extend(wfx.extract_wheel_elves(wheel, workdir / "wheels", root))
    for path in sorted(TEST_DATA.rglob("*")):
        if "fuzz-regressions" in path.parts:  # hostile inputs (test_fuzz_outputs), not editing fixtures
            continue
        if path.is_file() and not path.is_symlink() and is_elf_file(path):
            files.append((f"data/{path.relative_to(TEST_DATA)}", path))
    for path in sorted(SAMPLES.glob("torch-*/torch/lib/*.so")):
        files.append((f"samples/{path.relative_to(SAMPLES)}", path))
    if CUDA_LIB_DIR.is_dir():
        for path in sorted(CUDA_LIB_DIR.iterdir()):
            if path.name.startswith("lib") and ".so" in path.name and path.is_file() and not path.is_symlink():
                files.append((str(path), path))
    return files


# --- a small ELF reader for headers, sections and symbol tables ------------------

SHT_SYMTAB, SHT_DYNSYM, SHT_NOBITS, SHN_ABS, SHN_LORESERVE = 2, 11, 8, 0xFFF1, 0xFF00


class Elf:
    """Headers of an ELF file, read through mmap (the 541 MB file is not copied)."""

    def __init__(self, path):
        self.file = open(path, "rb")
        self.data = mmap.mmap(self.file.fileno(), 0, access=mmap.ACCESS_READ)
        self.is64 = self.data[4] == 2
        self.order = "<" if self.data[5] == 1 else ">"
        word = "Q" if self.is64 else "I"
        self.word = word
        if self.is64:
            fields = struct.unpack_from(self.order + "HHIQQQIHHHHHH", self.data, 16)
        else:
            fields = struct.unpack_from(self.order + "HHIIIIIHHHHHH", self.data, 16)
        (self.type, self.machine, _, _, self.phoff, self.shoff, _, _, self.phentsize, self.phnum,
         self.shentsize, self.shnum, self.shstrndx) = fields
        self.segments = [self.program_header(i) for i in range(self.phnum)]
        self.sections = [self.section_header(i) for i in range(self.shnum)] if self.shoff else []
        if self.sections and self.shstrndx < len(self.sections):
            names = self.sections[self.shstrndx]
            for section in self.sections:
                section["name"] = self.string(names["offset"] + section["name_offset"])

    def close(self):
        self.data.close()
        self.file.close()

    def string(self, at):
        return self.data[at:self.data.find(b"\0", at)].decode(errors="replace")

    def program_header(self, index):
        at = self.phoff + index * self.phentsize
        if self.is64:
            t, flags, offset, vaddr, _, filesz, memsz, align = struct.unpack_from(self.order + "IIQQQQQQ", self.data, at)
        else:
            t, offset, vaddr, _, filesz, memsz, flags, align = struct.unpack_from(self.order + "IIIIIIII", self.data, at)
        return dict(type=t, flags=flags, offset=offset, vaddr=vaddr, filesz=filesz, memsz=memsz, align=align)

    def section_header(self, index):
        w = self.word
        fmt = self.order + "II" + w * 4 + "II" + w * 2
        values = struct.unpack_from(fmt, self.data, self.shoff + index * self.shentsize)
        keys = ("name_offset", "type", "flags", "addr", "offset", "size", "link", "info", "addralign", "entsize")
        section = dict(zip(keys, values))
        section["index"] = index
        section["name"] = ""
        return section

    def section_bytes(self, section, start=0, length=None):
        if section["type"] == SHT_NOBITS:
            return b""
        length = section["size"] - start if length is None else length
        return self.data[section["offset"] + start:section["offset"] + start + length]

    def symbols(self, section):
        """(entry offset in the file, st_name, st_value, st_shndx, raw bytes) per symbol."""
        size = 24 if self.is64 else 16
        entsize = max(section["entsize"], size)
        for at in range(section["offset"], section["offset"] + section["size"] // entsize * entsize, entsize):
            if self.is64:
                name, _, _, shndx, value = struct.unpack_from(self.order + "IBBHQ", self.data, at)
            else:
                name, value, _, _, _, shndx = struct.unpack_from(self.order + "IIIBBH", self.data, at)
            yield name, value, shndx, self.data[at:at + entsize]


def chunks_equal(a, a_at, b, b_at, length, step=16 << 20):
    for start in range(0, length, step):
        n = min(step, length - start)
        if a[a_at + start:a_at + start + n] != b[b_at + start:b_at + start + n]:
            return False
    return True


# --- the checks -------------------------------------------------------------------

DYNAMIC_LINE = re.compile(r"^\s*0x[0-9a-f]+\s+\((\w+)\)\s+(.*)$")
PATH_VALUE = re.compile(r"\[(.*)\]\s*$")


def dynamic_entries(path):
    code, out, err = run(["readelf", "-dW", path])
    if code != 0:
        raise AssertionError(f"readelf -dW failed: {err.strip()}")
    return [m.groups() for m in map(DYNAMIC_LINE.match, out.splitlines()) if m]


def search_path_kinds(entries):
    return [tag for tag, _ in entries if tag in ("RPATH", "RUNPATH")]


def expanded_search_path(entries, directory):
    values = [PATH_VALUE.search(v).group(1) for tag, v in entries if tag == "RUNPATH"] or \
             [PATH_VALUE.search(v).group(1) for tag, v in entries if tag == "RPATH"]
    current = values[0] if values else ""
    spelled = current.replace("${ORIGIN}", str(directory)).replace("$ORIGIN", str(directory))
    return PADDING + (":" + spelled if spelled else "")


def check_dynamic(problems, before, after, value, added_needed):
    kinds = search_path_kinds(before) or ["RUNPATH"]
    if sorted(search_path_kinds(after)) != sorted(set(kinds)):
        problems.append(f"search path kinds {search_path_kinds(before)} -> {search_path_kinds(after)}")
    for tag, shown in after:
        if tag in ("RPATH", "RUNPATH") and PATH_VALUE.search(shown).group(1) != value:
            problems.append(f"{tag} is {shown[:80]}..., not the value set")
    ignored = ("RPATH", "RUNPATH", "STRTAB", "STRSZ", "NULL")
    rest_before = [e for e in before if e[0] not in ignored]
    rest_after = [e for e in after if e[0] not in ignored]
    expected = rest_before + [("NEEDED", f"Shared library: [{n}]") for n in added_needed]
    if rest_after != expected:
        problems.append(f"other dynamic entries changed: {rest_before[:6]} -> {rest_after[:6]}")


def readelf_strings_view(entries):
    """SONAME/NEEDED/RPATH/RUNPATH as elf_dump_ours prints them, from readelf -dW entries."""
    values = [(tag, PATH_VALUE.search(shown).group(1)) for tag, shown in entries
              if tag in ("SONAME", "NEEDED", "RPATH", "RUNPATH")]
    return [f"{tag.lower()} {value}" for wanted in ("SONAME", "NEEDED", "RPATH", "RUNPATH")
            for tag, value in values if tag == wanted]


def canonical_without_search_path(text):
    return [line for line in text.splitlines() if not line.startswith(("rpath ", "runpath "))]


def check_readers(problems, original, edited, expect_needed, readelf_after):
    code_in, ours_in, _ = run([OURS, original])
    code_out, ours_out, err_out = run([OURS, edited])
    if code_out != 0:
        problems.append(f"elf_dump_ours cannot read the result: {err_out.strip()}")
        return
    ours_strings = [line for line in ours_out.splitlines()
                    if line.startswith(("soname ", "needed ", "rpath ", "runpath "))]
    if ours_strings != readelf_strings_view(readelf_after):
        problems.append("elf_dump_ours and readelf -dW disagree on SONAME/NEEDED/RPATH/RUNPATH")
    code, lief_out, err = run([LIEF, edited], timeout=900)
    if code != 0 or lief_out != ours_out:
        problems.append(f"elf_dump_lief disagrees with ours on the result ({err.strip()[:200]})")
    expected = [line for line in canonical_without_search_path(ours_in)]
    expected = [l for l in expected if not l.startswith("needed ")] if expect_needed else expected
    got = canonical_without_search_path(ours_out)
    got = [l for l in got if not l.startswith("needed ")] if expect_needed else got
    if code_in == 0 and got != expected:
        problems.append("elf_dump_ours of the result differs from the input beyond the search path")
    for command in (["readelf", "--dyn-syms", "-W"], ["readelf", "-rW"]):
        _, out_in, _ = run(command + [original])
        _, out_out, _ = run(command + [edited])
        if out_in != out_out:
            problems.append(f"`{' '.join(command)}` output changed")
    _, _, warnings_in = run(["readelf", "-hlSdW", original])
    _, _, warnings_out = run(["readelf", "-hlSdW", edited])
    new_warnings = set(warnings_out.splitlines()) - set(warnings_in.replace(str(original), str(edited)).splitlines())
    if new_warnings:
        problems.append(f"new readelf warnings: {sorted(new_warnings)[:3]}")


def elflint_messages(path):
    """The set of elflint messages, or None when elflint crashes or times out."""
    try:
        result = subprocess.run(["eu-elflint", "--gnu-ld", str(path)], capture_output=True, text=True,
                                errors="replace", timeout=ELFLINT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None
    if result.returncode not in (0, 1):
        return None
    lines = (result.stdout + result.stderr).replace(str(path), "FILE").splitlines()
    return {line for line in lines if line.strip() and line.strip() != "No errors"}


def symbol_changes_allowed(old, old_sym, new_sym, moves):
    """Only st_value of symbols in a moved section (or an absolute _DYNAMIC) may change."""
    _, old_value, shndx, old_raw = old_sym
    _, new_value, _, new_raw = new_sym
    value_at = 8 if old.is64 else 4
    width = 8 if old.is64 else 4
    same_elsewhere = old_raw[:value_at] + old_raw[value_at + width:] == new_raw[:value_at] + new_raw[value_at + width:]
    delta = moves.get(shndx)
    if delta is None and shndx == SHN_ABS:
        delta = moves.get("_DYNAMIC_ABS", {}).get(old_value)
    if not same_elsewhere or delta is None:
        return False
    return (new_value - old_value) % (1 << (8 * width)) == delta % (1 << (8 * width))


def check_sections(problems, original, edited):
    """Checks (c); returns the names of the sections that moved."""
    old, new = Elf(original), Elf(edited)
    moved_names = set()
    try:
        new_loads = sum(s["type"] == 1 for s in new.segments) - sum(s["type"] == 1 for s in old.segments)
        if new_loads != 1:
            problems.append(f"{new_loads} PT_LOAD segments added, expected 1")
        if len(old.sections) != len(new.sections):
            problems.append("section count changed")
            return
        moves = {}
        for a, b in zip(old.sections, new.sections):
            header_a = {k: v for k, v in a.items() if k not in ("offset", "addr", "size")}
            header_b = {k: v for k, v in b.items() if k not in ("offset", "addr", "size")}
            moved = (a["offset"], a["addr"], a["size"]) != (b["offset"], b["addr"], b["size"])
            if header_a != header_b or (moved and a["name"] not in (".dynstr", ".dynamic")):
                problems.append(f"section {a['name']} header changed")
            elif moved:
                moved_names.add(a["name"])
                moves[a["index"]] = b["addr"] - a["addr"]
                if a["name"] == ".dynamic":
                    moves["_DYNAMIC_ABS"] = {a["addr"]: b["addr"] - a["addr"]}
        for a, b in zip(old.sections, new.sections):
            if a["name"] in (".dynstr", ".dynamic") or a["type"] == SHT_NOBITS:
                continue  # their content is checked through the readers
            if a["type"] in (SHT_SYMTAB, SHT_DYNSYM):
                for old_sym, new_sym in zip(old.symbols(a), new.symbols(b)):
                    if old_sym[3] != new_sym[3] and not symbol_changes_allowed(old, old_sym, new_sym, moves):
                        problems.append(f"{a['name']}: a symbol outside the moved sections changed")
                        break
            elif not chunks_equal(old.data, a["offset"], new.data, b["offset"], a["size"]):
                problems.append(f"section {a['name']} bytes changed")
        return moved_names
    finally:
        old.close()
        new.close()


def loads(path):
    code, _, err = run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1], mode=2)", path],
                       timeout=300)
    return code == 0, err.strip().splitlines()[-1:] if err.strip() else []


def is_x86_64(path):
    elf = Elf(path)
    try:
        return elf.machine == 62 and elf.is64
    finally:
        elf.close()


def has_dynamic_section(path):
    elf = Elf(path)
    try:
        return any(s["type"] == 2 for s in elf.segments)  # PT_DYNAMIC
    finally:
        elf.close()


def roundtrip(label, path, workdir, index, add_needed):
    """Edits one file and checks the result; returns a report dict."""
    report = dict(label=label, problems=[], size_before=path.stat().st_size, size_after=None,
                  elflint=None, loaded=None, refused=False, seconds=0.0, dynamic_moved=False)
    started = time.monotonic()
    out_dir = Path(workdir) / "edited" / f"{index}{'-n' if add_needed else ''}"
    out_dir.mkdir(parents=True, exist_ok=True)
    edited = out_dir / path.name
    before = dynamic_entries(path) if has_dynamic_section(path) else None
    if before is None:
        code, _, err = run([ELF_EDIT, path, edited, "--set-rpath", PADDING])
        if code != 2 or "no dynamic section" not in err:
            report["problems"].append(f"a file without dynamic section: exit {code}, {err.strip()}")
        report["refused"] = True
        return report
    value = expanded_search_path(before, path.parent)
    needed_now = [PATH_VALUE.search(v).group(1) for t, v in before if t == "NEEDED"]
    extra = [n for n in EXTRA_NEEDED if n not in needed_now] if add_needed else []
    command = [ELF_EDIT, path, edited, "--set-rpath", value] + [a for n in extra for a in ("--add-needed", n)]
    code, _, err = run(command)
    if code != 0:
        report["problems"].append(f"elf_edit failed: {err.strip()}")
        return report
    report["size_after"] = edited.stat().st_size
    after = dynamic_entries(edited)
    check_dynamic(report["problems"], before, after, value, extra)
    check_readers(report["problems"], path, edited, bool(extra), after)
    report["dynamic_moved"] = ".dynamic" in (check_sections(report["problems"], path, edited) or set())
    lint_in = elflint_messages(path)
    if lint_in is not None:
        lint_out = elflint_messages(edited)
        report["elflint"] = (len(lint_in), sorted(lint_out - lint_in) if lint_out is not None else ["crashed"])
        if lint_out is None or lint_out - lint_in:
            report["problems"].append(f"new eu-elflint messages: {report['elflint'][1][:5]}")
    if is_x86_64(path):
        loaded_before, _ = loads(path)
        if loaded_before:
            loaded_after, why = loads(edited)
            report["loaded"] = loaded_after
            if not loaded_after:
                report["problems"].append(f"ld.so loads the original but not the result: {why}")
    report["seconds"] = time.monotonic() - started
    shutil.rmtree(out_dir, ignore_errors=True)
    return report


def run_pool(files, workdir, add_needed):
    with concurrent.futures.ProcessPoolExecutor(WORKERS) as pool:
        futures = [pool.submit(roundtrip, label, path, workdir, i, add_needed)
                   for i, (label, path) in enumerate(files)]
        return [f.result() for f in futures]


def summarize(reports, title):
    edited = [r for r in reports if r["size_after"] is not None]
    linted = [r for r in edited if r["elflint"] is not None]
    loaded = [r for r in edited if r["loaded"]]
    lines = [f"{title}: {len(reports)} ELF files, {len(edited)} edited and round-tripped, "
             f"{sum(r['refused'] for r in reports)} refused (no dynamic section); eu-elflint compared on "
             f"{len(linted)} ({sum(r['elflint'][0] for r in linted)} input messages, "
             f"{sum(len(r['elflint'][1]) for r in linted)} new), skipped on {len(edited) - len(linted)}; "
             f"ld.so loaded {len(loaded)} edited x86_64 files; .dynamic moved in "
             f"{sum(r['dynamic_moved'] for r in edited)}"]
    for r in sorted(edited, key=lambda r: -r["size_before"])[:3]:
        lines.append(f"  {r['label']}: {r['size_before']} -> {r['size_after']} bytes "
                     f"(+{r['size_after'] - r['size_before']}), checked in {r['seconds']:.1f} s")
    print("\n" + "\n".join(lines), file=sys.stderr)


# --- the relink fixtures: real programs -------------------------------------------

def edit_app(edit_tool, directory, exe_runpath):
    """Fixes the relink fixture in `directory`; returns the commands' outputs."""
    steps = [
        ("app", ["--set-rpath", exe_runpath]),
        ("libwfapp.so", ["--set-rpath", "$ORIGIN", "--replace-needed", "libwfdep.so.1=libwfdep.so.2"]),
        ("libwfdep.so.2", ["--set-soname", "libwfdep.so.2"]),
    ]
    for name, options in steps:
        target = directory / name
        code, out, err = run([edit_tool, target, target.with_suffix(".edited")] + options)
        if code != 0:
            raise AssertionError(f"elf_edit {name}: {err.strip()}")
        mode = target.stat().st_mode
        target.with_suffix(".edited").replace(target)
        target.chmod(mode)


class ElfEditorRoundtrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="wheelfix-edit-")
        cls.workdir = Path(cls.tmp.name)
        cls.files = collect_files(cls.workdir)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assert_no_problems(self, reports):
        failures = [f"{r['label']}:\n    " + "\n    ".join(r["problems"]) for r in reports if r["problems"]]
        self.assertEqual([], failures, "\n".join(failures))

    def test_1_set_long_search_path_on_every_file(self):
        labels = [label for label, _ in self.files]
        self.assertTrue(any("libcublasLt.so" in l for l in labels) or not CUDA_LIB_DIR.is_dir())
        self.assertTrue(any("torch-2.9.0/torch/lib/libtorch_cpu.so" in l for l in labels))
        self.assertTrue(any(l.endswith("linux_s390x.whl!testsimple.cpython-313-s390x-linux-gnu.so") for l in labels))
        reports = run_pool(self.files, self.workdir, add_needed=False)
        summarize(reports, "set-rpath (300+ characters)")
        self.assertGreater(sum(r["size_after"] is not None for r in reports), 60)
        self.assertGreater(sum(bool(r["loaded"]) for r in reports), 10)
        self.assert_no_problems(reports)

    def test_2_more_needed_entries_move_dynamic(self):
        small = [(l, p) for l, p in self.files if p.stat().st_size < SMALL_FILE]
        reports = run_pool(small, self.workdir, add_needed=True)
        summarize(reports, "set-rpath + 9 NEEDED")
        self.assert_no_problems(reports)

    def run_app_fixture(self, machine, launcher):
        directory = self.workdir / f"app-{machine}"
        shutil.copytree(EDIT_FIXTURES / machine, directory)
        code, out, err = run(launcher + [directory / "app"], timeout=60)
        self.assertNotEqual(0, code, "the fixture program must not start before the edit")
        self.assertIn("libwfapp.so", err)
        edit_app(ELF_EDIT, directory, "$ORIGIN")
        code, out, err = run(launcher + [directory / "app"], timeout=60)
        self.assertEqual((0, "wheelfix-edit-app 42\n"), (code, out), err)
        # Growth: a long RUNPATH moves the program headers of the executable and
        # nine more NEEDED entries move .dynamic of the library; both still run.
        long_origin = "$ORIGIN" + "/." * 160
        for name, options in (("app", ["--set-rpath", long_origin]),
                              ("libwfapp.so", ["--set-rpath", long_origin] +
                               [a for n in EXTRA_NEEDED for a in ("--add-needed", n)])):
            target = directory / name
            code, _, err = run([ELF_EDIT, target, target.with_suffix(".grown")] + options)
            self.assertEqual(0, code, err)
            target.with_suffix(".grown").replace(target)
            target.chmod(0o755)
        code, out, err = run(launcher + [directory / "app"], timeout=60)
        self.assertEqual((0, "wheelfix-edit-app 42\n"), (code, out), err)
        return directory

    def test_3_x86_64_program_runs_after_the_edit(self):
        self.run_app_fixture("x86_64", [])

    def test_4_aarch64_program_runs_under_qemu_after_the_edit(self):
        qemu = shutil.which("qemu-aarch64")
        if not qemu or not (QEMU_SYSROOT / "lib" / "ld-linux-aarch64.so.1").exists():
            reason = "qemu-aarch64 or the aarch64 sysroot (libc6-arm64-cross) is missing"
            print(f"\nskipped: {reason}", file=sys.stderr)
            self.skipTest(reason)
        directory = self.run_app_fixture("aarch64", [qemu, "-L", str(QEMU_SYSROOT)])
        code, out, _ = run(["readelf", "-lW", directory / "app"])
        self.assertIn("0x10000", out)  # the toolchain's 64 KiB pages, kept


if __name__ == "__main__":
    unittest.main(verbosity=2)
