// Stand-in for sgl-kernel's common_ops: two small real kernels (an RMS norm and a
// SiLU-and-mul) with host launchers that go through torch's C++ API the way the real
// extension does (device guard, current stream, C10_CUDA_CHECK, TORCH_CHECK, cuBLAS
// handle). Built against the torch 2.9 stand-in (TORCH_STANDIN_VERSION=20900), so it
// imports the 2.9 mangled names that later torch releases changed.
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>

#include "torch_standin.h"

namespace sgl_kernel {

// A named namespace, not an anonymous one: nvcc names anonymous namespaces after a
// hash of the source's absolute path, which would make the build depend on where the
// checkout lives.
namespace detail {

constexpr int block_size = 128;

// out[t, :] = in[t, :] * weight / sqrt(mean(in[t, :]^2) + eps), one block per token.
__global__ void rms_norm_kernel(float* out, const float* in, const float* weight, int hidden, float eps) {
    __shared__ float partial[block_size];
    const float* row = in + static_cast<size_t>(blockIdx.x) * hidden;
    float sum = 0.f;
    for (int i = threadIdx.x; i < hidden; i += blockDim.x) sum += row[i] * row[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    const float scale = rsqrtf(partial[0] / hidden + eps);
    float* out_row = out + static_cast<size_t>(blockIdx.x) * hidden;
    for (int i = threadIdx.x; i < hidden; i += blockDim.x) out_row[i] = row[i] * scale * weight[i];
}

// out[t, i] = silu(in[t, i]) * in[t, d + i] for a [tokens, 2d] input.
__global__ void silu_and_mul_kernel(float* out, const float* in, int d) {
    const float* row = in + static_cast<size_t>(blockIdx.x) * 2 * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        const float x = row[i];
        out[static_cast<size_t>(blockIdx.x) * d + i] = x / (1.f + __expf(-x)) * row[d + i];
    }
}

// Multiprocessor count per device, queried once (std::call_once, as the real code
// caches device properties; with gcc 12 / glibc 2.36 it binds pthread_once@GLIBC_2.34).
int multiprocessor_count(c10::DeviceIndex device) {
    constexpr int max_devices = 64;
    static std::once_flag once[max_devices];
    static int counts[max_devices];
    const int slot = device & (max_devices - 1);
    std::call_once(once[slot], [slot, device] {
        C10_CUDA_CHECK(cudaDeviceGetAttribute(&counts[slot], cudaDevAttrMultiProcessorCount, device));
    });
    return counts[slot];
}

cudaStream_t current_stream(c10::DeviceIndex device) {
    C10_CUDA_CHECK(c10::cuda::SetDevice(device));
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device);
    return reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(stream.stream.id));
}

}  // namespace detail

using detail::block_size;
using detail::current_stream;

void rms_norm(float* out, const float* in, const float* weight, int tokens, int hidden, float eps,
              c10::DeviceIndex device) {
    TORCH_CHECK(tokens > 0 && hidden > 0, "rms_norm: empty input");
    detail::rms_norm_kernel<<<tokens, block_size, 0, current_stream(device)>>>(out, in, weight, hidden, eps);
    C10_CUDA_CHECK(cudaGetLastError());
}

void silu_and_mul(float* out, const float* in, int tokens, int d, c10::DeviceIndex device) {
    TORCH_CHECK(tokens > 0 && d > 0, "silu_and_mul: empty input");
    const cudaStream_t stream = current_stream(device);
    const int blocks = std::min(tokens, 4 * std::max(detail::multiprocessor_count(device), 1));
    for (int first = 0; first < tokens; first += blocks) {
        const int count = std::min(blocks, tokens - first);
        detail::silu_and_mul_kernel<<<count, block_size, 0, stream>>>(out + static_cast<size_t>(first) * d,
                                                              in + static_cast<size_t>(first) * 2 * d, d);
    }
    C10_CUDA_CHECK(cudaGetLastError());
}

// What the GEMM wrappers start with: torch's cuBLAS handle for the current device.
void* blas_handle(c10::DeviceIndex device) {
    C10_CUDA_CHECK(c10::cuda::SetDevice(device));
    void* handle = at::cuda::getCurrentCUDABlasHandle();
    TORCH_CHECK(handle != nullptr, "no cuBLAS handle");
    return handle;
}

}  // namespace sgl_kernel
