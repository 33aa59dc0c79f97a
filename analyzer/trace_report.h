// The report of a raw trace (.rft) built without a store: the source reads
// it through the pipeline (sessions, windows, join, annotation) into a
// ReportSink (report/report_sink.h) that feeds every kernel row to a
// ReportBuilder. Nothing is written to disk, and memory is one window of
// the trace plus the grouped output.
//
// The report equals the one built from a store the trace was ingested into
// (tests/analyzer/trace_input_test.cc); kernels are visited in window
// order rather than by start time, which can change only the last bits of
// floating-point sums.
#ifndef ROOFTRACE_ANALYZER_TRACE_REPORT_H_
#define ROOFTRACE_ANALYZER_TRACE_REPORT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/report.h"
#include "sources/source.h"

namespace rooftrace::analyzer {

// What reading a trace takes besides the file: graph-capture traces for
// its replayed graphs (--capture; SourceOptions::capture_paths) and the
// model it ran (--model; SourceOptions::model).
struct TraceExtras {
  std::vector<std::string> captures;
  std::optional<ModelFacts> model;
};

// Reads `path` (a trace in any format a source reads: detected, or
// `source` when given) and builds its report. `device_profile_path` (empty:
// datasheet roofs) annotates it as `collect --ingest` would. A file that
// breaks part-way is reported up to the break, with the reason in
// report.header.ingest_warning.
// `flush_records`: records a session holds before a window is joined
// (0: each session whole; the default is the collector's).
StatusOr<Report> BuildTraceReport(const std::string& path,
                                  const std::string& device_profile_path,
                                  const ReportOptions& options,
                                  size_t flush_records = 1u << 16,
                                  const TraceSource* source = nullptr,
                                  const TraceExtras& extras = {});

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_TRACE_REPORT_H_
