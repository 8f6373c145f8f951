// Stand-in libtorch_cuda.so: the cuBLAS handle getter (it needs the stream of the
// current device, from libc10_cuda, an operator from libtorch_cpu and TORCH_CHECK
// from libc10).
#include "torch_standin.h"

#include <cstdio>

namespace at::cuda {

namespace {
int handle_storage[64];
}

void* getCurrentCUDABlasHandle() {
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream();
    TORCH_CHECK(stream.stream.device.index >= 0, "no current CUDA device");
    const int64_t one = 1;
    (void)at::_ops::empty_memory_format::call(&one, 1, 0);
    std::fprintf(stderr, "torch stand-in: cuBLAS handle for device %d\n", static_cast<int>(stream.stream.device.index));
    return &handle_storage[stream.stream.device.index & 63];
}

}  // namespace at::cuda
