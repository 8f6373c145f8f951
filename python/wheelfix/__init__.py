"""wheelfix: inspect, check and repair Python wheels with native (C++/CUDA) extensions.

The wheel installs a static `wheelfix` binary into the scripts directory (bin/);
this package only finds it, so that `python -m wheelfix` (and pipx, uvx) run it.
"""
import os
import sys
import sysconfig

__all__ = ["binary"]


def _recorded():
    """Where this installation's RECORD says pip put the binary (any scheme, --target, --prefix)."""
    try:
        from importlib import metadata
        files = metadata.distribution("wheelfix").files or []
    except Exception:  # no importlib.metadata (python < 3.8) or no dist-info found
        return None
    for file in files:
        if file.name == "wheelfix" and file.parent.name == "bin":
            return os.path.dirname(os.path.normpath(str(file.locate())))
    return None


def _candidates():
    yield _recorded()
    yield sysconfig.get_path("scripts")                       # venv, system, conda
    user_scheme = {"posix": "posix_user", "nt": "nt_user"}.get(os.name)
    if user_scheme:
        yield sysconfig.get_path("scripts", user_scheme)      # pip install --user
    # pip install --target DIR puts the package in DIR and the scripts in DIR/bin
    yield os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin")


def binary():
    """The path of the wheelfix binary this package was installed with."""
    for directory in _candidates():
        if not directory:
            continue
        path = os.path.join(directory, "wheelfix")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("wheelfix: the wheelfix binary was not found beside this package "
                            "(looked in " + ", ".join(d for d in _candidates() if d) + "); "
                            "reinstall with: pip install --force-reinstall wheelfix")
