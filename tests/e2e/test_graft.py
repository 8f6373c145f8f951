"""Grafting end to end (issue 15's proof): a CPython extension built here by gcc links a
private libfoo.so.1, which links libbar.so.2, both with symbol versions (version
scripts, so DT_VERNEED names them), installed outside the wheel. `repair -w DIR`
with --ldpaths grafts both into graftpkg.libs/ under hashed names; readelf -d/-V
(an independent reader) shows SONAME = file name and NEEDED and verneed naming the
hashed files together; pip installs the result into a fresh venv where `import`
works with no LD_LIBRARY_PATH, and still does once the original prefix is gone;
the peer `auditwheel show` agrees with the tag wheelfix chose. Refusals (exit 2, one
line, nothing written): a missing library, one found only for the wrong machine,
one that is not ELF, a symlink loop, a grafted name colliding with a member. A wheel
linking stand-in torch libraries and the real libcudart.so.13 grafts none of them,
only its private library. $LIB/$PLATFORM in an RPATH expand as ld.so expands them
(ldd, the real loader, finds the same files).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import unittest
import zipfile
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).parent))
import peers  # noqa: E402
import wfx  # noqa: E402
from test_shim import compile_c, make_wheel  # noqa: E402

BAR = "int bar_value(void) { return 40; }\n"
FOO = "int bar_value(void);\nint foo_value(void) { return bar_value() + 2; }\n"
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
EXT_MEMBER = f"graftpkg/_ext{EXT_SUFFIX}"
CUDART = Path("/usr/local/cuda/lib64/libcudart.so.13")


def sha8(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:8]


def build_libraries(prefix, compiler="gcc"):
    """prefix/lib/libbar.so.2 and libfoo.so.1, versioned (BAR_2.0, FOO_1.0)."""
    lib = Path(prefix) / "lib"
    lib.mkdir(parents=True)
    (lib / "bar.map").write_text("BAR_2.0 { global: bar_value; local: *; };\n")
    (lib / "foo.map").write_text("FOO_1.0 { global: foo_value; local: *; };\n")
    compile_c(compiler, BAR, lib / "libbar.so.2", "-shared", "-Wl,-soname,libbar.so.2",
              f"-Wl,--version-script={lib / 'bar.map'}", cwd=lib)
    (lib / "libbar.so").symlink_to("libbar.so.2")
    compile_c(compiler, FOO, lib / "libfoo.so.1", "-shared", "-Wl,-soname,libfoo.so.1",
              f"-Wl,--version-script={lib / 'foo.map'}", f"-L{lib}", "-lbar", cwd=lib)
    (lib / "libfoo.so").symlink_to("libfoo.so.1")
    return lib


def build_extension(tmp, lib, *extra):
    return wfx.build_private_extension(Path(tmp) / "ext.so", "_ext", "foo_value", lib, "foo", *extra)


def graft_wheel(tmp, ext, extra_files=None):
    files = {"graftpkg/__init__.py": b"from ._ext import value\n", EXT_MEMBER: Path(ext).read_bytes()}
    files.update(extra_files or {})
    return make_wheel(tmp, "graftpkg", "cp311-cp311-linux_x86_64", files)


def readelf(*args):
    return subprocess.run(["readelf", *args], capture_output=True, text=True, check=True).stdout


def verneed_files(path):
    return re.findall(r"File: (\S+)", readelf("-VW", str(path)).split("Version needs section")[-1])


def repair(*args, env_extra=None, prefix=()):
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env.update(env_extra or {})
    return subprocess.run([*prefix, wfx.WHEELFIX, "repair", *map(str, args)], capture_output=True, text=True, env=env)


def outputs(directory):
    return sorted(p.name for p in Path(directory).glob("*")) if Path(directory).exists() else []


def ld_so_platform():
    """$PLATFORM as this machine's ld.so expands it (glibc 2.33+: --list-diagnostics)."""
    out = subprocess.run(["/lib64/ld-linux-x86-64.so.2", "--list-diagnostics"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("dl_platform="):
            return line.split("=", 1)[1].strip('"')
    raise AssertionError("ld.so --list-diagnostics names no dl_platform")


class GraftFixture(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(wfx.tempfile.mkdtemp(prefix="wheelfix-graft-"))
        self.lib = build_libraries(self.tmp / "prefix")
        self.ext = build_extension(self.tmp, self.lib)
        self.wheel = graft_wheel(self.tmp, self.ext)
        self.out = self.tmp / "out"

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def refused(self, *args, mention=(), prefix=()):
        proc = repair("-w", self.out, *args, prefix=prefix)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        for word in mention:
            self.assertIn(word, lines[0])
        self.assertEqual(outputs(self.out), [])
        return lines[0]

    def test_grafts_both_renames_needed_and_verneed_and_imports_without_the_prefix(self):
        proc = repair("-w", self.out, self.wheel, "--ldpaths", self.lib)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("no torch was checked", proc.stdout)
        written = list(self.out.glob("*.whl"))
        self.assertEqual(len(written), 1)
        out = written[0]
        tag = re.search(r"-(manylinux_\d+_\d+)_x86_64\.whl$", out.name)
        self.assertIsNotNone(tag, out.name)
        foo = f"libfoo-{sha8(self.lib / 'libfoo.so.1')}.so.1"
        bar = f"libbar-{sha8(self.lib / 'libbar.so.2')}.so.2"
        unpacked = self.tmp / "unpacked"
        with zipfile.ZipFile(out) as zf:
            names = zf.namelist()
            self.assertIn(f"graftpkg.libs/{foo}", names)
            self.assertIn(f"graftpkg.libs/{bar}", names)
            self.assertTrue(any(n.endswith(".dist-info/sboms/wheelfix.cdx.json") for n in names), names)
            sbom = zf.read(next(n for n in names if n.endswith("wheelfix.cdx.json"))).decode()
            zf.extractall(unpacked)
        self.assertIn(hashlib.sha256((self.lib / "libfoo.so.1").read_bytes()).hexdigest(), sbom)
        wfx.run("verify", out, check_status=0)

        ext = wfx.readelf_dynamic(unpacked / EXT_MEMBER)
        self.assertIn(foo, ext["needed"])
        self.assertNotIn("libfoo.so.1", ext["needed"])
        self.assertIn("$ORIGIN/../graftpkg.libs", (ext["runpath"] or ext["rpath"]).split(":"))
        self.assertIn(foo, verneed_files(unpacked / EXT_MEMBER))
        self.assertNotIn("libfoo.so.1", verneed_files(unpacked / EXT_MEMBER))
        grafted_foo = wfx.readelf_dynamic(unpacked / "graftpkg.libs" / foo)
        self.assertEqual(grafted_foo["soname"], foo)
        self.assertIn(bar, grafted_foo["needed"])
        self.assertEqual((grafted_foo["runpath"] or grafted_foo["rpath"]), "$ORIGIN")
        self.assertEqual(verneed_files(unpacked / "graftpkg.libs" / foo)[:1], [bar])
        self.assertEqual(wfx.readelf_dynamic(unpacked / "graftpkg.libs" / bar)["soname"], bar)

        python = wfx.install_in_fresh_venv(out, self.tmp / "venv")
        check = "import graftpkg; print(graftpkg.value())"
        self.assertEqual(wfx.run_without_library_path(python, check, self.tmp).stdout.strip(), "42")
        shutil.rmtree(self.tmp / "prefix")
        done = wfx.run_without_library_path(python, check, self.tmp)
        self.assertEqual(done.stdout.strip(), "42", done.stderr)

        show = peers.auditwheel("show", out)
        self.assertEqual(show.returncode, 0, show.stderr)
        self.assertIn(f'"{tag.group(1)}_x86_64"', show.stdout.replace("\n", " "))

    def test_ld_library_path_is_the_default_ldpaths_and_dry_run_writes_nothing(self):
        proc = repair("-w", self.out, self.wheel, "--dry-run", env_extra={"LD_LIBRARY_PATH": str(self.lib)})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("grafted libfoo.so.1", proc.stdout)
        self.assertIn("grafted libbar.so.2", proc.stdout)
        self.assertEqual(outputs(self.out), [])

    def test_inspect_shows_each_needed_with_its_class_in_text_json_and_markdown(self):
        env = dict(os.environ, LD_LIBRARY_PATH=str(self.lib))
        run = lambda *a: subprocess.run([wfx.WHEELFIX, *map(str, a)], capture_output=True, text=True, env=env)
        doc = wfx.json.loads(run("--json", "inspect", self.wheel).stdout)
        libraries = doc["inputs"][0]["libraries"]
        member = next(m for m in libraries["members"] if m["member"] == EXT_MEMBER)
        classes = {n["name"]: n["class"] for n in member["needs"]}
        self.assertEqual(classes["libfoo.so.1"], "graft")
        self.assertEqual([g["name"] for g in libraries["grafts"]], ["libfoo.so.1", "libbar.so.2"])
        self.assertEqual(libraries["grafts"][1]["needed_by"], ["libfoo.so.1"])
        text = run("inspect", self.wheel).stdout
        self.assertRegex(text, r"libfoo\.so\.1\s+graft\s+" + re.escape(str(self.lib / "libfoo.so.1")) + r" \(--ldpaths\)")
        self.assertIn("#### Libraries", run("inspect", "--format", "markdown", self.wheel).stdout)
        missing = subprocess.run([wfx.WHEELFIX, "--json", "inspect", self.wheel], capture_output=True, text=True,
                                 env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"})
        member = wfx.json.loads(missing.stdout)["inputs"][0]["libraries"]["members"]
        self.assertIn("missing", [n["class"] for m in member for n in m["needs"] if n["name"] == "libfoo.so.1"])

    def test_a_library_the_wheel_ships_is_used_and_only_its_dependency_grafted(self):
        # DT_RPATH: searched before --ldpaths (a RUNPATH comes after it, as in ld.so)
        ext = build_extension(self.tmp, self.lib, "-Wl,--disable-new-dtags,-rpath,$ORIGIN")
        shipped = self.tmp / "shipped"
        shipped.mkdir()
        wheel = graft_wheel(shipped, ext, {"graftpkg/libfoo.so.1": (self.lib / "libfoo.so.1").read_bytes()})
        proc = repair("-w", self.out, wheel, "--ldpaths", self.lib, "--json")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        report = wfx.json.loads(proc.stdout)["wheels"][0]
        self.assertEqual([g["needed"] for g in report["done"]["grafted"]], ["libbar.so.2"])
        self.assertEqual(report["done"]["grafted"][0]["needed_by"], ["graftpkg/libfoo.so.1"])
        out = next(self.out.glob("*.whl"))
        with zipfile.ZipFile(out) as zf:
            zf.extractall(self.tmp / "x")
        self.assertIn("libfoo.so.1", wfx.readelf_dynamic(self.tmp / "x" / EXT_MEMBER)["needed"])
        bar = f"libbar-{sha8(self.lib / 'libbar.so.2')}.so.2"
        shipped_foo = wfx.readelf_dynamic(self.tmp / "x" / "graftpkg" / "libfoo.so.1")
        self.assertIn(bar, shipped_foo["needed"])
        self.assertEqual(verneed_files(self.tmp / "x" / "graftpkg" / "libfoo.so.1")[:1], [bar])

    @unittest.skipUnless(Path("/lib/x86_64-linux-gnu").is_dir() and os.uname().machine == "x86_64",
                         "Debian multiarch x86_64: $LIB is lib/x86_64-linux-gnu there")
    def test_lib_and_platform_tokens_in_rpath_are_expanded_as_ld_so_does(self):
        # $LIB/$PLATFORM in an RPATH: the real loader (ldd) finds libfoo under
        # P/lib/x86_64-linux-gnu/<platform>; wheelfix grafts both libraries from there.
        # <platform> is the machine's ld.so's own: "x86_64", or "haswell" on an
        # Intel CPU with AVX2 (glibc replaces the kernel's AT_PLATFORM there).
        tokens = self.tmp / "tokens"
        platform_dir = tokens / "lib" / "x86_64-linux-gnu" / ld_so_platform()
        platform_dir.mkdir(parents=True)
        for name in ("libfoo.so.1", "libbar.so.2"):
            shutil.copy2(self.lib / name, platform_dir / name)
        ext = build_extension(self.tmp, self.lib, f"-Wl,--disable-new-dtags,-rpath,{tokens}/$LIB/${{PLATFORM}}")
        ldd = subprocess.run(["ldd", str(ext)], capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}).stdout
        self.assertIn(f"libfoo.so.1 => {platform_dir / 'libfoo.so.1'}", ldd)
        wheel = graft_wheel(self.tmp / "tokens", ext)
        proc = repair("-w", self.out, wheel, "--json")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        grafted = {g["needed"]: g["source"] for g in wfx.json.loads(proc.stdout)["wheels"][0]["done"]["grafted"]}
        self.assertEqual(grafted, {"libfoo.so.1": str(platform_dir / "libfoo.so.1"),
                                   "libbar.so.2": str(platform_dir / "libbar.so.2")})

    def test_one_needed_name_found_as_two_files_is_grafted_once_as_ld_so_loads_the_first(self):
        other = self.tmp / "other"
        other_lib = other / "lib"
        other_lib.mkdir(parents=True)
        (other_lib / "foo.map").write_text("FOO_1.0 { global: foo_value; local: *; };\n")
        compile_c("gcc", FOO.replace("+ 2", "+ 3"), other_lib / "libfoo.so.1", "-shared", "-Wl,-soname,libfoo.so.1",
                  f"-Wl,--version-script={other_lib / 'foo.map'}", f"-L{self.lib}", "-lbar", cwd=other_lib)
        (other_lib / "libfoo.so").symlink_to("libfoo.so.1")
        first = build_extension(self.tmp, self.lib, f"-Wl,-rpath,{self.lib}", "-Wl,--disable-new-dtags")
        first_bytes = first.read_bytes()
        second = build_extension(self.tmp, other_lib, f"-Wl,-rpath,{other_lib}", "-Wl,--disable-new-dtags")
        both = self.tmp / "both"
        both.mkdir()
        wheel = graft_wheel(both, self.tmp / "ext.so", {EXT_MEMBER: first_bytes, "graftpkg/zz/_second.so": second.read_bytes()})
        proc = repair("-w", self.out, wheel, "--json")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        grafted = wfx.json.loads(proc.stdout)["wheels"][0]["done"]["grafted"]
        foo = [g for g in grafted if g["needed"] == "libfoo.so.1"]
        self.assertEqual(len(foo), 1, grafted)
        self.assertEqual(foo[0]["source"], str(self.lib / "libfoo.so.1"))
        with zipfile.ZipFile(next(self.out.glob("*.whl"))) as zf:
            zf.extractall(self.tmp / "x")
        name = f"libfoo-{sha8(self.lib / 'libfoo.so.1')}.so.1"
        for member in (EXT_MEMBER, "graftpkg/zz/_second.so"):
            self.assertIn(name, wfx.readelf_dynamic(self.tmp / "x" / member)["needed"], member)
            self.assertIn(name, verneed_files(self.tmp / "x" / member), member)

    def test_missing_library_names_it_and_the_member(self):
        self.refused(self.wheel, mention=("libfoo.so.1", EXT_MEMBER))

    def test_exclude_leaves_a_library_out(self):
        proc = repair("-w", self.out, self.wheel, "--exclude", "libfoo*", "--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(wfx.json.loads(proc.stdout)["wheels"][0]["done"]["grafted"], [])

    def test_wrong_machine_only(self):
        if shutil.which("aarch64-linux-gnu-gcc") is None:
            self.skipTest("aarch64-linux-gnu-gcc is not installed")
        other = self.tmp / "arm"
        try:
            arm = build_libraries(other, "aarch64-linux-gnu-gcc")
        except AssertionError as error:
            self.skipTest(f"the cross compiler cannot link: {error}")
        self.refused(self.wheel, "--ldpaths", arm, mention=("libfoo.so.1", "aarch64"))

    def test_not_elf(self):
        bad = self.tmp / "bad"
        bad.mkdir()
        (bad / "libfoo.so.1").write_text("INPUT(-lfoo)\n")
        self.refused(self.wheel, "--ldpaths", f"{bad}:{self.lib}", mention=("libfoo.so.1", "not an ELF file"))

    def test_symlink_loop(self):
        loop = self.tmp / "loop"
        loop.mkdir()
        (loop / "libfoo.so.1").symlink_to("libfoo.so.1")
        self.refused(self.wheel, "--ldpaths", loop, mention=("libfoo.so.1", "symlink loop"))

    def test_plat_only_plat_and_no_update_tags(self):
        # The fixture's result needs GLIBC_2.2.5 at most: manylinux_2_5.
        def written(*args):
            shutil.rmtree(self.out, ignore_errors=True)
            proc = repair("-w", self.out, self.wheel, "--ldpaths", self.lib, *args)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            return [p.name for p in self.out.glob("*.whl")]
        # --plat asks for a tag; an older one the result meets wins, as in auditwheel...
        self.assertEqual(written("--plat", "manylinux_2_28_x86_64"), ["graftpkg-1.0-cp311-cp311-manylinux_2_5_x86_64.whl"])
        # ...unless --only-plat, which takes the tag asked for.
        self.assertEqual(written("--plat", "manylinux_2_28_x86_64", "--only-plat"),
                         ["graftpkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"])
        self.assertEqual(written("--no-update-tags"), ["graftpkg-1.0-cp311-cp311-linux_x86_64.whl"])
        shutil.rmtree(self.out)
        self.refused(self.wheel, "--ldpaths", self.lib, "--plat", "manylinux_2_17_aarch64", mention=("aarch64",))

    def test_plat_below_what_a_grafted_library_needs_is_refused(self):
        newer = self.tmp / "newer"
        newer.mkdir()
        compile_c("gcc", "#include <sys/random.h>\nint foo_value(void) { char b; return (int)getrandom(&b, 1, 0) + 41; }\n",
                  newer / "libfoo.so.1", "-shared", "-Wl,-soname,libfoo.so.1", cwd=newer)
        ext = wfx.build_private_extension(newer / "ext.so", "_ext", "foo_value", newer, ":libfoo.so.1")
        wheel = graft_wheel(newer, ext)
        line = self.refused(wheel, "--ldpaths", newer, "--plat", "manylinux_2_17_x86_64",
                            mention=("--plat manylinux_2_17_x86_64 cannot be met", "grafted libraries included"))
        self.assertRegex(line, r"the result needs manylinux_2_(2[5-9]|3\d)")

    @unittest.skipUnless(shutil.which("dpkg") and Path("/usr/lib/x86_64-linux-gnu/libbz2.so").exists(),
                         "Debian's libbz2-dev is not installed")
    def test_sbom_names_the_debian_package_a_grafted_system_file_came_from(self):
        # libbz2 is not on the policy's allowed list: grafted from where ld.so.conf
        # finds it; the SBOM names the file's sha256 and the package dpkg -S gives.
        ext = wfx.build_private_extension(self.tmp / "bz.so", "_ext", "BZ2_bzlibVersion",
                                          "/usr/lib/x86_64-linux-gnu", "bz2")
        bz = self.tmp / "bz"
        bz.mkdir()
        proc = repair("-w", self.out, graft_wheel(bz, ext), "--json")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        grafted = wfx.json.loads(proc.stdout)["wheels"][0]["done"]["grafted"]
        self.assertEqual([g["needed"] for g in grafted], ["libbz2.so.1.0"])
        source = grafted[0]["source"]
        owner = subprocess.run(["dpkg", "-S", source], capture_output=True, text=True).stdout.split(": ")[0]
        self.assertTrue(owner.startswith("libbz2"), owner)
        with zipfile.ZipFile(next(self.out.glob("*.whl"))) as zf:
            sbom = wfx.json.loads(zf.read("graftpkg-1.0.dist-info/sboms/wheelfix.cdx.json"))
        text = wfx.json.dumps(sbom)
        self.assertIn(hashlib.sha256(Path(source).read_bytes()).hexdigest(), text)
        package = owner.split(":")[0]  # "libbz2-1.0:amd64": the purl names the package and its architecture
        self.assertIn(f'"purl": "pkg:deb/debian/{package}@', text)
        self.assertIn(f"?arch={owner.split(':')[1]}", text)

    def test_an_ldpaths_directory_that_is_a_symlink_loop_is_skipped(self):
        # ld.so's open() of <loop>/libfoo.so.1 fails with ELOOP and it goes on: so
        # does wheelfix (a skip, noted), grafting from the next directory.
        loop = self.tmp / "loopdir"
        loop.symlink_to("loopdir")
        proc = repair("-w", self.out, self.wheel, "--ldpaths", f"{loop}:{self.lib}", "--json")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        grafted = {g["needed"]: g["source"] for g in wfx.json.loads(proc.stdout)["wheels"][0]["done"]["grafted"]}
        self.assertEqual(grafted["libfoo.so.1"], str(self.lib / "libfoo.so.1"))
        env = dict(os.environ, LD_LIBRARY_PATH=f"{loop}:{self.lib}")
        doc = wfx.json.loads(subprocess.run([wfx.WHEELFIX, "--json", "inspect", self.wheel], capture_output=True,
                                            text=True, env=env).stdout)
        foo = next(n for m in doc["inputs"][0]["libraries"]["members"] for n in m["needs"] if n["name"] == "libfoo.so.1")
        self.assertIn(f"{loop}/libfoo.so.1: symlink loop", foo["skipped"])

    def test_a_name_that_already_carries_its_hash_is_not_hashed_again(self):
        # auditwheel's rule: libfoo-<sha256[:8] of the file>.so.1 keeps its name.
        plain = compile_c("gcc", "int foo_value(void) { return 42; }\n", self.tmp / "plain.so", "-shared", cwd=self.tmp)
        hashed_dir = self.tmp / "hashed"
        hashed_dir.mkdir()
        name = f"libfoo-{sha8(plain)}.so.1"
        shutil.copy(plain, hashed_dir / name)
        ext = wfx.build_private_extension(self.tmp / "hashed_ext.so", "_ext", "foo_value", hashed_dir, f":{name}")
        wheel = graft_wheel(hashed_dir, ext)
        proc = repair("-w", self.out, wheel, "--ldpaths", hashed_dir, "--json")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        with zipfile.ZipFile(next(self.out.glob("*.whl"))) as zf:
            self.assertEqual([n for n in zf.namelist() if n.startswith("graftpkg.libs/")], [f"graftpkg.libs/{name}"])

    def test_unreadable(self):
        # As root every file is readable: then wheelfix runs as nobody (setpriv), with
        # the wheel readable and the output directory writable by it.
        as_user = []
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                self.skipTest("running as root without setpriv: every file is readable")
            as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            self.tmp.chmod(0o755)
            self.out.mkdir(mode=0o777)
            self.out.chmod(0o777)
        locked = self.tmp / "locked"
        locked.mkdir()
        shutil.copy(self.lib / "libfoo.so.1", locked)
        (locked / "libfoo.so.1").chmod(0)
        self.refused(self.wheel, "--ldpaths", locked, mention=("libfoo.so.1", "cannot be read"), prefix=as_user)

    def test_grafted_name_colliding_with_a_member(self):
        foo = f"libfoo-{sha8(self.lib / 'libfoo.so.1')}.so.1"
        collide = self.tmp / "collide"
        collide.mkdir()
        wheel = graft_wheel(collide, self.ext, {f"graftpkg.libs/{foo}": b"not the library\n"})
        self.refused(wheel, "--ldpaths", self.lib, mention=(foo,))


def inspect_as_it_stands(wheel, library_path=None):
    """inspect of `wheel` in JSON, text and markdown, LD_LIBRARY_PATH set to library_path
    (unset when None); and the peer's `auditwheel show --json` under the same one."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if library_path:
        env["LD_LIBRARY_PATH"] = str(library_path)
    run = lambda *a: subprocess.run([wfx.WHEELFIX, *map(str, a)], capture_output=True, text=True, env=env)
    outputs = [run("inspect", *fmt, wheel) for fmt in (["--json"], [], ["--format", "markdown"])]
    for proc in outputs:
        if proc.returncode != 0:
            raise AssertionError(proc.stderr)
    with mock.patch.dict(os.environ, env, clear=True):
        show = peers.auditwheel("show", "--json", wheel)
    return wfx.json.loads(outputs[0].stdout)["inputs"][0], outputs[1].stdout, outputs[2].stdout, wfx.json.loads(show.stdout)


def verdict(report):
    """wheelfix's tag for the wheel as it stands, spelled as auditwheel's overall_tag."""
    arch = report["elf_files"][0]["machine"]
    return f"{report['honest_tag']}_{arch}" if report["honest_tag"] else f"linux_{arch}"


class AsItStands(unittest.TestCase):
    """inspect's honest tag counts the libraries from outside the wheel, as auditwheel
    show does: a graft or missing library leaves the wheel linux_<arch>."""

    def setUp(self):
        peers.peer_venv()
        self.tmp = Path(wfx.tempfile.mkdtemp(prefix="wheelfix-as-it-stands-"))
        self.lib = build_libraries(self.tmp / "prefix")
        self.ext = build_extension(self.tmp, self.lib)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_graft_fixture_found_is_linux_and_names_what_repair_grafts(self):
        wheel = make_wheel(self.tmp, "graftpkg", "cp311-cp311-manylinux_2_17_x86_64",
                           {EXT_MEMBER: self.ext.read_bytes()})
        report, text, markdown, theirs = inspect_as_it_stands(wheel, self.lib)
        self.assertEqual(theirs["overall_tag"], "linux_x86_64")
        self.assertEqual(verdict(report), theirs["overall_tag"])
        self.assertIsNone(report["honest_tag"])
        self.assertEqual(f"{report['symbol_tag']}_x86_64", theirs["sym_tag"])
        outside = {o["name"]: o for o in report["outside_libraries"]}
        self.assertEqual(sorted(outside), sorted(theirs["external_libs"]))  # libfoo, and libbar beneath it
        self.assertEqual((outside["libfoo.so.1"]["class"], outside["libfoo.so.1"]["repair"]), ("graft", "graft"))
        self.assertEqual(outside["libfoo.so.1"]["location"], str(self.lib / "libfoo.so.1"))
        self.assertEqual(outside["libfoo.so.1"]["needed_by"], [EXT_MEMBER])
        self.assertEqual(outside["libbar.so.2"]["needed_by"], ["libfoo.so.1"])
        claim = report["platform_claims"][0]
        self.assertEqual((claim["tag"], claim["honest"]), ("manylinux_2_17_x86_64", False))
        self.assertIn("libfoo.so.1", claim["violation"])
        self.assertIn("-> linux_x86_64 as it stands", text)
        self.assertRegex(text, rf"libfoo\.so\.1 \(needed by {re.escape(EXT_MEMBER)}\): found outside the wheel at "
                               rf"{re.escape(str(self.lib / 'libfoo.so.1'))}, not allowed by the policy; repair grafts it")
        self.assertIn("tag manylinux_2_17_x86_64 LIES: needs libfoo.so.1 from outside the wheel", text)
        self.assertIn("→ linux_x86_64 as it stands", markdown)
        self.assertIn("repair grafts it", markdown)

    def test_graft_fixture_not_found_is_linux_and_repair_would_refuse(self):
        wheel = graft_wheel(self.tmp, self.ext)
        report, text, markdown, theirs = inspect_as_it_stands(wheel)
        self.assertEqual(verdict(report), theirs["overall_tag"])
        self.assertEqual([(o["name"], o["class"], o["repair"]) for o in report["outside_libraries"]],
                         [("libfoo.so.1", "missing", "refuse")])
        self.assertIn("libfoo.so.1 (needed by graftpkg/_ext", text)
        self.assertIn("repair refuses the wheel", text)
        self.assertIn("repair refuses the wheel", markdown)

    def test_a_grafted_result_is_manylinux_again(self):
        wheel = graft_wheel(self.tmp, self.ext)
        proc = repair("-w", self.tmp / "out", wheel, "--ldpaths", self.lib)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report, _, _, theirs = inspect_as_it_stands(next((self.tmp / "out").glob("*.whl")))
        self.assertEqual(report["outside_libraries"], [])
        self.assertTrue(report["honest_tag"].startswith("manylinux_"), report["honest_tag"])
        self.assertEqual(verdict(report), theirs["overall_tag"])

    def test_a_system_library_raises_the_tag_as_auditwheel_show_does(self):
        # libmvec.so.1 is allowed from manylinux_2_24 only: linked (nothing imported
        # from it, so the symbol versions alone would allow manylinux_2_5).
        mvec = compile_c("gcc", "int f(void) { return 1; }\n", self.tmp / "mv.so", "-shared", "-Wl,--no-as-needed",
                         "-lmvec", cwd=self.tmp)
        wheel = make_wheel(self.tmp, "mvpkg", "cp311-cp311-manylinux_2_17_x86_64", {"mvpkg/mv.so": mvec.read_bytes()})
        report, text, _, theirs = inspect_as_it_stands(wheel)
        self.assertEqual(verdict(report), theirs["overall_tag"])
        self.assertEqual((report["honest_tag"], report["symbol_tag"]), ("manylinux_2_24", "manylinux_2_5"))
        self.assertEqual(report["platform_claims"][0]["violation"], "libmvec.so.1 (allowed from manylinux_2_24)")
        self.assertIn("tag manylinux_2_17_x86_64 LIES: needs libmvec.so.1 (allowed from manylinux_2_24)", text)

    def test_python_snappy_agrees_with_auditwheel_show(self):
        wheel = wfx.AUDITWHEEL / "python_snappy-0.5.2-pp260-pypy_41-linux_x86_64.whl"
        report, text, _, theirs = inspect_as_it_stands(wheel)
        if "libsnappy.so.1" not in (theirs.get("external_libs") or {}):
            self.skipTest("this machine has libsnappy.so.1 where ld.so finds it")
        self.assertEqual(verdict(report), theirs["overall_tag"])
        self.assertEqual(verdict(report), "linux_x86_64")
        self.assertEqual(f"{report['symbol_tag']}_x86_64", theirs["sym_tag"])
        self.assertEqual(report["outside_libraries"],
                         [{"name": "libsnappy.so.1", "class": "missing", "location": "", "problem": "not found",
                           "needed_by": ["snappy/_snappy_cffi.pypy-41.so"], "repair": "refuse"}])
        self.assertIn("libsnappy.so.1 (needed by snappy/_snappy_cffi.pypy-41.so): not in the wheel", text)

    def test_torch_and_nvidia_libraries_cost_nothing(self):
        report, text, _, _ = inspect_as_it_stands(wfx.SGL_WHEEL)
        self.assertEqual(report["outside_libraries"], [])
        self.assertEqual(report["honest_tag"], report["symbol_tag"])
        self.assertIsNotNone(report["honest_tag"])
        self.assertIn("not counted against the tag, provided beside the wheel: torch (libc10.so", text)
        self.assertIn("nvidia-cuda-runtime (libcudart.so.13)", text)


MUSL_LOADER = Path("/lib/ld-musl-x86_64.so.1")
MUSL_MAIN = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char** argv) {
    void* handle = dlopen(argv[1], RTLD_NOW);
    if (!handle) { puts(dlerror()); return 1; }
    printf("%d\n", ((int (*)(void))dlsym(handle, "ext_value"))());
    return 0;
}
"""


@unittest.skipUnless(shutil.which("musl-gcc") and MUSL_LOADER.exists() and os.uname().machine == "x86_64",
                     "musl-gcc (Debian's musl-tools) is not installed")
class Musllinux(unittest.TestCase):
    """A musl wheel gets the same treatment with the musllinux policy: its private
    libraries are grafted, musl's libc is not (the musllinux allowed list), the tag is
    musllinux, and musl's own loader loads the result with the prefix gone."""

    def test_grafts_with_the_musllinux_policy_and_musl_loads_the_result(self):
        tmp = Path(wfx.tempfile.mkdtemp(prefix="wheelfix-graft-musl-"))
        try:
            lib = build_libraries(tmp / "prefix", "musl-gcc")
            ext = compile_c("musl-gcc", "int foo_value(void);\nint ext_value(void) { return foo_value(); }\n",
                            tmp / "ext.so", "-shared", f"-L{lib}", "-lfoo", cwd=tmp)
            # Alpine's toolchain (where musllinux wheels are built) names musl's libc
            # libc.musl-x86_64.so.1 in NEEDED; Debian's musl-gcc writes libc.so.
            for path in (lib / "libfoo.so.1", lib / "libbar.so.2", ext):
                proc = peers.patchelf("--replace-needed", "libc.so", "libc.musl-x86_64.so.1", path)
                self.assertEqual(proc.returncode, 0, proc.stderr)
            wheel = make_wheel(tmp, "muslpkg", "cp311-cp311-linux_x86_64", {"muslpkg/ext.so": ext.read_bytes()})
            proc = repair("-w", tmp / "out", wheel, "--ldpaths", lib, "--json")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            grafted = sorted(g["needed"] for g in wfx.json.loads(proc.stdout)["wheels"][0]["done"]["grafted"])
            self.assertEqual(grafted, ["libbar.so.2", "libfoo.so.1"])
            out = next((tmp / "out").glob("*.whl"))
            self.assertRegex(out.name, r"-musllinux_1_[12]_x86_64\.whl$")
            report = wfx.run_json("inspect", out)["inputs"][0]
            self.assertEqual(report["outside_libraries"], [])
            self.assertRegex(report["honest_tag"], r"^musllinux_1_[12]$")
            with zipfile.ZipFile(out) as zf:
                zf.extractall(tmp / "installed")
            foo = f"libfoo-{sha8(lib / 'libfoo.so.1')}.so.1"
            dynamic = wfx.readelf_dynamic(tmp / "installed" / "muslpkg" / "ext.so")
            self.assertEqual(dynamic["needed"], [foo, "libc.musl-x86_64.so.1"])
            self.assertIn(foo, verneed_files(tmp / "installed" / "muslpkg" / "ext.so"))

            # musl's loader: libc.musl-x86_64.so.1 is where Alpine keeps it (a stand-in
            # directory holding only that name); the grafted libraries come from the wheel.
            main = compile_c("musl-gcc", MUSL_MAIN, tmp / "main", cwd=tmp)
            alpine = tmp / "alpine-lib"
            alpine.mkdir()
            (alpine / "libc.musl-x86_64.so.1").symlink_to(MUSL_LOADER)
            shutil.rmtree(tmp / "prefix")
            run = subprocess.run([str(main), str(tmp / "installed" / "muslpkg" / "ext.so")], capture_output=True,
                                 text=True, env={"LD_LIBRARY_PATH": str(alpine), "PATH": os.environ.get("PATH", "")})
            self.assertEqual(run.stdout.strip(), "42", run.stdout + run.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class KeepVersion(unittest.TestCase):
    def test_keep_version_writes_the_pin_but_no_torch_label(self):
        torch_210 = wfx.SAMPLES / "torch-2.10.0" / "torch"
        with wfx.TempDir() as tmp:
            proc = repair(wfx.SGL_WHEEL, "--torch", torch_210, "-w", tmp, "--keep-version", "--no-load-test")
            self.assertIn(proc.returncode, (0, 1), proc.stderr)
            written = [p.name for p in tmp.glob("*.whl")]
            self.assertEqual(len(written), 1, proc.stdout + proc.stderr)
            self.assertTrue(written[0].startswith("sgl_kernel-0.3.21+cu130-"), written)
            with zipfile.ZipFile(tmp / written[0]) as zf:
                metadata = zf.read("sgl_kernel-0.3.21+cu130.dist-info/METADATA").decode()
            self.assertIn("Version: 0.3.21+cu130\n", metadata)
            self.assertIn("Requires-Dist: torch>=2.10,<2.11", metadata)


class TorchAndCuda(unittest.TestCase):
    def test_nothing_of_torch_or_cuda_is_grafted_only_the_private_library(self):
        if not CUDART.exists():
            self.skipTest(f"{CUDART} is not installed")
        tmp = Path(wfx.tempfile.mkdtemp(prefix="wheelfix-graft-torch-"))
        try:
            torch_lib = tmp / "torch" / "lib"
            torch_lib.mkdir(parents=True)
            for name in ("libc10.so", "libtorch_cpu.so"):
                compile_c("gcc", f"int {name[3:-3]}_stand_in(void) {{ return 1; }}\n", torch_lib / name,
                          "-shared", f"-Wl,-soname,{name}", cwd=torch_lib)
            private = build_libraries(tmp / "prefix")
            source = ("int c10_stand_in(void); int torch_cpu_stand_in(void); int foo_value(void);\n"
                      "int cudaRuntimeGetVersion(int*);\n"
                      "int use(void) { int v; cudaRuntimeGetVersion(&v); return c10_stand_in() + torch_cpu_stand_in() + foo_value(); }\n")
            ext = compile_c("gcc", source, tmp / "ops.so", "-shared", f"-L{torch_lib}", f"-L{private}",
                            f"-L{CUDART.parent}", "-lc10", "-ltorch_cpu", "-lfoo", "-l:libcudart.so.13", cwd=tmp)
            wheel = make_wheel(tmp, "torchext", "cp311-cp311-linux_x86_64", {"torchext/ops.so": ext.read_bytes()})
            ldpaths = f"{torch_lib}:{private}:{CUDART.parent}"
            proc = repair("-w", tmp / "out", wheel, "--ldpaths", ldpaths, "--json")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            report = wfx.json.loads(proc.stdout)["wheels"][0]
            grafted = sorted(g["needed"] for g in report["done"]["grafted"])
            self.assertEqual(grafted, ["libbar.so.2", "libfoo.so.1"])
            self.assertEqual(sorted(report["done"]["distributions_needed"]),
                             ["nvidia-cuda-runtime (not in METADATA's Requires-Dist)",
                              "torch (not in METADATA's Requires-Dist)"])
            # METADATA that requires torch: the report says so, and still names the
            # CUDA runtime's distribution it does not require.
            members = {"torchext/ops.so": ext.read_bytes(), **wfx.dist_info_members("torchext", "1.0", "cp311-cp311-linux_x86_64")}
            members["torchext-1.0.dist-info/METADATA"] += b"Requires-Dist: torch>=2.9\n"
            required = tmp / "required"
            required.mkdir()
            wheel = wfx.write_wheel(required / "torchext-1.0-cp311-cp311-linux_x86_64.whl", members)
            proc = repair("-w", required / "out", wheel, "--ldpaths", ldpaths)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertIn("needs beside it: torch (METADATA requires it)", proc.stdout)
            self.assertIn("needs beside it: nvidia-cuda-runtime (not in METADATA's Requires-Dist)", proc.stdout)
            out = next((tmp / "out").glob("*.whl"))
            with zipfile.ZipFile(out) as zf:
                libs = [n for n in zf.namelist() if n.startswith("torchext.libs/")]
                self.assertEqual(len(libs), 2, libs)
                bases = [n.split("/", 1)[1] for n in libs]
                self.assertFalse(any("cudart" in n or "torch" in n or "c10" in n for n in bases), bases)
                (tmp / "x").mkdir()
                zf.extract("torchext/ops.so", tmp / "x")
            dynamic = wfx.readelf_dynamic(tmp / "x" / "torchext" / "ops.so")
            search = (dynamic["runpath"] or dynamic["rpath"]).split(":")
            for wanted in ("$ORIGIN/../torchext.libs", "$ORIGIN/../torch/lib", "$ORIGIN/../nvidia/cu13/lib"):
                self.assertIn(wanted, search)
            self.assertIn("libcudart.so.13", dynamic["needed"])
            self.assertIn("libtorch_cpu.so", dynamic["needed"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
