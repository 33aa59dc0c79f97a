// The metrics counters mode collects, per GPU architecture, in ONE place.
//
// Each chip family lists a default set that fits one replay pass (DRAM read
// and write bytes, GPU time, the tensor-core op counters that matter for
// inference) and the extra CUDA-core instruction counters of the full set
// (they need a second pass: SASS-patching metrics are never scheduled with
// hardware counters). The pass counts are checked against the installed
// CUPTI for every family in tests/libinject/counters/metric_config_test.cc; the
// hardware-counter budget of one pass is tight (on GA100 only two tensor
// counters fit next to DRAM and time), so each default set is ordered by
// what inference kernels use.
//
// A chip with no table (new architecture, Volta/Turing, Jetson) gets a set
// discovered from the metric names its CUPTI reports (DiscoverMetricSet); the
// config builder then keeps the discovered candidates that fit the pass
// budget.
//
// Immutable static data and pure functions; thread-safe.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_METRIC_TABLES_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_METRIC_TABLES_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/precision.h"

namespace rooftrace::counters {

// ROOFTRACE_COUNTERS: `default` (one pass) or `full` (adds CUDA-core FLOPs).
enum class CounterSet { kDefault, kFull };
StatusOr<CounterSet> ParseCounterSet(std::string_view value);
std::string_view CounterSetName(CounterSet set);

enum class MetricRole {
  kDramReadBytes,
  kDramWriteBytes,
  kGpuTimeNs,
  kFlops,  // counted operations that convert to FLOPs of `precision`
};

struct MetricSpec {
  std::string name;  // with rollup: "dram__bytes_read.sum"
  MetricRole role = MetricRole::kFlops;
  Precision precision = Precision::kUnknown;  // kFlops only
  // FLOPs per counted unit (kFlops only). Tensor "math op" counters already
  // count a multiply-add as 2 ops, so 1; an FMA instruction is 2.
  double flops_per_unit = 0.0;
};

struct ChipFamily {
  std::string_view name;                    // "hopper"
  std::vector<std::string_view> chips;      // CUPTI chip names: "GH100"
  std::vector<MetricSpec> default_metrics;  // one pass
  std::vector<MetricSpec> full_extra;       // appended for CounterSet::kFull
  int default_passes = 1;  // what the installed CUPTI computes (tested)
  int full_passes = 2;
};

// Every family with a hand-checked table.
const std::vector<ChipFamily>& ChipFamilies();
// nullptr when `chip` (a CUPTI chip name, case-sensitive) has no table.
const ChipFamily* FindChipFamily(std::string_view chip);

struct MetricSet {
  std::string chip;
  CounterSet set = CounterSet::kDefault;
  std::vector<MetricSpec> metrics;
  bool discovered = false;  // built by DiscoverMetricSet, not from a table
  // Metric names in order, for the CUPTI calls (pointers into `metrics`;
  // valid while this MetricSet lives and is not modified).
  std::vector<const char*> Names() const;
};

// The table's set for `chip`; NotFound when the chip has no table.
StatusOr<MetricSet> MetricSetForChip(std::string_view chip, CounterSet set);

// Candidates for a chip without a table, from the counter-type base metric
// names its CUPTI lists (cuptiProfilerHostGetBaseMetrics, no rollup suffix).
// Order: DRAM read, DRAM write, GPU time, tensor source-level counters by
// inference priority (fp16/bf16, fp8, tf32, int8, fp64), then for kFull the
// CUDA-core counters. Fails with a message naming the chip when it has no
// DRAM byte or GPU time counters (integrated GPUs): counters mode cannot
// measure bytes there, the caller falls back to trace mode.
StatusOr<MetricSet> DiscoverMetricSet(
    std::string_view chip, CounterSet set,
    const std::vector<std::string>& base_counter_metrics);

// Precision class of a tensor source-level counter spec (the part after
// "sm__ops_path_tensor_src_", e.g. "bf16_dst_fp32"); kUnknown for formats
// rooftrace has no roof for (int1, int4, fp4-only). Exposed for tests.
Precision TensorSourcePrecision(std::string_view spec);

// The CUDA-core counters of the full set present in `base_counter_metrics`
// (or all nine classic ones when the list is empty), with their factors.
std::vector<MetricSpec> CudaCoreMetrics(
    const std::vector<std::string>& base_counter_metrics);

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_METRIC_TABLES_H_
