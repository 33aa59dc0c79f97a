// The GEMM a PyTorch operator ran, from the shapes and types the profiler
// recorded for its inputs (record_shapes=True: a cpu_op's "Input Dims" and
// "Input type"): aten::mm, addmm, bmm, baddbmm, matmul, linear and
// _scaled_mm. FLOPs and bytes are not computed here: the GemmRecord goes
// through the pipeline's join like a cuBLAS call, which counts them with
// model/gemm.h.
//
// The record is in cuBLAS's column-major terms, the way libinject records
// the cuBLAS call PyTorch makes for the same operator, so that an imported
// trace and a libinject run of one model give the same shapes:
// out[M x N] = x[M x K] . w[K x N] (PyTorch, row-major) is cuBLAS's
// C[m x n] = op(A)[m x k] op(B)[k x n] with m = N, n = M, k = K and A the
// weight (for linear and addmm; "m=512 n=141 k=512" for 141 tokens through
// a 512 x 512 layer).
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_SOURCES_KINETO_GEMM_SHAPES_H_
#define ROOFTRACE_SOURCES_KINETO_GEMM_SHAPES_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "pipeline/records.h"

namespace rooftrace::kineto {

// Inputs kept per operator: enough for _flash_attention_forward's is_causal
// (the ninth) and _efficient_attention_forward's custom_mask_type (the
// tenth).
inline constexpr int kMaxOpInputs = 10;
inline constexpr int kMaxRank = 6;

// One input of an operator as the profiler recorded it.
struct OpInput {
  int rank = -1;  // -1: not a tensor (a scalar, a list, None)
  int64_t dims[kMaxRank] = {};
  // A list of tensors (aten::cat's "TensorList"): how many, and their
  // elements summed; 0 for anything else, -1 for a list with a shape that
  // is not all whole numbers.
  int list_size = 0;
  int64_t list_elements = 0;
  std::string_view type;  // "c10::BFloat16", "float", "Scalar", ""
  // The value of a scalar or list input as the profiler wrote it ("Concrete
  // Inputs": "True", "0.125", "[4, 4]"); empty for a tensor or when not
  // recorded.
  std::string_view concrete;
  // The tensor's strides in elements ("Input Strides"), kept only when they
  // make it hold fewer elements than its shape (model/ops.h
  // StoredElements: a stride-0 broadcast or expanded dimension, an
  // overlapping view). has_strides false: every element stored once
  // (contiguous, a plain non-contiguous view, or no strides recorded).
  bool has_strides = false;
  int64_t strides[kMaxRank] = {};
};


struct OpInputs {
  int count = 0;
  OpInput in[kMaxOpInputs];
};

// Whether `name` is one of the GEMM operators above.
bool IsGemmOp(std::string_view name);

// The cudaDataType_t (model/gemm.h's cuda_type) of a PyTorch scalar type
// name ("c10::BFloat16" -> kR16BF, "float" -> kR32F); -1 when unknown.
int32_t CudaTypeOfTorchType(std::string_view type);

// The GEMM of operator `name` with `inputs`: m, n, k, batch, types,
// bias_elements and weight_operand set; nullopt when the shapes are not
// those of the operator (missing, a list, mismatched inner dimensions).
// `in_linear`: the operator ran inside aten::linear, whose second input is
// the weight.
std::optional<GemmRecord> GemmOfOp(std::string_view name,
                                   const OpInputs& inputs, bool in_linear);

}  // namespace rooftrace::kineto

#endif  // ROOFTRACE_SOURCES_KINETO_GEMM_SHAPES_H_
