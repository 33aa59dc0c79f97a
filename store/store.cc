#include "store/store.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>

#include "rooftrace_version.h"
#include "base/command_name.h"
#include "model/roof_model.h"
#include "store/indexed_text.h"
#include "store/schema_version.h"
#include "store/store_reader.h"

namespace rooftrace {
namespace {

// kernel_rows has a FLOPs column for each of the first eight precision
// classes (flops_fp64 ... flops_int8_tc, in Precision order); a class
// added later is stored in the column of the class nearest it.
constexpr int kNumStoredPrecisions = 9;
int StoredPrecisionColumn(int p) {
  switch (static_cast<Precision>(p)) {
    case Precision::kBf16:
      return static_cast<int>(Precision::kFp16);
    case Precision::kFp4Tensor:
      return static_cast<int>(Precision::kFp8Tensor);
    case Precision::kInt:  // 32-bit lanes of the CUDA cores
      return static_cast<int>(Precision::kFp32);
    default:
      return p < kNumStoredPrecisions ? p : 0;
  }
}

// The writer writes the schema the reader reads: one bump, both sides.
static_assert(kStoreSchemaVersion == kStoreSchemaMajor,
              "store.h's schema version and store_reader.h's differ");

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY, command TEXT, host TEXT,
  started_unix_ns INTEGER, ended_unix_ns INTEGER, mode TEXT,
  device_name TEXT, roof_source TEXT, flops_sources TEXT,
  producer_version TEXT, complete INTEGER, origin TEXT,
  source_format TEXT, source_file TEXT, source_sha256 TEXT,
  incomplete_reason TEXT, store_kernels TEXT);
CREATE TABLE IF NOT EXISTS run_labels (
  run_id INTEGER NOT NULL REFERENCES runs(run_id), key TEXT NOT NULL,
  value TEXT NOT NULL, PRIMARY KEY (run_id, key));
CREATE INDEX IF NOT EXISTS run_labels_key ON run_labels(key, value);
CREATE TABLE IF NOT EXISTS sessions (
  session_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  host TEXT, pid INTEGER, ppid INTEGER, start_unix_ns INTEGER,
  start_ns INTEGER, argv TEXT, producer_version TEXT, mode TEXT,
  counter_passes INTEGER, packets INTEGER, last_sequence INTEGER,
  sequence_gaps INTEGER, goodbye INTEGER, complete INTEGER);
CREATE TABLE IF NOT EXISTS devices (
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  device_id INTEGER NOT NULL, name TEXT, uuid TEXT, chip_name TEXT,
  sm_count INTEGER, cc_major INTEGER, cc_minor INTEGER,
  core_clock_khz INTEGER, memory_clock_khz INTEGER,
  memory_bus_width_bits INTEGER, l2_cache_bytes INTEGER,
  global_memory_bytes INTEGER, driver_version TEXT,
  measured_sm_clock_khz INTEGER);
CREATE TABLE IF NOT EXISTS roofs (
  run_id INTEGER NOT NULL, device_id INTEGER NOT NULL,
  precision TEXT NOT NULL, peak_flops_per_s REAL, dram_bytes_per_s REAL,
  ridge_flops_per_byte REAL, source TEXT);
CREATE TABLE IF NOT EXISTS import_stats (
  run_id INTEGER NOT NULL, name TEXT NOT NULL, value INTEGER NOT NULL,
  PRIMARY KEY (run_id, name));
CREATE TABLE IF NOT EXISTS gemm_calls (
  gemm_call_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  call_id INTEGER, api TEXT, m INTEGER, n INTEGER, k INTEGER, batch INTEGER,
  trans_a TEXT, trans_b TEXT,
  a_type INTEGER, b_type INTEGER, c_type INTEGER, d_type INTEGER,
  compute_type INTEGER, lda INTEGER, ldb INTEGER, ldc INTEGER,
  a_ptr INTEGER, b_ptr INTEGER, c_ptr INTEGER, d_ptr INTEGER,
  epilogue INTEGER, start_ns INTEGER, end_ns INTEGER, thread_id INTEGER,
  status INTEGER, precision TEXT, flops INTEGER, min_bytes INTEGER,
  weight_operand TEXT, token_count INTEGER, kernel_count INTEGER);
-- A kernel name is stored once; kernel_rows point at it. Names are most of a
-- kernel's bytes (a CUTLASS instance's mangled and demangled names run to
-- hundreds of characters), and a run has a few hundred distinct ones.
CREATE TABLE IF NOT EXISTS kernel_names (
  name_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, demangled TEXT,
  family TEXT);
-- What a launch shares with every launch of its signature (schema 9):
-- its kernel, where and how it was launched, its shape, figures and
-- judgement; stored once and looked up in the writer's memory, so that a
-- kernel row holds only what each launch has of its own.
CREATE TABLE IF NOT EXISTS kernel_sigs (
  sig_id INTEGER PRIMARY KEY,
  name_id INTEGER REFERENCES kernel_names(name_id),
  device_id INTEGER, context_id INTEGER, stream_id INTEGER,
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  cluster_x INTEGER, cluster_y INTEGER, cluster_z INTEGER,
  registers_per_thread INTEGER,
  static_shared_memory_bytes INTEGER, dynamic_shared_memory_bytes INTEGER,
  graph_id INTEGER, thread_id INTEGER, nvtx_path TEXT,
  shape TEXT, token_count INTEGER, precision TEXT, flops INTEGER,
  flops_fp64 INTEGER, flops_fp32 INTEGER, flops_fp16 INTEGER,
  flops_fp64_tc INTEGER, flops_tf32_tc INTEGER, flops_bf16_tc INTEGER,
  flops_fp8_tc INTEGER, flops_int8_tc INTEGER,
  flops_source TEXT, dram_bytes INTEGER, dram_read_bytes INTEGER,
  dram_write_bytes INTEGER, bytes_source TEXT, ai REAL,
  roof_flops_per_s REAL, bound TEXT, phase TEXT, op TEXT);
-- One row per launch: what varies from launch to launch (schema 9).
CREATE TABLE IF NOT EXISTS kernel_rows (
  kernel_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  sig_id INTEGER REFERENCES kernel_sigs(sig_id),
  correlation_id INTEGER, start_ns INTEGER, end_ns INTEGER,
  duration_ns INTEGER, api_start_ns INTEGER, graph_node_id INTEGER,
  gemm_call_id INTEGER REFERENCES gemm_calls(gemm_call_id),
  step_id INTEGER, achieved_flops_per_s REAL, achieved_bytes_per_s REAL,
  fraction_of_roof REAL);
-- Where each run's kernel rows are (schema 9): kernel_rows has no index on
-- run_id (it cost a third of a row's write); a run's rows lie between these
-- ids, and in_start_order = 1 says they were written in start order.
CREATE TABLE IF NOT EXISTS run_kernel_ids (
  run_id INTEGER PRIMARY KEY, first_kernel_id INTEGER NOT NULL,
  last_kernel_id INTEGER NOT NULL, in_start_order INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS kernel_metrics (
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL, name TEXT NOT NULL, value REAL,
  unit TEXT, graph_node_id INTEGER);
CREATE INDEX IF NOT EXISTS kernel_metrics_kernel
  ON kernel_metrics(run_id, session_id, correlation_id);
CREATE TABLE IF NOT EXISTS memcpys (
  memcpy_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  correlation_id INTEGER, kind TEXT, bytes INTEGER,
  start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER,
  device_id INTEGER, context_id INTEGER, stream_id INTEGER,
  src_kind TEXT, dst_kind TEXT, thread_id INTEGER, nvtx_path TEXT,
  achieved_bytes_per_s REAL, step_id INTEGER, phase TEXT);
CREATE TABLE IF NOT EXISTS nvtx_ranges (
  nvtx_row_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  range_id INTEGER, parent_range_id INTEGER, domain TEXT, name TEXT,
  kind TEXT, depth INTEGER, start_ns INTEGER, end_ns INTEGER,
  thread_id INTEGER, end_thread_id INTEGER, path TEXT);
-- Per run, its kernels summed per grouping key (schema 8; docs/store.md).
CREATE TABLE IF NOT EXISTS kernel_aggregates (
  run_id INTEGER NOT NULL, name_id INTEGER REFERENCES kernel_names(name_id),
  shape TEXT, phase TEXT, op TEXT, precision TEXT, bound TEXT,
  flops_source TEXT, bytes_source TEXT, token_count INTEGER,
  gemm_call INTEGER NOT NULL, launches INTEGER NOT NULL,
  time_ns INTEGER NOT NULL, min_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,
  flops_launches INTEGER NOT NULL, flops_time_ns INTEGER NOT NULL,
  flops REAL NOT NULL, bytes_launches INTEGER NOT NULL,
  bytes_time_ns INTEGER NOT NULL, dram_bytes REAL NOT NULL,
  fraction_weighted REAL NOT NULL, fraction_time_ns INTEGER NOT NULL,
  ai_flops REAL NOT NULL, ai_bytes REAL NOT NULL,
  above_roof_launches INTEGER NOT NULL, above_roof_ns INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS kernel_aggregates_run ON kernel_aggregates(run_id);
CREATE TABLE IF NOT EXISTS steps (
  run_id INTEGER NOT NULL, step_id INTEGER NOT NULL, session_id INTEGER,
  start_ns INTEGER, end_ns INTEGER, phase TEXT, token_count INTEGER,
  boundary TEXT, evidence TEXT, kernel_count INTEGER, gemm_count INTEGER,
  gpu_time_ns INTEGER, PRIMARY KEY (run_id, step_id));
)sql";

// The kernels view over schema 9's kernel_rows and kernel_sigs (and
// SQLite's trigger that splits a row written through it). Apart from
// kSchema: made once kernel_rows has schema 9's columns (an upgrade from
// schema 8 moves them first; PostgreSQL checks a view's columns when it
// is made).
constexpr char kKernelsView[] = R"sql(
-- What readers query: the columns of schema 1's kernels table, in its order.
CREATE VIEW IF NOT EXISTS kernels AS SELECT
  r.kernel_id, r.run_id, r.session_id, r.correlation_id, s.device_id,
  s.context_id, s.stream_id, n.name, n.demangled, n.family,
  r.start_ns, r.end_ns, r.duration_ns, s.grid_x, s.grid_y, s.grid_z,
  s.block_x, s.block_y, s.block_z, s.cluster_x, s.cluster_y, s.cluster_z,
  s.registers_per_thread, s.static_shared_memory_bytes,
  s.dynamic_shared_memory_bytes, s.graph_id, r.graph_node_id, s.thread_id,
  r.api_start_ns, s.nvtx_path, r.gemm_call_id, s.shape, s.token_count,
  s.precision, s.flops, s.flops_fp64, s.flops_fp32, s.flops_fp16,
  s.flops_fp64_tc, s.flops_tf32_tc, s.flops_bf16_tc, s.flops_fp8_tc,
  s.flops_int8_tc, s.flops_source, s.dram_bytes, s.dram_read_bytes,
  s.dram_write_bytes, s.bytes_source, s.ai, r.achieved_flops_per_s,
  r.achieved_bytes_per_s, s.roof_flops_per_s, r.fraction_of_roof, s.bound,
  r.step_id, s.phase, s.op
  FROM kernel_rows r LEFT JOIN kernel_sigs s ON s.sig_id = r.sig_id
  LEFT JOIN kernel_names n ON n.name_id = s.name_id;
-- Rows written through the view land in kernel_names, kernel_sigs (a
-- signature each) and kernel_rows, and widen their run's run_kernel_ids (a
-- NULL name stays NULL); the collector writes the tables directly, each
-- signature once.
CREATE TRIGGER IF NOT EXISTS kernels_insert INSTEAD OF INSERT ON kernels BEGIN
  INSERT OR IGNORE INTO kernel_names (name, demangled, family)
    SELECT NEW.name, NEW.demangled, NEW.family WHERE NEW.name IS NOT NULL;
  INSERT INTO kernel_sigs (
    name_id, device_id, context_id, stream_id, grid_x, grid_y, grid_z,
    block_x, block_y, block_z, cluster_x, cluster_y, cluster_z,
    registers_per_thread, static_shared_memory_bytes,
    dynamic_shared_memory_bytes, graph_id, thread_id, nvtx_path, shape,
    token_count, precision, flops, flops_fp64, flops_fp32, flops_fp16,
    flops_fp64_tc, flops_tf32_tc, flops_bf16_tc, flops_fp8_tc,
    flops_int8_tc, flops_source, dram_bytes, dram_read_bytes,
    dram_write_bytes, bytes_source, ai, roof_flops_per_s, bound, phase, op)
  VALUES (
    (SELECT name_id FROM kernel_names WHERE name = NEW.name), NEW.device_id,
    NEW.context_id, NEW.stream_id, NEW.grid_x, NEW.grid_y, NEW.grid_z,
    NEW.block_x, NEW.block_y, NEW.block_z, NEW.cluster_x, NEW.cluster_y,
    NEW.cluster_z, NEW.registers_per_thread, NEW.static_shared_memory_bytes,
    NEW.dynamic_shared_memory_bytes, NEW.graph_id, NEW.thread_id,
    NEW.nvtx_path, NEW.shape, NEW.token_count, NEW.precision, NEW.flops,
    NEW.flops_fp64, NEW.flops_fp32, NEW.flops_fp16, NEW.flops_fp64_tc,
    NEW.flops_tf32_tc, NEW.flops_bf16_tc, NEW.flops_fp8_tc,
    NEW.flops_int8_tc, NEW.flops_source, NEW.dram_bytes,
    NEW.dram_read_bytes, NEW.dram_write_bytes, NEW.bytes_source, NEW.ai,
    NEW.roof_flops_per_s, NEW.bound, NEW.phase, NEW.op);
  INSERT INTO kernel_rows (
    kernel_id, run_id, session_id, sig_id, correlation_id, start_ns, end_ns,
    duration_ns, api_start_ns, graph_node_id, gemm_call_id, step_id,
    achieved_flops_per_s, achieved_bytes_per_s, fraction_of_roof)
  VALUES (
    NEW.kernel_id, NEW.run_id, NEW.session_id, last_insert_rowid(),
    NEW.correlation_id, NEW.start_ns, NEW.end_ns, NEW.duration_ns,
    NEW.api_start_ns, NEW.graph_node_id, NEW.gemm_call_id, NEW.step_id,
    NEW.achieved_flops_per_s, NEW.achieved_bytes_per_s,
    NEW.fraction_of_roof);
  INSERT INTO run_kernel_ids (run_id, first_kernel_id, last_kernel_id,
    in_start_order)
  VALUES (NEW.run_id, last_insert_rowid(), last_insert_rowid(), 0)
  ON CONFLICT (run_id) DO UPDATE SET
    first_kernel_id = MIN(first_kernel_id, excluded.first_kernel_id),
    last_kernel_id = MAX(last_kernel_id, excluded.last_kernel_id),
    in_start_order = 0;
END;
)sql";

// kernel_sigs' columns after sig_id, in the order AddKernel binds them
// (schema 9): what a launch shares with the other launches of its
// signature. The columns of kernel_rows before schema 9 of the same names.
constexpr char kKernelSigColumns[] =
    "name_id, device_id, context_id, stream_id, grid_x, grid_y, grid_z, "
    "block_x, block_y, block_z, cluster_x, cluster_y, cluster_z, "
    "registers_per_thread, static_shared_memory_bytes, "
    "dynamic_shared_memory_bytes, graph_id, thread_id, nvtx_path, shape, "
    "token_count, precision, flops, flops_fp64, flops_fp32, flops_fp16, "
    "flops_fp64_tc, flops_tf32_tc, flops_bf16_tc, flops_fp8_tc, "
    "flops_int8_tc, flops_source, dram_bytes, dram_read_bytes, "
    "dram_write_bytes, bytes_source, ai, roof_flops_per_s, bound, phase, op";
constexpr int kKernelSigParams = 41;
// kernel_rows' columns after kernel_id and before sig_id, then after it,
// in the order AddKernel binds them (schema 9): what each launch has of
// its own.
constexpr char kKernelRowHead[] = "run_id, session_id";
constexpr char kKernelRowTail[] =
    "correlation_id, start_ns, end_ns, duration_ns, api_start_ns, "
    "graph_node_id, gemm_call_id, step_id, achieved_flops_per_s, "
    "achieved_bytes_per_s, fraction_of_roof";
constexpr int kKernelRowParams = 14;

// Binds parameters left to right.
class Binder {
 public:
  // Every statement binds all of its parameters, so the previous row's
  // bindings need no clearing.
  explicit Binder(DbStatement* s) : s_(s) { s_->Reset(); }
  explicit Binder(const std::unique_ptr<DbStatement>& s) : Binder(s.get()) {}
  Binder& Int(int64_t v) { s_->BindInt(i_++, v); return *this; }
  Binder& U64(uint64_t v) {
    // Device pointers and ids above 2^63 keep their bits (read back as
    // signed); neither database has an unsigned 64-bit integer.
    return Int(static_cast<int64_t>(v));
  }
  Binder& Real(double v) { s_->BindReal(i_++, v); return *this; }
  // Every text bound here outlives the Step() of its row (names and paths
  // of the joined session, string literals, the local shape string), so
  // SQLite reads it in place instead of copying it.
  Binder& Text(std::string_view v) { s_->BindText(i_++, v); return *this; }
  // Empty text is NULL (unknown), never ''.
  Binder& TextOrNull(std::string_view v) {
    return v.empty() ? Null() : Text(v);
  }
  Binder& Null() { s_->BindNull(i_++); return *this; }
  template <typename T>
  Binder& Opt(const std::optional<T>& v) {
    if (!v) return Null();
    if constexpr (std::is_floating_point_v<T>) return Real(*v);
    else return Int(static_cast<int64_t>(*v));
  }

 private:
  DbStatement* s_;
  int i_ = 1;
};

// A figure source as kernel_aggregates keys it: its class, without the
// counts and spreads a sampled or PM-sampled source states per kernel
// (which would make a group per launch).
std::string_view SourceClass(std::string_view source) {
  if (IsSampledSourceName(source)) return "counters (sampled)";
  if (IsPmSampledSourceName(source)) return "pm-sampling";
  return source;
}

void AppendBytes(std::string* key, const void* p, size_t n) {
  key->append(static_cast<const char*>(p), n);
}

// Length-prefixed, so that no text can end inside another's bytes.
void AppendText(std::string* key, std::string_view v) {
  const uint32_t n = static_cast<uint32_t>(v.size());
  AppendBytes(key, &n, sizeof(n));
  key->append(v);
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How often a long run's aggregates are rewritten between windows: they
// are a few hundred rows, rewritten whole; a crash loses at most this much
// of them (its kernel rows, when kept, are the batches' as before).
constexpr int64_t kAggregatesEveryNs = 1'000'000'000;

}  // namespace

const char* StoreKernelsName(StoreKernels k) {
  switch (k) {
    case StoreKernels::kAll: return "all";
    case StoreKernels::kSampled: return "sampled";
    case StoreKernels::kNone: return "none";
  }
  return "all";
}

StatusOr<StoreKernels> ParseStoreKernels(std::string_view value) {
  if (value == "all") return StoreKernels::kAll;
  if (value == "sampled") return StoreKernels::kSampled;
  if (value == "none") return StoreKernels::kNone;
  return InvalidArgument("--store-kernels " + std::string(value) +
                         ": unknown value; give all (every kernel row), "
                         "sampled (per group the first " +
                         std::to_string(kSampledFirst) + " launches, then 1 in " +
                         std::to_string(kSampledEvery) +
                         ") or none (per-group aggregates only)");
}

Store::~Store() {
  // An atomic run that never finished leaves nothing behind.
  if (in_txn_) (void)(atomic_runs_ ? AbortRun() : Commit());
  // While db_ lives: a PostgreSQL lease is dropped through it.
  lease_.Release();
  twin_lease_.Release();
}

Status Store::Error(const std::string& what, const Status& cause) const {
  return Unavailable(path_ + ": " + what + ": " +
                     (cause.ok() || cause.message().empty()
                          ? (db_ ? db_->ErrorMessage() : "cannot open")
                          : cause.message()) +
                     ": check the store path is a writable rooftrace store");
}

Status Store::Exec(std::string_view sql) {
  const Status s = db_->Exec(sql);
  if (s.ok()) return s;
  return Unavailable(path_ + ": " + s.message() +
                     ": check the store path is a writable rooftrace store");
}

Status Store::Prepare(std::string_view sql,
                      std::unique_ptr<DbStatement>* stmt) {
  StatusOr<std::unique_ptr<DbStatement>> p = db_->Prepare(sql);
  if (!p.ok()) return Error("cannot prepare statement", p.status());
  *stmt = std::move(*p);
  return OkStatus();
}

Status Store::PrepareInsert(Db* db, std::string_view sql,
                            std::string_view id_column,
                            std::unique_ptr<DbStatement>* stmt) {
  StatusOr<std::unique_ptr<DbStatement>> p = db->PrepareInsert(sql, id_column);
  if (!p.ok()) return Error("cannot prepare statement", p.status());
  *stmt = std::move(*p);
  return OkStatus();
}

Status Store::Step(const std::unique_ptr<DbStatement>& stmt,
                   const char* what) {
  const StatusOr<bool> rc = stmt->Step();
  if (!rc.ok()) return WriteFailed(what, rc.status(), stmt.get());
  return OkStatus();
}

Status Store::WriteFailed(const char* what, const Status& cause,
                          DbStatement* stmt) {
  // The database may have rolled the transaction back: ids it held are
  // gone.
  name_ids_.clear();
  sig_ids_.clear();
  ++names_epoch_;
  Status error = Error(what, cause);
  if (stmt != nullptr) stmt->Reset();
  // The whole write goes (a full disk may have rolled back part of it
  // already), so the caller can count what was lost; an atomic run is
  // rolled back by AbortRun().
  if (in_txn_ && !atomic_runs_) {
    if (db_->InTransaction()) (void)db_->Rollback();
    in_txn_ = false;
    kernels_in_txn_ = ranges_in_txn_ = 0;
    pending_kernels_.clear();  // of the write that failed
    for (RunKernelIds& r : run_kernel_ids_) r.in_txn = false;
  }
  return error;
}

StatusOr<int64_t> Store::StepInsert(const std::unique_ptr<DbStatement>& stmt,
                                    const char* what) {
  RT_RETURN_IF_ERROR(Step(stmt, what));
  const std::optional<int64_t> id = stmt->InsertedId();
  if (!id) return Error(what, InternalError("the insert returned no id"));
  return *id;
}

Status Store::Begin() {
  if (in_txn_) return OkStatus();
  const Status s = db_->Begin();
  if (!s.ok()) {
    return Unavailable(path_ + ": " + s.message() +
                       ": check the store path is a writable rooftrace store");
  }
  in_txn_ = true;
  rows_in_txn_ = 0;
  return OkStatus();
}

Status Store::Commit() {
  if (!in_txn_) return OkStatus();
  // A kernel row is in its transaction once it is inserted, and its run's
  // run_kernel_ids row covers it.
  if (Status flushed = FlushKernels(); !flushed.ok()) return flushed;
  if (Status ids = UpdateKernelIds(); !ids.ok()) return ids;
  if (!in_txn_) return OkStatus();
  in_txn_ = false;
  Status s = db_->Commit();  // a failed COMMIT is rolled back
  if (s.ok()) {
    kernels_committed_ += kernels_in_txn_;
    ranges_committed_ += ranges_in_txn_;
  } else {
    s = Unavailable(path_ + ": " + s.message() +
                    ": check the store path is a writable rooftrace store");
  }
  kernels_in_txn_ = ranges_in_txn_ = 0;
  return s;
}

Status Store::CountRow() {
  if (++rows_in_txn_ >= batch_rows_ && !atomic_runs_) {
    RT_RETURN_IF_ERROR(Commit());
    RT_RETURN_IF_ERROR(Begin());
  }
  return OkStatus();
}

// Schema 1's kernels table's columns, in its order: the kernels view's
// first ones.
constexpr char kSchema1KernelColumns[] =
    "kernel_id, run_id, session_id, correlation_id, device_id, context_id, "
    "stream_id, name, demangled, family, start_ns, end_ns, duration_ns, "
    "grid_x, grid_y, grid_z, block_x, block_y, block_z, cluster_x, "
    "cluster_y, cluster_z, registers_per_thread, static_shared_memory_bytes, "
    "dynamic_shared_memory_bytes, graph_id, graph_node_id, thread_id, "
    "api_start_ns, nvtx_path, gemm_call_id, shape, token_count, precision, "
    "flops, flops_fp64, flops_fp32, flops_fp16, flops_fp64_tc, "
    "flops_tf32_tc, flops_bf16_tc, flops_fp8_tc, flops_int8_tc, "
    "flops_source, dram_bytes, dram_read_bytes, dram_write_bytes, "
    "bytes_source, ai, achieved_flops_per_s, achieved_bytes_per_s, "
    "roof_flops_per_s, fraction_of_roof, bound, step_id, phase";

// Schema 1 kept each kernel's names in its row; schema 2 keeps them once in
// kernel_names, with a kernels view of the same columns. All or nothing: a
// failed upgrade leaves the schema 1 store as it was. SQLite only: a
// PostgreSQL store starts at schema 6.
Status Store::MigrateFromSchema1() {
  RT_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  // Another collector opening the same store may have upgraded it while
  // this one waited for the write lock.
  if (SchemaVersion() != 1) return Exec("COMMIT");
  Status st = Exec("ALTER TABLE kernels RENAME TO kernels_schema1");
  if (st.ok()) st = Exec(kSchema);
  if (st.ok()) st = Exec(kKernelsView);
  // The view's trigger splits each row; schema 1's columns are the view's
  // first ones (the later ones are left NULL).
  if (st.ok()) {
    st = Exec(std::string("INSERT INTO kernels (") + kSchema1KernelColumns +
              ") SELECT * FROM kernels_schema1");
  }
  if (st.ok()) st = Exec("DROP TABLE kernels_schema1");
  if (st.ok()) {
    st = Exec("UPDATE schema_info SET value='2' WHERE key='schema_version'");
  }
  if (st.ok()) st = Exec("COMMIT");
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return FailedPrecondition(path_ + ": cannot upgrade the store from schema "
                              "1 (" + st.message() +
                              "); write to a new store");
  }
  fprintf(stderr,
          "%s: %s: store upgraded from schema 1 to 2 (kernel names "
          "moved to kernel_names; the kernels view has the same columns)\n",
          CommandName(), path_.c_str());
  return OkStatus();
}

// Brings a schema `from` store to `from` + 1 with `statements`, in one
// transaction: all or nothing, and a failure names the store and the fix.
// Inside Open()'s setup transaction (PostgreSQL) it is part of that one.
Status Store::UpgradeSchema(int from,
                            const std::vector<const char*>& statements) {
  const bool own_txn = !db_->InTransaction();
  if (own_txn) RT_RETURN_IF_ERROR(Begin());
  in_txn_ = false;  // the upgrade's, not a batch of rows
  // Another writer may have upgraded it while this one waited for the lock.
  if (SchemaVersion() != from) return own_txn ? Exec("COMMIT") : OkStatus();
  Status st = OkStatus();
  for (const char* sql : statements) {
    if (st.ok()) st = Exec(sql);
  }
  if (st.ok()) {
    const std::string bump = "UPDATE schema_info SET value='" +
                             std::to_string(from + 1) +
                             "' WHERE key='schema_version'";
    st = Exec(bump);
  }
  if (st.ok() && own_txn) st = Exec("COMMIT");
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return FailedPrecondition(path_ + ": cannot upgrade the store from schema " +
                              std::to_string(from) + " (" + st.message() +
                              "); write to a new store");
  }
  return OkStatus();
}

// Schema 3 added where a run came from (runs.source_*) and raw per-kernel
// metrics (kernel_metrics).
Status Store::MigrateFromSchema2() {
  return UpgradeSchema(2, {"ALTER TABLE runs ADD COLUMN source_format TEXT",
                           "ALTER TABLE runs ADD COLUMN source_file TEXT",
                           "ALTER TABLE runs ADD COLUMN source_sha256 TEXT",
                           kSchema});
}

// Schema 4 added why a run is incomplete (runs.incomplete_reason).
Status Store::MigrateFromSchema3() {
  return UpgradeSchema(3,
                       {"ALTER TABLE runs ADD COLUMN incomplete_reason TEXT"});
}

// Schema 5 added the SM clock a device's kernels were measured at
// (devices.measured_sm_clock_khz), so that a stored run re-annotated with
// other roofs has them scaled to that clock as its import did.
Status Store::MigrateFromSchema4() {
  return UpgradeSchema(
      4, {"ALTER TABLE devices ADD COLUMN measured_sm_clock_khz INTEGER"});
}

// Schema 6 added the user's labels of a run (run_labels), what `history
// --where` selects runs by. The table is created by kSchema; older runs
// have no labels.
Status Store::MigrateFromSchema5() { return UpgradeSchema(5, {kSchema}); }

// Schema 7 added the framework operator that launched each kernel
// (kernel_rows.op, in the kernels view: `analyze STORE --by op`) and the
// graph node a raw metric is of (kernel_metrics.graph_node_id: a graph
// launch's kernels share its correlation id). SQLite's view and its
// trigger are made again with the column; PostgreSQL's view is replaced
// by kSchema (it has no trigger).
// An older store upgraded through schema 2 or 3 got these tables with the
// columns already (kSchema makes them as they are now).
Status Store::MigrateFromSchema6() {
  std::vector<const char*> statements;
  // Before schema 9's layout (a store upgraded from schema 3 to 6) the view
  // is left as it is: the upgrade to 9 (next) makes it again, and until
  // then readers see it without `op` as before schema 7. In schema 9's
  // layout (an upgrade from schema 1 or 2) `op` is kernel_sigs'.
  const bool slim = db_->HasColumn("kernel_rows", "sig_id");
  if (!slim && !db_->HasColumn("kernel_rows", "op")) {
    statements.push_back("ALTER TABLE kernel_rows ADD COLUMN op TEXT");
  }
  if (!db_->HasColumn("kernel_metrics", "graph_node_id")) {
    statements.push_back(
        "ALTER TABLE kernel_metrics ADD COLUMN graph_node_id INTEGER");
  }
  if (slim && db_->backend() == DbBackend::kSqlite) {
    statements.push_back("DROP TRIGGER IF EXISTS kernels_insert");
    statements.push_back("DROP VIEW IF EXISTS kernels");
  }
  statements.push_back(kSchema);
  if (slim) statements.push_back(kKernelsView);
  return UpgradeSchema(6, statements);
}

// Schema 8 added per-run kernel aggregates (kernel_aggregates, made by
// kSchema) and which kernel rows a run kept (runs.store_kernels). Older
// runs keep every kernel row and have no aggregates (store_kernels NULL):
// readers group their kernels as before.
Status Store::MigrateFromSchema7() {
  std::vector<const char*> statements;
  if (!db_->HasColumn("runs", "store_kernels")) {
    statements.push_back("ALTER TABLE runs ADD COLUMN store_kernels TEXT");
  }
  statements.push_back(kSchema);
  return UpgradeSchema(7, statements);
}

// Schema 9 split each kernel row in two: what a launch shares with every
// launch of its signature (kernel_sigs, stored once) and what is its own
// (kernel_rows, 15 columns), behind a kernels view of the same columns and
// values. An older row becomes one signature of its own (sig_id =
// kernel_id) and a slim row: nothing is deduplicated, nothing changes
// value, and the kernel ids stay. A store whose kernel_rows already has
// sig_id (made by an upgrade from schema 1 or 2 through kSchema) has
// nothing to move.
Status Store::MigrateFromSchema8() {
  std::vector<std::string> statements;
  if (!db_->HasColumn("kernel_rows", "sig_id")) {
    // The view (and SQLite's trigger) read the old table; its index goes
    // (run_kernel_ids replaces it).
    if (db_->backend() == DbBackend::kSqlite) {
      statements.push_back("DROP TRIGGER IF EXISTS kernels_insert");
    }
    statements.push_back("DROP VIEW IF EXISTS kernels");
    statements.push_back("DROP INDEX IF EXISTS kernel_rows_run");
    statements.push_back("ALTER TABLE kernel_rows RENAME TO kernel_rows_v8");
    statements.push_back(kSchema);
    statements.push_back(std::string("INSERT INTO kernel_sigs (sig_id, ") +
                         kKernelSigColumns + ") SELECT kernel_id, " +
                         kKernelSigColumns + " FROM kernel_rows_v8");
    statements.push_back(std::string("INSERT INTO kernel_rows (kernel_id, ") +
                         kKernelRowHead + ", sig_id, " + kKernelRowTail +
                         ") SELECT kernel_id, " + kKernelRowHead +
                         ", kernel_id, " + kKernelRowTail +
                         " FROM kernel_rows_v8");
    statements.push_back("DROP TABLE kernel_rows_v8");
    // Each run's ids; not known to be in start order (readers sort).
    statements.push_back(
        "INSERT INTO run_kernel_ids (run_id, first_kernel_id, "
        "last_kernel_id, in_start_order) SELECT run_id, MIN(kernel_id), "
        "MAX(kernel_id), 0 FROM kernel_rows GROUP BY run_id");
    if (db_->backend() == DbBackend::kPostgres) {
      // Ids given explicitly: the identities go on after the highest.
      for (const char* t : {"kernel_sigs", "kernel_rows"}) {
        const std::string id = t == std::string("kernel_sigs") ? "sig_id"
                                                               : "kernel_id";
        statements.push_back(
            std::string("SELECT setval(pg_get_serial_sequence('") + t +
            "', '" + id + "'), (SELECT COALESCE(MAX(" + id + "), 0) + 1 FROM " +
            t + "), false)");
      }
    }
  }
  statements.push_back(kSchema);
  statements.push_back(kKernelsView);
  std::vector<const char*> texts;
  for (const std::string& sql : statements) texts.push_back(sql.c_str());
  return UpgradeSchema(8, texts);
}

// `tables`: the store's (Db::Tables), as RefuseWhatIsNotAStore read them.
Status Store::RefuseForeignDatabase(const std::vector<std::string>& tables) {
  if (tables.empty()) return OkStatus();  // a new store
  std::string names;
  for (size_t i = 0; i < tables.size() && i < 3; ++i) {
    if (i) names += ", ";
    names += tables[i];
  }
  if (tables.size() > 3) names += ", ...";
  // Our schema_info without its version row yet: a store another rooftrace
  // is creating right now (its tables come first).
  for (const std::string& t : tables) {
    if (t == "schema_info") return OkStatus();
  }
  if (db_->backend() == DbBackend::kPostgres) {
    return InvalidArgument(
        path_ + ": a PostgreSQL database of another program (tables " +
        names +
        "), not a rooftrace store: rooftrace adds its tables only to its own "
        "stores or an empty database; create one (createdb rooftrace) and "
        "name it");
  }
  return InvalidArgument(
      path_ + ": an SQLite database of another program (tables " + names +
      "), not a rooftrace store: rooftrace adds its tables only to its own "
      "stores or a new file; name a new file");
}

Status Store::RefuseWhatIsNotAStore() {
  // Any read of a file that is not SQLite fails with "file is not a
  // database"; nothing is written by it.
  StatusOr<std::vector<std::string>> tables = db_->Tables();
  if (!tables.ok()) {
    return InvalidArgument(path_ + ": not a SQLite store (" +
                           tables.status().message() +
                           "); give a new file name or an existing "
                           "rooftrace store");
  }
  RT_ASSIGN_OR_RETURN(const int version, ReadSchemaVersion());
  if (version > kStoreSchemaVersion) {
    return FailedPrecondition(
        path_ + ": store schema version " + std::to_string(version) +
        " is newer than this rooftrace writes (" +
        std::to_string(kStoreSchemaVersion) +
        "): upgrade rooftrace or write to a new store");
  }
  if (version == 0) return RefuseForeignDatabase(*tables);
  return OkStatus();
}

StatusOr<int> Store::ReadSchemaVersion() {
  // Asked first: on PostgreSQL a failed query would abort the transaction.
  if (!db_->HasColumn("schema_info", "value")) return 0;
  StatusOr<std::unique_ptr<DbStatement>> q = db_->Prepare(
      "SELECT value FROM schema_info WHERE key='schema_version'");
  if (!q.ok()) return 0;
  StatusOr<bool> row = (*q)->Step();
  if (!row.ok() || !*row) return 0;
  return ParseSchemaVersion((*q)->Text(0), path_);
}

int Store::SchemaVersion() {
  // RefuseWhatIsNotAStore refused a version that does not parse before
  // anything asks this.
  StatusOr<int> version = ReadSchemaVersion();
  return version.ok() ? *version : 0;
}

// On a store others write at once (PostgreSQL), names are inserted and
// committed at once on a connection of their own: a name is shared by the
// runs of every writer, and waiting for another writer's batch to commit
// (or deadlocking with it) over a name is not worth the atomicity: a name
// whose kernels were rolled back is harmless.
StatusOr<int64_t> Store::NameId(const KernelRow& k) {
  if (auto it = name_ids_.find(k.name); it != name_ids_.end()) {
    return it->second;
  }
  // A name past the index bound is stored as its head and a hash, on both
  // backends (PostgreSQL would refuse it and with it the whole run).
  const std::string stored = IndexedKernelName(k.name);
  if (stored.size() != k.name.size() && !said_long_name_) {
    said_long_name_ = true;
    fprintf(stderr,
            "%s: %s: a kernel name of %zu bytes is stored as its first "
            "bytes and a hash (\"%s\"): the store indexes names of up to "
            "%zu bytes; the kernel, its figures and its demangled name are kept "
            "whole\n",
            CommandName(), path_.c_str(), k.name.size(),
            stored.substr(stored.rfind("... [")).c_str(),
            kMaxIndexedNameBytes);
  }
  std::optional<int64_t> id;
  for (int attempt = 0; attempt < 2 && !id; ++attempt) {
    Binder(select_name_).Text(stored);
    StatusOr<bool> row = select_name_->Step();
    if (!row.ok()) return Error("cannot look up a kernel name", row.status());
    if (*row) {
      id = select_name_->Int(0);
      break;
    }
    // ON CONFLICT DO NOTHING: another writer inserted it since; look again.
    // demangled is not indexed: it keeps a long name whole when the name
    // has no other readable form.
    Binder(insert_name_)
        .Text(stored)
        .Text(k.demangled.empty() && stored.size() != k.name.size()
                  ? k.name
                  : k.demangled)
        .Text(k.family);
    RT_RETURN_IF_ERROR(Step(insert_name_, "cannot insert a kernel name"));
    id = insert_name_->InsertedId();
  }
  select_name_->Reset();
  if (!id) return Error("cannot insert a kernel name", OkStatus());
  name_ids_.emplace(std::string(k.name), *id);
  return *id;
}

// Test hook: ROOFTRACE_TEST_STORE_PAGE_BUDGET=N lets the store grow by N
// pages only (SQLite's max_page_count), so that tests see what a full disk
// does without root or a small mount.
Status Store::ApplyTestPageBudget() {
  const char* budget = getenv("ROOFTRACE_TEST_STORE_PAGE_BUDGET");
  if (budget == nullptr || *budget == '\0') return OkStatus();
  if (db_->backend() != DbBackend::kSqlite) return OkStatus();
  int64_t pages = 0;
  StatusOr<std::unique_ptr<DbStatement>> q = db_->Prepare("PRAGMA page_count");
  if (q.ok()) {
    StatusOr<bool> row = (*q)->Step();
    if (row.ok() && *row) pages = (*q)->Int(0);
  }
  return Exec("PRAGMA max_page_count=" +
              std::to_string(pages + std::atoll(budget)));
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                             Durability durability) {
  std::unique_ptr<Store> s(new Store());
  s->path_ = StoreDisplayName(path);
  s->lease_path_ = path;
  // Opened without writing (SQLite: no pragma yet): what the file is is
  // judged first, so that a file that is not a rooftrace store (another
  // program's database, an nsys export, not SQLite at all) is refused
  // before anything is written to it and left byte for byte as it was
  // (#29 D3: journal_mode=WAL rewrote its header first).
  RT_ASSIGN_OR_RETURN(s->db_, OpenDbForWrite(path));
  // Writers that may start at once (PostgreSQL) check and create the
  // schema one at a time, in one transaction.
  const bool shared = s->db_->ConcurrentWriters();
  if (shared) {
    RT_RETURN_IF_ERROR(s->Exec("BEGIN"));
    RT_RETURN_IF_ERROR(s->db_->LockSchema());
  }
  RT_RETURN_IF_ERROR(s->RefuseWhatIsNotAStore());
  RT_RETURN_IF_ERROR(
      s->db_->PrepareForWrites(durability == Durability::kScratch));
  // An older schema is brought up to date (a newer one and a foreign
  // database were refused above).
  const int version = s->SchemaVersion();
  if (version == 1) RT_RETURN_IF_ERROR(s->MigrateFromSchema1());
  if (version == 1 || version == 2) {
    RT_RETURN_IF_ERROR(s->MigrateFromSchema2());
  }
  if (version >= 1 && version <= 3) {
    RT_RETURN_IF_ERROR(s->MigrateFromSchema3());
  }
  if (version >= 1 && version <= 4) {
    RT_RETURN_IF_ERROR(s->MigrateFromSchema4());
  }
  if (version >= 1 && version <= 5) {
    RT_RETURN_IF_ERROR(s->MigrateFromSchema5());
  }
  if (version >= 1 && version <= 6) {
    RT_RETURN_IF_ERROR(s->MigrateFromSchema6());
  }
  if (version >= 1 && version <= 7) {
    RT_RETURN_IF_ERROR(s->MigrateFromSchema7());
  }
  if (version >= 1 && version <= 8) {
    RT_RETURN_IF_ERROR(s->MigrateFromSchema8());
  }
  RT_RETURN_IF_ERROR(s->Exec(kSchema));
  RT_RETURN_IF_ERROR(s->Exec(kKernelsView));
  RT_RETURN_IF_ERROR(
      s->Exec("INSERT INTO schema_info VALUES ('schema_version', '" +
              std::to_string(kStoreSchemaVersion) +
              "') ON CONFLICT DO NOTHING"));
  RT_RETURN_IF_ERROR(
      s->Exec(std::string("INSERT INTO schema_info VALUES ('writer', "
                          "'rooftrace ") +
              kRooftraceVersion + "') ON CONFLICT DO NOTHING"));
  if (shared) RT_RETURN_IF_ERROR(s->Exec("COMMIT"));
  RT_RETURN_IF_ERROR(s->ApplyTestPageBudget());

  Db* names = s->db_.get();
  if (shared) {
    RT_ASSIGN_OR_RETURN(s->names_db_, OpenDbForWrite(path));
    RT_RETURN_IF_ERROR(s->names_db_->PrepareForWrites(false));
    names = s->names_db_.get();
  }
  const std::string insert_kernel = std::string("INSERT INTO kernel_rows (") +
                                    kKernelRowHead + ", sig_id, " +
                                    kKernelRowTail + ") VALUES ";
  std::string one_row = "(?";
  for (int i = 1; i < kKernelRowParams; ++i) one_row += ",?";
  one_row += ")";
  RT_RETURN_IF_ERROR(s->Prepare(insert_kernel + one_row, &s->insert_kernel_));
  for (const size_t rows : {kKernelsPerInsert, kKernelsPerInsertOldSqlite}) {
    std::string many_rows = one_row;
    for (size_t i = 1; i < rows; ++i) many_rows += "," + one_row;
    StatusOr<std::unique_ptr<DbStatement>> p =
        s->db_->Prepare(insert_kernel + many_rows);
    // Refused only for its parameters' number (SQLite before 3.32): the
    // smaller one is under every limit.
    if (!p.ok() && rows != kKernelsPerInsertOldSqlite) continue;
    if (!p.ok()) return s->Error("cannot prepare statement", p.status());
    s->insert_kernels_ = std::move(*p);
    s->kernels_per_insert_ = rows;
    break;
  }
  // A run's row opened at the next kernel id (a superset on PostgreSQL,
  // where other writers' rows may come between: readers also ask for the
  // run), and brought to the last one (MAX: the highest id visible).
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO run_kernel_ids (run_id, first_kernel_id, last_kernel_id, "
      "in_start_order) SELECT CAST(? AS BIGINT), COALESCE(MAX(kernel_id), 0) "
      "+ 1, COALESCE(MAX(kernel_id), 0), 1 FROM kernel_rows WHERE true "
      "ON CONFLICT (run_id) DO NOTHING",
      &s->open_kernel_ids_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "UPDATE run_kernel_ids SET last_kernel_id = (SELECT MAX(kernel_id) "
      "FROM kernel_rows), in_start_order = ? WHERE run_id = ?",
      &s->update_kernel_ids_));
  // PostgreSQL takes them by COPY, a round trip and a statement for
  // thousands of rows.
  s->kernels_per_flush_ =
      s->db_->CanCopyRows() ? kKernelsPerCopy : s->kernels_per_insert_;
  s->pending_kernels_.reserve(s->kernels_per_flush_);
  // Signatures are shared by runs as names are: on PostgreSQL, inserted and
  // committed at once on the names' connection (a signature whose kernels
  // were rolled back is harmless).
  std::string insert_sig = std::string("INSERT INTO kernel_sigs (") +
                           kKernelSigColumns + ") VALUES (?";
  for (int i = 1; i < kKernelSigParams; ++i) insert_sig += ",?";
  insert_sig += ")";
  RT_RETURN_IF_ERROR(
      s->PrepareInsert(names, insert_sig, "sig_id", &s->insert_sig_));
  {
    StatusOr<std::unique_ptr<DbStatement>> p =
        names->Prepare("SELECT name_id FROM kernel_names WHERE name=?");
    if (!p.ok()) return s->Error("cannot prepare statement", p.status());
    s->select_name_ = std::move(*p);
  }
  RT_RETURN_IF_ERROR(s->PrepareInsert(
      names,
      "INSERT INTO kernel_names (name, demangled, family) VALUES (?,?,?) "
      "ON CONFLICT (name) DO NOTHING",
      "name_id", &s->insert_name_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO memcpys (run_id, session_id, correlation_id, kind, bytes, "
      "start_ns, end_ns, duration_ns, device_id, context_id, stream_id, "
      "src_kind, dst_kind, thread_id, nvtx_path, achieved_bytes_per_s, "
      "step_id, phase) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &s->insert_memcpy_));
  RT_RETURN_IF_ERROR(s->PrepareInsert(
      s->db_.get(),
      "INSERT INTO gemm_calls (run_id, session_id, call_id, api, m, n, k, "
      "batch, trans_a, trans_b, a_type, b_type, c_type, d_type, "
      "compute_type, lda, ldb, ldc, a_ptr, b_ptr, c_ptr, d_ptr, epilogue, "
      "start_ns, end_ns, thread_id, status, precision, flops, min_bytes, "
      "weight_operand, token_count, kernel_count) VALUES (?,?,?,?,?,?,?,?,?,"
      "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      "gemm_call_id", &s->insert_gemm_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO nvtx_ranges (run_id, session_id, range_id, "
      "parent_range_id, domain, name, kind, depth, start_ns, end_ns, "
      "thread_id, end_thread_id, path) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &s->insert_nvtx_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO steps (run_id, step_id, session_id, start_ns, end_ns, "
      "phase, token_count, boundary, evidence, kernel_count, gemm_count, "
      "gpu_time_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
      &s->insert_step_));
  RT_RETURN_IF_ERROR(s->PrepareInsert(
      s->db_.get(),
      "INSERT INTO sessions (run_id, host, pid, ppid, start_unix_ns, "
      "start_ns, argv, producer_version, mode, counter_passes, packets, "
      "last_sequence, sequence_gaps, goodbye, complete) VALUES (?,?,?,?,?,?,"
      "?,?,?,?,?,?,?,?,?)",
      "session_id", &s->insert_session_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO devices (run_id, session_id, device_id, name, uuid, "
      "chip_name, sm_count, cc_major, cc_minor, core_clock_khz, "
      "memory_clock_khz, memory_bus_width_bits, l2_cache_bytes, "
      "global_memory_bytes, driver_version, measured_sm_clock_khz) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &s->insert_device_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "UPDATE sessions SET packets=?, last_sequence=?, sequence_gaps=?, "
      "goodbye=?, complete=? WHERE session_id=?",
      &s->update_session_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO roofs (run_id, device_id, precision, peak_flops_per_s, "
      "dram_bytes_per_s, ridge_flops_per_byte, source) VALUES (?,?,?,?,?,?,?)",
      &s->insert_roof_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO kernel_metrics (run_id, session_id, correlation_id, name, "
      "value, unit, graph_node_id) VALUES (?,?,?,?,?,?,?)",
      &s->insert_metric_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO run_labels (run_id, key, value) VALUES (?,?,?)",
      &s->insert_label_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "DELETE FROM kernel_aggregates WHERE run_id=?", &s->delete_aggregates_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO kernel_aggregates (run_id, name_id, shape, phase, op, "
      "precision, bound, flops_source, bytes_source, token_count, gemm_call, "
      "launches, time_ns, min_ns, max_ns, flops_launches, flops_time_ns, "
      "flops, bytes_launches, bytes_time_ns, dram_bytes, fraction_weighted, "
      "fraction_time_ns, ai_flops, ai_bytes, above_roof_launches, "
      "above_roof_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
      "?,?,?,?)",
      &s->insert_aggregate_));
  return s;
}

StatusOr<int64_t> Store::BeginRun(const RunRow& run) {
  RT_RETURN_IF_ERROR(Commit());
  kernels_committed_ = ranges_committed_ = 0;
  // An atomic run is one transaction from its row to FinishRun; otherwise
  // the run row and its labels are committed together here, so that no
  // reader sees a labelled run without its labels.
  RT_RETURN_IF_ERROR(Begin());
  std::unique_ptr<DbStatement> st;
  RT_RETURN_IF_ERROR(PrepareInsert(
      db_.get(),
      "INSERT INTO runs (command, host, started_unix_ns, ended_unix_ns, mode, "
      "device_name, roof_source, flops_sources, producer_version, complete, "
      "origin, source_format, source_file, source_sha256, "
      "incomplete_reason, store_kernels) VALUES (?,?,?,NULL,?,?,?,?,?,NULL,?,"
      "?,?,?,NULL,?)",
      "run_id", &st));
  Binder(st)
      .TextOrNull(run.command)
      .TextOrNull(run.host)
      .Opt(run.started_unix_ns)
      .TextOrNull(run.mode)
      .TextOrNull(run.device_name)
      .TextOrNull(run.roof_source)
      .TextOrNull(run.flops_sources)
      .TextOrNull(run.producer_version)
      .TextOrNull(run.origin)
      .TextOrNull(run.source_format)
      .TextOrNull(run.source_file)
      .TextOrNull(run.source_sha256)
      .Text(StoreKernelsName(store_kernels_));
  RT_ASSIGN_OR_RETURN(const int64_t run_id,
                      StepInsert(st, "cannot insert the run"));
  groups_.clear();
  group_index_.clear();
  by_address_.assign(kAddressSlots, AddressSlot());
  aggregates_run_ = run_id;
  aggregates_dirty_ = false;
  for (const auto& [key, value] : run.labels) {
    // Text(): an empty value is stored as '' (the user gave it), not NULL.
    Binder(insert_label_).Int(run_id).Text(key).Text(value);
    RT_RETURN_IF_ERROR(Step(insert_label_, "cannot insert a run label"));
  }
  // Before the run is committed, so that no reader sees it unfinished
  // without its lease. Without one the run reads as before (never
  // finished: in progress or crashed, not told apart).
  if (Status lease = lease_.Take(db_.get(), lease_path_, run_id); !lease.ok()) {
    fprintf(stderr,
            "%s: %s: run %lld is written without its lease (%s): readers "
            "cannot tell it from a crashed one until it ends\n",
            CommandName(), path_.c_str(), static_cast<long long>(run_id),
            lease.message().c_str());
  }
  if (!atomic_runs_) RT_RETURN_IF_ERROR(Commit());
  return run_id;
}

Status Store::AddRoof(const RoofRow& r) {
  RT_RETURN_IF_ERROR(Begin());
  Binder(insert_roof_)
      .Int(r.run_id)
      .Int(r.device_id)
      .Text(r.precision)
      .Real(r.peak_flops_per_s)
      .Real(r.dram_bytes_per_s)
      .Real(r.ridge_flops_per_byte)
      .Text(r.source);
  return Step(insert_roof_, "cannot insert roofs");
}

Status Store::FinishRun(const RunRow& run, const ImportStats& stats) {
  const int64_t run_id = run.run_id;
  RT_RETURN_IF_ERROR(Begin());
  std::unique_ptr<DbStatement> st;
  RT_RETURN_IF_ERROR(Prepare(
      "UPDATE runs SET command=?, host=?, started_unix_ns=?, "
      "ended_unix_ns=?, mode=?, device_name=?, roof_source=?, "
      "flops_sources=?, producer_version=?, complete=?, origin=?, "
      "source_format=?, source_file=?, source_sha256=?, "
      "incomplete_reason=? WHERE run_id=?",
      &st));
  Binder(st)
      .TextOrNull(run.command)
      .TextOrNull(run.host)
      .Opt(run.started_unix_ns)
      .Opt(run.ended_unix_ns)
      .TextOrNull(run.mode)
      .TextOrNull(run.device_name)
      .TextOrNull(run.roof_source)
      .TextOrNull(run.flops_sources)
      .TextOrNull(run.producer_version)
      .Opt(run.complete)
      .TextOrNull(run.origin)
      .TextOrNull(run.source_format)
      .TextOrNull(run.source_file)
      .TextOrNull(run.source_sha256)
      .TextOrNull(run.incomplete_reason)
      .Int(run_id);
  RT_RETURN_IF_ERROR(Step(st, "cannot update the run"));
  if (aggregates_run_ == run_id && aggregates_dirty_) {
    RT_RETURN_IF_ERROR(WriteAggregates(run_id));
  }
  RT_RETURN_IF_ERROR(Prepare(
      "INSERT INTO import_stats (run_id, name, value) VALUES (?,?,?) "
      "ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value",
      &st));
  Status s;
  for (const auto& [name, value] : stats.Named()) {
    Binder(st).Int(run_id).Text(name).U64(value);
    s = Step(st, "cannot write import statistics");
    if (!s.ok()) break;
  }
  RT_RETURN_IF_ERROR(s);
  RT_RETURN_IF_ERROR(FinishReplace(run_id, stats));
  RT_RETURN_IF_ERROR(Commit());
  lease_.Release();
  std::erase_if(run_kernel_ids_, [run_id](const RunKernelIds& r) {
    return r.run_id == run_id && !r.in_txn;
  });
  return OkStatus();
}

StatusOr<int64_t> Store::AddSession(const SessionRow& r,
                                     const std::vector<DeviceRow>& devices) {
  RT_RETURN_IF_ERROR(Begin());
  Binder(insert_session_)
      .Int(r.run_id)
      .TextOrNull(r.host)
      .Int(r.pid)
      .Int(r.ppid)
      .Int(r.start_unix_ns)
      .Int(r.start_ns)
      .TextOrNull(r.argv)
      .TextOrNull(r.producer_version)
      .TextOrNull(r.mode)
      .Int(r.counter_passes)
      .Int(r.packets)
      .Int(r.last_sequence)
      .Int(r.sequence_gaps)
      .Int(r.goodbye ? 1 : 0)
      .Int(r.complete ? 1 : 0);
  RT_ASSIGN_OR_RETURN(const int64_t session_id,
                      StepInsert(insert_session_, "cannot insert a session"));
  for (const DeviceRow& d : devices) {
    Binder(insert_device_)
        .Int(d.run_id)
        .Int(session_id)
        .Int(d.device_id)
        .TextOrNull(d.name)
        .TextOrNull(d.uuid)
        .TextOrNull(d.chip_name)
        .Int(d.sm_count)
        .Int(d.cc_major)
        .Int(d.cc_minor)
        .Int(d.core_clock_khz)
        .Int(d.memory_clock_khz)
        .Int(d.memory_bus_width_bits)
        .Int(d.l2_cache_bytes)
        .Int(d.global_memory_bytes)
        .TextOrNull(d.driver_version)
        .Opt(d.measured_sm_clock_khz > 0
                 ? std::optional<int64_t>(d.measured_sm_clock_khz)
                 : std::nullopt);
    RT_RETURN_IF_ERROR(Step(insert_device_, "cannot insert a device"));
  }
  return session_id;
}

Status Store::UpdateSession(const SessionRow& r) {
  RT_RETURN_IF_ERROR(Begin());
  Binder(update_session_)
      .Int(r.packets)
      .Int(r.last_sequence)
      .Int(r.sequence_gaps)
      .Int(r.goodbye ? 1 : 0)
      .Int(r.complete ? 1 : 0)
      .Int(r.session_id);
  return Step(update_session_, "cannot update a session");
}

StatusOr<int64_t> Store::AddGemmCall(const GemmCallRow& g) {
  RT_RETURN_IF_ERROR(Begin());
  Binder(insert_gemm_)
      .Int(g.run_id)
      .Int(g.session_id)
      .Int(g.call_id)
      .TextOrNull(g.api)
      .Int(g.m).Int(g.n).Int(g.k).Int(g.batch)
      .TextOrNull(g.trans_a)
      .TextOrNull(g.trans_b)
      .Int(g.a_type).Int(g.b_type).Int(g.c_type).Int(g.d_type)
      .Int(g.compute_type)
      .Int(g.lda).Int(g.ldb).Int(g.ldc)
      .Int(g.a_ptr).Int(g.b_ptr).Int(g.c_ptr).Int(g.d_ptr)
      .Int(g.epilogue)
      .Int(g.start_ns).Int(g.end_ns)
      .Int(g.thread_id).Int(g.status)
      .TextOrNull(g.precision)
      .Opt(g.flops)
      .Opt(g.min_bytes)
      .TextOrNull(g.weight_operand)
      .Opt(g.token_count)
      .Int(g.kernel_count);
  RT_ASSIGN_OR_RETURN(const int64_t id,
                      StepInsert(insert_gemm_, "cannot insert a GEMM call"));
  RT_RETURN_IF_ERROR(CountRow());
  return id;
}

Status Store::AddStep(const StepRow& st) {
  RT_RETURN_IF_ERROR(Begin());
  Binder(insert_step_)
      .Int(st.run_id)
      .Int(st.step_id)
      .Int(st.session_id)
      .Int(st.start_ns)
      .Int(st.end_ns)
      .Text(st.phase)
      .Opt(st.token_count)
      .Text(st.boundary)
      .Text(st.evidence)
      .Int(st.kernel_count)
      .Int(st.gemm_count)
      .Int(st.gpu_time_ns);
  RT_RETURN_IF_ERROR(Step(insert_step_, "cannot insert a step"));
  return CountRow();
}

StatusOr<Store::Group*> Store::GroupOf(const KernelRow& k) {
  const std::array<std::string_view, 8> texts = {
      k.name,      k.shape, k.phase,        k.op,
      k.precision, k.bound, k.flops_source, k.bytes_source};
  TextAddresses at;
  for (size_t i = 0; i < texts.size(); ++i) {
    at.data[i] = texts[i].data();
    at.size[i] = static_cast<uint32_t>(texts[i].size());
  }
  at.token = k.token_count.value_or(0);
  at.flags = (k.token_count ? 1 : 0) | (k.gemm_call_id ? 2 : 0);
  // The texts that tell groups apart most (name, shape, operator, token);
  // the rest are compared on a hit.
  const uint64_t h =
      reinterpret_cast<uintptr_t>(at.data[0]) * 0x9E3779B97F4A7C15ULL ^
      reinterpret_cast<uintptr_t>(at.data[1]) * 0xC2B2AE3D27D4EB4FULL ^
      reinterpret_cast<uintptr_t>(at.data[3]) * 0x165667B19E3779F9ULL ^
      static_cast<uint64_t>(at.token) * 0x27D4EB2F165667C5ULL ^
      static_cast<uint64_t>(at.flags);
  if (by_address_.empty()) by_address_.resize(kAddressSlots);
  AddressSlot& slot = by_address_[(h >> 40) & (kAddressSlots - 1)];
  if (slot.group != nullptr && slot.at == at) {
    Group* g = slot.group;
    if (g->name == k.name && g->shape == k.shape && g->phase == k.phase &&
        g->op == k.op && g->precision == k.precision && g->bound == k.bound &&
        // The text itself first: only a sampled source differs from its
        // class.
        (g->flops_source == k.flops_source ||
         g->flops_source == SourceClass(k.flops_source)) &&
        (g->bytes_source == k.bytes_source ||
         g->bytes_source == SourceClass(k.bytes_source)) &&
        g->sums.token_count == k.token_count &&
        g->sums.gemm_call == k.gemm_call_id.has_value()) {
      return g;
    }
  }
  RT_ASSIGN_OR_RETURN(const int64_t name_id, NameId(k));
  const std::string_view flops_source = SourceClass(k.flops_source);
  const std::string_view bytes_source = SourceClass(k.bytes_source);
  std::string& key = key_buf_;
  key.clear();
  const int64_t token = k.token_count.value_or(0);
  const char flags = static_cast<char>(at.flags);
  AppendBytes(&key, &name_id, sizeof(name_id));
  AppendBytes(&key, &token, sizeof(token));
  key += flags;
  for (std::string_view v : {k.shape, k.phase, k.op, k.precision, k.bound,
                             flops_source, bytes_source}) {
    AppendText(&key, v);
  }
  auto it = group_index_.find(std::string_view(key));
  if (it == group_index_.end()) {
    auto g = std::make_unique<Group>();
    g->name_id = name_id;
    g->names_epoch = names_epoch_;
    g->name = k.name;
    g->demangled = k.demangled;
    g->family = k.family;
    g->shape = k.shape;
    g->phase = k.phase;
    g->op = k.op;
    g->precision = k.precision;
    g->bound = k.bound;
    g->flops_source = flops_source;
    g->bytes_source = bytes_source;
    g->sums.run_id = k.run_id;
    g->sums.token_count = k.token_count;
    g->sums.gemm_call = k.gemm_call_id.has_value();
    it = group_index_.emplace(key, groups_.size()).first;
    groups_.push_back(std::move(g));
  }
  slot.at = at;
  slot.group = groups_[it->second].get();
  return slot.group;
}

bool Store::Aggregate(const KernelRow& k, Group* g) {
  KernelAggregateRow& a = g->sums;
  const int64_t t = k.duration_ns;
  a.min_ns = a.launches == 0 ? t : std::min(a.min_ns, t);
  a.max_ns = a.launches == 0 ? t : std::max(a.max_ns, t);
  ++a.launches;
  a.time_ns += t;
  if (k.flops) {
    ++a.flops_launches;
    a.flops_time_ns += t;
    a.flops += static_cast<double>(*k.flops);
  }
  if (k.dram_bytes) {
    ++a.bytes_launches;
    a.bytes_time_ns += t;
    a.dram_bytes += static_cast<double>(*k.dram_bytes);
  }
  if (k.flops && k.dram_bytes) {
    a.ai_flops += static_cast<double>(*k.flops);
    a.ai_bytes += static_cast<double>(*k.dram_bytes);
  }
  if (k.fraction_of_roof) {
    a.fraction_weighted += *k.fraction_of_roof * static_cast<double>(t);
    a.fraction_time_ns += t;
    // Above its roof (report/report.h AboveRoof): counted apart there.
    if (*k.fraction_of_roof > 1.0) {
      ++a.above_roof_launches;
      a.above_roof_ns += t;
    }
  }
  aggregates_dirty_ = true;
  switch (store_kernels_) {
    case StoreKernels::kAll: return true;
    case StoreKernels::kNone: return false;
    case StoreKernels::kSampled:
      return a.launches <= kSampledFirst || a.launches % kSampledEvery == 0;
  }
  return true;
}

Status Store::WriteAggregates(int64_t run_id) {
  Binder(delete_aggregates_).Int(run_id);
  RT_RETURN_IF_ERROR(
      Step(delete_aggregates_, "cannot replace the run's aggregates"));
  for (const std::unique_ptr<Group>& g : groups_) {
    const KernelAggregateRow& a = g->sums;
    // Looked up again (cached): a failed write may have rolled back the
    // name the group was first given.
    KernelRow named;
    named.name = g->name;
    named.demangled = g->demangled;
    named.family = g->family;
    RT_ASSIGN_OR_RETURN(g->name_id, NameId(named));
    g->names_epoch = names_epoch_;
    Binder(insert_aggregate_)
        .Int(run_id)
        .Int(g->name_id)
        .TextOrNull(g->shape)
        .TextOrNull(g->phase)
        .TextOrNull(g->op)
        .TextOrNull(g->precision)
        .Text(g->bound)
        .Text(g->flops_source)
        .Text(g->bytes_source)
        .Opt(a.token_count)
        .Int(a.gemm_call ? 1 : 0)
        .Int(a.launches)
        .Int(a.time_ns)
        .Int(a.min_ns)
        .Int(a.max_ns)
        .Int(a.flops_launches)
        .Int(a.flops_time_ns)
        .Real(a.flops)
        .Int(a.bytes_launches)
        .Int(a.bytes_time_ns)
        .Real(a.dram_bytes)
        .Real(a.fraction_weighted)
        .Int(a.fraction_time_ns)
        .Real(a.ai_flops)
        .Real(a.ai_bytes)
        .Int(a.above_roof_launches)
        .Int(a.above_roof_ns);
    RT_RETURN_IF_ERROR(
        Step(insert_aggregate_, "cannot insert the run's aggregates"));
  }
  aggregates_dirty_ = false;
  aggregates_written_ns_ = SteadyNowNs();
  return OkStatus();
}

namespace {

// The numbers of `k`'s signature (kernel_sigs' numeric columns) into `n`:
// device, context, stream (0-2), grid, block, cluster (3-11), registers and
// shared memory (12-14), graph (15), thread (16), token count (17), FLOPs
// (18) and per stored class (19-26), DRAM bytes, read, written (27-29),
// and the bits of ai and roof_flops_per_s (30, 31).
template <typename Numbers>
void SigNumbersOf(const KernelRow& k, Numbers* n) {
  auto put = [n](int i, std::optional<int64_t> v) {
    if (!v) return;
    n->v[i] = *v;
    n->present |= uint64_t{1} << i;
  };
  auto put_real = [n](int i, std::optional<double> v) {
    if (!v) return;
    std::memcpy(&n->v[i], &*v, sizeof(double));
    n->present |= uint64_t{1} << i;
  };
  put(0, k.device_id);
  put(1, k.context_id);
  put(2, k.stream_id);
  for (int i = 0; i < 3; ++i) {
    put(3 + i, k.grid[i]);
    put(6 + i, k.block[i]);
    put(9 + i, k.cluster[i]);
  }
  put(12, k.registers_per_thread);
  put(13, k.static_shared_memory_bytes);
  put(14, k.dynamic_shared_memory_bytes);
  put(15, k.graph_id);
  put(16, k.thread_id);
  put(17, k.token_count);
  put(18, k.flops);
  // The per-precision columns are schema 1's eight; the classes added
  // since share one with their nearest (docs/store.md): bf16's FLOPs are
  // in flops_fp16 (16-bit float on CUDA cores), fp4-tensor's in flops_fp8_tc
  // (8-bit and narrower on tensor cores); `precision` says which.
  std::array<std::optional<int64_t>, kNumStoredPrecisions> columns{};
  for (int p = 1; p < kNumPrecisions; ++p) {
    const std::optional<int64_t>& f = k.flops_by_precision[p];
    if (!f) continue;
    std::optional<int64_t>& c = columns[StoredPrecisionColumn(p)];
    c = c.value_or(0) + *f;
  }
  for (int c = 1; c < kNumStoredPrecisions; ++c) put(18 + c, columns[c]);
  put(27, k.dram_bytes);
  put(28, k.dram_read_bytes);
  put(29, k.dram_write_bytes);
  put_real(30, k.ai);
  put_real(31, k.roof_flops_per_s);
}

}  // namespace

StatusOr<int64_t> Store::SigOf(const KernelRow& k, Group* g) {
  if (g->names_epoch != names_epoch_) {
    RT_ASSIGN_OR_RETURN(g->name_id, NameId(k));
    g->names_epoch = names_epoch_;
  }
  SigNumbers n;
  SigNumbersOf(k, &n);
  for (const RecentSig& s : g->sigs) {
    if (s.sig_id != 0 && s.names_epoch == names_epoch_ && s.numbers == n &&
        s.nvtx_path == k.nvtx_path && s.flops_source == k.flops_source &&
        s.bytes_source == k.bytes_source) {
      return s.sig_id;
    }
  }
  // The group's texts are k's (GroupOf checked them) but for the sources'
  // exact text and the NVTX path.
  std::string& key = sig_key_buf_;
  key.clear();
  AppendBytes(&key, &g->name_id, sizeof(g->name_id));
  AppendBytes(&key, &n, sizeof(n));
  for (std::string_view v : {k.shape, k.phase, k.op, k.precision, k.bound,
                             k.flops_source, k.bytes_source, k.nvtx_path}) {
    AppendText(&key, v);
  }
  int64_t sig_id = 0;
  if (auto it = sig_ids_.find(std::string_view(key)); it != sig_ids_.end()) {
    sig_id = it->second;
  } else {
    Binder b(insert_sig_);
    b.Int(g->name_id);
    auto number = [&](int i) {
      if (n.present & (uint64_t{1} << i)) {
        b.Int(n.v[i]);
      } else {
        b.Null();
      }
    };
    for (int i = 0; i <= 16; ++i) number(i);
    b.TextOrNull(k.nvtx_path).TextOrNull(k.shape);
    number(17);
    b.TextOrNull(k.precision);
    for (int i = 18; i <= 26; ++i) number(i);
    b.Text(k.flops_source);
    for (int i = 27; i <= 29; ++i) number(i);
    b.Text(k.bytes_source).Opt(k.ai).Opt(k.roof_flops_per_s).Text(k.bound)
        .TextOrNull(k.phase).TextOrNull(k.op);
    RT_ASSIGN_OR_RETURN(sig_id,
                        StepInsert(insert_sig_, "cannot insert a kernel "
                                                "signature"));
    if (sig_ids_.size() >= kMaxSigIds) sig_ids_.clear();
    sig_ids_.emplace(key, sig_id);
  }
  RecentSig& s = g->sigs[g->next_sig++ % g->sigs.size()];
  s.numbers = n;
  s.nvtx_path = k.nvtx_path;
  s.flops_source = k.flops_source;
  s.bytes_source = k.bytes_source;
  s.sig_id = sig_id;
  s.names_epoch = names_epoch_;
  return sig_id;
}

Status Store::AddKernel(const KernelRow& k) {
  RT_RETURN_IF_ERROR(Begin());
  RT_ASSIGN_OR_RETURN(Group* const group, GroupOf(k));
  // Every kernel counts in its group; only the kept ones get a row.
  if (!Aggregate(k, group)) return OkStatus();
  RT_ASSIGN_OR_RETURN(const int64_t sig_id, SigOf(k, group));
  // Readers order a run's kernels by start, NULL first, then by id: rows
  // written in that order need no sort.
  RunKernelIds& ids = KernelIdsOf(k.run_id);
  if (ids.any && ids.last_start &&
      (!k.start_ns || *k.start_ns < *ids.last_start)) {
    ids.in_order = false;
  }
  ids.any = true;
  ids.last_start = k.start_ns;
  PendingKernel& p = pending_kernels_.emplace_back();
  p.run_id = k.run_id;
  p.session_id = k.session_id;
  p.sig_id = sig_id;
  p.correlation_id = k.correlation_id;
  p.start_ns = k.start_ns;
  p.end_ns = k.end_ns;
  p.duration_ns = k.duration_ns;
  p.api_start_ns = k.api_start_ns;
  p.graph_node_id = k.graph_node_id;
  p.gemm_call_id = k.gemm_call_id;
  p.step_id = k.step_id;
  p.achieved_flops_per_s = k.achieved_flops_per_s;
  p.achieved_bytes_per_s = k.achieved_bytes_per_s;
  p.fraction_of_roof = k.fraction_of_roof;
  if (pending_kernels_.size() >= kernels_per_flush_) {
    RT_RETURN_IF_ERROR(FlushKernels());
  }
  ++kernels_in_txn_;
  return CountRow();
}

namespace {

template <typename Row>
void BindKernel(Binder* b, const Row& p) {
  b->Int(p.run_id).Int(p.session_id).Int(p.sig_id)
      .Opt(p.correlation_id)
      .Opt(p.start_ns).Opt(p.end_ns).Int(p.duration_ns)
      .Opt(p.api_start_ns).Int(p.graph_node_id)
      .Opt(p.gemm_call_id)
      .Opt(p.step_id)
      .Opt(p.achieved_flops_per_s).Opt(p.achieved_bytes_per_s)
      .Opt(p.fraction_of_roof);
}

}  // namespace

Store::RunKernelIds& Store::KernelIdsOf(int64_t run_id) {
  for (RunKernelIds& r : run_kernel_ids_) {
    if (r.run_id == run_id) return r;
  }
  RunKernelIds& r = run_kernel_ids_.emplace_back();
  r.run_id = run_id;
  return r;
}

Status Store::UpdateKernelIds() {
  for (RunKernelIds& r : run_kernel_ids_) {
    if (!r.in_txn) continue;
    Binder(update_kernel_ids_).Int(r.in_order ? 1 : 0).Int(r.run_id);
    RT_RETURN_IF_ERROR(
        Step(update_kernel_ids_, "cannot record a run's kernel ids"));
    r.in_txn = false;
  }
  return OkStatus();
}

Status Store::FlushKernels() {
  if (pending_kernels_.empty()) return OkStatus();
  // Each run's run_kernel_ids row, opened (at the next id) before its first
  // rows of this transaction.
  int64_t opened = 0;
  for (const PendingKernel& p : pending_kernels_) {
    if (p.run_id == opened) continue;
    opened = p.run_id;
    RunKernelIds& ids = KernelIdsOf(p.run_id);
    if (ids.in_txn) continue;
    Binder(open_kernel_ids_).Int(p.run_id);
    RT_RETURN_IF_ERROR(
        Step(open_kernel_ids_, "cannot record a run's kernel ids"));
    ids.in_txn = true;
  }
  if (db_->CanCopyRows()) {
    std::vector<DbCell>& cells = copy_cells_;
    cells.clear();
    auto add = [&cells](auto v) {
      DbCell& c = cells.emplace_back();
      using T = decltype(v);
      if constexpr (std::is_same_v<T, int64_t>) {
        c.type = DbType::kInt;
        c.i = v;
      } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
        if (v) {
          c.type = DbType::kInt;
          c.i = *v;
        }
      } else {
        if (v) {
          c.type = DbType::kReal;
          c.r = *v;
        }
      }
    };
    for (const PendingKernel& p : pending_kernels_) {
      add(p.run_id); add(p.session_id); add(p.sig_id);
      add(p.correlation_id); add(p.start_ns); add(p.end_ns);
      add(p.duration_ns); add(p.api_start_ns); add(p.graph_node_id);
      add(p.gemm_call_id); add(p.step_id); add(p.achieved_flops_per_s);
      add(p.achieved_bytes_per_s); add(p.fraction_of_roof);
    }
    pending_kernels_.clear();
    const Status copied =
        db_->CopyRows("kernel_rows",
                      std::string(kKernelRowHead) + ", sig_id, " +
                          kKernelRowTail,
                      kKernelRowParams, cells);
    if (!copied.ok()) return WriteFailed("cannot insert kernels", copied);
    return OkStatus();
  }
  size_t done = 0;
  const size_t n = pending_kernels_.size();
  Status st;
  while (st.ok() && n - done >= kernels_per_insert_) {
    Binder b(insert_kernels_);
    for (size_t i = 0; i < kernels_per_insert_; ++i) {
      BindKernel(&b, pending_kernels_[done + i]);
    }
    st = Step(insert_kernels_, "cannot insert kernels");
    done += kernels_per_insert_;
  }
  for (; st.ok() && done < n; ++done) {
    Binder b(insert_kernel_);
    BindKernel(&b, pending_kernels_[done]);
    st = Step(insert_kernel_, "cannot insert a kernel");
  }
  // Inserted, or lost with the write Step() rolled back.
  pending_kernels_.clear();
  return st;
}

Status Store::AddMemcpy(const MemcpyRow& m) {
  RT_RETURN_IF_ERROR(Begin());
  Binder(insert_memcpy_)
      .Int(m.run_id).Int(m.session_id).Opt(m.correlation_id)
      .Text(m.kind).Int(m.bytes)
      .Opt(m.start_ns).Opt(m.end_ns).Int(m.duration_ns)
      .Opt(m.device_id).Opt(m.context_id).Opt(m.stream_id)
      .TextOrNull(m.src_kind)
      .TextOrNull(m.dst_kind)
      .Opt(m.thread_id)
      .TextOrNull(m.nvtx_path)
      .Opt(m.achieved_bytes_per_s)
      .Opt(m.step_id)
      .TextOrNull(m.phase);
  RT_RETURN_IF_ERROR(Step(insert_memcpy_, "cannot insert a copy"));
  return CountRow();
}

Status Store::AddNvtx(const NvtxRow& r) {
  RT_RETURN_IF_ERROR(Begin());
  Binder(insert_nvtx_)
      .Int(r.run_id).Int(r.session_id).Int(r.range_id)
      .Opt(r.parent_range_id)
      .TextOrNull(r.domain).TextOrNull(r.name)
      .Text(r.kind)
      .Opt(r.depth).Opt(r.start_ns).Opt(r.end_ns)
      .Opt(r.thread_id).Opt(r.end_thread_id)
      .TextOrNull(r.path);
  RT_RETURN_IF_ERROR(Step(insert_nvtx_, "cannot insert an NVTX range"));
  ++ranges_in_txn_;
  return CountRow();
}

Status Store::AddKernelMetric(const KernelMetricRow& m) {
  // Without kernel rows their raw counters have nothing to belong to.
  if (store_kernels_ == StoreKernels::kNone) return OkStatus();
  RT_RETURN_IF_ERROR(Begin());
  Binder(insert_metric_)
      .Int(m.run_id)
      .Int(m.session_id)
      .Int(m.correlation_id)
      .Text(m.name)
      .Real(m.value)
      .TextOrNull(m.unit)
      .Opt(m.graph_node_id != 0 ? std::optional<int64_t>(m.graph_node_id)
                                : std::nullopt);
  RT_RETURN_IF_ERROR(Step(insert_metric_, "cannot insert a kernel metric"));
  return CountRow();
}

RowNeeds Store::Needs() const {
  RowNeeds needs;
  if (store_kernels_ == StoreKernels::kNone) {
    // Aggregates read none of a kernel's launch details or raw counters.
    needs.kernel_details = false;
    needs.kernel_metrics = false;
  }
  return needs;
}

Status Store::EndWrite() {
  // A long run's aggregates are brought up to date with its windows, at
  // most once a second (a few hundred rows, rewritten whole).
  if (aggregates_dirty_ && aggregates_run_ != 0 &&
      SteadyNowNs() - aggregates_written_ns_ >= kAggregatesEveryNs) {
    RT_RETURN_IF_ERROR(Begin());
    RT_RETURN_IF_ERROR(WriteAggregates(aggregates_run_));
  }
  RT_RETURN_IF_ERROR(atomic_runs_ ? OkStatus() : Commit());
  kernels_committed_ = ranges_committed_ = 0;  // the next write starts
  return OkStatus();
}

void Store::KeptOfFailedWrite(uint64_t* kernels, uint64_t* ranges) const {
  *kernels = kernels_committed_;
  *ranges = ranges_committed_;
}

Status Store::AbortRun() {
  if (!in_txn_) return OkStatus();
  in_txn_ = false;
  kernels_in_txn_ = ranges_in_txn_ = 0;
  pending_kernels_.clear();
  for (RunKernelIds& r : run_kernel_ids_) r.in_txn = false;
  name_ids_.clear();  // the names and signatures it inserted are gone too
  sig_ids_.clear();
  ++names_epoch_;
  groups_.clear();     // and so is the run
  group_index_.clear();
  by_address_.clear();
  aggregates_dirty_ = false;
  const Status rolled_back = Exec("ROLLBACK");
  lease_.Release();
  return rolled_back;
}

StatusOr<std::unique_ptr<RunRecorder>> CreateStoreRecorder(
    const RecorderOptions& options, const std::string& store_path,
    Store::Durability durability, StoreKernels store_kernels) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                      Store::Open(store_path, durability));
  store->set_store_kernels(store_kernels);
  return RunRecorder::Create(options, std::move(store));
}

}  // namespace rooftrace
