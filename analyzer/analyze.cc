#include "analyzer/analyze.h"

#include "base/cli.h"
#include "store/db.h"

#include "analyzer/trace_report.h"

namespace rooftrace {

namespace {
constexpr size_t kTraceReportWindowRecords = size_t{1} << 15;
}  // namespace
namespace analyzer {

int ExitCodeFor(const Status& status) {
  // A run that lost its kernels (ReportBuilder: kResourceExhausted) is
  // incomplete: 3, as for every incomplete run. Every other error is 2,
  // even an internal one: for diff, 1 means "regressed" and a CI job must
  // never read a broken input as a regression verdict.
  return status.code() == StatusCode::kResourceExhausted ? kExitIncomplete
                                                         : kExitUsage;
}

StatusOr<AnalyzedInput> OpenAndReport(
    const std::string& path, const std::string& device_profile,
    const ReportOptions& base_options,
    const TraceExtras& extras) {
  AnalyzedInput out;
  // How the input is shown: a store URL without its password.
  const std::string shown = StoreDisplayName(path);
  ReportOptions options = base_options;
  InputOptions input_options;
  RT_ASSIGN_OR_RETURN(const DetectedInput detected, DetectInput(path));
  const InputKind kind = detected.kind;
  if (!extras.captures.empty() && kind == InputKind::kStore) {
    return InvalidArgument(
        shown + " is a run store: --capture maps a trace's replayed graphs "
               "as it is read; import the trace with --capture instead");
  }
  if (extras.model && kind == InputKind::kStore) {
    return InvalidArgument(
        shown + " is a run store: --model fills operators' figures as a "
               "trace is read; import the trace with --model instead");
  }
  input_options.capture_paths = extras.captures;
  input_options.model = extras.model;
  if (!device_profile.empty()) {
    RT_ASSIGN_OR_RETURN(RoofTable roofs, LoadRoofTable(device_profile));
    options.reannotate = std::move(roofs);
    // A trace is annotated by the ingest with the profile file itself.
    if (kind == InputKind::kTrace && options.reannotate->source.rfind("datasheet:", 0) != 0) {
      input_options.device_profile_path = device_profile;
    }
  }
  if (kind == InputKind::kTrace) {
    // Aggregated as it is read: no temporary store. Windows of 32 Ki
    // records, half the collector's: a window's join is what sets the peak
    // memory here (analyzer_bench, 2.5-10 M kernels: 35-36 MiB against
    // 42-47 MiB at 64 Ki, CPU within noise; docs/analyzer.md).
    RT_ASSIGN_OR_RETURN(
        out.report,
        BuildTraceReport(path, input_options.device_profile_path, options,
                         kTraceReportWindowRecords, detected.source,
                         extras));
    out.report.header.input = shown;
    out.report.header.input_kind = "trace";
    return out;
  }
  RT_ASSIGN_OR_RETURN(out.input, AnalyzerInput::Open(path, input_options));
  if ((options.group_by == GroupBy::kOp ||
       options.group_by == GroupBy::kCategory) &&
      !out.input->store().KeepsOperators()) {
    return InvalidArgument(
        shown + " was written before stores kept the operator that launched "
               "each kernel (store schema 7): --by " +
        std::string(GroupByName(options.group_by)) +
        " needs the trace itself (rooftrace analyze TRACE --by " +
        GroupByName(options.group_by) +
        "), or the trace imported again into a new store");
  }
  RT_ASSIGN_OR_RETURN(out.report, BuildReport(out.input->store(), options));
  out.report.header.input = shown;
  out.report.header.input_kind = kind == InputKind::kStore ? "store" : "trace";
  out.report.header.ingest_warning = out.input->ingest_warning();
  out.report.header.input_cut_short = out.input->cut_short();
  return out;
}

}  // namespace analyzer

}  // namespace rooftrace
