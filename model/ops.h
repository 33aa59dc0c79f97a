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
//   clone, contiguous, to, _to_copy, fill_, zero_: 0 (data movement).
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

// The precision class of a matrix-product operator (attention,
// convolution) over `type` inputs, by GemmPrecision's rule for a product
// whose compute type is not given: fp16/bf16 -> fp16/bf16-tensor, fp8 ->
// fp8-tensor, int8 -> int8-tensor, fp32 -> fp32 (cuDNN may use TF32; the
// fp32 roof is the stricter one), fp64 -> fp64-tensor (the fp64 peak where
// a GPU has no tensor figure); kUnknown otherwise.
Precision MatrixOpPrecision(int32_t type);
// The precision class of a pointwise operator over `type`: fp16/bf16 ->
// fp16 (CUDA cores), fp32 -> fp32, fp64 -> fp64; kUnknown otherwise.
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
