// The producer side of one rooftrace session in this process: the
// configuration, the bounded queue application threads write records into,
// interned strings, the per-kind counts, what CUPTI attached (activity
// buffers, counters mode), and the Sender that drains all of it into framed
// packets on its own thread. ("Producer" is the wire's word for the process
// that writes a stream; the collector's side of the same stream is its
// collector::Session, and its records are the pipeline's.)
//
// Who owns it: the process producer is created once by StartProcessProducer
// (process.h), whatever entry route comes first, and never destroyed (the
// host's static destructors and atexit handlers may still call our hooks);
// Stop() runs at exit. A forked child gets a new producer on its first
// record (new pid, new Hello). Tests create producers of their own.
//
// Thread safety: Emit*(), Intern(), Count*() and Warn() from any thread,
// without blocking (a full queue drops and counts); Start()/Stop() from one
// thread; the "sender side" members from the sender thread only.
// The trap: the sender must drain records before taking pending string
// definitions (see string_interner.h).
#ifndef ROOFTRACE_LIBINJECT_PRODUCER_H_
#define ROOFTRACE_LIBINJECT_PRODUCER_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "libinject/activity.h"
#include "proto/capture_records.h"
#include "libinject/config.h"
#include "proto/wire_encoder.h"
#include "libinject/kernel_filter.h"
#include "libinject/record_queue.h"
#include "proto/live_buffer.h"
#include "libinject/string_interner.h"

namespace rooftrace::inject {

class CountersMode;
class SamplingMode;
class CuptiTracer;
class Sender;

struct ProducerOptions {
  Config config;
  int connect_timeout_ms = 1000;
  // How long the sender waits for the collector's HelloReply on a socket.
  int hello_reply_timeout_ms = 1000;
  uint64_t stats_interval_ms = 1000;
  uint64_t flush_interval_ms = 50;
  // Records per batch packet (keeps frames well below kMaxFrameBytes).
  size_t max_batch_records = 4096;
};

class Producer {
 public:
  explicit Producer(ProducerOptions options);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Starts the sender (opens the sink, writes Hello). Errors only for a
  // configuration that cannot work (bad regex); an unreachable collector
  // is not an error (spool).
  Status Start();
  // Flushes CUPTI (when attached), drains, writes Goodbye, closes, then
  // finalizes CUPTI; waits at most config.exit_timeout_ms. Idempotent.
  // Returns false on timeout.
  bool Stop(int32_t exit_code = -1);

  // ---- application threads (no heap, never block)
  void EmitLaunch(const LaunchRecord& r) { Emit(RecordType::kLaunch, &r); }
  void EmitGemm(const GemmRecord& r) { Emit(RecordType::kGemm, &r); }
  void EmitRange(const NvtxRangeRecord& r) { Emit(RecordType::kNvtxRange, &r); }
  void EmitMark(const NvtxMarkRecord& r) { Emit(RecordType::kNvtxMark, &r); }
  uint64_t Intern(std::string_view s) { return interner_.Intern(s); }
  uint64_t NextRangeId() { return next_range_id_.fetch_add(1) + 1; }
  uint64_t NextGemmCallId() { return next_gemm_call_id_.fetch_add(1) + 1; }
  // Counts a record not recorded by choice (e.g. outside profiler range).
  void CountFiltered(uint32_t kind) {
    counts_->filtered[kind].fetch_add(1, std::memory_order_relaxed);
  }
  void CountDropped(uint32_t kind) {
    counts_->seen[kind].fetch_add(1, std::memory_order_relaxed);
    counts_->dropped[kind].fetch_add(1, std::memory_order_relaxed);
  }
  // Launch records are produced only while capturing (ROOFTRACE_CAPTURE).
  bool capturing() const { return capturing_.load(std::memory_order_relaxed); }
  void set_capturing(bool on) {
    capturing_.store(on, std::memory_order_relaxed);
  }

  // ---- CUPTI activity, attached by the tracer before it enables activity
  struct ActivityHooks {
    ActivityBufferPool* pool = nullptr;
    ActivityDecoder* decoder = nullptr;
    std::function<void()> flush;                // forced flush, at Stop
    // Every sender pass: the flush the tracer finds due and safe, if any.
    std::function<void()> periodic_flush;
    std::function<uint64_t()> dropped_records;  // CUPTI's own count
  };
  void AttachActivity(ActivityHooks hooks);
  // Counters mode, attached by the tracer when CUPTI starts (before or
  // after Start()): the Hello says MODE_COUNTERS with CAPABILITY_COUNTERS
  // when it has not gone yet, the sender flushes it every pass
  // (CounterBatch packets; all of it at Stop, before CUPTI is finalized),
  // and Stats carry its counts, passes and warnings. Kernel selection in
  // counters mode is the counters filter's (config.h).
  void AttachCounters(CountersMode* counters);
  // Sampling mode, attached the same way: the Hello says MODE_SAMPLING with
  // CAPABILITY_PM_SAMPLING, the sender collects its samples every pass
  // (PmSampleBatch packets; the rest at Stop) and Stats carry its counts
  // and warnings, and say MODE_TRACE once it failed.
  void AttachSampling(SamplingMode* sampling);

  // Wakes the sender (a completed buffer is waiting).
  void Wake();

  // One line said on stderr and repeated in the next Stats packet.
  void Warn(const std::string& line);

  const ProducerOptions& options() const { return options_; }
  const Config& config() const { return options_.config; }
  // Records waiting for the sender (approximate).
  size_t queued() const { return queue_ ? queue_->SizeApprox() : 0; }
  // Records of `kind` dropped so far (queue full); for tests and benchmarks.
  uint64_t dropped(uint32_t kind) const {
    return counts_->dropped[kind].load(std::memory_order_relaxed);
  }
  // Times an application thread waited for room (ROOFTRACE_ON_FULL=wait).
  uint64_t waits() const { return waits_.load(std::memory_order_relaxed); }
  // The live buffer the queue, strings and counts live in (never null
  // after a successful construction; its path is "" when anonymous).
  LiveBuffer* live_buffer() { return live_.get(); }
  // Trace mode's kernel filter (null when the configuration is bad).
  KernelFilter* kernel_filter() { return filter_.get(); }
  StringInterner* interner() { return &interner_; }
  // The spool file written, when the sink is (or became) a spool.
  std::string spool_path();
  CuptiTracer* tracer() { return tracer_.get(); }
  // True the first time only: CUPTI is tried once per producer.
  bool FirstCuptiAttempt() { return !cupti_attempted_.exchange(true); }
  void set_tracer(std::unique_ptr<CuptiTracer> tracer);
  uint32_t pid() const { return hello_.pid; }

  // ---- sender side (the Sender's thread)
  // Waits up to `wait_ms` (0: not at all) for Wake() or Stop(); false once
  // Stop() was asked.
  bool WaitForWork(uint64_t wait_ms);
  // Hands the next record to `visit(const CapturedRecord&)` where it lies,
  // keeping its slot until ReleaseRecord(position):
  // until the frames carrying it are written, the record stays in the live
  // buffer for a reader to find should this process die.
  template <typename Visit>
  bool PopRecord(Visit&& visit, uint64_t* position) {
    return queue_ != nullptr &&
           queue_->TryPopHeldWith(std::forward<Visit>(visit), position);
  }
  void ReleaseRecord(uint64_t position) { queue_->Release(position); }
  size_t queue_capacity() const { return queue_ ? queue_->capacity() : 0; }
  // The calling thread is the sender's: it never waits for room.
  static void MarkSenderThread();
  HelloInfo hello();
  ActivityHooks activity();
  CountersMode* counters();
  SamplingMode* sampling();
  std::vector<std::string> TakeWarnings();
  void set_spool_path(const std::string& path);
  int32_t exit_code();
  // Counts of application-thread records: seen, dropped, filtered.
  CountTable ProducedCounts() const;
  // Records a pass could not write anywhere: counted as dropped.
  void CountLost(const CountTable& lost);
  void SenderDone();

 private:
  void Emit(RecordType type, const void* record);
  // Lossless mode: waits until `fill` finds room; false when the sender is
  // gone or made no progress for a second (the record is then dropped).
  template <typename Fill>
  bool WaitForRoom(Fill& fill);
  // Creates the live buffer and the queue over it (live_status_ says why
  // not, and Start() refuses).
  void CreateLiveBuffer();

  ProducerOptions options_;
  HelloInfo hello_;
  std::unique_ptr<LiveBuffer> live_;
  std::unique_ptr<BoundedQueue<CapturedRecord>> queue_;
  Status live_status_;
  // The per-kind counts: in the live buffer's header, so a reader knows
  // them after this process is gone; `own_counts_` when there is none.
  std::unique_ptr<LiveCounts> own_counts_;
  LiveCounts* counts_ = nullptr;
  StringInterner interner_;
  std::unique_ptr<KernelFilter> filter_;
  Status filter_status_;  // a bad pattern, said by Start()
  // Written by application threads on every range, GEMM call and record:
  // on cache lines of their own, away from what the sender writes (the
  // interner's pending definitions, its lock), or every NVTX push pays for
  // the line moving between cores (measured: push+pop 130 -> 200 ns).
  alignas(64) std::atomic<uint64_t> next_range_id_{0};
  std::atomic<uint64_t> next_gemm_call_id_{0};
  std::atomic<bool> capturing_{true};
  std::atomic<bool> cupti_attempted_{false};
  std::atomic<uint64_t> waits_{0};
  // Lossless mode gave up waiting at this queue head (~0: not given up);
  // it waits again once the sender has moved on.
  std::atomic<uint64_t> stalled_at_head_{~uint64_t{0}};
  std::atomic<bool> sender_running_{false};

  alignas(64) std::mutex mu_;  // guards the fields below
  std::condition_variable cv_;
  bool wake_ = false;
  bool stop_requested_ = false;
  bool sender_done_ = false;
  int32_t exit_code_ = -1;
  ActivityHooks activity_;
  CountersMode* counters_ = nullptr;  // owned by the tracer
  SamplingMode* sampling_ = nullptr;  // owned by the tracer
  std::vector<std::string> warnings_;
  std::string spool_path_;

  std::unique_ptr<Sender> sender_;
  std::thread sender_thread_;
  bool started_ = false;
  bool stopped_ = false;
  std::unique_ptr<CuptiTracer> tracer_;
};

// Host name, argv (from /proc/self/cmdline), pids and start times.
HelloInfo MakeHelloInfo(const Config& config);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_PRODUCER_H_
