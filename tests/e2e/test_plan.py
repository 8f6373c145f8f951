"""The plan engine (include/wheelfix/repair/plan.hpp) seen from the commands that run
on it: relink, shim, retag and repair build a plan and one executor runs it. `--dry-run`
prints that plan and writes nothing, and the plan it prints is the one the real run
carries out: the same members edited with the same changes, the same member added,
the same .dist-info rename and replaced files, the same output name. Real sample
wheels, the real binary; the written wheels are judged by reading them back
(zipfile, RECORD) and by `wheelfix verify`."""
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

WHEEL = wfx.SGL_WHEEL
TORCH_211 = wfx.SAMPLES / "torch-2.11.0"
DIST_INFO = "sgl_kernel-0.3.21+cu130.dist-info"


def plan_lines(stdout):
    """The plan block of the text output: the lines after 'plan: ...' up to 'would write'
    (repair indents its verdict line)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("plan: "))
    end = next(i for i, line in enumerate(lines) if line.lstrip().startswith("would write "))
    return lines[start:end]


def edited_members(plan):
    return [line.split(None, 2)[2] for line in plan if line.startswith("  edit ELF  ")]


def changed_by_member(document):
    return {change["member"]: change["changes"] for change in document["changed"]}


class DryRunWritesNothing(unittest.TestCase):
    def dry_and_real(self, *command):
        """(dry-run JSON, dry-run text, real-run JSON, output dir) of one command."""
        with wfx.TempDir() as tmp:
            out = tmp / "out"
            dry_text = wfx.run(*command, "-o", out, "--dry-run", check_status=0).stdout
            dry = wfx.run_json(*command, "-o", out, "--dry-run")
            self.assertFalse(out.exists(), "a dry run created the output directory")
            real = wfx.run_json(*command, "-o", out)
            written = sorted(out.iterdir())
            self.assertEqual(len(written), 1)
            self.assertEqual(wfx.run("verify", written[0]).returncode, 0)
            with zipfile.ZipFile(written[0]) as archive:
                names = archive.namelist()
            return dry, dry_text, real, written[0], names

    def test_relink_plan_is_what_the_run_does(self):
        dry, text, real, written, _ = self.dry_and_real("relink", WHEEL, "--add-rpath", "{root}/torch/lib")
        self.assertTrue(dry["dry_run"])
        self.assertFalse(real["dry_run"])
        self.assertEqual(dry["output"], real["output"])
        self.assertEqual(changed_by_member(dry), changed_by_member(real))
        self.assertEqual(sorted(changed_by_member(real)),
                         ["sgl_kernel/sm100/common_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so"])
        plan = plan_lines(text)
        self.assertEqual(sorted(edited_members(plan)), sorted(changed_by_member(real)))
        self.assertIn("$ORIGIN/../../torch/lib", "\n".join(plan))
        self.assertTrue(any(line.startswith("  copy raw  ") for line in plan), plan)
        self.assertEqual(written.name, WHEEL.name)

    def test_shim_plan_adds_the_library_the_run_adds(self):
        dry, text, real, written, names = self.dry_and_real("shim", WHEEL, "--torch", TORCH_211)
        self.assertTrue(dry["dry_run"])
        self.assertIsNotNone(real["shim"])
        self.assertEqual(dry["shim"]["member"], real["shim"]["member"])
        self.assertIn(real["shim"]["member"], names)
        self.assertEqual(changed_by_member(dry).keys(), changed_by_member(real).keys())
        plan = plan_lines(text)
        added = [line for line in plan if line.startswith("  add       ")]
        self.assertEqual(len(added), 1, plan)
        self.assertIn(real["shim"]["member"], added[0])
        self.assertEqual(sorted(edited_members(plan)), sorted(changed_by_member(real)))

    def test_retag_plan_renames_and_replaces_what_the_run_does(self):
        dry, text, real, written, names = self.dry_and_real("retag", WHEEL, "--torch", "2.10")
        self.assertTrue(dry["dry_run"])
        self.assertEqual(dry["output"], real["output"])
        self.assertEqual(Path(real["output"]).name, written.name)
        plan = plan_lines(text)
        new_dist_info = real["dist_info"]["after"]
        self.assertIn(f"  rename    {DIST_INFO} -> {new_dist_info}", plan)
        self.assertIn(f"  replace   {new_dist_info}/METADATA", plan)
        self.assertEqual(edited_members(plan), [])
        self.assertIn(f"{new_dist_info}/METADATA", names)
        self.assertFalse(any(name.startswith(DIST_INFO + "/") for name in names))

    def test_repair_plan_is_what_the_run_does(self):
        """repair on the executor: the shim added, both extensions edited, the
        dist-info renamed, the output named after the read (the platform tag comes
        from the binaries) — the dry run's plan is what the real run writes."""
        dry, text, real, written, names = self.dry_and_real(
            "repair", WHEEL, "--torch", TORCH_211 / "torch", "--target", "cuda13-blackwell", "--no-load-test")
        self.assertTrue(dry["dry_run"])
        dry_wheel, real_wheel = dry["wheels"][0], real["wheels"][0]
        self.assertFalse(dry_wheel["written"])
        self.assertTrue(real_wheel["written"])
        self.assertEqual(dry_wheel["output"], real_wheel["output"])
        self.assertEqual(Path(real_wheel["output"]).name, written.name)
        self.assertIn("manylinux_2_34_x86_64", written.name)
        relinked = {change["member"]: change["changes"] for change in real_wheel["done"]["relinked"]}
        self.assertEqual({change["member"]: change["changes"] for change in dry_wheel["done"]["relinked"]}, relinked)
        self.assertEqual(sorted(relinked), ["sgl_kernel/sm100/common_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so"])
        plan = plan_lines(text)
        self.assertEqual(plan[0].split(" -> ")[1], real_wheel["output"])
        self.assertEqual(sorted(edited_members(plan)), sorted(relinked))
        shim = real_wheel["done"]["shim"]["member"]
        self.assertIn(shim, names)
        self.assertTrue(any(line.startswith("  add       " + shim) for line in plan), plan)
        new_dist_info = Path(real_wheel["output"]).name.split("-cp310")[0] + ".dist-info"
        self.assertIn(f"  rename    {DIST_INFO} -> {new_dist_info}", plan)
        self.assertIn(f"  replace   {new_dist_info}/METADATA", plan)
        self.assertIn(f"{new_dist_info}/METADATA", names)


class DryRunRefusals(unittest.TestCase):
    def test_an_existing_output_is_not_refused_and_not_touched(self):
        with wfx.TempDir() as tmp:
            existing = tmp / WHEEL.name
            existing.write_bytes(b"not a wheel")
            wfx.run("relink", WHEEL, "-o", tmp, "--add-rpath", "{root}/x", "--dry-run", check_status=0)
            self.assertEqual(existing.read_bytes(), b"not a wheel")
            proc = wfx.run("relink", WHEEL, "-o", tmp, "--add-rpath", "{root}/x", check_status=2)
            self.assertIn("exists", proc.stderr)

    def test_output_over_the_input_is_refused_in_a_dry_run_too(self):
        proc = wfx.run("relink", WHEEL, "-o", WHEEL.parent, "--add-rpath", "{root}/x", "--dry-run", check_status=2)
        self.assertIn("overwrite the input", proc.stderr)

    def test_a_tampered_wheel_is_refused_before_any_plan_is_printed(self):
        with wfx.TempDir() as tmp:
            tampered = tmp / "in" / WHEEL.name
            tampered.parent.mkdir()

            def flip(name, data):
                return data[:-1] + bytes([data[-1] ^ 1]) if name.endswith("sm90/common_ops.abi3.so") else data

            wfx.rewrite_wheel(WHEEL, tampered, edit_member=flip)
            proc = wfx.run("relink", tampered, "-o", tmp / "out", "--add-rpath", "{root}/x", "--dry-run", check_status=2)
            self.assertIn("RECORD", proc.stderr)
            self.assertNotIn("plan:", proc.stdout)

    def test_a_bare_elf_file_has_no_plan(self):
        with wfx.TempDir() as tmp:
            with zipfile.ZipFile(WHEEL) as archive:
                elf = tmp / "x.so"
                elf.write_bytes(archive.read("sgl_kernel/sm90/common_ops.abi3.so"))
            proc = wfx.run("relink", elf, "-o", tmp / "y.so", "--add-rpath", "$ORIGIN", "--dry-run", check_status=2)
            self.assertIn("--dry-run", proc.stderr)
            self.assertFalse((tmp / "y.so").exists())


if __name__ == "__main__":
    unittest.main()
