#include "kernels/plan.h"

#include <algorithm>
#include <cstdio>

namespace rooftrace::kernels {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
// Buffers at least this many times the L2 so STREAM measures DRAM, not L2.
constexpr uint64_t kStreamL2Multiple = 8;
constexpr uint64_t kStreamMinBytes = 256 * kMiB;

std::string Shape(const GemmShape& s) {
  char buf[64];
  snprintf(buf, sizeof buf, "%lldx%lldx%lld", static_cast<long long>(s.m),
           static_cast<long long>(s.n), static_cast<long long>(s.k));
  return buf;
}

}  // namespace

const std::vector<GemmTypeInfo>& GemmTypes() {
  // C precision as calibrated: fp64 -> fp64, fp32/tf32 -> fp32, fp16/bf16
  // -> same type, fp8 -> bf16 output (cuBLASLt needs a wider D), int8 ->
  // int32.
  static const std::vector<GemmTypeInfo> types = {
      {GemmType::kFp64, "fp64", 8, 8, 0, ""},
      {GemmType::kFp32, "fp32", 4, 4, 0, ""},
      {GemmType::kTf32, "tf32", 4, 4, 80, "sm_80 (Ampere) or newer"},
      {GemmType::kFp16, "fp16", 2, 2, 70, "sm_70 (Volta) or newer"},
      {GemmType::kBf16, "bf16", 2, 2, 80, "sm_80 (Ampere) or newer"},
      {GemmType::kFp8, "fp8", 1, 2, 89, "sm_89 (Ada) or sm_90 (Hopper) or newer"},
      {GemmType::kInt8, "int8", 1, 4, 75, "sm_75 (Turing) or newer"},
  };
  return types;
}

const GemmTypeInfo& GemmTypeInfoOf(GemmType t) {
  return GemmTypes()[static_cast<size_t>(t)];
}

std::optional<GemmType> GemmTypeFromKey(std::string_view key) {
  for (const auto& info : GemmTypes()) {
    if (info.key == key) return info.type;
  }
  return std::nullopt;
}

Precision RoofOf(GemmType t, int sm) {
  switch (t) {
    case GemmType::kFp64:
      return (sm == 80 || sm == 90 || sm == 100) ? Precision::kFp64Tensor
                                                 : Precision::kFp64;
    case GemmType::kFp32: return Precision::kFp32;
    case GemmType::kTf32: return Precision::kTf32Tensor;
    case GemmType::kFp16:
    case GemmType::kBf16: return Precision::kFp16Tensor;
    case GemmType::kFp8: return Precision::kFp8Tensor;
    case GemmType::kInt8: return Precision::kInt8Tensor;
  }
  return Precision::kUnknown;
}

bool GemmTypeSupported(GemmType t, int sm, std::string* why) {
  const GemmTypeInfo& info = GemmTypeInfoOf(t);
  if (sm >= info.min_sm) return true;
  if (why) {
    char buf[160];
    snprintf(buf, sizeof buf, "%s GEMM needs %s; this GPU is sm_%d",
             std::string(info.key).c_str(), std::string(info.needs).c_str(),
             sm);
    *why = buf;
  }
  return false;
}

std::vector<std::pair<GemmType, std::string>> SkippedGemmTypes(int sm) {
  std::vector<std::pair<GemmType, std::string>> out;
  for (const auto& info : GemmTypes()) {
    std::string why;
    if (!GemmTypeSupported(info.type, sm, &why)) out.emplace_back(info.type, why);
  }
  return out;
}

CalibrationPlan MakePlan(bool quick, uint64_t l2_bytes, int sm) {
  CalibrationPlan p;
  p.quick = quick;

  const uint64_t buffer_bytes =
      std::max(kStreamL2Multiple * l2_bytes, kStreamMinBytes);
  // Round up to a whole MiB of fp32 elements.
  p.stream_elements = (buffer_bytes + kMiB - 1) / kMiB * kMiB / 4;
  p.stream_repeats = quick ? 5 : 20;

  for (const auto& info : GemmTypes()) {
    if (GemmTypeSupported(info.type, sm, nullptr)) {
      p.gemm_types.push_back(info.type);
    }
  }
  p.peak_shapes = {{8192, 8192, 8192}};
  if (!quick) {
    // The best of a few large shapes: 8192^3 is not the sweet spot of every
    // GPU's tile sizes.
    p.peak_shapes.push_back({16384, 8192, 8192});
    p.peak_shapes.push_back({8192, 8192, 16384});
  }
  p.gemm_repeats = quick ? 3 : 10;

  p.own_fp32_shape = quick ? GemmShape{2048, 2048, 2048}
                           : GemmShape{4096, 4096, 4096};
  p.own_bf16_shape = quick ? GemmShape{4096, 4096, 4096}
                           : GemmShape{8192, 8192, 8192};

  p.mlp_batches = {16, 1024};
  p.mlp_input_dim = 1024;
  if (quick) {
    p.mlp_h = {1, 3, 5, 9};
  } else {
    for (int h = 1; h <= 9; ++h) p.mlp_h.push_back(h);
  }
  p.mlp_repeats = quick ? 5 : 20;

  for (int64_t m = 1; m <= 8192; m *= (quick ? 4 : 2)) p.msweep_m.push_back(m);
  if (quick && p.msweep_m.back() != 8192) p.msweep_m.push_back(8192);
  p.msweep_n = 4096;
  p.msweep_k = 4096;
  p.msweep_repeats = quick ? 5 : 20;
  return p;
}

std::vector<std::string> DescribePlan(const CalibrationPlan& p) {
  std::vector<std::string> out;
  char buf[256];
  snprintf(buf, sizeof buf,
           "stream: copy and triad, 3 buffers of %.0f MiB fp32, best of %d",
           p.stream_elements * 4.0 / (1 << 20), p.stream_repeats);
  out.push_back(buf);
  std::string types;
  for (GemmType t : p.gemm_types) {
    if (!types.empty()) types += ", ";
    types += GemmTypeInfoOf(t).key;
  }
  std::string shapes;
  for (const GemmShape& s : p.peak_shapes) {
    if (!shapes.empty()) shapes += ", ";
    shapes += Shape(s);
  }
  out.push_back("gemm peaks: " + types + " at " + shapes + ", best of " +
                std::to_string(p.gemm_repeats));
  out.push_back("own kernels: tiled fp32 " + Shape(p.own_fp32_shape) +
                ", mma.sync bf16 " + Shape(p.own_bf16_shape) +
                ", checked against cuBLAS");
  std::string hs;
  for (int h : p.mlp_h) hs += (hs.empty() ? "" : ",") + std::to_string(h);
  snprintf(buf, sizeof buf,
           "mlp (seed 000): fp16 gelu(x@M)@N, batch 16 and 1024, I=%lld, "
           "H=I*h for h=%s, non-fused and fused",
           static_cast<long long>(p.mlp_input_dim), hs.c_str());
  out.push_back(buf);
  snprintf(buf, sizeof buf,
           "m-sweep (seed 004): bf16 GEMM M=%lld..%lld (%zu points), N=%lld, "
           "K=%lld",
           static_cast<long long>(p.msweep_m.front()),
           static_cast<long long>(p.msweep_m.back()), p.msweep_m.size(),
           static_cast<long long>(p.msweep_n),
           static_cast<long long>(p.msweep_k));
  out.push_back(buf);
  return out;
}

}  // namespace rooftrace::kernels
