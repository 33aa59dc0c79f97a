#include "analyzer/trace_report.h"

#include <utility>

#include "report/report_sink.h"
#include "sources/registry.h"

namespace rooftrace::analyzer {

StatusOr<Report> BuildTraceReport(const std::string& path,
                                  const std::string& device_profile_path,
                                  const ReportOptions& options,
                                  size_t flush_records,
                                  const TraceSource* source) {
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
  RT_ASSIGN_OR_RETURN(const SourceResult result,
                      ReadSourceInto(*source, path, read, &sink));
  sink.FillHeader(options);
  RT_ASSIGN_OR_RETURN(Report report, builder.Finish(path));
  report.header.ingest_warning = result.warning;
  return report;
}

}  // namespace rooftrace::analyzer
