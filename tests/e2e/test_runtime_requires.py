"""`repair --add-runtime-requires`: the CUDA runtime a wheel NEEDs that the torch it is
repaired for does not bring, written as a Requires-Dist through the plan's METADATA step.

A gcc-built extension NEEDs libcudart.so.12 (a stub made with -Wl,-soname,libcudart.so.12)
and a torch C++ function of the stand-in torch 2.10, whose build is CUDA 13.0: repaired
for it with the option, METADATA requires nvidia-cuda-runtime-cu12>=12,<13, RECORD holds,
and pip resolves that requirement to NVIDIA's real distribution (downloaded by script
into a cache outside the repository; it must ship libcudart.so.12). Nothing is added
beside a CUDA 12 torch, nor when METADATA already names the distribution (the author's
line stays as written), nor without the option."""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wfx  # noqa: E402

CACHE = Path(os.environ.get("WHEELFIX_VERDICT_CACHE", Path.home() / ".cache" / "wheelfix-verdict"))
TORCH_210 = wfx.SAMPLES / "torch-2.10.0"  # version.py: 2.10.0+cu130, cuda '13.0'
TORCH_CHECK_FAIL = "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
RUNTIME_12 = "nvidia-cuda-runtime-cu12>=12,<13"


def gcc(*args, cwd):
    proc = subprocess.run(["gcc", *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise AssertionError(f"gcc failed:\n{proc.stderr}")


def stub_runtime(directory, major):
    """libcudart.so.MAJOR: a stub whose SONAME is the real one's."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cudart.c").write_text(f"int cudaRuntimeGetVersion(int* v) {{ *v = {major}080; return 0; }}\n")
    gcc("-shared", "-fPIC", f"-Wl,-soname,libcudart.so.{major}", "-o", directory / f"libcudart.so.{major}",
        directory / "cudart.c", cwd=directory)
    return directory


def extension(directory, cudart_dir, major):
    """_C.so NEEDing libcudart.so.MAJOR and libc10.so, calling into both."""
    source = directory / "ext.c"
    source.write_text("int cudaRuntimeGetVersion(int*);\n"
                      f"void torch_check_fail(void) __asm__(\"{TORCH_CHECK_FAIL}\");\n"
                      "int f(void) { int v = 0; cudaRuntimeGetVersion(&v); if (v < 0) torch_check_fail(); return v; }\n")
    output = directory / "_C.so"
    gcc("-shared", "-fPIC", "-o", output, source, f"-L{cudart_dir}", f"-l:libcudart.so.{major}",
        f"-L{TORCH_210 / 'torch' / 'lib'}", "-lc10", cwd=directory)
    return output


def make_wheel(directory, so, requires=()):
    version = "1.0"
    members = {"cudaext/__init__.py": b"", "cudaext/_C.so": so.read_bytes()}
    members.update(wfx.dist_info_members("cudaext", version, f"{PY_TAG}-{PY_TAG}-linux_x86_64"))
    if requires:
        name = f"cudaext-{version}.dist-info/METADATA"
        members[name] += "".join(f"Requires-Dist: {line}\n" for line in requires).encode()
    return wfx.write_wheel(directory / f"cudaext-{version}-{PY_TAG}-{PY_TAG}-linux_x86_64.whl", members)


def torch_tree_of_cuda(directory, cuda):
    """The stand-in torch 2.10 as a build of another CUDA version (its version.py says so)."""
    tree = directory / f"torch-2.10.0-cu{cuda}"
    shutil.copytree(TORCH_210, tree)
    version = tree / "torch" / "version.py"
    version.write_text(version.read_text().replace("'13.0'", f"'{cuda}'").replace("+cu130", "+cu" + cuda.replace(".", "")))
    return tree


def repair(wheel, torch, out, *extra):
    proc = wfx.run("--json", "repair", wheel, "--torch", torch, "-o", out, "--no-load-test", *extra)
    if proc.returncode not in (0, 1):
        raise AssertionError(f"repair exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    doc = json.loads(proc.stdout)
    wheel_doc = doc["wheels"][0]
    return wheel_doc, Path(wheel_doc["output"])


def metadata_requires(wheel):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def assert_record_holds(test, wheel):
    """Every member's hash and size as RECORD says (independently of wheelfix), and wheelfix verify agrees."""
    with zipfile.ZipFile(wheel) as archive:
        record_name = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        rows = [line.split(",") for line in archive.read(record_name).decode().splitlines() if line]
        listed = {row[0] for row in rows}
        test.assertEqual(listed, set(archive.namelist()))
        for name, digest, size in rows:
            if name == record_name:
                continue
            data = archive.read(name)
            expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            test.assertEqual((digest, int(size)), (expected, len(data)), name)
    wfx.run("verify", wheel, check_status=0)


def fetch_runtime():
    """NVIDIA's real CUDA 12 runtime wheel, downloaded once into the cache."""
    found = sorted(CACHE.glob("nvidia_cuda_runtime_cu12-12.*-py3-none-manylinux*x86_64*.whl"))
    if found:
        return found[-1]
    CACHE.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--only-binary", ":all:", "-d", str(CACHE), RUNTIME_12], capture_output=True, text=True)
    found = sorted(CACHE.glob("nvidia_cuda_runtime_cu12-12.*-py3-none-manylinux*x86_64*.whl"))
    if proc.returncode != 0 or not found:
        raise unittest.SkipTest(f"SKIPPED: cannot download {RUNTIME_12}: {proc.stderr.strip()[-300:]}")
    return found[-1]


def stub_torch_wheel(directory):
    """A pure-python torch 2.10.0 for pip's resolver (the pin the repair writes)."""
    members = {"torch/__init__.py": b"__version__ = '2.10.0'\n"}
    members.update(wfx.dist_info_members("torch", "2.10.0", "py3-none-any"))
    return wfx.write_wheel(directory / "torch-2.10.0-py3-none-any.whl", members)


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class AddRuntimeRequires(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = wfx.TempDir()
        tmp = cls.tmp = cls.temp.__enter__()
        (tmp / "build").mkdir()
        cls.cudart12 = stub_runtime(tmp / "cuda12", 12)
        cls.so12 = extension(tmp / "build", cls.cudart12, 12)
        cls.wheel = make_wheel(tmp, cls.so12)

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)

    def test_the_cuda_12_runtime_beside_a_cuda_13_torch(self):
        out = self.tmp / "added"
        doc, wheel = repair(self.wheel, TORCH_210, out, "--add-runtime-requires")
        self.assertTrue(wheel.exists(), doc)
        self.assertEqual(doc["done"]["runtime_requires"],
                         [{"requirement": RUNTIME_12, "distribution": "nvidia-cuda-runtime-cu12",
                           "library": "libcudart.so.12"}])
        requires = metadata_requires(wheel)
        self.assertEqual(requires.count(RUNTIME_12), 1, requires)
        self.assertIn("torch>=2.10,<2.11", requires)  # the pin of the torch repaired for, beside it
        assert_record_holds(self, wheel)
        text = wfx.run("repair", self.wheel, "--torch", TORCH_210, "-o", self.tmp / "text", "--no-load-test",
                       "--add-runtime-requires").stdout
        self.assertIn(f"Requires-Dist: {RUNTIME_12} (added: NEEDs libcudart.so.12; torch 2.10.0+cu130 is a "
                      "CUDA 13.0 build)", text)
        # Repaired again with the option: the line is there, nothing is added twice.
        again_doc, again = repair(wheel, TORCH_210, self.tmp / "again", "--add-runtime-requires")
        self.assertEqual(again_doc["done"]["runtime_requires"], [])
        self.assertEqual(metadata_requires(again).count(RUNTIME_12), 1)
        self.assertEqual(doc["done"]["version"]["after"], "1.0+torch2.10")

    def test_pip_resolves_the_requirement_to_nvidias_real_runtime(self):
        runtime = fetch_runtime()
        with zipfile.ZipFile(runtime) as archive:
            self.assertIn("nvidia/cuda_runtime/lib/libcudart.so.12", archive.namelist())
        links = self.tmp / "links"
        links.mkdir(exist_ok=True)
        shutil.copy(runtime, links)
        stub_torch_wheel(links)
        _, wheel = repair(self.wheel, TORCH_210, self.tmp / "pip", "--add-runtime-requires")
        report = self.tmp / "report.json"
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                               "--disable-pip-version-check", "--no-index", "--find-links", str(links),
                               "--report", str(report), str(wheel)], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        installed = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                     for item in json.loads(report.read_text())["install"]}
        self.assertIn("nvidia-cuda-runtime-cu12", installed)
        self.assertTrue(installed["nvidia-cuda-runtime-cu12"].startswith("12."), installed)
        self.assertEqual(installed["torch"], "2.10.0")
        # Without the requirement pip would install no runtime at all.
        _, plain = repair(self.wheel, TORCH_210, self.tmp / "pip-plain")
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                               "--disable-pip-version-check", "--no-index", "--find-links", str(links),
                               "--report", str(report), str(plain)], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
        self.assertNotIn("nvidia-cuda-runtime-cu12", names)

    def test_nothing_added_where_nothing_is_missing(self):
        cu128 = torch_tree_of_cuda(self.tmp, "12.8")
        doc, wheel = repair(self.wheel, cu128, self.tmp / "cu12", "--add-runtime-requires")
        self.assertEqual(doc["done"]["runtime_requires"], [])  # a CUDA 12 torch brings libcudart.so.12
        self.assertEqual([r for r in metadata_requires(wheel) if r.startswith("nvidia")], [])
        assert_record_holds(self, wheel)
        # The author's own line, however loose or tight, is kept as written and not doubled.
        (self.tmp / "declared").mkdir()
        declared = make_wheel(self.tmp / "declared", self.so12, ["nvidia-cuda-runtime-cu12==12.8.90"])
        doc, wheel = repair(declared, TORCH_210, self.tmp / "declared-out", "--add-runtime-requires")
        self.assertEqual(doc["done"]["runtime_requires"], [])
        nvidia = [r for r in metadata_requires(wheel) if r.startswith("nvidia")]
        self.assertEqual(nvidia, ["nvidia-cuda-runtime-cu12==12.8.90"])
        # Without the option: nothing added.
        doc, wheel = repair(self.wheel, TORCH_210, self.tmp / "no-option")
        self.assertEqual(doc["done"]["runtime_requires"], [])
        self.assertEqual([r for r in metadata_requires(wheel) if r.startswith("nvidia")], [])

    def test_the_cuda_13_runtime_beside_a_cuda_12_torch(self):
        cudart13 = stub_runtime(self.tmp / "cuda13", 13)
        (self.tmp / "build13").mkdir()
        so13 = extension(self.tmp / "build13", cudart13, 13)
        (self.tmp / "w13").mkdir()
        wheel13 = make_wheel(self.tmp / "w13", so13)
        doc, wheel = repair(wheel13, torch_tree_of_cuda(self.tmp, "12.6"), self.tmp / "cu13", "--add-runtime-requires")
        self.assertEqual([r["requirement"] for r in doc["done"]["runtime_requires"]], ["nvidia-cuda-runtime>=13,<14"])
        self.assertIn("nvidia-cuda-runtime>=13,<14", metadata_requires(wheel))
        assert_record_holds(self, wheel)

    def test_refused_without_a_torch(self):
        proc = wfx.run("repair", self.wheel, "-o", self.tmp / "none", "--add-runtime-requires", check_status=2)
        self.assertIn("--add-runtime-requires", proc.stderr)
        self.assertFalse((self.tmp / "none").exists())


if __name__ == "__main__":
    unittest.main()
