"""Crash safety of every command that writes a wheel (issue 6): kill -9 at random
moments, a file-size limit (`ulimit -f`) and a full file system (a small tmpfs).

The contract (man/wheelfix.1 "CRASH SAFETY"): output goes to a hidden temporary
".<name>.wheelfix-<pid>-<n>" beside the destination and is renamed into place when
complete, so
- a killed run leaves either the complete, correct wheel (byte-identical to an
  undisturbed run's, and `verify` passes) or no wheel at all, and the input is
  byte-identical; it may leave its hidden temporary, which the next write into the
  same directory removes (its pid is gone and nobody holds its lock);
- a clean exit leaves no temporary, whatever the exit status;
- a write that fails for lack of space (ENOSPC) or past the file-size limit
  (EFBIG: wheelfix ignores SIGXFSZ) exits with status 2 and one line naming the
  output and the system's reason, and leaves nothing in the output directory.

The writers are one table (WRITERS): a new command that writes is one line there.
Environment: WHEELFIX_KILL_TRIALS (default 6 per writer), WHEELFIX_KILL_WHEEL_MB
(default 160, the generated wheel's size)."""
import hashlib
import io
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

TORCH_OLD = wfx.SAMPLES / "torch-2.9.0" / "torch"
TORCH_NEW = wfx.SAMPLES / "torch-2.10.0" / "torch"
TRIALS = int(os.environ.get("WHEELFIX_KILL_TRIALS", "6"))
WHEEL_MB = int(os.environ.get("WHEELFIX_KILL_WHEEL_MB", "160"))

# name -> argv after the binary, given the input wheel and the output directory.
WRITERS = {
    "relink": lambda wheel, out: ["relink", wheel, "-o", out, "--set-rpath", "{root}/torch/lib"],
    "retag": lambda wheel, out: ["retag", wheel, "--torch", "2.10", "-o", out],
    "shim": lambda wheel, out: ["shim", wheel, "--torch", TORCH_NEW, "-o", out],
    "repair": lambda wheel, out: ["repair", wheel, "--torch", TORCH_NEW, "-o", out, "--no-load-test"],
}
# Writers of other files, for the file-size cases: name -> argv given the output directory.
FILE_WRITERS = {
    "index": lambda out: ["index", TORCH_OLD, "-o", out / "torch.idx"],
}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def visible(directory):
    return sorted(p for p in Path(directory).iterdir() if not p.name.startswith("."))


def temporaries(directory):
    return sorted(p.name for p in Path(directory).iterdir() if ".wheelfix-" in p.name)


def make_big_wheel(directory, megabytes):
    """The sample sgl-kernel wheel grown to `megabytes`: one extension padded with
    incompressible bytes (deflated: read through the splice path) and a stored data
    member (copied raw by the writer), RECORD regenerated. Deterministic."""
    noise = random.Random(20251202)
    elf_pad = noise.randbytes(megabytes // 3 << 20)
    data = noise.randbytes((megabytes - megabytes // 3) << 20)
    target = Path(directory) / wfx.SGL_WHEEL.name
    with zipfile.ZipFile(wfx.SGL_WHEEL) as source, zipfile.ZipFile(target, "w") as out:
        record_name = next(n for n in source.namelist() if n.endswith(".dist-info/RECORD"))
        lines = []
        for info in source.infolist():
            if info.filename == record_name:
                continue
            content = source.read(info)
            if info.filename == "sgl_kernel/sm100/common_ops.abi3.so":
                content += elf_pad  # bytes after the section headers: ignored by loaders
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, content, compresslevel=1)
            if not info.is_dir():
                lines.append(f"{info.filename},{wfx.record_hash(content)},{len(content)}")
        blob = zipfile.ZipInfo("sgl_kernel/data/blob.bin", date_time=(2025, 1, 1, 0, 0, 0))
        blob.external_attr = 0o100644 << 16
        out.writestr(blob, data, compress_type=zipfile.ZIP_STORED)
        lines.append(f"{blob.filename},{wfx.record_hash(data)},{len(data)}")
        lines.append(f"{record_name},,")
        record = zipfile.ZipInfo(record_name, date_time=(2025, 1, 1, 0, 0, 0))
        record.external_attr = 0o100644 << 16
        out.writestr(record, "\n".join(lines) + "\n", compress_type=zipfile.ZIP_DEFLATED)
    return target


def start(argv):
    return subprocess.Popen([wfx.WHEELFIX, *map(str, argv)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def timed_clean_run(argv, out):
    """Runs to the end, watching the output directory: (seconds in all, seconds its
    temporary existed, i.e. the write itself, stderr, exit status)."""
    stale = set(temporaries(out))
    began = time.monotonic()
    proc = start(argv)
    appeared = vanished = None
    while proc.poll() is None:
        if set(temporaries(out)) - stale:
            appeared = appeared or time.monotonic()
        elif appeared and not vanished:
            vanished = time.monotonic()
        time.sleep(0.0005)
    ended = time.monotonic()
    with proc.stderr:
        stderr = proc.stderr.read().decode(errors="replace")
    writing = (vanished or ended) - appeared if appeared else 0.0
    return ended - began, writing, stderr, proc.returncode


def kill_at(argv, out, delay, after_temporary):
    """Starts a run and SIGKILLs it `delay` seconds after its start, or after its
    own temporary appeared (temporaries a killed run left do not count); returns
    (killed while writing, exit status)."""
    stale = set(temporaries(out))
    proc = start(argv)
    origin = time.monotonic()
    if after_temporary:
        while proc.poll() is None and not set(temporaries(out)) - stale:
            pass  # no sleep: on a fast disk the whole write can take a millisecond
        origin = time.monotonic()
    while proc.poll() is None and time.monotonic() - origin < delay:
        time.sleep(0.0002)
    writing = bool(set(temporaries(out)) - stale)
    proc.kill()
    proc.wait()
    proc.stderr.close()
    return writing, proc.returncode


class KillDuringWrite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="wfkill-")
        cls.dir = Path(cls.tmp.name)
        began = time.monotonic()
        cls.wheel = make_big_wheel(cls.dir, WHEEL_MB)
        cls.wheel_sha = sha256(cls.wheel)
        print(f"\ngenerated {cls.wheel.stat().st_size / 2**20:.0f} MiB wheel in {time.monotonic() - began:.1f} s",
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_kill_9_at_random_moments(self):
        rng = random.Random(int(os.environ.get("WHEELFIX_KILL_SEED", "6")))
        survived = {}
        for name, argv_for in WRITERS.items():
            with self.subTest(writer=name):
                out = self.dir / f"out-{name}"
                out.mkdir()
                argv = argv_for(self.wheel, out)
                took, writing_window, stderr, status = timed_clean_run(argv, out)
                self.assertIn(status, (0, 1), f"{name}: {stderr}")
                self.assertEqual(temporaries(out), [], f"{name}: a clean exit left temporaries")
                [reference] = visible(out)
                reference_sha = sha256(reference)
                self.assertEqual(wfx.run("verify", reference).returncode, 0, f"{name}: the reference does not verify")
                reference.unlink()
                outcomes = {"trials": 0, "nothing": 0, "complete": 0, "during write": 0}

                def trial(delay, after_temporary):
                    writing, _ = kill_at(argv, out, delay, after_temporary)
                    label = f"{name} trial {outcomes['trials']} (killed {delay:.3f} s after " + \
                        ("its temporary appeared)" if after_temporary else "its start)")
                    outcomes["trials"] += 1
                    outcomes["during write"] += writing
                    finished = visible(out)
                    if finished:
                        self.assertEqual(finished, [reference], f"{label}: unexpected {finished}")
                        self.assertEqual(sha256(reference), reference_sha, f"{label}: a partial or wrong wheel")
                        outcomes["complete"] += 1
                        reference.unlink()
                    else:
                        outcomes["nothing"] += 1
                    self.assertEqual(sha256(self.wheel), self.wheel_sha, f"{label}: the input changed")

                for number in range(TRIALS):
                    after_temporary = number % 2 == 1  # every other kill aims at the write itself
                    trial(rng.uniform(0, writing_window if after_temporary else took), after_temporary)
                for _ in range(20):  # a write of a few ms can slip between polls: aim until one lands
                    if outcomes["during write"]:
                        break
                    trial(0.0, True)
                left = temporaries(out)
                # The next run cleans what the killed ones left, and leaves nothing itself.
                _, _, stderr, status = timed_clean_run(argv, out)
                self.assertIn(status, (0, 1), stderr)
                self.assertEqual(temporaries(out), [], f"{name}: stale temporaries {left} not removed")
                self.assertEqual(sha256(reference), reference_sha)
                self.assertGreater(outcomes["during write"], 0, f"{name}: no kill landed during the write")
                survived[name] = outcomes
                print(f"{name}: {outcomes['trials']} kill -9 trials survived ({outcomes['nothing']} left nothing, "
                      f"{outcomes['complete']} the complete wheel, {outcomes['during write']} killed while writing; "
                      f"clean run {took:.2f} s, of it writing {writing_window:.2f} s; "
                      f"{len(left)} stale temporaries removed by the next run)", file=sys.stderr)
        self.assertEqual(len(survived), len(WRITERS))

    def test_stale_temporary_of_a_live_process_is_kept(self):
        out = self.dir / "out-live"
        out.mkdir()
        # A temporary named for a live process (this one), and one holding a lock
        # although its pid is gone (a writer on another machine sharing the directory).
        live = out / f".x.whl.wheelfix-{os.getpid()}-1"
        live.write_bytes(b"being written")
        locked = out / ".y.whl.wheelfix-999999999-2"
        locked.write_bytes(b"being written elsewhere")
        import fcntl
        with open(locked, "rb") as holder:
            fcntl.flock(holder, fcntl.LOCK_EX)
            dead = out / ".z.whl.wheelfix-999999998-3"
            dead.write_bytes(b"abandoned")
            not_ours = out / ".notes.wheelfix-backup"
            not_ours.write_bytes(b"someone else's file")
            wfx.run(*WRITERS["relink"](wfx.SGL_WHEEL, out), check_status=0)
        self.assertTrue(live.exists() and locked.exists() and not_ours.exists())
        self.assertFalse(dead.exists())


def limit_file_size(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def tmpfs(directory, size):
    """Mounts a tmpfs of `size` at `directory`; False when not permitted."""
    directory.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", directory], capture_output=True)
    return proc.returncode == 0


class FullDisk(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="wffull-")
        self.dir = Path(self.tmp.name)
        self.wheel = self.dir / wfx.SGL_WHEEL.name
        shutil.copyfile(wfx.SGL_WHEEL, self.wheel)
        self.wheel_sha = sha256(self.wheel)

    def tearDown(self):
        self.assertEqual(sha256(self.wheel), self.wheel_sha, "the input changed")
        self.tmp.cleanup()

    def refused(self, argv, out, reasons, preexec=None):
        # restore_signals (the default) gives the child SIGXFSZ's default action back:
        # wheelfix itself must ignore it.
        proc = subprocess.run([wfx.WHEELFIX, *map(str, argv)], capture_output=True, text=True, preexec_fn=preexec)
        self.assertEqual(proc.returncode, 2, f"{argv}: {proc.stdout}{proc.stderr}")
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith(f"wheelfix: {out}"), lines[0])  # names the output
        self.assertTrue(any(reason in lines[0] for reason in reasons), lines[0])
        self.assertEqual(list(Path(out).iterdir()) if Path(out).is_dir() else [], [], "something was left behind")
        return lines[0]

    def test_file_size_limit(self):
        for name, argv_for in WRITERS.items():
            with self.subTest(writer=name):
                out = self.dir / f"out-{name}"
                out.mkdir()
                self.refused(argv_for(self.wheel, out), out, ["File too large"], limit_file_size(8192))
        for name, argv_for in FILE_WRITERS.items():
            with self.subTest(writer=name):
                out = self.dir / f"out-{name}"
                out.mkdir()
                self.refused(argv_for(out), out, ["File too large"], limit_file_size(64))  # the index is ~400 B

    def test_full_file_system(self):
        if os.geteuid() != 0:
            self.skipTest("mounting a tmpfs needs root")
        for name, argv_for in WRITERS.items():
            with self.subTest(writer=name):
                out = self.dir / f"tmpfs-{name}"
                if not tmpfs(out, "16k"):
                    self.skipTest("mount -t tmpfs is not permitted here")
                try:
                    self.refused(argv_for(self.wheel, out), out, ["No space left on device"])
                finally:
                    subprocess.run(["umount", out], check=False)


if __name__ == "__main__":
    unittest.main(verbosity=2)
