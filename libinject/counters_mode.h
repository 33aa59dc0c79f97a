// Counters mode inside libinject: the bridge between the CUPTI callbacks
// (tracer.cc), the sender thread (sender.cc) and the counters library
// (libinject/counters, CountersRuntime).
//
// Created once per producer when ROOFTRACE_MODE=counters, from the libcupti
// handle trace mode already opened; lives as long as its producer. If it
// cannot be created, the caller says the one line and stays in trace mode.
// After a failure the runtime reports later (a context it cannot profile),
// every call is a cheap no-op and trace mode goes on.
//
// Threads: the context and launch hooks run on application threads (the
// launch hooks from the driver/runtime API enter/exit callbacks of the same
// launch); Flush/TakeWarnings/counts on the sender thread.
// The trap: the counters library's types stay behind forward declarations
// so the tracer and producer do not see its headers (and their CUPTI
// profiler includes) at all.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_MODE_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_MODE_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "libinject/config.h"
#include "proto/wire_encoder.h"
#include "libinject/string_interner.h"

namespace rooftrace::counters {
struct CuptiProfilerApi;
class CountersRuntime;
struct MetricSet;
}  // namespace rooftrace::counters

namespace rooftrace::inject {

class CountersMode {
 public:
  // Resolves the profiler entry points from libcupti's `cupti_handle` and
  // creates the runtime with the config's counter set and selection. The
  // error is the one line to say (bad selection values, a CUPTI failure).
  static StatusOr<std::unique_ptr<CountersMode>> Create(
      void* cupti_handle, const Config& config, StringInterner* interner);
  // Same with a given entry-point table (tests pass fakes).
  static StatusOr<std::unique_ptr<CountersMode>> CreateWithApi(
      const counters::CuptiProfilerApi& api, const Config& config,
      StringInterner* interner);
  ~CountersMode();

  // CUPTI resource callbacks. A failure disables counters mode; its line
  // comes back through TakeWarnings().
  void OnContextCreated(CUcontext ctx, uint32_t device_ordinal);
  void OnContextDestroyed(CUcontext ctx);

  // Launch API enter of a kernel or graph launch (app thread). `nvtx_path`
  // is the thread's open ranges ("outer/inner"), computed only when
  // needs_nvtx_path(). True when the launch is profiled. OnLaunchEnd must
  // follow on the same thread after the launch either way: a launch that
  // is not profiled still shares its context's auto range.
  // `signature`: KernelSignature of the launch (0: none).
  bool OnLaunchBegin(CUcontext ctx, uint64_t correlation_id,
                     std::string_view kernel_name, std::string_view nvtx_path,
                     bool in_graph_or_capture, uint64_t signature = 0);
  void OnLaunchEnd(CUcontext ctx, uint64_t correlation_id, bool launched);
  // A cudaGraphLaunch: nothing in it is profiled; the first one says so.
  void OnGraphLaunch();
  // Stream capture begun / ended anywhere in the process (successful
  // cu(da)StreamBeginCapture*, and cu(da)StreamEndCapture*). While one is
  // open no launch is profiled: profiling synchronizes the context, which
  // a capture in global mode forbids to every thread.
  void OnCaptureBegan() { captures_.fetch_add(1, std::memory_order_acq_rel); }
  void OnCaptureEnded();
  bool CaptureInProgress() const {
    return captures_.load(std::memory_order_acquire) > 0;
  }
  bool needs_nvtx_path() const { return needs_nvtx_path_; }
  bool disabled() const;

  // ---- Kernel records of profiled launches.
  // CUPTI never completes the activity record of a kernel the Range
  // Profiler replayed, so a profiled kernel's Kernel record is made from
  // what the launch callback saw (LaunchFacts) and the counted
  // gpu__time_duration (KernelFromLaunch), on the sender thread. The
  // sender keeps one Kernel per correlation id (sender.cc,
  // ReplaceReplayedKernels).
  struct LaunchFacts {
    uint64_t correlation_id = 0;
    uint64_t name_iid = 0;  // the launch's symbol (mangled), interned
    uint32_t grid[3] = {0, 0, 0};
    uint32_t block[3] = {0, 0, 0};
    uint32_t dynamic_shared_memory_bytes = 0;
    uint32_t device_id = 0, context_id = 0, stream_id = 0;
    uint64_t api_start_ns = 0, api_end_ns = 0;
  };
  // App thread, at a profiled launch's API exit (no heap: a fixed ring;
  // a slot is reused after kFactSlots later profiled launches).
  void RecordLaunchFacts(const LaunchFacts& facts);
  // Sender thread: the facts of a profiled launch still in the ring.
  bool FindLaunchFacts(uint64_t correlation_id, LaunchFacts* out) const;
  static constexpr size_t kFactSlots = 16384;

  // ---- Which CUPTI activity flush is safe now (sender thread).
  // cupti_activity.h: a default cuptiActivityFlushAll "doesn't return
  // buffers which have one or more incomplete records", and the activity
  // record of a kernel the Range Profiler replayed is never completed (its
  // timestamps stay 0), so a default flush after a profiled launch leaves
  // the buffer holding that record with CUPTI until a forced flush; a flush
  // closes the buffer it was filling all the same (H100, run 7), so each
  // such flush strands one buffer. A forced flush returns every buffer
  // "including the ones which have one or more incomplete activity
  // records": safe only when the only incomplete records are replayed
  // kernels' (their Kernel records are made from the launch, below), that
  // is when every launch not profiled was followed by the end of a profiled
  // launch on the only context (kernel replay runs the context's earlier
  // work to completion before it saves memory and replays).
  enum class ActivityFlush { kNone, kDefault, kForced };
  ActivityFlush SafeActivityFlush();
  // Says a flush of `kind` was made (sender thread).
  void ActivityFlushed(ActivityFlush kind);
  // A traced API call that enqueues GPU work and is not a profiled launch
  // (copies, memsets, graph launches, launches not selected or not
  // profiled): its record may be incomplete until the GPU runs it (app
  // thread, no heap).
  void OnUnprofiledEnqueue() {
    last_unprofiled_.store(
        enqueue_seq_.fetch_add(1, std::memory_order_acq_rel) + 1,
        std::memory_order_release);
  }

  // Sender thread: results evaluated so far (all of them when `final`:
  // shuts every context's profiler down first; call before CUPTI goes).
  // Each result also feeds its signature's spread: a signature whose
  // samples' DRAM bytes or FLOPs spread ((max - min) / mean) beyond
  // ROOFTRACE_COUNTERS_TOLERANCE is profiled ten times as often from then
  // on (KernelFilter::MarkUnsettled).
  void Flush(bool final, std::vector<KernelCountersInfo>* out);
  // The kernel filter's counts (signatures seen, unsettled, ...).
  FilterStats SelectionStats() const;
  uint32_t passes() const;
  // Lines to say and put in Stats.warnings.
  std::vector<std::string> TakeWarnings();
  // RECORD_COUNTERS counts (sent is the caller's): seen = launches
  // profiled, filtered = not selected or busy, dropped = ranges lost or
  // discarded (a range another thread's launch may share).
  RecordCountValues Counts() const;

 private:
  CountersMode(std::unique_ptr<counters::CountersRuntime> runtime,
               StringInterner* interner, bool needs_nvtx_path,
               uint64_t tolerance_pct);
  const std::vector<uint64_t>& MetricIids(const counters::MetricSet* set);
  // The signature a profiled launch was signed with (0: none known).
  uint64_t SignatureOf(uint64_t correlation_id) const;
  // Adds one result to its signature's spread; marks the signature
  // unsettled once it is beyond the tolerance (sender thread).
  void NoteSample(uint64_t signature, uint64_t bytes, uint64_t flops);

  std::unique_ptr<counters::CountersRuntime> runtime_;
  StringInterner* interner_;
  const bool needs_nvtx_path_;
  std::atomic<bool> graph_noted_{false};
  std::atomic<int64_t> captures_{0};  // open stream captures
  // SafeActivityFlush's inputs: a sequence number per enqueue seen (app
  // threads), the last one not profiled, the highest one of a profiled
  // launch that has ended, the profiled launches begun, live contexts.
  std::atomic<uint64_t> enqueue_seq_{0};
  std::atomic<uint64_t> last_unprofiled_{0};
  std::atomic<uint64_t> settled_{0};
  std::atomic<uint64_t> profiled_begun_{0};
  std::atomic<int> live_contexts_{0};
  uint64_t profiled_at_last_flush_ = 0;  // sender thread
  // LaunchFacts by correlation id % kFactSlots. A short lock: taken once per
  // profiled launch (which takes milliseconds of replay) and per lookup.
  mutable std::mutex facts_mu_;
  std::unique_ptr<LaunchFacts[]> facts_;
  // Signatures of profiled launches by correlation id % kFactSlots (under
  // facts_mu_; written at launch enter).
  struct Signed {
    uint64_t correlation_id = 0, signature = 0;
  };
  std::unique_ptr<Signed[]> signed_;
  // Sender thread only: each signature's samples so far.
  struct Spread {
    uint64_t n = 0;
    double sum_bytes = 0, min_bytes = 0, max_bytes = 0;
    double sum_flops = 0, min_flops = 0, max_flops = 0;
  };
  const double tolerance_;  // a fraction; 0: never sample more
  std::unordered_map<uint64_t, Spread> spreads_;
  std::mutex mu_;  // guards notes_
  std::vector<std::string> notes_;
  // Sender thread only: interned metric names per metric set.
  std::unordered_map<const counters::MetricSet*, std::vector<uint64_t>> iids_;
};

// The Kernel record of a profiled launch: the launch's facts, placed at
// the start of its API call (the replayed kernel ran inside it) and lasting
// the counted gpu__time_duration (`gpu_time_ns`).
KernelInfo KernelFromLaunch(const CountersMode::LaunchFacts& facts,
                            uint64_t gpu_time_ns);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_MODE_H_
