// The analytic figures of a PyTorch operator other than a GEMM, from the
// shapes, types and scalar values the profiler recorded for its inputs
// (record_shapes=True: "Input Dims", "Input type", "Concrete Inputs"):
// attention (scaled_dot_product_attention and the flash, efficient and
// cuDNN forms it dispatches to), convolution (conv1d/2d/3d, convolution,
// _convolution, cudnn_convolution; not transposed) and the pointwise
// operators of model/ops.h (elementwise, layer_norm, rms_norm, softmax).
// The figures are model/ops.h's; this file only reads the operator's
// arguments.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_SOURCES_KINETO_OP_SHAPES_H_
#define ROOFTRACE_SOURCES_KINETO_OP_SHAPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/precision.h"
#include "sources/kineto/gemm_shapes.h"

namespace rooftrace::kineto {

// What an OpRecord carries (pipeline/records.h).
struct OpFigures {
  uint64_t flops = 0;
  uint64_t min_bytes = 0;
  Precision precision = Precision::kUnknown;
  std::string shape;  // "b=1 h=8 lq=141 lk=141 d=64", "1x141x512"
};

// A PyTorch dtype in the three spellings traces use: c10::ScalarType's
// name (record_param_comms' "dtype": "BFloat16", "Long"), torch's
// ("bfloat16", "int64", "torch.int64"; newer hooks and other tools) and
// the C++ type name of an operator's "Input type" ("c10::BFloat16",
// "long int").
struct TorchDtype {
  std::string_view scalar_type, torch_name, cpp_name;
  int bytes;                    // of one element
  std::string_view short_name;  // in shape texts: "bf16", "int64"
};
// The dtype of any of those spellings; nullptr for anything else
// ("Scalar", "TensorList", "").
const TorchDtype* FindTorchDtype(std::string_view dtype);
// Its element size; 0 when unknown.
int TorchTypeBytes(std::string_view dtype);

// Whether `name` is one of the operators above.
bool IsModelledOp(std::string_view name);

// The figures of operator `name` with `inputs`; nullopt when the inputs
// are not those of the operator (missing tensors, mismatched ranks, an
// unknown type, a transposed convolution).
std::optional<OpFigures> FiguresOfOp(std::string_view name,
                                     const OpInputs& inputs);

}  // namespace rooftrace::kineto

#endif  // ROOFTRACE_SOURCES_KINETO_OP_SHAPES_H_
