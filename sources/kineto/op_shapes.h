// The analytic figures of a PyTorch operator other than a GEMM, from the
// shapes, types and scalar values the profiler recorded for its inputs
// (record_shapes=True: "Input Dims", "Input type", "Concrete Inputs",
// "Input Strides"; every tensor an operator reads is counted at its stored
// elements, StoredElementsOf):
// attention (scaled_dot_product_attention and the flash, efficient and
// cuDNN forms it dispatches to), convolution (conv1d/2d/3d, convolution,
// _convolution, cudnn_convolution; not transposed) and the pointwise
// operators of model/ops.h (elementwise, layer_norm, rms_norm, softmax),
// serving engines' norms, activations, rotary, cache writes and
// quantisation, reductions, gathers, top-k and sorts, and MoE routing
// steps run as operators of their own (triton_kernels' TopK and
// SortTokens, vLLM's topk_softmax and moe_align_block_size).
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

#include "model/model_facts.h"
#include "model/precision.h"
#include "pipeline/serving_step.h"
#include "sources/kineto/gemm_shapes.h"

namespace rooftrace::kineto {

// What an OpRecord carries (pipeline/records.h).
struct OpFigures {
  uint64_t flops = 0;
  uint64_t min_bytes = 0;
  Precision precision = Precision::kUnknown;
  std::string shape;  // "b=1 h=8 lq=141 lk=141 d=64", "1x141x512"
  // Of min_bytes, the output a second kernel of the operator writes when
  // it runs one (a split-KV attention's reduce: model/ops.h
  // ServingAttentionOutputBytes); 0 for operators not split so.
  uint64_t output_bytes = 0;
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

// The elements input `t`'s memory holds, what an operator reading it
// reads: model/ops.h StoredElements of its dimensions and strides when the
// trace gave strides that store fewer (a stride-0 broadcast or expanded
// dimension is read once), else the product of its dimensions.
int64_t StoredElementsOf(const OpInput& t);

// Whether `name` is one of the operators above, or an Inductor Triton
// pointwise kernel's own record (IsTritonPointwiseOp).
bool IsModelledOp(std::string_view name);

// Whether `name` is the record Inductor writes around a Triton pointwise
// kernel it generated ("triton_poi_fused_..."): its inputs are the
// kernel's buffers and, last, the elements it sweeps (model/ops.h
// TritonPointwiseMinBytes gives its bytes).
bool IsTritonPointwiseOp(std::string_view name);

// The figures of operator `name` with `inputs`; nullopt when the inputs
// are not those of the operator (missing tensors, mismatched ranks, an
// unknown type, a transposed convolution).
std::optional<OpFigures> FiguresOfOp(std::string_view name,
                                     const OpInputs& inputs);

// Operators whose figures need more than their inputs say.
//
// Serving attention (vllm::unified_attention(_with_output), aiter's and
// SGLang's paged_attention_ragged, aiter::mha_batch_prefill): the inputs
// give the heads and widths, the step annotation around the call (or
// around the graph launch that replays it) the KV lengths
// (pipeline/serving_step.h). What the inputs give, kept apart so that a
// captured call can be costed with the step of each replay:
struct ServingAttentionArgs {
  int64_t tokens = 0;  // query rows the call was given (padding included)
  int64_t heads = 0, kv_heads = 0, head_dim = 0, head_dim_v = 0;
  int q_bytes = 0, kv_bytes = 0;
  int32_t q_type = -1;  // cudaDataType_t
};
bool IsServingAttentionOp(std::string_view name);
std::optional<ServingAttentionArgs> ServingAttentionArgsOf(
    std::string_view name, const OpInputs& inputs);
// Whether the call's key input is the paged cache itself (aiter's and
// SGLang's ragged paged attention), not the new tokens' keys (vLLM's).
bool ServingAttentionKeyIsCache(std::string_view name);
// Whether the operator writes the KV cache (the cache-write family:
// vLLM's _C_cache_ops::reshape_and_cache(_flash), SGLang's store_cache),
// and the element size of the cache such a write's inputs (key, value,
// key_cache, ...) name: an fp8 cache is one byte; 0 when unknown.
bool IsKvCacheWriteOp(std::string_view name);
int KvCacheElementBytes(const OpInputs& inputs);
// nullopt when the step gives no sq/sk aggregates, or more tokens than
// the call was given (the annotation is not this call's step). `window`:
// the sliding window of the call's layer (0: full attention; --model
// says which layers have one, model/model_config.h), in the shape as
// "window=W".
std::optional<OpFigures> ServingAttentionFigures(
    const ServingAttentionArgs& args, const ServingStep& step,
    int64_t window = 0);

// A mixture-of-experts layer run as two grouped GEMMs (vllm::moe_forward,
// moe_forward_shared: hidden states [tokens, hidden] and router logits
// [tokens, experts]): top-k and an expert's width come from the model
// (--model). Padded layouts are followed: when the call's hidden size is
// the model's rounded up to a multiple of 64..1024 (vLLM pads gpt-oss's
// 2880 to 3072 for MXFP4), the expert width is rounded up alike.
struct MoeFigures {
  OpFigures up, down, finalize;
};
bool IsMoeOp(std::string_view name);
// How a layer ran, beyond what its inputs say.
struct MoeRun {
  // The up projection's epilogue applies the gated activation (it writes
  // inter, not 2 inter).
  bool fused_activation = true;
  // The grouped GEMMs' precision class as their kernel's name gives it
  // (model/ops.h BatchedGemmNamePrecision); kUnknown: the activations'.
  Precision kernel_precision = Precision::kUnknown;
  // The tensor-parallel degree: each rank holds 1/tp of every expert's
  // width (vLLM's default for MoE under tensor parallelism). With expert
  // parallelism instead each rank holds 1/tp of the experts whole, and
  // the same FLOPs on average.
  int64_t tensor_parallel = 1;
};
// nullopt when the inputs are not the layer's, the model is no MoE, or
// its sizes do not fit the call (a different model's config).
std::optional<MoeFigures> MoeFiguresOf(const OpInputs& inputs,
                                       const ModelFacts& model,
                                       const MoeRun& run);
// The layer's routing (model/ops.h MoeRoutingOp) from its router logits
// [tokens, experts] and the model's top-k; nullopt as MoeFiguresOf.
std::optional<OpFigures> MoeRoutingFiguresOf(const OpInputs& inputs,
                                             const ModelFacts& model);
// An all-reduce run outside NCCL by an operator whose first tensor (vLLM's
// custom all-reduce: its second) is the message: PyTorch's symmetric-memory
// all-reduces (symm_mem::multimem_all_reduce_, one_shot_all_reduce,
// two_shot_all_reduce_) and vLLM's _C_custom_ar::all_reduce. The index of
// that tensor, or -1 for any other operator.
int AllReduceMessageInput(std::string_view name);

// A concatenation (aten::cat, whose first input is a list of tensors): its
// inputs read once and the output written, 2 x their elements, no FLOPs.
// The profiler records a list's shapes but not its tensors' type, so the
// element size comes from the kernel's name: PyTorch's cat kernels are
// instantiated on an opaque type of the element's size
// (CatArrayBatchedCopy<OpaqueType<2u>, ...>). Without it: no figures.
bool IsCatOp(std::string_view name);
// The N of "OpaqueType<N"; 0 when the name holds none.
int OpaqueElementBytes(std::string_view kernel);
std::optional<OpFigures> CatFigures(const OpInputs& inputs, int element_bytes);

// Whether a kernel an MoE operator launches is one of its grouped GEMMs
// (triton_kernels' _matmul_ogs_*, fused_moe_kernel, bmm_*, *moe_gemm*; not
// the routing, padding or _finalize_matmul_scatter kernels), and whether
// its epilogue applies the gated activation (_swiglu, silu, gelu).
bool IsMoeGemmKernel(std::string_view kernel);
bool IsFusedActivationKernel(std::string_view kernel);
// Whether it is the layer's finalize (combine) kernel
// (_finalize_matmul_scatter, moe_sum, ...combine...).
bool IsMoeFinalizeKernel(std::string_view kernel);
// Whether it is one of the layer's routing kernels (top-k over the
// router's logits: ...routing..., ...topk..., case aside); the longest of
// them carries the routing's figures.
bool IsMoeRoutingKernel(std::string_view kernel);

}  // namespace rooftrace::kineto

#endif  // ROOFTRACE_SOURCES_KINETO_OP_SHAPES_H_
