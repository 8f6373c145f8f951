"""check and index end to end: the sample sgl_kernel wheel against the three stand-in
torches (tree, index file and torch wheel forms must agree), the version matrix,
patchelf-laid-out libraries read in one pass from a wheel, and bad inputs."""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

TREES = {v: wfx.SAMPLES / f"torch-{v}" / "torch" for v in ("2.9.0", "2.10.0", "2.11.0")}
OLD_CHECK = "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)"
NEW_CHECK = "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, unsigned int, bool)"
LOG_CHECK = ("c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, unsigned int, bool, "
             "c10::cuda::CUDAErrorLogCapture*)")
MEMBERS = ["sgl_kernel/sm100/common_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so"]


def answer(doc):
    """The check result without where each torch came from (tree, index or wheel)."""
    for torch in doc["torches"]:
        torch.pop("source")
    doc.pop("input")
    return doc


def check_json(*torches, target=wfx.SGL_WHEEL, status=None):
    proc = wfx.run("--json", "check", target, "--torch", *torches, check_status=status)
    return json.loads(proc.stdout)


def torch_wheel(tree, destination):
    """A stand-in torch wheel: torch/... from a tree, deflated, as pip would see it."""
    with zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path in sorted(tree.rglob("*")):
            if path.is_file():
                wheel.write(path, "torch/" + path.relative_to(tree).as_posix())
        wheel.writestr("torch-0.0.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    return destination


def section_offset(path, name):
    out = subprocess.run(["readelf", "-SW", str(path)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 4 and fields[1] == name:
            return int(fields[4], 16)
    raise AssertionError(f"{path}: no section {name}")


def unresolved_named(torch, demangled):
    return next((u for u in torch["unresolved"] if u["demangled"] == demangled), None)


class CheckAgainstTrees(unittest.TestCase):
    def test_loads_against_2_9(self):
        doc = check_json(TREES["2.9.0"], status=0)
        self.assertEqual(doc["schema"], "wheelfix.check/1")
        torch = doc["torches"][0]
        self.assertTrue(torch["loads"])
        self.assertEqual(torch["torch_version"], "2.9.0+cu130")
        self.assertEqual([m["member"] for m in torch["members"]], MEMBERS)
        self.assertTrue(all(m["unresolved"] == 0 and m["resolved"] == 5 for m in torch["members"]))

    def test_2_10_misses_c10_cuda_check_implementation_with_a_forwardable_successor(self):
        doc = check_json(TREES["2.10.0"], status=1)
        torch = doc["torches"][0]
        self.assertFalse(torch["loads"])
        self.assertEqual([u["demangled"] for u in torch["unresolved"]], [OLD_CHECK])
        miss = torch["unresolved"][0]
        self.assertTrue(miss["torch"])
        self.assertEqual(miss["needed_by"], MEMBERS)
        self.assertEqual(len(miss["near_misses"]), 1)
        near = miss["near_misses"][0]
        self.assertEqual(near["demangled"], NEW_CHECK)
        self.assertEqual(near["library"], "libc10_cuda.so")
        self.assertTrue(near["forwardable"])
        self.assertEqual(near["appended_zero_params"], 0)
        self.assertIn("int -> unsigned int", near["reason"])
        self.assertEqual(near["known_drift"]["since"], "2.10.0")
        text = wfx.run("check", wfx.SGL_WHEEL, "--torch", TREES["2.10.0"], check_status=1).stdout
        self.assertIn("unresolved: " + OLD_CHECK, text)
        self.assertIn("near miss: " + NEW_CHECK, text)
        self.assertIn("forwardable: parameter 4 int -> unsigned int (same width)", text)

    def test_2_11_flags_set_device_and_the_log_capture_successor(self):
        torch = check_json(TREES["2.11.0"], status=1)["torches"][0]
        self.assertEqual(torch["missing"], 2)
        set_device = unresolved_named(torch, "c10::cuda::SetDevice(signed char)")
        self.assertIsNotNone(set_device)
        self.assertEqual(set_device["near_misses"][0]["demangled"], "c10::cuda::SetDevice(signed char, bool)")
        self.assertEqual(set_device["near_misses"][0]["appended_zero_params"], 1)
        self.assertTrue(set_device["near_misses"][0]["forwardable"])
        check = unresolved_named(torch, OLD_CHECK)
        self.assertEqual(check["near_misses"][0]["demangled"], LOG_CHECK)
        self.assertEqual(check["near_misses"][0]["appended_zero_params"], 1)

    def test_matrix_of_three(self):
        proc = wfx.run("check", wfx.SGL_WHEEL, "--torch", *TREES.values(), check_status=1)
        self.assertEqual(proc.stdout.splitlines()[-1],
                         "symbols resolve against: 2.9.0+cu130 yes, 2.10.0+cu130 NO (1 missing), 2.11.0+cu130 NO (2 missing)")
        doc = check_json(*TREES.values(), status=1)
        self.assertEqual([t["loads"] for t in doc["torches"]], [True, False, False])
        self.assertFalse(doc["loads_everywhere"])
        quiet = wfx.run("-q", "check", wfx.SGL_WHEEL, "--torch", TREES["2.9.0"], check_status=0).stdout
        self.assertEqual(quiet.splitlines()[-1], "symbols resolve against: 2.9.0+cu130 yes")

    def test_a_bare_elf_gives_the_member_answer(self):
        with wfx.TempDir() as tmp, zipfile.ZipFile(wfx.SGL_WHEEL) as wheel:
            elf = tmp / "common_ops.abi3.so"
            elf.write_bytes(wheel.read(MEMBERS[1]))
            torch = check_json(TREES["2.10.0"], target=elf, status=1)["torches"][0]
            self.assertEqual([u["demangled"] for u in torch["unresolved"]], [OLD_CHECK])
            self.assertEqual(torch["unresolved"][0]["needed_by"], [str(elf)])
            check_json(TREES["2.9.0"], target=elf, status=0)


class SeveralInputs(unittest.TestCase):
    """check A B --torch ...: each input's report as check of it alone gives, one summary,
    one exit status; --json is schema check/2 with the check/1 reports under inputs."""

    def test_each_input_as_alone_then_one_summary(self):
        with wfx.TempDir() as tmp, zipfile.ZipFile(wfx.SGL_WHEEL) as wheel:
            elf = tmp / "libplain.so"
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(elf), "-x", "c", "-"],
                           input="int plain(void) { return 1; }\n", text=True, check=True)
            inputs = [wfx.SGL_WHEEL, elf]
            torches = [TREES["2.9.0"], TREES["2.10.0"]]
            proc = wfx.run("--json", "check", *inputs, "--torch", *torches, check_status=1)
            doc = json.loads(proc.stdout)
            self.assertEqual(doc["schema"], "wheelfix.check/2")
            self.assertFalse(doc["loads_everywhere"])
            for got, path in zip(doc["inputs"], inputs, strict=True):
                alone = json.loads(wfx.run("--json", "check", path, "--torch", *torches).stdout)
                alone.pop("schema")
                self.assertEqual(got, alone, path)
            self.assertEqual([i["loads_everywhere"] for i in doc["inputs"]], [False, True])

            text = wfx.run("check", *inputs, "--torch", *torches, check_status=1).stdout
            self.assertTrue(text.startswith(f"{wfx.SGL_WHEEL}:\n"))
            self.assertIn(f"\n{elf}:\n", text)
            self.assertEqual(text.splitlines()[-1], f"2 inputs: 1 load against every torch, 1 do not: {wfx.SGL_WHEEL}")
            ok = wfx.run("check", elf, elf, "--torch", TREES["2.10.0"], check_status=0).stdout
            self.assertEqual(ok.splitlines()[-1], "2 inputs: 2 load against every torch")

    def test_a_pure_python_wheel_among_several_has_nothing_to_check(self):
        pure = wfx.SAMPLES / "purepy-1.0.0-py3-none-any.whl"
        wfx.run("check", pure, "--torch", TREES["2.9.0"], check_status=2)  # alone: refused, as before
        text = wfx.run("check", pure, wfx.SGL_WHEEL, "--torch", TREES["2.9.0"], check_status=0).stdout
        self.assertIn(f"{pure}: no ELF shared objects: nothing to check\n", text)
        self.assertEqual(text.splitlines()[-1], "2 inputs: 2 load against every torch (1 with nothing to check)")
        doc = json.loads(wfx.run("--json", "check", pure, wfx.SGL_WHEEL, "--torch", TREES["2.9.0"]).stdout)
        self.assertEqual(doc["inputs"][0]["torches"][0]["members"], [])
        self.assertTrue(doc["loads_everywhere"])

    def test_one_bad_input_is_exit_2_naming_it(self):
        with wfx.TempDir() as tmp:
            bad = tmp / "bad-1.0-py3-none-any.whl"
            bad.write_bytes(b"PK\x03\x04 not a zip")
            proc = wfx.run("check", wfx.SGL_WHEEL, bad, "--torch", TREES["2.9.0"], check_status=2)
            self.assertEqual(proc.stdout, "")
            self.assertEqual(len(proc.stderr.splitlines()), 1)
            self.assertIn(str(bad), proc.stderr)

    def test_junit_of_several_inputs_is_one_document(self):
        with wfx.TempDir() as tmp:
            out = tmp / "junit.xml"
            wfx.run("check", wfx.SGL_WHEEL, wfx.SGL_WHEEL, "--torch", TREES["2.10.0"], "--junit", out, check_status=1)
            import xml.etree.ElementTree as ET
            root = ET.parse(out).getroot()
            self.assertEqual(root.get("tests"), "4")
            self.assertEqual(root.get("failures"), "4")
            self.assertEqual(len(root.findall("testsuite")), 2)


class IndexAndWheelForms(unittest.TestCase):
    def test_an_index_gives_the_tree_answer(self):
        with wfx.TempDir() as tmp:
            for version, tree in TREES.items():
                index = tmp / f"torch-{version}.idx"
                out = wfx.run("index", tree, "-o", index, check_status=0).stdout
                self.assertIn("4 libraries", out)
                self.assertEqual(index.read_bytes()[:2], b"\x1f\x8b")
                status = 0 if version == "2.9.0" else 1
                self.assertEqual(answer(check_json(index, status=status)), answer(check_json(tree, status=status)))
            again = tmp / "again.idx"
            wfx.run("index", TREES["2.10.0"], "-o", again, check_status=0)
            self.assertEqual(again.read_bytes(), (tmp / "torch-2.10.0.idx").read_bytes())
            started = time.perf_counter()
            wfx.run("check", wfx.SGL_WHEEL, "--torch", tmp / "torch-2.10.0.idx", check_status=1)
            print(f"\n  check against an index: {1000 * (time.perf_counter() - started):.1f} ms wall "
                  "(includes process start; bench/ measures it)", file=sys.stderr)

    def test_index_libs_glob(self):
        with wfx.TempDir() as tmp:
            doc = json.loads(wfx.run("--json", "index", TREES["2.9.0"], "-o", tmp / "c10.idx",
                                     "--libs", "libc10*", check_status=0).stdout)
            self.assertEqual([lib["file_name"] for lib in doc["libraries"]], ["libc10.so", "libc10_cuda.so"])
            self.assertEqual(doc["schema"], "wheelfix.index/1")
            # libtorch_cuda.so is not in this index: check says the index does not cover it (never "missing").
            torch = check_json(tmp / "c10.idx", status=1)["torches"][0]
            self.assertEqual(torch["missing_libraries"], [])
            self.assertEqual([lib["name"] for lib in torch["not_covered"]], ["libtorch_cuda.so"])
            self.assertFalse(torch["loads"])
            self.assertEqual(wfx.run("index", TREES["2.9.0"], "-o", tmp / "x.idx", "--libs", "nomatch*").returncode, 2)

    def test_a_torch_wheel_gives_the_tree_answer(self):
        with wfx.TempDir() as tmp:
            for version, tree in TREES.items():
                wheel = torch_wheel(tree, tmp / f"torch-{version}-cp310-cp310-linux_x86_64.whl")
                status = 0 if version == "2.9.0" else 1
                self.assertEqual(answer(check_json(wheel, status=status)), answer(check_json(tree, status=status)))
                index = tmp / f"from-wheel-{version}.idx"
                wfx.run("index", wheel, "-o", index, check_status=0)
                self.assertEqual(answer(check_json(index, status=status)), answer(check_json(tree, status=status)))

    @unittest.skipUnless(shutil.which("patchelf"), "patchelf not installed")
    def test_patchelf_layout_is_read_in_one_pass(self):
        """Real torch wheels went through patchelf, which moves .dynstr into a segment
        appended at the end of the file, after .dynamic: the one pass must still
        find it, and agree with the tree."""
        with wfx.TempDir() as tmp:
            tree = tmp / "torch"
            shutil.copytree(TREES["2.10.0"], tree)
            for lib in (tree / "lib").glob("*.so"):
                subprocess.run(["patchelf", "--set-rpath", "$ORIGIN:" + "/opt/x" * 200, str(lib)], check=True)
                self.assertGreater(section_offset(lib, ".dynstr"), section_offset(lib, ".dynamic"), lib)
            wheel = torch_wheel(tree, tmp / "torch-2.10.0-cp310-cp310-linux_x86_64.whl")
            self.assertEqual(answer(check_json(wheel, status=1)), answer(check_json(tree, status=1)))
            proc = wfx.run("-v", "check", wfx.SGL_WHEEL, "--torch", wheel, check_status=1)
            self.assertRegex(proc.stderr, r"inflated 4 libraries \(.*\) once each, kept")
            read = sorted(line.split()[1] for line in proc.stderr.splitlines() if line.startswith("wheelfix:   "))
            self.assertEqual(read, [f"torch/lib/{name}" for name in
                                    ("libc10.so", "libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so")])


class BadInputs(unittest.TestCase):
    def assert_error(self, *args):
        proc = wfx.run(*args)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertTrue(proc.stderr.startswith("wheelfix: "), proc.stderr)
        return proc.stderr

    def test_errors_exit_2_with_one_line(self):
        with wfx.TempDir() as tmp:
            text = tmp / "notes.txt"
            text.write_text("hello\n")
            bad_gzip = tmp / "bad.idx"
            bad_gzip.write_bytes(b"\x1f\x8b\x08\x00garbage")
            future = tmp / "future.idx"
            future.write_text("wheelfix-symbol-index 2\nend\n")
            self.assertIn("no-such.whl", self.assert_error("check", tmp / "no-such.whl", "--torch", TREES["2.9.0"]))
            self.assertIn("missing-torch", self.assert_error("check", wfx.SGL_WHEEL, "--torch", tmp / "missing-torch"))
            self.assertIn("not a torch directory", self.assert_error("check", wfx.SGL_WHEEL, "--torch", text))
            self.assertIn("gzip", self.assert_error("check", wfx.SGL_WHEEL, "--torch", bad_gzip))
            self.assertIn("unsupported index format", self.assert_error("check", wfx.SGL_WHEEL, "--torch", future))
            self.assertIn("not a wheel and not an ELF", self.assert_error("check", text, "--torch", TREES["2.9.0"]))
            self.assertIn("no shared libraries", self.assert_error("check", wfx.SGL_WHEEL, "--torch", tmp))
            self.assertEqual(wfx.run("check", wfx.SGL_WHEEL).returncode, 2)  # usage: --torch is required
            self.assert_error("index", TREES["2.9.0"], "-o", tmp / "no-dir" / "x.idx")
            self.assert_error("index", text, "-o", tmp / "x.idx")
            self.assertFalse((tmp / "x.idx").exists())
            pure = wfx.SAMPLES / "purepy-1.0.0-py3-none-any.whl"
            self.assertIn("no ELF", self.assert_error("check", pure, "--torch", TREES["2.9.0"]))

    def test_a_torch_that_cannot_load_is_refused_before_the_inputs_are_read(self):
        # Reading a big wheel takes seconds: a mistyped --torch must not wait for it. With
        # both the input and the torch unreadable, the error names the torch.
        with wfx.TempDir() as tmp:
            text = tmp / "notes.txt"
            text.write_text("hello\n")
            for torch, problem in ((tmp / "missing-torch", "cannot open"), (text, "not a torch directory")):
                stderr = self.assert_error("check", tmp / "no-such.whl", "--torch", torch)
                self.assertIn(str(torch), stderr)
                self.assertIn(problem, stderr)
                self.assertNotIn("no-such.whl", stderr)


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class PartialIndex(unittest.TestCase):
    """An index file holds a selection of a torch's libraries (data/torch-index: seven, not
    libtorch_python.so): a torch library it lacks is "not covered (the index is partial: no
    libX)", never "missing", and never "loads" either."""
    INDEX = wfx.SOURCE_DIR / "data" / "torch-index" / "torch-2.10.0+cu128.index.gz"

    def test_a_library_the_index_lacks_is_not_covered(self):
        with wfx.TempDir() as tmp:
            (tmp / "lib").mkdir()
            (tmp / "lib" / "python.c").write_text("void* THPVariable_Wrap(void* v) { return v; }\n")
            subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libtorch_python.so", "-o",
                            str(tmp / "lib" / "libtorch_python.so"), str(tmp / "lib" / "python.c")], check=True)
            (tmp / "ext.c").write_text("void* THPVariable_Wrap(void*);\nvoid* f(void* p) { return THPVariable_Wrap(p); }\n")
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp / "_C.so"), str(tmp / "ext.c"),
                            f"-L{tmp / 'lib'}", "-ltorch_python"], check=True)
            tag = "cp311-cp311-linux_x86_64"
            members = {"ext/_C.so": (tmp / "_C.so").read_bytes()}
            members.update(wfx.dist_info_members("ext", "1.0", tag))
            wheel = wfx.write_wheel(tmp / f"ext-1.0-{tag}.whl", members)
            self.assert_not_covered(wheel, "ext/_C.so")
            # The same library absent from a torch directory is missing: the directory shows all it has.
            doc = check_json(TREES["2.10.0"], target=wheel, status=1)
            self.assertEqual([lib["name"] for lib in doc["torches"][0]["missing_libraries"]], ["libtorch_python.so"])
            self.assertEqual(doc["torches"][0]["not_covered"], [])

    def test_real_torchvision_against_the_index_of_its_own_release(self):
        """torchvision 0.24.1 (built for torch 2.9.1) NEEDs libtorch_python.so: no false NO."""
        sys.path.insert(0, str(Path(__file__).parent))
        from test_torch_verdict import fetch  # downloads into the verdict cache, or skips saying why
        wheel = fetch("torchvision==0.24.1")
        index = wfx.SOURCE_DIR / "data" / "torch-index" / "torch-2.9.1+cu128.index.gz"
        doc = check_json(index, target=wheel, status=1)
        torch = doc["torches"][0]
        self.assertEqual(torch["missing_libraries"], [])
        self.assertEqual(torch["unresolved"], [])
        self.assertEqual([lib["name"] for lib in torch["not_covered"]], ["libtorch_python.so"])
        self.assertFalse(torch["loads"])

    def assert_not_covered(self, wheel, member):
        doc = check_json(self.INDEX, target=wheel, status=1)
        torch = doc["torches"][0]
        self.assertFalse(torch["loads"])
        self.assertEqual(torch["missing_libraries"], [])
        self.assertEqual(torch["unresolved"], [])
        self.assertEqual(torch["not_covered"], [{"name": "libtorch_python.so", "needed_by": [member],
                                                 "reason": "the index is partial: no libtorch_python.so"}])
        text = wfx.run("check", wheel, "--torch", self.INDEX, check_status=1).stdout
        self.assertIn(f"not covered: libtorch_python.so (the index is partial: no libtorch_python.so; needed by {member})",
                      text)
        self.assertIn("2.10.0+cu128 not covered (the index is partial: no libtorch_python.so)", text)
        self.assertNotIn("missing", text)
        # As a column of a matrix (retag --torch auto --torch-from FILE): not covered, so no pin.
        with wfx.TempDir() as tmp:
            doc = wfx.run_json("retag", wheel, "--torch", "auto", "--torch-from", self.INDEX, "-o", tmp / "out",
                               check_status=1)
            self.assertEqual(doc["matrix"]["releases"][0]["verdict"], "not covered")
            self.assertIsNone(doc["output"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
