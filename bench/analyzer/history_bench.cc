// history_bench: `rooftrace history --check` on a generated SQLite store
// of many runs and groups (issue 27: 1,000 runs x 200 groups), timed in
// CPU and wall seconds, with the judging of the series (the statistics)
// apart; then the same rows copied into a PostgreSQL store on a throwaway
// server (tests/support/pg_server.h), timed alike (skipped, saying so,
// without the server binaries), with the round trips the read cost and the
// server's CPU time. Prints figures, never a timed test.
//   build/bench/history_bench [--runs N] [--groups G] [--store PATH]
//                             [--repeat R] [--keep] [--launches L]
// --keep leaves the SQLite store in place (to profile `rooftrace history`
// on it).
// --repeat measures each backend R times, alternating, so that a loaded
// machine's noise shows as a range.
// --launches L: L launches per group and run, of the same duration (a
// run's aggregates stay one row per group; its kernels grow L-fold).
// One kernel launch per group and run by default (the read scales with kernels; the
// statistics with runs x groups); one group regresses 8 % in the latest 3
// runs, which the gate must find.
// Each backend is measured twice: its runs as a store before schema 8 has
// them (kernel rows only: history reads every kernel), then with each
// run's kernel_aggregates (store schema 8, as the writer now keeps them:
// history reads those), made here from the kernel rows by SQL.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/support/bench_clock.h"
#include "bench/support/server_cpu.h"
#include "analyzer/changepoint.h"
#include "analyzer/history.h"
#include "store/db.h"
#include "store/store.h"
#include "store/store_reader.h"
#include "tests/support/pg_server.h"
#include "tests/support/test_store.h"

namespace rt = rooftrace;

namespace {

double Cpu() { return rooftrace::bench::CpuSeconds(); }

double Wall() { return rooftrace::bench::WallSeconds(); }

double ServerCpu(pid_t postmaster) {
  return rooftrace::bench::ServerCpuSeconds(postmaster);
}

// history --check on `store`: read and judge, then judge alone; with the
// server's CPU time when `server` is its pid.
// The store is opened inside the timed part, as the command opens it (on
// PostgreSQL: the connection, the schema check and the runs).
int Measure(const std::string& store, const char* backend, pid_t server = -1) {
  std::printf("  ");
  const double server0 = server > 0 ? ServerCpu(server) : 0;
  const double cpu0 = Cpu(), wall0 = Wall();
  rt::StoreReader reader;
  if (const rt::Status st = reader.Open(store, store); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  rt::analyzer::HistoryOptions options;
  options.where = {{"branch", "main"}};
  auto h = rt::analyzer::BuildHistory(reader, store, options);
  if (!h.ok()) {
    std::fprintf(stderr, "%s\n", h.status().message().c_str());
    return 1;
  }
  const double cpu1 = Cpu(), wall1 = Wall();
  const int64_t trips = reader.round_trips();
  char server_text[64] = "";
  if (server > 0) {
    std::snprintf(server_text, sizeof server_text, ", server %.3f s CPU",
                  ServerCpu(server) - server0);
  }
  // BuildHistory judged already; judging again times the statistics alone.
  const double cpu_judge = Cpu(), wall_judge = Wall();
  rt::analyzer::JudgeHistory(&*h);
  const double cpu2 = Cpu(), wall2 = Wall();
  std::printf(
      "history --check on %s: open, read and judge %.3f s CPU (%.3f s wall), of "
      "which judging %.3f s CPU (%.3f s wall); %lld round trips%s; %d of %d "
      "groups judged, %d regressed (the injected one: %s)\n",
      backend, cpu1 - cpu0, wall1 - wall0, cpu2 - cpu_judge,
      wall2 - wall_judge,
      static_cast<long long>(trips), server_text,
      h->judged, static_cast<int>(h->groups.size()), h->regressed,
      !h->groups.empty() && h->groups[0].name == "family_7" &&
              h->groups[0].verdict == rt::analyzer::HistoryVerdict::kRegressed
          ? "found"
          : "MISSED");
  return 0;
}

// Every row of the SQLite store `from` into the new store `to` (its schema
// created by the writer), table by table, ids kept.
rt::Status CopyStore(const std::string& from, const std::string& to) {
  { RT_RETURN_IF_ERROR(rt::Store::Open(to).status()); }
  RT_ASSIGN_OR_RETURN(auto src, rt::OpenDbForRead(from, from));
  RT_ASSIGN_OR_RETURN(auto dst, rt::OpenDbForWrite(to));
  RT_RETURN_IF_ERROR(dst->PrepareForWrites(false));
  RT_ASSIGN_OR_RETURN(const std::vector<std::string> tables, src->Tables());
  RT_RETURN_IF_ERROR(dst->Begin());
  for (const std::string& table : tables) {
    if (table == "schema_info") continue;
    RT_ASSIGN_OR_RETURN(auto q, src->Prepare("SELECT * FROM " + table,
                                             rt::Db::Fetch::kStream));
    std::string columns, params;
    for (int i = 0; i < q->ColumnCount(); ++i) {
      columns += (i ? ", " : "") + q->ColumnName(i);
      params += i ? ",?" : "?";
    }
    RT_ASSIGN_OR_RETURN(
        auto insert, dst->Prepare("INSERT INTO " + table + " (" + columns +
                                  ") VALUES (" + params + ")"));
    while (true) {
      RT_ASSIGN_OR_RETURN(const bool row, q->Step());
      if (!row) break;
      insert->Reset();
      for (int i = 0; i < q->ColumnCount(); ++i) {
        switch (q->ColumnType(i)) {
          case rt::DbType::kNull: insert->BindNull(i + 1); break;
          case rt::DbType::kInt: insert->BindInt(i + 1, q->Int(i)); break;
          case rt::DbType::kReal: insert->BindReal(i + 1, q->Real(i)); break;
          case rt::DbType::kText: insert->BindText(i + 1, q->Text(i)); break;
        }
      }
      RT_RETURN_IF_ERROR(insert->Step().status());
    }
  }
  return dst->Commit();
}

// Each run's kernels summed per group into kernel_aggregates, as the
// writer would have kept them, and the runs marked as keeping every kernel
// row (schema 8): history then reads the aggregates.
constexpr char kAddAggregates[] =
    "INSERT INTO kernel_aggregates (run_id, name_id, shape, phase, op, "
    "precision, bound, flops_source, bytes_source, token_count, gemm_call, "
    "launches, time_ns, min_ns, max_ns, flops_launches, flops_time_ns, flops, "
    "bytes_launches, bytes_time_ns, dram_bytes, fraction_weighted, "
    "fraction_time_ns, ai_flops, ai_bytes, above_roof_launches, "
    "above_roof_ns) SELECT run_id, name_id, shape, phase, op, precision, "
    "bound, flops_source, bytes_source, token_count, "
    "gemm_call_id IS NOT NULL, COUNT(*), SUM(duration_ns), MIN(duration_ns), "
    "MAX(duration_ns), COUNT(flops), "
    "IFNULL(SUM(CASE WHEN flops IS NOT NULL THEN duration_ns END), 0), "
    "TOTAL(flops), COUNT(dram_bytes), "
    "IFNULL(SUM(CASE WHEN dram_bytes IS NOT NULL THEN duration_ns END), 0), "
    "TOTAL(dram_bytes), TOTAL(fraction_of_roof * duration_ns), "
    "IFNULL(SUM(CASE WHEN fraction_of_roof IS NOT NULL THEN duration_ns "
    "END), 0), TOTAL(CASE WHEN dram_bytes IS NOT NULL THEN flops END), "
    "TOTAL(CASE WHEN flops IS NOT NULL THEN dram_bytes END), "
    "COUNT(CASE WHEN fraction_of_roof > 1 THEN 1 END), "
    "IFNULL(SUM(CASE WHEN fraction_of_roof > 1 THEN duration_ns END), 0) "
    "FROM kernel_rows JOIN kernel_sigs USING (sig_id) "
    "GROUP BY run_id, name_id, shape, phase, op, precision, "
    "bound, flops_source, bytes_source, token_count, gemm_call_id IS NOT NULL "
    "ORDER BY run_id, MIN(kernel_id)";

}  // namespace

int main(int argc, char** argv) {
  int runs = 1000, groups = 200, repeat = 1, launches = 1;
  bool keep = false;
  // Named by the process, so that two benches at once do not share a file.
  std::string path = (std::filesystem::temp_directory_path() /
                      ("history_bench-" + std::to_string(getpid()) + ".sqlite"))
                         .string();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--keep") {
      keep = true;
    } else if (a == "--runs" && has_value) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--groups" && has_value) {
      groups = std::atoi(argv[++i]);
    } else if (a == "--launches" && has_value) {
      launches = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--store" && has_value) {
      path = argv[++i];
    } else if (a == "--repeat" && has_value) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: history_bench [--runs N] [--groups G] "
                   "[--store PATH] [--repeat R] [--keep] [--launches L]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  double t0 = Wall();
  {
    rt::testing::TestStore s(path);
    // Each group's series first; then the runs one after another, as a
    // writer stores them (a run's kernel rows together: since schema 9 a
    // run's kernels are found by their id range, run_kernel_ids).
    std::vector<std::vector<double>> series;
    std::vector<double> bases;
    for (int g = 0; g < groups; ++g) {
      rt::stats::SyntheticSeriesSpec spec;
      spec.runs = runs;
      spec.base = 10000 + 100 * g;
      spec.noise = 0.02;
      if (g == 7) {
        spec.step_at = runs - 3;
        spec.step = 0.08;
      }
      series.push_back(rt::stats::SyntheticSeries(spec, 1000 + g));
      bases.push_back(spec.base);
    }
    for (int r = 0; r < runs; ++r) {
      s.AddRun(r + 1, "Test GPU 2TB");
      s.Exec("INSERT INTO run_labels VALUES (" + std::to_string(r + 1) +
             ", 'branch', 'main')");
      for (int g = 0; g < groups; ++g) {
        const std::vector<double>& ns = series[g];
        rt::testing::KernelSpec k;
        k.run_id = k.session_id = r + 1;
        k.name = "kernel_" + std::to_string(g);
        k.family = "family_" + std::to_string(g);
        k.start_ns = 1000 + 100000 * g;
        k.duration_ns = static_cast<int64_t>(ns[r]);
        k.fraction_of_roof = 0.5 * bases[g] / ns[r];
        for (int l = 0; l < launches; ++l) {
          s.AddKernel(k);
          k.start_ns += 100000 * groups;
        }
      }
    }
  }
  std::printf("store: %d runs x %d groups x %d launches (%d kernels) written "
              "in %.1f s: %s\n",
              runs, groups, launches, runs * groups * launches, Wall() - t0,
              path.c_str());
  // A copy of it with the aggregates (the same kernel rows).
  const std::string with_aggregates = path + ".aggregates";
  std::filesystem::copy_file(path, with_aggregates,
                             std::filesystem::copy_options::overwrite_existing);
  {
    auto db = rt::OpenDbForWrite(with_aggregates);
    rt::Status st = db.ok() ? (*db)->PrepareForWrites(false) : db.status();
    if (st.ok()) st = (*db)->Exec(kAddAggregates);
    if (st.ok()) st = (*db)->Exec("UPDATE runs SET store_kernels = 'all'");
    if (!st.ok()) {
      std::fprintf(stderr, "aggregates: %s\n", st.message().c_str());
      return 1;
    }
  }

  std::string error;
  bool missing = false;
  std::unique_ptr<rt::test_support::PgServer> pg =
      rt::test_support::PgServer::Start(&error, &missing);
  if (!pg) {
    for (int i = 0; i < repeat; ++i) {
      std::printf("run %d, kernel rows only (as before schema 8):\n", i + 1);
      if (const int rc = Measure(path, "SQLite"); rc != 0) return rc;
      std::printf("run %d, with kernel_aggregates (schema 8):\n", i + 1);
      if (const int rc = Measure(with_aggregates, "SQLite"); rc != 0) return rc;
    }
    std::printf("PostgreSQL: not measured (%s)\n", error.c_str());
    if (!keep) std::filesystem::remove(path);
    return missing ? 0 : 1;
  }
  const std::string url = pg->CreateDatabase("history", &error);
  const std::string url_aggregates =
      url.empty() ? url : pg->CreateDatabase("history_aggregates", &error);
  t0 = Wall();
  for (const auto& [from, to] : {std::make_pair(path, url),
                                 std::make_pair(with_aggregates,
                                                url_aggregates)}) {
    if (const rt::Status st = to.empty() ? rt::Unavailable(error)
                                         : CopyStore(from, to);
        !st.ok()) {
      std::fprintf(stderr, "copy into PostgreSQL: %s\n", st.message().c_str());
      return 1;
    }
  }
  std::printf("the same rows copied into PostgreSQL in %.1f s\n",
              Wall() - t0);
  int rc = 0;
  for (int i = 0; i < repeat && rc == 0; ++i) {
    std::printf("run %d, kernel rows only (as before schema 8):\n", i + 1);
    rc = Measure(path, "SQLite");
    if (rc == 0) rc = Measure(url, "PostgreSQL", pg->pid());
    std::printf("run %d, with kernel_aggregates (schema 8):\n", i + 1);
    if (rc == 0) rc = Measure(with_aggregates, "SQLite");
    if (rc == 0) rc = Measure(url_aggregates, "PostgreSQL", pg->pid());
  }
  std::filesystem::remove(with_aggregates);
  if (!keep) std::filesystem::remove(path);
  return rc;
}
