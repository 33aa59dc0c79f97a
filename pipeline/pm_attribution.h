// PM sampling attribution (issue 25, item 4; DESIGN.md "Annotation":
// `sampling`). CUPTI's PM sampling (cupti_pmsampling.h, CUDA 12.6+) reads
// device-wide counters at a fixed interval: each sample is the counts
// between its startTimestamp and endTimestamp
// (cuptiPmSamplingCounterDataGetSampleInfo), for the whole GPU, whatever
// ran. This gives those counts to the kernels that ran by time overlap:
//  - a sample that overlaps one kernel only is given to it whole: EXACT
//    (device counters while one kernel runs are that kernel's; a copy
//    engine's DRAM traffic in the same interval would be counted with it);
//  - a sample that overlaps two or more kernels (concurrent on other
//    streams, or one after the other inside the interval) is SPLIT between
//    them in proportion to each one's overlap with the interval, and said
//    so: the counts need not be uniform in time, so a split share can be
//    wrong by as much as the share itself;
//  - a sample that overlaps no kernel is UNATTRIBUTED (idle time, copies).
// Nothing is lost: per counter, exact + split + unattributed = the sum of
// the samples (to rounding).
//
// Per family, the totals carry their attribution error: the part of the
// family's counts that came from split samples (an upper bound of what the
// split could have misplaced). Pure functions; thread-compatible.
#ifndef ROOFTRACE_PIPELINE_PM_ATTRIBUTION_H_
#define ROOFTRACE_PIPELINE_PM_ATTRIBUTION_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rooftrace {

// The device counters sampling mode reads (one value each per sample), in
// the order of libinject's PmRole (libinject/counters/pm_sampler.h). PM
// sampling has one pass: each chip gets the tensor pipe or the FMA pipe,
// as instructions or as active cycles, whichever fits (0 when left out).
enum class PmCounter {
  kDramReadBytes = 0,  // dram__bytes_read.sum (dram__bytes_op_read on GB20x)
  kDramWriteBytes,     // dram__bytes_write.sum
  kTensorPipe,         // sm__inst_executed_pipe_tensor.sum or
                       // sm__pipe_tensor_cycles_active.sum
  kFmaPipe,            // sm__inst_executed_pipe_fma.sum or
                       // sm__pipe_fma_cycles_active.sum
  kSmCycles,           // sm__cycles_active.sum
  kCount
};
inline constexpr int kNumPmCounters = static_cast<int>(PmCounter::kCount);
using PmValues = std::array<double, kNumPmCounters>;

// One PM sample: the counts between start_ns and end_ns (GPU timestamps on
// the kernels' clock).
struct PmSample {
  uint64_t start_ns = 0, end_ns = 0;
  PmValues values{};
};

// A kernel as it ran on the device.
struct PmKernelSpan {
  uint64_t start_ns = 0, end_ns = 0;
};

// What one kernel was given.
struct PmKernelCounts {
  PmValues values{};  // everything given (exact + split)
  PmValues split{};   // the part from split samples
  uint32_t exact_samples = 0, split_samples = 0;
};

// What became of one sample.
enum class PmSampleFate : uint8_t { kExact, kSplit, kUnattributed, kInvalid };

struct PmAttribution {
  std::vector<PmKernelCounts> kernels;  // parallel to the kernels given
  std::vector<PmSampleFate> fates;      // parallel to the samples given
  PmValues unattributed{};
  uint64_t samples_exact = 0, samples_split = 0, samples_unattributed = 0;
  uint64_t samples_invalid = 0;  // end <= start: left out, counted
};

// Attributes `samples` (any order) to `kernels` (any order, may overlap).
PmAttribution AttributePmSamples(const std::vector<PmSample>& samples,
                                 const std::vector<PmKernelSpan>& kernels);

// A family's totals and how much of them a split decided.
struct PmFamilyTotals {
  PmValues values{};
  PmValues split{};
  uint64_t kernels = 0;
  // split / values of one counter (0 when the family has none of it): the
  // fraction of the family's figure that a split could have misplaced.
  double ErrorFraction(PmCounter c) const {
    const int i = static_cast<int>(c);
    return values[i] > 0 ? split[i] / values[i] : 0.0;
  }
};

// Sums the attribution per family (`families[i]` is kernel i's family).
std::map<std::string, PmFamilyTotals> PmTotalsByFamily(
    const PmAttribution& attribution, const std::vector<std::string>& families);

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_PM_ATTRIBUTION_H_
