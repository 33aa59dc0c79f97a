// store_write_bench: how many kernel rows a second the run store takes
// (issue 39, "a store that keeps up"), with nothing else in the timing: no
// decode, no join, no annotation. Prints figures, never a timed test.
//   build/bench/store_write_bench [--kernels N] [--pg-kernels N] [--no-pg]
//                                 [--no-view]
// 1. Store::AddKernel of N generated LLM-like kernel rows (300 distinct
//    names, analytic figures, NVTX paths, phases) into a new SQLite store,
//    committed: wall and CPU seconds, kernels/s.
// 2. The same rows written as SQL through the `kernels` view and its
//    INSTEAD OF trigger (a name sub-select per row), which SQL writers use
//    and the collector does not: what that path costs beside (1).
// 3. (1) into a new PostgreSQL database on a throwaway server
//    (tests/support/pg_server.h: fsync off, a Unix socket): wall and CPU,
//    this process's and the server's.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/support/bench_clock.h"
#include "pipeline/rows.h"
#include "store/db.h"
#include "store/store.h"
#include "tests/support/pg_server.h"

namespace rt = rooftrace;
namespace ts = rooftrace::test_support;

namespace {

using rooftrace::bench::CpuSeconds;
using rooftrace::bench::WallSeconds;

// The texts a row points at (KernelRow holds views).
struct Texts {
  std::vector<std::string> names, shapes, paths;
};

Texts MakeTexts() {
  Texts t;
  for (int i = 0; i < 300; ++i) {
    t.names.push_back(
        "_ZN7cutlass6KernelINS_4gemm6kernel13GemmUniversalINS_4arch4Sm90E"
        "variant_" + std::to_string(i) + "EEEvNT_6ParamsE");
    t.shapes.push_back("m=" + std::to_string(8 << (i % 4)) + " n=4096 k=" +
                       std::to_string(1024 * (1 + i % 7)) + " batch=1");
  }
  for (int layer = 0; layer < 32; ++layer) {
    t.paths.push_back("decode/layer." + std::to_string(layer) + "/attn");
  }
  return t;
}

// Kernel i of a generated decode-heavy run.
rt::KernelRow MakeKernel(const Texts& t, int64_t run, int64_t session,
                         int64_t i) {
  rt::KernelRow k;
  k.run_id = run;
  k.session_id = session;
  k.correlation_id = i;
  k.device_id = 0;
  k.context_id = 1;
  k.stream_id = 7;
  const size_t v = static_cast<size_t>(i % 300);
  k.name = t.names[v];
  k.family = "cutlass_gemm";
  k.start_ns = 1'000'000 + i * 1500;
  k.duration_ns = 1200 + (i % 50);
  k.end_ns = *k.start_ns + k.duration_ns;
  k.grid = {128, 1, 1};
  k.block = {256, 1, 1};
  k.cluster = {1, 1, 1};
  k.registers_per_thread = 96;
  k.dynamic_shared_memory_bytes = 49152;
  k.thread_id = 12345;
  k.api_start_ns = *k.start_ns - 3000;
  k.nvtx_path = t.paths[static_cast<size_t>(i / 12 % 32)];
  k.gemm_call_id = i / 3;
  k.shape = t.shapes[v];
  k.token_count = 8;
  k.precision = "bf16_tc";
  k.flops = 268435456;
  k.flops_by_precision[static_cast<int>(rt::Precision::kFp16Tensor)] =
      268435456;
  k.flops_source = "analytic";
  k.dram_bytes = 67174400;
  k.dram_read_bytes = 67108864;
  k.dram_write_bytes = 65536;
  k.bytes_source = "analytic";
  k.ai = 3.99;
  k.achieved_flops_per_s = 2.2e14;
  k.achieved_bytes_per_s = 5.5e13;
  k.roof_flops_per_s = 1.3e16;
  k.fraction_of_roof = 0.017;
  k.bound = "memory";
  k.step_id = i / 400;
  k.phase = "decode";
  k.op = "aten::mm";
  return k;
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "store_write_bench: %s\n", what.c_str());
  std::exit(1);
}

struct Timing {
  double wall = 0, cpu = 0;
  double server_cpu = 0;  // PostgreSQL's backends, while the store was open
};

// (1) and (3): n kernels through Store::AddKernel, committed.
Timing WriteThroughStore(const std::string& target, const Texts& t,
                         int64_t n,
                         const ts::PgServer* server = nullptr) {
  auto store = rt::Store::Open(target);
  if (!store.ok()) Fail(store.status().message());
  rt::RunRow run;
  run.command = "store_write_bench";
  auto run_id = (*store)->BeginRun(run);
  if (!run_id.ok()) Fail(run_id.status().message());
  rt::SessionRow session;
  session.run_id = *run_id;
  auto session_id = (*store)->AddSession(session, {});
  if (!session_id.ok()) Fail(session_id.status().message());
  Timing timing;
  const double s0 = server ? server->CpuSeconds() : 0;
  const double w0 = WallSeconds(), c0 = CpuSeconds();
  for (int64_t i = 0; i < n; ++i) {
    const rt::Status s =
        (*store)->AddKernel(MakeKernel(t, *run_id, *session_id, i));
    if (!s.ok()) Fail(s.message());
  }
  const rt::Status s = (*store)->EndWrite();
  if (!s.ok()) Fail(s.message());
  timing.wall = WallSeconds() - w0;
  timing.cpu = CpuSeconds() - c0;
  if (server) timing.server_cpu = server->CpuSeconds() - s0;
  return timing;
}

// (2): the same rows as SQL through the kernels view's trigger.
Timing WriteThroughView(const std::string& path, const Texts& t, int64_t n) {
  { auto store = rt::Store::Open(path); if (!store.ok()) Fail(store.status().message()); }
  auto db = rt::OpenDbForWrite(path);
  if (!db.ok()) Fail(db.status().message());
  if (!(*db)->PrepareForWrites(false).ok()) Fail("cannot set up " + path);
  auto insert = (*db)->Prepare(
      "INSERT INTO kernels (run_id, session_id, correlation_id, device_id, "
      "context_id, stream_id, name, family, start_ns, end_ns, duration_ns, "
      "grid_x, grid_y, grid_z, block_x, block_y, block_z, cluster_x, "
      "cluster_y, cluster_z, registers_per_thread, "
      "static_shared_memory_bytes, dynamic_shared_memory_bytes, graph_id, "
      "graph_node_id, thread_id, api_start_ns, nvtx_path, gemm_call_id, "
      "shape, token_count, precision, flops, flops_bf16_tc, flops_source, "
      "dram_bytes, dram_read_bytes, dram_write_bytes, bytes_source, ai, "
      "achieved_flops_per_s, achieved_bytes_per_s, roof_flops_per_s, "
      "fraction_of_roof, bound, step_id, phase, op) VALUES (?,?,?,?,?,?,?,"
      "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
      "?,?,?,?,?,?,?)");
  if (!insert.ok()) Fail(insert.status().message());
  rt::DbStatement& q = **insert;
  Timing timing;
  const double w0 = WallSeconds(), c0 = CpuSeconds();
  if (!(*db)->Begin().ok()) Fail("cannot begin");
  for (int64_t i = 0; i < n; ++i) {
    const rt::KernelRow k = MakeKernel(t, 1, 1, i);
    q.Reset();
    int p = 1;
    q.BindInt(p++, k.run_id);
    q.BindInt(p++, k.session_id);
    q.BindInt(p++, *k.correlation_id);
    q.BindInt(p++, *k.device_id);
    q.BindInt(p++, *k.context_id);
    q.BindInt(p++, *k.stream_id);
    q.BindText(p++, k.name);
    q.BindText(p++, k.family);
    q.BindInt(p++, *k.start_ns);
    q.BindInt(p++, *k.end_ns);
    q.BindInt(p++, k.duration_ns);
    for (int64_t v : k.grid) q.BindInt(p++, v);
    for (int64_t v : k.block) q.BindInt(p++, v);
    for (int64_t v : k.cluster) q.BindInt(p++, v);
    q.BindInt(p++, k.registers_per_thread);
    q.BindInt(p++, k.static_shared_memory_bytes);
    q.BindInt(p++, k.dynamic_shared_memory_bytes);
    q.BindInt(p++, k.graph_id);
    q.BindInt(p++, k.graph_node_id);
    q.BindInt(p++, *k.thread_id);
    q.BindInt(p++, *k.api_start_ns);
    q.BindText(p++, k.nvtx_path);
    q.BindInt(p++, *k.gemm_call_id);
    q.BindText(p++, k.shape);
    q.BindInt(p++, *k.token_count);
    q.BindText(p++, k.precision);
    q.BindInt(p++, *k.flops);
    q.BindInt(p++, *k.flops);
    q.BindText(p++, k.flops_source);
    q.BindInt(p++, *k.dram_bytes);
    q.BindInt(p++, *k.dram_read_bytes);
    q.BindInt(p++, *k.dram_write_bytes);
    q.BindText(p++, k.bytes_source);
    q.BindReal(p++, *k.ai);
    q.BindReal(p++, *k.achieved_flops_per_s);
    q.BindReal(p++, *k.achieved_bytes_per_s);
    q.BindReal(p++, *k.roof_flops_per_s);
    q.BindReal(p++, *k.fraction_of_roof);
    q.BindText(p++, k.bound);
    q.BindInt(p++, *k.step_id);
    q.BindText(p++, k.phase);
    q.BindText(p++, k.op);
    auto row = q.Step();
    if (!row.ok()) Fail(row.status().message());
    if ((i + 1) % 20000 == 0) {
      if (!(*db)->Commit().ok() || !(*db)->Begin().ok()) Fail("cannot commit");
    }
  }
  if (!(*db)->Commit().ok()) Fail("cannot commit");
  timing.wall = WallSeconds() - w0;
  timing.cpu = CpuSeconds() - c0;
  return timing;
}

void Print(const char* what, int64_t n, const Timing& t) {
  std::printf("%-40s %9lld kernels: %6.2f s wall (%5.3f M kernels/s), "
              "%6.2f s CPU (%5.3f M kernels/s, %.2f us each)\n",
              what, static_cast<long long>(n), t.wall, n / t.wall / 1e6,
              t.cpu, n / t.cpu / 1e6, t.cpu * 1e6 / n);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t kernels = 1'000'000, pg_kernels = 200'000;
  bool pg = true, view = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kernels" && i + 1 < argc) {
      kernels = std::atoll(argv[++i]);
    } else if (a == "--pg-kernels" && i + 1 < argc) {
      pg_kernels = std::atoll(argv[++i]);
    } else if (a == "--no-pg") {
      pg = false;
    } else if (a == "--no-view") {
      view = false;
    } else {
      Fail("unknown argument " + a +
           "; usage: store_write_bench [--kernels N] [--pg-kernels N] "
           "[--no-pg] [--no-view]");
    }
  }
  if (kernels <= 0 || pg_kernels <= 0) Fail("counts must be positive");
  const Texts texts = MakeTexts();
  char tmpl[] = "/tmp/rooftrace-store-write-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) Fail("cannot create a temporary folder");
  const std::string dir = tmpl;

  Print("SQLite, Store::AddKernel", kernels,
        WriteThroughStore(dir + "/store.sqlite", texts, kernels));
  if (view) {
    Print("SQLite, SQL through the kernels view", kernels,
          WriteThroughView(dir + "/view.sqlite", texts, kernels));
  }
  std::filesystem::remove_all(dir);

  if (!pg) return 0;
  std::string error;
  bool missing = false;
  std::unique_ptr<ts::PgServer> server = ts::PgServer::Start(&error, &missing);
  if (!server) {
    std::fprintf(stderr, "store_write_bench: no PostgreSQL figures: %s\n",
                 error.c_str());
    return missing ? 0 : 1;
  }
  const std::string url = server->CreateDatabase("bench", &error);
  if (url.empty()) Fail(error);
  { auto store = rt::Store::Open(url); if (!store.ok()) Fail(store.status().message()); }
  const Timing t = WriteThroughStore(url, texts, pg_kernels, server.get());
  Print("PostgreSQL, Store::AddKernel", pg_kernels, t);
  std::printf("%-40s %.2f s CPU in the server\n", "", t.server_cpu);
  return 0;
}
