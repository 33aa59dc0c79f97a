// The table `rooftrace profile` (and `collect` at exit) prints for a run:
// the analyzer's report of the stored run (report/report.h) by kernel
// family, the top N by GPU time, printed with the same columns `rooftrace
// analyze` uses: header (device, roofs, sources, drops), kernels by family,
// phase summary. Reads the store through the one store reader.
#ifndef ROOFTRACE_COLLECTOR_SUMMARY_H_
#define ROOFTRACE_COLLECTOR_SUMMARY_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "base/status.h"

namespace rooftrace {

// `ops_route`: profile ran with --ops torch; one line then says what the
// route received (or that nothing came, and the likely reasons).
Status PrintRunSummary(const std::string& store_path, int64_t run_id,
                       std::ostream& out, int top_kernels = 15,
                       bool ops_route = false);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_SUMMARY_H_
