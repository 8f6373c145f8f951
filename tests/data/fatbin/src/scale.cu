// Fixture kernel for the fatbin tests: small on purpose, so each object stays a few KB.
__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

void launch_scale(float* x, float a, int n) { scale<<<(n + 127) / 128, 128>>>(x, a, n); }
