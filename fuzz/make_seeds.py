#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets from the repository's test data.

    python3 fuzz/make_seeds.py OUT_DIR

Writes OUT_DIR/<target>/<name> for every target in fuzz/CMakeLists.txt: nothing
here is committed (fuzz/seeds/ holds the few small hand-written seeds, copied in
too; tests/data/fuzz-regressions/ the inputs that once crashed). Sources:
- zip:      every wheel in sample_wheels/dist and tests/data/auditwheel, the
            hostile corpus of tests/bad/make_corpus.py (zips and wheels with one
            defect each), and two small ZIP64 wheels written by python's zipfile;
- metadata: METADATA, WHEEL and RECORD of those wheels, their file names, and
            their Version and Requires-Dist values;
- elf/edit: every ELF file under tests/data and sample_wheels/dist, ELF members of
            the wheels, and the ELF cases of the hostile corpus;
- fatbin:   the .nv_fatbin / __nv_relfatbin section bytes of those ELF files;
- symbol:   dynamic symbol names of those ELF files, the symbol/successor
            pairs of src/abi/data/torch_drifts.txt and a sample of libstdc++'s.
Stdlib only (plus tests/bad/make_corpus.py); files over 256 KiB are skipped.
"""
import hashlib
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1]
MAX_SEED = 256 * 1024


class Corpus:
    def __init__(self, out):
        self.out = Path(out)
        self.count = {}

    def add(self, target, data, hint=""):
        if not data or len(data) > MAX_SEED:
            return
        directory = self.out / target
        directory.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(data).hexdigest()[:16] + (("-" + hint) if hint else "")
        path = directory / name
        if not path.exists():
            path.write_bytes(data)
            self.count[target] = self.count.get(target, 0) + 1


# ---- ELF: just enough of the format to find sections and dynamic symbols --------

def elf_sections(data):
    """[(name, type, offset, size, link, entsize)] or [] when it is not a readable ELF."""
    try:
        if data[:4] != b"\x7fELF":
            return []
        is64, little = data[4] == 2, data[5] == 1
        e = "<" if little else ">"
        if is64:
            shoff, = struct.unpack_from(e + "Q", data, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
            layout = e + "IIQQQQIIQQ"
        else:
            shoff, = struct.unpack_from(e + "I", data, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x2E)
            layout = e + "IIIIIIIIII"
        raw = [struct.unpack_from(layout, data, shoff + i * shentsize) for i in range(shnum)]
        strtab = raw[shstrndx]
        def name(off):
            start = strtab[4] + off
            return data[start:data.index(b"\0", start)].decode(errors="replace")
        return [(name(s[0]), s[1], s[4], s[5], s[6], s[9]) for s in raw]
    except (struct.error, IndexError, ValueError, OverflowError):
        return []


def fatbin_sections(data):
    return [data[off:off + size] for name, kind, off, size, _, _ in elf_sections(data)
            if name in (".nv_fatbin", "__nv_relfatbin") and kind != 8]


def dynamic_symbol_names(data):
    try:
        return dynamic_symbol_names_unchecked(data)
    except (struct.error, IndexError, ValueError, OverflowError):
        return []


def dynamic_symbol_names_unchecked(data):
    sections = elf_sections(data)
    names = []
    for name, kind, off, size, link, entsize in sections:
        if kind != 11 or not entsize or link >= len(sections):  # SHT_DYNSYM
            continue
        little, is64 = data[5] == 1, data[4] == 2
        strings = sections[link]
        for i in range(1, size // entsize):
            name_off = struct.unpack_from("<I" if little else ">I", data, off + i * entsize)[0]
            start = strings[2] + name_off
            end = data.find(b"\0", start)
            if end > start:
                names.append(data[start:end])
    return names


# ---- the sources ------------------------------------------------------------------

def wheels():
    return sorted((SOURCE / "sample_wheels" / "dist").glob("*.whl")) + sorted((SOURCE / "tests" / "data").rglob("*.whl"))


def zip64_wheels():
    """Small wheels with ZIP64 records (forced), as python's zipfile writes them."""
    made = []
    for name in ("zip64pkg-1.0-py3-none-any.whl",):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
            members = {"zip64pkg/__init__.py": b"x = 1\n" * 50,
                       "zip64pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: zip64pkg\nVersion: 1.0\n",
                       "zip64pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
            record = "".join(f"{n},sha256={hashlib.sha256(d).hexdigest()},{len(d)}\n" for n, d in members.items())
            members["zip64pkg-1.0.dist-info/RECORD"] = (record + "zip64pkg-1.0.dist-info/RECORD,,\n").encode()
            for member, data in members.items():
                with archive.open(member, "w", force_zip64=True) as out:
                    out.write(data)
        made.append((name, buffer.getvalue()))
    return made


def hostile_corpus(directory):
    subprocess.run([sys.executable, SOURCE / "tests" / "bad" / "make_corpus.py", directory], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, WHEELFIX_SOURCE_DIR=str(SOURCE)))
    return sorted(p for p in Path(directory).rglob("*") if p.is_file() and p.name != "manifest.json")


def elf_files():
    roots = [SOURCE / "tests" / "data", SOURCE / "sample_wheels" / "dist"]
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF")


def wheel_members(path):
    try:
        with zipfile.ZipFile(path) as archive:
            return [(info.filename, archive.read(info)) for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, ValueError, EOFError, zlib_error()):
        return []


def zlib_error():
    import zlib
    return zlib.error


def add_elf(corpus, data, hint):
    corpus.add("elf", data, hint)
    corpus.add("edit", data, hint)  # the target skips files without a dynamic section
    for section in fatbin_sections(data):
        corpus.add("fatbin", section, hint)
    for name in dynamic_symbol_names(data):
        if name.startswith(b"_Z"):
            corpus.add("symbol", name)


def add_metadata(corpus, wheel_name, members):
    corpus.add("metadata", wheel_name.encode(), "filename")
    for name, data in members:
        if name.endswith(".dist-info/METADATA"):
            corpus.add("metadata", data, "METADATA")
            for line in data.decode(errors="replace").splitlines():
                if line.startswith(("Version:", "Requires-Dist:")):
                    corpus.add("metadata", line.split(":", 1)[1].strip().encode(), "value")
        elif name.endswith((".dist-info/WHEEL", ".dist-info/RECORD")):
            corpus.add("metadata", data, name.rsplit("/", 1)[1])


def add_drift_pairs(corpus):
    symbol = None
    for line in (SOURCE / "src" / "abi" / "data" / "torch_drifts.txt").read_text().splitlines():
        if line.startswith("symbol: "):
            symbol = line.split(": ", 1)[1]
        elif line.startswith("successor: ") and symbol:
            corpus.add("symbol", f"{symbol}\n{line.split(': ', 1)[1]}".encode(), "drift")


def add_system_symbols(corpus, limit=400):
    """Mangled names with templates, std::string ABIs and the like: every 20th C++
    symbol libstdc++ exports, when the machine has it."""
    for library in sorted(Path("/usr/lib").glob("*-linux-gnu/libstdc++.so.6")):
        names = [n for n in dynamic_symbol_names(library.resolve().read_bytes()) if n.startswith(b"_Z")]
        for name in names[::20][:limit]:
            corpus.add("symbol", name)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUT_DIR")
    corpus = Corpus(sys.argv[1])
    for path in wheels():
        data = path.read_bytes()
        corpus.add("zip", data, path.name[:40])
        members = wheel_members(path)
        add_metadata(corpus, path.name, members)
        for name, member in members:
            if member[:4] == b"\x7fELF":
                add_elf(corpus, member, Path(name).name[:40])
    for name, data in zip64_wheels():
        corpus.add("zip", data, "zip64")
    with tempfile.TemporaryDirectory(prefix="wfseeds-") as tmp:
        for path in hostile_corpus(tmp):
            data = path.read_bytes()
            if data[:4] == b"\x7fELF":
                add_elf(corpus, data, "bad")
            else:
                corpus.add("zip", data, "bad")
    for path in elf_files():
        add_elf(corpus, path.read_bytes(), path.name[:40])
    add_drift_pairs(corpus)
    add_system_symbols(corpus)
    for target_dir in sorted((SOURCE / "fuzz" / "seeds").glob("*")):
        for path in sorted(target_dir.iterdir()):
            corpus.add(target_dir.name, path.read_bytes(), "seed")
    print("make_seeds: " + ", ".join(f"{t} {n}" for t, n in sorted(corpus.count.items())) + f" in {corpus.out}")


if __name__ == "__main__":
    main()
