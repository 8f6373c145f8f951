"""The torch atlas end to end: `index --atlas` of the three stand-in torches (format,
determinism, growing a user atlas), `check --torch-release` / `--torch ATLAS` (the
matrix in text, JSON, Markdown and JUnit; exit status), `retag --torch auto` against it
(the range pin and the label), `repair --torch auto` (the same range; shimmed and
load-tested against a real torch of the range's newest release, or shimmed from the
atlas's symbols with the load test said to be impossible), "not covered" for a CPython tag the atlas lacks, and a
small slice of the real bundled atlas (data/torch-atlas.gz)."""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

TREES = {v: wfx.SAMPLES / f"torch-{v}" / "torch" for v in ("2.9.0", "2.10.0", "2.11.0")}
PLAIN = wfx.SAMPLES / "plainext-1.0.0-cp311-cp311-linux_x86_64.whl"
OLD_CHECK = "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)"
NEW_CHECK = "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, unsigned int, bool)"


def make_atlas(path, *versions):
    wfx.run("index", *(TREES[v] for v in versions), "--atlas", path, check_status=0)
    return path


def metadata_of(wheel):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(name).decode()


class AtlasFile(unittest.TestCase):
    def test_same_bytes_in_any_order_and_growing_a_user_atlas(self):
        with wfx.TempDir() as tmp:
            make_atlas(tmp / "a.gz", "2.9.0", "2.10.0", "2.11.0")
            make_atlas(tmp / "b.gz", "2.11.0", "2.9.0", "2.10.0")
            self.assertEqual((tmp / "a.gz").read_bytes(), (tmp / "b.gz").read_bytes())
            # A user atlas grows one torch at a time and ends up the same.
            make_atlas(tmp / "c.gz", "2.10.0")
            doc = wfx.run_json("index", TREES["2.9.0"], TREES["2.11.0"], "--atlas", tmp / "c.gz")
            self.assertEqual(doc["schema"], "wheelfix.atlas/1")
            self.assertEqual(doc["added"], 2)
            self.assertEqual([e["torch_version"] for e in doc["entries"]],
                             ["2.9.0+cu130", "2.10.0+cu130", "2.11.0+cu130"])
            self.assertEqual((tmp / "a.gz").read_bytes(), (tmp / "c.gz").read_bytes())
            # An index file adds as the torch it was made from.
            wfx.run("index", TREES["2.9.0"], "-o", tmp / "i.gz", check_status=0)
            wfx.run("index", tmp / "i.gz", TREES["2.10.0"], TREES["2.11.0"], "--atlas", tmp / "d.gz", check_status=0)
            self.assertEqual((tmp / "a.gz").read_bytes(), (tmp / "d.gz").read_bytes())

    def test_refusals(self):
        with wfx.TempDir() as tmp:
            proc = wfx.run("index", TREES["2.9.0"], TREES["2.10.0"], "-o", tmp / "x.gz", check_status=2)
            self.assertIn("several only with --atlas", proc.stderr)
            bad = tmp / "bad.gz"
            bad.write_bytes(b"wheelfix-torch-atlas 1\nentries 7\n")
            proc = wfx.run("check", wfx.SGL_WHEEL, "--torch", bad, check_status=2)
            self.assertIn("bad.gz", proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1)
            atlas = make_atlas(tmp / "a.gz", "2.9.0", "2.10.0")
            proc = wfx.run("check", wfx.SGL_WHEEL, "--torch", atlas, "--torch-release", "2.7.7", check_status=2)
            self.assertIn("--torch-release: torch 2.7.7 is not in the atlas", proc.stderr)


class Matrix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = wfx.TempDir()
        cls.atlas = make_atlas(cls.tmp.__enter__() / "atlas.gz", "2.9.0", "2.10.0", "2.11.0")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.__exit__(None, None, None)

    def test_text_matrix(self):
        proc = wfx.run("check", wfx.SGL_WHEEL, "--torch", self.atlas, check_status=1)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["member", "2.9.0", "2.10.0", "2.11.0"])
        self.assertEqual(lines[1].split(), ["sgl_kernel/sm100/common_ops.abi3.so", "ok", "NO", "1", "NO", "2"])
        self.assertIn(f"sgl_kernel/sm90/common_ops.abi3.so on 2.10.0: NO first missing {OLD_CHECK}", proc.stdout)
        self.assertIn(f"near miss {NEW_CHECK}", proc.stdout)
        self.assertIn("requirement torch>=2.9.0,<2.10", proc.stdout)

    def test_selection_and_exit_status(self):
        wfx.run("check", wfx.SGL_WHEEL, "--torch", self.atlas, "--torch-release", "2.9.0", check_status=0)
        # With --torch-release the bundled atlas joins; the user atlas's releases shadow its own.
        doc = wfx.run_json("check", wfx.SGL_WHEEL, "--torch", self.atlas, "--torch-release", ">=2.10,<2.12",
                           check_status=1)
        self.assertEqual([r["torch_version"] for r in doc["matrix"]["releases"]], ["2.10.0+cu130", "2.11.0+cu130"])

    def test_json_markdown_junit_carry_the_same_matrix(self):
        with wfx.TempDir() as tmp:
            doc = wfx.run_json("check", wfx.SGL_WHEEL, "--torch", self.atlas, "--junit", tmp / "j.xml",
                               check_status=1)
            matrix = doc["matrix"]
            self.assertEqual([r["verdict"] for r in matrix["releases"]], ["ok", "NO", "NO"])
            self.assertEqual(matrix["releases"][0]["python_tag"], "")  # directories carry no tag
            cells = matrix["members"][1]["cells"]
            self.assertEqual([c["missing"] for c in cells], [0, 1, 2])
            self.assertEqual(cells[1]["first_missing"], OLD_CHECK)
            self.assertEqual(cells[1]["near_miss"], NEW_CHECK)
            self.assertEqual(doc["requirement"]["specifier"], "torch>=2.9.0,<2.10")
            self.assertFalse(doc["loads_everywhere"])
            junit = (tmp / "j.xml").read_text()
            self.assertEqual(junit.count("<testsuite "), 3)
        markdown = wfx.run("check", wfx.SGL_WHEEL, "--torch", self.atlas, "--format", "markdown",
                           check_status=1).stdout
        self.assertIn("| member | 2.9.0 | 2.10.0 | 2.11.0 |", markdown)
        self.assertIn("| `sgl_kernel/sm90/common_ops.abi3.so` | ✅ ok | ❌ NO 1 | ❌ NO 2 |", markdown)

    def test_retag_auto_pins_the_range_and_names_its_lowest_release(self):
        with wfx.TempDir() as tmp:
            proc = wfx.run("retag", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", self.atlas, "-o", tmp,
                           check_status=0)
            self.assertIn("requirement torch>=2.9.0,<2.10", proc.stdout)
            out = next(tmp.glob("*.whl"))
            self.assertEqual(out.name, "sgl_kernel-0.3.21+cu130.torch2.9-cp310-abi3-manylinux2014_x86_64.whl")
            self.assertIn("Requires-Dist: torch>=2.9.0,<2.10", metadata_of(out))
            wfx.run("verify", out, check_status=0)
            # A specifier as the range form of --pin.
            doc = wfx.run_json("retag", wfx.SGL_WHEEL, "--torch", "2.9", "--pin", ">= 2.9, <2.11", "-o", tmp / "s")
            self.assertEqual((doc["pin"]["mode"], doc["pin"]["specifier"]), (">=2.9,<2.11", ">=2.9,<2.11"))
            self.assertIn("Requires-Dist: torch>=2.9,<2.11", metadata_of(next((tmp / "s").glob("*.whl"))))

    def test_repair_auto_pins_the_range_and_load_tests_the_real_newest_release(self):
        with wfx.TempDir() as tmp:
            # 2.11.0 is of no use (not in the range); 2.9.0, the range's newest, is installed.
            doc = wfx.run_json("repair", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", self.atlas,
                               TREES["2.11.0"].parent, TREES["2.9.0"].parent, "-o", tmp)
            auto = doc["torch_auto"][0]
            self.assertEqual(auto["requirement"]["specifier"], "torch>=2.9.0,<2.10")
            self.assertEqual([r["verdict"] for r in auto["matrix"]["releases"]], ["ok", "NO", "NO"])
            self.assertEqual((auto["against"], auto["installed"]), (str(TREES["2.9.0"].parent), True))
            wheel = doc["wheels"][0]
            self.assertEqual(wheel["done"]["version"]["after"], "0.3.21+cu130.torch2.9")
            self.assertEqual(wheel["done"]["torch_pin"], ">=2.9.0,<2.10")
            self.assertEqual(wheel["load_test"]["skipped"], "")
            self.assertEqual({r["status"] for r in wheel["load_test"]["results"]}, {"loaded"})
            out = Path(wheel["output"])
            self.assertIn("Requires-Dist: torch>=2.9.0,<2.10", metadata_of(out))
            wfx.run("verify", out, check_status=0)

    def test_repair_auto_without_a_real_torch_shims_from_the_atlas_and_says_why_no_load_test(self):
        with wfx.TempDir() as tmp:
            env = {k: v for k, v in os.environ.items() if k != "WHEELFIX_TORCH"}
            proc = subprocess.run([wfx.WHEELFIX, "repair", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from",
                                   self.atlas, "-o", tmp], capture_output=True, text=True, env=env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("requirement torch>=2.9.0,<2.10", proc.stdout)
            self.assertIn("shimmed against the atlas's 2.9.0+cu130", proc.stdout)
            self.assertIn("load test skipped: no installed torch 2.9.0 given: the atlas holds symbols, not libraries",
                          proc.stdout)
            out = next(tmp.glob("*.whl"))
            self.assertEqual(out.name, "sgl_kernel-0.3.21+cu130.torch2.9-cp310-abi3-manylinux_2_34_x86_64.whl")
            self.assertIn("Requires-Dist: torch>=2.9.0,<2.10", metadata_of(out))
            # WHEELFIX_TORCH naming an installed 2.9.0 makes the load test run.
            env["WHEELFIX_TORCH"] = str(TREES["2.9.0"].parent)
            proc = subprocess.run([wfx.WHEELFIX, "repair", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from",
                                   self.atlas, "-o", tmp / "env"], capture_output=True, text=True, env=env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("loads sgl_kernel/sm90/common_ops.abi3.so (RTLD_NOW)", proc.stdout)

    def test_repair_auto_when_no_release_loads(self):
        with wfx.TempDir() as tmp:
            atlas = make_atlas(tmp / "late.gz", "2.10.0", "2.11.0")
            proc = wfx.run("repair", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", atlas, "-o", tmp / "o",
                           check_status=1)
            self.assertIn("no pin      no release of the matrix loads it", proc.stdout)
            self.assertIn("not written: no release of the matrix loads it", proc.stdout)
            self.assertIn("2.10.0  2.11.0", proc.stdout)
            self.assertFalse(any((tmp / "o").glob("*.whl")) if (tmp / "o").exists() else False)
            proc = wfx.run("repair", wfx.SGL_WHEEL, "--torch", TREES["2.9.0"], "--torch-from", atlas, "-o", tmp / "o",
                           check_status=2)
            self.assertIn("--torch-from: only goes with --torch auto", proc.stderr)

    def test_retag_auto_when_no_release_loads(self):
        with wfx.TempDir() as tmp:
            atlas = make_atlas(tmp / "late.gz", "2.10.0", "2.11.0")
            proc = wfx.run("retag", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", atlas, "-o", tmp / "o",
                           check_status=1)
            self.assertIn("no pin      no release of the matrix loads it", proc.stdout)
            self.assertIn("nothing written", proc.stdout)
            self.assertFalse((tmp / "o").exists())


def build_wheel(directory, name, version, tag, members):
    """A wheel of `members` ({path: bytes}) with METADATA, WHEEL and a valid RECORD."""
    dist_info = f"{name}-{version}.dist-info"
    files = dict(members)
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: wheelfix-tests\nRoot-Is-Purelib: false\n"
                                   f"Tag: {tag}\n").encode()
    record = "".join(f"{path},{wfx.record_hash(data)},{len(data)}\n" for path, data in files.items())
    files[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode()
    wheel = Path(directory) / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as out:
        for path, data in files.items():
            out.writestr(path, data)
    return wheel


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class PythonTags(unittest.TestCase):
    """libtorch_python differs per CPython ABI tag: two torch 2.9.0 wheels (cp312, cp313;
    the stand-in libraries plus a gcc-built libtorch_python.so of each tag's own symbols)
    in one atlas. An extension is checked against its own tag's libtorch_python, and a
    tag the atlas lacks is "not covered", never "missing"."""

    @classmethod
    def setUpClass(cls):
        cls.temp = wfx.TempDir()
        tmp = cls.tmp = cls.temp.__enter__()
        lib = TREES["2.9.0"] / "lib"
        torches = []
        for tag in ("cp312", "cp313"):
            (tmp / tag).mkdir()
            python = wfx.gcc_library(tmp / tag, "libtorch_python.so",
                         f"int wf_thp_common(void) {{ return 1; }}\nint wf_thp_{tag[2:]}(void) {{ return 2; }}\n",
                         "-Wl,-soname,libtorch_python.so")
            members = {f"torch/lib/{p.name}": p.read_bytes() for p in lib.iterdir()}
            members["torch/lib/libtorch_python.so"] = python.read_bytes()
            members["torch/version.py"] = (TREES["2.9.0"] / "version.py").read_bytes()
            torches.append(build_wheel(tmp, "torch", "2.9.0+cu130", f"{tag}-{tag}-linux_x86_64", members))
        cls.atlas = tmp / "atlas.gz"
        wfx.run("index", *torches, "--atlas", cls.atlas, check_status=0)
        # An extension built against cp313's libtorch_python: it needs wf_thp_313.
        extension = wfx.gcc_library(tmp, "_C.so", "int wf_thp_common(void); int wf_thp_313(void);\n"
                                      "int f(void) { return wf_thp_common() + wf_thp_313(); }\n",
                        f"-L{tmp / 'cp313'}", "-ltorch_python")
        cls.wheels = {tag: build_wheel(tmp, "ext", "1.0", f"{tag}-{tag}-linux_x86_64",
                                       {"ext/_C.so": extension.read_bytes()}) for tag in ("cp311", "cp312", "cp313")}

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)

    def matrix(self, tag, status):
        return wfx.run_json("check", self.wheels[tag], "--torch", self.atlas, check_status=status)

    def test_each_tag_is_checked_against_its_own_libtorch_python(self):
        doc = self.matrix("cp313", 0)
        self.assertEqual(doc["matrix"]["releases"][0]["python_tag"], "cp313")
        self.assertEqual(doc["matrix"]["members"][0]["cells"][0]["verdict"], "ok")
        doc = self.matrix("cp312", 1)
        cell = doc["matrix"]["members"][0]["cells"][0]
        self.assertEqual((cell["verdict"], cell["first_missing"]), ("NO", "wf_thp_313"))

    def test_a_tag_the_atlas_lacks_is_not_covered_never_missing(self):
        doc = self.matrix("cp311", 1)
        cell = doc["matrix"]["members"][0]["cells"][0]
        self.assertEqual(cell["verdict"], "not covered")
        self.assertEqual(cell["not_covered"], ["libtorch_python.so"])
        self.assertEqual(doc["torches"][0]["missing_libraries"], [])
        self.assertEqual(doc["torches"][0]["unresolved"], [])
        text = wfx.run("check", self.wheels["cp311"], "--torch", self.atlas, check_status=1).stdout
        self.assertIn("not covered: libtorch_python.so", text)
        self.assertNotIn("missing", text)


class BundledAtlas(unittest.TestCase):
    """A slice of the real atlas: what the real torch wheels export."""

    def setUp(self):
        if not (wfx.SOURCE_DIR / "data" / "torch-atlas.gz").exists():
            self.skipTest("no data/torch-atlas.gz in this checkout")

    def test_sample_against_real_releases(self):
        doc = wfx.run_json("check", wfx.SGL_WHEEL, "--torch-release", "2.7.0,2.9.1,2.10.0", check_status=1)
        matrix = doc["matrix"]
        self.assertEqual([r["torch_version"] for r in matrix["releases"]],
                         ["2.7.0+cu126", "2.9.1+cu128", "2.10.0+cu128"])
        # 2.7.0's symbols resolve, but its CUDA 12.6 build brings no libcudart.so.13 the sample NEEDs.
        self.assertEqual([r["verdict"] for r in matrix["releases"]], ["runtime", "NO", "NO"])
        cells = matrix["members"][0]["cells"]
        self.assertEqual(cells[0]["missing"], 0)
        self.assertIn("needs nvidia-cuda-runtime beside torch (a CUDA 12.6 build: no libcudart.so.13", cells[0]["runtime_note"])
        self.assertEqual(cells[1]["first_missing"], "c10::cuda::SetDevice(signed char)")
        self.assertEqual(cells[1]["near_miss"], "c10::cuda::SetDevice(signed char, bool)")
        self.assertIn("wheel +cu130: verdict from the cu128 build; builds of one release can export different symbols",
                      matrix["releases"][1]["cuda_note"])
        # abi3 names no CPython ABI: the release's primary entry (its first tag, cp310 in the full atlas)
        self.assertEqual(matrix["releases"][0]["python_tag"], "cp310")

    def test_repair_auto_against_the_real_releases(self):
        """No real release loads the sample (CUDA 13 runtime; 2.11+ lack its symbols): every command says so."""
        with wfx.TempDir() as tmp:
            env = {k: v for k, v in os.environ.items() if k != "WHEELFIX_TORCH"}
            proc = subprocess.run([wfx.WHEELFIX, "repair", wfx.SGL_WHEEL, "--torch", "auto", "-o", tmp, "--json"],
                                  capture_output=True, text=True, env=env)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            doc = json.loads(proc.stdout)
            check = wfx.run_json("check", wfx.SGL_WHEEL, "--torch-release", "all", check_status=1)
            auto = doc["torch_auto"][0]
            self.assertEqual(auto["requirement"], check["requirement"])
            self.assertFalse(auto["requirement"]["any"])
            self.assertIsNone(auto["requirement"]["pin"])
            self.assertEqual(doc["wheels"], [])
            self.assertEqual(doc["not_repaired"][0]["why"], check["requirement"]["finding"])
            self.assertFalse(list(tmp.glob("*.whl")))
            inspect = wfx.run_json("inspect", wfx.SGL_WHEEL, check_status=0)
            self.assertTrue(inspect["inputs"][0]["torch_range"].startswith("none: " + check["requirement"]["finding"]),
                            inspect["inputs"][0]["torch_range"])

    def test_a_python_tag_the_release_does_not_ship_is_not_ok(self):
        with wfx.TempDir() as tmp:
            wfx.run("relink", PLAIN, "-o", tmp, "--add-needed", "libtorch_python.so", check_status=0)
            # torch 2.9 publishes no cp38 wheel (the bundled atlas holds every tag each release ships).
            wheel = next(tmp.glob("*.whl")).rename(tmp / "plainext-1.0.0-cp38-cp38-linux_x86_64.whl")
            doc = wfx.run_json("check", wheel, "--torch-release", "2.9.1", check_status=1)
            cell = doc["matrix"]["members"][0]["cells"][0]
            self.assertEqual(cell["verdict"], "runtime")
            self.assertEqual(cell["runtime_note"], "the release ships no cp38 build")
            self.assertEqual(doc["torches"][0]["missing_libraries"], [])
            text = wfx.run("check", wheel, "--torch-release", "2.9.1", check_status=1).stdout
            self.assertIn("on 2.9.1: NO the release ships no cp38 build", text)


if __name__ == "__main__":
    unittest.main()
