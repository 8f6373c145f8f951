// Second fixture kernel, so a linked library holds more than one fatbin container.
__global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

void launch_add_one(float* x, int n) { add_one<<<(n + 127) / 128, 128>>>(x, n); }
