"""The bundled sample wheels, against their ground truth: the -gencode lists, NEEDED and
RUNPATH the build script asked the compilers for (sample_wheels/dist/manifest.json),
and a rebuild from source that must reproduce the committed artefacts."""
import json
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

MANIFEST = json.loads((wfx.SAMPLES / "manifest.json").read_text())


def expected_fatbin(gencode):
    """-gencode arch=compute_100a,code=sm_100a -> ("cubin", "sm_100a"); code=compute_120 -> PTX."""
    entries = set()
    for spec in gencode:
        for code in re.search(r"code=\[?([^\]]+)\]?", spec).group(1).split(","):
            entries.add(("ptx" if code.startswith("compute_") else "cubin", code))
    return entries


class SampleWheels(unittest.TestCase):
    def test_sgl_kernel_matches_what_was_built(self):
        doc = wfx.run_json("inspect", wfx.SGL_WHEEL)["inputs"][0]
        built = {e["member"]: e for w in MANIFEST["wheels"] for e in w["elfs"]}
        self.assertEqual(sorted(e["name"] for e in doc["elf_files"]), sorted(
            m for m in built if m.startswith("sgl_kernel/")))
        for elf in doc["elf_files"]:
            truth = built[elf["name"]]
            with self.subTest(member=elf["name"]):
                self.assertEqual({(f["kind"], f["arch"]) for f in elf["cuda"]["fatbin"]}, expected_fatbin(truth["gencode"]))
                self.assertEqual(elf["runpath"], truth["runpath_requested"])
                self.assertTrue(set(truth["needed_requested"]) <= set(elf["needed"]))
                self.assertEqual(sorted(i["symbol"] for i in elf["torch_imports"]), sorted(truth["torch_imports"]))
                self.assertEqual(elf["cuda"]["runtime_major"], 13)
                self.assertTrue(all(p["absolute"] for p in elf["search_path"]))

    def test_blackwell_coverage_follows_the_arch_rules(self):
        doc = wfx.run_json("inspect", wfx.SGL_WHEEL)["inputs"][0]
        runs = {e["name"]: {row["sm"]: row["runs"] for row in e["cuda"]["blackwell"]} for e in doc["elf_files"]}
        # sm_90a runs on Hopper only
        self.assertEqual(runs["sgl_kernel/sm90/common_ops.abi3.so"], {100: False, 103: False, 120: False, 121: False})
        # sm_100a is arch-specific (not sm_103); sm_120a covers sm_120; compute_120 PTX JITs on sm_121
        self.assertEqual(runs["sgl_kernel/sm100/common_ops.abi3.so"], {100: True, 103: False, 120: True, 121: True})

    def test_platform_tag_lies_and_torch_is_unpinned(self):
        doc = wfx.run_json("inspect", wfx.SGL_WHEEL)["inputs"][0]
        self.assertEqual(doc["local_version"], "cu130")
        self.assertEqual(doc["torch_requirements"], ["torch"])
        self.assertEqual(doc["honest_tag"], "manylinux_2_34")
        claim = doc["platform_claims"][0]
        self.assertEqual((claim["tag"], claim["honest"], claim["violation"]), ("manylinux2014_x86_64", False, "GLIBC_2.34"))
        text = wfx.run("inspect", wfx.SGL_WHEEL, check_status=0).stdout
        self.assertIn("manylinux2014_x86_64 LIES", text)
        self.assertIn("c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)", text)
        self.assertIn("sm_103 NO", text)

    def test_torch_standin_libraries_as_bare_files(self):
        for tree in MANIFEST["torch_standins"]:
            for lib in tree["elfs"]:
                path = wfx.SAMPLES / tree["path"] / lib["path"]
                elf = wfx.run_json("inspect", path)["inputs"][0]["file"]
                self.assertEqual(elf["soname"], lib["soname"])
                self.assertEqual(elf["needed"], lib["needed"])
                self.assertEqual(elf["runpath"], "$ORIGIN")

    def test_plain_and_pure_wheels(self):
        plain = next(wfx.SAMPLES.glob("plainext-*.whl"))
        doc = wfx.run_json("inspect", plain)["inputs"][0]
        self.assertEqual(len(doc["elf_files"]), 1)
        self.assertEqual(doc["elf_files"][0]["cuda"]["fatbin"], [])
        self.assertEqual(doc["elf_files"][0]["torch_imports"], [])
        pure = wfx.run_json("inspect", next(wfx.SAMPLES.glob("purepy-*.whl")))["inputs"][0]
        self.assertEqual(pure["elf_files"], [])
        for wheel in wfx.SAMPLES.glob("*.whl"):
            wfx.run("verify", wheel, check_status=0)

    @unittest.skipUnless(shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists(), "nvcc not installed")
    def test_rebuild_from_source_reproduces_dist(self):
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
        if version != MANIFEST["nvcc"]:
            self.skipTest(f"dist/ was built with {MANIFEST['nvcc']}, this machine has {version}")
        python_tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
        if not list(wfx.SAMPLES.glob(f"plainext-*-{python_tag}-*.whl")):
            self.skipTest(f"dist/ holds a plainext wheel for another Python than {python_tag}")
        proc = subprocess.run([sys.executable, str(wfx.SOURCE_DIR / "sample_wheels" / "build.py"), "--verify-dist"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
