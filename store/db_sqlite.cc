// The SQLite backend of store/db.h: the embedded default store, one file.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

#include "store/db.h"
#include "store/store_reader.h"

namespace rooftrace {
namespace {

class SqliteStatement : public DbStatement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, bool returns_id)
      : db_(db), stmt_(stmt), returns_id_(returns_id) {}
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  void BindInt(int i, int64_t v) override { sqlite3_bind_int64(stmt_, i, v); }
  void BindReal(int i, double v) override {
    sqlite3_bind_double(stmt_, i, v);
  }
  // SQLITE_STATIC: the caller keeps the text alive until Step() returns
  // (db.h), so SQLite reads it in place instead of copying it.
  void BindText(int i, std::string_view v) override {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()),
                      SQLITE_STATIC);
  }
  void BindNull(int i) override { sqlite3_bind_null(stmt_, i); }

  StatusOr<bool> Step() override {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) {
      if (returns_id_) {
        inserted_ = sqlite3_changes(db_) > 0
                        ? std::optional<int64_t>(sqlite3_last_insert_rowid(db_))
                        : std::nullopt;
      }
      return false;
    }
    return Unavailable(sqlite3_errmsg(db_));
  }
  void Reset() override {
    sqlite3_reset(stmt_);
    inserted_.reset();
  }
  std::optional<int64_t> InsertedId() override { return inserted_; }

  int ColumnCount() override { return sqlite3_column_count(stmt_); }
  std::string ColumnName(int col) override {
    return sqlite3_column_name(stmt_, col);
  }
  DbType ColumnType(int col) override {
    switch (sqlite3_column_type(stmt_, col)) {
      case SQLITE_NULL: return DbType::kNull;
      case SQLITE_INTEGER: return DbType::kInt;
      case SQLITE_FLOAT: return DbType::kReal;
      default: return DbType::kText;
    }
  }
  int64_t Int(int col) override { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) override { return sqlite3_column_double(stmt_, col); }
  std::string_view Text(int col) override {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    if (!p) return {};
    return std::string_view(reinterpret_cast<const char*>(p),
                            static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  bool returns_id_;
  std::optional<int64_t> inserted_;
};

class SqliteDb : public Db {
 public:
  SqliteDb(sqlite3* db, std::string name) : db_(db), name_(std::move(name)) {}
  ~SqliteDb() override { sqlite3_close(db_); }

  DbBackend backend() const override { return DbBackend::kSqlite; }
  const std::string& name() const override { return name_; }
  std::string ErrorMessage() override {
    return db_ ? sqlite3_errmsg(db_) : "cannot open";
  }

  Status Exec(std::string_view sql) override {
    char* err = nullptr;
    const std::string text(sql);
    if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) !=
        SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return Unavailable(msg);
    }
    return OkStatus();
  }
  StatusOr<std::unique_ptr<DbStatement>> Prepare(std::string_view sql,
                                                 Fetch) override {
    return PrepareStatement(sql, false);
  }
  StatusOr<std::unique_ptr<DbStatement>> PrepareInsert(
      std::string_view sql, std::string_view) override {
    return PrepareStatement(sql, true);
  }

  Status Begin() override { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() override {
    Status s = Exec("COMMIT");
    // A failed COMMIT may leave the transaction open.
    if (!s.ok() && InTransaction()) (void)Exec("ROLLBACK");
    return s;
  }
  Status Rollback() override { return Exec("ROLLBACK"); }
  bool InTransaction() override { return !sqlite3_get_autocommit(db_); }
  Status LockSchema() override { return OkStatus(); }

  StatusOr<std::vector<std::string>> Tables() override {
    RT_ASSIGN_OR_RETURN(
        std::unique_ptr<DbStatement> q,
        Prepare("SELECT name FROM sqlite_master WHERE type = 'table' "
                "ORDER BY name",
                Fetch::kAll));
    std::vector<std::string> out;
    while (true) {
      RT_ASSIGN_OR_RETURN(const bool row, q->Step());
      if (!row) break;
      out.emplace_back(q->Text(0));
    }
    return out;
  }
  bool HasColumn(std::string_view table, std::string_view column) override {
    sqlite3_stmt* raw = nullptr;
    const std::string sql = "PRAGMA table_info(" + std::string(table) + ")";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      sqlite3_finalize(raw);
      return false;
    }
    SqliteStatement stmt(db_, raw, false);
    while (true) {
      StatusOr<bool> row = stmt.Step();
      if (!row.ok() || !*row) return false;
      if (stmt.Text(1) == column) return true;
    }
  }
  bool ConcurrentWriters() const override { return false; }
  Status PrepareForWrites(bool scratch) override;
  int64_t RoundTrips() const override { return 0; }  // in process
  bool CanCopyRows() const override { return false; }
  Status CopyRows(std::string_view table, std::string_view, int,
                  const std::vector<DbCell>&) override {
    return InternalError(name_ + ": no bulk copy into " + std::string(table) +
                         " on SQLite (CanCopyRows is false)");
  }

 private:
  StatusOr<std::unique_ptr<DbStatement>> PrepareStatement(std::string_view sql,
                                                          bool returns_id) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()),
                           &stmt, nullptr) != SQLITE_OK) {
      const std::string err = sqlite3_errmsg(db_);
      sqlite3_finalize(stmt);
      return Unavailable(err);
    }
    return std::unique_ptr<DbStatement>(
        new SqliteStatement(db_, stmt, returns_id));
  }

  sqlite3* db_;
  std::string name_;
};

// The store's message for a writer that cannot use the file.
Status WriteError(const std::string& path, sqlite3* db,
                  const std::string& what) {
  return Unavailable(path + ": " + what + ": " +
                     (db ? sqlite3_errmsg(db) : "cannot open") +
                     ": check the store path is a writable rooftrace store");
}

// The page cache's cap, in MiB: ROOFTRACE_SQLITE_CACHE_MIB, else 64. The
// cache holds pages a writer touched until the cap, so a long-running
// collector's RSS grows by up to this much as its store grows, then stays
// (docs/store.md, Continuous profiling); a collector in a small container
// may want less, a large store's ingest more.
StatusOr<long long> CacheMib() {
  const char* v = std::getenv("ROOFTRACE_SQLITE_CACHE_MIB");
  if (v == nullptr || *v == '\0') return 64;
  char* end = nullptr;
  errno = 0;
  const long long mib = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0' || mib < 1 || mib > 65536) {
    return InvalidArgument(std::string("ROOFTRACE_SQLITE_CACHE_MIB=") + v +
                           ": not a cache size; give a whole number of MiB "
                           "from 1 to 65536, e.g. "
                           "ROOFTRACE_SQLITE_CACHE_MIB=16 (default 64)");
  }
  return mib;
}

StatusOr<std::unique_ptr<Db>> OpenForWrite(const std::string& path) {
  // A bad setting is refused before SQLite creates the file: an empty file
  // left behind would be refused as not a store once the setting is fixed.
  if (StatusOr<long long> mib = CacheMib(); !mib.ok()) return mib.status();
  // An existing empty file is not a store (nor a new file: it may be
  // another program's, or meant for something else). One just made by
  // another rooftrace creating the store (SQLite creates the file empty
  // and writes its header a moment later) gets its header within that
  // moment: waited for, up to kNewStoreWaitMs (#29: of four concurrent
  // `collect --ingest` into a new store, three were refused).
  constexpr int kNewStoreWaitMs = 2000;
  struct stat st {};
  for (int waited_ms = 0;; waited_ms += 10) {
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size != 0) {
      break;
    }
    // Only a file made in the last moments may be one being created.
    const bool fresh = time(nullptr) - st.st_mtime <= 2;
    if (!fresh || waited_ms >= kNewStoreWaitMs) {
      return InvalidArgument(
          path + ": an empty file, not a rooftrace store: remove it or name "
                 "a new file (rooftrace creates it)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // A store this user may not write (another user's, in a folder both may
  // write) is refused before SQLite opens it: SQLite would open it
  // read-only, leave -wal/-shm files of this user beside it, and its owner
  // could no longer write it (#29 D10).
  if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      access(path.c_str(), W_OK) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    return InvalidArgument(
        path + ": this user cannot write the store (owned by uid " +
        std::to_string(st.st_uid) + ", mode " + mode +
        "); nothing was written to it or beside it: write to a store of "
        "your own, or ask its owner");
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw,
                                 // NOMUTEX: the owning RunRecorder serialises
                                 // every call, so SQLite's own locking is
                                 // pure cost.
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                     SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  auto db = std::make_unique<SqliteDb>(raw, path);
  if (rc != SQLITE_OK) return WriteError(path, raw, "cannot open the store");
  sqlite3_busy_timeout(raw, 5000);
  return std::unique_ptr<Db>(std::move(db));
}

StatusOr<std::unique_ptr<Db>> OpenForRead(const std::string& path,
                                          const std::string& display_name) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(SqliteReadUri(path).c_str(), &raw,
                                 // NOMUTEX: a reader is used by one thread
                                 // at a time (StoreReader's contract), so
                                 // SQLite's own locking is pure cost (5 %
                                 // of `history`'s time).
                                 SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
                                     SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  auto db = std::make_unique<SqliteDb>(raw, display_name);
  if (rc != SQLITE_OK) {
    return NotFound(display_name + ": cannot open as SQLite: " +
                    (raw ? sqlite3_errmsg(raw) : "out of memory"));
  }
  sqlite3_busy_timeout(raw, 5000);
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace

StatusOr<std::unique_ptr<Db>> OpenSqliteDb(const std::string& path,
                                           const std::string& display_name,
                                           bool read_only) {
  return read_only ? OpenForRead(path, display_name) : OpenForWrite(path);
}

Status SqliteDb::PrepareForWrites(bool scratch) {
  const std::string& path = name_;
  StatusOr<long long> cache_mib = CacheMib();
  if (!cache_mib.ok()) return cache_mib.status();
  auto exec = [&](const char* sql) -> Status {
    Status s = Exec(sql);
    if (s.ok()) return s;
    return Unavailable(path + ": " + s.message() +
                       ": check the store path is a writable rooftrace store");
  };
  // 64 KiB pages (a new file only; an existing store keeps its own): a
  // fraction of the page writes and B-tree splits of 4 KiB pages. Ingest of
  // a 910 k-kernel trace 3.92 -> 3.44 s, its analyze 1.16 -> 1.05 s.
  RT_RETURN_IF_ERROR(exec("PRAGMA page_size=65536"));
  const char* journal =
      scratch ? "PRAGMA journal_mode=OFF" : "PRAGMA journal_mode=WAL";
  Status wal = Exec(journal);
  // Changing the journal mode does not wait through the busy handler:
  // another rooftrace creating the same new store holds it for a moment.
  const auto busy = [this] {
    const int rc = sqlite3_errcode(db_) & 0xff;
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
  };
  for (int waited_ms = 0; !wal.ok() && busy() && waited_ms < 5000;
       waited_ms += 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    wal = Exec(journal);
  }
  if (!wal.ok() && busy()) {
    return InvalidArgument(path + ": another program holds the store locked (" +
                           wal.message() + "); try again once it is done");
  }
  if (!wal.ok()) {
    return InvalidArgument(path + ": not a SQLite store (" + wal.message() +
                           "); give a new file name or an existing rooftrace "
                           "store");
  }
  // NORMAL in WAL: a commit survives a crash of the collector (the WAL is
  // written before COMMIT returns); only a power loss may lose the last
  // commits. A 64 MiB page cache (the default) keeps the kernels index in
  // memory while a batch is written, and checkpoints every 16 MiB of WAL
  // (256 pages) instead of 4 MiB rewrite hot index pages less often.
  // A scratch store writes each page once and never syncs: about half the
  // time of an analyze of a .rft (21.7 s -> 12.1 s on 1.8 M kernels).
  RT_RETURN_IF_ERROR(
      exec(scratch ? "PRAGMA synchronous=OFF" : "PRAGMA synchronous=NORMAL"));
  // Negative: a cap in KiB, not a number of pages.
  const std::string cache =
      "PRAGMA cache_size=-" + std::to_string(*cache_mib * 1024);
  RT_RETURN_IF_ERROR(exec(cache.c_str()));
  return exec("PRAGMA wal_autocheckpoint=256");
}

}  // namespace rooftrace
