"""Packaging of wheelfix itself: the shell completions (generated from the CLI at
build time) list every command, alias and option and complete in a real bash; zsh
parses its script; `cmake --install` lays out bin/, man/, the completions and the
JSON schemas; `cpack -G DEB` makes a .deb with the right files and Depends. (The
.deb is installed with dpkg and run by `scripts/bootstrap test`, as root.)"""
import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

BUILD = wfx.env_path("WHEELFIX_BUILD_DIR")
COMPLETIONS = BUILD / "completions"
RUNTIME_PACKAGES = ("libc6", "libfmt9", "libssl3", "libstdc++6", "libzip4", "zlib1g")
INSTALLED = ("bin/wheelfix", "share/man/man1/wheelfix.1", "share/bash-completion/completions/wheelfix",
             "share/zsh/site-functions/_wheelfix", "share/doc/wheelfix/schema/wheelfix.inspect-1.schema.json")


def wheelfix(*args):
    return subprocess.run([wfx.WHEELFIX, *args], capture_output=True, text=True, check=True).stdout


def commands():
    """{name: [aliases]} from `wheelfix --help`."""
    section = wheelfix("--help").split("Subcommands:\n", 1)[1]
    found = {}
    for line in section.splitlines():
        match = re.match(r"  ([a-z][a-z0-9-]*(?:, [a-z][a-z0-9-]*)*)\s", line)
        if match:
            names = match.group(1).split(", ")
            found[names[0]] = names[1:]
    return found


def options_of(command):
    """Every option spelling in `wheelfix <command> --help`."""
    text = wheelfix(command, "--help").split("Options:\n", 1)[1]
    spellings = set()
    for line in text.splitlines():
        match = re.match(r"  (-[^ ]+)", line)
        if match:
            spellings.update(match.group(1).split(","))
    return spellings


def complete(*words):
    """What the generated bash completion offers after `wheelfix <words>`."""
    script = (f"source {COMPLETIONS / 'wheelfix.bash'}\n"
              'COMP_WORDS=(wheelfix "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _wheelfix\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    proc = subprocess.run(["bash", "-c", script, "complete", *words], capture_output=True, text=True, check=True)
    return proc.stdout.split()


class Completions(unittest.TestCase):
    def test_the_built_scripts_are_what_the_binary_prints(self):
        self.assertEqual((COMPLETIONS / "wheelfix.bash").read_text(), wheelfix("completion", "bash"))
        self.assertEqual((COMPLETIONS / "_wheelfix").read_text(), wheelfix("completion", "zsh"))

    def test_every_command_alias_and_option_is_listed(self):
        bash = (COMPLETIONS / "wheelfix.bash").read_text()
        zsh = (COMPLETIONS / "_wheelfix").read_text()
        all_names = [n for name, aliases in commands().items() for n in [name, *aliases]]
        self.assertIn("show", all_names)
        self.assertEqual(sorted(complete("")), sorted(all_names))
        for name, aliases in commands().items():
            case = "|".join([name, *aliases])
            bash_line = re.search(rf"^        {re.escape(case)}\) options=\"([^\"]*)\"", bash, re.M)
            self.assertIsNotNone(bash_line, f"bash: no case for {case}")
            zsh_case = zsh.split(f"        {case})\n", 1)[1].split(";;", 1)[0]
            for option in options_of(name):
                self.assertIn(option, bash_line.group(1).split(), f"bash: {name} {option}")
                self.assertIn(f"'{option}", zsh_case.replace("'*", "'"), f"zsh: {name} {option}")
            self.assertIn(f"'{name}:", zsh)

    def test_bash_completes_commands_options_and_values(self):
        self.assertEqual(complete("re"), ["relink", "retag", "repair"])
        self.assertEqual(complete("relink", "x.whl", "--ex"), ["--exclude"])
        self.assertEqual(complete("retag", "x.whl", "--pin", ""), ["minor", "exact", "none", "range"])
        self.assertEqual(complete("--color", "n"), ["never"])
        self.assertEqual(complete("show", "--format", "m"), ["markdown"])
        self.assertIn("cuda13-blackwell", complete("inspect", "--target", "cuda13"))
        sample = complete("inspect", str(wfx.SAMPLES) + "/sgl")
        self.assertEqual(sample, [str(wfx.SGL_WHEEL)])

    @unittest.skipUnless(shutil.which("zsh"), "zsh is not installed")
    def test_zsh_parses_its_script(self):
        proc = subprocess.run(["zsh", "-n", str(COMPLETIONS / "_wheelfix")], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)


class Install(unittest.TestCase):
    def test_cmake_install_layout(self):
        with wfx.TempDir() as prefix:
            subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                           capture_output=True)
            for path in INSTALLED:
                self.assertTrue((prefix / path).is_file(), path)
            self.assertTrue(os.access(prefix / "bin/wheelfix", os.X_OK))
            version = subprocess.run([prefix / "bin/wheelfix", "--version"], capture_output=True, text=True)
            self.assertRegex(version.stdout, r"^wheelfix \d+\.\d+\.\d+ \(dynamic, (isal|zlib), x86_64\)\n$"
                             if os.uname().machine == "x86_64" else r"^wheelfix \d+\.\d+\.\d+ \(dynamic, \w+, \w+\)\n$")
            link = prefix / "libexec/wheelfix/patchelf"
            self.assertTrue(link.is_symlink())
            self.assertEqual(os.readlink(link), "../../bin/wheelfix")
            version = subprocess.run([link, "--version"], capture_output=True, text=True)
            self.assertRegex(version.stdout, r"^patchelf 0\.19\.\d+\n$")

    @unittest.skipUnless(shutil.which("cpack") and shutil.which("dpkg-deb"), "cpack or dpkg-deb missing")
    def test_deb_has_the_files_and_the_runtime_depends(self):
        with wfx.TempDir() as out:
            proc = subprocess.run(["cpack", "-G", "DEB", "--config", str(BUILD / "CPackConfig.cmake"), "-B", str(out)],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            debs = list(out.glob("wheelfix_*.deb"))
            self.assertEqual(len(debs), 1)
            field = lambda name: subprocess.run(["dpkg-deb", "-f", str(debs[0]), name], capture_output=True,
                                                text=True, check=True).stdout.strip()
            self.assertEqual(field("Package"), "wheelfix")
            depends = [d.split()[0] for d in field("Depends").split(", ")]
            for package in RUNTIME_PACKAGES:
                self.assertIn(package, depends)
            listing = subprocess.run(["dpkg-deb", "-c", str(debs[0])], capture_output=True, text=True,
                                     check=True).stdout
            for path in INSTALLED:
                self.assertIn(f"./usr/{path}\n", listing)
            self.assertIn("./usr/libexec/wheelfix/patchelf -> ../../bin/wheelfix\n", listing)


if __name__ == "__main__":
    unittest.main()
