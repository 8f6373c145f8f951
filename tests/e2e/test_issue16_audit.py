"""Issue 16 bullets that had no test of their own (found auditing the issue bullet by
bullet): `check` prints each near miss once per unresolved symbol (it printed them
twice), and `retag`, which reads no binary, says that the platform tag it keeps is
not checked against them (it kept a manylinux2014 tag silently)."""
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

INDEX_210 = wfx.SOURCE_DIR / "data" / "torch-index" / "torch-2.10.0+cu128.index.gz"


class Issue16Audit(unittest.TestCase):
    def test_near_miss_printed_once(self):
        text = wfx.run("check", wfx.SGL_WHEEL, "--torch", INDEX_210, check_status=1).stdout
        blocks = text.split("  unresolved: ")[1:]
        self.assertTrue(blocks, text)
        for block in blocks:
            lines = [line.strip() for line in block.splitlines() if line.strip().startswith("near miss:")]
            self.assertEqual(len(lines), len(set(lines)), block)
            self.assertEqual(len(lines), 1, block)

    def test_retag_says_the_kept_platform_tag_is_unchecked(self):
        with tempfile.TemporaryDirectory() as tmp:
            text = wfx.run("retag", wfx.SGL_WHEEL, "--torch", "2.10", "-o", tmp, check_status=0).stdout
        self.assertIn("manylinux2014_x86_64 kept, not checked against the binaries", text)


if __name__ == "__main__":
    unittest.main()
