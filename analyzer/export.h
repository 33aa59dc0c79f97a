// Exports of one run for the tools people already use:
//  - Chrome trace event JSON (opens in Perfetto and chrome://tracing): GPU
//    kernels and copies on one track per (device, stream), NVTX ranges on
//    one track per (process, thread), the roofline annotation of each
//    kernel in its args;
//  - CSV: one file per store table, restricted to the run.
// Both stream rows from the store; memory does not grow with the run.
// Thread-compatible.
#ifndef ROOFTRACE_ANALYZER_EXPORT_H_
#define ROOFTRACE_ANALYZER_EXPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "store/store_reader.h"
#include "base/status.h"

namespace rooftrace::analyzer {

// Process ids of GPU devices in the trace: kGpuPidBase + device_id, kept
// apart from real host pids.
inline constexpr int64_t kGpuPidBase = 1000000000;

struct PerfettoStats {
  int64_t kernels = 0;
  int64_t memcpys = 0;
  int64_t nvtx_ranges = 0;
  int64_t open_ranges = 0;  // NVTX ranges never closed: not exported
};

Status WritePerfettoJson(StoreReader& store, int64_t run_id, std::ostream& out,
                         PerfettoStats* stats);

// Writes DIR/<table>.csv for every table of docs/store.md (creating DIR);
// `files` receives the paths written.
Status WriteCsvTables(StoreReader& store, int64_t run_id, const std::string& dir,
                      std::vector<std::string>* files);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_EXPORT_H_
