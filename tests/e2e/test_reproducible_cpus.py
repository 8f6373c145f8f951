"""Reproducible output across x86-64 CPUs (issue 19; docs/compression.md, "Reproducible
output"). ISA-L picks its deflate code per CPU at run time (AVX-512, AVX2, SSE4, or
plain C without SSE4.1). `repair` of the sample sgl_kernel wheel, which writes new
members (shim, dist-info) and splices edited ones with ISA-L level 1, is run natively
and under qemu-user with CPU models that send ISA-L down each path: Haswell-v4 (AVX2),
Nehalem (SSE4.2) and qemu64 (the x86-64 baseline: SSE2 only). The SSE4.2-and-up runs
must write the very bytes the native run writes; the baseline run the same content
(every member's inflated bytes, so RECORD too): its compressed bytes are its own, as
ISA-L's C code chooses some matches differently."""
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

QEMU = shutil.which("qemu-x86_64")
TORCH_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"
SAME_BYTES = ("Haswell-v4", "Nehalem")
SAME_CONTENT = ("qemu64",)


def isal_build():
    proc = subprocess.run([wfx.WHEELFIX, "--version"], capture_output=True, text=True, check=True)
    return "isal" in proc.stdout


def contents(wheel):
    with zipfile.ZipFile(wheel) as zf:
        return {name: hashlib.sha256(zf.read(name)).hexdigest() for name in zf.namelist()}


@unittest.skipUnless(platform.machine() == "x86_64" and QEMU, "needs an x86_64 machine and qemu-x86_64 (qemu-user)")
class IsalCodePaths(unittest.TestCase):
    def repair(self, out, cpu=None):
        prefix = [] if cpu is None else [QEMU, "-cpu", cpu]
        env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
        proc = subprocess.run([*prefix, wfx.WHEELFIX, "repair", wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", out,
                               "--target", "cuda13-blackwell", "--no-load-test"], capture_output=True, text=True, env=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        (wheel,) = Path(out).glob("*.whl")
        return wheel

    def test_every_sse4_path_writes_the_native_bytes_and_the_baseline_the_same_content(self):
        if not isal_build():
            self.skipTest("a zlib-only build: ISA-L's code paths are not in it")
        with wfx.TempDir() as tmp:
            native = self.repair(tmp / "native")
            for cpu in SAME_BYTES + SAME_CONTENT:
                with self.subTest(cpu=cpu):
                    other = self.repair(tmp / cpu, cpu)
                    self.assertEqual(other.name, native.name)
                    self.assertEqual(contents(other), contents(native))
                    if cpu in SAME_BYTES:
                        self.assertEqual(other.read_bytes(), native.read_bytes())
                    wfx.run("verify", other, check_status=0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
