"""patchelf parity: NixOS/patchelf's test scenarios (tests/*.sh), re-expressed here,
run once with the real patchelf 0.19 (peers.patchelf) and once with wheelfix invoked
as `patchelf` (a symlink named patchelf to the wheelfix binary), on inputs this test
builds from source with gcc and, where the cross compiler links, aarch64-linux-gnu-gcc.

For every scenario the two must agree on: stdout byte for byte, the exit status, and
the dynamic entries readelf -d shows (tags in order; names, search paths and flags by
value; addresses and the string table size are layout and may differ). Where the
scenario runs the program, wheelfix's output runs (aarch64 under qemu-user with the
cross sysroot). Every wheelfix output passes eu-elflint --gnu-ld with no more
complaints than its input. The table of results goes to stderr (ctest's log).

Big-endian and 32-bit inputs: the ELFs of auditwheel's bundled testsimple wheels for
nine architectures, edited by both (set-rpath, replace-needed, set-soname), judged the
same way plus patchelf --print-* reading wheelfix's output."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import peers  # noqa: E402
import wfx  # noqa: E402

AARCH64_GCC = shutil.which("aarch64-linux-gnu-gcc")
QEMU = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"
RESULTS = []  # (scenario, patchelf result, wheelfix result, elflint input -> patchelf, wheelfix)

SOURCES = {
    "foo.c": "int foo(void) { return 42; }\n",
    "bar.c": "int foo(void) { return 43; }\n",
    "main.c": '#include <stdio.h>\nint foo(void);\nint main(void) { printf("%d\\n", foo()); return 0; }\n',
    "simple.c": '#include <stdio.h>\nint main(void) { puts("simple"); return 0; }\n',
    "bss.c": "#include <stdio.h>\nstatic char big[96 << 20];\n"
             "int main(void) { big[12345] = 1; printf(\"%d\\n\", big[12345]); return 0; }\n",
    "math.c": "#include <math.h>\n#include <stdio.h>\nint main(int c, char** v) { (void)v; "
              "printf(\"%d\\n\", (int)sqrt((double)(c * 4))); return 0; }\n",
    "init.c": "int initialized;\nvoid my_init(void) { initialized = 1; }\nint foo(void) { return 42; }\n",
    "big.c": '#include <stdio.h>\nint foo(void);\n' +
             "".join(f"int exported_function_with_a_long_name_{i}(void) {{ return {i}; }}\n" for i in range(3000)) +
             'int main(void) { printf("%d\\n", foo()); return 0; }\n',
    # patchelf's too-many-strtab: a second section named .shstrtab, of type STRTAB
    "extra-names.s": '.section ".shstrtab", "", %3\n.byte 0\n',
    "shared.c": "int a_symbol_name;\nint foo(void) { return a_symbol_name; }\n",
    "void.c": "int main(void) { return 0; }\n",
    # patchelf's phdr-corruption: one PT_LOAD mapping the headers and, after a 4 KiB
    # gap, .interp and .text; PT_PHDR; no PT_DYNAMIC (the dynamic section is orphaned)
    "headers-gap.ld": "PHDRS {\n  phdrs PT_PHDR PHDRS;\n  image PT_LOAD FILEHDR PHDRS;\n  interpreter PT_INTERP;\n}\n"
                      "SECTIONS {\n  . = SIZEOF_HEADERS;\n  . = ALIGN(4) + 0x1000;\n"
                      "  .interp : { *(.interp) } :image :interpreter\n  .text : { *(.text) } :image\n}\n",
    # patchelf's contiguous-note-sections: two adjacent note sections of different
    # alignment under one PT_NOTE (here the build-id note also lands under PT_INTERP)
    "notes.s": "".join(f""".section ".note.{name}", "a", %note
    .balign {align}
    .long 2f - 1f, 4f - 3f, 1
1:  .asciz "{label}"
2:  .balign 4
3:  .long {align}
4:  .balign 4
""" for name, align, label in (("first", 4, "first-note-name"), ("second", 8, "second"))),
    "notes.ld": "PHDRS {\n  phdrs PT_PHDR PHDRS;\n  notes PT_NOTE;\n  image PT_LOAD FILEHDR PHDRS;\n  data PT_LOAD;\n"
                "  interpreter PT_INTERP;\n  dynamic PT_DYNAMIC;\n}\n"
                "SECTIONS {\n  . = SIZEOF_HEADERS;\n  . = ALIGN(4);\n"
                "  .note.first : { *(.note.first) } :notes :image\n  .note.second : { *(.note.second) } :notes :image\n"
                "  .interp : { *(.interp) } :image :interpreter\n  .text : { *(.text) } :image\n"
                "  .rodata : { *(.rodata) }\n  .data : { *(.data) } :data\n"
                "  .dynamic : { *(.dynamic) } :data :dynamic\n}\n",
}

STRING_TAGS = {"NEEDED", "SONAME", "RPATH", "RUNPATH"}
VALUE_TAGS = {"FLAGS", "FLAGS_1"}


def dynamic_entries(path):
    """readelf -d as (tag, value) pairs: strings and flags by value, the rest by tag."""
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True).stdout
    entries = []
    for line in out.splitlines():
        m = re.match(r"\s*0x[0-9a-f]+\s+\((\w+)\)\s+(.*)$", line)
        if not m:
            continue
        tag, rest = m.groups()
        if tag in STRING_TAGS:
            entries.append((tag, re.search(r"\[(.*)\]", rest).group(1)))
        elif tag in VALUE_TAGS:
            entries.append((tag, rest.strip()))
        else:
            entries.append((tag, ""))
    return entries


def phdrs_at_first_bias(path):
    """PT_PHDR's address is the lowest PT_LOAD's (vaddr - offset) + e_phoff, and that
    PT_LOAD's file image covers the table."""
    out = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True).stdout
    phoff = int(re.search(r"starting at offset (\d+)", out).group(1))
    rows = [l.split() for l in out.splitlines() if re.match(r"\s+(LOAD|PHDR)\s", l)]
    loads = sorted((int(r[2], 16), int(r[1], 16), int(r[4], 16)) for r in rows if r[0] == "LOAD")
    phdr = next(r for r in rows if r[0] == "PHDR")
    vaddr, offset, filesz = loads[0]
    return int(phdr[2], 16) == vaddr - offset + phoff and offset <= phoff and \
        phoff + int(phdr[4], 16) <= offset + filesz


def without_gnu_stack(source, target, keep_slot):
    """A copy of an ELF file without PT_GNU_STACK, as old linkers wrote them: the entry
    becomes PT_NULL (keep_slot), or is removed (later entries move up; e_phnum and
    PT_PHDR shrink), so adding one means moving the program header table."""
    data = bytearray(Path(source).read_bytes())
    is64, order = data[4] == 2, "<" if data[5] == 1 else ">"
    phoff = struct.unpack_from(order + ("Q" if is64 else "I"), data, 32 if is64 else 28)[0]
    entsize, count = struct.unpack_from(order + "HH", data, 54 if is64 else 42)
    types = [struct.unpack_from(order + "I", data, phoff + i * entsize)[0] for i in range(count)]
    at = types.index(0x6474E551)
    table = data[phoff:phoff + count * entsize]
    if keep_slot:
        table[at * entsize:(at + 1) * entsize] = bytes(entsize)
    else:
        del table[at * entsize:(at + 1) * entsize]
        table += bytes(entsize)
        struct.pack_into(order + "H", data, 56 if is64 else 44, count - 1)
        for i, kind in enumerate(types[:at] + types[at + 1:]):
            if kind == 6:  # PT_PHDR: p_filesz, p_memsz
                struct.pack_into(order + ("QQ" if is64 else "II"), table, i * entsize + (32 if is64 else 16),
                                 (count - 1) * entsize, (count - 1) * entsize)
    data[phoff:phoff + count * entsize] = table
    Path(target).write_bytes(data)
    Path(target).chmod(0o755)


def loads(path):
    out = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True).stdout
    return [(int(r[1], 16), int(r[2], 16), int(r[-1], 16)) for r in
            (l.split() for l in out.splitlines() if l.strip().startswith("LOAD "))]


def aligned_for(page):
    """check: every PT_LOAD's offset and address agree modulo its p_align, and the
    segment the edit appended (the last one in the file) is aligned to `page`."""
    def check(_input, path):
        segments = loads(path)
        for offset, vaddr, align in segments:
            if (offset - vaddr) % align:
                return f"LOAD at offset {offset:#x} vaddr {vaddr:#x} not congruent modulo {align:#x}"
        offset, vaddr, align = max(segments)
        if align != page or (offset - vaddr) % page:
            return f"appended LOAD (offset {offset:#x}, vaddr {vaddr:#x}, align {align:#x}) not aligned to {page:#x}"
        return None
    return check


def execstack_is(flag):
    def check(_input, path):
        shown = peers.patchelf("--print-execstack", path).stdout
        return None if shown == f"execstack: {flag}\n" else f"patchelf --print-execstack says {shown!r}"
    return check


def readelf(option, path):
    return subprocess.run(["readelf", option, "-W", str(path)], capture_output=True, text=True).stdout


def dyn_sym_names(text):
    return [l.split()[-1] for l in text.splitlines() if re.match(r"\s*\d+:", l)]


def keeps(option, what, view=lambda text: text):
    """check(input, output): `readelf OPTION` shows the same `what` before and after."""
    def check(before, after):
        if view(readelf(option, before)) != view(readelf(option, after)):
            return f"readelf {option} differs ({what})"
        return None
    return check


def cross_links(tmp):
    if not (AARCH64_GCC and QEMU):
        return False
    probe = tmp / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    return subprocess.run([AARCH64_GCC, str(probe), "-o", str(tmp / "probe")], capture_output=True).returncode == 0


class Arch:
    def __init__(self, name, cc, runner):
        self.name, self.cc, self.runner = name, cc, runner

    def run(self, program, env=None):
        return subprocess.run([*self.runner, str(program)], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **(env or {})))


def build_fixtures(arch, into):
    into.mkdir(parents=True)
    src = into / "src"
    src.mkdir()
    for name, text in SOURCES.items():
        (src / name).write_text(text)

    def cc(*args):
        subprocess.run([arch.cc, *map(str, args)], check=True, capture_output=True, cwd=into)

    cc("-shared", "-fPIC", "-o", "libfoo.so", src / "foo.c", "-Wl,-soname,libfoo.so")
    cc("-shared", "-fPIC", "-o", "libbar.so", src / "bar.c", "-Wl,-soname,libbar.so")
    cc("-shared", "-fPIC", "-o", "libfoo-nosoname.so", src / "foo.c")
    cc("-o", "main", src / "main.c", "-L.", "-lfoo", "-Wl,-rpath,$ORIGIN", "-Wl,--disable-new-dtags")
    cc("-o", "main-runpath", src / "main.c", "-L.", "-lfoo", "-Wl,-rpath,/nonexistent/a:$ORIGIN:/usr/lib",
       "-Wl,--enable-new-dtags")
    cc("-o", "main-norpath", src / "main.c", "-L.", "-lfoo")
    cc("-o", "simple", src / "simple.c")
    cc("-o", "simple-execstack", src / "simple.c", "-Wl,-z,execstack")
    cc("-o", "big-bss", src / "bss.c")
    cc("-o", "math", src / "math.c", "-Wl,--no-as-needed", "-lm")
    cc("-shared", "-fPIC", "-o", "libshared-rpath.so", src / "shared.c", "-Wl,-rpath=a_symbol_name")
    cc("-shared", "-fPIC", "-o", "libbuildid.so", src / "shared.c", "-Wl,--build-id")
    cc("-nostdlib", "-shared", "-Wl,-T," + str(src / "headers-gap.ld"), "-o", "phdr-corruption.so", src / "void.c")
    cc("-nostdlib", "-pie", "-Wl,-T," + str(src / "notes.ld"), "-o", "contiguous-note-sections", src / "notes.s")
    cc("-shared", "-fPIC", "-o", "libcustom-init.so", src / "init.c", "-Wl,-init,my_init")
    cc("-o", "big-dynstr", src / "big.c", "-rdynamic", "-L.", "-lfoo")
    shutil.copy2(into / "simple", into / "simple-no-gnu-hash")
    subprocess.run([arch.cc[:-3] + "objcopy", "--remove-section=.gnu.hash", str(into / "simple-no-gnu-hash")],
                   check=True)
    cc("-shared", "-fPIC", "-o", "libtoomanystrtab.so", src / "void.c", src / "extra-names.s")
    cc("-fno-pie", "-no-pie", "-o", "large-page", src / "simple.c", "-Wl,-z,max-page-size=0x200000")
    without_gnu_stack(into / "simple", into / "simple-nostack-slot", keep_slot=True)
    without_gnu_stack(into / "simple", into / "simple-nostack", keep_slot=False)
    without_gnu_stack(into / "libfoo.so", into / "libfoo-nostack.so", keep_slot=False)
    subprocess.run(["objcopy", "--only-keep-debug", "libfoo.so", "libfoo.debug"], check=True, cwd=into,
                   capture_output=True) if arch.name == "x86_64" else None
    return into


class Scenario:
    """One patchelf test scenario: arguments (FILE is the copied input), and what to run."""

    def __init__(self, name, input, args, run=None, inputs=None, refused_because=None, check=None, refused=None):
        self.name, self.input, self.args, self.run = name, input, args, run
        # check(input path, output path) -> None, or what is wrong with wheelfix's output
        self.check = check
        # A deliberate difference: patchelf writes a file, wheelfix refuses the input
        # (status 1, one line naming this) and leaves it as it was.
        self.refused = refused
        self.inputs = inputs or [input]
        # A deliberate difference: wheelfix refuses (status 1, one line) what patchelf
        # writes, and patchelf's output fails to run with this message from ld.so.
        self.refused_because = refused_because


def scenarios(long_interp, real_interp):
    rpath_file_arg = "@rpath.txt"
    return [
        Scenario("print-interpreter", "main", ["--print-interpreter", "FILE"]),
        Scenario("print-rpath (RPATH)", "main", ["--print-rpath", "FILE"]),
        Scenario("print-rpath (RUNPATH)", "main-runpath", ["--print-rpath", "FILE"]),
        Scenario("print-rpath (none)", "main-norpath", ["--print-rpath", "FILE"]),
        Scenario("print-needed", "math", ["--print-needed", "FILE"]),
        Scenario("print-soname", "libfoo.so", ["--print-soname", "FILE"]),
        Scenario("print-soname (no soname)", "libfoo-nosoname.so", ["--print-soname", "FILE"]),
        Scenario("print-soname (executable)", "main", ["--print-soname", "FILE"]),
        Scenario("print-os-abi", "main", ["--print-os-abi", "FILE"]),
        Scenario("print-execstack", "simple", ["--print-execstack", "FILE"]),
        Scenario("print-execstack (X)", "simple-execstack", ["--print-execstack", "FILE"]),
        Scenario("print-interpreter (library)", "libfoo.so", ["--print-interpreter", "FILE"]),
        Scenario("set-rpath", "main-norpath", ["--set-rpath", "$ORIGIN", "FILE"], run=True),
        Scenario("set-rpath (long)", "main", ["--set-rpath", "/x" * 200 + ":$ORIGIN", "FILE"], run=True),
        Scenario("set-rpath-library", "libfoo.so", ["--set-rpath", "/some/where:/else", "FILE"]),
        Scenario("set-empty-rpath", "simple", ["--force-rpath", "--set-rpath", "", "FILE"], run=True),
        Scenario("add-rpath", "main-runpath", ["--add-rpath", "/opt/extra", "FILE"], run=True),
        Scenario("remove-rpath", "main-runpath", ["--remove-rpath", "FILE"]),
        Scenario("force-rpath (RUNPATH -> RPATH)", "main-runpath", ["--force-rpath", "--set-rpath", "foo", "FILE"]),
        Scenario("set-rpath (RPATH -> RUNPATH)", "main", ["--set-rpath", "$ORIGIN", "FILE"], run=True),
        Scenario("shrink-rpath", "main-runpath", ["--shrink-rpath", "FILE"], run=True),
        Scenario("shrink-rpath-with-allowed-prefixes", "main-runpath",
                 ["--shrink-rpath", "--allowed-rpath-prefixes", "/nonexistent", "FILE"], run=True),
        Scenario("set-soname", "libfoo.so", ["--set-soname", "libfoo-renamed.so.7", "FILE"]),
        Scenario("set-soname (none before)", "libfoo-nosoname.so", ["--set-soname", "libnew.so", "FILE"]),
        Scenario("set-soname (executable: no effect)", "main", ["--set-soname", "x.so", "FILE"]),
        Scenario("replace-needed", "main", ["--replace-needed", "libfoo.so", "libbar.so", "FILE"], run=True),
        Scenario("add-needed", "main", ["--add-needed", "libm.so.6", "--add-needed", "libbar.so", "FILE"], run=True),
        Scenario("remove-needed (symbol versions still needed from it)", "math", ["--remove-needed", "libm.so.6", "FILE"],
                 refused_because="needed != NULL"),
        Scenario("replace-add-needed", "main",
                 ["--replace-needed", "libfoo.so", "libbar.so", "--add-needed", "libm.so.6", "FILE"], run=True),
        Scenario("auditwheel batch", "main",
                 ["--remove-rpath", "--force-rpath", "--set-rpath", "$ORIGIN/../x.libs", "--replace-needed",
                  "libfoo.so", "libbar.so", "FILE"]),
        Scenario("set-interpreter-same", "simple", ["--set-interpreter", real_interp, "FILE"], run=True),
        Scenario("set-interpreter-short", "simple", ["--set-interpreter", "/lib/ld.so", "FILE"]),
        Scenario("set-interpreter-long", "simple", ["--set-interpreter", long_interp, "FILE"], run=True),
        Scenario("no-default-lib", "main", ["--no-default-lib", "FILE"]),
        Scenario("add-debug-tag", "libfoo.so", ["--add-debug-tag", "FILE"]),
        Scenario("modify-execstack (set)", "simple", ["--set-execstack", "FILE"], run=True),
        Scenario("modify-execstack (clear)", "simple-execstack", ["--clear-execstack", "FILE"], run=True),
        Scenario("print-execstack (no PT_GNU_STACK)", "simple-nostack", ["--print-execstack", "FILE"]),
        Scenario("modify-execstack (no PT_GNU_STACK, PT_NULL slot)", "simple-nostack-slot", ["--set-execstack", "FILE"],
                 run=True, check=execstack_is("X")),
        Scenario("modify-execstack (no PT_GNU_STACK, table moves)", "simple-nostack", ["--set-execstack", "FILE"],
                 run=True, check=execstack_is("X")),
        Scenario("modify-execstack (clear, no PT_GNU_STACK, library)", "libfoo-nostack.so", ["--clear-execstack", "FILE"],
                 check=execstack_is("-")),
        Scenario("page-size 64 KiB", "main", ["--page-size", "65536", "--set-rpath", "/p" * 150 + ":$ORIGIN", "FILE"],
                 run=True, check=aligned_for(0x10000)),
        Scenario("page-size 2 MiB (library)", "libfoo.so", ["--page-size", "2097152", "--set-rpath", "/q" * 150, "FILE"],
                 check=aligned_for(0x200000)),
        Scenario("build-id", "libbuildid.so", ["--set-rpath", "A" * 1400, "FILE"],
                 check=keeps("-n", "the build-id note")),
        Scenario("shared-rpath (larger)", "libshared-rpath.so",
                 ["--set-rpath", "a_very_big_rpath_that_is_larger_than_original", "FILE"],
                 check=keeps("--dyn-syms", "symbol names", dyn_sym_names)),
        Scenario("shared-rpath (shorter)", "libshared-rpath.so", ["--set-rpath", "shrt_rpth", "FILE"],
                 check=keeps("--dyn-syms", "symbol names", dyn_sym_names)),
        Scenario("contiguous-note-sections", "contiguous-note-sections",
                 ["--set-interpreter", "ld-linux-x86-64.so.2", "FILE"], check=keeps("-n", "the notes")),
        Scenario("phdr-corruption", "phdr-corruption.so", ["--set-rpath", "/some/dir", "FILE"],
                 refused="no PT_DYNAMIC"),
        Scenario("basic-flags (--help)", "simple", ["--help"]),
        Scenario("basic-flags (no arguments)", "simple", []),
        Scenario("plain-needed (remove)", "main", ["--remove-needed", "libfoo.so", "FILE"]),
        Scenario("no-rpath (interpreter and rpath)", "simple",
                 ["--set-interpreter", real_interp, "--set-rpath", "/foo:/bar:/xxxxxxxxxxxxxxx", "FILE"], run=True),
        Scenario("no-gnu-hash", "simple-no-gnu-hash", ["--set-interpreter", "/oops", "FILE"]),
        Scenario("no-gnu-hash (rpath)", "simple-no-gnu-hash", ["--set-rpath", "/" + "g" * 100, "FILE"], run=True),
        Scenario("preserve-init", "libcustom-init.so", ["--set-rpath", "/" + "i" * 200, "FILE"],
                 check=keeps("-d", "DT_INIT", lambda text: [l for l in text.splitlines() if "(INIT)" in l])),
        Scenario("big-dynstr", "big-dynstr", ["--force-rpath", "--set-rpath", "/oops:$ORIGIN", "FILE"], run=True),
        Scenario("too-many-strtab", "libtoomanystrtab.so", ["--set-rpath", "$ORIGIN", "FILE"]),
        Scenario("large-page (2 MiB max-page-size, ET_EXEC)", "large-page", ["--add-needed", "libm.so.6", "FILE"],
                 run=True, check=aligned_for(0x200000)),
        Scenario("change-abi", "simple", ["--set-os-abi", "FreeBSD", "--print-os-abi", "FILE"]),
        Scenario("clear-symbol-version", "simple", ["--clear-symbol-version", "puts", "FILE"]),
        Scenario("args-from-file", "main-norpath", ["--set-rpath", rpath_file_arg, "FILE"], run=True),
        Scenario("output-flag", "main-norpath", ["--set-rpath", "$ORIGIN", "--output", "OUT", "FILE"], run=True),
        Scenario("several files", "libfoo.so", ["--set-rpath", "/a/b", "FILE", "FILE2"], inputs=["libfoo.so", "libbar.so"]),
        Scenario("grow-file (96 MiB .bss)", "big-bss", ["--set-rpath", "/" + "b" * 300, "FILE"], run=True),
        Scenario("plain-fail (not ELF)", "src/foo.c", ["--set-rpath", "x", "FILE"]),
        Scenario("missing file", "no-such-file", ["--print-rpath", "FILE"]),
        Scenario("no-dynamic-section (.debug)", "libfoo.debug", ["--print-rpath", "FILE"]),
        Scenario("version", "simple", ["--version"]),
        Scenario("repeated-updates", "main", ["--set-rpath", "$ORIGIN:/r1", "FILE"], run=True),
    ]


@unittest.skipUnless(shutil.which("gcc") and shutil.which("eu-elflint"), "needs gcc and eu-elflint")
class PatchelfParity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.peer_bin = peers.peer_venv()
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-patchelf-"))
        cls.link_dir = peers.wheelfix_as_patchelf(cls.tmp, wfx.WHEELFIX)
        cls.arches = [Arch("x86_64", "gcc", [])]
        if cross_links(cls.tmp):
            cls.arches.append(Arch("aarch64", AARCH64_GCC, [QEMU, "-L", AARCH64_SYSROOT]))
        cls.fixtures = {a.name: build_fixtures(a, cls.tmp / a.name) for a in cls.arches}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if RESULTS:
            print("\n| scenario | patchelf 0.19 | wheelfix | eu-elflint input / patchelf / wheelfix |", file=sys.stderr)
            print("|---|---|---|---|", file=sys.stderr)
            for row in RESULTS:
                print("| " + " | ".join(row) + " |", file=sys.stderr)

    def tool(self, which, args, cwd):
        exe = str(self.peer_bin / "patchelf") if which == "patchelf" else str(self.link_dir / "patchelf")
        return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, timeout=120)

    def prepare(self, arch, scenario, side):
        work = self.tmp / "runs" / arch.name / re.sub(r"\W+", "-", scenario.name) / side
        work.mkdir(parents=True)
        fixtures = self.fixtures[arch.name]
        for name in ("libfoo.so", "libbar.so"):
            shutil.copy2(fixtures / name, work / name)
        (work / "rpath.txt").write_text("$ORIGIN")
        files = []
        for i, name in enumerate(scenario.inputs):
            source = fixtures / name
            target = work / Path(name).name
            if source.exists():
                shutil.copy2(source, target)
            files.append(target)
        args = []
        for arg in scenario.args:
            arg = {"FILE": str(files[0]), "FILE2": str(files[-1]), "OUT": str(work / "out")}.get(arg, arg)
            args.append(arg)
        produced = work / "out" if "--output" in scenario.args else files[0]
        return work, args, files, produced

    def run_scenario(self, arch, scenario, long_interp):
        label = f"{scenario.name} [{arch.name}]"
        input_path = self.fixtures[arch.name] / scenario.input
        if scenario.input == "libfoo.debug" and not input_path.exists():
            return
        before = peers.elflint_complaints(input_path) if input_path.exists() and wfx.is_elf(input_path.read_bytes()[:4]) else None
        peer_dir, peer_args, peer_files, peer_out = self.prepare(arch, scenario, "patchelf")
        ours_dir, our_args, our_files, our_out = self.prepare(arch, scenario, "wheelfix")
        peer = self.tool("patchelf", peer_args, peer_dir)
        ours = self.tool("wheelfix", our_args, ours_dir)
        if scenario.name == "repeated-updates" and ours.returncode == 0:
            size_once = our_out.stat().st_size
            for _ in range(3):
                again = self.tool("wheelfix", our_args, ours_dir)
                self.assertEqual(again.returncode, 0, again.stderr)
            self.assertEqual(our_out.stat().st_size, size_once, "repeated edits must not grow the file")
            peer = self.tool("patchelf", peer_args, peer_dir)
            size_once = None
        if scenario.refused:
            with self.subTest(scenario=label):
                self.assertEqual(peer.returncode, 0, peer.stderr)
                self.assertEqual(ours.returncode, 1, ours.stderr)
                self.assertRegex(ours.stderr, rf"^patchelf: [^\n]*{scenario.refused}[^\n]*\n$")
                self.assertEqual(our_out.read_bytes(), input_path.read_bytes(), "a refused edit leaves the input")
                self.assertEqual(readelf("-l", peer_out).count("PHDR"), 1, "patchelf's output: one PT_PHDR")
                # the wheelfix elf command: bad input, one line, status 2
                mine = subprocess.run([wfx.WHEELFIX, "elf", *scenario.args[:-1], str(our_out)], capture_output=True,
                                      text=True, timeout=10)
                self.assertEqual(mine.returncode, 2, mine.stderr)
                self.assertEqual(len(mine.stderr.strip().splitlines()), 1, mine.stderr)
                self.assertIn(our_out.name, mine.stderr)
                RESULTS.append((label, "exit 0", f"refused ({scenario.refused}), exit 1", "-"))
            return
        if scenario.refused_because:
            with self.subTest(scenario=label):
                self.assertEqual(peer.returncode, 0, peer.stderr)
                broken = arch.run(peer_out)
                self.assertNotEqual(broken.returncode, 0)
                self.assertIn(scenario.refused_because, broken.stderr)
                self.assertEqual(ours.returncode, 1, ours.stderr)
                self.assertRegex(ours.stderr, r"^patchelf: [^\n]*symbol versions[^\n]*\n$")
                self.assertEqual(our_out.read_bytes(), input_path.read_bytes(), "a refused edit leaves the input")
                RESULTS.append((label, "exit 0, output asserts in ld.so", "refused, exit 1", "-"))
            return
        with self.subTest(scenario=label):
            self.assertEqual(ours.stdout.replace(str(ours_dir), "<dir>"), peer.stdout.replace(str(peer_dir), "<dir>"),
                             f"{label}: stdout differs\npatchelf stderr: {peer.stderr}\nwheelfix stderr: {ours.stderr}")
            self.assertEqual(ours.returncode, peer.returncode,
                             f"{label}: exit status\npatchelf: {peer.stderr}\nwheelfix: {ours.stderr}")
            if peer.returncode != 0 and not scenario.args:  # the syntax, naming argv[0]
                self.assertEqual(ours.stderr.replace(str(self.link_dir / "patchelf"), "patchelf"),
                                 peer.stderr.replace(str(self.peer_bin / "patchelf"), "patchelf"))
                RESULTS.append((label, f"exit {peer.returncode}, syntax", f"exit {ours.returncode}, same syntax", "-"))
                return
            elif peer.returncode != 0:
                self.assertTrue(ours.stderr.startswith("patchelf: "), ours.stderr)
                self.assertEqual(len(ours.stderr.strip().splitlines()), 1, ours.stderr)
                RESULTS.append((label, f"exit {peer.returncode}", f"exit {ours.returncode}", "-"))
                return
            lint = "-"
            if before is not None and our_out.exists():
                for peer_file, our_file in zip([peer_out] + peer_files[1:], [our_out] + our_files[1:]):
                    self.assertEqual(dynamic_entries(our_file), dynamic_entries(peer_file),
                                     f"{label}: dynamic entries of {our_file.name} differ from patchelf's")
                after = peers.elflint_complaints(our_out)
                peer_after = peers.elflint_complaints(peer_out)
                self.assertLessEqual(after, before, f"{label}: eu-elflint complains more about the output")
                lint = f"{before} / {peer_after} / {after}"
                if scenario.name.startswith("grow-file"):
                    growth = our_out.stat().st_size - input_path.stat().st_size
                    self.assertLess(growth, 1 << 20, f"{label}: the file grew by {growth} bytes for a 300-byte edit")
                    lint += f" (grew {growth} B; patchelf {peer_out.stat().st_size - input_path.stat().st_size} B)"
            if scenario.check:
                self.assertIsNone(scenario.check(input_path, our_out), label)
            if scenario.run:
                result = arch.run(our_out)
                self.assertEqual(result.returncode, 0, f"{label}: the edited program does not run:\n{result.stderr}")
                if scenario.name.startswith("grow-file"):
                    # qemu-user 7.2 and Linux before 5.18 put AT_PHDR at the first
                    # segment's bias + e_phoff: the moved table must be there (it is
                    # after the first PT_LOAD's file image, which grows over it)
                    self.assertEqual(arch.run(peer_out).returncode, 0, "patchelf's output runs too")
                    self.assertTrue(phdrs_at_first_bias(our_out), f"{label}: program headers not at bias + e_phoff")
            what = "same" + (", runs" if scenario.run else "")
            RESULTS.append((label, "exit 0", what, lint))

    def test_scenarios(self):
        for arch in self.arches:
            real_interp = subprocess.run(["readelf", "-lW", str(self.fixtures[arch.name] / "simple")],
                                         capture_output=True, text=True).stdout
            real_interp = re.search(r"interpreter: (\S+)\]", real_interp).group(1)
            long_interp = str(self.tmp / ("i" * 120) / Path(real_interp).name)
            Path(long_interp).parent.mkdir(exist_ok=True)
            target = real_interp if arch.name == "x86_64" else AARCH64_SYSROOT + "/lib/" + Path(real_interp).name
            if not Path(long_interp).exists():
                Path(long_interp).symlink_to(Path(target).resolve())
            for scenario in scenarios(long_interp, real_interp):
                self.run_scenario(arch, scenario, long_interp)


def bundled_elves(into):
    found = []
    for wheel in sorted((wfx.AUDITWHEEL / "glibc").glob("*.whl")) + sorted((wfx.AUDITWHEEL / "musllinux_1_2").glob("*.whl")):
        found += wfx.extract_wheel_elves(wheel, into, wfx.AUDITWHEEL)
    return found


@unittest.skipUnless(shutil.which("eu-elflint"), "needs eu-elflint")
class OtherArchitectures(unittest.TestCase):
    """auditwheel's testsimple wheels: 32-bit (i686, armv5l/6l/7l), big-endian (s390x,
    mips64), ppc64le, riscv64, aarch64, x86_64 — glibc and musl."""

    def test_bundled_wheels(self):
        peer_bin = peers.peer_venv()
        with wfx.TempDir() as tmp:
            links = tmp / "bin"
            links.mkdir()
            (links / "patchelf").symlink_to(Path(shutil.which(wfx.WHEELFIX) or wfx.WHEELFIX).resolve())
            elves = bundled_elves(tmp / "in")
            self.assertGreaterEqual(len(elves), 18)
            for label, path in elves:
                needed = subprocess.run([str(peer_bin / "patchelf"), "--print-needed", str(path)],
                                        capture_output=True, text=True).stdout.split()
                edit = ["--set-rpath", "$ORIGIN/../lib.libs", "--set-soname", "libsoname-test.so"]
                if needed:
                    edit += ["--replace-needed", needed[0], "libreplaced.so.9"]
                before = peers.elflint_complaints(path)
                outputs = {}
                for side, exe in (("patchelf", peer_bin / "patchelf"), ("wheelfix", links / "patchelf")):
                    out = tmp / side / label.replace("/", "_").replace("!", "_")
                    out.parent.mkdir(parents=True, exist_ok=True)
                    proc = subprocess.run([str(exe), *edit, "--output", str(out), str(path)],
                                          capture_output=True, text=True)
                    self.assertEqual(proc.returncode, 0, f"{side} on {label}: {proc.stderr}")
                    outputs[side] = out
                with self.subTest(elf=label):
                    self.assertEqual(dynamic_entries(outputs["wheelfix"]), dynamic_entries(outputs["patchelf"]))
                    after = peers.elflint_complaints(outputs["wheelfix"])
                    self.assertLessEqual(after, before, f"{label}: eu-elflint")
                    ask = lambda flag: subprocess.run([str(peer_bin / "patchelf"), flag, str(outputs["wheelfix"])],
                                                      capture_output=True, text=True).stdout
                    self.assertEqual(ask("--print-rpath"), "$ORIGIN/../lib.libs\n")
                    if needed:
                        self.assertEqual(ask("--print-needed").split()[0], "libreplaced.so.9")
                    machine = subprocess.run(["readelf", "-hW", str(path)], capture_output=True, text=True).stdout
                    cls = re.search(r"Class:\s+(\S+)", machine).group(1)
                    data = re.search(r"Data:\s+.*(little|big) endian", machine).group(1)
                    RESULTS.append((f"set-rpath+soname+replace-needed {label.split('!')[0].split('/')[-1]} "
                                    f"({cls}, {data})", "exit 0", "same", f"{before} / "
                                    f"{peers.elflint_complaints(outputs['patchelf'])} / {after}"))
            if RESULTS:
                for row in RESULTS:
                    print("| " + " | ".join(row) + " |", file=sys.stderr)
                RESULTS.clear()

    def test_endianness_shrink_rpath(self):
        """patchelf's endianness.sh on every bundled ELF (big-endian s390x and mips64
        included): --set-rpath DIR, then --shrink-rpath keeps DIR because it holds a
        library the file NEEDs (a copy of an ELF of the same machine, by that name),
        and drops it when the copy there is of another machine."""
        peer_bin = peers.peer_venv()
        with wfx.TempDir() as tmp:
            links = peers.wheelfix_as_patchelf(tmp, wfx.WHEELFIX)
            host_elf = Path(shutil.which("true")).resolve()
            host_machine = readelf("-h", host_elf).split("Machine:")[1].splitlines()[0]
            checked = 0
            for label, original in bundled_elves(tmp / "in"):
                name = re.sub(r"\W+", "-", label)
                # these extensions need nothing: the real patchelf gives each a NEEDED entry first
                path = tmp / "needing" / name
                path.parent.mkdir(exist_ok=True)
                self.assertEqual(peers.patchelf("--add-needed", "libdep.so.1", "--output", path, original).returncode, 0)
                needed = peers.patchelf("--print-needed", path).stdout.split()
                libdir, wrongdir = tmp / "dirs" / name, tmp / "host" / name
                for directory, elf in ((libdir, original), (wrongdir, host_elf)):
                    directory.mkdir(parents=True)
                    shutil.copy2(elf, directory / needed[0])
                same_as_host = readelf("-h", original).split("Machine:")[1].splitlines()[0] == host_machine
                expected = wrongdir if same_as_host else libdir
                shown = {}
                for side, exe in (("patchelf", peer_bin / "patchelf"), ("wheelfix", links / "patchelf")):
                    rpath, shrunk = tmp / side / f"{name}-rpath", tmp / side / f"{name}-shrunk"
                    rpath.parent.mkdir(exist_ok=True)
                    for args in (["--output", rpath, "--set-rpath", f"{wrongdir}:{libdir}", path],
                                 ["--output", shrunk, "--shrink-rpath", rpath]):
                        proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
                        self.assertEqual(proc.returncode, 0, f"{side} on {label}: {proc.stderr}")
                    shown[side] = peers.patchelf("--print-rpath", shrunk).stdout
                with self.subTest(elf=label):
                    self.assertEqual(shown["wheelfix"], f"{expected}\n")
                    self.assertEqual(shown["wheelfix"], shown["patchelf"])
                checked += 1
            self.assertGreaterEqual(checked, 18)
            print(f"| endianness (set-rpath, shrink-rpath) on {checked} bundled ELFs | exit 0, kept | same |"
                  " - |", file=sys.stderr)


def section_table(data):
    """{name: (header offset, sh_offset, sh_size)} and e_shstrndx of an ELF64 LE file."""
    shoff, = struct.unpack_from("<Q", data, 40)
    count, shstrndx = struct.unpack_from("<HH", data, 60)
    rows = [struct.unpack_from("<IIQQQQ", data, shoff + i * 64) for i in range(count)]
    names_at = rows[shstrndx][4]
    name = lambda i: data[names_at + rows[i][0]:data.index(b"\0", names_at + rows[i][0])].decode()
    return {name(i): (shoff + i * 64, rows[i][4], rows[i][5]) for i in range(count)}, shstrndx, shoff


def corruptions(data):
    """patchelf's invalid-elf.sh fixtures re-derived from a gcc-built ELF64 LE program:
    one field each, (name, offset, bytes)."""
    sections, shstrndx, shoff = section_table(data)
    names_header, names_at, names_size = sections[".shstrtab"]
    dynamic_at, dynamic_size = sections[".dynamic"][1:]
    dynstr_at, dynstr_size = sections[".dynstr"][1:]
    verneed_at = sections[".gnu.version_r"][1]
    gnuhash_at = sections[".gnu.hash"][1]
    first = shoff + 64
    return [
        ("invalid-shrstrtab-idx", 62, b"\xff\xff"),
        ("invalid-shrstrtab-size", names_header + 32, b"\xff" * 7 + b"\x7f"),
        ("invalid-shrstrtab-zero", names_header + 32, bytes(8)),
        ("invalid-shrstrtab-nonterm", names_at + names_size - 1, b"A"),
        ("invalid-shdr-name", first, b"\xff\xff\xff\x7f"),
        ("invalid-shentsize", 58, b"\x30\x00"),
        ("invalid-dynamic-offset", sections[".dynamic"][0] + 24, b"\xff" * 7 + b"\x7f"),
        ("invalid-dynamic-unaligned", sections[".dynamic"][0] + 24, b"\x01" + bytes(7)),
        ("invalid-dynstr-idx", dynamic_at + 8, b"\xff" * 7 + b"\x7f"),
        ("invalid-dynstr-noterm", dynstr_at + dynstr_size - 1, b"A"),
        ("invalid-verneed-file", verneed_at + 4, b"\xff\xff\xff\x7f"),
        ("invalid-unnamed-section", first, bytes(4)),
        ("invalid-gnuhash-buckets", gnuhash_at, bytes(4)),
        ("invalid-gnuhash-maskwords", gnuhash_at + 8, b"\xff\xff\xff\x7f"),
        ("invalid-gnuhash-symoffset", gnuhash_at + 4, b"\xff\xff\xff\x7f"),
        ("invalid-dynamic-noterm", dynamic_at, b"\xff" * dynamic_size),
        ("valid-note-addralign-zero", sections[".note.gnu.build-id"][0] + 48, bytes(8)),
    ]


def elf_syntax(edit):
    """The `wheelfix elf` spelling of a patchelf edit (--replace-needed OLD=NEW)."""
    return [edit[0], "=".join(edit[1:])] if edit[0] == "--replace-needed" else edit


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class InvalidElf(unittest.TestCase):
    """patchelf's invalid-elf.sh: damaged inputs give one line and a status (1 as
    patchelf, 2 from `wheelfix elf`), never a signal or a hang, and leave no output;
    every edit, --rename-dynamic-symbols included, on every corruption."""

    EDITS = [["--print-needed"], ["--set-rpath", "/" + "r" * 300], ["--replace-needed", "libc.so.6", "libx.so"],
             ["--rename-dynamic-symbols", "MAP"], ["--set-execstack"], ["--add-needed", "libextra.so"],
             ["--set-interpreter", "/" + "i" * 200]]

    def test_corruptions(self):
        with wfx.TempDir() as tmp:
            links = peers.wheelfix_as_patchelf(tmp, wfx.WHEELFIX)
            source = tmp / "prog.c"
            source.write_text('#include <stdio.h>\nint main(void) { puts("x"); return 0; }\n')
            subprocess.run(["gcc", "-Wl,--build-id", "-o", str(tmp / "prog"), str(source)], check=True)
            (tmp / "map").write_text("puts puts2\nmain main2\n")
            base = (tmp / "prog").read_bytes()
            rows = []
            for name, offset, patch in corruptions(base):
                damaged = bytearray(base)
                damaged[offset:offset + len(patch)] = patch
                path = tmp / name
                path.write_bytes(damaged)
                outcomes, peer_outcomes = set(), set()
                for edit in self.EDITS:
                    edit = [str(tmp / "map") if arg == "MAP" else arg for arg in edit]
                    out = tmp / f"{name}.out"
                    peer = peers.patchelf(*edit, "--output", out, path)
                    peer_outcomes.add(f"signal {-peer.returncode}" if peer.returncode < 0 else f"exit {peer.returncode}")
                    out.unlink(missing_ok=True)
                    for front, args, failure in (("patchelf", [str(links / "patchelf"), *edit, "--output", str(out)], 1),
                                                 ("elf", [wfx.WHEELFIX, "elf", *elf_syntax(edit), "-o", str(out)], 2)):
                        with self.subTest(fixture=name, edit=edit[0], front=front):
                            proc = subprocess.run([*args, str(path)], capture_output=True, text=True, timeout=10)
                            self.assertIn(proc.returncode, (0, failure), proc.stderr)
                            if proc.returncode:
                                self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
                                self.assertFalse(out.exists(), "a refused edit leaves no output")
                                outcomes.add(f"{front} {failure}")
                            else:
                                outcomes.add(f"{front} 0")
                            self.assertEqual(path.read_bytes(), bytes(damaged), "the input is never touched")
                            out.unlink(missing_ok=True)
                rows.append(f"| invalid-elf: {name} | {', '.join(sorted(peer_outcomes))} | {', '.join(sorted(outcomes))}, "
                            f"one line, no signal | - |")
            print("\n" + "\n".join(rows), file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
