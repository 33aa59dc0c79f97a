// Parses the CSV Nsight Compute writes (`ncu --csv ...`, or
// `ncu --import REPORT.ncu-rep --csv ...`) into profiled kernels and their
// metrics as written, in either of its layouts:
//   - long (`--metrics ...`, `--page details`): one row per metric, with
//     "Section Name", "Metric Name", "Metric Unit", "Metric Value"; the
//     rows of one kernel share its "ID". Rows without a metric name (the
//     rules' advice) are skipped.
//   - wide (`--page raw`): one row per kernel, one column per metric, and a
//     second row holding the units.
// Whatever precedes the header (ncu's `==PROF==` lines, the application's
// output) is skipped. Values stay text here; ParseNumber() and ToBase()
// read ncu's thousands separators ("21,760"), "n/a" and auto-scaled units
// ("Mbyte", "usecond", "Ghz").
//
// Pure functions; thread-safe. Errors carry no file name: the caller
// prefixes it.
#ifndef ROOFTRACE_SOURCES_NCU_NCU_CSV_H_
#define ROOFTRACE_SOURCES_NCU_NCU_CSV_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rooftrace::ncu {

enum class Layout { kLong, kWide };

// One value of one kernel as ncu wrote it.
struct Metric {
  std::string section;  // "Command line profiler metrics"; empty when wide
  std::string name;     // "dram__bytes_read.sum", "Duration"
  std::string unit;     // "Mbyte", "" when none
  std::string value;    // "2.33", "21,760", "n/a", "(16, 8, 1)"
};

// One profiled kernel launch.
struct Kernel {
  int64_t id = -1;  // ncu's "ID": the n-th profiled launch, from 0
  int64_t pid = 0;
  std::string process, host, name;
  std::string context, stream, block_size, grid_size, device, cc;
  std::vector<Metric> metrics;  // file order
  size_t line = 0;              // the file line of its first row
};

struct Report {
  Layout layout = Layout::kLong;
  std::vector<Kernel> kernels;  // order of first appearance
  size_t header_line = 0;       // 1-based line of the header
  uint64_t metric_rows = 0;     // long layout: rows with a metric
};

// Whether `head` (a file's first bytes) holds an ncu CSV header: a line
// starting "ID","Process ID", naming "Kernel Name", after any log lines.
bool LooksLikeNcuCsv(std::string_view head);

// The whole file's text. InvalidArgument when there is no ncu header, or a
// row is cut short (a truncated file), saying which line.
StatusOr<Report> ParseNcuCsv(std::string_view text);

// "21,760" -> 21760, "1,235,108,248.43", "-221", "1.5e3"; nullopt for
// "n/a", "", "(16, 8, 1)" and other text.
std::optional<double> ParseNumber(std::string_view text);

// "(16, 8, 1)" -> {16, 8, 1}; a plain number N -> {N, 1, 1}; nullopt
// otherwise.
std::optional<std::array<uint32_t, 3>> ParseDim3(std::string_view text);

// What a value measures, for ToBase().
enum class Dimension { kBytes, kNanoseconds, kHertz, kCount };

// `value` in `unit` converted to bytes, nanoseconds, hertz or a plain count
// (instructions, cycles): SI prefixes (K, M, G, T, and n, u, m for time),
// nsecond / ns, cycle/second, Ghz. nullopt when the unit is not one of
// that dimension.
std::optional<double> ToBase(double value, std::string_view unit,
                             Dimension dimension);

}  // namespace rooftrace::ncu

#endif  // ROOFTRACE_SOURCES_NCU_NCU_CSV_H_
