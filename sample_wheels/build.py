#!/usr/bin/env python3
"""Builds wheelfix's sample wheels and torch stand-ins, deterministically.

Usage: python3 sample_wheels/build.py [--check-reproducible] [--no-cuda]

Builds under sample_wheels/work/ (scratch, gitignored) and copies the results into
sample_wheels/dist/ (committed):
  torch-2.9.0/, torch-2.10.0/, torch-2.11.0/   stand-in torch trees: torch/lib/ with
        libc10.so, libc10_cuda.so, libtorch_cpu.so, libtorch_cuda.so (g++, the real
        mangled names and their drift between releases), torch/version.py
  sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl   two nvcc-built
        extensions (sm90/, sm100/) linked against the torch 2.9 stand-in with an
        absolute CI RUNPATH, as CI boxes produce them
  plainext-1.0.0-cpXY-cpXY-linux_x86_64.whl    a plain C extension (running python3)
  purepy-1.0.0-py3-none-any.whl                 a pure-Python wheel
  manifest.json   ground truth for the tests: per ELF, its path, the -gencode list
        nvcc got, the NEEDED/RUNPATH asked of the linker and found, torch symbols
        imported/exported (mangled) and the symbol versions it needs

Contract: the same inputs and toolchain give byte-identical dist/ (SOURCE_DATE_EPOCH,
default 315532800 = 1980-01-01, for zip times; sorted members, dist-info last;
relative source paths; nvcc's tmpxft_<pid> file symbols renamed).
--check-reproducible builds twice in two work directories and fails unless every
artefact is identical. Without nvcc (or with --no-cuda) the CUDA wheel is not
rebuilt: the one already in dist/ and its manifest entry are kept, and the script
says so. Every ELF built is read back (stdlib ELF reader below) and checked against
what was asked for; a mismatch stops the build.
"""
import argparse
import base64
import csv
import hashlib
import io
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = Path("src")  # every compiler runs in HERE with relative paths
DIST = HERE / "dist"
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
CUDA_LIB = Path(os.environ.get("CUDA_LIB", "/usr/local/cuda/lib64"))

TORCH_RELEASES = {"2.9.0": 20900, "2.10.0": 21000, "2.11.0": 21100}
SGL_TORCH = "2.9.0"  # what the sgl_kernel sample was built against
CXX_FLAGS = ["-O2", "-fPIC", "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=1", f"-ffile-prefix-map={HERE}=."]

# Stand-in libraries: file name -> (source, stand-ins it links to).
TORCH_LIBS = {
    "libc10.so": ("c10.cpp", []),
    "libc10_cuda.so": ("c10_cuda.cpp", ["c10"]),
    "libtorch_cpu.so": ("torch_cpu.cpp", ["c10"]),
    "libtorch_cuda.so": ("torch_cuda.cpp", ["torch_cpu", "c10_cuda", "c10"]),
}
TORCH_LIB_NAMES = set(TORCH_LIBS)

SGL_NAME, SGL_VERSION = "sgl-kernel", "0.3.21+cu130"
SGL_TAG = "cp310-abi3-manylinux2014_x86_64"
SGL_RUNPATH = "/opt/ci/build/sgl-kernel/_skbuild/torch/lib:/usr/local/cuda/lib64"
SGL_NEEDED = ["libc10.so", "libc10_cuda.so", "libtorch_cuda.so", "libcudart.so.13"]
SGL_VARIANTS = {
    "sm90": ["-gencode", "arch=compute_90a,code=sm_90a"],
    "sm100": ["-gencode", "arch=compute_100a,code=sm_100a", "-gencode", "arch=compute_120a,code=sm_120a",
              "-gencode", "arch=compute_120,code=compute_120", "--compress-mode=size"],
}
# The torch 2.9 API the sgl_kernel host code calls (mangled): the ground truth that
# the built extensions are checked against.
SGL_TORCH_IMPORTS = sorted([
    "_ZN2at4cuda24getCurrentCUDABlasHandleEv",
    "_ZN3c104cuda20getCurrentCUDAStreamEa",
    "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib",
    "_ZN3c104cuda9SetDeviceEa",
    "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
])
TORCH_PREFIXES = ("_ZN3c10", "_ZN2at", "_ZN5torch")


# ---------------------------------------------------------------- running tools

def run(cmd):
    """Runs a build command in HERE; its output only shows when it fails."""
    done = subprocess.run([str(c) for c in cmd], cwd=HERE, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"build.py: command failed: {' '.join(map(str, cmd))}\n{done.stdout}{done.stderr}")
    return done.stdout


def have_nvcc():
    return os.access(NVCC, os.X_OK)


def nvcc_release():
    return run([NVCC, "--version"]).strip().splitlines()[-1]


# ---------------------------------------------------------------- a minimal ELF64 LE reader

SHT_SYMTAB, SHT_DYNSYM, SHT_DYNAMIC, SHT_VERNEED = 2, 11, 6, 0x6FFFFFFE
DT_NEEDED, DT_SONAME, DT_RUNPATH, DT_RPATH = 1, 14, 29, 15


class Elf:
    """Just enough of an ELF64 little-endian file for the build's own checks."""

    def __init__(self, data):
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError("not an ELF64 little-endian file")
        self.data = data
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        self.sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def _of_type(self, sh_type):
        return [s for s in self.sections if s[1] == sh_type]

    def _string(self, strtab_index, offset):
        base = self.sections[strtab_index][4] + offset
        return self.data[base:self.data.index(b"\0", base)].decode()

    def symbols(self, sh_type):
        """(name, type, defined) of every symbol in the SHT_SYMTAB or SHT_DYNSYM table."""
        out = []
        for sec in self._of_type(sh_type):
            for i in range(1, sec[5] // 24):
                name, info, _other, shndx = struct.unpack_from("<IBBH", self.data, sec[4] + i * 24)
                out.append((self._string(sec[6], name), info & 0xF, shndx != 0))
        return out

    def dynamic(self):
        """{tag: [string values]} for the string-valued dynamic tags."""
        values = {}
        for sec in self._of_type(SHT_DYNAMIC):
            for i in range(sec[5] // 16):
                tag, val = struct.unpack_from("<qQ", self.data, sec[4] + i * 16)
                if tag in (DT_NEEDED, DT_SONAME, DT_RUNPATH, DT_RPATH):
                    values.setdefault(tag, []).append(self._string(sec[6], val))
        return values

    def version_needs(self):
        """{file: sorted version names} from .gnu.version_r."""
        needs = {}
        for sec in self._of_type(SHT_VERNEED):
            at = sec[4]
            while True:
                _ver, cnt, file_off, aux, nxt = struct.unpack_from("<HHIII", self.data, at)
                names, aux_at = [], at + aux
                for _ in range(cnt):
                    _hash, _flags, _other, name_off, aux_next = struct.unpack_from("<IHHII", self.data, aux_at)
                    names.append(self._string(sec[6], name_off))
                    aux_at += aux_next
                needs[self._string(sec[6], file_off)] = sorted(names)
                if nxt == 0:
                    break
                at += nxt
        return needs


def describe_elf(path):
    """What the manifest records about a built ELF."""
    elf = Elf(Path(path).read_bytes())
    dyn = elf.dynamic()
    dynsyms = elf.symbols(SHT_DYNSYM)
    torch = [s for s in dynsyms if s[0].startswith(TORCH_PREFIXES)]
    return {
        "soname": (dyn.get(DT_SONAME) or [None])[0],
        "needed": dyn.get(DT_NEEDED, []),
        "runpath": (dyn.get(DT_RUNPATH) or [None])[0],
        "rpath": (dyn.get(DT_RPATH) or [None])[0],
        "torch_imports": sorted({name for name, _t, defined in torch if not defined}),
        "torch_exports": sorted({name for name, _t, defined in torch if defined}),
        "version_needs": elf.version_needs(),
    }


def rename_tmpxft_file_symbols(obj, source):
    """nvcc names the STT_FILE symbol after its temp file (tmpxft_<pid>_...): rename it."""
    STT_FILE = 4
    for name, sym_type, _defined in Elf(Path(HERE / obj).read_bytes()).symbols(SHT_SYMTAB):
        if sym_type == STT_FILE and name.startswith("tmpxft_"):
            run(["objcopy", f"--redefine-sym={name}={source.name}", obj])


def expect(what, got, wanted):
    if got != wanted:
        sys.exit(f"build.py: {what}: got {got!r}, expected {wanted!r}")


# ---------------------------------------------------------------- torch stand-ins

def torch_version_py(version):
    # Written the way torch's tools/generate_torch_version.py writes it.
    return (
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n"
        f"__version__ = '{version}+cu130'\n"
        "debug = False\n"
        "cuda: Optional[str] = '13.0'\n"
        "git_version = 'wheelfix-sample-standin'\n"
        "hip: Optional[str] = None\n"
        "rocm: Optional[str] = None\n"
        "xpu: Optional[str] = None\n"
    )


def build_torch_standin(work, version):
    """Builds work/torch-VERSION/torch; returns {relative lib path: description}."""
    tree = work / f"torch-{version}" / "torch"
    lib = tree / "lib"
    (HERE / lib).mkdir(parents=True)
    (HERE / tree / "version.py").write_text(torch_version_py(version))
    shutil.copyfile(HERE / SRC / "torch_standin" / "torch" / "__init__.py", HERE / tree / "__init__.py")
    described = {}
    for name, (source, links) in TORCH_LIBS.items():
        obj = lib / (name + ".o")
        run(["g++", *CXX_FLAGS, f"-DTORCH_STANDIN_VERSION={TORCH_RELEASES[version]}", "-c",
             SRC / "torch_standin" / source, "-o", obj])
        run(["g++", "-shared", "-o", lib / name, obj, f"-L{lib}", *[f"-l{dep}" for dep in links],
             f"-Wl,-soname,{name}", "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"])
        (HERE / obj).unlink()
        info = describe_elf(HERE / lib / name)
        expect(f"{name} SONAME", info["soname"], name)
        expect(f"{name} RUNPATH", info["runpath"], "$ORIGIN")
        expect(f"{name} torch NEEDED", [n for n in info["needed"] if n in TORCH_LIB_NAMES],
               [f"lib{dep}.so" for dep in links])
        described[f"torch/lib/{name}"] = {"needed_requested": [f"lib{dep}.so" for dep in links],
                                          "runpath_requested": "$ORIGIN", **info}
    return described


# ---------------------------------------------------------------- sgl_kernel

def build_sgl_variant(work, variant, gencode):
    """nvcc-compiles common_ops.cu for one GPU family and links the extension."""
    out = work / "sgl" / variant
    (HERE / out).mkdir(parents=True)
    torch_lib = work / f"torch-{SGL_TORCH}" / "torch" / "lib"
    cu_source = SRC / "sgl_kernel" / "common_ops.cu"
    cu_obj, py_obj = out / "common_ops.o", out / "module.o"
    run([NVCC, "-c", cu_source, "-o", cu_obj, *gencode, "-O2", "-std=c++17", "-Xcompiler", "-fPIC",
         "-Xcompiler", f"-ffile-prefix-map={HERE}=.", "-D_GLIBCXX_USE_CXX11_ABI=1",
         f"-DTORCH_STANDIN_VERSION={TORCH_RELEASES[SGL_TORCH]}", f"-I{SRC / 'torch_standin'}"])
    rename_tmpxft_file_symbols(cu_obj, cu_source)
    run(["g++", *CXX_FLAGS, f"-DSGL_KERNEL_VARIANT=\"{variant}\"", f"-I{sysconfig.get_paths()['include']}",
         "-c", SRC / "sgl_kernel" / "module.cpp", "-o", py_obj])
    so = out / "common_ops.abi3.so"
    # -nodlink: link like g++ would (no device-link stub container), -cudart shared.
    run([NVCC, "-shared", "-nodlink", "-cudart", "shared", "-o", so, cu_obj, py_obj, f"-L{torch_lib}",
         "-lc10", "-lc10_cuda", "-ltorch_cuda", "-Xlinker", "-rpath", "-Xlinker", SGL_RUNPATH,
         "-Xlinker", "-rpath-link", "-Xlinker", torch_lib])
    info = describe_elf(HERE / so)
    missing = [n for n in SGL_NEEDED if n not in info["needed"]]
    expect(f"sgl {variant} NEEDED missing", missing, [])
    expect(f"sgl {variant} RUNPATH", info["runpath"], SGL_RUNPATH)
    expect(f"sgl {variant} torch imports", info["torch_imports"], SGL_TORCH_IMPORTS)
    gencode_list = [gencode[i + 1] for i, flag in enumerate(gencode) if flag == "-gencode"]
    elf_entry = {
        "member": f"sgl_kernel/{variant}/common_ops.abi3.so",
        "built_against_torch": SGL_TORCH,
        "gencode": gencode_list,
        "nvcc_flags": gencode,
        "needed_requested": SGL_NEEDED,
        "runpath_requested": SGL_RUNPATH,
        **info,
    }
    return so, elf_entry


SGL_INIT = SRC / "sgl_kernel" / "sgl_kernel" / "__init__.py"
SGL_SUMMARY = "Kernel Library for SGLang (wheelfix sample stand-in)"


def build_sgl_wheel(work, epoch):
    members, elfs = {"sgl_kernel/__init__.py": (read(SGL_INIT), 0o644)}, []
    for variant, gencode in SGL_VARIANTS.items():
        so, entry = build_sgl_variant(work, variant, gencode)
        members[entry["member"]] = ((HERE / so).read_bytes(), 0o755)
        elfs.append(entry)
    metadata = metadata_text(SGL_NAME, SGL_VERSION, SGL_SUMMARY, ">=3.10", ["torch"])
    name = write_wheel(work, SGL_NAME, SGL_VERSION, SGL_TAG, False, members, metadata, epoch)
    return name, elfs


# ---------------------------------------------------------------- plainext and purepy

def python_tag():
    return f"cp{sys.version_info.major}{sys.version_info.minor}"


def build_plainext_wheel(work, epoch):
    so = work / "plainext" / ("plainext" + sysconfig.get_config_var("EXT_SUFFIX"))
    (HERE / so.parent).mkdir(parents=True)
    run(["gcc", "-O2", "-fPIC", "-shared", f"-ffile-prefix-map={HERE}=.",
         f"-I{sysconfig.get_paths()['include']}", SRC / "plainext" / "plainext.c", "-o", so, "-lm"])
    info = describe_elf(HERE / so)
    expect("plainext NEEDED libm", "libm.so.6" in info["needed"], True)
    members = {so.name: ((HERE / so).read_bytes(), 0o755)}
    tag = f"{python_tag()}-{python_tag()}-linux_x86_64"
    metadata = metadata_text("plainext", "1.0.0", "A plain C extension (wheelfix sample)", ">=3.8", [])
    name = write_wheel(work, "plainext", "1.0.0", tag, False, members, metadata, epoch)
    return name, [{"member": so.name, "gencode": [], "needed_requested": ["libm.so.6"],
                   "runpath_requested": None, **info}]


def build_purepy_wheel(work, epoch):
    members = {"purepy/__init__.py": (read(SRC / "purepy" / "purepy" / "__init__.py"), 0o644)}
    metadata = metadata_text("purepy", "1.0.0", "A pure-Python package (wheelfix sample)", ">=3.8", [])
    return write_wheel(work, "purepy", "1.0.0", "py3-none-any", True, members, metadata, epoch), []


# ---------------------------------------------------------------- wheels

def read(path):
    return (HERE / path).read_bytes()


def metadata_text(name, version, summary, requires_python, requires):
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {summary}",
             f"Requires-Python: {requires_python}", *[f"Requires-Dist: {r}" for r in requires]]
    return ("\n".join(lines) + "\n\n").encode()


def wheel_text(tag, purelib):
    return (f"Wheel-Version: 1.0\nGenerator: wheelfix-sample-build (1.0)\n"
            f"Root-Is-Purelib: {'true' if purelib else 'false'}\nTag: {tag}\n\n").encode()


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def record_text(members, record_name):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for name, (data, _mode) in members.items():
        writer.writerow([name, record_hash(data), len(data)])
    writer.writerow([record_name, "", ""])
    return out.getvalue().encode()


def zip_time(epoch):
    return time.gmtime(max(epoch, 315532800))[:6]


def write_wheel(work, name, version, tag, purelib, members, metadata, epoch):
    """Writes work/wheels/<wheel>: sorted members, dist-info last, RECORD last of all."""
    escaped = name.replace("-", "_")
    dist_info = f"{escaped}-{version}.dist-info"
    ordered = {k: members[k] for k in sorted(members)}
    ordered[f"{dist_info}/METADATA"] = (metadata, 0o644)
    ordered[f"{dist_info}/WHEEL"] = (wheel_text(tag, purelib), 0o644)
    record_name = f"{dist_info}/RECORD"
    ordered[record_name] = (record_text(ordered, record_name), 0o644)
    wheel_name = f"{escaped}-{version}-{tag}.whl"
    path = HERE / work / "wheels" / wheel_name
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for member, (data, mode) in ordered.items():
            info = zipfile.ZipInfo(member, zip_time(epoch))
            info.create_system = 3  # Unix, so external_attr holds the mode
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return wheel_name


# ---------------------------------------------------------------- the whole build

def build(work, epoch, cuda):
    """Builds everything under `work`; returns (artefacts {dist path: bytes}, manifest)."""
    shutil.rmtree(HERE / work, ignore_errors=True)
    artefacts, manifest = {}, {"schema": 1, "source_date_epoch": epoch, "torch_standins": [], "wheels": []}
    for version in TORCH_RELEASES:
        libs = build_torch_standin(work, version)
        tree = work / f"torch-{version}"
        for path in sorted((HERE / tree).rglob("*")):
            if path.is_file():
                artefacts[str(path.relative_to(HERE / work))] = path.read_bytes()
        manifest["torch_standins"].append({"version": f"{version}+cu130", "path": f"torch-{version}",
                                           "elfs": [{"path": p, **d} for p, d in libs.items()]})
    builders = [build_plainext_wheel, build_purepy_wheel]
    if cuda:
        builders.insert(0, build_sgl_wheel)
        manifest["nvcc"] = nvcc_release()
    for builder in builders:
        wheel, elfs = builder(work, epoch)
        artefacts[wheel] = (HERE / work / "wheels" / wheel).read_bytes()
        manifest["wheels"].append({"file": wheel, "elfs": elfs})
    return artefacts, manifest


def keep_cuda_parts(manifest):
    """Without nvcc: the sgl_kernel wheel and its manifest entry stay as they are in dist/."""
    old = json.loads((DIST / "manifest.json").read_text()) if (DIST / "manifest.json").exists() else {}
    kept = [w for w in old.get("wheels", []) if w["file"].startswith("sgl_kernel-")]
    if not kept or not (DIST / kept[0]["file"]).exists():
        sys.exit("build.py: no nvcc and no sgl_kernel wheel in dist/ to keep")
    manifest["wheels"] = kept + manifest["wheels"]
    manifest["nvcc"] = old.get("nvcc")


def manifest_bytes(manifest):
    return (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()


def install_into_dist(artefacts, manifest):
    for version in TORCH_RELEASES:
        shutil.rmtree(DIST / f"torch-{version}", ignore_errors=True)
    for path, data in artefacts.items():
        target = DIST / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if path.endswith(".so") else 0o644)
    (DIST / "manifest.json").write_bytes(manifest_bytes(manifest))


def compare_builds(first, second):
    differing = sorted(p for p in set(first) | set(second) if first.get(p) != second.get(p))
    if differing:
        sys.exit("build.py: NOT reproducible, these differ between two builds: " + ", ".join(differing))
    print(f"reproducible: {len(first)} artefacts byte-identical across two builds")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-reproducible", action="store_true",
                        help="build twice (two work directories) and require identical output")
    parser.add_argument("--no-cuda", action="store_true", help="do not rebuild the CUDA wheel")
    parser.add_argument("--verify-dist", action="store_true",
                        help="build into work/verify and require it byte-identical to dist/ (writes nothing to dist/)")
    args = parser.parse_args()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    cuda = have_nvcc() and not args.no_cuda
    if not cuda:
        print(f"build.py: {'--no-cuda' if args.no_cuda else f'no nvcc at {NVCC}'}: "
              "skipping the CUDA wheel (sgl_kernel), keeping the one in dist/")
    artefacts, manifest = build(Path("work") / ("verify" if args.verify_dist else "run1"), epoch, cuda)
    if not cuda:
        keep_cuda_parts(manifest)
    artefacts["manifest.json"] = manifest_bytes(manifest)
    if args.verify_dist:
        committed = {str(p.relative_to(DIST)): p.read_bytes() for p in DIST.rglob("*") if p.is_file()}
        compare_builds(artefacts, committed)
        return
    if args.check_reproducible:
        again, manifest_again = build(Path("work") / "run2", epoch, cuda)
        if not cuda:
            keep_cuda_parts(manifest_again)
        again["manifest.json"] = manifest_bytes(manifest_again)
        compare_builds(artefacts, again)
    del artefacts["manifest.json"]
    install_into_dist(artefacts, manifest)
    total = sum(f.stat().st_size for f in DIST.rglob("*") if f.is_file())
    print(f"sample_wheels/dist: {total} bytes")


if __name__ == "__main__":
    main()
