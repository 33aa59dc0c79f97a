// A read-only SQLite connection and its statements, with errors as values
// that name the file and say what to do (a damaged export: export it again).
// Used by the Nsight Systems source; nothing here writes.
//
// Owned by one reader; not thread-safe. The trap: a Statement must be
// destroyed before its SqliteFile (it finalizes against the connection).
#ifndef ROOFTRACE_SOURCES_NSYS_SQLITE_FILE_H_
#define ROOFTRACE_SOURCES_NSYS_SQLITE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace rooftrace::nsys {

class SqliteFile;

class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // The next row: true, false at the end, or an error naming the file.
  StatusOr<bool> Step();
  void Bind(int index, int64_t value);  // 1-based, as SQLite counts
  Status Reset();

  int64_t Int(int column) const;
  bool IsNull(int column) const;
  // Valid until the next Step().
  std::string_view Text(int column) const;

  bool valid() const { return stmt_ != nullptr; }
  // For readers that step and decode rows themselves (table_stream.cc).
  sqlite3_stmt* raw() const { return stmt_; }

 private:
  friend class SqliteFile;
  Statement(sqlite3_stmt* stmt, const SqliteFile* file)
      : stmt_(stmt), file_(file) {}
  sqlite3_stmt* stmt_ = nullptr;
  const SqliteFile* file_ = nullptr;
};

class SqliteFile {
 public:
  ~SqliteFile();
  SqliteFile(const SqliteFile&) = delete;
  SqliteFile& operator=(const SqliteFile&) = delete;

  // Opens `path` read-only (never creates it). Errors name the file.
  static StatusOr<std::unique_ptr<SqliteFile>> Open(const std::string& path);

  StatusOr<Statement> Prepare(const std::string& sql) const;
  // Every table name in the file (sqlite_master): tables only, never a
  // view (a view runs a query of the file's choosing when read).
  StatusOr<std::vector<std::string>> Tables() const;
  // Every view name in the file, so that a reader can refuse a view in
  // place of a table it reads.
  StatusOr<std::vector<std::string>> Views() const;
  // The column names of `table` in declaration order (PRAGMA table_info).
  StatusOr<std::vector<std::string>> Columns(const std::string& table) const;

  // An error for SQLite result `rc`, naming the file, what failed and the
  // fix; `what` says what was being read.
  Status Error(int rc, const std::string& what) const;
  const std::string& path() const { return path_; }

 private:
  SqliteFile() = default;
  // Names of sqlite_master entries of `type` ('table', 'view').
  StatusOr<std::vector<std::string>> Names(const std::string& type) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

// '"name"' with embedded quotes doubled, for table and column names.
std::string QuoteIdentifier(std::string_view name);

}  // namespace rooftrace::nsys

#endif  // ROOFTRACE_SOURCES_NSYS_SQLITE_FILE_H_
