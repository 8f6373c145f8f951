"""Shared helpers for the end-to-end tests: locate the binary and the data, run
wheelfix, build tampered wheels. Stdlib only; each test file is a unittest script."""
import base64
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

WHEELFIX = os.environ.get("WHEELFIX", "wheelfix")
SOURCE_DIR = Path(os.environ.get("WHEELFIX_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WHEELFIX_TEST_DATA", SOURCE_DIR / "tests" / "data"))
AUDITWHEEL = TEST_DATA / "auditwheel"
SAMPLES = SOURCE_DIR / "sample_wheels" / "dist"
SGL_WHEEL = SAMPLES / "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl"


def env_path(name):
    """A path ctest passes in the environment; exits with a clear message outside ctest."""
    value = os.environ.get(name)
    if not value:
        sys.exit(f"{Path(sys.argv[0]).name}: environment variable {name} is not set (run through ctest)")
    return Path(value)


def run(*args, check_status=None):
    """Runs wheelfix; returns CompletedProcess. check_status asserts the exit code."""
    proc = subprocess.run([WHEELFIX, *map(str, args)], capture_output=True, text=True)
    if check_status is not None and proc.returncode != check_status:
        raise AssertionError(f"wheelfix {' '.join(map(str, args))}: exit {proc.returncode}, "
                             f"expected {check_status}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def run_json(*args, check_status=0):
    return json.loads(run(*args, "--json", check_status=check_status).stdout)


def record_hash(data):
    """RECORD's hash field of bytes, or of a hashlib sha256 object already fed."""
    digest = data if hasattr(data, "digest") else hashlib.sha256(data)
    return "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def all_wheels():
    return sorted(AUDITWHEEL.rglob("*.whl")) + sorted(SAMPLES.glob("*.whl"))


def readelf_dynamic(path):
    """NEEDED, SONAME, RPATH and RUNPATH as readelf -d (an independent reader) shows them."""
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout
    found = {"needed": [], "soname": None, "rpath": None, "runpath": None}
    for line in out.splitlines():
        m = re.search(r"\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+[^\[]*\[(.*)\]$", line)
        if m:
            kind = m.group(1).lower()
            if kind == "needed":
                found["needed"].append(m.group(2))
            else:
                found[kind] = m.group(2)
    return found


def member_dynamic(wheel, member, into):
    """readelf_dynamic of one wheel member, extracted under `into`."""
    path = Path(into) / Path(member).name
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        path.write_bytes(zf.read(member))
    return readelf_dynamic(path)


def raw_member(path, info):
    """The stored (compressed) bytes of a member, read past its local header."""
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        header = f.read(30)
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        return f.read(info.compress_size)


def is_elf(data):
    return data[:4] == b"\x7fELF"


def extract_wheel_elves(wheel, into, label_root):
    """Writes the ELF members of one wheel under into/<wheel stem>/; returns
    [(label, path)] with labels "<wheel relative to label_root>!<member>"."""
    found = []
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            data = archive.read(info)
            if not is_elf(data):
                continue
            target = Path(into) / wheel.stem / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            found.append((f"{wheel.relative_to(label_root)}!{info.filename}", target))
    return found


def rewrite_wheel(src, dst, edit_member=None, record_edit=None, drop=()):
    """Copies a wheel member by member. edit_member(name, data) -> new data (RECORD
    left as it was, so the copy is tampered); record_edit(text) -> new RECORD text."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename in drop:
                continue
            data = zin.read(info.filename)
            if edit_member:
                data = edit_member(info.filename, data)
            if record_edit and info.filename.endswith(".dist-info/RECORD"):
                data = record_edit(data.decode()).encode()
            zout.writestr(info, data)
    return dst


def dist_info_members(name, version, tag, generator="wheelfix-tests"):
    """The METADATA and WHEEL members of a minimal wheel: {path in wheel: bytes}."""
    dist_info = f"{name}-{version}.dist-info"
    return {f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
            f"{dist_info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: {generator}\nRoot-Is-Purelib: false\n"
                                   f"Tag: {tag}\n").encode()}


def _sha256_and_size(data):
    """(hashlib object, size) of bytes, or of a file (a Path) read in chunks."""
    if not isinstance(data, Path):
        return hashlib.sha256(data), len(data)
    digest = hashlib.sha256()
    with open(data, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest, data.stat().st_size


def cached_wheel(wheel, payload, compresslevel=None):
    """The wheel `wheel` (a path in a cache outside the repository), built once:
    `payload(work)` makes its members ({path in wheel: bytes, or a Path}) in a scratch
    directory `work` beside it, the dist-info follows from the file name
    (NAME-VERSION-TAG.whl), and the wheel appears whole (written aside, then renamed)."""
    wheel = Path(wheel)
    if wheel.exists():
        return wheel
    wheel.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=wheel.parent) as work:
        work = Path(work)
        members = payload(work)
        name, version, tag = wheel.name[:-len(".whl")].split("-", 2)
        members.update(dist_info_members(name, version, tag, generator="test"))
        write_wheel(work / wheel.name, members, compresslevel=compresslevel).rename(wheel)
    return wheel


def write_wheel(path, members, compresslevel=None):
    """Writes the wheel `path` holding `members` ({path in wheel: bytes, or a Path whose
    file is streamed in, never read whole}) in order, deflated, and a RECORD giving
    each one's hash and size, written last into the dist-info directory of the
    METADATA among them (dist_info_members). Dates are fixed (1980); *.so members get
    mode 0755, the others 0644. Returns path."""
    path = Path(path)
    dist_info = next(name.rsplit("/", 1)[0] for name in members if name.endswith(".dist-info/METADATA"))
    record = ""
    for name, data in members.items():
        digest, size = _sha256_and_size(data)
        record += f"{name},{record_hash(digest)},{size}\n"
    entries = list(members.items()) + [(f"{dist_info}/RECORD", (record + f"{dist_info}/RECORD,,\n").encode())]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=compresslevel) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100755 if name.endswith(".so") else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            if isinstance(data, Path):
                with open(data, "rb") as source, zf.open(info, "w", force_zip64=data.stat().st_size >= 1 << 31) as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
            else:
                zf.writestr(info, data)
    return path


def gcc_library(directory, name, source, *flags):
    """directory/name, a shared library gcc builds from the C `source` (written beside it)."""
    directory = Path(directory)
    (directory / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(directory / name), str(directory / f"{name}.c"),
                    *map(str, flags)], check=True, capture_output=True, text=True)
    return directory / name


class TempDir:
    def __enter__(self):
        self.path = Path(tempfile.mkdtemp(prefix="wheelfix-e2e-"))
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


# A CPython extension linking a private library outside the wheel, and the proof that
# a repaired wheel holding it installs and imports (test_graft, test_patchelf_dropin).
EXTENSION_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
int {function}(void);
static PyObject* value(PyObject* self, PyObject* args) {{ return PyLong_FromLong({function}()); }}
static PyMethodDef methods[] = {{{{"value", value, METH_NOARGS, "{function}()"}}, {{NULL, NULL, 0, NULL}}}};
static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{module}", NULL, -1, methods}};
PyMODINIT_FUNC PyInit_{module}(void) {{ return PyModule_Create(&module); }}
"""


def build_private_extension(output, module, function, lib_dir, library, *link_flags):
    """gcc builds `output`: a CPython extension `module` whose value() returns the C
    function `function` of lib<library>.so in lib_dir (linked with -L, so NEEDED names
    it; link_flags add an RPATH or the like)."""
    output = Path(output)
    source = output.with_suffix(".c")
    source.write_text(EXTENSION_SOURCE.format(module=module, function=function))
    proc = subprocess.run(["gcc", "-O2", "-fPIC", "-shared", str(source), "-o", str(output),
                           f"-I{sysconfig.get_paths()['include']}", f"-L{lib_dir}", f"-l{library}",
                           *map(str, link_flags)], capture_output=True, text=True, cwd=output.parent)
    if proc.returncode != 0:
        raise AssertionError(f"gcc failed:\n{proc.stderr}")
    return output


def install_in_fresh_venv(wheel, venv):
    """pip installs `wheel` (no index, no dependencies) into a new venv; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(Path(venv) / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps",
                          "--disable-pip-version-check", "--quiet", str(wheel)], capture_output=True, text=True)
    if pip.returncode != 0:
        raise AssertionError(f"pip install {wheel} failed:\n{pip.stderr}")
    return Path(venv) / "bin" / "python"


def run_without_library_path(python, code, cwd):
    """`python -c code` with no LD_LIBRARY_PATH, PYTHONPATH or VIRTUAL_ENV: only what the
    installed wheel carries is found."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, cwd=cwd)
