"""The write path's guard: every writing command (relink, shim, retag, repair with its
shim and grafts), run on committed inputs (sample_wheels/dist, tests/data and the gcc-built
inputs of tests/data/same_bytes, which include a 72 MiB member so the bounded read, the
foresight and the speculation run), must write what the recorded binary wrote: the
digests in tests/data/same_bytes/digests.json. Per output wheel, the members outside the
.dist-info directory are the same set with the same content (SHA-256), and each ELF member
is also spliced into the same compressed bytes; an ELF file relinked is the same file.
The .dist-info members are not compared: pins, the SBOM and variant labels change them on
purpose (other issues), and RECORD follows them.

Regenerate the digests (only when a change of output is intended, and say why in the
commit) with a binary built from the commit that is the reference:

    python3 tests/e2e/test_same_bytes.py --record /path/to/wheelfix
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile
import unittest
import zipfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

DATA = wfx.TEST_DATA / "same_bytes"
DIGESTS = DATA / "digests.json"
SGL = wfx.SGL_WHEEL
PLAIN = next(wfx.SAMPLES.glob("plainext-*.whl"))
CFFI = wfx.AUDITWHEEL / "cffi-1.5.0-cp27-none-linux_x86_64.whl"
BIG = DATA / "bigguard-1.0-cp311-cp311-linux_x86_64.whl"
GRAFT = DATA / "graftpkg-1.0-cp311-cp311-linux_x86_64.whl"
ELF = wfx.TEST_DATA / "elf" / "libversioned.so"
TORCH = {v: wfx.SAMPLES / f"torch-{v}" / "torch" for v in ("2.9.0", "2.10.0", "2.11.0")}
REPAIR = ("repair", "--no-load-test")

# name: (arguments after the binary, "-o OUT" appended; extra environment)
CASES = {
    "relink-sgl-set-rpath": (("relink", SGL, "--set-rpath", "{root}/torch/lib"), {}),
    "relink-sgl-drop-add": (("relink", SGL, "--drop-absolute-rpaths", "--add-rpath", "$ORIGIN/../torch/lib",
                             "--replace-needed", "libcudart.so.13=libcudart.so.12"), {}),
    "relink-plain-needed-rpath": (("relink", PLAIN, "--add-needed", "libwfx_extra.so.1", "--force-rpath",
                                   "--add-rpath", "$ORIGIN"), {}),
    "relink-cffi-soname": (("relink", CFFI, "--set-soname", "libcffi_renamed.so", "--set-rpath", "$ORIGIN"), {}),
    "relink-elf-file": (("relink", ELF, "--set-soname", "libversioned-renamed.so", "--add-rpath",
                         "/opt/a/rather/long/path/that/grows/the/dynamic/string/table"), {}),
    "relink-big-drop": (("relink", BIG, "--drop-absolute-rpaths"), {}),
    "relink-big-grow": (("relink", BIG, "--add-rpath", "$ORIGIN/../a/path/long/enough/to/move/the/string/table",
                         "--add-needed", "libextra.so.3"), {}),
    "shim-sgl-2.10": (("shim", SGL, "--torch", TORCH["2.10.0"]), {}),
    "shim-sgl-2.11": (("shim", SGL, "--torch", TORCH["2.11.0"]), {}),
    "shim-big-2.10": (("shim", BIG, "--torch", TORCH["2.10.0"]), {}),
    "retag-sgl": (("retag", SGL, "--torch", "2.10"), {}),
    "retag-sgl-platform": (("retag", SGL, "--torch", "2.10.0", "--cuda", "13.0", "--pin", "exact",
                            "--platform", "manylinux_2_34_x86_64"), {}),
    "repair-sgl": (REPAIR + (SGL,), {}),
    "repair-sgl-2.9": (REPAIR + (SGL, "--torch", TORCH["2.9.0"]), {}),
    "repair-sgl-2.10": (REPAIR + (SGL, "--torch", TORCH["2.10.0"]), {}),
    "repair-sgl-2.11": (REPAIR + (SGL, "--torch", TORCH["2.11.0"]), {}),
    "repair-plain": (REPAIR + (PLAIN,), {}),
    "repair-graft": (REPAIR + (GRAFT, "--ldpaths", DATA / "graft-lib"), {}),
    "repair-big-2.10-graft": (REPAIR + (BIG, "--torch", TORCH["2.10.0"], "--ldpaths", DATA / "priv-lib"), {}),
    "repair-big-2.10-graft-no-foresight": (REPAIR + (BIG, "--torch", TORCH["2.10.0"], "--ldpaths", DATA / "priv-lib"),
                                           {"WHEELFIX_TEST_NO_FORESIGHT": "1"}),
    "repair-big-graft": (REPAIR + (BIG, "--ldpaths", DATA / "priv-lib"), {}),
}


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def raw_stream(path, info):
    """The member's compressed bytes as stored (after its local header)."""
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        header = f.read(30)
        name_length, extra_length = int.from_bytes(header[26:28], "little"), int.from_bytes(header[28:30], "little")
        f.seek(info.header_offset + 30 + name_length + extra_length)
        return f.read(info.compress_size)


def digest_output(path):
    """What the guard compares of one output: a wheel's members outside .dist-info
    ({name: sha256, and "raw" for ELF members}), or an ELF file's sha256."""
    if path.suffix != ".whl":
        return {"file": sha256(path.read_bytes())}
    members = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.filename.split("/", 1)[0].endswith(".dist-info"):
                continue
            data = zf.read(info)
            entry = {"sha256": sha256(data)}
            if data[:4] == b"\x7fELF":
                raw = raw_stream(path, info)
                assert info.compress_type != zipfile.ZIP_DEFLATED or zlib.decompressobj(-15).decompress(raw) == data
                entry["raw"] = sha256(raw)
            members[info.filename] = entry
    return {"members": members}


def run_case(binary, name, tmp):
    arguments, extra = CASES[name]
    out = Path(tmp) / name
    target = out / "out.so" if arguments[1] == ELF else out
    out.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "WHEELFIX_TORCH", "WHEELFIX_TARGET")}
    env.update(extra)
    proc = wfx.subprocess.run([str(binary), *map(str, arguments), "-o", str(target)], capture_output=True, text=True,
                              env=env)
    if proc.returncode != 0:
        raise AssertionError(f"{name}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    outputs = [target] if target.suffix == ".so" else sorted(out.glob("*.whl"))
    if len(outputs) != 1:
        raise AssertionError(f"{name}: {len(outputs)} outputs in {out}")
    return {"output": outputs[0].name, **digest_output(outputs[0])}


def record(binary):
    with tempfile.TemporaryDirectory(prefix="wheelfix-same-bytes-") as tmp:
        digests = {name: run_case(binary, name, tmp) for name in CASES}
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"{DIGESTS}: {len(digests)} cases")


class SameBytes(unittest.TestCase):
    def test_every_case_writes_the_recorded_bytes(self):
        recorded = json.loads(DIGESTS.read_text())
        self.assertEqual(sorted(recorded), sorted(CASES), "cases and digests.json disagree: --record again")
        with tempfile.TemporaryDirectory(prefix="wheelfix-same-bytes-") as tmp:
            for name in CASES:
                with self.subTest(case=name):
                    now = run_case(wfx.WHEELFIX, name, tmp)
                    then = recorded[name]
                    if "file" in then:
                        self.assertEqual(now["file"], then["file"])
                        continue
                    self.assertEqual(sorted(now["members"]), sorted(then["members"]))
                    for member, digest in then["members"].items():
                        self.assertEqual(now["members"][member], digest, f"{name}: {member}")
                    shutil.rmtree(Path(tmp) / name)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--record":
        record(Path(sys.argv[2]).resolve())
    else:
        unittest.main()
