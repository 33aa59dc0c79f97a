#include "sources/kineto/op_shapes.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "model/gemm.h"
#include "model/ops.h"

namespace rooftrace::kineto {
namespace {

// An attention operator: where its Q, K, V dimensions and causal flag are.
struct AttentionOp {
  std::string_view name;
  bool blhd;         // (batch, length, heads, dim); else (batch, heads, ...)
  int causal;        // input index of is_causal
  bool mask_type;    // `causal` is custom_mask_type (0: none) not a bool
};
constexpr AttentionOp kAttentionOps[] = {
    {"aten::scaled_dot_product_attention", false, 5, false},
    {"aten::_scaled_dot_product_flash_attention", false, 4, false},
    {"aten::_scaled_dot_product_efficient_attention", false, 6, false},
    {"aten::_scaled_dot_product_cudnn_attention", false, 6, false},
    {"aten::_flash_attention_forward", true, 8, false},
    {"aten::_efficient_attention_forward", true, 9, true},
};

// A convolution operator: where its arguments are (-1: not an argument).
struct ConvOp {
  std::string_view name;
  int bias, stride, padding, dilation, transposed, groups;
};
constexpr ConvOp kConvOps[] = {
    {"aten::conv1d", 2, 3, 4, 5, -1, 6},
    {"aten::conv2d", 2, 3, 4, 5, -1, 6},
    {"aten::conv3d", 2, 3, 4, 5, -1, 6},
    {"aten::convolution", 2, 3, 4, 5, 6, 8},
    {"aten::_convolution", 2, 3, 4, 5, 6, 8},
    {"aten::cudnn_convolution", -1, 3, 2, 4, -1, 5},
};

const AttentionOp* AttentionOpOf(std::string_view name) {
  for (const AttentionOp& a : kAttentionOps) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const ConvOp* ConvOpOf(std::string_view name) {
  for (const ConvOp& c : kConvOps) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The pointwise operator's FLOPs per element, or -1.
int PointwiseOf(std::string_view name) {
  constexpr std::string_view kAten = "aten::";
  if (name.substr(0, kAten.size()) != kAten) return -1;
  return PointwiseFlopsPerElement(name.substr(kAten.size()));
}

// A tensor input whose element size is known.
bool IsTensorInput(const OpInputs& in, int i) {
  return i < in.count && in.in[i].rank >= 0 &&
         TorchTypeBytes(in.in[i].type) > 0;
}

int64_t Elements(const OpInput& t) {
  int64_t p = 1;
  for (int i = 0; i < t.rank; ++i) p *= t.dims[i];
  return p;
}

// What reading `t` reads (StoredElementsOf).
int64_t ReadElements(const OpInput& t) {
  return t.has_strides ? StoredElements(t.dims, t.strides, t.rank)
                       : Elements(t);
}

std::string DimsText(const OpInput& t) {
  std::string s;
  for (int i = 0; i < t.rank; ++i) {
    s += (i ? "x" : "") + std::to_string(t.dims[i]);
  }
  return s.empty() ? "scalar" : s;
}

// "[4, 4]", "4", "True": the integers in a concrete value, `n` of them (a
// single one stands for all); false when there are none.
bool ConcreteInts(std::string_view v, int n, int64_t* out) {
  int got = 0;
  size_t i = 0;
  while (i < v.size() && got < n) {
    if ((v[i] >= '0' && v[i] <= '9') || v[i] == '-') {
      const std::string digits(v.substr(i, 24));
      char* end = nullptr;
      const int64_t n = std::strtoll(digits.c_str(), &end, 10);
      if (end == digits.c_str()) {  // a lone '-'
        ++i;
        continue;
      }
      out[got++] = n;
      i += static_cast<size_t>(end - digits.c_str());
    } else {
      ++i;
    }
  }
  if (got == 0) return false;
  for (int k = got; k < n; ++k) out[k] = out[0];
  return true;
}

bool ConcreteTrue(const OpInputs& in, int i, bool mask_type) {
  if (i >= in.count) return false;
  const std::string_view v = in.in[i].concrete;
  if (mask_type) return !v.empty() && v != "0";
  return v == "True" || v == "true" || v == "1";
}

}  // namespace

constexpr TorchDtype kTorchDtypes[] = {
    {"Float", "float32", "float", 4, "fp32"},
    {"Half", "float16", "c10::Half", 2, "fp16"},
    {"BFloat16", "bfloat16", "c10::BFloat16", 2, "bf16"},
    {"Double", "float64", "double", 8, "fp64"},
    {"Long", "int64", "long int", 8, "int64"},
    {"Int", "int32", "int", 4, "int32"},
    {"Short", "int16", "short int", 2, "int16"},
    {"Char", "int8", "signed char", 1, "int8"},
    {"Byte", "uint8", "unsigned char", 1, "uint8"},
    {"Bool", "bool", "bool", 1, "bool"},
    {"Float8_e4m3fn", "float8_e4m3fn", "c10::Float8_e4m3fn", 1, "fp8_e4m3"},
    {"Float8_e5m2", "float8_e5m2", "c10::Float8_e5m2", 1, "fp8_e5m2"},
    {"Float8_e4m3fnuz", "float8_e4m3fnuz", "c10::Float8_e4m3fnuz", 1,
     "fp8_e4m3fnuz"},
    {"Float8_e5m2fnuz", "float8_e5m2fnuz", "c10::Float8_e5m2fnuz", 1,
     "fp8_e5m2fnuz"},
    {"Float8_e8m0fnu", "float8_e8m0fnu", "c10::Float8_e8m0fnu", 1,
     "fp8_e8m0"},
    // Two fp4 values a byte: the tensor's shape counts the bytes.
    {"Float4_e2m1fn_x2", "float4_e2m1fn_x2", "c10::Float4_e2m1fn_x2", 1,
     "fp4x2"},
    {"ComplexHalf", "complex32", "c10::complex<c10::Half>", 4, "complex32"},
    {"ComplexFloat", "complex64", "c10::complex<float>", 8, "complex64"},
    {"ComplexDouble", "complex128", "c10::complex<double>", 16,
     "complex128"},
    {"UInt16", "uint16", "unsigned short", 2, "uint16"},
    {"UInt32", "uint32", "unsigned int", 4, "uint32"},
    {"UInt64", "uint64", "unsigned long", 8, "uint64"},
    {"QInt8", "qint8", "c10::qint8", 1, "qint8"},
    {"QUInt8", "quint8", "c10::quint8", 1, "quint8"},
    {"QInt32", "qint32", "c10::qint32", 4, "qint32"},
};

const TorchDtype* FindTorchDtype(std::string_view dtype) {
  if (dtype.substr(0, 6) == "torch.") dtype.remove_prefix(6);
  // torch's aliases of the names above.
  if (dtype == "float") dtype = "float32";
  if (dtype == "half") dtype = "float16";
  if (dtype == "double") dtype = "float64";
  if (dtype == "long") dtype = "int64";
  if (dtype == "int") dtype = "int32";
  for (const TorchDtype& t : kTorchDtypes) {
    if (dtype == t.scalar_type || dtype == t.torch_name ||
        dtype == t.cpp_name) {
      return &t;
    }
  }
  return nullptr;
}

int TorchTypeBytes(std::string_view dtype) {
  const TorchDtype* t = FindTorchDtype(dtype);
  return t ? t->bytes : 0;
}

namespace {

std::optional<OpFigures> AttentionFigures(const AttentionOp& op,
                                          const OpInputs& in) {
  if (!IsTensorInput(in, 0) || !IsTensorInput(in, 1) ||
      !IsTensorInput(in, 2)) {
    return std::nullopt;
  }
  const OpInput& q = in.in[0];
  const OpInput& k = in.in[1];
  const OpInput& v = in.in[2];
  if (q.rank != 4 || k.rank != 4 || v.rank != 4) return std::nullopt;
  // Positions of heads and length in the layout.
  const int h = op.blhd ? 2 : 1, l = op.blhd ? 1 : 2;
  AttentionShape a;
  a.batch = q.dims[0];
  a.heads = q.dims[h];
  a.kv_heads = k.dims[h];
  a.q_len = q.dims[l];
  a.kv_len = k.dims[l];
  a.head_dim = q.dims[3];
  a.head_dim_v = v.dims[3];
  a.causal = ConcreteTrue(in, op.causal, op.mask_type);
  a.type = CudaTypeOfTorchType(q.type);
  if (k.dims[0] != a.batch || v.dims[0] != a.batch || k.dims[3] != a.head_dim ||
      v.dims[l] != a.kv_len || v.dims[h] != a.kv_heads || a.kv_heads <= 0 ||
      a.heads % a.kv_heads != 0) {
    return std::nullopt;
  }
  OpFigures f;
  f.flops = AttentionFlops(a);
  f.min_bytes = AttentionMinBytes(a);
  f.precision = MatrixOpPrecision(a.type);
  if (f.flops == 0 || f.min_bytes == 0) return std::nullopt;
  f.shape = "b=" + std::to_string(a.batch) + " h=" + std::to_string(a.heads);
  if (a.kv_heads != a.heads) f.shape += " hkv=" + std::to_string(a.kv_heads);
  f.shape += " lq=" + std::to_string(a.q_len) +
             " lk=" + std::to_string(a.kv_len) +
             " d=" + std::to_string(a.head_dim);
  if (a.head_dim_v != a.head_dim) {
    f.shape += " dv=" + std::to_string(a.head_dim_v);
  }
  if (a.causal) f.shape += " causal";
  return f;
}

// A convolution argument list of `n` integers (`fallback` when the
// argument is beyond the recorded inputs or has no value): false when the
// value is there but not integers.
bool ConvArg(const OpInputs& in, int i, int n, int64_t fallback,
             int64_t* out) {
  if (i < 0 || i >= in.count || in.in[i].concrete.empty()) {
    std::fill(out, out + n, fallback);
    return true;
  }
  return ConcreteInts(in.in[i].concrete, n, out);
}

std::optional<OpFigures> ConvFigures(const ConvOp& op, const OpInputs& in) {
  if (!IsTensorInput(in, 0) || !IsTensorInput(in, 1)) return std::nullopt;
  const OpInput& x = in.in[0];
  const OpInput& w = in.in[1];
  const int r = x.rank - 2;
  if (r < 1 || r > kMaxConvSpatial || w.rank != x.rank) return std::nullopt;
  // Without the stride the output size is a guess: no figures.
  if (op.stride >= in.count || in.in[op.stride].concrete.empty()) {
    return std::nullopt;
  }
  if (op.transposed >= 0 && ConcreteTrue(in, op.transposed, false)) {
    return std::nullopt;
  }
  int64_t stride[kMaxConvSpatial], pad[kMaxConvSpatial],
      dil[kMaxConvSpatial], groups = 1;
  if (!ConvArg(in, op.stride, r, 1, stride) ||
      !ConvArg(in, op.padding, r, 0, pad) ||
      !ConvArg(in, op.dilation, r, 1, dil) ||
      !ConvArg(in, op.groups, 1, 1, &groups)) {
    return std::nullopt;  // padding="same" and the like
  }
  ConvShape c;
  c.batch = x.dims[0];
  c.in_channels = x.dims[1];
  c.out_channels = w.dims[0];
  c.groups = groups;
  c.spatial_rank = r;
  std::string out_text;
  for (int i = 0; i < r; ++i) {
    c.in_size[i] = x.dims[i + 2];
    c.kernel[i] = w.dims[i + 2];
    c.out_size[i] =
        ConvOutputSize(c.in_size[i], c.kernel[i], stride[i], pad[i], dil[i]);
    out_text += (i ? "x" : "") + std::to_string(c.out_size[i]);
  }
  c.bias = op.bias >= 0 && IsTensorInput(in, op.bias);
  c.type = CudaTypeOfTorchType(x.type);
  if (groups <= 0 || w.dims[1] * groups != c.in_channels) return std::nullopt;
  OpFigures f;
  f.flops = ConvFlops(c);
  f.min_bytes = ConvMinBytes(c);
  f.precision = MatrixOpPrecision(c.type);
  if (f.flops == 0 || f.min_bytes == 0) return std::nullopt;
  f.shape = "x=" + DimsText(x) + " w=" + DimsText(w) + " out=" + out_text;
  if (groups != 1) f.shape += " groups=" + std::to_string(groups);
  return f;
}

// Every tensor input read once and the largest written once (broadcasting
// gives the output at least the largest input's elements), except the
// first when the operator `overwrites` it without reading it (copy_,
// fill_, zero_, a quantisation's output).
std::optional<OpFigures> PointwiseFigures(int flops_per_element,
                                          const OpInputs& in,
                                          bool overwrites) {
  int largest = -1;
  uint64_t read = 0;
  for (int i = 0; i < in.count; ++i) {
    if (!IsTensorInput(in, i)) continue;
    const int64_t n = Elements(in.in[i]);
    if (largest < 0 || n > Elements(in.in[largest])) largest = i;
    if (i == 0 && overwrites) continue;
    const int size = TorchTypeBytes(in.in[i].type);
    // A broadcast (stride-0) input is read once per stored element.
    read += static_cast<uint64_t>(ReadElements(in.in[i])) *
            static_cast<uint64_t>(size);
  }
  if (largest < 0) return std::nullopt;
  const OpInput& out = in.in[largest];
  const int32_t type = CudaTypeOfTorchType(out.type);
  PointwiseOp p;
  p.elements = Elements(out);
  p.flops_per_element = flops_per_element;
  p.input_bytes = read;
  p.output_bytes = static_cast<uint64_t>(p.elements) *
                   static_cast<uint64_t>(TorchTypeBytes(out.type));
  OpFigures f;
  f.flops = PointwiseFlops(p);
  f.min_bytes = PointwiseMinBytes(p);
  f.precision = PointwisePrecision(type);
  if (f.min_bytes == 0) return std::nullopt;
  f.shape = DimsText(out);
  return f;
}


// Operators of serving engines and kernel libraries (vLLM's _C ops,
// SGLang's sgl_kernel, ROCm's aiter) with a fixed argument layout, and
// aten's reductions and gathers.
enum class Family : uint8_t {
  kNorm,
  kGatedActivation,
  kRotary,
  kCacheWrite,
  kReduction,
  kGather,
  kQuantize,
  kSelection,
  kTensorsMoved,
  kMoeTokenSort,
};

// kSelection: which operator's layout.
enum class Select : uint8_t { kTopk, kSort, kArgsort, kRouterTopk };

struct FamilyOp {
  std::string_view name;
  Family family;
  // kNorm: the kind, whether a residual add is fused, and how many
  // activation-sized tensors it reads or writes in all (input and output:
  // 2; with a fused add, the residual read and written too: 4).
  NormKind norm = NormKind::kRms;
  bool fused_add = false;
  int activations = 0;
  // kGatedActivation: the activation's FLOPs per element (silu 4, gelu 8:
  // model/ops.h PointwiseFlopsPerElement); kQuantize: the FLOPs per
  // element.
  int per_element_flops = 0;
  // kReduction: where the dim argument is (-1: none), whether it is a scan
  // (as many outputs as inputs), whether an int64 index is written per
  // output (max/min along a dimension), or only an index (argmax).
  int dim_arg = -1;
  bool scan = false, index_with_values = false, index_only = false;
  // kSelection: the layout; kQuantize: the outputs are returned, not
  // passed in (TensorRT-LLM's fp4_quantize: input, global scale, block
  // size at `dim_arg`).
  Select select = Select::kTopk;
  bool returns_outputs = false;
};

constexpr FamilyOp kFamilyOps[] = {
    // Norms: (out, input, weight, eps) and the like; rows x cols and the
    // weight are found by shape, not position, so layouts that differ only
    // in where the output sits read alike.
    {"aiter::rmsnorm", Family::kNorm, NormKind::kRms, false, 2},
    {"aiter::rms_norm", Family::kNorm, NormKind::kRms, false, 2},
    {"aiter::rmsnorm2d_fwd", Family::kNorm, NormKind::kRms, false, 2},
    {"aiter::add_rmsnorm", Family::kNorm, NormKind::kRms, true, 4},
    {"aiter::rmsnorm2d_fwd_with_add", Family::kNorm, NormKind::kRms, true, 4},
    {"aiter::rmsnorm2d_fwd_ck", Family::kNorm, NormKind::kRms, false, 2},
    {"aiter::rmsnorm2d_fwd_with_add_ck", Family::kNorm, NormKind::kRms, true,
     4},
    {"_C::rms_norm", Family::kNorm, NormKind::kRms, false, 2},
    {"_C::fused_add_rms_norm", Family::kNorm, NormKind::kRms, true, 4},
    {"sgl_kernel::rmsnorm", Family::kNorm, NormKind::kRms, false, 2},
    {"sgl_kernel::fused_add_rmsnorm", Family::kNorm, NormKind::kRms, true, 4},
    {"sgl_kernel::gemma_rmsnorm", Family::kNorm, NormKind::kRms, false, 2},
    {"sgl_kernel::gemma_fused_add_rmsnorm", Family::kNorm, NormKind::kRms,
     true, 4},
    {"aiter::layernorm2d_fwd", Family::kNorm, NormKind::kLayer, false, 2},
    // Gated activations: (out, input) with input [.., 2d], out [.., d].
    {"sgl_kernel::silu_and_mul", Family::kGatedActivation, {}, false, 0, 4},
    {"_C::silu_and_mul", Family::kGatedActivation, {}, false, 0, 4},
    {"aiter::silu_and_mul", Family::kGatedActivation, {}, false, 0, 4},
    {"sgl_kernel::gelu_and_mul", Family::kGatedActivation, {}, false, 0, 8},
    {"sgl_kernel::gelu_tanh_and_mul", Family::kGatedActivation, {}, false, 0,
     8},
    {"_C::gelu_and_mul", Family::kGatedActivation, {}, false, 0, 8},
    {"_C::gelu_tanh_and_mul", Family::kGatedActivation, {}, false, 0, 8},
    // Rotary: (positions, query, key, head_size, cos_sin_cache, is_neox).
    {"sgl_kernel::rotary_embedding", Family::kRotary},
    {"_C::rotary_embedding", Family::kRotary},
    // KV-cache writes: (key, value, key_cache, value_cache, slots, ...).
    {"sglang::store_cache", Family::kCacheWrite},
    {"_C_cache_ops::reshape_and_cache", Family::kCacheWrite},
    {"_C_cache_ops::reshape_and_cache_flash", Family::kCacheWrite},
    // Reductions: (self, dim, keepdim, ...) unless said.
    {"aten::sum", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::nansum", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::mean", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::amax", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::amin", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::prod", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::logsumexp", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::var", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::std", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::all", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::any", Family::kReduction, {}, false, 0, 0, 1},
    {"aten::norm", Family::kReduction, {}, false, 0, 0, 2},
    {"aten::linalg_vector_norm", Family::kReduction, {}, false, 0, 0, 2},
    {"aten::max", Family::kReduction, {}, false, 0, 0, 1, false, true},
    {"aten::min", Family::kReduction, {}, false, 0, 0, 1, false, true},
    {"aten::argmax", Family::kReduction, {}, false, 0, 0, 1, false, false,
     true},
    {"aten::argmin", Family::kReduction, {}, false, 0, 0, 1, false, false,
     true},
    {"aten::cumsum", Family::kReduction, {}, false, 0, 0, 1, true},
    {"aten::cumprod", Family::kReduction, {}, false, 0, 0, 1, true},
    // fp8 quantisation: (out, input, scale, ...); the scale multiply per
    // element, and for the dynamic forms the absolute maximum too.
    {"_C::static_scaled_fp8_quant", Family::kQuantize, {}, false, 0, 1},
    {"_C::dynamic_scaled_fp8_quant", Family::kQuantize, {}, false, 0, 2},
    {"_C::dynamic_per_token_scaled_fp8_quant", Family::kQuantize, {}, false,
     0, 2},
    {"sgl_kernel::sgl_per_token_quant_fp8", Family::kQuantize, {}, false, 0,
     2},
    {"sgl_kernel::sgl_per_tensor_quant_fp8", Family::kQuantize, {}, false, 0,
     2},
    // fp4 (NVFP4) quantisation: (out uint8 [m, k/2], input [m, k], block
    // scales, global scale); each 16-element block's absolute maximum and
    // the scale multiply.
    {"_C::scaled_fp4_quant", Family::kQuantize, {}, false, 0, 2},
    {"sgl_kernel::scaled_fp4_quant", Family::kQuantize, {}, false, 0, 2},
    // Per-token-group fp8/int8 quantisation: (input, output_q, output_s,
    // group_size, ...): the input first; each group's absolute maximum
    // and the scale multiply.
    {"_C::per_token_group_fp8_quant", Family::kQuantize, {}, false, 0, 2},
    {"sgl_kernel::sgl_per_token_group_quant_fp8", Family::kQuantize, {},
     false, 0, 2},
    {"sgl_kernel::sgl_per_token_group_quant_int8", Family::kQuantize, {},
     false, 0, 2},
    // TensorRT-LLM's NVFP4 quantisation (input, global scale, sfVecSize,
    // ...) -> (fp4 values [m, k/2], one byte-sized scale per block of
    // sfVecSize elements): its kernel is quantize_with_block_size.
    {"trtllm::fp4_quantize", Family::kQuantize, {}, false, 0, 2, 2, false,
     false, false, Select::kTopk, true},
    // Top-k and sorts: (self, k, dim, largest, sorted), (self, dim,
    // descending) or, stable, (self, stable, dim, descending).
    {"aten::topk", Family::kSelection, {}, false, 0, 0, 2, false, false,
     false, Select::kTopk},
    {"aten::sort", Family::kSelection, {}, false, 0, 0, -1, false, false,
     false, Select::kSort},
    {"aten::argsort", Family::kSelection, {}, false, 0, 0, -1, false, false,
     false, Select::kArgsort},
    // triton_kernels' router top-k, an autograd function the profiler
    // records by its class name: (x [tokens, experts], k, apply_softmax,
    // dim, ...). It writes each token's k values and int16 expert ids and
    // the bit matrix of experts hit. Its sort of the routed pairs by
    // expert: (gates [tokens, k], ids [tokens, k], experts, bitmatrix).
    {"TopK", Family::kSelection, {}, false, 0, 0, 3, false, false, false,
     Select::kRouterTopk},
    {"SortTokens", Family::kMoeTokenSort},
    // MoE routing steps whose outputs are passed in (vLLM's _moe_C and
    // SGLang's sgl_kernel): every tensor argument moved once, the inputs
    // read and the outputs written. topk_softmax(topk_weights,
    // topk_indices, token_expert_indices, gating_output, ...);
    // moe_align_block_size(topk_ids, experts, block_size,
    // sorted_token_ids, experts_ids, num_tokens_post_pad, ...).
    {"_moe_C::topk_softmax", Family::kTensorsMoved},
    {"sgl_kernel::topk_softmax", Family::kTensorsMoved},
    {"_moe_C::moe_align_block_size", Family::kTensorsMoved},
    {"sgl_kernel::moe_align_block_size", Family::kTensorsMoved},
    // Gathers.
    {"aten::index_select", Family::kGather},
    {"aten::gather", Family::kGather},
    {"aten::embedding", Family::kGather},
};

const FamilyOp* FamilyOpOf(std::string_view name) {
  // Asked for every cpu_op event a trace holds (IsModelledOp), most of
  // them no family's: one hash, not a scan of the whole table.
  static const std::unordered_map<std::string_view, const FamilyOp*> kByName =
      [] {
        std::unordered_map<std::string_view, const FamilyOp*> m;
        for (const FamilyOp& f : kFamilyOps) m.emplace(f.name, &f);
        return m;
      }();
  auto it = kByName.find(name);
  return it == kByName.end() ? nullptr : it->second;
}

// The tensor input with the most elements, or -1.
int LargestTensor(const OpInputs& in) {
  int largest = -1;
  for (int i = 0; i < in.count; ++i) {
    if (!IsTensorInput(in, i)) continue;
    if (largest < 0 || Elements(in.in[i]) > Elements(in.in[largest])) {
      largest = i;
    }
  }
  return largest;
}

// "4096x128" of a tensor's rows and last dimension.
std::string RowsText(int64_t rows, int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::optional<OpFigures> NormFigures(const FamilyOp& op, const OpInputs& in) {
  const int x = LargestTensor(in);
  if (x < 0 || in.in[x].rank < 1) return std::nullopt;
  const OpInput& t = in.in[x];
  NormOp n;
  n.kind = op.norm;
  n.fused_add = op.fused_add;
  n.cols = t.dims[t.rank - 1];
  if (n.cols <= 0) return std::nullopt;
  n.rows = Elements(t) / n.cols;
  const int size = TorchTypeBytes(t.type);
  n.activation_bytes = static_cast<uint64_t>(op.activations) *
                       static_cast<uint64_t>(Elements(t)) *
                       static_cast<uint64_t>(size);
  // The weight (and bias): one-dimensional tensors of a row's length.
  n.params = 0;
  for (int i = 0; i < in.count; ++i) {
    if (i == x || !IsTensorInput(in, i)) continue;
    const OpInput& p = in.in[i];
    if (p.rank == 1 && p.dims[0] == n.cols) {
      ++n.params;
      n.param_element_bytes = TorchTypeBytes(p.type);
    }
  }
  OpFigures f;
  f.flops = NormFlops(n);
  f.min_bytes = NormMinBytes(n);
  f.precision = PointwisePrecision(CudaTypeOfTorchType(t.type));
  if (f.min_bytes == 0) return std::nullopt;
  f.shape = RowsText(n.rows, n.cols);
  return f;
}

std::optional<OpFigures> GatedActivationFigures(const FamilyOp& op,
                                                const OpInputs& in) {
  const int x = LargestTensor(in);
  if (x < 0 || in.in[x].rank < 1) return std::nullopt;
  const OpInput& t = in.in[x];
  const int64_t width = t.dims[t.rank - 1];
  if (width <= 0 || width % 2 != 0) return std::nullopt;
  GatedActivationOp g;
  g.out_elements = Elements(t) / 2;
  g.activation_flops = op.per_element_flops;
  g.element_bytes = TorchTypeBytes(t.type);
  OpFigures f;
  f.flops = GatedActivationFlops(g);
  f.min_bytes = GatedActivationMinBytes(g);
  f.precision = PointwisePrecision(CudaTypeOfTorchType(t.type));
  if (f.min_bytes == 0) return std::nullopt;
  f.shape = RowsText(g.out_elements / (width / 2), width / 2);
  return f;
}

std::optional<OpFigures> RotaryFigures(const OpInputs& in) {
  // Query (1) and key (2; None in some vLLM versions), head size (3), the
  // cos/sin cache (4) whose last dimension is the rotary dimension.
  if (!IsTensorInput(in, 1)) return std::nullopt;
  int64_t head_size = 0;
  if (in.count <= 3 || !ConcreteInts(in.in[3].concrete, 1, &head_size) ||
      head_size <= 0) {
    return std::nullopt;
  }
  RotaryOp r;
  r.qk_elements = Elements(in.in[1]);
  if (IsTensorInput(in, 2)) r.qk_elements += Elements(in.in[2]);
  r.head_size = head_size;
  if (IsTensorInput(in, 4) && in.in[4].rank >= 1) {
    r.rotary_dim = in.in[4].dims[in.in[4].rank - 1];
  }
  r.element_bytes = TorchTypeBytes(in.in[1].type);
  OpFigures f;
  f.flops = RotaryFlops(r);
  f.min_bytes = RotaryMinBytes(r);
  f.precision = PointwisePrecision(CudaTypeOfTorchType(in.in[1].type));
  if (f.flops == 0 || f.min_bytes == 0) return std::nullopt;
  f.shape = "q=" + DimsText(in.in[1]);
  if (IsTensorInput(in, 2)) f.shape += " k=" + DimsText(in.in[2]);
  return f;
}

std::optional<OpFigures> CacheWriteFigures(const OpInputs& in) {
  for (int i = 0; i < 4; ++i) {
    if (!IsTensorInput(in, i)) return std::nullopt;
  }
  CacheWriteOp c;
  c.kv_elements = Elements(in.in[0]) + Elements(in.in[1]);
  c.source_element_bytes = TorchTypeBytes(in.in[0].type);
  c.cache_element_bytes = KvCacheElementBytes(in);
  OpFigures f;
  f.min_bytes = CacheWriteMinBytes(c);
  if (f.min_bytes == 0) return std::nullopt;
  f.shape = "k=" + DimsText(in.in[0]) + " v=" + DimsText(in.in[1]);
  return f;
}

std::optional<OpFigures> ReductionFigures(const FamilyOp& op,
                                          const OpInputs& in) {
  if (!IsTensorInput(in, 0)) return std::nullopt;
  const OpInput& x = in.in[0];
  // max(a, b) and min(a, b) of two tensors are elementwise.
  if (op.index_with_values && IsTensorInput(in, 1)) {
    return PointwiseFigures(1, in, /*overwrites=*/false);
  }
  ReductionOp r;
  r.in_elements = Elements(x);
  const int64_t stored_in = ReadElements(x);
  r.in_element_bytes = TorchTypeBytes(x.type);
  r.out_element_bytes = op.index_only ? 8 : r.in_element_bytes;
  bool has_dim = false;
  if (op.scan) {
    r.out_elements = r.in_elements;
  } else {
    // The reduced dimensions: an int or a list; none (or an empty list)
    // reduces them all.
    int64_t dims[kMaxRank];
    const int n = op.dim_arg < in.count ? x.rank : 0;
    std::string_view v = n > 0 ? in.in[op.dim_arg].concrete : "";
    int got = 0;
    if (!v.empty()) {
      for (char c : v) got += c == ',';
      got = std::min(got + 1, kMaxRank);
      if (!ConcreteInts(v, got, dims)) got = 0;
    }
    has_dim = got > 0;
    r.out_elements = has_dim ? r.in_elements : 1;
    for (int i = 0; i < got; ++i) {
      const int64_t d = dims[i] < 0 ? dims[i] + x.rank : dims[i];
      if (d < 0 || d >= x.rank || x.dims[d] <= 0) return std::nullopt;
      r.out_elements /= x.dims[d];
    }
  }
  r.writes_index = op.index_with_values && has_dim;
  OpFigures f;
  f.flops = ReductionFlops(r);  // one per logical element
  r.in_elements = stored_in;     // but a broadcast input is read once
  f.min_bytes = ReductionMinBytes(r);
  f.precision = PointwisePrecision(CudaTypeOfTorchType(x.type));
  if (f.min_bytes == 0) return std::nullopt;
  f.shape = DimsText(x) + " -> " + std::to_string(r.out_elements);
  return f;
}

std::optional<OpFigures> GatherFigures(const FamilyOp& op,
                                       const OpInputs& in) {
  GatherOp g;
  int src = 0, index = 2;
  if (op.name == "aten::embedding") index = 1;
  if (!IsTensorInput(in, src) || !IsTensorInput(in, index)) {
    return std::nullopt;
  }
  const OpInput& x = in.in[src];
  const OpInput& ix = in.in[index];
  if (op.name == "aten::embedding") {
    if (x.rank != 2) return std::nullopt;
    g.out_elements = Elements(ix) * x.dims[1];
  } else if (op.name == "aten::gather") {
    g.out_elements = Elements(ix);
  } else {  // index_select(self, dim, index)
    int64_t d = 0;
    if (in.count <= 1 || !ConcreteInts(in.in[1].concrete, 1, &d)) {
      return std::nullopt;
    }
    if (d < 0) d += x.rank;
    if (d < 0 || d >= x.rank || x.dims[d] <= 0) return std::nullopt;
    g.out_elements = Elements(x) / x.dims[d] * Elements(ix);
  }
  g.element_bytes = TorchTypeBytes(x.type);
  // gather's index is often expanded from one column ([n, d], strides
  // [1, 0]): read once per stored element.
  g.index_elements = ReadElements(ix);
  g.index_element_bytes = TorchTypeBytes(ix.type);
  OpFigures f;
  f.min_bytes = GatherMinBytes(g);
  if (f.min_bytes == 0) return std::nullopt;
  f.shape = DimsText(x) + " [" + DimsText(ix) + "]";
  return f;
}

// The bytes of every tensor argument, each at its stored elements.
uint64_t TensorBytes(const OpInputs& in) {
  uint64_t bytes = 0;
  for (int i = 0; i < in.count; ++i) {
    if (!IsTensorInput(in, i)) continue;
    bytes += static_cast<uint64_t>(ReadElements(in.in[i])) *
             static_cast<uint64_t>(TorchTypeBytes(in.in[i].type));
  }
  return bytes;
}

// A quantisation: the input is the tensor of most elements (the fp4
// output packs two a byte), of the widest type among equals (the fp8
// output has the input's elements). Passed-in outputs: every tensor moved
// once at its own size. Returned outputs (TensorRT-LLM): the input and
// global scale read, the fp4 values (half a byte an element) and a byte of
// scale per block written, the block layout's padding left out.
std::optional<OpFigures> QuantizeFigures(const FamilyOp& op,
                                         const OpInputs& in) {
  int x = -1;
  for (int i = 0; i < in.count; ++i) {
    if (!IsTensorInput(in, i)) continue;
    if (x < 0 || Elements(in.in[i]) > Elements(in.in[x]) ||
        (Elements(in.in[i]) == Elements(in.in[x]) &&
         TorchTypeBytes(in.in[i].type) > TorchTypeBytes(in.in[x].type))) {
      x = i;
    }
  }
  if (x < 0) return std::nullopt;
  uint64_t bytes = TensorBytes(in);
  const int64_t elements = Elements(in.in[x]);
  if (op.returns_outputs) {
    int64_t block = 0;
    if (op.dim_arg >= in.count ||
        !ConcreteInts(in.in[op.dim_arg].concrete, 1, &block) || block <= 0 ||
        elements % block != 0 || elements % 2 != 0) {
      return std::nullopt;
    }
    bytes += static_cast<uint64_t>(elements / 2 + elements / block);
  } else {
    int tensors = 0;
    for (int i = 0; i < in.count; ++i) tensors += IsTensorInput(in, i);
    if (tensors < 2) return std::nullopt;  // no output: not the layout
  }
  OpFigures f;
  f.flops = static_cast<uint64_t>(elements) *
            static_cast<uint64_t>(op.per_element_flops);
  f.min_bytes = bytes;
  f.precision = PointwisePrecision(CudaTypeOfTorchType(in.in[x].type));
  f.shape = DimsText(in.in[x]);
  return f;
}

// The dimension argument at `i` ("-1", "1"; absent or empty: the last) of
// a rank-`rank` tensor, or -1 when out of range.
int DimArg(const OpInputs& in, int i, int rank) {
  int64_t d = -1;
  if (i >= 0 && i < in.count && !in.in[i].concrete.empty() &&
      !ConcreteInts(in.in[i].concrete, 1, &d)) {
    return -1;
  }
  if (d < 0) d += rank;
  return d >= 0 && d < rank ? static_cast<int>(d) : -1;
}

std::optional<OpFigures> SelectionFigures(const FamilyOp& op,
                                          const OpInputs& in) {
  if (!IsTensorInput(in, 0) || in.in[0].rank < 1) return std::nullopt;
  const OpInput& x = in.in[0];
  SelectionOp s;
  s.in_elements = ReadElements(x);
  s.in_element_bytes = TorchTypeBytes(x.type);
  s.out_elements = Elements(x);
  s.index_bytes = sizeof(int64_t);
  std::string what = " sort";
  if (op.select == Select::kTopk || op.select == Select::kRouterTopk) {
    int64_t k = 0;
    if (in.count <= 1 || !ConcreteInts(in.in[1].concrete, 1, &k) || k <= 0) {
      return std::nullopt;
    }
    const int d = DimArg(in, op.dim_arg, x.rank);
    if (d < 0 || x.dims[d] < k) return std::nullopt;
    s.out_elements = Elements(x) / x.dims[d] * k;
    what = " top" + std::to_string(k);
    if (op.select == Select::kRouterTopk) {
      // [tokens, experts] over the experts, apply_softmax a boolean: the
      // layout of triton_kernels' TopK, not another class of that name.
      const std::string_view softmax =
          in.count > 2 ? in.in[2].concrete : std::string_view();
      if (x.rank != 2 || d != 1 ||
          (softmax != "True" && softmax != "False")) {
        return std::nullopt;
      }
      s.index_bytes = sizeof(int16_t);
      s.extra_output_bytes = static_cast<uint64_t>(x.dims[0]) *
                             static_cast<uint64_t>((x.dims[1] + 31) / 32) *
                             sizeof(uint32_t);
    }
  } else if (op.select == Select::kArgsort) {
    s.writes_values = false;
    what = " argsort";
  }
  OpFigures f;
  f.min_bytes = SelectionMinBytes(s);
  if (f.min_bytes == 0) return std::nullopt;
  f.precision = PointwisePrecision(CudaTypeOfTorchType(x.type));
  f.shape = DimsText(x) + what;
  return f;
}

// Every tensor argument moved once: at least two (an input and an
// output), or it is not the operator's layout.
std::optional<OpFigures> TensorsMovedFigures(const OpInputs& in) {
  int tensors = 0, largest = LargestTensor(in);
  std::string shape;
  for (int i = 0; i < in.count; ++i) {
    if (!IsTensorInput(in, i)) continue;
    ++tensors;
    shape += (shape.empty() ? "" : " ") + DimsText(in.in[i]);
  }
  if (tensors < 2) return std::nullopt;
  OpFigures f;
  f.min_bytes = TensorBytes(in);
  if (f.min_bytes == 0) return std::nullopt;
  f.precision = PointwisePrecision(CudaTypeOfTorchType(in.in[largest].type));
  f.shape = shape;
  return f;
}

// SortTokens(gates [tokens, k], ids [tokens, k], experts, bitmatrix).
std::optional<OpFigures> MoeTokenSortFigures(const OpInputs& in) {
  if (!IsTensorInput(in, 0) || !IsTensorInput(in, 1)) return std::nullopt;
  const OpInput& gates = in.in[0];
  const OpInput& ids = in.in[1];
  int64_t experts = 0;
  if (gates.rank != 2 || ids.rank != 2 || gates.dims[0] != ids.dims[0] ||
      gates.dims[1] != ids.dims[1] || in.count <= 2 ||
      !ConcreteInts(in.in[2].concrete, 1, &experts) ||
      experts < gates.dims[1]) {
    return std::nullopt;
  }
  MoeTokenSortOp t;
  t.tokens = gates.dims[0];
  t.top_k = gates.dims[1];
  t.experts = experts;
  t.gate_bytes = TorchTypeBytes(gates.type);
  t.id_bytes = TorchTypeBytes(ids.type);
  OpFigures f;
  f.min_bytes = MoeTokenSortMinBytes(t);
  if (f.min_bytes == 0) return std::nullopt;
  f.precision = PointwisePrecision(CudaTypeOfTorchType(gates.type));
  f.shape = "moe sort t=" + std::to_string(t.tokens) +
            " e=" + std::to_string(experts) + " k=" + std::to_string(t.top_k);
  return f;
}

std::optional<OpFigures> FamilyFigures(const FamilyOp& op,
                                       const OpInputs& in) {
  switch (op.family) {
    case Family::kNorm: return NormFigures(op, in);
    case Family::kGatedActivation: return GatedActivationFigures(op, in);
    case Family::kRotary: return RotaryFigures(in);
    case Family::kCacheWrite: return CacheWriteFigures(in);
    case Family::kReduction: return ReductionFigures(op, in);
    case Family::kGather: return GatherFigures(op, in);
    case Family::kQuantize: return QuantizeFigures(op, in);
    case Family::kSelection: return SelectionFigures(op, in);
    case Family::kTensorsMoved: return TensorsMovedFigures(in);
    case Family::kMoeTokenSort: return MoeTokenSortFigures(in);
  }
  return std::nullopt;
}

// Inductor's Triton pointwise kernel: every tensor argument a buffer, the
// last argument its element count (xnumel). Its type is the largest
// buffer's: the class its bytes are plotted in. No figures when a tensor's
// element size is unknown, or when the record has kMaxOpInputs arguments
// (the reader keeps that many: some may be lost).
std::optional<OpFigures> TritonPointwiseFigures(const OpInputs& in) {
  int64_t xnumel = 0;
  const int last = in.count - 1;
  if (in.count < 2 || in.count >= kMaxOpInputs || IsTensorInput(in, last) ||
      !ConcreteInts(in.in[last].concrete, 1, &xnumel)) {
    return std::nullopt;
  }
  TritonBuffer buffers[kMaxOpInputs];
  int count = 0, largest = -1;  // largest: an index into `in`
  for (int i = 0; i < last; ++i) {
    if (!IsTensorInput(in, i)) {
      if (in.in[i].rank > 0) return std::nullopt;  // a tensor of no known type
      continue;  // a scalar (a size symbol)
    }
    buffers[count].elements = ReadElements(in.in[i]);
    buffers[count].element_bytes = TorchTypeBytes(in.in[i].type);
    if (largest < 0 || buffers[count].elements > ReadElements(in.in[largest])) {
      largest = i;
    }
    ++count;
  }
  OpFigures f;
  f.min_bytes = TritonPointwiseMinBytes(buffers, count, xnumel);
  if (f.min_bytes == 0) return std::nullopt;
  f.precision = PointwisePrecision(CudaTypeOfTorchType(in.in[largest].type));
  f.shape = "triton " + std::to_string(count) + " buffers xnumel=" +
            std::to_string(xnumel);
  return f;
}
}  // namespace

int64_t StoredElementsOf(const OpInput& t) { return ReadElements(t); }

bool IsModelledOp(std::string_view name) {
  return AttentionOpOf(name) != nullptr || ConvOpOf(name) != nullptr ||
         FamilyOpOf(name) != nullptr || PointwiseOf(name) >= 0 ||
         IsServingAttentionOp(name) || IsMoeOp(name) || IsCatOp(name) ||
         AllReduceMessageInput(name) >= 0 || IsTritonPointwiseOp(name);
}

bool IsTritonPointwiseOp(std::string_view name) {
  return name.substr(0, 11) == "triton_poi_";
}

int AllReduceMessageInput(std::string_view name) {
  if (name == "symm_mem::multimem_all_reduce_" ||
      name == "symm_mem::one_shot_all_reduce" ||
      name == "symm_mem::one_shot_all_reduce_out" ||
      name == "symm_mem::two_shot_all_reduce_" ||
      name == "symm_mem::two_shot_all_reduce_out") {
    return 0;
  }
  if (name == "_C_custom_ar::all_reduce") return 1;  // (fa, inp, out, ...)
  return -1;
}

bool IsCatOp(std::string_view name) { return name == "aten::cat"; }

int OpaqueElementBytes(std::string_view kernel) {
  constexpr std::string_view kOpaque = "OpaqueType<";
  const size_t at = kernel.find(kOpaque);
  if (at == std::string_view::npos) return 0;
  int bytes = 0;
  for (size_t i = at + kOpaque.size(); i < kernel.size(); ++i) {
    const char c = kernel[i];
    if (c < '0' || c > '9') break;
    bytes = bytes * 10 + (c - '0');
    if (bytes > 64) return 0;
  }
  return bytes;
}

std::optional<OpFigures> CatFigures(const OpInputs& in, int element_bytes) {
  if (in.count < 1 || element_bytes <= 0 || in.in[0].list_size <= 0) {
    return std::nullopt;
  }
  const OpInput& list = in.in[0];
  PointwiseOp p;
  p.elements = list.list_elements;
  p.flops_per_element = 0;
  p.input_bytes = static_cast<uint64_t>(list.list_elements) *
                  static_cast<uint64_t>(element_bytes);
  p.output_bytes = p.input_bytes;  // the output holds every input
  OpFigures f;
  f.flops = 0;
  f.min_bytes = PointwiseMinBytes(p);
  f.precision = Precision::kUnknown;
  f.shape = std::to_string(list.list_size) + " tensors " +
            std::to_string(list.list_elements) + " elements x" +
            std::to_string(element_bytes) + "B";
  return f;
}

namespace {

// Where a serving attention operator's query, key and value are: [tokens,
// heads, width] for the query; the key and value (new tokens or the paged
// cache) have the KV heads and widths in their last two dimensions.
struct ServingAttentionLayout {
  std::string_view name;
  int q, k, v;
  bool key_is_cache;
};
constexpr ServingAttentionLayout kServingAttentionOps[] = {
    {"vllm::unified_attention_with_output", 0, 1, 2, false},
    {"vllm::unified_attention", 0, 1, 2, false},
    {"aiter::mha_batch_prefill", 0, 1, 2, false},
    // (out, workspace, query, key_cache, value_cache, ...)
    {"aiter::paged_attention_ragged", 2, 3, 4, true},
    {"sglang_profiler::attention_paged_attention_ragged", 2, 3, 4, true},
};

// SGLang's kernel-shape profiler registers each call site as its own
// operator, "sglang_profiler::attention_paged_attention_ragged_100": the
// operator is the name without the call site's number.
std::string_view WithoutCallSite(std::string_view name) {
  if (name.substr(0, 17) != "sglang_profiler::") return name;
  size_t end = name.size();
  while (end > 17 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  if (end < name.size() && end > 17 && name[end - 1] == '_') {
    return name.substr(0, end - 1);
  }
  return name;
}

const ServingAttentionLayout* ServingAttentionOpOf(std::string_view name) {
  name = WithoutCallSite(name);
  for (const ServingAttentionLayout& a : kServingAttentionOps) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// `part` is lower case.
bool ContainsNoCase(std::string_view s, std::string_view part) {
  if (part.size() > s.size()) return false;
  for (size_t i = 0; i + part.size() <= s.size(); ++i) {
    size_t j = 0;
    while (j < part.size() &&
           (s[i + j] == part[j] ||
            (s[i + j] >= 'A' && s[i + j] <= 'Z' && s[i + j] + 32 == part[j]))) {
      ++j;
    }
    if (j == part.size()) return true;
  }
  return false;
}

}  // namespace

bool IsServingAttentionOp(std::string_view name) {
  return ServingAttentionOpOf(name) != nullptr;
}

bool ServingAttentionKeyIsCache(std::string_view name) {
  const ServingAttentionLayout* op = ServingAttentionOpOf(name);
  return op != nullptr && op->key_is_cache;
}

bool IsKvCacheWriteOp(std::string_view name) {
  const FamilyOp* f = FamilyOpOf(name);
  return f != nullptr && f->family == Family::kCacheWrite;
}

int KvCacheElementBytes(const OpInputs& in) {
  // CacheWriteFigures' layout: the cache is the third input.
  return IsTensorInput(in, 2) ? TorchTypeBytes(in.in[2].type) : 0;
}

std::optional<ServingAttentionArgs> ServingAttentionArgsOf(
    std::string_view name, const OpInputs& in) {
  const ServingAttentionLayout* op = ServingAttentionOpOf(name);
  if (op == nullptr || !IsTensorInput(in, op->q) || !IsTensorInput(in, op->k) ||
      !IsTensorInput(in, op->v)) {
    return std::nullopt;
  }
  const OpInput& q = in.in[op->q];
  const OpInput& k = in.in[op->k];
  const OpInput& v = in.in[op->v];
  if (q.rank != 3 || k.rank < 3 || v.rank < 3) return std::nullopt;
  ServingAttentionArgs a;
  a.tokens = q.dims[0];
  a.heads = q.dims[1];
  a.head_dim = q.dims[2];
  a.kv_heads = k.dims[k.rank - 2];
  a.head_dim_v = v.dims[v.rank - 1];
  a.q_bytes = TorchTypeBytes(q.type);
  a.kv_bytes = TorchTypeBytes(k.type);
  a.q_type = CudaTypeOfTorchType(q.type);
  if (a.tokens <= 0 || a.heads <= 0 || a.kv_heads <= 0 ||
      a.heads % a.kv_heads != 0 || k.dims[k.rank - 1] != a.head_dim ||
      v.dims[v.rank - 2] != a.kv_heads || a.head_dim_v <= 0) {
    return std::nullopt;
  }
  return a;
}

std::optional<OpFigures> ServingAttentionFigures(
    const ServingAttentionArgs& args, const ServingStep& step,
    int64_t window) {
  if (!step.has_aggregates || step.tokens() <= 0 ||
      step.tokens() > args.tokens) {
    return std::nullopt;
  }
  rooftrace::ServingAttentionOp op;
  op.c_sq = step.c_sq;
  op.c_sk = step.c_sk;
  op.c_sqsq = step.c_sqsq;
  op.c_sqsk = step.c_sqsk;
  op.g_sq = step.g_sq;
  op.g_sk = step.g_sk;
  op.g_sqsk = step.g_sqsk;
  op.c_requests = step.context_requests;
  op.g_requests = step.generation_requests;
  op.window = window;
  op.heads = args.heads;
  op.kv_heads = args.kv_heads;
  op.head_dim = args.head_dim;
  op.head_dim_v = args.head_dim_v;
  op.q_element_bytes = args.q_bytes;
  op.kv_element_bytes = args.kv_bytes;
  OpFigures f;
  f.flops = ServingAttentionFlops(op);
  f.min_bytes = ServingAttentionMinBytes(op);
  f.precision = MatrixOpPrecision(args.q_type);
  f.output_bytes = ServingAttentionOutputBytes(op);
  f.shape = "hq=" + std::to_string(args.heads) +
            " hkv=" + std::to_string(args.kv_heads) +
            " d=" + std::to_string(args.head_dim) +
            " prefill=" + std::to_string(step.context_requests) + "x" +
            std::to_string(step.c_sq) + "/" + std::to_string(step.c_sk) +
            " decode=" + std::to_string(step.generation_requests) + "x" +
            std::to_string(step.g_sq) + "/" + std::to_string(step.g_sk);
  if (window > 0) f.shape += " window=" + std::to_string(window);
  return f;
}

bool IsMoeOp(std::string_view name) {
  return name == "vllm::moe_forward" || name == "vllm::moe_forward_shared";
}

std::optional<MoeFigures> MoeFiguresOf(const OpInputs& in,
                                       const ModelFacts& model,
                                       const MoeRun& run) {
  if (!model.moe() || model.expert_intermediate_size <= 0 ||
      run.tensor_parallel < 1 ||
      model.expert_intermediate_size % run.tensor_parallel != 0 ||
      !IsTensorInput(in, 0) || !IsTensorInput(in, 1)) {
    return std::nullopt;
  }
  const OpInput& x = in.in[0];
  const OpInput& logits = in.in[1];
  if (x.rank != 2 || logits.rank != 2 || logits.dims[0] != x.dims[0]) {
    return std::nullopt;
  }
  const int64_t hidden = x.dims[1];
  // The alignment the call's hidden size was padded to (1: none).
  int64_t align = 0;
  for (int64_t a : {int64_t{1}, int64_t{64}, int64_t{128}, int64_t{256},
                    int64_t{512}, int64_t{1024}}) {
    if ((model.hidden_size + a - 1) / a * a == hidden) {
      align = a;
      break;
    }
  }
  // Routed experts: the router's width (a shared expert is not routed).
  if (align == 0 || logits.dims[1] != model.num_experts) return std::nullopt;
  MoeGemmOp m;
  m.tokens = x.dims[0];
  m.hidden = hidden;
  const int64_t width = model.expert_intermediate_size / run.tensor_parallel;
  m.inter = (width + align - 1) / align * align;
  m.experts = model.num_experts;
  m.top_k = model.experts_per_token;
  m.gated = model.gated_mlp;
  m.fused_activation = run.fused_activation;
  m.activation_bytes = TorchTypeBytes(x.type);
  m.weight_bits = model.expert_weight_bits > 0 ? model.expert_weight_bits
                                               : 8 * m.activation_bytes;
  const std::string sizes = "t=" + std::to_string(m.tokens) +
                            " h=" + std::to_string(m.hidden) +
                            " i=" + std::to_string(m.inter) +
                            " e=" + std::to_string(m.experts) +
                            " k=" + std::to_string(m.top_k) +
                            " w" + std::to_string(m.weight_bits) +
                            (run.tensor_parallel > 1
                                 ? " tp=" + std::to_string(run.tensor_parallel)
                                 : std::string());
  MoeFigures out;
  // The products run at the activations' precision (on GPUs without
  // narrower tensor instructions the kernels widen the weights first),
  // unless the kernel's name says its operands' types.
  const Precision p = run.kernel_precision != Precision::kUnknown
                          ? run.kernel_precision
                          : MatrixOpPrecision(CudaTypeOfTorchType(x.type));
  out.up.flops = MoeGemmFlops(m);
  out.up.min_bytes = MoeGemmMinBytes(m);
  out.up.precision = p;
  out.up.shape = "moe up " + sizes;
  m.up = false;
  out.down.flops = MoeGemmFlops(m);
  out.down.min_bytes = MoeGemmMinBytes(m);
  out.down.precision = p;
  out.down.shape = "moe down " + sizes;
  out.finalize.flops = MoeFinalizeFlops(m);
  out.finalize.min_bytes = MoeFinalizeMinBytes(m);
  out.finalize.precision = PointwisePrecision(CudaTypeOfTorchType(x.type));
  out.finalize.shape = "moe finalize " + sizes;
  return out;
}

std::optional<OpFigures> MoeRoutingFiguresOf(const OpInputs& in,
                                             const ModelFacts& model) {
  if (!model.moe() || !IsTensorInput(in, 1)) return std::nullopt;
  const OpInput& logits = in.in[1];
  if (logits.rank != 2 || logits.dims[1] != model.num_experts) {
    return std::nullopt;
  }
  MoeRoutingOp r;
  r.tokens = logits.dims[0];
  r.experts = logits.dims[1];
  r.top_k = model.experts_per_token;
  r.logit_bytes = TorchTypeBytes(logits.type);
  OpFigures f;
  f.flops = MoeRoutingFlops(r);
  f.min_bytes = MoeRoutingMinBytes(r);
  f.precision = PointwisePrecision(CudaTypeOfTorchType(logits.type));
  f.shape = "moe routing t=" + std::to_string(r.tokens) +
            " e=" + std::to_string(r.experts) +
            " k=" + std::to_string(r.top_k);
  return f;
}

bool IsMoeRoutingKernel(std::string_view kernel) {
  return ContainsNoCase(kernel, "routing") || ContainsNoCase(kernel, "topk");
}

bool IsMoeFinalizeKernel(std::string_view kernel) {
  return Contains(kernel, "finalize") || Contains(kernel, "moe_sum") ||
         Contains(kernel, "combine");
}

bool IsMoeGemmKernel(std::string_view kernel) {
  if (Contains(kernel, "finalize") || Contains(kernel, "routing")) return false;
  return Contains(kernel, "matmul") || Contains(kernel, "gemm") ||
         Contains(kernel, "bmm") || Contains(kernel, "fused_moe");
}

bool IsFusedActivationKernel(std::string_view kernel) {
  // TensorRT-LLM's generated names spell it "swiGlu".
  return ContainsNoCase(kernel, "swiglu") || ContainsNoCase(kernel, "silu") ||
         ContainsNoCase(kernel, "gelu");
}

std::optional<OpFigures> FiguresOfOp(std::string_view name,
                                     const OpInputs& inputs) {
  if (const AttentionOp* a = AttentionOpOf(name)) {
    return AttentionFigures(*a, inputs);
  }
  if (const ConvOp* c = ConvOpOf(name)) return ConvFigures(*c, inputs);
  if (const FamilyOp* f = FamilyOpOf(name)) return FamilyFigures(*f, inputs);
  if (IsTritonPointwiseOp(name)) return TritonPointwiseFigures(inputs);
  const int per_element = PointwiseOf(name);
  if (per_element >= 0) {
    const bool overwrites = name == "aten::copy_" || name == "aten::fill_" ||
                            name == "aten::zero_";
    return PointwiseFigures(per_element, inputs, overwrites);
  }
  return std::nullopt;
}

}  // namespace rooftrace::kineto
