// Output formats of `rooftrace analyze` behind one interface: a table for
// people, CSV for spreadsheets and pandas, JSON for scripts, and a
// self-contained HTML report (header, roofline SVG, tables; no network).
//
// Writers are stateless; thread-safe.
#ifndef ROOFTRACE_REPORT_REPORT_FORMAT_H_
#define ROOFTRACE_REPORT_REPORT_FORMAT_H_

#include <memory>
#include <ostream>
#include <string_view>

#include "report/report.h"

namespace rooftrace {

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual void Write(const Report& report, std::ostream& out) const = 0;
};

// "table", "csv", "json", "html"; nullptr for anything else.
std::unique_ptr<ReportWriter> MakeReportWriter(std::string_view format);

// The header block of the table format (also used by diff): input, run,
// device, roofs and their source, FLOP/byte sources, import statistics.
void WriteHeaderText(const Report& report, std::ostream& out);

// "87.3% of GPU time has FLOPs or bytes": the share of the report's GPU
// time that is placed on the roofline; "no GPU time" for an empty report.
std::string FiguresShare(const Report& report);

// A run's labels as "commit=abc123 branch=main" in the order given; ""
// when it has none. A value with a space is quoted ("note='two words'").
std::string LabelsLine(const RunLabels& labels);

// "run 3 is INCOMPLETE: <why>; ..." when the run is not known complete
// (complete = 0, or NULL: its writer never finished); "" when complete.
std::string IncompleteRunWarning(const RunRow& run);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_REPORT_FORMAT_H_
