#include "libinject/counters/metric_tables.h"

#include <algorithm>
#include <array>
#include <utility>

namespace rooftrace::counters {
namespace {

constexpr std::string_view kTensorSrcPrefix = "sm__ops_path_tensor_src_";
constexpr std::string_view kSassPrefix = "smsp__sass_thread_inst_executed_op_";

MetricSpec Dram(std::string base, MetricRole role) {
  return MetricSpec{std::move(base) + ".sum", role, Precision::kUnknown, 0.0};
}
MetricSpec Time() {
  return MetricSpec{"gpu__time_duration.sum", MetricRole::kGpuTimeNs,
                    Precision::kUnknown, 0.0};
}
// A tensor-core "math op" counter: the hardware counts each multiply and
// each add of an MMA, so one op is one FLOP (OP for int8).
MetricSpec Tensor(std::string base, Precision p) {
  return MetricSpec{"sm__ops_path_tensor_" + std::move(base) + ".sum",
                    MetricRole::kFlops, p, 1.0};
}

struct SassOp {
  std::string_view op;  // "dfma"
  Precision precision;
  double flops;  // per thread instruction
};
// CUDA-core instructions counted per thread with all predicates true.
// FMA = 2 FLOPs. Half: HADD/HMUL/HFMA count 1/1/2 per thread instruction,
// the way Nsight Compute's half-precision roofline counts them (a packed
// half2 instruction does twice that work; see docs/counters.md). The
// Blackwell paired fp32 instructions do two operations per thread.
constexpr std::array<SassOp, 12> kSassOps = {{
    {"dadd", Precision::kFp64, 1.0},
    {"dmul", Precision::kFp64, 1.0},
    {"dfma", Precision::kFp64, 2.0},
    {"fadd", Precision::kFp32, 1.0},
    {"fmul", Precision::kFp32, 1.0},
    {"ffma", Precision::kFp32, 2.0},
    {"hadd", Precision::kFp16, 1.0},
    {"hmul", Precision::kFp16, 1.0},
    {"hfma", Precision::kFp16, 2.0},
    {"fadd2", Precision::kFp32, 2.0},
    {"fmul2", Precision::kFp32, 2.0},
    {"ffma2", Precision::kFp32, 4.0},
}};
constexpr size_t kClassicSassOps = 9;  // the first nine exist on every chip

std::string SassBase(std::string_view op) {
  return std::string(kSassPrefix) + std::string(op) + "_pred_on";
}

MetricSpec Sass(const SassOp& s) {
  return MetricSpec{SassBase(s.op) + ".sum", MetricRole::kFlops, s.precision,
                    s.flops};
}

std::vector<MetricSpec> ClassicSass() {
  std::vector<MetricSpec> out;
  for (size_t i = 0; i < kClassicSassOps; ++i) out.push_back(Sass(kSassOps[i]));
  return out;
}
std::vector<MetricSpec> AllSass() {
  std::vector<MetricSpec> out;
  for (const SassOp& s : kSassOps) out.push_back(Sass(s));
  return out;
}

std::vector<ChipFamily> BuildFamilies() {
  std::vector<ChipFamily> f;
  // Ampere and Ada: source-level tensor counters. Only two fit in one pass
  // next to DRAM and time: bf16 and fp16 with fp32 accumulate, the inference
  // GEMM and attention paths. tf32, fp16-accumulate, int8, fp8 (Ada) and
  // DMMA fp64 do not fit even in the full set's first pass.
  f.push_back(ChipFamily{
      "ampere-ada",
      {"GA100", "GA102", "GA103", "GA104", "GA106", "GA107", "AD102", "AD103",
       "AD104", "AD106", "AD107"},
      {Dram("dram__bytes_read", MetricRole::kDramReadBytes),
       Dram("dram__bytes_write", MetricRole::kDramWriteBytes), Time(),
       Tensor("src_bf16_dst_fp32_sparsity_off", Precision::kFp16Tensor),
       Tensor("src_fp16_dst_fp32_sparsity_off", Precision::kFp16Tensor)},
      ClassicSass(),
      1,
      2});
  // Hopper: warpgroup MMA (HGMMA/IGMMA, what cuBLAS, CUTLASS 3 and
  // FlashAttention-3 use) plus warp-level HMMA (FlashAttention-2, Triton on
  // older paths) and FP8 at source level. Exactly this list fits one pass;
  // any further hardware counter makes it two.
  f.push_back(ChipFamily{
      "hopper",
      {"GH100"},
      {Dram("dram__bytes_read", MetricRole::kDramReadBytes),
       Dram("dram__bytes_write", MetricRole::kDramWriteBytes), Time(),
       Tensor("op_hgmma_src_bf16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor),
       Tensor("op_hgmma_src_fp16_sparsity_off", Precision::kFp16Tensor),
       Tensor("op_hgmma_src_tf32_dst_fp32_sparsity_off",
              Precision::kTf32Tensor),
       Tensor("op_igmma_src_int8_sparsity_off", Precision::kInt8Tensor),
       Tensor("op_hmma_src_bf16_dst_fp32_sparsity_off", Precision::kFp16Tensor),
       Tensor("op_hmma_src_fp16_dst_fp32_sparsity_off", Precision::kFp16Tensor),
       Tensor("src_fp8_sparsity_off", Precision::kFp8Tensor)},
      ClassicSass(),
      1,
      2});
  // Blackwell datacenter (B200 class): tcgen05 MMA (UTCHMMA, UTCQMMA) and
  // warp-level HMMA. UTCQMMA counts fp4, fp6 and fp8 sources together; they
  // are booked as fp8-tensor (the wire has no fp4 class yet).
  f.push_back(ChipFamily{
      "blackwell",
      {"GB100", "GB102"},
      {Dram("dram__bytes_read", MetricRole::kDramReadBytes),
       Dram("dram__bytes_write", MetricRole::kDramWriteBytes), Time(),
       Tensor("op_utchmma_src_bf16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor),
       Tensor("op_utchmma_src_fp16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor),
       Tensor("op_utcqmma_src_fp4_fp6_fp8_dst_fp32_sparsity_off",
              Precision::kFp8Tensor),
       Tensor("op_hmma_src_bf16_dst_fp32_sparsity_off", Precision::kFp16Tensor),
       Tensor("op_hmma_src_fp16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor)},
      AllSass(),
      1,
      2});
  // Blackwell Ultra (B300 class): UTCQMMA has a separate fp8 counter.
  f.push_back(ChipFamily{
      "blackwell-ultra",
      {"GB110"},
      {Dram("dram__bytes_read", MetricRole::kDramReadBytes),
       Dram("dram__bytes_write", MetricRole::kDramWriteBytes), Time(),
       Tensor("op_utchmma_src_bf16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor),
       Tensor("op_utchmma_src_fp16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor),
       Tensor("op_utcqmma_src_fp8_dst_fp32_sparsity_off",
              Precision::kFp8Tensor),
       Tensor("op_hmma_src_bf16_dst_fp32_sparsity_off", Precision::kFp16Tensor),
       Tensor("op_hmma_src_fp16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor)},
      AllSass(),
      1,
      2});
  // Blackwell RTX (GB20x): DRAM counters are named dram__bytes_op_*; only
  // warp-level HMMA fits next to them in one pass.
  f.push_back(ChipFamily{
      "blackwell-rtx",
      {"GB202", "GB203", "GB205", "GB206", "GB207"},
      {Dram("dram__bytes_op_read", MetricRole::kDramReadBytes),
       Dram("dram__bytes_op_write", MetricRole::kDramWriteBytes), Time(),
       Tensor("op_hmma_src_bf16_dst_fp32_sparsity_off", Precision::kFp16Tensor),
       Tensor("op_hmma_src_fp16_dst_fp32_sparsity_off",
              Precision::kFp16Tensor)},
      ClassicSass(),
      1,
      2});
  return f;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

int TensorPriority(Precision p) {
  switch (p) {
    case Precision::kFp16Tensor:
      return 0;
    case Precision::kFp8Tensor:
      return 1;
    case Precision::kTf32Tensor:
      return 2;
    case Precision::kInt8Tensor:
      return 3;
    case Precision::kFp64Tensor:
      return 4;
    default:
      return 5;
  }
}

}  // namespace

StatusOr<CounterSet> ParseCounterSet(std::string_view value) {
  if (value.empty() || value == "default") return CounterSet::kDefault;
  if (value == "full") return CounterSet::kFull;
  return InvalidArgument("ROOFTRACE_COUNTERS='" + std::string(value) +
                         "' is not a counter set: use 'default' (one pass: "
                         "DRAM bytes, time, tensor FLOPs) or 'full' (adds "
                         "CUDA-core FLOPs, two passes)");
}

std::string_view CounterSetName(CounterSet set) {
  return set == CounterSet::kFull ? "full" : "default";
}

const std::vector<ChipFamily>& ChipFamilies() {
  static const std::vector<ChipFamily>* families =
      new std::vector<ChipFamily>(BuildFamilies());
  return *families;
}

const ChipFamily* FindChipFamily(std::string_view chip) {
  for (const ChipFamily& f : ChipFamilies()) {
    for (std::string_view c : f.chips) {
      if (c == chip) return &f;
    }
  }
  return nullptr;
}

std::vector<const char*> MetricSet::Names() const {
  std::vector<const char*> out;
  out.reserve(metrics.size());
  for (const MetricSpec& m : metrics) out.push_back(m.name.c_str());
  return out;
}

StatusOr<MetricSet> MetricSetForChip(std::string_view chip, CounterSet set) {
  const ChipFamily* family = FindChipFamily(chip);
  if (family == nullptr) {
    return NotFound("chip " + std::string(chip) +
                    " has no counters table in rooftrace");
  }
  MetricSet out;
  out.chip = std::string(chip);
  out.set = set;
  out.metrics = family->default_metrics;
  if (set == CounterSet::kFull) {
    out.metrics.insert(out.metrics.end(), family->full_extra.begin(),
                       family->full_extra.end());
  }
  return out;
}

Precision TensorSourcePrecision(std::string_view spec) {
  // Order matters: "fp16_bf16_tf32_dst_fp32" (Turing) is fp16 work, and
  // "fp4_fp6_fp8_dst_fp32" is booked as fp8.
  auto starts = [&](std::string_view p) {
    return spec.substr(0, p.size()) == p;
  };
  if (starts("fp16") || starts("bf16")) return Precision::kFp16Tensor;
  if (starts("tf32")) return Precision::kTf32Tensor;
  if (starts("fp64")) return Precision::kFp64Tensor;
  if (starts("int8")) return Precision::kInt8Tensor;
  if (starts("fp8") || starts("fp4_fp6_fp8")) return Precision::kFp8Tensor;
  return Precision::kUnknown;  // int1, int4, fp4, fp4_fp6
}

std::vector<MetricSpec> CudaCoreMetrics(
    const std::vector<std::string>& base_counter_metrics) {
  if (base_counter_metrics.empty()) return ClassicSass();
  std::vector<MetricSpec> out;
  for (const SassOp& s : kSassOps) {
    if (Contains(base_counter_metrics, SassBase(s.op))) out.push_back(Sass(s));
  }
  return out;
}

StatusOr<MetricSet> DiscoverMetricSet(std::string_view chip, CounterSet set,
                                      const std::vector<std::string>& base) {
  MetricSet out;
  out.chip = std::string(chip);
  out.set = set;
  out.discovered = true;

  const std::pair<MetricRole, std::array<std::string_view, 2>> dram[] = {
      {MetricRole::kDramReadBytes, {"dram__bytes_read", "dram__bytes_op_read"}},
      {MetricRole::kDramWriteBytes,
       {"dram__bytes_write", "dram__bytes_op_write"}}};
  for (const auto& [role, names] : dram) {
    bool found = false;
    for (std::string_view n : names) {
      if (!found && Contains(base, n)) {
        out.metrics.push_back(Dram(std::string(n), role));
        found = true;
      }
    }
    if (!found) {
      return FailedPrecondition(
          "chip " + std::string(chip) +
          " has no DRAM byte counters (dram__bytes_read / "
          "dram__bytes_op_read): counters mode cannot measure bytes on it; "
          "use trace mode");
    }
  }
  if (!Contains(base, "gpu__time_duration")) {
    return FailedPrecondition("chip " + std::string(chip) +
                              " has no gpu__time_duration counter: counters "
                              "mode cannot time kernels on it; use trace mode");
  }
  out.metrics.push_back(Time());

  // Tensor source-level counters: the aggregate over every MMA flavour of a
  // source format. Prefer the dense (sparsity_off) variant when it exists.
  std::vector<MetricSpec> tensor;
  for (const std::string& name : base) {
    std::string_view n = name;
    if (n.substr(0, kTensorSrcPrefix.size()) != kTensorSrcPrefix) continue;
    if (EndsWith(n, "_sparsity_on") || EndsWith(n, "_sparsity_off") ||
        EndsWith(n, "_realtime")) {
      continue;
    }
    std::string_view spec = n.substr(kTensorSrcPrefix.size());
    Precision p = TensorSourcePrecision(spec);
    if (p == Precision::kUnknown) continue;
    std::string chosen = name;
    if (Contains(base, name + "_sparsity_off")) chosen += "_sparsity_off";
    tensor.push_back(MetricSpec{chosen + ".sum", MetricRole::kFlops, p, 1.0});
  }
  std::stable_sort(tensor.begin(), tensor.end(),
                   [](const MetricSpec& a, const MetricSpec& b) {
                     return TensorPriority(a.precision) <
                            TensorPriority(b.precision);
                   });
  out.metrics.insert(out.metrics.end(), tensor.begin(), tensor.end());
  if (set == CounterSet::kFull) {
    std::vector<MetricSpec> sass = CudaCoreMetrics(base);
    out.metrics.insert(out.metrics.end(), sass.begin(), sass.end());
  }
  return out;
}

}  // namespace rooftrace::counters
