# Target profile cuda13-blackwell-all: cuda13-blackwell plus the Blackwell parts a
# plain sm_100a/sm_120a build misses. Format: include/wheelfix/policy/profile.hpp.
description  CUDA 13, every Blackwell: sm_100, sm_103 (B300/GB300), sm_120, sm_121 (DGX Spark / GB10)

# libcudart.so.13; see cuda13-blackwell for why there is no replace-needed.
cuda-runtime-major  13

# sm_103 is reached by an sm_100 or sm_100f cubin (not sm_100a), sm_121 by an
# sm_120 or sm_120f cubin (not sm_120a), or by PTX at or below them.
sm  100 103
sm  120 121

rpath  {root}/nvidia/cu13/lib
rpath  {root}/torch/lib
rpath  {root}/nvidia/nccl/lib

min-platform  manylinux_2_28
