"""repair end to end (issue 5's proof): the sample sgl_kernel wheel, built against the
torch 2.9 stand-in with build-tree RUNPATHs and a manylinux2014 tag it does not
deserve, repaired for the torch 2.10 stand-in and the cuda13-blackwell profile:
the output has the torch in its name, the honest platform tag, a wheel that
`wheelfix verify`, `python3 -m wheel unpack` and `pip install` accept, METADATA that
differs only in Version and the torch pin, and extensions that python ctypes loads
(RTLD_NOW, no LD_LIBRARY_PATH) from a pip-style site-packages beside the stand-in
torch, where the forwarded call reaches torch 2.10's implementation. The field case
of sgl-kernel 0.3.21 (an sm100 build linked against libcudart.so.12) is reported and
left, written (exit 1) or, with --strict, not written. --dry-run writes nothing; -j 2
gives the same bytes as -j 1."""
import difflib
import hashlib
import os
import shutil
import subprocess
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402
from test_shim import BLAS_HANDLE, CUDART, SM90, SM100, layout, python_call, trace_lines  # noqa: E402

TORCH_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"
REPAIRED_NAME = "sgl_kernel-0.3.21+cu130.torch2.10-cp310-abi3-manylinux_2_34_x86_64.whl"


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def metadata_of(wheel):
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return zf.read(name).decode().splitlines(keepends=True)


def repair(*args, check_status=None):
    return wfx.run("repair", *args, check_status=check_status)


class SampleWheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp_context = wfx.TempDir()
        cls.tmp = cls.tmp_context.__enter__()
        cls.input_hash = sha256(wfx.SGL_WHEEL)
        cls.proc = repair(wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", cls.tmp / "out", "--target", "cuda13-blackwell")
        cls.output = cls.tmp / "out" / REPAIRED_NAME

    @classmethod
    def tearDownClass(cls):
        cls.tmp_context.__exit__(None, None, None)

    def test_output_named_for_the_torch_and_the_honest_tag(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        self.assertEqual(sorted(p.name for p in (self.tmp / "out").iterdir()), [REPAIRED_NAME])
        self.assertEqual(sha256(wfx.SGL_WHEEL), self.input_hash, "the input must not change")
        text = self.proc.stdout
        self.assertIn("wrong ", text)
        self.assertIn("torch 2.10.0+cu130 does not export 1 torch function the extensions need", text)
        self.assertIn("4 search path entries outside the wheel", text)
        self.assertIn("platform manylinux2014_x86_64 -> manylinux_2_34_x86_64", text)
        self.assertIn("version 0.3.21+cu130 -> 0.3.21+cu130.torch2.10", text)
        self.assertNotIn("left ", text)
        if CUDART.exists():  # the load test: python ctypes, RTLD_NOW, beside the stand-in torch
            self.assertIn(f"proof loads {SM100} (RTLD_NOW)", text)
            self.assertIn(f"loads {SM90} (RTLD_NOW)", text)

    def test_verify_wheel_unpack_and_pip_accept_it(self):
        wfx.run("verify", self.output, check_status=0)
        with wfx.TempDir() as tmp:
            subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", tmp, self.output], check=True,
                           capture_output=True)
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                            tmp / "site", self.output], check=True, capture_output=True)
            self.assertTrue((tmp / "site" / "sgl_kernel-0.3.21+cu130.torch2.10.dist-info" / "METADATA").exists())

    def test_metadata_differs_only_in_version_and_torch_pin(self):
        diff = [line for line in difflib.unified_diff(metadata_of(wfx.SGL_WHEEL), metadata_of(self.output), n=0)
                if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        self.assertEqual(sorted(diff), sorted(["-Version: 0.3.21+cu130\n", "+Version: 0.3.21+cu130.torch2.10\n",
                                               "-Requires-Dist: torch\n", "+Requires-Dist: torch>=2.10,<2.11\n"]))

    def test_inspect_of_the_output_has_nothing_left_for_the_profile(self):
        proc = wfx.run("inspect", self.output, "--target", "cuda13-blackwell", check_status=0)
        self.assertIn("manylinux_2_34", proc.stdout)

    @unittest.skipUnless(CUDART.exists(), "needs libcudart.so.13 from /usr/local/cuda for the installed layout")
    def test_both_extensions_load_and_the_forwarded_call_reaches_torch_210(self):
        site = self.tmp / "site"
        layout(self.output, site, TORCH_210)
        for member in (SM90, SM100):
            with self.subTest(member=member):
                proc = python_call(site / member, BLAS_HANDLE, 3)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                lines = trace_lines(proc.stderr)
                self.assertEqual(len(lines), 2, proc.stderr)
                self.assertTrue(all(line.startswith("torch stand-in 21000 trace: ") for line in lines), lines)

    @unittest.skipUnless(CUDART.exists(), "needs libcudart.so.13 from /usr/local/cuda for the installed layout")
    def test_unrepaired_wheel_does_not_load_in_the_same_layout(self):
        site = self.tmp / "plain-site"
        layout(wfx.SGL_WHEEL, site, TORCH_210)
        proc = python_call(site / SM100, BLAS_HANDLE, 3)
        self.assertNotEqual(proc.returncode, 0)

    def test_json_report(self):
        doc = wfx.run_json("repair", wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / "json",
                           "--target", "cuda13-blackwell")
        self.assertEqual(doc["schema"], "wheelfix.repair/1")
        (report,) = doc["wheels"]
        self.assertTrue(report["written"])
        self.assertTrue(report["clean"])
        self.assertEqual(Path(report["output"]).name, REPAIRED_NAME)
        self.assertEqual(report["done"]["version"]["after"], "0.3.21+cu130.torch2.10")
        self.assertEqual(report["done"]["torch_pin"], ">=2.10,<2.11")
        self.assertEqual(sorted(c["member"] for c in report["done"]["relinked"]), sorted([SM90, SM100]))
        self.assertEqual(report["done"]["shim"]["stubs"], 0)

    def test_same_input_gives_identical_bytes_and_existing_output_is_refused(self):
        env = {"SOURCE_DATE_EPOCH": "1700000000"}
        outputs = []
        for name in ("a", "b"):
            subprocess.run([wfx.WHEELFIX, "repair", wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / name],
                           check=True, capture_output=True, env={**os.environ, **env})
            outputs.append(sha256(next((self.tmp / name).iterdir())))
        self.assertEqual(outputs[0], outputs[1])
        proc = repair(wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / "a", check_status=2)
        self.assertIn("--overwrite", proc.stderr)
        repair(wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / "a", "--overwrite", check_status=0)

    def test_dry_run_writes_nothing(self):
        proc = repair(wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / "dry", "--target", "cuda13-blackwell",
                      "--dry-run", check_status=0)
        self.assertIn("would write", proc.stdout)
        self.assertIn(REPAIRED_NAME, proc.stdout)
        self.assertFalse((self.tmp / "dry").exists() and any((self.tmp / "dry").iterdir()))


class LoadTest(unittest.TestCase):
    def test_an_extension_that_does_not_load_is_left_and_named(self):
        with wfx.TempDir() as tmp:
            broken_torch = tmp / "torch-2.10.0" / "torch"
            shutil.copytree(TORCH_210, broken_torch)
            (broken_torch / "lib" / "libc10_cuda.so").unlink()
            proc = repair(wfx.SGL_WHEEL, "--torch", broken_torch, "-o", tmp / "out", check_status=1)
            self.assertIn(f"does not load: {SM100}: libc10_cuda.so: cannot open shared object file", proc.stdout)
            self.assertIn("wrote (findings left)", proc.stdout)
            doc = wfx.run_json("repair", wfx.SGL_WHEEL, "--torch", broken_torch, "-o", tmp / "json", check_status=1)
            statuses = {r["member"]: r["status"] for r in doc["wheels"][0]["load_test"]["results"]}
            self.assertEqual(statuses, {SM90: "failed", SM100: "failed"})

    def test_skipped_for_an_index_and_on_request(self):
        with wfx.TempDir() as tmp:
            index = tmp / "torch-2.10.index"
            wfx.run("index", TORCH_210, "-o", index, check_status=0)
            proc = repair(wfx.SGL_WHEEL, "--torch", index, "-o", tmp / "a", check_status=0)
            self.assertIn("load test skipped: --torch is not an installed torch directory", proc.stdout)
            proc = repair(wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", tmp / "b", "--no-load-test", check_status=0)
            self.assertIn("load test skipped: load test not asked for", proc.stdout)


class FieldCase(unittest.TestCase):
    """sgl-kernel 0.3.21: the sm100 build linked against libcudart.so.12."""

    def test_cudart_12_is_left_written_or_refused_with_strict(self):
        with wfx.TempDir() as tmp:
            wfx.run("relink", wfx.SGL_WHEEL, "-o", tmp / "cu12", "--replace-needed", "libcudart.so.13=libcudart.so.12",
                    "--only", "sgl_kernel/sm100/*", check_status=0)
            broken = tmp / "cu12" / wfx.SGL_WHEEL.name
            proc = repair(broken, "--torch", TORCH_210, "-o", tmp / "out", "--target", "cuda13-blackwell",
                          check_status=1)
            self.assertIn("left ", proc.stdout)
            self.assertIn("sgl_kernel/sm100/common_ops.abi3.so needs libcudart.so.12; cuda13-blackwell needs CUDA "
                          "runtime 13 (libcudart.so.13)", proc.stdout)
            self.assertIn("wrote (findings left)", proc.stdout)
            self.assertTrue((tmp / "out" / REPAIRED_NAME).exists())
            proc = repair(broken, "--torch", TORCH_210, "-o", tmp / "strict", "--target", "cuda13-blackwell",
                          "--strict", check_status=1)
            self.assertIn("not written (--strict", proc.stdout)
            self.assertFalse((tmp / "strict").exists() and any((tmp / "strict").iterdir()))


class RenamedWithoutWheelTags(unittest.TestCase):
    """sgl-kernel 0.3.21 on PyPI: renamed to manylinux2014 while WHEEL still says linux_x86_64."""

    def test_tag_lines_are_rewritten_not_refused(self):
        wheel_file = "sgl_kernel-0.3.21+cu130.dist-info/WHEEL"
        def edit(name, data):
            return data.replace(b"manylinux2014_x86_64", b"linux_x86_64") if name == wheel_file else data
        def fix_record(text):
            with zipfile.ZipFile(wfx.SGL_WHEEL) as zf:
                new = zf.read(wheel_file).replace(b"manylinux2014_x86_64", b"linux_x86_64")
            lines = [f"{wheel_file},{wfx.record_hash(new)},{len(new)}" if l.startswith(wheel_file + ",") else l
                     for l in text.splitlines()]
            return "\n".join(lines) + "\n"
        with wfx.TempDir() as tmp:
            renamed = wfx.rewrite_wheel(wfx.SGL_WHEEL, tmp / wfx.SGL_WHEEL.name, edit_member=edit, record_edit=fix_record)
            wfx.run("verify", renamed, check_status=1)
            proc = repair(renamed, "--torch", TORCH_210, "-o", tmp / "out", check_status=0)
            self.assertIn("WHEEL's Tag lines disagree with the file name: rewritten", proc.stdout)
            output = tmp / "out" / REPAIRED_NAME
            wfx.run("verify", output, check_status=0)
            with zipfile.ZipFile(output) as zf:
                tags = [l for l in zf.read("sgl_kernel-0.3.21+cu130.torch2.10.dist-info/WHEEL").decode().splitlines()
                        if l.startswith("Tag:")]
            self.assertEqual(tags, ["Tag: cp310-abi3-manylinux_2_34_x86_64"])


class ManyWheels(unittest.TestCase):
    def test_parallel_gives_the_same_bytes_as_one_at_a_time(self):
        wheels = [wfx.SGL_WHEEL, *sorted(wfx.SAMPLES.glob("plainext-*.whl")), *sorted(wfx.SAMPLES.glob("purepy-*.whl"))]
        self.assertEqual(len(wheels), 3)
        env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
        with wfx.TempDir() as tmp:
            hashes = {}
            for jobs in ("1", "2"):
                proc = subprocess.run([wfx.WHEELFIX, "repair", *wheels, "--torch", TORCH_210, "-o", tmp / jobs,
                                       "-j", jobs], capture_output=True, text=True, env=env)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                hashes[jobs] = {p.name: sha256(p) for p in (tmp / jobs).iterdir()}
            self.assertEqual(len(hashes["1"]), 3)
            self.assertEqual(hashes["1"], hashes["2"])

    def test_one_bad_wheel_does_not_stop_the_others(self):
        with wfx.TempDir() as tmp:
            bad = tmp / "bad-1.0-py3-none-any.whl"
            bad.write_bytes(b"PK\x03\x04 not really a zip")
            proc = repair(bad, wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", tmp / "out", check_status=2)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn(str(bad), proc.stderr)
            self.assertTrue((tmp / "out" / REPAIRED_NAME).exists())


if __name__ == "__main__":
    unittest.main(verbosity=2)
