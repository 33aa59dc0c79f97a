// The table `rooftrace profile` (and `collect` at exit) prints for a run:
// top kernels by GPU time with FLOPs, bytes, AI, % of roof, bound and phase;
// totals per phase; producer drops and unmatched records; the roof source.
// Reads the store; thread-compatible.
#ifndef ROOFTRACE_COLLECTOR_SUMMARY_H_
#define ROOFTRACE_COLLECTOR_SUMMARY_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "base/status.h"

namespace rooftrace {

Status PrintRunSummary(const std::string& store_path, int64_t run_id,
                       std::ostream& out, int top_kernels = 15);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_SUMMARY_H_
