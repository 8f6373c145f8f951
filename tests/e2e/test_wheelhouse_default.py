"""The writing commands as typed, auditwheel's way: with no -o/-w, `repair`, `retag`,
`relink` and `shim` write into ./wheelhouse/ (created when missing) and say where.
Run from a fresh empty directory, as a new user would: `wheelfix retag --torch 2.10.0
X.whl` and `wheelfix repair X.whl` work as typed, and the wheels they write are
judged by `wheelfix verify` and by Python's zipfile. An empty -o is a usage error
(exit 2, one line, nothing written), for every command that takes -o; a file named
wheelhouse where the directory should be is refused the same way."""
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
TORCH_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"


def run_in(cwd, *args):
    return subprocess.run([wfx.WHEELFIX, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


class WheelhouseByDefault(unittest.TestCase):
    def setUp(self):
        self.cwd = Path(tempfile.mkdtemp(prefix="wheelfix-fresh-"))
        self.addCleanup(shutil.rmtree, self.cwd, True)
        self.input = self.cwd / "in"
        self.input.mkdir()

    def written(self):
        house = self.cwd / "wheelhouse"
        self.assertTrue(house.is_dir(), list(self.cwd.iterdir()))
        return sorted(house.iterdir())

    def assert_sound(self, wheel):
        wfx.run("verify", wheel, check_status=0)
        with zipfile.ZipFile(wheel) as zf:
            self.assertIsNone(zf.testzip())

    def test_retag_as_typed(self):
        wheel = Path(shutil.copy(wfx.SGL_WHEEL, self.input))
        proc = run_in(self.cwd, "retag", "--torch", "2.10.0", wheel)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        [out] = self.written()
        self.assertIn("+cu130.torch2.10", out.name)
        self.assertIn(f"wrote wheelhouse/{out.name}", proc.stdout)
        self.assert_sound(out)
        self.assertEqual(sorted(p.name for p in self.input.iterdir()), [wfx.SGL_WHEEL.name])  # input untouched

    def test_repair_as_typed(self):
        wheel = Path(shutil.copy(PLAIN, self.input))
        proc = run_in(self.cwd, "repair", wheel)
        self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        [out] = self.written()
        self.assertIn(f"wheelhouse/{out.name}", proc.stdout)
        self.assertRegex(out.name, r"-manylinux_2_\d+_x86_64\.whl$")
        self.assert_sound(out)

    def test_relink_and_shim_as_typed(self):
        wheel = Path(shutil.copy(PLAIN, self.input))
        proc = run_in(self.cwd, "relink", wheel, "--add-rpath", "$ORIGIN")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual([p.name for p in self.written()], [PLAIN.name])
        self.assertIn(f"wrote wheelhouse/{PLAIN.name}", proc.stdout)
        shutil.rmtree(self.cwd / "wheelhouse")
        sgl = Path(shutil.copy(wfx.SGL_WHEEL, self.input))
        proc = run_in(self.cwd, "shim", sgl, "--torch", TORCH_210)
        self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        self.assertEqual([p.name for p in self.written()], [wfx.SGL_WHEEL.name])
        self.assertIn("wheelhouse/", proc.stdout)

    def test_relink_of_an_elf_file_writes_its_name_into_wheelhouse(self):
        with zipfile.ZipFile(PLAIN) as zf:
            member = next(n for n in zf.namelist() if n.endswith(".so"))
            (self.input / "ext.so").write_bytes(zf.read(member))
        proc = run_in(self.cwd, "relink", self.input / "ext.so", "--add-rpath", "$ORIGIN")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual([p.name for p in self.written()], ["ext.so"])
        dynamic = wfx.readelf_dynamic(self.cwd / "wheelhouse" / "ext.so")
        self.assertIn("$ORIGIN", (dynamic["runpath"] or "") + (dynamic["rpath"] or ""))

    def test_an_explicit_directory_still_wins(self):
        wheel = Path(shutil.copy(PLAIN, self.input))
        for spelling in ("-o", "-w", "--output", "--wheel-dir"):
            with self.subTest(spelling=spelling):
                out = self.cwd / spelling.strip("-")
                proc = run_in(self.cwd, "relink", wheel, "--add-rpath", "$ORIGIN", spelling, out)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertTrue((out / PLAIN.name).is_file())
        self.assertFalse((self.cwd / "wheelhouse").exists())

    def test_an_empty_output_is_a_usage_error(self):
        wheel = Path(shutil.copy(PLAIN, self.input))
        with zipfile.ZipFile(PLAIN) as zf:
            (self.input / "x.so").write_bytes(zf.read(next(n for n in zf.namelist() if n.endswith(".so"))))
        commands = {
            "repair": ["repair", wheel],
            "retag": ["retag", "--torch", "2.10.0", wheel],
            "relink": ["relink", wheel, "--add-rpath", "$ORIGIN"],
            "shim": ["shim", wheel, "--torch", TORCH_210],
            "elf": ["elf", self.input / "x.so", "--set-soname", "x"],
            "index": ["index", TORCH_210],
        }
        for option, args in (("--junit", ["check", wheel, "--torch", TORCH_210]), ("--atlas", ["index", TORCH_210])):
            with self.subTest(option=option):  # every option naming a file to write
                proc = run_in(self.cwd, *args, option, "")
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertTrue(proc.stderr.startswith(f"wheelfix: {option}: an empty path names nothing"), proc.stderr)
        for name, args in commands.items():
            for spelling in (["-o", ""], ["--output="], ["-w", ""], ["--wheel-dir", ""]) if name not in ("elf", "index") \
                    else (["-o", ""], ["--output="]):
                with self.subTest(command=name, spelling=spelling):
                    proc = run_in(self.cwd, *args, *spelling)
                    self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                    # A usage error: the problem, then where the usage is (as every parse error).
                    first, *rest = proc.stderr.strip().splitlines()
                    self.assertTrue(first.startswith("wheelfix: --output: "), proc.stderr)
                    self.assertRegex(first, "an empty path names nothing|required .* missing")
                    self.assertEqual(rest, ["Run 'wheelfix --help' for usage."])
        self.assertEqual(sorted(p.name for p in self.cwd.iterdir()), ["in"])  # nothing written anywhere
        self.assertEqual(sorted(p.name for p in self.input.iterdir()), [PLAIN.name, "x.so"])

    def test_a_file_named_wheelhouse_is_refused(self):
        wheel = Path(shutil.copy(PLAIN, self.input))
        (self.cwd / "wheelhouse").write_text("not a directory\n")
        proc = run_in(self.cwd, "repair", wheel)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("wheelhouse", proc.stderr)
        self.assertEqual((self.cwd / "wheelhouse").read_text(), "not a directory\n")


if __name__ == "__main__":
    unittest.main()
