"""torch's own stable C ABI version list (src/abi/data/torch_stable_versions.txt, PyTorch's
shim_function_versions.txt unchanged) against the bundled atlas, and the verdict's floor.

- The list against the atlas: for every function the list names, the release it states
  against the first x86_64 release the bundled atlas (data/torch-atlas.gz, read here by
  its documented format, not by wheelfix) exports it from. Known entries are checked both
  ways, and every disagreement is listed by name, so a change of either side fails here
  and must be looked at.
- The floor: a gcc-built stable-ABI extension against a user atlas whose 2.10.0 already
  exports a function the list states for 2.11.0: the verdict's floor is 2.11.0 (the later,
  narrower one), named in text and JSON, in check and retag alike; a function the list
  does not name keeps the atlas's floor; a release set below the stated floor is a
  finding, never a pin. And on the bundled atlas, the same extension is pinned from
  2.11.0."""
import gzip
import hashlib
import re
import shutil
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

DATA = wfx.SOURCE_DIR / "src" / "abi" / "data"
LIST = DATA / "torch_stable_versions.txt"
ATLAS = wfx.SOURCE_DIR / "data" / "torch-atlas.gz"


def stated_versions():
    stated = {}
    for line in LIST.read_text().splitlines():
        m = re.fullmatch(r"(\w+): TORCH_VERSION_(\d+)_(\d+)_(\d+)", line.strip())
        if m:
            stated[m.group(1)] = tuple(int(x) for x in m.group(2, 3, 4))
    return stated


def release_key(version):
    return tuple(int(x) for x in re.findall(r"\d+", version.split("+")[0])[:3])


def atlas_first_releases(path, arch="x86_64"):
    """{stable function: (release, torch_version)} of the first release of `arch` whose
    libraries export it, from the atlas text (format: man wheelfix, TORCH ATLAS)."""
    lines = gzip.open(path, "rt", encoding="latin-1").read().split("\n")
    assert lines[0].startswith("wheelfix-torch-atlas "), lines[0]
    at = 1

    def count(keyword):
        nonlocal at
        head = lines[at].split(" ")
        assert head[0] == keyword, (at, lines[at])
        at += 1
        return int(head[1])

    entries = [lines[at + i].split(" ") for i in range(count("entries"))]
    at += len(entries)
    libraries = []
    wanted = count("libraries")
    while len(libraries) < wanted:
        if lines[at].startswith("L "):
            libraries.append(int(lines[at].split(" ")[1]))
        at += 1
    while not lines[at].startswith("sets "):
        at += 1
    sets = []
    for i in range(count("sets")):
        members, value = [], 0
        for delta in lines[at + i].split():
            value += int(delta)
            members.append(value)
        sets.append(members)
    at += len(sets)
    first, key = {}, ""
    for i in range(count("symbols")):
        shared, _type, set_id, rest = lines[at + i].split(" ", 3)
        key = key[:int(shared)] + rest
        name = key.split("@")[0]
        if not name.startswith(("aoti_torch_", "torch_")):
            continue
        for node in sets[int(set_id)]:
            entry = entries[libraries[node]]
            if entry[2] != arch:
                continue
            if name not in first or release_key(entry[0]) < first[name][0]:
                first[name] = (release_key(entry[0]), entry[0])
    return first


# The list names them, the atlas's Linux builds export none: the list's type names, and
# the MPS (Apple) and XPU (Intel) functions.
NOT_IN_ATLAS = {
    "ParallelFunc", "StableListHandle", "StableListOpaque", "StringHandle", "StringOpaque",
    "aoti_torch_mps_nonzero_static", "aoti_torch_xpu_mm_dtype_out", "aoti_torch_mps__grouped_mm",
    "aoti_torch_mps_rand_like", "aoti_torch_mps_rand_like_generator", "aoti_torch_mps_randint_like",
    "aoti_torch_mps_randint_like_low_dtype", "aoti_torch_mps_randn_like", "aoti_torch_mps_randn_like_generator",
    "aoti_torch_xpu__grouped_mm", "aoti_torch_xpu_rand_like", "aoti_torch_xpu_rand_like_generator",
    "aoti_torch_xpu_randint_like", "aoti_torch_xpu_randint_like_low_dtype", "aoti_torch_xpu_randn_like",
    "aoti_torch_xpu_randn_like_generator", "aoti_torch_mps__scaled_dot_product_attention_math_for_mps_v2",
    "aoti_torch_mps_grid_sampler_3d", "aoti_torch_mps_grid_sampler_3d_backward",
}
# The atlas first exports them in 2.10 … 2.13 (the span the list covers), and the list
# does not name them (by its own account: available before 2.10.0). The atlas is right
# about what a release exports, so for these its later floor holds.
UNLISTED_FROM_2_10 = {
    "aoti_torch_cuda_caching_allocator_raw_alloc": "2.10.0", "aoti_torch_cuda_caching_allocator_raw_delete": "2.10.0",
    "aoti_torch_delete_c10_value_object": "2.10.0", "aoti_torch_int64_to_ivalue": "2.10.0",
    "aoti_torch_str_to_ivalue": "2.10.0", "aoti_torch_strlist_to_ivalue": "2.10.0",
    "aoti_torch_tensor_to_ivalue": "2.10.0", "torch_delete_generator": "2.13.0",
    "torch_generator_get_device": "2.13.0", "torch_new_generator_handle": "2.13.0",
}


@unittest.skipUnless(ATLAS.exists(), "no data/torch-atlas.gz in this checkout")
class ListAgainstAtlas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stated = stated_versions()
        cls.first = atlas_first_releases(ATLAS)

    def test_the_copy_is_the_file_its_notice_names(self):
        notice = (DATA / "torch_stable_versions.NOTICE").read_text()
        self.assertIn("torch/csrc/stable/c/shim_function_versions.txt", notice)
        self.assertIn("BSD 3-Clause", notice)
        self.assertIn(hashlib.sha256(LIST.read_bytes()).hexdigest(), notice)
        self.assertEqual(len(self.stated), 108)

    def test_known_entries_agree_both_ways(self):
        for name, release in {"torch_library_impl": (2, 10), "torch_call_dispatcher": (2, 10),
                              "aoti_torch_aten_full": (2, 10), "torch_from_blob": (2, 11),
                              "torch_dtype_float8_e8m0fnu": (2, 11), "torch_tag_core": (2, 12),
                              "aoti_torch_cuda__grouped_mm": (2, 12), "torch_stream_native_handle": (2, 13)}.items():
            with self.subTest(name=name):
                self.assertEqual(self.stated[name][:2], release)
                self.assertEqual(self.first[name][0][:2], release, self.first[name])
        # Older than the list: the atlas exports it from its first release, the list does not name it.
        self.assertEqual(self.first["aoti_torch_empty_strided"][1], "2.4.0+cu121")
        self.assertNotIn("aoti_torch_empty_strided", self.stated)

    def test_every_listed_function_against_the_atlas(self):
        earlier, later, absent = {}, {}, set()
        for name, release in self.stated.items():
            if name not in self.first:
                absent.add(name)
            elif self.first[name][0][:2] < release[:2]:
                earlier[name] = (release, self.first[name][1])
            elif self.first[name][0][:2] > release[:2]:
                later[name] = (release, self.first[name][1])
        # The list never states a release before the one the atlas first exports a
        # function from, nor after it: 84 of 108 agree to the minor.
        self.assertEqual(earlier, {})
        self.assertEqual(later, {})
        self.assertEqual(absent, NOT_IN_ATLAS)
        self.assertEqual(len(self.stated) - len(absent), 84)

    def test_functions_from_2_10_the_list_does_not_name(self):
        last = max(self.stated.values())[:2]
        unlisted = {name: found[1].split("+")[0] for name, found in self.first.items()
                    if (2, 10) <= found[0][:2] <= last and name not in self.stated}
        self.assertEqual(unlisted, UNLISTED_FROM_2_10)


TORCH_CPU = """
void* torch_from_blob(void) { return 0; }
void* aoti_torch_empty_strided(void) { return 0; }
"""


def torch_tree(root, version):
    """A torch directory: torch/lib/libtorch_cpu.so (gcc-built) and torch/version.py."""
    torch = Path(root) / f"torch-{version}" / "torch"
    (torch / "lib").mkdir(parents=True)
    wfx.gcc_library(torch / "lib", "libtorch_cpu.so", TORCH_CPU, "-Wl,-soname,libtorch_cpu.so")
    (torch / "version.py").write_text(f"__version__ = '{version}'\ncuda = None\n")
    return torch


def extension_wheel(directory, name, function, lib_dir, requires=()):
    """A stable-ABI extension wheel whose _C.so calls `function` from libtorch_cpu.so."""
    work = Path(directory) / name
    work.mkdir()
    so = wfx.gcc_library(work, "_C.so", f"void* {function}(void);\nvoid* f(void) {{ return {function}(); }}\n",
                         f"-L{lib_dir}", "-ltorch_cpu")
    tag = "cp312-cp312-linux_x86_64"
    members = {f"{name}/_C.so": so.read_bytes(), **wfx.dist_info_members(name, "1.0", tag)}
    metadata = f"{name}-1.0.dist-info/METADATA"
    members[metadata] += "".join(f"Requires-Dist: {r}\n" for r in requires).encode()
    return wfx.write_wheel(Path(directory) / f"{name}-1.0-{tag}.whl", members)


@unittest.skipUnless(shutil.which("gcc"), "needs gcc")
class Floor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = wfx.TempDir()
        tmp = cls.tmp = cls.temp.__enter__()
        cls.trees = {v: torch_tree(tmp, v) for v in ("2.10.0", "2.11.0")}
        cls.atlas = tmp / "atlas.gz"
        wfx.run("index", *cls.trees.values(), "--atlas", cls.atlas, check_status=0)
        cls.early = tmp / "early.gz"
        wfx.run("index", cls.trees["2.10.0"], "--atlas", cls.early, check_status=0)
        lib = cls.trees["2.10.0"] / "lib"
        cls.blob = extension_wheel(tmp, "blobext", "torch_from_blob", lib)
        cls.strided = extension_wheel(tmp, "stridedext", "aoti_torch_empty_strided", lib)

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)

    def test_the_stated_release_bounds_the_floor_where_the_atlas_has_it_earlier(self):
        # The symbols resolve on both; 2.10.0, before the stated floor, is not admitted (one verdict: never "ok").
        doc = wfx.run_json("check", self.blob, "--torch", self.atlas, check_status=1)
        self.assertEqual([r["verdict"] for r in doc["matrix"]["releases"]], ["not admitted", "ok"])
        self.assertEqual([r["missing"] for r in doc["matrix"]["releases"]], [0, 0])
        self.assertIn("stable ABI version list states torch_from_blob from 2.11.0", doc["torches"][0]["not_admitted"])
        requirement = doc["requirement"]
        self.assertEqual(requirement["kind"], "stable")
        self.assertEqual((requirement["stable_floor"], requirement["stable_floor_function"]),
                         ("2.11.0", "torch_from_blob"))
        self.assertEqual(requirement["lowest"], "2.11.0")
        self.assertEqual(requirement["specifier"], "torch>=2.11.0")
        text = wfx.run("check", self.blob, "--torch", self.atlas, check_status=1).stdout
        self.assertIn("stable from torch 2.11.0: torch_from_blob by torch's own stable ABI version list", text)
        self.assertIn("requirement torch>=2.11.0", text)
        # retag --torch auto writes the same floor (one verdict).
        out = self.tmp / "retagged"
        wfx.run("retag", self.blob, "--torch", "auto", "--torch-from", self.atlas, "-o", out, check_status=0)
        with zipfile.ZipFile(next(out.glob("*.whl"))) as archive:
            metadata = archive.read("blobext-1.0+torch2.11.dist-info/METADATA").decode()
        self.assertIn("Requires-Dist: torch>=2.11.0", metadata)

    def test_an_unlisted_function_keeps_the_atlas_floor(self):
        requirement = wfx.run_json("check", self.strided, "--torch", self.atlas)["requirement"]
        self.assertEqual((requirement["stable_floor"], requirement["lowest"]), ("", "2.10.0"))

    def test_no_release_from_the_stated_floor_is_a_finding_never_a_pin(self):
        # The symbols resolve on 2.10.0 (nothing missing), but no pin admits it: not "ok" (exit 1).
        doc = wfx.run_json("check", self.blob, "--torch", self.early, check_status=1)
        self.assertEqual(doc["matrix"]["releases"][0]["verdict"], "not admitted")
        self.assertEqual(doc["matrix"]["releases"][0]["missing"], 0)
        self.assertFalse(doc["requirement"]["any"])
        self.assertIsNone(doc["requirement"]["pin"])
        self.assertIn("torch_from_blob is stable from torch 2.11.0", doc["requirement"]["finding"])
        out = self.tmp / "not-retagged"
        proc = wfx.run("retag", self.blob, "--torch", "auto", "--torch-from", self.early, "-o", out, check_status=1)
        self.assertIn("torch_from_blob is stable from torch 2.11.0", proc.stdout)
        self.assertFalse(out.exists())

    @unittest.skipUnless(ATLAS.exists(), "no data/torch-atlas.gz in this checkout")
    def test_bundled_atlas(self):
        requirement = wfx.run_json("check", self.blob, "--torch-release", "all", check_status=1)["requirement"]
        self.assertEqual((requirement["lowest"], requirement["stable_floor"]), ("2.11.0", "2.11.0"))


if __name__ == "__main__":
    unittest.main()
