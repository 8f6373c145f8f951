"""The examples in README.md and docs/usage.md are real output: each `$ wheelfix …`
shown in a code block is run, in document order, in a directory laid out as the
README says (the sample wheels copied to dist/, sample_wheels/ and data/ beside them),
and what the block shows after it must appear in its output, line for line and in
order. A line that starts with "…" stands for lines left out; `$ echo $?` shows the
exit status of the command before it.

Not run, and counted so that the test cannot pass on nothing: commands whose file
arguments were shortened with "…" or do not exist (an example's own files), shell
pipelines and redirections, and --timings (its figures are the machine's)."""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

DOCS = [wfx.SOURCE_DIR / "README.md", wfx.SOURCE_DIR / "docs" / "usage.md"]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("WHEELFIX_") and k not in ("NO_COLOR", "COLUMNS")}
# Fewer runnable examples than this means the parser, not the documents, went wrong.
MIN_RUN = {"README.md": 8, "usage.md": 13}


def examples(text):
    """(line number, command, expected lines) for each `$ ` command in a code block."""
    found, in_block, current = [], False, None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_block = not in_block
            current = None
        elif in_block and line.startswith("$ "):
            start, command = i + 1, line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            current = (start, command, [])
            found.append(current)
        elif in_block and current is not None:
            current[2].append(line.rstrip())
        i += 1
    return found


def runnable(command):
    """Why the command is not run, or None."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    if any(token in ("|", "||", "&&", ";", ">", ">>", "<", "&", "2>&1") for token in lexer) or "$(" in command:
        return "shell"
    words = shlex.split(command, comments=True)
    if not words or words[0] != "wheelfix":
        return "not wheelfix"
    if "--timings" in words:
        return "timings"
    if any("…" in word for word in words):
        return "shortened"
    return None


def missing_input(proc, words):
    """The example's own files, which are not in the sample layout (`main`, `lying/x.whl`)."""
    return proc.returncode == 2 and any(
        f"{word}: no such file" in proc.stderr.lower() for word in words[1:])


def matches(expected, actual):
    """None when every expected line appears in `actual` in order ("…" lines skip), else the first that does not."""
    at = 0
    for line in expected:
        if not line.strip() or line.lstrip().startswith("…"):
            continue
        while at < len(actual) and actual[at] != line:
            at += 1
        if at == len(actual):
            return line
        at += 1
    return None


class DocExamples(unittest.TestCase):
    def run_document(self, doc):
        work = Path(tempfile.mkdtemp(prefix="wfx-doc-"))
        self.addCleanup(shutil.rmtree, work, True)
        shutil.copytree(wfx.SAMPLES, work / "dist", symlinks=True)
        (work / "sample_wheels").symlink_to(wfx.SOURCE_DIR / "sample_wheels")
        (work / "data").symlink_to(wfx.SOURCE_DIR / "data")
        binary_dir = work / ".bin"
        binary_dir.mkdir()
        (binary_dir / "wheelfix").symlink_to(Path(wfx.WHEELFIX).resolve())
        env = dict(ENV, PATH=f"{binary_dir}:{ENV.get('PATH', '')}", SOURCE_DATE_EPOCH="315532800")
        ran, skipped, status, wrong = 0, {}, None, []
        for line_number, command, expected in examples(doc.read_text()):
            where = f"{doc.name}:{line_number}: $ {command}"
            if command.strip() == "echo $?":
                if status is not None and expected and expected[0].strip().isdigit():
                    if int(expected[0]) != status:
                        wrong.append(f"{where}\n  shown exit status {expected[0]}, was {status}")
                continue
            why = runnable(command)
            if why:
                skipped[why] = skipped.get(why, 0) + 1
                status = None
                continue
            words = shlex.split(command, comments=True)
            expanded = [words[0]]
            for word in words[1:]:
                hits = sorted(glob.glob(str(work / word))) if any(ch in word for ch in "*?") else []
                expanded += [os.path.relpath(hit, work) for hit in hits] if hits else [word]
            proc = subprocess.run(expanded, cwd=work, env=env, capture_output=True, text=True, timeout=120)
            status = proc.returncode
            if missing_input(proc, words):
                skipped["missing input"] = skipped.get("missing input", 0) + 1
                status = None
                continue
            ran += 1
            actual = [line.rstrip() for line in (proc.stdout + proc.stderr).splitlines()]
            missing = matches(expected, actual)
            if missing is not None:
                wrong.append(f"{where}\n  shown but not printed: {missing!r}\n  printed:\n    "
                             + "\n    ".join(actual[:40]))
        print(f"{doc.name}: {ran} example(s) run, not run: {skipped}")
        self.assertEqual(wrong, [], "\n\n".join(wrong))
        self.assertGreaterEqual(ran, MIN_RUN[doc.name], f"{doc.name}: too few examples run ({skipped})")

    def test_readme(self):
        self.run_document(DOCS[0])

    def test_usage(self):
        self.run_document(DOCS[1])


if __name__ == "__main__":
    unittest.main()
