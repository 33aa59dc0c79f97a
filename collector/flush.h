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
#ifndef ROOFTRACE_COLLECTOR_FLUSH_H_
#define ROOFTRACE_COLLECTOR_FLUSH_H_

#include <cstdint>
#include <string>

#include "collector/import_stats.h"
#include "collector/join.h"
#include "collector/session.h"
#include "collector/store.h"

namespace rooftrace {

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

#endif  // ROOFTRACE_COLLECTOR_FLUSH_H_
