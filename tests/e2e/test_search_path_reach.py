"""Each member is judged by its own search path, as ld.so judges it.

ld.so finds a member's NEEDED by file name along that member's own RUNPATH (or its
RPATH and its loaders' RPATHs); a library of the wheel that another member reaches
through its own path serves this member only if that other member happens to be loaded
first (ld.so then reuses the loaded object by SONAME), and nothing in a wheel promises
that order. torchvision 0.25.0 is the real case: `_C.so` NEEDs libcudart.so.12 with no
path to it, `image.so` NEEDs torchvision.libs/libcudart.e8e8b82a.so.12 (SONAME
libcudart.so.12) through its RUNPATH; torchvision imports `_C` first, and beside torch
2.11 (CUDA 13) `_C.so` dies with "libcudart.so.12: cannot open shared object file".

The wheel here is built with gcc the same way:
  pkg.libs/libdep.ab12cd34.so.1       SONAME libdep.so.1
  pkg.libs/libcudart.e8e8b82a.so.12   SONAME libcudart.so.12 (a stand-in)
  pkg/cuda/libcudart.so.12            SONAME libcudart.so.12 (a stand-in)
  pkg/a.so  NEEDs libdep.ab12cd34.so.1, libcudart.e8e8b82a.so.12; RUNPATH $ORIGIN/../pkg.libs
  pkg/b.so  NEEDs libcudart.so.12, no search path           (torchvision's _C.so)
  pkg/c.so  NEEDs libdep.so.1, no search path
  pkg/d.so  NEEDs libdep.ab12cd34.so.1; DT_RPATH $ORIGIN/../pkg.libs
  pkg/e.so  NEEDs libcudart.so.12; RUNPATH $ORIGIN/cuda
The real loader (ctypes in a fresh python per member, in the installed layout) is the
judge: a, d and e load; b and c do not, alone, and do once a is loaded first. wheelfix
must agree member by member: inspect resolves c's libdep.so.1 as missing (not "in the
wheel"), d's through RPATH; `check --torch-release 2.10.0,2.11.0` says b needs
nvidia-cuda-runtime-cu12 beside torch 2.11 (a CUDA 13 build) and e does not.
"""
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

TAG = "py3-none-linux_x86_64"
LOAD = ("import ctypes, sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL | 2)\n"
        "        print('OK', path)\n"
        "    except OSError as error:\n"
        "        print('ERR', path, error)\n")


def gcc(source, output, *flags, cwd):
    src = Path(cwd) / (Path(output).name.replace(".", "_") + ".c")
    src.write_text(source)
    proc = subprocess.run(["gcc", "-O2", "-fPIC", "-shared", str(src), "-o", str(output), *map(str, flags)],
                          capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise AssertionError(f"gcc failed:\n{proc.stderr}")
    return Path(output)


def load(site, *members):
    """What the real loader says of each member, loaded in this order in one fresh python."""
    proc = subprocess.run([sys.executable, "-c", LOAD, *[str(site / m) for m in members]], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin"})
    verdicts = {}
    for line in proc.stdout.splitlines():
        word, path, *rest = line.split(" ", 2)
        verdicts[str(Path(path).relative_to(site))] = "OK" if word == "OK" else rest[0]
    return verdicts


class EachMemberByItsOwnSearchPath(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc") or sysconfig.get_platform() != "linux-x86_64":
            raise unittest.SkipTest("needs gcc on linux x86_64")
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-reach-"))
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        build, link = cls.tmp / "build", cls.tmp / "link"
        build.mkdir()
        link.mkdir()
        site = cls.tmp / "site"
        libs, pkg = site / "pkg.libs", site / "pkg"
        (pkg / "cuda").mkdir(parents=True)
        libs.mkdir()
        dep = "int dep_value(void) { return 7; }\n"
        cudart = "int cudaRuntimeGetVersion(int *v) { *v = 12080; return 0; }\n"
        # What the wheel ships, and link-time copies whose SONAME is the file name a member NEEDs.
        gcc(dep, libs / "libdep.ab12cd34.so.1", "-Wl,-soname,libdep.so.1", cwd=build)
        gcc(cudart, libs / "libcudart.e8e8b82a.so.12", "-Wl,-soname,libcudart.so.12", cwd=build)
        gcc(cudart, pkg / "cuda" / "libcudart.so.12", "-Wl,-soname,libcudart.so.12", cwd=build)
        gcc(dep, link / "libdep.ab12cd34.so.1", "-Wl,-soname,libdep.ab12cd34.so.1", cwd=build)
        gcc(cudart, link / "libcudart.e8e8b82a.so.12", "-Wl,-soname,libcudart.e8e8b82a.so.12", cwd=build)
        gcc(dep, link / "libdep.so.1", "-Wl,-soname,libdep.so.1", cwd=build)
        gcc(cudart, link / "libcudart.so.12", "-Wl,-soname,libcudart.so.12", cwd=build)
        uses_dep = "int dep_value(void);\nint value(void) { return dep_value(); }\n"
        uses_cudart = "int cudaRuntimeGetVersion(int *);\nint value(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }\n"
        both = ("int dep_value(void);\nint cudaRuntimeGetVersion(int *);\n"
                "int value(void) { int v = 0; cudaRuntimeGetVersion(&v); return v + dep_value(); }\n")
        flags = [f"-L{link}", "-Wl,--no-as-needed"]
        gcc(both, pkg / "a.so", *flags, "-l:libdep.ab12cd34.so.1", "-l:libcudart.e8e8b82a.so.12",
            "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../pkg.libs", cwd=build)
        gcc(uses_cudart, pkg / "b.so", *flags, "-l:libcudart.so.12", cwd=build)
        gcc(uses_dep, pkg / "c.so", *flags, "-l:libdep.so.1", cwd=build)
        gcc(uses_dep, pkg / "d.so", *flags, "-l:libdep.ab12cd34.so.1", "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../pkg.libs",
            cwd=build)
        gcc(uses_cudart, pkg / "e.so", *flags, "-l:libcudart.so.12", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/cuda",
            cwd=build)
        cls.site = site
        members = {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*.so*"))}
        cls.wheel = wfx.write_wheel(cls.tmp / f"reach-1.0-{TAG}.whl",
                                    {**members, **wfx.dist_info_members("reach", "1.0", TAG)})
        # The judge: each member alone in a fresh python, then a first and b, c after it.
        cls.alone = {}
        for member in ("pkg/a.so", "pkg/b.so", "pkg/c.so", "pkg/d.so", "pkg/e.so"):
            cls.alone.update(load(site, member))
        cls.after_a = load(site, "pkg/a.so", "pkg/b.so", "pkg/c.so")

    def test_the_loader_judges_by_each_members_own_path(self):
        """The premise, from the loader itself: a, d (DT_RPATH) and e load alone; b and c find
        nothing by file name on their own path; both load once a has brought in the SONAMEs."""
        self.assertDictEqual({m: v for m, v in self.alone.items() if v == "OK"},
                             {"pkg/a.so": "OK", "pkg/d.so": "OK", "pkg/e.so": "OK"}, self.alone)
        self.assertIn("libcudart.so.12: cannot open shared object file", self.alone["pkg/b.so"])
        self.assertIn("libdep.so.1: cannot open shared object file", self.alone["pkg/c.so"])
        self.assertEqual(self.after_a, {"pkg/a.so": "OK", "pkg/b.so": "OK", "pkg/c.so": "OK"},
                         "the loader reuses a loaded object by SONAME: the order decides")

    def test_inspect_resolves_each_member_by_its_own_path(self):
        doc = wfx.run_json("inspect", self.wheel, check_status=None)
        libraries = doc["inputs"][0]["libraries"]["members"] if "inputs" in doc else doc["libraries"]["members"]
        needs = {(m["member"], n["name"]): n for m in libraries for n in m["needs"]}
        for member, name, via in (("pkg/a.so", "libdep.ab12cd34.so.1", "RUNPATH"), ("pkg/d.so", "libdep.ab12cd34.so.1", "RPATH"),
                                  ("pkg/e.so", "libcudart.so.12", "RUNPATH")):
            self.assertEqual(needs[(member, name)]["class"], "in-wheel", (member, needs[(member, name)]))
            self.assertEqual(needs[(member, name)]["via"], via, member)
        # c.so: the wheel's libdep (SONAME libdep.so.1) is reached only through a's path.
        self.assertEqual(needs[("pkg/c.so", "libdep.so.1")]["class"], "missing", needs[("pkg/c.so", "libdep.so.1")])
        self.assertIn("not found", needs[("pkg/c.so", "libdep.so.1")]["problem"])
        # b.so's libcudart.so.12 is NVIDIA's by name (beside torch), not the wheel's copy.
        self.assertNotEqual(needs[("pkg/b.so", "libcudart.so.12")]["class"], "in-wheel")

    def test_check_judges_the_cuda_runtime_by_each_members_own_path(self):
        doc = wfx.run_json("check", self.wheel, "--torch-release", "2.10.0,2.11.0", check_status=1)
        matrix = doc["matrix"]
        columns = [r["torch_version"].split("+")[0] for r in matrix["releases"]]
        self.assertEqual(columns, ["2.10.0", "2.11.0"])
        self.assertEqual(matrix["releases"][1]["cuda_version"].split(".")[0], "13", "the atlas's 2.11.0 is a CUDA 13 build")
        cells = {m["member"]: m["cells"] for m in matrix["members"]}
        # b: no path of its own to a libcudart.so.12 (the wheel's copy is a's): a CUDA 13 torch lacks it.
        self.assertEqual(cells["pkg/b.so"][0]["verdict"], "ok", cells["pkg/b.so"])
        self.assertEqual(cells["pkg/b.so"][1]["verdict"], "runtime", cells["pkg/b.so"])
        self.assertIn("needs nvidia-cuda-runtime-cu12 beside torch", cells["pkg/b.so"][1]["runtime_note"])
        # e: its RUNPATH reaches the wheel's own libcudart.so.12; a: NEEDs the wheel's file by its own name.
        for member in ("pkg/a.so", "pkg/e.so"):
            self.assertEqual([c["verdict"] for c in cells[member]], ["ok", "ok"], (member, cells[member]))
        torch_211 = doc["torches"][1]
        self.assertFalse(torch_211["loads"])
        self.assertTrue(any(n.startswith("pkg/b.so: needs nvidia-cuda-runtime-cu12") for n in torch_211["install_notes"]),
                        torch_211["install_notes"])
        self.assertFalse(any(n.startswith(("pkg/a.so", "pkg/e.so")) for n in torch_211["install_notes"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
