"""One torch verdict everywhere, on real third-party wheels.

inspect's torch range, `check --torch-release all`, `retag --torch auto` and `repair
--torch auto` must give the same pin for the same wheel (analysis/torch_verdict.hpp),
and the pin must never admit a release the truth or the author excludes. The wheels
are real ones from the package index, downloaded by script into a cache outside the
repository (~/.cache/wheelfix-verdict; none is committed), checked against the
bundled atlas of real torch releases.

What each wheel is (facts of the wheels themselves, read with readelf/nm):
- xformers 0.0.35 (py39-none): only torch's stable C functions, among them torch_*
  ones first exported by torch 2.10 (torch_library_impl, torch_call_dispatcher …);
  NEEDs libcudart.so.12; METADATA says torch>=2.10. Torch 2.11+ on the index are
  CUDA 13 builds: no libcudart.so.12 beside them. Truth: 2.10 only.
- torchvision 0.24.1 (cp312): C++ ABI, METADATA torch==2.9.1: exactly that.
- torchaudio 2.9.1 (cp312): C++ ABI, METADATA torch==2.9.1.
"""
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wfx  # noqa: E402

CACHE = Path(os.environ.get("WHEELFIX_VERDICT_CACHE", Path.home() / ".cache" / "wheelfix-verdict"))
WHEELS = {
    "xformers==0.0.35": ("xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl", "3.12"),
    "torchvision==0.24.1": ("torchvision-0.24.1-cp312-cp312-manylinux_2_28_x86_64.whl", "3.12"),
    "torchaudio==2.9.1": ("torchaudio-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl", "3.12"),
}


def fetch(requirement):
    name, python = WHEELS[requirement]
    path = CACHE / name
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--only-binary", ":all:", "--platform", "manylinux_2_28_x86_64",
                           "--python-version", python, "-d", str(CACHE), requirement],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not path.exists():
        raise unittest.SkipTest(f"cannot download {requirement}: {proc.stderr.strip()[-300:]}")
    return path


def metadata_torch(wheel):
    import zipfile
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    return [line.split(":", 1)[1].strip() for line in text.splitlines()
            if line.startswith("Requires-Dist:") and line.split(":", 1)[1].strip().lower().startswith("torch")]


class OneVerdict(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not (wfx.SOURCE_DIR / "data" / "torch-atlas.gz").exists():
            raise unittest.SkipTest("no data/torch-atlas.gz in this checkout")
        if os.uname().machine != "x86_64":
            raise unittest.SkipTest("the wheels are x86_64 ones")
        cls.wheels = {requirement: fetch(requirement) for requirement in WHEELS}

    def four_verdicts(self, wheel):
        """The requirement object of check, retag and repair, and inspect's range line."""
        check = wfx.run_json("check", wheel, "--torch-release", "all", check_status=1)
        with wfx.TempDir() as tmp:
            retag = subprocess.run([wfx.WHEELFIX, "retag", wheel, "--torch", "auto", "-o", tmp / "r", "--dry-run",
                                    "--json"], capture_output=True, text=True)
            env = {k: v for k, v in os.environ.items() if k != "WHEELFIX_TORCH"}
            repair = subprocess.run([wfx.WHEELFIX, "repair", wheel, "--torch", "auto", "-o", tmp / "p", "--dry-run",
                                     "--no-load-test", "--json"], capture_output=True, text=True, env=env)
        self.assertIn(retag.returncode, (0, 1), retag.stderr)
        self.assertIn(repair.returncode, (0, 1), repair.stderr)
        inspect = wfx.run_json("inspect", wheel, check_status=None)["inputs"][0]["torch_range"]
        return (check["requirement"], json.loads(retag.stdout)["requirement"],
                json.loads(repair.stdout)["torch_auto"][0]["requirement"], inspect, check, json.loads(retag.stdout))

    def assert_one_pin(self, wheel, expected):
        check, retag, repair, inspect, _, retag_doc = self.four_verdicts(wheel)
        self.assertEqual(check["specifier"], expected)
        self.assertEqual(retag, check)
        self.assertEqual(repair, check)
        self.assertTrue(inspect.startswith(expected + " "), inspect)
        # What retag writes is that pin (the author's line, intersected: never wider).
        after = [change["after"] for change in retag_doc["pin"]["requirements"]]
        self.assertEqual([a.replace(" ", "") for a in after], [expected])
        return check

    def test_stable_abi_wheel_needing_torch_functions_of_2_10_and_the_cuda_12_runtime(self):
        wheel = self.wheels["xformers==0.0.35"]
        self.assertEqual(metadata_torch(wheel), ["torch>=2.10"])
        requirement = self.assert_one_pin(wheel, "torch>=2.10.0,<2.11")
        self.assertEqual(requirement["kind"], "stable")
        doc = wfx.run_json("check", wheel, "--torch-release", "2.9.1,2.11.0", check_status=1)
        missing = {u["name"] for u in doc["torches"][0]["unresolved"]}
        # torch's stable C functions named torch_* are counted, not taken for the system's.
        self.assertTrue({"torch_library_impl", "torch_call_dispatcher", "torch_list_push_back",
                         "torch_new_list_reserve_size", "torch_c10_cuda_check_msg"} <= missing, missing)
        self.assertEqual(doc["torches"][0]["missing"], len(doc["torches"][0]["unresolved"]))
        self.assertEqual(doc["matrix"]["releases"][0]["missing"], doc["torches"][0]["missing"])  # one count
        # 2.11.0's symbols resolve, but its CUDA 13 build brings no libcudart.so.12.
        self.assertFalse(doc["torches"][1]["loads"])
        self.assertEqual(doc["torches"][1]["missing"], 0)
        self.assertEqual(doc["matrix"]["releases"][1]["verdict"], "runtime")
        self.assertIn("needs nvidia-cuda-runtime-cu12 beside torch (a CUDA 13.0 build: no libcudart.so.12",
                      doc["matrix"]["members"][0]["cells"][1]["runtime_note"])
        # The explanation names the release each missing stable function first appears in.
        text = wfx.run("check", wheel, "--torch-release", "2.9.1,2.10.0", check_status=1).stdout
        self.assertIn("unresolved: torch_library_impl", text)
        self.assertIn("not in this torch yet: first exported by torch 2.10.0", text)

    def test_cpp_wheels_keep_the_authors_exact_pin(self):
        for requirement in ("torchvision==0.24.1", "torchaudio==2.9.1"):
            with self.subTest(requirement):
                wheel = self.wheels[requirement]
                self.assertEqual([r.replace(" ", "").replace("(", "").replace(")", "") for r in metadata_torch(wheel)],
                                 ["torch==2.9.1"])
                check = self.assert_one_pin(wheel, "torch==2.9.1")
                self.assertEqual(check["kind"], "c++")
                self.assertEqual(check["built_for"], "2.9.1")

    def test_pin_range_widens_only_when_asked_and_says_so(self):
        wheel = self.wheels["torchvision==0.24.1"]
        with wfx.TempDir() as tmp:
            doc = wfx.run_json("retag", wheel, "--torch", "auto", "--pin", "range", "-o", tmp, "--dry-run")
        self.assertTrue(doc["requirement"]["symbol_level_only"])
        # Still within the author's torch==2.9.1.
        self.assertEqual(doc["pin"]["requirements"][0]["after"].replace(" ", ""), "torch==2.9.1")

    def test_several_wheels_in_one_check(self):
        wheels = [self.wheels[r] for r in WHEELS]
        doc = wfx.run_json("check", *wheels, "--torch-release", "all", check_status=1)
        self.assertEqual(doc["schema"], "wheelfix.check/2")
        self.assertEqual([one["requirement"]["specifier"] for one in doc["inputs"]],
                         ["torch>=2.10.0,<2.11", "torch==2.9.1", "torch==2.9.1"])


class AuthorRangeAndTruthDoNotMeet(unittest.TestCase):
    def test_retag_and_repair_refuse_with_exit_1(self):
        """torchvision 0.24.1 relabelled by its METADATA as needing torch 2.10: symbols resolve only on 2.9."""
        if not (wfx.SOURCE_DIR / "data" / "torch-atlas.gz").exists():
            self.skipTest("no data/torch-atlas.gz in this checkout")
        source = fetch("torchvision==0.24.1")
        with wfx.TempDir() as tmp:
            wheel = tmp / source.name

            edited = {}

            def edit(name, data):
                if name.endswith(".dist-info/METADATA"):
                    data = data.replace(b"Requires-Dist: torch (==2.9.1)", b"Requires-Dist: torch>=2.10")
                    edited[name] = data
                return data

            def record(text):  # METADATA's RECORD line follows its new bytes
                name, data = next(iter(edited.items()))
                return "\n".join(f"{name},{wfx.record_hash(data)},{len(data)}" if line.startswith(name + ",") else line
                                 for line in text.split("\n"))
            wfx.rewrite_wheel(source, wheel, edit_member=edit, record_edit=record)
            proc = wfx.run("retag", wheel, "--torch", "auto", "-o", tmp / "out", check_status=1)
            self.assertIn("nothing written", proc.stdout)
            self.assertFalse((tmp / "out").exists())
            doc = wfx.run_json("check", wheel, "--torch-release", "all", check_status=1)
            self.assertFalse(doc["requirement"]["any"])
            self.assertIsNone(doc["requirement"]["pin"])
            self.assertIn("do not meet", doc["requirement"]["finding"])
            proc = subprocess.run([wfx.WHEELFIX, "repair", wheel, "--torch", "auto", "-o", tmp / "p", "--no-load-test"],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn("not written:", proc.stdout)


if __name__ == "__main__":
    unittest.main()
