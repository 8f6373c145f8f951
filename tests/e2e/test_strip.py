"""`repair --strip` (auditwheel's --strip): .symtab, .strtab and the .debug* sections
of every ELF member the wheel ships, grafted libraries included, are dropped.

A library gcc builds with -g (DWARF sections, a symbol table) carrying a build-tree
RUNPATH goes through the ways a file gets edited before it is stripped, the cases
where binutils strip after patchelf corrupts files (patchelf #505/#507: the segment
patchelf appends lies after the section headers): relinked by wheelfix with a RUNPATH
long enough to need the appended segment, and edited by the peer patchelf the same
way. `repair --strip` of a wheel holding each must leave (independent judges) no
.symtab, .strtab or .debug* section (readelf -S), the same sections binutils
`strip --strip-all` leaves of the original, eu-elflint --gnu-ld finding nothing it did
not find in the input (clean for gcc's and wheelfix's output), the dynamic
entries readelf -d showed before the strip (less the build tree), a smaller file, and
a library the real loader loads (ctypes, in a child) whose function answers. The graft
wheel's grafted libraries are stripped too and the extension still imports with no
LD_LIBRARY_PATH; the 72 MiB member of tests/data/same_bytes (bounded read) strips
clean; a stripped wheel strips to the same bytes again; without --strip nothing
changes (test_same_bytes.py). The editor's strip stage on ELF32, big-endian and other
machines' files (tests/data/elf), alone and after a grown RUNPATH, keeps every other
section and the dynamic entries, and reads back.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import peers  # noqa: E402
import wfx  # noqa: E402

# 3000 functions besides: symbol and debug sections well over the 64 KiB that an
# appended segment (kept congruent modulo 64 KiB) can move back by.
SOURCE = r"""
static int table[64];
int strip_value(int x) { for (int i = 0; i < 64; ++i) table[i] = i * x; return table[7] + 1; }
""" + "".join(f"int strip_filler_{i}(int x) {{ return x * {i} + table[{i % 64}]; }}\n" for i in range(3000))
BUILD_TREE = "/nonexistent/build/tree/lib"
LONG = "$ORIGIN/" + "/".join(["a-directory-name-long-enough-to-grow-dynstr"] * 4)
DATA = wfx.TEST_DATA / "same_bytes"


def readelf(*args):
    return subprocess.run(["readelf", *map(str, args)], capture_output=True, text=True, check=True).stdout


def section_names(path):
    names = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", readelf("-SW", path), re.M)
    return [n for n in names if n != "NULL"]


def stripped_away(names):
    return [n for n in names if n in (".symtab", ".strtab") or n.startswith((".debug", ".zdebug"))]


def dynamic_entries(path):
    """readelf -d's (tag, value) lines, less the search path and the string table's place and size."""
    out = []
    for line in readelf("-dW", path).splitlines():
        m = re.match(r"\s*0x[0-9a-f]+\s+\((\w+)\)\s+(.*)$", line)
        if m and m.group(1) not in ("RUNPATH", "RPATH", "STRTAB", "STRSZ"):
            out.append((m.group(1), m.group(2)))
    return out


def elflint_lines(path):
    """eu-elflint --gnu-ld's complaints, section numbers left out (a strip renumbers
    the sections after the ones it drops)."""
    proc = subprocess.run(["eu-elflint", "--gnu-ld", str(path)], capture_output=True, text=True)
    return [re.sub(r"section \[\s*\d+\]", "section [N]", line)
            for line in (proc.stdout + proc.stderr).splitlines() if line.strip() and line.strip() != "No errors"]


def load_and_call(path):
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); print(lib.strip_value(3))")
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env)


def one_member_wheel(tmp, name, library):
    files = {"stripped/__init__.py": b"", f"stripped/{name}": Path(library).read_bytes()}
    tag = "cp311-cp311-linux_x86_64"
    return wfx.write_wheel(Path(tmp) / f"stripped-1.0-{tag}.whl", {**files, **wfx.dist_info_members("stripped", "1.0", tag)})


def repair(*args, check=0):
    proc = subprocess.run([wfx.WHEELFIX, "repair", "--no-load-test", *map(str, args)], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"})
    if check is not None and proc.returncode != check:
        raise AssertionError(f"repair {args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def extract(wheel, member, into):
    with zipfile.ZipFile(wheel) as zf:
        zf.extract(member, into)
    return Path(into) / member


class Strip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc") or not shutil.which("eu-elflint"):
            raise unittest.SkipTest("gcc and eu-elflint are needed")
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-strip-"))
        (cls.tmp / "lib.c").write_text(SOURCE)
        cls.original = cls.tmp / "libdbg.so"
        subprocess.run(["gcc", "-g", "-O1", "-fPIC", "-shared", "-o", cls.original, cls.tmp / "lib.c",
                        "-Wl,-soname,libdbg.so", f"-Wl,-rpath,$ORIGIN:{BUILD_TREE}", "-Wl,--enable-new-dtags"],
                       check=True)
        reference = cls.tmp / "libdbg.strip-all.so"
        subprocess.run(["strip", "--strip-all", "-o", reference, cls.original], check=True)
        cls.binutils_sections = section_names(reference)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def strip_and_judge(self, library, label):
        """repair --strip of a wheel holding `library`; the judges on the result."""
        work = self.tmp / f"{label}-repaired"
        work.mkdir()
        before = section_names(library)
        self.assertTrue(stripped_away(before), before)
        wheel = one_member_wheel(work, "libdbg.so", library)
        repair(wheel, "--strip", "-w", work / "out")
        (output,) = (work / "out").glob("*.whl")
        wfx.run("verify", output, check_status=0)
        stripped = extract(output, "stripped/libdbg.so", work / "site")
        names = section_names(stripped)
        self.assertEqual(stripped_away(names), [], names)
        self.assertEqual(sorted(names), sorted(self.binutils_sections), "the sections binutils strip --strip-all keeps")
        # eu-elflint finds nothing the input did not have (patchelf's appended segment
        # is writable with only read-only sections in it: its complaint stays).
        self.assertLessEqual(set(elflint_lines(stripped)), set(elflint_lines(library)))
        if label != "patchelf":
            self.assertEqual(elflint_lines(stripped), [])
        self.assertEqual(dynamic_entries(stripped), dynamic_entries(library))
        self.assertNotIn(BUILD_TREE, readelf("-dW", stripped))
        self.assertLess(stripped.stat().st_size, Path(library).stat().st_size)
        loaded = load_and_call(stripped)
        self.assertEqual((loaded.returncode, loaded.stdout.strip()), (0, "22"), loaded.stderr)
        # Stripping what is stripped changes nothing.
        again = repair(output, "--strip", "-w", work / "again")
        (second,) = (work / "again").glob("*.whl")
        with zipfile.ZipFile(output) as a, zipfile.ZipFile(second) as b:
            self.assertEqual(a.read("stripped/libdbg.so"), b.read("stripped/libdbg.so"), again.stdout)
        return stripped

    def test_a_plain_gcc_library(self):
        self.strip_and_judge(self.original, "plain")

    def test_a_library_wheelfix_relinked_with_an_appended_segment(self):
        relinked = self.tmp / "relinked" / "libdbg.so"
        relinked.parent.mkdir()
        wfx.run("relink", self.original, "--add-rpath", LONG, "-o", relinked, check_status=0)
        self.assertGreater(relinked.stat().st_size, self.original.stat().st_size)  # the appended segment
        loads = load_and_call(relinked)
        self.assertEqual(loads.returncode, 0, loads.stderr)
        stripped = self.strip_and_judge(relinked, "relinked")
        self.assertIn(LONG.replace("$", "$"), readelf("-dW", stripped))

    def test_a_library_patchelf_edited(self):
        edited = self.tmp / "patchelf" / "libdbg.so"
        edited.parent.mkdir()
        shutil.copy(self.original, edited)
        proc = peers.patchelf("--set-rpath", f"$ORIGIN:{BUILD_TREE}:{LONG}", edited)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.strip_and_judge(edited, "patchelf")

    def test_grafted_libraries_are_stripped_and_the_extension_imports(self):
        work = self.tmp / "graft"
        work.mkdir()
        repair(DATA / "graftpkg-1.0-cp311-cp311-linux_x86_64.whl", "--strip", "--ldpaths", DATA / "graft-lib",
               "-w", work / "out")
        (output,) = (work / "out").glob("*.whl")
        wfx.run("verify", output, check_status=0)
        site = work / "site"
        with zipfile.ZipFile(output) as zf:
            zf.extractall(site)
            elves = [n for n in zf.namelist() if n.endswith(".so") or ".so." in n]
        self.assertEqual(len([n for n in elves if n.startswith("graftpkg.libs/")]), 2, elves)
        for name in elves:
            with self.subTest(member=name):
                self.assertEqual(stripped_away(section_names(site / name)), [])
                self.assertEqual(peers.elflint_complaints(site / name), 0)
        if sys.version_info[:2] == (3, 11):  # the extension is built for cp311
            env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
            proc = subprocess.run([sys.executable, "-c", "import graftpkg; print(graftpkg.value())"], cwd=site,
                                  capture_output=True, text=True, env=env)
            self.assertEqual((proc.returncode, proc.stdout.strip()), (0, "42"), proc.stderr)

    def test_a_big_member_strips_on_the_bounded_read(self):
        work = self.tmp / "big"
        repair(DATA / "bigguard-1.0-cp311-cp311-linux_x86_64.whl", "--strip", "--ldpaths", DATA / "priv-lib",
               "-w", work / "out")
        (output,) = (work / "out").glob("*.whl")
        wfx.run("verify", output, check_status=0)
        for name in ("bigguard/libbig.so", "bigguard/libhelper.so"):
            member = extract(output, name, work / "site")
            self.assertEqual(stripped_away(section_names(member)), [])
            self.assertEqual(peers.elflint_complaints(member), 0)
            self.assertNotIn("/nonexistent", readelf("-dW", member))


# Foreign classes, byte orders and machines (tests/data/elf: gcc cross builds), with
# symbol tables and debug sections: ELF32 little-endian (i686, armv7l), ELF64 big-endian
# (s390x), mips64el, ppc64le.
FOREIGN = [wfx.TEST_DATA / "elf" / name for name in (
    "testsimple-s390x.so", "testsimple-mips64el.so", "edit/testsimple-armv7l.so", "edit/testsimple-ppc64le.so",
    "edit/testsimple-i686.so")]


class StripForeign(unittest.TestCase):
    """The editor's strip stage alone and after a grown RUNPATH (tests/tools/elf_edit):
    no .symtab, .strtab or .debug* left (readelf -S), every other section kept, the
    dynamic entries as readelf -d showed them (less the search path and the string
    table's place), our own reader reads it back, eu-elflint finds nothing new."""

    def test_each_class_and_byte_order(self):
        tool = wfx.env_path("ELF_EDIT")
        with tempfile.TemporaryDirectory(prefix="wheelfix-strip-foreign-") as tmp:
            for source in FOREIGN:
                for label, edit in (("strip", []), ("grow+strip", ["--add-rpath", LONG])):
                    with self.subTest(file=source.name, edit=label):
                        out = Path(tmp) / f"{label}-{source.name}"
                        proc = subprocess.run([str(tool), str(source), str(out), *edit, "--strip"],
                                              capture_output=True, text=True)
                        self.assertEqual(proc.returncode, 0, proc.stderr)
                        before, after = section_names(source), section_names(out)
                        self.assertTrue(stripped_away(before))
                        self.assertEqual(stripped_away(after), [])
                        self.assertEqual(sorted(after), sorted(n for n in before if n not in stripped_away(before)))
                        self.assertEqual(dynamic_entries(out), dynamic_entries(source))
                        self.assertLessEqual(set(elflint_lines(out)), set(elflint_lines(source)))
                        ours = subprocess.run([str(wfx.env_path("ELF_DUMP_OURS")), str(out)], capture_output=True,
                                              text=True)
                        self.assertEqual(ours.returncode, 0, ours.stderr)


if __name__ == "__main__":
    unittest.main()
