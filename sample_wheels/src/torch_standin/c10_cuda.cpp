// Stand-in libc10_cuda.so: device selection, streams and the CUDA error check.
// No CUDA here: the stand-ins build with g++ alone and never touch a GPU.
#include "torch_standin.h"

#include <cstdio>

namespace c10::cuda {

namespace {
DeviceIndex current_device = 0;

void report(int32_t err, const char* filename, const char* function_name, long line_number) {
    if (err == 0) return;
    std::fprintf(stderr, "torch stand-in: CUDA error %d in %s (%s:%ld)\n", err, function_name, filename,
                 line_number);
    c10::detail::torchCheckFail(function_name, filename, static_cast<uint32_t>(line_number), "CUDA error");
}
}  // namespace

#if TORCH_STANDIN_VERSION >= 21100
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const uint32_t line_number, const bool, CUDAErrorLogCapture*) {
    report(err, filename, function_name, line_number);
}

int SetDevice(DeviceIndex device, bool) {
    current_device = device;
    return 0;
}
#else
#if TORCH_STANDIN_VERSION >= 21000
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const uint32_t line_number, const bool) {
#else
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const int line_number, const bool) {
#endif
    report(err, filename, function_name, line_number);
}

int SetDevice(DeviceIndex device) {
    current_device = device;
    return 0;
}
#endif

CUDAStream getCurrentCUDAStream(DeviceIndex device_index) {
    const DeviceIndex index = device_index < 0 ? current_device : device_index;
    return CUDAStream{Stream{Device{DeviceType::CUDA, index}, 0}};
}

}  // namespace c10::cuda
