// sqlite_columns_bench: what SQLite itself spends storing a row, by the
// number of columns, the rows per INSERT and the (run_id, start_ns)-like
// index, with nothing of rooftrace in the timing (docs/store.md, Write
// speed: why schema 8 keeps a launch's row narrow). Prints figures, never
// a timed test.
//   build/bench/sqlite_columns_bench [--rows N]
// Each case: a new file with the store's pragmas (64 KiB pages, WAL,
// synchronous=NORMAL, a 64 MiB cache, checkpoints every 256 pages), N
// rows of integers committed 20,000 at a time; CPU and wall seconds.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <unistd.h>

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "sqlite_columns_bench: %s\n", what.c_str());
  std::exit(1);
}

void Exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    Fail(sql + ": " + (error ? error : "unknown error"));
  }
}

// `columns` integer columns after an INTEGER PRIMARY KEY, of a table of
// `table_columns` (>= columns; the rest left NULL).
void Case(const std::string& dir, long rows, int columns, int table_columns,
          int per_insert, bool index) {
  const std::string path = dir + "/t.sqlite";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    unlink((path + suffix).c_str());
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                          SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    Fail("cannot create " + path);
  }
  Exec(db, "PRAGMA page_size=65536");
  Exec(db, "PRAGMA journal_mode=WAL");
  Exec(db, "PRAGMA synchronous=NORMAL");
  Exec(db, "PRAGMA cache_size=-65536");
  Exec(db, "PRAGMA wal_autocheckpoint=256");
  std::string create = "CREATE TABLE k (id INTEGER PRIMARY KEY";
  for (int i = 0; i < table_columns; ++i) {
    create += ", c" + std::to_string(i) + " INTEGER";
  }
  Exec(db, create + ")");
  if (index) Exec(db, "CREATE INDEX k_run ON k(c0, c1)");
  std::string insert = "INSERT INTO k (";
  for (int i = 0; i < columns; ++i) {
    insert += (i ? ",c" : "c") + std::to_string(i);
  }
  insert += ") VALUES ";
  for (int r = 0; r < per_insert; ++r) {
    insert += r ? ",(?" : "(?";
    for (int i = 1; i < columns; ++i) insert += ",?";
    insert += ")";
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db, insert.c_str(), -1, SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    Fail(sqlite3_errmsg(db));
  }
  const auto w0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  Exec(db, "BEGIN");
  int p = 1;
  for (long k = 0; k < rows; ++k) {
    sqlite3_bind_int64(stmt, p++, 1);                  // a run id
    sqlite3_bind_int64(stmt, p++, 1000000 + k * 1500);  // a start time
    for (int i = 2; i < columns; ++i) {
      sqlite3_bind_int64(stmt, p++, (k * 7 + i) % 100000);
    }
    if (p > columns * per_insert) {
      if (sqlite3_step(stmt) != SQLITE_DONE) Fail(sqlite3_errmsg(db));
      sqlite3_reset(stmt);
      p = 1;
    }
    if ((k + 1) % 20000 == 0) {
      Exec(db, "COMMIT");
      Exec(db, "BEGIN");
    }
  }
  Exec(db, "COMMIT");
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0)
          .count();
  const double cpu =
      static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  std::printf("%2d of %2d columns, %2d rows an INSERT, index %-3s: "
              "%.2f us CPU a row (%.2f M rows/s), %.2f s wall\n",
              columns, table_columns, per_insert, index ? "yes" : "no",
              cpu * 1e6 / rows, rows / cpu / 1e6, wall);
}

}  // namespace

int main(int argc, char** argv) {
  long rows = 1000000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rows" && i + 1 < argc) {
      rows = std::atol(argv[++i]);
    } else {
      Fail("unknown argument " + a + "; usage: sqlite_columns_bench "
           "[--rows N]");
    }
  }
  if (rows <= 0) Fail("--rows must be positive");
  char tmpl[] = "/tmp/rooftrace-sqlite-columns-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) Fail("cannot create a temporary folder");
  const std::string dir = tmpl;
  Case(dir, rows, 54, 54, 1, true);   // schema 7: a kernel row, alone
  Case(dir, rows, 54, 54, 16, true);
  Case(dir, rows, 20, 20, 16, true);
  Case(dir, rows, 15, 15, 16, true);  // about schema 8's launch row
  Case(dir, rows, 15, 15, 32, true);
  Case(dir, rows, 15, 56, 16, true);  // the same columns in a wide table
  Case(dir, rows, 12, 12, 1, true);
  Case(dir, rows, 12, 12, 16, true);
  Case(dir, rows, 12, 12, 16, false);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    unlink((dir + "/t.sqlite" + suffix).c_str());
  }
  rmdir(dir.c_str());
  return 0;
}
