"""Target profiles end to end: `inspect --target` on the sample sgl-kernel wheel
(sm90/ and sm100/ variants of one module), on the field situation of sgl-kernel
0.3.21 (its sm100 build linked libcudart.so.12, made here with `relink
--replace-needed`), on a wheel whose RUNPATH reaches the pip layout, with user
profile files, and the musllinux tags of auditwheel's real musl wheels."""
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

MODULE = "sgl_kernel/{sm100,sm90}/common_ops.abi3.so"
SM100 = "sgl_kernel/sm100/common_ops.abi3.so"
SM90 = "sgl_kernel/sm90/common_ops.abi3.so"
CU13_RPATH = "{root}/nvidia/cu13/lib:{root}/torch/lib:{root}/nvidia/nccl/lib"


def target(wheel, profile, check_status):
    """The inspect JSON of one wheel judged against `profile`."""
    doc = wfx.run_json("inspect", wheel, "--target", profile, check_status=check_status)
    return doc["inputs"][0]


def kinds(entry):
    return [finding["kind"] for finding in entry["target"]["findings"]]


def relink(out, *args):
    wfx.run("relink", wfx.SGL_WHEEL, "-o", out, *args, check_status=0)
    return Path(out) / wfx.SGL_WHEEL.name


def readelf_needed(wheel, member, tmp):
    return wfx.member_dynamic(wheel, member, tmp)["needed"]


class SampleWheel(unittest.TestCase):
    def test_modules_view_groups_the_sm90_and_sm100_variants(self):
        doc = wfx.run_json("inspect", wfx.SGL_WHEEL, check_status=0)["inputs"][0]
        self.assertNotIn("target", doc)
        [module] = doc["modules"]
        self.assertEqual(module["name"], MODULE)
        self.assertEqual(sorted(module["members"]), [SM100, SM90])
        rows = {row["sm"]: row for row in module["blackwell"]}
        self.assertEqual(rows[100]["via"], "cubin sm_100a")
        self.assertEqual(rows[100]["member"], SM100)
        self.assertFalse(rows[103]["runs"])
        self.assertEqual(rows[121]["via"], "PTX compute_120 (JIT)")
        text = wfx.run("inspect", wfx.SGL_WHEEL, check_status=0).stdout
        self.assertIn(f"  module      {MODULE}  (2 variants)\n", text)
        self.assertIn("sm_100 yes (sm100/: cubin sm_100a); sm_103 NO;", text)

    def test_cuda13_blackwell_covers_the_sms_and_flags_tag_and_runpath(self):
        entry = target(wfx.SGL_WHEEL, "cuda13-blackwell", 1)
        self.assertEqual(entry["target"]["profile"], "cuda13-blackwell")
        self.assertEqual(entry["target"]["source"], "built-in")
        self.assertEqual(kinds(entry), ["platform", "runpath", "runpath"])
        platform = entry["target"]["findings"][0]
        self.assertEqual(platform["member"], "manylinux2014_x86_64")
        self.assertIn("older than manylinux_2_28", platform["message"])
        self.assertIn("repair sets manylinux_2_34_x86_64", platform["message"])
        self.assertTrue(all(f["repair_fixes"] for f in entry["target"]["findings"]))
        runpath = entry["target"]["findings"][1]
        self.assertEqual(runpath["member"], SM100)
        self.assertIn("$ORIGIN/../../nvidia/cu13/lib, $ORIGIN/../../torch/lib, $ORIGIN/../../nvidia/nccl/lib",
                      runpath["message"])
        text = wfx.run("inspect", wfx.SGL_WHEEL, "--target", "cuda13-blackwell", check_status=1).stdout
        self.assertIn("\ntarget cuda13-blackwell (built-in): 3 finding(s), 3 fixed by repair\n", text)

    def test_cuda13_blackwell_all_misses_sm_103(self):
        entry = target(wfx.SGL_WHEEL, "cuda13-blackwell-all", 1)
        [sm] = [f for f in entry["target"]["findings"] if f["kind"] == "sm"]
        self.assertEqual(sm["member"], MODULE)
        self.assertEqual(
            sm["message"],
            f"{MODULE} has no code for sm_103 that cuda13-blackwell-all needs (has: cubin sm_100a, cubin sm_120a, "
            "PTX compute_120 (JIT) in sm100/; cubin sm_90a in sm90/)")
        self.assertFalse(sm["repair_fixes"])

    def test_cuda12_hopper_wants_runtime_12(self):
        entry = target(wfx.SGL_WHEEL, "cuda12-hopper", 1)
        self.assertEqual(kinds(entry), ["cudart", "cudart", "platform", "runpath", "runpath"])
        self.assertIn("$ORIGIN/../../nvidia/cuda_runtime/lib", entry["target"]["findings"][3]["message"])

    def test_coverage_view_names_the_profiles_own_sms(self):
        """The per-module and per-variant view for the profile's SMs, not only Blackwell's:
        cuda12-hopper's sm_90 is served by the sm90/ variant alone."""
        coverage = target(wfx.SGL_WHEEL, "cuda12-hopper", 1)["target"]["coverage"]
        self.assertEqual([(row["name"], row["module"]) for row in coverage],
                         [(MODULE, True), (SM100, False), (SM90, False)])
        self.assertEqual([[(s["sm"], s["runs"], s["member"]) for s in row["sms"]] for row in coverage],
                         [[(90, True, SM90)], [(90, False, None)], [(90, True, SM90)]])
        self.assertEqual(coverage[0]["sms"][0]["via"], "cubin sm_90a")
        text = wfx.run("inspect", wfx.SGL_WHEEL, "--target", "cuda12-hopper", check_status=1).stdout
        self.assertIn(f"  covers      {MODULE}: sm_90 yes (sm90/: cubin sm_90a)\n"
                      f"                {SM100}: sm_90 NO\n"
                      f"                {SM90}: sm_90 yes (cubin sm_90a)\n", text)
        blackwell = target(wfx.SGL_WHEEL, "cuda13-blackwell", 1)["target"]["coverage"]
        self.assertEqual([s["sm"] for s in blackwell[0]["sms"]], [100, 120])


class FieldSituation(unittest.TestCase):
    def test_sm100_linked_against_cudart_12_fails_cuda13_blackwell(self):
        with wfx.TempDir() as tmp:
            wheel = relink(tmp, "--replace-needed", "libcudart.so.13=libcudart.so.12", "--only", "sgl_kernel/sm100/*")
            self.assertIn("libcudart.so.12", readelf_needed(wheel, SM100, tmp))
            self.assertIn("libcudart.so.13", readelf_needed(wheel, SM90, tmp))
            entry = target(wheel, "cuda13-blackwell", 1)
            [cudart] = [f for f in entry["target"]["findings"] if f["kind"] == "cudart"]
            self.assertEqual(cudart["member"], SM100)
            self.assertEqual(cudart["message"], f"{SM100} needs libcudart.so.12; cuda13-blackwell needs CUDA runtime "
                                                "13 (libcudart.so.13)")
            self.assertFalse(cudart["repair_fixes"])
            text = wfx.run("inspect", wheel, "--target", "cuda13-blackwell", check_status=1).stdout
            self.assertIn(f"  cudart      {SM100} needs libcudart.so.12; cuda13-blackwell needs CUDA runtime 13 "
                          "(libcudart.so.13)\n", text)

    def test_runpath_into_the_pip_layout_leaves_only_the_tag(self):
        with wfx.TempDir() as tmp:
            wheel = relink(tmp, "--drop-absolute-rpaths", "--add-rpath", CU13_RPATH)
            entry = target(wheel, "cuda13-blackwell", 1)
            self.assertEqual(kinds(entry), ["platform"])

    def test_bare_extension_file(self):
        with wfx.TempDir() as tmp:
            path = Path(tmp) / "common_ops.abi3.so"
            with zipfile.ZipFile(wfx.SGL_WHEEL) as archive:
                path.write_bytes(archive.read(SM100))
            doc = wfx.run_json("inspect", path, "--target", "cuda13-blackwell-all", check_status=1)
            findings = doc["inputs"][0]["target"]["findings"]
            self.assertEqual([f["kind"] for f in findings], ["sm", "runpath"])
            self.assertIn("has no code for sm_103 ", findings[0]["message"])
            self.assertIn("does not reach $ORIGIN/nvidia/cu13/lib,", findings[1]["message"])


class UserProfiles(unittest.TestCase):
    def test_profile_file_is_used_and_named_after_the_file(self):
        with wfx.TempDir() as tmp:
            path = Path(tmp) / "hopper13.profile"
            path.write_text("# H100 with CUDA 13\ncuda-runtime-major 13\nsm 90\n")
            entry = target(wfx.SGL_WHEEL, str(path), 1)
            self.assertEqual(entry["target"]["profile"], "hopper13")
            # No min-platform, no rpath: only the tag that promises glibc 2.17 while the binaries need 2.34.
            [platform] = entry["target"]["findings"]
            self.assertEqual(platform["message"], "tag manylinux2014_x86_64: the binaries need GLIBC_2.34; repair "
                                                  "sets manylinux_2_34_x86_64")
            so = Path(tmp) / "common_ops.abi3.so"
            with zipfile.ZipFile(wfx.SGL_WHEEL) as archive:
                so.write_bytes(archive.read(SM90))
            text = wfx.run("inspect", so, "--target", path, check_status=0).stdout
            self.assertIn(f"\ntarget hopper13 ({path}): no findings\n", text)

    def test_bad_profile_file_is_exit_2_with_file_and_line(self):
        with wfx.TempDir() as tmp:
            path = Path(tmp) / "bad.profile"
            path.write_text("sm 100\nsm sm_120\n")
            proc = wfx.run("inspect", wfx.SGL_WHEEL, "--target", path, check_status=2)
            self.assertEqual(proc.stdout, "")
            self.assertEqual(proc.stderr,
                             f"wheelfix: {path}:2: 'sm_120' is not a compute capability (write 120 for sm_120)\n")

    def test_unknown_profile_lists_the_built_ins(self):
        proc = wfx.run("inspect", wfx.SGL_WHEEL, "--target", "cuda14", check_status=2)
        self.assertEqual(proc.stderr, "wheelfix: cuda14: no such target profile; built-in profiles: cuda12-hopper, "
                                      "cuda13-blackwell, cuda13-blackwell-all (or give a profile file)\n")


class Musllinux(unittest.TestCase):
    def test_auditwheel_musl_wheels_get_musllinux_tags(self):
        wheels = sorted((wfx.AUDITWHEEL / "musllinux_1_2").glob("*.whl"))
        self.assertGreaterEqual(len(wheels), 9)
        for wheel in wheels:
            with self.subTest(wheel=wheel.name):
                doc = wfx.run_json("inspect", wheel)["inputs"][0]
                self.assertTrue(doc["needs"]["musl"])
                self.assertRegex(doc["honest_tag"], r"^musllinux_1_[12]$")
        # CPython 3.10 on Alpine names extensions *-linux-gnu.so; NEEDED is empty.
        doc = wfx.run_json("inspect", wfx.AUDITWHEEL / "musllinux_1_2" /
                           "testsimple-0.0.1-cp310-cp310-linux_x86_64.whl")["inputs"][0]
        self.assertEqual(doc["elf_files"][0]["name"], "testsimple.cpython-310-x86_64-linux-gnu.so")
        self.assertEqual(doc["honest_tag"], "musllinux_1_1")
        # auditwheel's musllinux policy has riscv64 from musllinux_1_1 on (auditwheel #526);
        # loongarch64 only from 1_2 (unit-tested: no such wheel in the test data).
        doc = wfx.run_json("inspect", wfx.AUDITWHEEL / "musllinux_1_2" /
                           "testsimple-0.0.1-cp312-cp312-linux_riscv64.whl")["inputs"][0]
        self.assertEqual(doc["honest_tag"], "musllinux_1_1")

    def test_glibc_twins_stay_manylinux(self):
        for wheel in sorted((wfx.AUDITWHEEL / "glibc").glob("*.whl")):
            with self.subTest(wheel=wheel.name):
                doc = wfx.run_json("inspect", wheel)["inputs"][0]
                self.assertFalse(doc["needs"]["musl"])


if __name__ == "__main__":
    unittest.main()
