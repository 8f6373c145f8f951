"""The SBOM repair writes when it grafts, as scanners read it (issue 34): the graft
fixture of test_graft.py (a gcc-built extension linking the private libfoo.so.1, which
links libbar.so.2) also links Debian's libffi and libbz2, so one wheel grafts files no
package owns and files Debian's dpkg owns. Judged by:
- CycloneDX's own validator (cyclonedx-python-lib from the package index, in a venv
  outside the repository): the SBOM is valid CycloneDX 1.6, unknown fields refused;
- the peer: `auditwheel repair` of the same wheel writes its own SBOM, and every purl
  it gives a Debian-owned library is ours (auditwheel writes no arch qualifier; ours
  adds the one dpkg-query names, as the purl spec's deb type has it). auditwheel names
  libffi but not libbz2: it asks dpkg for the resolved path only
  (/usr/lib/x86_64-linux-gnu/libbz2.so.1.0.4), which Debian 12's dpkg lists under
  /lib; wheelfix asks for the path as found as well;
- dpkg-query and sha256 of the files as found: each component's purl, version and
  hash;
- the NEEDED graph readelf shows: the wheel depends on libfoo, libffi and libbz2 (its
  extension NEEDs them), libfoo on libbar, the others on nothing grafted."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import peers  # noqa: E402
import wfx  # noqa: E402
from test_graft import build_libraries, graft_wheel  # noqa: E402

SYSTEM_LIB = Path("/usr/lib/x86_64-linux-gnu")


def dpkg_purl(path):
    owner = subprocess.run(["dpkg-query", "-S", str(path)], capture_output=True, text=True)
    if owner.returncode != 0:
        owner = subprocess.run(["dpkg-query", "-S", str(Path(path).resolve())], capture_output=True, text=True, check=True)
    package = owner.stdout.split(": ")[0]
    name, version, arch = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version} ${Architecture}", package],
                                         capture_output=True, text=True, check=True).stdout.split()
    distro = re.search(r"^ID=(\S+)$", Path("/etc/os-release").read_text(), re.M).group(1).strip('"')
    return name, version, f"pkg:deb/{distro}/{name}@{version.replace('+', '%2B').replace(':', '%3A')}?arch={arch}"


def without_qualifiers(purl):
    return purl.split("?")[0].split("#")[0]


@unittest.skipUnless(shutil.which("dpkg-query") and (SYSTEM_LIB / "libbz2.so").exists() and
                     (SYSTEM_LIB / "libffi.so").exists(), "needs Debian's dpkg, libbz2-dev and libffi-dev")
class ScannerReadableSbom(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="wheelfix-sbom-"))
        cls.lib = build_libraries(cls.tmp / "prefix")
        ext = wfx.build_private_extension(cls.tmp / "ext.so", "_ext", "foo_value", cls.lib, "foo",
                                          "-Wl,--no-as-needed", f"-L{SYSTEM_LIB}", "-lffi", "-lbz2")
        cls.wheel = graft_wheel(cls.tmp, ext)
        cls.out = cls.tmp / "out"
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        cls.proc = subprocess.run([wfx.WHEELFIX, "repair", cls.wheel, "--ldpaths", cls.lib, "-w", cls.out, "--json"],
                                  capture_output=True, text=True, env=env)
        cls.written = sorted(cls.out.glob("*.whl"))
        if len(cls.written) == 1:
            with zipfile.ZipFile(cls.written[0]) as zf:
                cls.text = zf.read("graftpkg-1.0.dist-info/sboms/wheelfix.cdx.json").decode()
            cls.sbom = json.loads(cls.text)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        self.assertEqual(len(self.written), 1)

    def components(self):
        return {c["properties"][1]["value"]: c for c in self.sbom["components"]}  # by NEEDED name

    def test_cyclonedx_validator_accepts_it(self):
        self.assertEqual(self.sbom["specVersion"], "1.6")
        self.assertIsNone(peers.cyclonedx_validate(self.text))
        broken = dict(self.sbom, components=[dict(self.sbom["components"][0], purl=7)])
        self.assertIsNotNone(peers.cyclonedx_validate(json.dumps(broken)))  # the judge can fail

    def test_the_wheel_is_the_metadata_component(self):
        component = self.sbom["metadata"]["component"]
        self.assertEqual(component["purl"], "pkg:pypi/graftpkg@1.0")
        self.assertEqual((component["name"], component["version"]), ("graftpkg", "1.0"))

    def test_each_grafted_file_has_its_purl_version_and_hash(self):
        components = self.components()
        self.assertEqual(sorted(components), ["libbar.so.2", "libbz2.so.1.0", "libffi.so.8", "libfoo.so.1"])
        for needed in ("libfoo.so.1", "libbar.so.2"):  # built here: no package owns them
            digest = hashlib.sha256((self.lib / needed).read_bytes()).hexdigest()
            component = components[needed]
            self.assertEqual(component["purl"], f"pkg:generic/{needed}?checksum=sha256:{digest}")
            self.assertEqual(component["hashes"], [{"alg": "SHA-256", "content": digest}])
            self.assertNotIn("version", component)
        for needed in ("libffi.so.8", "libbz2.so.1.0"):  # Debian's
            component = components[needed]
            source = Path(next(p["value"] for p in component["properties"] if p["name"] == "wheelfix:source"))
            name, version, purl = dpkg_purl(source)
            self.assertEqual((component["name"], component["version"], component["purl"]), (name, version, purl))
            self.assertEqual(component["hashes"][0]["content"], hashlib.sha256(source.read_bytes()).hexdigest())
        with zipfile.ZipFile(self.written[0]) as zf:  # each bom-ref is the member it describes
            names = set(zf.namelist())
        self.assertTrue(all(c["bom-ref"] in names for c in components.values()), components)

    def test_dependencies_follow_the_needed_graph(self):
        by_ref = {d["ref"]: set(d["dependsOn"]) for d in self.sbom["dependencies"]}
        ref = {needed: c["bom-ref"] for needed, c in self.components().items()}
        self.assertEqual(by_ref["pkg:pypi/graftpkg@1.0"], {ref["libfoo.so.1"], ref["libffi.so.8"], ref["libbz2.so.1.0"]})
        self.assertEqual(by_ref[ref["libfoo.so.1"]], {ref["libbar.so.2"]})
        for leaf in ("libbar.so.2", "libffi.so.8", "libbz2.so.1.0"):
            self.assertEqual(by_ref[ref[leaf]], set(), leaf)
        # The same graph as readelf sees it in the written wheel.
        with zipfile.ZipFile(self.written[0]) as zf:
            zf.extractall(self.tmp / "unpacked")
        foo = wfx.readelf_dynamic(self.tmp / "unpacked" / ref["libfoo.so.1"])
        self.assertIn(Path(ref["libbar.so.2"]).name, foo["needed"])

    def test_auditwheel_gives_debian_owned_libraries_the_same_purl(self):
        bin_dir = peers.peer_venv()
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}", LD_LIBRARY_PATH=str(self.lib))
        out = self.tmp / "auditwheel"
        proc = subprocess.run([str(bin_dir / "auditwheel"), "repair", "-w", str(out), str(self.wheel)],
                              capture_output=True, text=True, env=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        [written] = out.glob("*.whl")
        with zipfile.ZipFile(written) as zf:
            peer = json.loads(zf.read(next(n for n in zf.namelist() if n.endswith("sboms/auditwheel.cdx.json"))))
        peer_debian = {without_qualifiers(c["purl"]) for c in peer["components"] if c["purl"].startswith("pkg:deb/")}
        ours = {c["properties"][1]["value"]: without_qualifiers(c["purl"]) for c in self.sbom["components"]}
        self.assertIn(ours["libffi.so.8"], peer_debian)  # the library both name: the same purl
        self.assertLessEqual(peer_debian, set(ours.values()))  # nothing auditwheel names is missing from ours
        self.assertEqual(without_qualifiers(peer["metadata"]["component"]["purl"]),
                         self.sbom["metadata"]["component"]["purl"])

    def test_repair_json_names_the_owner_by_purl(self):
        grafted = json.loads(self.proc.stdout)["wheels"][0]["done"]["grafted"]
        owners = {g["needed"]: g["owner"] for g in grafted}
        self.assertTrue(owners["libffi.so.8"].startswith("pkg:deb/"), owners)
        self.assertTrue(owners["libbz2.so.1.0"].startswith("pkg:deb/"), owners)
        self.assertEqual(owners["libfoo.so.1"], "")


if __name__ == "__main__":
    unittest.main()
