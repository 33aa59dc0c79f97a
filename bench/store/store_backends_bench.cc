// store_backends_bench: what the PostgreSQL store backend costs and whether
// many writers lose anything (issue 27), on a throwaway server started here
// (tests/support/pg_server.h: fsync off, a Unix socket). Prints figures,
// never a timed test.
//   build/bench/store_backends_bench [--layers L] [--steps S]
//                                    [--writers W] [--runs R]
// 1. One generated LLM run (L layers, S decode steps) ingested into a new
//    SQLite file and into a new PostgreSQL database, in the same process,
//    each timed in wall and CPU seconds (the server's CPU is not ours).
// 2. W writer processes each store R runs of a small trace into one
//    PostgreSQL database at once; then the runs complete, and lost, are
//    counted in the database.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/support/bench_clock.h"
#include "sources/rft/ingest.h"
#include "sources/rft/testing/trace_builder.h"
#include "store/db.h"
#include "tests/support/pg_server.h"

namespace rt = rooftrace;
namespace ts = rooftrace::test_support;

namespace {

double Cpu() { return rooftrace::bench::CpuSeconds(); }
double Wall() { return rooftrace::bench::WallSeconds(); }

std::string WriteTrace(const std::string& path, int layers, int steps) {
  ts::LlmTraceOptions o;
  o.layers = layers;
  o.decode_steps = steps;
  ts::TraceBuilder b(o.session);
  ts::GenerateLlmTrace(o, &b);
  if (!b.WriteFile(path).ok()) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  return path;
}

int64_t Count(const std::string& store, const std::string& sql) {
  auto db = rt::OpenDbForRead(store, store);
  if (!db.ok()) return -1;
  auto q = (*db)->Prepare(sql);
  if (!q.ok()) return -1;
  auto row = (*q)->Step();
  return row.ok() && *row ? (*q)->Int(0) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  int layers = 32, steps = 64, writers = 8, runs = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--layers") layers = std::atoi(argv[i + 1]);
    if (a == "--steps") steps = std::atoi(argv[i + 1]);
    if (a == "--writers") writers = std::atoi(argv[i + 1]);
    if (a == "--runs") runs = std::atoi(argv[i + 1]);
  }
  std::string error;
  bool missing = false;
  std::unique_ptr<ts::PgServer> pg = ts::PgServer::Start(&error, &missing);
  if (!pg) {
    std::fprintf(stderr, "store_backends_bench: %s\n", error.c_str());
    return missing ? 2 : 1;
  }
  const std::string dir = pg->dir();
  const std::string big = WriteTrace(dir + "/big.rft", layers, steps);
  const std::string small = WriteTrace(dir + "/small.rft", 2, 8);

  // 1. One run into each backend.
  const std::string sqlite = dir + "/one.sqlite";
  const std::string one = pg->CreateDatabase("one", &error);
  if (one.empty()) {
    std::fprintf(stderr, "store_backends_bench: %s\n", error.c_str());
    return 1;
  }
  for (const std::string& store : {sqlite, one}) {
    const double c0 = Cpu(), w0 = Wall();
    auto r = rt::IngestTraceFile(big, store, {});
    const double c1 = Cpu(), w1 = Wall();
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().message().c_str());
      return 1;
    }
    std::printf(
        "ingest of one run, %llu kernels, into %-10s: %.2f s wall "
        "(%.0f kernels/s), %.2f s CPU in this process\n",
        static_cast<unsigned long long>(r->kernels),
        rt::IsPostgresUrl(store) ? "PostgreSQL" : "SQLite", w1 - w0,
        static_cast<double>(r->kernels) / (w1 - w0), c1 - c0);
  }

  // 2. Concurrent writers, each a process of its own (as collectors are).
  const std::string shared = pg->CreateDatabase("shared", &error);
  if (shared.empty()) {
    std::fprintf(stderr, "store_backends_bench: %s\n", error.c_str());
    return 1;
  }
  // The schema first, as a long-running store has it.
  { (void)rt::IngestTraceFile(small, shared, {}); }
  const double w0 = Wall();
  std::vector<pid_t> children;
  for (int w = 0; w < writers; ++w) {
    const pid_t pid = fork();
    if (pid == 0) {
      int failed = 0;
      for (int r = 0; r < runs; ++r) {
        rt::IngestOptions o;
        o.labels = {{"writer", std::to_string(w)}};
        auto result = rt::IngestTraceFile(small, shared, o);
        if (!result.ok()) {
          ++failed;
          std::fprintf(stderr, "writer %d: %s\n", w,
                       result.status().message().c_str());
        }
      }
      _exit(failed == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  int failed_writers = 0;
  for (pid_t c : children) {
    int status = 0;
    waitpid(c, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed_writers;
  }
  const double w1 = Wall();
  const int64_t expected = static_cast<int64_t>(writers) * runs;
  const int64_t stored =
      Count(shared, "SELECT COUNT(*) FROM run_labels WHERE key = 'writer'");
  const int64_t complete = Count(
      shared,
      "SELECT COUNT(*) FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
      "AND l.key = 'writer' WHERE r.complete = 1");
  const int64_t kernels_each = Count(
      shared, "SELECT COUNT(*) FROM kernels WHERE run_id = 1");
  const int64_t kernels = Count(
      shared,
      "SELECT COUNT(*) FROM kernels k JOIN run_labels l ON l.run_id = "
      "k.run_id AND l.key = 'writer'");
  std::printf(
      "%d writers x %d runs into one PostgreSQL store: %.2f s wall; runs "
      "complete %lld of %lld, lost %lld; kernels %lld of %lld; writers "
      "failed %d\n",
      writers, runs, w1 - w0, static_cast<long long>(complete),
      static_cast<long long>(expected),
      static_cast<long long>(expected - stored),
      static_cast<long long>(kernels),
      static_cast<long long>(expected * kernels_each), failed_writers);
  return complete == expected ? 0 : 1;
}
