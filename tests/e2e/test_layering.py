"""Layering: every `#include "wheelfix/<layer>/..."` in src/ and include/ must name
its own layer or one below it, in the documented order (docs/architecture.md):

    util -> {zip, elf, cuda} -> {abi, wheel} -> policy -> analysis -> repair -> cli

Layers on one rank (zip, elf, cuda; abi, wheel) do not include each other. The
CMake targets (one per layer, each linking only the layers below) make an upward
*call* fail to link; this test makes an upward or sideways *include* fail, even
one that only uses a type or an inline function. It also checks that every
included header exists and that CMakeLists.txt links each layer only downward."""
import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

RANKS = [["util"], ["zip", "elf", "cuda"], ["abi", "wheel"], ["policy"], ["analysis"], ["repair"], ["cli"]]
RANK = {layer: rank for rank, layers in enumerate(RANKS) for layer in layers}
INCLUDE = re.compile(r'^\s*#\s*include\s+"wheelfix/([a-z_]+)/([^"]+)"', re.M)


def layer_of(path, root):
    """The layer a source file belongs to: src/<layer>/... or include/wheelfix/<layer>/..."""
    parts = path.relative_to(root).parts
    return parts[1] if parts[0] == "src" else parts[2]


def violations(source_text, layer):
    """(included layer, header, why) for each include of `source_text` that breaks the order."""
    found = []
    for included, header in INCLUDE.findall(source_text):
        if included not in RANK:
            found.append((included, header, "not a layer"))
        elif included != layer and RANK[included] >= RANK[layer]:
            found.append((included, header, "sideways" if RANK[included] == RANK[layer] else "upward"))
    return found


def sources(root):
    for base in (root / "src", root / "include" / "wheelfix"):
        for path in sorted(base.rglob("*")):
            if path.suffix in (".cpp", ".hpp", ".h") and path.is_file():
                yield path


class Layering(unittest.TestCase):
    root = wfx.SOURCE_DIR

    def test_every_include_reaches_down(self):
        bad = []
        checked = 0
        for path in sources(self.root):
            layer = layer_of(path, self.root)
            self.assertIn(layer, RANK, f"{path}: directory is not a documented layer")
            text = path.read_text()
            checked += len(INCLUDE.findall(text))
            for included, header, why in violations(text, layer):
                bad.append(f"{path.relative_to(self.root)}: {why} include of wheelfix/{included}/{header}")
        self.assertGreater(checked, 100, "found almost no includes: is the source tree where the test looks?")
        self.assertEqual(bad, [], "includes against the layer order:\n" + "\n".join(bad))

    def test_every_included_header_exists(self):
        missing = []
        for path in sources(self.root):
            for included, header in INCLUDE.findall(path.read_text()):
                if not (self.root / "include" / "wheelfix" / included / header).is_file():
                    missing.append(f"{path.relative_to(self.root)}: wheelfix/{included}/{header}")
        self.assertEqual(missing, [])

    def test_the_checker_catches_upward_and_sideways_includes(self):
        self.assertEqual(violations('#include "wheelfix/analysis/wheel_report.hpp"\n', "policy"),
                         [("analysis", "wheel_report.hpp", "upward")])
        self.assertEqual(violations('  #  include "wheelfix/repair/relink.hpp"\n', "policy"),
                         [("repair", "relink.hpp", "upward")])
        self.assertEqual(violations('#include "wheelfix/wheel/wheel.hpp"\n', "abi"), [("wheel", "wheel.hpp", "sideways")])
        self.assertEqual(violations('#include "wheelfix/gui/x.hpp"\n', "cli"), [("gui", "x.hpp", "not a layer")])
        self.assertEqual(violations('#include "wheelfix/util/error.hpp"\n#include "wheelfix/policy/profile.hpp"\n'
                                    '#include "wheelfix/analysis/elf_report.hpp"\n', "analysis"), [])

    def test_cmake_links_each_layer_only_downward(self):
        text = (self.root / "CMakeLists.txt").read_text()
        layers = dict(re.findall(r"^wheelfix_layer\((\w+)((?:[^()]|\n)*?)\)$", text, re.M))
        self.assertEqual(set(layers), set(RANK) - {"cli"}, "one wheelfix_layer() per layer below cli")
        for layer, args in layers.items():
            for dependency in re.findall(r"wheelfix_(\w+)", args):
                with self.subTest(layer=layer, dependency=dependency):
                    self.assertLess(RANK[dependency], RANK[layer], f"wheelfix_{layer} links wheelfix_{dependency}")


if __name__ == "__main__":
    unittest.main()
