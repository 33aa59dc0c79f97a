// libinject benchmark (CPU only): what an application thread pays per
// CUPTI launch callback (enter + exit), per NVTX push/pop pair and per
// interposed cuBLAS call, and how fast the sender encodes and writes.
//
//   libinject_bench [iterations]      (default 2,000,000)
//   libinject_bench N sender          the sender figure alone (for
//                                     instruction counts under callgrind)
//   libinject_bench N launch-path     N launches as CUPTI reports them
//                                     (bench/libinject/callgrind_launch.sh
//                                     counts instructions per launch)
// Prints one line per figure. Target: launch callback < 200 ns.
#include <cupti.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "libinject/clock.h"
#include "libinject/gemm_shapes.h"
#include "libinject/nvtx_injection.h"
#include "libinject/process.h"
#include "libinject/tracer.h"

using namespace rooftrace::inject;

namespace {

std::string TempPath(const char* name) {
  const char* tmp = getenv("TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/rooftrace_bench_" +
         std::to_string(getpid()) + "_" + name + ".rft";
}

ProducerOptions Options(const std::string& path, uint64_t queue) {
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = path;
  // The live buffer (the queue's memory) beside the trace, as in a host.
  const char* tmp = getenv("TMPDIR");
  o.config.spool_dir = tmp != nullptr ? tmp : "/tmp";
  o.config.queue_records = queue;
  o.config.exit_timeout_ms = 60000;
  return o;
}

// Runs `body(i)` n times in bursts of `burst`, waiting (untimed) for the
// sender to drain the queue between bursts: the figure is the application
// thread's cost with a default-sized queue and no drops.
template <typename Body>
std::chrono::steady_clock::duration TimeInBursts(Producer& producer, uint64_t n,
                                                 uint64_t burst, Body body) {
  std::chrono::steady_clock::duration total{};
  for (uint64_t done = 0; done < n;) {
    const uint64_t end = std::min(n, done + burst);
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = done; i < end; ++i) body(i);
    total += std::chrono::steady_clock::now() - t0;
    done = end;
    while (producer.queued() > 0) usleep(200);
  }
  return total;
}

double NsPer(std::chrono::steady_clock::duration d, uint64_t n) {
  return std::chrono::duration<double, std::nano>(d).count() /
         static_cast<double>(n);
}

// libinject's own path for the launches an inference process makes, as
// CUPTI reports them with trace mode's callbacks enabled: a runtime launch
// (cudaLaunchKernel, or nvcc 13's __cudaLaunchKernel stub) is a runtime
// enter, the driver enter and exit of the cuLaunchKernel it makes, and the
// runtime exit; a driver launch (Triton) is a driver enter and exit. One
// of each per iteration, with the sender draining between bursts.
// callgrind_launch.sh counts instructions inside CuptiTracer::OnCallback.
int LaunchPath(uint64_t n) {
  const std::string path = TempPath("launch_path");
  Producer producer(Options(path, 16384));
  CuptiTracer tracer(&producer, CuptiApi{});
  constexpr uint32_t kRuntime = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  constexpr uint32_t kDriver = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  for (const TracedCallback& c : TracedCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API)) {
    tracer.SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, c.cbid, c.kind);
  }
  for (const TracedCallback& c : TracedCallbacks(CUPTI_CB_DOMAIN_DRIVER_API)) {
    tracer.SetApiKind(CUPTI_CB_DOMAIN_DRIVER_API, c.cbid, c.kind);
  }
  if (!producer.Start().ok()) return 1;
  CUpti_CallbackData enter{};
  enter.callbackSite = CUPTI_API_ENTER;
  CUpti_CallbackData exit{};
  exit.callbackSite = CUPTI_API_EXIT;
  CUpti_CallbackData d_enter{};
  d_enter.callbackSite = CUPTI_API_ENTER;
  CUpti_CallbackData d_exit{};
  d_exit.callbackSite = CUPTI_API_EXIT;
  const auto rt = CUPTI_CB_DOMAIN_RUNTIME_API;
  const auto drv = CUPTI_CB_DOMAIN_DRIVER_API;
  const auto elapsed = TimeInBursts(producer, n, 4096, [&](uint64_t i) {
    const uint32_t c = static_cast<uint32_t>(3 * i);
    enter.correlationId = exit.correlationId = c;
    d_enter.correlationId = d_exit.correlationId = c + 1;
    CuptiTracer::CallbackTrampoline(&tracer, rt, kRuntime, &enter);
    CuptiTracer::CallbackTrampoline(&tracer, drv, kDriver, &d_enter);
    CuptiTracer::CallbackTrampoline(&tracer, drv, kDriver, &d_exit);
    CuptiTracer::CallbackTrampoline(&tracer, rt, kRuntime, &exit);
    d_enter.correlationId = d_exit.correlationId = c + 2;
    CuptiTracer::CallbackTrampoline(&tracer, drv, kDriver, &d_enter);
    CuptiTracer::CallbackTrampoline(&tracer, drv, kDriver, &d_exit);
  });
  producer.Stop();
  printf(
      "launch path (a runtime launch with its nested driver call, and a "
      "driver launch): %.1f ns per pair; %llu dropped\n",
      NsPer(elapsed, n),
      static_cast<unsigned long long>(producer.dropped(7)));
  unlink(path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  printf("libinject_bench: %llu iterations per figure, 1 application thread\n",
         static_cast<unsigned long long>(n));
  if (argc > 2 && std::string(argv[2]) == "sender") goto sender_only;
  if (argc > 2 && std::string(argv[2]) == "launch-path") {
    return LaunchPath(n);
  }

  // ---- launch callback: enter + exit of one cudaLaunchKernel, live sender.
  {
    const std::string path = TempPath("launch");
    Producer producer(Options(path, 16384));
    CuptiTracer tracer(&producer, CuptiApi{});
    constexpr uint32_t kCbid = 211;
    tracer.SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kCbid,
                      ApiCallbackKind::kKernelLaunch);
    if (!producer.Start().ok()) return 1;
    CUpti_CallbackData enter{};
    enter.callbackSite = CUPTI_API_ENTER;
    CUpti_CallbackData exit{};
    exit.callbackSite = CUPTI_API_EXIT;
    const auto elapsed = TimeInBursts(producer, n, 8192, [&](uint64_t i) {
      enter.correlationId = exit.correlationId = static_cast<uint32_t>(i);
      CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      kCbid, &enter);
      CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      kCbid, &exit);
    });
    producer.Stop();
    printf(
        "launch callback (enter+exit, Launch record queued): %.1f ns per "
        "launch (target < 200 ns; %llu dropped)\n",
        NsPer(elapsed, n),
        static_cast<unsigned long long>(producer.dropped(7)));
    unlink(path.c_str());
  }

  // ---- sustained: launches paced at a given rate for one second each,
  // default queue, the sender draining live: where drops start here. (A
  // real CUDA launch costs microseconds, so 250k/s is already a busy
  // server.)
  for (const double rate : {250e3, 1e6, 4e6}) {
    const std::string path = TempPath("sustained");
    Producer producer(Options(path, 16384));
    CuptiTracer tracer(&producer, CuptiApi{});
    constexpr uint32_t kCbid = 211;
    tracer.SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kCbid,
                      ApiCallbackKind::kKernelLaunch);
    if (!producer.Start().ok()) return 1;
    CUpti_CallbackData enter{};
    enter.callbackSite = CUPTI_API_ENTER;
    CUpti_CallbackData exit{};
    exit.callbackSite = CUPTI_API_EXIT;
    const uint64_t count = static_cast<uint64_t>(rate);
    const uint64_t start = MonotonicNs();
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t due = start + static_cast<uint64_t>(1e9 * i / rate);
      while (MonotonicNs() < due) {
      }
      enter.correlationId = exit.correlationId = static_cast<uint32_t>(i);
      CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      kCbid, &enter);
      CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      kCbid, &exit);
    }
    producer.Stop();
    printf(
        "sustained %.2f M launches/s for 1 s (queue 16384, sender live): "
        "%.2f%% dropped\n",
        rate / 1e6,
        100.0 * static_cast<double>(producer.dropped(7)) /
            static_cast<double>(count));
    unlink(path.c_str());
  }

  // ---- bursts: host threads record NVTX ranges in a tight loop, as fast
  // as they can, the default 32 MiB budget; drop mode loses what the sender
  // cannot keep up with, wait mode (ROOFTRACE_ON_FULL=wait) loses nothing
  // and the figure is the rate sustained with 0 drops.
  for (const QueueFull policy : {QueueFull::kDrop, QueueFull::kWait}) {
    for (const int threads : {1, 8}) {
      const std::string path = TempPath("burst");
      ProducerOptions o = Options(path, 0);
      o.config.on_full = policy;
      Producer producer(o);
      if (!producer.Start().ok()) return 1;
      const uint64_t per_thread = 2000000 / threads;
      const uint64_t name = producer.Intern("burst");
      const uint64_t t0 = MonotonicNs();
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&producer, per_thread, name] {
          NvtxRangeRecord r{};
          r.name_iid = name;
          for (uint64_t i = 0; i < per_thread; ++i) {
            r.range_id = producer.NextRangeId();
            r.start_ns = i;
            r.end_ns = i + 1;
            producer.EmitRange(r);
          }
        });
      }
      for (auto& w : workers) w.join();
      const uint64_t recorded_ns = MonotonicNs() - t0;
      producer.Stop();
      const uint64_t total_ns = MonotonicNs() - t0;
      const uint64_t n = per_thread * threads;
      const uint64_t dropped = producer.dropped(4);  // kRecordNvtxRange
      printf(
          "burst, %d thread(s), on full %s: %.2f M records/s recorded, %.2f M "
          "records/s to the file (drained), %.1f%% dropped (%llu of %llu)\n",
          threads, policy == QueueFull::kWait ? "wait" : "drop",
          static_cast<double>(n) * 1e3 / static_cast<double>(recorded_ns),
          static_cast<double>(n - dropped) * 1e3 /
              static_cast<double>(total_ns),
          100.0 * static_cast<double>(dropped) / static_cast<double>(n),
          static_cast<unsigned long long>(dropped),
          static_cast<unsigned long long>(n));
      unlink(path.c_str());
    }
  }

  // ---- untraced API: the cost CUPTI callbacks we do not use add.
  {
    const std::string path = TempPath("untraced");
    Producer producer(Options(path, 1 << 10));
    CuptiTracer tracer(&producer, CuptiApi{});
    if (!producer.Start().ok()) return 1;
    CUpti_CallbackData data{};
    data.callbackSite = CUPTI_API_ENTER;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < n; ++i) {
      CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API, 3,
                                      &data);
    }
    const auto t1 = std::chrono::steady_clock::now();
    producer.Stop();
    printf("callback for an API we do not trace: %.1f ns per call\n",
           NsPer(t1 - t0, n));
    unlink(path.c_str());
  }

  // ---- NVTX push/pop pair (message interned on every push).
  {
    const std::string path = TempPath("nvtx");
    Producer producer(Options(path, 16384));
    SetCurrentProducerForTesting(&producer);
    if (!producer.Start().ok()) return 1;
    const auto elapsed = TimeInBursts(producer, n, 8192, [](uint64_t) {
      nvtx::RangePushA("decoder.layer.attention");
      nvtx::RangePop();
    });
    producer.Stop();
    SetCurrentProducerForTesting(nullptr);
    printf(
        "NVTX push+pop (ASCII message, NvtxRange queued): %.1f ns per "
        "pair (%llu dropped)\n",
        NsPer(elapsed, n),
        static_cast<unsigned long long>(producer.dropped(4)));
    unlink(path.c_str());
  }

  // ---- cuBLAS hook bookkeeping (GemmScope around a call).
  {
    const std::string path = TempPath("gemm");
    Producer producer(Options(path, 16384));
    SetCurrentProducerForTesting(&producer);
    if (!producer.Start().ok()) return 1;
    const uint64_t m = n / 4;
    const auto elapsed = TimeInBursts(producer, m, 8192, [](uint64_t) {
      GemmScope scope(4);
      if (scope.recording()) {
        scope.record().m = 4096;
        scope.record().n = 16;
        scope.record().k = 4096;
      }
      scope.Finish(0);
    });
    producer.Stop();
    SetCurrentProducerForTesting(nullptr);
    printf(
        "cuBLAS hook bookkeeping (Gemm record queued): %.1f ns per call "
        "(%llu dropped)\n",
        NsPer(elapsed, m),
        static_cast<unsigned long long>(producer.dropped(3)));
    unlink(path.c_str());
  }

sender_only:
  // ---- sender throughput: n launch records already queued, then drained,
  // encoded, framed and written to a file.
  {
    const std::string path = TempPath("sender");
    Producer producer(Options(path, n));
    LaunchRecord r{};
    for (uint64_t i = 0; i < n; ++i) {
      r.correlation_id = i + 1;
      r.api_start_ns = 1'000'000'000ull + i * 1000;
      r.api_end_ns = r.api_start_ns + 3000;
      r.thread_id = 4242;
      r.kind = 1;
      r.nvtx_range_id = i / 100;
      r.cbid = 211;
      producer.EmitLaunch(r);
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (!producer.Start().ok()) return 1;
    producer.Stop();
    const auto t1 = std::chrono::steady_clock::now();
    struct stat st {};
    stat(path.c_str(), &st);
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    // 4096 records per KernelBatch packet, plus Hello, Stats, Goodbye.
    const double packets = static_cast<double>((n + 4095) / 4096 + 3);
    printf("sender: %.2f M records/s, %.0f packets/s (4096 records per "
           "packet), %.1f MB/s written, %.1f bytes per Launch record\n",
           static_cast<double>(n) / seconds / 1e6, packets / seconds,
           static_cast<double>(st.st_size) / seconds / 1e6,
           static_cast<double>(st.st_size) / static_cast<double>(n));
    unlink(path.c_str());
  }
  return 0;
}
