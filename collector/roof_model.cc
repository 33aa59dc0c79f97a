#include "collector/roof_model.h"

#include <algorithm>

namespace rooftrace {
namespace {

// cudaDataType_t values (library_types.h).
constexpr int32_t kR32F = 0, kR64F = 1, kR16F = 2, kR8I = 3, kC32F = 4,
                  kC64F = 5, kC16F = 6, kR8U = 8, kR32I = 10, kR32U = 12,
                  kR16BF = 14, kR8FE4M3 = 28, kR8FE5M2 = 29;
// cublasComputeType_t values (cublas_api.h).
constexpr int32_t kCompute16F = 64, kCompute16FPedantic = 65,
                  kCompute32FFast16F = 74, kCompute32FFast16BF = 75,
                  kCompute32FFastTf32 = 77, kCompute32I = 72,
                  kCompute32IPedantic = 73;

}  // namespace

double Roofs::Peak(Precision p) const {
  double peak = peak_flops_per_s[static_cast<int>(p)];
  if (peak > 0) return peak;
  switch (p) {
    case Precision::kFp64Tensor:
      return peak_flops_per_s[static_cast<int>(Precision::kFp64)];
    case Precision::kTf32Tensor:
      return peak_flops_per_s[static_cast<int>(Precision::kFp32)];
    case Precision::kFp8Tensor:
      return Peak(Precision::kFp16Tensor);
    case Precision::kFp16Tensor:
      return peak_flops_per_s[static_cast<int>(Precision::kFp16)];
    default:
      return 0;
  }
}

double Roofs::Ridge(Precision p) const {
  return RidgePoint(Peak(p), dram_bytes_per_s);
}

Roofs RoofsFromDatasheet(std::string_view device_name_or_key) {
  Roofs r;
  r.device_name = std::string(device_name_or_key);
  const DatasheetEntry* e = FindDatasheetEntry(device_name_or_key);
  if (e == nullptr) return r;
  r.peak_flops_per_s = e->peak_flops_per_s;
  r.dram_bytes_per_s = e->dram_bytes_per_s;
  r.source = "datasheet:" + std::string(e->key);
  r.kind = "datasheet";
  return r;
}

Roofs RoofsFromProfile(const DeviceProfile& profile, const std::string& path) {
  Roofs r;
  r.device_name = profile.device.name;
  for (int i = 0; i < kNumPrecisions; ++i) {
    r.peak_flops_per_s[i] = profile.PeakFlopsPerS(static_cast<Precision>(i));
  }
  r.dram_bytes_per_s = profile.DramBytesPerS();
  r.source = "calibrated:" + path;
  r.kind = "calibrated";
  return r;
}

std::string_view SourceName(Source s) {
  switch (s) {
    case Source::kAnalytic: return "analytic";
    case Source::kCounters: return "counters";
    case Source::kNone: break;
  }
  return "none";
}

std::string_view BoundName(Bound b) {
  switch (b) {
    case Bound::kMemory: return "memory";
    case Bound::kCompute: return "compute";
    case Bound::kLatency: return "latency";
    case Bound::kUnknown: break;
  }
  return "unknown";
}

int ElementBytes(int32_t t) {
  switch (t) {
    case kR8I: case kR8U: case kR8FE4M3: case kR8FE5M2: return 1;
    case kR16F: case kR16BF: return 2;
    case kR32F: case kR32I: case kR32U: case kC16F: return 4;
    case kR64F: case kC32F: return 8;
    case kC64F: return 16;
    default: return 0;
  }
}

Precision GemmPrecision(const GemmShape& g) {
  const int32_t in = g.a_type >= 0 ? g.a_type : g.b_type;
  switch (in) {
    case kR8FE4M3:
    case kR8FE5M2:
      return Precision::kFp8Tensor;
    case kR8I:
      return (g.compute_type == kCompute32I ||
              g.compute_type == kCompute32IPedantic || g.compute_type == kR32I)
                 ? Precision::kInt8Tensor
                 : Precision::kUnknown;
    case kR16F:
    case kR16BF:
      return Precision::kFp16Tensor;
    case kR32F:
      if (g.compute_type == kCompute32FFastTf32) return Precision::kTf32Tensor;
      if (g.compute_type == kCompute32FFast16F ||
          g.compute_type == kCompute32FFast16BF ||
          g.compute_type == kCompute16F ||
          g.compute_type == kCompute16FPedantic) {
        return Precision::kFp16Tensor;
      }
      return Precision::kFp32;
    case kR64F:
      return Precision::kFp64Tensor;
    default:
      return Precision::kUnknown;
  }
}

uint64_t GemmFlops(const GemmShape& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return 0;
  return 2ull * static_cast<uint64_t>(g.m) * static_cast<uint64_t>(g.n) *
         static_cast<uint64_t>(g.k) * static_cast<uint64_t>(g.batch);
}

uint64_t GemmMinBytes(const GemmShape& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return 0;
  const int ea = ElementBytes(g.a_type);
  const int eb = ElementBytes(g.b_type >= 0 ? g.b_type : g.a_type);
  const int32_t out_type =
      g.d_type >= 0 ? g.d_type : (g.c_type >= 0 ? g.c_type : g.a_type);
  const int ed = ElementBytes(out_type);
  if (ea == 0 || eb == 0 || ed == 0) return 0;
  const auto m = static_cast<uint64_t>(g.m), n = static_cast<uint64_t>(g.n),
             k = static_cast<uint64_t>(g.k);
  return (m * k * ea + k * n * eb + m * n * ed) *
         static_cast<uint64_t>(g.batch);
}

Annotation Annotate(const KernelFacts& f, const Roofs& roofs,
                    const AnnotateOptions& options) {
  Annotation a;
  const bool have_flops = f.flops_source != Source::kNone;
  const bool have_bytes = f.bytes_source != Source::kNone;
  uint64_t total = 0;
  uint64_t best = 0;
  for (int i = 0; i < kNumPrecisions; ++i) {
    total += f.flops[i];
    if (f.flops[i] > best) {
      best = f.flops[i];
      a.precision = static_cast<Precision>(i);
    }
  }
  if (have_flops) a.flops = total;
  // Zero FLOPs counted is "a kernel without FLOPs" (a copy): judged on
  // bandwidth alone, like a kernel whose FLOPs are unknown.
  const bool flop_kernel = have_flops && total > 0;
  if (flop_kernel && have_bytes && f.dram_bytes > 0) {
    a.ai = static_cast<double>(total) / static_cast<double>(f.dram_bytes);
  }
  if (f.duration_ns == 0) return a;
  const double t = static_cast<double>(f.duration_ns) * 1e-9;
  if (have_flops) a.achieved_flops_per_s = static_cast<double>(total) / t;
  if (have_bytes) {
    a.achieved_bytes_per_s = static_cast<double>(f.dram_bytes) / t;
  }
  const double bw = roofs.dram_bytes_per_s;
  const double peak = flop_kernel ? roofs.Peak(a.precision) : 0;
  const bool short_kernel = f.duration_ns < options.latency_max_ns;

  if (flop_kernel && a.ai && peak > 0 && bw > 0) {
    const double roof = std::min(peak, *a.ai * bw);
    a.roof_flops_per_s = roof;
    a.fraction_of_roof = *a.achieved_flops_per_s / roof;
    const bool far_below =
        *a.achieved_flops_per_s < options.latency_fraction * peak &&
        *a.achieved_bytes_per_s < options.latency_fraction * bw;
    if (short_kernel && far_below) {
      a.bound = Bound::kLatency;
    } else {
      a.bound = *a.ai < peak / bw ? Bound::kMemory : Bound::kCompute;
    }
  } else if (flop_kernel && peak > 0) {
    // FLOPs without bytes: only the compute roof applies.
    a.roof_flops_per_s = peak;
    a.fraction_of_roof = *a.achieved_flops_per_s / peak;
    if (short_kernel && *a.fraction_of_roof < options.latency_fraction) {
      a.bound = Bound::kLatency;
    }
  } else if (!flop_kernel && have_bytes && bw > 0) {
    a.fraction_of_roof = *a.achieved_bytes_per_s / bw;
    a.bound = short_kernel && *a.fraction_of_roof < options.latency_fraction
                  ? Bound::kLatency
                  : Bound::kMemory;
  }
  return a;
}

}  // namespace rooftrace
