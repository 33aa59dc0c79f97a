#include "analyzer/trace_report.h"

#include <utility>

#include "report/report_sink.h"
#include "sources/registry.h"

namespace rooftrace::analyzer {

StatusOr<Report> BuildTraceReport(const std::string& path,
                                  const std::string& device_profile_path,
                                  const ReportOptions& options,
                                  size_t flush_records,
                                  const TraceSource* source,
                                  const TraceExtras& extras) {
  if (options.run_id && *options.run_id != 1) {
    return NotFound(path + ": run " + std::to_string(*options.run_id) +
                    " not found; a trace holds one run: 1");
  }
  if (source == nullptr) {
    RT_ASSIGN_OR_RETURN(source, DetectSource(path));
  }
  ReportBuilder builder(options);
  ReportSink sink(&builder);
  SourceOptions read;
  read.device_profile_path = device_profile_path;
  read.flush_records = flush_records;
  read.capture_paths = extras.captures;
  read.model = extras.model;
  RT_ASSIGN_OR_RETURN(const SourceResult result,
                      ReadSourceInto(*source, path, read, &sink));
  sink.FillHeader();
  StatusOr<Report> report = builder.Finish(path);
  if (!report.ok() && result.cut_short) {
    // Say the cut, not "the program launched no GPU work".
    return InvalidArgument(result.warning +
                           "; no kernel was read before the break: nothing "
                           "to analyze (copy or write the trace again)");
  }
  RT_RETURN_IF_ERROR(report.status());
  report->header.ingest_warning = result.warning;
  report->header.input_cut_short = result.cut_short;
  report->header.rank = result.rank;
  return std::move(*report);
}

}  // namespace rooftrace::analyzer
