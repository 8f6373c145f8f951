"""repair's load test says what it proved (issue 34), on gcc-built stand-ins laid out as a
pip install of torch with nvidia-* wheels beside it:
- the nvidia/*/lib directories beside the torch given are in the layout whatever the
  target names: an extension whose RUNPATH points at nvidia/cu12rt/lib (and that
  repair relinks) loads with no --target, where before it was "not tested";
- libcuda.so.1 is the driver's: with no NVIDIA driver on this machine the CUDA
  toolkit's stub stands in, and the proof line says so (ctypes, outside wheelfix, shows
  the extension cannot load without it here);
- a member that cannot be loaded (a library nobody ships) is "not proven" and the run
  exits 1; --no-load-test asks for no proof and exits 0;
- the plan's lines equal what is written: a graft needing GLIBC_2.34 makes the tag
  manylinux_2_34 and the platform line of --dry-run says so, naming the graft."""
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402
from test_load_beside_torch import gcc, stand_in_site  # noqa: E402
from test_shim import make_wheel  # noqa: E402

TAG = f"cp{sys.version_info.major}{sys.version_info.minor}-cp{sys.version_info.major}{sys.version_info.minor}-linux_x86_64"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
STUBS = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib64" / "stubs"


def driver_installed():
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    return "libcuda.so.1 " in out


def repair(wheel, *args, check_status=None):
    """repair with no LD_LIBRARY_PATH; the stand-in runtime is the nvidia wheel's, not grafted."""
    args = (*args, "--exclude", "libcudastand.so.12")
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    proc = subprocess.run([wfx.WHEELFIX, "repair", str(wheel), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)
    if check_status is not None and proc.returncode != check_status:
        raise AssertionError(f"exit {proc.returncode}, expected {check_status}\n{proc.stdout}\n{proc.stderr}")
    return proc


@unittest.skipUnless(shutil.which("gcc") and sysconfig.get_platform() == "linux-x86_64", "needs gcc on linux x86_64")
class LoadProof(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-proof-"))
        build, cls.site, runtime = stand_in_site(cls.tmp, "cu12rt", "libcudastand.so.12", 12)
        (runtime / "libcudastand.so").symlink_to("libcudastand.so.12")
        cls.nvidia_member = "nvext/nvext" + SUFFIX
        ext = wfx.build_private_extension(build / "nvext.so", "nvext", "cudastand_value", runtime, "cudastand",
                                          "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../nvidia/cu12rt/lib:/build/tree/lib")
        (cls.tmp / "nv").mkdir()
        cls.nvidia_wheel = make_wheel(cls.tmp / "nv", "nvext", TAG, {cls.nvidia_member: ext.read_bytes()})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_nvidia_beside_torch_is_laid_out_without_a_target(self):
        with tempfile.TemporaryDirectory(prefix="wheelfix-proof-nv-") as out:
            proc = repair(self.nvidia_wheel, "--torch", self.site / "torch", "-o", out, check_status=0)
        self.assertIn(f"loads {self.nvidia_member} (RTLD_NOW)", proc.stdout)
        self.assertNotIn("not proven", proc.stdout)
        # Without nvidia/ beside torch the same repair proves nothing and says so: exit 1.
        bare = self.tmp / "bare-site"
        shutil.copytree(self.site / "torch", bare / "torch")
        with tempfile.TemporaryDirectory(prefix="wheelfix-proof-bare-") as out:
            proc = repair(self.nvidia_wheel, "--torch", bare / "torch", "-o", out, check_status=1)
            self.assertIn(f"not proven {self.nvidia_member}: libcudastand.so.12 is neither in the wheel nor in torch",
                          proc.stdout)
            self.assertIn("wrote (not proven: 1 member not loaded; --no-load-test to skip the proof)", proc.stdout)
            self.assertEqual(len(list(Path(out).glob("*.whl"))), 1)  # written: the proof is what is missing
        with tempfile.TemporaryDirectory(prefix="wheelfix-proof-json-") as out:
            for site, proven in ((self.site, True), (bare, False)):
                doc = wfx.json.loads(repair(self.nvidia_wheel, "--torch", site / "torch", "-o", Path(out) / str(proven),
                                            "--json").stdout)
                self.assertIs(doc["wheels"][0]["load_test"]["proven"], proven, doc["wheels"][0]["load_test"])
        with tempfile.TemporaryDirectory(prefix="wheelfix-proof-skip-") as out:
            proc = repair(self.nvidia_wheel, "--torch", bare / "torch", "-o", out, "--no-load-test", check_status=0)
            self.assertIn("load test skipped: load test not asked for", proc.stdout)

    def test_a_directory_the_runpath_names_beside_torch_is_laid_out(self):
        """Not nvidia/: another wheel's library directory beside torch, reached through the
        RUNPATH the extension keeps (repair drops only the build tree's entry)."""
        vendor = self.site / "vendorpkg" / "lib"
        vendor.mkdir(parents=True, exist_ok=True)
        gcc("int vendorstand_value(void) { return 3; }\n", vendor / "libvendorstand.so.1",
            "-Wl,-soname,libvendorstand.so.1", cwd=self.tmp / "build")
        (vendor / "libvendorstand.so").symlink_to("libvendorstand.so.1")
        member = "vendext/vendext" + SUFFIX
        ext = wfx.build_private_extension(self.tmp / "build" / "vendext.so", "vendext", "vendorstand_value", vendor,
                                          "vendorstand",
                                          "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../vendorpkg/lib:/build/tree/lib")
        (self.tmp / "vend").mkdir(exist_ok=True)
        wheel = make_wheel(self.tmp / "vend", "vendext", TAG, {member: ext.read_bytes()})
        with tempfile.TemporaryDirectory(prefix="wheelfix-proof-vendor-") as out:
            proc = repair(wheel, "--torch", self.site / "torch", "-o", out, "--exclude", "libvendorstand.so.1",
                          check_status=0)
            self.assertIn(f"loads {member} (RTLD_NOW)", proc.stdout)

    @unittest.skipUnless((STUBS / "libcuda.so").exists(), "no CUDA toolkit stub (lib64/stubs/libcuda.so)")
    def test_the_drivers_stub_stands_in_and_the_proof_says_so(self):
        if driver_installed():
            self.skipTest("this machine has an NVIDIA driver: the stub is not needed")
        member = "drvext/drvext" + SUFFIX
        ext = wfx.build_private_extension(self.tmp / "build" / "drvext.so", "drvext", "cuDriverGetVersion", STUBS,
                                          "cuda", "-Wl,--enable-new-dtags,-rpath,/build/tree/lib")
        self.assertIn("libcuda.so.1", wfx.readelf_dynamic(ext)["needed"])
        (self.tmp / "drv").mkdir(exist_ok=True)
        wheel = make_wheel(self.tmp / "drv", "drvext", TAG, {member: ext.read_bytes()})
        with tempfile.TemporaryDirectory(prefix="wheelfix-proof-drv-") as out:
            proc = repair(wheel, "--torch", self.site / "torch", "-o", out, "--exclude", "libcuda.so.1",
                          check_status=0)
            self.assertIn(f"loads {member} (RTLD_NOW; libcuda.so.1 was the CUDA toolkit's stub {STUBS / 'libcuda.so'} "
                          "(no NVIDIA driver on this machine): symbols bound, no GPU code ran)", proc.stdout)
            # The real loader without the stub: this machine has no libcuda.so.1.
            [written] = Path(out).glob("*.whl")
            site = Path(out) / "site"
            subprocess.run([sys.executable, "-m", "zipfile", "-e", str(written), str(site)], check=True)
            judge = subprocess.run([sys.executable, "-c", "import ctypes, os, sys; ctypes.CDLL(sys.argv[1], os.RTLD_NOW)",
                                    str(site / member)], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
            self.assertNotEqual(judge.returncode, 0)
            self.assertIn("libcuda.so.1: cannot open shared object file", judge.stderr)

    def test_the_plan_names_the_tag_the_graft_needs(self):
        prefix = self.tmp / "graftlib"
        prefix.mkdir(exist_ok=True)
        # pthread_create is GLIBC_2.34 since glibc moved it into libc: the graft needs 2.34.
        gcc("#include <pthread.h>\nstatic void *run(void *a) { return a; }\n"
            "int threaded_value(void) { pthread_t t; void *r = 0;\n"
            "  if (pthread_create(&t, 0, run, (void *)5)) return -1; pthread_join(t, &r); return (int)(long)r; }\n",
            prefix / "libthreaded.so.1", "-Wl,-soname,libthreaded.so.1", cwd=prefix)
        (prefix / "libthreaded.so").symlink_to("libthreaded.so.1")
        versions = subprocess.run(["readelf", "-V", str(prefix / "libthreaded.so.1")], capture_output=True, text=True).stdout
        self.assertIn("GLIBC_2.34", versions)
        member = "thrext/thrext" + SUFFIX
        ext = wfx.build_private_extension(self.tmp / "build" / "thrext.so", "thrext", "threaded_value", prefix,
                                          "threaded")
        (self.tmp / "thr").mkdir(exist_ok=True)
        wheel = make_wheel(self.tmp / "thr", "thrext", TAG, {member: ext.read_bytes()})
        with tempfile.TemporaryDirectory(prefix="wheelfix-proof-plan-") as out:
            plan = repair(wheel, "--target", "cuda13-blackwell", "--ldpaths", prefix, "-o", out, "--dry-run")
            self.assertIn(plan.returncode, (0, 1), plan.stdout + plan.stderr)
            line = next(l for l in plan.stdout.splitlines() if "tag linux_x86_64:" in l)
            self.assertTrue(line.endswith("; repair sets manylinux_2_34_x86_64 (the grafted libraries need it)"), line)
            self.assertIn("platform linux_x86_64 -> manylinux_2_34_x86_64", plan.stdout)
            done = repair(wheel, "--target", "cuda13-blackwell", "--ldpaths", prefix, "-o", out)
            self.assertIn(done.returncode, (0, 1), done.stdout + done.stderr)
            [written] = Path(out).glob("*.whl")
            self.assertTrue(written.name.endswith("-manylinux_2_34_x86_64.whl"), written.name)


if __name__ == "__main__":
    unittest.main()
