"""Refusals after work started leave nothing (issue 16), for the classes no other test
covered: names the file system cannot hold and a wheel that ships ELF files under
torch/. Each is exit 2 with one line naming the file and the problem, nothing in the
output directory, nothing left in TMPDIR (the load test's directory), and the torch
given untouched.

- a member whose name has a component longer than NAME_MAX (repair with a load
  test: it would be laid out, and pip could not install it either);
- an ELF member under torch/lib of the input wheel (the load test lays the torch
  given at site/torch: before, a raw "cannot create directory symlink: File exists";
  installed by pip it would overwrite torch's own files);
- an output directory path longer than PATH_MAX, a directory component longer than
  NAME_MAX, an output file name too long for its temporary beside it: refused
  before any work, the message shortened to one readable line.
(An unusable TMPDIR and a load test that fails or hangs: test_signals_and_races and
test_repair.)"""
import base64
import hashlib
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
from test_shim import make_wheel  # noqa: E402

TORCH_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"
PLAIN = wfx.SAMPLES / "plainext-1.0.0-cp311-cp311-linux_x86_64.whl"


def with_extra_member(source, into, member):
    """`source` (a wheel) with its first .so also stored as `member`, RECORD updated."""
    target = Path(into) / Path(source).name
    with zipfile.ZipFile(source) as zi, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zo:
        names = zi.namelist()
        data = zi.read(next(n for n in names if n.endswith(".so")))
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        for name in names:
            if name != record:
                zo.writestr(zi.getinfo(name), zi.read(name))
        zo.writestr(member, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines = zi.read(record).decode().replace(f"{record},,", f"{member},sha256={digest},{len(data)}\n{record},,")
        zo.writestr(record, lines)
    return target


def tree_digest(root):
    return sorted((str(p.relative_to(root)), hashlib.sha256(p.read_bytes()).hexdigest())
                  for p in Path(root).rglob("*") if p.is_file())


class NamesAndLayout(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-names-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.private_tmp = self.tmp / "tmpdir"
        self.private_tmp.mkdir()
        self.out = self.tmp / "out"

    def run_wheelfix(self, *args):
        env = dict(os.environ, TMPDIR=str(self.private_tmp))
        return subprocess.run([wfx.WHEELFIX, *map(str, args)], capture_output=True, text=True, timeout=120, env=env)

    def assert_refused(self, proc, *mentions):
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertLess(len(lines[0]), 400, lines[0])
        for text in mentions:
            self.assertIn(text, lines[0])
        self.assertEqual(list(self.out.iterdir()) if self.out.exists() else [], [])
        self.assertEqual(list(self.private_tmp.iterdir()), [])

    def repair_with_load_test(self, wheel):
        return self.run_wheelfix("repair", wheel, "--torch", TORCH_210, "-o", self.out, "-q")

    def test_member_name_longer_than_name_max(self):
        (self.tmp / "in").mkdir()
        wheel = with_extra_member(wfx.SGL_WHEEL, self.tmp / "in", "sgl_kernel/" + "a" * 300 + ".so")
        self.assert_refused(self.repair_with_load_test(wheel), str(wheel), "longer than NAME_MAX")

    def test_elf_under_torch_lib_of_the_input(self):
        (self.tmp / "in").mkdir()
        wheel = with_extra_member(wfx.SGL_WHEEL, self.tmp / "in", "torch/lib/libsmuggled.so")
        before = tree_digest(TORCH_210)
        self.assert_refused(self.repair_with_load_test(wheel), str(wheel), "torch/lib/libsmuggled.so",
                            "installed under torch/")
        self.assertEqual(tree_digest(TORCH_210), before)

    def test_output_path_longer_than_path_max(self):
        deep = self.tmp.joinpath(*["d" * 200] * 25)
        self.assert_refused(self.run_wheelfix("relink", PLAIN, "-o", deep, "--set-rpath", "x"), "path too long")
        self.assertFalse((self.tmp / ("d" * 200)).exists())

    def test_output_directory_name_longer_than_name_max(self):
        proc = self.run_wheelfix("relink", PLAIN, "-o", self.tmp / ("o" * 300), "--set-rpath", "x")
        self.assert_refused(proc, "longer than NAME_MAX")
        self.assertFalse((self.tmp / ("o" * 300)[:255]).exists())

    def test_output_file_name_too_long_for_its_temporary(self):
        name = "n" * 220
        (self.tmp / "in").mkdir()
        with zipfile.ZipFile(PLAIN) as zf:
            so = next(n for n in zf.namelist() if n.endswith(".so"))
            wheel = make_wheel(self.tmp / "in", name, "cp311-cp311-linux_x86_64", {f"{name}/ext.so": zf.read(so)})
        for command in (["relink", wheel, "-o", self.out, "--set-rpath", "x"], ["repair", wheel, "-o", self.out, "-q"]):
            with self.subTest(command=command[0]):
                self.assert_refused(self.run_wheelfix(*command), "file name too long")


if __name__ == "__main__":
    unittest.main()
