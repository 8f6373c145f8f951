// Stand-in libc10.so: the error path every torch library and extension shares.
#include "torch_standin.h"

#include <cstdio>
#include <stdexcept>

namespace c10::detail {

void torchCheckFail(const char* func, const char* file, uint32_t line, const std::string& msg) {
    std::fprintf(stderr, "torch stand-in %d: check failed in %s (%s:%u): %s\n", TORCH_STANDIN_VERSION, func,
                 file, line, msg.c_str());
    throw std::runtime_error(msg);
}

}  // namespace c10::detail
