#include "sources/nsys/sqlite_file.h"

#include <sqlite3.h>

#include <utility>

#include "store/store_reader.h"

namespace rooftrace::nsys {

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& o) noexcept
    : stmt_(std::exchange(o.stmt_, nullptr)), file_(o.file_) {}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    stmt_ = std::exchange(o.stmt_, nullptr);
    file_ = o.file_;
  }
  return *this;
}

StatusOr<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return file_->Error(rc, "reading rows");
}

void Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}

Status Statement::Reset() {
  const int rc = sqlite3_reset(stmt_);
  return rc == SQLITE_OK ? OkStatus() : file_->Error(rc, "reading rows");
}

int64_t Statement::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::string_view Statement::Text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return {};
  return {reinterpret_cast<const char*>(p),
          static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

SqliteFile::~SqliteFile() {
  if (db_ != nullptr) sqlite3_close(db_);
}

StatusOr<std::unique_ptr<SqliteFile>> SqliteFile::Open(
    const std::string& path) {
  std::unique_ptr<SqliteFile> f(new SqliteFile());
  f->path_ = path;
  // One thread uses a connection: no per-call mutex (SQLite's default
  // serialized mode locks on every column read).
  const int rc =
      sqlite3_open_v2(SqliteReadUri(path).c_str(), &f->db_,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
                          SQLITE_OPEN_URI,
                      nullptr);
  if (rc != SQLITE_OK) return f->Error(rc, "opening it");
  // A small page cache: the rows stream through once, and a reader opens a
  // connection per table (a larger cache only costs memory and page faults).
  sqlite3_exec(f->db_, "PRAGMA cache_size=-1024", nullptr, nullptr, nullptr);
  return f;
}

StatusOr<Statement> SqliteFile::Prepare(const std::string& sql) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(rc, "reading its schema");
  }
  return Statement(stmt, this);
}

StatusOr<std::vector<std::string>> SqliteFile::Tables() const {
  return Names("table");
}

StatusOr<std::vector<std::string>> SqliteFile::Views() const {
  return Names("view");
}

StatusOr<std::vector<std::string>> SqliteFile::Names(
    const std::string& type) const {
  RT_ASSIGN_OR_RETURN(Statement s,
                      Prepare("SELECT name FROM sqlite_master WHERE type = '" +
                              type + "'"));
  std::vector<std::string> out;
  for (;;) {
    RT_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.emplace_back(s.Text(0));
  }
  return out;
}

StatusOr<std::vector<std::string>> SqliteFile::Columns(
    const std::string& table) const {
  RT_ASSIGN_OR_RETURN(Statement s, Prepare("PRAGMA table_info(" +
                                           QuoteIdentifier(table) + ")"));
  std::vector<std::string> out;
  for (;;) {
    RT_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.emplace_back(s.Text(1));  // cid, name, type, notnull, dflt, pk
  }
  return out;
}

Status SqliteFile::Error(int rc, const std::string& what) const {
  const int primary = rc & 0xff;
  const std::string detail =
      db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  if (primary == SQLITE_NOTADB) {
    return InvalidArgument(path_ + ": not an SQLite file (" + detail +
                           "); give the .sqlite file `nsys export --type "
                           "sqlite` writes, not the .nsys-rep report");
  }
  if (primary == SQLITE_CORRUPT) {
    return Corrupt(path_ + ": the SQLite file is damaged while " + what + " (" +
                   detail +
                   "); export it again with `nsys export "
                   "--type sqlite REPORT.nsys-rep`");
  }
  if (primary == SQLITE_CANTOPEN || primary == SQLITE_PERM ||
      primary == SQLITE_IOERR) {
    return NotFound(path_ + ": cannot read it while " + what + " (" + detail +
                    ")");
  }
  return InvalidArgument(path_ + ": SQLite error while " + what + " (" +
                         detail +
                         "); is it an Nsight Systems export "
                         "(`nsys export --type sqlite`)?");
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace rooftrace::nsys
