"""wheelfix's torch verdicts and pins against real third-party wheels and real torch releases.

The corpus (tests/data/realworld/manifest.tsv: package, version, file, sha256) is downloaded by
scripts/realworld into a cache outside the repository (WHEELFIX_REAL_CACHE, default
~/.cache/wheelfix-real). A wheel missing from the cache is fetched with `pip download` when it is small
(WHEELFIX_REAL_MAX_MB, default 20) and the download budget (WHEELFIX_REAL_DOWNLOAD_S, default 240 s) is
not spent; bigger ones are judged only when cached. The ground truth is tests/data/realworld/truth.json
(`nm -D` of each release's torch/lib against each wheel's undefined symbols, written by
`scripts/realworld truth`) and loader.json (ctypes.CDLL in venvs of real torch releases): where the cache
still holds a release's nm table, the truth of every small wheel is recomputed from the real artefacts
and must equal the committed one.

Asserted, through the same judge scripts/realworld uses for docs/realworld.md:
  - no false "loads": `check --torch-release all` never says a wheel loads on a release where nm finds
    a missing torch symbol, a CUDA library of another major, or the real loader fails;
  - the pin `retag --torch auto` writes never admits a release where the truth or the author's
    Requires-Dist says no;
  - every "does not load" names only symbols that are truly missing, and at least one reason.
"""
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import wfx  # noqa: E402

CACHE = Path(os.environ.get("WHEELFIX_REAL_CACHE", Path.home() / ".cache" / "wheelfix-real"))
MAX_MB = float(os.environ.get("WHEELFIX_REAL_MAX_MB", "20"))
DOWNLOAD_BUDGET = float(os.environ.get("WHEELFIX_REAL_DOWNLOAD_S", "240"))


def load_script():
    path = wfx.SOURCE_DIR / "scripts" / "realworld"
    loader = importlib.machinery.SourceFileLoader("realworld", str(path))
    spec = importlib.util.spec_from_loader("realworld", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


realworld = load_script()
DATA = wfx.TEST_DATA / "realworld"
realworld.MANIFEST = DATA / "manifest.tsv"

# Known failures, by the finding that explains them: {finding: [(kind, wheel, release), ...]}. Empty
# when wheelfix agrees with the truth everywhere. A listed cell that no longer fails is reported, not
# failed, so a fix can land before the list is trimmed.
EXPECTED_FAILURES = {}
EXPECTED = {(kind, wheel, release): finding for finding, cells in EXPECTED_FAILURES.items()
            for kind, wheel, release in cells}


def available_wheels():
    """Manifest rows whose wheel is in the cache (small ones fetched within the budget), and the rest."""
    deadline = time.monotonic() + DOWNLOAD_BUDGET
    present, absent = [], []
    for row in realworld.read_manifest():
        path = CACHE / "wheels" / row["file"]
        if not path.exists() and row["size"] <= MAX_MB * 1e6 and time.monotonic() < deadline:
            try:
                realworld.ensure_wheel(CACHE, row)
            except Exception as error:  # offline: judged as absent, said below
                print(f"cannot download {row['file']}: {error}", file=sys.stderr)
        if path.exists() and path.stat().st_size == row["size"]:
            present.append(row)
        else:
            absent.append(row)
    return present, absent


class RealWorldCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.truth = json.loads((DATA / "truth.json").read_text())
        cls.loader = json.loads((DATA / "loader.json").read_text())
        present, absent = available_wheels()
        if absent:
            print(f"not judged (absent from {CACHE}, over {MAX_MB:g} MB or no network): "
                  + ", ".join(r["file"] for r in absent), file=sys.stderr)
        cls.rows = present
        tmp = tempfile.mkdtemp(prefix="realworld-")
        cls.addClassCleanup(lambda: __import__("shutil").rmtree(tmp, ignore_errors=True))

        def view(row):
            wheel = realworld.ensure_wheel(CACHE, row)
            return row["file"], realworld.wheelfix_view(wfx.WHEELFIX, wheel, tmp, with_inspect=False)

        with ThreadPoolExecutor(max_workers=2) as pool:
            cls.views = dict(pool.map(view, present))
        judged = {"releases": cls.truth["releases"],
                  "wheels": {w: e for w, e in cls.truth["wheels"].items() if w in cls.views}}
        cls.table, cls.defects = realworld.judge(judged, cls.loader, cls.views)
        print("judged:", json.dumps(realworld.summary(cls.table, cls.defects, cls.views)), file=sys.stderr)

    def test_corpus_is_judged(self):
        """The corpus is not empty and spans several packages, versions and torch releases."""
        packages = {r["package"] for r in self.rows}
        self.assertGreaterEqual(len(self.rows), 10, "fewer than 10 corpus wheels available")
        self.assertGreaterEqual(len(packages), 3)
        self.assertGreaterEqual(len(self.truth["releases"]), 4)
        for row in self.rows:
            self.assertIn(row["file"], self.truth["wheels"], "manifest and truth.json disagree")
            self.assertFalse(self.views[row["file"]]["errors"], self.views[row["file"]]["errors"])

    def test_truth_recomputed_from_real_artefacts(self):
        """Where the cache holds a release's nm table, nm of every small wheel gives the committed truth."""
        releases = [r for r in self.truth["releases"]
                    if (realworld.release_dir(CACHE, r) / "defined.tsv.gz").exists()]
        if not releases:
            self.skipTest(f"no torch nm tables in {CACHE}: judged against the committed truth only")
        small = [r for r in self.rows if r["size"] <= MAX_MB * 1e6]
        with tempfile.TemporaryDirectory() as scratch:
            fresh = realworld.truth_for(CACHE, small, releases, memo=Path(scratch))
        for wheel, entry in fresh["wheels"].items():
            committed = self.truth["wheels"][wheel]
            self.assertEqual(entry["requires_torch"], committed["requires_torch"], wheel)
            for release in releases:
                self.assertEqual(entry["cells"][release], committed["cells"][release], f"{wheel} on {release}")

    def test_truth_agrees_with_the_loader(self):
        """Every undefined symbol the real loader reported is one nm found missing, and nm finds nothing
        missing where the loader loaded everything: the two judges agree."""
        self.assertFalse(self.failures("truth-incomplete"))
        self.assertFalse(self.failures("truth-vs-loader"))

    def failures(self, kind):
        found = [d for d in self.defects if d[0] == kind]
        unexpected = [d for d in found if tuple(d[:3]) not in EXPECTED]
        return "\n".join(f"{wheel} on {release}: {detail}" for _, wheel, release, detail in unexpected)

    def test_no_false_loads(self):
        self.assertFalse(self.failures("false-load"))

    def test_pin_never_wider_than_truth_or_author(self):
        self.assertFalse(self.failures("wide-pin"))

    def test_every_no_names_a_true_reason(self):
        self.assertFalse(self.failures("wrong-name"))
        for row in self.table:
            says = row["wheelfix"]
            if says and not says["loads"] and (row["truth_missing"] or row["truth_cuda"]):
                self.assertTrue(says["names"] or says["missing_libraries"] or says["cuda_note"],
                                f"{row['wheel']} on {row['release']}: NO without a reason")

    def test_expected_failures_are_reported(self):
        """Each expected failure still seen is printed with its finding; each one fixed is printed too."""
        found = {tuple(d[:3]) for d in self.defects}
        judged = {r["file"] for r in self.rows}
        for cell, finding in sorted(EXPECTED.items()):
            if cell[1] in judged:
                state = "expected failure" if cell in found else "fixed, drop from EXPECTED_FAILURES"
                print(f"{state}: {' '.join(cell)} ({finding})", file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
