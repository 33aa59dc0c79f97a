// Nsight Compute CSV (`ncu --csv`, long or `--page raw` layout;
// sources/ncu/ncu_csv.h) as a source: every profiled kernel becomes a
// kernel with measured DRAM bytes and FLOPs (counters), its duration and
// launch geometry, and its metrics kept raw (kernel_metrics). ncu
// serializes the kernels it profiles and records no timeline: start times
// are synthesized back to back in launch (ID) order, one session per
// process. Detected by content: ncu's header line ("ID","Process ID",...
// "Kernel Name"), after any log lines.
//
// Also the reader of `import --counters ncu.csv` (ReadNcuCounterFile),
// which the registry calls once for a timeline source.
//
// Stateless; thread-safe.
#ifndef ROOFTRACE_SOURCES_NCU_NCU_SOURCE_H_
#define ROOFTRACE_SOURCES_NCU_NCU_SOURCE_H_

#include <string>

#include "sources/counter_match.h"
#include "sources/ncu/ncu_csv.h"
#include "sources/source.h"

namespace rooftrace {

class NcuSource : public TraceSource {
 public:
  std::string_view format() const override { return "ncu"; }
  std::string_view description() const override {
    return "Nsight Compute CSV (ncu --csv)";
  }
  bool Detect(const std::string& path, std::string_view head) const override;
  std::string Origin(const std::string& path) const override {
    return "import:" + path;
  }
  Status Read(const std::string& path, const SourceOptions& options,
              RunRecorder* recorder, SourceResult* result) const override;
};

namespace ncu {

// The parsed file. Errors name the file, what is wrong and how to write
// one: not an ncu CSV, an empty or truncated file, a header with no kernel.
// A gzip file is read within `budget` (sources/file_reader.h).
StatusOr<Report> ReadNcuFile(const std::string& path,
                             const GzipBudget& budget = GzipBudget());

// Reads parsed text as the source does (for the fuzzer and tests): the
// sessions go to `recorder`.
Status ReadNcuReport(const std::string& path, const Report& report,
                     const SourceOptions& options, RunRecorder* recorder,
                     SourceResult* result);

// The per-kernel counters of an ncu CSV for another tool's timeline: one
// sample per profiled kernel with its name and occurrence (the n-th
// profiled launch of that name), DRAM bytes, FLOPs and its raw metrics.
// Kernels without DRAM bytes are left out (the match would store zero
// bytes as measured). ncu's "ID" is not a launch index of the timeline: it
// counts only the launches ncu profiled (--kernel-name, --launch-skip).
StatusOr<CounterFile> ReadNcuCounterFile(
    const std::string& path, const GzipBudget& budget = GzipBudget());

}  // namespace ncu
}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_NCU_NCU_SOURCE_H_
