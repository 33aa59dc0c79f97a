#include "collector/summary.h"

#include <ostream>

#include "report/report.h"
#include "report/report_format.h"
#include "store/store_reader.h"

namespace rooftrace {

Status PrintRunSummary(const std::string& store_path, int64_t run_id,
                       std::ostream& out, int top_kernels) {
  StoreReader store;
  RT_RETURN_IF_ERROR(store.Open(store_path, store_path));
  ReportOptions options;
  options.run_id = run_id;
  options.group_by = GroupBy::kFamily;
  options.top = static_cast<size_t>(std::max(top_kernels, 0));
  options.with_families = false;
  RT_ASSIGN_OR_RETURN(Report report, BuildReport(store, options));
  report.header.title = "rooftrace profile";
  report.header.input = store_path;
  report.header.input_kind = "store";
  MakeReportWriter("table")->Write(report, out);
  return OkStatus();
}

}  // namespace rooftrace
