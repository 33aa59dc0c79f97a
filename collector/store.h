// The SQLite run store of docs/store.md: creates or opens the file (WAL,
// 64 KiB pages for a new one), checks its schema version (upgrading a
// schema 1 store in place), and writes runs, sessions, devices, roofs,
// import statistics, kernels (each name once, in kernel_names), copies, GEMM
// calls, NVTX ranges and steps in batched transactions.
//
// Owned by one RunRecorder; not thread-safe (one sqlite3 connection; the
// recorder serialises calls). The trap: rows of one session are committed
// in batches of `batch_rows`; a crash loses at most the batch in flight, and
// a reopened store appends new runs after the old ones.
#ifndef ROOFTRACE_COLLECTOR_STORE_H_
#define ROOFTRACE_COLLECTOR_STORE_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "collector/import_stats.h"
#include "collector/join.h"
#include "model/roof_model.h"
#include "collector/session.h"

struct sqlite3;
struct sqlite3_stmt;

namespace rooftrace {

inline constexpr int kStoreSchemaVersion = 2;

// The rows of a joined session that one flush stores (collector/flush.h):
// kernels and steps up to `last_step`, and the GEMM calls, copies and NVTX
// ranges flagged.
struct WriteScope {
  int last_step = -1;
  std::vector<char> gemms;    // per JoinedSession::gemms
  std::vector<char> memcpys;  // per JoinedSession::memcpys
  std::vector<char> nvtx;     // per JoinedSession::nvtx
};

// Whether a write with `scope` (nullptr: the whole session) covers a kernel:
// a flush writes the kernels of its settled steps only.
inline bool InScope(const WriteScope* scope, const JoinedKernel& k) {
  return scope == nullptr || (k.step >= 0 && k.step <= scope->last_step);
}

// How many of the joined session's first `steps` steps a write covers.
inline size_t StepsInScope(const WriteScope* scope, size_t steps) {
  return scope == nullptr
             ? steps
             : std::min(steps, static_cast<size_t>(scope->last_step + 1));
}

struct RunRow {
  std::string command;
  std::string host;
  uint64_t started_unix_ns = 0;
  uint64_t ended_unix_ns = 0;
  std::string mode;
  std::string device_name;
  std::string roof_source;
  std::string flops_sources;
  std::string producer_version;
  bool complete = false;
  std::string origin;
};

// Where a RunRecorder puts the rows of a run: the SQLite Store, or a
// consumer that aggregates them in memory (the analyzer reading a .rft).
// Called with the recorder's lock held, one call at a time.
class RunWriter {
 public:
  virtual ~RunWriter() = default;
  // Starts a run; returns its run_id.
  virtual StatusOr<int64_t> BeginRun(const RunRow& run) = 0;
  // The final run row and import statistics.
  virtual Status FinishRun(int64_t run_id, const RunRow& run,
                           const ImportStats& stats) = 0;
  // The roofs one device of the run was annotated with (once per device).
  virtual Status AddRoofs(int64_t run_id, uint32_t device_id,
                          const Roofs& roofs) = 0;
  // One session and what was joined from it: everything (`scope` nullptr:
  // the session ended) or the settled prefix a flush chose. Called again
  // for the same session after each window; kernels outside the scope's
  // steps belong to a later call.
  virtual Status WriteSession(int64_t run_id, Session* session,
                              const JoinedSession& joined,
                              const WriteScope* scope) = 0;
};

class Store : public RunWriter {
 public:
  ~Store() override;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // How a store survives a crash of its writer.
  enum class Durability {
    // WAL, synchronous=NORMAL: a commit survives a collector crash.
    kDurable,
    // No journal, no syncs: for a temporary store read once and deleted
    // (the analyzer's ingest of a .rft); a crash leaves it unusable.
    kScratch,
  };
  // Creates or opens the store at `path`. Errors name the file and the fix
  // (not SQLite, a newer schema, not writable).
  static StatusOr<std::unique_ptr<Store>> Open(
      const std::string& path, Durability durability = Durability::kDurable);

  // Inserts a run row (committed at once) and returns its run_id.
  StatusOr<int64_t> BeginRun(const RunRow& run) override;
  // Rewrites the run row, its import statistics and its roofs.
  Status FinishRun(int64_t run_id, const RunRow& run,
                   const ImportStats& stats) override;
  // Records the roofs one device of the run was annotated with (once per
  // device id).
  Status AddRoofs(int64_t run_id, uint32_t device_id,
                  const Roofs& roofs) override;

  // Writes one session and what was joined from it: everything (`scope`
  // nullptr: the session ended) or the settled prefix a flush chose. The
  // session row is inserted by the first write (its id kept in
  // session->flushed()) and brought up to date by the final one.
  Status WriteSession(int64_t run_id, Session* session,
                      const JoinedSession& joined,
                      const WriteScope* scope = nullptr) override;

  void set_batch_rows(size_t n) { batch_rows_ = n; }
  const std::string& path() const { return path_; }
  sqlite3* db() { return db_; }

 private:
  Store() = default;
  Status Exec(const char* sql);
  Status Prepare(const char* sql, sqlite3_stmt** stmt);
  Status Step(sqlite3_stmt* stmt, const char* what);
  // The session row and its devices; returns the row id.
  StatusOr<int64_t> InsertSession(int64_t run_id, const Session& session);
  Status Begin();
  Status Commit();
  // Commits and reopens the transaction every batch_rows_ rows.
  Status CountRow();
  Status Error(const std::string& what) const;
  Status MigrateFromSchema1();
  // The kernel_names row of a name, inserted on first use.
  StatusOr<int64_t> NameId(const NameInfo& name);

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_kernel_ = nullptr;
  sqlite3_stmt* select_name_ = nullptr;
  sqlite3_stmt* insert_name_ = nullptr;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const {
      return std::hash<std::string_view>()(v);
    }
  };
  // kernel_names ids of the names written so far (cleared when a statement
  // fails, since SQLite may have rolled back the rows they point at).
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>
      name_ids_;
  sqlite3_stmt* insert_memcpy_ = nullptr;
  sqlite3_stmt* insert_gemm_ = nullptr;
  sqlite3_stmt* insert_nvtx_ = nullptr;
  sqlite3_stmt* insert_step_ = nullptr;
  sqlite3_stmt* insert_session_ = nullptr;
  sqlite3_stmt* insert_device_ = nullptr;
  sqlite3_stmt* update_session_ = nullptr;
  size_t batch_rows_ = 20000;
  size_t rows_in_txn_ = 0;
  bool in_txn_ = false;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_STORE_H_
