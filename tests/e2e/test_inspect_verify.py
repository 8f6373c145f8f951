"""inspect and verify end to end: every real wheel in the test data and the sample
wheels, cross-checked against readelf; tampered and hostile inputs."""
import re
import subprocess
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402


def readelf_newest(path, family):
    """Newest FAMILY_x.y version in the file's version needs, per readelf -V."""
    out = subprocess.run(["readelf", "-VW", str(path)], capture_output=True, text=True, check=True).stdout
    versions = re.findall(rf"Name: {family}_([0-9.]+)\s", out)
    return max(versions, key=lambda v: [int(x) for x in v.split(".")]) if versions else None


# auditwheel's mips64 test wheel was built for cp311 and renamed: WHEEL disagrees with its file name.
KNOWN_TAG_MISMATCH = {
    "testsimple-0.0.1-cp313-cp313-linux_mips64.whl": [
        "WHEEL lists tag cp311-cp311-linux_mips64 that the file name does not have",
        "tag cp313-cp313-linux_mips64 from the file name is missing from WHEEL",
    ],
}


class RealWheels(unittest.TestCase):
    def test_every_wheel_inspects_and_agrees_with_readelf(self):
        wheels = wfx.all_wheels()
        self.assertGreaterEqual(len(wheels), 20)
        for wheel in wheels:
            with self.subTest(wheel=wheel.name), wfx.TempDir() as tmp:
                doc = wfx.run_json("inspect", wheel)
                self.assertEqual(doc["schema"], "wheelfix.inspect/1")
                report = doc["inputs"][0]
                if wheel.name in KNOWN_TAG_MISMATCH:
                    self.assertEqual(sorted(f["problem"] for f in report["record"]["findings"]),
                                     KNOWN_TAG_MISMATCH[wheel.name])
                else:
                    self.assertTrue(report["record"]["ok"], report["record"]["findings"])
                with zipfile.ZipFile(wheel) as zf:
                    elf_members = [n for n in zf.namelist() if wfx.is_elf(zf.read(n))]
                    self.assertEqual(sorted(e["name"] for e in report["elf_files"]), sorted(elf_members))
                    for elf in report["elf_files"]:
                        extracted = tmp / Path(elf["name"]).name
                        extracted.write_bytes(zf.read(elf["name"]))
                        expected = wfx.readelf_dynamic(extracted)
                        self.assertEqual(elf["needed"], expected["needed"], elf["name"])
                        self.assertEqual(elf["soname"], expected["soname"])
                        self.assertEqual(elf["rpath"], expected["rpath"])
                        self.assertEqual(elf["runpath"], expected["runpath"])
                        self.assertEqual(elf["needs"]["glibc"], readelf_newest(extracted, "GLIBC"))
                        self.assertEqual(elf["needs"]["glibcxx"], readelf_newest(extracted, "GLIBCXX"))
                arch = re.search(r"linux_(\w+)\.whl$", wheel.name)
                if arch and report["elf_files"]:
                    # the ELF machine matches the platform tag's architecture (one name for the
                    # hard-float ARM levels; soft-float armv5l stays armv5l)
                    expected_machine = {"armv6l": "armv7l"}.get(arch.group(1), arch.group(1))
                    self.assertEqual({e["machine"] for e in report["elf_files"]}, {expected_machine}, wheel.name)
                wfx.run("verify", wheel, check_status=1 if wheel.name in KNOWN_TAG_MISMATCH else 0)

    def test_big_endian_and_32_bit_wheels(self):
        s390x = wfx.run_json("inspect", wfx.AUDITWHEEL / "glibc/testsimple-0.0.1-cp313-cp313-linux_s390x.whl")
        elf = s390x["inputs"][0]["elf_files"][0]
        self.assertEqual((elf["class"], elf["endian"], elf["machine"]), ("ELF64", "big", "s390x"))
        i686 = wfx.run_json("inspect", wfx.AUDITWHEEL / "glibc/testsimple-0.0.1-cp313-cp313-linux_i686.whl")
        self.assertEqual(i686["inputs"][0]["elf_files"][0]["class"], "ELF32")

    def test_musl_wheel_gets_a_musllinux_tag(self):
        doc = wfx.run_json("inspect", wfx.AUDITWHEEL / "musllinux_1_2/testsimple-0.0.1-cp312-cp312-linux_x86_64.whl")
        report = doc["inputs"][0]
        self.assertTrue(report["needs"]["musl"])
        self.assertEqual(report["honest_tag"], "musllinux_1_1")

    def test_pure_python_wheel_has_no_elf(self):
        doc = wfx.run_json("inspect", wfx.AUDITWHEEL / "plumbum-1.6.8-py2.py3-none-any.whl")
        self.assertEqual(doc["inputs"][0]["elf_files"], [])
        self.assertEqual(doc["inputs"][0]["torch_requirements"], [])

    def test_text_report_names_the_essentials(self):
        out = wfx.run("inspect", wfx.AUDITWHEEL / "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl", check_status=0).stdout
        self.assertIn("libz.so.1", out)
        self.assertIn("RECORD", out)
        self.assertRegex(out, r"needs\s+GLIBC_2\.\d+")

    def test_bare_elf_file(self):
        with wfx.TempDir() as tmp, zipfile.ZipFile(wfx.AUDITWHEEL / "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl") as zf:
            name = next(n for n in zf.namelist() if n.endswith(".so"))
            path = tmp / "ext.so"
            path.write_bytes(zf.read(name))
            doc = wfx.run_json("inspect", path)
            self.assertEqual(doc["inputs"][0]["kind"], "elf")
            self.assertEqual(doc["inputs"][0]["file"]["needed"], wfx.readelf_dynamic(path)["needed"])


CUBLASLT = Path("/usr/local/cuda/lib64/libcublasLt.so.13")


@unittest.skipUnless(CUBLASLT.exists(), f"needs {CUBLASLT} (the CUDA toolkit)")
class FatbinSummary(unittest.TestCase):
    """The fatbin line of a real library (thousands of entries) is a summary by kind
    with counts, not a 7,292-character list (issue 16); --json keeps every entry."""

    def test_the_text_counts_entries_and_json_lists_them_all(self):
        text = wfx.run("inspect", CUBLASLT, check_status=0).stdout
        [line] = [l for l in text.splitlines() if l.strip().startswith("fatbin ")]
        self.assertLess(len(line), 400, line)
        counted = sum(int(n) for n in re.findall(r" x(\d+)", line))
        entries = wfx.run_json("inspect", CUBLASLT)["inputs"][0]["file"]["cuda"]["fatbin"]
        self.assertGreater(len(entries), 1000)
        if "more kinds" not in line:
            self.assertEqual(counted, len(entries))
        else:
            self.assertLess(counted, len(entries))


class Tampering(unittest.TestCase):
    SOURCE = wfx.AUDITWHEEL / "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl"

    def assert_finding(self, wheel, pattern):
        proc = wfx.run("verify", wheel, check_status=1)
        self.assertRegex(proc.stdout, pattern)
        doc = wfx.run_json("verify", wheel, check_status=1)
        self.assertFalse(doc["wheels"][0]["ok"])
        inspect = wfx.run_json("inspect", wheel)
        self.assertFalse(inspect["inputs"][0]["record"]["ok"])

    def test_flipped_byte_in_a_member(self):
        def flip(name, data):
            if name.endswith(".so"):
                data = bytearray(data)
                data[len(data) // 2] ^= 0x01
                data = bytes(data)
            return data
        with wfx.TempDir() as tmp:
            wheel = wfx.rewrite_wheel(self.SOURCE, tmp / self.SOURCE.name, edit_member=flip)
            self.assert_finding(wheel, r"\.so: sha256 mismatch")

    def test_wrong_size_in_record(self):
        def resize(text):
            return re.sub(r"(\.so,sha256=[^,]+,)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 1), text)
        with wfx.TempDir() as tmp:
            wheel = wfx.rewrite_wheel(self.SOURCE, tmp / self.SOURCE.name, record_edit=resize)
            self.assert_finding(wheel, r"\.so: .*size")

    def test_missing_record_line(self):
        def drop_line(text):
            return "\n".join(line for line in text.splitlines() if ".so," not in line) + "\n"
        with wfx.TempDir() as tmp:
            wheel = wfx.rewrite_wheel(self.SOURCE, tmp / self.SOURCE.name, record_edit=drop_line)
            self.assert_finding(wheel, r"\.so: .*not (listed )?in RECORD")

    def test_version_mismatch_between_filename_and_metadata(self):
        with wfx.TempDir() as tmp:
            wheel = wfx.rewrite_wheel(self.SOURCE, tmp / "testzlib-0.0.2-cp310-cp310-linux_x86_64.whl")
            proc = wfx.run("verify", wheel, check_status=1)
            self.assertIn("0.0.2", proc.stdout)
            self.assertIn("0.0.1", proc.stdout)


class BadInput(unittest.TestCase):
    def assert_refused(self, path, *commands):
        for command in commands or ("inspect", "verify"):
            proc = wfx.run(command, path)
            self.assertEqual(proc.returncode, 2, f"{command} {path}: {proc.stdout}{proc.stderr}")
            lines = proc.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, proc.stderr)
            self.assertIn(path.name, lines[0])
            self.assertNotIn("internal error", lines[0])

    def test_truncated_zip(self):
        with wfx.TempDir() as tmp:
            data = Tampering.SOURCE.read_bytes()
            for cut in (0, 10, len(data) // 2, len(data) - 10):
                path = tmp / f"cut{cut}-0.0.1-py3-none-any.whl"
                path.write_bytes(data[:cut])
                self.assert_refused(path)

    def test_zip_slip_names(self):
        for bad in ("../evil.py", "/abs/evil.py", "pkg\\evil.py", "pkg/../../evil.py"):
            with self.subTest(name=bad), wfx.TempDir() as tmp:
                path = tmp / "slip-1.0-py3-none-any.whl"
                with zipfile.ZipFile(path, "w") as zf:
                    zf.writestr("slip-1.0.dist-info/METADATA", "Name: slip\nVersion: 1.0\n")
                    zf.writestr(bad, "x = 1\n")
                self.assert_refused(path)

    def test_corrupt_elf_member(self):
        def corrupt(name, data):
            if name.endswith(".so"):
                data = bytearray(data)
                data[0x20:0x28] = b"\xff" * 8  # e_phoff far past the end of the file
                data = bytes(data)
            return data
        with wfx.TempDir() as tmp:
            path = wfx.rewrite_wheel(Tampering.SOURCE, tmp / Tampering.SOURCE.name, edit_member=corrupt)
            self.assert_refused(path, "inspect")

    def test_empty_and_missing_files_and_corrupt_bare_elf(self):
        with wfx.TempDir() as tmp:
            empty = tmp / "empty-1.0-py3-none-any.whl"
            empty.write_bytes(b"")
            self.assert_refused(empty)
            self.assert_refused(tmp / "missing-1.0-py3-none-any.whl")
            bare = tmp / "broken.so"
            bare.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x03\x00")
            self.assert_refused(bare, "inspect")
            text = tmp / "notes.txt"
            text.write_text("hello\n")
            self.assert_refused(text, "inspect")

    def test_usage_errors_exit_2(self):
        self.assertEqual(wfx.run().returncode, 2)
        self.assertEqual(wfx.run("inspect").returncode, 2)
        self.assertEqual(wfx.run("no-such-command").returncode, 2)
        self.assertEqual(wfx.run("inspect", "--no-such-flag", "x.whl").returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
