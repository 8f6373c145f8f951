"""Inputs of one `repair` run whose outputs may have one file name (issues 16, 34): the
same wheel named twice, two builds of one wheel whose platform tags repair turns into
the same one, or a later input that lies in the output directory under a name an
earlier input's output takes. The decision is made once, from the names, before any
work: the whole batch is refused (exit 2, one line naming both inputs, nothing
written, --overwrite or not, at any -j), so no refusal ever leaves another input's
output behind. Inputs that cannot collide (other distributions) still each get their
own result."""
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

    def assert_batch_refused(self, proc, later, earlier):
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn(str(later), lines[0])
        self.assertIn(str(earlier), lines[0])
        self.assertIn("the batch is refused before any work, nothing written", lines[0])
        out = self.tmp / "out"
        self.assertEqual(sorted(p.name for p in out.iterdir()) if out.exists() else [], [])

    def test_two_builds_one_name_refused_whole_even_with_overwrite(self):
        for extra in ([], ["--overwrite"]):
            with self.subTest(extra=extra):
                shutil.rmtree(self.tmp / "out", ignore_errors=True)
                self.assert_batch_refused(self.repair(self.first, self.second, *extra), self.second, self.first)

    def test_same_wheel_named_twice(self):
        self.assert_batch_refused(self.repair(self.first, self.first), self.first, self.first)

    def test_refused_whole_at_any_job_count(self):
        """A large first input (a 16 MB member: -j 2 would start it first): still nothing
        is written, at any -j."""
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
                self.assert_batch_refused(proc, self.second, self.first)

    def test_a_later_input_that_is_an_earlier_output(self):
        self.assertEqual(self.repair(self.first).returncode, 0)
        (earlier_output,) = (self.tmp / "out").iterdir()
        before = earlier_output.read_bytes()
        proc = self.repair(self.first, earlier_output, "--overwrite")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn(f"{earlier_output}: lies in the output directory and may be the output of {self.first}", lines[0])
        self.assertEqual([p.name for p in (self.tmp / "out").iterdir()], [earlier_output.name])
        self.assertEqual(earlier_output.read_bytes(), before)  # the input was not touched

    def test_inputs_that_cannot_collide_each_get_their_result(self):
        purepy = self.tmp / "a" / "purepy-1.0.0-py3-none-any.whl"
        shutil.copy(wfx.SAMPLES / purepy.name, purepy)
        proc = self.repair(self.first, purepy)
        self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        self.assertEqual(len(list((self.tmp / "out").iterdir())), 2)

    def test_the_local_label_counts_but_its_torch_segment_does_not(self):
        def wheel(version, where):
            (self.tmp / where).mkdir(exist_ok=True)
            tag = "py3-none-any"
            return wfx.write_wheel(self.tmp / where / f"labelled-{version}-{tag}.whl",
                                   {"labelled/__init__.py": b"x = 1\n", **wfx.dist_info_members("labelled", version, tag)})
        cu128, cu130 = wheel("1.0+cu128", "c"), wheel("1.0+cu130", "d")
        proc = self.repair(cu128, cu130)
        self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        self.assertEqual(len(list((self.tmp / "out").iterdir())), 2)  # two CUDA builds, two outputs
        shutil.rmtree(self.tmp / "out")
        older, newer = wheel("1.0+cu130.torch2.9", "e"), wheel("1.0+cu130.torch2.10", "f")
        proc = self.repair(older, newer)  # without --torch versions are kept: no collision
        self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        shutil.rmtree(self.tmp / "out")
        torch = wfx.SAMPLES / "torch-2.10.0" / "torch"  # with it, both may become +cu130.torch2.10
        self.assert_batch_refused(self.repair(older, newer, "--torch", torch), newer, older)
        self.assert_batch_refused(self.repair(cu128, cu130, "--torch", torch, "--keep-version"), cu130, cu128)

    def test_separate_runs_still_refuse_an_existing_output(self):
        self.assertEqual(self.repair(self.first).returncode, 0)
        proc = self.repair(self.second)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("already exists; pass --overwrite", proc.stderr)


class LongArgumentFiles(unittest.TestCase):
    """Pipelines pass long lists as @FILE (issue 34): 20,000 wheel paths (1.2 MB, past the
    old 1 MiB and below any memory worry) run; what is bounded is memory."""

    def test_twenty_thousand_wheels_from_an_argument_file(self):
        import resource
        with tempfile.TemporaryDirectory(prefix="wheelfix-argfile-") as tmp:
            wheel = wfx.SAMPLES / "purepy-1.0.0-py3-none-any.whl"
            listing = Path(tmp) / "wheels.txt"
            listing.write_text("\n".join([str(wheel)] * 20000) + "\n")
            self.assertGreater(listing.stat().st_size, 1 << 20)
            proc = subprocess.run([wfx.WHEELFIX, "verify", f"@{listing}"], capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr[-500:])
            self.assertEqual(proc.stdout.count(": OK ("), 20000)
            self.assertLess(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, 512 << 10)  # KiB


if __name__ == "__main__":
    unittest.main()
