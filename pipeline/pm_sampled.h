// PM-sampled DRAM bytes (issue 25, item 4; docs/counters.md "Sampling
// mode"). libinject's sampling mode sends device-wide PM samples
// (PmSampleRecord: the counts of one interval of one device); here they are
// given to the session's kernels by time overlap (pipeline/pm_attribution.h:
// whole to the one kernel a sample overlaps, split by overlap between
// several), and every kernel given DRAM bytes that has no counters of its
// own takes them: its row's bytes_source is
//   `pm-sampling (exact)`                  every sample it took was its alone;
//   `pm-sampling (attributed, error e%)`   e = the share of its bytes that
//                                          came from split samples (what a
//                                          split could have misplaced).
// FLOPs stay the kernel's own (analytic for cuBLAS calls): PM sampling's
// one pass has no FLOP counters.
//
// Windows. A window of a live session is stored once samples reaching
// past its kernels have arrived (pipeline/flush.h). The attribution of a
// window runs over every kernel it joined (stored and held) and over the
// kernels of earlier windows that overlap a sample still held (their
// spans are kept), so a sample that straddles a cut is split the same way
// in both windows. A sample is retired (dropped and counted exact, split
// or unattributed) once it ends before every held kernel of its device
// starts.
//
// Memory: per session, the spans of stored kernels that overlap samples
// still held (a few), freed by EndSession().
//
// Not thread-safe: the recorder calls it under its lock.
#ifndef ROOFTRACE_PIPELINE_PM_SAMPLED_H_
#define ROOFTRACE_PIPELINE_PM_SAMPLED_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/roof_model.h"
#include "pipeline/flush.h"
#include "pipeline/import_stats.h"
#include "pipeline/join.h"
#include "pipeline/pm_attribution.h"
#include "pipeline/session.h"

namespace rooftrace {

// The label of a kernel's PM-sampled bytes: `pm-sampling (exact)` when no
// split sample contributed, else `pm-sampling (attributed, error e%)`.
std::string PmSampledLabel(const PmKernelCounts& counts);

class PmSampledBytes {
 public:
  // For one joined session or window of `session` (one with PM samples:
  // sampling mode, whatever its Hello said; others cost nothing):
  // attributes the samples it holds,
  // gives the kernels their bytes (the label lives in joined->sampled) and
  // counts, among the kernels a write with `scope` stores (nullptr: all),
  // those given bytes (kernels_pm_sampled).
  // With `scope` null (the session's end) every sample is retired and
  // counted; with a scope, `drop` (the flush plan's) is told which samples
  // can go, those are counted, and the stored kernels that overlap the
  // samples kept are remembered.
  void Apply(const Session& session, JoinedSession* joined,
             const WriteScope* scope, ImportStats* stats,
             RecordMask* drop = nullptr);
  // The session ended (stored whole, or dropped): its spans are freed.
  void EndSession(const Session* session) { kept_.erase(session); }

 private:
  struct Span {
    uint32_t device = 0;
    uint64_t start_ns = 0, end_ns = 0;
  };
  // Stored kernels that overlap samples still held, per session.
  std::unordered_map<const Session*, std::vector<Span>> kept_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_PM_SAMPLED_H_
