"""Wheel variants (PEP 825) end to end on the sample sgl_kernel wheel (cubins sm_90a in
sm90/, sm_100a and sm_120a and PTX compute_120 in sm100/, NEEDED libcudart.so.13):

- `wheelfix variant` labels it both ways (auto and a given label) in both schema
  versions; each variant.json validates against the schema files copied into
  tests/data/variant-schema (python's jsonschema, installed from the package index into
  a venv under ~/.cache, else the system's), RECORD holds (`python -m wheel unpack`,
  `wheelfix verify`), every other member is the input's, stored bytes and all;
- the properties equal what this test derives on its own: the fatbin entries from
  NVIDIA's cuobjdump (CUOBJDUMP, /usr/local/cuda/bin/cuobjdump or PATH) or, without it,
  from the .nv_fatbin headers read here at the offsets readelf gives; the CUDA runtime
  from readelf's NEEDED; the module rule (alternative builds united, modules
  intersected) and the CUDA floor computed here; the torch minors from `check
  --torch-release all`;
- `repair --target cuda13-blackwell --variant auto` writes one labelled wheel whose
  variant.json validates and whose torch minor is the pin repair writes;
- a label over 16 characters, or outside ^[0-9a-z_.]+$, is refused (exit 2, nothing written);
- `variant merge` writes the -variants.json of two labels and refuses a label that
  names different properties in two wheels;
- inspect and verify flag a hand-made variant.json that lies (an SM no module runs, a
  CUDA floor below the cudart's, a label other than the file name's);
- pip, which does not know variants, installing from a directory holding the variant
  wheel and the plain one picks the plain one and does not crash;
- relink and retag keep the label on what they write;
- retag and shim of a variant wheel for another torch derive its variant again:
  abi_dependency :: torch follows the pin they write, the other properties equal the
  independent derivation, an auto-made label is made again and a hand-given one kept,
  RECORD and verify hold;
- inspect and verify judge an abi_dependency :: torch claim: a minor the wheel's own
  Requires-Dist or the torch verdict's pin (`check --torch-release all`) does not
  admit, or a value that is no minor, is a finding."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import unittest
import urllib.parse
import zipfile
from pathlib import Path

import wfx

SCHEMAS = wfx.TEST_DATA / "variant-schema"
TORCH_29 = wfx.SAMPLES / "torch-2.9.0" / "torch"
LABEL_RE = re.compile(r"^[0-9a-z_.]{1,16}$")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "wheelfix-variants"

# The oracle's own tables (NVIDIA's PTX ISA release notes; the toolkit that first targets an SM).
PTX_ISA_CUDA = {(9, 0): (13, 0), (8, 8): (12, 9), (8, 7): (12, 8), (8, 6): (12, 7), (8, 5): (12, 5), (8, 0): (12, 0)}
SM_CUDA = {90: (11, 8), 100: (12, 8), 101: (12, 8), 103: (12, 9), 110: (13, 0), 120: (12, 8), 121: (12, 9)}


def test_venv():
    """A venv with current pip and jsonschema from the package index (once, under ~/.cache);
    None when the index cannot be reached."""
    venv = CACHE / "venv"
    python = venv / "bin" / "python"
    ready = venv / ".ready"
    if ready.exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--upgrade",
                           "pip", "jsonschema", "wheel"], capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    ready.write_text("pip jsonschema wheel\n")
    return python


def validator_python():
    venv = test_venv()
    if venv:
        return venv
    if subprocess.run([sys.executable, "-c", "import jsonschema"], capture_output=True).returncode == 0:
        return Path(sys.executable)
    raise unittest.SkipTest("no jsonschema: neither from the package index nor installed (python3-jsonschema)")


VALIDATE = r"""
import json, sys, jsonschema
schema, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
errors = [f"{e.json_path}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
print("\n".join(errors))
sys.exit(1 if errors else 0)
"""


def schema_errors(python, schema_file, document, tmp):
    doc = Path(tmp) / "doc.json"
    doc.write_text(json.dumps(document))
    proc = subprocess.run([str(python), "-c", VALIDATE, str(schema_file), str(doc)], capture_output=True, text=True)
    return proc.stdout.strip() + proc.stderr.strip()


def variant_json(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.endswith(".dist-info/variant.json")]
        assert len(names) == 1, names
        return json.loads(zf.read(names[0]))


def labelled(directory):
    wheels = sorted(Path(directory).glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


# --- the independent oracle -------------------------------------------------------------

def find_cuobjdump():
    for candidate in (os.environ.get("CUOBJDUMP"), "/usr/local/cuda/bin/cuobjdump", shutil.which("cuobjdump")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def fatbin_entries(path):
    """[(kind, sm, arch suffix, (isa major, minor))] of one ELF: cuobjdump's list when it
    is there, else the .nv_fatbin headers read here (kind 'cubin'/'ptx')."""
    cuobjdump = find_cuobjdump()
    headers = fatbin_headers(path)
    if cuobjdump:
        out = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", str(path)], capture_output=True, text=True).stdout
        listed = []
        for line in out.splitlines():
            m = re.search(r"(ELF|PTX) file\s+\d+: .*\.(sm|compute)_(\d+)([af]?)\.(cubin|ptx)", line)
            if m:
                listed.append(("cubin" if m.group(1) == "ELF" else "ptx", int(m.group(3)), m.group(4)))
        assert sorted(listed) == sorted((k, sm, s) for k, sm, s, _ in headers), (listed, headers)
    return headers


def fatbin_headers(path):
    out = subprocess.run(["readelf", "-SW", str(path)], capture_output=True, text=True, check=True).stdout
    data = Path(path).read_bytes()
    entries = []
    for line in out.splitlines():
        if ".nv_fatbin" not in line:
            continue
        fields = line.split("]", 1)[1].split()
        offset, size = int(fields[3], 16), int(fields[4], 16)
        section = data[offset:offset + size]
        at = 0
        while at + 16 <= len(section):
            magic, _, header_size, payload_size = struct.unpack_from("<IHHQ", section, at)
            if magic != 0xBA55ED50:
                at += 8
                continue
            entry, end = at + header_size, at + header_size + payload_size
            while entry + 64 <= end:
                kind, _, entry_header, entry_payload = struct.unpack_from("<HHIQ", section, entry)
                if kind == 0:
                    break
                minor, major, sm = struct.unpack_from("<HHI", section, entry + 24)
                flags, = struct.unpack_from("<Q", section, entry + 40)
                suffix = "a" if flags & 0x100000 else "f" if flags & 0x200000 else ""
                if kind in (1, 2):
                    entries.append(("ptx" if kind == 1 else "cubin", sm, suffix, (major, minor)))
                entry += entry_header + entry_payload
            at = end
    return entries


def runs(entry, sm):
    kind, entry_sm, suffix, _ = entry
    if kind == "ptx":
        return sm >= entry_sm if not suffix else sm == entry_sm if suffix == "a" else (sm // 10 == entry_sm // 10 and sm >= entry_sm)
    if suffix == "a":
        return sm == entry_sm
    return sm // 10 == entry_sm // 10 and sm >= entry_sm


def oracle_properties(wheel, tmp):
    """nvidia :: sm_arch and cuda_version_lower_bound derived here, from the ELF members."""
    modules = {}  # key -> [entries of every alternative build]
    cuda_floor = (0, 0)
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            data = zf.read(name)
            if not wfx.is_elf(data):
                continue
            path = Path(tmp) / "elves" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            for needed in wfx.readelf_dynamic(path)["needed"]:
                m = re.fullmatch(r"libcudart\.so\.(\d+)", needed)
                if m:
                    cuda_floor = max(cuda_floor, (int(m.group(1)), 0))
            entries = fatbin_entries(path)
            if not entries:
                continue
            parts = name.split("/")
            key = "/".join(parts[:-2]) + "/*/" + parts[-1] if len(parts) >= 3 else name
            modules.setdefault(key, []).extend(entries)
            for kind, sm, _, isa in entries:
                cuda_floor = max(cuda_floor, PTX_ISA_CUDA[isa] if kind == "ptx" else SM_CUDA[sm])
    candidates = {(sm, kind == "cubin") for entries in modules.values() for kind, sm, _, _ in entries}

    def selected(sm):  # the GPUs NVIDIA's provider accepts X_real / X_virtual on: X's major, minor >= X's
        return [sm] + [other for other in SM_CUDA if other // 10 == sm // 10 and other > sm]

    kept = sorted((sm, not real) for sm, real in candidates
                  if all(any(runs(e, gpu) for e in entries) for entries in modules.values() for gpu in selected(sm)))
    sm_arch = [f"{sm}_{'virtual' if virtual else 'real'}" for sm, virtual in kept]
    return sm_arch, f"{cuda_floor[0]}.{cuda_floor[1]}"


def proven_torch_minors(wheel):
    """The minors all of whose releases `check --torch-release all` says load."""
    doc = wfx.run_json("check", wheel, "--torch-release", "all", check_status=None)
    verdicts = {}
    for release in doc["matrix"]["releases"]:
        minor = ".".join(release["torch_version"].split("+")[0].split(".")[:2])
        verdicts[minor] = verdicts.get(minor, True) and release["verdict"] == "ok"
    return sorted((m for m, ok in verdicts.items() if ok), key=lambda m: tuple(map(int, m.split("."))))


def forge_variant(src, dst, edit):
    """A copy of variant wheel `src` whose variant.json is edit(json) (RECORD kept true)."""
    new_bytes = {}

    def edit_member(name, data):
        if name.endswith(".dist-info/variant.json"):
            data = (json.dumps(edit(json.loads(data)), indent=2) + "\n").encode()
            new_bytes[name] = data
        return data

    def record_edit(text):
        lines = []
        for line in text.splitlines():
            name = line.split(",")[0]
            if name in new_bytes:
                line = f"{name},{wfx.record_hash(new_bytes[name])},{len(new_bytes[name])}"
            lines.append(line)
        return "\n".join(lines) + "\n"

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        infos = zin.infolist()
        for info in infos:  # RECORD is last: the edits before it are known
            data = edit_member(info.filename, zin.read(info.filename))
            if info.filename.endswith(".dist-info/RECORD"):
                data = record_edit(data.decode()).encode()
            zout.writestr(info, data)
    return dst


class Variants(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.python = validator_python()

    def assert_valid(self, document, schema_name, tmp):
        self.assertEqual(schema_errors(self.python, SCHEMAS / schema_name, document, tmp), "", schema_name)

    def assert_copied_as_stored(self, source, output):
        with zipfile.ZipFile(source) as zin, zipfile.ZipFile(output) as zout:
            out = {i.filename: i for i in zout.infolist()}
            for info in zin.infolist():
                if info.filename.endswith("/RECORD"):
                    continue
                self.assertIn(info.filename, out)
                self.assertEqual(wfx.raw_member(source, info), wfx.raw_member(output, out[info.filename]), info.filename)
                self.assertEqual(info.CRC, out[info.filename].CRC)

    def assert_record_holds(self, wheel, tmp):
        wfx.run("verify", wheel, check_status=0)
        python = test_venv() or Path(sys.executable)
        proc = subprocess.run([str(python), "-m", "wheel", "unpack", "-d", str(Path(tmp) / "unpacked"), str(wheel)],
                              capture_output=True, text=True)
        if "No module named wheel" not in proc.stderr:
            self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_sample_labelled_both_ways_in_both_schemas(self):
        with wfx.TempDir() as tmp:
            for label_args, schema, schema_file in (([], [], "variant-schema-0.0.3.json"),
                                                    ([], ["--schema", "0.1.1"], "variant-schema-0.1.1.json"),
                                                    (["--label", "blackwell"], ["--schema", "0.0.3"], "variant-schema-0.0.3.json"),
                                                    (["--label", "blackwell"], ["--schema", "0.1.1"], "variant-schema-0.1.1.json")):
                with self.subTest(label=label_args, schema=schema):
                    out = tmp / f"out-{len(list(tmp.iterdir()))}"
                    wfx.run("variant", wfx.SGL_WHEEL, "-w", out, *label_args, *schema, check_status=0)
                    wheel = labelled(out)
                    label = wheel.stem.split("-")[-1]
                    self.assertRegex(label, LABEL_RE)
                    self.assertEqual(label, label_args[1] if label_args else "cu13sm90.120")
                    self.assertEqual(wheel.name, wfx.SGL_WHEEL.stem + "-" + label + ".whl")
                    doc = variant_json(wheel)
                    self.assert_valid(doc, schema_file, tmp)
                    self.assertEqual(list(doc["variants"]), [label])
                    if schema_file.endswith("0.1.1.json"):
                        # No real torch release loads the sample (CUDA 13 runtime, symbols of a made-up torch):
                        # the torch verdict pins none, so no abi_dependency is claimed.
                        self.assertEqual(doc["default-priorities"]["namespace"], ["nvidia"])
                    else:
                        self.assertEqual(doc["default-priorities"]["namespace"], sorted(doc["providers"]))
                    self.assert_copied_as_stored(wfx.SGL_WHEEL, wheel)
                    self.assert_record_holds(wheel, tmp)
                    inspected = wfx.run_json("inspect", wheel)["inputs"][0]["variant"]
                    self.assertEqual(inspected["label"], label)
                    self.assertEqual(inspected["findings"], [])
                    self.assertEqual(inspected["properties"], doc["variants"][label])

    def test_properties_equal_an_independent_derivation(self):
        with wfx.TempDir() as tmp:
            wfx.run("variant", wfx.SGL_WHEEL, "-w", tmp / "out", check_status=0)
            properties = variant_json(labelled(tmp / "out"))["variants"]["cu13sm90.120"]
            sm_arch, floor = oracle_properties(wfx.SGL_WHEEL, tmp)
            # The build's gencodes: sm_90a, sm_100a, sm_120a, compute_120. sm_100a runs on sm_100 only, and
            # the provider would take 100_real on sm_103 too: no 100_real.
            self.assertEqual(sm_arch, ["90_real", "120_real", "120_virtual"])
            self.assertEqual(properties["nvidia"]["sm_arch"], sm_arch)
            self.assertEqual(properties["nvidia"]["cuda_version_lower_bound"], [floor])
            minors = proven_torch_minors(wfx.SGL_WHEEL)
            if minors:
                self.assertEqual(properties["abi_dependency"]["torch"], minors)
            else:
                self.assertNotIn("abi_dependency", properties)

    def test_repair_labels_in_the_same_pass(self):
        with wfx.TempDir() as tmp:
            for schema, schema_file in (("0.0.3", "variant-schema-0.0.3.json"), ("0.1.1", "variant-schema-0.1.1.json")):
                with self.subTest(schema=schema):
                    out = tmp / schema
                    requires = ["--variant-requires"] if schema == "0.1.1" else []
                    doc = wfx.run_json("repair", wfx.SGL_WHEEL, "--torch", TORCH_29, "--target", "cuda13-blackwell",
                                       "--variant", "auto", "--variant-schema", schema, *requires, "-w", out,
                                       check_status=None)
                    wheel = labelled(out)
                    self.assertTrue(wheel.name.endswith("-cu13sm90.120.whl"), wheel.name)
                    self.assertEqual(doc["wheels"][0]["done"]["variant"]["label"], "cu13sm90.120")
                    written = variant_json(wheel)
                    self.assert_valid(written, schema_file, tmp)
                    properties = written["variants"]["cu13sm90.120"]
                    sm_arch, floor = oracle_properties(wheel, tmp)
                    self.assertEqual(properties["nvidia"]["sm_arch"], sm_arch)
                    self.assertEqual(properties["nvidia"]["cuda_version_lower_bound"], [floor])
                    # repair proved the load on the 2.9 stand-in and pins torch to 2.9.*
                    self.assertEqual(properties["abi_dependency"]["torch"], ["2.9"])
                    self.assert_record_holds(wheel, tmp / schema)
                    self.assertEqual(wfx.run_json("inspect", wheel)["inputs"][0]["variant"]["findings"], [])
                    with zipfile.ZipFile(wheel) as zf:
                        metadata = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
                    runtime = "Requires-Dist: nvidia-cuda-runtime>=13,<14 ; 'nvidia' in variant_namespaces\n"
                    if requires:
                        self.assertIn(runtime, metadata)
                    else:
                        self.assertNotIn("nvidia-cuda-runtime", metadata)

    def test_labels_that_break_the_pattern_are_refused(self):
        with wfx.TempDir() as tmp:
            for bad in ("cu13sm90.100.120x", "Cu13", "cu-13", ""):
                with self.subTest(label=bad):
                    proc = wfx.run("variant", wfx.SGL_WHEEL, "-w", tmp / "out", "--label", bad, check_status=2)
                    self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
                    self.assertIn("--variant", proc.stderr)
                    self.assertFalse((tmp / "out").exists() and any((tmp / "out").iterdir()))
            proc = wfx.run("repair", wfx.SGL_WHEEL, "--torch", TORCH_29, "--variant", "a" * 17, "-w", tmp / "r",
                           check_status=2)
            self.assertIn("^[0-9a-z_.]{1,16}$", proc.stderr)
            self.assertFalse(any((tmp / "r").glob("*.whl")) if (tmp / "r").exists() else False)

    def test_merge_two_labels_and_refuse_a_disagreement(self):
        with wfx.TempDir() as tmp:
            index = tmp / "index"
            wfx.run("variant", wfx.SGL_WHEEL, "-w", index, check_status=0)
            wfx.run("variant", wfx.SGL_WHEEL, "-w", index, "--label", "other", check_status=0)
            shutil.copy(wfx.SGL_WHEEL, index)  # the plain wheel beside them is not a variant: left out
            doc = wfx.run_json("variant", "merge", index)
            merged_path = index / "sgl_kernel-0.3.21+cu130-variants.json"
            self.assertEqual([Path(i["path"]) for i in doc["indexes"]], [merged_path])
            merged = json.loads(merged_path.read_text())
            self.assertEqual(sorted(merged["variants"]), ["cu13sm90.120", "other"])
            self.assertEqual(merged["variants"]["other"], merged["variants"]["cu13sm90.120"])
            self.assert_valid(merged, "variant-schema-0.0.3.json", tmp)
            # The same label naming other properties in a third wheel: refused, nothing rewritten.
            before = merged_path.read_bytes()
            liar_dir = tmp / "liar"
            liar_dir.mkdir()
            liar = forge_variant(index / (wfx.SGL_WHEEL.stem + "-other.whl"), liar_dir / (wfx.SGL_WHEEL.stem + "-other.whl"),
                                 lambda d: {**d, "variants": {"other": {"nvidia": {"sm_arch": ["90_real"]}}}})
            build_tagged = index / (wfx.SGL_WHEEL.stem.replace("+cu130-", "+cu130-1-") + "-other.whl")
            shutil.copy(liar, build_tagged)  # a build tag: the same name and version, another file
            proc = wfx.run("variant", "merge", index, "--overwrite", check_status=2)
            self.assertIn("'other' names different properties", proc.stderr)
            self.assertEqual(merged_path.read_bytes(), before)

    def test_inspect_and_verify_catch_a_lying_variant(self):
        with wfx.TempDir() as tmp:
            wfx.run("variant", wfx.SGL_WHEEL, "-w", tmp / "out", check_status=0)
            honest = labelled(tmp / "out")
            label = "cu13sm90.120"

            def lie(d):
                props = d["variants"][label]
                props["nvidia"]["sm_arch"] = props["nvidia"]["sm_arch"] + ["103_real"]  # no module runs sm_103
                props["nvidia"]["cuda_version_lower_bound"] = ["12.8"]                   # libcudart.so.13 needs 13.0
                return d

            lying_dir = tmp / "lying"
            lying_dir.mkdir()
            lying = forge_variant(honest, lying_dir / honest.name, lie)
            proc = wfx.run("inspect", lying, check_status=1)
            self.assertIn("LIES", proc.stdout)
            self.assertIn("103_real claimed, but sgl_kernel/{sm100,sm90}/common_ops.abi3.so cannot run SM 103", proc.stdout)
            self.assertIn("cuda_version_lower_bound :: 12.8 claimed, but the binaries need CUDA 13.0", proc.stdout)
            findings = wfx.run_json("inspect", lying, check_status=1)["inputs"][0]["variant"]["findings"]
            self.assertEqual(len(findings), 2, findings)
            verify = wfx.run("verify", lying, check_status=1)
            self.assertIn("103_real", verify.stdout)
            wfx.run("inspect", honest, check_status=0)
            wfx.run("verify", honest, check_status=0)
            # A variant.json naming another label than the file name.
            renamed_dir = tmp / "renamed"
            renamed_dir.mkdir()
            renamed = forge_variant(honest, renamed_dir / honest.name,
                                    lambda d: {**d, "variants": {"cu12": d["variants"][label]}})
            self.assertIn("names variant 'cu12' but the file name's label is", wfx.run("inspect", renamed, check_status=1).stdout)

    def test_pip_that_knows_no_variants_picks_the_plain_wheel(self):
        python = test_venv()
        if python is None:
            self.skipTest("could not install current pip from the package index")
        with wfx.TempDir() as tmp:
            links = tmp / "links"
            wfx.run("variant", wfx.SGL_WHEEL, "-w", links, check_status=0)
            shutil.copy(wfx.SGL_WHEEL, links)
            report = tmp / "report.json"
            proc = subprocess.run([str(python), "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-index",
                                   "--no-deps", "--disable-pip-version-check", "--find-links", str(links),
                                   "--report", str(report), "sgl-kernel"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            chosen = json.loads(report.read_text())["install"]
            self.assertEqual([urllib.parse.unquote(Path(i["download_info"]["url"]).name) for i in chosen],
                             [wfx.SGL_WHEEL.name])
            target = tmp / "site"
            proc = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--no-deps", "--quiet",
                                   "--disable-pip-version-check", "--find-links", str(links), "--target", str(target),
                                   "sgl-kernel"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertFalse(list(target.glob("*.dist-info/variant.json")))
            self.assertTrue((target / "sgl_kernel" / "sm100" / "common_ops.abi3.so").exists())

    def test_relink_and_retag_keep_the_label(self):
        with wfx.TempDir() as tmp:
            wfx.run("variant", wfx.SGL_WHEEL, "-w", tmp / "v", "--label", "bw", check_status=0)
            variant = labelled(tmp / "v")
            wfx.run("relink", variant, "-o", tmp / "relinked", "--set-rpath", "{root}/torch/lib", check_status=0)
            relinked = labelled(tmp / "relinked")
            self.assertEqual(relinked.name, variant.name)
            wfx.run("retag", relinked, "--torch", "2.9", "-o", tmp / "retagged", check_status=0)
            retagged = labelled(tmp / "retagged")
            self.assertTrue(retagged.name.endswith("-bw.whl"), retagged.name)
            self.assertEqual(wfx.run_json("inspect", retagged)["inputs"][0]["variant"]["findings"], [])
            wfx.run("verify", retagged, check_status=0)
            wfx.run("check", retagged, "--torch", TORCH_29, check_status=0)

    def test_variant_requires_adds_the_cuda_runtime(self):
        with wfx.TempDir() as tmp:
            doc = wfx.run_json("variant", wfx.SGL_WHEEL, "-w", tmp, "--variant-requires")
            self.assertEqual(doc["wheels"][0]["requires_dist"],
                             ["nvidia-cuda-runtime>=13,<14 ; 'nvidia' in variant_namespaces"])
            with zipfile.ZipFile(labelled(tmp)) as zf:
                metadata = zf.read("sgl_kernel-0.3.21+cu130.dist-info/METADATA").decode()
            self.assertIn("Requires-Dist: nvidia-cuda-runtime>=13,<14 ; 'nvidia' in variant_namespaces\n", metadata)
            self.assert_record_holds(labelled(tmp), tmp)

    def test_variant_requires_is_not_written_twice_in_another_spelling(self):
        """A METADATA that holds the runtime requirement spelled otherwise (name case and
        separators, spaces, parentheses, quotes) holds it: --variant-requires adds nothing."""
        dist_info = "sgl_kernel-0.3.21+cu130.dist-info"
        held = "NVIDIA_CUDA.Runtime (>= 13, < 14) ; \"nvidia\" in  variant_namespaces"
        edited = {}

        def hold(name, data):
            if name == f"{dist_info}/METADATA":
                data = data.replace(b"Requires-Dist: torch\n", f"Requires-Dist: torch\nRequires-Dist: {held}\n".encode())
                edited[name] = data
            return data

        def record(text):
            return "".join(f"{name},{wfx.record_hash(edited[name])},{len(edited[name])}\n"
                           if (name := line.split(",")[0]) in edited else line + "\n" for line in text.splitlines())

        with wfx.TempDir() as tmp:
            source = wfx.rewrite_wheel(wfx.SGL_WHEEL, tmp / wfx.SGL_WHEEL.name, edit_member=hold, record_edit=record)
            wfx.run("verify", source, check_status=0)
            wfx.run_json("variant", source, "-w", tmp / "out", "--variant-requires")
            with zipfile.ZipFile(labelled(tmp / "out")) as zf:
                metadata = zf.read(f"{dist_info}/METADATA").decode()
            requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
            self.assertEqual(requires, ["Requires-Dist: torch", f"Requires-Dist: {held}"])
            self.assert_record_holds(labelled(tmp / "out"), tmp / "out")

    def repaired_for_29(self, tmp):
        """The sample repaired against the torch 2.9 stand-in with --variant auto: claims torch 2.9."""
        wfx.run_json("repair", wfx.SGL_WHEEL, "--torch", TORCH_29, "--target", "cuda13-blackwell", "--variant", "auto",
                     "-w", tmp / "repaired", check_status=None)
        wheel = labelled(tmp / "repaired")
        self.assertEqual(variant_json(wheel)["variants"]["cu13sm90.120"]["abi_dependency"]["torch"], ["2.9"])
        return wheel

    def assert_derived_again(self, wheel, label, torch_minor, tmp):
        """variant.json names `label`, claims `torch_minor`, its other properties equal the oracle's; METADATA
        pins that minor; the schema, RECORD, verify and inspect hold."""
        doc = variant_json(wheel)
        self.assertEqual(list(doc["variants"]), [label])
        properties = doc["variants"][label]
        self.assertEqual(properties["abi_dependency"]["torch"], [torch_minor])
        sm_arch, floor = oracle_properties(wheel, tmp)
        self.assertEqual(properties["nvidia"], {"cuda_version_lower_bound": [floor], "sm_arch": sm_arch})
        self.assert_valid(doc, "variant-schema-0.0.3.json", tmp)
        with zipfile.ZipFile(wheel) as zf:
            metadata = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        major, minor = map(int, torch_minor.split("."))
        self.assertIn(f"Requires-Dist: torch>={major}.{minor},<{major}.{minor + 1}\n", metadata)
        self.assert_record_holds(wheel, tmp)
        self.assertEqual(wfx.run_json("inspect", wheel)["inputs"][0]["variant"]["findings"], [])
        return properties

    def test_retag_and_shim_derive_the_variant_again(self):
        with wfx.TempDir() as tmp:
            repaired = self.repaired_for_29(tmp)
            # retag for 2.10: the pin it writes is the claim; the auto-made label is made again (the same one).
            doc = wfx.run_json("retag", repaired, "--torch", "2.10", "-o", tmp / "retagged")
            retagged = labelled(tmp / "retagged")
            self.assertTrue(retagged.name.endswith("-cu13sm90.120.whl"), retagged.name)
            properties = self.assert_derived_again(retagged, "cu13sm90.120", "2.10", tmp / "retagged")
            self.assertEqual(doc["variant"]["properties"], properties)
            self.assertEqual(Path(doc["output"]), retagged)
            # shim for the 2.10 stand-in: the pin of the torch shimmed for is the claim.
            doc = wfx.run_json("shim", repaired, "--torch", wfx.SAMPLES / "torch-2.10.0" / "torch", "-o", tmp / "shimmed")
            shimmed = labelled(tmp / "shimmed")
            self.assertIsNotNone(doc["shim"])
            self.assertEqual(shimmed.name, repaired.name)
            properties = self.assert_derived_again(shimmed, "cu13sm90.120", "2.10", tmp / "shimmed")
            self.assertEqual(doc["variant"]["properties"], properties)
            # A hand-given label is kept, its properties derived again.
            wfx.run("variant", repaired, "-w", tmp / "bw", "--label", "bw", check_status=0)
            handmade = labelled(tmp / "bw")
            wfx.run("retag", handmade, "--torch", "2.10", "-o", tmp / "bw-retagged", check_status=0)
            self.assert_derived_again(labelled(tmp / "bw-retagged"), "bw", "2.10", tmp / "bw-retagged")
            # An auto-made label whose claims were stale is made again from the binaries: a variant.json
            # naming cu13sm90 for sm_arch 90_real alone (what auto makes of that) comes out cu13sm90.120.
            stale_dir = tmp / "stale"
            stale_dir.mkdir()
            stale = forge_variant(repaired, stale_dir / repaired.name.replace("-cu13sm90.120.whl", "-cu13sm90.whl"),
                                  lambda d: {**d, "variants": {"cu13sm90": {
                                      **d["variants"]["cu13sm90.120"],
                                      "nvidia": {**d["variants"]["cu13sm90.120"]["nvidia"], "sm_arch": ["90_real"]}}}})
            wfx.run("retag", stale, "--torch", "2.10", "-o", tmp / "remade", check_status=0)
            remade = labelled(tmp / "remade")
            self.assertTrue(remade.name.endswith("-cu13sm90.120.whl"), remade.name)
            self.assert_derived_again(remade, "cu13sm90.120", "2.10", tmp / "remade")
            # --dry-run names the labelled output and writes nothing.
            doc = wfx.run_json("retag", stale, "--torch", "2.10", "-o", tmp / "dry", "--dry-run")
            self.assertEqual(Path(doc["output"]).name, remade.name)
            self.assertFalse((tmp / "dry").exists() and any((tmp / "dry").iterdir()))

    def test_inspect_and_verify_judge_the_torch_claim(self):
        with wfx.TempDir() as tmp:
            repaired = self.repaired_for_29(tmp)  # Requires-Dist: torch>=2.9,<2.10; claims 2.9
            label = "cu13sm90.120"

            def claiming(name, minors, source=repaired):
                directory = tmp / name
                directory.mkdir()

                def edit(d):
                    d["variants"][label].setdefault("abi_dependency", {})["torch"] = minors
                    return d
                return forge_variant(source, directory / source.name, edit)

            wider = claiming("wider", ["2.9", "2.10"])
            proc = wfx.run("inspect", wider, check_status=1)
            self.assertIn("LIES", proc.stdout)
            self.assertIn("abi_dependency :: torch :: 2.10 claimed, but the wheel's Requires-Dist (torch >=2.9,<2.10)",
                          proc.stdout)
            findings = wfx.run_json("inspect", wider, check_status=1)["inputs"][0]["variant"]["findings"]
            self.assertEqual(len(findings), 1, findings)
            self.assertIn("abi_dependency :: torch :: 2.10", wfx.run("verify", wider, check_status=1).stdout)
            # repair's own output with an SM claim no module runs: caught beside the torch claim.
            both_dir = tmp / "both"
            both_dir.mkdir()

            def both(d):
                d["variants"][label]["abi_dependency"]["torch"] = ["2.10"]
                d["variants"][label]["nvidia"]["sm_arch"] = ["100_real"] + d["variants"][label]["nvidia"]["sm_arch"]
                return d
            two_lies = forge_variant(repaired, both_dir / repaired.name, both)
            findings = wfx.run_json("inspect", two_lies, check_status=1)["inputs"][0]["variant"]["findings"]
            self.assertEqual(len(findings), 2, findings)
            self.assertIn("100_real claimed, but sgl_kernel/{sm100,sm90}/common_ops.abi3.so cannot run SM 10", findings[0])
            self.assertIn("abi_dependency :: torch :: 2.10 claimed", findings[1])
            not_minor = claiming("not-minor", ["2.9.1"])
            self.assertIn("abi_dependency :: torch :: 2.9.1 is not a torch minor",
                          wfx.run("verify", not_minor, check_status=1).stdout)
            # The torch verdict's pin: with the CUDA 13 runtime declared (--variant-requires), the releases
            # whose symbols resolve load, and the verdict pins the C++ extension to one minor.
            wfx.run("variant", wfx.SGL_WHEEL, "-w", tmp / "runtime", "--variant-requires", check_status=0)
            declared = labelled(tmp / "runtime")
            requirement = wfx.run_json("check", declared, "--torch-release", "all", check_status=None)["requirement"]
            if not requirement.get("any"):
                self.skipTest("the bundled atlas pins no release for the sample: " + requirement.get("finding", ""))
            pinned = ".".join(requirement["lowest"].split(".")[:2])
            honest = claiming("verdict-honest", [pinned], declared)
            self.assertEqual(wfx.run_json("inspect", honest)["inputs"][0]["variant"]["findings"], [])
            wfx.run("verify", honest, check_status=0)
            beyond = claiming("verdict-beyond", [pinned, "2.10"], declared)
            proc = wfx.run("verify", beyond, check_status=1)
            self.assertIn(f"abi_dependency :: torch :: 2.10 claimed, but the torch verdict pins {requirement['specifier']}",
                          proc.stdout)
            self.assertNotIn(f"torch :: {pinned} claimed", proc.stdout)


if __name__ == "__main__":
    unittest.main()
