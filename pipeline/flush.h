// Which part of a live session is settled: the forward steps that can be
// stored now and dropped from memory without changing what the session's
// rows would be if it were stored whole at its end. Used by RunRecorder to
// store long sessions in windows.
//
// A step is settled when
//  - at least `trailing_steps` steps follow it (its label looks at its
//    neighbours; the next window sees it as the previous step);
//  - every kernel and copy in it, and every step before it, has what its
//    row needs: the whole NVTX range chain of its launch (ranges arrive when
//    they end, so an open range holds its kernels back), the GEMM call its
//    launch was made in, and, in counters mode while `wait_for_counters`,
//    counters at least as new as its correlation id (the caller stops
//    waiting when the session grows regardless: a producer past its
//    --max-kernels sends no more counters);
//  - no GEMM call has kernels on both sides of the cut.
// Launches, GEMM calls and NVTX ranges are stored with the settled steps
// when their host time lies before every launch still held; launches and
// GEMM calls that never met a kernel by then are unmatched for good (as
// they would be at the session's end) and counted so.
//
// Pure function of its inputs; thread-compatible.
#ifndef ROOFTRACE_PIPELINE_FLUSH_H_
#define ROOFTRACE_PIPELINE_FLUSH_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/import_stats.h"
#include "pipeline/join.h"
#include "pipeline/session.h"

namespace rooftrace {

// The rows of a joined session that one flush stores: kernels and steps up
// to `last_step`, and the GEMM calls, copies and NVTX ranges flagged.
struct WriteScope {
  int last_step = -1;
  std::vector<char> gemms;    // per JoinedSession::gemms
  std::vector<char> memcpys;  // per JoinedSession::memcpys
  std::vector<char> nvtx;     // per JoinedSession::nvtx
};

// Whether a write with `scope` (nullptr: the whole session) covers a kernel:
// a flush writes the kernels of its settled steps only.
inline bool InScope(const WriteScope* scope, const JoinedKernel& k) {
  return scope == nullptr || (k.step >= 0 && k.step <= scope->last_step);
}

// How many of the joined session's first `steps` steps a write covers.
inline size_t StepsInScope(const WriteScope* scope, size_t steps) {
  return scope == nullptr
             ? steps
             : std::min(steps, static_cast<size_t>(scope->last_step + 1));
}

struct FlushPlan {
  int last_step = -1;  // -1: nothing is settled
  WriteScope scope;    // rows to store (WriteScope::last_step == last_step)
  RecordMask drop;     // records to drop once stored
  uint64_t kernels = 0;
  // Unmatched records among those dropped, for the session's statistics
  // (the windowed join's own counts are not kept: a later window would
  // count the held records again).
  ImportStats unmatched;
  std::string held_by;  // why the cut is not later (for logs and tests)
};

FlushPlan PlanFlush(const Session& session, const JoinedSession& joined,
                    int trailing_steps = 2, bool wait_for_counters = true);

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_FLUSH_H_
