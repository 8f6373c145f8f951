"""What auditwheel/patchelf users expect, end to end on the real binary: the -w and
`show` spellings, --exclude, WHEELFIX_TARGET/WHEELFIX_TORCH, @file argument files,
colour only on a terminal (NO_COLOR, --color), the progress bar on a terminal only,
`inspect --format markdown` and `check --junit`."""
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

SM100 = "sgl_kernel/sm100/common_ops.abi3.so"
SM90 = "sgl_kernel/sm90/common_ops.abi3.so"
TORCH = {v: wfx.SAMPLES / f"torch-{v}" / "torch" for v in ("2.9.0", "2.10.0", "2.11.0")}
ESC = "\x1b["
CLEAN_ENV = {k: v for k, v in os.environ.items()
             if k not in ("NO_COLOR", "WHEELFIX_TARGET", "WHEELFIX_TORCH", "WHEELFIX_PROGRESS_DELAY_MS")}


def run(*args, env=None, status=None):
    proc = subprocess.run([wfx.WHEELFIX, *map(str, args)], capture_output=True, text=True,
                          env=dict(CLEAN_ENV, **(env or {})))
    if status is not None and proc.returncode != status:
        raise AssertionError(f"wheelfix {' '.join(map(str, args))}: exit {proc.returncode}, expected {status}\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def read_all(fd):
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        data += chunk
    return data


def run_on_terminal(*args, env=None, stream="stdout"):
    """Runs wheelfix with `stream` (stdout or stderr) on a pseudo-terminal; the other
    is a pipe. Returns (exit status, terminal text, piped text)."""
    master, slave = pty.openpty()
    kwargs = {"stdout": slave, "stderr": subprocess.PIPE} if stream == "stdout" else \
             {"stdout": subprocess.PIPE, "stderr": slave}
    proc = subprocess.Popen([wfx.WHEELFIX, *map(str, args)], env=dict(CLEAN_ENV, **(env or {})), **kwargs)
    os.close(slave)
    terminal = read_all(master).decode(errors="replace")
    stdout, stderr = proc.communicate()
    os.close(master)
    piped = (stderr if stream == "stdout" else stdout).decode()
    return proc.returncode, terminal, piped


def member_bytes(wheel, member):
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(member)


def runpath_of(wheel, member, tmp):
    dynamic = wfx.member_dynamic(wheel, member, tmp)
    return dynamic["runpath"] if dynamic["runpath"] is not None else dynamic["rpath"]


class FamiliarSpellings(unittest.TestCase):
    def test_show_is_inspect(self):
        inspect = run("inspect", wfx.SGL_WHEEL, status=0)
        show = run("show", wfx.SGL_WHEEL, status=0)
        self.assertEqual(show.stdout, inspect.stdout)
        self.assertIn("inspect, show", run("--help", status=0).stdout)

    def test_wheel_dir_is_output_for_every_command_that_writes_wheels(self):
        with wfx.TempDir() as tmp:
            for spelling in ("-w", "--wheel-dir", "-o", "--output"):
                out = tmp / spelling.strip("-")
                run("relink", wfx.SGL_WHEEL, spelling, out, "--add-rpath", "{root}/torch/lib", status=0)
                self.assertTrue((out / wfx.SGL_WHEEL.name).is_file(), spelling)
            run("shim", wfx.SGL_WHEEL, "--torch", TORCH["2.11.0"], "-w", tmp / "shim", status=0)
            self.assertEqual(len(list((tmp / "shim").glob("*.whl"))), 1)
            run("retag", wfx.SGL_WHEEL, "--torch", "2.10", "--wheel-dir", tmp / "retag", status=0)
            self.assertEqual(len(list((tmp / "retag").glob("*torch2.10*.whl"))), 1)
            both = run("relink", wfx.SGL_WHEEL, "-w", tmp / "a", "-o", tmp / "b", "--add-rpath", "x")
            self.assertEqual(both.returncode, 2, "-w and -o are one option, given once")
        for command in ("relink", "shim", "retag"):
            self.assertIn("-o,-w,--output,--wheel-dir", run(command, "--help", status=0).stdout)


class FirstMinutes(unittest.TestCase):
    """What a new user types wrong gets a sentence that says what to do."""

    def test_a_mistyped_command_gets_did_you_mean(self):
        for typed, meant in (("inpsect", "inspect"), ("chek", "check"), ("shwo", "show"), ("repiar", "repair")):
            proc = run(typed, wfx.SGL_WHEEL, status=2)
            self.assertEqual(proc.stderr.splitlines()[0],
                             f"wheelfix: '{typed}' is not a wheelfix command; did you mean '{meant}'?")
        far = run("frobnicate", status=2)
        self.assertEqual(far.stderr.splitlines()[0], "wheelfix: 'frobnicate' is not a wheelfix command")
        self.assertIn("did you mean 'inspect'?", run("--json", "inspct", wfx.SGL_WHEEL, status=2).stderr)
        self.assertNotIn("did you mean", run("inspect", "--bogus", wfx.SGL_WHEEL, status=2).stderr)

    def test_output_directory_naming_a_file_says_what_to_do(self):
        with wfx.TempDir() as tmp:
            existing = tmp / "out.whl"
            existing.write_bytes(b"mine")
            commands = [("relink", wfx.SGL_WHEEL, "--add-rpath", "x"), ("shim", wfx.SGL_WHEEL, "--torch", TORCH["2.11.0"]),
                        ("retag", wfx.SGL_WHEEL, "--torch", "2.10"), ("repair", wfx.SGL_WHEEL, "--torch", TORCH["2.10.0"])]
            for command in commands:
                for output in (existing, existing / "sub"):
                    proc = run(*command, "-o", output, status=2)
                    self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
                    self.assertIn("name a directory", proc.stderr)
                    self.assertNotIn("filesystem error", proc.stderr)
                    self.assertTrue(proc.stderr.startswith(f"wheelfix: {output}: "), proc.stderr)
            self.assertEqual(existing.read_bytes(), b"mine")
            self.assertEqual(sorted(p.name for p in tmp.iterdir()), ["out.whl"])


class Exclude(unittest.TestCase):
    def test_excluded_members_are_never_touched(self):
        with wfx.TempDir() as tmp:
            doc = json.loads(run("--json", "relink", wfx.SGL_WHEEL, "-o", tmp, "--set-rpath", "{root}/torch/lib",
                                 "--exclude", "sgl_kernel/sm90/*", status=0).stdout)
            self.assertEqual([c["member"] for c in doc["changed"]], [SM100])
            out = tmp / wfx.SGL_WHEEL.name
            self.assertEqual(member_bytes(out, SM90), member_bytes(wfx.SGL_WHEEL, SM90))
            self.assertEqual(runpath_of(out, SM100, tmp), "$ORIGIN/../../torch/lib")

    def test_repair_skips_members_with_skip_member_and_takes_exclude_as_a_soname_glob(self):
        # repair's member glob is --skip-member; its --exclude is auditwheel's (SONAME).
        with wfx.TempDir() as tmp:
            run("repair", wfx.SGL_WHEEL, "-w", tmp / "skip", "--skip-member", "sgl_kernel/sm90/*", status=None)
            skipped = next((tmp / "skip").glob("*.whl"))
            self.assertEqual(member_bytes(skipped, SM90), member_bytes(wfx.SGL_WHEEL, SM90))
            self.assertNotEqual(member_bytes(skipped, SM100), member_bytes(wfx.SGL_WHEEL, SM100))
            run("repair", wfx.SGL_WHEEL, "-w", tmp / "exclude", "--exclude", "sgl_kernel/sm90/*", status=None)
            excluded = next((tmp / "exclude").glob("*.whl"))
            self.assertNotEqual(member_bytes(excluded, SM90), member_bytes(wfx.SGL_WHEEL, SM90))

    def test_exclude_wins_over_only_and_a_base_name_glob_matches_everywhere(self):
        with wfx.TempDir() as tmp:
            doc = json.loads(run("--json", "relink", wfx.SGL_WHEEL, "-o", tmp, "--add-rpath", "x",
                                 "--exclude", "common_ops.abi3.so", status=0).stdout)
            self.assertEqual(doc["changed"], [])
            proc = run("relink", wfx.SGL_WHEEL, "-o", tmp, "--add-rpath", "x", "--overwrite",
                       "--only", "*/sm90/*", "--exclude", "*.so", status=2)
            self.assertIn("--exclude", proc.stderr)


class EnvironmentDefaults(unittest.TestCase):
    def test_wheelfix_target_is_the_default_target(self):
        judged = run("inspect", wfx.SGL_WHEEL, env={"WHEELFIX_TARGET": "cuda13-blackwell"}, status=1)
        self.assertIn("target cuda13-blackwell", judged.stdout)
        explicit = run("inspect", wfx.SGL_WHEEL, "--target", "cuda12-hopper",
                       env={"WHEELFIX_TARGET": "cuda13-blackwell"})
        self.assertIn("target cuda12-hopper", explicit.stdout)
        self.assertNotIn("cuda13-blackwell", explicit.stdout)
        empty = run("inspect", wfx.SGL_WHEEL, env={"WHEELFIX_TARGET": ""}, status=0)
        self.assertNotIn("target ", empty.stdout)

    def test_wheelfix_torch_is_the_default_torch_path(self):
        env = {"WHEELFIX_TORCH": str(TORCH["2.10.0"])}
        proc = run("check", wfx.SGL_WHEEL, env=env, status=1)
        self.assertIn("2.10.0+cu130 NO", proc.stdout)
        proc = run("check", wfx.SGL_WHEEL, "--torch", TORCH["2.9.0"], env=env, status=0)
        self.assertNotIn("2.10.0", proc.stdout)
        with wfx.TempDir() as tmp:
            run("shim", wfx.SGL_WHEEL, "-o", tmp, env={"WHEELFIX_TORCH": str(TORCH["2.11.0"])}, status=0)
        self.assertEqual(run("check", wfx.SGL_WHEEL).returncode, 2, "without either, --torch is required")
        self.assertIn("WHEELFIX_TORCH", run("check", "--help").stdout)

    def test_retag_torch_is_a_version_and_ignores_wheelfix_torch(self):
        with wfx.TempDir() as tmp:
            proc = run("retag", wfx.SGL_WHEEL, "-o", tmp, env={"WHEELFIX_TORCH": str(TORCH["2.10.0"])})
            self.assertEqual(proc.returncode, 2)
            self.assertIn("--torch", proc.stderr)


class ArgumentFiles(unittest.TestCase):
    def test_an_argument_file_gives_the_same_result_as_the_arguments(self):
        with wfx.TempDir() as tmp:
            args_file = tmp / "relink.args"
            nested = tmp / "needed.args"
            nested.write_text("--add-needed 'libextra dir.so'  # quoted: one argument with a blank\n")
            args_file.write_text(f"# relink for the CUDA 13 layout\nrelink {wfx.SGL_WHEEL}\n"
                                 f"--set-rpath $ORIGIN/../../torch/lib:{{root}}/nvidia/cu13/lib\n"
                                 f"@{nested}\n-o {tmp / 'a'}\n")
            run(f"@{args_file}", status=0)
            run("relink", wfx.SGL_WHEEL, "--set-rpath", "$ORIGIN/../../torch/lib:{root}/nvidia/cu13/lib",
                "--add-needed", "libextra dir.so", "-o", tmp / "b", status=0)
            a, b = tmp / "a" / wfx.SGL_WHEEL.name, tmp / "b" / wfx.SGL_WHEEL.name
            self.assertEqual(a.read_bytes(), b.read_bytes())
            self.assertEqual(runpath_of(a, SM90, tmp), "$ORIGIN/../../torch/lib:$ORIGIN/../../nvidia/cu13/lib")

    def test_a_value_from_a_file_and_a_missing_file(self):
        with wfx.TempDir() as tmp:
            rpath = tmp / "rpath.txt"
            rpath.write_text("{root}/torch/lib\n")
            run("relink", wfx.SGL_WHEEL, "-o", tmp, "--set-rpath", f"@{rpath}", status=0)
            self.assertEqual(runpath_of(tmp / wfx.SGL_WHEEL.name, SM100, tmp), "$ORIGIN/../../torch/lib")
            proc = run("inspect", f"@{tmp / 'missing.args'}", status=2)
            self.assertEqual(proc.stderr, f"wheelfix: @{tmp / 'missing.args'}: cannot read the argument file\n")
            (tmp / "loop.args").write_text(f"@{tmp / 'loop.args'}")
            self.assertIn("nested", run(f"@{tmp / 'loop.args'}", status=2).stderr)
            (tmp / "open.args").write_text("inspect 'x")
            self.assertIn("unterminated", run(f"@{tmp / 'open.args'}", status=2).stderr)


class Colour(unittest.TestCase):
    ARGS = ("check", wfx.SGL_WHEEL, "--torch", TORCH["2.9.0"], "--torch", TORCH["2.10.0"])

    def test_no_colour_when_piped_colour_with_always(self):
        self.assertNotIn(ESC, run(*self.ARGS, status=1).stdout)
        coloured = run("--color", "always", *self.ARGS, env={"NO_COLOR": "1"}, status=1).stdout
        self.assertIn(ESC + "1;31mNO" + ESC + "0m", coloured)
        self.assertIn(ESC + "32myes" + ESC + "0m", coloured)
        self.assertEqual(re.sub(r"\x1b\[[0-9;]*m", "", coloured), run(*self.ARGS).stdout,
                         "colour changes nothing but the escape sequences")

    def test_never_colour_in_json_or_markdown(self):
        proc = run("--color", "always", "--json", *self.ARGS, status=1)
        self.assertNotIn(ESC, proc.stdout)
        json.loads(proc.stdout)
        self.assertNotIn(ESC, run("--color", "always", "inspect", "--format", "markdown", wfx.SGL_WHEEL).stdout)
        self.assertNotIn(ESC, run("--color", "always", "inspect", "--format", "json", wfx.SGL_WHEEL).stdout)

    def test_terminal_gets_colour_unless_no_color_or_never(self):
        status, terminal, _ = run_on_terminal(*self.ARGS)
        self.assertEqual(status, 1)
        self.assertIn(ESC, terminal)
        for env, args in (({"NO_COLOR": "1"}, ()), ({"NO_COLOR": "0"}, ()), ({}, ("--color", "never"))):
            status, terminal, _ = run_on_terminal(*args, *self.ARGS, env=env)
            self.assertEqual(status, 1)
            self.assertNotIn(ESC, terminal, (env, args))
            self.assertIn("symbols resolve against", terminal)
        _, terminal, _ = run_on_terminal(*self.ARGS, env={"NO_COLOR": ""})
        self.assertIn(ESC, terminal, "an empty NO_COLOR does not count (no-color.org)")


class ProgressBar(unittest.TestCase):
    ARGS = ("check", wfx.SGL_WHEEL, "--torch", TORCH["2.9.0"])

    def test_drawn_on_a_terminal_and_erased(self):
        status, terminal, stdout = run_on_terminal(*self.ARGS, env={"WHEELFIX_PROGRESS_DELAY_MS": "0"},
                                                   stream="stderr")
        self.assertEqual(status, 0)
        self.assertRegex(terminal, r"^\r.*\[[#.]{24}\] +\d+%")
        self.assertTrue(terminal.endswith("\r" + ESC + "K"), repr(terminal))
        self.assertIn("everything resolves", stdout)

    def test_every_command_that_reads_a_wheel_draws_it(self):
        """inspect and verify (the streaming and the plain pass), relink (the indexed
        pass), retag (sizes only), repair (its read and the read-back of its output)."""
        with tempfile.TemporaryDirectory(prefix="wfbar-") as out:
            for args in [("inspect", wfx.SGL_WHEEL), ("verify", wfx.SGL_WHEEL),
                         ("relink", wfx.SGL_WHEEL, "-o", out, "--set-rpath", "$ORIGIN", "--overwrite"),
                         ("retag", wfx.SGL_WHEEL, "--torch", "2.10", "-o", out, "--overwrite"),
                         ("repair", wfx.SGL_WHEEL, "--torch", TORCH["2.10.0"], "-o", out, "--no-load-test",
                          "--overwrite")]:
                with self.subTest(command=args[0]):
                    _, terminal, _ = run_on_terminal(*args, env={"WHEELFIX_PROGRESS_DELAY_MS": "0"}, stream="stderr")
                    # the label ("reading <wheel>") is cut from the left to the terminal's width
                    self.assertRegex(terminal, r"\r.*\.whl  \[[#.]{24}\] +\d+%  \d")
                    self.assertTrue(terminal.endswith("\r" + ESC + "K"), repr(terminal))

    def test_not_drawn_when_piped_quiet_or_quick(self):
        self.assertEqual(run(*self.ARGS, env={"WHEELFIX_PROGRESS_DELAY_MS": "0"}, status=0).stderr, "")
        _, terminal, _ = run_on_terminal("-q", *self.ARGS, env={"WHEELFIX_PROGRESS_DELAY_MS": "0"}, stream="stderr")
        self.assertEqual(terminal, "")
        _, terminal, _ = run_on_terminal(*self.ARGS, stream="stderr")
        self.assertEqual(terminal, "", "the sample takes far less than the one-second delay")


def markdown_tables(text):
    """Markdown tables as lists of rows of cells (header row first, separator dropped)."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if not all(re.fullmatch(r"-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


class Markdown(unittest.TestCase):
    def test_inspect_markdown_has_one_row_per_elf_member_and_finding(self):
        text = run("inspect", "--format", "markdown", "--target", "cuda13-blackwell", wfx.SGL_WHEEL, status=1).stdout
        doc = json.loads(run("inspect", "--format", "json", "--target", "cuda13-blackwell", wfx.SGL_WHEEL,
                             status=1).stdout)
        wheel = doc["inputs"][0]
        self.assertTrue(text.startswith(f"### `{wfx.SGL_WHEEL}`\n"))
        tables = markdown_tables(text)
        for table in tables:
            self.assertEqual(len({len(row) for row in table}), 1, f"ragged table {table}")
        facts, elves, modules, findings, coverage, libraries = tables
        self.assertIn(["name", f"`{wheel['name']}`"], facts)
        self.assertEqual([row[0] for row in elves[1:]], [f"`{e['name']}`" for e in wheel["elf_files"]])
        self.assertEqual(len(modules) - 1, len(wheel["modules"]))
        self.assertEqual(len(findings) - 1, len(wheel["target"]["findings"]))
        self.assertEqual(len(coverage) - 1, len(wheel["target"]["coverage"]))
        needs = wheel["libraries"]["members"] + wheel["libraries"]["grafts"]
        self.assertEqual(len(libraries) - 1, sum(len(m["needs"]) for m in needs))
        self.assertIn("LIES", text)

    def test_markdown_of_an_elf_file_and_several_inputs(self):
        lib = TORCH["2.9.0"] / "lib" / "libc10_cuda.so"
        text = run("inspect", "--format", "markdown", lib, wfx.SGL_WHEEL, status=0).stdout
        self.assertEqual(text.count("\n### "), 1)
        self.assertTrue(text.startswith(f"### `{lib}`\n"))

    def test_format_json_is_json_and_conflicts_are_refused(self):
        self.assertEqual(run("inspect", "--format", "json", wfx.SGL_WHEEL).stdout,
                         run("--json", "inspect", wfx.SGL_WHEEL).stdout)
        proc = run("--json", "inspect", "--format", "markdown", wfx.SGL_WHEEL, status=2)
        self.assertIn("conflicts with --json", proc.stderr)


class JUnit(unittest.TestCase):
    def test_one_case_per_member_and_torch_failures_list_the_missing_symbols(self):
        torches = [TORCH[v] for v in ("2.9.0", "2.10.0", "2.11.0")]
        with wfx.TempDir() as tmp:
            report = tmp / "check.xml"
            args = ["check", wfx.SGL_WHEEL, *[a for t in torches for a in ("--torch", t)], "--junit", report]
            run(*args, status=1)
            doc = json.loads(run("--json", *args[:-2], status=1).stdout)
            root = ET.parse(report).getroot()
            self.assertEqual(root.tag, "testsuites")
            cases = [(t, m) for t in doc["torches"] for m in t["members"]]
            failing = [(t, m) for t, m in cases if m["unresolved"] or m["missing_libraries"]]
            self.assertEqual(int(root.get("tests")), len(cases))
            self.assertEqual(int(root.get("failures")), len(failing))
            self.assertGreater(len(failing), 0)
            suites = root.findall("testsuite")
            self.assertEqual([s.get("name") for s in suites],
                             [f"torch {t['torch_version']}" for t in doc["torches"]])
            for suite, torch in zip(suites, doc["torches"]):
                testcases = suite.findall("testcase")
                self.assertEqual([c.get("name") for c in testcases], [m["member"] for m in torch["members"]])
                self.assertEqual(int(suite.get("tests")), len(testcases))
                self.assertEqual(int(suite.get("failures")), len(suite.findall("testcase/failure")))
                for case in testcases:
                    failure = case.find("failure")
                    wanted = [u["demangled"] for u in torch["unresolved"] if case.get("name") in u["needed_by"]]
                    if not wanted:
                        self.assertIsNone(failure)
                        continue
                    for name in wanted:
                        self.assertIn(name, failure.text)
                    self.assertTrue(failure.get("message").startswith(f"{len(wanted)} unresolved symbol(s)"))

    def test_an_existing_report_is_replaced_only_with_overwrite(self):
        with wfx.TempDir() as tmp:
            report = tmp / "check.xml"
            report.write_text("keep")
            args = ["check", wfx.SGL_WHEEL, "--torch", TORCH["2.9.0"], "--junit", report]
            self.assertIn("--overwrite", run(*args, status=2).stderr)
            self.assertEqual(report.read_text(), "keep")
            run(*args, "--overwrite", status=0)
            root = ET.parse(report).getroot()
            self.assertEqual((root.get("tests"), root.get("failures")), ("2", "0"))


if __name__ == "__main__":
    unittest.main()
