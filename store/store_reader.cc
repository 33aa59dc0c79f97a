#include "store/store_reader.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>

namespace rooftrace {
namespace {

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

std::string_view Text(sqlite3_stmt* s, int col) {
  const unsigned char* p = sqlite3_column_text(s, col);
  if (!p) return {};
  return std::string_view(reinterpret_cast<const char*>(p),
                          static_cast<size_t>(sqlite3_column_bytes(s, col)));
}

std::optional<int64_t> Int(sqlite3_stmt* s, int col) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(s, col);
}

std::optional<double> Real(sqlite3_stmt* s, int col) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, col);
}

// A count (FLOPs, bytes) written as an integer, or as a real by a foreign
// writer (rounded).
std::optional<int64_t> Count(sqlite3_stmt* s, int col) {
  switch (sqlite3_column_type(s, col)) {
    case SQLITE_NULL:
      return std::nullopt;
    case SQLITE_FLOAT:
      return std::llround(sqlite3_column_double(s, col));
    default:
      return sqlite3_column_int64(s, col);
  }
}

bool IsStoreTable(const std::string& t) {
  static const char* const kTables[] = {
      "runs",    "sessions",   "devices",     "roofs", "import_stats",
      "kernels", "memcpys",    "gemm_calls",  "nvtx_ranges", "steps",
      "kernel_metrics", "run_labels"};
  for (const char* k : kTables) {
    if (t == k) return true;
  }
  return false;
}

}  // namespace

StoreReader::~StoreReader() {
  if (db_) sqlite3_close(db_);
}

StatusOr<sqlite3_stmt*> StoreReader::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    const std::string err = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    return Corrupt(display_name_ + ": the store does not follow docs/store.md (" +
                   err + "); was it written by a different rooftrace version?");
  }
  return stmt;
}

bool StoreReader::HasColumn(const char* table, const char* column) {
  sqlite3_stmt* raw = nullptr;
  const std::string sql = std::string("PRAGMA table_info(") + table + ")";
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    return false;
  }
  Stmt stmt(raw);
  while (sqlite3_step(stmt.get()) == SQLITE_ROW) {
    if (Text(stmt.get(), 1) == column) return true;
  }
  return false;
}

Status StoreReader::StepError(const char* what) {
  return Corrupt(display_name_ + ": reading " + what + " failed: " +
                 sqlite3_errmsg(db_) +
                 " (the file may be damaged; check it with `sqlite3 FILE "
                 "'pragma integrity_check'`)");
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
  if (sqlite3_open_v2(SqliteReadUri(path).c_str(), &db_,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                      nullptr) != SQLITE_OK) {
    return NotFound(display_name_ + ": cannot open as SQLite: " +
                    (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  }
  sqlite3_busy_timeout(db_, 5000);
  // The schema version decides whether we can read the file at all.
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT value FROM schema_info WHERE key = "
                         "'schema_version'",
                         -1, &raw, nullptr) != SQLITE_OK) {
    const std::string err = sqlite3_errmsg(db_);
    sqlite3_finalize(raw);
    if (err.find("no such table") != std::string::npos) {
      return InvalidArgument(
          display_name_ +
          ": an SQLite file but not a rooftrace store (no schema_info table); "
          "pass a store written by `rooftrace profile -o` or `rooftrace "
          "collect --store`, or a .rft trace");
    }
    return Corrupt(display_name_ + ": cannot read the store: " + err);
  }
  Stmt version(raw);
  const int rc = sqlite3_step(version.get());
  if (rc == SQLITE_ROW) {
    const std::string v(Text(version.get(), 0));
    const int major = std::atoi(v.c_str());
    if (major > kStoreSchemaMajor) {
      return FailedPrecondition(
          display_name_ + ": store schema version " + v +
          " is newer than this rooftrace understands (" +
          std::to_string(kStoreSchemaMajor) +
          "); use a newer rooftrace to analyze it");
    }
  } else if (rc != SQLITE_DONE) {
    return StepError("schema_info");
  }

  // Schema 3 says where a run came from; older stores have no such columns.
  const bool provenance = HasColumn("runs", "source_sha256");
  // Schema 4 says why a run is incomplete.
  const bool reason = HasColumn("runs", "incomplete_reason");
  RT_ASSIGN_OR_RETURN(
      sqlite3_stmt * runs_raw,
      Prepare(std::string("SELECT run_id, command, host, mode, device_name, "
                          "roof_source, flops_sources, producer_version, "
                          "origin, complete, started_unix_ns, "
                          "ended_unix_ns, ") +
              (provenance ? "source_format, source_file, source_sha256"
                          : "NULL, NULL, NULL") +
              (reason ? ", incomplete_reason" : ", NULL") +
              " FROM runs ORDER BY run_id"));
  Stmt runs(runs_raw);
  int step;
  while ((step = sqlite3_step(runs.get())) == SQLITE_ROW) {
    sqlite3_stmt* s = runs.get();
    RunRow r;
    r.run_id = sqlite3_column_int64(s, 0);
    r.command = Text(s, 1);
    r.host = Text(s, 2);
    r.mode = Text(s, 3);
    r.device_name = Text(s, 4);
    r.roof_source = Text(s, 5);
    r.flops_sources = Text(s, 6);
    r.producer_version = Text(s, 7);
    r.origin = Text(s, 8);
    r.complete = Int(s, 9);
    r.started_unix_ns = Int(s, 10);
    r.ended_unix_ns = Int(s, 11);
    r.source_format = Text(s, 12);
    r.source_file = Text(s, 13);
    r.source_sha256 = Text(s, 14);
    r.incomplete_reason = Text(s, 15);
    runs_.push_back(std::move(r));
  }
  if (step != SQLITE_DONE) return StepError("runs");
  // Schema 6 keeps the user's labels; older stores have none.
  if (!HasColumn("run_labels", "key")) return OkStatus();
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * labels_raw,
                      Prepare("SELECT run_id, key, value FROM run_labels "
                              "ORDER BY run_id, rowid"));
  Stmt labels(labels_raw);
  // runs_ is in run_id order, as are the labels: one merge pass.
  size_t i = 0;
  while ((step = sqlite3_step(labels.get())) == SQLITE_ROW) {
    const int64_t run_id = sqlite3_column_int64(labels.get(), 0);
    while (i < runs_.size() && runs_[i].run_id < run_id) ++i;
    if (i == runs_.size()) break;
    if (runs_[i].run_id != run_id) continue;  // a label of no run
    runs_[i].labels.emplace_back(std::string(Text(labels.get(), 1)),
                                 std::string(Text(labels.get(), 2)));
  }
  if (step != SQLITE_DONE && step != SQLITE_ROW) {
    return StepError("run_labels");
  }
  return OkStatus();
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
      sqlite3_stmt * raw,
      Prepare("SELECT device_id, precision, peak_flops_per_s, "
              "dram_bytes_per_s, ridge_flops_per_byte, source FROM roofs "
              "WHERE run_id = ? ORDER BY device_id, peak_flops_per_s"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  std::vector<RoofRow> out;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    sqlite3_stmt* s = stmt.get();
    RoofRow r;
    r.device_id = sqlite3_column_int64(s, 0);
    r.precision = Text(s, 1);
    r.peak_flops_per_s = Real(s, 2).value_or(0);
    r.dram_bytes_per_s = Real(s, 3).value_or(0);
    r.ridge_flops_per_byte = Real(s, 4).value_or(0);
    r.source = Text(s, 5);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return StepError("roofs");
  return out;
}

StatusOr<std::vector<std::pair<std::string, int64_t>>> StoreReader::ImportStats(
    int64_t run_id) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw,
                      Prepare("SELECT name, value FROM import_stats WHERE "
                              "run_id = ? ORDER BY name"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  std::vector<std::pair<std::string, int64_t>> out;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    out.emplace_back(std::string(Text(stmt.get(), 0)),
                     sqlite3_column_int64(stmt.get(), 1));
  }
  if (rc != SQLITE_DONE) return StepError("import_stats");
  return out;
}

StatusOr<int64_t> StoreReader::KernelCount(int64_t run_id) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw,
                      Prepare("SELECT count(*) FROM kernels WHERE run_id = ?"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  if (sqlite3_step(stmt.get()) != SQLITE_ROW) return StepError("kernels");
  return static_cast<int64_t>(sqlite3_column_int64(stmt.get(), 0));
}

StatusOr<std::string> StoreReader::DeviceName(int64_t run_id) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw,
                      Prepare("SELECT name FROM devices WHERE run_id = ? "
                              "ORDER BY session_id, device_id LIMIT 1"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  const int rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_ROW) return std::string(Text(stmt.get(), 0));
  if (rc != SQLITE_DONE) return StepError("devices");
  return std::string();
}

StatusOr<int64_t> StoreReader::MeasuredSmClockKhz(int64_t run_id) {
  if (!HasColumn("devices", "measured_sm_clock_khz")) return 0;
  RT_ASSIGN_OR_RETURN(
      sqlite3_stmt * raw,
      Prepare("SELECT measured_sm_clock_khz FROM devices WHERE run_id = ? "
              "ORDER BY session_id, device_id LIMIT 1"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  const int rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_ROW) return Int(stmt.get(), 0).value_or(0);
  if (rc != SQLITE_DONE) return StepError("devices");
  return 0;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> StoreReader::SessionPids(
    int64_t run_id) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw,
                      Prepare("SELECT session_id, pid FROM sessions WHERE "
                              "run_id = ? ORDER BY session_id"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  std::vector<std::pair<int64_t, int64_t>> out;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    out.emplace_back(sqlite3_column_int64(stmt.get(), 0),
                     Int(stmt.get(), 1).value_or(0));
  }
  if (rc != SQLITE_DONE) return StepError("sessions");
  return out;
}

StatusOr<std::vector<std::pair<int64_t, std::string>>> StoreReader::Devices(
    int64_t run_id) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw,
                      Prepare("SELECT DISTINCT device_id, name FROM devices "
                              "WHERE run_id = ? ORDER BY device_id"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  std::vector<std::pair<int64_t, std::string>> out;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    const int64_t id = sqlite3_column_int64(stmt.get(), 0);
    if (!out.empty() && out.back().first == id) continue;
    out.emplace_back(id, std::string(Text(stmt.get(), 1)));
  }
  if (rc != SQLITE_DONE) return StepError("devices");
  return out;
}

namespace {

constexpr const char* kKernelQuery =
    "SELECT kernel_id, name, demangled, family, shape, precision, "
    "flops_source, bytes_source, bound, phase, nvtx_path, "
    "duration_ns, start_ns, step_id, stream_id, device_id, "
    "thread_id, correlation_id, flops, dram_bytes, "
    "fraction_of_roof, roof_flops_per_s, end_ns, session_id, "
    "token_count FROM kernels WHERE run_id = ? ORDER BY start_ns";

constexpr const char* kMemcpyQuery =
    "SELECT kind, bytes, start_ns, end_ns, stream_id, device_id, "
    "correlation_id, phase FROM memcpys WHERE run_id = ? "
    "ORDER BY start_ns";

// The columns of kKernelQuery's current row into `k` (run_id kept).
void ReadKernel(sqlite3_stmt* s, KernelRow* out) {
  KernelRow& k = *out;
  k.kernel_id = sqlite3_column_int64(s, 0);
  k.name = Text(s, 1);
  k.demangled = Text(s, 2);
  k.family = Text(s, 3);
  k.shape = Text(s, 4);
  k.precision = Text(s, 5);
  k.flops_source = Text(s, 6);
  k.bytes_source = Text(s, 7);
  k.bound = Text(s, 8);
  k.phase = Text(s, 9);
  k.nvtx_path = Text(s, 10);
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
  k.session_id = sqlite3_column_int64(s, 23);
  k.token_count = Int(s, 24);
}

// The columns of kMemcpyQuery's current row into `v` (run_id kept).
void ReadMemcpy(sqlite3_stmt* s, MemcpyRow* out) {
  MemcpyRow& v = *out;
  v.kind = Text(s, 0);
  v.bytes = sqlite3_column_int64(s, 1);
  v.start_ns = Int(s, 2);
  v.end_ns = Int(s, 3);
  v.stream_id = Int(s, 4);
  v.device_id = Int(s, 5);
  v.correlation_id = Int(s, 6);
  v.phase = Text(s, 7);
}

}  // namespace

Status StoreReader::ForEachKernel(
    int64_t run_id, const std::function<Status(const KernelRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw, Prepare(kKernelQuery));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  KernelRow k;
  k.run_id = run_id;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    ReadKernel(stmt.get(), &k);
    RT_RETURN_IF_ERROR(fn(k));
  }
  if (rc != SQLITE_DONE) return StepError("kernels");
  return OkStatus();
}

Status StoreReader::ForEachKernelAndMemcpy(
    int64_t run_id, const std::function<Status(const KernelRow&)>& on_kernel,
    const std::function<Status(const MemcpyRow&)>& on_memcpy) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw_k, Prepare(kKernelQuery));
  Stmt ks(raw_k);
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw_m, Prepare(kMemcpyQuery));
  Stmt ms(raw_m);
  sqlite3_bind_int64(ks.get(), 1, run_id);
  sqlite3_bind_int64(ms.get(), 1, run_id);
  KernelRow k;
  k.run_id = run_id;
  MemcpyRow m;
  m.run_id = run_id;
  int krc = sqlite3_step(ks.get());
  int mrc = sqlite3_step(ms.get());
  // Both queries are in start order, NULL first (as SQLite sorts it).
  auto start = [](sqlite3_stmt* s, int col) {
    return sqlite3_column_type(s, col) == SQLITE_NULL
               ? std::numeric_limits<int64_t>::min()
               : sqlite3_column_int64(s, col);
  };
  while (krc == SQLITE_ROW || mrc == SQLITE_ROW) {
    if (krc == SQLITE_ROW &&
        (mrc != SQLITE_ROW || start(ks.get(), 12) <= start(ms.get(), 2))) {
      ReadKernel(ks.get(), &k);
      RT_RETURN_IF_ERROR(on_kernel(k));
      krc = sqlite3_step(ks.get());
    } else {
      ReadMemcpy(ms.get(), &m);
      RT_RETURN_IF_ERROR(on_memcpy(m));
      mrc = sqlite3_step(ms.get());
    }
  }
  if (krc != SQLITE_DONE) return StepError("kernels");
  if (mrc != SQLITE_DONE) return StepError("memcpys");
  return OkStatus();
}

Status StoreReader::ForEachNvtx(int64_t run_id,
                                const std::function<Status(const NvtxRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(
      sqlite3_stmt * raw,
      Prepare("SELECT name, domain, path, kind, session_id, start_ns, end_ns, "
              "thread_id, depth FROM nvtx_ranges WHERE run_id = ? "
              "ORDER BY start_ns"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  NvtxRow v;
  v.run_id = run_id;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    sqlite3_stmt* s = stmt.get();
    v.name = Text(s, 0);
    v.domain = Text(s, 1);
    v.path = Text(s, 2);
    v.kind = Text(s, 3);
    v.session_id = sqlite3_column_int64(s, 4);
    v.start_ns = Int(s, 5);
    v.end_ns = Int(s, 6);
    v.thread_id = Int(s, 7);
    v.depth = Int(s, 8);
    RT_RETURN_IF_ERROR(fn(v));
  }
  if (rc != SQLITE_DONE) return StepError("nvtx_ranges");
  return OkStatus();
}

Status StoreReader::ForEachMemcpy(
    int64_t run_id, const std::function<Status(const MemcpyRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw, Prepare(kMemcpyQuery));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  MemcpyRow v;
  v.run_id = run_id;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    ReadMemcpy(stmt.get(), &v);
    RT_RETURN_IF_ERROR(fn(v));
  }
  if (rc != SQLITE_DONE) return StepError("memcpys");
  return OkStatus();
}

Status StoreReader::ForEachStep(
    int64_t run_id, const std::function<Status(const StepRow&)>& fn) {
  RT_ASSIGN_OR_RETURN(
      sqlite3_stmt * raw,
      Prepare("SELECT step_id, session_id, start_ns, end_ns, phase, "
              "token_count, boundary, evidence, kernel_count, gemm_count, "
              "gpu_time_ns FROM steps WHERE run_id = ? ORDER BY step_id"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  StepRow r;
  r.run_id = run_id;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    sqlite3_stmt* s = stmt.get();
    r.step_id = sqlite3_column_int64(s, 0);
    r.session_id = Int(s, 1).value_or(0);
    r.start_ns = Int(s, 2).value_or(0);
    r.end_ns = Int(s, 3).value_or(0);
    r.phase = Text(s, 4);
    r.token_count = Int(s, 5);
    r.boundary = Text(s, 6);
    r.evidence = Text(s, 7);
    r.kernel_count = Int(s, 8).value_or(0);
    r.gemm_count = Int(s, 9).value_or(0);
    r.gpu_time_ns = Int(s, 10).value_or(0);
    RT_RETURN_IF_ERROR(fn(r));
  }
  if (rc != SQLITE_DONE) return StepError("steps");
  return OkStatus();
}

Status StoreReader::ForEachKernelMetric(
    int64_t run_id, const std::function<Status(const KernelMetricRow&)>& fn) {
  if (!HasColumn("kernel_metrics", "name")) return OkStatus();
  RT_ASSIGN_OR_RETURN(
      sqlite3_stmt * raw,
      Prepare("SELECT session_id, correlation_id, name, value, unit FROM "
              "kernel_metrics WHERE run_id = ? ORDER BY session_id, "
              "correlation_id, rowid"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  KernelMetricRow m;
  m.run_id = run_id;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    sqlite3_stmt* s = stmt.get();
    m.session_id = sqlite3_column_int64(s, 0);
    m.correlation_id = sqlite3_column_int64(s, 1);
    m.name = Text(s, 2);
    m.value = Real(s, 3).value_or(0);
    m.unit = Text(s, 4);
    RT_RETURN_IF_ERROR(fn(m));
  }
  if (rc != SQLITE_DONE) return StepError("kernel_metrics");
  return OkStatus();
}

Status StoreReader::ForEachTableRow(
    const std::string& table, int64_t run_id,
    const std::function<void(const std::vector<std::string>&)>& header,
    const std::function<void(const std::vector<std::string_view>&,
                             const std::vector<bool>&)>& row) {
  if (!IsStoreTable(table)) {
    return InternalError("not a store table: " + table);
  }
  RT_ASSIGN_OR_RETURN(sqlite3_stmt * raw,
                      Prepare("SELECT * FROM " + table + " WHERE run_id = ?"));
  Stmt stmt(raw);
  sqlite3_bind_int64(stmt.get(), 1, run_id);
  const int n = sqlite3_column_count(stmt.get());
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.emplace_back(sqlite3_column_name(stmt.get(), i));
  header(names);
  std::vector<std::string_view> values(n);
  std::vector<bool> nulls(n);
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    for (int i = 0; i < n; ++i) {
      nulls[i] = sqlite3_column_type(stmt.get(), i) == SQLITE_NULL;
      values[i] = Text(stmt.get(), i);
    }
    row(values, nulls);
  }
  if (rc != SQLITE_DONE) return StepError(table.c_str());
  return OkStatus();
}

}  // namespace rooftrace
