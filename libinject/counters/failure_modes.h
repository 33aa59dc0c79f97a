// Why counters mode cannot run, as one line a user can act on. Every CUPTI
// failure on the way to a running Range Profiler goes through
// ClassifyCuptiFailure; libinject prints the line once (with its
// "rooftrace: " prefix) and carries on in trace mode. Never a crash, never a
// change to the host's behaviour.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_FAILURE_MODES_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_FAILURE_MODES_H_

#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "libinject/cupti_call.h"

namespace rooftrace::counters {

enum class CounterFailure {
  kInsufficientPrivileges,  // driver restricts counters to admin users
  kHardwareBusy,            // another profiler or DCGM holds the counters
  kMigUnsupported,          // a MIG instance
  kConfidentialCompute,
  kVirtualGpu,         // vGPU without profiling enabled
  kUnsupportedDevice,  // CMP, SLI, WSL, pre-Volta architecture
  kOtherCuptiClient,   // another CUPTI profiler API user in-process
  kNoDevice,           // no driver, no GPU, context gone
  kOutOfMemory,
  kNotSupported,  // generic "not supported" (MPS client, ...)
  kOther,
};

std::string_view CounterFailureName(CounterFailure f);

struct CounterFailureReport {
  CounterFailure kind = CounterFailure::kOther;
  // One line: what failed, why, how to fix, and "using trace mode".
  std::string line;
};

// `call` is the CUPTI call text, e.g. "cuptiRangeProfilerEnable".
CounterFailureReport ClassifyCuptiFailure(CUptiResult result,
                                          std::string_view call);

// A failed CUPTI call (RT_CUPTI_CALL) as Unavailable carrying its one-line
// report; OK for a successful call.
Status CounterFailureStatus(const inject::CuptiCall& call);

// The first unsupported item of a cuptiProfilerDeviceSupported answer, as a
// failure; nullopt when the device supports range profiling.
std::optional<CounterFailureReport> ClassifyDeviceSupport(
    const CUpti_Profiler_DeviceSupported_Params& support);

// What counters mode does with CUDA graphs, for the docs and the one-time
// note libinject prints when it first sees a graph launch.
std::string_view CudaGraphNote();

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_FAILURE_MODES_H_
