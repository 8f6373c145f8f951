"""Two inputs of one `repair` run whose outputs would have one file name (issue 16):
the same wheel named twice, or two builds of one wheel whose platform tags repair
turns into the same one. Before, the second was refused as "already exists; pass
--overwrite" (misleading: with --overwrite it silently replaced the first). Now the
second input to take the name is refused before it writes, --overwrite or not: exit
2, one line naming the output and both inputs; the first input's output is written
and verifies; nothing else is left in the output directory."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

PLAIN = wfx.SAMPLES / "plainext-1.0.0-cp311-cp311-linux_x86_64.whl"


class OutputCollisions(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-collide-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        (self.tmp / "a").mkdir()
        (self.tmp / "b").mkdir()
        self.first = self.tmp / "a" / PLAIN.name
        shutil.copy(PLAIN, self.first)
        # The same wheel under a manylinux2014 name: repair retags both to the one honest tag.
        self.second = self.tmp / "b" / PLAIN.name.replace("linux_x86_64", "manylinux2014_x86_64")
        shutil.copy(PLAIN, self.second)

    def repair(self, *args):
        return subprocess.run([wfx.WHEELFIX, "repair", *map(str, args), "-o", str(self.tmp / "out"), "-q", "-j", "1"],
                              capture_output=True, text=True, timeout=120)

    def assert_second_refused(self, proc, second):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn(str(second), lines[0])
        self.assertIn(f"is also the output of {self.first}", lines[0])
        written = sorted(p.name for p in (self.tmp / "out").iterdir())
        self.assertEqual(len(written), 1, written)  # the first input's output, nothing staged left behind
        wfx.run("verify", self.tmp / "out" / written[0], check_status=0)

    def test_two_builds_one_name_refused_even_with_overwrite(self):
        for extra in ([], ["--overwrite"]):
            with self.subTest(extra=extra):
                shutil.rmtree(self.tmp / "out", ignore_errors=True)
                self.assert_second_refused(self.repair(self.first, self.second, *extra), self.second)

    def test_same_wheel_named_twice(self):
        self.assert_second_refused(self.repair(self.first, self.first), self.first)

    def test_the_earlier_input_wins_at_any_job_count(self):
        """The first input made the larger (a 16 MB member: -j 2 starts it first and the
        small second input reaches its output name long before it): still the first is
        written and the second refused, as with -j 1."""
        with zipfile.ZipFile(PLAIN) as zf:
            members = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/RECORD")}
        members["plainext/blob.bin"] = os.urandom(16 << 20)
        self.first.unlink()
        wfx.write_wheel(self.first, members, compresslevel=0)
        for jobs in ("1", "2", "3"):
            with self.subTest(jobs=jobs):
                shutil.rmtree(self.tmp / "out", ignore_errors=True)
                proc = subprocess.run([wfx.WHEELFIX, "repair", str(self.first), str(self.second), "-o", str(self.tmp / "out"),
                                       "-q", "-j", jobs], capture_output=True, text=True, timeout=120)
                self.assert_second_refused(proc, self.second)
                (written,) = (self.tmp / "out").iterdir()
                self.assertGreater(written.stat().st_size, 16 << 20)  # the first input's output

    def test_separate_runs_still_refuse_an_existing_output(self):
        self.assertEqual(self.repair(self.first).returncode, 0)
        proc = self.repair(self.second)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("already exists; pass --overwrite", proc.stderr)


if __name__ == "__main__":
    unittest.main()
