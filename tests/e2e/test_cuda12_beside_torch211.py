"""torch 2.11 and later are CUDA 13 builds: an extension NEEDing libcudart.so.12 dies at import
beside them unless the CUDA 12 runtime is installed by hand; wheelfix check must say so.

Two proofs with the real loader; the test prints which one it ran.

- real torch (where the corpus cache holds the venv `scripts/realworld torch --venv 2.11.0`
  makes: torch 2.11.0 from the package index with its nvidia-* dependencies): in that venv,
  `import torch`, then ctypes.CDLL of real wheel members that NEED libcudart.so.12 (xformers
  0.0.35's `_C.so`, torchvision 0.25.0's `_C.so`, from the corpus cache) fails with
  "libcudart.so.12: cannot open shared object file", while torch's own libcudart.so.13 is
  loaded in the same process; and `wheelfix check --torch-release 2.10.0,2.11.0` of the same
  wheels says "needs nvidia-cuda-runtime-cu12 beside torch" for that member on 2.11.0 only.
- CUDA 13 runtime (elsewhere, e.g. CI: the venv weighs gigabytes): `pip install --target` of
  NVIDIA's `nvidia-cuda-runtime` 13 wheel, the distribution torch 2.11.0 depends on (a few MB,
  cached in WHEELFIX_REAL_CACHE), laid out as pip lays it beside torch; a gcc-built library
  NEEDing libcudart.so.12 with its RUNPATH on that lib directory fails to load with the same
  message, a twin NEEDing libcudart.so.13 on the same RUNPATH loads (so the directory is
  right and only the major is wrong), and check says the same of a wheel holding the first.
Neither possible (no venv and no network): skipped, loudly. WHEELFIX_CU12_PROOF=venv or
runtime picks one (default auto: the venv where torch 2.11.0 is installed in it).
"""
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
import wfx  # noqa: E402

CACHE = Path(os.environ.get("WHEELFIX_REAL_CACHE", Path.home() / ".cache" / "wheelfix-real"))
VENV = CACHE / "venvs" / "2.11.0"
VENV_PYTHON = VENV / "bin" / "python"
# auto (the venv when torch 2.11.0 is installed in it, else the runtime wheel), venv or runtime.
PROOF = os.environ.get("WHEELFIX_CU12_PROOF", "auto")
# The CUDA runtime torch 2.11.0+cu130 depends on (its METADATA: nvidia-cuda-runtime==13.0.96).
RUNTIME_13 = "nvidia-cuda-runtime==13.0.96"
# Real corpus wheels (tests/data/realworld/manifest.tsv) and their member NEEDing libcudart.so.12.
REAL_MEMBERS = {"xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl": "xformers/_C.so",
                "torchvision-0.25.0-cp312-cp312-manylinux_2_28_x86_64.whl": "torchvision/_C.so"}
MISSING_12 = "libcudart.so.12: cannot open shared object file"
NOTE = "needs nvidia-cuda-runtime-cu12 beside torch"

PROBE = ("import ctypes, sys\n"
         "if sys.argv[1] == 'torch':\n"
         "    import torch\n"
         "    loaded = open('/proc/self/maps').read()\n"
         "    print('CUDART13', 'libcudart.so.13' in loaded, torch.__version__, torch.version.cuda)\n"
         "for path in sys.argv[2:]:\n"
         "    try:\n"
         "        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)\n"
         "        print('OK', path)\n"
         "    except OSError as error:\n"
         "        print('ERR', path, error)\n")


def probe(python, *paths, with_torch=False, cwd=None):
    proc = subprocess.run([str(python), "-c", PROBE, "torch" if with_torch else "-", *map(str, paths)],
                          capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")})
    found = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word == "CUDART13":
            found["torch"] = rest
        elif word in ("OK", "ERR"):
            path, _, message = rest.partition(" ")
            found[path] = "OK" if word == "OK" else message
    if not found:
        raise AssertionError(f"the probe printed nothing (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return found


def check_cells(wheel, member):
    """{release: (cell verdict, runtime note)} of `member` in check --torch-release 2.10.0,2.11.0."""
    doc = wfx.run_json("check", wheel, "--torch-release", "2.10.0,2.11.0", check_status=None)
    releases = [r["torch_version"].split("+")[0] for r in doc["matrix"]["releases"]]
    row = next(m["cells"] for m in doc["matrix"]["members"] if m["member"] == member)
    return {release: (cell["verdict"], cell["runtime_note"]) for release, cell in zip(releases, row)}, doc


class Cuda12BesideTorch211(unittest.TestCase):
    def assert_check_says_needs_cu12(self, wheel, member):
        cells, doc = check_cells(wheel, member)
        print(f"  check {Path(wheel).name} {member}: {cells}", file=sys.stderr)
        self.assertNotEqual(cells["2.10.0"][0], "runtime", "torch 2.10.0 is a CUDA 12 build: no runtime note")
        self.assertEqual(cells["2.11.0"][0], "runtime", cells)
        self.assertIn(NOTE, cells["2.11.0"][1])
        torch_211 = doc["torches"][1]
        self.assertFalse(torch_211["loads"])
        self.assertIn(f"{member}: {NOTE}", "\n".join(torch_211["install_notes"]))

    def test_cuda12_member_beside_torch_211(self):
        installed = VENV_PYTHON.exists() and any(VENV.glob("lib/python3*/site-packages/torch-2.11.0*.dist-info/RECORD"))
        if PROOF == "venv" or (PROOF == "auto" and installed):
            self.real_torch_proof()
        else:
            self.runtime_wheel_proof()

    def real_torch_proof(self):
        wheels = {name: CACHE / "wheels" / name for name in REAL_MEMBERS if (CACHE / "wheels" / name).exists()}
        if not wheels:
            self.skipTest(f"the torch 2.11.0 venv is there but no corpus wheel in {CACHE / 'wheels'}: run scripts/realworld download")
        print(f"PROOF: real torch 2.11.0 venv {VENV_PYTHON.parent.parent} with {', '.join(wheels)}", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="wheelfix-cu12-") as tmp:
            paths = []
            for name, wheel in wheels.items():
                member = REAL_MEMBERS[name]
                with zipfile.ZipFile(wheel) as zf:
                    zf.extract(member, Path(tmp) / name)
                paths.append(Path(tmp) / name / member)
            found = probe(VENV_PYTHON, *paths, with_torch=True, cwd=tmp)
        print(f"  loader: {found}", file=sys.stderr)
        self.assertTrue(found["torch"].startswith("True 2.11.0"), f"torch 2.11.0 with libcudart.so.13 loaded: {found['torch']}")
        for path in paths:
            self.assertIn(MISSING_12, found[str(path)])
        for name, wheel in wheels.items():
            self.assert_check_says_needs_cu12(wheel, REAL_MEMBERS[name])

    def runtime_wheel_proof(self):
        if not shutil.which("gcc") or sysconfig.get_platform() != "linux-x86_64":
            self.skipTest("needs gcc on linux x86_64 (no torch 2.11.0 venv in the cache either)")
        target = CACHE / "cudart13"
        lib = target / "nvidia" / "cu13" / "lib"
        if not (lib / "libcudart.so.13").exists():
            shutil.rmtree(target, ignore_errors=True)
            pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--only-binary", ":all:",
                                  "--disable-pip-version-check", "--quiet", "--target", str(target), RUNTIME_13],
                                 capture_output=True, text=True, timeout=120)
            if pip.returncode != 0 or not (lib / "libcudart.so.13").exists():
                self.skipTest(f"SKIPPED, NOT PROVEN: no torch 2.11.0 venv in {CACHE / 'venvs'} and pip install "
                              f"{RUNTIME_13} failed: {pip.stderr.strip()[-300:]}")
        print(f"PROOF: CUDA 13 runtime wheel {RUNTIME_13} at {lib} (no torch 2.11.0 venv in {CACHE / 'venvs'})",
              file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="wheelfix-cu12-") as tmp:
            tmp = Path(tmp)
            source = tmp / "ext.c"
            source.write_text("int cudaRuntimeGetVersion(int *);\n"
                              "int ext_runtime(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }\n")
            link = tmp / "link"
            link.mkdir()
            # Link-time stand-ins give the NEEDED names; at run time only the real runtime's directory is searched.
            for major in ("12", "13"):
                stub = link / f"libcudart.so.{major}"
                subprocess.run(["gcc", "-shared", "-fPIC", "-x", "c", "-", "-o", str(stub), f"-Wl,-soname,libcudart.so.{major}"],
                               input="int cudaRuntimeGetVersion(int *v) { return 0; }\n", text=True, check=True)
            site = tmp / "site" / "ext"
            site.mkdir(parents=True)
            built = {}
            for major in ("12", "13"):
                out = site / f"_ext{major}.so"
                subprocess.run(["gcc", "-shared", "-fPIC", str(source), "-o", str(out), f"-L{link}", f"-l:libcudart.so.{major}",
                                f"-Wl,--enable-new-dtags,-rpath,{lib}"], check=True)
                built[major] = out
            found = probe(sys.executable, built["13"], built["12"])
            print(f"  loader: {found}", file=sys.stderr)
            self.assertEqual(found[str(built["13"])], "OK", "the twin NEEDing libcudart.so.13 loads from the same RUNPATH")
            self.assertIn(MISSING_12, found[str(built["12"])])
            tag = "py3-none-linux_x86_64"
            wheel = wfx.write_wheel(tmp / f"cu12ext-1.0-{tag}.whl",
                                    {"ext/_ext12.so": built["12"].read_bytes(), **wfx.dist_info_members("cu12ext", "1.0", tag)})
            self.assert_check_says_needs_cu12(wheel, "ext/_ext12.so")


if __name__ == "__main__":
    unittest.main(verbosity=2)
