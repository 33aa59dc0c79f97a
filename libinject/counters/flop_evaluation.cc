#include "libinject/counters/flop_evaluation.h"

#include <cmath>
#include <limits>

namespace rooftrace::counters {
namespace {

// Nearest integer, saturating; the caller has rejected NaN and negatives.
uint64_t ToCount(double v) {
  constexpr double kMax = 18446744073709551615.0;  // 2^64 - 1 as a double
  if (v >= kMax) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(std::round(v));
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t s = a + b;
  return s < a ? std::numeric_limits<uint64_t>::max() : s;
}

}  // namespace

uint64_t KernelCounters::TotalFlops() const {
  uint64_t total = 0;
  for (uint64_t f : flops) total = SaturatingAdd(total, f);
  return total;
}

Precision KernelCounters::DominantPrecision() const {
  int best = 0;
  for (int i = 1; i < kNumPrecisions; ++i) {
    if (flops[i] > flops[best]) best = i;
  }
  return flops[best] == 0 ? Precision::kUnknown : static_cast<Precision>(best);
}

StatusOr<KernelCounters> EvaluateKernelCounters(
    const MetricSet& set, const std::vector<double>& values) {
  if (values.size() != set.metrics.size()) {
    return InvalidArgument("got " + std::to_string(values.size()) +
                           " metric values for " +
                           std::to_string(set.metrics.size()) + " metrics");
  }
  KernelCounters out;
  out.raw_values = values;
  for (size_t i = 0; i < values.size(); ++i) {
    const MetricSpec& m = set.metrics[i];
    const double v = values[i];
    if (!std::isfinite(v) || v < 0) {
      out.invalid_metrics.push_back(m.name);
      continue;
    }
    switch (m.role) {
      case MetricRole::kDramReadBytes:
        out.dram_read_bytes = SaturatingAdd(out.dram_read_bytes, ToCount(v));
        break;
      case MetricRole::kDramWriteBytes:
        out.dram_write_bytes = SaturatingAdd(out.dram_write_bytes, ToCount(v));
        break;
      case MetricRole::kGpuTimeNs:
        out.gpu_time_ns = SaturatingAdd(out.gpu_time_ns, ToCount(v));
        break;
      case MetricRole::kFlops: {
        const int p = static_cast<int>(m.precision);
        if (p <= 0 || p >= kNumPrecisions) break;
        out.flops[p] =
            SaturatingAdd(out.flops[p], ToCount(v * m.flops_per_unit));
        break;
      }
    }
  }
  return out;
}

}  // namespace rooftrace::counters
