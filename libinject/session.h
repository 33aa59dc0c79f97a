// One tracing session of one process: configuration, the bounded record
// queue, interned strings, counts, and the sender thread that encodes
// records into framed packets and writes them to the sink.
//
// Who owns it: the process session is created once by whichever entry route
// comes first (InitializeInjection, InitializeInjectionNvtx2, the LD_PRELOAD
// constructor) and is never destroyed (the host's static destructors and
// atexit handlers may still call our hooks); Stop() runs at exit. A forked
// child gets a new session on its first record (new pid, new Hello). Tests
// create sessions of their own.
//
// Thread safety: Emit*() and Intern() from any thread, without blocking (a
// full queue drops and counts); Start()/Stop() from one thread.
// The trap: the sender must drain records before taking pending string
// definitions (see string_interner.h).
#ifndef ROOFTRACE_LIBINJECT_SESSION_H_
#define ROOFTRACE_LIBINJECT_SESSION_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "libinject/activity.h"
#include "libinject/config.h"
#include "libinject/encoder.h"
#include "libinject/kernel_filter.h"
#include "libinject/record_queue.h"
#include "libinject/records.h"
#include "libinject/sink.h"
#include "libinject/string_interner.h"

namespace rooftrace::inject {

class CountersMode;
class CuptiTracer;

enum class EntryRoute { kCudaInjection, kNvtxInjection, kPreload };

struct SessionOptions {
  Config config;
  int connect_timeout_ms = 1000;
  // How long the sender waits for the collector's HelloReply on a socket.
  int hello_reply_timeout_ms = 1000;
  uint64_t stats_interval_ms = 1000;
  uint64_t flush_interval_ms = 50;
  // Records per batch packet (keeps frames well below kMaxFrameBytes).
  size_t max_batch_records = 4096;
};

class Session {
 public:
  explicit Session(SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // ---- the process session
  // The session of this process, or null (disabled, standing aside, not yet
  // started). In a forked child, starts the child's own session.
  static Session* Current();
  // Starts the process session once, whatever the route; later calls return
  // the same session (or null when standing aside). Starts CUPTI tracing
  // for kCudaInjection, and for kPreload when the host already links CUDA.
  static Session* StartProcessSession(EntryRoute route);
  // LD_PRELOAD into a host without CUDA yet: the process session starts on
  // the first Current() call (a cuBLAS hook, an NVTX call) instead of now.
  static void StartOnFirstRecord();
  // Tests: makes `session` what Current() returns (NVTX handlers and
  // cuBLAS hooks reach the session through it). Null restores none.
  static void SetCurrentForTesting(Session* session);

  // Starts the sender (opens the sink, writes Hello). Errors only for a
  // configuration that cannot work (bad regex); an unreachable collector
  // is not an error (spool).
  Status Start();
  // Flushes CUPTI (when attached), drains, writes Goodbye, closes; waits at
  // most config.exit_timeout_ms. Idempotent. Returns false on timeout.
  bool Stop(int32_t exit_code = -1);

  // ---- producers (application threads; no heap, never block)
  void EmitLaunch(const LaunchRecord& r) { Emit(RecordType::kLaunch, &r); }
  void EmitGemm(const GemmRecord& r) { Emit(RecordType::kGemm, &r); }
  void EmitRange(const NvtxRangeRecord& r) { Emit(RecordType::kNvtxRange, &r); }
  void EmitMark(const NvtxMarkRecord& r) { Emit(RecordType::kNvtxMark, &r); }
  uint64_t Intern(std::string_view s) { return interner_.Intern(s); }
  uint64_t NextRangeId() { return next_range_id_.fetch_add(1) + 1; }
  uint64_t NextGemmCallId() { return next_gemm_call_id_.fetch_add(1) + 1; }
  // Counts a record not recorded by choice (e.g. outside profiler range).
  void CountFiltered(uint32_t kind) {
    filtered_[kind].fetch_add(1, std::memory_order_relaxed);
  }
  void CountDropped(uint32_t kind) {
    seen_[kind].fetch_add(1, std::memory_order_relaxed);
    dropped_[kind].fetch_add(1, std::memory_order_relaxed);
  }
  // Launch records are produced only while capturing (ROOFTRACE_CAPTURE).
  bool capturing() const { return capturing_.load(std::memory_order_relaxed); }
  void set_capturing(bool on) { capturing_.store(on, std::memory_order_relaxed); }

  // ---- CUPTI activity, attached by the tracer before it enables activity
  struct ActivityHooks {
    ActivityBufferPool* pool = nullptr;
    ActivityDecoder* decoder = nullptr;
    std::function<void()> flush;                 // forced flush, at Stop
    std::function<uint64_t()> dropped_records;   // CUPTI's own count
  };
  void AttachActivity(ActivityHooks hooks);
  // Counters mode, attached by the tracer when CUPTI starts (before or
  // after Start()): the Hello says MODE_COUNTERS with CAPABILITY_COUNTERS
  // when it has not gone yet, the sender flushes it every pass
  // (CounterBatch packets; all of it at Stop, before CUPTI is finalized),
  // and Stats carry its counts, passes and warnings. Kernel selection in
  // counters mode is Start()'s business (see there).
  void AttachCounters(CountersMode* counters);

  // Wakes the sender (a completed buffer is waiting).
  void Wake();

  // One line said on stderr and repeated in the next Stats packet.
  void Warn(const std::string& line);

  const Config& config() const { return options_.config; }
  // Records waiting for the sender (approximate).
  size_t queued() const { return queue_.SizeApprox(); }
  // Records of `kind` dropped so far (queue full); for tests and benchmarks.
  uint64_t dropped(uint32_t kind) const {
    return dropped_[kind].load(std::memory_order_relaxed);
  }
  KernelFilter* kernel_filter() { return &filter_; }
  StringInterner* interner() { return &interner_; }
  // The spool file written, when the sink is (or became) a spool.
  std::string spool_path();
  CuptiTracer* tracer() { return tracer_.get(); }
  // True the first time only: CUPTI is tried once per session.
  bool FirstCuptiAttempt() { return !cupti_attempted_.exchange(true); }
  void set_tracer(std::unique_ptr<CuptiTracer> tracer);
  uint32_t pid() const { return hello_.pid; }

 private:
  struct Cycle;  // records of one sender pass

  void Emit(RecordType type, const void* record);
  void SenderMain();
  void OpenSink();
  bool SwitchToSpool(const std::string& why);
  std::string DefaultSpoolPath() const;
  void RunCycle(bool final_pass);
  void DrainInto(Cycle* cycle, bool final_pass);
  void EncodeCycle(const Cycle& cycle, std::string* frames, CountTable* sent);
  void RememberForReplay(const std::string& frames);
  bool WriteFrames(const std::string& frames);
  void WriteHello();
  void WaitForHelloReply();
  StatsInfo SnapshotStats();

  SessionOptions options_;
  HelloInfo hello_;
  BoundedQueue<Record> queue_;
  StringInterner interner_;
  KernelFilter filter_;
  std::atomic<uint64_t> next_range_id_{0};
  std::atomic<uint64_t> next_gemm_call_id_{0};
  std::atomic<bool> capturing_{true};
  std::atomic<bool> cupti_attempted_{false};
  std::array<std::atomic<uint64_t>, wire::enums::kRecordKindCount> seen_{};
  std::array<std::atomic<uint64_t>, wire::enums::kRecordKindCount> dropped_{};
  std::array<std::atomic<uint64_t>, wire::enums::kRecordKindCount> filtered_{};

  // Sender thread state (only the sender touches these after Start()).
  PacketEncoder encoder_;
  std::unique_ptr<Sink> sink_;
  std::string hello_frame_;
  // Frames recently written to a socket, restated in the spool if the
  // collector goes away (it may not have read them). Bounded.
  static constexpr size_t kReplayBytes = 8u << 20;
  std::deque<std::string> replay_;
  size_t replay_bytes_ = 0;
  CountTable sent_{};
  uint64_t packets_sent_ = 0;
  uint64_t bytes_sent_ = 0;
  uint64_t last_stats_ns_ = 0;
  DecodeCounts decode_counts_;

  std::mutex mu_;  // guards the fields below
  std::condition_variable cv_;
  bool wake_ = false;
  bool stop_requested_ = false;
  bool sender_done_ = false;
  int32_t exit_code_ = -1;
  ActivityHooks activity_;
  CountersMode* counters_ = nullptr;  // owned by the tracer
  std::vector<std::string> warnings_;
  std::string spool_path_;

  std::thread sender_;
  bool started_ = false;
  bool stopped_ = false;
  std::unique_ptr<CuptiTracer> tracer_;
};

// Host name, argv (from /proc/self/cmdline), pids and start times.
HelloInfo MakeHelloInfo(const Config& config);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_SESSION_H_
