// Operations other than GEMMs in the roof model: attention, convolution and
// pointwise (elementwise, normalization, softmax) operators, whose FLOPs and
// minimum DRAM bytes a source computes from the shapes a framework recorded
// (pipeline/records.h OpRecord). Every figure here is analytic: FLOPs are
// the arithmetic the operator's definition needs, bytes each operand read or
// written once, a lower bound on DRAM traffic (intermediates such as
// attention's score matrix are assumed to stay on chip).
//
// Types are cudaDataType_t values (model/gemm.h cuda_type; -1: unknown).
// Pure functions; thread-safe. Needs nothing but the standard library.
#ifndef ROOFTRACE_MODEL_OPS_H_
#define ROOFTRACE_MODEL_OPS_H_

#include <cstdint>
#include <string_view>

#include "model/precision.h"

namespace rooftrace {

// softmax(Q K^T) V over `batch` x `heads` independent heads.
struct AttentionShape {
  int64_t batch = 0, heads = 0;
  int64_t kv_heads = 0;  // 0: heads (grouped-query attention has fewer)
  int64_t q_len = 0, kv_len = 0;
  int64_t head_dim = 0;
  int64_t head_dim_v = 0;  // 0: head_dim
  bool causal = false;
  int32_t type = -1;  // of Q, K, V and the output
};

// 2 * B * H * Lq * Lk * (D + Dv): Q K^T and P V, multiply and add each
// (4 * B * H * Lq * Lk * D when Dv = D); halved when causal (half of the
// score matrix is masked away). The softmax's few FLOPs per score are left
// out, as FlashAttention's papers and ncu's tensor-pipe count leave them.
// 0 for a degenerate shape.
uint64_t AttentionFlops(const AttentionShape& a);
// (Q + K + V + O) elements times the element size: B*H*Lq*D + B*Hkv*Lk*D +
// B*Hkv*Lk*Dv + B*H*Lq*Dv. 0 when the type is unknown.
uint64_t AttentionMinBytes(const AttentionShape& a);

inline constexpr int kMaxConvSpatial = 3;

// A forward convolution (not transposed): input N x Cin x spatial, weight
// Cout x Cin/groups x kernel, output N x Cout x out (out computed by the
// caller from stride, padding and dilation).
struct ConvShape {
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int spatial_rank = 0;  // 1, 2 or 3
  int64_t in_size[kMaxConvSpatial] = {}, kernel[kMaxConvSpatial] = {},
          out_size[kMaxConvSpatial] = {};
  bool bias = false;
  int32_t type = -1;
};

// Output spatial size of one dimension: floor((in + 2 pad - dilation *
// (kernel - 1) - 1) / stride) + 1; 0 when that is not positive.
int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride,
                       int64_t pad, int64_t dilation);
// 2 * N * Cout * prod(out) * (Cin / groups) * prod(kernel), plus
// N * Cout * prod(out) with a bias. 0 for a degenerate shape.
uint64_t ConvFlops(const ConvShape& c);
// (input + weight + output (+ bias)) elements times the element size.
uint64_t ConvMinBytes(const ConvShape& c);

// FLOPs per output element of a pointwise PyTorch operator, by its aten
// name without the "aten::" prefix; -1 for an operator not modelled:
//   add, sub, mul, div, rsub (and in-place _ forms), relu, neg: 1;
//   sigmoid, silu (x * sigmoid(x)): 4; tanh: 4; gelu: 8 (erf or tanh
//   form, counted as for the tanh approximation: x^3 term, multiply-adds,
//   tanh, scale); softmax, _softmax, log_softmax: 5 (max, subtract, exp,
//   sum, divide); layer_norm, native_layer_norm: 7 (mean, centre, square-
//   accumulate twice, normalise, affine scale and shift); rms_norm,
//   _fused_rms_norm: 4 (square-accumulate, normalise, scale); copy_,
//   clone, contiguous, to, _to_copy, fill_, zero_: 0 (data movement);
//   the elementary math functions (exp, log, sqrt, rsqrt, pow, sin, cos,
//   abs, reciprocal, erf, ...), comparisons, min/max of two tensors,
//   where, masked_fill and clamp: 1 each, as TraceLens counts a unary or
//   binary elementwise operator (a transcendental function is one
//   special-function instruction, not the series a library might run);
//   addcmul, addcdiv, lerp: 2. An in-place form ("exp_") is its
//   operator's.
// These are conventions, not measurements: the point of a pointwise
// operator on a roofline is its bytes, whose arithmetic intensity is far
// below any ridge whatever the count.
int PointwiseFlopsPerElement(std::string_view op);

// A pointwise operator: `elements` outputs, `flops_per_element` each, and
// every input and output read or written once.
struct PointwiseOp {
  int64_t elements = 0;
  int flops_per_element = 0;
  uint64_t input_bytes = 0, output_bytes = 0;
};
uint64_t PointwiseFlops(const PointwiseOp& p);
uint64_t PointwiseMinBytes(const PointwiseOp& p);

// A reduction (sum, mean, max, min, argmax, prod, norm, cumsum, ...):
// `in_elements` read, `out_elements` written (a scan writes as many as it
// reads), plus an int64 index per output for the forms that return one
// (argmax, max along a dimension). One FLOP per input element: the
// combining add, multiply or comparison, as TraceLens counts a reduction
// (the mean's final divide and a norm's square are left out: a few per
// output, or one more per input that does not move a reduction off its
// bandwidth).
struct ReductionOp {
  int64_t in_elements = 0, out_elements = 0;
  int in_element_bytes = 0, out_element_bytes = 0;
  bool writes_index = false;  // an int64 index per output as well
};
uint64_t ReductionFlops(const ReductionOp& r);
// 0 when an element size is unknown (<= 0).
uint64_t ReductionMinBytes(const ReductionOp& r);

// A row normalisation over `rows` x `cols` activations, RMS or layer norm,
// optionally fused with the residual add before it (vLLM's
// fused_add_rms_norm, SGLang's fused_add_rmsnorm, aiter's add_rmsnorm).
// FLOPs per element: RMS 4 (square, accumulate, scale by the reciprocal
// root, scale by the weight) plus 2 per row (the mean's divide and the
// reciprocal square root), the count TraceLens gives; layer norm 7 per
// element (as PointwiseFlopsPerElement("layer_norm")) plus 2 per row; one
// more per element for a fused residual add.
// Bytes: `activation_bytes` is every activation-sized tensor the operator
// reads or writes, each once (input and output; with a fused add the
// residual read and the updated residual written too: four tensors), as
// the caller counts them from the operator's arguments; the weight (and a
// layer norm's bias) read once: `cols` x `param_element_bytes` each.
enum class NormKind : uint8_t { kRms, kLayer };
struct NormOp {
  NormKind kind = NormKind::kRms;
  int64_t rows = 0, cols = 0;
  bool fused_add = false;
  int params = 1;  // weight (1), weight and bias (2), none (0)
  uint64_t activation_bytes = 0;
  int param_element_bytes = 0;
};
uint64_t NormFlops(const NormOp& n);
uint64_t NormMinBytes(const NormOp& n);

// A gated activation: out[i] = act(x[i]) * x[i + d] over an input of
// 2d per row (SGLang's and vLLM's silu_and_mul, gelu_and_mul,
// gelu_tanh_and_mul). FLOPs per output element: the activation's
// PointwiseFlopsPerElement plus the gating multiply (silu 4 + 1 = 5, as
// TraceLens counts silu_and_mul). Bytes: the input (2 x out elements) read
// and the output written once.
struct GatedActivationOp {
  int64_t out_elements = 0;
  int activation_flops = 0;
  int element_bytes = 0;
};
uint64_t GatedActivationFlops(const GatedActivationOp& g);
uint64_t GatedActivationMinBytes(const GatedActivationOp& g);

// Rotary position embedding applied in place to the query and key
// (SGLang's and vLLM's rotary_embedding): of each head's `head_size`
// elements, `rotary_dim` are rotated, at 3 FLOPs each (two multiplies by
// cos and sin and their sum, as TraceLens counts RoPE). Bytes: the query
// and key read and written once; the positions and the cos/sin table
// (a few per token beside thousands of q and k elements) are left out, as
// TraceLens leaves them out, so the figure stays a lower bound.
struct RotaryOp {
  int64_t qk_elements = 0;  // query and key together
  int64_t head_size = 0, rotary_dim = 0;  // rotary_dim 0: head_size
  int element_bytes = 0;
};
uint64_t RotaryFlops(const RotaryOp& r);
uint64_t RotaryMinBytes(const RotaryOp& r);

// A KV-cache write (vLLM's reshape_and_cache(_flash), SGLang's
// store_cache): the new tokens' keys and values (`kv_elements` together)
// read at their type's size and written into the cache at the cache's
// (an fp8 cache stores a byte per element). No FLOPs (an fp8 cache's
// scaling is a multiply per element, not counted: data movement). The
// slot mapping (one index per token) is left out, as TraceLens does.
struct CacheWriteOp {
  int64_t kv_elements = 0;
  int source_element_bytes = 0, cache_element_bytes = 0;
};
uint64_t CacheWriteMinBytes(const CacheWriteOp& c);

// The elements a tensor's memory holds, from its dimensions and strides
// (in elements, as a profiler records them): the smaller of their product
// and the span the strides reach, 1 + sum of (dim - 1) x |stride|. A
// stride-0 (broadcast, expanded) dimension is so read once, not once per
// index: [15360, 4096] with strides [1, 0] holds 15,360 elements, not
// 62,914,560. Contiguous and merely non-contiguous views (a slice of a
// wider row) hold their product. 0 when a dimension is 0.
int64_t StoredElements(const int64_t* dims, const int64_t* strides, int rank);

// A gather of rows or elements by index (index_select, gather, embedding,
// index with one index tensor): `out_elements` gathered, each read once
// and written once, and the index read once: `index_elements` is the
// index's stored elements (StoredElements: a broadcast index, as
// gather's expanded one, is read once per stored element). No FLOPs.
struct GatherOp {
  int64_t out_elements = 0;
  int element_bytes = 0;
  int64_t index_elements = 0;
  int index_element_bytes = 0;
};
uint64_t GatherMinBytes(const GatherOp& g);

// Attention over one serving step's ragged batch, as vLLM's
// unified_attention and the paged attention of SGLang and aiter run it:
// prefill ("context") requests attend causally to their own new tokens
// and to what their cache already holds; decode ("generation") requests
// attend with each new token to their whole context. The step's
// requests are summed up as the engines' step annotations give them: per
// group, sq = new (query) tokens, sk = tokens attended to (cached and
// new), sqsq = sum of sq^2, sqsk = sum of sq * sk over its requests.
// FLOPs, per head and per Q K^T or P V product of width d: a context
// request's scores number sq * sk less the masked half of its own
// sq x sq block, so 2 d (sqsk) - d (sqsq) over the context group; a
// generation request's 2 d sqsk. Summed over both products (d_qk and
// d_v) and the query heads. These equal TraceLens's figures for the same
// aggregates.
// Bytes: Q read and the output written for every new token (query
// heads), the new tokens' K and V read (KV heads) at the query's size,
// and the cached K and V read once, (sk - sq) tokens per group, at the
// cache's element size (an fp8 cache: 1). The per-request metadata
// (block tables, lengths) is left out: a lower bound.
// A sliding-window layer (`window` w > 0: a query sees itself and the
// w - 1 tokens before it) caps both: each query multiplies at most w keys
// (FLOPs: a group's scores at most sq x w), and each request reads at most
// w - 1 cached tokens (bytes: a group's cached tokens at most its requests
// x (w - 1); a group's request count, when not given, at most its sq).
// From the step's aggregates alone these caps are exact when every
// request's context reaches past the window, as in long-context serving,
// and otherwise an upper bound of the windowed work that is still never
// above the full-attention figure.
struct ServingAttentionOp {
  int64_t c_sq = 0, c_sk = 0, c_sqsq = 0, c_sqsk = 0;
  int64_t g_sq = 0, g_sk = 0, g_sqsk = 0;
  int64_t c_requests = 0, g_requests = 0;  // 0: not given
  int64_t window = 0;                      // 0: full attention
  int64_t heads = 0, kv_heads = 0, head_dim = 0, head_dim_v = 0;
  int q_element_bytes = 0, kv_element_bytes = 0;
};
uint64_t ServingAttentionFlops(const ServingAttentionOp& a);
// 0 when an element size is unknown (<= 0).
uint64_t ServingAttentionMinBytes(const ServingAttentionOp& a);
// The output's share of ServingAttentionMinBytes: every new token's query
// heads x d_v written at the query's element size. A split-KV attention
// (paged decode that cuts each request's keys into partitions, as ROCm's
// paged_attention_ll4mi and vLLM's paged_attention_v2 do) runs a second
// kernel that combines the partitions' partial results and writes the
// output: that kernel carries these bytes, the first kernel the rest and
// every FLOP, so the two add up to the call's figures (TraceLens's). Each
// is a lower bound of its kernel's own traffic: the partial results the
// first writes and the second reads are not counted. 0 as
// ServingAttentionMinBytes.
uint64_t ServingAttentionOutputBytes(const ServingAttentionOp& a);
// Whether `kernel` is such a second kernel of a split-KV attention:
// "paged_attention_ll4mi_reduce_kernel", "paged_attention_v2_reduce_kernel"
// (names with "paged_attention" and "reduce"), FlashAttention's
// "flash_fwd_splitkv_combine_kernel".
bool IsAttentionReduceKernelName(std::string_view kernel);

// A pointwise kernel Inductor generated with Triton
// ("triton_poi_fused_constant_pad_nd_moe_forward_0"), as the profiler
// records it: an operator named after the kernel, whose arguments are the
// kernel's buffers, inputs and outputs alike (nothing says which is which)
// and, last, the count of elements it sweeps (xnumel). A pointwise kernel
// reads or writes each of its buffers once, whole: bytes = the buffers'
// stored elements times their element size, summed. FLOPs: none counted
// (the fusion's operations are not in the trace; TraceLens counts 0 too).
// A buffer of more elements than xnumel is indexed, not swept (a fused
// embedding reads a few rows of its table): how much of it is read is not
// known, and the kernel gets no figures (0). 0 too when xnumel or an
// element size is unknown (<= 0).
struct TritonBuffer {
  int64_t elements = 0;  // stored (StoredElements)
  int element_bytes = 0;
};
uint64_t TritonPointwiseMinBytes(const TritonBuffer* buffers, int count,
                                 int64_t xnumel);

// One of the two grouped GEMMs of a mixture-of-experts layer run without
// fusing them (vLLM's moe_forward over triton_kernels' matmul_ogs, fused_moe
// and the like): `tokens` tokens each routed to `top_k` of `experts`
// experts. The up projection multiplies each routed token by its expert's
// hidden x (2 inter) gate-and-up weights (hidden x inter when not gated);
// the down projection by its inter x hidden weights. FLOPs: 2 * tokens *
// top_k * hidden * outputs (a multiply and an add per weight used).
// Bytes: the input activations read (up: tokens x hidden; down: tokens x
// top_k x inter), the weights of every expert that can be hit read once
// (min(experts, tokens x top_k) of them, at `weight_bits` per element:
// 4 for MXFP4, 16 for bf16; block scales left out) and the output written
// (up: tokens x top_k x inter when the activation is fused into the
// GEMM's epilogue, else 2 inter; down: tokens x hidden, the routed rows
// summed back into one per token). The same figures as TraceLens's
// MoE_unfused model, except that TraceLens reads every expert's weights
// even when fewer tokens than experts are routed.
struct MoeGemmOp {
  int64_t tokens = 0, hidden = 0, inter = 0;  // inter: per expert
  int64_t experts = 0, top_k = 0;
  bool up = true;           // the gate/up projection, else the down one
  bool gated = true;        // up projects to 2 inter (gate and up)
  bool fused_activation = true;  // up writes inter, not 2 inter
  int activation_bytes = 0;
  int weight_bits = 0;
};
uint64_t MoeGemmFlops(const MoeGemmOp& m);
// 0 when an element size is unknown (<= 0).
uint64_t MoeGemmMinBytes(const MoeGemmOp& m);
// The layer's finalize (combine): each token's top_k expert outputs, already
// weighted by their gates in the down projection's epilogue, summed into
// one row: top_k x hidden adds per token (counted as one FLOP per routed
// element); the routed rows read and the tokens' rows written at the
// activations' size. TraceLens does not model it.
uint64_t MoeFinalizeFlops(const MoeGemmOp& m);
uint64_t MoeFinalizeMinBytes(const MoeGemmOp& m);

// The routing of an MoE layer (a softmax or sigmoid over the router's
// logits, then each token's top_k experts): the logits read once and each
// token's top_k expert ids (int32) and gate weights (at the logits' size)
// written; 5 FLOPs per logit, softmax's convention above. Routing kernels
// that also build the experts' permutation move more: this is the floor.
// TraceLens does not model it.
struct MoeRoutingOp {
  int64_t tokens = 0, experts = 0, top_k = 0;
  int logit_bytes = 0;
};
uint64_t MoeRoutingFlops(const MoeRoutingOp& r);
// 0 when the logits' element size is unknown (<= 0).
uint64_t MoeRoutingMinBytes(const MoeRoutingOp& r);

// Top-k selection and sorting (aten::topk, sort, argsort; an MoE router's
// top-k, triton_kernels' TopK): comparisons, no FLOPs counted; bytes only.
// The input read once (its stored elements), the selected values written
// at the input's element size (none for argsort), one index each at
// `index_bytes`, and whatever else the operator is documented to write
// (`extra_output_bytes`: TopK's bit matrix of the experts hit). A lower
// bound: a sort of more elements than fit on chip passes over them several
// times, and a top-k may read its input more than once.
struct SelectionOp {
  int64_t in_elements = 0;  // stored elements read
  int in_element_bytes = 0;
  int64_t out_elements = 0;  // selected: k per row for top-k, all for sort
  bool writes_values = true;
  int index_bytes = 0;
  uint64_t extra_output_bytes = 0;
};
// 0 when an element size is unknown (<= 0).
uint64_t SelectionMinBytes(const SelectionOp& s);

// The sort of an MoE layer's routed (token, expert) pairs by expert before
// its grouped GEMMs (triton_kernels' SortTokens: given each token's top_k
// gate values and expert ids, and the bit matrix of experts hit): the
// gates, ids and bit matrix (one bit per expert, 32-bit words, a row per
// token) read; per routed pair two int32 indices (its place in the sorted
// order and back) and its gate value written, and one int32 count per
// expert. No FLOPs. A lower bound: the kernels' own scratch (partial
// histograms, the memset of the indices) is not counted.
struct MoeTokenSortOp {
  int64_t tokens = 0, top_k = 0, experts = 0;
  int gate_bytes = 0, id_bytes = 0;
};
// 0 when an element size is unknown (<= 0).
uint64_t MoeTokenSortMinBytes(const MoeTokenSortOp& s);

// The precision class a TensorRT-LLM-generated batched GEMM runs at, read
// from its name: "bmm_<out>_<A><B>_<acc>_..." names its operands' types
// ("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_..." multiplies MXFP4 weights by MXFP8
// activations). Both operands fp4 (E2m1): fp4-tensor; either 16-bit
// (Bfloat16, Fp16): fp16/bf16-tensor; otherwise fp8 (E4m3, E5m2) alone or
// with fp4: fp8-tensor, the rate at which Blackwell runs mixed fp8 x fp4
// products (its fp4 rate needs fp4 on both sides). kUnknown for any other
// name.
Precision BatchedGemmNamePrecision(std::string_view kernel);

// The precision class of a matrix-product operator (attention,
// convolution) over `type` inputs, by GemmPrecision's rule for a product
// whose compute type is not given: fp16/bf16 -> fp16/bf16-tensor, fp8 ->
// fp8-tensor, fp4 -> fp4-tensor, int8 -> int8-tensor, fp32 -> fp32 (cuDNN
// may use TF32; the fp32 roof is the stricter one), fp64 -> fp64-tensor
// (the fp64 peak where a GPU has no tensor figure); kUnknown otherwise.
Precision MatrixOpPrecision(int32_t type);
// The precision class of a pointwise operator over `type`: fp16 -> fp16,
// bf16 -> bf16 (CUDA cores, each its own class and roof), fp32 -> fp32,
// fp64 -> fp64, an integer type (int8, uint8, int16, int32, int64) ->
// int; kUnknown otherwise.
Precision PointwisePrecision(int32_t type);

// A collective communication call (NCCL, through torch.distributed), as
// NCCL's own performance tests report it. Its message is the larger of its
// input and output buffers (nccl-tests' size: an all_gather's output, a
// reduce_scatter's input, an all_reduce's either); the algorithm bandwidth
// is that message over the kernel's time, and the bus bandwidth the
// algorithm bandwidth times a factor of the collective and the number of
// ranks n that makes it comparable with the links' speed whatever n is:
//   all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n;
//   broadcast, reduce, send, recv 1.
// These are not DRAM bytes: a collective's figures never go on the roof.
enum class Collective : uint8_t {
  kUnknown = 0,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSend,
  kRecv,
};

// The collective of a PyTorch "Collective name" ("allreduce", "all_reduce",
// "_allgather_base", "all_gather_into_tensor_coalesced", "reduce_scatter",
// "_reduce_scatter_base", "all_to_all", "alltoall_base", "broadcast",
// "reduce", "send", "recv", ...) or of an NCCL kernel's name
// ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ncclKernel_AllGather_...",
// "ncclDevKernel_SendRecv" is kUnknown: its direction is not in the name).
// kUnknown for anything else (barrier, gather, scatter: not modelled).
Collective CollectiveFromName(std::string_view name);
// Whether a kernel is NCCL's (its name starts "nccl"), whether or not its
// collective can be told from the name.
bool IsNcclKernelName(std::string_view name);
// Whether a kernel communicates between GPUs: NCCL's, or an all-reduce that
// serving engines run outside NCCL: PyTorch's symmetric-memory kernels
// ("c10d::symmetric_memory::multimem_all_reduce_kernel",
// "one_shot_all_reduce_kernel", "two_shot_all_reduce_kernel"), vLLM's and
// SGLang's custom all-reduce ("vllm::cross_device_reduce_1stage",
// "sglang::cross_device_reduce_2stage"), TensorRT-LLM's
// ("oneShotAllReduceKernel", "twoShotAllReduceKernel",
// "allreduce_fusion_kernel..."). A bare "AllReduce" is not enough (CUB's
// block reductions carry it). DeepEP's dispatch and combine are not
// matched: their traffic depends on routing, not on a message.
bool IsCommunicationKernelName(std::string_view name);
// The category of a framework operator, by its name, as TraceLens groups
// operators: "GEMM" (mm, addmm, bmm, matmul, linear, _scaled_mm),
// "attention" (names with attention, attn, mha, fmha, flash),
// "convolution", "norm" (rms and layer norms, fused or not), "reduce"
// (sum, mean, max, min, argmax, prod, cumsum, softmax, topk, sort, ...),
// "communication" (collectives, all_reduce and the like), "moe" (names
// with moe or expert), "kv-cache" (cache writes), "data movement" (copy_,
// clone, to, cat, index, gather, embedding, fill_, zero_, ...),
// "quantize" (quant), "elementwise" (the pointwise operators of
// PointwiseFlopsPerElement, rotary embeddings, gated activations), and
// "other". Namespaces ("aten::", "_C::", "aiter::") do not matter.
std::string_view OpCategory(std::string_view op_name);

// "all_reduce", "all_gather", ...; "unknown".
const char* CollectiveName(Collective c);

// The bus-bandwidth factor above for `ranks` ranks; -1 (unknown) when the
// collective is unknown or ranks < 1. A group of one moves nothing over a
// link: 0 for the factors that depend on n.
double CollectiveBusFactor(Collective c, int64_t ranks);

// The message of one call: max(in, out) elements times `element_bytes`;
// 0 when the element size is unknown (<= 0) or both counts are.
uint64_t CollectiveMessageBytes(int64_t in_elements, int64_t out_elements,
                                int element_bytes);

// One collective kernel's bandwidths, in bytes per second. algbw is 0 when
// the message or the duration is; busbw is -1 (unknown) when the factor
// is (CollectiveBusFactor < 0), never guessed.
struct CollectiveBandwidth {
  double algbw = 0;
  double busbw = -1;
};
CollectiveBandwidth CollectiveBandwidthOf(Collective c, int64_t ranks,
                                          uint64_t message_bytes,
                                          uint64_t duration_ns);

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_OPS_H_
