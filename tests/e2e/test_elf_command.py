"""`wheelfix elf`: the file-level editor's own contract — in place (atomic: a new inode
renamed over the old, mode and owner kept), -o, several files, the prints, what it
says about a separate .debug file and a static executable, and repeatable options that
leave the positional input alone (`--add-needed bar.so main`)."""
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402


def gcc(*args, cwd):
    subprocess.run(["gcc", *map(str, args)], check=True, capture_output=True, cwd=cwd)


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class ElfCommand(unittest.TestCase):
    def setUp(self):
        self.tmp_context = wfx.TempDir()
        self.tmp = self.tmp_context.__enter__()
        (self.tmp / "foo.c").write_text("int foo(void) { return 42; }\n")
        (self.tmp / "main.c").write_text('#include <stdio.h>\nint foo(void);\nint main(void) { printf("%d\\n", foo()); }\n')
        gcc("-shared", "-fPIC", "-o", "libfoo.so", "foo.c", "-Wl,-soname,libfoo.so", cwd=self.tmp)
        gcc("-o", "main", "main.c", "-L.", "-lfoo", "-Wl,-rpath,/nowhere", cwd=self.tmp)

    def tearDown(self):
        self.tmp_context.__exit__(None, None, None)

    def test_in_place_is_atomic_and_keeps_mode_and_owner(self):
        main = self.tmp / "main"
        os.chmod(main, 0o750)
        if os.geteuid() == 0:
            os.chown(main, 65534, 65534)
        before = main.stat()
        proc = wfx.run("elf", main, "--set-rpath", "$ORIGIN", check_status=0)
        self.assertIn("RUNPATH: /nowhere -> $ORIGIN", proc.stdout)
        after = main.stat()
        self.assertNotEqual(after.st_ino, before.st_ino, "replaced by rename, not rewritten in place")
        self.assertEqual(after.st_mode & 0o7777, 0o750)
        self.assertEqual((after.st_uid, after.st_gid), (before.st_uid, before.st_gid))
        self.assertEqual(wfx.readelf_dynamic(main)["runpath"], "$ORIGIN")
        run = subprocess.run([str(main)], capture_output=True, text=True)
        self.assertEqual(run.stdout, "42\n")
        self.assertEqual([p.name for p in self.tmp.iterdir() if p.name.startswith(".")], [], "no temporary left")

    def test_a_symlink_is_written_through(self):
        link = self.tmp / "link-to-main"
        link.symlink_to("main")
        wfx.run("elf", link, "--set-rpath", "$ORIGIN", check_status=0)
        self.assertTrue(link.is_symlink())
        self.assertEqual(wfx.readelf_dynamic(self.tmp / "main")["runpath"], "$ORIGIN")

    def test_output_and_several_files(self):
        out = self.tmp / "out"
        original = (self.tmp / "main").read_bytes()
        wfx.run("elf", self.tmp / "main", "-o", out, "--add-needed", "libm.so.6", check_status=0)
        self.assertEqual((self.tmp / "main").read_bytes(), original, "-o leaves the input")
        self.assertEqual(wfx.readelf_dynamic(out)["needed"], ["libfoo.so", "libc.so.6", "libm.so.6"])
        wfx.run("elf", self.tmp / "main", self.tmp / "libfoo.so", "--set-rpath", "/a", check_status=0)
        for name in ("main", "libfoo.so"):
            self.assertEqual(wfx.readelf_dynamic(self.tmp / name)["runpath"], "/a")
        proc = wfx.run("elf", self.tmp / "main", self.tmp / "libfoo.so", "-o", out, "--set-rpath", "/b")
        self.assertEqual(proc.returncode, 2)

    def test_prints(self):
        proc = wfx.run("elf", self.tmp / "main", "--print-rpath", "--print-needed", "--print-execstack",
                       check_status=0)
        self.assertEqual(proc.stdout, "/nowhere\nexecstack: -\nlibfoo.so\nlibc.so.6\n")
        proc = wfx.run("elf", self.tmp / "libfoo.so", "--print-soname", "--print-os-abi", check_status=0)
        self.assertEqual(proc.stdout, "System V\nlibfoo.so\n")  # patchelf's order

    def test_repeatable_option_leaves_the_input(self):
        proc = wfx.run("elf", "--add-needed", "libm.so.6", self.tmp / "main", check_status=0)
        self.assertIn("NEEDED: + libm.so.6", proc.stdout)
        out = self.tmp / "relinked"
        wfx.run("relink", "--add-needed", "libz.so.1", self.tmp / "main", "-o", out, check_status=0)
        self.assertIn("libz.so.1", wfx.readelf_dynamic(out)["needed"])

    def test_debug_file_and_static_executable_are_named(self):
        subprocess.run(["objcopy", "--only-keep-debug", "libfoo.so", "libfoo.debug"], check=True, cwd=self.tmp)
        proc = wfx.run("elf", self.tmp / "libfoo.debug", "--set-rpath", "/x")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("separate debug-info file", proc.stderr)
        self.assertNotIn("DT_NULL", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1)
        (self.tmp / "s.c").write_text("int main(void) { return 0; }\n")
        if subprocess.run(["gcc", "-static", "-o", "static", "s.c"], cwd=self.tmp, capture_output=True).returncode:
            self.skipTest("no static libc")
        proc = wfx.run("elf", self.tmp / "static", "--set-rpath", "/x")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("statically linked", proc.stderr)
        # edits that need no dynamic section work on it, as with patchelf
        wfx.run("elf", self.tmp / "static", "--set-os-abi", "linux", "--clear-execstack", check_status=0)
        self.assertEqual(wfx.run("elf", self.tmp / "static", "--print-os-abi", check_status=0).stdout, "Linux\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
