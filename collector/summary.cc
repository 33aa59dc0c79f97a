#include "collector/summary.h"

#include <sqlite3.h>

#include <cstdio>
#include <ostream>
#include <string>

#include "collector/kernel_names.h"

namespace rooftrace {
namespace {

std::string Col(const unsigned char* t) {
  return t ? reinterpret_cast<const char*>(t) : "-";
}

std::string Si(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  while (v >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  char buf[32];
  snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[i], unit);
  return buf;
}

std::string Ms(double ns) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f", ns / 1e6);
  return buf;
}

class Query {
 public:
  Query(sqlite3* db, const std::string& sql, int64_t run_id) {
    sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr);
    if (s_) sqlite3_bind_int64(s_, 1, run_id);
  }
  ~Query() { sqlite3_finalize(s_); }
  bool Next() { return s_ && sqlite3_step(s_) == SQLITE_ROW; }
  std::string Text(int i) { return Col(sqlite3_column_text(s_, i)); }
  double Real(int i) { return sqlite3_column_double(s_, i); }
  int64_t Int(int i) { return sqlite3_column_int64(s_, i); }
  bool Null(int i) { return sqlite3_column_type(s_, i) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

}  // namespace

Status PrintRunSummary(const std::string& store_path, int64_t run_id,
                       std::ostream& out, int top_kernels) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(store_path.c_str(), &db, SQLITE_OPEN_READONLY,
                      nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return Unavailable(store_path + ": cannot open the store");
  }
  {
    Query run(db,
              "SELECT device_name, roof_source, flops_sources, mode, complete "
              "FROM runs WHERE run_id=?",
              run_id);
    if (run.Next()) {
      out << "rooftrace run " << run_id << " in " << store_path << "\n"
          << "  device " << run.Text(0) << ", roofs " << run.Text(1)
          << ", FLOPs " << run.Text(2) << ", mode " << run.Text(3)
          << (run.Int(4) ? "" : ", INCOMPLETE (see drops)") << "\n\n";
    }
  }
  double total_ns = 0;
  {
    Query t(db, "SELECT COALESCE(SUM(duration_ns),0), COUNT(*) FROM kernels "
                "WHERE run_id=?", run_id);
    if (t.Next()) {
      total_ns = t.Real(0);
      out << "  " << t.Int(1) << " kernels, " << Ms(total_ns)
          << " ms of GPU time\n\n";
    }
  }
  char line[512];
  snprintf(line, sizeof line, "  %-40s %6s %9s %6s %10s %10s %8s %7s %-8s %-8s\n",
           "kernel (family)", "calls", "time ms", "%time", "FLOPs", "bytes",
           "AI", "%roof", "bound", "phase");
  out << line;
  {
    Query k(db,
            "SELECT family, phase, COUNT(*), SUM(duration_ns), SUM(flops), "
            "SUM(dram_bytes), "
            "SUM(fraction_of_roof * duration_ns) / "
            "  NULLIF(SUM(CASE WHEN fraction_of_roof IS NULL THEN 0 ELSE "
            "  duration_ns END), 0), "
            "(SELECT bound FROM kernels k2 WHERE k2.run_id=k.run_id AND "
            "  k2.family IS k.family AND k2.phase IS k.phase GROUP BY bound "
            "  ORDER BY SUM(duration_ns) DESC LIMIT 1) "
            "FROM kernels k WHERE run_id=? GROUP BY family, phase "
            "ORDER BY SUM(duration_ns) DESC LIMIT " +
                std::to_string(top_kernels),
            run_id);
    while (k.Next()) {
      const std::string name = ShortKernelName(k.Text(0), 40);
      const double t = k.Real(3);
      const bool has_f = !k.Null(4), has_b = !k.Null(5);
      const double f = k.Real(4), b = k.Real(5);
      char ai[16] = "-", roof[16] = "-";
      if (has_f && has_b && b > 0 && f > 0) snprintf(ai, sizeof ai, "%.1f", f / b);
      if (!k.Null(6)) snprintf(roof, sizeof roof, "%.1f", 100 * k.Real(6));
      snprintf(line, sizeof line,
               "  %-40s %6lld %9s %6.1f %10s %10s %8s %7s %-8s %-8s\n",
               name.c_str(), static_cast<long long>(k.Int(2)), Ms(t).c_str(),
               total_ns > 0 ? 100 * t / total_ns : 0.0,
               has_f ? Si(f, "").c_str() : "-", has_b ? Si(b, "B").c_str() : "-",
               ai, roof, k.Text(7).c_str(), k.Text(1).c_str());
      out << line;
    }
  }
  out << "\n  phase     steps  kernels   time ms   %time      FLOPs\n";
  {
    Query p(db,
            "SELECT COALESCE(phase,'(none)'), "
            "(SELECT COUNT(*) FROM steps s WHERE s.run_id=k.run_id AND "
            "  s.phase IS k.phase), COUNT(*), SUM(duration_ns), SUM(flops) "
            "FROM kernels k WHERE run_id=? GROUP BY phase "
            "ORDER BY SUM(duration_ns) DESC",
            run_id);
    while (p.Next()) {
      snprintf(line, sizeof line, "  %-8s %6lld %8lld %9s %7.1f %10s\n",
               p.Text(0).c_str(), static_cast<long long>(p.Int(1)),
               static_cast<long long>(p.Int(2)), Ms(p.Real(3)).c_str(),
               total_ns > 0 ? 100 * p.Real(3) / total_ns : 0.0,
               p.Null(4) ? "-" : Si(p.Real(4), "").c_str());
      out << line;
    }
  }
  {
    Query s(db,
            "SELECT name, value FROM import_stats WHERE run_id=? AND value>0 "
            "AND (name LIKE 'producer_dropped_%' OR name LIKE 'unmatched_%' "
            "OR name IN ('corrupt_frames','truncated_streams',"
            "'sessions_incomplete','refused_sessions','sequence_gaps',"
            "'undecodable_packets','unknown_fields','timed_out_connections'))",
            run_id);
    std::string drops;
    while (s.Next()) {
      drops += "  " + s.Text(0) + " = " + std::to_string(s.Int(1)) + "\n";
    }
    out << "\n" << (drops.empty() ? "  no drops, nothing unmatched\n" : drops);
  }
  sqlite3_close(db);
  return OkStatus();
}

}  // namespace rooftrace
