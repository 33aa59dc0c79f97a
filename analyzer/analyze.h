// Shared steps of the analyzer's subcommands (analyze, diff, export): open an
// input (store or trace), build its report, map errors to exit codes, write
// output files.
#ifndef ROOFTRACE_ANALYZER_ANALYZE_H_
#define ROOFTRACE_ANALYZER_ANALYZE_H_

#include <memory>
#include <string>
#include <vector>

#include "analyzer/input.h"
#include "analyzer/trace_report.h"
#include "report/report.h"
#include "base/status.h"

namespace rooftrace::analyzer {

// An opened input and its report. `input` is null for a trace, whose
// report is built as it is read (analyzer/trace_report.h).
struct AnalyzedInput {
  std::unique_ptr<AnalyzerInput> input;
  Report report;
};

// Opens `path`, applies --device-profile (empty: none) and builds the report.
// `extras` (--capture, --model) are for a trace; refused for a store.
StatusOr<AnalyzedInput> OpenAndReport(
    const std::string& path, const std::string& device_profile,
    const ReportOptions& options, const TraceExtras& extras = {});

// The exit code of a failed step: kExitIncomplete (3) for a run that lost
// its kernels, else kExitUsage (2), so that 1 keeps meaning "the diff
// found a regression".
int ExitCodeFor(const Status& status);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_ANALYZE_H_
