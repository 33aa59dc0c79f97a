// GEMM calls in the roof model: the shape of a cuBLAS / cuBLASLt call (or a
// framework matmul an importer read), the precision class its FLOPs count
// against, its FLOPs and its minimum DRAM bytes. The one classifier of GEMM
// precision in the project: libinject tags each call with it on the wire and
// the collector and importers classify with it too, so the producer and the
// consumer can never disagree.
//
// Pure functions; thread-safe. Needs nothing but the standard library (the
// injected library links it), and no CUDA header: the cudaDataType_t and
// cublasComputeType_t values it reads are spelled out below.
#ifndef ROOFTRACE_MODEL_GEMM_H_
#define ROOFTRACE_MODEL_GEMM_H_

#include <cstdint>

#include "model/precision.h"

namespace rooftrace {

// cudaDataType_t values (library_types.h).
namespace cuda_type {
inline constexpr int32_t kR32F = 0, kR64F = 1, kR16F = 2, kR8I = 3, kC32F = 4,
                         kC64F = 5, kC16F = 6, kR8U = 8, kR32I = 10,
                         kR32U = 12, kR16BF = 14, kR16I = 20, kR64I = 24,
                         kR8FE4M3 = 28,
                         kR8FE5M2 = 29, kR4FE2M1 = 33;
}  // namespace cuda_type

// cublasComputeType_t values (cublas_api.h).
namespace cublas_compute {
inline constexpr int32_t k16F = 64, k16FPedantic = 65, k32F = 68,
                         k32FPedantic = 69, k64F = 70, k64FPedantic = 71,
                         k32I = 72, k32IPedantic = 73, k32FFast16F = 74,
                         k32FFast16BF = 75, k32FFastTf32 = 77,
                         k32FEmulated16BFx9 = 78,
                         k64FEmulatedFixedPoint = 79;
}  // namespace cublas_compute

// The parts of a GEMM the model needs (column-major:
// C[m x n] = op(A)[m x k] op(B)[k x n], `batch` times). Types are
// cudaDataType_t values (-1: not known); compute_type is a
// cublasComputeType_t or, for the legacy APIs, a cudaDataType_t (-1: not
// given).
struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int32_t a_type = -1, b_type = -1, c_type = -1, d_type = -1;
  int32_t compute_type = -1;
  // Elements of a bias added to the output in the same call, all batches
  // together (a framework addmm's input: n for a row vector, m*n for a
  // matrix); 0: none. Counts m*n*batch adds and its elements read.
  int64_t bias_elements = 0;
};

// Bytes per element of a cudaDataType_t; 0 when unknown.
int ElementBytes(int32_t cuda_data_type);

// The precision class the call's FLOPs count against:
//  - fp8 inputs: fp8-tensor, whatever the compute type;
//  - compute 16F, 32F_FAST_16F/16BF, 32F_EMULATED_16BFX9: fp16/bf16-tensor;
//    32F_FAST_TF32: tf32-tensor; 64F (any form): fp64-tensor (DMMA; the
//    roof falls back to the fp64 peak where there is no tensor figure);
//    32I: int8-tensor for int8 inputs;
//  - compute 32F (or a legacy data-type compute, or none given): by the
//    input type: fp16/bf16 -> fp16/bf16-tensor, int8 -> int8-tensor,
//    fp32 -> fp32, fp64 -> fp64-tensor;
//  - kUnknown when the types say nothing (an unknown input or compute type).
Precision GemmPrecision(const GemmShape& g);
// 2 * m * n * k * batch, plus m * n * batch with a bias (0 for a degenerate
// shape).
uint64_t GemmFlops(const GemmShape& g);
// (m*k*size(A) + k*n*size(B) + m*n*size(D)) * batch: each operand read or
// written once, a lower bound on DRAM traffic. With one element size for all
// operands this is (M*K + K*N + M*N) * elem_bytes * batch. A bias adds its
// elements at the output's size. 0 when a type is unknown.
uint64_t GemmMinBytes(const GemmShape& g);

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_GEMM_H_
