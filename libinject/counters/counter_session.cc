#include "libinject/counters/counter_session.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

namespace rooftrace::counters {
namespace {

constexpr std::string_view kOffPrefix = "counters mode off";

// A Status from below as a failure line (wrapped unless it already is one).
CounterFailureReport ReportFromStatus(const Status& s) {
  if (s.message().rfind(kOffPrefix, 0) == 0) {
    return CounterFailureReport{CounterFailure::kOther, s.message()};
  }
  return CounterFailureReport{
      CounterFailure::kOther,
      std::string(kOffPrefix) + ": " + s.message() + "; using trace mode"};
}

}  // namespace

// ------------------------------------------------------------ CounterSession

StatusOr<std::unique_ptr<CounterSession>> CounterSession::Create(
    const CuptiProfilerApi& api, CUcontext ctx, uint32_t device_id,
    const MetricConfig& config, size_t capacity, ReplayChoice replay) {
  if (capacity == 0) return InvalidArgument("ranges per image must be >= 1");
  if (config.config_image.empty()) {
    return InvalidArgument("counter session needs a config image");
  }
  // One pass needs no replay: the counters are collected as the kernel
  // runs, without the save / replay / restore of kernel replay.
  const bool without_replay =
      replay == ReplayChoice::kAuto && config.passes == 1;
  std::unique_ptr<CounterSession> s(new CounterSession(
      api, ctx, device_id, config, capacity, without_replay));
  auto enable = RT_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  enable.ctx = ctx;
  RT_RETURN_IF_ERROR(
      CounterFailureStatus(RT_CUPTI_CALL(api, RangeProfilerEnable, &enable)));
  s->profiler_ = enable.pRangeProfilerObject;

  std::vector<const char*> names = config.metrics.Names();
  auto size = RT_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = s->profiler_;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = capacity;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(capacity);
  RT_RETURN_IF_ERROR(CounterFailureStatus(
      RT_CUPTI_CALL(api, RangeProfilerGetCounterDataSize, &size)));
  if (size.counterDataSize == 0) {
    return Unavailable(std::string(kOffPrefix) +
                       ": CUPTI sized the counter-data image at 0 bytes; "
                       "using trace mode");
  }
  s->image_.assign(size.counterDataSize, 0);
  RT_RETURN_IF_ERROR(s->InitializeImage());
  RT_RETURN_IF_ERROR(s->Configure());
  return s;
}

CounterSession::~CounterSession() { (void)Shutdown(); }

Status CounterSession::InitializeImage() {
  std::fill(image_.begin(), image_.end(), 0);
  auto init =
      RT_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = profiler_;
  init.counterDataSize = image_.size();
  init.pCounterData = image_.data();
  RT_RETURN_IF_ERROR(CounterFailureStatus(
      RT_CUPTI_CALL(api_, RangeProfilerCounterDataImageInitialize, &init)));
  image_ids_.clear();
  return OkStatus();
}

Status CounterSession::Configure() {
  auto c = RT_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  c.pRangeProfilerObject = profiler_;
  c.configSize = config_.config_image.size();
  c.pConfig = config_.config_image.data();
  c.counterDataImageSize = image_.size();
  c.pCounterDataImage = image_.data();
  c.range = CUPTI_AutoRange;
  c.replayMode = without_replay_ ? CUPTI_UserReplay : CUPTI_KernelReplay;
  c.maxRangesPerPass = capacity_;
  c.numNestingLevels = 1;  // auto range: one level
  c.minNestingLevel = 1;
  c.passIndex = 0;
  c.targetNestingLevel = 1;
  RT_RETURN_IF_ERROR(
      CounterFailureStatus(RT_CUPTI_CALL(api_, RangeProfilerSetConfig, &c)));
  return OkStatus();
}

void CounterSession::OnPassingLaunchBegin() {
  // In this order: a profiled launch that reads `entered_` before this
  // increment sees `passing_` > 0 (or this launch's kernel comes after its
  // Stop); one that reads it after sees a changed `entered_` at its end.
  passing_.fetch_add(1, std::memory_order_seq_cst);
  entered_.fetch_add(1, std::memory_order_seq_cst);
}

void CounterSession::OnPassingLaunchEnd() {
  uint32_t n = passing_.load(std::memory_order_seq_cst);
  while (n > 0 && !passing_.compare_exchange_weak(n, n - 1)) {
  }
}

StatusOr<bool> CounterSession::OnKernelLaunchBegin(uint64_t correlation_id) {
  uint64_t idle = 0;
  if (!in_flight_.compare_exchange_strong(idle, correlation_id + 1)) {
    if (idle == kShutDown) return false;
    // Another thread's launch is being replayed on this context: do not wait
    // for it; this launch runs unprofiled (and spoils that one's range).
    CountBusy();
    return false;
  }
  const uint64_t entered = entered_.load(std::memory_order_seq_cst);
  if (passing_.load(std::memory_order_seq_cst) > 0) {
    // Another thread's launch on this context is between its API enter and
    // exit: its kernel could land in this range. Not profiled, no wait.
    in_flight_.store(0);
    CountBusy();
    return false;
  }
  window_entered_ = entered;
  auto start = RT_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  start.pRangeProfilerObject = profiler_;
  const Status started =
      CounterFailureStatus(RT_CUPTI_CALL(api_, RangeProfilerStart, &start));
  if (!started.ok()) {
    in_flight_.store(0);
    return started;
  }
  return true;
}

void CounterSession::CountBusy() {
  OnPassingLaunchBegin();
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.busy_skipped;
}

Status CounterSession::OnKernelLaunchEnd(uint64_t correlation_id,
                                         bool launched) {
  if (in_flight_.load() != correlation_id + 1) {
    OnPassingLaunchEnd();  // a launch that ran unprofiled
    return OkStatus();
  }
  // Release the context for other threads whatever happens below.
  struct Release {
    std::atomic<uint64_t>& flag;
    ~Release() { flag.store(0); }
  } release{in_flight_};

  bool incomplete = false;
  RT_ASSIGN_OR_RETURN(const uint64_t dropped,
                      StopAndDecode(correlation_id, &incomplete));
  if (incomplete) {
    // Without replay the set did not fit one pass: this launch's range is
    // partial. The ranges before it keep their launches; kernel replay
    // from now on.
    without_replay_ = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.ranges_dropped;
    }
    Warn("counters: one pass without replay did not collect the metric set "
         "(correlation id " + std::to_string(correlation_id) +
         " dropped); kernel replay from now on");
    RT_RETURN_IF_ERROR(HandOverImage(/*prefix_only=*/true));
    RT_RETURN_IF_ERROR(InitializeImage());
    return Configure();
  }
  // Auto range is context-wide: a launch another thread made on this
  // context between Start and Stop may have put its kernel's range into
  // the image too, and which range is whose cannot be told. The ranges of
  // earlier launches (the image's first ones) still are theirs.
  const bool shared =
      entered_.load(std::memory_order_seq_cst) != window_entered_;
  // A launch the driver refused ran no kernel and made no range.
  if (!launched && !shared) return OkStatus();
  if (shared) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.concurrent_discarded;
    }
    Warn(
        "counters: another thread launched on this context while a kernel "
        "was being profiled; that profiled launch's counters are discarded "
        "(counted as dropped) rather than attributed to the wrong kernel");
    RT_RETURN_IF_ERROR(HandOverImage(/*prefix_only=*/true));
    RT_RETURN_IF_ERROR(InitializeImage());
    return Configure();
  }
  image_ids_.push_back(correlation_id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.profiled;
    if (without_replay_) ++stats_.without_replay;
  }
  if (dropped > 0) ForgetOverflowedRanges(dropped);
  if (image_ids_.size() >= capacity_ || dropped > 0 ||
      decode_requested_.exchange(false)) {
    RT_RETURN_IF_ERROR(HandOverImage());
    RT_RETURN_IF_ERROR(InitializeImage());
    RT_RETURN_IF_ERROR(Configure());
  }
  return OkStatus();
}

StatusOr<uint64_t> CounterSession::StopAndDecode(uint64_t correlation_id,
                                                 bool* incomplete) {
  auto stop = RT_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  stop.pRangeProfilerObject = profiler_;
  RT_RETURN_IF_ERROR(
      CounterFailureStatus(RT_CUPTI_CALL(api_, RangeProfilerStop, &stop)));
  *incomplete = !stop.isAllPassSubmitted && without_replay_;
  if (!stop.isAllPassSubmitted && !without_replay_) {
    Warn(
        "counters: kernel replay did not submit every pass for correlation "
        "id " +
        std::to_string(correlation_id) + "; its counters may be partial");
  }
  auto decode = RT_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = profiler_;
  RT_RETURN_IF_ERROR(CounterFailureStatus(
      RT_CUPTI_CALL(api_, RangeProfilerDecodeData, &decode)));
  return static_cast<uint64_t>(decode.numOfRangeDropped);
}

void CounterSession::ForgetOverflowedRanges(uint64_t dropped) {
  // Range overflow: the image is full, so the ranges CUPTI could not store
  // are the newest ones; forget their ids (the image's ranges still map one
  // to one), hand over what decoded, start a fresh image, go on.
  const size_t lost = std::min<size_t>(dropped, image_ids_.size());
  image_ids_.resize(image_ids_.size() - lost);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.ranges_dropped += dropped;
  }
  Warn("counters: the counter-data image overflowed (" +
       std::to_string(dropped) +
       " range(s) dropped); decoding and continuing with a fresh image");
}

Status CounterSession::HandOverImage(bool prefix_only) {
  if (image_ids_.empty()) return OkStatus();
  PendingImage p{image_, std::move(image_ids_), prefix_only};
  image_ids_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  if (raw_images_.size() < keep_raw_max_) raw_images_.push_back(p.image);
  pending_.push_back(std::move(p));
  ++stats_.images_decoded;
  return OkStatus();
}

std::vector<std::vector<uint8_t>> CounterSession::TakeRawImages() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::vector<uint8_t>> out;
  out.swap(raw_images_);
  return out;
}

Status CounterSession::Shutdown(std::chrono::milliseconds wait) {
  // Take the context from the idle state so no launch can start profiling;
  // a launch in flight is given `wait` to finish (this runs on the exit or
  // context-destroy path, never for an application launch).
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    uint64_t idle = 0;
    if (in_flight_.compare_exchange_strong(idle, kShutDown)) break;
    if (idle == kShutDown) return OkStatus();  // already shut down
    if (std::chrono::steady_clock::now() >= deadline) {
      Warn("counters: a profiled launch did not finish within " +
           std::to_string(wait.count()) +
           " ms of shutdown; the range profiler is left enabled");
      return FailedPrecondition("profiled launch still in flight");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Status handed = HandOverImage();
  if (profiler_ != nullptr) {
    auto disable = RT_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    disable.pRangeProfilerObject = profiler_;
    profiler_ = nullptr;
    RT_RETURN_IF_ERROR(CounterFailureStatus(
        RT_CUPTI_CALL(api_, RangeProfilerDisable, &disable)));
  }
  return handed;
}

StatusOr<std::vector<KernelCounters>> CounterSession::TakeResults(
    const ProfilerHost& host) {
  std::vector<PendingImage> work;
  {
    std::lock_guard<std::mutex> lock(mu_);
    work.swap(pending_);
  }
  std::vector<KernelCounters> out;
  std::vector<const char*> names = config_.metrics.Names();
  uint64_t dropped = 0;
  uint64_t evaluated = 0;
  for (PendingImage& p : work) {
    StatusOr<size_t> ranges = CounterDataRangeCount(api_, p.image);
    // A prefix-only image holds more ranges after its known ones.
    const size_t known = p.correlation_ids.size();
    if (!ranges.ok() || *ranges < known ||
        (!p.prefix_only && *ranges != known)) {
      dropped += p.correlation_ids.size();
      Warn("counters: a counter-data image holds " +
           (ranges.ok() ? std::to_string(*ranges) + " range(s)"
                        : ranges.status().message()) +
           " for " + std::to_string(p.correlation_ids.size()) +
           " profiled launch(es); its results are dropped rather than "
           "attributed to the wrong kernels");
      continue;
    }
    for (size_t i = 0; i < p.correlation_ids.size(); ++i) {
      StatusOr<std::vector<double>> values =
          EvaluateRange(api_, host, p.image, i, names);
      StatusOr<KernelCounters> k =
          values.ok() ? EvaluateKernelCounters(config_.metrics, *values)
                      : StatusOr<KernelCounters>(values.status());
      if (!k.ok()) {
        ++dropped;
        Warn("counters: range " + std::to_string(i) +
             " not evaluated: " + k.status().message());
        continue;
      }
      k->correlation_id = p.correlation_ids[i];
      k->device_id = device_id_;
      k->passes = static_cast<uint32_t>(config_.passes);
      {
        std::lock_guard<std::mutex> lock(mu_);
        k->range_index = stats_.evaluated + evaluated;
      }
      if (!k->invalid_metrics.empty()) {
        Warn("counters: invalid value for " + k->invalid_metrics.front() +
             " (correlation id " + std::to_string(k->correlation_id) + ")");
      }
      out.push_back(std::move(*k));
      ++evaluated;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.ranges_dropped += dropped;
  stats_.evaluated += evaluated;
  return out;
}

SessionStats CounterSession::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CounterSession::Warn(std::string line) {
  std::lock_guard<std::mutex> lock(mu_);
  // Say each kind of problem once: the first words identify it.
  std::string key = line.substr(0, 40);
  if (std::find(warned_keys_.begin(), warned_keys_.end(), key) !=
      warned_keys_.end()) {
    return;
  }
  warned_keys_.push_back(std::move(key));
  warnings_.push_back(std::move(line));
}

std::vector<std::string> CounterSession::TakeWarnings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

// ----------------------------------------------------------- CountersRuntime

StatusOr<std::unique_ptr<CountersRuntime>> CountersRuntime::Create(
    const CuptiProfilerApi& api, const CountersOptions& options) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<inject::KernelFilter> filter,
                      inject::KernelFilter::Create(options.filter));
  // No CUPTI call here: Create runs inside InitializeInjection, during
  // cuInit, where nothing may call into the driver; the profiler is
  // initialized with the first context (InitializeProfiler).
  return std::unique_ptr<CountersRuntime>(
      new CountersRuntime(api, options, std::move(filter)));
}

Status CountersRuntime::Disable(const CounterFailureReport& report) {
  disabled_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(warnings_.begin(), warnings_.end(), report.line) ==
      warnings_.end()) {
    warnings_.push_back(report.line);
  }
  return Unavailable(report.line);
}

Status CountersRuntime::OnContextCreated(CUcontext ctx,
                                         uint32_t device_ordinal) {
  if (disabled()) return OkStatus();
  RT_RETURN_IF_ERROR(InitializeProfiler());
  StatusOr<std::string> chip = SupportedChip(device_ordinal);
  if (!chip.ok()) return chip.status();  // Disable() has said why
  StatusOr<ChipConfig*> chip_config = ConfigForChip(ctx, *chip);
  if (!chip_config.ok()) return chip_config.status();
  StatusOr<std::unique_ptr<CounterSession>> session =
      CounterSession::Create(api_, ctx, device_ordinal, (*chip_config)->config,
                             options_.ranges_per_image, options_.replay);
  if (!session.ok()) return Disable(ReportFromStatus(session.status()));
  (*session)->KeepRawImages(options_.keep_raw_images);
  auto entry = std::make_shared<Entry>();
  entry->session = std::move(*session);
  entry->chip = *chip_config;
  std::lock_guard<std::mutex> lock(mu_);
  sessions_[ctx] = std::move(entry);
  return OkStatus();
}

Status CountersRuntime::InitializeProfiler() {
  // Serialized so that two contexts created at once initialize it once.
  std::lock_guard<std::mutex> lock(profiler_init_mu_);
  if (profiler_initialized_) return OkStatus();
  auto init = RT_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  const inject::CuptiCall call = RT_CUPTI_CALL(api_, ProfilerInitialize, &init);
  if (!call.ok()) {
    return Disable(ClassifyCuptiFailure(call.result, call.function));
  }
  profiler_initialized_ = true;
  return OkStatus();
}

StatusOr<std::string> CountersRuntime::SupportedChip(uint32_t device_ordinal) {
  auto support = RT_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  support.cuDevice = static_cast<CUdevice>(device_ordinal);
  support.api = CUPTI_PROFILER_RANGE_PROFILING;
  const inject::CuptiCall supported =
      RT_CUPTI_CALL(api_, ProfilerDeviceSupported, &support);
  if (!supported.ok()) {
    return Disable(ClassifyCuptiFailure(supported.result, supported.function));
  }
  if (std::optional<CounterFailureReport> r = ClassifyDeviceSupport(support)) {
    return Disable(*r);
  }
  auto chip = RT_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = device_ordinal;
  const inject::CuptiCall named = RT_CUPTI_CALL(api_, DeviceGetChipName, &chip);
  if (!named.ok() || chip.pChipName == nullptr) {
    return Disable(ClassifyCuptiFailure(named.result, named.function));
  }
  return std::string(chip.pChipName);
}

StatusOr<std::vector<uint8_t>> CountersRuntime::CounterAvailability(
    CUcontext ctx) {
  // Which counters this context can use (MIG, other users of the GPU): the
  // first call sizes the image, the second fills it.
  auto avail = RT_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  avail.ctx = ctx;
  inject::CuptiCall call =
      RT_CUPTI_CALL(api_, ProfilerGetCounterAvailability, &avail);
  std::vector<uint8_t> availability;
  if (call.ok() && avail.counterAvailabilityImageSize > 0) {
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    call = RT_CUPTI_CALL(api_, ProfilerGetCounterAvailability, &avail);
  }
  if (!call.ok()) {
    return Disable(ClassifyCuptiFailure(call.result, call.function));
  }
  return availability;
}

StatusOr<CountersRuntime::ChipConfig*> CountersRuntime::ConfigForChip(
    CUcontext ctx, const std::string& chip) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = chips_.find(chip);
    if (it != chips_.end()) return it->second.get();
  }
  RT_ASSIGN_OR_RETURN(std::vector<uint8_t> availability,
                      CounterAvailability(ctx));
  StatusOr<MetricConfig> config =
      BuildMetricConfig(api_, chip, options_.set, availability);
  if (!config.ok()) return Disable(ReportFromStatus(config.status()));
  auto owned = std::make_unique<ChipConfig>();
  owned->config = std::move(*config);
  owned->names = owned->config.metrics.Names();
  StatusOr<ProfilerHost> host = CreateHostWithMetrics(api_, chip, owned->names);
  if (!host.ok()) return Disable(ReportFromStatus(host.status()));
  owned->host = std::make_unique<ProfilerHost>(std::move(*host));
  std::lock_guard<std::mutex> lock(mu_);
  if (!owned->config.left_out.empty()) {
    std::string line = "counters: on " + chip +
                       " these counters do not fit the pass budget and are "
                       "not collected:";
    for (const std::string& m : owned->config.left_out) line += " " + m;
    warnings_.push_back(std::move(line));
  }
  passes_.store(std::max<uint32_t>(
      passes_.load(), static_cast<uint32_t>(owned->config.passes)));
  ChipConfig* out = owned.get();
  chips_.emplace(chip, std::move(owned));
  return out;
}

void CountersRuntime::OnContextDestroyed(CUcontext ctx) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(ctx);
    if (it == sessions_.end()) return;
    entry = it->second;
  }
  // Shut down while the session is still findable, so a launch in flight on
  // another thread can end; no new launch starts profiling meanwhile.
  Status s = entry->session->Shutdown();
  std::lock_guard<std::mutex> lock(mu_);
  if (!s.ok()) warnings_.push_back(ReportFromStatus(s).line);
  sessions_.erase(ctx);
  retired_.push_back(std::move(entry));
}

bool CountersRuntime::OnKernelLaunchBegin(CUcontext ctx,
                                          uint64_t correlation_id,
                                          const inject::LaunchInfo& launch) {
  if (disabled()) return false;
  std::shared_ptr<Entry> entry = Find(ctx);
  if (entry == nullptr) return false;
  if (filter_->Decide(launch) != inject::Selection::kSelected) {
    // Not profiled, but it may still put a kernel into another thread's
    // profiled range on this context: the session must know it is running.
    entry->session->OnPassingLaunchBegin();
    return false;
  }
  StatusOr<bool> started = entry->session->OnKernelLaunchBegin(correlation_id);
  if (!started.ok()) {
    (void)Disable(ReportFromStatus(started.status()));
    return false;
  }
  return *started;
}

std::shared_ptr<CountersRuntime::Entry> CountersRuntime::Find(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(ctx);
  return it == sessions_.end() ? nullptr : it->second;
}

void CountersRuntime::OnKernelLaunchEnd(CUcontext ctx, uint64_t correlation_id,
                                        bool launched) {
  std::shared_ptr<Entry> entry = Find(ctx);
  if (entry == nullptr) return;
  Status s = entry->session->OnKernelLaunchEnd(correlation_id, launched);
  if (!s.ok()) (void)Disable(ReportFromStatus(s));
}

void CountersRuntime::CollectFrom(CounterSession& session, ChipConfig& chip,
                                  std::vector<KernelCounters>& out) {
  StatusOr<std::vector<KernelCounters>> r = session.TakeResults(*chip.host);
  std::lock_guard<std::mutex> lock(mu_);
  if (!r.ok()) {
    warnings_.push_back(ReportFromStatus(r.status()).line);
    return;
  }
  for (KernelCounters& k : *r) {
    k.metric_set = &chip.config.metrics;
    out.push_back(std::move(k));
  }
  for (std::vector<uint8_t>& image : session.TakeRawImages()) {
    CounterDataFile f;
    f.chip = chip.config.metrics.chip;
    for (const MetricSpec& m : chip.config.metrics.metrics) {
      f.metric_names.push_back(m.name);
    }
    f.image = std::move(image);
    raw_images_.push_back(std::move(f));
  }
  for (std::string& w : session.TakeWarnings()) {
    if (std::find(warnings_.begin(), warnings_.end(), w) == warnings_.end()) {
      warnings_.push_back(std::move(w));
    }
  }
}

std::vector<KernelCounters> CountersRuntime::Flush(bool final) {
  std::vector<std::shared_ptr<Entry>> live;
  std::vector<std::shared_ptr<Entry>> retired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [ctx, entry] : sessions_) live.push_back(entry);
    retired.swap(retired_);
  }
  std::vector<KernelCounters> out;
  for (auto& e : live) {
    if (final) {
      Status s = e->session->Shutdown();
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        warnings_.push_back(ReportFromStatus(s).line);
      }
    } else {
      e->session->RequestDecode();
    }
    CollectFrom(*e->session, *e->chip, out);
  }
  for (auto& e : retired) {
    CollectFrom(*e->session, *e->chip, out);
    SessionStats s = e->session->Stats();
    std::lock_guard<std::mutex> lock(mu_);
    flushed_stats_.profiled += s.profiled;
    flushed_stats_.busy_skipped += s.busy_skipped;
    flushed_stats_.ranges_dropped += s.ranges_dropped;
    flushed_stats_.images_decoded += s.images_decoded;
    flushed_stats_.evaluated += s.evaluated;
    flushed_stats_.concurrent_discarded += s.concurrent_discarded;
    flushed_stats_.without_replay += s.without_replay;
  }
  return out;
}

SessionStats CountersRuntime::session_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  SessionStats total = flushed_stats_;
  auto add = [&](const SessionStats& s) {
    total.profiled += s.profiled;
    total.busy_skipped += s.busy_skipped;
    total.ranges_dropped += s.ranges_dropped;
    total.images_decoded += s.images_decoded;
    total.evaluated += s.evaluated;
    total.concurrent_discarded += s.concurrent_discarded;
    total.without_replay += s.without_replay;
  };
  for (const auto& [ctx, e] : sessions_) add(e->session->Stats());
  for (const auto& e : retired_) add(e->session->Stats());
  return total;
}

std::vector<CounterDataFile> CountersRuntime::TakeRawImages() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<CounterDataFile> out;
  out.swap(raw_images_);
  return out;
}

std::vector<std::string> CountersRuntime::TakeWarnings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

}  // namespace rooftrace::counters
