// The slice of PyTorch's C++ API that the sample extensions call, declared exactly as
// torch declares it so the mangled names match the real libraries. One header for
// all releases: TORCH_STANDIN_VERSION (major*10000 + minor*100: 20900, 21000, 21100)
// selects the declarations of that release.
//
// The drifts reproduced (the ones the wheelfix tests are about):
//   c10::cuda::c10_cuda_check_implementation
//     2.9:  (const int32_t, const char*, const char*, const int line_number, const bool)
//           _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib
//     2.10: line_number becomes const uint32_t
//           _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb
//     2.11: and a trailing CUDAErrorLogCapture* log_capture (defaulted to nullptr)
//           _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbPNS0_19CUDAErrorLogCaptureE
//   c10::cuda::SetDevice
//     2.9, 2.10: (DeviceIndex)                   _ZN3c104cuda9SetDeviceEa
//     2.11:      (DeviceIndex, bool uncheck_device = false)  _ZN3c104cuda9SetDeviceEab
// Everything else is the same in the three releases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#ifndef TORCH_STANDIN_VERSION
#error "define TORCH_STANDIN_VERSION (20900, 21000 or 21100)"
#endif

namespace c10 {

using DeviceIndex = int8_t;  // signed char: mangles as `a`
using StreamId = int64_t;

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };

struct Device {
    DeviceType type;
    DeviceIndex index;
};

struct Stream {
    Device device;
    StreamId id;
};

namespace detail {
// What TORCH_CHECK calls on failure (libc10.so).
[[noreturn]] void torchCheckFail(const char* func, const char* file, uint32_t line, const std::string& msg);
}  // namespace detail

namespace cuda {

// A CUDA stream handle as torch returns it: a small struct, by value.
struct CUDAStream {
    Stream stream;
};

#if TORCH_STANDIN_VERSION >= 21100
struct CUDAErrorLogCapture;
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const uint32_t line_number, const bool include_device_assertions,
                                   CUDAErrorLogCapture* log_capture = nullptr);
#elif TORCH_STANDIN_VERSION >= 21000
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const uint32_t line_number, const bool include_device_assertions);
#else
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const int line_number, const bool include_device_assertions);
#endif

// Returns a cudaError_t (an int-sized enum); int here keeps this header CUDA-free.
#if TORCH_STANDIN_VERSION >= 21100
int SetDevice(DeviceIndex device, bool uncheck_device = false);
#else
int SetDevice(DeviceIndex device);
#endif

CUDAStream getCurrentCUDAStream(DeviceIndex device_index = -1);

}  // namespace cuda
}  // namespace c10

namespace at {

// A tensor reduced to its handle.
struct Tensor {
    void* impl;
};

namespace _ops {
// Simplified from the generated operator struct (libtorch_cpu.so).
struct empty_memory_format {
    static Tensor call(const int64_t* sizes, std::size_t ndim, int8_t dtype);
};
}  // namespace _ops

namespace cuda {
// Returns a cublasHandle_t (libtorch_cuda.so).
void* getCurrentCUDABlasHandle();
}  // namespace cuda

}  // namespace at

// torch's checking macros, as extensions use them.
#define TORCH_CHECK(cond, msg)                                                                   \
    do {                                                                                         \
        if (!(cond)) ::c10::detail::torchCheckFail(__func__, __FILE__, static_cast<uint32_t>(__LINE__), (msg)); \
    } while (0)

#define C10_CUDA_CHECK(EXPR)                                                                     \
    do {                                                                                         \
        const auto c10_cuda_err = (EXPR);                                                        \
        ::c10::cuda::c10_cuda_check_implementation(static_cast<int32_t>(c10_cuda_err), __FILE__, \
                                                   __func__, __LINE__, true);                    \
    } while (0)
