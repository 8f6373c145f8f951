#!/usr/bin/env python3
"""Write the wheelfix wheel for one architecture (scripts/build-wheels calls this).

    wheelfix-<v>-py3-none-manylinux_2_17_<arch>.musllinux_1_1_<arch>.whl
      wheelfix/__init__.py, wheelfix/__main__.py    finds and runs the binary (python -m wheelfix)
      wheelfix-<v>.data/scripts/wheelfix            the static binary, mode 0755 (pip puts it on PATH)
      wheelfix-<v>.dist-info/METADATA, WHEEL, RECORD

The binary is static (no PT_INTERP, no DT_NEEDED), so no glibc symbol version sets the
tag: manylinux_2_17 is the floor the binary's own static glibc imposes (glibc 2.36 starts
on Linux >= 3.2; manylinux2014/CentOS 7 is the oldest manylinux with such a kernel, and
the oldest aarch64 manylinux), and musllinux_1_1 because a static binary needs no libc at
all. Entries are sorted, dated SOURCE_DATE_EPOCH and deflated at level 9, so the same
binary gives the same wheel bytes.
"""
import argparse
import base64
import hashlib
import os
import sys
import time
import zipfile

SUMMARY = "Inspect, check and repair Python wheels with native (C++/CUDA) extensions"
ARCHES = ("x86_64", "aarch64")


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def metadata(version):
    return (f"Metadata-Version: 2.1\nName: wheelfix\nVersion: {version}\nSummary: {SUMMARY}\n"
            "Keywords: wheel,auditwheel,manylinux,patchelf,torch,cuda\n"
            "Classifier: Operating System :: POSIX :: Linux\nClassifier: Programming Language :: C++\n"
            "Classifier: Topic :: Software Development :: Build Tools\nRequires-Python: >=3.7\n"
            "Description-Content-Type: text/plain\n\n"
            "wheelfix as one static binary for any Linux (glibc or musl): `pip install wheelfix`,\n"
            "then `wheelfix --help`, or `python -m wheelfix --help`.\n")


def wheel_file(tags):
    lines = ["Wheel-Version: 1.0", "Generator: wheelfix scripts/write-wheel.py", "Root-Is-Purelib: false"]
    return "\n".join(lines + [f"Tag: {tag}" for tag in tags]) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--arch", required=True, choices=ARCHES)
    parser.add_argument("--version", required=True)
    parser.add_argument("--package", required=True, help="directory of the python package 'wheelfix'")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    tags = [f"py3-none-manylinux_2_17_{args.arch}", f"py3-none-musllinux_1_1_{args.arch}"]
    name = f"wheelfix-{args.version}-py3-none-manylinux_2_17_{args.arch}.musllinux_1_1_{args.arch}.whl"
    dist_info = f"wheelfix-{args.version}.dist-info"
    members = []  # (name, bytes, mode)
    for file in sorted(os.listdir(args.package)):
        if file.endswith(".py"):
            with open(os.path.join(args.package, file), "rb") as f:
                members.append((f"wheelfix/{file}", f.read(), 0o644))
    with open(args.binary, "rb") as f:
        members.append((f"wheelfix-{args.version}.data/scripts/wheelfix", f.read(), 0o755))
    members.append((f"{dist_info}/METADATA", metadata(args.version).encode(), 0o644))
    members.append((f"{dist_info}/WHEEL", wheel_file(tags).encode(), 0o644))
    record = "".join(f"{n},{record_hash(d)},{len(d)}\n" for n, d, _ in members) + f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    epoch = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)
    date_time = time.gmtime(epoch)[:6]
    path = os.path.join(args.out, name)
    temporary = path + ".part"
    with zipfile.ZipFile(temporary, "w") as archive:
        for member, data, mode in members:
            info = zipfile.ZipInfo(member, date_time)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16
            info.create_system = 3  # unix, so the mode bits count
            archive.writestr(info, data, compresslevel=9)
    os.replace(temporary, path)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
