// Launchers of rooftrace's own CUDA kernels (device_kernels.cu): STREAM
// copy/triad, the GELU kernel of seed 000's non-fused MLP, the tiled fp32
// CUDA-core GEMM and the bf16 tensor-core (mma.sync) GEMM, and fills.
// Every launcher is asynchronous on `stream` and returns the launch error.
//
// Layouts: all matrices row-major. C[MxN] = A[MxK] * B[KxN].
// The own GEMMs need M, N multiples of 64 and K a multiple of 16 (checked:
// kInvalidArgument otherwise); the bf16 one needs sm_80 or newer.
#ifndef ROOFTRACE_KERNELS_GPU_DEVICE_KERNELS_H_
#define ROOFTRACE_KERNELS_GPU_DEVICE_KERNELS_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace rooftrace::kernels::gpu {

// Element types the fill kernel writes: uniform values in [-scale, scale)
// from a hash of (seed, index), so runs are reproducible.
enum class FillType { kFp64, kFp32, kFp16, kBf16, kFp8E4M3, kInt8 };
Status LaunchFill(void* data, size_t n, FillType type, uint32_t seed,
                  float scale, cudaStream_t stream);

// c[i] = a[i] (n floats; n a multiple of 4, pointers 16-byte aligned).
Status LaunchStreamCopy(const float* a, float* c, size_t n,
                        cudaStream_t stream);
// a[i] = b[i] + s * c[i].
Status LaunchStreamTriad(float* a, const float* b, const float* c, float s,
                         size_t n, cudaStream_t stream);

// y[i] = gelu(x[i]) (tanh form), fp16, n even.
Status LaunchGeluFp16(const __half* x, __half* y, size_t n,
                      cudaStream_t stream);

inline constexpr int kOwnGemmTileM = 64;
inline constexpr int kOwnGemmTileN = 64;
inline constexpr int kOwnGemmTileK = 16;

Status LaunchOwnSgemm(int m, int n, int k, const float* a, const float* b,
                      float* c, cudaStream_t stream);
// bf16 inputs, fp32 accumulate and output.
Status LaunchOwnBf16Gemm(int m, int n, int k, const __nv_bfloat16* a,
                         const __nv_bfloat16* b, float* c,
                         cudaStream_t stream);

}  // namespace rooftrace::kernels::gpu

#endif  // ROOFTRACE_KERNELS_GPU_DEVICE_KERNELS_H_
