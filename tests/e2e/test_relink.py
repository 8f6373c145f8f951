"""relink end to end: the real loader before and after, readelf, RECORD re-checked by
`python3 -m wheel unpack`, `pip install`, raw copies of untouched members, determinism,
refusal of tampered input, bare ELF files."""
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

CUDART = Path("/usr/local/cuda/lib64/libcudart.so.13")
SM100 = "sgl_kernel/sm100/common_ops.abi3.so"
SM90 = "sgl_kernel/sm90/common_ops.abi3.so"


def readelf_dynamic(path):
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout
    return out


def runpath_of(path):
    for line in readelf_dynamic(path).splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            return line.split("[", 1)[1].rstrip("]")
    return None


def needed_of(path):
    return [l.split("[", 1)[1].rstrip("]") for l in readelf_dynamic(path).splitlines() if "(NEEDED)" in l]


def extract(wheel, member, dest):
    with zipfile.ZipFile(wheel) as zf:
        dest.write_bytes(zf.read(member))
    return dest


def load_in_subprocess(path):
    """dlopen with RTLD_NOW in a fresh python without LD_LIBRARY_PATH; returns (ok, error)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    code = "import ctypes,sys\ntry:\n ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL|2)\nexcept OSError as e:\n print(e); sys.exit(1)"
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env)
    return proc.returncode == 0, proc.stdout + proc.stderr


def pip_install(wheel, target):
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, text=True)


def relink(*args, check_status=0):
    return wfx.run("relink", *args, check_status=check_status)


class InstalledLayout(unittest.TestCase):
    @unittest.skipUnless(CUDART.exists(), "needs libcudart.so.13 from /usr/local/cuda to build the pip layout")
    def test_dead_build_tree_runpath_fails_then_loads_after_relink(self):
        with wfx.TempDir() as tmp:
            def layout(wheel, site):
                pip_install(wheel, site)
                shutil.copytree(wfx.SAMPLES / "torch-2.9.0" / "torch", site / "torch")
                (site / "nvidia" / "cu13" / "lib").mkdir(parents=True)
                shutil.copy(CUDART, site / "nvidia" / "cu13" / "lib")
                return site / SM100

            before = layout(wfx.SGL_WHEEL, tmp / "site-before")
            ok, error = load_in_subprocess(before)
            self.assertFalse(ok, "the sample must not load from its dead build-tree RUNPATH")
            self.assertIn("libc10", error)

            out = tmp / "out"
            relink(wfx.SGL_WHEEL, "-o", out, "--set-rpath", "{root}/torch/lib:{root}/nvidia/cu13/lib")
            repaired = out / wfx.SGL_WHEEL.name
            after = layout(repaired, tmp / "site-after")
            self.assertEqual(runpath_of(after), "$ORIGIN/../../torch/lib:$ORIGIN/../../nvidia/cu13/lib")
            for member in (SM100, SM90):
                ok, error = load_in_subprocess(tmp / "site-after" / member)
                self.assertTrue(ok, error)

    def test_replace_needed_shows_in_readelf(self):
        with wfx.TempDir() as tmp:
            relink(wfx.SGL_WHEEL, "-o", tmp / "a", "--replace-needed", "libcudart.so.13=libcudart.so.12")
            so12 = extract(tmp / "a" / wfx.SGL_WHEEL.name, SM100, tmp / "x12.so")
            self.assertIn("libcudart.so.12", needed_of(so12))
            self.assertNotIn("libcudart.so.13", needed_of(so12))
            relink(tmp / "a" / wfx.SGL_WHEEL.name, "-o", tmp / "b", "--replace-needed", "libcudart.so.12=libcudart.so.13")
            so13 = extract(tmp / "b" / wfx.SGL_WHEEL.name, SM100, tmp / "x13.so")
            self.assertEqual(needed_of(so13), needed_of(extract(wfx.SGL_WHEEL, SM100, tmp / "orig.so")))


class WheelOutput(unittest.TestCase):
    def relinked(self, tmp, *options, source=wfx.SGL_WHEEL):
        relink(source, "-o", tmp, *options)
        return tmp / source.name

    def test_output_passes_verify_wheel_unpack_and_pip(self):
        with wfx.TempDir() as tmp:
            out = self.relinked(tmp / "out", "--set-rpath", "{root}/torch/lib:" + "x" * 300)
            wfx.run("verify", out, check_status=0)
            subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", str(tmp / "unpacked"), str(out)],
                           check=True, capture_output=True)
            pip_install(out, tmp / "site")
            self.assertTrue((tmp / "site" / SM100).exists())
            self.assertTrue(runpath_of(tmp / "site" / SM100).endswith("x" * 300))

    def test_untouched_members_are_copied_raw_and_input_is_untouched(self):
        before = hashlib.sha256(wfx.SGL_WHEEL.read_bytes()).hexdigest()
        with wfx.TempDir() as tmp:
            out = self.relinked(tmp, "--set-rpath", "{root}/torch/lib", "--only", "sgl_kernel/sm100/*")
            with zipfile.ZipFile(wfx.SGL_WHEEL) as zin, zipfile.ZipFile(out) as zout:
                outputs = {i.filename: i for i in zout.infolist()}
                for info in zin.infolist():
                    if info.filename in (SM100, "sgl_kernel-0.3.21+cu130.dist-info/RECORD"):
                        continue
                    other = outputs[info.filename]
                    self.assertEqual(wfx.raw_member(out, other), wfx.raw_member(wfx.SGL_WHEEL, info), info.filename)
                    self.assertEqual(other.external_attr >> 16, info.external_attr >> 16)
                self.assertNotEqual(zout.read(SM100), zin.read(SM100))
                self.assertEqual(zout.read(SM90), zin.read(SM90))
                names = [i.filename for i in zout.infolist()]
                self.assertTrue(names[-1].endswith(".dist-info/RECORD"))
                self.assertTrue(all(".dist-info/" in n for n in names[names.index(next(n for n in names if ".dist-info/" in n)):]))
        self.assertEqual(hashlib.sha256(wfx.SGL_WHEEL.read_bytes()).hexdigest(), before)

    def test_same_input_and_options_give_identical_bytes(self):
        with wfx.TempDir() as tmp:
            options = ("--set-rpath", "{root}/torch/lib:{root}/nvidia/cu13/lib", "--add-needed", "libfoo.so.1")
            a = self.relinked(tmp / "a", *options).read_bytes()
            b = self.relinked(tmp / "b", *options).read_bytes()
            self.assertEqual(a, b)
            os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
            try:
                c = self.relinked(tmp / "c", *options)
                with zipfile.ZipFile(c) as zf:
                    self.assertEqual(zf.getinfo(SM100).date_time[:3], (2023, 11, 14))
            finally:
                del os.environ["SOURCE_DATE_EPOCH"]

    def test_root_placeholder_and_drop_absolute(self):
        with wfx.TempDir() as tmp:
            out = self.relinked(tmp / "a", "--drop-absolute-rpaths", "--add-rpath", "{root}/torch/lib")
            self.assertEqual(runpath_of(extract(out, SM100, tmp / "x.so")), "$ORIGIN/../../torch/lib")
            out = self.relinked(tmp / "b", "--drop-absolute-rpaths")
            self.assertIsNone(runpath_of(extract(out, SM90, tmp / "y.so")))

    def test_json_report(self):
        with wfx.TempDir() as tmp:
            doc = wfx.run_json("relink", wfx.SGL_WHEEL, "-o", tmp, "--set-soname", "libcommon_ops.so")
            self.assertEqual(doc["schema"], "wheelfix.relink/1")
            self.assertEqual(sorted(c["member"] for c in doc["changed"]), [SM100, SM90])
            self.assertEqual(doc["elf_members"], 2)

    def test_signatures_dropped_and_symlinks_kept(self):
        with wfx.TempDir() as tmp:
            src = tmp / wfx.SGL_WHEEL.name
            with zipfile.ZipFile(wfx.SGL_WHEEL) as zin, zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as zout:
                for info in zin.infolist():
                    data = zin.read(info)
                    if info.filename.endswith("RECORD"):
                        link = zipfile.ZipInfo("sgl_kernel/common_ops.so")
                        link.external_attr = (stat.S_IFLNK | 0o777) << 16
                        target = b"sm100/common_ops.abi3.so"
                        zout.writestr(link, target)
                        data += f"sgl_kernel/common_ops.so,{wfx.record_hash(target)},{len(target)}\n".encode()
                        zout.writestr(info.filename + ".jws", b"{}")
                        data += f"{info.filename}.jws,,\n".encode()
                    zout.writestr(info, data)
            wfx.run("verify", src, check_status=0)
            out = self.relinked(tmp / "out", "--set-rpath", "$ORIGIN", source=src)
            with zipfile.ZipFile(out) as zf:
                self.assertFalse(any(n.endswith(".jws") for n in zf.namelist()))
                self.assertTrue(stat.S_ISLNK(zf.getinfo("sgl_kernel/common_ops.so").external_attr >> 16))
                self.assertNotIn(".jws", zf.read("sgl_kernel-0.3.21+cu130.dist-info/RECORD").decode())
            wfx.run("verify", out, check_status=0)


class Refusals(unittest.TestCase):
    def test_tampered_wheel_is_refused_without_output(self):
        def flip(name, data):
            return data[:100] + bytes([data[100] ^ 1]) + data[101:] if name == SM90 else data
        with wfx.TempDir() as tmp:
            bad = wfx.rewrite_wheel(wfx.SGL_WHEEL, tmp / wfx.SGL_WHEEL.name, edit_member=flip)
            proc = relink(bad, "-o", tmp / "out", "--set-rpath", "$ORIGIN", check_status=2)
            self.assertIn("RECORD", proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1)
            self.assertFalse((tmp / "out" / bad.name).exists())
            self.assertEqual([p for p in (tmp / "out").glob("*")] if (tmp / "out").exists() else [], [])

    def test_bad_option_values(self):
        with wfx.TempDir() as tmp:
            relink(wfx.SGL_WHEEL, "-o", tmp, "--set-rpath", "a\nb", check_status=2)
            relink(wfx.SGL_WHEEL, "-o", tmp, "--replace-needed", "noequals", check_status=2)
            relink(wfx.SGL_WHEEL, "-o", tmp, "--only", "nothing-matches-*", "--set-rpath", "x", check_status=2)
            relink(wfx.SGL_WHEEL, "-o", wfx.SGL_WHEEL.parent, "--set-rpath", "x", check_status=2)
            relink(wfx.SGL_WHEEL, "-o", tmp, "--force-rpath", "--force-runpath", check_status=2)


class BareFile(unittest.TestCase):
    def test_patchelf_style_edit_of_one_file(self):
        lib = wfx.SAMPLES / "torch-2.9.0" / "torch" / "lib" / "libc10_cuda.so"
        with wfx.TempDir() as tmp:
            out = tmp / "libc10_cuda.so"
            relink(lib, "-o", out, "--set-rpath", "{root}/../nvidia/lib:" + "p" * 200, "--set-soname", "libc10_cuda.so.2")
            self.assertEqual(runpath_of(out), "$ORIGIN/../nvidia/lib:" + "p" * 200)
            self.assertIn("libc10_cuda.so.2", readelf_dynamic(out))
            self.assertEqual(stat.S_IMODE(out.stat().st_mode), stat.S_IMODE(lib.stat().st_mode))
            # the loader accepts the grown file: libc10.so found through the new $ORIGIN entry
            shutil.copy(lib.parent / "libc10.so", tmp / "libc10.so")
            loadable = tmp / "loadable" / "libc10_cuda.so"
            loadable.parent.mkdir()
            relink(lib, "-o", loadable, "--set-rpath", "{root}/..:" + "q" * 300)
            ok, error = load_in_subprocess(loadable)
            self.assertTrue(ok, error)
            relink(tmp / "missing.so", "-o", tmp / "x.so", "--set-rpath", "x", check_status=2)
            relink(lib, "-o", lib, "--set-rpath", "x", check_status=2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
