// The analytic roofline of a model (seeds 000, 002, 003, 004): for each
// operation of a forward step — prefill at the prompt length, decode at the
// first and the last generated position — its GEMM shape, FLOPs, minimum
// DRAM bytes (weights, KV cache, activations), link bytes under tensor
// parallelism, arithmetic intensity, and the times T_math = FLOPs / peak,
// T_mem = bytes / bandwidth, T_comm = link bytes / link bandwidth. The
// roofline time max(T_math, T_mem, T_comm) is a lower bound (everything
// overlaps), the sum an upper bound (nothing does; seed 002). Totals: time to
// first token, time per output token, decode tokens/s, and the batch at
// which decode turns compute-bound.
//
// Pure functions over plain data; thread-safe. docs/predict.md has every
// formula and assumption.
//
// The trap: bytes are a lower bound (each operand moved once, seed 004's
// caveat), so intensities are upper bounds and times lower bounds. A
// measured kernel slower than its prediction is normal; one faster than it
// means the model of the op is wrong (or the caches held the operand).
#ifndef ROOFTRACE_ANALYZER_PREDICT_H_
#define ROOFTRACE_ANALYZER_PREDICT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model_config.h"
#include "base/json.h"
#include "base/status.h"
#include "model/precision.h"

namespace rooftrace::analyzer {

// ------------------------------------------------------------ the inputs

// Element types of weights, activations and the KV cache.
enum class Dtype { kBf16, kFp16, kFp8, kInt8, kInt4 };
std::string_view DtypeName(Dtype d);  // "bf16", "fp16", "fp8", "int8", "int4"
std::optional<Dtype> DtypeFromName(std::string_view name);
double DtypeBytes(Dtype d);  // 2, 2, 1, 1, 0.5

// How attention is computed: one fused kernel that never writes the score
// matrix (flash-style), or score GEMM, softmax and value GEMM with the
// scores stored and reloaded between them.
enum class AttentionImpl { kFlash, kUnfused };
// How the MLP's activation is fused (seed 000): not at all (each
// intermediate stored and reloaded), into the first GEMM's epilogue (its
// output is the activated tensor), or the whole MLP in one kernel (no
// intermediate reaches DRAM).
enum class MlpFusion { kUnfused, kEpilogue, kFull };
std::string_view AttentionImplName(AttentionImpl a);  // "flash", "unfused"
std::string_view MlpFusionName(MlpFusion f);  // "unfused", "epilogue", "full"

struct PredictOptions {
  int64_t batch = 1;       // sequences per step
  int64_t prompt = 512;    // prompt tokens per sequence
  int64_t generate = 128;  // new tokens per sequence (the first by prefill)
  int tp = 1;              // tensor-parallel GPUs
  Dtype weights = Dtype::kBf16;
  Dtype activations = Dtype::kBf16;
  Dtype kv_cache = Dtype::kBf16;
  AttentionImpl attention = AttentionImpl::kFlash;
  MlpFusion mlp_fusion = MlpFusion::kUnfused;
};

// The roofs a prediction is made against.
struct PredictDevice {
  std::string name;         // "NVIDIA H100 SXM5 80GB"
  std::string roof_source;  // "datasheet:h100-sxm" | "calibrated:FILE"
  std::array<double, kNumPrecisions> peak_flops_per_s{};  // 0: none
  double dram_bytes_per_s = 0;
  double link_bytes_per_s = 0;  // per GPU, one direction; 0: unknown
  std::string link_source;      // "datasheet:h100-sxm NVLink 4 (...)"
};

// --device KEY (a datasheet key or CUDA name) or --device-profile FILE (a
// calibrated profile); `link_gb_per_s` > 0 replaces the datasheet link
// figure. Errors name the option and the fix.
StatusOr<PredictDevice> ResolvePredictDevice(const std::string& device,
                                             const std::string& profile,
                                             double link_gb_per_s);

// ------------------------------------------------------------ the costs

// One GEMM as cuBLAS would see it: the token-side operand is M x K, the
// weight-side operand K x N, the output M x N, `batch` times; element sizes
// per operand in bytes.
struct GemmDims {
  std::string part;  // "" for the whole op, else "q", "gate", "score", ...
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double a_bytes = 2, b_bytes = 2, c_bytes = 2;

  double Flops() const;     // 2 m n k batch
  double MinBytes() const;  // (m k a + k n b + m n c) batch
};

enum class OpKind { kGemm, kAttention, kElementwise, kGather };
std::string_view OpKindName(OpKind k);  // "gemm", "attention", ...

// The cost of one instance of an operation (one layer's), with `count`
// instances per forward step.
struct OpCost {
  std::string phase;  // "prefill", "decode-first", "decode-last"
  std::string op;     // "qkv", "attention", "o_proj", "gate_up", ...
  OpKind kind = OpKind::kGemm;
  Precision precision = Precision::kFp16Tensor;  // roof its FLOPs count on
  double peak_flops_per_s = 0;                   // that roof; 0: unknown
  int64_t count = 1;
  // The op as one GEMM (kind kGemm), or its GEMM-like dimensions for
  // display (attention: m query tokens, n KV length, k head_dim, batch
  // sequences x heads). 0 where they do not apply.
  int64_t m = 0, n = 0, k = 0, batch = 0;
  // Element sizes of the token-side operand, the weight-side operand and
  // the output (GEMMs and attention's products).
  double a_bytes = 0, b_bytes = 0, c_bytes = 0;
  // Split GEMMs that together do the op (q/k/v of qkv, gate/up, attention's
  // score and value products): what `analyze --expect` matches kernels of
  // frameworks that do not fuse them against.
  std::vector<GemmDims> parts;
  bool matchable = false;  // m, n, k, batch describe one cuBLAS call

  double flops = 0;
  double weight_bytes = 0;
  double kv_bytes = 0;    // KV cache read + written
  double act_bytes = 0;   // activations read + written
  double comm_bytes = 0;  // sent over the GPU link per GPU
  double t_math_s = 0, t_mem_s = 0, t_comm_s = 0;

  double bytes() const { return weight_bytes + kv_bytes + act_bytes; }
  std::optional<double> intensity() const;  // flops / bytes
  double roofline_s() const;                // max(t_math, t_mem, t_comm)
  double sum_s() const;                     // t_math + t_mem + t_comm
  // "compute", "memory" or "comms": the largest of the three times.
  std::string_view bound() const;
  GemmDims AsGemm() const;  // m, n, k, batch with the op's element sizes
};

// What one forward step of a phase adds up to (all ops, all instances).
struct PhaseTotals {
  std::string phase;
  int64_t tokens = 0;  // query tokens in the step (batch x prompt, or batch)
  int64_t ctx = 0;     // KV length attended to by the last query
  double flops = 0, bytes = 0, comm_bytes = 0;
  double t_math_s = 0, t_mem_s = 0, t_comm_s = 0;
  double roofline_s = 0;  // sum over ops of their roofline time
  double sum_s = 0;       // sum over ops of their sum
  // Traffic of the alternatives, summed over layers, for the table's note:
  // attention flash / unfused, MLP intermediates per fusion level.
  double attention_flash_bytes = 0, attention_unfused_bytes = 0;
  std::array<double, 3> mlp_intermediate_bytes{};  // by MlpFusion
  std::optional<double> intensity() const;
};

struct Prediction {
  ModelConfig model;
  PredictOptions options;
  PredictDevice device;
  Precision compute = Precision::kFp16Tensor;  // the GEMMs' roof
  double compute_peak_flops_per_s = 0;
  std::vector<OpCost> ops;  // prefill, decode-first, decode-last, in order
  std::vector<PhaseTotals> phases;  // the same three (decode ones only
                                    // when generate > 1)
  double ttft_lower_s = 0, ttft_upper_s = 0;  // the prefill step
  // Mean over the generate - 1 decode steps (each at its own KV length);
  // unset when generate is 1.
  std::optional<double> tpot_lower_s, tpot_upper_s;
  std::optional<double> decode_tokens_per_s_upper;  // batch / tpot_lower
  double end_to_end_lower_s = 0;  // prefill + every decode step
  // Smallest batch at which the decode step's GEMMs (weights) / the whole
  // decode step (with attention, norms) have T_math >= T_mem; unset: not
  // below 2^24 sequences (attention's KV reads never turn compute-bound).
  std::optional<int64_t> decode_gemm_compute_bound_batch;
  std::optional<int64_t> decode_step_compute_bound_batch;
  double weight_bytes_per_gpu = 0;
  double kv_bytes_per_token_per_gpu = 0;  // all layers
  std::vector<std::string> warnings;      // assumptions stretched, e.g. context
                                          // past max_position_embeddings

  const PhaseTotals* Phase(std::string_view phase) const;
};

// Validates the options against the model and the device (sizes > 0,
// heads divisible by tp, a peak for the compute precision, a link figure
// when tp > 1) and costs every op. Errors are InvalidArgument naming the
// option and the fix.
StatusOr<Prediction> Predict(const ModelConfig& model,
                             const PredictOptions& options,
                             const PredictDevice& device);

// ----------------------------------------------- building blocks (seeds)

// The precision class GEMMs with these operands count against: 16-bit
// activations run on the fp16/bf16 tensor roof whatever the weights (int8
// and int4 weights are widened, seed 002); fp8 / int8 activations on the
// fp8 / int8 roof, which needs weights no wider than them.
StatusOr<Precision> ComputePrecision(Dtype weights, Dtype activations);

// The MLP ops of one layer for `tokens` tokens (seed 000 with gated =
// false, fusion kUnfused / kFull: bytes 4BI + 4IH + 8BH / 4BI + 4IH in
// fp16 and FLOPs 4BIH + 12BH, with I = hidden, H = intermediate). Times
// are left 0: Predict() fills them.
std::vector<OpCost> MlpOps(int64_t tokens, int64_t hidden, int64_t intermediate,
                           bool gated, MlpFusion fusion, double weight_bytes,
                           double act_bytes);

// Seed 002's sharded matmul [B, D] x [D, F] split along D over `shards`
// GPUs: T_math = 2BDF / shards / peak, T_comm = the ring all-reduce of the
// B x F partial sums, 2 (shards - 1) / shards x B F elem / link.
struct ShardedMatmul {
  double t_math_s = 0, t_comm_s = 0;
  double lower_s() const;  // max
  double upper_s() const;  // sum
};
ShardedMatmul ShardedMatmulTimes(double B, double D, double F, int shards,
                                 double elem_bytes, double peak_flops_per_s,
                                 double link_bytes_per_s);
// The D above which it is compute-bound: (shards - 1) elem peak / link.
double ShardedComputeBoundD(int shards, double elem_bytes,
                            double peak_flops_per_s, double link_bytes_per_s);

// Ring all-reduce of `bytes` over `gpus`: what each GPU sends,
// 2 (gpus - 1) / gpus x bytes.
double AllReduceLinkBytes(double bytes, int gpus);

// ------------------------------------------------------------- output

inline constexpr char kPredictionFormat[] = "rooftrace-prediction";
inline constexpr int kPredictionVersion = 1;

// The JSON document of `predict --format json` (docs/predict.md), which
// `analyze --expect` reads back.
json::Value PredictionToJson(const Prediction& p);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_PREDICT_H_
