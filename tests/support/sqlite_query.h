// Tiny read helpers over a SQLite store for tests: one value per query.
#ifndef ROOFTRACE_TESTS_SUPPORT_SQLITE_QUERY_H_
#define ROOFTRACE_TESTS_SUPPORT_SQLITE_QUERY_H_

#include <sqlite3.h>

#include <cstdint>
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

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_SQLITE_QUERY_H_
