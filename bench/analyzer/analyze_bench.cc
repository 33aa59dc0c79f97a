// analyzer_bench: `rooftrace analyze` on a large run store and on the
// equivalent .rft trace. Prints, per input size, the wall time and peak RSS
// of (a) merely reading the input and (b) the full analysis, each measured
// in its own child process so peak RSS is per step. Targets: analysis within
// 3x of reading the input; peak RSS flat as the run grows.
//
//   analyzer_bench [--kernels N] [--dir DIR] [--no-rft] [--no-store]
//                  [--keep-rft] [--keep-store] [--producers P] [--window W]
//
// A .rft is read by decoding every record with the collector's decoder
// (the fastest this project reads one); a store by stepping the report's
// kernel query.
//
// --keep-rft leaves each trace in DIR as bench-<kernels>.rft, to profile
// `rooftrace analyze` on it alone; --keep-store leaves the store in DIR as
// bench.sqlite. --producers P (default 1) writes each run as P producers'
// windows of W kernels (--window, default 8192) in turn, not in start
// order, as several collectors into one run write it.
//
// Default N = 1,000,000 (well under a minute); --kernels 10000000 for the
// figure in the issue.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/input.h"
#include "sources/rft/packet_decoder.h"
#include "report/report.h"
#include "store/store_reader.h"
#include "proto/framing.h"
#include "proto/rooftrace.pb.h"
#include "tests/support/sqlite_query.h"
#include "sources/rft/testing/trace_builder.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Measure {
  double seconds = 0;
  double cpu_seconds = 0;  // user + system of the child: steadier than wall
                           // time on a shared machine
  long max_rss_kb = 0;
  int exit_code = 0;
};

// Runs `fn` in a child process; the child's own peak RSS comes back through
// wait4, the wall time through a pipe.
Measure InChild(const std::function<int()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const auto t0 = Clock::now();
    const int rc = fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (write(fds[1], &s, sizeof(s)) != sizeof(s)) _exit(3);
    _exit(rc);
  }
  close(fds[1]);
  Measure m;
  if (read(fds[0], &m.seconds, sizeof(m.seconds)) != sizeof(m.seconds)) m.seconds = -1;
  close(fds[0]);
  int status = 0;
  struct rusage ru;
  wait4(pid, &status, 0, &ru);
  m.max_rss_kb = ru.ru_maxrss;
  m.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return m;
}

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::cerr << "analyzer_bench: sql failed: " << (err ? err : "?") << "\n";
    std::exit(1);
  }
}

// A store with runs 1..3 of n/4, n/2 and n kernels of an LLM-like mix:
// 12 kernel names in 8 families, GEMMs with FLOPs and bytes, 5 % prefill.
// `producers` > 1: each run's kernels are written as that many producers'
// windows (sessions 1..producers, kernel i of the run to producer
// i % producers), `window` kernels of one producer at a time, in turn: a
// run not in start order (in_start_order 0), as several collectors'
// windows into one run are written. Producer p's kernels start at the
// same time as producer 0's of its round (equal starts across sessions).
void BuildStore(const std::string& path, int64_t n, int producers,
                int64_t window) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  Exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
  Exec(db, rooftrace::test_support::DocsStoreDdl(ROOFTRACE_SOURCE_DIR));
  Exec(db, "INSERT INTO schema_info VALUES ('schema_version','2')");
  struct K {
    const char* name;
    const char* family;
    const char* shape;
    double flops, bytes;
    int64_t ns;
  };
  const K kinds[] = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "sm90_xmma_gemm",
       "m=6144 n=8 k=2048 batch=1", 2.0 * 6144 * 8 * 2048, 2.0 * 6144 * 2048, 9000},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64", "sm90_xmma_gemm",
       "m=2048 n=8 k=2048 batch=1", 2.0 * 2048 * 8 * 2048, 2.0 * 2048 * 2048, 4000},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64", "sm90_xmma_gemm",
       "m=11264 n=8 k=2048 batch=1", 2.0 * 11264 * 8 * 2048, 2.0 * 11264 * 2048, 15000},
      {"nvjet_tst_128x64_64x6_1x1_v_bz_TNT", "nvjet_tst", "m=2048 n=8 k=5632 batch=1",
       2.0 * 2048 * 8 * 5632, 2.0 * 2048 * 5632, 9500},
      {"_Z14rmsnorm_kernelIN3c108BFloat16EEvPT_PKS2_S5_fii", "rmsnorm_kernel", "", -1,
       -1, 2500},
      {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEENS_"
       "6detail5ArrayIPcLi3EEEEEviT0_T1_",
       "at::native::elementwise_kernel<CUDAFunctor_add>", "", -1, 65536, 2600},
      {"_Z24flash_fwd_splitkv_kernelI23Flash_fwd_kernel_traitsILi128ELi64ELi128ELi4EEEvv",
       "flash_fwd_splitkv_kernel", "", -1, -1, 3800},
      {"_Z19silu_and_mul_kernelIN3c108BFloat16EEvPT_PKS2_i", "silu_and_mul_kernel", "",
       -1, -1, 2800},
      {"_Z23rotary_embedding_kernelIN3c108BFloat16ELb1EEvPKlPT_S5_",
       "rotary_embedding_kernel", "", -1, -1, 2600},
      {"argmax_kernel", "argmax_kernel", "", -1, -1, 2500},
      {"_Z16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4EEEvv",
       "flash_fwd_kernel", "", -1, -1, 6700},
      {"triton_poi_fused_add_mul_3", "triton_poi_fused_add_mul", "", -1, 131072, 2200},
  };
  const int num_kinds = sizeof(kinds) / sizeof(kinds[0]);
  // Names once, as the collector stores them (kind i is name_id i + 1);
  // rows point at them.
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO kernel_names (name_id, name, family) "
                     "VALUES (?,?,?)",
                     -1, &s, nullptr);
  for (int i = 0; i < num_kinds; ++i) {
    sqlite3_bind_int64(s, 1, i + 1);
    sqlite3_bind_text(s, 2, kinds[i].name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, kinds[i].family, -1, SQLITE_STATIC);
    sqlite3_step(s);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  // A kind's launches in one phase share their signature (kernel_sigs,
  // schema 9), as the writer stores them: sig_id 2 * kind + 1 (+ 1 for
  // prefill).
  sqlite3_prepare_v2(
      db,
      "INSERT INTO kernel_sigs (sig_id, name_id, device_id, stream_id, "
      "thread_id, nvtx_path, shape, precision, flops, flops_source, "
      "dram_bytes, bytes_source, ai, roof_flops_per_s, bound, phase) VALUES "
      "(?1,?2,0,7,11,'forward',?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
      -1, &s, nullptr);
  for (int i = 0; i < num_kinds; ++i) {
    const K& k = kinds[i];
    for (int prefill = 0; prefill < 2; ++prefill) {
      sqlite3_bind_int64(s, 1, 2 * i + 1 + prefill);
      sqlite3_bind_int64(s, 2, i + 1);
      if (*k.shape) {
        sqlite3_bind_text(s, 3, k.shape, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, "bf16_tc", -1, SQLITE_STATIC);
      } else {
        sqlite3_bind_null(s, 3);
        sqlite3_bind_null(s, 4);
      }
      if (k.flops > 0) {
        sqlite3_bind_double(s, 5, k.flops);
        sqlite3_bind_text(s, 6, "analytic", -1, SQLITE_STATIC);
      } else {
        sqlite3_bind_null(s, 5);
        sqlite3_bind_text(s, 6, "none", -1, SQLITE_STATIC);
      }
      if (k.bytes > 0) {
        sqlite3_bind_double(s, 7, k.bytes);
        sqlite3_bind_text(s, 8, "analytic", -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 11, "memory", -1, SQLITE_STATIC);
      } else {
        sqlite3_bind_null(s, 7);
        sqlite3_bind_text(s, 8, "none", -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 11, "unknown", -1, SQLITE_STATIC);
      }
      if (k.flops > 0 && k.bytes > 0) {
        sqlite3_bind_double(s, 9, k.flops / k.bytes);
        sqlite3_bind_double(s, 10, k.flops / k.bytes * 3.35e12);
      } else {
        sqlite3_bind_null(s, 9);
        sqlite3_bind_null(s, 10);
      }
      sqlite3_bind_text(s, 12, prefill ? "prefill" : "decode", -1,
                        SQLITE_STATIC);
      sqlite3_step(s);
      sqlite3_reset(s);
    }
  }
  sqlite3_finalize(s);
  sqlite3_prepare_v2(
      db,
      "INSERT INTO kernel_rows (run_id, session_id, correlation_id, sig_id, "
      "start_ns, end_ns, duration_ns, achieved_flops_per_s, "
      "achieved_bytes_per_s, fraction_of_roof, step_id) VALUES "
      "(?1,?11,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
      -1, &s, nullptr);
  const int64_t sizes[] = {n / 4, n / 2, n};
  for (int run = 1; run <= 3; ++run) {
    const std::string id = std::to_string(run);
    Exec(db, "BEGIN");
    Exec(db, "INSERT INTO runs (run_id, device_name, roof_source, flops_sources) "
             "VALUES (" + id + ", 'NVIDIA H100 80GB HBM3', 'datasheet:h100-sxm', "
             "'analytic')");
    Exec(db, "INSERT INTO roofs VALUES (" + id +
             ", 0, 'bf16_tc', 989.4e12, 3.35e12, 295.3, 'datasheet')");
    for (int p = 1; p <= producers; ++p) {
      Exec(db, "INSERT INTO devices (run_id, session_id, device_id, name) "
               "VALUES (" + id + ", " + std::to_string(p) +
               ", 0, 'NVIDIA H100 80GB HBM3')");
    }
    const int64_t count = sizes[run - 1];
    // Each kernel's start: one after another, or a producer's round of
    // kernels starting together.
    std::vector<int64_t> starts(count);
    for (int64_t i = 0, t = 1000000; i < count; ++i) {
      starts[i] = t;
      if (producers == 1 || i % producers == producers - 1) {
        t += kinds[i % num_kinds].ns + 500;
      }
    }
    // The order the rows are written: producer by producer, a window each.
    std::vector<int64_t> order;
    order.reserve(count);
    const int64_t round = producers * window;
    for (int64_t base = 0; base < count; base += round) {
      for (int p = 0; p < producers; ++p) {
        for (int64_t i = base + p; i < std::min(count, base + round);
             i += producers) {
          order.push_back(i);
        }
      }
    }
    for (const int64_t i : order) {
      const int64_t t = starts[i];
      const int kind = static_cast<int>(i % num_kinds);
      const K& k = kinds[kind];
      const bool prefill = i < count / 20;
      sqlite3_bind_int64(s, 1, run);
      sqlite3_bind_int64(s, 2, i);
      sqlite3_bind_int64(s, 3, 2 * kind + 1 + (prefill ? 1 : 0));
      sqlite3_bind_int64(s, 4, t);
      sqlite3_bind_int64(s, 5, t + k.ns);
      sqlite3_bind_int64(s, 6, k.ns);
      const double secs = k.ns * 1e-9;
      if (k.flops > 0 && k.bytes > 0) {
        sqlite3_bind_double(s, 7, k.flops / secs);
      } else {
        sqlite3_bind_null(s, 7);
      }
      if (k.bytes > 0) {
        sqlite3_bind_double(s, 8, k.bytes / secs);
        sqlite3_bind_double(s, 9, k.bytes / secs / 3.35e12);
      } else {
        sqlite3_bind_null(s, 8);
        sqlite3_bind_null(s, 9);
      }
      sqlite3_bind_int64(s, 10, i / (num_kinds * 4));
      sqlite3_bind_int64(s, 11, 1 + i % producers);
      if (sqlite3_step(s) != SQLITE_DONE) {
        std::cerr << "analyzer_bench: insert failed: " << sqlite3_errmsg(db) << "\n";
        std::exit(1);
      }
      sqlite3_reset(s);
    }
    // Where the run's rows are, and whether written in start order (as the
    // writer records it).
    Exec(db, "INSERT INTO run_kernel_ids SELECT run_id, MIN(kernel_id), "
             "MAX(kernel_id), " + std::string(producers == 1 ? "1" : "0") +
             " FROM kernel_rows WHERE run_id = " + id + " GROUP BY run_id");
    Exec(db, "COMMIT");
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
}

// The bare read: the same kernel query the report runs, every row stepped
// and its columns fetched, nothing aggregated.
int ReadStore(const std::string& path, int64_t run) {
  rooftrace::StoreReader store;
  if (!store.Open(path, path).ok()) return 1;
  int64_t rows = 0;
  double sink = 0;
  const auto st = store.ForEachKernel(run, [&](const rooftrace::KernelRow& k) {
    ++rows;
    sink += static_cast<double>(k.duration_ns) + k.name.size();
    return rooftrace::OkStatus();
  });
  return st.ok() && rows > 0 && sink > 0 ? 0 : 1;
}

// What `rooftrace analyze PATH --by family` does (a .rft is analyzed as it
// is read, without a store).
int AnalyzeInput(const std::string& path, std::optional<int64_t> run) {
  rooftrace::ReportOptions o;
  o.run_id = run;
  o.group_by = rooftrace::GroupBy::kFamily;
  auto r = rooftrace::analyzer::OpenAndReport(path, "", o);
  if (!r.ok()) {
    std::cerr << r.status().message() << "\n";
    return 1;
  }
  return r->report.groups.empty() ? 1 : 0;
}

// The bare read of a trace: every frame read and every record in it
// decoded, with the collector's own decoder (records dropped after each
// packet, so memory stays flat).
int ReadTrace(const std::string& path) {
  rooftrace::wire::TraceFileReader reader;
  if (!reader.Open(path).ok()) return 1;
  std::string_view payload;
  rooftrace::SessionRecords records;
  rooftrace::PacketDigest digest;
  uint64_t kernels = 0;
  while (reader.Next(&payload) == rooftrace::wire::TraceFileReader::Result::kFrame) {
    if (rooftrace::DecodeRecordPacket(payload, &records, &digest) ==
        rooftrace::PacketDecode::kMalformed) {
      return 1;
    }
    kernels += records.kernels.size();
    records.kernels.clear();
    records.launches.clear();
    records.memcpys.clear();
    records.gemms.clear();
    records.gemm_links.clear();
    records.nvtx.clear();
    records.counters.clear();
  }
  return kernels > 0 ? 0 : 1;
}

void Print(const char* what, int64_t kernels, const Measure& read, const Measure& full) {
  std::printf("%-6s %11lld kernels  read %7.2f s %8.1f MiB | analyze %7.2f s %8.1f MiB"
              " | ratio %.2fx%s | cpu read %.2f s, analyze %.2f s, ratio %.2fx\n",
              what, static_cast<long long>(kernels), read.seconds,
              read.max_rss_kb / 1024.0, full.seconds, full.max_rss_kb / 1024.0,
              read.seconds > 0 ? full.seconds / read.seconds : 0.0,
              read.exit_code || full.exit_code ? "  (FAILED)" : "",
              read.cpu_seconds, full.cpu_seconds,
              read.cpu_seconds > 0 ? full.cpu_seconds / read.cpu_seconds : 0.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 1000000;
  std::string dir = std::filesystem::temp_directory_path().string() + "/rooftrace-analyzer-bench";
  bool rft = true, stores = true, keep_rft = false, keep_store = false;
  int producers = 1;
  int64_t window = 8192;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kernels" && i + 1 < argc) {
      n = std::atoll(argv[++i]);
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--no-rft") {
      rft = false;
    } else if (a == "--no-store") {
      stores = false;
    } else if (a == "--keep-rft") {
      keep_rft = true;
    } else if (a == "--keep-store") {
      keep_store = true;
    } else if (a == "--producers" && i + 1 < argc) {
      producers = std::atoi(argv[++i]);
    } else if (a == "--window" && i + 1 < argc) {
      window = std::atoll(argv[++i]);
    } else {
      std::cerr << "usage: analyzer_bench [--kernels N] [--dir DIR] [--no-rft] "
                   "[--no-store] [--keep-rft] [--keep-store]\n"
                   "                      [--producers P] [--window W]\n";
      return 2;
    }
  }
  if (n < 100) {
    std::cerr << "analyzer_bench: --kernels must be at least 100\n";
    return 2;
  }
  if (producers < 1 || window < 1) {
    std::cerr << "analyzer_bench: --producers and --window must be at least "
                 "1\n";
    return 2;
  }
  std::filesystem::create_directories(dir);
  const std::string store = dir + "/bench.sqlite";
  if (stores) {
  auto t0 = Clock::now();
  BuildStore(store, n, producers, window);
  std::printf("built %s: runs of %lld, %lld, %lld kernels in %.1f s (%.0f MiB)\n",
              store.c_str(), static_cast<long long>(n / 4), static_cast<long long>(n / 2),
              static_cast<long long>(n),
              std::chrono::duration<double>(Clock::now() - t0).count(),
              std::filesystem::file_size(store) / 1048576.0);
  std::fflush(stdout);
  const int64_t sizes[] = {n / 4, n / 2, n};
  for (int run = 1; run <= 3; ++run) {
    const Measure read = InChild([&] { return ReadStore(store, run); });
    const Measure full = InChild([&] { return AnalyzeInput(store, run); });
    Print("store", sizes[run - 1], read, full);
  }
  if (keep_store) {
    std::printf("kept %s\n", store.c_str());
  } else {
    std::filesystem::remove(store);
  }
  }

  if (rft) {
    for (int64_t size : {n / 4, n / 2, n}) {
      rooftrace::test_support::LlmTraceOptions o;
      o.layers = 4;
      o.batch = 8;
      o.prompt_len = 128;
      o.decode_steps = static_cast<int>(
          std::max<int64_t>(1, size / static_cast<int64_t>(
                                          rooftrace::test_support::LlmKernelsPerStep(o)) -
                                   1));
      o.session.argv = {"bench"};
      const std::string path = dir + "/bench.rft";
      {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        rooftrace::test_support::TraceBuilder b(o.session);
        b.set_keep_packets(false);
        b.set_sink([&](std::string_view frame) { f.write(frame.data(), frame.size()); });
        const auto truth = rooftrace::test_support::GenerateLlmTrace(o, &b);
        size = static_cast<int64_t>(truth.kernels);
      }
      const Measure read = InChild([&] { return ReadTrace(path); });
      const Measure full =
          InChild([&] { return AnalyzeInput(path, std::nullopt); });
      Print(".rft", size, read, full);
      if (keep_rft) {
        const std::string kept =
            dir + "/bench-" + std::to_string(size) + ".rft";
        std::filesystem::rename(path, kept);
        std::printf("kept %s\n", kept.c_str());
      } else {
        std::filesystem::remove(path);
      }
    }
  }
  return 0;
}
