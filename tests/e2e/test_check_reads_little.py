"""check reads only what it needs (issue 19): of a big library member it inflates
the program headers, the dynamic segment and its tables, which linker output puts
at the start of the file, and stops. The stand-in for a CUDA extension: the sample
sgl_kernel extensions, each with a 96 MiB fatbin-like section (.nv_fatbin.appended: the
extensions already hold a small .nv_fatbin) added by
objcopy (after the dynamic tables, before the section headers), in a wheel built
once into a cache directory outside the repository.

Proven: check of that wheel says exactly what check of the extracted files says
(read whole, mapped); and check still answers when the member's compressed bytes
past its first quarter are destroyed, which it could not if it inflated them (the
same damage makes inspect, which reads the fatbin, exit 2).

nvcc's own layout puts the device code in a read-only segment BEFORE the dynamic
segment (.nv_fatbin, then .dynamic in the read-write segment, then the section
headers): then check reads the start and the end of the member, the end from a
deflate block boundary near it (zip/far_read.hpp). The stand-in: a library gcc
links from a C file importing c10_cuda_check_implementation and a 96 MiB .nv_fatbin
section (.incbin). Proven the same way, with the member's middle half destroyed,
and by --timings: check inflates a few MB of it, not 96."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

FATBIN_MIB = 96
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "wheelfix-tests" / "check-reads-little-2"
INDEX = wfx.SOURCE_DIR / "data" / "torch-index" / "torch-2.10.0+cu128.index.gz"


def fatbin_bytes():
    rng = random.Random(19)
    pattern = (b"\x50\xed\x55\xba\x01\x00\x10\x00sm_90a.cubin" * 256)[:4096]
    return b"".join(rng.randbytes(64 << 10) + pattern * 48 for _ in range(FATBIN_MIB * 4))


def build_wheel():
    def payload(work):
        blob = work / "fatbin.bin"
        blob.write_bytes(fatbin_bytes())
        members = {}
        with zipfile.ZipFile(wfx.SGL_WHEEL) as zf:
            for info in zf.infolist():
                if ".dist-info/" in info.filename:
                    continue
                data = zf.read(info)
                if info.filename.endswith(".so"):
                    (work / "plain.so").write_bytes(data)
                    subprocess.run(["objcopy", "--add-section", f".nv_fatbin.appended={blob}", "--set-section-flags",
                                    ".nv_fatbin.appended=readonly,data", "plain.so", "fat.so"], cwd=work, check=True)
                    data = (work / "fat.so").read_bytes()
                members[info.filename.replace("sgl_kernel", "fatext", 1)] = data
        return members
    return wfx.cached_wheel(CACHE / "fatext-0.3.21-cp310-abi3-manylinux_2_28_x86_64.whl", payload, compresslevel=1)


def check_json(*inputs):
    proc = wfx.run("check", *inputs, "--torch", INDEX, "--json")
    if proc.returncode not in (0, 1):
        raise AssertionError(f"check {inputs}: exit {proc.returncode}\n{proc.stderr}")
    return proc.returncode, json.loads(proc.stdout)


def missing_by_member(doc):
    """{member: {(symbol, version) or library it lacks}} against the one torch asked."""
    (torch,) = doc["torches"]
    found = {}
    for symbol in torch["unresolved"]:
        for member in symbol["needed_by"]:
            found.setdefault(member, set()).add((symbol["name"], symbol["version"]))
    for library in torch["missing_libraries"]:
        for member in library.get("needed_by", []):
            found.setdefault(member, set()).add(("library", library["name"]))
    return found


class CheckReadsLittle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("objcopy"):
            raise unittest.SkipTest("objcopy is needed to build the stand-in")
        if not INDEX.exists():
            raise unittest.SkipTest(f"{INDEX} is not in this checkout")
        cls.wheel = build_wheel()

    def members(self):
        with zipfile.ZipFile(self.wheel) as zf:
            return [info for info in zf.infolist() if info.filename.endswith(".so")]

    def test_same_answer_as_the_extracted_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            with zipfile.ZipFile(self.wheel) as zf:
                for info in self.members():
                    self.assertGreater(info.file_size, FATBIN_MIB << 20)
                    zf.extract(info, tmp)
            status, from_wheel = check_json(self.wheel)
            by_member = missing_by_member(from_wheel)
            self.assertTrue(by_member, "the sample extensions miss symbols in torch 2.10.0: check must name them")
            for info in self.members():
                extracted = Path(tmp) / info.filename
                file_status, from_file = check_json(extracted)
                self.assertEqual(file_status, status)
                self.assertEqual(missing_by_member(from_file).get(str(extracted), set()),
                                 by_member.get(info.filename, set()))

    def test_stops_before_the_fatbin(self):
        with tempfile.TemporaryDirectory() as tmp:
            damaged = Path(tmp) / self.wheel.name
            shutil.copyfile(self.wheel, damaged)
            damage_middles(damaged, self.members())
            self.assertEqual(wfx.run("inspect", damaged).returncode, 2)
            intact_status, intact = check_json(self.wheel)
            status, doc = check_json(damaged)
            self.assertEqual(status, intact_status)
            self.assertEqual(missing_by_member(doc), missing_by_member(intact))


IMPORT = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"


def build_nvcc_layout_wheel():
    def payload(work):
        (work / "fatbin.bin").write_bytes(fatbin_bytes())
        (work / "stub.c").write_text(f"void {IMPORT}(int a, const char* b, const char* c, int d, _Bool e) {{}}\n")
        (work / "ext.c").write_text(f"void {IMPORT}(int, const char*, const char*, int, _Bool);\n"
                                    f"void fatend_entry(void) {{ {IMPORT}(0, \"\", \"\", 0, 0); }}\n")
        (work / "blob.S").write_text('.section .nv_fatbin,"a"\n.incbin "fatbin.bin"\n'
                                     '.section .note.GNU-stack,"",@progbits\n')
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", "libc10_cuda.so", "stub.c"], cwd=work, check=True)
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", "_C.abi3.so", "ext.c", "blob.S", "-L.", "-lc10_cuda"],
                       cwd=work, check=True)
        return {"fatend/_C.abi3.so": (work / "_C.abi3.so").read_bytes()}
    return wfx.cached_wheel(CACHE.with_name("check-reads-the-end-1") / "fatend-1.0-cp310-abi3-manylinux_2_28_x86_64.whl",
                            payload, compresslevel=1)


def dynamic_offset(path):
    for line in subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True, check=True).stdout.splitlines():
        if line.split()[:1] == ["DYNAMIC"]:
            return int(line.split()[1], 16)
    raise AssertionError(f"{path}: no PT_DYNAMIC")


def data_offset(f, info):
    """Where a member's compressed bytes start: after its local header (30 bytes, the
    name and the extra field)."""
    f.seek(info.header_offset + 26)
    name_len, extra_len = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
    return info.header_offset + 30 + name_len + extra_len


def damage_middles(wheel, members):
    """Overwrites the middle half of each member's compressed bytes."""
    with open(wheel, "r+b") as f:
        for info in members:
            f.seek(data_offset(f, info) + info.compress_size // 4)
            f.write(b"\xff" * (info.compress_size // 2))


class CheckReadsTheEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc") or not shutil.which("readelf"):
            raise unittest.SkipTest("gcc and readelf are needed to build the stand-in")
        if not INDEX.exists():
            raise unittest.SkipTest(f"{INDEX} is not in this checkout")
        cls.wheel = build_nvcc_layout_wheel()
        with zipfile.ZipFile(cls.wheel) as zf:
            (cls.member,) = [info for info in zf.infolist() if info.filename.endswith(".so")]

    def extracted(self, tmp):
        with zipfile.ZipFile(self.wheel) as zf:
            return Path(zf.extract(self.member, tmp))

    def test_the_dynamic_segment_follows_the_device_code(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertGreater(dynamic_offset(self.extracted(tmp)), FATBIN_MIB << 20)

    def test_same_answer_as_the_extracted_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            extracted = self.extracted(tmp)
            status, from_wheel = check_json(self.wheel)
            self.assertEqual(status, 1)
            by_member = missing_by_member(from_wheel)
            self.assertIn((IMPORT, ""), by_member[self.member.filename])
            file_status, from_file = check_json(extracted)
            self.assertEqual(file_status, status)
            self.assertEqual(missing_by_member(from_file)[str(extracted)], by_member[self.member.filename])

    def test_reads_the_start_and_the_end_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            damaged = Path(tmp) / self.wheel.name
            shutil.copyfile(self.wheel, damaged)
            damage_middles(damaged, [self.member])
            self.assertEqual(wfx.run("inspect", damaged).returncode, 2)
            intact_status, intact = check_json(self.wheel)
            status, doc = check_json(damaged)
            self.assertEqual(status, intact_status)
            self.assertEqual(missing_by_member(doc), missing_by_member(intact))
            timings = wfx.run("check", "--timings", self.wheel, "--torch", INDEX, check_status=1).stderr
            (inflate,) = [line for line in timings.splitlines() if line.split()[:1] == ["inflate"]]
            self.assertLess(float(inflate.split()[-2]), 16.0, timings)

    def test_a_damaged_end_is_read_the_long_way_and_refused(self):
        # No block start near the end inflates to the stream's end: the tail read gives
        # up, the member streams from its start as before, and its broken end is an
        # error naming the wheel.
        with tempfile.TemporaryDirectory() as tmp:
            damaged = Path(tmp) / self.wheel.name
            shutil.copyfile(self.wheel, damaged)
            with open(damaged, "r+b") as f:
                f.seek(data_offset(f, self.member) + self.member.compress_size - (64 << 10))
                f.write(b"\xff" * (64 << 10))
            proc = wfx.run("check", damaged, "--torch", INDEX)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn(str(damaged), proc.stderr)


if __name__ == "__main__":
    unittest.main()
