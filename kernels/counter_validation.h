// Counter validation: the FLOPs and DRAM bytes that hardware counters
// attributed to calibration's reference kernels, against the figures those
// kernels must have (kernels/formulas.h). Input: the kernels of a counters-mode
// run of calibration (`rooftrace profile --mode counters -- rooftrace
// calibrate ...`), found by the NVTX range each reference kernel runs in.
//
// Pure functions plus one SQLite reader; thread-compatible.
#ifndef ROOFTRACE_KERNELS_COUNTER_VALIDATION_H_
#define ROOFTRACE_KERNELS_COUNTER_VALIDATION_H_

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/device_profile.h"
#include "kernels/calibration_result.h"

namespace rooftrace::kernels {

// One kernel launch as the store has it (docs/store.md, table kernels).
struct CountedKernel {
  std::string nvtx_path;            // "outer/inner"; the innermost
                                    // "rooftrace:..." range names the kernel
  std::optional<double> flops;      // only when counted (flops_source)
  std::optional<double> dram_bytes; // only when counted (bytes_source)
};

// The expected (FLOP, DRAM byte) figures of one reference kernel launch.
struct ExpectedCounts {
  std::string range;     // "rooftrace:own_sgemm_tiled_2048x2048x2048"
  std::string kernel;    // description for the report
  std::optional<double> flops;
  std::optional<double> dram_bytes;
};

// The reference kernels of a result and what each launch must count:
// STREAM copy (bytes 2·n·4, no FLOPs) and triad (bytes 3·n·4, FLOPs 2·n),
// the own GEMMs (FLOPs 2·M·N·K; their bytes depend on tiling, so only
// FLOPs are validated).
std::vector<ExpectedCounts> ExpectedReferenceCounts(const CalibrationResult& r);

// Per reference kernel and quantity: the median counted value over its
// launches against the expected value. Kernels with no counted launch are
// left out.
std::vector<CounterValidation> ValidateCounters(
    const CalibrationResult& r, const std::vector<CountedKernel>& kernels);

// Reads the kernels of a counters-mode run from a store. `run_id` < 0: the
// newest run. Errors name the store and the fix.
StatusOr<std::vector<CountedKernel>> ReadCountedKernels(
    const std::string& store_path, int64_t run_id);

}  // namespace rooftrace::kernels

#endif  // ROOFTRACE_KERNELS_COUNTER_VALIDATION_H_
