#include "collector/summary.h"

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/report.h"
#include "report/report_format.h"
#include "store/db.h"
#include "store/store_reader.h"

namespace rooftrace {

namespace {

// A run without kernels: the program ran but nothing reached rooftrace.
// Said plainly with the usual causes, instead of an empty report.
void PrintNoGpuWork(int64_t run_id, int64_t dropped, std::ostream& out) {
  out << "rooftrace profile: no GPU work was seen (run " << run_id
      << " has no kernels): the program ran, but no CUDA kernel reached "
         "rooftrace.";
  if (dropped > 0) {
    out << " " << dropped << " records were dropped by the producer.";
  }
  out << " Likely causes:\n"
         "  - no NVIDIA GPU or driver on this machine (check `nvidia-smi`);\n"
         "  - CUPTI was not found (libcupti.so: add CUDA's extras/CUPTI/lib64 "
         "to LD_LIBRARY_PATH);\n"
         "  - the program does not use CUDA, or exited before its GPU "
         "work.\n";
}

// Records the producers dropped: by default a record that finds the
// buffer full is dropped and counted (a burst can lose most of itself), so
// the summary says so with the flag that keeps them.
void PrintDropped(int64_t dropped, std::ostream& out) {
  if (dropped <= 0) return;
  out << "rooftrace profile: " << dropped
      << " records were dropped: they found the producer's buffer full (by "
         "default records are dropped and counted, so the program is never "
         "slowed); --lossless keeps every record (the recording threads "
         "wait instead), --buffer-mb N gives the buffer more room\n";
}

// What the ops route (--ops torch) brought: operators received and the
// kernels costed from them, or why there may be none.
void PrintOpsRoute(const std::vector<std::pair<std::string, int64_t>>& stats,
                   std::ostream& out) {
  int64_t received = 0, malformed = 0, kernels = 0;
  for (const auto& [name, value] : stats) {
    if (name == "ops_received") received = value;
    if (name == "ops_malformed") malformed = value;
    if (name == "kernels_from_ops") kernels = value;
  }
  if (received == 0) {
    out << "rooftrace profile: --ops torch: no torch operator was received: "
           "the command is not Python, never imported torch, or the route "
           "turned itself off (a line 'rooftrace: ops route off: ...' above "
           "says why)\n";
    return;
  }
  out << "rooftrace profile: ops route: " << received
      << " torch operators received, " << kernels
      << " kernels tied to one (figures: analytic, from its inputs)";
  if (malformed > 0) out << "; " << malformed << " unreadable, skipped";
  out << "\n";
}

}  // namespace

Status PrintRunSummary(const std::string& store_path, int64_t run_id,
                       std::ostream& out, int top_kernels, bool ops_route) {
  StoreReader store;
  RT_RETURN_IF_ERROR(store.Open(store_path, store_path));
  if (ops_route) {
    RT_ASSIGN_OR_RETURN(const auto stats, store.ImportStats(run_id));
    PrintOpsRoute(stats, out);
  }
  RT_ASSIGN_OR_RETURN(const int64_t kernels, store.KernelCount(run_id));
  if (kernels == 0) {
    RT_ASSIGN_OR_RETURN(const auto stats, store.ImportStats(run_id));
    int64_t dropped = 0;
    for (const auto& [name, value] : stats) {
      if (name.rfind("producer_dropped_", 0) == 0) dropped += value;
    }
    PrintNoGpuWork(run_id, dropped, out);
    PrintDropped(dropped, out);
    return OkStatus();
  }
  ReportOptions options;
  options.run_id = run_id;
  options.group_by = GroupBy::kFamily;
  options.top = static_cast<size_t>(std::max(top_kernels, 0));
  options.with_families = false;
  RT_ASSIGN_OR_RETURN(Report report, BuildReport(store, options));
  report.header.title = "rooftrace profile";
  report.header.input = StoreDisplayName(store_path);
  report.header.input_kind = "store";
  MakeReportWriter("table")->Write(report, out);
  PrintDropped(static_cast<int64_t>(report.header.dropped), out);
  return OkStatus();
}

}  // namespace rooftrace
