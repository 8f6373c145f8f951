"""The read-only commands read a wheel's members on several threads (issue 19:
check, inspect and index use both cores); what they say must not depend on it.

WHEELFIX_THREADS sets the thread budget (1: the serial reading, members in archive
order; 2: two threads, largest member first). Proven on every test wheel (the
auditwheel test wheels and the samples): inspect --json and check --json print
byte-identical documents with the same exit status at 1 and at 2 threads; index
writes the same index file from a torch wheel (the stand-in tree zipped, libraries
in a shuffled member order) at both, and check against that wheel (the NEEDED walk,
read ahead a frontier at a time) reports the same and reads the same; and a wheel with two broken ELF members, the
small one first in archive order and the big one (read first by the second
thread) after it, is refused naming the small one at both, every time, as the
serial reading names the first it meets. A WHEELFIX_THREADS that is not 1 to 4096
is a usage error naming the variable."""
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

TORCH_DIR = wfx.SAMPLES / "torch-2.10.0" / "torch"


def run(threads, *args):
    env = dict(os.environ, WHEELFIX_THREADS=str(threads))
    return subprocess.run([wfx.WHEELFIX, *map(str, args)], capture_output=True, env=env)


class SameAtEveryBudget(unittest.TestCase):
    def assert_same(self, *args):
        serial, parallel = run(1, *args), run(2, *args)
        self.assertEqual(serial.returncode, parallel.returncode, args)
        self.assertEqual(serial.stdout, parallel.stdout, args)
        self.assertEqual(serial.stderr, parallel.stderr, args)
        return serial

    def test_inspect_json_is_byte_identical(self):
        wheels = wfx.all_wheels()
        self.assertGreater(len(wheels), 20)
        for wheel in wheels:
            with self.subTest(wheel=wheel.name):
                done = self.assert_same("inspect", wheel, "--json")
                self.assertIn(done.returncode, (0, 1))

    def test_check_json_is_byte_identical(self):
        for wheel in wfx.all_wheels():
            with self.subTest(wheel=wheel.name):
                self.assert_same("check", wheel, "--torch", TORCH_DIR, "--json")

    def test_a_wheel_of_many_elf_members(self):
        """Every x86_64 ELF member of the test wheels and the torch stand-in's
        libraries in one wheel, so both threads have ELF members to read."""
        members = {}
        for wheel in wfx.all_wheels():
            if "x86_64" not in wheel.name:
                continue
            with zipfile.ZipFile(wheel) as zf:
                for name in zf.namelist():
                    data = zf.read(name)
                    if wfx.is_elf(data):
                        members[f"pkg/{len(members):02d}_{Path(name).name}"] = data
        for library in sorted((TORCH_DIR / "lib").glob("*.so")):
            members[f"pkg/{len(members):02d}_{library.name}"] = library.read_bytes()
        self.assertGreater(len(members), 8)
        members.update(wfx.dist_info_members("pkg", "1.0", "cp311-cp311-linux_x86_64"))
        with tempfile.TemporaryDirectory() as work:
            wheel = wfx.write_wheel(Path(work) / "pkg-1.0-cp311-cp311-linux_x86_64.whl", members)
            inspected = self.assert_same("inspect", wheel, "--json")
            self.assertGreater(inspected.stdout.count(b'"machine"'), 8)
            self.assert_same("inspect", wheel)
            checked = self.assert_same("check", wheel, "--torch", TORCH_DIR, "--json")
            self.assertIn(checked.returncode, (0, 1))
            self.assert_same("verify", wheel)

    def test_index_of_a_torch_wheel_is_byte_identical(self):
        with tempfile.TemporaryDirectory() as work:
            work = Path(work)
            members = {"torch/version.py": (TORCH_DIR / "version.py").read_bytes()}
            libraries = sorted((TORCH_DIR / "lib").glob("*.so"))
            self.assertGreaterEqual(len(libraries), 4)
            for library in libraries[1:] + libraries[:1]:  # not in size or name order
                members[f"torch/lib/{library.name}"] = library.read_bytes()
            members.update(wfx.dist_info_members("torch", "2.10.0", "cp311-cp311-linux_x86_64"))
            wheel = wfx.write_wheel(work / "torch-2.10.0-cp311-cp311-linux_x86_64.whl", members)
            outputs = []
            for threads in (1, 2):
                out = work / f"index-{threads}.gz"
                done = run(threads, "index", wheel, "-o", out, "-v")
                self.assertEqual(done.returncode, 0, done.stderr)
                outputs.append((out.read_bytes(), done.stdout.replace(str(out).encode(), b"OUT"), done.stderr))
            self.assertEqual(outputs[0], outputs[1])
            self.assertIn(b"4 libraries", outputs[0][1])
            # check against the wheel walks NEEDED from the extensions' imports, reading
            # each frontier of that walk ahead on both threads: the same report and the
            # same -v account of what was inflated, in the same order.
            checked = self.assert_same("-v", "check", wfx.SGL_WHEEL, "--torch", wheel, "--json")
            self.assertIn(b"inflated", checked.stderr)
            self.assertGreaterEqual(checked.stderr.count(b"torch/lib/"), 2)

    def test_a_bad_thread_count_is_a_usage_error(self):
        for value in ("0", "two", "4097", "-1", "1.5"):
            with self.subTest(value=value):
                done = run(value, "inspect", wfx.SGL_WHEEL)
                self.assertEqual(done.returncode, 2)
                self.assertEqual(done.stdout, b"")
                self.assertTrue(done.stderr.startswith(b"wheelfix: WHEELFIX_THREADS: expected a number of threads"))
                self.assertEqual(done.stderr.count(b"\n"), 1)
        self.assertEqual(run("", "inspect", wfx.SGL_WHEEL).returncode, 0)  # empty counts as unset

    def test_the_first_broken_member_in_archive_order_is_named(self):
        with tempfile.TemporaryDirectory() as work:
            work = Path(work)
            with zipfile.ZipFile(wfx.SGL_WHEEL) as zf:
                extension = next(zf.read(n) for n in zf.namelist() if n.endswith(".so"))
            # ELF magic and a header that points the program headers past the end.
            broken = bytearray(extension[:64])
            broken[32:40] = (1 << 40).to_bytes(8, "little")
            members = {"pkg/a_small.so": bytes(broken),
                       "pkg/b_big.so": bytes(broken) + os.urandom(24 << 20)}
            members.update(wfx.dist_info_members("pkg", "1.0", "cp311-cp311-linux_x86_64"))
            wheel = wfx.write_wheel(work / "pkg-1.0-cp311-cp311-linux_x86_64.whl", members)
            for command in (["inspect", wheel], ["check", wheel, "--torch", TORCH_DIR]):
                for attempt in range(3):
                    with self.subTest(command=command[0], attempt=attempt):
                        done = self.assert_same(*command)
                        self.assertEqual(done.returncode, 2)
                        self.assertIn(b"pkg/a_small.so", done.stderr)
                        self.assertNotIn(b"b_big", done.stderr)
                        self.assertEqual(done.stderr.count(b"\n"), 1)


if __name__ == "__main__":
    unittest.main()
