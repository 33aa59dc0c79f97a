#include "store/store_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "store/db.h"
#include "store/run_lease.h"
#include "store/schema_version.h"

namespace rooftrace {
namespace {

using Stmt = std::unique_ptr<DbStatement>;

std::optional<int64_t> Int(DbStatement* s, int col) {
  if (s->ColumnType(col) == DbType::kNull) return std::nullopt;
  return s->Int(col);
}

std::optional<double> Real(DbStatement* s, int col) {
  if (s->ColumnType(col) == DbType::kNull) return std::nullopt;
  return s->Real(col);
}

// A count (FLOPs, bytes) written as an integer, or as a real by a foreign
// writer (rounded).
std::optional<int64_t> Count(DbStatement* s, int col) {
  switch (s->ColumnType(col)) {
    case DbType::kNull:
      return std::nullopt;
    case DbType::kReal:
      return std::llround(s->Real(col));
    default:
      return s->Int(col);
  }
}

// docs/store.md's tables, each with the order its rows are exported in:
// the order SQLite returns them for `WHERE run_id = ?` (through the index
// it picks, else in rowid order), said explicitly so that a PostgreSQL
// store exports the same rows in the same order.
struct StoreTable {
  const char* name;
  const char* order;
};
constexpr StoreTable kTables[] = {
    {"runs", "run_id"},
    {"sessions", "session_id"},
    {"devices", "rowid"},
    {"roofs", "rowid"},
    {"import_stats", "name"},
    {"kernels", "start_ns NULLS FIRST, kernel_id"},
    {"memcpys", "memcpy_id"},
    {"gemm_calls", "gemm_call_id"},
    {"nvtx_ranges", "nvtx_row_id"},
    {"steps", "step_id"},
    {"kernel_metrics", "session_id, correlation_id, rowid"},
    {"run_labels", "key"},
    {"kernel_aggregates", "rowid"},
};

const StoreTable* FindStoreTable(const std::string& t) {
  for (const StoreTable& k : kTables) {
    if (t == k.name) return &k;
  }
  return nullptr;
}

}  // namespace

StoreReader::StoreReader() = default;
StoreReader::~StoreReader() = default;

StatusOr<std::unique_ptr<DbStatement>> StoreReader::Prepare(
    const std::string& sql) {
  StatusOr<std::unique_ptr<DbStatement>> stmt =
      db_->Prepare(sql, Db::Fetch::kStream);
  if (!stmt.ok()) {
    return Corrupt(display_name_ +
                   ": the store does not follow docs/store.md (" +
                   stmt.status().message() +
                   "); was it written by a different rooftrace version?");
  }
  return stmt;
}

int64_t StoreReader::round_trips() const {
  return db_ ? db_->RoundTrips() : 0;
}

bool StoreReader::HasColumn(const char* table, const char* column) {
  return db_->HasColumn(table, column);
}

Status StoreReader::StepError(const char* what, const Status& cause) {
  if (db_->backend() == DbBackend::kPostgres) {
    return Unavailable(display_name_ + ": reading " + what +
                       " failed: " + cause.message());
  }
  return Corrupt(display_name_ + ": reading " + what + " failed: " +
                 cause.message() +
                 " (the file may be damaged; check it with `sqlite3 FILE "
                 "'pragma integrity_check'`)");
}

// Steps `stmt` through its rows, calling `fn` on each; `what` names the
// table in errors.
template <typename Fn>
Status StoreReader::EachRow(DbStatement* stmt, const char* what, Fn&& fn) {
  while (true) {
    StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return StepError(what, row.status());
    if (!*row) return OkStatus();
    RT_RETURN_IF_ERROR(fn(stmt));
  }
}

std::string SqliteReadUri(const std::string& path) {
  std::string uri = "file:";
  for (const char ch : path) {
    if (ch == '?' || ch == '#' || ch == '%') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(ch));
      uri += hex;
    } else {
      uri += ch;
    }
  }
  struct stat st {};
  const bool has_wal = stat((path + "-wal").c_str(), &st) == 0;
  return uri + (has_wal ? "?mode=ro" : "?immutable=1");
}

Status StoreReader::Open(const std::string& path,
                         const std::string& display_name) {
  display_name_ = display_name;
  path_ = path;
  RT_ASSIGN_OR_RETURN(db_, OpenDbForRead(path, display_name));
  if (db_->backend() == DbBackend::kPostgres) {
    display_name_ = db_->name();  // without the password
    // Asked first: a failed query would end the reader's transaction.
    if (!db_->HasColumn("schema_info", "value")) {
      return InvalidArgument(
          display_name_ +
          ": a PostgreSQL database but not a rooftrace store (no "
          "schema_info table); pass a store written by `rooftrace profile "
          "-o` or `rooftrace collect --store`");
    }
  }
  // The schema version decides whether we can read the file at all.
  StatusOr<std::unique_ptr<DbStatement>> version = db_->Prepare(
      "SELECT value FROM schema_info WHERE key = 'schema_version'");
  if (!version.ok()) {
    const std::string err(version.status().message());
    if (err.find("no such table") != std::string::npos) {
      return InvalidArgument(
          display_name_ +
          ": an SQLite file but not a rooftrace store (no schema_info table); "
          "pass a store written by `rooftrace profile -o` or `rooftrace "
          "collect --store`, or a .rft trace");
    }
    return Corrupt(display_name_ + ": cannot read the store: " + err);
  }
  StatusOr<bool> rc = (*version)->Step();
  if (!rc.ok()) return StepError("schema_info", rc.status());
  if (*rc) {
    RT_ASSIGN_OR_RETURN(const int major,
                        ParseSchemaVersion((*version)->Text(0), display_name_));
    if (major > kStoreSchemaMajor) {
      return FailedPrecondition(
          display_name_ + ": store schema version " + std::to_string(major) +
          " is newer than this rooftrace understands (" +
          std::to_string(kStoreSchemaMajor) +
          "); use a newer rooftrace to analyze it");
    }
  }

  keeps_operators_ = HasColumn("kernels", "op");
  // Schema 3 says where a run came from; older stores have no such columns.
  const bool provenance = HasColumn("runs", "source_sha256");
  // Schema 4 says why a run is incomplete.
  const bool reason = HasColumn("runs", "incomplete_reason");
  // Schema 8 says which kernel rows a run kept.
  const bool kept = HasColumn("runs", "store_kernels");
  RT_ASSIGN_OR_RETURN(
      Stmt runs,
      Prepare(std::string("SELECT run_id, command, host, mode, device_name, "
                          "roof_source, flops_sources, producer_version, "
                          "origin, complete, started_unix_ns, "
                          "ended_unix_ns, ") +
              (provenance ? "source_format, source_file, source_sha256"
                          : "NULL, NULL, NULL") +
              (reason ? ", incomplete_reason" : ", NULL") +
              (kept ? ", store_kernels" : ", NULL") +
              " FROM runs ORDER BY run_id"));
  RT_RETURN_IF_ERROR(EachRow(runs.get(), "runs", [&](DbStatement* s) {
    RunRow r;
    r.run_id = s->Int(0);
    r.command = s->Text(1);
    r.host = s->Text(2);
    r.mode = s->Text(3);
    r.device_name = s->Text(4);
    r.roof_source = s->Text(5);
    r.flops_sources = s->Text(6);
    r.producer_version = s->Text(7);
    r.origin = s->Text(8);
    r.complete = Int(s, 9);
    r.started_unix_ns = Int(s, 10);
    r.ended_unix_ns = Int(s, 11);
    r.source_format = s->Text(12);
    r.source_file = s->Text(13);
    r.source_sha256 = s->Text(14);
    r.incomplete_reason = s->Text(15);
    r.store_kernels = s->Text(16);
    runs_.push_back(std::move(r));
    return OkStatus();
  }));
  runs.reset();
  // Schema 9 says where each run's kernel rows are.
  has_kernel_ids_ = HasColumn("run_kernel_ids", "in_start_order");
  if (has_kernel_ids_) {
    RT_ASSIGN_OR_RETURN(
        Stmt ids, Prepare("SELECT run_id, first_kernel_id, last_kernel_id, "
                          "in_start_order FROM run_kernel_ids"));
    RT_RETURN_IF_ERROR(EachRow(ids.get(), "run_kernel_ids",
                               [&](DbStatement* s) {
                                 KernelIds& k = kernel_ids_[s->Int(0)];
                                 k.first = s->Int(1);
                                 k.last = s->Int(2);
                                 k.in_start_order = s->Int(3) == 1;
                                 return OkStatus();
                               }));
  }
  // Schema 6 keeps the user's labels; older stores have none.
  if (!HasColumn("run_labels", "key")) return OkStatus();
  RT_ASSIGN_OR_RETURN(Stmt labels,
                      Prepare("SELECT run_id, key, value FROM run_labels "
                              "ORDER BY run_id, rowid"));
  // runs_ is in run_id order, as are the labels: one merge pass.
  size_t i = 0;
  return EachRow(labels.get(), "run_labels", [&](DbStatement* s) {
    const int64_t run_id = s->Int(0);
    while (i < runs_.size() && runs_[i].run_id < run_id) ++i;
    if (i == runs_.size()) return OkStatus();
    if (runs_[i].run_id != run_id) return OkStatus();  // a label of no run
    runs_[i].labels.emplace_back(std::string(s->Text(1)),
                                 std::string(s->Text(2)));
    return OkStatus();
  });
}

StatusOr<RunRow> StoreReader::ResolveRun(
    std::optional<int64_t> run_id) const {
  if (runs_.empty()) {
    return InvalidArgument(display_name_ +
                           ": the store holds no runs; profile or ingest "
                           "something into it first");
  }
  if (!run_id) return runs_.back();
  std::string ids;
  for (const RunRow& r : runs_) {
    if (r.run_id == *run_id) return r;
    if (!ids.empty()) ids += ", ";
    ids += std::to_string(r.run_id);
  }
  return NotFound(display_name_ + ": run " + std::to_string(*run_id) +
                  " not found; runs in this store: " + ids);
}

StatusOr<std::vector<RoofRow>> StoreReader::Roofs(int64_t run_id) {
  RT_ASSIGN_OR_RETURN(
      Stmt stmt,
      Prepare("SELECT device_id, precision, peak_flops_per_s, "
              "dram_bytes_per_s, ridge_flops_per_byte, source FROM roofs "
              "WHERE run_id = ? ORDER BY device_id, peak_flops_per_s "
              "NULLS FIRST, rowid"));
  stmt->BindInt(1, run_id);
  std::vector<RoofRow> out;
  RT_RETURN_IF_ERROR(EachRow(stmt.get(), "roofs", [&](DbStatement* s) {
    RoofRow r;
    r.device_id = s->Int(0);
    r.precision = s->Text(1);
    r.peak_flops_per_s = Real(s, 2).value_or(0);
    r.dram_bytes_per_s = Real(s, 3).value_or(0);
    r.ridge_flops_per_byte = Real(s, 4).value_or(0);
    r.source = s->Text(5);
    out.push_back(std::move(r));
    return OkStatus();
  }));
  return out;
}

StatusOr<std::vector<std::pair<std::string, int64_t>>> StoreReader::ImportStats(
    int64_t run_id) {
  RT_ASSIGN_OR_RETURN(Stmt stmt,
                      Prepare("SELECT name, value FROM import_stats WHERE "
                              "run_id = ? ORDER BY name"));
  stmt->BindInt(1, run_id);
  std::vector<std::pair<std::string, int64_t>> out;
  RT_RETURN_IF_ERROR(EachRow(stmt.get(), "import_stats", [&](DbStatement* s) {
    out.emplace_back(std::string(s->Text(0)), s->Int(1));
    return OkStatus();
  }));
  return out;
}

StatusOr<int64_t> StoreReader::KernelCount(int64_t run_id) {
  RT_ASSIGN_OR_RETURN(Stmt stmt,
                      Prepare("SELECT count(*) FROM kernels WHERE " +
                              KernelsOfRun(run_id)));
  stmt->BindInt(1, run_id);
  StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return StepError("kernels", row.status());
  if (!*row) return StepError("kernels", Corrupt("no count"));
  return stmt->Int(0);
}

StatusOr<std::string> StoreReader::DeviceName(int64_t run_id) {
  RT_ASSIGN_OR_RETURN(Stmt stmt,
                      Prepare("SELECT name FROM devices WHERE run_id = ? "
                              "ORDER BY session_id, device_id, rowid "
                              "LIMIT 1"));
  stmt->BindInt(1, run_id);
  StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return StepError("devices", row.status());
  if (*row) return std::string(stmt->Text(0));
  return std::string();
}

StatusOr<int64_t> StoreReader::MeasuredSmClockKhz(int64_t run_id) {
  if (!HasColumn("devices", "measured_sm_clock_khz")) return 0;
  RT_ASSIGN_OR_RETURN(
      Stmt stmt,
      Prepare("SELECT measured_sm_clock_khz FROM devices WHERE run_id = ? "
              "ORDER BY session_id, device_id, rowid LIMIT 1"));
  stmt->BindInt(1, run_id);
  StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return StepError("devices", row.status());
  if (*row) return Int(stmt.get(), 0).value_or(0);
  return 0;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> StoreReader::SessionPids(
    int64_t run_id) {
  RT_ASSIGN_OR_RETURN(Stmt stmt,
                      Prepare("SELECT session_id, pid FROM sessions WHERE "
                              "run_id = ? ORDER BY session_id"));
  stmt->BindInt(1, run_id);
  std::vector<std::pair<int64_t, int64_t>> out;
  RT_RETURN_IF_ERROR(EachRow(stmt.get(), "sessions", [&](DbStatement* s) {
    out.emplace_back(s->Int(0), Int(s, 1).value_or(0));
    return OkStatus();
  }));
  return out;
}

StatusOr<std::vector<std::pair<int64_t, std::string>>> StoreReader::Devices(
    int64_t run_id) {
  RT_ASSIGN_OR_RETURN(Stmt stmt,
                      Prepare("SELECT DISTINCT device_id, name FROM devices "
                              "WHERE run_id = ? ORDER BY device_id, name "
                              "NULLS FIRST"));
  stmt->BindInt(1, run_id);
  std::vector<std::pair<int64_t, std::string>> out;
  RT_RETURN_IF_ERROR(EachRow(stmt.get(), "devices", [&](DbStatement* s) {
    const int64_t id = s->Int(0);
    if (!out.empty() && out.back().first == id) return OkStatus();
    out.emplace_back(id, std::string(s->Text(1)));
    return OkStatus();
  }));
  return out;
}

namespace {

// What ReadKernel reads: run_id (column 25) for reads of many runs, then
// graph_node_id and `op` (the column, or NULL before schema 7).
// `all` false: NULL in place of the columns KernelColumnSet::kGrouping
// leaves out, so that every column keeps its place.
std::string KernelColumns(std::string_view op, bool all = true) {
  auto col = [all](const char* name) { return all ? name : "NULL"; };
  return std::string("SELECT ") + col("kernel_id") + ", name, " +
         col("demangled") +
         ", family, shape, precision, flops_source, bytes_source, bound, "
         "phase, nvtx_path, duration_ns, start_ns, step_id, " +
         col("stream_id") + ", device_id, " + col("thread_id") +
         ", correlation_id, flops, dram_bytes, fraction_of_roof, " +
         col("roof_flops_per_s") +
         ", end_ns, session_id, token_count, run_id, graph_node_id, " +
         (all ? std::string(op) : std::string("NULL")) + " FROM kernels ";
}

// Start order; a tie by id, so that both backends give one order.
// `op`: the column's name, or NULL for a store from before schema 7;
// `where` and `order`: StoreReader::KernelsOfRun's and KernelOrder's.
std::string KernelQuery(std::string_view op, const std::string& where,
                        const std::string& order) {
  return KernelColumns(op) + "WHERE " + where + " ORDER BY " + order;
}
// The same for a batch of runs (RunsIn()), run by run in id order, within
// the batch's kernel ids (`ids`: a store of schema 9) or by the index on
// (run_id, start_ns) of an older store.
std::string RunsKernelQuery(std::string_view op, bool all, bool ids) {
  return KernelColumns(op, all) + "WHERE run_id IN (%s)" +
         (ids ? " AND kernel_id BETWEEN ? AND ?" : "") +
         " ORDER BY run_id, start_ns NULLS FIRST, kernel_id";
}

// What ReadStep reads; run_id last (column 11).
#define RT_STEP_COLUMNS                                                \
  "SELECT step_id, session_id, start_ns, end_ns, phase, token_count, " \
  "boundary, evidence, kernel_count, gemm_count, gpu_time_ns, run_id " \
  "FROM steps "
constexpr const char* kStepQuery =
    RT_STEP_COLUMNS "WHERE run_id = ? ORDER BY step_id";
constexpr const char* kRunsStepQuery =
    RT_STEP_COLUMNS "WHERE run_id IN (%s) ORDER BY run_id, step_id";
#undef RT_STEP_COLUMNS

// A read of many runs asks for several at once (`run_id IN (?, ...)`): as
// many as make about kRowsPerQuery rows at the rows per run read so far, a
// power of two (a statement each) up to kMaxRunsPerQuery. One query per run
// cost a PostgreSQL store 3 round trips a run (DECLARE, FETCH, CLOSE); one
// query for many large runs may have the server sort them all before the
// first row (its plan for a table without statistics does), spilling to
// disk past its work_mem (4 MB by default). The first query asks for one
// run, to learn the size of a run. history_bench's 1,000 runs of 200
// kernels: 145 round trips, the server's CPU no higher than with 1,024 or
// 1,000,000 rows a query.
constexpr size_t kRowsPerQuery = 8192;
constexpr size_t kMaxRunsPerQuery = 256;  // SQLite takes 999 parameters

// `query` (with one %s) for `n` run ids: "?, ?, ..., ?".
std::string RunsIn(const char* query, size_t n) {
  std::string marks;
  for (size_t i = 0; i < n; ++i) marks += i ? ", ?" : "?";
  std::string out(query);
  out.replace(out.find("%s"), 2, marks);
  return out;
}

// `run_ids` sorted, each once: the order a read of many runs gives.
std::vector<int64_t> SortedRuns(std::vector<int64_t> run_ids) {
  std::sort(run_ids.begin(), run_ids.end());
  run_ids.erase(std::unique(run_ids.begin(), run_ids.end()), run_ids.end());
  return run_ids;
}

constexpr const char* kMemcpyQuery =
    "SELECT kind, bytes, start_ns, end_ns, stream_id, device_id, "
    "correlation_id, phase FROM memcpys WHERE run_id = ? "
    "ORDER BY start_ns NULLS FIRST, memcpy_id";

// The columns of KernelQuery's current row into `k` (run_id kept).
void ReadKernel(DbStatement* s, KernelRow* out) {
  KernelRow& k = *out;
  k.kernel_id = s->Int(0);
  k.name = s->Text(1);
  k.demangled = s->Text(2);
  k.family = s->Text(3);
  k.shape = s->Text(4);
  k.precision = s->Text(5);
  k.flops_source = s->Text(6);
  k.bytes_source = s->Text(7);
  k.bound = s->Text(8);
  k.phase = s->Text(9);
  k.nvtx_path = s->Text(10);
  k.start_ns = Int(s, 12);
  k.end_ns = Int(s, 22);
  const std::optional<int64_t> duration = Int(s, 11);
  const std::optional<int64_t>& end = k.end_ns;
  k.duration_ns = duration ? *duration
                           : (end && k.start_ns ? *end - *k.start_ns : 0);
  // A negative duration is damage, not time: it must not shrink totals.
  if (k.duration_ns < 0) k.duration_ns = 0;
  k.step_id = Int(s, 13);
  k.stream_id = Int(s, 14);
  k.device_id = Int(s, 15);
  k.thread_id = Int(s, 16);
  k.correlation_id = Int(s, 17);
  k.flops = Count(s, 18);
  k.dram_bytes = Count(s, 19);
  k.fraction_of_roof = Real(s, 20);
  k.roof_flops_per_s = Real(s, 21);
  k.session_id = s->Int(23);
  k.token_count = Int(s, 24);
  k.graph_node_id = Int(s, 26).value_or(0);
  k.op = s->Text(27);
}

// The columns of kStepQuery's current row into `r` (run_id kept).
void ReadStep(DbStatement* s, StepRow* out) {
  StepRow& r = *out;
  r.step_id = s->Int(0);
  r.session_id = Int(s, 1).value_or(0);
  r.start_ns = Int(s, 2).value_or(0);
  r.end_ns = Int(s, 3).value_or(0);
  r.phase = s->Text(4);
  r.token_count = Int(s, 5);
  r.boundary = s->Text(6);
  r.evidence = s->Text(7);
  r.kernel_count = Int(s, 8).value_or(0);
  r.gemm_count = Int(s, 9).value_or(0);
  r.gpu_time_ns = Int(s, 10).value_or(0);
}

// The columns of kMemcpyQuery's current row into `v` (run_id kept).
void ReadMemcpy(DbStatement* s, MemcpyRow* out) {
  MemcpyRow& v = *out;
  v.kind = s->Text(0);
  v.bytes = s->Int(1);
  v.start_ns = Int(s, 2);
  v.end_ns = Int(s, 3);
  v.stream_id = Int(s, 4);
  v.device_id = Int(s, 5);
  v.correlation_id = Int(s, 6);
  v.phase = s->Text(7);
}

}  // namespace

std::string StoreReader::KernelsOfRun(int64_t run_id) const {
  if (!has_kernel_ids_) return "run_id = ?";  // by the index of schema 8
  const auto it = kernel_ids_.find(run_id);
  // A run without a row has no kernels but those written by hand (through
  // the view in a store its trigger predates): all ids, then.
  if (it == kernel_ids_.end()) return "run_id = ?";
  return "kernel_id BETWEEN " + std::to_string(it->second.first) + " AND " +
         std::to_string(it->second.last) + " AND run_id = ?";
}

std::string StoreReader::KernelOrder(int64_t run_id) const {
  const auto it = kernel_ids_.find(run_id);
  // Written in start order (NULL first): id order is that order.
  if (it != kernel_ids_.end() && it->second.in_start_order) {
    return "kernel_id";
  }
  return "start_ns NULLS FIRST, kernel_id";
}

std::pair<int64_t, int64_t> StoreReader::KernelIdsOfRuns(const int64_t* runs,
                                                         size_t n) const {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < n; ++i) {
    const auto it = kernel_ids_.find(runs[i]);
    if (it == kernel_ids_.end()) {
      // Without a row: every id (see KernelsOfRun); with a run that has
      // none at all, nothing is lost by looking everywhere.
      return {std::numeric_limits<int64_t>::min(),
              std::numeric_limits<int64_t>::max()};
    }
    lo = std::min(lo, it->second.first);
    hi = std::max(hi, it->second.last);
  }
  return {lo, hi};
}

// A run whose rows were not written in start order (several producers'
// windows into one run) is, as a rule, a few producers' rows each in start
// order: spans of ids in start order, which chain up (a span starting no
// earlier than another ended) into one chain per producer. Each chain is
// read in id order by a statement of its own (rebound span by span) and the
// chains are merged by (start, id): no sort of the rows, in SQL or here.
// Learning the spans costs one read of kernel_rows' ids and starts (no
// join). Past kMaxChains chains, or more spans than kMinSpans and one a
// kRowsPerSpan rows (a span is a query of its own: 3 round trips on
// PostgreSQL), rows in no such order, the database sorts (ORDER BY), as
// before.
class StoreReader::KernelStream {
 public:
  static constexpr size_t kMaxChains = 64;
  static constexpr int64_t kMinSpans = 64;
  static constexpr int64_t kRowsPerSpan = 64;
  static constexpr size_t kMaxSpans = 65536;

  // A chain: its statement (KernelColumns, `kernel_id BETWEEN ? AND ? AND
  // run_id = ? ORDER BY kernel_id`) and its spans' (first, last) ids; or,
  // without spans, one statement bound already, in start order.
  struct Chain {
    Stmt stmt;
    std::vector<std::pair<int64_t, int64_t>> spans;
    size_t next_span = 0;
  };

  KernelStream() = default;
  explicit KernelStream(Stmt sorted) {
    chains_.emplace_back();
    chains_.back().stmt = std::move(sorted);
  }

  std::vector<Chain> chains_;
  int64_t run_id_ = 0;

  // The next row in start order into row(); false at the end.
  StatusOr<bool> Next() {
    if (chains_.size() == 1 && chains_[0].spans.empty()) {
      current_ = 0;  // sorted already: no heap
      return chains_[0].stmt->Step();
    }
    if (!started_) {
      started_ = true;
      for (size_t c = 0; c < chains_.size(); ++c) {
        RT_RETURN_IF_ERROR(Advance(c));
      }
    } else if (current_ < chains_.size()) {
      RT_RETURN_IF_ERROR(Advance(current_));
    }
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    current_ = std::get<2>(heap_.back());
    heap_.pop_back();
    return true;
  }
  DbStatement* row() const { return chains_[current_].stmt.get(); }
  // Binds the chain's next span to its statement.
  void BindSpan(Chain* ch) const {
    const auto& [first, last] = ch->spans[ch->next_span++];
    ch->stmt->BindInt(1, first);
    ch->stmt->BindInt(2, last);
    ch->stmt->BindInt(3, run_id_);
  }

 private:
  // Steps chain `c` (to its next span at the end of one) and puts its row,
  // if any, on the heap.
  Status Advance(size_t c) {
    Chain& ch = chains_[c];
    while (true) {
      StatusOr<bool> more = ch.stmt->Step();
      if (!more.ok()) return more.status();
      if (*more) break;
      if (ch.next_span >= ch.spans.size()) return OkStatus();
      if (ch.next_span > 0) ch.stmt->Reset();
      BindSpan(&ch);
    }
    DbStatement* s = ch.stmt.get();
    const int64_t start = s->ColumnType(12) == DbType::kNull
                              ? std::numeric_limits<int64_t>::min()
                              : s->Int(12);
    heap_.emplace_back(start, s->Int(0), c);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    return OkStatus();
  }

  bool started_ = false;
  size_t current_ = std::numeric_limits<size_t>::max();
  // (start, NULL as the least; id; chain): a min-heap.
  std::vector<std::tuple<int64_t, int64_t, size_t>> heap_;
};

StatusOr<std::unique_ptr<StoreReader::KernelStream>> StoreReader::OpenKernels(
    int64_t run_id) {
  auto sorted = [&]() -> StatusOr<std::unique_ptr<KernelStream>> {
    RT_ASSIGN_OR_RETURN(Stmt stmt,
                        Prepare(KernelQuery(OpColumn(), KernelsOfRun(run_id),
                                            KernelOrder(run_id))));
    stmt->BindInt(1, run_id);
    return std::make_unique<KernelStream>(std::move(stmt));
  };
  const auto it = kernel_ids_.find(run_id);
  if (it == kernel_ids_.end() || it->second.in_start_order) return sorted();
  // The spans, chained as they come: a span joins the chain whose last
  // start is the latest not after its first (else starts a chain).
  RT_ASSIGN_OR_RETURN(
      Stmt ids, Prepare("SELECT kernel_id, start_ns FROM kernel_rows WHERE " +
                        KernelsOfRun(run_id) + " ORDER BY kernel_id"));
  ids->BindInt(1, run_id);
  auto stream = std::make_unique<KernelStream>();
  stream->run_id_ = run_id;
  std::multimap<int64_t, size_t> chain_ends;  // last start -> chain
  int64_t rows = 0, spans = 0;
  int64_t first = 0, last = 0, first_start = 0, last_start = 0;
  auto close_span = [&]() {
    auto end = chain_ends.upper_bound(first_start);
    size_t c;
    if (end != chain_ends.begin()) {
      c = (--end)->second;
      chain_ends.erase(end);
    } else {
      c = stream->chains_.size();
      stream->chains_.emplace_back();
    }
    stream->chains_[c].spans.emplace_back(first, last);
    chain_ends.emplace(last_start, c);
    ++spans;
  };
  // Spans past this many are rows in no producers' order.
  auto spans_allowed = [](int64_t rows) {
    return KernelStream::kMinSpans + rows / KernelStream::kRowsPerSpan;
  };
  while (true) {
    StatusOr<bool> row = ids->Step();
    if (!row.ok()) return StepError("kernel_rows", row.status());
    if (!*row) break;
    const int64_t id = ids->Int(0);
    const int64_t start = ids->ColumnType(1) == DbType::kNull
                              ? std::numeric_limits<int64_t>::min()
                              : ids->Int(1);
    if (rows == 0 || start < last_start) {
      if (rows > 0) close_span();
      if (stream->chains_.size() > KernelStream::kMaxChains ||
          static_cast<size_t>(spans) > KernelStream::kMaxSpans) {
        return sorted();  // no producers' spans: the database sorts
      }
      first = id;
      first_start = start;
    }
    last = id;
    last_start = start;
    ++rows;
  }
  if (rows > 0) close_span();
  ids.reset();
  if (stream->chains_.size() > KernelStream::kMaxChains ||
      spans > spans_allowed(rows)) {
    return sorted();
  }
  const std::string query = KernelColumns(OpColumn()) +
                            "WHERE kernel_id BETWEEN ? AND ? AND run_id = ? "
                            "ORDER BY kernel_id";
  for (KernelStream::Chain& ch : stream->chains_) {
    RT_ASSIGN_OR_RETURN(ch.stmt, Prepare(query));
    stream->BindSpan(&ch);
  }
  return stream;
}

Status StoreReader::ForEachKernel(
    int64_t run_id, const std::function<Status(const KernelRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<KernelStream> rows, OpenKernels(run_id));
  KernelRow k;
  k.run_id = run_id;
  while (true) {
    StatusOr<bool> row = rows->Next();
    if (!row.ok()) return StepError("kernels", row.status());
    if (!*row) return OkStatus();
    ReadKernel(rows->row(), &k);
    RT_RETURN_IF_ERROR(fn(k));
  }
}

// `query` (kRuns*Query) over `runs` (sorted, each once), a batch of runs
// at a time (kRowsPerQuery); a batch's missing ids are filled with its last
// (an id twice in IN is once).
template <typename Fn>
Status StoreReader::EachRowOfRuns(const char* query,
                                  const std::vector<int64_t>& runs,
                                  const char* what, Fn&& fn,
                                  bool kernel_ids) {
  std::map<size_t, Stmt> statements;  // by the number of ids they take
  size_t batch = 1;
  size_t rows = 0;
  for (size_t begin = 0; begin < runs.size();) {
    Stmt& stmt = statements[batch];
    if (stmt == nullptr) {
      RT_ASSIGN_OR_RETURN(stmt, Prepare(RunsIn(query, batch)));
    }
    for (size_t i = 0; i < batch; ++i) {
      stmt->BindInt(static_cast<int>(i) + 1,
                    runs[std::min(begin + i, runs.size() - 1)]);
    }
    if (kernel_ids) {
      const auto [lo, hi] = KernelIdsOfRuns(
          runs.data() + begin, std::min(batch, runs.size() - begin));
      stmt->BindInt(static_cast<int>(batch) + 1, lo);
      stmt->BindInt(static_cast<int>(batch) + 2, hi);
    }
    RT_RETURN_IF_ERROR(EachRow(stmt.get(), what, [&](DbStatement* s) {
      ++rows;
      return fn(s);
    }));
    stmt->Reset();
    begin += batch;
    const size_t per_run = std::max<size_t>(1, rows / begin);
    batch = 1;
    while (batch < kMaxRunsPerQuery && 2 * batch * per_run <= kRowsPerQuery) {
      batch *= 2;
    }
  }
  return OkStatus();
}

Status StoreReader::ForEachKernelOfRuns(
    const std::vector<int64_t>& run_ids,
    const std::function<Status(const KernelRow&)>& fn,
    KernelColumnSet columns) {
  KernelRow k;
  const std::string query = RunsKernelQuery(
      OpColumn(), columns == KernelColumnSet::kAll, has_kernel_ids_);
  return EachRowOfRuns(
      query.c_str(), SortedRuns(run_ids), "kernels",
      [&](DbStatement* s) {
        ReadKernel(s, &k);
        k.run_id = s->Int(25);
        return fn(k);
      },
      has_kernel_ids_);
}

Status StoreReader::ForEachAggregateOfRuns(
    const std::vector<int64_t>& run_ids,
    const std::function<Status(const KernelAggregateRow&)>& fn,
    KernelColumnSet columns) {
  if (!HasColumn("kernel_aggregates", "run_id")) return OkStatus();
  const bool all = columns == KernelColumnSet::kAll;
  // A column left out keeps its place: NULL for a text, 0 for a number.
  auto text = [all](const char* c) { return all ? c : "NULL"; };
  auto number = [all](const char* c) { return all ? c : "0"; };
  // In the order the writer made the groups (rowid: the order their first
  // launches were given), so that a report built from them meets its
  // groups in the order it would have met their kernels' first launches.
  const std::string query =
      std::string("SELECT a.run_id, n.name, ") + text("n.demangled") +
      ", n.family, a.shape, a.phase, a.op, " + text("a.precision") + ", " +
      text("a.bound") + ", " + text("a.flops_source") + ", " +
      text("a.bytes_source") + ", a.token_count, a.gemm_call, a.launches, "
      "a.time_ns, " + number("a.min_ns") + ", " + number("a.max_ns") + ", " +
      number("a.flops_launches") + ", " + number("a.flops_time_ns") + ", " +
      number("a.flops") + ", " + number("a.bytes_launches") + ", " +
      number("a.bytes_time_ns") + ", " + number("a.dram_bytes") +
      ", a.fraction_weighted, a.fraction_time_ns, " + number("a.ai_flops") +
      ", " + number("a.ai_bytes") + ", " + number("a.above_roof_launches") +
      ", " + number("a.above_roof_ns") +
      " FROM kernel_aggregates a LEFT JOIN kernel_names n ON n.name_id = "
      "a.name_id WHERE a.run_id IN (%s) ORDER BY a.run_id, a.rowid";
  KernelAggregateRow a;
  return EachRowOfRuns(query.c_str(), SortedRuns(run_ids), "kernel_aggregates",
                       [&](DbStatement* s) {
                         a.run_id = s->Int(0);
                         a.name = s->Text(1);
                         a.demangled = s->Text(2);
                         a.family = s->Text(3);
                         a.shape = s->Text(4);
                         a.phase = s->Text(5);
                         a.op = s->Text(6);
                         a.precision = s->Text(7);
                         a.bound = s->Text(8);
                         a.flops_source = s->Text(9);
                         a.bytes_source = s->Text(10);
                         a.token_count = Int(s, 11);
                         a.gemm_call = s->Int(12) != 0;
                         a.launches = s->Int(13);
                         a.time_ns = s->Int(14);
                         a.min_ns = s->Int(15);
                         a.max_ns = s->Int(16);
                         a.flops_launches = s->Int(17);
                         a.flops_time_ns = s->Int(18);
                         a.flops = s->Real(19);
                         a.bytes_launches = s->Int(20);
                         a.bytes_time_ns = s->Int(21);
                         a.dram_bytes = s->Real(22);
                         a.fraction_weighted = s->Real(23);
                         a.fraction_time_ns = s->Int(24);
                         a.ai_flops = s->Real(25);
                         a.ai_bytes = s->Real(26);
                         a.above_roof_launches = s->Int(27);
                         a.above_roof_ns = s->Int(28);
                         return fn(a);
                       });
}

Status StoreReader::ForEachStepOfRuns(
    const std::vector<int64_t>& run_ids,
    const std::function<Status(const StepRow&)>& fn) {
  StepRow r;
  return EachRowOfRuns(kRunsStepQuery, SortedRuns(run_ids), "steps",
                       [&](DbStatement* s) {
                         ReadStep(s, &r);
                         r.run_id = s->Int(11);
                         return fn(r);
                       });
}

Status StoreReader::ForEachKernelAndMemcpy(
    int64_t run_id, const std::function<Status(const KernelRow&)>& on_kernel,
    const std::function<Status(const MemcpyRow&)>& on_memcpy) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<KernelStream> ks, OpenKernels(run_id));
  RT_ASSIGN_OR_RETURN(Stmt ms, Prepare(kMemcpyQuery));
  ms->BindInt(1, run_id);
  KernelRow k;
  k.run_id = run_id;
  MemcpyRow m;
  m.run_id = run_id;
  StatusOr<bool> krow = ks->Next();
  if (!krow.ok()) return StepError("kernels", krow.status());
  StatusOr<bool> mrow = ms->Step();
  if (!mrow.ok()) return StepError("memcpys", mrow.status());
  // Both queries are in start order, NULL first.
  auto start = [](DbStatement* s, int col) {
    return s->ColumnType(col) == DbType::kNull
               ? std::numeric_limits<int64_t>::min()
               : s->Int(col);
  };
  while (*krow || *mrow) {
    if (*krow && (!*mrow || start(ks->row(), 12) <= start(ms.get(), 2))) {
      ReadKernel(ks->row(), &k);
      RT_RETURN_IF_ERROR(on_kernel(k));
      krow = ks->Next();
      if (!krow.ok()) return StepError("kernels", krow.status());
    } else {
      ReadMemcpy(ms.get(), &m);
      RT_RETURN_IF_ERROR(on_memcpy(m));
      mrow = ms->Step();
      if (!mrow.ok()) return StepError("memcpys", mrow.status());
    }
  }
  return OkStatus();
}

Status StoreReader::ForEachNvtx(int64_t run_id,
                                const std::function<Status(const NvtxRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(
      Stmt stmt,
      Prepare("SELECT name, domain, path, kind, session_id, start_ns, end_ns, "
              "thread_id, depth FROM nvtx_ranges WHERE run_id = ? "
              "ORDER BY start_ns NULLS FIRST, nvtx_row_id"));
  stmt->BindInt(1, run_id);
  NvtxRow v;
  v.run_id = run_id;
  return EachRow(stmt.get(), "nvtx_ranges", [&](DbStatement* s) {
    v.name = s->Text(0);
    v.domain = s->Text(1);
    v.path = s->Text(2);
    v.kind = s->Text(3);
    v.session_id = s->Int(4);
    v.start_ns = Int(s, 5);
    v.end_ns = Int(s, 6);
    v.thread_id = Int(s, 7);
    v.depth = Int(s, 8);
    return fn(v);
  });
}

Status StoreReader::ForEachMemcpy(
    int64_t run_id, const std::function<Status(const MemcpyRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(Stmt stmt, Prepare(kMemcpyQuery));
  stmt->BindInt(1, run_id);
  MemcpyRow v;
  v.run_id = run_id;
  return EachRow(stmt.get(), "memcpys", [&](DbStatement* s) {
    ReadMemcpy(s, &v);
    return fn(v);
  });
}

Status StoreReader::ForEachStep(
    int64_t run_id, const std::function<Status(const StepRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(Stmt stmt, Prepare(kStepQuery));
  stmt->BindInt(1, run_id);
  StepRow r;
  r.run_id = run_id;
  return EachRow(stmt.get(), "steps", [&](DbStatement* s) {
    ReadStep(s, &r);
    return fn(r);
  });
}

Status StoreReader::ForEachKernelMetric(
    int64_t run_id, const std::function<Status(const KernelMetricRow&)>& fn) {
  if (!HasColumn("kernel_metrics", "name")) return OkStatus();
  RT_ASSIGN_OR_RETURN(
      Stmt stmt,
      Prepare(std::string("SELECT session_id, correlation_id, name, value, "
                          "unit, ") +
              (HasColumn("kernel_metrics", "graph_node_id") ? "graph_node_id"
                                                            : "NULL") +
              " FROM kernel_metrics WHERE run_id = ? ORDER BY session_id, "
              "correlation_id, rowid"));
  stmt->BindInt(1, run_id);
  KernelMetricRow m;
  m.run_id = run_id;
  return EachRow(stmt.get(), "kernel_metrics", [&](DbStatement* s) {
    m.session_id = s->Int(0);
    m.correlation_id = s->Int(1);
    m.name = s->Text(2);
    m.value = Real(s, 3).value_or(0);
    m.unit = s->Text(4);
    m.graph_node_id = Int(s, 5).value_or(0);
    return fn(m);
  });
}

Status StoreReader::ForEachTableRow(
    const std::string& table, int64_t run_id,
    const std::function<void(const std::vector<std::string>&)>& header,
    const std::function<void(const std::vector<std::string_view>&,
                             const std::vector<bool>&)>& row) {
  const StoreTable* t = FindStoreTable(table);
  if (t == nullptr) return InternalError("not a store table: " + table);
  // The kernels of a schema 9 store: within the run's ids, in start order.
  const bool kernels = table == "kernels";
  RT_ASSIGN_OR_RETURN(
      Stmt stmt,
      Prepare("SELECT * FROM " + table + " WHERE " +
              (kernels ? KernelsOfRun(run_id) : std::string("run_id = ?")) +
              " ORDER BY " + (kernels ? KernelOrder(run_id) : t->order)));
  stmt->BindInt(1, run_id);
  // The columns of docs/store.md: PostgreSQL's tables without an id
  // column have a rowid column SQLite keeps hidden (store/db.h).
  std::vector<int> columns;
  std::vector<std::string> names;
  for (int i = 0; i < stmt->ColumnCount(); ++i) {
    std::string name = stmt->ColumnName(i);
    if (name == "rowid") continue;
    columns.push_back(i);
    names.push_back(std::move(name));
  }
  header(names);
  std::vector<std::string_view> values(columns.size());
  std::vector<bool> nulls(columns.size());
  return EachRow(stmt.get(), table.c_str(), [&](DbStatement* s) {
    for (size_t i = 0; i < columns.size(); ++i) {
      nulls[i] = s->ColumnType(columns[i]) == DbType::kNull;
      values[i] = s->Text(columns[i]);
    }
    row(values, nulls);
    return OkStatus();
  });
}

std::set<int64_t> StoreReader::RunsBeingWritten() {
  std::vector<int64_t> unfinished;
  for (const RunRow& r : runs_) {
    if (!r.complete.has_value()) unfinished.push_back(r.run_id);
  }
  std::set<int64_t> out =
      rooftrace::RunsBeingWritten(db_.get(), path_, unfinished);
  // A writer commits its run's end before it drops the lease, so a run
  // unfinished when runs_ was read, unleased now and finished now was
  // being written then: it ended between the two reads. Asked after the
  // leases, on a connection of its own (this reader's PostgreSQL snapshot
  // is as old as runs_); a run still unfinished there had no writer when
  // the leases were read. Only crashed runs (and this race) pay for it.
  std::string ids;
  for (const int64_t r : unfinished) {
    if (out.count(r)) continue;
    ids += (ids.empty() ? "" : ",") + std::to_string(r);
  }
  if (ids.empty()) return out;
  StatusOr<std::unique_ptr<Db>> now = OpenDbForRead(path_, display_name_);
  if (!now.ok()) return out;
  StatusOr<std::unique_ptr<DbStatement>> q =
      (*now)->Prepare("SELECT run_id FROM runs WHERE complete IS NOT NULL "
                      "AND run_id IN (" + ids + ")");
  if (!q.ok()) return out;
  for (;;) {
    StatusOr<bool> row = (*q)->Step();
    if (!row.ok() || !*row) break;
    out.insert((*q)->Int(0));
  }
  return out;
}

}  // namespace rooftrace
