// Attaches per-kernel hardware counters measured by one tool (Nsight
// Compute's CSV) to the kernels of a timeline recorded by another (an Nsight
// Systems export, a Kineto trace) by kernel name and occurrence: the n-th
// profiled launch of kernel K is the n-th launch of K in the timeline, once
// the launches the profiler skipped (--launch-skip) are set aside. The
// counters come out as CounterRecords keyed by the timeline kernels'
// correlation ids, ready for a pipeline Session.
//
// A counter sample names its kernel and says which launch it measured in
// one of three ways, tried in this order:
//   - launch_index >= 0: the profiler's own launch index (ncu's "ID": the
//     n-th profiled launch of the application, all kernels counted);
//     timeline launch = launch_skip + launch_index, and its name must agree;
//   - occurrence >= 0: the n-th profiled launch of that kernel name;
//   - neither: the samples of one name are taken in file order: each
//     measured the next launch of that name no earlier sample matched.
// Names are compared exactly against every name a timeline kernel is known
// by (mangled, demangled, short), so either side may use any of them. A
// sample whose name matches none is then compared by CounterNameKey: the
// same kernel demangled by NVIDIA's tools (ncu, nsys: "(int)4", "char *",
// "[lambda(int) (instance 1)]", parameters as "T2") and by the C++ runtime
// (Kineto: "4", "char*", "{lambda(int)#1}", parameters spelled out), or
// mangled on one side, gives one key.
//
// Pure function of its inputs; thread-safe. The trap: the pipeline joins
// counters by correlation id, and the kernels of one CUDA graph launch share
// theirs; a record for one of them would land on all, so samples of such
// kernels are counted as unmatched (shared_correlation), never attached.
#ifndef ROOFTRACE_SOURCES_COUNTER_MATCH_H_
#define ROOFTRACE_SOURCES_COUNTER_MATCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/records.h"

namespace rooftrace {

// One kernel launch of the timeline, in launch (API call) order.
struct TimelineKernel {
  uint64_t correlation_id = 0;
  uint32_t name = 0;  // index into CounterMatchInput::names
};

// A raw value the counter file holds for a launch, kept beside the derived
// ones (kernel_metrics): the tool's metric name, its unit as written.
struct CounterMetric {
  std::string name, unit;
  double value = 0;
};

// One measured launch of the counter file.
struct CounterSample {
  std::string kernel_name;
  int64_t launch_index = -1;
  int64_t occurrence = -1;
  // The values; correlation_id is ignored (the match sets it).
  CounterRecord values;
  std::vector<CounterMetric> metrics;
};

// Which launches the profiler measured: --launch-skip and --launch-count.
struct CounterWindow {
  uint64_t launch_skip = 0;
  std::optional<uint64_t> launch_count;
};

// A whole counter file (import --counters ncu.csv) as read by its format's
// reader: every sample and the window the profiler measured.
struct CounterFile {
  std::string path;
  std::vector<CounterSample> samples;
  CounterWindow window;
};

struct CounterMatchInput {
  // Each distinct kernel of the timeline with the names it is known by.
  std::vector<std::vector<std::string>> names;
  std::vector<TimelineKernel> kernels;  // launch order
  std::vector<CounterSample> samples;
  CounterWindow window;
};

struct CounterMatchResult {
  // One per matched sample, correlation_id set, in timeline order.
  std::vector<CounterRecord> counters;
  // For each of counters, the index of its sample in the input's samples
  // (for what else the sample holds: its raw metrics).
  std::vector<size_t> sample_of;
  uint64_t matched = 0;
  // Samples left without a kernel, by reason.
  uint64_t unknown_name = 0;        // no timeline kernel has that name
  uint64_t beyond_timeline = 0;     // more launches measured than recorded
  uint64_t name_mismatch = 0;       // launch_index names another kernel
  uint64_t duplicate = 0;           // a second sample for one launch
  uint64_t shared_correlation = 0;  // a kernel of a graph launch
  // Timeline kernels inside the window that no sample measured.
  uint64_t kernels_without_counters = 0;
  // One line for the user: "12 of 14 counter samples matched; 2 name no
  // kernel of the timeline (first: 'foo')".
  std::string summary;

  uint64_t unmatched() const {
    return unknown_name + beyond_timeline + name_mismatch + duplicate +
           shared_correlation;
  }
};

CounterMatchResult MatchCounters(const CounterMatchInput& input);

// The key two spellings of one kernel's name share: demangled (when
// mangled), without whitespace, `const`, parameter lists, literal casts and
// integer suffixes; `true`/`false` as 1/0, anonymous namespaces and lambdas
// written one way. Template arguments are kept, so two instances of one
// template keep two keys.
std::string CounterNameKey(std::string_view name);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_COUNTER_MATCH_H_
