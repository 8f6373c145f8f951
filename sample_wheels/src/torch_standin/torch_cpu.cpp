// Stand-in libtorch_cpu.so: one operator entry point, C++-mangled in namespace at.
#include "torch_standin.h"

namespace at::_ops {

Tensor empty_memory_format::call(const int64_t* sizes, std::size_t ndim, int8_t dtype) {
    TORCH_CHECK(sizes != nullptr || ndim == 0, "sizes must not be null");
    TORCH_CHECK(dtype >= 0, "bad dtype");
    return Tensor{nullptr};
}

}  // namespace at::_ops
