#include "model/ops.h"

#include <cstdint>

#include <algorithm>
#include <initializer_list>

#include "model/gemm.h"

namespace rooftrace {
namespace {

uint64_t U(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

struct PointwiseEntry {
  std::string_view name;
  int flops;
};
constexpr PointwiseEntry kPointwise[] = {
    {"add", 1},     {"add_", 1},         {"sub", 1},
    {"sub_", 1},    {"mul", 1},          {"mul_", 1},
    {"div", 1},     {"div_", 1},         {"rsub", 1},
    {"relu", 1},    {"relu_", 1},        {"neg", 1},
    {"sigmoid", 4}, {"silu", 4},         {"silu_", 4},
    {"tanh", 4},    {"gelu", 8},         {"gelu_", 8},
    {"softmax", 5}, {"_softmax", 5},     {"log_softmax", 5},
    {"_log_softmax", 5},                 {"layer_norm", 7},
    {"native_layer_norm", 7},            {"rms_norm", 4},
    {"_fused_rms_norm", 4},              {"copy_", 0},
    {"clone", 0},   {"contiguous", 0},   {"to", 0},
    {"_to_copy", 0}, {"fill_", 0},       {"zero_", 0},
    // Elementary math, comparisons and selections: one each.
    {"exp", 1},     {"exp2", 1},         {"expm1", 1},
    {"log", 1},     {"log2", 1},         {"log10", 1},
    {"log1p", 1},   {"sqrt", 1},         {"rsqrt", 1},
    {"pow", 1},     {"square", 1},       {"sin", 1},
    {"cos", 1},     {"tan", 1},          {"abs", 1},
    {"reciprocal", 1},                   {"erf", 1},
    {"erfc", 1},    {"sign", 1},         {"floor", 1},
    {"ceil", 1},    {"round", 1},        {"trunc", 1},
    {"clamp", 1},   {"clamp_min", 1},    {"clamp_max", 1},
    {"clip", 1},    {"maximum", 1},      {"minimum", 1},
    {"fmax", 1},    {"fmin", 1},         {"where", 1},
    {"masked_fill", 1},                  {"eq", 1},
    {"ne", 1},      {"lt", 1},           {"le", 1},
    {"gt", 1},      {"ge", 1},           {"logical_and", 1},
    {"logical_or", 1},                   {"logical_not", 1},
    {"bitwise_and", 1},                  {"bitwise_or", 1},
    {"bitwise_not", 1},                  {"bitwise_xor", 1},
    {"remainder", 1},                    {"fmod", 1},
    {"floor_divide", 1},                 {"true_divide", 1},
    {"hardtanh", 1},                     {"leaky_relu", 2},
    {"elu", 4},     {"softplus", 4},     {"mish", 8},
    {"addcmul", 2}, {"addcdiv", 2},      {"lerp", 2},
};

}  // namespace

uint64_t AttentionFlops(const AttentionShape& a) {
  const int64_t dv = a.head_dim_v > 0 ? a.head_dim_v : a.head_dim;
  const uint64_t f = 2 * U(a.batch) * U(a.heads) * U(a.q_len) *
                     U(a.kv_len) * (U(a.head_dim) + U(dv));
  return a.causal ? f / 2 : f;
}

uint64_t AttentionMinBytes(const AttentionShape& a) {
  const int size = ElementBytes(a.type);
  const int64_t dv = a.head_dim_v > 0 ? a.head_dim_v : a.head_dim;
  const int64_t hkv = a.kv_heads > 0 ? a.kv_heads : a.heads;
  const uint64_t q = U(a.batch) * U(a.heads) * U(a.q_len) * U(a.head_dim);
  const uint64_t k = U(a.batch) * U(hkv) * U(a.kv_len) * U(a.head_dim);
  const uint64_t v = U(a.batch) * U(hkv) * U(a.kv_len) * U(dv);
  const uint64_t o = U(a.batch) * U(a.heads) * U(a.q_len) * U(dv);
  return (q + k + v + o) * static_cast<uint64_t>(size);
}

int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride,
                       int64_t pad, int64_t dilation) {
  if (stride <= 0) return 0;
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  return span >= 0 ? span / stride + 1 : 0;
}

namespace {

// Spatial products of a convolution: out, kernel and input positions.
struct ConvCounts {
  uint64_t out = 1, kernel = 1, in = 1;
};
ConvCounts CountsOf(const ConvShape& c) {
  ConvCounts n;
  if (c.spatial_rank < 1 || c.spatial_rank > kMaxConvSpatial) return {0, 0, 0};
  for (int i = 0; i < c.spatial_rank; ++i) {
    n.out *= U(c.out_size[i]);
    n.kernel *= U(c.kernel[i]);
    n.in *= U(c.in_size[i]);
  }
  return n;
}

}  // namespace

uint64_t ConvFlops(const ConvShape& c) {
  if (c.groups <= 0 || c.in_channels % c.groups != 0) return 0;
  const ConvCounts n = CountsOf(c);
  const uint64_t outputs = U(c.batch) * U(c.out_channels) * n.out;
  const uint64_t cin_per_group = U(c.in_channels / c.groups);
  if (outputs == 0 || cin_per_group == 0 || n.kernel == 0) return 0;
  return 2 * outputs * cin_per_group * n.kernel + (c.bias ? outputs : 0);
}

uint64_t ConvMinBytes(const ConvShape& c) {
  if (c.groups <= 0) return 0;
  const ConvCounts n = CountsOf(c);
  const uint64_t input = U(c.batch) * U(c.in_channels) * n.in;
  const uint64_t weight =
      U(c.out_channels) * U(c.in_channels / c.groups) * n.kernel;
  const uint64_t output = U(c.batch) * U(c.out_channels) * n.out;
  const uint64_t bias = c.bias ? U(c.out_channels) : 0;
  return (input + weight + output + bias) *
         static_cast<uint64_t>(ElementBytes(c.type));
}

int PointwiseFlopsPerElement(std::string_view op) {
  for (const PointwiseEntry& e : kPointwise) {
    if (e.name == op) return e.flops;
  }
  // An in-place form not listed ("exp_", "masked_fill_") is its
  // operator's; the listed ones (copy_, fill_, zero_) matched above.
  if (op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_') {
    op.remove_suffix(1);
    for (const PointwiseEntry& e : kPointwise) {
      if (e.name == op) return e.flops;
    }
  }
  return -1;
}

uint64_t PointwiseFlops(const PointwiseOp& p) {
  return U(p.elements) * U(p.flops_per_element);
}

uint64_t PointwiseMinBytes(const PointwiseOp& p) {
  return p.input_bytes + p.output_bytes;
}

uint64_t ReductionFlops(const ReductionOp& r) { return U(r.in_elements); }

uint64_t ReductionMinBytes(const ReductionOp& r) {
  if (r.in_element_bytes <= 0 || r.out_element_bytes <= 0) return 0;
  const uint64_t out_each = static_cast<uint64_t>(r.out_element_bytes) +
                            (r.writes_index ? sizeof(int64_t) : 0);
  return U(r.in_elements) * static_cast<uint64_t>(r.in_element_bytes) +
         U(r.out_elements) * out_each;
}

uint64_t NormFlops(const NormOp& n) {
  const uint64_t per_element =
      (n.kind == NormKind::kRms ? 4 : 7) + (n.fused_add ? 1 : 0);
  return U(n.rows) * U(n.cols) * per_element + 2 * U(n.rows);
}

uint64_t NormMinBytes(const NormOp& n) {
  if (n.activation_bytes == 0) return 0;
  return n.activation_bytes + U(n.params) * U(n.cols) *
                                  static_cast<uint64_t>(
                                      n.param_element_bytes > 0
                                          ? n.param_element_bytes
                                          : 0);
}

uint64_t GatedActivationFlops(const GatedActivationOp& g) {
  return U(g.out_elements) * (U(g.activation_flops) + 1);
}

uint64_t GatedActivationMinBytes(const GatedActivationOp& g) {
  return 3 * U(g.out_elements) * U(g.element_bytes);
}

uint64_t RotaryFlops(const RotaryOp& r) {
  if (r.head_size <= 0) return 0;
  const int64_t dim =
      r.rotary_dim > 0 && r.rotary_dim < r.head_size ? r.rotary_dim
                                                     : r.head_size;
  return 3 * (U(r.qk_elements) / U(r.head_size)) * U(dim);
}

uint64_t RotaryMinBytes(const RotaryOp& r) {
  return 2 * U(r.qk_elements) * U(r.element_bytes);
}

uint64_t CacheWriteMinBytes(const CacheWriteOp& c) {
  if (c.source_element_bytes <= 0 || c.cache_element_bytes <= 0) return 0;
  return U(c.kv_elements) *
         static_cast<uint64_t>(c.source_element_bytes + c.cache_element_bytes);
}

int64_t StoredElements(const int64_t* dims, const int64_t* strides,
                       int rank) {
  // 128 bits: a wide stride times a long dimension must not wrap.
  __int128 elements = 1, span = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] <= 0) return 0;
    elements *= dims[i];
    const int64_t stride = strides[i] < 0 ? -strides[i] : strides[i];
    span += static_cast<__int128>(dims[i] - 1) * stride;
  }
  const __int128 stored = span < elements ? span : elements;
  return stored > INT64_MAX ? INT64_MAX : static_cast<int64_t>(stored);
}

uint64_t GatherMinBytes(const GatherOp& g) {
  if (g.element_bytes <= 0) return 0;
  return 2 * U(g.out_elements) * U(g.element_bytes) +
         U(g.index_elements) * U(g.index_element_bytes);
}

uint64_t ServingAttentionFlops(const ServingAttentionOp& a) {
  if (a.heads <= 0 || a.head_dim <= 0) return 0;
  const int64_t dv = a.head_dim_v > 0 ? a.head_dim_v : a.head_dim;
  const uint64_t width = U(a.head_dim) + U(dv);  // Q K^T and P V
  // Twice each group's scores (a score is a multiply and an add per d).
  uint64_t context = 2 * U(a.c_sqsk) - std::min(2 * U(a.c_sqsk), U(a.c_sqsq));
  uint64_t generation = 2 * U(a.g_sqsk);
  if (a.window > 0) {
    context = std::min(context, 2 * U(a.c_sq) * U(a.window));
    generation = std::min(generation, 2 * U(a.g_sq) * U(a.window));
  }
  return U(a.heads) * width * (context + generation);
}

namespace {
// The cached tokens a group reads: sk - sq, capped for a window at
// (w - 1) per request (sq when the requests are not given).
uint64_t CachedTokens(int64_t sq, int64_t sk, int64_t requests,
                      int64_t window) {
  const uint64_t cached = U(sk) - std::min(U(sk), U(sq));
  if (window <= 0) return cached;
  const uint64_t n = requests > 0 ? U(requests) : U(sq);
  return std::min(cached, n * (U(window) - 1));
}
}  // namespace

uint64_t ServingAttentionMinBytes(const ServingAttentionOp& a) {
  if (a.q_element_bytes <= 0 || a.kv_element_bytes <= 0 || a.heads <= 0 ||
      a.head_dim <= 0) {
    return 0;
  }
  const int64_t dv = a.head_dim_v > 0 ? a.head_dim_v : a.head_dim;
  const int64_t kv_heads = a.kv_heads > 0 ? a.kv_heads : a.heads;
  const uint64_t new_tokens = U(a.c_sq) + U(a.g_sq);
  const uint64_t cached =
      CachedTokens(a.c_sq, a.c_sk, a.c_requests, a.window) +
      CachedTokens(a.g_sq, a.g_sk, a.g_requests, a.window);
  const uint64_t q_side = new_tokens * (U(a.heads) * (U(a.head_dim) + U(dv)) +
                                        U(kv_heads) * (U(a.head_dim) + U(dv)));
  const uint64_t kv_side = cached * U(kv_heads) * (U(a.head_dim) + U(dv));
  return q_side * U(a.q_element_bytes) + kv_side * U(a.kv_element_bytes);
}

uint64_t ServingAttentionOutputBytes(const ServingAttentionOp& a) {
  if (ServingAttentionMinBytes(a) == 0) return 0;
  const int64_t dv = a.head_dim_v > 0 ? a.head_dim_v : a.head_dim;
  return (U(a.c_sq) + U(a.g_sq)) * U(a.heads) * U(dv) *
         U(a.q_element_bytes);
}

bool IsAttentionReduceKernelName(std::string_view kernel) {
  const auto has = [&](std::string_view part) {
    return kernel.find(part) != std::string_view::npos;
  };
  return (has("paged_attention") && has("reduce")) ||
         has("splitkv_combine");
}

uint64_t SelectionMinBytes(const SelectionOp& s) {
  if (s.in_element_bytes <= 0 || s.index_bytes <= 0) return 0;
  const uint64_t per_output =
      U(s.index_bytes) + (s.writes_values ? U(s.in_element_bytes) : 0);
  return U(s.in_elements) * U(s.in_element_bytes) +
         U(s.out_elements) * per_output + s.extra_output_bytes;
}

uint64_t MoeTokenSortMinBytes(const MoeTokenSortOp& s) {
  if (s.gate_bytes <= 0 || s.id_bytes <= 0 || s.experts <= 0) return 0;
  const uint64_t pairs = U(s.tokens) * U(s.top_k);
  const uint64_t bitmatrix = U(s.tokens) * ((U(s.experts) + 31) / 32) * 4;
  const uint64_t read = pairs * (U(s.gate_bytes) + U(s.id_bytes)) + bitmatrix;
  const uint64_t written =
      pairs * (2 * sizeof(int32_t) + U(s.gate_bytes)) +
      U(s.experts) * sizeof(int32_t);
  return read + written;
}

uint64_t TritonPointwiseMinBytes(const TritonBuffer* buffers, int count,
                                 int64_t xnumel) {
  if (xnumel <= 0 || count <= 0) return 0;
  uint64_t bytes = 0;
  for (int i = 0; i < count; ++i) {
    const TritonBuffer& b = buffers[i];
    if (b.element_bytes <= 0 || b.elements < 0 || b.elements > xnumel) {
      return 0;
    }
    bytes += U(b.elements) * U(b.element_bytes);
  }
  return bytes;
}

uint64_t MoeGemmFlops(const MoeGemmOp& m) {
  const uint64_t outputs =
      m.up ? (m.gated ? 2 : 1) * U(m.inter) : U(m.hidden);
  const uint64_t inputs = m.up ? U(m.hidden) : U(m.inter);
  return 2 * U(m.tokens) * U(m.top_k) * inputs * outputs;
}

uint64_t MoeGemmMinBytes(const MoeGemmOp& m) {
  if (m.activation_bytes <= 0 || m.weight_bits <= 0) return 0;
  const uint64_t routed = U(m.tokens) * U(m.top_k);
  const uint64_t experts_hit = std::min(U(m.experts), routed);
  const uint64_t up_width = (m.gated ? 2 : 1) * U(m.inter);
  const uint64_t weights = experts_hit * U(m.hidden) *
                           (m.up ? up_width : U(m.inter));
  const uint64_t weight_bytes = weights * U(m.weight_bits) / 8;
  uint64_t activations = 0;
  if (m.up) {
    const uint64_t out_width = m.gated && !m.fused_activation ? up_width
                                                              : U(m.inter);
    activations = U(m.tokens) * U(m.hidden) + routed * out_width;
  } else {
    activations = routed * U(m.inter) + U(m.tokens) * U(m.hidden);
  }
  return activations * U(m.activation_bytes) + weight_bytes;
}

uint64_t MoeFinalizeFlops(const MoeGemmOp& m) {
  return U(m.tokens) * U(m.top_k) * U(m.hidden);
}

uint64_t MoeFinalizeMinBytes(const MoeGemmOp& m) {
  if (m.activation_bytes <= 0) return 0;
  return (U(m.tokens) * U(m.top_k) + U(m.tokens)) * U(m.hidden) *
         U(m.activation_bytes);
}

uint64_t MoeRoutingFlops(const MoeRoutingOp& r) {
  return 5 * U(r.tokens) * U(r.experts);
}

uint64_t MoeRoutingMinBytes(const MoeRoutingOp& r) {
  if (r.logit_bytes <= 0) return 0;
  return U(r.tokens) * U(r.experts) * U(r.logit_bytes) +
         U(r.tokens) * U(r.top_k) * (4 + U(r.logit_bytes));
}

Precision BatchedGemmNamePrecision(std::string_view kernel) {
  // The operand types, longest spelling first where one is a suffix of
  // another ("MxE4m3" before "E4m3"); bits per element.
  struct Type {
    std::string_view name;
    int bits;
  };
  static constexpr Type kTypes[] = {
      {"Bfloat16", 16}, {"Fp16", 16},  {"MxE4m3", 8}, {"MxE2m1", 4},
      {"E4m3", 8},      {"E5m2", 8},   {"E2m1", 4},
  };
  constexpr std::string_view kPrefix = "bmm_";
  size_t at = kernel.find(kPrefix);
  if (at == std::string_view::npos) {
    at = kernel.find("Bmm_");
    if (at == std::string_view::npos) return Precision::kUnknown;
  }
  if (at > 0 && kernel[at - 1] != ' ' && kernel[at - 1] != ':') {
    return Precision::kUnknown;  // part of another identifier
  }
  std::string_view rest = kernel.substr(at + kPrefix.size());
  const size_t out_end = rest.find('_');
  if (out_end == std::string_view::npos) return Precision::kUnknown;
  rest = rest.substr(out_end + 1);
  const std::string_view operands = rest.substr(0, rest.find('_'));
  int bits[2] = {0, 0};
  size_t pos = 0;
  for (int i = 0; i < 2; ++i) {
    for (const Type& t : kTypes) {
      if (operands.substr(pos, t.name.size()) == t.name) {
        bits[i] = t.bits;
        pos += t.name.size();
        break;
      }
    }
    if (bits[i] == 0) return Precision::kUnknown;
  }
  if (pos != operands.size()) return Precision::kUnknown;
  if (bits[0] == 16 || bits[1] == 16) return Precision::kFp16Tensor;
  if (bits[0] == 4 && bits[1] == 4) return Precision::kFp4Tensor;
  return Precision::kFp8Tensor;
}

Precision MatrixOpPrecision(int32_t type) {
  // The GEMM classifier's rule for a product with no compute type given:
  // one rule for every matrix product, whichever operator it comes from.
  GemmShape g;
  g.a_type = type;
  return GemmPrecision(g);
}

Precision PointwisePrecision(int32_t type) {
  switch (type) {
    case cuda_type::kR16F:
      return Precision::kFp16;
    case cuda_type::kR16BF:
      return Precision::kBf16;
    case cuda_type::kR32F:
      return Precision::kFp32;
    case cuda_type::kR64F:
      return Precision::kFp64;
    case cuda_type::kR8I:
    case cuda_type::kR8U:
    case cuda_type::kR16I:
    case cuda_type::kR32I:
    case cuda_type::kR64I:
      return Precision::kInt;
    default:
      return Precision::kUnknown;
  }
}

namespace {

struct CollectiveEntry {
  std::string_view name;
  Collective c;
};
// PyTorch's spellings of "Collective name" (ProcessGroupNCCL's
// RECORD_PARAM_COMMS calls and c10d's functional collectives).
constexpr CollectiveEntry kCollectives[] = {
    {"allreduce", Collective::kAllReduce},
    {"all_reduce", Collective::kAllReduce},
    {"allreduce_coalesced", Collective::kAllReduce},
    {"all_reduce_coalesced", Collective::kAllReduce},
    {"allgather", Collective::kAllGather},
    {"all_gather", Collective::kAllGather},
    {"_allgather_base", Collective::kAllGather},
    {"allgather_into_tensor_coalesced", Collective::kAllGather},
    {"all_gather_into_tensor_coalesced", Collective::kAllGather},
    {"allgather_coalesced", Collective::kAllGather},
    {"all_gather_base", Collective::kAllGather},
    {"reducescatter", Collective::kReduceScatter},
    {"reduce_scatter", Collective::kReduceScatter},
    {"_reduce_scatter_base", Collective::kReduceScatter},
    {"reduce_scatter_base", Collective::kReduceScatter},
    {"reduce_scatter_tensor_coalesced", Collective::kReduceScatter},
    {"alltoall", Collective::kAllToAll},
    {"all_to_all", Collective::kAllToAll},
    {"alltoall_base", Collective::kAllToAll},
    {"all_to_all_single", Collective::kAllToAll},
    {"all_to_allv", Collective::kAllToAll},
    {"broadcast", Collective::kBroadcast},
    {"reduce", Collective::kReduce},
    {"send", Collective::kSend},
    {"recv", Collective::kRecv},
};

// NCCL kernel names: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...)",
// "ncclKernel_AllGather_RING_LL_Sum_int8_t(...)".
constexpr CollectiveEntry kNcclKernelOps[] = {
    {"AllReduce", Collective::kAllReduce},
    {"AllGather", Collective::kAllGather},
    {"ReduceScatter", Collective::kReduceScatter},
    {"AllToAll", Collective::kAllToAll},
    {"Broadcast", Collective::kBroadcast},
    {"Reduce", Collective::kReduce},
};

}  // namespace

bool IsNcclKernelName(std::string_view name) {
  return name.substr(0, 4) == "nccl";
}

std::string_view OpCategory(std::string_view op_name) {
  const size_t ns = op_name.rfind("::");
  const std::string_view op =
      ns == std::string_view::npos ? op_name : op_name.substr(ns + 2);
  auto has = [&](std::string_view s) {
    return op.find(s) != std::string_view::npos;
  };
  auto is = [&](std::initializer_list<std::string_view> names) {
    for (std::string_view n : names) {
      if (op == n) return true;
    }
    return false;
  };
  if (is({"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "_scaled_mm",
          "addmv", "mv", "einsum"})) {
    return "GEMM";
  }
  if (CollectiveFromName(op) != Collective::kUnknown || has("all_reduce") ||
      has("allreduce") || has("all_gather") || has("reduce_scatter") ||
      has("all_to_all")) {
    return "communication";
  }
  // Before attention: vLLM's reshape_and_cache_flash writes the cache of
  // a flash backend.
  if (has("cache")) return "kv-cache";
  if (has("attention") || has("attn") || has("mha") || has("fmha") ||
      has("flash")) {
    return "attention";
  }
  if (has("moe") || has("expert")) return "moe";
  if (has("conv")) return "convolution";
  if (has("norm") && !is({"norm", "linalg_vector_norm"})) return "norm";
  if (has("quant")) return "quantize";
  if (is({"sum", "nansum", "mean", "amax", "amin", "max", "min", "argmax",
          "argmin", "prod", "cumsum", "cumprod", "logsumexp", "var", "std",
          "all", "any", "norm", "linalg_vector_norm", "softmax", "_softmax",
          "log_softmax", "_log_softmax", "topk", "sort", "argsort"})) {
    return "reduce";
  }
  if (is({"copy_", "clone", "contiguous", "to", "_to_copy", "cat", "stack",
          "index", "index_select", "gather", "embedding", "fill_", "zero_",
          "scatter", "scatter_", "index_put_", "repeat", "expand", "pad",
          "constant_pad_nd", "arange", "zeros", "ones", "full", "where"})) {
    return "data movement";
  }
  if (PointwiseFlopsPerElement(op) >= 0 || has("rotary") || has("rope") ||
      has("_and_mul") || has("silu") || has("gelu")) {
    return "elementwise";
  }
  return "other";
}

bool IsCommunicationKernelName(std::string_view name) {
  if (IsNcclKernelName(name)) return true;
  for (std::string_view marker :
       {"multimem_all_reduce", "one_shot_all_reduce", "two_shot_all_reduce",
        "multimem_all_gather", "multimem_reduce_scatter",
        "cross_device_reduce", "oneShotAllReduce", "twoShotAllReduce",
        "allreduce_fusion_kernel"}) {
    if (name.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

Collective CollectiveFromName(std::string_view name) {
  for (const CollectiveEntry& e : kCollectives) {
    if (e.name == name) return e.c;
  }
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    const std::string_view op = name.substr(prefix.size());
    for (const CollectiveEntry& e : kNcclKernelOps) {
      // "Reduce" must not take "ReduceScatter": the op ends at '_' or '('.
      if (op.substr(0, e.name.size()) != e.name) continue;
      if (op.size() == e.name.size() || op[e.name.size()] == '_' ||
          op[e.name.size()] == '(') {
        return e.c;
      }
    }
  }
  return Collective::kUnknown;
}

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kSend: return "send";
    case Collective::kRecv: return "recv";
    case Collective::kUnknown: break;
  }
  return "unknown";
}

double CollectiveBusFactor(Collective c, int64_t ranks) {
  if (ranks < 1) return -1;
  const double n = static_cast<double>(ranks);
  switch (c) {
    case Collective::kAllReduce: return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSend:
    case Collective::kRecv: return 1;
    case Collective::kUnknown: break;
  }
  return -1;
}

uint64_t CollectiveMessageBytes(int64_t in_elements, int64_t out_elements,
                                int element_bytes) {
  if (element_bytes <= 0) return 0;
  const int64_t n = in_elements > out_elements ? in_elements : out_elements;
  return U(n) * static_cast<uint64_t>(element_bytes);
}

CollectiveBandwidth CollectiveBandwidthOf(Collective c, int64_t ranks,
                                          uint64_t message_bytes,
                                          uint64_t duration_ns) {
  CollectiveBandwidth b;
  if (message_bytes == 0 || duration_ns == 0) return b;
  b.algbw = static_cast<double>(message_bytes) * 1e9 /
            static_cast<double>(duration_ns);
  const double factor = CollectiveBusFactor(c, ranks);
  if (factor >= 0) b.busbw = b.algbw * factor;
  return b;
}

}  // namespace rooftrace
