"""Every --json document validates against its JSON Schema in docs/schema/
(wheelfix.<command>-1.schema.json, draft 2020-12), on the real output of each command
over the sample wheels, the auditwheel test wheels and a bare ELF file.

Validated twice: as published (consumers must ignore keys they do not know, so the
files allow extra keys) and strictly (every object that lists its properties gets
additionalProperties: false), so a key added to the output but not to the schema
fails here. Needs python's jsonschema (Debian: python3-jsonschema); when the python
running the tests lacks it, Debian's /usr/bin/python3 validates."""
import copy
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402

SCHEMAS = wfx.SOURCE_DIR / "docs" / "schema"
TORCH = {v: wfx.SAMPLES / f"torch-{v}" / "torch" for v in ("2.9.0", "2.10.0", "2.11.0")}
ENV = {k: v for k, v in os.environ.items() if not k.startswith("WHEELFIX_") or k == "WHEELFIX"}
# Commands without --json output of their own.
NO_JSON = {"completion", "elf"}  # elf prints what patchelf prints (text)
# Commands whose schema is still to be written: remove the name when its schema file
# lands, and add its outputs to documents().
PENDING = set()

VALIDATOR = r"""
import json, sys
import jsonschema
schema, strict, docs = json.load(sys.stdin).values()
failures = []
for label, doc in docs:
    for name, s in (("published", schema), ("strict", strict)):
        jsonschema.Draft202012Validator.check_schema(s)
        for error in jsonschema.Draft202012Validator(s).iter_errors(doc):
            failures.append(f"{label} ({name} schema): {error.json_path}: {error.message}")
print(json.dumps(failures))
"""


def validator_python():
    for python in (sys.executable, "/usr/bin/python3"):
        if Path(python).exists() and subprocess.run([python, "-c", "import jsonschema"],
                                                    capture_output=True).returncode == 0:
            return python
    return None


def strict(schema):
    """The schema with additionalProperties: false wherever properties are listed."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(schema)
    return schema


def json_of(*args, status=(0,)):
    proc = subprocess.run([wfx.WHEELFIX, "--json", *map(str, args)], capture_output=True, text=True, env=ENV)
    if proc.returncode not in status:
        raise AssertionError(f"wheelfix --json {' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stderr}")
    return json.loads(proc.stdout)


def command_names():
    proc = subprocess.run([wfx.WHEELFIX, "--help"], capture_output=True, text=True, check=True)
    section = proc.stdout.split("Subcommands:\n", 1)[1]
    return {line.split()[0].rstrip(",") for line in section.splitlines() if line.startswith("  ") and line[2] != " "}


def documents(command, tmp):
    """(label, document) pairs: the command's real --json output over the test inputs."""
    sgl = wfx.SGL_WHEEL
    lib = TORCH["2.9.0"] / "lib" / "libc10_cuda.so"
    if command == "inspect":
        docs = [("samples", json_of("inspect", *wfx.all_wheels(), lib, status=(0, 1)))]
        docs.append(("target", json_of("inspect", "--target", "cuda13-blackwell", sgl, lib, status=(1,))))
        shimmed = tmp / "shimmed"
        json_of("shim", sgl, "--torch", TORCH["2.11.0"], "-o", shimmed)
        docs.append(("shim library", json_of("inspect", *shimmed.glob("*.whl"))))
        return docs
    if command == "verify":
        return [("wheels", json_of("verify", *wfx.all_wheels(), status=(0, 1)))]
    if command == "relink":
        return [("wheel", json_of("relink", sgl, "-o", tmp / "r", "--set-rpath", "{root}/torch/lib")),
                ("elf", json_of("relink", lib, "-o", tmp / "lib.so", "--add-needed", "libx.so"))]
    if command == "check":
        atlas = tmp / "atlas.gz"
        wfx.run("index", *TORCH.values(), "--atlas", atlas, check_status=0)
        return [("release matrix", json_of("check", sgl, "--torch", atlas, status=(1,))),
                ("three torches", json_of("check", sgl, *[a for t in TORCH.values() for a in ("--torch", t)],
                                          status=(1,))),
                ("elf", json_of("check", lib, "--torch", TORCH["2.9.0"]))]
    if command == "index":
        return [("torch dir", json_of("index", TORCH["2.10.0"], "-o", tmp / "i.gz"))]
    if command == "atlas":
        return [("new atlas", json_of("index", TORCH["2.9.0"], TORCH["2.10.0"], "--atlas", tmp / "a.gz")),
                ("added to it", json_of("index", TORCH["2.11.0"], "--atlas", tmp / "a.gz"))]
    if command == "shim":
        return [("forwarders", json_of("shim", sgl, "--torch", TORCH["2.11.0"], "-o", tmp / "s1")),
                ("nothing to shim", json_of("shim", sgl, "--torch", TORCH["2.9.0"], "-o", tmp / "s2"))]
    if command == "retag":
        auto = ["--torch", "auto", "--torch-from", TORCH["2.9.0"], TORCH["2.10.0"]]
        atlas = tmp / "atlas.gz"
        wfx.run("index", TORCH["2.9.0"], TORCH["2.10.0"], "--atlas", atlas, check_status=0)
        return [("auto, atlas", json_of("retag", sgl, "--torch", "auto", "--torch-from", atlas, "-o", tmp / "t4")),
                ("version", json_of("retag", sgl, "--torch", "2.10", "--platform", "manylinux_2_34_x86_64",
                                    "-o", tmp / "t1")),
                ("auto", json_of("retag", sgl, *auto, "-o", tmp / "t2")),
                ("auto, none loads", json_of("retag", sgl, "--torch", "auto", "--torch-from", TORCH["2.11.0"],
                                             "-o", tmp / "t3", status=(1,)))]
    if command == "repair":
        cu12 = tmp / "cu12"
        wfx.run("relink", sgl, "-o", cu12, "--replace-needed", "libcudart.so.13=libcudart.so.12", check_status=0)
        bad = tmp / "bad-1.0-py3-none-any.whl"
        bad.write_bytes(b"PK\x03\x04 not a zip")
        target = ["--target", "cuda13-blackwell"]
        atlas = tmp / "atlas.gz"
        wfx.run("index", TORCH["2.9.0"], TORCH["2.10.0"], "--atlas", atlas, check_status=0)
        late = tmp / "late.gz"
        wfx.run("index", TORCH["2.10.0"], "--atlas", late, check_status=0)
        return [("auto, atlas, installed torch", json_of("repair", sgl, "--torch", "auto", "--torch-from", atlas,
                                                          TORCH["2.9.0"], "-o", tmp / "p5")),
                ("auto, none loads", json_of("repair", sgl, "--torch", "auto", "--torch-from", late,
                                             "-o", tmp / "p6", status=(1,))),
                ("written, loads", json_of("repair", sgl, "--torch", TORCH["2.10.0"], *target, "-o", tmp / "p1")),
                ("findings left", json_of("repair", *cu12.glob("*.whl"), "--torch", TORCH["2.10.0"], *target,
                                          "-o", tmp / "p2", status=(1,))),
                ("dry run, no target, index", json_of("repair", sgl, "--torch", wfx.SOURCE_DIR / "data" / "torch-index" /
                                                      "torch-2.10.0+cu128.index.gz", "-o", tmp / "p3", "--dry-run",
                                                      status=(0, 1))),
                ("an error", json_of("repair", bad, sgl, "--torch", TORCH["2.10.0"], "-o", tmp / "p4", status=(2,)))]
    if command == "variant":
        return [("auto, 0.0.3", json_of("variant", sgl, "-w", tmp / "v1")),
                ("label, 0.1.1, requires", json_of("variant", sgl, "-w", tmp / "v2", "--label", "blackwell",
                                                   "--schema", "0.1.1", "--variant-requires")),
                ("dry run", json_of("variant", sgl, "-w", tmp / "v3", "--dry-run"))]
    if command == "variant-merge":
        json_of("variant", sgl, "-w", tmp / "m")
        json_of("variant", sgl, "-w", tmp / "m", "--label", "other")
        return [("two labels", json_of("variant", "merge", tmp / "m"))]
    return None


class JsonSchemas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.python = validator_python()
        if cls.python is None:
            raise unittest.SkipTest("python jsonschema is not installed (apt-get install python3-jsonschema)")

    def validate(self, schema, docs):
        payload = json.dumps({"schema": schema, "strict": strict(schema), "docs": docs})
        proc = subprocess.run([self.python, "-c", VALIDATOR], input=payload, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def test_every_command_output_validates(self):
        schema_files = sorted(SCHEMAS.glob("wheelfix.*-1.schema.json"))
        self.assertTrue(schema_files)
        with wfx.TempDir() as tmp:
            for path in schema_files:
                command = path.name.split(".")[1].removesuffix("-1")
                with self.subTest(command=command):
                    schema = json.loads(path.read_text())
                    self.assertEqual(schema["properties"]["schema"]["const"], f"wheelfix.{command}/1")
                    (tmp / command).mkdir()
                    docs = documents(command, tmp / command)
                    self.assertIsNotNone(docs, f"{path.name}: add {command}'s outputs to documents()")
                    for label, doc in docs:
                        self.assertEqual(doc["schema"], f"wheelfix.{command}/1", label)
                    self.assertEqual(self.validate(schema, docs), [])

    def test_every_command_has_a_schema(self):
        documented = {p.name.split(".")[1].removesuffix("-1") for p in SCHEMAS.glob("wheelfix.*-1.schema.json")}
        self.assertEqual(sorted(command_names() - NO_JSON - PENDING - documented), [],
                         "commands whose --json has no docs/schema/wheelfix.<command>-1.schema.json")
        self.assertEqual(sorted(PENDING & documented), [], "a PENDING command has its schema now: remove it from "
                                                           "PENDING and add its outputs to documents()")

    def test_check_of_several_inputs_validates_as_version_2(self):
        schema = json.loads((SCHEMAS / "wheelfix.check-2.schema.json").read_text())
        lib = TORCH["2.9.0"] / "lib" / "libc10_cuda.so"
        doc = json_of("check", wfx.SGL_WHEEL, lib, *[a for t in TORCH.values() for a in ("--torch", t)], status=(1,))
        self.assertEqual(doc["schema"], "wheelfix.check/2")
        self.assertEqual(len(doc["inputs"]), 2)
        self.assertEqual(self.validate(schema, [("two inputs, three torches", doc)]), [])
        # Several inputs against the atlas's releases: each input carries its matrix and requirement.
        doc = json_of("check", wfx.SGL_WHEEL, wfx.SGL_WHEEL, "--torch-release", "2.9.1,2.10.0", status=(1,))
        self.assertEqual([("matrix" in one, "requirement" in one) for one in doc["inputs"]], [(True, True)] * 2)
        self.assertEqual(self.validate(schema, [("two inputs, two releases", doc)]), [])

    def test_the_strict_check_can_fail(self):
        schema = json.loads((SCHEMAS / "wheelfix.verify-1.schema.json").read_text())
        doc = json_of("verify", wfx.SGL_WHEEL)
        doc["wheels"][0]["undocumented"] = 1
        failures = self.validate(schema, [("extra key", doc)])
        self.assertEqual(len(failures), 1)
        self.assertIn("strict", failures[0])
        del doc["wheels"][0]["ok"]
        self.assertEqual(len(self.validate(schema, [("missing key", doc)])), 3)


if __name__ == "__main__":
    unittest.main()
