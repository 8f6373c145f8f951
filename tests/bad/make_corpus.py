#!/usr/bin/env python3
"""Writes the hostile / broken input corpus (issue 6) into a directory.

    python3 tests/bad/make_corpus.py OUT_DIR

Stdlib only and deterministic: the same sources give the same bytes. Every case is
derived from a real artefact in the repository (the sample sgl_kernel, purepy and
plainext wheels, tests/data/elf) with one defect put in, so a failure names exactly
one thing. Zips are written by hand here (not with zipfile) so that local and
central headers, sizes, CRCs, ZIP64 fields and names can each be made to lie.

OUT_DIR/manifest.json lists the cases: {"path", "case", "group", "expect", "env", "note", "open", "refusal"}.
`expect` maps a command to the exit status the contract demands (a list when more
than one is fine); "note" names text that must appear in the output instead of a
refusal. The e2e test tests/e2e/test_bad_input.py runs every command on every case.
"""
import json
import os
import struct
import sys
import zlib
from pathlib import Path
import base64
import hashlib

SOURCE = Path(os.environ.get("WHEELFIX_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SAMPLES = SOURCE / "sample_wheels" / "dist"
SGL = SAMPLES / "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl"
PUREPY = SAMPLES / "purepy-1.0.0-py3-none-any.whl"
PLAINEXT = SAMPLES / "plainext-1.0.0-cp311-cp311-linux_x86_64.whl"
ELF32 = SOURCE / "tests" / "data" / "elf" / "libwfbase32.so"
SGL_SO = "sgl_kernel/sm100/common_ops.abi3.so"

COMMANDS = ("inspect", "verify", "relink", "check", "index", "shim", "retag", "repair")
FATAL = {c: 2 for c in COMMANDS}
# A wheel that reads fine but whose RECORD/names disagree: a finding for verify, a
# refusal for every command that writes a wheel, reported (not fatal) by readers.
FINDING = {"inspect": 0, "verify": 1, "relink": 2, "check": [0, 1], "index": [0, 2], "shim": 2, "retag": 2,
           "repair": 2}
# A bad ELF member inside an otherwise consistent wheel: verify checks the wheel's
# integrity (fine), every command that parses the ELF refuses; retag parses none
# (it copies every member but METADATA, WHEEL and RECORD as stored).
ELF_IN_WHEEL = dict(FATAL, verify=0, retag=0)
# Commands that take wheels only: a bare ELF file is a usage error for them.
WHEEL_ONLY = ("shim", "retag", "repair")
# `check` has nothing to check in a wheel without ELF files (purepy): that is its 2.
NO_ELF = {"check": 2}
# Defects in parts of an ELF file that a command does not read are not its business
# (the reader's contracts say which parts each stage uses): the fatbin is read by
# inspect only; a DT_STRTAB that maps nowhere falls back to the section the dynamic
# section links (elf_dynamic.cpp); version chains end at a zero link whatever vn_cnt
# says (elf_versions.cpp); .gnu.hash is only read when there are no section headers.
# These cases pin that tolerance: no crash, no hang, the input untouched.
TOLERATED = {
    "fatbin_container_size_lie": {"relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1]},
    "fatbin_container_header_zero": {"relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1]},
    "fatbin_entry_header_zero": {"relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1]},
    "fatbin_entry_payload_lie": {"relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1]},
    "strtab_unmapped": {"inspect": 0, "check": [0, 1], "index": [0, 2]},
    "vernaux_count_huge": {"inspect": 0, "relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1],
                           "repair": [0, 1]},
    "gnu_hash_buckets_huge": {"inspect": 0, "relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1],
                              "repair": [0, 1]},
}

# A refusal class of repair's load test (the group "load-test"): the corpus's repair
# runs with --no-load-test and writes the wheel, as every other command reads or
# writes it; test_bad_input runs repair once more with its load test, which must
# refuse (exit 2, one line naming the file and the case's "refusal" text).
NAME_MAX_REFUSAL = {"inspect": 0, "verify": 1, "relink": 2, "check": [0, 1], "index": [0, 2], "shim": 2,
                    "retag": 2, "repair": 2}
LOAD_TEST_REFUSAL = {"inspect": 0, "verify": 0, "relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1],
                     "retag": 0, "repair": [0, 1]}

DOS_TIME, DOS_DATE = 0, (0 << 9) | (1 << 5) | 1  # 1980-01-01 00:00


# ---- zip writing, every field overridable ------------------------------------------

def deflate(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


class Entry:
    def __init__(self, name, data, method=8, mode=0o100644, **overrides):
        self.name = name.encode() if isinstance(name, str) else name
        self.data = data
        self.method = method
        self.mode = mode
        self.o = overrides  # local_name, local_method, local_csize, local_size, crc, local_crc, flags,
        #                     descriptor (dict: crc, csize, size written after the data),
        #                     csize, size, offset, zip64 (dict), raw (stored bytes), central_name

    def stored(self):
        if "raw" in self.o:
            return self.o["raw"]
        return deflate(self.data) if self.method == 8 else self.data


def make_zip(entries, eocd=None, cut_cd=None):
    """Bytes of a zip holding `entries`; `eocd` overrides end-record fields."""
    out = bytearray()
    central = bytearray()
    for e in entries:
        o = e.o
        stored = e.stored()
        crc = o.get("crc", zlib.crc32(e.data))
        flags = o.get("flags", 0x800)
        offset = len(out)
        lname = o.get("local_name", e.name)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, o.get("local_method", e.method), DOS_TIME,
                           DOS_DATE, o.get("local_crc", crc), o.get("local_csize", len(stored)),
                           o.get("local_size", len(e.data)),
                           len(lname), 0)
        out += lname + stored
        if "descriptor" in o:  # flag bit 3: the sizes and CRC follow the data (with its signature)
            d = o["descriptor"]
            out += struct.pack("<IIII", 0x08074B50, d.get("crc", crc), d.get("csize", len(stored)),
                               d.get("size", len(e.data)))
        extra = b""
        csize, size, loff = o.get("csize", len(stored)), o.get("size", len(e.data)), o.get("offset", offset)
        if "zip64" in o:  # values in the extra field; the 32-bit fields saturated
            z = o["zip64"]
            fields = [z.get("size", size), z.get("csize", csize), z.get("offset", loff)]
            body = struct.pack("<QQQ", *fields)[: z.get("length", 24)]
            extra = struct.pack("<HH", 1, len(body)) + body
            size = csize = loff = 0xFFFFFFFF
        cname = o.get("central_name", e.name)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, flags, e.method, DOS_TIME, DOS_DATE,
                               crc, csize, size, len(cname), len(extra), 0, 0, 0, e.mode << 16, loff)
        central += cname + extra
    cd_offset = len(out)
    if cut_cd is not None:
        central = central[:cut_cd]
    out += central
    fields = {"disk": 0, "cd_disk": 0, "count_here": len(entries), "count": len(entries),
              "cd_size": len(central), "cd_offset": cd_offset}
    fields.update(eocd or {})
    if fields.pop("zip64_locator", None) is not None:  # a ZIP64 end record with lying fields
        z = eocd["zip64"]
        at = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, z.get("count", len(entries)),
                           z.get("count", len(entries)), z.get("cd_size", len(central)),
                           z.get("cd_offset", cd_offset))
        out += struct.pack("<IIQI", 0x07064B50, 0, z.get("at", at), 1)
    fields.pop("zip64", None)
    out += struct.pack("<IHHHHIIH", 0x06054B50, fields["disk"], fields["cd_disk"], fields["count_here"],
                       fields["count"], fields["cd_size"], fields["cd_offset"], 0)
    return bytes(out)


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def read_wheel(path):
    """[(name, data, mode)] of a real wheel, in order (zipfile only reads here)."""
    import zipfile
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i), (i.external_attr >> 16) or 0o100644) for i in z.infolist()]


def record_for(members, record_name):
    lines = []
    for name, data, _mode in members:
        if name == record_name:
            lines.append(f"{name},,")
        elif not name.endswith("/"):
            lines.append(f"{name},{record_hash(data)},{len(data)}")
    return ("\n".join(lines) + "\n").encode()


def wheel_members(src, replace=None, add=(), drop=(), fix_record=True, record_text=None):
    """The members of `src` with changes; RECORD recomputed unless told otherwise."""
    members = [(n, d, m) for n, d, m in read_wheel(src) if n not in drop]
    replace = replace or {}
    members = [(n, replace.get(n, d), m) for n, d, m in members]
    record_name = next(n for n, _, _ in members if n.endswith(".dist-info/RECORD")) if any(
        n.endswith(".dist-info/RECORD") for n, _, _ in members) else None
    # new members go before the dist-info directory, as wheel tools order them
    first_di = next((i for i, (n, _, _) in enumerate(members) if ".dist-info/" in n), len(members))
    members[first_di:first_di] = list(add)
    if record_name and (fix_record or record_text is not None):
        text = record_text(record_for(members, record_name).decode()).encode() if record_text else \
            record_for(members, record_name)
        members = [(n, text if n == record_name else d, m) for n, d, m in members]
    return members


def zip_of(members, **entry_overrides):
    """entry_overrides: {member name: {override...}} for single entries."""
    return make_zip([Entry(n, d, mode=m, **entry_overrides.get(n, {})) for n, d, m in members])


# ---- ELF editing (ELF64 little endian, the sgl extension) -----------------------------

class Elf:
    def __init__(self, data):
        self.b = bytearray(data)
        (self.phoff, self.shoff) = struct.unpack_from("<QQ", self.b, 0x20)
        self.phentsize, self.phnum, self.shentsize, self.shnum, self.shstrndx = struct.unpack_from("<HHHHH", self.b, 0x36)

    def sections(self):
        shstr = struct.unpack_from("<Q", self.b, self.shoff + self.shstrndx * 64 + 24)[0]
        result = {}
        for i in range(self.shnum):
            at = self.shoff + i * 64
            name, stype, flags, addr, off, size, link, info, align, entsize = struct.unpack_from("<IIQQQQIIQQ", self.b, at)
            end = self.b.index(0, shstr + name)
            result[self.b[shstr + name:end].decode()] = {"at": at, "type": stype, "off": off, "size": size, "addr": addr}
        return result

    def section(self, name):
        return self.sections()[name]

    def phdrs(self):
        return [(self.phoff + i * self.phentsize,) + struct.unpack_from("<IIQQQQQQ", self.b, self.phoff + i * self.phentsize)
                for i in range(self.phnum)]

    def dynamic(self):
        s = self.section(".dynamic")
        return [(s["off"] + i * 16,) + struct.unpack_from("<qQ", self.b, s["off"] + i * 16) for i in range(s["size"] // 16)]

    def put(self, fmt, at, *values):
        struct.pack_into(fmt, self.b, at, *values)
        return self

    def set_dyn(self, tag, value, which=0):
        hits = [at for at, t, _ in self.dynamic() if t == tag]
        return self.put("<Q", hits[which] + 8, value)

    def bytes(self):
        return bytes(self.b)


DT_NULL, DT_NEEDED, DT_STRTAB, DT_RUNPATH, DT_VERNEEDNUM, DT_DEBUG = 0, 1, 5, 29, 0x6FFFFFFF, 21
PT_LOAD, PT_DYNAMIC = 1, 2


def elf_cases(so):
    """(case, bytes) for every ELF defect, each applied to the sgl extension."""
    e = lambda: Elf(so)  # noqa: E731
    cases = {}
    base = e()
    cases["truncated_ident"] = so[:8]
    cases["truncated_header"] = so[:40]
    cases["truncated_phdrs"] = so[:base.phoff + 20]
    cases["truncated_half"] = so[:len(so) // 2]
    cases["phoff_past_eof"] = e().put("<Q", 0x20, 0xFFFFFFFFFFFF0000).bytes()
    cases["shoff_past_eof"] = e().put("<Q", 0x28, len(so) + 4096).bytes()
    cases["phnum_huge"] = e().put("<H", 0x38, 0xFFF0).bytes()  # (0xFFFF is PN_XNUM: count in section 0)
    cases["shnum_huge"] = e().put("<H", 0x3C, 0xFEFF).bytes()
    x = e()  # extended numbering (e_shnum 0: the count is section 0's sh_size) with a count no file holds
    cases["shnum_extended_huge"] = x.put("<H", 0x3C, 0).put("<Q", x.shoff + 32, 1 << 62).bytes()
    cases["phentsize_bad"] = e().put("<H", 0x36, 7).bytes()
    cases["shentsize_bad"] = e().put("<H", 0x3A, 3).bytes()
    cases["shstrndx_out_of_range"] = e().put("<H", 0x3E, 0xFEF0).bytes()
    x = e()
    dyn_ph = next(p for p in x.phdrs() if p[1] == PT_DYNAMIC)
    cases["dynamic_segment_past_eof"] = x.put("<Q", dyn_ph[0] + 8, 0x7FFFFFFFFFFF).bytes()
    x = e()
    load_ph = next(p for p in x.phdrs() if p[1] == PT_LOAD)
    cases["load_filesz_huge"] = x.put("<Q", load_ph[0] + 32, 1 << 62).bytes()
    x = e()
    cases["dynamic_section_past_eof"] = x.put("<Q", x.section(".dynamic")["at"] + 24, len(so) + 64).bytes()
    x = e()
    cases["dynstr_section_past_eof"] = x.put("<Q", x.section(".dynstr")["at"] + 24, 1 << 40).bytes()
    x = e()
    cases["dynsym_size_huge"] = x.put("<Q", x.section(".dynsym")["at"] + 32, 1 << 40).bytes()
    x = e()
    for at, tag, _ in x.dynamic():
        if tag == DT_NULL:
            x.put("<qQ", at, DT_DEBUG, 0)
    cases["dynamic_without_null"] = x.bytes()
    x = e()
    cases["needed_past_dynstr"] = x.set_dyn(DT_NEEDED, x.section(".dynstr")["size"] + 1000).bytes()
    x = e()
    cases["runpath_past_dynstr"] = x.set_dyn(DT_RUNPATH, 0xFFFFFFFF).bytes()
    x = e()
    s = x.section(".dynstr")
    cases["dynstr_unterminated"] = x.put("<B", s["off"] + s["size"] - 1, ord("A")).bytes()
    x = e()
    cases["strtab_unmapped"] = x.set_dyn(DT_STRTAB, 0xDEAD0000).bytes()
    x = e()  # a second DT_STRTAB (in RELACOUNT's slot): ld.so reads the last, we would read the first
    strtab = next(value for _, tag, value in x.dynamic() if tag == DT_STRTAB)
    relacount = next(at for at, tag, _ in x.dynamic() if tag == 0x6FFFFFF9)
    cases["strtab_twice"] = x.put("<qQ", relacount, DT_STRTAB, strtab + 4).bytes()
    x = e()  # PT_GNU_STACK retyped PT_DYNAMIC: ld.so reads the last PT_DYNAMIC, readelf the first
    stack = next(p for p in x.phdrs() if p[1] == 0x6474E551)
    cases["pt_dynamic_twice"] = x.put("<I", stack[0], PT_DYNAMIC).bytes()
    x = e()  # DT_STRTAB 8 bytes into .dynstr: ld.so and the section headers name the symbols differently
    strtab = next(value for _, tag, value in x.dynamic() if tag == DT_STRTAB)
    cases["dynsym_names_not_dt_strtab"] = x.set_dyn(DT_STRTAB, strtab + 8).bytes()
    x = e()  # .gnu.version typed SHT_DYNSYM: two dynamic symbol tables (fuzz_edit found the editor adjusting both)
    cases["dynsym_twice"] = x.put("<I", x.section(".gnu.version")["at"] + 4, 11).bytes()
    x = e()
    s = x.section(".gnu.version")
    for i in range(s["size"] // 2):
        if struct.unpack_from("<H", x.b, s["off"] + 2 * i)[0] > 1:
            x.put("<H", s["off"] + 2 * i, 0x7FF0)
    cases["versym_index_out_of_range"] = x.bytes()
    x = e()
    s = x.section(".gnu.version_r")
    cases["verneed_count_huge"] = x.set_dyn(DT_VERNEEDNUM, 0x7FFFFFFF).put("<I", s["off"] + 12, 0).bytes()
    x = e()
    cases["verneed_aux_past_end"] = x.put("<I", x.section(".gnu.version_r")["off"] + 8, 0x7FFFFFF0).bytes()
    x = e()
    cases["vernaux_count_huge"] = x.put("<H", x.section(".gnu.version_r")["off"] + 2, 0xFFFF).bytes()
    cases["class_invalid"] = e().put("<B", 4, 3).bytes()
    cases["data_invalid"] = e().put("<B", 5, 3).bytes()
    cases["class32_on_elf64"] = e().put("<B", 4, 1).bytes()
    cases["big_endian_on_little"] = e().put("<B", 5, 2).bytes()
    x = e()
    fb = x.section(".nv_fatbin")["off"]
    cases["fatbin_container_size_lie"] = x.put("<Q", fb + 8, 1 << 40).bytes()
    x = e()
    cases["fatbin_container_header_zero"] = x.put("<H", fb + 6, 0).bytes()
    x = e()
    hsize = struct.unpack_from("<H", x.b, fb + 6)[0]
    cases["fatbin_entry_header_zero"] = x.put("<I", fb + hsize + 4, 0).bytes()
    x = e()
    cases["fatbin_entry_payload_lie"] = x.put("<Q", fb + hsize + 8, 1 << 50).bytes()
    x = e()
    s = x.section(".gnu.hash")
    cases["gnu_hash_buckets_huge"] = x.put("<I", s["off"], 0xFFFFFFFF).bytes()
    return cases


# ---- the corpus -----------------------------------------------------------------------

class Corpus:
    def __init__(self, out):
        self.out = Path(out)
        self.cases = []

    def add(self, case, group, data, name, expect, env=None, note=None, open_defect=None, refusal=None):
        path = self.out / case / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.cases.append({"case": case, "group": group, "path": str(path.relative_to(self.out)),
                           "expect": expect, "env": env or {}, "note": note, "open": open_defect,
                           "refusal": refusal})

    def write_manifest(self):
        (self.out / "manifest.json").write_text(json.dumps(self.cases, indent=1) + "\n")


def zip_cases(c):
    sgl = wheel_members(SGL)
    pure = wheel_members(PUREPY)
    sgl_bytes = zip_of(sgl)
    W, P = SGL.name, PUREPY.name

    def z(case, data, name=P, expect=FATAL, **kw):
        c.add("zip_" + case, "zip", data, name, expect, **kw)

    z("empty", b"")
    z("not_a_zip", b"this is not a zip archive\n" * 20)
    z("truncated_half", sgl_bytes[: len(sgl_bytes) // 2], W)
    z("truncated_end_record", sgl_bytes[:-10], W)
    z("truncated_central_directory", make_zip([Entry(n, d, mode=m) for n, d, m in sgl], cut_cd=100), W)
    z("cd_offset_past_eof", make_zip([Entry(n, d, mode=m) for n, d, m in pure], eocd={"cd_offset": 0x7FFFFF00}))
    z("cd_offset_shifted", make_zip([Entry(n, d, mode=m) for n, d, m in pure],
                                    eocd={"cd_offset": len(zip_of(pure)) - 22 - 300}))
    z("cd_size_lie", make_zip([Entry(n, d, mode=m) for n, d, m in pure], eocd={"cd_size": 0x7FFFFFF0}))
    z("cd_count_lie", make_zip([Entry(n, d, mode=m) for n, d, m in pure], eocd={"count": 60, "count_here": 60}))
    z("local_offset_past_eof", zip_of(pure, **{"purepy/__init__.py": {"offset": 0x7FFFFF00}}))
    z("local_offset_into_data", zip_of(pure, **{"purepy-1.0.0.dist-info/WHEEL": {"offset": 7}}))
    z("local_central_name_differ", zip_of(pure, **{"purepy/__init__.py": {"local_name": b"purepy/__evil__.py"}}))
    z("local_central_method_differ", zip_of(pure, **{"purepy/__init__.py": {"local_method": 0}}))
    z("local_central_size_differ", zip_of(pure, **{"purepy/__init__.py": {"local_csize": 5, "local_size": 7}}))
    z("overlapping_entries", make_zip([Entry(n, d, mode=m) for n, d, m in pure] +
                                      [Entry("purepy/other.py", pure[0][1], offset=0)]))
    # Open for retag: by default it hashes METADATA and WHEEL only and checks the
    # other members by size, so a member whose bytes disagree with its CRC (or with
    # RECORD at the same size) is copied as stored instead of refused.
    retag_by_size = {"retag": "retag checks members by size only (without --verify): a damaged member is copied"}
    z("crc_mismatch", zip_of(pure, **{"purepy/__init__.py": {"crc": 0x12345678}}), open_defect=retag_by_size)
    z("crc_mismatch_elf", zip_of(sgl, **{SGL_SO: {"crc": 0x12345678}}), W, open_defect=retag_by_size)
    # A stored member whose compressed size says more than its size (the extra bytes
    # follow its data): Python's zipfile rejects what a copy of it would be.
    z("stored_csize_exceeds_size", make_zip([Entry(n, d, method=0, mode=m, raw=d + bytes(16)) if n == "purepy/__init__.py"
                                             else Entry(n, d, mode=m) for n, d, m in pure]))
    z("size_lie_inflates_more", zip_of(pure, **{"purepy/__init__.py": {"size": 10, "local_size": 10}}))
    for case, bad in (("name_dotdot", "purepy/../../evil.py"), ("name_absolute", "/tmp/evil.py"),
                      ("name_backslash", "purepy\\evil.py"), ("name_drive", "C:/evil.py"),
                      ("name_nul", b"purepy/evil\0.py"), ("name_empty_component", "purepy//evil.py"),
                      ("name_newline", "purepy/evil\nwheelfix: all fine.py"), ("name_escape", "purepy/\x1b[2Jevil.py")):
        z(case, zip_of(wheel_members(PUREPY, add=[(bad if isinstance(bad, str) else bad.decode("latin1"),
                                                   b"x = 1\n", 0o100644)])))
    z("name_duplicate", zip_of(wheel_members(PUREPY, add=[("purepy/__init__.py", b"evil = 1\n", 0o100644)])))
    z("distinfo_casefold_duplicate", zip_of(wheel_members(PUREPY, add=[
        ("PUREPY-1.0.0.DIST-INFO/METADATA", b"Metadata-Version: 2.1\nName: purepy\nVersion: 6.6.6\n", 0o100644)])))
    z("distinfo_member_casefold_duplicate", zip_of(wheel_members(PUREPY, add=[
        ("purepy-1.0.0.dist-info/metadata", b"Metadata-Version: 2.1\nName: purepy\nVersion: 6.6.6\n", 0o100644)])))
    z("symlink_outside_relative", zip_of(wheel_members(PUREPY, add=[
        ("purepy/passwd", b"../../etc/passwd", 0o120777)])))
    z("symlink_outside_absolute", zip_of(wheel_members(PUREPY, add=[
        ("purepy/passwd", b"/etc/passwd", 0o120777)])))
    # A zip bomb: 96 MiB of zeros in ~96 KiB, past the default ratio limit (1000:1 for
    # members of 16 MiB or more); and 3 MiB that only a lowered total limit refuses.
    bomb = bytes(96 << 20)
    z("bomb_ratio", zip_of(wheel_members(PUREPY, add=[("purepy/data.bin", bomb, 0o100644)])))
    z("bomb_total_limit", zip_of(wheel_members(PUREPY, add=[("purepy/data.bin", bytes(3 << 20), 0o100644)])),
      env={"WHEELFIX_MAX_INFLATED": "1M"})
    del bomb
    z("encrypted", zip_of(pure, **{"purepy/__init__.py": {"flags": 0x801}}))
    # Issue 16: what CPython's zipfile and pip refuse, every command refuses too.
    z("local_central_crc_differ", zip_of(pure, **{"purepy/__init__.py": {"local_crc": 0x12345678}}))
    descriptor = {"flags": 0x808, "local_crc": 0, "local_csize": 0, "local_size": 0}
    z("data_descriptor_size_differ", zip_of(pure, **{"purepy/__init__.py": dict(descriptor, descriptor={"size": 7})}))
    z("data_descriptor_crc_differ", zip_of(pure, **{"purepy/__init__.py": dict(descriptor,
                                                                                descriptor={"crc": 0x12345678})}))
    # The overlapped-entries bomb (CPython's zipfile: "Overlapped entries"): a stored
    # member whose bytes hold a whole second member, listed on its own as well.
    inner_name, inner = b"purepy/inner.py", b"x = 1\n"
    inner_local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x800, 0, DOS_TIME, DOS_DATE, zlib.crc32(inner),
                              len(inner), len(inner), len(inner_name), 0) + inner_name + inner
    outer = [(n, d, m) for n, d, m in wheel_members(PUREPY, add=[("purepy/outer.bin", inner_local, 0o100644),
                                                                  ("purepy/inner.py", inner, 0o100644)])]
    entries = [Entry(n, d, method=0 if n in ("purepy/outer.bin", "purepy/inner.py") else 8, mode=m)
               for n, d, m in outer]
    layout = make_zip(entries)
    outer_at = layout.index(b"purepy/outer.bin") - 30  # its local header; its data begins with the inner one
    inner_at = outer_at + 30 + len(b"purepy/outer.bin")
    z("members_overlap", make_zip([Entry(e.name, e.data, method=e.method, mode=e.mode,
                                         **({"offset": inner_at} if e.name == inner_name else {})) for e in entries]))
    z("directory_entry_with_data", zip_of(wheel_members(PUREPY, add=[("purepy/data/", b"hidden bytes\n", 0o40755)])))
    z("file_and_directory", zip_of(wheel_members(PUREPY, add=[("purepy/__init__.py/evil.py", b"x = 1\n", 0o100644)])))
    z("file_and_directory_entry", zip_of(wheel_members(PUREPY, add=[("purepy/__init__.py/", b"", 0o40755)])))
    # Each link stays inside on its own; followed through the other, it leaves the
    # wheel (purepy/up is the root, root/.. is site-packages' parent).
    z("symlink_chain_escape", zip_of(wheel_members(PUREPY, add=[("purepy/up", b"..", 0o120777),
                                                                ("purepy/esc", b"up/../evil.py", 0o120777)])))
    z("symlink_loop", zip_of(wheel_members(PUREPY, add=[("purepy/a", b"b", 0o120777), ("purepy/b", b"a", 0o120777)])))
    for method in (12, 14, 99, 42):
        z(f"method_{method}", make_zip([Entry(n, d, method=method, mode=m, raw=deflate(d)) if n.endswith(".py")
                                        else Entry(n, d, mode=m) for n, d, m in pure]))
    z("zip64_size_lie", zip_of(pure, **{"purepy/__init__.py": {"zip64": {"size": 1 << 62}}}))
    z("zip64_csize_lie", zip_of(pure, **{"purepy/__init__.py": {"zip64": {"csize": 1 << 40}}}))
    z("zip64_offset_lie", zip_of(pure, **{"purepy/__init__.py": {"zip64": {"offset": 1 << 40}}}))
    z("zip64_extra_truncated", zip_of(pure, **{"purepy/__init__.py": {"zip64": {"length": 4}}}))
    entries = [Entry(n, d, mode=m) for n, d, m in pure]
    z("zip64_end_record_offset_lie", make_zip(entries, eocd={"cd_offset": 0xFFFFFFFF, "zip64_locator": 1,
                                                              "zip64": {"cd_offset": 1 << 40}}))
    z("zip64_end_record_count_lie", make_zip(entries, eocd={"count": 0xFFFF, "count_here": 0xFFFF,
                                                             "zip64_locator": 1, "zip64": {"count": 1 << 40}}))
    z("zip64_locator_lie", make_zip(entries, eocd={"cd_offset": 0xFFFFFFFF, "zip64_locator": 1,
                                                    "zip64": {"at": 1 << 50}}))


def wheel_cases(c):
    P, W = PUREPY.name, SGL.name

    def w(case, members, name=P, expect=FATAL, **kw):
        c.add("wheel_" + case, "wheel", zip_of(members), name, expect, **kw)

    pure = read_wheel(PUREPY)
    w("no_dist_info", [(n, d, m) for n, d, m in pure if ".dist-info/" not in n])
    w("nested_dist_info_only", [(("purepy/" + n) if ".dist-info/" in n else n, d, m) for n, d, m in pure])
    w("two_dist_info", wheel_members(PUREPY, add=[("other-1.0.dist-info/METADATA",
                                                   b"Metadata-Version: 2.1\nName: other\nVersion: 1.0\n", 0o100644)]))
    w("missing_record", wheel_members(PUREPY, drop={"purepy-1.0.0.dist-info/RECORD"}))
    w("missing_metadata", wheel_members(PUREPY, drop={"purepy-1.0.0.dist-info/METADATA"}))
    w("missing_wheel_file", wheel_members(PUREPY, drop={"purepy-1.0.0.dist-info/WHEEL"}))
    meta = dict((n, d) for n, d, _ in pure)["purepy-1.0.0.dist-info/METADATA"].decode()
    no_version = "".join(line for line in meta.splitlines(True) if not line.startswith("Version:"))
    w("metadata_without_version", wheel_members(PUREPY, replace={"purepy-1.0.0.dist-info/METADATA": no_version.encode()}))
    bad_version = meta.replace("Version: 1.0.0", "Version: 1.0.0-banana!!")
    w("metadata_invalid_version", wheel_members(PUREPY, replace={"purepy-1.0.0.dist-info/METADATA": bad_version.encode()}),
      expect=dict(FINDING, **NO_ELF))
    w("filename_invalid_version", wheel_members(PUREPY), name="purepy-1.0.x!!-py3-none-any.whl")
    w("filename_metadata_disagree", wheel_members(PUREPY), name="purepy-1.0.1-py3-none-any.whl",
      expect=dict(FINDING, **NO_ELF))
    w("record_bad_quoting", wheel_members(PUREPY, record_text=lambda t: t.replace("purepy/__init__.py,", '"purepy/__init__.py,', 1)))
    w("record_text_after_quote", wheel_members(PUREPY, record_text=lambda t: t.replace("purepy/__init__.py,", '"purepy/__init__.py"x,', 1)))
    w("record_wrong_field_count", wheel_members(PUREPY, record_text=lambda t: t.replace("purepy/__init__.py,", "purepy/__init__.py,,,", 1)))
    w("record_path_outside", wheel_members(PUREPY, record_text=lambda t: t + f"../../etc/passwd,{record_hash(b'')},0\n"),
      expect=dict(FINDING, **NO_ELF))
    w("record_path_absolute", wheel_members(PUREPY, record_text=lambda t: t + f"/etc/passwd,{record_hash(b'')},0\n"),
      expect=dict(FINDING, **NO_ELF))

    def rehash(algorithm):
        def edit(text):
            data = dict((n, d) for n, d, _ in pure)["purepy/__init__.py"]
            digest = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=").decode()
            lines = [f"purepy/__init__.py,{algorithm}={digest},{len(data)}" if line.startswith("purepy/__init__.py,")
                     else line for line in text.splitlines()]
            return "\n".join(lines) + "\n"
        return edit
    w("record_sha1", wheel_members(PUREPY, record_text=rehash("sha1")), expect=dict(FINDING, **NO_ELF))
    w("record_md5", wheel_members(PUREPY, record_text=rehash("md5")), expect=dict(FINDING, **NO_ELF))
    w("record_unknown_algorithm", wheel_members(PUREPY, record_text=lambda t: t.replace("sha256=", "foo=", 1)),
      expect=dict(FINDING, **NO_ELF))
    w("record_mismatch", wheel_members(SGL, replace={"sgl_kernel/__init__.py": b"import os\nos.system('evil')\n"},
                                       fix_record=False), name=W, expect=FINDING)
    w("record_missing_line", wheel_members(SGL, record_text=lambda t: "".join(
        line for line in t.splitlines(True) if not line.startswith("sgl_kernel/sm90/"))), name=W, expect=FINDING)
    wheel_text = dict((n, d) for n, d, _ in pure)["purepy-1.0.0.dist-info/WHEEL"]
    # pip refuses a major Wheel-Version it does not know: a finding the readers show
    # beside the rest of the report (inspect 0, verify 1), a refusal for every writer.
    w("wheel_version_2", wheel_members(PUREPY, replace={
        "purepy-1.0.0.dist-info/WHEEL": wheel_text.replace(b"Wheel-Version: 1.0", b"Wheel-Version: 2.0")}),
      expect=dict(FATAL, inspect=0, verify=1, check=2, index=[0, 2]), note="Wheel-Version 2.0")
    w("wheel_version_missing", wheel_members(PUREPY, replace={
        "purepy-1.0.0.dist-info/WHEEL": wheel_text.replace(b"Wheel-Version: 1.0\n", b"")}))
    # Names that install on Linux but collide on a case-insensitive or normalising
    # file system (macOS, Windows): reported by inspect, a finding for verify.
    collision = dict(FINDING, **NO_ELF)
    w("names_differ_in_case", wheel_members(PUREPY, add=[("purepy/Mod.py", b"x = 1\n", 0o100644),
                                                        ("purepy/mod.py", b"x = 2\n", 0o100644)]),
      expect=collision, note="differ only in case")
    w("names_differ_in_normalisation", wheel_members(PUREPY, add=[("purepy/caf\u00e9.py", b"x = 1\n", 0o100644),
                                                                 ("purepy/cafe\u0301.py", b"x = 2\n", 0o100644)]),
      expect=collision, note="Unicode normalisation")
    # Members named like libraries that are not ELF: reported, not fatal.
    w("library_not_elf", wheel_members(SGL, add=[
        ("sgl_kernel/libfoo.so", b"/* GNU ld script */\nINPUT ( libfoo.so.1 -lbar )\n", 0o100644),
        ("sgl_kernel/libtext.so.1", b"just some text\n", 0o100644)]), name=W,
      expect={"inspect": 0, "verify": 0, "relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1], "retag": 0,
              "repair": [0, 1]},
      note="libfoo.so")
    # Refusal classes of repair's load test (issue 16), the group "load-test": an ELF
    # member whose name has a component longer than NAME_MAX (255 bytes: no file
    # system here holds it, pip cannot install it), and an ELF member under torch/
    # (installed, it would overwrite torch's files; the load test lays the torch
    # given at site/torch).
    so = dict((n, d) for n, d, _ in read_wheel(SGL))[SGL_SO]
    long_name = "sgl_kernel/lib" + "x" * 300 + ".so"
    # No Linux file system takes the name: verify says so, every writer refuses it before work.
    c.add("wheel_elf_member_name_over_name_max", "load-test",
          zip_of(wheel_members(SGL, add=[(long_name, so, 0o100755)])), W, NAME_MAX_REFUSAL, note=long_name[:40],
          refusal="longer than NAME_MAX 255")
    c.add("wheel_elf_member_under_torch", "load-test",
          zip_of(wheel_members(SGL, add=[("torch/lib/libsmuggled.so", so, 0o100755)])), W, LOAD_TEST_REFUSAL,
          note="torch/lib/libsmuggled.so", refusal="torch/lib/libsmuggled.so is an ELF file installed under torch/")


def elf_cases_into(c):
    so = dict((n, d) for n, d, _ in read_wheel(SGL))[SGL_SO]
    for case, data in elf_cases(so).items():
        tolerated = TOLERATED.get(case, {})
        bare = {k: v for k, v in tolerated.items() if k not in WHEEL_ONLY}
        c.add("elf_" + case, "elf", data, "common_ops.abi3.so", dict(FATAL, **bare))
        c.add("elf_in_wheel_" + case, "elf-in-wheel", zip_of(wheel_members(SGL, replace={SGL_SO: data})), SGL.name,
              dict(ELF_IN_WHEEL, **tolerated))
    # A 32-bit i386 library in an x86_64 wheel: a valid ELF file no x86_64 Python can
    # load. The platform tag lies about it (analysis/wheel_report.cpp judge_platform):
    # inspect names it on the tag's LIES line (and `inspect --target` counts it as a
    # finding, exit 1); the commands that only edit what they are told (relink, shim,
    # retag) go ahead, since refusing would also block fixing the loadable members;
    # repair reports it as a finding no tag can fix (exit 1; --strict writes nothing).
    c.add("elf_in_wheel_32bit_in_64bit_wheel", "elf-in-wheel",
          zip_of(wheel_members(SGL, add=[("sgl_kernel/libwfbase32.so", ELF32.read_bytes(), 0o100755)])), SGL.name,
          {"inspect": 0, "verify": 0, "relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1], "retag": 0,
           "repair": 1}, note="sgl_kernel/libwfbase32.so is ELF32 i686")


def control_cases(c):
    """The generator's own zips of the untouched samples: every command must accept
    them, so a refusal elsewhere is the defect's doing, not the zip writer's."""
    fine = {"inspect": 0, "verify": 0, "relink": 0, "check": [0, 1], "index": [0, 2], "shim": [0, 1], "retag": 0,
            "repair": [0, 1]}
    for source in (PUREPY, SGL, PLAINEXT):
        c.add("control_" + source.name.split("-")[0], "control", zip_of(wheel_members(source)), source.name,
              dict(fine, **(NO_ELF if source == PUREPY else {})))
    c.add("control_data_descriptors", "control",
          zip_of(wheel_members(PUREPY), **{n: {"flags": 0x808, "local_crc": 0, "local_csize": 0, "local_size": 0,
                                               "descriptor": {}} for n, _, _ in read_wheel(PUREPY)}),
          PUREPY.name, dict(fine, **NO_ELF))
    c.add("control_elf", "control", dict((n, d) for n, d, _ in read_wheel(SGL))[SGL_SO], "common_ops.abi3.so",
          {"inspect": 0, "verify": 2, "relink": 0, "check": [0, 1], "index": 2, "shim": 2, "retag": 2, "repair": 2})


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: make_corpus.py OUT_DIR")
    corpus = Corpus(sys.argv[1])
    control_cases(corpus)
    zip_cases(corpus)
    wheel_cases(corpus)
    elf_cases_into(corpus)
    corpus.write_manifest()
    print(f"make_corpus: {len(corpus.cases)} cases in {corpus.out}")


if __name__ == "__main__":
    main()
