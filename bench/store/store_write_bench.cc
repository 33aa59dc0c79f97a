// store_write_bench: what the store's writer (store/store.h, the RunSink
// every collector, profile and import writes through) costs per kernel, in
// each --store-kernels mode, into SQLite and into PostgreSQL (a throwaway
// server started here: tests/support/pg_server.h, fsync off, a Unix
// socket). Prints figures, never a timed test.
//   build/bench/store_write_bench [--kernels N] [--pg-kernels M]
//                                 [--groups G] [--repeat R] [--only MODE]
// The rows are made once, before any timing: G groups (a ~150-character
// mangled name each, a GEMM shape, decode or prefill, an operator,
// analytic figures), 4,096 launches spread over them as a decode server's
// are (a few groups hold most launches), given N times in turn (each copied
// into the one row the writer is handed, its start moved on, as the
// pipeline hands it a fresh row in cache) to Store::AddKernel, with an
// EndWrite every 65,536 launches (the collector's window) and FinishRun
// at the end. The copy alone is timed too and taken off. What is timed is the writer alone: no decode, no join.
// The figure is CPU seconds of this process and wall seconds, per kernel
// and as kernels per second; for PostgreSQL also the server's CPU seconds
// (its processes', on the same machine), apart. --pg-kernels 0 skips
// PostgreSQL.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/support/bench_clock.h"
#include "bench/support/server_cpu.h"
#include "store/store.h"
#include "tests/support/pg_server.h"

namespace rt = rooftrace;
namespace ts = rooftrace::test_support;

namespace {

double Cpu() { return rooftrace::bench::CpuSeconds(); }
double Wall() { return rooftrace::bench::WallSeconds(); }

// The texts the rows point at (KernelRow holds views).
struct Texts {
  std::vector<std::string> names, shapes;
};

// Keeps `p`'s target as if read: the copy loop is not optimized away.
inline void KeepWritten(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

constexpr int64_t kPool = 4096;

std::vector<rt::KernelRow> MakeRows(int64_t n, int groups, Texts* texts) {
  for (int g = 0; g < groups; ++g) {
    texts->names.push_back(
        "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock"
        "12MmaPipelinedINS1_9GemmShapeILi128ELi128ELi32EEEN4cute5"
        "TensorIbf16EELi" + std::to_string(g) + "EEEEEvNT_6ParamsE");
    texts->shapes.push_back("m=" + std::to_string(8 * (1 + g % 16)) +
                            " n=4096 k=4096 batch=1");
  }
  std::mt19937_64 rng(42);
  // Zipf-like: group g drawn with weight 1 / (g + 1).
  std::vector<double> weights;
  for (int g = 0; g < groups; ++g) weights.push_back(1.0 / (g + 1));
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  std::uniform_int_distribution<int64_t> dur(2'000, 80'000);
  std::vector<rt::KernelRow> rows(static_cast<size_t>(n));
  int64_t t = 1'000'000;
  for (int64_t i = 0; i < n; ++i) {
    const int g = pick(rng);
    rt::KernelRow& k = rows[static_cast<size_t>(i)];
    k.session_id = 1;
    k.correlation_id = i + 1;
    k.device_id = 0;
    k.context_id = 1;
    k.stream_id = 7;
    k.name = texts->names[g];
    k.family = "cutlass::Kernel";
    k.start_ns = t;
    k.duration_ns = dur(rng);
    k.end_ns = t + k.duration_ns;
    t += k.duration_ns + 500;
    k.grid = {128, 1, 1};
    k.block = {256, 1, 1};
    k.registers_per_thread = 128;
    k.thread_id = 1234;
    k.api_start_ns = t - 3'000;
    k.shape = texts->shapes[g];
    k.token_count = 8 * (1 + g % 16);
    k.precision = "bf16_tc";
    k.flops = 2LL * *k.token_count * 4096 * 4096;
    k.flops_by_precision[static_cast<int>(rt::Precision::kFp16Tensor)] =
        k.flops;
    k.flops_source = "analytic";
    k.dram_bytes = (*k.token_count * 4096 * 2 + 4096 * 4096) * 2;
    k.bytes_source = "analytic";
    k.ai = static_cast<double>(*k.flops) / static_cast<double>(*k.dram_bytes);
    k.achieved_flops_per_s = *k.flops / (k.duration_ns * 1e-9);
    k.achieved_bytes_per_s = *k.dram_bytes / (k.duration_ns * 1e-9);
    k.roof_flops_per_s = 3.35e12 * *k.ai;
    k.fraction_of_roof = *k.achieved_bytes_per_s / 3.35e12;
    k.bound = "memory";
    k.step_id = i / 400;
    k.phase = g % 5 == 0 ? "prefill" : "decode";
    k.op = "aten::mm";
  }
  return rows;
}

struct Figure {
  double cpu = 0, wall = 0;
  double loop_cpu = 0;  // the AddKernel / EndWrite calls alone
  double server_cpu = -1;  // the PostgreSQL server's; < 0: not measured
  bool ok = false;
};

// `server`: the PostgreSQL server's pid (its CPU is measured), or -1.
Figure WriteRun(const std::string& store_path, rt::StoreKernels kept,
                const std::vector<rt::KernelRow>& rows, int64_t n,
                pid_t server = -1) {
  Figure f;
  auto store = rt::Store::Open(store_path);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    return f;
  }
  (*store)->set_store_kernels(kept);
  rt::RunRow run;
  run.origin = "bench";
  run.mode = "trace";
  const double c0 = Cpu(), w0 = Wall();
  const double server0 = server > 0 ? rt::bench::ServerCpuSeconds(server) : 0;
  auto run_id = (*store)->BeginRun(run);
  if (!run_id.ok()) return f;
  run.run_id = *run_id;
  const int64_t span = *rows.back().end_ns;
  rt::KernelRow k;
  const double loop0 = Cpu();
  for (int64_t i = 0; i < n; ++i) {
    k = rows[static_cast<size_t>(i % kPool)];
    k.run_id = *run_id;
    // Each turn of the pool later than the last: starts keep rising.
    *k.start_ns += (i / kPool) * span;
    *k.end_ns += (i / kPool) * span;
    if (!(*store)->AddKernel(k).ok()) return f;
    if ((i + 1) % 65536 == 0 && !(*store)->EndWrite().ok()) return f;
  }
  if (!(*store)->EndWrite().ok()) return f;
  f.loop_cpu = Cpu() - loop0;
  run.complete = 1;
  if (!(*store)->FinishRun(run, rt::ImportStats()).ok()) return f;
  // While the store's connections are open (their server processes live).
  if (server > 0) {
    f.server_cpu = rt::bench::ServerCpuSeconds(server) - server0;
  }
  store->reset();  // closes (SQLite checkpoints its WAL)
  f.cpu = Cpu() - c0;
  f.wall = Wall() - w0;
  f.ok = true;
  return f;
}

void Print(const char* backend, rt::StoreKernels kept, int64_t n,
           const Figure& f, double copy_cpu) {
  if (!f.ok) {
    std::printf("%-10s %-8s failed\n", backend, rt::StoreKernelsName(kept));
    return;
  }
  const double cpu = f.cpu - copy_cpu;
  const double loop = f.loop_cpu - copy_cpu;
  char server[96] = "";
  if (f.server_cpu >= 0) {
    std::snprintf(server, sizeof server,
                  "  server CPU %6.3f s = %6.3f us/kernel (%5.2f M/s)",
                  f.server_cpu, f.server_cpu * 1e6 / n,
                  f.server_cpu > 0 ? n / f.server_cpu / 1e6 : 0.0);
  }
  std::printf(
      "%-10s %-8s %9lld kernels  CPU %6.3f s = %6.3f us/kernel (%5.2f M/s); "
      "AddKernel calls alone %6.3f us/kernel  wall %6.3f s (%5.2f M/s)%s\n",
      backend, rt::StoreKernelsName(kept), static_cast<long long>(n), cpu,
      cpu * 1e6 / n, n / cpu / 1e6, loop * 1e6 / n, f.wall, n / f.wall / 1e6,
      server);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t kernels = 1'000'000, pg_kernels = 200'000;
  int groups = 200, repeat = 3;
  std::string only;  // one --store-kernels mode (to profile it alone)
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--kernels") kernels = std::atoll(argv[i + 1]);
    if (a == "--pg-kernels") pg_kernels = std::atoll(argv[i + 1]);
    if (a == "--groups") groups = std::atoi(argv[i + 1]);
    if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
    if (a == "--only") only = argv[i + 1];
  }
  Texts texts;
  const std::vector<rt::KernelRow> rows = MakeRows(kPool, groups, &texts);
  // The copy of each row the writer loop makes (not the writer's cost).
  double copy_cpu = 0;
  {
    const double c0 = Cpu();
    rt::KernelRow k;
    for (int64_t i = 0; i < kernels; ++i) {
      k = rows[static_cast<size_t>(i % kPool)];
      k.run_id = 1;
      *k.start_ns += (i / kPool) * 1000;
      *k.end_ns += (i / kPool) * 1000;
      KeepWritten(&k);
    }
    copy_cpu = Cpu() - c0;
    std::printf("rows: %lld launches of %lld rows in %d groups; copying each "
                "into the row handed over alone: %.3f us/kernel (taken off "
                "below)\n",
                static_cast<long long>(kernels),
                static_cast<long long>(kPool), groups,
                copy_cpu * 1e6 / kernels);
  }
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("store_write_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const rt::StoreKernels modes[] = {rt::StoreKernels::kAll,
                                    rt::StoreKernels::kSampled,
                                    rt::StoreKernels::kNone};
  for (int r = 0; r < repeat; ++r) {
    for (rt::StoreKernels kept : modes) {
      if (!only.empty() && only != rt::StoreKernelsName(kept)) continue;
      const std::string path = dir + "/run" + std::to_string(r) + "_" +
                               rt::StoreKernelsName(kept) + ".sqlite";
      Print("sqlite", kept, kernels, WriteRun(path, kept, rows, kernels),
            copy_cpu);
      std::filesystem::remove(path);
    }
  }
  std::string error;
  bool missing = false;
  std::unique_ptr<ts::PgServer> pg;
  if (pg_kernels > 0) pg = ts::PgServer::Start(&error, &missing);
  if (pg_kernels <= 0) {
    std::printf("postgresql: not measured (--pg-kernels 0)\n");
  } else if (!pg) {
    std::printf("postgresql: not measured (%s)\n", error.c_str());
  } else {
    const double pg_copy = copy_cpu * pg_kernels / kernels;
    for (int r = 0; r < repeat; ++r) {
      for (rt::StoreKernels kept : modes) {
      if (!only.empty() && only != rt::StoreKernelsName(kept)) continue;
        const std::string url = pg->CreateDatabase(
            std::string("w") + std::to_string(r) + "_" +
                rt::StoreKernelsName(kept),
            &error);
        if (url.empty()) {
          std::printf("postgresql: %s\n", error.c_str());
          continue;
        }
        Print("postgresql", kept, pg_kernels,
              WriteRun(url, kept, rows, pg_kernels, pg->pid()), pg_copy);
      }
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
