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
from test_shim import (BLAS_HANDLE, CUDART, FAKE_OLD_TORCH, OLD_CHECK, REMOVED, SM90, SM100, compile_c,  # noqa: E402
                       extract_member, layout, make_wheel, python_call, shim_member_of, trace_lines)

CALL_OLD_CHECK = r"""
void old_check(int, const char*, const char*, int, _Bool) __asm__("%s");
void call_check(void) { old_check(0, "ops.c", "call_check", 7, 1); }
""" % OLD_CHECK
CALL_REMOVED = r"""
void removed(int) __asm__("%s");
int main(void) { removed(1); return 0; }
""" % REMOVED

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


def assert_unpacks(wheel):
    """`python3 -m wheel unpack` re-verifies every RECORD hash and size; and our verify agrees."""
    with wfx.TempDir() as tmp:
        proc = subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", tmp, wheel], capture_output=True, text=True)
        assert proc.returncode == 0, f"wheel unpack {wheel}: {proc.stderr}"
    wfx.run("verify", wheel, check_status=0)


def sample_members():
    """The sample wheel's members outside its .dist-info, {name: bytes}."""
    with zipfile.ZipFile(wfx.SGL_WHEEL) as zf:
        return {n: zf.read(n) for n in zf.namelist() if ".dist-info/" not in n and not n.endswith("/")}


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

    def test_a_splice_that_does_not_decode_to_its_edit_is_refused_and_nothing_written(self):
        """issue 19: the output is no longer read back, so the splice proves its own stream
        (zip/splice.hpp). A bit flipped in a re-deflated region (WHEELFIX_TEST_CORRUPT_SPLICE)
        is refused before anything is written."""
        out = self.tmp / "corrupt"
        proc = subprocess.run([wfx.WHEELFIX, "repair", wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", out,
                               "--target", "cuda13-blackwell"], capture_output=True, text=True,
                              env={**os.environ, "WHEELFIX_TEST_CORRUPT_SPLICE": "1"})
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("internal error: plan_splice: the ", proc.stderr)
        self.assertIn("inflates to other bytes than", proc.stderr)
        self.assertFalse(out.exists() and any(out.iterdir()), list(out.iterdir()) if out.exists() else None)

    def test_dry_run_writes_nothing(self):
        proc = repair(wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / "dry", "--target", "cuda13-blackwell",
                      "--dry-run", check_status=0)
        self.assertIn("would write", proc.stdout)
        self.assertIn(REPAIRED_NAME, proc.stdout)
        self.assertFalse((self.tmp / "dry").exists() and any((self.tmp / "dry").iterdir()))


class LoadTest(unittest.TestCase):
    def test_an_extension_that_does_not_load_is_named_and_not_written(self):
        """A wheel that does not load is a refusal (issue 16): named, exit 1, nothing
        left in the output directory (it was load-tested where it was staged)."""
        with wfx.TempDir() as tmp:
            broken_torch = tmp / "torch-2.10.0" / "torch"
            shutil.copytree(TORCH_210, broken_torch)
            (broken_torch / "lib" / "libc10_cuda.so").unlink()
            proc = repair(wfx.SGL_WHEEL, "--torch", broken_torch, "-o", tmp / "out", check_status=1)
            self.assertIn(f"does not load: {SM100}: libc10_cuda.so: cannot open shared object file", proc.stdout)
            self.assertIn("not written (does not load)", proc.stdout)
            self.assertEqual(list((tmp / "out").iterdir()), [])
            doc = wfx.run_json("repair", wfx.SGL_WHEEL, "--torch", broken_torch, "-o", tmp / "json", check_status=1)
            statuses = {r["member"]: r["status"] for r in doc["wheels"][0]["load_test"]["results"]}
            self.assertEqual(statuses, {SM90: "failed", SM100: "failed"})
            self.assertFalse(doc["wheels"][0]["written"])

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
            self.assertIn("wrote (findings left; not proven: 1 member not loaded", proc.stdout)
            self.assertIn("not proven sgl_kernel/sm100/common_ops.abi3.so: libcudart.so.12 is neither", proc.stdout)
            self.assertTrue((tmp / "out" / REPAIRED_NAME).exists())
            assert_unpacks(tmp / "out" / REPAIRED_NAME)
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
            assert_unpacks(output)

            # retag rewrites them the same way, from the file name (pip installs by the name)
            proc = wfx.run("retag", renamed, "--torch", "2.10", "-o", tmp / "retag", check_status=0)
            self.assertIn("tags       cp310-abi3-linux_x86_64 -> cp310-abi3-manylinux2014_x86_64", proc.stdout)
            retagged = tmp / "retag" / "sgl_kernel-0.3.21+cu130.torch2.10-cp310-abi3-manylinux2014_x86_64.whl"
            with zipfile.ZipFile(retagged) as zf:
                wheel_text = zf.read("sgl_kernel-0.3.21+cu130.torch2.10.dist-info/WHEEL").decode()
            self.assertEqual([l for l in wheel_text.splitlines() if l.startswith("Tag:")],
                             ["Tag: cp310-abi3-manylinux2014_x86_64"])
            assert_unpacks(retagged)
            # and with --platform, to that platform
            wfx.run("retag", renamed, "--torch", "2.10", "--platform", "manylinux_2_28_x86_64", "-o", tmp / "p",
                    check_status=0)
            assert_unpacks(tmp / "p" / "sgl_kernel-0.3.21+cu130.torch2.10-cp310-abi3-manylinux_2_28_x86_64.whl")


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
            for output in (tmp / "1").iterdir():
                assert_unpacks(output)

    def test_one_bad_wheel_does_not_stop_the_others(self):
        with wfx.TempDir() as tmp:
            bad = tmp / "bad-1.0-py3-none-any.whl"
            bad.write_bytes(b"PK\x03\x04 not really a zip")
            proc = repair(bad, wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", tmp / "out", check_status=2)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn(str(bad), proc.stderr)
            self.assertTrue((tmp / "out" / REPAIRED_NAME).exists())


class WheelsWithoutTorch(unittest.TestCase):
    """A wheel none of whose extensions uses torch is not retagged for it: its version
    and requirements stay; it gets only the platform and relink fixes."""

    def test_version_and_requirements_kept(self):
        wheels = [*sorted(wfx.SAMPLES.glob("plainext-*.whl")), *sorted(wfx.SAMPLES.glob("purepy-*.whl"))]
        with wfx.TempDir() as tmp:
            doc = wfx.run_json("repair", *wheels, "--torch", TORCH_210, "-o", tmp / "out", check_status=0)
            self.assertEqual([w["uses_torch"] for w in doc["wheels"]], [False, False])
            for report, wheel in zip(doc["wheels"], wheels):
                self.assertEqual(report["done"]["version"]["before"], report["done"]["version"]["after"])
                self.assertIsNone(report["done"]["torch_pin"])
                self.assertEqual(metadata_of(report["output"]), metadata_of(wheel))
                assert_unpacks(report["output"])
            proc = repair(wheels[1], "--torch", TORCH_210, "-o", tmp / "text", check_status=0)
            self.assertIn("version 1.0.0 kept: no extension links or imports torch", proc.stdout)
            self.assertIn("load test skipped: no extension in the wheel", proc.stdout)
            doc = wfx.run_json("repair", wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", tmp / "sgl", check_status=0)
            self.assertTrue(doc["wheels"][0]["uses_torch"])


class ProfileFixes(unittest.TestCase):
    def test_replace_needed_from_a_user_profile(self):
        """A profile's replace-needed is applied by repair (readelf reads the result)."""
        with wfx.TempDir() as tmp:
            wfx.run("relink", wfx.SGL_WHEEL, "-o", tmp / "cu12", "--replace-needed", "libcudart.so.13=libcudart.so.12",
                    "--only", "sgl_kernel/sm100/*", check_status=0)
            profile = tmp / "remap.profile"
            profile.write_text("description  cuda13-blackwell, and .12 builds renamed to .13\n"
                               "cuda-runtime-major  13\nsm  100\nsm  120\n"
                               "rpath  {root}/nvidia/cu13/lib\nrpath  {root}/torch/lib\nrpath  {root}/nvidia/nccl/lib\n"
                               "min-platform  manylinux_2_28\nreplace-needed  libcudart.so.12 libcudart.so.13\n")
            proc = repair(tmp / "cu12" / wfx.SGL_WHEEL.name, "--torch", TORCH_210, "-o", tmp / "out", "--target",
                          profile, check_status=0)
            self.assertNotIn("left ", proc.stdout)
            output = tmp / "out" / REPAIRED_NAME
            assert_unpacks(output)
            dynamic = wfx.member_dynamic(output, SM100, tmp / "x")
            self.assertIn("libcudart.so.13", dynamic["needed"])
            self.assertNotIn("libcudart.so.12", str(dynamic))

    def test_root_paths_follow_each_member_depth(self):
        """{root} is expanded for each extension's own depth: one level and three levels down."""
        members = sample_members()
        files = {"deep/common_ops.abi3.so": members[SM90], "deep/a/b/common_ops.abi3.so": members[SM100]}
        with wfx.TempDir() as tmp:
            wheel = make_wheel(tmp, "deep", "cp310-abi3-manylinux2014_x86_64", files)
            # the sm90 build one level down is not a variant of the sm100 one (not siblings): exit 1 for it
            proc = repair(wheel, "--torch", TORCH_210, "-o", tmp / "out", "--target", "cuda13-blackwell",
                          check_status=1)
            self.assertIn("left  deep/common_ops.abi3.so has no code for sm_100, sm_120", proc.stdout)
            output = next((tmp / "out").iterdir())
            assert_unpacks(output)
            expected = {"deep/common_ops.abi3.so": "$ORIGIN/../torch/lib",
                        "deep/a/b/common_ops.abi3.so": "$ORIGIN/../../../torch/lib"}
            for member, torch_lib in expected.items():
                dynamic = wfx.member_dynamic(output, member, tmp / "x")
                line = dynamic["runpath"] or dynamic["rpath"]
                entries = line.split(":")
                self.assertIn(torch_lib, entries, line)
                self.assertIn(torch_lib.replace("torch/lib", "nvidia/cu13/lib"), entries, line)
                self.assertFalse(any(e.startswith("/") for e in entries), line)
            if CUDART.exists():
                for member in expected:
                    self.assertIn(f"loads {member} (RTLD_NOW)", proc.stdout)

    def test_root_paths_of_a_platlib_member_count_from_where_pip_installs_it(self):
        """deep-1.0.data/platlib/deep/sm100/x.so installs as deep/sm100/x.so: {root} and the
        outside-the-wheel check count two levels, not four (issue 16), and the load test lays
        it out there."""
        member = "deep-1.0.data/platlib/deep/sm100/common_ops.abi3.so"
        with wfx.TempDir() as tmp:
            wheel = make_wheel(tmp, "deep", "cp310-abi3-manylinux2014_x86_64", {member: sample_members()[SM100]})
            proc = repair(wheel, "--torch", TORCH_210, "-o", tmp / "out", "--target", "cuda13-blackwell")
            self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
            self.assertNotIn("does not load", proc.stdout)
            output = next((tmp / "out").iterdir())
            line = (lambda d: d["runpath"] or d["rpath"])(wfx.member_dynamic(output, member, tmp / "x"))
            self.assertIn("$ORIGIN/../../torch/lib", line.split(":"), line)
            self.assertNotIn("$ORIGIN/../../../../torch/lib", line.split(":"), line)
            inspected = wfx.run("inspect", output, "--target", "cuda13-blackwell").stdout
            self.assertNotIn("RUNPATH does not reach", inspected)
            if CUDART.exists():
                self.assertIn(f"loads {member} (RTLD_NOW)", proc.stdout)

    def test_missing_sm_code_is_left_and_named(self):
        with wfx.TempDir() as tmp:
            proc = repair(wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", tmp / "out", "--target", "cuda13-blackwell-all",
                          "--dry-run", check_status=1)
            left = proc.stdout[proc.stdout.index("  left "):]
            self.assertIn("has no code for sm_103", left)
            self.assertIn("that cuda13-blackwell-all needs", left)
            self.assertFalse((tmp / "out").exists())


HELPER_C = "int helper_other(void) { return 1; }\n"
EXTENSION_C = "int helper_missing(void);\nint entry(void) { return helper_missing(); }\n"


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class StrictAfterWriting(unittest.TestCase):
    """What only the written wheel shows (here: the load test, an undefined symbol no
    library provides) makes --strict remove the output again; a wheel that does not
    load is not written without --strict either (exit 1, nothing in the directory)."""

    def test_a_wheel_that_does_not_load_is_not_left_behind(self):
        with wfx.TempDir() as tmp:
            (tmp / "helper.c").write_text(HELPER_C)
            (tmp / "ext.c").write_text(EXTENSION_C)
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", tmp / "libhelper.so", tmp / "helper.c"], check=True)
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", tmp / "ext.so", tmp / "ext.c", "-L", tmp, "-lhelper",
                            "-Wl,--no-as-needed", "-Wl,--disable-new-dtags",
                            "-Wl,-rpath,$ORIGIN:/home/builder/project/build/lib"], check=True)
            wheel = make_wheel(tmp, "brokenext", "cp310-abi3-linux_x86_64",
                               {"brokenext/ext.so": (tmp / "ext.so").read_bytes(),
                                "brokenext/libhelper.so": (tmp / "libhelper.so").read_bytes()})
            proc = repair(wheel, "--torch", TORCH_210, "-o", tmp / "strict", "--strict", check_status=1)
            self.assertIn("brokenext/ext.so", proc.stdout)
            self.assertIn("helper_missing", proc.stdout)
            self.assertIn("removed again (--strict, findings left once written)", proc.stdout)
            self.assertEqual(list((tmp / "strict").iterdir()), [])
            # Without --strict too: a wheel that does not load is a refusal, never published (issue 16).
            proc = repair(wheel, "--torch", TORCH_210, "-o", tmp / "plain", check_status=1)
            self.assertIn("not written (does not load)", proc.stdout)
            self.assertEqual(list((tmp / "plain").iterdir()), [])


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class ForesightMissed(unittest.TestCase):
    """repair (and shim) foresee the shim before the pass from the wheel's library
    members (repair/foresight.hpp) and edit the members that need it while they are read.
    An ELF member not named like a library (bin/tool) is not read then, yet the pass
    takes its imports into the shim: the foreseen shim is not the one written, so the
    library edited early must be edited again, to NEED the shim that is in the wheel."""

    def test_a_library_edited_with_a_wrong_foreseen_shim_is_edited_again(self):
        with wfx.TempDir() as tmp:
            (tmp / "old").mkdir()
            compile_c("gcc", FAKE_OLD_TORCH, tmp / "old" / "libc10_cuda.so", "-shared", "-Wl,-soname,libc10_cuda.so",
                      cwd=tmp / "old")
            calls = {"ops.so": (CALL_OLD_CHECK, "-shared"), "tool": (CALL_REMOVED, "-pie")}
            built = {name: compile_c("gcc", source, tmp / name, kind, f"-L{tmp / 'old'}", "-lc10_cuda", cwd=tmp)
                     for name, (source, kind) in calls.items()}
            wheel = make_wheel(tmp, "foresee", "cp310-abi3-linux_x86_64",
                               {"foresee/ops.so": built["ops.so"].read_bytes(),
                                "foresee/bin/tool": built["tool"].read_bytes()})
            for command, options in (("repair", ["--no-load-test"]), ("shim", [])):
                proc = wfx.run(command, wheel, "--torch", TORCH_210, "-o", tmp / command, *options)
                self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
                (output,) = (tmp / command).glob("*.whl")
                wfx.run("verify", output, check_status=0)
                shim = Path(shim_member_of(output)).name
                for member in ("foresee/ops.so", "foresee/bin/tool"):
                    with self.subTest(command=command, member=member):
                        needed = wfx.member_dynamic(output, member, tmp / command / "x")["needed"]
                        self.assertEqual([n for n in needed if n.startswith("libwheelfix_shim_")], [shim])
                # The shim has both: the forwarder ops.so needs and the stub the tool needs.
                library = extract_member(output, shim_member_of(output), tmp / command / "shim.so")
                symbols = subprocess.run(["readelf", "--dyn-syms", "-W", library], capture_output=True, text=True,
                                         check=True).stdout
                self.assertIn(OLD_CHECK, symbols)
                self.assertIn(REMOVED, symbols)


if __name__ == "__main__":
    unittest.main(verbosity=2)
