#include "sources/kineto/op_shapes.h"

#include <algorithm>
#include <cstdlib>

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

bool IsTensorInput(const OpInputs& in, int i) {
  return i < in.count && in.in[i].rank >= 0 &&
         CudaTypeOfTorchType(in.in[i].type) >= 0;
}

int64_t Elements(const OpInput& t) {
  int64_t p = 1;
  for (int i = 0; i < t.rank; ++i) p *= t.dims[i];
  return p;
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
// gives the output at least the largest input's elements); copy_, fill_
// and zero_ do not read their first input, which they overwrite.
std::optional<OpFigures> PointwiseFigures(std::string_view name,
                                          int flops_per_element,
                                          const OpInputs& in) {
  const bool overwrites = name == "aten::copy_" || name == "aten::fill_" ||
                          name == "aten::zero_";
  int largest = -1;
  uint64_t read = 0;
  for (int i = 0; i < in.count; ++i) {
    if (!IsTensorInput(in, i)) continue;
    const int64_t n = Elements(in.in[i]);
    if (largest < 0 || n > Elements(in.in[largest])) largest = i;
    if (i == 0 && overwrites) continue;
    const int size = ElementBytes(CudaTypeOfTorchType(in.in[i].type));
    read += static_cast<uint64_t>(n) * static_cast<uint64_t>(size);
  }
  if (largest < 0) return std::nullopt;
  const OpInput& out = in.in[largest];
  const int32_t type = CudaTypeOfTorchType(out.type);
  PointwiseOp p;
  p.elements = Elements(out);
  p.flops_per_element = flops_per_element;
  p.input_bytes = read;
  p.output_bytes = static_cast<uint64_t>(p.elements) *
                   static_cast<uint64_t>(ElementBytes(type));
  OpFigures f;
  f.flops = PointwiseFlops(p);
  f.min_bytes = PointwiseMinBytes(p);
  f.precision = PointwisePrecision(type);
  if (f.min_bytes == 0) return std::nullopt;
  f.shape = DimsText(out);
  return f;
}

}  // namespace

bool IsModelledOp(std::string_view name) {
  return AttentionOpOf(name) != nullptr || ConvOpOf(name) != nullptr ||
         PointwiseOf(name) >= 0;
}

std::optional<OpFigures> FiguresOfOp(std::string_view name,
                                     const OpInputs& inputs) {
  if (const AttentionOp* a = AttentionOpOf(name)) {
    return AttentionFigures(*a, inputs);
  }
  if (const ConvOp* c = ConvOpOf(name)) return ConvFigures(*c, inputs);
  const int per_element = PointwiseOf(name);
  if (per_element >= 0) return PointwiseFigures(name, per_element, inputs);
  return std::nullopt;
}

}  // namespace rooftrace::kineto
