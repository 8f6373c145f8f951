#!/usr/bin/env python3
"""The baseline wheelfix's relink is measured against: what auditwheel does to change
one RPATH in a wheel. Unzip every member, run patchelf on the ELF member, re-zip every
member at zlib level 6 and write a fresh RECORD (hashing every file again).

    python3 bench/auditwheel_way.py WHEEL MEMBER NEW_RPATH OUT_WHEEL
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def main():
    wheel, member, rpath, out = sys.argv[1:5]
    work = Path(tempfile.mkdtemp(prefix="auditwheel-way-"))
    try:
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(work)
            names = zf.namelist()
        subprocess.run(["patchelf", "--set-rpath", rpath, str(work / member)], check=True)
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        lines = []
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            for name in names:
                if name == record_name:
                    continue
                data = (work / name).read_bytes()
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                lines.append(f"{name},sha256={digest},{len(data)}")
                zf.write(work / name, name)
            lines.append(f"{record_name},,")
            zf.writestr(record_name, "\n".join(lines) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
