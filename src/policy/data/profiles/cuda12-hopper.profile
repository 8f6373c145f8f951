# Target profile cuda12-hopper: CUDA 12 on Hopper (H100/H200, sm_90), as torch's
# cu12x wheels install it from PyPI. Format: include/wheelfix/policy/profile.hpp.
description  CUDA 12, Hopper: H100/H200/GH200 (sm_90)

cuda-runtime-major  12

# sm_90; an sm_90a cubin runs there too (arch-specific, exactly 9.0).
sm  90

# The cu12 pip layout has one directory per library wheel:
# nvidia-cuda-runtime-cu12 -> nvidia/cuda_runtime/lib (libcudart.so.12),
# nvidia-cublas-cu12 -> nvidia/cublas/lib, nvidia-nccl-cu12 -> nvidia/nccl/lib,
# nvidia-cuda-nvrtc-cu12 -> nvidia/cuda_nvrtc/lib (libnvrtc.so.12: torch's cu12x
# wheels require it, and libtorch_cuda.so needs it).
rpath  {root}/nvidia/cuda_runtime/lib
rpath  {root}/nvidia/cublas/lib
rpath  {root}/torch/lib
rpath  {root}/nvidia/nccl/lib
rpath  {root}/nvidia/cuda_nvrtc/lib

# torch's cu12x wheels for x86_64 are manylinux_2_28 since torch 2.6.
min-platform  manylinux_2_28
