// Turns the metric values of one profiled range (one kernel launch) into
// the numbers rooftrace serializes: DRAM read/write bytes, GPU time, FLOPs
// per precision class, and the raw values for audit.
//
// How each figure is derived (docs/counters.md has the long form):
//  - bytes: dram__bytes_read.sum / dram__bytes_write.sum (or the
//    dram__bytes_op_* names of GB20x), bytes at the DRAM interface.
//  - time: gpu__time_duration.sum, ns, measured under replay.
//  - tensor FLOPs: sm__ops_path_tensor_* counters count math operations in
//    the tensor path, a multiply and an add each, so 1 op = 1 FLOP (OP for
//    int8); a dense M×N×K MMA adds 2·M·N·K.
//  - CUDA-core FLOPs: per-thread executed instructions with all predicates
//    on; ADD and MUL = 1, FMA = 2; half precision counted per instruction as
//    Nsight Compute's roofline does; Blackwell paired fp32 x2.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_FLOP_EVALUATION_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_FLOP_EVALUATION_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "libinject/counters/metric_tables.h"

namespace rooftrace::counters {

// Counters of one kernel launch; mirrors wire.KernelCounters so libinject's
// encoder can write it field by field.
struct KernelCounters {
  uint64_t correlation_id = 0;
  uint32_t device_id = 0;
  uint64_t range_index = 0;  // position in the profiler's range list
  uint32_t passes = 0;
  uint64_t dram_read_bytes = 0;
  uint64_t dram_write_bytes = 0;
  uint64_t gpu_time_ns = 0;
  // FLOPs per rooftrace::Precision value (index 0 = unknown stays 0).
  std::array<uint64_t, kNumPrecisions> flops{};
  // Raw values in MetricSet order (metric names are in the MetricSet).
  std::vector<double> raw_values;
  // The set raw_values follow, when known (CountersRuntime::Flush sets it;
  // the runtime owns it for its lifetime), so libinject can name them.
  const MetricSet* metric_set = nullptr;
  // Metrics whose value was NaN, infinite or negative: left out of the
  // figures above, listed for a warning.
  std::vector<std::string> invalid_metrics;

  uint64_t TotalFlops() const;
  // The class with the most FLOPs (the roof the kernel is judged against);
  // kUnknown when no FLOPs were counted.
  Precision DominantPrecision() const;
};

// `values[i]` is the value of `set.metrics[i]`. InvalidArgument when the
// counts differ. Values round to the nearest integer and saturate at 2^64-1.
StatusOr<KernelCounters> EvaluateKernelCounters(
    const MetricSet& set, const std::vector<double>& values);

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_FLOP_EVALUATION_H_
