// The thin database interface the run store is written against: one
// connection (Db) and its prepared statements (DbStatement), with two
// backends, SQLite (store/db_sqlite.cc, the embedded default) and
// PostgreSQL (store/db_postgres.cc, a shared store for many writers).
//
// The store's SQL is written once, in the dialect SQLite and PostgreSQL
// share (`?` placeholders, INSERT ... ON CONFLICT, NULLS FIRST); the schema
// is written in SQLite's types. What differs sits here: PostgreSQL's backend
// numbers the placeholders ($1, $2, ...), maps the schema's types (INTEGER
// -> BIGINT, REAL -> DOUBLE PRECISION, INTEGER PRIMARY KEY -> an identity
// column; a table without one gets a `rowid` identity column, as SQLite
// gives every table an implicit rowid), drops what it has no use for
// (REFERENCES, which SQLite does not enforce as rooftrace opens it, and
// the kernels view's INSTEAD OF trigger), and returns inserted ids with
// RETURNING where SQLite has last_insert_rowid. Pragmas, WAL and
// SQLite's read-only open are the SQLite backend's; the foreign-database
// and column checks each backend answers from its own catalog.
//
// Owned by one Store or StoreReader; not thread-safe (one connection). A
// statement must not outlive its Db. Text bound to a statement must stay
// valid until its Step() returns (SQLite reads it in place).
#ifndef ROOFTRACE_STORE_DB_H_
#define ROOFTRACE_STORE_DB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rooftrace {

enum class DbBackend { kSqlite, kPostgres };

// The type of a column's value in the current row.
enum class DbType { kNull, kInt, kReal, kText };

// True for a PostgreSQL connection URL (postgresql://... or postgres://...),
// which every command takes where it takes a store path.
bool IsPostgresUrl(std::string_view target);

// `target` as people see it, in every output (messages, reports, the
// lines a collector prints): a PostgreSQL URL with its password (user
// information or `password=` parameter, base/url_secrets.h) replaced by
// "***"; a path unchanged. The one function that renders a store location.
std::string StoreDisplayName(std::string_view target);

// How long a PostgreSQL store may keep rooftrace waiting.
//
// `connect_ms`: to connect, the server's greeting and authentication
// included; libpq's `connect_timeout` (the URL's, else PGCONNECT_TIMEOUT)
// when set, else 10 s. `answer_ms`: for any answer once connected, the
// longest silence of the server inside one round trip
// ($ROOFTRACE_DB_TIMEOUT_S, default 300 s): past it the statement is
// cancelled (PQcancel) and fails, as a server that went away would.
struct DbWaitLimits {
  int64_t connect_ms = 10000;
  int64_t answer_ms = 300000;
};
// The limits for `url` from its parameters and the environment.
// InvalidArgument naming the variable or parameter for a value that is not
// a whole number of seconds above 0.
StatusOr<DbWaitLimits> DbWaitLimitsFor(const std::string& url);

// The check a command's SIGINT/SIGTERM handler answers (true once a stop
// was asked; nullptr: none). Every wait for a PostgreSQL server looks at it
// at least every 100 ms: during a connect it gives up at once; once
// connected, a server silent for a second after the stop has its
// statement cancelled and the wait fails ("interrupted"), so that the
// command stores nothing more, keeps its raw data and exits within about a
// second. A server that keeps answering is waited for (a collector's last
// flush after SIGTERM is stored).
void SetDbStopCheck(bool (*stopped)());

// Where a collector writing to `target` keeps the raw streams it has not
// stored yet: "<file>.raw" beside an SQLite store; for a PostgreSQL store,
// "rooftrace-<database>.raw" in the current folder.
std::string RawStreamDir(std::string_view target);

// One value of a row handed to Db::CopyRows: NULL, an integer or a real
// (NaN is NULL, as BindReal stores it).
struct DbCell {
  DbType type = DbType::kNull;
  int64_t i = 0;
  double r = 0;
};

class DbStatement {
 public:
  virtual ~DbStatement() = default;

  // Parameters are numbered from 1. Each execution binds all of them (a
  // previous execution's values need no clearing).
  virtual void BindInt(int index, int64_t value) = 0;
  // NaN is bound as NULL (what SQLite stores for it).
  virtual void BindReal(int index, double value) = 0;
  virtual void BindText(int index, std::string_view value) = 0;
  virtual void BindNull(int index) = 0;

  // Runs the statement on the first call after Reset() and steps to the
  // next row: true with a row to read, false when done.
  virtual StatusOr<bool> Step() = 0;
  // Ready to be bound and run again.
  virtual void Reset() = 0;
  // The id the last run of a PrepareInsert() statement inserted; nullopt
  // when it inserted nothing (ON CONFLICT DO NOTHING).
  virtual std::optional<int64_t> InsertedId() = 0;

  // The current row. Text() of a number is its text as SQLite prints it
  // (an integer's digits; a real as "%!.15g": 5.0, 0.333333333333333),
  // so that both backends export the same bytes; valid until the next
  // Step().
  virtual int ColumnCount() = 0;
  virtual std::string ColumnName(int col) = 0;
  virtual DbType ColumnType(int col) = 0;
  virtual int64_t Int(int col) = 0;
  virtual double Real(int col) = 0;
  virtual std::string_view Text(int col) = 0;
};

class Db {
 public:
  // How a row-returning statement delivers its rows.
  enum class Fetch {
    // All rows at once (PostgreSQL) or as stepped (SQLite): small results.
    kAll,
    // A bounded batch at a time, so that memory does not grow with the
    // result; several may be open and stepped in turn on one connection.
    // PostgreSQL: a cursor, inside the reader's read-only transaction.
    kStream,
  };

  virtual ~Db() = default;
  virtual DbBackend backend() const = 0;
  // The store as messages name it (StoreDisplayName()).
  virtual const std::string& name() const = 0;
  // The connection's last error text.
  virtual std::string ErrorMessage() = 0;

  // Runs one or more statements that return no rows.
  virtual Status Exec(std::string_view sql) = 0;
  virtual StatusOr<std::unique_ptr<DbStatement>> Prepare(
      std::string_view sql, Fetch fetch = Fetch::kAll) = 0;
  // An INSERT whose statement reports the value of `id_column` (the
  // table's INTEGER PRIMARY KEY) it inserted, through InsertedId().
  virtual StatusOr<std::unique_ptr<DbStatement>> PrepareInsert(
      std::string_view sql, std::string_view id_column) = 0;

  // A write transaction (SQLite: BEGIN IMMEDIATE, the write lock at once).
  virtual Status Begin() = 0;
  // A failed COMMIT, or one of a transaction a failed statement aborted,
  // is rolled back and returned as an error.
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
  // True inside a transaction (also one a failed statement aborted).
  virtual bool InTransaction() = 0;
  // Inside a transaction: serialises writers that create or upgrade the
  // schema until it ends (PostgreSQL: an advisory lock, so that collectors
  // starting at once on a new database do not race to create it; SQLite:
  // nothing, Begin() already holds the only write lock).
  virtual Status LockSchema() = 0;

  // The store's tables (not views), sorted by name.
  virtual StatusOr<std::vector<std::string>> Tables() = 0;
  // False also when the table does not exist.
  virtual bool HasColumn(std::string_view table, std::string_view column) = 0;
  // Whether other processes may write to the store while this one does
  // (PostgreSQL), so that rows shared between runs (kernel names) are best
  // written outside a long transaction.
  virtual bool ConcurrentWriters() const = 0;
  // Sets the connection up for writing, once the caller has judged what
  // the store is (Store::Open refuses a foreign file before anything is
  // written to it). SQLite: `scratch` (a store read once and deleted)
  // without journal or syncs, else WAL with synchronous=NORMAL; a new file
  // gets 64 KiB pages; waits a moment for another rooftrace creating the
  // same new file. PostgreSQL: nothing.
  virtual Status PrepareForWrites(bool scratch) = 0;
  // Appends rows to `table` in bulk where the backend has a faster way than
  // an INSERT of many rows: `cells` holds the values of `columns` (a
  // comma-separated list of `num_columns` names), row after row, numbers
  // only. PostgreSQL: one COPY ... FROM STDIN (binary format where every
  // column is BIGINT or DOUBLE PRECISION, else text), one round trip for
  // all of them, in the current transaction (a refused row fails it, as a
  // refused INSERT does). It returns once the rows are sent: the server's
  // verdict is read by the next call on the connection, and a refusal is
  // returned by the next Exec() or Commit(). SQLite: false from CanCopyRows(), and
  // this is not called (its INSERT of 64 rows costs it as little).
  virtual bool CanCopyRows() const = 0;
  virtual Status CopyRows(std::string_view table, std::string_view columns,
                          int num_columns, const std::vector<DbCell>& cells) = 0;
  // The times this connection has waited for the database's answer so far
  // (PostgreSQL: each a round trip to the server, which is what a remote
  // store's reads cost; SQLite: 0, it answers in process). For benchmarks
  // and tests that hold a read to a number of queries.
  virtual int64_t RoundTrips() const = 0;
};

// Opens `target` (a file path, or a PostgreSQL URL) to write a store to,
// writing nothing yet (PrepareForWrites comes next). SQLite: created if
// missing; an empty file is refused unless another rooftrace is creating
// it this moment, and a file this user cannot write is refused before
// SQLite leaves files of this user beside it. Errors name the target and
// the fix.
StatusOr<std::unique_ptr<Db>> OpenDbForWrite(const std::string& target);
// Opens `target` read-only. SQLite: without writing beside the file
// (SqliteReadUri). PostgreSQL: one repeatable-read, read-only transaction
// for the life of the connection, so that a reader sees one state of a
// store others are writing to. `display_name` names it in messages.
StatusOr<std::unique_ptr<Db>> OpenDbForRead(const std::string& target,
                                            const std::string& display_name);

// The backends' openers (store/db_sqlite.cc, store/db_postgres.cc).
StatusOr<std::unique_ptr<Db>> OpenSqliteDb(const std::string& path,
                                           const std::string& display_name,
                                           bool read_only);
StatusOr<std::unique_ptr<Db>> OpenPostgresDb(const std::string& url,
                                             bool read_only);

// PostgreSQL's text of a statement written in the store's SQL (see the top
// of this file). Exposed for tests.
std::string PostgresSql(std::string_view sql);

}  // namespace rooftrace

#endif  // ROOFTRACE_STORE_DB_H_
