// Read-only access to a rooftrace run store (docs/store.md): run records,
// roofs, import statistics, and kernel / copy / NVTX rows streamed one at a
// time so memory does not grow with the length of a run.
//
// Owned by one analyzer command; not thread-safe (one sqlite3 connection).
// The trap: row callbacks see views into SQLite's buffers, valid only for
// the duration of the callback; copy what must outlive it.
#ifndef ROOFTRACE_ANALYZER_STORE_READER_H_
#define ROOFTRACE_ANALYZER_STORE_READER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace rooftrace::analyzer {

// The highest store schema major version this reader understands.
inline constexpr int kStoreSchemaMajor = 2;

struct RunInfo {
  int64_t run_id = 0;
  std::string command;
  std::string host;
  std::string mode;
  std::string device_name;
  std::string roof_source;
  std::string flops_sources;
  std::string producer_version;
  std::string origin;
  std::optional<int64_t> complete;
  std::optional<int64_t> started_unix_ns;
};

struct RoofRow {
  int64_t device_id = 0;
  std::string precision;  // store key: 'bf16_tc', 'fp32', ...
  double peak_flops_per_s = 0;
  double dram_bytes_per_s = 0;
  double ridge_flops_per_byte = 0;
  std::string source;  // 'calibrated' | 'datasheet'
};

// One kernel row as the analyzer needs it. Views are valid only inside the
// ForEachKernel callback. Unknown values (NULL) are std::nullopt / empty.
struct KernelView {
  int64_t kernel_id = 0;
  std::string_view name;       // mangled
  std::string_view demangled;  // may be empty
  std::string_view family;     // may be empty (then derive from name)
  std::string_view shape;
  std::string_view precision;
  std::string_view flops_source;
  std::string_view bytes_source;
  std::string_view bound;
  std::string_view phase;
  std::string_view nvtx_path;
  int64_t duration_ns = 0;
  std::optional<int64_t> start_ns;
  std::optional<int64_t> step_id;
  std::optional<int64_t> stream_id;
  std::optional<int64_t> device_id;
  std::optional<int64_t> thread_id;
  std::optional<int64_t> correlation_id;
  std::optional<double> flops;
  std::optional<double> dram_bytes;
  std::optional<double> fraction_of_roof;
  std::optional<double> roof_flops_per_s;
};

struct NvtxView {
  std::string_view name;
  std::string_view domain;
  std::string_view path;
  std::string_view kind;
  int64_t session_id = 0;
  std::optional<int64_t> start_ns;
  std::optional<int64_t> end_ns;
  std::optional<int64_t> thread_id;
  std::optional<int64_t> depth;
};

struct MemcpyView {
  std::string_view kind;
  int64_t bytes = 0;
  std::optional<int64_t> start_ns;
  std::optional<int64_t> end_ns;
  std::optional<int64_t> stream_id;
  std::optional<int64_t> device_id;
  std::optional<int64_t> correlation_id;
  std::string_view phase;
};

class StoreReader {
 public:
  StoreReader() = default;
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  // Opens `path` read-only and checks it is a rooftrace store of a schema
  // version this reader understands. `display_name` names the input in
  // messages (the .rft file when the store is a temporary ingest).
  Status Open(const std::string& path, const std::string& display_name);

  std::vector<RunInfo> runs() const { return runs_; }
  // `run_id` when given, else the most recent run. NotFound names the runs
  // that exist.
  StatusOr<RunInfo> ResolveRun(std::optional<int64_t> run_id) const;

  StatusOr<std::vector<RoofRow>> Roofs(int64_t run_id);
  StatusOr<std::vector<std::pair<std::string, int64_t>>> ImportStats(
      int64_t run_id);
  StatusOr<int64_t> KernelCount(int64_t run_id);
  // Name of the first device row of the run (empty when none).
  StatusOr<std::string> DeviceName(int64_t run_id);

  // session_id -> producer pid of the run's sessions.
  StatusOr<std::vector<std::pair<int64_t, int64_t>>> SessionPids(
      int64_t run_id);
  // device_id -> device name of the run.
  StatusOr<std::vector<std::pair<int64_t, std::string>>> Devices(
      int64_t run_id);

  // Streams the run's kernels in start order. A callback error stops the
  // scan and is returned.
  Status ForEachKernel(int64_t run_id,
                       const std::function<Status(const KernelView&)>& fn);
  Status ForEachNvtx(int64_t run_id,
                     const std::function<Status(const NvtxView&)>& fn);
  Status ForEachMemcpy(int64_t run_id,
                       const std::function<Status(const MemcpyView&)>& fn);

  // Streams every column of `table` for the run: the column names first
  // (once), then each row's values as text (NULL as empty, `is_null` set).
  // `table` must be one of docs/store.md's tables.
  Status ForEachTableRow(
      const std::string& table, int64_t run_id,
      const std::function<void(const std::vector<std::string>&)>& header,
      const std::function<void(const std::vector<std::string_view>&,
                               const std::vector<bool>& is_null)>& row);

  const std::string& display_name() const { return display_name_; }

 private:
  StatusOr<sqlite3_stmt*> Prepare(const std::string& sql);
  Status StepError(const char* what);

  sqlite3* db_ = nullptr;
  std::string display_name_;
  std::vector<RunInfo> runs_;
};

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_STORE_READER_H_
