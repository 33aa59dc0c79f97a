// Read-only access to a rooftrace run store (docs/store.md), the one reader
// of its schema: run records, roofs, import statistics, and kernel / copy /
// NVTX rows (pipeline/rows.h, the rows the pipeline wrote) streamed one at a
// time so memory does not grow with the length of a run. Used by analyze,
// diff, export, profile's summary and calibrate's counter validation.
//
// Reads an SQLite file or a PostgreSQL database (a postgresql:// URL)
// through store/db.h, with the same queries and the same rows, in the same
// order, from both.
//
// Owned by one command; not thread-safe (one database connection).
// The trap: row callbacks see views into the database's buffers, valid
// only for the duration of the callback; copy what must outlive it. ForEachKernel
// fills the columns reports and exports read (listed there), not all.
#ifndef ROOFTRACE_STORE_STORE_READER_H_
#define ROOFTRACE_STORE_STORE_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "pipeline/rows.h"

namespace rooftrace {

// The URI to open an SQLite file read-only with (SQLITE_OPEN_URI) without
// writing beside it. SQLite's read-only open of a WAL file creates -shm and
// -wal beside it (and fails with "attempt to write a readonly database" in
// a folder it cannot write), and leaves them there. A file with no -wal
// has no writer (a writer keeps its -wal while it has the file open; a
// finished one removes it), so it is read as immutable: no locks, no side
// files, any folder. One with a -wal (a writer running, or one that died)
// is read through it the usual way.
std::string SqliteReadUri(const std::string& path);

// The highest store schema major version this reader understands.
inline constexpr int kStoreSchemaMajor = 9;

class Db;
class DbStatement;

class StoreReader {
 public:
  StoreReader();
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  // Opens `path` (a file or a postgresql:// URL) read-only and checks it
  // is a rooftrace store of a schema
  // version this reader understands. `display_name` names the input in
  // messages (the .rft file when the store is a temporary ingest). Works
  // in a folder the caller cannot write and leaves no -shm/-wal beside a
  // finished store (SqliteReadUri).
  Status Open(const std::string& path, const std::string& display_name);

  // Every run in run_id order, with its labels (RunRow::labels).
  std::vector<RunRow> runs() const { return runs_; }
  // `run_id` when given, else the most recent run. NotFound names the runs
  // that exist.
  StatusOr<RunRow> ResolveRun(std::optional<int64_t> run_id) const;

  StatusOr<std::vector<RoofRow>> Roofs(int64_t run_id);
  StatusOr<std::vector<std::pair<std::string, int64_t>>> ImportStats(
      int64_t run_id);
  StatusOr<int64_t> KernelCount(int64_t run_id);
  // Name of the first device row of the run (empty when none).
  StatusOr<std::string> DeviceName(int64_t run_id);
  // The SM clock (kHz) the kernels of that same device were measured at
  // (devices.measured_sm_clock_khz, schema 5: Nsight Compute's locked
  // clock); 0 when not measured or the store predates the column.
  StatusOr<int64_t> MeasuredSmClockKhz(int64_t run_id);

  // session_id -> producer pid of the run's sessions.
  StatusOr<std::vector<std::pair<int64_t, int64_t>>> SessionPids(
      int64_t run_id);
  // device_id -> device name of the run.
  StatusOr<std::vector<std::pair<int64_t, std::string>>> Devices(
      int64_t run_id);

  // Streams the run's kernels in start order. A callback error stops the
  // scan and is returned. Filled: kernel_id, session_id, name, demangled,
  // family, shape, token_count, precision, flops, flops_source, dram_bytes,
  // bytes_source, bound, phase, nvtx_path, duration_ns (from start and end
  // when NULL; never negative), start_ns, end_ns, step_id, stream_id,
  // device_id, thread_id, correlation_id, fraction_of_roof,
  // roof_flops_per_s.
  Status ForEachKernel(int64_t run_id,
                       const std::function<Status(const KernelRow&)>& fn);
  // The run's kernels and copies together in start order (each as
  // ForEachKernel and ForEachMemcpy fill them; a kernel first on a tie), so
  // that a consumer of time intervals (report/busy_time.h) sees them in
  // time order. A callback error stops the scan and is returned.
  Status ForEachKernelAndMemcpy(
      int64_t run_id, const std::function<Status(const KernelRow&)>& on_kernel,
      const std::function<Status(const MemcpyRow&)>& on_memcpy);
  // The run's forward steps in id order, all columns.
  Status ForEachStep(int64_t run_id,
                     const std::function<Status(const StepRow&)>& fn);

  // Reads of many runs at once, for a command that reads the same rows of
  // each (history): the rows of the runs `run_ids` (an id given twice
  // counts once; one that is no run gives nothing), run by run in run_id
  // order, each run's rows in the order and with the columns of the
  // one-run read above, run_id set. A few queries however many runs, not
  // one per run: on a PostgreSQL store every query costs round trips to
  // the server. A callback error stops the scan and is returned.
  // `columns` kGrouping leaves out the columns a report grouped by family,
  // shape, phase or NVTX range never reads (kernel_id, demangled,
  // stream_id, thread_id, roof_flops_per_s, op: zero, empty or unset in
  // the rows), which the database then neither reads nor sends.
  enum class KernelColumnSet { kAll, kGrouping };
  Status ForEachKernelOfRuns(const std::vector<int64_t>& run_ids,
                             const std::function<Status(const KernelRow&)>& fn,
                             KernelColumnSet columns = KernelColumnSet::kAll);
  Status ForEachStepOfRuns(const std::vector<int64_t>& run_ids,
                           const std::function<Status(const StepRow&)>& fn);
  // The kernel_aggregates rows of the runs (schema 8; none for a run of
  // an older schema, RunRow::store_kernels empty), run by run in id order,
  // each run's groups in the order the writer met them.
  // `columns` kGrouping reads only what a series of mean time, time share
  // and % of roof per group needs (the grouping texts but demangled,
  // precision, bound and sources; launches, time and the fraction's sums):
  // the rest are zero or empty in the rows.
  Status ForEachAggregateOfRuns(
      const std::vector<int64_t>& run_ids,
      const std::function<Status(const KernelAggregateRow&)>& fn,
      KernelColumnSet columns = KernelColumnSet::kAll);
  // Filled: session_id, name, domain, path, kind, start_ns, end_ns,
  // thread_id, depth.
  Status ForEachNvtx(int64_t run_id,
                     const std::function<Status(const NvtxRow&)>& fn);
  // Filled: kind, bytes, start_ns, end_ns, stream_id, device_id,
  // correlation_id, phase.
  Status ForEachMemcpy(int64_t run_id,
                       const std::function<Status(const MemcpyRow&)>& fn);
  // The run's raw per-kernel metrics, all columns (none in a schema 1 or
  // 2 store).
  Status ForEachKernelMetric(
      int64_t run_id, const std::function<Status(const KernelMetricRow&)>& fn);

  // Streams every column of `table` for the run: the column names first
  // (once), then each row's values as text (NULL as empty, `is_null` set).
  // `table` must be one of docs/store.md's tables.
  Status ForEachTableRow(
      const std::string& table, int64_t run_id,
      const std::function<void(const std::vector<std::string>&)>& header,
      const std::function<void(const std::vector<std::string_view>&,
                               const std::vector<bool>& is_null)>& row);

  const std::string& display_name() const { return display_name_; }

  // Of the runs never finished (`complete` NULL), those a writer is
  // writing now, holding its lease (store/run_lease.h); the others'
  // writers ended without finishing them (a crash). Asked at the call; a
  // run that was unfinished when the store was opened and has finished
  // since is among them (it was being written when runs() was read).
  std::set<int64_t> RunsBeingWritten();
  // Whether the store keeps each kernel's framework operator (schema 7
  // on): `analyze --by op` and `--by category` need it.
  bool KeepsOperators() const { return keeps_operators_; }
  // Round trips to the database so far (Db::RoundTrips: PostgreSQL's; 0 on
  // SQLite).
  int64_t round_trips() const;

 private:
  // A streamed query (Db::Fetch::kStream); an error says the store does
  // not follow docs/store.md.
  StatusOr<std::unique_ptr<DbStatement>> Prepare(const std::string& sql);
  bool HasColumn(const char* table, const char* column);
  // The kernels' operator column: "op", or "NULL" before schema 7.
  const char* OpColumn() const { return keeps_operators_ ? "op" : "NULL"; }
  Status StepError(const char* what, const Status& cause);
  template <typename Fn>
  Status EachRow(DbStatement* stmt, const char* what, Fn&& fn);
  // `kernel_ids`: the query ends with `kernel_id BETWEEN ? AND ?`, bound
  // to the batch's runs' range (KernelIdsOfRuns).
  template <typename Fn>
  Status EachRowOfRuns(const char* query, const std::vector<int64_t>& runs,
                       const char* what, Fn&& fn, bool kernel_ids = false);

  // Where a run's kernel rows are (run_kernel_ids, schema 9): kernel_rows
  // has no index on run_id, so a run's read asks for its id range, and
  // needs no sort when they were written in start order.
  struct KernelIds {
    int64_t first = 0, last = -1;
    bool in_start_order = false;
  };
  // The WHERE of a read of one run's kernels (one `?`: the run) and its
  // ORDER BY (start, NULL first, then id).
  std::string KernelsOfRun(int64_t run_id) const;
  std::string KernelOrder(int64_t run_id) const;
  // One run's kernel rows in start order (NULL first, then id), stepped by
  // Next(); defined in store_reader.cc.
  class KernelStream;
  StatusOr<std::unique_ptr<KernelStream>> OpenKernels(int64_t run_id);
  // The id range of the runs `runs` together (all ids when one has none).
  std::pair<int64_t, int64_t> KernelIdsOfRuns(const int64_t* runs,
                                              size_t n) const;
  std::map<int64_t, KernelIds> kernel_ids_;  // read by Open
  bool has_kernel_ids_ = false;  // the store has run_kernel_ids

  std::unique_ptr<Db> db_;
  std::string display_name_;
  std::string path_;  // as opened (a file or URL), for the lease file
  bool keeps_operators_ = false;  // kernels.op (schema 7), read by Open
  std::vector<RunRow> runs_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_STORE_STORE_READER_H_
