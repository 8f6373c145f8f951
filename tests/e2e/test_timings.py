"""--timings on every command: after the command, stderr names where the time went
(read, inflate, parse, edit, deflate/splice, hash, write, proofs) and the peak RSS;
the phases a command does are the ones with timed scopes; stdout is untouched, so
--json output stays one valid JSON document; without --timings nothing is added."""
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

PHASES = ["read", "inflate", "parse", "edit", "deflate/splice", "hash", "write", "proofs"]
HEADER = re.compile(r"^timings: wall (\d+\.\d{3}) s, peak RSS (\d+\.\d) MiB( \(largest child (\d+\.\d) MiB\))? "
                    r"\(phases: self time, summed over threads\)$")
PHASE_LINE = re.compile(r"^  (\S+)\s+(\d+\.\d{3}) s\s+(\d+) scopes?(\s+(\d+\.\d) MB)?$")
TORCH_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"
PLAIN = wfx.SAMPLES / "plainext-1.0.0-cp311-cp311-linux_x86_64.whl"
SO = wfx.SAMPLES / "torch-2.9.0" / "torch" / "lib" / "libc10_cuda.so"


def run(*args):
    return subprocess.run([wfx.WHEELFIX, *map(str, args)], capture_output=True, text=True)


def timings_of(stderr):
    """{'wall': s, 'rss': MiB, 'child': MiB or None, phase: (seconds, scopes)} from the --timings lines."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("timings: ")]
    if len(starts) != 1:
        raise AssertionError(f"expected one timings header on stderr, got {len(starts)}:\n{stderr}")
    at = starts[0]
    header = HEADER.match(lines[at])
    if not header:
        raise AssertionError(f"malformed timings header: {lines[at]!r}")
    result = {"wall": float(header[1]), "rss": float(header[2]), "child": float(header[4]) if header[4] else None}
    body = lines[at + 1:at + 1 + len(PHASES)]
    if len(body) != len(PHASES) or len(lines) != at + 1 + len(PHASES):
        raise AssertionError(f"expected the {len(PHASES)} phase lines to end stderr:\n{stderr}")
    for phase, line in zip(PHASES, body):
        m = PHASE_LINE.match(line)
        if not m or m[1] != phase:
            raise AssertionError(f"expected the line of phase {phase!r}, got {line!r}")
        result[phase] = (float(m[2]), int(m[3]))
    return result


class Timings(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-timings-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def timed(self, *args, status=0):
        proc = run("--timings", *args)
        self.assertEqual(proc.returncode, status, f"wheelfix --timings {args}: {proc.stdout}\n{proc.stderr}")
        report = timings_of(proc.stderr)
        self.assertGreater(report["rss"], 1.0)
        self.assertGreaterEqual(report["wall"], 0.0)
        return proc, report

    def assert_ran(self, report, *phases):
        for phase in phases:
            self.assertGreater(report[phase][1], 0, f"phase {phase} has no timed scope: {report}")

    def test_inspect_reads_inflates_parses_and_hashes(self):
        proc, report = self.timed("inspect", wfx.SGL_WHEEL)
        self.assertIn("RECORD      ok", proc.stdout)
        self.assert_ran(report, "read", "inflate", "parse", "hash")
        self.assertEqual(report["write"][1], 0)
        self.assertEqual(report["proofs"][1], 0)

    def test_json_output_stays_one_valid_document(self):
        for args in (["inspect", wfx.SGL_WHEEL], ["verify", wfx.SGL_WHEEL],
                     ["check", wfx.SGL_WHEEL, "--torch", TORCH_210],
                     ["check", wfx.SGL_WHEEL, "--torch-release", "2.9.1,2.10.0"]):
            with self.subTest(args=args[0]):
                proc = run("--json", "--timings", *args)
                self.assertIn(proc.returncode, (0, 1), proc.stderr)
                doc = json.loads(proc.stdout)
                self.assertTrue(doc["schema"].startswith("wheelfix."))
                self.assertNotIn("timings", proc.stdout)
                timings_of(proc.stderr)

    def test_the_option_stands_anywhere_on_the_command_line(self):
        proc = run("verify", wfx.SGL_WHEEL, "--timings")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assert_ran(timings_of(proc.stderr), "inflate", "hash")

    def test_without_the_option_nothing_is_added(self):
        proc = run("verify", wfx.SGL_WHEEL)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")

    def test_relink_edits_splices_and_writes(self):
        out = self.tmp / "relink"
        _, report = self.timed("relink", wfx.SGL_WHEEL, "-o", out, "--drop-absolute-rpaths",
                               "--add-rpath", "{root}/torch/lib")
        self.assert_ran(report, "read", "inflate", "parse", "edit", "deflate/splice", "hash", "write")

    def test_relink_of_a_bare_elf_and_the_elf_command(self):
        _, report = self.timed("relink", SO, "-o", self.tmp / "c10.so", "--set-rpath", "$ORIGIN/x")
        self.assert_ran(report, "parse", "edit", "write")
        copy = self.tmp / "c10-copy.so"
        shutil.copy(SO, copy)
        proc, report = self.timed("elf", copy, "--print-rpath")
        self.assertEqual(proc.stdout.strip(), "$ORIGIN")
        self.assertEqual(report["write"][1], 0)
        _, report = self.timed("elf", copy, "--set-rpath", "$ORIGIN/y")
        self.assert_ran(report, "parse", "edit", "write")

    def test_check_against_a_torch_directory_an_index_and_the_atlas(self):
        proc, report = self.timed("check", wfx.SGL_WHEEL, "--torch", TORCH_210, status=1)
        self.assertIn("symbols resolve against: 2.10.0+cu130 NO", proc.stdout)
        self.assert_ran(report, "inflate", "parse")
        index = wfx.SOURCE_DIR / "data" / "torch-index" / "torch-2.10.0+cu128.index.gz"
        _, report = self.timed("check", wfx.SGL_WHEEL, "--torch", index, status=1)
        self.assert_ran(report, "inflate")
        _, report = self.timed("check", wfx.SGL_WHEEL, "--torch-release", "2.7.1", status=1)  # cu126: no libcudart.so.13
        self.assert_ran(report, "inflate")

    def test_index_shim_and_retag(self):
        _, report = self.timed("index", TORCH_210, "-o", self.tmp / "t.index.gz")
        self.assert_ran(report, "write")
        _, report = self.timed("shim", wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / "shim")
        self.assert_ran(report, "inflate", "hash", "edit", "deflate/splice", "write")
        _, report = self.timed("retag", wfx.SGL_WHEEL, "--torch", "2.10", "-o", self.tmp / "retag")
        self.assert_ran(report, "read", "write")

    def test_repair_times_its_proofs(self):
        proc, report = self.timed("repair", wfx.SGL_WHEEL, "--torch", TORCH_210, "-o", self.tmp / "repair")
        self.assert_ran(report, "read", "inflate", "parse", "edit", "deflate/splice", "hash", "write")
        if "proof" in proc.stdout:  # the load test ran: python3 is the child whose peak RSS is named
            self.assert_ran(report, "proofs")
            self.assertIsNotNone(report["child"])

    def test_a_refused_input_still_reports_and_keeps_its_one_line(self):
        bad = self.tmp / "not-a-wheel.whl"
        bad.write_bytes(b"not a zip")
        proc = run("--timings", "verify", bad)
        self.assertEqual(proc.returncode, 2)
        first, *rest = proc.stderr.splitlines()
        self.assertTrue(first.startswith("wheelfix: ") and str(bad) in first, proc.stderr)
        timings_of("\n".join(rest))


if __name__ == "__main__":
    unittest.main()
