"""Stand-in for sgl-kernel 0.3.21: loads the common_ops build for this GPU.

Like the real package it imports torch first (which loads libc10.so and friends, so
the extension's NEEDED entries resolve by SONAME) and picks sm100/ for Blackwell,
sm90/ otherwise.
"""
import importlib

import torch


def _variant():
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 10:
        return "sm100"
    return "sm90"


common_ops = importlib.import_module(f"sgl_kernel.{_variant()}.common_ops")
__version__ = "0.3.21"
