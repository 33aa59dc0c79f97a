// One job's ranks side by side (`rooftrace analyze RANK0 RANK1 ...` or
// `analyze DIR`): each rank's GPU time, busy and idle time and exposed
// communication, and how long each rank waited in collectives for the
// others.
//
// Waiting is read from the collective kernels' durations, not from their
// start times: ranks on different nodes do not share a clock, but a
// collective ends on every rank at about the same time (none can finish
// before the last one arrives), so the rank that arrived last has the
// shortest kernel and every other rank's kernel is longer by the time it
// waited. The n-th call of one kind (CollectiveCall::key) on each rank is
// the same collective; calls a rank lacks leave that collective
// unmatched (counted, not compared).
//
// Pure functions of the per-rank reports; thread-safe.
#ifndef ROOFTRACE_REPORT_JOB_REPORT_H_
#define ROOFTRACE_REPORT_JOB_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "report/report.h"

namespace rooftrace {

struct RankRow {
  int64_t rank = 0;
  std::string input;
  std::string device;
  int64_t kernels = 0;
  int64_t gpu_ns = 0;        // summed kernel time
  int64_t span_ns = 0, busy_ns = 0, idle_ns = 0;
  int64_t comm_ns = 0;       // summed collective kernel time
  int64_t exposed_comm_ns = 0;
  // Summed over matched collectives: this rank's kernel time beyond the
  // shortest rank's (time spent waiting for the last rank to arrive).
  int64_t wait_ns = 0;
  // Matched collectives this rank arrived last to (its kernel the
  // shortest).
  int64_t last_arrivals = 0;
};

// The collectives of one kind matched across every rank.
struct CollectiveSkewRow {
  std::string key;
  int64_t calls = 0;  // matched on every rank
  // Per call, the longest rank's kernel minus the shortest's: mean, max.
  int64_t mean_spread_ns = 0, max_spread_ns = 0;
};

struct JobReport {
  std::vector<RankRow> ranks;  // by rank
  std::vector<CollectiveSkewRow> collectives;  // by summed spread
  // Calls of a kind beyond the fewest any rank made of it.
  int64_t unmatched_calls = 0;
};

// `reports[i]` is rank `ranks[i]` (the rank its input names, else its
// position).
JobReport BuildJobReport(const std::vector<Report>& reports,
                         const std::vector<int64_t>& ranks);

void WriteJobTable(const JobReport& job, std::ostream& out);
void WriteJobJson(const JobReport& job, std::ostream& out);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_JOB_REPORT_H_
