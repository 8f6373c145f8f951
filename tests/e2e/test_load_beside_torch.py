"""repair's load test lays out the directories the target profile names beside torch
(issue 16): each "{root}/nvidia/..." rpath of the profile is linked into the load
test's site from the torch's own site-packages, and where it is not there the load
test says so instead of claiming the wheel loads.

The stand-in is built with gcc the way real torch is laid out: a site-packages with
torch/lib/libtorch_stand.so whose own NEEDED libnvstand.so.13 lives only in
nvidia/cu13/lib beside torch, reached through the torch library's RUNPATH
$ORIGIN/../../nvidia/cu13/lib. The extension wheel links libtorch_stand.so and, as
real extensions link libcudart.so.13, libnvstand.so.13 itself (--exclude keeps it out
of the wheel), with a build-tree RUNPATH that repair replaces by the profile's
($ORIGIN/../nvidia/cu13/lib). The extension's own need is what proves the layout: the
load test links site/torch to the torch given, so the torch library's
$ORIGIN/../../nvidia resolves through that link to the torch's real site-packages
whether nvidia/ is laid out or not (checked: with lay_out_beside linking nothing, only
the torch library's need, this test passed). Judged by repair's own report (the load
test is python ctypes with RTLD_NOW in a laid-out site) and by ctypes here.

Also: every built-in CUDA 12 profile names nvidia/cuda_nvrtc/lib, where torch's cu12x
wheels put libnvrtc.so.12, which libtorch_cuda.so needs."""
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402
from test_shim import make_wheel  # noqa: E402

TORCH_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"
PROFILES = wfx.SOURCE_DIR / "src" / "policy" / "data" / "profiles"
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}-cp{sys.version_info.major}{sys.version_info.minor}-linux_x86_64"
MEMBER = "standext/standext" + sysconfig.get_config_var("EXT_SUFFIX")


def gcc(source_text, output, *flags, cwd):
    source = Path(cwd) / (Path(output).name.split(".")[0] + ".c")
    source.write_text(source_text)
    proc = subprocess.run(["gcc", "-O2", "-fPIC", "-shared", str(source), "-o", str(output), *map(str, flags)],
                          capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise AssertionError(f"gcc failed:\n{proc.stderr}")
    return Path(output)


def stand_in_site(tmp, nvidia_dir, library, value):
    """tmp/site-packages with the sample torch 2.10 and nvidia/<nvidia_dir>/lib/<library>
    (a gcc-built stand-in returning `value` from <stem>_value), as pip lays out torch and
    an nvidia-* wheel; returns (build directory, site-packages, that lib directory)."""
    build = Path(tmp) / "build"
    build.mkdir()
    site = Path(tmp) / "site-packages"
    shutil.copytree(TORCH_210, site / "torch")
    lib = site / "nvidia" / nvidia_dir / "lib"
    lib.mkdir(parents=True)
    stem = library.split(".")[0][3:]
    gcc(f"int {stem}_value(void) {{ return {value}; }}\n", lib / library, f"-Wl,-soname,{library}", cwd=build)
    return build, site, lib


def dynamic(path):
    return subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout


class LoadTestLaysOutBesideTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc") or sysconfig.get_platform() != "linux-x86_64":
            raise unittest.SkipTest("needs gcc on linux x86_64")
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-beside-"))
        build, cls.site, nvidia = stand_in_site(cls.tmp, "cu13", "libnvstand.so.13", 13)
        torch_lib = cls.site / "torch" / "lib"
        gcc("int nvstand_value(void);\nint torch_stand_value(void) { return 100 + nvstand_value(); }\n",
            torch_lib / "libtorch_stand.so", "-Wl,-soname,libtorch_stand.so", f"-L{nvidia}", "-l:libnvstand.so.13",
            "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../nvidia/cu13/lib", cwd=build)
        extension = wfx.build_private_extension(build / Path(MEMBER).name, "standext", "torch_stand_value", torch_lib,
                                                "torch_stand", "-Wl,--no-as-needed", f"-L{nvidia}", "-l:libnvstand.so.13",
                                                "-Wl,--enable-new-dtags,-rpath,/build/tree/torch/lib")
        cls.wheel = make_wheel(cls.tmp, "standext", TAG, {MEMBER: extension.read_bytes()})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def repair(self, site, out, check_status):
        return wfx.run("repair", self.wheel, "--torch", site / "torch", "--target", "cuda13-blackwell",
                       "--exclude", "libnvstand.so.13", "-o", out, check_status=check_status)

    def test_the_stand_in_is_laid_out_as_real_torch(self):
        torch_dynamic = dynamic(self.site / "torch" / "lib" / "libtorch_stand.so")
        self.assertIn("(NEEDED)             Shared library: [libnvstand.so.13]", torch_dynamic)
        self.assertIn("(RUNPATH)            Library runpath: [$ORIGIN/../../nvidia/cu13/lib]", torch_dynamic)
        self.assertFalse((self.site / "torch" / "lib" / "libnvstand.so.13").exists())

    def test_the_profile_names_the_directory_the_torch_library_needs(self):
        text = (PROFILES / "cuda13-blackwell.profile").read_text()
        self.assertIn("rpath  {root}/nvidia/cu13/lib", text)

    def test_loads_with_nvidia_beside_torch(self):
        with tempfile.TemporaryDirectory(prefix="wheelfix-beside-ok-") as tmp:
            proc = self.repair(self.site, Path(tmp) / "out", check_status=0)
            text = proc.stdout + proc.stderr
            self.assertIn(f"loads {MEMBER} (RTLD_NOW)", text)
            self.assertNotIn("not proven", text)
            self.assertNotIn("not beside the torch given", text)
            written = list((Path(tmp) / "out").glob("*.whl"))
            self.assertEqual(len(written), 1, text)
            # The same judgement outside wheelfix: the repaired extension, installed
            # beside this site's torch, loads with RTLD_NOW and reaches nvstand.
            site = Path(tmp) / "site"
            shutil.copytree(self.site, site, symlinks=True)
            with zipfile.ZipFile(written[0]) as zf:
                zf.extract(MEMBER, site)
            self.assertNotIn("/build/tree", dynamic(site / MEMBER))
            code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL | 2); "
                    "print(lib.torch_stand_value())")
            judge = subprocess.run([sys.executable, "-c", code, str(site / MEMBER)], capture_output=True, text=True,
                                   env={"PATH": "/usr/bin:/bin"})
            self.assertEqual(judge.stdout.strip(), "113", judge.stderr)

    def test_says_what_was_not_beside_torch_when_nvidia_is_absent(self):
        with tempfile.TemporaryDirectory(prefix="wheelfix-beside-absent-") as tmp:
            site = Path(tmp) / "site-packages"
            shutil.copytree(self.site / "torch", site / "torch")  # no nvidia/ beside it
            proc = self.repair(site, Path(tmp) / "out", check_status=None)
            text = proc.stdout + proc.stderr
            self.assertNotIn(f"loads {MEMBER}", text)
            self.assertIn(f"not proven {MEMBER}: libnvstand.so.13 is neither in the wheel nor in torch, "
                          "and this machine has none (not beside the torch given: nvidia/cu13/lib, nvidia/nccl/lib)",
                          text)
            doc = wfx.run_json("repair", self.wheel, "--torch", site / "torch", "--target", "cuda13-blackwell",
                               "--exclude", "libnvstand.so.13", "-o", Path(tmp) / "json", check_status=None)
            results = doc["wheels"][0]["load_test"]["results"]
            self.assertEqual([(r["member"], r["status"]) for r in results], [(MEMBER, "not_tested")])


PHASE_MB = re.compile(r"^  inflate\s+\d+\.\d{3} s\s+\d+ scopes?\s+(\d+\.\d) MB$", re.M)
ABSENT_MEMBER = "absentext/absentext" + sysconfig.get_config_var("EXT_SUFFIX")
LOADING_MEMBER = "loadext/loadext" + sysconfig.get_config_var("EXT_SUFFIX")


def with_blob(library, megabytes, seed):
    """Adds a non-loaded section of `megabytes` incompressible bytes to `library`, so
    that each inflate of it shows in --timings' inflate MB (0.1 MB steps)."""
    blob = library.with_suffix(".blob")
    blob.write_bytes(random.Random(seed).randbytes(megabytes << 20))
    subprocess.run(["objcopy", "--add-section", f".wfxblob={blob}", str(library)], check=True)
    return library


class LoadTestDecidedWithoutTheLoader(unittest.TestCase):
    """issue 19: a member whose own NEEDED names a library absent from the wheel, torch,
    the directories beside torch and this machine is not_tested with the loader's
    reason, and is neither laid out (no inflate: --timings' inflate MB is what the
    repair reads without a load test) nor loaded; members it cannot decide are laid out
    and loaded alone."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc") or not shutil.which("objcopy") or sysconfig.get_platform() != "linux-x86_64":
            raise unittest.SkipTest("needs gcc and objcopy on linux x86_64")
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-decided-"))
        build = cls.tmp / "build"
        (build / "absent").mkdir(parents=True)
        cls.site = cls.tmp / "site-packages"
        shutil.copytree(TORCH_210, cls.site / "torch")
        torch_lib = cls.site / "torch" / "lib"
        gcc("int torch_plain_value(void) { return 7; }\n", torch_lib / "libtorch_plain.so",
            "-Wl,-soname,libtorch_plain.so", cwd=build)
        # A stub that links, shipped nowhere: not in the wheel (--exclude), torch or the machine.
        absent = gcc("int absent_value(void) { return 1; }\n", build / "absent" / "libabsent.so.1",
                     "-Wl,-soname,libabsent.so.1", cwd=build / "absent")
        cls.absent_ext = with_blob(wfx.build_private_extension(
            build / Path(ABSENT_MEMBER).name, "absentext", "torch_plain_value", torch_lib, "torch_plain",
            "-Wl,--no-as-needed", f"-L{absent.parent}", "-l:libabsent.so.1",
            "-Wl,--enable-new-dtags,-rpath,/build/tree/torch/lib"), 3, 1)
        cls.loading_ext = with_blob(wfx.build_private_extension(
            build / Path(LOADING_MEMBER).name, "loadext", "torch_plain_value", torch_lib, "torch_plain",
            "-Wl,--enable-new-dtags,-rpath,/build/tree/torch/lib"), 1, 2)
        (cls.tmp / "one").mkdir()
        (cls.tmp / "two").mkdir()
        cls.absent_only = make_wheel(cls.tmp / "one", "absentext", TAG, {ABSENT_MEMBER: cls.absent_ext.read_bytes()})
        cls.both = make_wheel(cls.tmp / "two", "twoext", TAG, {ABSENT_MEMBER: cls.absent_ext.read_bytes(),
                                                             LOADING_MEMBER: cls.loading_ext.read_bytes()})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def repair(self, wheel, out, *extra):
        proc = wfx.run("repair", wheel, "--torch", self.site / "torch", "--target", "cuda13-blackwell",
                       "--exclude", "libabsent.so.1", "-o", out, "--timings", *extra, check_status=None)
        text = proc.stdout + proc.stderr
        self.assertIn(proc.returncode, (0, 1), text)
        found = PHASE_MB.findall(text)
        self.assertEqual(len(found), 1, text)
        return text, float(found[0])

    def test_the_absent_library_is_a_need_of_the_extension_itself(self):
        self.assertIn("(NEEDED)             Shared library: [libabsent.so.1]", dynamic(self.absent_ext))
        self.assertFalse(list(self.site.rglob("libabsent.so.1")))

    def test_not_tested_with_the_loaders_reason_and_nothing_laid_out(self):
        with tempfile.TemporaryDirectory(prefix="wheelfix-decided-one-") as tmp:
            text, loaded_mb = self.repair(self.absent_only, Path(tmp) / "a")
            self.assertIn(f"not proven {ABSENT_MEMBER}: libabsent.so.1 is neither in the wheel nor in torch, "
                          "and this machine has none (not beside the torch given: nvidia/cu13/lib, nvidia/nccl/lib)",
                          text)
            self.assertNotIn(f"loads {ABSENT_MEMBER}", text)
            plain, plain_mb = self.repair(self.absent_only, Path(tmp) / "b", "--no-load-test")
            self.assertNotIn("not proven", plain)
            # 3 MB of blob: a layout would have inflated it once more.
            self.assertGreater(plain_mb, 3.0, plain)
            self.assertEqual(loaded_mb, plain_mb, text)

    def test_only_the_undecided_member_is_laid_out_and_loaded(self):
        with tempfile.TemporaryDirectory(prefix="wheelfix-decided-two-") as tmp:
            text, loaded_mb = self.repair(self.both, Path(tmp) / "a")
            self.assertIn(f"not proven {ABSENT_MEMBER}: libabsent.so.1 is neither in the wheel nor in torch", text)
            self.assertIn(f"loads {LOADING_MEMBER} (RTLD_NOW)", text)
            plain, plain_mb = self.repair(self.both, Path(tmp) / "b", "--no-load-test")
            # The 1 MB member laid out once more, the 3 MB one not.
            self.assertGreater(loaded_mb - plain_mb, 0.9, text)
            self.assertLess(loaded_mb - plain_mb, 1.5, text)


class Cuda12ProfilesNameNvrtc(unittest.TestCase):
    def test_the_profile_files_are_the_built_in_profiles(self):
        with tempfile.TemporaryDirectory(prefix="wheelfix-profiles-") as tmp:
            proc = wfx.run("repair", wfx.SAMPLES / "purepy-1.0.0-py3-none-any.whl", "--target", "no-such-profile",
                           "-o", tmp, check_status=2)
        built_in = proc.stderr.split("built-in profiles: ", 1)[1].split(" (", 1)[0].split(", ")
        self.assertEqual(sorted(built_in), sorted(p.stem for p in PROFILES.glob("*.profile")), proc.stderr)

    def test_every_cuda12_profile_names_cuda_nvrtc_lib(self):
        cuda12 = [p for p in sorted(PROFILES.glob("*.profile"))
                  if any(line.split() == ["cuda-runtime-major", "12"] for line in p.read_text().splitlines())]
        self.assertTrue(cuda12, f"no CUDA 12 profile in {PROFILES}")
        for profile in cuda12:
            rpaths = [line.split()[1] for line in profile.read_text().splitlines() if line.startswith("rpath")]
            self.assertIn("{root}/nvidia/cuda_nvrtc/lib", rpaths, profile.name)


if __name__ == "__main__":
    unittest.main()
