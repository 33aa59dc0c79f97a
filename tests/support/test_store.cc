#include "tests/support/test_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "tests/support/sqlite_query.h"

namespace rooftrace::testing {
namespace {

std::string StoreDdl() {
  std::string ddl = test_support::DocsStoreDdl(ROOFTRACE_SOURCE_DIR);
  if (ddl.empty()) {
    throw std::runtime_error("docs/store.md has no ```sql block");
  }
  return ddl;
}

void Bind(sqlite3_stmt* s, int i, const std::optional<std::string>& v) {
  if (v) {
    sqlite3_bind_text(s, i, v->c_str(), -1, SQLITE_TRANSIENT);
  } else {
    sqlite3_bind_null(s, i);
  }
}
void Bind(sqlite3_stmt* s, int i, const std::optional<int64_t>& v) {
  if (v) {
    sqlite3_bind_int64(s, i, *v);
  } else {
    sqlite3_bind_null(s, i);
  }
}
void Bind(sqlite3_stmt* s, int i, const std::optional<double>& v) {
  if (v) {
    sqlite3_bind_double(s, i, *v);
  } else {
    sqlite3_bind_null(s, i);
  }
}

}  // namespace

TestStore::TestStore(const std::string& path) : path_(path) {
  std::filesystem::remove(path);
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    throw std::runtime_error("cannot create " + path);
  }
  Exec(StoreDdl());
  Exec("INSERT INTO schema_info VALUES ('schema_version', '2'), "
       "('writer', 'analyzer tests')");
  Exec("BEGIN");
}

TestStore::~TestStore() { Close(); }

void TestStore::Close() {
  if (!db_) return;
  Exec("COMMIT");
  sqlite3_close(db_);
  db_ = nullptr;
}

void TestStore::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string message = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error("sql failed: " + message + ": " + sql.substr(0, 200));
  }
}

void TestStore::AddRun(int64_t run_id, const std::string& device_name,
                       const std::string& roof_source) {
  const std::string id = std::to_string(run_id);
  Exec("INSERT INTO runs (run_id, command, host, mode, device_name, "
       "roof_source, flops_sources, producer_version, complete, origin) "
       "VALUES (" + id + ", 'python serve.py', 'testhost', 'trace', '" +
       device_name + "', '" + roof_source +
       "', 'counters+analytic', 'rooftrace 0.1.0', 1, 'profile')");
  Exec("INSERT INTO sessions (session_id, run_id, host, pid) VALUES (" + id +
       ", " + id + ", 'testhost', 4242)");
  Exec("INSERT INTO devices (run_id, session_id, device_id, name) VALUES (" +
       id + ", " + id + ", 0, '" + device_name + "')");
}

void TestStore::AddRoof(int64_t run_id, const std::string& precision,
                        double peak, double bandwidth) {
  std::ostringstream sql;
  sql.precision(17);
  sql << "INSERT INTO roofs VALUES (" << run_id << ", 0, '" << precision
      << "', " << peak << ", " << bandwidth << ", " << peak / bandwidth
      << ", 'datasheet')";
  Exec(sql.str());
}

void TestStore::AddStat(int64_t run_id, const std::string& name,
                        int64_t value) {
  Exec("INSERT INTO import_stats VALUES (" + std::to_string(run_id) + ", '" +
       name + "', " + std::to_string(value) + ")");
}

void TestStore::AddKernel(const KernelSpec& k) {
  static const char* const kSql =
      "INSERT INTO kernels (run_id, session_id, name, demangled, family, "
      "shape, start_ns, end_ns, duration_ns, stream_id, device_id, thread_id, "
      "correlation_id, precision, flops, dram_bytes, flops_source, "
      "bytes_source, fraction_of_roof, roof_flops_per_s, bound, phase, "
      "nvtx_path, step_id) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, kSql, -1, &s, nullptr) != SQLITE_OK) {
    throw std::runtime_error(sqlite3_errmsg(db_));
  }
  sqlite3_bind_int64(s, 1, k.run_id);
  sqlite3_bind_int64(s, 2, k.session_id);
  sqlite3_bind_text(s, 3, k.name.c_str(), -1, SQLITE_TRANSIENT);
  Bind(s, 4, k.demangled);
  Bind(s, 5, k.family);
  Bind(s, 6, k.shape);
  sqlite3_bind_int64(s, 7, k.start_ns);
  sqlite3_bind_int64(s, 8, k.start_ns + k.duration_ns);
  sqlite3_bind_int64(s, 9, k.duration_ns);
  sqlite3_bind_int64(s, 10, k.stream_id);
  sqlite3_bind_int64(s, 11, k.device_id);
  Bind(s, 12, k.thread_id);
  Bind(s, 13, k.correlation_id);
  Bind(s, 14, k.precision);
  Bind(s, 15, k.flops);
  Bind(s, 16, k.dram_bytes);
  Bind(s, 17, k.flops_source);
  Bind(s, 18, k.bytes_source);
  Bind(s, 19, k.fraction_of_roof);
  Bind(s, 20, k.roof_flops_per_s);
  Bind(s, 21, k.bound);
  Bind(s, 22, k.phase);
  Bind(s, 23, k.nvtx_path);
  Bind(s, 24, k.step_id);
  const int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db_));
}

void TestStore::AddNvtx(int64_t run_id, const std::string& name,
                        int64_t start_ns, int64_t end_ns, int64_t thread_id,
                        int depth) {
  Exec("INSERT INTO nvtx_ranges (run_id, session_id, range_id, name, kind, "
       "depth, start_ns, end_ns, thread_id, path) VALUES (" +
       std::to_string(run_id) + ", " + std::to_string(run_id) + ", NULL, '" +
       name + "', 'push_pop', " + std::to_string(depth) + ", " +
       std::to_string(start_ns) + ", " + std::to_string(end_ns) + ", " +
       std::to_string(thread_id) + ", '" + name + "')");
}

void TestStore::AddMemcpy(int64_t run_id, const std::string& kind,
                          int64_t bytes, int64_t start_ns, int64_t end_ns,
                          int64_t stream_id) {
  Exec("INSERT INTO memcpys (run_id, session_id, kind, bytes, start_ns, "
       "end_ns, duration_ns, stream_id, device_id) VALUES (" +
       std::to_string(run_id) + ", " + std::to_string(run_id) + ", '" + kind +
       "', " + std::to_string(bytes) + ", " + std::to_string(start_ns) + ", " +
       std::to_string(end_ns) + ", " + std::to_string(end_ns - start_ns) +
       ", " + std::to_string(stream_id) + ", 0)");
}

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir = std::filesystem::path(
      base && *base ? base : std::filesystem::temp_directory_path().string());
  dir /= "rooftrace-analyzer-" + name + "-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void RemoveTempDir(const std::string& dir) {
  if (dir.empty() || std::getenv("ROOFTRACE_KEEP_TEST_FILES")) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int RunMain(int (*main_fn)(int, char**), const std::string& name,
            const std::vector<std::string>& args, std::string* out,
            std::string* err) {
  std::vector<std::string> words = {name};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::ostringstream out_buf, err_buf;
  std::streambuf* old_out = std::cout.rdbuf(out_buf.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err_buf.rdbuf());
  const int rc = main_fn(static_cast<int>(words.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  if (out) *out = out_buf.str();
  if (err) *err = err_buf.str();
  return rc;
}

}  // namespace rooftrace::testing
