#include "kernels/counter_validation.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "kernels/formulas.h"

namespace rooftrace::kernels {
namespace {

std::string ShapeTag(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k);
}

// The innermost path component that is a rooftrace range, or "".
std::string ReferenceRange(const std::string& path) {
  std::string found;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.rfind("rooftrace:", 0) == 0) found = part;
    start = end + 1;
  }
  return found;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<ExpectedCounts> ExpectedReferenceCounts(
    const CalibrationResult& r) {
  std::vector<ExpectedCounts> out;
  for (const StreamRun& s : r.stream) {
    ExpectedCounts e;
    e.range = "rooftrace:stream_" + s.kernel;
    e.kernel = "stream_" + s.kernel + " n=" + std::to_string(s.elements);
    e.dram_bytes = s.Bytes();
    if (s.kernel == "triad") e.flops = StreamTriadFlops(s.elements);
    out.push_back(e);
  }
  for (const OwnKernelRun& o : r.own) {
    if (o.status != StepStatus::kOk) continue;
    ExpectedCounts e;
    e.range = "rooftrace:" + o.kernel + "_" + ShapeTag(o.shape);
    e.kernel = o.kernel + " " + ShapeTag(o.shape);
    e.flops = o.Flops();
    out.push_back(e);
  }
  return out;
}

std::vector<CounterValidation> ValidateCounters(
    const CalibrationResult& r, const std::vector<CountedKernel>& kernels) {
  std::map<std::string, std::vector<double>> flops, bytes;
  for (const CountedKernel& k : kernels) {
    const std::string range = ReferenceRange(k.nvtx_path);
    if (range.empty()) continue;
    if (k.flops) flops[range].push_back(*k.flops);
    if (k.dram_bytes) bytes[range].push_back(*k.dram_bytes);
  }
  std::vector<CounterValidation> out;
  for (const ExpectedCounts& e : ExpectedReferenceCounts(r)) {
    if (e.flops && flops.count(e.range)) {
      out.push_back({e.kernel, "flops", *e.flops, Median(flops[e.range])});
    }
    if (e.dram_bytes && bytes.count(e.range)) {
      out.push_back(
          {e.kernel, "dram_bytes", *e.dram_bytes, Median(bytes[e.range])});
    }
  }
  return out;
}

StatusOr<std::vector<CountedKernel>> ReadCountedKernels(
    const std::string& store_path, int64_t run_id) {
  if (!std::filesystem::exists(store_path)) {
    return NotFound(store_path +
                    ": no such store; record one with `rooftrace profile "
                    "--mode counters -o " + store_path +
                    " -- rooftrace calibrate --quick ...`");
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(store_path.c_str(), &db, SQLITE_OPEN_READONLY,
                      nullptr) != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Corrupt(store_path + ": cannot open as SQLite (" + why + ")");
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(db, sqlite3_close);
  const char* sql =
      "SELECT nvtx_path, flops, flops_source, dram_bytes, bytes_source "
      "FROM kernels WHERE run_id = (CASE WHEN ?1 >= 0 THEN ?1 ELSE "
      "(SELECT MAX(run_id) FROM kernels) END) AND nvtx_path LIKE "
      "'%rooftrace:%'";
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    return Corrupt(store_path + ": not a rooftrace store with a kernels "
                   "table (" + sqlite3_errmsg(db) +
                   "); pass the store written by `rooftrace profile`");
  }
  sqlite3_bind_int64(stmt, 1, run_id);
  std::vector<CountedKernel> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    CountedKernel k;
    if (const unsigned char* p = sqlite3_column_text(stmt, 0)) {
      k.nvtx_path = reinterpret_cast<const char*>(p);
    }
    auto text = [&](int col) {
      const unsigned char* p = sqlite3_column_text(stmt, col);
      return p ? std::string(reinterpret_cast<const char*>(p)) : "";
    };
    if (sqlite3_column_type(stmt, 1) != SQLITE_NULL &&
        text(2) == "counters") {
      k.flops = sqlite3_column_double(stmt, 1);
    }
    if (sqlite3_column_type(stmt, 3) != SQLITE_NULL &&
        text(4) == "counters") {
      k.dram_bytes = sqlite3_column_double(stmt, 3);
    }
    out.push_back(std::move(k));
  }
  const std::string err = sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) {
    return Corrupt(store_path + ": reading kernels failed (" + err + ")");
  }
  return out;
}

}  // namespace rooftrace::kernels
