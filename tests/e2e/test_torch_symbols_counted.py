"""Every torch symbol counted, and "system" only what the system's libraries define.

Two synthetic torch releases in one atlas (the stand-in libraries plus a gcc-built
libtorch_python.so): 2.9.0's exports THPVariable_Wrap, 2.10.0's does not. A gcc-built
extension importing THPVariable_Wrap (libtorch_python's global C function) must be ok on
2.9.0 and NO on 2.10.0 naming that symbol, from the atlas and from the torch directory
alike: a THP* function is torch's, never "system".

The same extension also calls libc (versioned GLIBC_*), a stub libcudart.so.12 and a
private library nobody ships. Judged independently with readelf: only the references
versioned against libc are the system's; the runtime's and the private library's are
"elsewhere"."""
import json
import shutil
import subprocess
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wfx  # noqa: E402

STANDIN = {v: wfx.SAMPLES / f"torch-{v}" / "torch" for v in ("2.9.0", "2.10.0")}
TAG = "cp312"


def gcc(directory, name, source, *flags):
    (directory / f"{name}.c").write_text(source)
    proc = subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(directory / name), str(directory / f"{name}.c"),
                           *map(str, flags)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"gcc failed:\n{proc.stderr}")
    return directory / name


def torch_wheel(directory, version, python_lib):
    """torch `version` (the stand-in's libraries and version.py) with `python_lib` as libtorch_python.so."""
    tree = STANDIN[version]
    members = {f"torch/lib/{p.name}": p.read_bytes() for p in (tree / "lib").iterdir()}
    members["torch/lib/libtorch_python.so"] = python_lib.read_bytes()
    members["torch/version.py"] = (tree / "version.py").read_bytes()
    members.update(wfx.dist_info_members("torch", f"{version}+cu130", f"{TAG}-{TAG}-linux_x86_64"))
    return wfx.write_wheel(directory / f"torch-{version}+cu130-{TAG}-{TAG}-linux_x86_64.whl", members)


def undefined_by_readelf(path):
    """(name, version file or '', weak) of each undefined dynamic symbol, as readelf shows it."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], capture_output=True, text=True,
                         check=True).stdout
    symbols = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[6] == "UND" and fields[7:]:
            name = fields[7]
            version = name.split("@", 1)[1].lstrip("@") if "@" in name else ""
            symbols.append((name.split("@", 1)[0], version, fields[4] == "WEAK"))
    return symbols


@unittest.skipUnless(shutil.which("gcc") and shutil.which("readelf"), "needs gcc and readelf")
class TorchSymbolsCounted(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = wfx.TempDir()
        tmp = cls.tmp = cls.temp.__enter__()
        for version, exports in (("2.9.0", "void* THPVariable_Wrap(void* v) { return v; }\n"), ("2.10.0", "")):
            (tmp / version).mkdir()
            lib = gcc(tmp / version, "libtorch_python.so", exports + "int THPVariable_Check(void* v) { return v != 0; }\n",
                      "-Wl,-soname,libtorch_python.so")
            torch_wheel(tmp, version, lib)
            # The same release as a torch directory, for check --torch DIR.
            tree = tmp / f"dir-{version}" / "torch"
            shutil.copytree(STANDIN[version], tree)
            shutil.copy(lib, tree / "lib" / "libtorch_python.so")
        cls.atlas = tmp / "atlas.gz"
        wfx.run("index", *sorted(tmp.glob("torch-*.whl")), "--atlas", cls.atlas, check_status=0)
        cuda = tmp / "cuda"
        cuda.mkdir()
        gcc(cuda, "libcudart.so.12", "int cudaRuntimeGetVersion(int* v) { *v = 12080; return 0; }\n",
            "-Wl,-soname,libcudart.so.12")
        gcc(cuda, "libprivate.so", "int private_fn(void) { return 7; }\n", "-Wl,-soname,libprivate.so")
        cls.extension = gcc(tmp, "_C.so",
                            "#include <string.h>\n"
                            "void* THPVariable_Wrap(void*); int cudaRuntimeGetVersion(int*); int private_fn(void);\n"
                            "int f(const char* s) { int v = 0; cudaRuntimeGetVersion(&v);\n"
                            "  return (int)strlen(s) + v + private_fn() + (THPVariable_Wrap((void*)s) != 0); }\n",
                            f"-L{tmp / '2.9.0'}", "-ltorch_python", f"-L{cuda}", "-l:libcudart.so.12", "-lprivate")
        cls.wheel = cls.ext_wheel(tmp / "all", cls.extension)
        # Only THPVariable_Wrap and libc: no CUDA runtime to judge per release.
        cls.thp_wheel = cls.ext_wheel(tmp / "thp", gcc(tmp, "_thp.so", "void* THPVariable_Wrap(void*);\n"
                                                       "void* f(void* p) { return THPVariable_Wrap(p); }\n",
                                                       f"-L{tmp / '2.9.0'}", "-ltorch_python"))

    @staticmethod
    def ext_wheel(directory, so):
        directory.mkdir()
        members = {"ext/_C.so": so.read_bytes()}
        members.update(wfx.dist_info_members("ext", "1.0", f"{TAG}-{TAG}-linux_x86_64"))
        return wfx.write_wheel(directory / f"ext-1.0-{TAG}-{TAG}-linux_x86_64.whl", members)

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)

    def test_a_thp_function_a_release_lacks_is_a_no_naming_it(self):
        doc = wfx.run_json("check", self.thp_wheel, "--torch", self.atlas, check_status=1)
        versions = [release["torch_version"] for release in doc["matrix"]["releases"]]
        self.assertEqual(versions, ["2.9.0+cu130", "2.10.0+cu130"])
        cells = doc["matrix"]["members"][0]["cells"]
        self.assertEqual(cells[0]["verdict"], "ok")
        self.assertEqual((cells[1]["verdict"], cells[1]["first_missing"]), ("NO", "THPVariable_Wrap"))
        missing = doc["torches"][1]["unresolved"]
        self.assertEqual([(u["name"], u["torch"]) for u in missing], [("THPVariable_Wrap", True)])
        self.assertEqual(doc["requirement"]["kind"], "c++")  # a THP* function is torch's C++-side ABI
        self.assertEqual(doc["requirement"]["specifier"], "torch>=2.9.0,<2.10")
        text = wfx.run("check", self.thp_wheel, "--torch", self.atlas, check_status=1).stdout
        self.assertIn("THPVariable_Wrap", text)

    def test_the_torch_directory_says_the_same(self):
        old = wfx.run_json("check", self.thp_wheel, "--torch", self.tmp / "dir-2.9.0", check_status=0)
        self.assertTrue(old["torches"][0]["loads"])
        new = wfx.run_json("check", self.thp_wheel, "--torch", self.tmp / "dir-2.10.0", check_status=1)
        torch = new["torches"][0]
        self.assertFalse(torch["loads"])
        self.assertEqual([u["name"] for u in torch["unresolved"]], ["THPVariable_Wrap"])
        self.assertEqual(torch["members"][0]["unresolved"], 1)

    def test_system_is_only_what_the_systems_libraries_define(self):
        symbols = undefined_by_readelf(self.extension)
        libc = [name for name, version, weak in symbols if version.startswith("GLIBC_")]
        elsewhere = [name for name, version, weak in symbols
                     if not weak and not version.startswith("GLIBC_") and name in ("cudaRuntimeGetVersion", "private_fn")]
        self.assertIn("strlen", libc)
        self.assertEqual(sorted(elsewhere), ["cudaRuntimeGetVersion", "private_fn"])
        for torch in (self.tmp / "dir-2.9.0", self.tmp / "dir-2.10.0"):
            member = wfx.run_json("check", self.wheel, "--torch", torch, check_status=None)["torches"][0]["members"][0]
            self.assertEqual(member["system"], len(libc), (torch, member))
            self.assertEqual(member["elsewhere"], len(elsewhere), (torch, member))
        text = wfx.run("-v", "check", self.wheel, "--torch", self.tmp / "dir-2.10.0").stdout
        self.assertIn("elsewhere", text)


if __name__ == "__main__":
    unittest.main()
