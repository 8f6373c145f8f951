# Target profile cuda13-blackwell: CUDA 13 on Blackwell, as torch's cu130 wheels
# install it from PyPI. Format: include/wheelfix/policy/profile.hpp, man wheelfix(1)
# "TARGET PROFILE FORMAT".
description  CUDA 13, Blackwell: B200/GB200 (sm_100), RTX PRO 6000 / RTX 50 (sm_120)

# libcudart.so.13 (NVIDIA's cu13 wheels). No replace-needed for libcudart.so.12:
# its symbols carry the version node "libcudart.so.12", so renaming NEEDED would
# leave every versioned reference unresolved -- a .12 build must be rebuilt.
cuda-runtime-major  13

# sm_100 (10.0, B200/GB200) and sm_120 (12.0, RTX PRO 6000 / RTX 50).
sm  100
sm  120

# The pip layout: nvidia-cuda-runtime 13 (and the other cu13 wheels) install into
# nvidia/cu13/lib, torch into torch/lib, nvidia-nccl-cu13 into nvidia/nccl/lib.
rpath  {root}/nvidia/cu13/lib
rpath  {root}/torch/lib
rpath  {root}/nvidia/nccl/lib

# torch's cu130 wheels are manylinux_2_28: no CUDA 13 torch exists below it.
min-platform  manylinux_2_28
