"""Nothing left behind, nothing replaced (issue 16), under signals and races:

- SIGINT, SIGTERM and SIGHUP sent to a writing command while its temporary exists
  end it with status 130, 143, 129, and leave nothing: no output, no hidden
  temporary, the input unchanged;
- the same signals during repair's load test also remove the load test's
  directory (in TMPDIR) and kill the loader's whole process group;
- two processes writing the same output without --overwrite: exactly one wheel,
  and the other exits 2 saying it already exists (the check is part of the final
  rename, renameat2 RENAME_NOREPLACE), never a silent replacement;
- repair's load test has a time limit (WHEELFIX_LOAD_TEST_TIMEOUT): an extension
  whose initialiser hangs, or forks a child that keeps the loader's stdout open,
  is reported "load test timed out", nothing is written, nothing is left running;
  a wheel whose load test fails is not written either."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402
from test_crash_safety import make_big_wheel, sha256, temporaries, visible  # noqa: E402
from test_shim import make_wheel  # noqa: E402

TORCH_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"
WHEEL_MB = int(os.environ.get("WHEELFIX_SIGNAL_WHEEL_MB", "160"))
SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}

# Extensions whose initialiser hangs: in the loader itself, or in a child it forks
# that keeps the loader's stdout (the pipe wheelfix reads) open. Each writes its
# pid to a file so the test can tell whether it is still running.
HANGING_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void note_pid(void) {
    const char* path = getenv("WHEELFIX_TEST_PID_FILE");
    FILE* f = path ? fopen(path, "a") : NULL;
    if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
}
__attribute__((constructor)) static void hang(void) {
#ifdef FORK_CHILD
    if (fork() == 0) { note_pid(); for (;;) pause(); }
    return;
#else
    note_pid();
    for (;;) pause();
#endif
}
int entry(void) { return 0; }
"""


def build_extension(tmp, name, *defines):
    source = tmp / f"{name}.c"
    source.write_text(HANGING_C)
    library = tmp / f"{name}.so"
    # An absolute build-tree RPATH: repair drops it, so the extension is edited and load-tested.
    subprocess.run(["gcc", "-shared", "-fPIC", *defines, "-o", library, source,
                    "-Wl,-rpath,/home/builder/project/build/lib"], check=True)
    return make_wheel(tmp, name, "cp310-abi3-linux_x86_64", {f"{name}/ext.so": library.read_bytes()})


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not running: its parent (gone) never reaped it
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def wait_for(condition, limit=60.0):
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > limit:
            return False
        time.sleep(0.002)
    return True


def environment(tmpdir, **extra):
    env = dict(os.environ)
    env["TMPDIR"] = str(tmpdir)
    env.update({k: str(v) for k, v in extra.items()})
    return env


class SignalDuringWrite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp_context = wfx.TempDir()
        cls.tmp = cls.tmp_context.__enter__()
        cls.wheel = make_big_wheel(cls.tmp, WHEEL_MB)
        cls.wheel_sha = sha256(cls.wheel)

    @classmethod
    def tearDownClass(cls):
        cls.tmp_context.__exit__(None, None, None)

    def test_signals_remove_the_temporary_and_exit_128_plus_the_signal(self):
        writers = {
            "relink": lambda out: ["relink", self.wheel, "-o", out, "--set-rpath", "{root}/torch/lib"],
            "repair": lambda out: ["repair", self.wheel, "--torch", TORCH_210, "-o", out, "--no-load-test"],
        }
        for name, argv_for in writers.items():
            for sig, status in SIGNALS.items():
                with self.subTest(writer=name, signal=sig.name):
                    out = self.tmp / f"out-{name}-{sig.name}"
                    out.mkdir()
                    private_tmp = self.tmp / f"tmp-{name}-{sig.name}"
                    private_tmp.mkdir()
                    proc = subprocess.Popen([wfx.WHEELFIX, *map(str, argv_for(out))], stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE, env=environment(private_tmp))
                    self.assertTrue(wait_for(lambda: temporaries(out) or proc.poll() is not None))
                    self.assertIsNone(proc.poll(), f"{name} ended before its temporary could be signalled")
                    proc.send_signal(sig)
                    proc.wait(30)
                    stderr = proc.stderr.read().decode(errors="replace")
                    proc.stderr.close()
                    self.assertEqual(proc.returncode, status, stderr)
                    self.assertEqual(list(out.iterdir()), [], f"{name} left files after {sig.name}")
                    self.assertEqual(list(private_tmp.iterdir()), [])
                    self.assertEqual(sha256(self.wheel), self.wheel_sha, "the input changed")

    def test_two_writers_of_one_output_one_refuses(self):
        for name, extra in (("relink", ["--set-rpath", "{root}/torch/lib"]), ("retag", ["--torch", "2.10"])):
            with self.subTest(writer=name):
                out = self.tmp / f"race-{name}"
                out.mkdir()
                argv = [wfx.WHEELFIX, name, str(self.wheel), "-o", str(out), *extra]
                procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
                results = []
                for proc in procs:
                    proc.wait(120)
                    results.append((proc.returncode, proc.stderr.read().decode(errors="replace")))
                    proc.stderr.close()
                statuses = sorted(status for status, _ in results)
                self.assertEqual(statuses, [0, 2], results)
                refusal = next(text for status, text in results if status == 2)
                self.assertIn("already exists", refusal)
                self.assertEqual(len(refusal.strip().splitlines()), 1, refusal)
                [written] = visible(out)
                self.assertEqual(temporaries(out), [])
                wfx.run("verify", written, check_status=0)
                # --overwrite: both succeed, one file.
                argv.append("--overwrite")
                procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
                for proc in procs:
                    proc.wait(120)
                    self.assertEqual(proc.returncode, 0, proc.stderr.read())
                    proc.stderr.close()
                self.assertEqual(visible(out), [written])


@unittest.skipUnless(shutil.which("gcc") and shutil.which("python3"), "needs gcc and python3")
class LoadTestLimits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp_context = wfx.TempDir()
        cls.tmp = cls.tmp_context.__enter__()
        cls.hanging = build_extension(cls.tmp, "hangext")
        cls.forking = build_extension(cls.tmp, "forkext", "-DFORK_CHILD")

    @classmethod
    def tearDownClass(cls):
        cls.tmp_context.__exit__(None, None, None)

    def pids(self, pid_file):
        return [int(line) for line in pid_file.read_text().split()] if pid_file.exists() else []

    def run_repair(self, label, wheel, **env):
        out, private_tmp, pid_file = self.tmp / f"out-{label}", self.tmp / f"tmp-{label}", self.tmp / f"{label}.pids"
        private_tmp.mkdir()
        began = time.monotonic()
        proc = subprocess.run([wfx.WHEELFIX, "repair", str(wheel), "--torch", str(TORCH_210), "-o", str(out)],
                              capture_output=True, text=True, timeout=60,
                              env=environment(private_tmp, WHEELFIX_TEST_PID_FILE=pid_file, **env))
        return proc, time.monotonic() - began, out, private_tmp, self.pids(pid_file)

    def test_a_forking_initialiser_is_killed_with_the_loader(self):
        proc, took, out, private_tmp, started = self.run_repair("forks", self.forking)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("loads forkext/ext.so", proc.stdout)
        self.assertLess(took, 30, "the child holding the loader's stdout must not keep repair waiting")
        self.assertEqual(len(visible(out)), 1)
        self.assertEqual(list(private_tmp.iterdir()), [])
        self.assertTrue(started, "the initialiser never forked: the test proves nothing")
        self.assertTrue(wait_for(lambda: not any(alive(pid) for pid in started), 5), f"still running: {started}")

    def test_a_hanging_initialiser_times_out_and_nothing_is_written(self):
        for label, wheel in (("hangs", self.hanging),):
            with self.subTest(extension=label):
                out, private_tmp, pid_file = self.tmp / f"out-{label}", self.tmp / f"tmp-{label}", self.tmp / f"{label}.pids"
                private_tmp.mkdir()
                began = time.monotonic()
                proc = subprocess.run([wfx.WHEELFIX, "repair", str(wheel), "--torch", str(TORCH_210), "-o", str(out)],
                                      capture_output=True, text=True, timeout=60,
                                      env=environment(private_tmp, WHEELFIX_LOAD_TEST_TIMEOUT=2,
                                                      WHEELFIX_TEST_PID_FILE=pid_file))
                took = time.monotonic() - began
                self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
                self.assertIn("load test timed out", proc.stdout)
                self.assertIn("not written", proc.stdout)
                self.assertLess(took, 30)
                self.assertFalse(out.exists() and any(out.iterdir()), list(out.iterdir()) if out.exists() else None)
                self.assertEqual(list(private_tmp.iterdir()), [])
                started = self.pids(pid_file)
                self.assertTrue(started, "the initialiser never ran: the test proves nothing")
                self.assertTrue(wait_for(lambda: not any(alive(pid) for pid in started), 5), f"still running: {started}")

    def test_an_unusable_tmpdir_is_a_refusal_that_leaves_nothing(self):
        """The load test's directory cannot be made: exit 2, one line, and the wheel,
        already written to its staging place, does not appear."""
        out = self.tmp / "out-no-tmpdir"
        proc = subprocess.run([wfx.WHEELFIX, "repair", str(self.hanging), "--torch", str(TORCH_210), "-o", str(out)],
                              capture_output=True, text=True, timeout=60,
                              env=environment(self.tmp / "no-such-directory"))
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertEqual(list(out.iterdir()) if out.exists() else [], [])

    def test_signal_during_the_load_test_removes_its_directory_and_kills_the_loader(self):
        for sig, status in SIGNALS.items():
            with self.subTest(signal=sig.name):
                out, private_tmp = self.tmp / f"sig-out-{sig.name}", self.tmp / f"sig-tmp-{sig.name}"
                pid_file = self.tmp / f"sig-{sig.name}.pids"
                private_tmp.mkdir()
                proc = subprocess.Popen([wfx.WHEELFIX, "repair", str(self.hanging), "--torch", str(TORCH_210), "-o", str(out)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        env=environment(private_tmp, WHEELFIX_TEST_PID_FILE=pid_file))
                self.assertTrue(wait_for(lambda: self.pids(pid_file) or proc.poll() is not None))
                self.assertIsNone(proc.poll(), "repair ended before its load test could be signalled")
                self.assertTrue(any(private_tmp.iterdir()), "the load test's directory should exist by now")
                proc.send_signal(sig)
                proc.wait(30)
                proc.stderr.close()
                self.assertEqual(proc.returncode, status)
                self.assertEqual(list(private_tmp.iterdir()), [])
                self.assertFalse(out.exists() and any(out.iterdir()))
                started = self.pids(pid_file)
                self.assertTrue(wait_for(lambda: not any(alive(pid) for pid in started), 5), f"still running: {started}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
