#include "analyzer/predict.h"

#include <algorithm>
#include <cmath>

#include "model/datasheet.h"
#include "model/device_profile.h"
#include "model/roof_model.h"

namespace rooftrace::analyzer {
namespace {

// FLOPs per element of the non-GEMM ops (conventions; these ops are
// memory-bound by orders of magnitude, so the counts only place them on
// the plot). GELU's 12 is seed 000's.
constexpr double kNormFlops = 4;     // square, sum, scale, weight
constexpr double kLayerNormFlops = 5;  // mean, subtract, square, scale, affine
constexpr double kSiluMulFlops = 5;  // x / (1 + exp(-x)) * up
constexpr double kGeluFlops = 12;
constexpr double kSoftmaxFlops = 5;  // max, subtract, exp, sum, divide
// Embeddings, norms' weights and the lm head stay 16-bit (quantizers leave
// them alone).
constexpr double kHeadBytes = 2;

// Largest inputs accepted: the decode total loops over every step.
constexpr int64_t kMaxBatch = 1 << 24;
constexpr int64_t kMaxTokens = 10'000'000;
constexpr int64_t kMaxGenerate = 1'000'000;

double Div(double a, double b) { return b > 0 ? a / b : 0; }

// Everything a step's ops are built from: the model cut to one GPU's
// shard, element sizes and roofs.
struct Layout {
  const ModelConfig* model = nullptr;
  PredictOptions options;
  const PredictDevice* device = nullptr;
  int64_t H = 0, hq = 0, hkv = 0, d = 0, I = 0, V = 0, L = 0;
  double wb = 2, ab = 2, kvb = 2;
  Precision compute = Precision::kFp16Tensor;

  double Peak(Precision p) const {
    return device->peak_flops_per_s[static_cast<int>(p)];
  }

  // Fills the times from the numbers.
  void Finish(OpCost* op) const {
    op->peak_flops_per_s = Peak(op->precision);
    op->t_math_s = Div(op->flops, op->peak_flops_per_s);
    op->t_mem_s = Div(op->bytes(), device->dram_bytes_per_s);
    op->t_comm_s = Div(op->comm_bytes, device->link_bytes_per_s);
  }

  double AllReduce(double bytes) const {
    return AllReduceLinkBytes(bytes, options.tp);
  }
};

OpCost Gemm(std::string op, int64_t count, int64_t m, int64_t n, int64_t k,
            double a, double b, double c) {
  OpCost o;
  o.op = std::move(op);
  o.kind = OpKind::kGemm;
  o.count = count;
  o.m = m;
  o.n = n;
  o.k = k;
  o.batch = 1;
  o.a_bytes = a;
  o.b_bytes = b;
  o.c_bytes = c;
  o.matchable = true;
  o.flops = 2.0 * m * n * k;
  o.act_bytes =
      (static_cast<double>(m) * k * a + static_cast<double>(m) * n * c);
  o.weight_bytes = static_cast<double>(k) * n * b;
  return o;
}

OpCost Elementwise(std::string op, int64_t count, double flops,
                   double act_bytes) {
  OpCost o;
  o.op = std::move(op);
  o.kind = OpKind::kElementwise;
  o.precision = Precision::kFp32;
  o.count = count;
  o.flops = flops;
  o.act_bytes = act_bytes;
  return o;
}

GemmDims Part(std::string part, int64_t m, int64_t n, int64_t k, int64_t batch,
              double a, double b, double c) {
  GemmDims g;
  g.part = std::move(part);
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  g.a_bytes = a;
  g.b_bytes = b;
  g.c_bytes = c;
  return g;
}

// Keys visible to the `q` queries at positions ctx-q .. ctx-1 under a
// causal mask and a sliding window `w` (0: none): summed over the queries
// (what flash attention multiplies), and the distinct keys read.
struct Visible {
  double summed = 0;
  double distinct = 0;
};
Visible VisibleKeys(int64_t q, int64_t ctx, int64_t w) {
  const double lo = static_cast<double>(ctx - q + 1);  // query p sees p+1
  const double hi = static_cast<double>(ctx);
  Visible v;
  if (w <= 0 || w >= hi) {
    v.summed = (lo + hi) * (hi - lo + 1) / 2;
    v.distinct = hi;
    return v;
  }
  const double W = static_cast<double>(w);
  if (W < lo) {
    v.summed = W * (hi - lo + 1);
  } else {
    v.summed = (lo + W) * (W - lo + 1) / 2 + W * (hi - W);
  }
  v.distinct = hi - std::max(0.0, hi - q - W + 1);
  return v;
}

// The attention ops of one layer for `batch` sequences of `q` new tokens
// attending to `ctx` keys.
std::vector<OpCost> AttentionOps(const Layout& l, AttentionImpl impl,
                                 int64_t batch, int64_t q, int64_t ctx) {
  const double B = static_cast<double>(batch);
  const double hq = static_cast<double>(l.hq), hkv = static_cast<double>(l.hkv);
  const double d = static_cast<double>(l.d);
  const int64_t heads_batch = batch * l.hq;
  // An encoder keeps no cache: K and V are read where the QKV GEMM wrote
  // them, nothing is appended.
  const bool encoder = l.model->encoder;
  const double kv_write = encoder ? 0 : 2 * B * q * hkv * d * l.kvb;
  const GemmDims score =
      Part("score", q, ctx, l.d, heads_batch, l.ab, l.kvb, l.ab);
  const GemmDims value =
      Part("value", q, l.d, ctx, heads_batch, l.ab, l.kvb, l.ab);
  std::vector<OpCost> out;
  if (impl == AttentionImpl::kFlash) {
    // One op per kind of layer: full attention, and the sliding-window
    // layers (each query sees at most the window; model/model_config.h
    // says which layers have one). Bidirectional (an encoder): every query
    // sees all ctx keys.
    const int64_t windowed = encoder ? 0 : l.model->WindowedLayerCount();
    const int64_t window = l.model->sliding_window;
    const bool mixed = windowed > 0 && windowed < l.L;
    for (int kind = 0; kind < 2; ++kind) {
      const int64_t w = kind == 0 ? 0 : window;
      const int64_t count = kind == 0 ? l.L - windowed : windowed;
      if (count <= 0) continue;
      const Visible v =
          encoder ? Visible{static_cast<double>(q) * static_cast<double>(ctx),
                            static_cast<double>(ctx)}
                  : VisibleKeys(q, ctx, w);
      OpCost o;
      o.op = mixed && w > 0 ? "attention.window" : "attention";
      o.kind = OpKind::kAttention;
      o.precision = Precision::kFp16Tensor;
      o.count = count;
      o.m = q;
      o.n = ctx;
      o.k = l.d;
      o.batch = heads_batch;
      o.a_bytes = l.ab;
      o.b_bytes = l.kvb;
      o.c_bytes = l.ab;
      o.parts = {score, value};
      o.flops = 4 * B * hq * d * v.summed;
      o.kv_bytes = 2 * B * hkv * d * l.kvb * v.distinct + kv_write;
      o.act_bytes = 2 * B * q * hq * d * l.ab;
      out.push_back(std::move(o));
    }
    return out;
  }
  // Unfused: the full q x ctx score matrix is computed (masked entries
  // included), stored, normalised, stored again and reloaded; K and V are
  // read once per query head (the batched GEMM sees batch x heads).
  const double scores = B * hq * q * static_cast<double>(ctx);
  OpCost s = Gemm("attn_score", l.L, q, ctx, l.d, l.ab, l.kvb, l.ab);
  s.kind = OpKind::kGemm;
  s.precision = Precision::kFp16Tensor;
  s.batch = heads_batch;
  s.flops = score.Flops();
  s.weight_bytes = 0;
  s.kv_bytes = B * hq * ctx * d * l.kvb + kv_write;
  s.act_bytes = B * hq * q * d * l.ab + scores * l.ab;
  out.push_back(std::move(s));
  out.push_back(Elementwise("attn_softmax", l.L, kSoftmaxFlops * scores,
                            2 * scores * l.ab));
  OpCost v = Gemm("attn_value", l.L, q, l.d, ctx, l.ab, l.kvb, l.ab);
  v.precision = Precision::kFp16Tensor;
  v.batch = heads_batch;
  v.flops = value.Flops();
  v.weight_bytes = 0;
  v.kv_bytes = B * hq * ctx * d * l.kvb;
  v.act_bytes = scores * l.ab + B * hq * q * d * l.ab;
  out.push_back(std::move(v));
  return out;
}

// The ops AttentionOps() makes: the only ones whose cost changes with the
// KV length.
bool IsAttentionOp(const OpCost& o) {
  return o.kind == OpKind::kAttention || o.op == "attn_score" ||
         o.op == "attn_softmax" || o.op == "attn_value";
}

// Bytes of the attention ops under each implementation (for the note that
// sets them side by side), one layer.
double AttentionBytes(const Layout& l, AttentionImpl impl, int64_t batch,
                      int64_t q, int64_t ctx) {
  double total = 0;
  // Mixed layers: the mean layer's.
  for (const OpCost& o : AttentionOps(l, impl, batch, q, ctx)) {
    total += o.bytes() * static_cast<double>(o.count) /
             static_cast<double>(std::max<int64_t>(l.L, 1));
  }
  return total;
}

// Intermediate (activation) bytes of the MLP at a fusion level, one layer.
double MlpIntermediateBytes(int64_t tokens, int64_t intermediate, bool gated,
                            MlpFusion fusion, double ab) {
  const double T = static_cast<double>(tokens);
  const double I = static_cast<double>(intermediate);
  const double n = (gated ? 2 : 1) * I;
  switch (fusion) {
    case MlpFusion::kUnfused:
      return T * n * ab + (T * n + T * I) * ab + T * I * ab;
    case MlpFusion::kEpilogue:
      return 2 * T * I * ab;
    case MlpFusion::kFull:
      return 0;
  }
  return 0;
}

// One forward step: `batch` sequences, `q` new tokens each, the last
// attending to `ctx` keys.
// One layer's attention block, decoder and encoder alike: the fused QKV
// projection (with its q, k and v parts), attention of `q` queries per
// sequence over `kv` keys, and the output projection (an all-reduce under
// --tp).
void AppendAttentionBlock(const Layout& l, int64_t batch, int64_t q,
                          int64_t kv, std::vector<OpCost>* ops) {
  const int64_t T = batch * q;
  const double Td = static_cast<double>(T);
  const double H = static_cast<double>(l.H);
  OpCost qkv =
      Gemm("qkv", l.L, T, (l.hq + 2 * l.hkv) * l.d, l.H, l.ab, l.wb, l.ab);
  qkv.precision = l.compute;
  qkv.parts = {Part("q", T, l.hq * l.d, l.H, 1, l.ab, l.wb, l.ab),
               Part("k", T, l.hkv * l.d, l.H, 1, l.ab, l.wb, l.ab),
               Part("v", T, l.hkv * l.d, l.H, 1, l.ab, l.wb, l.ab)};
  ops->push_back(std::move(qkv));
  for (OpCost& o : AttentionOps(l, l.options.attention, batch, q, kv)) {
    ops->push_back(std::move(o));
  }
  OpCost o_proj = Gemm("o_proj", l.L, T, l.H, l.hq * l.d, l.ab, l.wb, l.ab);
  o_proj.precision = l.compute;
  o_proj.comm_bytes = l.AllReduce(Td * H * l.ab);
  ops->push_back(std::move(o_proj));
}

// The embedding gather of T tokens: each GPU holds a 1/tp slice of the
// vocabulary and reads the rows of the tokens in it (T / tp of them for
// evenly spread ids, never more than its slice), plus `other_rows` rows of
// other tables (an encoder's positions and token types); the partial rows
// are all-reduced.
OpCost EmbeddingGather(const Layout& l, int64_t tokens, double other_rows) {
  const double Td = static_cast<double>(tokens);
  const double H = static_cast<double>(l.H);
  OpCost embed;
  embed.op = "embed";
  embed.kind = OpKind::kGather;
  embed.precision = Precision::kFp32;
  const double rows =
      std::min(std::ceil(Td / l.options.tp), static_cast<double>(l.V));
  embed.weight_bytes = (rows + other_rows) * H * kHeadBytes;
  embed.act_bytes = Td * H * l.ab;
  embed.comm_bytes = l.AllReduce(Td * H * l.ab);
  return embed;
}

std::vector<OpCost> StepOps(const Layout& l, const std::string& phase,
                            int64_t batch, int64_t q, int64_t ctx) {
  const ModelConfig& m = *l.model;
  const int64_t T = batch * q;
  const double Td = static_cast<double>(T);
  const double H = static_cast<double>(l.H);
  std::vector<OpCost> ops;

  ops.push_back(EmbeddingGather(l, T, 0));

  auto norm = [&](const char* name, int64_t count) {
    OpCost o = Elementwise(name, count, kNormFlops * Td * H, 2 * Td * H * l.ab);
    o.weight_bytes = H * kHeadBytes;
    return o;
  };
  ops.push_back(norm("attn_norm", l.L));

  AppendAttentionBlock(l, batch, q, ctx, &ops);

  ops.push_back(norm("mlp_norm", l.L));

  if (!m.moe()) {
    for (OpCost& o :
         MlpOps(T, l.H, l.I, m.gated_mlp, l.options.mlp_fusion, l.wb, l.ab)) {
      o.count = l.L;
      if (o.kind == OpKind::kGemm) o.precision = l.compute;
      if (o.op == "down") o.comm_bytes = l.AllReduce(Td * H * l.ab);
      ops.push_back(std::move(o));
    }
  } else {
    const int64_t E = m.num_experts, e = m.experts_per_token;
    OpCost router = Gemm("router", l.L, T, E, l.H, l.ab, kHeadBytes, l.ab);
    router.precision = Precision::kFp16Tensor;
    ops.push_back(std::move(router));
    // Each token's rows go to e experts; with uniform routing a step
    // touches E (1 - (1 - e/E)^T) distinct experts' weights on average.
    const int64_t routed = T * e;
    const double touched =
        E * (1 - std::pow(1 - static_cast<double>(e) / E, Td));
    for (OpCost& o : MlpOps(routed, l.H, l.I, m.gated_mlp, l.options.mlp_fusion,
                            l.wb, l.ab)) {
      o.op = "experts." + o.op;
      o.count = l.L;
      o.weight_bytes *= touched;
      if (o.kind == OpKind::kGemm) {
        o.precision = l.compute;
        o.matchable = false;  // grouped GEMM: rows per expert vary
        o.parts.clear();
      }
      if (o.op == "experts.down") o.comm_bytes = l.AllReduce(Td * H * l.ab);
      ops.push_back(std::move(o));
    }
  }

  ops.push_back(norm("final_norm", 1));
  // Logits for the last position of each sequence only; vocab-parallel
  // shards gathered.
  const int64_t V = l.V;
  OpCost head =
      Gemm("lm_head", 1, batch, V, l.H, kHeadBytes, kHeadBytes, kHeadBytes);
  head.precision = Precision::kFp16Tensor;
  head.comm_bytes = static_cast<double>(l.options.tp - 1) * batch *
                    static_cast<double>(V) * kHeadBytes;
  ops.push_back(std::move(head));

  for (OpCost& o : ops) {
    o.phase = phase;
    l.Finish(&o);
  }
  return ops;
}

// An encoder's one forward step (BERT, post-LayerNorm): embeddings and
// their norm; per layer QKV, bidirectional attention, output projection,
// norm, up, GELU, down, norm; then the masked-LM head over every token
// (dense, GELU, norm, vocabulary projection) or the pooler on each
// sequence's first token.
std::vector<OpCost> EncoderStepOps(const Layout& l, int64_t batch, int64_t q) {
  const ModelConfig& m = *l.model;
  const int64_t T = batch * q;
  const double Td = static_cast<double>(T);
  const double H = static_cast<double>(l.H);
  std::vector<OpCost> ops;
  // Word rows, the q position rows and the token-type table; the summed
  // rows written once.
  ops.push_back(
      EmbeddingGather(l, T, static_cast<double>(q + m.type_vocab_size)));
  auto norm = [&](const char* name, int64_t count) {
    OpCost o = Elementwise(name, count, kLayerNormFlops * Td * H,
                           2 * Td * H * l.ab);
    o.weight_bytes = 2 * H * kHeadBytes;  // weight and bias
    return o;
  };
  ops.push_back(norm("embed_norm", 1));
  AppendAttentionBlock(l, batch, q, q, &ops);
  ops.push_back(norm("attn_norm", l.L));
  for (OpCost& o : MlpOps(T, l.H, l.I, false, l.options.mlp_fusion, l.wb, l.ab)) {
    o.count = l.L;
    if (o.kind == OpKind::kGemm) o.precision = l.compute;
    if (o.op == "down") o.comm_bytes = l.AllReduce(Td * H * l.ab);
    ops.push_back(std::move(o));
  }
  ops.push_back(norm("mlp_norm", l.L));
  // The head stays 16-bit, on the fp16/bf16 tensor roof (Gemm's default).
  if (m.mlm_head) {
    OpCost dense =
        Gemm("head_dense", 1, T, l.H, l.H, kHeadBytes, kHeadBytes, kHeadBytes);
    ops.push_back(std::move(dense));
    ops.push_back(Elementwise("head_gelu", 1, kGeluFlops * Td * H,
                              2 * Td * H * kHeadBytes));
    ops.push_back(norm("head_norm", 1));
    OpCost head =
        Gemm("lm_head", 1, T, l.V, l.H, kHeadBytes, kHeadBytes, kHeadBytes);
    head.comm_bytes = static_cast<double>(l.options.tp - 1) * Td *
                      static_cast<double>(l.V) * kHeadBytes;
    ops.push_back(std::move(head));
  } else {
    ops.push_back(Gemm("pooler", 1, batch, l.H, l.H, kHeadBytes, kHeadBytes,
                       kHeadBytes));
  }
  for (OpCost& o : ops) {
    o.phase = "forward";
    l.Finish(&o);
  }
  return ops;
}

PhaseTotals Totals(const Layout& l, const std::string& phase,
                   const std::vector<OpCost>& ops, int64_t batch, int64_t q,
                   int64_t ctx) {
  PhaseTotals t;
  t.phase = phase;
  t.tokens = batch * q;
  t.ctx = ctx;
  for (const OpCost& o : ops) {
    if (o.phase != phase) continue;
    const double c = static_cast<double>(o.count);
    t.flops += c * o.flops;
    t.bytes += c * o.bytes();
    t.comm_bytes += c * o.comm_bytes;
    t.t_math_s += c * o.t_math_s;
    t.t_mem_s += c * o.t_mem_s;
    t.t_comm_s += c * o.t_comm_s;
    t.roofline_s += c * o.roofline_s();
    t.sum_s += c * o.sum_s();
  }
  const double L = static_cast<double>(l.L);
  t.attention_flash_bytes =
      L * AttentionBytes(l, AttentionImpl::kFlash, batch, q, ctx);
  t.attention_unfused_bytes =
      L * AttentionBytes(l, AttentionImpl::kUnfused, batch, q, ctx);
  const ModelConfig& m = *l.model;
  const int64_t rows = m.moe() ? batch * q * m.experts_per_token : batch * q;
  for (MlpFusion f :
       {MlpFusion::kUnfused, MlpFusion::kEpilogue, MlpFusion::kFull}) {
    t.mlp_intermediate_bytes[static_cast<int>(f)] =
        L * MlpIntermediateBytes(rows, l.I, m.gated_mlp, f, l.ab);
  }
  return t;
}

// Decode step at the first position with `batch` sequences: T_math >=
// T_mem over its GEMMs (gemm_only) or over all its ops.
bool DecodeComputeBound(const Layout& l, int64_t batch, bool gemm_only) {
  const int64_t ctx = l.options.prompt + 1;
  double math = 0, mem = 0;
  for (const OpCost& o : StepOps(l, "decode", batch, 1, ctx)) {
    if (gemm_only && (o.kind != OpKind::kGemm || IsAttentionOp(o))) continue;
    math += o.count * o.t_math_s;
    mem += o.count * o.t_mem_s;
  }
  return math >= mem;
}

std::optional<int64_t> SmallestComputeBoundBatch(const Layout& l,
                                                 bool gemm_only) {
  if (!DecodeComputeBound(l, kMaxBatch, gemm_only)) return std::nullopt;
  int64_t lo = 1, hi = kMaxBatch;  // answer in [lo, hi]
  if (DecodeComputeBound(l, 1, gemm_only)) return 1;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (DecodeComputeBound(l, mid, gemm_only)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

Status Positive(const char* option, int64_t v, int64_t max) {
  if (v <= 0) {
    return InvalidArgument(std::string(option) + " must be > 0 (found " +
                           std::to_string(v) + ")");
  }
  if (v > max) {
    return InvalidArgument(std::string(option) + " " + std::to_string(v) +
                           " is above the largest accepted, " +
                           std::to_string(max));
  }
  return OkStatus();
}

std::string Divisors(int64_t n) {
  std::string out;
  for (int64_t i = 1; i <= n && i <= 64; ++i) {
    if (n % i == 0) out += (out.empty() ? "" : ", ") + std::to_string(i);
  }
  return out;
}

// The prediction of an encoder (Predict's tail for one): one "forward"
// step at --prompt tokens per sequence, no decode; --generate is ignored.
Prediction PredictEncoder(const Layout& l, Prediction p) {
  const int64_t B = l.options.batch, P = l.options.prompt;
  std::vector<OpCost> ops = EncoderStepOps(l, B, P);
  p.phases.push_back(Totals(l, "forward", ops, B, P, P));
  p.ops = std::move(ops);
  p.ttft_lower_s = p.end_to_end_lower_s = p.phases.front().roofline_s;
  p.ttft_upper_s = p.phases.front().sum_s;
  const ModelConfig& m = *l.model;
  const double H = static_cast<double>(l.H);
  const double layer_w =
      (static_cast<double>((l.hq + 2 * l.hkv) * l.d) * H +
       static_cast<double>(l.hq * l.d) * H + 2.0 * H * l.I) *
          l.wb +
      4 * H * kHeadBytes;
  const double embed =
      (static_cast<double>(l.V + m.max_position_embeddings +
                           m.type_vocab_size) *
           H +
       2 * H) *
      kHeadBytes;
  const double head = (H * H + (m.mlm_head ? 2 * H : 0)) * kHeadBytes;
  p.weight_bytes_per_gpu = l.L * layer_w + embed + head;
  p.kv_bytes_per_token_per_gpu = 0;
  return p;
}

}  // namespace

// ------------------------------------------------------------ names

std::string_view DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kFp8:
      return "fp8";
    case Dtype::kInt8:
      return "int8";
    case Dtype::kInt4:
      return "int4";
  }
  return "bf16";
}

std::optional<Dtype> DtypeFromName(std::string_view name) {
  for (Dtype d :
       {Dtype::kBf16, Dtype::kFp16, Dtype::kFp8, Dtype::kInt8, Dtype::kInt4}) {
    if (DtypeName(d) == name) return d;
  }
  return std::nullopt;
}

double DtypeBytes(Dtype d) {
  switch (d) {
    case Dtype::kBf16:
    case Dtype::kFp16:
      return 2;
    case Dtype::kFp8:
    case Dtype::kInt8:
      return 1;
    case Dtype::kInt4:
      return 0.5;
  }
  return 2;
}

std::string_view AttentionImplName(AttentionImpl a) {
  return a == AttentionImpl::kFlash ? "flash" : "unfused";
}

std::string_view MlpFusionName(MlpFusion f) {
  switch (f) {
    case MlpFusion::kUnfused:
      return "unfused";
    case MlpFusion::kEpilogue:
      return "epilogue";
    case MlpFusion::kFull:
      return "full";
  }
  return "unfused";
}

std::string_view OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kElementwise:
      return "elementwise";
    case OpKind::kGather:
      return "gather";
  }
  return "gemm";
}

// ------------------------------------------------------------ costs

double GemmDims::Flops() const {
  return 2.0 * static_cast<double>(m) * n * k * batch;
}

double GemmDims::MinBytes() const {
  return (static_cast<double>(m) * k * a_bytes +
          static_cast<double>(k) * n * b_bytes +
          static_cast<double>(m) * n * c_bytes) *
         batch;
}

std::optional<double> OpCost::intensity() const {
  if (flops <= 0 || bytes() <= 0) return std::nullopt;
  return flops / bytes();
}

double OpCost::roofline_s() const {
  return std::max({t_math_s, t_mem_s, t_comm_s});
}

double OpCost::sum_s() const { return t_math_s + t_mem_s + t_comm_s; }

std::string_view OpCost::bound() const {
  if (t_comm_s > t_math_s && t_comm_s > t_mem_s) return "comms";
  return t_math_s >= t_mem_s && t_math_s > 0 ? "compute" : "memory";
}

GemmDims OpCost::AsGemm() const {
  return Part("", m, n, k, batch, a_bytes, b_bytes, c_bytes);
}

std::optional<double> PhaseTotals::intensity() const {
  if (flops <= 0 || bytes <= 0) return std::nullopt;
  return flops / bytes;
}

const PhaseTotals* Prediction::Phase(std::string_view phase) const {
  for (const PhaseTotals& t : phases) {
    if (t.phase == phase) return &t;
  }
  return nullptr;
}

StatusOr<Precision> ComputePrecision(Dtype weights, Dtype activations) {
  const std::string pair = "--weight-dtype " + std::string(DtypeName(weights)) +
                           " with --activation-dtype " +
                           std::string(DtypeName(activations));
  switch (activations) {
    case Dtype::kBf16:
    case Dtype::kFp16:
      return Precision::kFp16Tensor;
    case Dtype::kFp8:
      if (weights == Dtype::kFp8 || weights == Dtype::kInt4) {
        return Precision::kFp8Tensor;
      }
      return InvalidArgument(pair +
                             ": fp8 GEMMs need fp8 (or int4) weights; use "
                             "--weight-dtype fp8, or 16-bit activations");
    case Dtype::kInt8:
      if (weights == Dtype::kInt8 || weights == Dtype::kInt4) {
        return Precision::kInt8Tensor;
      }
      return InvalidArgument(pair +
                             ": int8 GEMMs need int8 (or int4) weights; use "
                             "--weight-dtype int8, or 16-bit activations");
    case Dtype::kInt4:
      return InvalidArgument(
          "--activation-dtype int4: int4 is a weight format (GEMMs widen it); "
          "use --weight-dtype int4 with bf16, fp8 or int8 activations");
  }
  return InvalidArgument(pair + ": not a supported combination");
}

std::vector<OpCost> MlpOps(int64_t tokens, int64_t hidden, int64_t intermediate,
                           bool gated, MlpFusion fusion, double wb, double ab) {
  const double T = static_cast<double>(tokens);
  const double I = static_cast<double>(intermediate);
  const int64_t n = (gated ? 2 : 1) * intermediate;
  std::vector<OpCost> ops;
  OpCost up = Gemm(gated ? "gate_up" : "up", 1, tokens, n, hidden, ab, wb, ab);
  if (gated) {
    up.parts = {Part("gate", tokens, intermediate, hidden, 1, ab, wb, ab),
                Part("up", tokens, intermediate, hidden, 1, ab, wb, ab)};
  }
  OpCost act = Elementwise(gated ? "silu_mul" : "gelu", 1,
                           (gated ? kSiluMulFlops : kGeluFlops) * T * I, 0);
  OpCost down = Gemm("down", 1, tokens, hidden, intermediate, ab, wb, ab);
  const double up_out = T * static_cast<double>(n) * ab;
  const double act_out = T * I * ab;
  switch (fusion) {
    case MlpFusion::kUnfused:
      act.act_bytes = up_out + act_out;
      break;
    case MlpFusion::kEpilogue:
      // The first GEMM writes the activated tensor; the act op is free.
      up.act_bytes += act_out - up_out;
      break;
    case MlpFusion::kFull:
      up.act_bytes -= up_out;
      down.act_bytes -= act_out;
      break;
  }
  ops.push_back(std::move(up));
  ops.push_back(std::move(act));
  ops.push_back(std::move(down));
  return ops;
}

double AllReduceLinkBytes(double bytes, int gpus) {
  if (gpus <= 1) return 0;
  return 2.0 * (gpus - 1) / gpus * bytes;
}

double ShardedMatmul::lower_s() const { return std::max(t_math_s, t_comm_s); }
double ShardedMatmul::upper_s() const { return t_math_s + t_comm_s; }

ShardedMatmul ShardedMatmulTimes(double B, double D, double F, int shards,
                                 double elem_bytes, double peak, double link) {
  ShardedMatmul s;
  s.t_math_s = Div(2 * B * D * F / shards, peak);
  s.t_comm_s = Div(AllReduceLinkBytes(B * F * elem_bytes, shards), link);
  return s;
}

double ShardedComputeBoundD(int shards, double elem_bytes, double peak,
                            double link) {
  // 2BDF / (n peak) > 2 (n-1)/n B F e / link  <=>  D > (n-1) e peak / link.
  return Div((shards - 1) * elem_bytes * peak, link);
}

// ------------------------------------------------------------ device

StatusOr<PredictDevice> ResolvePredictDevice(const std::string& device_arg,
                                             const std::string& profile_arg,
                                             double link_gb_per_s) {
  if (!device_arg.empty() && !profile_arg.empty()) {
    return InvalidArgument("--device " + device_arg +
                           " and --device-profile " + profile_arg +
                           ": pass one (the profile already names its GPU)");
  }
  // --device-profile KEY is --device KEY, as in every command.
  const std::string profile_key = DatasheetKeyOfProfileArg(profile_arg);
  const std::string device = profile_key.empty() ? device_arg : profile_key;
  const std::string profile = profile_key.empty() ? profile_arg : "";
  if (!device.empty() && !profile.empty()) {
    return InvalidArgument("--device " + device + " and --device-profile " +
                           profile +
                           ": pass one (the profile already names its GPU)");
  }
  if (device.empty() && profile.empty()) {
    return InvalidArgument(
        "no device: pass --device KEY (`rooftrace devices` lists them, e.g. "
        "h100-sxm) or --device-profile FILE (written by `rooftrace "
        "calibrate`)");
  }
  PredictDevice d;
  const DatasheetEntry* entry = nullptr;
  if (!device.empty()) {
    entry = FindDatasheetEntry(device);
    if (entry == nullptr) {
      std::string keys;
      for (const DatasheetEntry& e : Datasheet()) {
        keys += (keys.empty() ? "" : ", ") + std::string(e.key);
      }
      return InvalidArgument("--device " + device +
                             ": not in the datasheet; use one of " + keys +
                             ", or --device-profile FILE");
    }
    const Roofs roofs = RoofsFromDatasheet(entry->key);
    d.name = std::string(entry->name);
    d.roof_source = roofs.source;
    d.peak_flops_per_s = roofs.peak_flops_per_s;
    d.dram_bytes_per_s = roofs.dram_bytes_per_s;
  } else {
    StatusOr<DeviceProfile> p = LoadDeviceProfile(profile);
    if (!p.ok()) {
      return Status(p.status().code(),
                    "--device-profile " + p.status().message());
    }
    const Roofs roofs = RoofsFromProfile(*p, profile);
    d.name = p->device.name;
    d.roof_source = roofs.source;
    d.peak_flops_per_s = roofs.peak_flops_per_s;
    d.dram_bytes_per_s = roofs.dram_bytes_per_s;
    if (d.dram_bytes_per_s <= 0) {
      return InvalidArgument("--device-profile " + profile +
                             ": the profile has no DRAM bandwidth (measured "
                             "or datasheet); re-run `rooftrace calibrate`");
    }
    entry = FindDatasheetEntry(p->datasheet_key.empty() ? p->device.name
                                                        : p->datasheet_key);
  }
  if (link_gb_per_s > 0) {
    d.link_bytes_per_s = link_gb_per_s * 1e9;
    d.link_source = "--link-bandwidth";
  } else if (const DatasheetLink* link =
                 entry ? FindDatasheetLink(*entry) : nullptr) {
    d.link_bytes_per_s = link->bytes_per_s;
    d.link_source =
        "datasheet:" + std::string(entry->key) + " " + std::string(link->name);
  }
  return d;
}

// ------------------------------------------------------------ predict

namespace {

// The options against the model and the device: each error names the
// option and the fix. Returns the precision the model's GEMMs run at.
StatusOr<Precision> CheckPredictInputs(const ModelConfig& model,
                                       const PredictOptions& options,
                                       const PredictDevice& device) {
  RT_RETURN_IF_ERROR(Positive("--batch", options.batch, kMaxBatch));
  RT_RETURN_IF_ERROR(Positive("--prompt", options.prompt, kMaxTokens));
  RT_RETURN_IF_ERROR(Positive("--generate", options.generate, kMaxGenerate));
  RT_RETURN_IF_ERROR(Positive("--tp", options.tp, 1024));
  if (options.batch * options.prompt > kMaxTokens) {
    return InvalidArgument("--batch x --prompt = " +
                           std::to_string(options.batch * options.prompt) +
                           " tokens in one prefill step is above the largest "
                           "accepted, " +
                           std::to_string(kMaxTokens));
  }
  const int tp = options.tp;
  if (model.num_heads % tp != 0) {
    return InvalidArgument(
        "--tp " + std::to_string(tp) + ": " + model.name + " has " +
        std::to_string(model.num_heads) +
        " attention heads, not divisible by " + std::to_string(tp) +
        " (tensor parallelism splits whole heads); use one of " +
        Divisors(model.num_heads));
  }
  if (model.num_kv_heads % tp != 0 && tp % model.num_kv_heads != 0) {
    return InvalidArgument(
        "--tp " + std::to_string(tp) + ": " + model.name + " has " +
        std::to_string(model.num_kv_heads) +
        " KV heads; tp must divide them or be a multiple of them (KV heads "
        "are then replicated)");
  }
  if (model.intermediate_size % tp != 0) {
    return InvalidArgument("--tp " + std::to_string(tp) + ": " + model.name +
                           " intermediate_size " +
                           std::to_string(model.intermediate_size) +
                           " is not divisible by " + std::to_string(tp) +
                           "; use one of " + Divisors(model.intermediate_size));
  }
  if (model.encoder && options.prompt > model.max_position_embeddings) {
    return InvalidArgument(
        "--prompt " + std::to_string(options.prompt) + ": " + model.name +
        " has " + std::to_string(model.max_position_embeddings) +
        " position embeddings, and an encoder cannot take a longer sequence; "
        "use --prompt " + std::to_string(model.max_position_embeddings) +
        " or less");
  }
  if (options.kv_cache == Dtype::kInt4) {
    return InvalidArgument(
        "--kv-dtype int4: the KV cache is bf16, fp16, fp8 or int8");
  }
  RT_ASSIGN_OR_RETURN(const Precision compute,
                      ComputePrecision(options.weights, options.activations));
  if (device.dram_bytes_per_s <= 0) {
    return InvalidArgument(device.name + " (" + device.roof_source +
                           "): no DRAM bandwidth known");
  }
  for (Precision p : {compute, Precision::kFp16Tensor}) {
    if (device.peak_flops_per_s[static_cast<int>(p)] <= 0) {
      return InvalidArgument(
          device.name + " (" + device.roof_source + ") has no " +
          std::string(PrecisionName(p)) + " peak" +
          (p == compute
               ? " for --activation-dtype " +
                     std::string(DtypeName(options.activations))
               : std::string(" (attention and the lm head run on it)")) +
          ": use a precision it has (rooftrace devices lists them) or a "
          "device with one");
    }
  }
  if (tp > 1 && device.link_bytes_per_s <= 0) {
    return InvalidArgument(
        "--tp " + std::to_string(tp) + ": no GPU link bandwidth known for " +
        device.name + "; pass --link-bandwidth GB/s (one direction, per GPU)");
  }
  return compute;
}

Layout MakeLayout(const ModelConfig& model, const PredictOptions& options,
                  const PredictDevice& device, Precision compute) {
  const int tp = options.tp;
  Layout l;
  l.model = &model;
  l.options = options;
  l.device = &device;
  l.H = model.hidden_size;
  l.hq = model.num_heads / tp;
  l.hkv = std::max<int64_t>(1, model.num_kv_heads / tp);
  l.d = model.head_dim;
  l.I = model.intermediate_size / tp;
  l.V = (model.vocab_size + tp - 1) / tp;
  l.L = model.num_layers;
  l.wb = DtypeBytes(options.weights);
  l.ab = DtypeBytes(options.activations);
  // An encoder's K and V are activations (no cache).
  l.kvb = DtypeBytes(model.encoder ? options.activations : options.kv_cache);
  l.compute = compute;
  return l;
}

// Time per output token: every decode step costs the same except its
// attention, whose KV length grows by one per step, so the steps are summed
// exactly. Needs the decode-first ops in p->ops.
void PredictDecode(const Layout& l, Prediction* p) {
  const int64_t B = l.options.batch, P = l.options.prompt,
                G = l.options.generate;
  const int64_t last_ctx = P + G - 1;
  double fixed_lower = 0, fixed_upper = 0;
  for (const OpCost& o : p->ops) {
    if (o.phase != "decode-first") continue;
    if (IsAttentionOp(o)) continue;
    fixed_lower += o.count * o.roofline_s();
    fixed_upper += o.count * o.sum_s();
  }
  double lower = 0, upper = 0;
  for (int64_t ctx = P + 1; ctx <= last_ctx; ++ctx) {
    double step_lower = fixed_lower, step_upper = fixed_upper;
    for (OpCost& o : AttentionOps(l, l.options.attention, B, 1, ctx)) {
      l.Finish(&o);
      step_lower += o.count * o.roofline_s();
      step_upper += o.count * o.sum_s();
    }
    lower += step_lower;
    upper += step_upper;
  }
  const double steps_n = static_cast<double>(G - 1);
  p->tpot_lower_s = lower / steps_n;
  p->tpot_upper_s = upper / steps_n;
  p->decode_tokens_per_s_upper = static_cast<double>(B) / *p->tpot_lower_s;
  p->end_to_end_lower_s += lower;
}

// Weights and KV cache resident on one GPU.
void PredictResidentBytes(const Layout& l, Prediction* p) {
  const ModelConfig& model = *l.model;
  const double H = static_cast<double>(l.H);
  const double attn_w = static_cast<double>((l.hq + 2 * l.hkv) * l.d) * H +
                        static_cast<double>(l.hq * l.d) * H;
  const double mlp_one = (model.gated_mlp ? 3.0 : 2.0) * H * l.I;
  const double experts =
      model.moe() ? static_cast<double>(model.num_experts) : 1.0;
  const double router = model.moe() ? model.num_experts * H * kHeadBytes : 0;
  const double per_layer =
      (attn_w + experts * mlp_one) * l.wb + router + 2 * H * kHeadBytes;
  const double embed = static_cast<double>(l.V) * H * kHeadBytes;
  p->weight_bytes_per_gpu = l.L * per_layer + H * kHeadBytes + embed +
                            (model.tie_word_embeddings ? 0 : embed);
  p->kv_bytes_per_token_per_gpu =
      static_cast<double>(l.L) * 2 * l.hkv * l.d * l.kvb;
}

}  // namespace

StatusOr<Prediction> Predict(const ModelConfig& model,
                             const PredictOptions& options,
                             const PredictDevice& device) {
  RT_ASSIGN_OR_RETURN(const Precision compute,
                      CheckPredictInputs(model, options, device));
  const Layout l = MakeLayout(model, options, device, compute);

  Prediction p;
  p.model = model;
  p.options = options;
  p.device = device;
  p.compute = compute;
  p.compute_peak_flops_per_s = l.Peak(compute);

  if (model.encoder) return PredictEncoder(l, std::move(p));

  const int64_t B = options.batch, P = options.prompt, G = options.generate;
  const int64_t last_ctx = P + G - 1;
  if (model.max_position_embeddings > 0 &&
      last_ctx > model.max_position_embeddings) {
    p.warnings.push_back("prompt + generate = " + std::to_string(last_ctx + 1) +
                         " tokens is past " + model.name +
                         "'s max_position_embeddings " +
                         std::to_string(model.max_position_embeddings));
  }

  struct Step {
    const char* phase;
    int64_t q, ctx;
  };
  std::vector<Step> steps = {{"prefill", P, P}};
  if (G > 1) steps.push_back({"decode-first", 1, P + 1});
  if (G > 2) steps.push_back({"decode-last", 1, last_ctx});
  for (const Step& s : steps) {
    std::vector<OpCost> ops = StepOps(l, s.phase, B, s.q, s.ctx);
    p.phases.push_back(Totals(l, s.phase, ops, B, s.q, s.ctx));
    for (OpCost& o : ops) p.ops.push_back(std::move(o));
  }
  const PhaseTotals& prefill = p.phases.front();
  p.ttft_lower_s = prefill.roofline_s;
  p.ttft_upper_s = prefill.sum_s;
  p.end_to_end_lower_s = prefill.roofline_s;

  if (G > 1) PredictDecode(l, &p);
  p.decode_gemm_compute_bound_batch = SmallestComputeBoundBatch(l, true);
  p.decode_step_compute_bound_batch = SmallestComputeBoundBatch(l, false);
  PredictResidentBytes(l, &p);
  return p;
}

// ------------------------------------------------------------ JSON

namespace {

json::Value OptionalNumber(std::optional<double> v) {
  return v ? json::Value(*v) : json::Value();
}

json::Value GemmJson(const GemmDims& g) {
  json::Value v = json::Value::MakeObject();
  if (!g.part.empty()) v.Set("part", g.part);
  v.Set("m", g.m);
  v.Set("n", g.n);
  v.Set("k", g.k);
  v.Set("batch", g.batch);
  v.Set("a_bytes", g.a_bytes);
  v.Set("b_bytes", g.b_bytes);
  v.Set("c_bytes", g.c_bytes);
  return v;
}

json::Value ModelJson(const ModelConfig& m) {
  json::Value model = json::Value::MakeObject();
  model.Set("name", m.name);
  model.Set("source", m.source);
  model.Set("model_type", m.model_type);
  model.Set("encoder", m.encoder);
  model.Set("hidden_size", m.hidden_size);
  model.Set("intermediate_size", m.intermediate_size);
  model.Set("num_hidden_layers", m.num_layers);
  model.Set("num_attention_heads", m.num_heads);
  model.Set("num_key_value_heads", m.num_kv_heads);
  model.Set("head_dim", m.head_dim);
  model.Set("vocab_size", m.vocab_size);
  model.Set("tie_word_embeddings", m.tie_word_embeddings);
  model.Set("num_experts", m.num_experts);
  model.Set("num_experts_per_tok", m.experts_per_token);
  model.Set("sliding_window", m.sliding_window);
  model.Set("windowed_layers", m.WindowedLayerCount());
  model.Set("parameters", m.ParameterCount());
  return model;
}

json::Value OptionsJson(const PredictOptions& o) {
  json::Value opts = json::Value::MakeObject();
  opts.Set("batch", o.batch);
  opts.Set("prompt", o.prompt);
  opts.Set("generate", o.generate);
  opts.Set("tp", o.tp);
  opts.Set("weight_dtype", DtypeName(o.weights));
  opts.Set("activation_dtype", DtypeName(o.activations));
  opts.Set("kv_dtype", DtypeName(o.kv_cache));
  opts.Set("attention", AttentionImplName(o.attention));
  opts.Set("mlp_fusion", MlpFusionName(o.mlp_fusion));
  return opts;
}

json::Value DeviceJson(const Prediction& p) {
  json::Value dev = json::Value::MakeObject();
  dev.Set("name", p.device.name);
  dev.Set("roof_source", p.device.roof_source);
  dev.Set("dram_bytes_per_s", p.device.dram_bytes_per_s);
  json::Value peaks = json::Value::MakeObject();
  for (int i = 1; i < kNumPrecisions; ++i) {
    if (p.device.peak_flops_per_s[i] > 0) {
      peaks.Set(PrecisionKey(static_cast<Precision>(i)),
                p.device.peak_flops_per_s[i]);
    }
  }
  dev.Set("peak_flops_per_s", std::move(peaks));
  dev.Set("link_bytes_per_s", p.device.link_bytes_per_s);
  dev.Set("link_source", p.device.link_source);
  dev.Set("compute_precision", PrecisionKey(p.compute));
  dev.Set("compute_peak_flops_per_s", p.compute_peak_flops_per_s);
  dev.Set("ridge_flops_per_byte",
          RidgePoint(p.compute_peak_flops_per_s, p.device.dram_bytes_per_s));
  return dev;
}

json::Value TotalsJson(const Prediction& p) {
  json::Value totals = json::Value::MakeObject();
  totals.Set("ttft_lower_s", p.ttft_lower_s);
  totals.Set("ttft_upper_s", p.ttft_upper_s);
  totals.Set("tpot_lower_s", OptionalNumber(p.tpot_lower_s));
  totals.Set("tpot_upper_s", OptionalNumber(p.tpot_upper_s));
  totals.Set("decode_tokens_per_s_upper",
             OptionalNumber(p.decode_tokens_per_s_upper));
  totals.Set("end_to_end_lower_s", p.end_to_end_lower_s);
  totals.Set("decode_gemm_compute_bound_batch",
             p.decode_gemm_compute_bound_batch
                 ? json::Value(*p.decode_gemm_compute_bound_batch)
                 : json::Value());
  totals.Set("decode_step_compute_bound_batch",
             p.decode_step_compute_bound_batch
                 ? json::Value(*p.decode_step_compute_bound_batch)
                 : json::Value());
  totals.Set("weight_bytes_per_gpu", p.weight_bytes_per_gpu);
  totals.Set("kv_bytes_per_token_per_gpu", p.kv_bytes_per_token_per_gpu);
  return totals;
}

json::Value PhaseJson(const PhaseTotals& t) {
  json::Value v = json::Value::MakeObject();
  v.Set("phase", t.phase);
  v.Set("tokens", t.tokens);
  v.Set("ctx", t.ctx);
  v.Set("flops", t.flops);
  v.Set("bytes", t.bytes);
  v.Set("comm_bytes", t.comm_bytes);
  v.Set("intensity", OptionalNumber(t.intensity()));
  v.Set("t_math_s", t.t_math_s);
  v.Set("t_mem_s", t.t_mem_s);
  v.Set("t_comm_s", t.t_comm_s);
  v.Set("roofline_s", t.roofline_s);
  v.Set("sum_s", t.sum_s);
  v.Set("attention_flash_bytes", t.attention_flash_bytes);
  v.Set("attention_unfused_bytes", t.attention_unfused_bytes);
  json::Value mlp = json::Value::MakeObject();
  for (MlpFusion f :
       {MlpFusion::kUnfused, MlpFusion::kEpilogue, MlpFusion::kFull}) {
    mlp.Set(MlpFusionName(f), t.mlp_intermediate_bytes[static_cast<int>(f)]);
  }
  v.Set("mlp_intermediate_bytes", std::move(mlp));
  return v;
}

json::Value OpJson(const OpCost& op) {
  json::Value v = json::Value::MakeObject();
  v.Set("phase", op.phase);
  v.Set("op", op.op);
  v.Set("kind", OpKindName(op.kind));
  v.Set("precision", PrecisionKey(op.precision));
  v.Set("peak_flops_per_s", op.peak_flops_per_s);
  v.Set("count", op.count);
  v.Set("m", op.m);
  v.Set("n", op.n);
  v.Set("k", op.k);
  v.Set("batch", op.batch);
  v.Set("flops", op.flops);
  v.Set("weight_bytes", op.weight_bytes);
  v.Set("kv_bytes", op.kv_bytes);
  v.Set("act_bytes", op.act_bytes);
  v.Set("bytes", op.bytes());
  v.Set("comm_bytes", op.comm_bytes);
  v.Set("intensity", OptionalNumber(op.intensity()));
  v.Set("bound", op.bound());
  v.Set("t_math_s", op.t_math_s);
  v.Set("t_mem_s", op.t_mem_s);
  v.Set("t_comm_s", op.t_comm_s);
  v.Set("roofline_s", op.roofline_s());
  v.Set("sum_s", op.sum_s());
  v.Set("gemm", op.matchable ? GemmJson(op.AsGemm()) : json::Value());
  json::Value parts = json::Value::MakeArray();
  for (const GemmDims& g : op.parts) parts.Append(GemmJson(g));
  v.Set("parts", std::move(parts));
  return v;
}

}  // namespace

json::Value PredictionToJson(const Prediction& p) {
  json::Value root = json::Value::MakeObject();
  root.Set("format", kPredictionFormat);
  root.Set("version", kPredictionVersion);
  root.Set("model", ModelJson(p.model));
  root.Set("options", OptionsJson(p.options));
  root.Set("device", DeviceJson(p));
  root.Set("totals", TotalsJson(p));
  json::Value phases = json::Value::MakeArray();
  for (const PhaseTotals& t : p.phases) phases.Append(PhaseJson(t));
  root.Set("phases", std::move(phases));
  json::Value ops = json::Value::MakeArray();
  for (const OpCost& op : p.ops) ops.Append(OpJson(op));
  root.Set("ops", std::move(ops));

  json::Value warnings = json::Value::MakeArray();
  for (const std::string& w : p.warnings) warnings.Append(w);
  root.Set("warnings", std::move(warnings));
  return root;
}

}  // namespace rooftrace::analyzer
