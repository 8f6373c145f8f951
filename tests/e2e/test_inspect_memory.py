"""inspect's memory does not grow with the ELF members it reads (issue 7: bounded
peak RSS for commands that only read). A real nvcc-linked library with a fatbin gets
a large section added (objcopy --add-section) and goes into a wheel; inspect of that
wheel must peak no more than a few MiB above inspect of a wheel holding the library
without that section (the process's own baseline, large under a sanitizer), far
below the member's size, and must say about the member exactly what inspect of the
same file outside the wheel (read whole, mapped) says. The same holds for the library
relinked with a RUNPATH that no longer fits (the editor moves the program and section
headers to the end of the file, so the stream learns what it needs last: the ranges
are read again from the nearest seek window, not by inflating the member twice)."""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

BIG_SECTION_MIB = 160
GROWTH_BOUND_MIB = 32  # above the small wheel's peak; keeping the member whole adds 160+ MiB (measured: 1 MiB)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(path, members, compress_type=zipfile.ZIP_STORED):
    """members: [(name, bytes)]; the library is stored by default (no deflate: the
    test stays fast), deflated at level 1 when asked."""
    dist_info = "bigmember-1.0.dist-info"
    members = members + [
        (f"{dist_info}/METADATA", b"Metadata-Version: 2.1\nName: bigmember\nVersion: 1.0\n"),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                               b"Tag: py3-none-manylinux_2_28_x86_64\n"),
    ]
    record = "".join(record_line(name, data) for name, data in members) + f"{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16
            zf.writestr(info, data, compress_type=compress_type, compresslevel=1)
        zf.writestr(f"{dist_info}/RECORD", record, compress_type=zipfile.ZIP_DEFLATED)


def peak_rss_mib(args):
    """Runs wheelfix under /usr/bin/time; returns (CompletedProcess, peak RSS in MiB)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, wfx.WHEELFIX, *map(str, args)],
                              capture_output=True, text=True)
        return proc, int(rss.read().split()[-1]) / 1024


class InspectMemory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="wheelfix-e2e-")
        tmp = Path(cls.tmp.name)
        blob = tmp / "blob.bin"
        pattern = bytes(range(1, 256)) * 4111  # no zeros, no fatbin magic
        with open(blob, "wb") as f:
            for _ in range(BIG_SECTION_MIB * (1 << 20) // len(pattern) + 1):
                f.write(pattern)
        cls.library = tmp / "libbig.so"
        subprocess.run(["objcopy", "--add-section", f".big_payload={blob}",
                        str(wfx.TEST_DATA / "fatbin" / "nvcc_linked.so"), str(cls.library)], check=True)
        blob.unlink()
        cls.wheel = tmp / "bigmember-1.0-py3-none-manylinux_2_28_x86_64.whl"
        write_wheel(cls.wheel, [("bigmember/libbig.so", cls.library.read_bytes())])
        small = tmp / "small"
        small.mkdir()
        cls.small_wheel = small / cls.wheel.name
        write_wheel(cls.small_wheel, [("bigmember/libbig.so", (wfx.TEST_DATA / "fatbin" / "nvcc_linked.so").read_bytes())])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_peak_memory_is_far_below_the_member(self):
        size_mib = self.library.stat().st_size / (1 << 20)
        self.assertGreater(size_mib, BIG_SECTION_MIB)
        for json_flag in ([], ["--json"]):
            proc, baseline = peak_rss_mib(["inspect", *json_flag, self.small_wheel])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            proc, rss = peak_rss_mib(["inspect", *json_flag, self.wheel])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertLess(rss - baseline, GROWTH_BOUND_MIB,
                            f"inspect {json_flag} peaked at {rss:.0f} MiB on a {size_mib:.0f} MiB member, "
                            f"{baseline:.0f} MiB on the same library without its big section")

    def test_the_streamed_member_reads_as_the_whole_file(self):
        in_wheel = json.loads(wfx.run("inspect", "--json", self.wheel, check_status=0).stdout)
        alone = json.loads(wfx.run("inspect", "--json", self.library, check_status=0).stdout)
        member = in_wheel["inputs"][0]["elf_files"][0]
        whole = alone["inputs"][0]["file"]
        self.assertEqual(member.pop("name"), "bigmember/libbig.so")
        whole.pop("name")
        self.assertEqual(member, whole)
        self.assertTrue(member["cuda"]["fatbin"], "the library's fatbin entries are reported")
        record = in_wheel["inputs"][0]["record"]  # hashed in the same pass
        self.assertTrue(record["ok"], record)
        self.assertEqual(record["files"], 4)

    def test_headers_at_the_end_read_as_the_whole_file(self):
        with tempfile.TemporaryDirectory(prefix="wheelfix-e2e-") as tmp:
            tmp = Path(tmp)
            deflated = tmp / "in" / self.wheel.name
            deflated.parent.mkdir()
            write_wheel(deflated, [("bigmember/libbig.so", self.library.read_bytes())], zipfile.ZIP_DEFLATED)
            long_path = "$ORIGIN/../torch/lib:" + "/opt/a/rather/long/build/tree" * 12
            wfx.run("relink", deflated, "-o", tmp / "out", "--set-rpath", long_path, check_status=0)
            [relinked] = (tmp / "out").iterdir()
            extracted = tmp / "libbig.so"
            with zipfile.ZipFile(relinked) as zf:
                extracted.write_bytes(zf.read("bigmember/libbig.so"))
            header = extracted.read_bytes()[:64]
            phoff, shoff = int.from_bytes(header[32:40], "little"), int.from_bytes(header[40:48], "little")
            size = extracted.stat().st_size
            self.assertGreater(min(phoff, shoff), size // 2, "the headers were meant to move to the end")
            in_wheel = json.loads(wfx.run("inspect", "--json", relinked, check_status=0).stdout)
            alone = json.loads(wfx.run("inspect", "--json", extracted, check_status=0).stdout)
            member = in_wheel["inputs"][0]["elf_files"][0]
            whole = alone["inputs"][0]["file"]
            member.pop("name"), whole.pop("name")
            self.assertEqual(member, whole)
            self.assertEqual(member["runpath"], long_path)
            _, baseline = peak_rss_mib(["inspect", self.small_wheel])
            proc, rss = peak_rss_mib(["inspect", relinked])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertLess(rss - baseline, GROWTH_BOUND_MIB, f"{rss:.0f} MiB against {baseline:.0f} MiB")


if __name__ == "__main__":
    unittest.main(verbosity=2)
