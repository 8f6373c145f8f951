"""retag end to end on the sample sgl-kernel wheel: the new file name, `wheelfix verify`,
`python3 -m wheel unpack`, `pip install` and the installed dist-info, a METADATA diff of
Version and the torch pin only, untouched members byte-identical as stored, --platform
with a compressed tag set, --fix-version, refusals, and --torch auto against the torch
stand-in trees and the real torch indexes (cross-checked with `wheelfix check`)."""
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

RETAGGED = "sgl_kernel-0.3.21+cu130.torch2.10-cp310-abi3-manylinux2014_x86_64.whl"
OLD_DIST_INFO = "sgl_kernel-0.3.21+cu130.dist-info"
STANDINS = [wfx.SAMPLES / f"torch-{v}" / "torch" for v in ("2.9.0", "2.10.0", "2.11.0")]
INDEXES = sorted((wfx.SOURCE_DIR / "data" / "torch-index").glob("*.index.gz"))


def retag(*args, check_status=0):
    return wfx.run("retag", *args, check_status=check_status)


def member_text(wheel, name):
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(name).decode()


def dist_info_of(wheel):
    with zipfile.ZipFile(wheel) as zf:
        return {n.split("/", 1)[0] for n in zf.namelist() if n.split("/", 1)[0].endswith(".dist-info")}.pop()


def pip_install(wheel, target):
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, text=True)


def check_loads(torch):
    """`wheelfix check`'s verdict for the sample against one torch."""
    proc = wfx.run("check", wfx.SGL_WHEEL, "--torch", torch)
    return proc.returncode == 0


class RetagOutput(unittest.TestCase):
    def test_new_name_verify_unpack_and_pip_install(self):
        with wfx.TempDir() as tmp:
            proc = retag(wfx.SGL_WHEEL, "--torch", "2.10", "-o", tmp / "out")
            out = tmp / "out" / RETAGGED
            self.assertTrue(out.exists(), proc.stdout)
            self.assertIn(f"wrote {out}", proc.stdout)
            self.assertIn("0.3.21+cu130 -> 0.3.21+cu130.torch2.10", proc.stdout)
            self.assertIn("torch -> torch>=2.10,<2.11", proc.stdout)
            self.assertEqual(list((tmp / "out").iterdir()), [out])
            wfx.run("verify", out, check_status=0)
            subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", str(tmp / "unpacked"), str(out)],
                           check=True, capture_output=True)
            pip_install(out, tmp / "site")
            dist_infos = sorted(p.name for p in (tmp / "site").glob("*.dist-info"))
            self.assertEqual(dist_infos, ["sgl_kernel-0.3.21+cu130.torch2.10.dist-info"])
            installed = (tmp / "site" / dist_infos[0] / "METADATA").read_text()
            self.assertIn("\nVersion: 0.3.21+cu130.torch2.10\n", installed)
            self.assertIn("\nRequires-Dist: torch>=2.10,<2.11\n", installed)

    def test_metadata_diff_is_version_and_pin_only(self):
        with wfx.TempDir() as tmp:
            retag(wfx.SGL_WHEEL, "--torch", "2.10", "-o", tmp)
            before = member_text(wfx.SGL_WHEEL, f"{OLD_DIST_INFO}/METADATA").splitlines(keepends=True)
            after = member_text(tmp / RETAGGED, "sgl_kernel-0.3.21+cu130.torch2.10.dist-info/METADATA")
            changed = [line for line in difflib.ndiff(before, after.splitlines(keepends=True)) if line[:1] in "+-"]
            self.assertEqual(sorted(changed), sorted(["- Version: 0.3.21+cu130\n", "+ Version: 0.3.21+cu130.torch2.10\n",
                                                      "- Requires-Dist: torch\n", "+ Requires-Dist: torch>=2.10,<2.11\n"]))
            # WHEEL is untouched without --platform: the same bytes, moved.
            self.assertEqual(member_text(wfx.SGL_WHEEL, f"{OLD_DIST_INFO}/WHEEL"),
                             member_text(tmp / RETAGGED, "sgl_kernel-0.3.21+cu130.torch2.10.dist-info/WHEEL"))

    def test_payload_members_are_copied_as_stored(self):
        with wfx.TempDir() as tmp:
            retag(wfx.SGL_WHEEL, "--torch", "2.10", "-o", tmp)
            out = tmp / RETAGGED
            with zipfile.ZipFile(wfx.SGL_WHEEL) as zin, zipfile.ZipFile(out) as zout:
                payload = [i for i in zin.infolist() if not i.filename.startswith(OLD_DIST_INFO)]
                self.assertEqual([i.filename for i in payload],
                                 [i.filename for i in zout.infolist()][:len(payload)])
                for info in payload:
                    new = zout.getinfo(info.filename)
                    self.assertEqual((new.CRC, new.compress_size, new.compress_type, new.external_attr),
                                     (info.CRC, info.compress_size, info.compress_type, info.external_attr))
                    self.assertEqual(wfx.raw_member(out, new), wfx.raw_member(wfx.SGL_WHEEL, info), info.filename)

    def test_json_document(self):
        with wfx.TempDir() as tmp:
            doc = wfx.run_json("retag", wfx.SGL_WHEEL, "--torch", "2.10.0", "-o", tmp, "--pin", "exact")
            self.assertEqual(doc["schema"], "wheelfix.retag/1")
            self.assertEqual(doc["output"], str(tmp / RETAGGED))
            self.assertEqual(doc["torch"], "2.10.0")
            self.assertEqual(doc["torch_from"], "option")
            self.assertEqual(doc["candidates"], [])
            self.assertEqual(doc["file_name"], {"before": wfx.SGL_WHEEL.name, "after": RETAGGED})
            self.assertEqual(doc["version"], {"before": "0.3.21+cu130", "after": "0.3.21+cu130.torch2.10"})
            self.assertEqual(doc["dist_info"]["after"], "sgl_kernel-0.3.21+cu130.torch2.10.dist-info")
            self.assertEqual(doc["pin"], {"mode": "exact", "specifier": "==2.10.0",
                                          "requirements": [{"before": "torch", "after": "torch==2.10.0"}]})
            self.assertIsNone(doc["fixed_file_name_version"])

    def test_platform_compressed_tag_set_cuda_and_spelling(self):
        with wfx.TempDir() as tmp:
            retag(wfx.SGL_WHEEL, "--torch", "2.10.0", "-o", tmp, "--cuda", "12.8", "--local-format", "compact",
                  "--platform", "manylinux_2_17_x86_64.manylinux2014_x86_64", "--pin", "none")
            name = "sgl_kernel-0.3.21+cu128.torch210-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
            out = tmp / name
            self.assertTrue(out.exists(), list(tmp.iterdir()))
            wfx.run("verify", out, check_status=0)
            wheel_file = member_text(out, f"{dist_info_of(out)}/WHEEL")
            self.assertEqual([l for l in wheel_file.splitlines() if l.startswith("Tag:")],
                             ["Tag: cp310-abi3-manylinux_2_17_x86_64", "Tag: cp310-abi3-manylinux2014_x86_64"])
            self.assertIn("\nRequires-Dist: torch\n", member_text(out, f"{dist_info_of(out)}/METADATA"))
            subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", str(tmp / "u"), str(out)],
                           check=True, capture_output=True)

    def test_a_kept_manylinux_tag_is_said_to_be_unchecked(self):
        """The sample claims manylinux2014 while its binaries need GLIBC_2.34: retag reads
        no binary, so it says the tag it keeps is unchecked (issue 16), and with
        --platform it has nothing to say."""
        with wfx.TempDir() as tmp:
            proc = retag(wfx.SGL_WHEEL, "--torch", "2.10.0", "-o", tmp / "a")
            self.assertIn("platform   manylinux2014_x86_64 kept, not checked against the binaries", proc.stdout)
            proc = retag(wfx.SGL_WHEEL, "--torch", "2.10.0", "-o", tmp / "b", "--platform", "manylinux_2_34_x86_64")
            self.assertNotIn("not checked against the binaries", proc.stdout)

    def test_same_input_gives_byte_identical_output(self):
        with wfx.TempDir() as tmp:
            env = dict(os.environ, SOURCE_DATE_EPOCH="315532800")
            for d in ("a", "b"):
                subprocess.run([wfx.WHEELFIX, "retag", str(wfx.SGL_WHEEL), "--torch", "2.10", "-o", str(tmp / d)],
                               check=True, env=env, capture_output=True)
            self.assertEqual((tmp / "a" / RETAGGED).read_bytes(), (tmp / "b" / RETAGGED).read_bytes())

    def test_output_does_not_depend_on_the_time_zone(self):
        """A member dated 02:30 on a US spring-forward day (an hour that does not exist
        in New York's local time) keeps its date, and the output is the same bytes in
        any TZ: the zip times are read as stored, never through the local zone."""
        with wfx.TempDir() as tmp:
            wheel = tmp / "tzdemo-1.0-py3-none-any.whl"
            members = {"tzdemo/__init__.py": b"x = 1\n", **wfx.dist_info_members("tzdemo", "1.0", "py3-none-any")}
            record = "".join(f"{n},{wfx.record_hash(hashlib.sha256(b))},{len(b)}\n" for n, b in members.items())
            members["tzdemo-1.0.dist-info/RECORD"] = (record + "tzdemo-1.0.dist-info/RECORD,,\n").encode()
            with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
                for name, data in members.items():
                    zf.writestr(zipfile.ZipInfo(name, date_time=(2023, 3, 12, 2, 30, 0)), data)
            outputs = {}
            for zone in ("UTC0", "EST5EDT,M3.2.0,M11.1.0"):
                env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
                subprocess.run([wfx.WHEELFIX, "retag", str(wheel), "--torch", "2.10", "-o", str(tmp / zone)],
                               check=True, env={**env, "TZ": zone}, capture_output=True)
                (output,) = (tmp / zone).iterdir()
                outputs[zone] = output.read_bytes()
                with zipfile.ZipFile(output) as zf:
                    self.assertEqual({i.date_time for i in zf.infolist()}, {(2023, 3, 12, 2, 30, 0)}, zone)
            self.assertEqual(outputs["UTC0"], outputs["EST5EDT,M3.2.0,M11.1.0"])

    def test_retagging_again_replaces_the_torch_segment(self):
        with wfx.TempDir() as tmp:
            retag(wfx.SGL_WHEEL, "--torch", "2.10", "-o", tmp / "a")
            retag(tmp / "a" / RETAGGED, "--torch", "2.11", "-o", tmp / "b")
            out = tmp / "b" / "sgl_kernel-0.3.21+cu130.torch2.11-cp310-abi3-manylinux2014_x86_64.whl"
            wfx.run("verify", out, check_status=0)
            self.assertIn("\nRequires-Dist: torch>=2.11,<2.12\n", member_text(out, f"{dist_info_of(out)}/METADATA"))


class FixVersionAndRefusals(unittest.TestCase):
    def renamed_copy(self, tmp):
        """What sgl-kernel's older rename script produced: a file name METADATA disagrees with."""
        path = tmp / "sgl_kernel-0.3.22+cu130-cp310-abi3-manylinux2014_x86_64.whl"
        shutil.copy(wfx.SGL_WHEEL, path)
        return path

    def test_version_disagreement_is_refused_then_fixed(self):
        with wfx.TempDir() as tmp:
            renamed = self.renamed_copy(tmp)
            proc = retag(renamed, "--torch", "2.10", "-o", tmp / "out", check_status=2)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            self.assertIn("file name says 0.3.22+cu130 but METADATA says Version 0.3.21+cu130", proc.stderr)
            self.assertIn("--fix-version", proc.stderr)
            self.assertFalse((tmp / "out").exists())

            proc = retag(renamed, "--torch", "2.10", "-o", tmp / "out", "--fix-version")
            self.assertIn("file name said 0.3.22+cu130, METADATA 0.3.21+cu130: METADATA wins", proc.stdout)
            out = tmp / "out" / RETAGGED
            wfx.run("verify", out, check_status=0)
            doc = wfx.run_json("retag", renamed, "--torch", "2.10", "-o", tmp / "out2", "--fix-version")
            self.assertEqual(doc["fixed_file_name_version"], "0.3.22+cu130")

    def test_size_changing_tamper_is_refused_by_default(self):
        """The cheap check (central-directory size against RECORD) catches it without --verify."""
        with wfx.TempDir() as tmp:
            tampered = wfx.rewrite_wheel(wfx.SGL_WHEEL, tmp / wfx.SGL_WHEEL.name,
                                         edit_member=lambda n, d: d + b"#" if n.endswith("__init__.py") else d)
            for extra in ([], ["--verify"]):
                proc = retag(tampered, "--torch", "2.10", "-o", tmp / "out", *extra, check_status=2)
                self.assertIn("does not match its RECORD", proc.stderr)
                # by default only the size can tell (the first finding); --verify reports the hash first
                self.assertIn("__init__.py: size mismatch" if not extra else "__init__.py: sha256 mismatch", proc.stderr)
                self.assertEqual(len(proc.stderr.splitlines()), 1)
                self.assertFalse((tmp / "out").exists())

    def test_same_size_tamper_is_refused_with_verify_and_never_laundered_without(self):
        def same_size(name, data):
            if not name.endswith("sgl_kernel/__init__.py"):
                return data
            return data[:-1] + (b"#" if data[-1:] != b"#" else b"!")
        with wfx.TempDir() as tmp:
            tampered = wfx.rewrite_wheel(wfx.SGL_WHEEL, tmp / wfx.SGL_WHEEL.name, edit_member=same_size)
            self.assertEqual(wfx.run("verify", tampered).returncode, 1)  # the input is really tampered
            # --verify inflates and hashes every member: refused, nothing written.
            proc = retag(tampered, "--torch", "2.10", "-o", tmp / "verified", "--verify", check_status=2)
            self.assertIn("does not match its RECORD", proc.stderr)
            self.assertIn("sgl_kernel/__init__.py: sha256 mismatch", proc.stderr)
            self.assertFalse((tmp / "verified").exists())
            # Without it the member is copied as stored with its RECORD line as it was
            # (stale hash): the output still fails `wheelfix verify` and `wheel unpack`.
            retag(tampered, "--torch", "2.10", "-o", tmp / "out")
            out = tmp / "out" / RETAGGED
            proc = wfx.run("verify", out, check_status=1)
            self.assertIn("sgl_kernel/__init__.py: sha256 mismatch", proc.stdout)
            line = lambda wheel, dist_info: next(l for l in member_text(wheel, f"{dist_info}/RECORD").splitlines()
                                                 if l.startswith("sgl_kernel/__init__.py,"))
            self.assertEqual(line(out, dist_info_of(out)), line(tampered, OLD_DIST_INFO))
            unpack = subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", str(tmp / "u"), str(out)],
                                    capture_output=True, text=True)
            self.assertNotEqual(unpack.returncode, 0)

    def test_verify_on_a_clean_wheel_writes_the_same_wheel(self):
        with wfx.TempDir() as tmp:
            env = dict(os.environ, SOURCE_DATE_EPOCH="315532800")
            for d, extra in (("a", []), ("b", ["--verify"])):
                subprocess.run([wfx.WHEELFIX, "retag", str(wfx.SGL_WHEEL), "--torch", "2.10", "-o", str(tmp / d)]
                               + extra, check=True, env=env, capture_output=True)
            self.assertEqual((tmp / "a" / RETAGGED).read_bytes(), (tmp / "b" / RETAGGED).read_bytes())
            wfx.run("verify", tmp / "b" / RETAGGED, check_status=0)

    def test_output_over_the_input_is_refused(self):
        with wfx.TempDir() as tmp:
            retag(wfx.SGL_WHEEL, "--torch", "2.10", "-o", tmp)
            before = (tmp / RETAGGED).read_bytes()
            proc = retag(tmp / RETAGGED, "--torch", "2.10", "-o", tmp, check_status=2)
            self.assertIn("overwrite the input", proc.stderr)
            self.assertEqual((tmp / RETAGGED).read_bytes(), before)

    def test_usage_errors(self):
        with wfx.TempDir() as tmp:
            cases = [
                (["--torch", "2"], "MAJOR.MINOR"),
                (["--torch", "two"], "--torch"),
                (["--torch", "2.10", "--cuda", "thirteen"], "--cuda"),
                (["--torch", "2.10", "--platform", "many linux"], "--platform"),
                (["--torch", "2.10", "--platform", "foo"], "--platform: 'foo' is not a Linux platform tag"),
                (["--torch", "2.10", "--platform", "manylinux_2_28_aarch64"], "the wheel is for x86_64"),
                (["--torch", "2.10", "--platform", "musllinux_1_2_x86_64"], "is musl"),
                (["--torch", "2.10", "--platform", "any"], "'any'"),
                (["--torch", "2.10", "--pin", "major"], "--pin"),
                (["--torch", "2.10", "--local-format", "short"], "--local-format"),
                (["--torch", "2.10", "--pin", "range"], "--pin range"),
                (["--torch", "2.10", "--pin", "<<2"], "--pin"),
                (["--torch", "2.10", "--torch-from", str(STANDINS[0])], "--torch-from"),
            ]
            for args, expected in cases:
                proc = retag(wfx.SGL_WHEEL, "-o", tmp / "out", *args, check_status=2)
                self.assertIn(expected, proc.stderr, args)
            self.assertFalse((tmp / "out").exists())


class TorchAuto(unittest.TestCase):
    def test_the_torch_verdict_over_the_standins(self):
        verdicts = {str(t): check_loads(t) for t in STANDINS}
        self.assertEqual(list(verdicts.values()), [True, False, False], "the sample is built against 2.9 only")
        with wfx.TempDir() as tmp:
            proc = retag(wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", *STANDINS, "-o", tmp)
            self.assertRegex(proc.stdout, r"\(wheel\) +ok +NO 1 +NO 2\n")
            self.assertIn("requirement torch>=2.9.0,<2.10", proc.stdout)
            out = tmp / "sgl_kernel-0.3.21+cu130.torch2.9-cp310-abi3-manylinux2014_x86_64.whl"
            wfx.run("verify", out, check_status=0)
            self.assertIn("\nRequires-Dist: torch>=2.9.0,<2.10\n", member_text(out, f"{dist_info_of(out)}/METADATA"))

            doc = wfx.run_json("retag", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", *reversed(STANDINS),
                               "-o", tmp / "json")
            self.assertEqual(doc["torch_from"], "auto")
            self.assertEqual(doc["torch"], "2.9.0")
            self.assertEqual({c["source"]: c["loads"] for c in doc["candidates"]}, verdicts)

    def test_real_torch_indexes_none_loads_exit_1(self):
        self.assertTrue(INDEXES)
        for index in INDEXES:
            self.assertFalse(check_loads(index), index)
        with wfx.TempDir() as tmp:
            proc = retag(wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", *INDEXES, "-o", tmp / "out",
                         check_status=1)
            self.assertIn("no pin      no release of the matrix loads it", proc.stdout)
            self.assertIn("nothing written", proc.stdout)
            self.assertRegex(proc.stdout, r"\(wheel\) +NO 1 +NO 2\n")  # 2.9.1, then 2.10.0: in version order
            self.assertFalse((tmp / "out").exists())
            doc = wfx.run_json("retag", wfx.SGL_WHEEL, "--torch", "auto", "--torch-from", *INDEXES,
                               "-o", tmp / "out", check_status=1)
            self.assertIsNone(doc["output"])
            self.assertEqual([c["loads"] for c in doc["candidates"]], [False] * len(INDEXES))

    @unittest.skipUnless(shutil.which("gcc"), "needs gcc")
    def test_torch_directories_give_the_atlas_verdict(self):
        """A C++ extension whose symbols resolve on every stand-in: retag --torch-from the three
        directories pins what retag and check give from an atlas of the same three (the minor it
        was built for), not the newest torch its symbols resolve on."""
        with wfx.TempDir() as tmp:
            atlas = tmp / "atlas.gz"
            wfx.run("index", *STANDINS, "--atlas", atlas, check_status=0)
            source = tmp / "ext.c"
            source.write_text('void check_fail(void) __asm__("_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx11'
                              '12basic_stringIcSt11char_traitsIcESaIcEEE");\nvoid f(void) { check_fail(); }\n')
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp / "_C.so"), str(source),
                            f"-L{STANDINS[0] / 'lib'}", "-lc10"], check=True, capture_output=True)
            tag = "cp311-cp311-linux_x86_64"
            for author, expected in (([], ">=2.9.0,<2.10"), (["torch==2.10.*"], None)):
                directory = tmp / ("author" if author else "plain")
                directory.mkdir()
                members = {"ext/_C.so": (tmp / "_C.so").read_bytes()}
                members.update(wfx.dist_info_members("ext", "1.0", tag))
                members["ext-1.0.dist-info/METADATA"] += "".join(f"Requires-Dist: {a}\n" for a in author).encode()
                wheel = wfx.write_wheel(directory / f"ext-1.0-{tag}.whl", members)
                from_dirs = wfx.run_json("retag", wheel, "--torch", "auto", "--torch-from", *reversed(STANDINS),
                                         "-o", directory / "dirs")
                from_atlas = wfx.run_json("retag", wheel, "--torch", "auto", "--torch-from", atlas,
                                          "-o", directory / "atlas")
                # one verdict: the releases off the pin are 'not admitted', so check exits 1
                check = wfx.run_json("check", wheel, "--torch", atlas, check_status=1)
                admitted = [t["torch_version"].split("+")[0] for t in check["torches"] if t["loads"]]
                self.assertEqual(admitted, ["2.9.0"] if expected else ["2.10.0"], author)
                self.assertEqual([r["verdict"] for r in from_dirs["matrix"]["releases"]], ["ok", "ok", "ok"])
                pin = from_dirs["pin"]["specifier"]
                self.assertEqual(pin, from_atlas["pin"]["specifier"], author)
                self.assertEqual(f"torch{pin}", check["requirement"]["specifier"], author)
                self.assertEqual(Path(from_dirs["output"]).name, Path(from_atlas["output"]).name)
                if expected:
                    self.assertEqual(pin, expected)  # built for 2.9 (lowest that resolves), not 2.11 (newest)
                else:
                    self.assertIn(pin, ("==2.10.*", ">=2.10.0,<2.11,==2.10.*", "==2.10.*,>=2.10.0,<2.11"))

    def test_wheel_without_extensions_is_an_input_error(self):
        with wfx.TempDir() as tmp:
            proc = retag(wfx.SAMPLES / "purepy-1.0.0-py3-none-any.whl", "--torch", "auto",
                         "--torch-from", STANDINS[0], "-o", tmp / "out", check_status=2)
            self.assertIn("no ELF shared objects", proc.stderr)


if __name__ == "__main__":
    unittest.main()
