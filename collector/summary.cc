#include "collector/summary.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "model/kernel_names.h"

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
    // One pass over the run's kernels, by family, phase and bound; a
    // group's bound is the one with most of its time.
    struct Group {
      std::string family, phase, bound;
      int64_t count = 0;
      double ns = 0, flops = 0, bytes = 0, roof_ns = 0, roof_weight = 0;
      bool has_flops = false, has_bytes = false;
      double bound_ns = -1;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;
    Query k(db,
            "SELECT family, phase, bound, COUNT(*), SUM(duration_ns), "
            "SUM(flops), SUM(dram_bytes), SUM(fraction_of_roof * duration_ns), "
            "SUM(CASE WHEN fraction_of_roof IS NULL THEN 0 ELSE duration_ns "
            "END) FROM kernels WHERE run_id=? GROUP BY family, phase, bound",
            run_id);
    while (k.Next()) {
      // NULL and text never share a key ("-" stands for NULL on screen).
      const std::string family = k.Null(0) ? std::string() : "=" + k.Text(0);
      const std::string phase = k.Null(1) ? std::string() : "=" + k.Text(1);
      Group& g = groups[{family, phase}];
      g.family = k.Text(0);
      g.phase = k.Text(1);
      const double ns = k.Real(4);
      if (ns > g.bound_ns) {
        g.bound_ns = ns;
        g.bound = k.Text(2);
      }
      g.count += k.Int(3);
      g.ns += ns;
      if (!k.Null(5)) g.flops += k.Real(5), g.has_flops = true;
      if (!k.Null(6)) g.bytes += k.Real(6), g.has_bytes = true;
      if (!k.Null(7)) g.roof_ns += k.Real(7);
      g.roof_weight += k.Real(8);
    }
    std::vector<const Group*> order;
    for (const auto& [key, g] : groups) order.push_back(&g);
    std::stable_sort(order.begin(), order.end(),
                     [](const Group* a, const Group* b) { return a->ns > b->ns; });
    if (order.size() > static_cast<size_t>(std::max(top_kernels, 0))) {
      order.resize(static_cast<size_t>(std::max(top_kernels, 0)));
    }
    for (const Group* g : order) {
      const std::string name = ShortKernelName(g->family, 40);
      char ai[16] = "-", roof[16] = "-";
      if (g->has_flops && g->has_bytes && g->bytes > 0 && g->flops > 0) {
        snprintf(ai, sizeof ai, "%.1f", g->flops / g->bytes);
      }
      if (g->roof_weight > 0) {
        snprintf(roof, sizeof roof, "%.1f", 100 * g->roof_ns / g->roof_weight);
      }
      snprintf(line, sizeof line,
               "  %-40s %6lld %9s %6.1f %10s %10s %8s %7s %-8s %-8s\n",
               name.c_str(), static_cast<long long>(g->count),
               Ms(g->ns).c_str(), total_ns > 0 ? 100 * g->ns / total_ns : 0.0,
               g->has_flops ? Si(g->flops, "").c_str() : "-",
               g->has_bytes ? Si(g->bytes, "B").c_str() : "-", ai, roof,
               g->bound.c_str(), g->phase.c_str());
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
