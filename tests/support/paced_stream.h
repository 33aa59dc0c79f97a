// A producer's stream of known totals, sent over time: what the windows,
// metrics and soak tests feed a listening collector. Counters mode, one
// device; each batch is one NVTX "step" range holding `kernels_per_batch`
// kernels that alternate between two families, each kernel with measured
// FLOPs and DRAM bytes (KernelCounters), so every total is exact:
//   family A ("rt_paced_a_kernel"): a_ns each, a_ns * step_factor from
//     batch `step_batch` on (the step a `history --check` must find);
//   family B ("rt_paced_b_kernel"): b_ns each.
// Batches are `batch_ms` apart in wall-clock time (0: as fast as the
// socket takes them). Used by tests/collector/test_producer (--paced) and
// bench/collector/collect_soak_bench.
#ifndef ROOFTRACE_TESTS_SUPPORT_PACED_STREAM_H_
#define ROOFTRACE_TESTS_SUPPORT_PACED_STREAM_H_

#include <chrono>
#include <cstdint>
#include <thread>

#include "sources/rft/testing/trace_builder.h"

namespace rooftrace::test_support {

struct PacedStream {
  uint64_t batches = 10;
  uint64_t kernels_per_batch = 20;  // even: half A, half B
  uint64_t batch_ms = 100;
  uint64_t a_ns = 10000, b_ns = 20000;
  uint64_t step_batch = UINT64_MAX;  // no step
  uint64_t step_factor = 2;
  uint64_t flops_per_kernel = 1000000;  // both families
  uint64_t bytes_per_kernel = 4096;     // read 3/4, write 1/4
  // false: no KernelCounters (a trace-mode stream: kernels without FLOPs
  // or bytes; the session's mode is the caller's SessionInfo).
  bool counters = true;
  // With counters: as libinject's counters mode samples per signature (each
  // family is one), only the first `counters_first` launches of a family
  // and then every `counters_every`-th carry them; the others come without
  // and take their family's samples in the collector (pipeline/sampled.h).
  // Both 0: every kernel carries its counters.
  uint64_t counters_first = 0, counters_every = 0;
  // Batch `drop_batch` reports `dropped` kernels the producer lost.
  uint64_t drop_batch = UINT64_MAX, dropped = 0;

  uint64_t AKernels() const { return batches * (kernels_per_batch / 2); }
  uint64_t BKernels() const { return AKernels(); }
  uint64_t ANs(uint64_t batch) const {
    return batch >= step_batch ? a_ns * step_factor : a_ns;
  }
  // Kernel time of family A over the whole stream.
  uint64_t ATotalNs() const {
    uint64_t total = 0;
    for (uint64_t b = 0; b < batches; ++b) {
      total += ANs(b) * (kernels_per_batch / 2);
    }
    return total;
  }
  uint64_t BTotalNs() const { return BKernels() * b_ns; }
  // Whether the `ordinal`-th launch of its family (from 1) carries counters.
  bool Profiled(uint64_t ordinal) const {
    if (!counters) return false;
    if (counters_first == 0 && counters_every == 0) return true;
    return ordinal <= counters_first ||
           (counters_every > 0 &&
            (ordinal - counters_first) % counters_every == 0);
  }
};

// Sends `s` through `b` (Hello to Goodbye); `b` has its sink set.
inline void SendPacedStream(const PacedStream& s, TraceBuilder* b) {
  b->set_max_batch_records(1u << 20);  // one packet per kind per batch
  b->Hello();
  b->AddDevice(0, "NVIDIA H100 80GB HBM3");
  uint64_t corr = 0;
  uint64_t host_ns = b->info().start_ns + 1000000;
  uint64_t gpu_ns = host_ns + 10000;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t read = s.bytes_per_kernel * 3 / 4;
  for (uint64_t batch = 0; batch < s.batches; ++batch) {
    const uint64_t range = batch + 1;
    const uint64_t range_start = host_ns;
    for (uint64_t i = 0; i < s.kernels_per_batch; ++i) {
      const bool a = i % 2 == 0;
      const uint64_t dur = a ? s.ANs(batch) : s.b_ns;
      ++corr;
      host_ns += 1000;
      b->AddLaunch(corr, host_ns, 0, range);
      gpu_ns = std::max(gpu_ns, host_ns + 2000);
      b->AddKernel(a ? "rt_paced_a_kernel" : "rt_paced_b_kernel", corr,
                   gpu_ns, gpu_ns + dur);
      gpu_ns += dur + 500;
      const uint64_t ordinal = batch * (s.kernels_per_batch / 2) + i / 2 + 1;
      if (s.Profiled(ordinal)) {
        b->AddCounters(corr, read, s.bytes_per_kernel - read,
                       wire::PRECISION_FP32, s.flops_per_kernel);
      }
    }
    host_ns += 1000;
    b->AddNvtxRange(range, "step", range_start, host_ns);
    // Steps apart on the GPU too: a gap tells the step boundary.
    gpu_ns += 1000000;
    host_ns = std::max(host_ns + 1000000, gpu_ns);
    if (batch == s.drop_batch) {
      b->AddDropped(wire::RECORD_KERNEL, s.dropped);
      b->Stats();
    } else {
      b->Flush();
    }
    if (s.batch_ms > 0) {
      std::this_thread::sleep_until(
          t0 + std::chrono::milliseconds(s.batch_ms * (batch + 1)));
    }
  }
  b->Goodbye(0);
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_PACED_STREAM_H_
