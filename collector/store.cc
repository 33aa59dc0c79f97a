#include "collector/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "rooftrace_version.h"

namespace rooftrace {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY, command TEXT, host TEXT,
  started_unix_ns INTEGER, ended_unix_ns INTEGER, mode TEXT,
  device_name TEXT, roof_source TEXT, flops_sources TEXT,
  producer_version TEXT, complete INTEGER, origin TEXT);
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
  global_memory_bytes INTEGER, driver_version TEXT);
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
CREATE TABLE IF NOT EXISTS kernel_rows (
  kernel_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  correlation_id INTEGER, device_id INTEGER, context_id INTEGER,
  stream_id INTEGER, name_id INTEGER REFERENCES kernel_names(name_id),
  start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER,
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  cluster_x INTEGER, cluster_y INTEGER, cluster_z INTEGER,
  registers_per_thread INTEGER,
  static_shared_memory_bytes INTEGER, dynamic_shared_memory_bytes INTEGER,
  graph_id INTEGER, graph_node_id INTEGER,
  thread_id INTEGER, api_start_ns INTEGER, nvtx_path TEXT,
  gemm_call_id INTEGER REFERENCES gemm_calls(gemm_call_id),
  shape TEXT, token_count INTEGER, precision TEXT, flops INTEGER,
  flops_fp64 INTEGER, flops_fp32 INTEGER, flops_fp16 INTEGER,
  flops_fp64_tc INTEGER, flops_tf32_tc INTEGER, flops_bf16_tc INTEGER,
  flops_fp8_tc INTEGER, flops_int8_tc INTEGER,
  flops_source TEXT, dram_bytes INTEGER, dram_read_bytes INTEGER,
  dram_write_bytes INTEGER, bytes_source TEXT, ai REAL,
  achieved_flops_per_s REAL, achieved_bytes_per_s REAL,
  roof_flops_per_s REAL, fraction_of_roof REAL, bound TEXT,
  step_id INTEGER, phase TEXT);
CREATE INDEX IF NOT EXISTS kernel_rows_run ON kernel_rows(run_id, start_ns);
-- What readers query: the columns of schema 1's kernels table, in its order.
CREATE VIEW IF NOT EXISTS kernels AS SELECT
  r.kernel_id, r.run_id, r.session_id, r.correlation_id, r.device_id,
  r.context_id, r.stream_id, n.name, n.demangled, n.family,
  r.start_ns, r.end_ns, r.duration_ns, r.grid_x, r.grid_y, r.grid_z,
  r.block_x, r.block_y, r.block_z, r.cluster_x, r.cluster_y, r.cluster_z,
  r.registers_per_thread, r.static_shared_memory_bytes,
  r.dynamic_shared_memory_bytes, r.graph_id, r.graph_node_id, r.thread_id,
  r.api_start_ns, r.nvtx_path, r.gemm_call_id, r.shape, r.token_count,
  r.precision, r.flops, r.flops_fp64, r.flops_fp32, r.flops_fp16,
  r.flops_fp64_tc, r.flops_tf32_tc, r.flops_bf16_tc, r.flops_fp8_tc,
  r.flops_int8_tc, r.flops_source, r.dram_bytes, r.dram_read_bytes,
  r.dram_write_bytes, r.bytes_source, r.ai, r.achieved_flops_per_s,
  r.achieved_bytes_per_s, r.roof_flops_per_s, r.fraction_of_roof, r.bound,
  r.step_id, r.phase
  FROM kernel_rows r LEFT JOIN kernel_names n ON n.name_id = r.name_id;
-- Rows written through the view land in the two tables (a NULL name stays
-- NULL); the collector writes kernel_rows directly.
CREATE TRIGGER IF NOT EXISTS kernels_insert INSTEAD OF INSERT ON kernels BEGIN
  INSERT OR IGNORE INTO kernel_names (name, demangled, family)
    SELECT NEW.name, NEW.demangled, NEW.family WHERE NEW.name IS NOT NULL;
  INSERT INTO kernel_rows (
    kernel_id, run_id, session_id, correlation_id, device_id, context_id,
    stream_id, name_id, start_ns, end_ns, duration_ns, grid_x, grid_y,
    grid_z, block_x, block_y, block_z, cluster_x, cluster_y, cluster_z,
    registers_per_thread, static_shared_memory_bytes,
    dynamic_shared_memory_bytes, graph_id, graph_node_id, thread_id,
    api_start_ns, nvtx_path, gemm_call_id, shape, token_count, precision,
    flops, flops_fp64, flops_fp32, flops_fp16, flops_fp64_tc, flops_tf32_tc,
    flops_bf16_tc, flops_fp8_tc, flops_int8_tc, flops_source, dram_bytes,
    dram_read_bytes, dram_write_bytes, bytes_source, ai,
    achieved_flops_per_s, achieved_bytes_per_s, roof_flops_per_s,
    fraction_of_roof, bound, step_id, phase)
  VALUES (
    NEW.kernel_id, NEW.run_id, NEW.session_id, NEW.correlation_id,
    NEW.device_id, NEW.context_id, NEW.stream_id,
    (SELECT name_id FROM kernel_names WHERE name = NEW.name), NEW.start_ns,
    NEW.end_ns, NEW.duration_ns, NEW.grid_x, NEW.grid_y, NEW.grid_z,
    NEW.block_x, NEW.block_y, NEW.block_z, NEW.cluster_x, NEW.cluster_y,
    NEW.cluster_z, NEW.registers_per_thread, NEW.static_shared_memory_bytes,
    NEW.dynamic_shared_memory_bytes, NEW.graph_id, NEW.graph_node_id,
    NEW.thread_id, NEW.api_start_ns, NEW.nvtx_path, NEW.gemm_call_id,
    NEW.shape, NEW.token_count, NEW.precision, NEW.flops, NEW.flops_fp64,
    NEW.flops_fp32, NEW.flops_fp16, NEW.flops_fp64_tc, NEW.flops_tf32_tc,
    NEW.flops_bf16_tc, NEW.flops_fp8_tc, NEW.flops_int8_tc,
    NEW.flops_source, NEW.dram_bytes, NEW.dram_read_bytes,
    NEW.dram_write_bytes, NEW.bytes_source, NEW.ai,
    NEW.achieved_flops_per_s, NEW.achieved_bytes_per_s,
    NEW.roof_flops_per_s, NEW.fraction_of_roof, NEW.bound, NEW.step_id,
    NEW.phase);
END;
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
CREATE TABLE IF NOT EXISTS steps (
  run_id INTEGER NOT NULL, step_id INTEGER NOT NULL, session_id INTEGER,
  start_ns INTEGER, end_ns INTEGER, phase TEXT, token_count INTEGER,
  boundary TEXT, evidence TEXT, kernel_count INTEGER, gemm_count INTEGER,
  gpu_time_ns INTEGER, PRIMARY KEY (run_id, step_id));
)sql";

// kernel_rows' columns after kernel_id, in the order WriteSession binds them.
constexpr char kKernelRowColumns[] =
    "run_id, session_id, correlation_id, device_id, context_id, stream_id, "
    "name_id, start_ns, end_ns, duration_ns, grid_x, grid_y, grid_z, "
    "block_x, block_y, block_z, cluster_x, cluster_y, cluster_z, "
    "registers_per_thread, static_shared_memory_bytes, "
    "dynamic_shared_memory_bytes, graph_id, graph_node_id, thread_id, "
    "api_start_ns, nvtx_path, gemm_call_id, shape, token_count, precision, "
    "flops, flops_fp64, flops_fp32, flops_fp16, flops_fp64_tc, "
    "flops_tf32_tc, flops_bf16_tc, flops_fp8_tc, flops_int8_tc, "
    "flops_source, dram_bytes, dram_read_bytes, dram_write_bytes, "
    "bytes_source, ai, achieved_flops_per_s, achieved_bytes_per_s, "
    "roof_flops_per_s, fraction_of_roof, bound, step_id, phase";
constexpr int kKernelRowParams = 53;

// Binds parameters left to right.
class Binder {
 public:
  // Every statement binds all of its parameters, so the previous row's
  // bindings need no clearing.
  explicit Binder(sqlite3_stmt* s) : s_(s) { sqlite3_reset(s_); }
  Binder& Int(int64_t v) { sqlite3_bind_int64(s_, i_++, v); return *this; }
  Binder& U64(uint64_t v) {
    // Device pointers and ids above 2^63 keep their bits (read back as
    // signed); SQLite has no unsigned integer.
    return Int(static_cast<int64_t>(v));
  }
  Binder& Real(double v) { sqlite3_bind_double(s_, i_++, v); return *this; }
  // SQLITE_STATIC: every text bound here outlives the sqlite3_step() of its
  // row (names and paths of the joined session, string literals, the local
  // shape string), so SQLite reads it in place instead of copying it.
  Binder& Text(std::string_view v) {
    sqlite3_bind_text(s_, i_++, v.data(), static_cast<int>(v.size()),
                      SQLITE_STATIC);
    return *this;
  }
  // Empty text is NULL (unknown), never ''.
  Binder& TextOrNull(std::string_view v) {
    return v.empty() ? Null() : Text(v);
  }
  Binder& Null() { sqlite3_bind_null(s_, i_++); return *this; }
  template <typename T>
  Binder& Opt(const std::optional<T>& v) {
    if (!v) return Null();
    if constexpr (std::is_floating_point_v<T>) return Real(*v);
    else return Int(static_cast<int64_t>(*v));
  }

 private:
  sqlite3_stmt* s_;
  int i_ = 1;
};

std::string_view CopyKindName(int k) {
  switch (k) {
    case wire::COPY_HTOD: return "htod";
    case wire::COPY_DTOH: return "dtoh";
    case wire::COPY_DTOD: return "dtod";
    case wire::COPY_HTOH: return "htoh";
    case wire::COPY_PTOP: return "ptop";
    case wire::COPY_MEMSET: return "memset";
    default: return "unknown";
  }
}

std::string_view MemoryKindName(int k) {
  switch (k) {
    case wire::MEMORY_PAGEABLE: return "pageable";
    case wire::MEMORY_PINNED: return "pinned";
    case wire::MEMORY_DEVICE: return "device";
    case wire::MEMORY_ARRAY: return "array";
    case wire::MEMORY_MANAGED: return "managed";
    default: return "";
  }
}

std::string_view TransposeName(int t) {
  switch (t) {
    case wire::TRANSPOSE_N: return "n";
    case wire::TRANSPOSE_T: return "t";
    case wire::TRANSPOSE_C: return "c";
    default: return "";
  }
}

std::string_view GemmApiName(int a) {
  switch (a) {
    case wire::GEMM_API_SGEMM: return "cublasSgemm";
    case wire::GEMM_API_DGEMM: return "cublasDgemm";
    case wire::GEMM_API_HGEMM: return "cublasHgemm";
    case wire::GEMM_API_GEMM_EX: return "cublasGemmEx";
    case wire::GEMM_API_SGEMM_STRIDED_BATCHED: return "cublasSgemmStridedBatched";
    case wire::GEMM_API_DGEMM_STRIDED_BATCHED: return "cublasDgemmStridedBatched";
    case wire::GEMM_API_HGEMM_STRIDED_BATCHED: return "cublasHgemmStridedBatched";
    case wire::GEMM_API_GEMM_STRIDED_BATCHED_EX: return "cublasGemmStridedBatchedEx";
    case wire::GEMM_API_SGEMM_BATCHED: return "cublasSgemmBatched";
    case wire::GEMM_API_DGEMM_BATCHED: return "cublasDgemmBatched";
    case wire::GEMM_API_HGEMM_BATCHED: return "cublasHgemmBatched";
    case wire::GEMM_API_GEMM_BATCHED_EX: return "cublasGemmBatchedEx";
    case wire::GEMM_API_LT_MATMUL: return "cublasLtMatmul";
    default: return "";
  }
}

}  // namespace

Store::~Store() {
  if (in_txn_) (void)Commit();
  for (sqlite3_stmt* s :
       {insert_kernel_, select_name_, insert_name_, insert_memcpy_, insert_gemm_, insert_nvtx_,
        insert_step_, insert_session_, insert_device_, update_session_}) {
    sqlite3_finalize(s);
  }
  if (db_ != nullptr) sqlite3_close(db_);
}

Status Store::Error(const std::string& what) const {
  return Unavailable(path_ + ": " + what + ": " +
                     (db_ ? sqlite3_errmsg(db_) : "cannot open") +
                     ": check the store path is a writable rooftrace store");
}

Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Unavailable(path_ + ": " + msg +
                       ": check the store path is a writable rooftrace store");
  }
  return OkStatus();
}

Status Store::Prepare(const char* sql, sqlite3_stmt** stmt) {
  if (sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr) != SQLITE_OK) {
    return Error("cannot prepare statement");
  }
  return OkStatus();
}

Status Store::Step(sqlite3_stmt* stmt, const char* what) {
  const int rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    // SQLite may have rolled the transaction back: ids it held are gone.
    name_ids_.clear();
    return Error(what);
  }
  return OkStatus();
}

Status Store::Begin() {
  if (in_txn_) return OkStatus();
  RT_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  in_txn_ = true;
  rows_in_txn_ = 0;
  return OkStatus();
}

Status Store::Commit() {
  if (!in_txn_) return OkStatus();
  in_txn_ = false;
  return Exec("COMMIT");
}

Status Store::CountRow() {
  if (++rows_in_txn_ >= batch_rows_) {
    RT_RETURN_IF_ERROR(Commit());
    RT_RETURN_IF_ERROR(Begin());
  }
  return OkStatus();
}

// Schema 1 kept each kernel's names in its row; schema 2 keeps them once in
// kernel_names, with a kernels view of the same columns. All or nothing: a
// failed upgrade leaves the schema 1 store as it was.
Status Store::MigrateFromSchema1() {
  RT_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  // Another collector opening the same store may have upgraded it while
  // this one waited for the write lock.
  {
    sqlite3_stmt* q = nullptr;
    int version = 0;
    if (sqlite3_prepare_v2(db_,
                           "SELECT value FROM schema_info WHERE "
                           "key='schema_version'",
                           -1, &q, nullptr) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
      version = sqlite3_column_int(q, 0);
    }
    sqlite3_finalize(q);
    if (version != 1) return Exec("COMMIT");
  }
  Status st = Exec("ALTER TABLE kernels RENAME TO kernels_schema1");
  if (st.ok()) st = Exec(kSchema);
  // The view's trigger splits each row; schema 1's columns are the view's.
  if (st.ok()) st = Exec("INSERT INTO kernels SELECT * FROM kernels_schema1");
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
          "rooftrace: %s: store upgraded from schema 1 to 2 (kernel names "
          "moved to kernel_names; the kernels view has the same columns)\n",
          path_.c_str());
  return OkStatus();
}

StatusOr<int64_t> Store::NameId(const NameInfo& name) {
  if (auto it = name_ids_.find(name.name); it != name_ids_.end()) {
    return it->second;
  }
  int64_t id = 0;
  Binder(select_name_).Text(name.name);
  const int rc = sqlite3_step(select_name_);
  if (rc == SQLITE_ROW) {
    id = sqlite3_column_int64(select_name_, 0);
  } else if (rc != SQLITE_DONE) {
    return Error("cannot look up a kernel name");
  } else {
    Binder(insert_name_).Text(name.name).Text(name.demangled).Text(name.family);
    RT_RETURN_IF_ERROR(Step(insert_name_, "cannot insert a kernel name"));
    id = sqlite3_last_insert_rowid(db_);
  }
  sqlite3_reset(select_name_);
  name_ids_.emplace(name.name, id);
  return id;
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                             Durability durability) {
  std::unique_ptr<Store> s(new Store());
  s->path_ = path;
  if (sqlite3_open_v2(path.c_str(), &s->db_,
                      // NOMUTEX: the owning RunRecorder serialises every
                      // call, so SQLite's own locking is pure cost.
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                          SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    return s->Error("cannot open the store");
  }
  sqlite3_busy_timeout(s->db_, 5000);
  // A file that is not SQLite fails here with "file is not a database".
  const bool scratch = durability == Durability::kScratch;
  // 64 KiB pages (a new file only; an existing store keeps its own): a
  // fraction of the page writes and B-tree splits of 4 KiB pages. Ingest of
  // a 910 k-kernel trace 3.92 -> 3.44 s, its analyze 1.16 -> 1.05 s.
  RT_RETURN_IF_ERROR(s->Exec("PRAGMA page_size=65536"));
  Status wal =
      s->Exec(scratch ? "PRAGMA journal_mode=OFF" : "PRAGMA journal_mode=WAL");
  if (!wal.ok()) {
    return InvalidArgument(path + ": not a SQLite store (" + wal.message() +
                           "); give a new file name or an existing rooftrace "
                           "store");
  }
  // NORMAL in WAL: a commit survives a crash of the collector (the WAL is
  // written before COMMIT returns); only a power loss may lose the last
  // commits. A 64 MiB page cache keeps the kernels index in memory while a
  // batch is written, and checkpoints every 16 MiB of WAL (256 pages)
  // instead of 4 MiB rewrite hot index pages less often.
  // A scratch store writes each page once and never syncs: about half the
  // time of an analyze of a .rft (21.7 s -> 12.1 s on 1.8 M kernels).
  RT_RETURN_IF_ERROR(s->Exec(scratch ? "PRAGMA synchronous=OFF"
                                     : "PRAGMA synchronous=NORMAL"));
  RT_RETURN_IF_ERROR(s->Exec("PRAGMA cache_size=-65536"));
  RT_RETURN_IF_ERROR(s->Exec("PRAGMA wal_autocheckpoint=256"));
  // A newer major version is refused before anything is written; an older
  // one is brought up to date.
  int version = 0;
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(s->db_,
                         "SELECT value FROM schema_info WHERE key='schema_version'",
                         -1, &q, nullptr) == SQLITE_OK) {
    if (sqlite3_step(q) == SQLITE_ROW) version = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
  }
  if (version > kStoreSchemaVersion) {
    return FailedPrecondition(
        path + ": store schema version " + std::to_string(version) +
        " is newer than this rooftrace writes (" +
        std::to_string(kStoreSchemaVersion) +
        "): upgrade rooftrace or write to a new store");
  }
  if (version == 1) RT_RETURN_IF_ERROR(s->MigrateFromSchema1());
  RT_RETURN_IF_ERROR(s->Exec(kSchema));
  RT_RETURN_IF_ERROR(s->Exec(
      ("INSERT OR IGNORE INTO schema_info VALUES ('schema_version', '" +
       std::to_string(kStoreSchemaVersion) + "')")
          .c_str()));
  RT_RETURN_IF_ERROR(s->Exec(
      (std::string("INSERT OR IGNORE INTO schema_info VALUES ('writer', "
                   "'rooftrace ") + kRooftraceVersion + "')").c_str()));

  std::string insert_kernel = std::string("INSERT INTO kernel_rows (") +
                              kKernelRowColumns + ") VALUES (?";
  for (int i = 1; i < kKernelRowParams; ++i) insert_kernel += ",?";
  insert_kernel += ")";
  RT_RETURN_IF_ERROR(s->Prepare(insert_kernel.c_str(), &s->insert_kernel_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "SELECT name_id FROM kernel_names WHERE name=?", &s->select_name_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO kernel_names (name, demangled, family) VALUES (?,?,?)",
      &s->insert_name_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO memcpys (run_id, session_id, correlation_id, kind, bytes, "
      "start_ns, end_ns, duration_ns, device_id, context_id, stream_id, "
      "src_kind, dst_kind, thread_id, nvtx_path, achieved_bytes_per_s, "
      "step_id, phase) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &s->insert_memcpy_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO gemm_calls (run_id, session_id, call_id, api, m, n, k, "
      "batch, trans_a, trans_b, a_type, b_type, c_type, d_type, "
      "compute_type, lda, ldb, ldc, a_ptr, b_ptr, c_ptr, d_ptr, epilogue, "
      "start_ns, end_ns, thread_id, status, precision, flops, min_bytes, "
      "weight_operand, token_count, kernel_count) VALUES (?,?,?,?,?,?,?,?,?,"
      "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &s->insert_gemm_));
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
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO sessions (run_id, host, pid, ppid, start_unix_ns, "
      "start_ns, argv, producer_version, mode, counter_passes, packets, "
      "last_sequence, sequence_gaps, goodbye, complete) VALUES (?,?,?,?,?,?,"
      "?,?,?,?,?,?,?,?,?)",
      &s->insert_session_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "INSERT INTO devices (run_id, session_id, device_id, name, uuid, "
      "chip_name, sm_count, cc_major, cc_minor, core_clock_khz, "
      "memory_clock_khz, memory_bus_width_bits, l2_cache_bytes, "
      "global_memory_bytes, driver_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
      "?,?,?)",
      &s->insert_device_));
  RT_RETURN_IF_ERROR(s->Prepare(
      "UPDATE sessions SET packets=?, last_sequence=?, sequence_gaps=?, "
      "goodbye=?, complete=? WHERE session_id=?",
      &s->update_session_));
  return s;
}

StatusOr<int64_t> Store::BeginRun(const RunRow& run) {
  RT_RETURN_IF_ERROR(Commit());
  sqlite3_stmt* st = nullptr;
  RT_RETURN_IF_ERROR(Prepare(
      "INSERT INTO runs (command, host, started_unix_ns, ended_unix_ns, mode, "
      "device_name, roof_source, flops_sources, producer_version, complete, "
      "origin) VALUES (?,?,?,NULL,?,?,?,?,?,NULL,?)",
      &st));
  Binder(st)
      .TextOrNull(run.command)
      .TextOrNull(run.host)
      .Opt(run.started_unix_ns ? std::optional<uint64_t>(run.started_unix_ns)
                               : std::nullopt)
      .TextOrNull(run.mode)
      .TextOrNull(run.device_name)
      .TextOrNull(run.roof_source)
      .TextOrNull(run.flops_sources)
      .TextOrNull(run.producer_version)
      .TextOrNull(run.origin);
  Status s = Step(st, "cannot insert the run");
  sqlite3_finalize(st);
  RT_RETURN_IF_ERROR(s);
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status Store::AddRoofs(int64_t run_id, uint32_t device_id, const Roofs& roofs) {
  if (!roofs.known()) return OkStatus();
  RT_RETURN_IF_ERROR(Begin());
  sqlite3_stmt* st = nullptr;
  RT_RETURN_IF_ERROR(Prepare(
      "INSERT INTO roofs (run_id, device_id, precision, peak_flops_per_s, "
      "dram_bytes_per_s, ridge_flops_per_byte, source) VALUES (?,?,?,?,?,?,?)",
      &st));
  Status result;
  for (int p = 1; p < kNumPrecisions; ++p) {
    const double peak = roofs.peak_flops_per_s[p];
    if (peak <= 0) continue;
    const auto prec = static_cast<Precision>(p);
    Binder(st)
        .Int(run_id)
        .Int(device_id)
        .Text(PrecisionKey(prec))
        .Real(peak)
        .Real(roofs.dram_bytes_per_s)
        .Real(roofs.Ridge(prec))
        .Text(roofs.kind);
    result = Step(st, "cannot insert roofs");
    if (!result.ok()) break;
  }
  sqlite3_finalize(st);
  RT_RETURN_IF_ERROR(result);
  return Commit();
}

Status Store::FinishRun(int64_t run_id, const RunRow& run,
                        const ImportStats& stats) {
  RT_RETURN_IF_ERROR(Begin());
  sqlite3_stmt* st = nullptr;
  RT_RETURN_IF_ERROR(Prepare(
      "UPDATE runs SET command=?, host=?, started_unix_ns=?, "
      "ended_unix_ns=?, mode=?, device_name=?, roof_source=?, "
      "flops_sources=?, producer_version=?, complete=?, origin=? "
      "WHERE run_id=?",
      &st));
  auto opt_ns = [](uint64_t v) {
    return v ? std::optional<uint64_t>(v) : std::nullopt;
  };
  Binder(st)
      .TextOrNull(run.command)
      .TextOrNull(run.host)
      .Opt(opt_ns(run.started_unix_ns))
      .Opt(opt_ns(run.ended_unix_ns))
      .TextOrNull(run.mode)
      .TextOrNull(run.device_name)
      .TextOrNull(run.roof_source)
      .TextOrNull(run.flops_sources)
      .TextOrNull(run.producer_version)
      .Int(run.complete ? 1 : 0)
      .TextOrNull(run.origin)
      .Int(run_id);
  Status s = Step(st, "cannot update the run");
  sqlite3_finalize(st);
  RT_RETURN_IF_ERROR(s);
  RT_RETURN_IF_ERROR(Prepare(
      "INSERT OR REPLACE INTO import_stats (run_id, name, value) VALUES "
      "(?,?,?)",
      &st));
  for (const auto& [name, value] : stats.Named()) {
    Binder(st).Int(run_id).Text(name).U64(value);
    s = Step(st, "cannot write import statistics");
    if (!s.ok()) break;
  }
  sqlite3_finalize(st);
  RT_RETURN_IF_ERROR(s);
  return Commit();
}

StatusOr<int64_t> Store::InsertSession(int64_t run_id, const Session& session) {
  const SessionHeader& h = session.header();
  Binder(insert_session_)
      .Int(run_id)
      .TextOrNull(h.host)
      .Int(h.pid)
      .Int(h.ppid)
      .U64(h.start_unix_ns)
      .U64(h.start_ns)
      .TextOrNull(h.argv)
      .TextOrNull(h.producer_version)
      .TextOrNull(h.mode)
      .Int(h.counter_passes)
      .U64(session.packets())
      .U64(session.last_sequence())
      .U64(session.sequence_gaps())
      .Int(session.has_goodbye() ? 1 : 0)
      .Int(session.Complete() ? 1 : 0);
  RT_RETURN_IF_ERROR(Step(insert_session_, "cannot insert a session"));
  const int64_t session_id = sqlite3_last_insert_rowid(db_);
  for (const wire::Device& d : session.devices()) {
    Binder(insert_device_)
        .Int(run_id)
        .Int(session_id)
        .Int(d.device_id())
        .TextOrNull(d.name())
        .TextOrNull(d.uuid())
        .TextOrNull(d.chip_name())
        .Int(d.sm_count())
        .Int(d.compute_capability_major())
        .Int(d.compute_capability_minor())
        .U64(d.core_clock_khz())
        .U64(d.memory_clock_khz())
        .Int(d.memory_bus_width_bits())
        .U64(d.l2_cache_bytes())
        .U64(d.global_memory_bytes())
        .TextOrNull(d.driver_version());
    RT_RETURN_IF_ERROR(Step(insert_device_, "cannot insert a device"));
  }
  return session_id;
}

Status Store::WriteSession(int64_t run_id, Session* session_ptr,
                           const JoinedSession& j, const WriteScope* scope) {
  RT_RETURN_IF_ERROR(Begin());
  const Session& session = *session_ptr;
  int64_t session_id = session_ptr->flushed().session_row;
  if (session_id == 0) {
    RT_ASSIGN_OR_RETURN(session_id, InsertSession(run_id, session));
    session_ptr->flushed().session_row = session_id;
  } else if (scope == nullptr) {
    // The last write of a session stored in windows: its totals are final.
    Binder(update_session_)
        .U64(session.packets())
        .U64(session.last_sequence())
        .U64(session.sequence_gaps())
        .Int(session.has_goodbye() ? 1 : 0)
        .Int(session.Complete() ? 1 : 0)
        .Int(session_id);
    RT_RETURN_IF_ERROR(Step(update_session_, "cannot update a session"));
  }
  // Step ids are unique per run: continue after the run's last one.
  int64_t step_base = 0;
  {
    sqlite3_stmt* q = nullptr;
    RT_RETURN_IF_ERROR(Prepare(
        "SELECT COALESCE(MAX(step_id), 0) FROM steps WHERE run_id=?", &q));
    sqlite3_bind_int64(q, 1, run_id);
    if (sqlite3_step(q) == SQLITE_ROW) step_base = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
  }
  auto step_id = [&](int s) {
    return s >= 0 ? std::optional<int64_t>(step_base + 1 + s) : std::nullopt;
  };
  auto step_phase = [&](int s) -> std::string_view {
    return s >= 0 ? std::string_view(j.steps[s].phase) : std::string_view();
  };
  // Rows in scope: everything, or the settled prefix of a flush.
  for (size_t i = 0; i < StepsInScope(scope, j.steps.size()); ++i) {
    const StepInfo& st = j.steps[i];
    Binder(insert_step_)
        .Int(run_id)
        .Int(step_base + 1 + static_cast<int64_t>(i))
        .Int(session_id)
        .U64(st.start_ns)
        .U64(st.end_ns)
        .Text(st.phase)
        .Opt(st.token_count >= 0 ? std::optional<int64_t>(st.token_count)
                                 : std::nullopt)
        .Text(st.boundary)
        .Text(st.evidence)
        .U64(st.kernel_count)
        .U64(st.gemm_count)
        .U64(st.gpu_time_ns);
    RT_RETURN_IF_ERROR(Step(insert_step_, "cannot insert a step"));
    RT_RETURN_IF_ERROR(CountRow());
  }

  std::vector<int64_t> gemm_row(j.gemms.size(), 0);
  for (size_t i = 0; i < j.gemms.size(); ++i) {
    if (scope && !scope->gemms[i]) continue;
    const JoinedGemm& jg = j.gemms[i];
    const GemmRecord& g = *jg.gemm;
    Binder(insert_gemm_)
        .Int(run_id)
        .Int(session_id)
        .U64(g.call_id)
        .TextOrNull(GemmApiName(g.api))
        .Int(g.m).Int(g.n).Int(g.k).Int(g.batch > 0 ? g.batch : 1)
        .TextOrNull(TransposeName(g.trans_a))
        .TextOrNull(TransposeName(g.trans_b))
        .Int(g.a_type).Int(g.b_type).Int(g.c_type).Int(g.d_type)
        .Int(g.compute_type)
        .Int(g.lda).Int(g.ldb).Int(g.ldc)
        .U64(g.a_ptr).U64(g.b_ptr).U64(g.c_ptr).U64(g.d_ptr)
        .Int(g.epilogue)
        .U64(g.start_ns).U64(g.end_ns)
        .Int(g.thread_id).Int(g.status)
        .TextOrNull(jg.precision == Precision::kUnknown
                        ? std::string_view()
                        : PrecisionKey(jg.precision))
        .Opt(jg.flops ? std::optional<uint64_t>(jg.flops) : std::nullopt)
        .Opt(jg.min_bytes ? std::optional<uint64_t>(jg.min_bytes)
                          : std::nullopt)
        .TextOrNull(jg.weight == 1 ? "a" : jg.weight == 2 ? "b" : "")
        .Opt(jg.token_count >= 0 ? std::optional<int64_t>(jg.token_count)
                                 : std::nullopt)
        .U64(jg.kernel_count);
    RT_RETURN_IF_ERROR(Step(insert_gemm_, "cannot insert a GEMM call"));
    gemm_row[i] = sqlite3_last_insert_rowid(db_);
    RT_RETURN_IF_ERROR(CountRow());
  }

  std::string shape;
  std::vector<int64_t> name_row(j.names.size(), 0);
  for (const JoinedKernel& jk : j.kernels) {
    if (!InScope(scope, jk)) continue;
    const KernelRecord& k = *jk.kernel;
    const NameInfo& name = j.names[jk.name];
    const KernelFacts& f = jk.facts;
    const Annotation& a = jk.annotation;
    const JoinedGemm* g = jk.gemm >= 0 ? &j.gemms[jk.gemm] : nullptr;
    shape.clear();
    if (g) shape = GemmShapeText(*g->gemm);
    if (name_row[jk.name] == 0) {
      RT_ASSIGN_OR_RETURN(name_row[jk.name], NameId(name));
    }
    Binder b(insert_kernel_);
    b.Int(run_id).Int(session_id).U64(k.correlation_id)
        .Int(k.device_id).Int(k.context_id).Int(k.stream_id)
        .Int(name_row[jk.name])
        .U64(k.start_ns).U64(k.end_ns).U64(f.duration_ns)
        .Int(k.grid[0]).Int(k.grid[1]).Int(k.grid[2])
        .Int(k.block[0]).Int(k.block[1]).Int(k.block[2])
        .Int(k.cluster[0]).Int(k.cluster[1]).Int(k.cluster[2])
        .Int(k.registers_per_thread)
        .Int(k.static_shared_memory_bytes).Int(k.dynamic_shared_memory_bytes)
        .Int(k.graph_id).U64(k.graph_node_id);
    if (jk.launch) {
      b.Int(jk.launch->thread_id).U64(jk.launch->api_start_ns);
    } else {
      b.Null().Null();
    }
    if (jk.nvtx_path >= 0) b.Text(j.paths[jk.nvtx_path]); else b.Null();
    if (g && gemm_row[jk.gemm] != 0)
      b.Int(gemm_row[jk.gemm]);
    else
      b.Null();
    b.TextOrNull(shape);
    b.Opt(g && g->token_count >= 0 ? std::optional<int64_t>(g->token_count)
                                   : std::nullopt);
    b.TextOrNull(a.precision == Precision::kUnknown
                     ? std::string_view()
                     : PrecisionKey(a.precision));
    b.Opt(a.flops);
    for (int p = 1; p < kNumPrecisions; ++p) {
      if (f.flops_source == Source::kNone) {
        b.Null();
      } else {
        b.U64(f.flops[p]);
      }
    }
    b.Text(SourceName(f.flops_source));
    if (f.bytes_source != Source::kNone) b.U64(f.dram_bytes); else b.Null();
    if (jk.counters) {
      b.U64(jk.counters->dram_read_bytes).U64(jk.counters->dram_write_bytes);
    } else {
      b.Null().Null();
    }
    b.Text(SourceName(f.bytes_source));
    b.Opt(a.ai).Opt(a.achieved_flops_per_s).Opt(a.achieved_bytes_per_s)
        .Opt(a.roof_flops_per_s).Opt(a.fraction_of_roof)
        .Text(BoundName(a.bound))
        .Opt(step_id(jk.step))
        .TextOrNull(step_phase(jk.step));
    RT_RETURN_IF_ERROR(Step(insert_kernel_, "cannot insert a kernel"));
    RT_RETURN_IF_ERROR(CountRow());
  }

  for (size_t i = 0; i < j.memcpys.size(); ++i) {
    if (scope && !scope->memcpys[i]) continue;
    const JoinedMemcpy& jm = j.memcpys[i];
    const MemcpyRecord& m = *jm.memcpy;
    const uint64_t d = m.end_ns > m.start_ns ? m.end_ns - m.start_ns : 0;
    Binder b(insert_memcpy_);
    b.Int(run_id).Int(session_id).U64(m.correlation_id)
        .Text(CopyKindName(m.kind)).U64(m.bytes)
        .U64(m.start_ns).U64(m.end_ns).U64(d)
        .Int(m.device_id).Int(m.context_id).Int(m.stream_id)
        .TextOrNull(MemoryKindName(m.src_kind))
        .TextOrNull(MemoryKindName(m.dst_kind));
    if (jm.launch) b.Int(jm.launch->thread_id); else b.Null();
    if (jm.nvtx_path >= 0) b.Text(j.paths[jm.nvtx_path]); else b.Null();
    if (d > 0) b.Real(static_cast<double>(m.bytes) * 1e9 / static_cast<double>(d));
    else b.Null();
    b.Opt(step_id(jm.step)).TextOrNull(step_phase(jm.step));
    RT_RETURN_IF_ERROR(Step(insert_memcpy_, "cannot insert a copy"));
    RT_RETURN_IF_ERROR(CountRow());
  }

  for (size_t i = 0; i < j.nvtx.size(); ++i) {
    if (scope && !scope->nvtx[i]) continue;
    const JoinedNvtx& jn = j.nvtx[i];
    const NvtxRecord& r = *jn.range;
    Binder b(insert_nvtx_);
    b.Int(run_id).Int(session_id).U64(r.range_id);
    if (r.parent_range_id) b.U64(r.parent_range_id); else b.Null();
    b.TextOrNull(jn.domain).TextOrNull(jn.name)
        .Text(r.kind == wire::RANGE_START_END ? "start_end" : "push_pop")
        .Int(r.depth).U64(r.start_ns);
    if (r.end_ns) b.U64(r.end_ns); else b.Null();
    b.Int(r.thread_id).Int(r.end_thread_id);
    if (jn.path >= 0) b.Text(j.paths[jn.path]); else b.Null();
    RT_RETURN_IF_ERROR(Step(insert_nvtx_, "cannot insert an NVTX range"));
    RT_RETURN_IF_ERROR(CountRow());
  }
  return Commit();
}

}  // namespace rooftrace
