"""musl floors from symbols (issue 34): musl has no symbol versions, so a musl binary
shows the release it needs only by the functions it imports. Extensions built here
by Debian's musl-gcc (musl-tools): one calling reallocarray (musl 1.2.2), one calling
qsort_r (1.2.3), one calling only what musl 1.1 has. nm -D (an independent reader)
shows the imports; inspect and repair raise the musllinux tag to musllinux_1_2 for
the first two and keep musllinux_1_1 for the third; the same reallocarray built for
glibc stays a manylinux wheel (the table is musl's, not glibc's). The table's
entries are musl's own words: each function appears in the release notes Debian's
musl package installs (/usr/share/doc/musl/changelog.gz, WHATSNEW) where it has the
release the table gives."""
import gzip
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402
from test_shim import make_wheel  # noqa: E402

TABLE = wfx.SOURCE_DIR / "src" / "policy" / "data" / "musl-functions.policy"
WHATSNEW = Path("/usr/share/doc/musl/changelog.gz")

SOURCES = {
    "reallocarray": "#include <stdlib.h>\nvoid *grow(void *p, size_t n) { return reallocarray(p, n, 16); }\n",
    "qsort_r": ("#include <stdlib.h>\nstatic int cmp(const void *a, const void *b, void *c) "
                "{ return *(const int *)a - *(const int *)b; }\n"
                "void sort(int *v, size_t n) { qsort_r(v, n, sizeof *v, cmp, 0); }\n"),
    "plain": "#include <stdlib.h>\nvoid *grow(void *p, size_t n) { return realloc(p, n * 16); }\n",
}


def table():
    rows = {}
    for line in TABLE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            function, since = line.split()
            rows[function] = since
    return rows


def imports(path):
    out = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@unittest.skipUnless(shutil.which("musl-gcc"), "needs Debian's musl-tools (musl-gcc)")
class MuslFloors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-musl-"))
        cls.wheels = {}
        for name, source in SOURCES.items():
            c = cls.tmp / f"{name}.c"
            c.write_text(source)
            so = cls.tmp / f"_{name}.so"
            subprocess.run(["musl-gcc", "-O2", "-fPIC", "-shared", str(c), "-o", str(so)], check=True)
            directory = cls.tmp / name
            directory.mkdir()
            cls.wheels[name] = make_wheel(directory, f"musl{name.replace('_', '')}", "py3-none-linux_x86_64",
                                          {f"muslpkg/_{name}.so": so.read_bytes()})
        cls.glibc = cls.tmp / "_glibc.so"
        (cls.tmp / "glibc.c").write_text(SOURCES["reallocarray"])
        subprocess.run(["gcc", "-O2", "-fPIC", "-shared", str(cls.tmp / "glibc.c"), "-o", str(cls.glibc)], check=True)
        (cls.tmp / "glibc").mkdir()
        cls.glibc_wheel = make_wheel(cls.tmp / "glibc", "glibcra", "py3-none-linux_x86_64",
                                     {"glibcra/_ra.so": cls.glibc.read_bytes()})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def honest_tag(self, wheel):
        doc = wfx.run_json("inspect", wheel, check_status=None)
        report = doc["inputs"][0]
        return report["honest_tag"]

    def test_the_builds_import_what_they_call(self):
        for name in ("reallocarray", "qsort_r"):
            self.assertIn(name, imports(self.tmp / f"_{name}.so"))
        plain = imports(self.tmp / "_plain.so")
        self.assertIn("realloc", plain)
        self.assertFalse(plain & set(table()), plain)
        needed = wfx.readelf_dynamic(self.tmp / "_plain.so")["needed"]
        self.assertEqual(needed, ["libc.so"])  # musl's own SONAME, as musl-gcc links it

    def test_a_musl_1_2_function_raises_the_tag(self):
        self.assertEqual(self.honest_tag(self.wheels["reallocarray"]), "musllinux_1_2")
        self.assertEqual(self.honest_tag(self.wheels["qsort_r"]), "musllinux_1_2")
        text = wfx.run("inspect", self.wheels["reallocarray"]).stdout
        self.assertIn("musl libc 1.2.2 (reallocarray)", text)

    def test_a_binary_without_one_keeps_musllinux_1_1(self):
        self.assertEqual(self.honest_tag(self.wheels["plain"]), "musllinux_1_1")

    def test_repair_writes_the_raised_tag(self):
        for name, tag in (("reallocarray", "musllinux_1_2_x86_64"), ("plain", "musllinux_1_1_x86_64")):
            with self.subTest(name=name), tempfile.TemporaryDirectory(prefix="wheelfix-musl-out-") as out:
                proc = wfx.run("repair", self.wheels[name], "-w", out, "--no-load-test")
                self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
                [written] = Path(out).glob("*.whl")
                self.assertTrue(written.name.endswith(f"-{tag}.whl"), written.name)

    def test_a_claim_of_musllinux_1_1_is_a_lie_for_reallocarray(self):
        directory = self.tmp / "claim"
        directory.mkdir(exist_ok=True)
        so = (self.tmp / "_reallocarray.so").read_bytes()
        wheel = make_wheel(directory, "muslclaim", "py3-none-musllinux_1_1_x86_64", {"muslpkg/_ra.so": so})
        doc = wfx.run_json("inspect", wheel, check_status=None)
        report = doc["inputs"][0]
        claims = {c["tag"]: c["honest"] for c in report["platform_claims"]}
        self.assertEqual(claims, {"musllinux_1_1_x86_64": False}, report["platform_claims"])

    def test_glibc_reallocarray_is_no_musl_need(self):
        self.assertRegex(self.honest_tag(self.glibc_wheel), r"^manylinux_2_\d+$")

    @unittest.skipUnless(WHATSNEW.exists(), "Debian's musl package installs no WHATSNEW here")
    def test_the_table_is_what_musls_release_notes_say(self):
        notes = gzip.decompress(WHATSNEW.read_bytes()).decode()
        releases = dict(re.findall(r"^(\d+\.\d+\.\d+) release notes\n(.*?)(?=^\d+\.\d+\.\d+ release notes|\Z)",
                                   notes, re.M | re.S))
        for function, since in table().items():
            if since not in releases:  # Debian 12 ships musl 1.2.3: the newer notes are musl 1.2.5's own
                continue
            with self.subTest(function=function):
                self.assertRegex(releases[since], rf"\b{re.escape(function)}\b")


if __name__ == "__main__":
    unittest.main()
