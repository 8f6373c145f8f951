// Stand-in libc10_cuda.so: device selection, streams and the CUDA error check.
// No CUDA here: the stand-ins build with g++ alone and never touch a GPU.
// With TORCH_STANDIN_TRACE set, c10_cuda_check_implementation and SetDevice print
// every argument they receive to stderr (one line each, prefixed with the release),
// so tests can prove what a caller — or a wheelfix shim in between — passed.
#include "torch_standin.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace c10::cuda {

namespace {
DeviceIndex current_device = 0;

bool tracing() {
    static const bool on = std::getenv("TORCH_STANDIN_TRACE") != nullptr;
    return on;
}

// `log_capture` is the address of the 2.11 parameter, or null in releases without it.
void trace_check(int32_t err, const char* filename, const char* function_name, long line_number,
                 bool include_device_assertions, const void* const* log_capture) {
    if (!tracing()) return;
    char capture[48] = "";
    if (log_capture)
        std::snprintf(capture, sizeof capture, ", log_capture=0x%lx",
                      static_cast<unsigned long>(reinterpret_cast<uintptr_t>(*log_capture)));
    std::fprintf(stderr,
                 "torch stand-in %d trace: c10_cuda_check_implementation(err=%d, filename=%s, function_name=%s, "
                 "line_number=%ld, include_device_assertions=%d%s)\n",
                 TORCH_STANDIN_VERSION, err, filename, function_name, line_number,
                 static_cast<int>(include_device_assertions), capture);
}

// `uncheck_device` is the address of the 2.11 parameter, or null in releases without it.
void trace_set_device(DeviceIndex device, const bool* uncheck_device) {
    if (!tracing()) return;
    if (uncheck_device) {
        unsigned char raw = 0;  // the byte as received, even if it is not 0 or 1
        std::memcpy(&raw, uncheck_device, 1);
        std::fprintf(stderr, "torch stand-in %d trace: SetDevice(device=%d, uncheck_device=%d)\n",
                     TORCH_STANDIN_VERSION, static_cast<int>(device), static_cast<int>(raw));
    } else {
        std::fprintf(stderr, "torch stand-in %d trace: SetDevice(device=%d)\n", TORCH_STANDIN_VERSION,
                     static_cast<int>(device));
    }
}

void report(int32_t err, const char* filename, const char* function_name, long line_number) {
    if (err == 0) return;
    std::fprintf(stderr, "torch stand-in: CUDA error %d in %s (%s:%ld)\n", err, function_name, filename,
                 line_number);
    c10::detail::torchCheckFail(function_name, filename, static_cast<uint32_t>(line_number), "CUDA error");
}
}  // namespace

#if TORCH_STANDIN_VERSION >= 21100
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const uint32_t line_number, const bool include_device_assertions,
                                   CUDAErrorLogCapture* log_capture) {
    const void* capture = log_capture;
    trace_check(err, filename, function_name, line_number, include_device_assertions, &capture);
    report(err, filename, function_name, line_number);
}

int SetDevice(DeviceIndex device, bool uncheck_device) {
    trace_set_device(device, &uncheck_device);
    current_device = device;
    return 0;
}
#else
#if TORCH_STANDIN_VERSION >= 21000
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const uint32_t line_number, const bool include_device_assertions) {
#else
void c10_cuda_check_implementation(const int32_t err, const char* filename, const char* function_name,
                                   const int line_number, const bool include_device_assertions) {
#endif
    trace_check(err, filename, function_name, line_number, include_device_assertions, nullptr);
    report(err, filename, function_name, line_number);
}

int SetDevice(DeviceIndex device) {
    trace_set_device(device, nullptr);
    current_device = device;
    return 0;
}
#endif

CUDAStream getCurrentCUDAStream(DeviceIndex device_index) {
    const DeviceIndex index = device_index < 0 ? current_device : device_index;
    return CUDAStream{Stream{Device{DeviceType::CUDA, index}, 0}};
}

}  // namespace c10::cuda
