// Tiny read helpers over a SQLite store for tests: one value per query.
#ifndef ROOFTRACE_TESTS_SUPPORT_SQLITE_QUERY_H_
#define ROOFTRACE_TESTS_SUPPORT_SQLITE_QUERY_H_

#include <sqlite3.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace rooftrace::test_support {

// Read-only connection closed on destruction.
class StoreQuery {
 public:
  explicit StoreQuery(const std::string& path) {
    sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
  }
  ~StoreQuery() { sqlite3_close(db_); }
  StoreQuery(const StoreQuery&) = delete;
  StoreQuery& operator=(const StoreQuery&) = delete;

  // First column of the first row as an integer; -1 when no row or NULL,
  // -2 when the query fails.
  int64_t Int(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      return -2;
    }
    int64_t v = -1;
    if (sqlite3_step(s) == SQLITE_ROW &&
        sqlite3_column_type(s, 0) != SQLITE_NULL) {
      v = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    return v;
  }
  double Real(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      return -2;
    }
    double v = -1;
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    return v;
  }
  // "<null>" for NULL, "<error: ...>" when the query fails.
  std::string Text(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      return std::string("<error: ") + sqlite3_errmsg(db_) + ">";
    }
    std::string v = "<no row>";
    if (sqlite3_step(s) == SQLITE_ROW) {
      const auto* t = sqlite3_column_text(s, 0);
      v = t ? reinterpret_cast<const char*>(t) : "<null>";
    }
    sqlite3_finalize(s);
    return v;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Runs `sql` (any number of statements) on the store at `path`, opened read
// and write; the error message, or empty on success.
inline std::string ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return "cannot open " + path;
  }
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string message = rc == SQLITE_OK ? "" : (err ? err : "sql failed");
  sqlite3_free(err);
  sqlite3_close(db);
  return message;
}

// The SQL block of docs/store.md (the schema contract); empty if missing.
inline std::string DocsStoreDdl(const std::string& source_dir) {
  std::ifstream f(source_dir + "/docs/store.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const size_t begin = doc.find("```sql");
  const size_t end = doc.find("```", begin + 6);
  return begin == std::string::npos || end == std::string::npos
             ? std::string()
             : doc.substr(begin + 6, end - begin - 6);
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_SQLITE_QUERY_H_
