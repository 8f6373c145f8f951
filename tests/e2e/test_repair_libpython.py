"""repair drops an extension's NEEDED libpython (PEP 513: the interpreter provides
those symbols; auditwheel removes it too): a CPython extension gcc links against this
python's shared libpython, in a wheel, comes out of `repair` without that NEEDED
(readelf -d, an independent reader), eu-elflint-clean, and imports in this python with
no LD_LIBRARY_PATH, its function (Py_IsInitialized, from the interpreter) answering.
The graft plan has named the libpython NEEDED to drop since grafting landed; the links
it gives (repair::Links) now reach the edit request."""
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
from test_shim import make_wheel  # noqa: E402

LIBDIR = sysconfig.get_config_var("LIBDIR") or ""
LDVERSION = sysconfig.get_config_var("LDVERSION") or ""
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"


class LibpythonDropped(unittest.TestCase):
    def test_needed_libpython_is_removed_and_the_extension_imports(self):
        if not (Path(LIBDIR) / f"libpython{LDVERSION}.so").exists() or not shutil.which("gcc"):
            raise unittest.SkipTest("needs gcc and this python's shared libpython")
        with tempfile.TemporaryDirectory(prefix="wheelfix-libpython-") as tmp:
            tmp = Path(tmp)
            ext = wfx.build_private_extension(tmp / "ext.so", "_ext", "Py_IsInitialized", LIBDIR, f"python{LDVERSION}")
            before = wfx.readelf_dynamic(ext)["needed"]
            self.assertTrue(any(n.startswith("libpython") for n in before), before)
            member = f"pyext/_ext{EXT_SUFFIX}"
            wheel = make_wheel(tmp, "pyext", f"{TAG}-{TAG}-linux_x86_64",
                               {"pyext/__init__.py": b"from ._ext import value\n", member: ext.read_bytes()})
            env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
            proc = subprocess.run([wfx.WHEELFIX, "repair", "--no-load-test", "-w", str(tmp / "out"), str(wheel),
                                   "--ldpaths", LIBDIR], capture_output=True, text=True, env=env)
            self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
            (output,) = (tmp / "out").glob("*.whl")
            site = tmp / "site"
            with zipfile.ZipFile(output) as zf:
                zf.extractall(site)
                self.assertFalse([n for n in zf.namelist() if "libpython" in n], "libpython must not be grafted")
            after = wfx.readelf_dynamic(site / member)["needed"]
            self.assertEqual([n for n in after if n.startswith("libpython")], [], after)
            self.assertEqual([n for n in before if not n.startswith("libpython")], after)
            self.assertEqual(peers.elflint_complaints(site / member), 0)
            env.pop("PYTHONPATH", None)
            run = subprocess.run([sys.executable, "-c", "import pyext; print(pyext.value())"], cwd=site,
                                 capture_output=True, text=True, env=env)
            self.assertEqual((run.returncode, run.stdout.strip()), (0, "1"), run.stderr)


if __name__ == "__main__":
    unittest.main()
