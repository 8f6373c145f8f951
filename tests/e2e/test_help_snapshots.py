"""Help text snapshots: `wheelfix --help` and `wheelfix <command> --help` for every
command must equal tests/data/help/wheelfix.txt and wheelfix-<command>.txt, so every
change to an option, a description or a default shows up in review.

After an intended change, regenerate and review the diff:
    UPDATE_SNAPSHOTS=1 ctest --test-dir <build> -R help_snapshots
(or UPDATE_SNAPSHOTS=1 WHEELFIX=<build>/wheelfix python3 tests/e2e/test_help_snapshots.py)."""
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

SNAPSHOTS = wfx.TEST_DATA / "help"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("WHEELFIX_") and k != "NO_COLOR"}


def help_text(*command):
    proc = subprocess.run([wfx.WHEELFIX, *command, "--help"], capture_output=True, text=True, env=ENV)
    if proc.returncode != 0:
        raise AssertionError(f"wheelfix {' '.join(command)} --help: exit {proc.returncode}\n{proc.stderr}")
    return proc.stdout


def commands(top_help):
    """Command names from the Subcommands section ("  inspect, show   Report ...")."""
    section = top_help.split("Subcommands:\n", 1)[1]
    return [re.match(r"  ([a-z][a-z0-9-]*)", line).group(1) for line in section.splitlines()
            if re.match(r"  [a-z]", line)]


class HelpSnapshots(unittest.TestCase):
    def check(self, name, text):
        path = SNAPSHOTS / name
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        self.assertTrue(path.exists(), f"no snapshot {path}: run with UPDATE_SNAPSHOTS=1 and review it")
        self.assertEqual(text, path.read_text(), f"{name} changed: run with UPDATE_SNAPSHOTS=1 and review the diff")

    def test_every_command_has_a_matching_snapshot(self):
        top = help_text()
        names = commands(top)
        self.assertIn("inspect", names)
        self.check("wheelfix.txt", top)
        for name in names:
            with self.subTest(command=name):
                self.check(f"wheelfix-{name}.txt", help_text(name))
        expected = {"wheelfix.txt"} | {f"wheelfix-{name}.txt" for name in names}
        stale = sorted(p.name for p in SNAPSHOTS.glob("*.txt") if p.name not in expected)
        if UPDATE:
            for name in stale:
                (SNAPSHOTS / name).unlink()
        else:
            self.assertEqual(stale, [], "snapshots of commands that no longer exist")

    def test_an_alias_has_its_command_help(self):
        self.assertEqual(help_text("show"), help_text("inspect"))


if __name__ == "__main__":
    unittest.main()
