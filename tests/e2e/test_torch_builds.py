"""Several builds of one torch release in one atlas, and the verdict taken from the
wheel's own build.

Three g++-built stand-ins of torch 2.6.0, as the real builds differ: cu124 built with
the old C++ string ABI (so its libc10.so exports c10::Error::Error(c10::SourceLocation,
std::string)), cu126 and cu130 with the new one (…std::__cxx11::basic_string…). An
extension built against cu126 loads on cu126 and cu130, not on cu124, though all three
are "torch 2.6.0". `wheelfix index --atlas` holds the three builds (in any order, and
grown one at a time); `check` takes each wheel's verdict from the build its +cuXYZ
names, else from one of the CUDA major it NEEDs, else the first, names the build in
text and JSON, and says "verdict from the cu124 build; builds of one release can export
different symbols" when it is not the wheel's own; `retag --torch auto` pins from the
same verdict. Two label-less torches of one version and different CUDA versions are
two builds too; a damaged entry is refused in one line (exit 2). And on the bundled
atlas, the real case: an old-string-ABI extension labelled +cu126 is judged from
2.6.0's cu124 build, and check and inspect name it."""
import gzip
import shutil
import subprocess
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

ERROR_CLASS = """
#include <string>
namespace c10 {
struct SourceLocation { const char* function; const char* file; unsigned line; };
class Error {
 public:
  Error(SourceLocation location, std::string message);
  std::string message_;
};
}  // namespace c10
"""
C10 = ERROR_CLASS + "c10::Error::Error(SourceLocation, std::string message) : message_(std::move(message)) {}\n"
EXTENSION = ERROR_CLASS + 'extern "C" void* make_error() { return new c10::Error({"f", "ext.cpp", 1}, "boom"); }\n'
OLD_ERROR = "c10::Error::Error(c10::SourceLocation, std::string)"
NEW_ERROR = ("c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
             "std::allocator<char> >)")
BUILDS = {"2.6.0+cu124": ("12.4", 0), "2.6.0+cu126": ("12.6", 1), "2.6.0+cu130": ("13.0", 1)}
TAG = "cp312-cp312-linux_x86_64"


def gxx(directory, name, source, *flags):
    (directory / f"{name}.cpp").write_text(source)
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(directory / name), str(directory / f"{name}.cpp"),
                    *map(str, flags)], check=True, capture_output=True, text=True)
    return directory / name


def torch_tree(root, version, cuda, cxx11_abi):
    torch = Path(root) / f"torch-{version}" / "torch"
    (torch / "lib").mkdir(parents=True)
    gxx(torch / "lib", "libc10.so", C10, f"-D_GLIBCXX_USE_CXX11_ABI={cxx11_abi}", "-Wl,-soname,libc10.so")
    (torch / "version.py").write_text(f"__version__ = '{version}'\ncuda = '{cuda}'\n")
    return torch


def wheel(directory, name, version, so):
    members = {f"{name}/_C.so": so.read_bytes(), **wfx.dist_info_members(name, version, TAG)}
    return wfx.write_wheel(Path(directory) / f"{name}-{version}-{TAG}.whl", members)


def release(doc):
    (column,) = doc["matrix"]["releases"]
    return column


@unittest.skipUnless(shutil.which("g++"), "needs g++")
class Builds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = wfx.TempDir()
        tmp = cls.tmp = cls.temp.__enter__()
        cls.trees = {v: torch_tree(tmp, v, *BUILDS[v]) for v in BUILDS}
        cls.atlas = tmp / "atlas.gz"
        cls.index = wfx.run_json("index", *cls.trees.values(), "--atlas", cls.atlas)
        # Built against cu126 (the new string ABI).
        so = gxx(tmp, "_C.so", EXTENSION, "-D_GLIBCXX_USE_CXX11_ABI=1", f"-L{cls.trees['2.6.0+cu126'] / 'lib'}", "-lc10")
        cls.wheels = {label: wheel(tmp, "ext", f"1.0+{label}", so) for label in ("cu124", "cu126", "cu128")}
        # No label, but it NEEDs the CUDA 13 runtime.
        (tmp / "cudart").mkdir()
        wfx.gcc_library(tmp / "cudart", "libcudart.so.13", "int cudaFree(void* p) { return 0; }\n",
                        "-Wl,-soname,libcudart.so.13")
        so13 = gxx(tmp, "_C13.so", EXTENSION, "-D_GLIBCXX_USE_CXX11_ABI=1", f"-L{cls.trees['2.6.0+cu130'] / 'lib'}",
                   "-lc10", "-Wl,--no-as-needed", tmp / "cudart" / "libcudart.so.13")
        cls.cuda13 = wheel(tmp, "ext13", "1.0", so13)

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)

    def test_the_atlas_holds_three_builds_of_one_release(self):
        self.assertEqual([(e["torch_version"], e["cuda_version"]) for e in self.index["entries"]],
                         [("2.6.0+cu124", "12.4"), ("2.6.0+cu126", "12.6"), ("2.6.0+cu130", "13.0")])
        # Grown one build at a time, in another order: the same bytes.
        grown = self.tmp / "grown.gz"
        for version in ("2.6.0+cu130", "2.6.0+cu124", "2.6.0+cu126"):
            wfx.run("index", self.trees[version], "--atlas", grown, check_status=0)
        self.assertEqual(grown.read_bytes(), self.atlas.read_bytes())

    def test_the_wheels_own_build_gives_the_verdict(self):
        doc = wfx.run_json("check", self.wheels["cu126"], "--torch", self.atlas)
        column = release(doc)
        self.assertEqual((column["torch_version"], column["build"], column["verdict"], column["cuda_note"]),
                         ("2.6.0+cu126", "cu126", "ok", ""))
        self.assertEqual(column["builds"], ["cu124", "cu126", "cu130"])
        self.assertEqual(doc["requirement"]["specifier"], "torch>=2.6.0,<2.7")
        text = wfx.run("check", self.wheels["cu126"], "--torch", self.atlas, check_status=0).stdout
        self.assertIn("builds:\n  2.6.0: cu126 cp312\n", text)  # torch directories name no arch

    def test_the_same_extension_labelled_cu124_is_judged_by_the_cu124_build(self):
        doc = wfx.run_json("check", self.wheels["cu124"], "--torch", self.atlas, check_status=1)
        column = release(doc)
        self.assertEqual((column["torch_version"], column["build"], column["verdict"]), ("2.6.0+cu124", "cu124", "NO"))
        cell = doc["matrix"]["members"][0]["cells"][0]
        self.assertEqual(cell["first_missing"], NEW_ERROR)
        self.assertEqual(cell["near_miss"], OLD_ERROR)
        self.assertFalse(doc["requirement"]["any"])
        # retag takes the same verdict: nothing to pin, nothing written.
        out = self.tmp / "retag-cu124"
        wfx.run("retag", self.wheels["cu124"], "--torch", "auto", "--torch-from", self.atlas, "-o", out, check_status=1)
        self.assertFalse(out.exists())
        out = self.tmp / "retag-cu126"
        wfx.run("retag", self.wheels["cu126"], "--torch", "auto", "--torch-from", self.atlas, "-o", out, check_status=0)
        with zipfile.ZipFile(next(out.glob("*.whl"))) as archive:
            metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith("METADATA"))
        self.assertIn("Requires-Dist: torch>=2.6.0,<2.7", metadata)

    def test_no_build_matches_exactly_the_output_says_which_one_was_used(self):
        doc = wfx.run_json("check", self.wheels["cu128"], "--torch", self.atlas, check_status=1)
        column = release(doc)
        # CUDA 12 like the wheel: the first such build, cu124.
        self.assertEqual(column["build"], "cu124")
        note = "wheel +cu128: verdict from the cu124 build; builds of one release can export different symbols"
        self.assertEqual(column["cuda_note"], note)
        text = wfx.run("check", self.wheels["cu128"], "--torch", self.atlas, check_status=1).stdout
        self.assertIn(f"2.6.0: cu124 cp312; {note}", text)

    def test_without_a_label_the_cuda_runtime_it_needs_picks_the_build(self):
        doc = wfx.run_json("check", self.cuda13, "--torch", self.atlas)
        column = release(doc)
        self.assertEqual((column["build"], column["verdict"]), ("cu130", "ok"))
        self.assertEqual(column["cuda_note"], "wheel names no build: verdict from the cu130 build (CUDA 13, as it "
                                              "NEEDs) of cu124, cu126, cu130; builds of one release can export "
                                              "different symbols")

    def test_torch_release_can_name_the_build(self):
        doc = wfx.run_json("check", self.cuda13, "--torch", self.atlas, "--torch-release", "2.6.0+cu126",
                           check_status=1)
        column = release(doc)
        self.assertEqual((column["build"], column["verdict"]), ("cu126", "runtime"))
        self.assertIn("(asked by --torch-release)", column["cuda_note"])
        self.assertIn("(a CUDA 12.6 build: no libcudart.so.13", doc["matrix"]["members"][0]["cells"][0]["runtime_note"])

    def test_unlabelled_torches_of_two_cuda_versions_are_two_builds(self):
        with wfx.TempDir() as tmp:
            old = torch_tree(tmp / "a", "2.6.0", "12.4", 0)
            new = torch_tree(tmp / "b", "2.6.0", "12.6", 1)
            doc = wfx.run_json("index", old, new, "--atlas", tmp / "atlas.gz")
            self.assertEqual([(e["torch_version"], e["cuda_version"]) for e in doc["entries"]],
                             [("2.6.0", "12.4"), ("2.6.0", "12.6")])
            column = release(wfx.run_json("check", self.wheels["cu126"], "--torch", tmp / "atlas.gz"))
            self.assertEqual((column["build"], column["verdict"], column["builds"]), ("cu126", "ok", ["cu124", "cu126"]))

    def test_a_damaged_entry_is_one_line_exit_2(self):
        text = gzip.decompress(self.atlas.read_bytes()).decode().splitlines(keepends=True)
        text[2] = "2.6.0+cu124 12.4 x86_64\n"  # three of an entry's six fields
        bad = self.tmp / "bad.gz"
        bad.write_bytes(gzip.compress("".join(text).encode()))
        for args in (("check", self.wheels["cu126"], "--torch", bad), ("index", self.trees["2.6.0+cu124"], "--atlas", bad)):
            proc = wfx.run(*args, check_status=2)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn("bad.gz", proc.stderr)
            self.assertIn("expected 6 fields in an entry", proc.stderr)



ATLAS = wfx.SOURCE_DIR / "data" / "torch-atlas.gz"


@unittest.skipUnless(shutil.which("g++"), "needs g++")
@unittest.skipUnless(ATLAS.exists(), "no data/torch-atlas.gz in this checkout")
class BundledBuilds(unittest.TestCase):
    """The real case: torch 2.6.0's cu124 build on the package index has the old C++
    string ABI. An extension calling c10::Error::Error(c10::SourceLocation, std::string)
    built that way, labelled +cu126.torch2.6 (built for 2.6 against another build), is
    judged from the cu124 build the bundled atlas holds, and check and inspect say so."""

    def test_check_and_inspect_name_the_build(self):
        with wfx.TempDir() as tmp:
            (tmp / "c10").mkdir()
            c10 = gxx(tmp / "c10", "libc10.so", C10, "-D_GLIBCXX_USE_CXX11_ABI=0", "-Wl,-soname,libc10.so")
            so = gxx(tmp, "_C.so", EXTENSION, "-D_GLIBCXX_USE_CXX11_ABI=0", f"-L{c10.parent}", "-lc10")
            built = wheel(tmp, "ext", "1.0+cu126.torch2.6", so)
            doc = wfx.run_json("check", built, "--torch-release", "2.6.0,2.7.0", check_status=1)
            releases = doc["matrix"]["releases"]
            self.assertEqual([(r["torch_version"], r["build"], r["verdict"]) for r in releases],
                             [("2.6.0+cu124", "cu124", "ok"), ("2.7.0+cu126", "cu126", "NO")])
            note = "wheel +cu126: verdict from the cu124 build; builds of one release can export different symbols"
            self.assertEqual(releases[0]["cuda_note"], note)
            self.assertEqual(releases[1]["cuda_note"], "")
            self.assertEqual(doc["matrix"]["members"][0]["cells"][1]["first_missing"], OLD_ERROR)
            self.assertEqual(doc["requirement"]["specifier"], "torch>=2.6.0,<2.7")
            torch_range = wfx.run_json("inspect", built, check_status=None)["inputs"][0]["torch_range"]
            self.assertTrue(torch_range.startswith("torch>=2.6.0,<2.7 "), torch_range)
            self.assertIn("; verdict from the cu124 build, not the wheel's +cu126 (builds of one release can export "
                          "different symbols)", torch_range)


if __name__ == "__main__":
    unittest.main()
