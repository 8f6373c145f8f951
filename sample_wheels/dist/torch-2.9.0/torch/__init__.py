"""Stand-in torch package (wheelfix sample): torch/lib, torch/version.py, and just
enough of torch's import-time behaviour for extensions to load. Like the real torch
it first loads its own libraries globally, so an extension's NEEDED libc10.so,
libtorch_cuda.so, ... resolve by SONAME whatever the extension's RUNPATH says.
"""
import ctypes
import os

from .version import __version__  # noqa: F401

_LIB_DIR = os.path.join(os.path.dirname(__file__), "lib")
for _name in ("libc10.so", "libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so"):
    ctypes.CDLL(os.path.join(_LIB_DIR, _name), mode=ctypes.RTLD_GLOBAL)


class cuda:  # noqa: N801 - stands for the torch.cuda module
    """torch.cuda as far as the samples use it; the stand-in never sees a GPU."""

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def get_device_capability(device=None):
        raise RuntimeError("torch stand-in: no CUDA device")
