// A CUDA program with known kernels, for libinject's device checks: three
// launches of `scale` (grid 64 x 1 x 1, block 256) inside an NVTX-free run,
// one `add` (grid 8 x 2 x 1, block 128 x 2), one host-to-device and one
// device-to-host copy of 1 MiB, one memset. Prints "ok" and exits 0, or
// "no device" and exits 0 when there is no GPU.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void add(float* x, const float* y, int n) {
  const int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y +
                threadIdx.y * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no device\n");
    return 0;
  }
  const int n = 1 << 18;  // 1 MiB of floats
  float* host = nullptr;
  cudaMallocHost(&host, n * sizeof(float));
  for (int i = 0; i < n; ++i) host[i] = 1.0f;
  float *x = nullptr, *y = nullptr;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(y, 0, n * sizeof(float));
  for (int i = 0; i < 3; ++i) scale<<<64, 256>>>(x, 2.0f, 64 * 256);
  add<<<dim3(8, 2, 1), dim3(128, 2, 1)>>>(x, y, 8 * 2 * 256);
  cudaMemcpy(host, x, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaDeviceSynchronize();
  printf("%s %.1f\n", host[0] == 8.0f ? "ok" : "WRONG", host[0]);
  cudaFree(x);
  cudaFree(y);
  cudaFreeHost(host);
  return 0;
}
