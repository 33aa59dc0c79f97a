// Nsight Systems import throughput (prints figures; never a timed test).
// Builds a large export by replicating the recorded A100 export's kernel
// rows and their launch rows (both rows nsys writes per call), shifted in
// time with fresh correlation ids, in two shapes: with the NVTX range nsys
// recorded around each launch (every kernel a forward step of its own, the
// pipeline's costliest case), and with one range per 100 kernels instead.
// On each, in a fresh process so that only the reading counts in its peak
// RSS:
//   (0) SQLite alone: every kernel and launch row stepped, columns read;
//   (1) the nsys source into the pipeline (join, annotate, steps) in windows,
//       rows discarded, each table read on a thread of its own; (1') the
//       same on one thread;
//   (2) the same into a SQLite store (what `rooftrace import` does).
// Wall time, CPU time of all threads, and CPU time of the reading thread
// alone (the merge and the pipeline; with the tables on threads of their
// own, what bounds the wall time on a machine with cores to spare).
//   nsys_bench [--kernels N] [--shape step|100|both] [--real EXPORT.sqlite]
//              [--keep DIR]
// (--keep leaves the last shape's export in DIR, for a profiler.)
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/recorder.h"
#include "pipeline/sink.h"
#include "sources/nsys/nsys_reader.h"
#include "sources/nsys/nsys_source.h"
#include "sources/registry.h"
#include "store/store.h"
#include "tests/support/discard_sink.h"

namespace rt = rooftrace;
namespace fs = std::filesystem;

namespace {

constexpr char kRealExport[] =
    "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sanitized.sqlite";

double Seconds(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a)
      .count();
}

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

using rt::test_support::DiscardSink;

int Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "nsys_bench: %s\n  in: %.200s\n", err ? err : "?",
            sql.c_str());
  }
  sqlite3_free(err);
  return rc;
}

// The replicated export at `out`: `copies` x the real file's kernels and
// their launch rows. NVTX: `per_step` 0 copies each 'saxpy' range around a
// launch, as recorded (each kernel its own forward step); N > 0 puts one
// range around every N copies instead (5 N kernels per step).
bool BuildExport(const std::string& real, const std::string& out,
                 uint64_t copies, int per_step) {
  fs::remove(out);
  sqlite3* db = nullptr;
  sqlite3_open(out.c_str(), &db);
  bool ok = Exec(db,
                 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                 "PRAGMA page_size=4096") == SQLITE_OK;
  ok = ok && Exec(db, "ATTACH '" + real + "' AS src") == SQLITE_OK;
  // Every table with the real file's own DDL.
  std::vector<std::string> ddl;
  {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT sql FROM src.sqlite_master WHERE type = "
                       "'table' AND sql IS NOT NULL",
                       -1, &s, nullptr);
    while (sqlite3_step(s) == SQLITE_ROW) {
      ddl.emplace_back(
          reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    }
    sqlite3_finalize(s);
  }
  for (const std::string& d : ddl) ok = ok && Exec(db, d) == SQLITE_OK;
  // Small tables as they are.
  for (const char* t :
       {"StringIds", "TARGET_INFO_GPU", "PROCESSES", "ThreadNames",
        "EXPORT_META_DATA", "TARGET_INFO_SYSTEM_ENV",
        "TARGET_INFO_SESSION_START_TIME"}) {
    ok = ok && Exec(db, std::string("INSERT INTO main.") + t +
                            " SELECT * FROM src." + t) == SQLITE_OK;
  }
  // One period of the real run: its kernels span 1.04 s.
  const std::string period = "1100000000";
  const std::string n = std::to_string(copies);
  const std::string reps =
      "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE "
      "i + 1 < " +
      n + ") ";
  ok = ok && Exec(db, "BEGIN") == SQLITE_OK;
  // Replica-major, so that each table is in time order as nsys writes it.
  ok = ok && Exec(db,
                  "CREATE TEMP TABLE k AS SELECT * FROM "
                  "src.CUPTI_ACTIVITY_KIND_KERNEL") == SQLITE_OK;
  ok = ok &&
       Exec(db, reps +
                    "INSERT INTO main.CUPTI_ACTIVITY_KIND_KERNEL SELECT "
                    "start + i * " +
                    period + ", end + i * " + period +
                    ", deviceId, contextId, streamId, correlationId + i * "
                    "1000, globalPid, demangledName, shortName, mangledName, "
                    "launchType, cacheConfig, registersPerThread, gridX, "
                    "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
                    "dynamicSharedMemory, localMemoryPerThread, "
                    "localMemoryTotal, gridId + i * 5, sharedMemoryExecuted, "
                    "graphNodeId, sharedMemoryLimitConfig FROM r, k ORDER BY "
                    "i, k.start") == SQLITE_OK;
  // The launch rows of those kernels (the call and its backtrace row).
  ok = ok && Exec(db,
                  "CREATE TEMP TABLE l AS SELECT * FROM "
                  "src.CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN "
                  "(SELECT correlationId FROM k)") == SQLITE_OK;
  ok = ok && Exec(db, reps +
                          "INSERT INTO main.CUPTI_ACTIVITY_KIND_RUNTIME "
                          "SELECT start + i * " +
                          period + ", end + i * " + period +
                          ", eventClass, globalTid, correlationId + "
                          "i * 1000, nameId, returnValue, callchainId, name "
                          "FROM r, l ORDER BY i, l.start") == SQLITE_OK;
  if (per_step == 0) {
    // The 'saxpy' range around each launch.
    ok = ok && Exec(db,
                    "CREATE TEMP TABLE v AS SELECT * FROM src.NVTX_EVENTS "
                    "WHERE text = 'saxpy'") == SQLITE_OK;
    ok = ok &&
         Exec(db, reps + "INSERT INTO main.NVTX_EVENTS SELECT start + i * " +
                      period + ", end + i * " + period +
                      ", eventType, rangeId, category, color, text, "
                      "globalTid, endGlobalTid, textId, domainId, "
                      "uint64Value, int64Value, doubleValue, "
                      "uint32Value, int32Value, floatValue, jsonTextId, "
                      "jsonText FROM r, v ORDER BY i, v.start") == SQLITE_OK;
  } else {
    // One 'step' range on the launching thread around every per_step copies.
    const std::string n_steps =
        std::to_string((copies + per_step - 1) / per_step);
    const std::string span = std::to_string(per_step) + " * " + period;
    ok = ok &&
         Exec(db,
              "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 "
              "FROM r WHERE i + 1 < " +
                  n_steps +
                  ") "
                  "INSERT INTO main.NVTX_EVENTS (start, end, eventType, text, "
                  "globalTid, domainId) SELECT i * " +
                  span + ", (i + 1) * " + span +
                  " - 1, 59, 'step', (SELECT globalTid FROM l LIMIT "
                  "1), 0 FROM r") == SQLITE_OK;
  }
  ok = ok && Exec(db, "COMMIT") == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

struct Figures {
  double seconds = 0;   // wall
  double cpu = 0;       // user + system, every thread
  double main_cpu = 0;  // the reading thread's own (the merge and pipeline)
  uint64_t kernels = 0;
  long rss_kb = 0;
};

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// (0): SQLite stepping the kernel and launch rows, every column read.
int ScanOnly(const std::string& file) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds();
  uint64_t rows = 0, sum = 0;
  for (const char* sql : {"SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL",
                          "SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE "
                          "eventClass != 67"}) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    const int cols = sqlite3_column_count(s);
    while (sqlite3_step(s) == SQLITE_ROW) {
      for (int c = 0; c < cols; ++c) sum += sqlite3_column_int64(s, c);
      ++rows;
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  const double cpu = CpuSeconds() - c0;
  printf("%.6f %.6f %.6f %llu %ld %llu\n", Seconds(t0), cpu, cpu,
         static_cast<unsigned long long>(rows / 2), PeakRssKb(),
         static_cast<unsigned long long>(sum & 1));
  return 0;
}

// (1) and (2) in this process.
int ReadInto(const std::string& file, const std::string& store_path,
             bool threads) {
  rt::nsys::SetTableThreads(threads);
  const rt::NsysSource source;
  rt::SourceOptions options;
  std::unique_ptr<rt::RunSink> sink;
  if (store_path.empty()) {
    sink = std::make_unique<DiscardSink>();
  } else {
    auto store = rt::Store::Open(store_path);
    if (!store.ok()) {
      fprintf(stderr, "%s\n", store.status().message().c_str());
      return 1;
    }
    sink = std::move(*store);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds(), m0 = ThreadCpuSeconds();
  auto result = rt::ReadSourceInto(source, file, options, sink.get());
  sink.reset();  // the store's last commit counts
  const double s = Seconds(t0), cpu = CpuSeconds() - c0,
               main_cpu = ThreadCpuSeconds() - m0;
  if (!result.ok()) {
    fprintf(stderr, "%s\n", result.status().message().c_str());
    return 1;
  }
  printf("%.6f %.6f %.6f %llu %ld 0\n", s, cpu, main_cpu,
         static_cast<unsigned long long>(result->kernels), PeakRssKb());
  return 0;
}

// Runs this binary with `args` and reads its figures.
Figures Child(const std::vector<std::string>& args) {
  Figures f;
  int fds[2];
  if (pipe(fds) != 0) return f;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    std::vector<char*> argv;
    std::string self = "/proc/self/exe";
    argv.push_back(self.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[256] = {};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n > 0) {
    unsigned long long k = 0, x = 0;
    sscanf(buf, "%lf %lf %lf %llu %ld %llu", &f.seconds, &f.cpu, &f.main_cpu,
           &k, &f.rss_kb, &x);
    f.kernels = k;
  }
  return f;
}

void Print(const char* what, const Figures& f) {
  auto rate = [&](double seconds) {
    return seconds > 0 ? f.kernels / seconds / 1e6 : 0.0;
  };
  printf(
      "%-50s %6.2f s %5.2f M/s %6.2f s %5.2f M/s %6.2f s %5.2f M/s "
      "%6.1f MiB\n",
      what, f.seconds, rate(f.seconds), f.cpu, rate(f.cpu), f.main_cpu,
      rate(f.main_cpu), f.rss_kb / 1024.0);
}

// Builds one shape and runs the three measurements on it.
int Measure(const std::string& real, const fs::path& dir, uint64_t kernels,
            int per_step) {
  const std::string file = (dir / "export.sqlite").string();
  const uint64_t copies = (kernels + 4) / 5;  // 5 kernels per copy
  const auto t0 = std::chrono::steady_clock::now();
  if (!BuildExport(real, file, copies, per_step)) return 1;
  const std::string shape =
      per_step == 0 ? "the 'saxpy' NVTX range around each launch, as "
                      "recorded (a forward step per kernel)"
                    : "one NVTX range per " + std::to_string(per_step * 5) +
                          " kernels (a forward step each)";
  printf(
      "\n%llu kernels (%llu copies of the A100 export's 5), %s; export "
      "of %.0f MB built in %.1f s\n",
      static_cast<unsigned long long>(copies * 5),
      static_cast<unsigned long long>(copies), shape.c_str(),
      fs::file_size(file) / 1e6, Seconds(t0));
  printf("%-50s %8s %9s %8s %9s %8s %9s %10s\n", "", "wall", "kernels", "cpu",
         "kernels", "main cpu", "kernels", "peak RSS");
  Print("(0) SQLite alone: kernel + launch rows stepped",
        Child({"--scan", file}));
  Print("(1) nsys source -> join/annotate, rows discarded",
        Child({"--read", file, "1"}));
  Print("(1') the same, every table read on the main thread",
        Child({"--read", file, "0"}));
  const std::string store = (dir / "runs.sqlite").string();
  fs::remove(store);
  Print("(2) nsys source -> join/annotate -> SQLite store",
        Child({"--read", file, "1", store}));
  printf("store: %.0f MB\n",
         fs::exists(store) ? fs::file_size(store) / 1e6 : 0.0);
  fs::remove(store);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--scan") == 0) {
    return ScanOnly(argv[2]);
  }
  if (argc >= 4 && std::strcmp(argv[1], "--read") == 0) {
    return ReadInto(argv[2], argc >= 5 ? argv[4] : "",
                    std::strcmp(argv[3], "1") == 0);
  }
  uint64_t kernels = 1000000;
  std::string real, keep, shape = "both";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--kernels") == 0) {
      kernels = std::stoull(argv[i + 1]);
    }
    if (std::strcmp(argv[i], "--real") == 0) real = argv[i + 1];
    if (std::strcmp(argv[i], "--keep") == 0) keep = argv[i + 1];
    if (std::strcmp(argv[i], "--shape") == 0) shape = argv[i + 1];
  }
  if (shape != "step" && shape != "100" && shape != "both") {
    fprintf(stderr, "nsys_bench: --shape is step, 100 or both\n");
    return 2;
  }
  if (real.empty()) {
    const char* env = std::getenv("ROOFTRACE_REAL_DATA");
    const fs::path base = env && *env ? fs::path(env)
                                      : fs::path(ROOFTRACE_SOURCE_DIR) / ".." /
                                            "shared" / "real-data";
    real = (base / kRealExport).lexically_normal().string();
  }
  if (!fs::exists(real)) {
    fprintf(stderr, "nsys_bench: %s not found; pass --real EXPORT.sqlite\n",
            real.c_str());
    return 2;
  }
  const fs::path dir =
      keep.empty() ? fs::temp_directory_path() /
                         ("rooftrace_nsys_bench_" + std::to_string(getpid()))
                   : fs::path(keep);
  fs::create_directories(dir);
  int rc = 0;
  if (shape != "100") rc = Measure(real, dir, kernels, 0);
  if (rc == 0 && shape != "step") rc = Measure(real, dir, kernels, 20);
  if (keep.empty()) fs::remove_all(dir);
  return rc;
}
