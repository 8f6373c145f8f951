#!/usr/bin/env python3
"""How far into each ELF file a symbol-only reader (check, index) must inflate before
it has what it needs: the end of the last of PT_DYNAMIC and the dynamic symbol,
string and version tables, as a share of the file. Issue 7 asks symbol-only queries
to stop inflating there; this measures what stopping could save on real libraries.
Reads the headers with readelf (an independent reader), of extracted files:

    python3 bench/needed_extent.py FILE...
"""
import re, subprocess, sys, os

def needed_extent(path):
    size = os.path.getsize(path)
    ph = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    ends = []
    for line in ph.splitlines():
        f = line.split()
        if f and f[0] == "DYNAMIC":
            ends.append(int(f[1], 16) + int(f[4], 16))
    sh = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in sh.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and m.group(1) in (".dynsym", ".dynstr", ".gnu.version", ".gnu.version_r", ".gnu.version_d"):
            ends.append(int(m.group(4), 16) + int(m.group(5), 16))
    return size, max(ends) if ends else 0

total = needed = 0
for path in sys.argv[1:]:
    size, end = needed_extent(path)
    total += size; needed += end
    print(f"{end / size * 100:6.1f}%  {size / 1e6:8.1f} MB  {os.path.basename(path)}")
print(f"all: {needed / 1e6:.0f} of {total / 1e6:.0f} MB must be inflated ({needed / total * 100:.1f}%)")
