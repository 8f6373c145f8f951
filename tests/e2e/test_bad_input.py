"""Hostile and broken input (issue 6): every command on every case of the corpus that
tests/bad/make_corpus.py writes, plus the bad user input of the writing commands.

For each (command, case) the contract is: the exit status the case demands (2 for
input the command cannot take, 1 where verify has a finding), and on a refusal
exactly one line on stderr, `wheelfix: <the file>: <problem>`; never a traceback,
an internal error or a sanitizer report; no output file and no temporary file left
in the -o directory; the input byte-identical afterwards. A new command is one line
in COMMANDS (and its expectations in make_corpus.py)."""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

TORCH_OLD = wfx.SAMPLES / "torch-2.9.0" / "torch"
TORCH_NEW = wfx.SAMPLES / "torch-2.10.0" / "torch"
MAKE_CORPUS = wfx.SOURCE_DIR / "tests" / "bad" / "make_corpus.py"

# command -> argv after the binary, given the input and a fresh, empty output directory.
COMMANDS = {
    "inspect": lambda path, out: ["inspect", path],
    "verify": lambda path, out: ["verify", path],
    "relink": lambda path, out: ["relink", path, "-o", out if path.suffix == ".whl" else out / path.name,
                                 "--set-rpath", "$ORIGIN"],
    "check": lambda path, out: ["check", path, "--torch", TORCH_OLD],
    "index": lambda path, out: ["index", path, "-o", out / "torch.idx"],
    "shim": lambda path, out: ["shim", path, "--torch", TORCH_NEW, "-o", out],
    "retag": lambda path, out: ["retag", path, "--torch", "2.10", "-o", out],
    "repair": lambda path, out: ["repair", path, "--torch", TORCH_NEW, "-o", out, "--no-load-test"],
}

# Any report from ASan/UBSan/LSan makes the run fail, whatever its exit status.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=86",
}
FORBIDDEN = ("Traceback", "Sanitizer", "runtime error:", "internal error", "terminate called", "Aborted")


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# The contract's bounds for any invalid or hostile input (issue 16): checked on every
# run of a plain build; a sanitizer build is slower and larger by design.
LIMIT_SECONDS, LIMIT_RSS_KIB = 10, 512 * 1024
SANITIZED = "asan" in str(wfx.WHEELFIX) or os.environ.get("WHEELFIX_SANITIZED") == "1"


def run(argv, env_extra=None, timeout=120):
    """subprocess.run's result with .seconds and .peak_kib (the child's own
    ru_maxrss, from wait4: other children running beside it do not count)."""
    env = dict(os.environ)
    for key, value in SANITIZER_ENV.items():
        env.setdefault(key, value)
    env.update(env_extra or {})
    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([wfx.WHEELFIX, *map(str, argv)], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=env)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise subprocess.TimeoutExpired(argv, timeout)
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        result = subprocess.CompletedProcess(argv, proc.returncode, out.read().decode(errors="replace"),
                                             err.read().decode(errors="replace"))
    result.seconds = time.monotonic() - started
    result.peak_kib = usage.ru_maxrss
    return result


def out_of_bounds(proc):
    """Why a run broke the 10 s / 512 MiB bound ([] when it kept it)."""
    if SANITIZED:
        return []
    problems = []
    if proc.seconds > LIMIT_SECONDS:
        problems.append(f"took {proc.seconds:.1f} s, over {LIMIT_SECONDS} s")
    if proc.peak_kib > LIMIT_RSS_KIB:
        problems.append(f"peak RSS {proc.peak_kib // 1024} MiB, over {LIMIT_RSS_KIB // 1024} MiB")
    return problems


def leftovers(out):
    return sorted(str(p.relative_to(out)) for p in Path(out).rglob("*"))


def problems_of_refusal(proc, path):
    """What is wrong with a status-2 run's stderr (empty list when it is right)."""
    lines = proc.stderr.splitlines()
    if len(lines) != 1:
        return [f"expected one line on stderr, got {len(lines)}: {proc.stderr!r}"]
    line = lines[0]
    if not line.startswith("wheelfix: "):
        return [f"stderr does not start with 'wheelfix: ': {line!r}"]
    if str(path) not in line and path.name not in line:
        return [f"stderr does not name the file: {line!r}"]
    rest = line.split(str(path) if str(path) in line else path.name, 1)[1]
    if not rest.startswith(": ") or len(rest) < 6:
        return [f"stderr names no problem after the file: {line!r}"]
    return []


def open_commands(case):
    """{command: reason} of a known open defect: make_corpus.py's open_defect is
    either one reason for every command or a {command: reason} map."""
    if not case["open"]:
        return {}
    return dict(case["open"]) if isinstance(case["open"], dict) else {command: case["open"] for command in COMMANDS}


def try_case(corpus, case, command):
    """Runs one command on one case; returns a list of failure strings."""
    path = corpus / case["path"]
    expected = case["expect"][command]
    expected = expected if isinstance(expected, list) else [expected]
    before = sha256(path)
    with tempfile.TemporaryDirectory(prefix="wfbad-") as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        proc = run(COMMANDS[command](path, out), case["env"])
        label = f"{command} {case['case']}"
        failures = []
        if proc.returncode not in expected:
            failures.append(f"exit {proc.returncode}, expected {expected}; stderr: {proc.stderr.strip()[:400]!r}")
        failures += out_of_bounds(proc)
        for word in FORBIDDEN:
            if word in proc.stderr or word in proc.stdout:
                failures.append(f"output has {word!r}: {proc.stderr.strip()[:2000]!r}")
        if proc.returncode == 2:
            failures += problems_of_refusal(proc, path)
            if leftovers(out):
                failures.append(f"refused but left {leftovers(out)} in the output directory")
        else:
            hidden = [name for name in leftovers(out) if Path(name).name.startswith(".")]
            if hidden:
                failures.append(f"temporary files left: {hidden}")
        if case.get("note") and command == "inspect" and case["note"] not in proc.stdout + proc.stderr:
            failures.append(f"no note naming {case['note']}: {proc.stdout[-400:]!r}")
        if sha256(path) != before:
            failures.append("the input changed")
        return [f"{label}: {failure}" for failure in failures]


class BadInputCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="wfcorpus-")
        cls.corpus = Path(cls.tmp.name)
        subprocess.run([sys.executable, MAKE_CORPUS, cls.corpus], check=True, stdout=subprocess.DEVNULL)
        cls.cases = json.loads((cls.corpus / "manifest.json").read_text())

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_command_on_every_case(self):
        jobs = [(case, command) for case in self.cases for command in COMMANDS]
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda job: try_case(self.corpus, *job), jobs))
        failures, still_open = [], set()
        for (case, command), result in zip(jobs, results):
            if command in open_commands(case) and result:
                still_open.add((case["case"], command))
            else:
                failures += result
        for case in self.cases:  # a known open defect is reported; once fixed, its marker must go
            for command, reason in open_commands(case).items():
                if (case["case"], command) not in still_open:
                    failures.append(f"{command} {case['case']}: fixed now, remove open_defect in make_corpus.py")
                else:
                    print(f"\nOPEN (known, not failing): {command} {case['case']}: {reason}", file=sys.stderr)
        tried = {command: sum(1 for case in self.cases if case["group"] != "control") for command in COMMANDS}
        print(f"\nbad inputs tried per command ({len(self.cases) - sum(c['group'] == 'control' for c in self.cases)}"
              f" cases + {sum(c['group'] == 'control' for c in self.cases)} controls): " +
              ", ".join(f"{command} {count}" for command, count in tried.items()), file=sys.stderr)
        self.assertEqual(failures, [], "\n" + "\n".join(failures))

    def test_repair_with_its_load_test_refuses_the_load_test_cases(self):
        """The corpus's repair runs with --no-load-test; the cases of the group
        "load-test" are refusals of the load test: with it, repair exits 2 with one
        line naming the file and the problem, nothing in the output directory,
        nothing left in TMPDIR (the load test's directory), the input untouched."""
        cases = [case for case in self.cases if case["group"] == "load-test"]
        self.assertEqual(len(cases), 2, [case["case"] for case in cases])
        for case in cases:
            with self.subTest(case=case["case"]), tempfile.TemporaryDirectory(prefix="wfbad-load-") as tmp:
                path, out, private_tmp = self.corpus / case["path"], Path(tmp) / "out", Path(tmp) / "tmpdir"
                out.mkdir()
                private_tmp.mkdir()
                before = sha256(path)
                proc = run(["repair", path, "--torch", TORCH_NEW, "-o", out], dict(case["env"], TMPDIR=str(private_tmp)))
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertEqual(problems_of_refusal(proc, path), [])
                self.assertIn(case["refusal"], proc.stderr)
                self.assertEqual(leftovers(out), [])
                self.assertEqual(leftovers(private_tmp), [])
                self.assertEqual(sha256(path), before)

    def test_limits_are_overridable(self):
        bomb = next(self.corpus / c["path"] for c in self.cases if c["case"] == "zip_bomb_ratio")
        proc = run(["verify", bomb], {"WHEELFIX_MAX_RATIO": "0"})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        small = next(self.corpus / c["path"] for c in self.cases if c["case"] == "zip_bomb_total_limit")
        self.assertEqual(run(["verify", small]).returncode, 0)
        for bad in ("lots", "-1", "1Q"):
            proc = run(["verify", small], {"WHEELFIX_MAX_INFLATED": bad})
            self.assertEqual(proc.returncode, 2)
            self.assertIn("WHEELFIX_MAX_INFLATED", proc.stderr)


class BadUserInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="wfuser-")
        self.dir = Path(self.tmp.name)
        self.wheel = self.dir / "in" / wfx.SGL_WHEEL.name
        self.wheel.parent.mkdir()
        self.wheel.write_bytes(wfx.SGL_WHEEL.read_bytes())
        self.elf = self.dir / "in" / "libc10.so"
        self.elf.write_bytes((TORCH_OLD / "lib" / "libc10.so").read_bytes())
        self.hashes = {p: sha256(p) for p in (self.wheel, self.elf)}

    def tearDown(self):
        for path, digest in self.hashes.items():
            self.assertEqual(sha256(path), digest, f"{path} changed")
        self.tmp.cleanup()

    def refused(self, argv, mentions):
        proc = run(argv)
        self.assertEqual(proc.returncode, 2, f"{argv}: {proc.stdout}{proc.stderr}")
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertIn(mentions, proc.stderr)
        for word in FORBIDDEN:
            self.assertNotIn(word, proc.stderr)
        return proc

    def test_option_values_with_newline(self):
        # A NUL cannot travel through argv; the core refuses it too (unit tests).
        out = self.dir / "out"
        for option in ("--set-rpath", "--add-rpath", "--add-needed", "--set-soname"):
            self.refused(["relink", self.wheel, "-o", out, option, "lib\nevil"], option)
        self.refused(["relink", self.wheel, "-o", out, "--replace-needed", "libc10.so=x\ny"], "--replace-needed")
        self.assertFalse(out.exists() and any(out.iterdir()))

    def test_map_to_symbols_that_do_not_exist(self):
        out = self.dir / "out"
        self.refused(["shim", self.wheel, "--torch", TORCH_NEW, "-o", out, "--map", "_ZN3foo3barEv=_ZN3foo3bazEv"],
                     "_ZN3foo3barEv")
        self.refused(["shim", self.wheel, "--torch", TORCH_NEW, "-o", out, "--map", "nonsense"], "--map")
        self.assertFalse(out.exists() and any(out.iterdir()))

    def test_output_directory_equal_to_the_input_directory(self):
        self.refused(["relink", self.wheel, "-o", self.wheel.parent, "--set-rpath", "$ORIGIN"], "input")
        self.refused(["shim", self.wheel, "--torch", TORCH_NEW, "-o", self.wheel.parent], "input")
        self.refused(["relink", self.elf, "-o", self.elf, "--set-rpath", "$ORIGIN"], "input")
        self.assertEqual(leftovers(self.wheel.parent), sorted([self.wheel.name, self.elf.name]))

    def test_output_over_an_existing_file_needs_overwrite(self):
        out = self.dir / "out"
        out.mkdir()
        writers = {
            "relink": (["relink", self.wheel, "-o", out, "--set-rpath", "$ORIGIN"], out / self.wheel.name),
            "relink-elf": (["relink", self.elf, "-o", out / "libc10.so", "--set-rpath", "$ORIGIN"], out / "libc10.so"),
            "shim": (["shim", self.wheel, "--torch", TORCH_NEW, "-o", out], out / self.wheel.name),
            "index": (["index", TORCH_OLD, "-o", out / "torch.idx"], out / "torch.idx"),
        }
        for name, (argv, target) in writers.items():
            with self.subTest(command=name):
                target.write_bytes(b"precious\n")
                self.refused(argv, "--overwrite")
                self.assertEqual(target.read_bytes(), b"precious\n")
                proc = run(argv + ["--overwrite"])
                self.assertIn(proc.returncode, (0, 1), proc.stderr)
                self.assertNotEqual(target.read_bytes(), b"precious\n")
                self.assertEqual([p for p in leftovers(out) if Path(p).name.startswith(".")], [])
                target.unlink()


class SpecialFiles(unittest.TestCase):
    """FIFOs, devices and sockets where a file is read or written, and @file
    arguments that never end: refused at once (never opened in a way that blocks),
    one line, exit 2, within the bounds."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="wfspecial-")
        self.dir = Path(self.tmp.name)
        self.fifo = self.dir / "input.whl"
        os.mkfifo(self.fifo)  # nobody writes to it: a blocking open would hang the test

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, argv, mentions):
        proc = run(argv, timeout=LIMIT_SECONDS * 3)
        self.assertEqual(proc.returncode, 2, f"{argv}: {proc.stdout}{proc.stderr}")
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertIn(mentions, proc.stderr)
        self.assertEqual(out_of_bounds(proc), [])
        return proc

    def test_fifo_and_device_as_input(self):
        for special in (self.fifo, Path("/dev/zero")):
            out = self.dir / "out"
            for argv in (["inspect", special], ["verify", special], ["check", special, "--torch", TORCH_OLD],
                         ["relink", special, "-o", out, "--set-rpath", "$ORIGIN"], ["index", special, "-o", out / "x.idx"],
                         ["repair", special, "--torch", TORCH_NEW, "-o", out, "--no-load-test"]):
                with self.subTest(argv=argv):
                    self.refused(argv, str(special))
                    self.assertFalse(out.exists() and any(out.iterdir()))

    def test_fifo_as_torch_target_and_output(self):
        self.refused(["check", wfx.SGL_WHEEL, "--torch", self.fifo], "FIFO")
        self.refused(["inspect", wfx.SGL_WHEEL, "--target", self.fifo], "FIFO")
        self.refused(["index", TORCH_OLD, "-o", self.fifo], "FIFO")
        self.refused(["index", TORCH_OLD, "-o", self.fifo, "--overwrite"], "FIFO")
        self.assertTrue(self.fifo.is_fifo())

    def test_fifo_as_torch_version_file(self):
        torch = self.dir / "torch"
        (torch / "lib").mkdir(parents=True)
        for library in (TORCH_OLD / "lib").iterdir():
            (torch / "lib" / library.name).write_bytes(library.read_bytes())
        os.mkfifo(torch / "version.py")
        self.refused(["check", wfx.SGL_WHEEL, "--torch", torch], "version.py")

    def test_argument_files_that_never_end(self):
        self.refused(["inspect", "@/dev/zero"], "@/dev/zero")
        self.refused(["inspect", f"@{self.fifo}"], "FIFO")
        a, b = self.dir / "a.args", self.dir / "b.args"
        a.write_text(f"@{b} @{b}\n")
        b.write_text(f"@{a} @{a}\n")
        self.refused(["inspect", f"@{a}"], "argument files")

    def test_dangling_link_in_torch_lib_is_skipped_with_a_note(self):
        torch = self.dir / "torch"
        (torch / "lib").mkdir(parents=True)
        for library in (TORCH_OLD / "lib").iterdir():
            (torch / "lib" / library.name).write_bytes(library.read_bytes())
        (torch / "lib" / "libgone.so").symlink_to("libgone.so.1")
        proc = run(["check", wfx.SGL_WHEEL, "--torch", torch])
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        self.assertIn("note: skipped", proc.stderr)
        self.assertIn("libgone.so", proc.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
