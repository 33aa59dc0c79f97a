// The CUPTI Range Profiler driven per CUDA context, and the process-wide
// facade libinject calls. Auto range: every selected kernel launch is one
// range. A metric set that fits one pass is collected as the kernel runs
// (user replay with nothing to replay); one that needs more is replayed
// once per pass inside the launch call (kernel replay).
//
// Flow per context (CounterSession):
//   Create:     cuptiRangeProfilerEnable(ctx), GetCounterDataSize,
//               CounterDataImageInitialize, SetConfig(config image, image,
//               AutoRange, UserReplay for one pass else KernelReplay,
//               maxRangesPerPass = capacity).
//   Begin:      cuptiRangeProfilerStart   (launch API enter, app thread)
//   End:        cuptiRangeProfilerStop, DecodeData into the image
//               (launch API exit, app thread). When the image holds
//               `capacity` ranges, or a decode reported dropped ranges
//               (overflow), or a flush asked for it, the image is copied to
//               the pending list with the correlation ids of its ranges and
//               re-initialized: decode and continue.
//   TakeResults: evaluation of pending images into KernelCounters with
//               cuptiProfilerHostEvaluateToGpuValues, on the caller's
//               thread (libinject's sender thread), never touching the
//               range profiler.
//
// Attribution is exact or nothing: range i of an image belongs to the i-th
// launch profiled into it; if CUPTI reports a different range count than
// launches recorded, the image's results are dropped with a warning rather
// than attributed to the wrong kernels.
//
// Threads: Begin/End come from application threads; they never wait on
// another thread's profiled launch: a launch that arrives on the context
// while another one is being profiled is not profiled (counted as busy).
// TakeResults/RequestDecode may run on any thread. The trap: the range
// profiler calls (Start/Stop/Decode/SetConfig/Disable) are made only from
// the application thread that owns the in-flight launch, or from Shutdown().
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_COUNTER_SESSION_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_COUNTER_SESSION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "libinject/counters/counter_data_file.h"
#include "libinject/counters/cupti_profiler_api.h"
#include "libinject/counters/failure_modes.h"
#include "libinject/counters/flop_evaluation.h"
#include "libinject/counters/metric_config.h"
#include "libinject/kernel_filter.h"

namespace rooftrace::counters {

struct SessionStats {
  uint64_t profiled = 0;        // launches recorded into an image
  uint64_t busy_skipped = 0;    // arrived while another launch was profiled
  uint64_t ranges_dropped = 0;  // CUPTI overflow, or unattributable images
  uint64_t images_decoded = 0;
  uint64_t evaluated = 0;  // KernelCounters produced
  // Profiled launches whose range another thread's launch on the context
  // may share: their results are discarded.
  uint64_t concurrent_discarded = 0;
  // Launches profiled in one pass without kernel replay (user replay).
  uint64_t without_replay = 0;
};

// How a profiled kernel is run (CountersOptions::replay).
enum class ReplayChoice {
  // A metric set that fits one pass is collected as the kernel runs, with
  // no replay (CUPTI_UserReplay: CUPTI neither saves and restores memory
  // nor runs the kernel again); a set that needs more passes uses kernel
  // replay. The default.
  kAuto,
  // Kernel replay always (CUPTI_KernelReplay): to measure what replay
  // costs against kAuto on the same build.
  kKernel,
};

class CounterSession {
 public:
  static constexpr size_t kDefaultCapacity = 64;

  // `config` must outlive the session (the runtime owns both). With
  // ReplayChoice::kAuto and a one-pass config the session profiles without
  // replay; should a Stop then report a pass not submitted (the set did
  // not fit after all), that launch's range is dropped with one warning and
  // the session goes on with kernel replay.
  static StatusOr<std::unique_ptr<CounterSession>> Create(
      const CuptiProfilerApi& api, CUcontext ctx, uint32_t device_id,
      const MetricConfig& config, size_t capacity = kDefaultCapacity,
      ReplayChoice replay = ReplayChoice::kAuto);
  ~CounterSession();  // Shutdown() if not done

  // Launch API enter / exit of a selected kernel, same thread. Begin returns
  // false when the launch is not profiled because another launch of this
  // context is in flight (then it counts as passing, below) or the session
  // is shut; End follows every Begin that did not fail.
  StatusOr<bool> OnKernelLaunchBegin(uint64_t correlation_id);
  // `launched` = false when the launch API failed (no kernel ran, so no
  // range was made and the launch is not recorded). For a launch that was
  // not profiled it ends its passing.
  Status OnKernelLaunchEnd(uint64_t correlation_id, bool launched = true);
  // Launch API enter / exit of a launch on this context that is not
  // profiled (not selected, a graph, busy). Auto range is context-wide: its
  // kernel would be recorded in a profiled launch's range, so no launch
  // starts profiling while one is passing, and a profiled launch during
  // which one entered has its results discarded (concurrent_discarded).
  void OnPassingLaunchBegin();
  void OnPassingLaunchEnd();

  // Asks the next End (or Shutdown) to hand over a partly filled image.
  void RequestDecode() { decode_requested_.store(true); }
  // Hands over what the image holds and disables the range profiler; no
  // launch is profiled afterwards. Called from the context-destroy callback
  // or the exit path; waits up to `wait` for a profiled launch in flight
  // on another thread to end (then gives up, leaving the profiler enabled).
  Status Shutdown(
      std::chrono::milliseconds wait = std::chrono::milliseconds(3000));

  // Evaluates every pending image. `host` must be a ProfilerHost of this
  // chip with the config's metrics added (CreateHostWithMetrics).
  StatusOr<std::vector<KernelCounters>> TakeResults(const ProfilerHost& host);

  SessionStats Stats() const;
  std::vector<std::string> TakeWarnings();

  // Keeps a copy of up to `max` handed-over images (with the metric names)
  // for recording test data on a GPU; off by default.
  void KeepRawImages(size_t max) { keep_raw_max_ = max; }
  std::vector<std::vector<uint8_t>> TakeRawImages();

 private:
  struct PendingImage {
    std::vector<uint8_t> image;
    std::vector<uint64_t> correlation_ids;  // one per range, in order
    // The image holds more ranges after these (a shared range): only the
    // first correlation_ids.size() are evaluated.
    bool prefix_only = false;
  };

  CounterSession(const CuptiProfilerApi& api, CUcontext ctx, uint32_t device,
                 const MetricConfig& config, size_t capacity,
                 bool without_replay)
      : api_(api),
        ctx_(ctx),
        device_id_(device),
        config_(config),
        capacity_(capacity),
        without_replay_(without_replay) {}
  Status Configure();  // SetConfig with the (re)initialized image
  Status InitializeImage();
  Status HandOverImage(bool prefix_only = false);  // pending_ += image
  // Stop + DecodeData of the profiled launch; the ranges CUPTI dropped.
  // Sets `incomplete` when, without replay, not every pass was submitted.
  StatusOr<uint64_t> StopAndDecode(uint64_t correlation_id, bool* incomplete);
  void ForgetOverflowedRanges(uint64_t dropped);
  void CountBusy();  // a selected launch that could not be profiled
  void Warn(std::string line);

  const CuptiProfilerApi& api_;
  CUcontext ctx_;
  uint32_t device_id_;
  const MetricConfig& config_;
  size_t capacity_;
  // User replay (one pass, no kernel replay) rather than kernel replay;
  // owned like image_ (cleared once, when a pass proves not enough).
  bool without_replay_;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;

  // Owned by the thread holding in_flight_ (or Shutdown): the image and the
  // ids of the ranges it holds.
  std::vector<uint8_t> image_;
  std::vector<uint64_t> image_ids_;
  // 0: idle; correlation id + 1: that launch is being profiled;
  // kShutDown: the session is shut (no launch starts profiling again).
  static constexpr uint64_t kShutDown = ~uint64_t{0};
  std::atomic<uint64_t> in_flight_{0};
  std::atomic<bool> decode_requested_{false};
  // Launches of other threads on this context: those between API enter
  // and exit now, and every enter so far. The profiled launch's thread
  // remembers `entered_` at its Start (window_entered_).
  std::atomic<uint32_t> passing_{0};
  std::atomic<uint64_t> entered_{0};
  uint64_t window_entered_ = 0;

  mutable std::mutex mu_;  // guards pending_, warnings_, stats_
  std::vector<PendingImage> pending_;
  std::vector<std::string> warnings_;     // not yet taken
  std::vector<std::string> warned_keys_;  // each kind said once
  SessionStats stats_;
  size_t keep_raw_max_ = 0;
  std::vector<std::vector<uint8_t>> raw_images_;
};

// Everything libinject configures for counters mode.
struct CountersOptions {
  CounterSet set = CounterSet::kDefault;
  // Which launches are profiled (the kernel filter of libinject).
  inject::KernelFilterConfig filter;
  size_t ranges_per_image = CounterSession::kDefaultCapacity;
  ReplayChoice replay = ReplayChoice::kAuto;
  // Keep up to this many raw counter-data images per context for
  // TakeRawImages() (recording test data on a GPU); 0 in production.
  size_t keep_raw_images = 0;
};

// Process-wide counters mode: one config per chip, one session per context,
// the kernel filter, the failure fallback. Created once by libinject when
// ROOFTRACE_MODE=counters; lives until process exit. Thread-safe.
//
// After any failure it reports (a line from failure_modes.h) it is disabled:
// every later call is a cheap no-op and libinject continues in trace mode.
class CountersRuntime {
 public:
  // Makes no CUPTI call (it runs during cuInit, inside
  // InitializeInjection). Bad options (filter regexes) are InvalidArgument.
  static StatusOr<std::unique_ptr<CountersRuntime>> Create(
      const CuptiProfilerApi& api, const CountersOptions& options);

  // CUPTI resource callback, context created. `device_ordinal` is the
  // context's device. Initializes the profiler with the first context
  // (cuptiProfilerInitialize, as NVIDIA's samples and Kineto do it after the
  // driver is up, never during cuInit), then sets up the chip config
  // (cached per chip) and a session.
  // On failure returns the one-line report and disables counters mode.
  Status OnContextCreated(CUcontext ctx, uint32_t device_ordinal);
  // CUPTI resource callback, context about to be destroyed: hands over the
  // session's data (results stay available to Flush) and drops it.
  void OnContextDestroyed(CUcontext ctx);

  // Launch API enter (app thread), for every kernel or graph launch on a
  // context. True when this launch is profiled. OnKernelLaunchEnd must
  // follow on the same thread after the launch whatever Begin returned (a
  // launch that is not profiled still shares the context's auto range).
  bool OnKernelLaunchBegin(CUcontext ctx, uint64_t correlation_id,
                           const inject::LaunchInfo& launch);
  // `launched`: whether the launch API succeeded.
  void OnKernelLaunchEnd(CUcontext ctx, uint64_t correlation_id,
                         bool launched = true);

  // Sender thread: results decoded so far (asks every session to hand over
  // its partial image at its next launch). `final` = true at exit: shuts
  // every session down first so nothing is left behind.
  std::vector<KernelCounters> Flush(bool final = false);

  bool disabled() const { return disabled_.load(); }
  // Passes of the configured set (0 before the first context or when
  // disabled); for Hello/Stats.counter_passes.
  uint32_t passes() const { return passes_.load(); }
  inject::FilterStats filter_stats() const { return filter_->Stats(); }
  // Sender thread: the samples of `signature` disagree; its launches are
  // profiled more often from now on (KernelFilter::MarkUnsettled).
  bool MarkSignatureUnsettled(uint64_t signature) {
    return filter_->MarkUnsettled(signature);
  }
  SessionStats session_stats() const;
  // Lines said once, for Stats.warnings (libinject prints them too).
  std::vector<std::string> TakeWarnings();
  // Raw images kept with CountersOptions::keep_raw_images, as .rfcd
  // contents (chip, metric names, image). Call after Flush().
  std::vector<CounterDataFile> TakeRawImages();

 private:
  struct ChipConfig {
    MetricConfig config;
    std::unique_ptr<ProfilerHost> host;  // for evaluation, with metrics added
    std::vector<const char*> names;
  };
  CountersRuntime(const CuptiProfilerApi& api, const CountersOptions& options,
                  std::unique_ptr<inject::KernelFilter> filter)
      : api_(api), options_(options), filter_(std::move(filter)) {}
  Status Disable(const CounterFailureReport& report);
  struct Entry;
  std::shared_ptr<Entry> Find(CUcontext ctx);
  Status InitializeProfiler();  // once, at the first context
  // OnContextCreated's steps; each failure disables counters mode.
  // The device's chip, when the device supports range profiling.
  StatusOr<std::string> SupportedChip(uint32_t device_ordinal);
  StatusOr<std::vector<uint8_t>> CounterAvailability(CUcontext ctx);
  // The chip's metric config and evaluation host, built once per chip.
  StatusOr<ChipConfig*> ConfigForChip(CUcontext ctx, const std::string& chip);
  void CollectFrom(CounterSession& session, ChipConfig& chip,
                   std::vector<KernelCounters>& out);

  const CuptiProfilerApi api_;  // a copy: callers need not keep theirs
  CountersOptions options_;
  std::unique_ptr<inject::KernelFilter> filter_;
  std::atomic<bool> disabled_{false};
  std::atomic<uint32_t> passes_{0};
  std::mutex profiler_init_mu_;  // guards profiler_initialized_
  bool profiler_initialized_ = false;

  struct Entry {
    std::unique_ptr<CounterSession> session;
    ChipConfig* chip = nullptr;
  };
  mutable std::mutex mu_;  // guards everything below; never held over CUPTI
                           // range-profiler calls made for a launch
  std::unordered_map<std::string, std::unique_ptr<ChipConfig>> chips_;
  std::unordered_map<CUcontext, std::shared_ptr<Entry>> sessions_;
  std::vector<std::shared_ptr<Entry>> retired_;  // destroyed contexts
  SessionStats flushed_stats_;  // of retired sessions already flushed
  std::vector<CounterDataFile> raw_images_;
  std::vector<std::string> warnings_;
};

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_COUNTER_SESSION_H_
