#include "libinject/tracer.h"

#include <cuda.h>
#include <dlfcn.h>
#include <driver_types.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string>

#include "libinject/clock.h"
#include "libinject/counters_mode.h"
#include "libinject/sampling_mode.h"
#include "libinject/driver_api.h"
#include "libinject/kernel_filter.h"
#include "libinject/log.h"
#include "libinject/producer.h"
#include "libinject/thread_state.h"

namespace rooftrace::inject {

namespace {

std::atomic<CuptiTracer*> g_buffer_target{nullptr};

// Buffers of 1 MiB (about 3,000 kernel records each), 8 of them at start,
// growing on demand up to the configured byte budget
// (Config::activity_buffer_bytes).
constexpr size_t kBufferBytes = 1u << 20;
constexpr size_t kBufferCount = 8;
constexpr uint32_t kMinCuptiApiVersion = 130000;
// The CUPTI headers the record layouts are compiled from.
constexpr uint32_t kBuiltCuptiApiVersion = CUPTI_API_VERSION;

uint64_t CuptiClock() { return MonotonicNs(); }

// The facts of this thread's profiled launch in flight (counters mode),
// completed at its API exit and handed to CountersMode.
thread_local CountersMode::LaunchFacts t_launch_facts;

// "outer/inner": the names of the ranges open on this thread, in a
// per-thread buffer that is reused (it allocates only when it grows).
std::string_view NvtxPath(const ThreadState& t, StringInterner* interner) {
  thread_local std::string path;
  path.clear();
  for (uint32_t i = 0; i < t.frame_count; ++i) {
    if (i > 0) path += '/';
    path += interner->Lookup(t.frames[i].name_iid);
  }
  return path;
}

// Driver queries for what CUPTI's device record lacks.
void EnrichFromDriver(const DriverApi& driver, DeviceInfo* info) {
  CUdevice dev;
  if (driver.DeviceGet != nullptr && driver.DeviceGetAttribute != nullptr &&
      driver.DeviceGet(&dev, static_cast<int>(info->device_id)) ==
          CUDA_SUCCESS) {
    int v = 0;
    if (driver.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
                                  dev) == CUDA_SUCCESS) {
      info->memory_clock_khz = static_cast<uint64_t>(v);
    }
    if (driver.DeviceGetAttribute(&v,
                                  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
                                  dev) == CUDA_SUCCESS) {
      info->memory_bus_width_bits = static_cast<uint32_t>(v);
    }
    if (driver.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) ==
        CUDA_SUCCESS) {
      info->pci_bus_id = static_cast<uint32_t>(v);
    }
  }
  int version = 0;
  if (driver.DriverGetVersion != nullptr &&
      driver.DriverGetVersion(&version) == CUDA_SUCCESS) {
    info->driver_version = std::to_string(version);
  }
}

// The capture status of `stream`: true while it is capturing (or
// invalidated but not yet ended), and for the legacy stream while a
// blocking stream of its context captures (CUDA_ERROR_STREAM_CAPTURE_
// IMPLICIT; the query does not invalidate that capture).
bool StreamCapturing(const DriverApi& driver, CUstream stream) {
  if (driver.StreamIsCapturing == nullptr) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult r = driver.StreamIsCapturing(stream, &status);
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return true;
  return r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace

bool HostLinksCuda() {
  for (const char* lib : {"libcuda.so.1", "libcudart.so.13", "libcudart.so.12",
                          "libcudart.so"}) {
    void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    if (h != nullptr) {
      dlclose(h);
      return true;
    }
  }
  return false;
}

void StartCuptiTracing(Producer* producer) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (!producer->FirstCuptiAttempt()) return;
  auto api = LoadCuptiApi();
  if (!api.ok()) {
    producer->Warn(api.status().message());
    return;
  }
  auto tracer = std::make_unique<CuptiTracer>(producer, *api);
  Status s = tracer->Start();
  if (!s.ok()) {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (driver != nullptr) dlclose(driver);
    producer->Warn(s.message() +
                   (driver == nullptr
                        ? " (no CUDA driver: libcuda.so.1 is not loaded)"
                        : "") +
                   ": kernels and copies are not recorded; NVTX and cuBLAS "
                   "shapes still are");
    return;  // the tracer (and libcupti) stays loaded but unused
  }
  producer->set_tracer(std::move(tracer));
}

CuptiTracer::CuptiTracer(Producer* producer, CuptiApi api)
    : producer_(producer),
      api_(api),
      driver_(LoadDriverApi()),
      generation_(g_fork_generation.load(std::memory_order_relaxed)) {}

CuptiTracer::~CuptiTracer() {
  CuptiTracer* self = this;
  g_buffer_target.compare_exchange_strong(self, nullptr);
}

void CuptiTracer::SetApiKind(CUpti_CallbackDomain domain, uint32_t cbid,
                             ApiCallbackKind kind) {
  if (cbid >= kMaxCallbackIds) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) runtime_kind_[cbid] = kind;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) driver_kind_[cbid] = kind;
}

uint64_t ActivityFlushPeriodNs(bool counters_mode) {
  return counters_mode ? 50'000'000ull : 1'000'000'000ull;
}

void CuptiTracer::AttachActivityBudget(size_t budget_bytes,
                                       size_t buffer_bytes) {
  AttachPool(ActivityBufferPool::ForBudget(budget_bytes, buffer_bytes,
                                           kBufferCount));
}

void CuptiTracer::MakeBufferTarget() { g_buffer_target.store(this); }

void CuptiTracer::AttachActivity(size_t buffer_count, size_t buffer_bytes,
                                 size_t max_buffers) {
  AttachPool(std::make_unique<ActivityBufferPool>(buffer_count, buffer_bytes,
                                                  max_buffers));
}

void CuptiTracer::AttachPool(std::unique_ptr<ActivityBufferPool> made) {
  pool_ = std::move(made);
  decoder_ = std::make_unique<ActivityDecoder>(&api_, producer_->interner(),
                                               producer_->kernel_filter());
  Producer::ActivityHooks hooks;
  hooks.pool = pool_.get();
  hooks.decoder = decoder_.get();
  CuptiApi* api = &api_;
  ActivityBufferPool* pool = pool_.get();
  auto last_flush = std::make_shared<uint64_t>(0);
  hooks.flush = [this, api] {
    // The exit path (sender thread, bounded by ROOFTRACE_EXIT_TIMEOUT_MS):
    // cuptiActivityFlushAll makes no CUDA synchronization itself, and
    // kernels still running would come out as incomplete records, so the
    // contexts are synchronized first. With that done, cuptiFinalize may
    // follow outside an API-exit callback (cupti_activity.h).
    SynchronizeContexts();
    (void)RT_CUPTI_CALL(*api, ActivityFlushAll,
                        CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  };
  hooks.periodic_flush = [this, api, last_flush] {
    // Every sender pass: records of a slow process should not wait in
    // half-full buffers until exit. In counters mode only the flush that
    // is safe now (CountersMode::SafeActivityFlush): a default flush
    // after a replayed kernel would leave its buffer with CUPTI for good.
    const uint64_t now = MonotonicNs();
    CountersMode* counters = producer_->counters();
    if (now - *last_flush <= ActivityFlushPeriodNs(counters != nullptr)) {
      return;
    }
    uint32_t flag = 0;
    if (counters != nullptr) {
      const CountersMode::ActivityFlush kind = counters->SafeActivityFlush();
      if (kind == CountersMode::ActivityFlush::kNone) return;  // next pass
      if (kind == CountersMode::ActivityFlush::kForced) {
        flag = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
      }
      counters->ActivityFlushed(kind);
    }
    *last_flush = now;
    (void)RT_CUPTI_CALL(*api, ActivityFlushAll, flag);
  };
  hooks.dropped_records = [this, api, pool]() -> uint64_t {
    // The global queue's count; per-stream counts are taken as their
    // buffers complete (BufferCompleted). Each call resets what it reads.
    size_t dropped = 0;
    if (RT_CUPTI_CALL(*api, ActivityGetNumDroppedRecords, nullptr, 0, &dropped)
            .ok()) {
      cupti_dropped_.fetch_add(dropped, std::memory_order_relaxed);
    }
    ReportRefusedBuffers(pool->times_exhausted());
    return cupti_dropped_.load(std::memory_order_relaxed);
  };
  producer_->AttachActivity(std::move(hooks));
}

Status CuptiTracer::Start() {
  uint32_t version = 0;
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api_, GetVersion, &version));
  // The activity records are read with CUDA 13's layouts (Kernel10, ...):
  // an older CUPTI (API versions before 130000) writes other layouts.
  if (version < kMinCuptiApiVersion) {
    return FailedPrecondition(
        "libcupti reports API version " + std::to_string(version) +
        ", older than the CUDA 13 CUPTI (" +
        std::to_string(kMinCuptiApiVersion) +
        ") rooftrace reads; put CUDA 13's CUPTI first on LD_LIBRARY_PATH");
  }
  WarnIfNewer(version);
  char old_name[128] = {0};
  const CuptiCall subscribed = Subscribe(old_name, sizeof old_name);
  if (subscribed.result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return FailedPrecondition(
        std::string("another CUPTI tool is already attached (") +
        (old_name[0] != '\0' ? old_name : "Nsight Systems, Kineto or similar") +
        "); rooftrace stands aside from CUPTI");
  }
  RT_RETURN_IF_ERROR(subscribed);
  if (Status s = EnableTracing(); !s.ok()) {
    (void)RT_CUPTI_CALL(api_, Unsubscribe, subscriber_);
    subscriber_ = nullptr;
    return s;
  }
  Say(LogLevel::kInfo, "CUPTI %u attached: tracing kernels and copies",
      version);
  if (producer_->config().mode == InjectMode::kCounters) StartCountersMode();
  if (producer_->config().mode == InjectMode::kSampling) StartSamplingMode();
  return OkStatus();
}

void CuptiTracer::WarnIfNewer(uint32_t version) {
  // API versions are xxyyzz (CUDA major, minor, update; cupti_version.h).
  // A newer toolkit's CUPTI may write activity records in newer layouts
  // than the ones compiled in (CUpti_ActivityKernel10, ...); updates of the
  // same minor version do not change them.
  if (version / 100 <= kBuiltCuptiApiVersion / 100) return;
  producer_->Warn(
      "libcupti reports API version " + std::to_string(version) +
      ", newer than the CUPTI whose activity record layouts rooftrace was "
      "built with (" +
      std::to_string(kBuiltCuptiApiVersion) +
      "): records are read in those layouts, fields added since are not "
      "seen; if kernels or copies look wrong, rebuild rooftrace with the "
      "newer CUDA toolkit or put CUDA 13's CUPTI first on LD_LIBRARY_PATH");
}

Status CuptiTracer::EnableTracing() {
  // Counting costs an atomic add per nested callback: only when debugging.
  count_nested_driver_ = producer_->config().log_level == LogLevel::kDebug;
  RT_RETURN_IF_ERROR(EnableCallbacks());
  if (RT_CUPTI_CALL(api_, ActivityRegisterTimestampCallback, &CuptiClock)
          .ok()) {
    // CUPTI stamps with our clock: offset 0.
    AttachActivityBudget(producer_->config().activity_buffer_bytes,
                         kBufferBytes);
  } else {
    uint64_t cupti_now = 0;
    const uint64_t before = MonotonicNs();
    (void)RT_CUPTI_CALL(api_, GetTimestamp, &cupti_now);
    const uint64_t after = MonotonicNs();
    AttachActivityBudget(producer_->config().activity_buffer_bytes,
                         kBufferBytes);
    decoder_->set_clock_offset(MeasureClockOffset(before, cupti_now, after));
  }
  const DriverApi* driver = &driver_;
  decoder_->set_device_enricher(
      [driver](DeviceInfo* info) { EnrichFromDriver(*driver, info); });
  MakeBufferTarget();
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api_, ActivityRegisterCallbacks,
                                   &CuptiTracer::BufferRequested,
                                   &CuptiTracer::BufferCompleted));
  // ROOFTRACE_TRACE_OFF=activity (measuring only): no kernel or copy
  // records at all.
  if (producer_->config().capture == CaptureMode::kAll &&
      producer_->config().parts.activity) {
    RT_RETURN_IF_ERROR(EnableActivityKinds(true));
  }
  return OkStatus();
}

void CuptiTracer::StartCountersMode() {
  StatusOr<std::unique_ptr<CountersMode>> counters = CountersMode::Create(
      api_.handle, producer_->config(), producer_->interner());
  if (!counters.ok()) {
    producer_->Warn(counters.status().message());  // trace mode goes on
    return;
  }
  if (Status s = EnableCountersCallbacks(); !s.ok()) {
    producer_->Warn("counters mode: " + s.message() + "; using trace mode");
    return;
  }
  AttachCounters(std::move(*counters));
  Say(LogLevel::kInfo, "counters mode: profiling selected kernels");
}

void CuptiTracer::StartSamplingMode() {
  StatusOr<std::unique_ptr<SamplingMode>> sampling =
      SamplingMode::Create(api_.handle, producer_->config());
  if (!sampling.ok()) {
    producer_->Warn(sampling.status().message());  // trace mode goes on
    return;
  }
  AttachSampling(std::move(*sampling));
}

void CuptiTracer::AttachSampling(std::unique_ptr<SamplingMode> sampling) {
  sampling_ = std::move(sampling);
  producer_->AttachSampling(sampling_.get());
}

Status CuptiTracer::EnableCountersCallbacks() {
  // Stream capture begin / end tell when no launch may be profiled.
  for (CUpti_CallbackDomain domain :
       {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    for (const TracedCallback& c : CaptureCallbacks(domain)) {
      RT_RETURN_IF_ERROR(
          RT_CUPTI_CALL(api_, EnableCallback, 1, subscriber_, domain, c.cbid));
      SetApiKind(domain, c.cbid, c.kind);
    }
  }
  return OkStatus();
}

void CuptiTracer::AttachCounters(std::unique_ptr<CountersMode> counters) {
  counters_ = std::move(counters);
  producer_->AttachCounters(counters_.get());
}

CuptiCall CuptiTracer::Subscribe(char* old_name, size_t old_name_size) {
  if (api_.SubscribeV2 == nullptr) {
    return RT_CUPTI_CALL(api_, Subscribe, &subscriber_,
                         &CuptiTracer::CallbackTrampoline, this);
  }
  // The v2 entry names the subscriber already attached, if any.
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "rooftrace";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = old_name_size;
  return RT_CUPTI_CALL(api_, SubscribeV2, &subscriber_,
                       &CuptiTracer::CallbackTrampoline, this, &params);
}

Status CuptiTracer::EnableCallbacks() {
  const Config& config = producer_->config();
  // The profiler calls open and close the recorded range under
  // ROOFTRACE_CAPTURE=profiler-api; otherwise they join nothing, and only
  // ROOFTRACE_CALLBACKS=full asks for them.
  const bool profiler = config.capture == CaptureMode::kProfilerApi ||
                        config.callbacks == CallbackSet::kFull;
  int enabled = 0;
  for (CUpti_CallbackDomain domain :
       {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    // ROOFTRACE_TRACE_OFF=runtime / driver (measuring only): no Launch
    // records from that domain.
    if (!(domain == CUPTI_CB_DOMAIN_RUNTIME_API
              ? config.parts.runtime_callbacks
              : config.parts.driver_callbacks)) {
      continue;
    }
    for (std::span<const TracedCallback> set :
         {TracedCallbacks(domain),
          profiler ? ProfilerCallbacks(domain)
                   : std::span<const TracedCallback>()}) {
      for (const TracedCallback& c : set) {
        RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api_, EnableCallback, 1, subscriber_,
                                         domain, c.cbid));
        SetApiKind(domain, c.cbid, c.kind);
        ++enabled;
      }
    }
  }
  // Contexts are followed for the exit path's synchronization and for
  // counters mode's per-context sessions.
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING}) {
    RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api_, EnableCallback, 1, subscriber_,
                                     CUPTI_CB_DOMAIN_RESOURCE, cbid));
  }
  Say(LogLevel::kDebug, "%d CUPTI API callbacks enabled", enabled);
  return OkStatus();
}

Status CuptiTracer::EnableActivityKinds(bool enable) {
  const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT};
  if (enable == activity_enabled_) return OkStatus();
  for (CUpti_ActivityKind kind : kinds) {
    Status s = enable ? RT_CUPTI_CALL(api_, ActivityEnable, kind)
                      : RT_CUPTI_CALL(api_, ActivityDisable, kind);
    // Device and context records are a bonus; kernels are not.
    if (!s.ok() && (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
                    kind == CUPTI_ACTIVITY_KIND_MEMCPY)) {
      return s;
    }
  }
  activity_enabled_ = enable;
  return OkStatus();
}

void CuptiTracer::Detach() {
  if (subscriber_ == nullptr) return;
  if (Status s = EnableActivityKinds(false); !s.ok()) {
    Say(LogLevel::kWarn, "%s", s.message().c_str());
  }
  (void)RT_CUPTI_CALL(api_, Unsubscribe, subscriber_);
  subscriber_ = nullptr;
  CuptiTracer* self = this;
  g_buffer_target.compare_exchange_strong(self, nullptr);
}

void CuptiTracer::Finalize() {
  if (finalized_) return;
  finalized_ = true;
  if (count_nested_driver_) {
    Say(LogLevel::kDebug,
        "%llu driver API callbacks (enter and exit each) came inside runtime "
        "calls and were skipped",
        static_cast<unsigned long long>(nested_driver_callbacks()));
  }
  if (subscriber_ != nullptr) {
    (void)RT_CUPTI_CALL(api_, Unsubscribe, subscriber_);
    subscriber_ = nullptr;
  }
  (void)RT_CUPTI_CALL(api_, Finalize);
}

void CuptiTracer::ReportRefusedBuffers(uint64_t refused) {
  // Refused buffer requests are not records (CUPTI counts the records it
  // then drops in cupti_records_dropped): said once, in their own unit,
  // with where the buffers were: waiting for the sender, or held by CUPTI
  // (kept because a record in them is incomplete, which a default flush
  // never returns).
  if (refused == 0 || refused_buffers_said_) return;
  refused_buffers_said_ = true;
  const uint64_t returned = pool_->buffers_returned();
  const uint64_t outstanding = pool_->buffers_given() - returned;
  const size_t waiting = pool_->completed_count();
  std::string cause;
  // Buffers waiting for the sender were handed back already, so they are
  // not outstanding: whichever side holds more is the cause.
  if (outstanding > waiting) {
    cause = std::to_string(outstanding) +
            " were held by CUPTI, which does not hand back a buffer that "
            "holds an incomplete activity record except on a forced flush "
            "(in counters mode: kernels the Range Profiler replayed)";
  } else {
    cause = std::to_string(waiting) +
            " were waiting for the sender, which is not keeping up";
  }
  producer_->Warn(
      "CUPTI asked for an activity buffer while the pool's " +
      std::to_string(pool_->buffer_count()) + " buffers of " +
      std::to_string(pool_->buffer_bytes() >> 10) +
      " KiB (ROOFTRACE_ACTIVITY_BUFFER_MB=" +
      std::to_string((pool_->max_buffers() * pool_->buffer_bytes()) >> 20) +
      ") were in use (" + std::to_string(refused) + " time(s) so far): " +
      cause +
      "; the records CUPTI could not store are counted in "
      "Stats.cupti_records_dropped");
}

void CuptiTracer::OnContextCreated(CUcontext context) {
  {
    std::lock_guard<std::mutex> lock(contexts_mu_);
    if (context_count_ < kMaxContexts) contexts_[context_count_++] = context;
  }
  if (counters_ == nullptr && sampling_ == nullptr) return;
  uint32_t device = 0;
  if (!RT_CUPTI_CALL(api_, GetDeviceId, context, &device).ok()) device = 0;
  if (sampling_ != nullptr) {
    // PM samples carry CUPTI's GPU timestamps: measured against our clock
    // now, as the activity clock is when CUPTI cannot stamp with ours.
    uint64_t cupti_now = 0;
    const uint64_t before = MonotonicNs();
    const bool stamped = RT_CUPTI_CALL(api_, GetTimestamp, &cupti_now).ok();
    const uint64_t after = MonotonicNs();
    const ClockOffset clock = stamped
                                  ? MeasureClockOffset(before, cupti_now, after)
                                  : ClockOffset{};
    sampling_->OnContextCreated(context, device, clock);
  }
  if (counters_ != nullptr) counters_->OnContextCreated(context, device);
}

void CuptiTracer::OnContextDestroyed(CUcontext context) {
  if (counters_ != nullptr) counters_->OnContextDestroyed(context);
  std::lock_guard<std::mutex> lock(contexts_mu_);
  for (size_t i = 0; i < context_count_; ++i) {
    if (contexts_[i] == context) {
      contexts_[i] = contexts_[--context_count_];
      break;
    }
  }
}

void CuptiTracer::SynchronizeContexts() {
  if (driver_.CtxPushCurrent == nullptr || driver_.CtxSynchronize == nullptr ||
      driver_.CtxPopCurrent == nullptr) {
    return;  // no driver: nothing can be in flight
  }
  // A copy, so no lock is held while the GPU drains (a context destroyed
  // meanwhile is its destroyer's to wait for; the destroy callback runs
  // before the context goes).
  CUcontext live[kMaxContexts];
  size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(contexts_mu_);
    n = context_count_;
    std::copy(contexts_, contexts_ + n, live);
  }
  for (size_t i = 0; i < n; ++i) {
    if (driver_.CtxPushCurrent(live[i]) != CUDA_SUCCESS) continue;
    (void)driver_.CtxSynchronize();
    CUcontext popped = nullptr;
    (void)driver_.CtxPopCurrent(&popped);
  }
}

void CuptiTracer::OnProfilerRange(bool start) {
  if (producer_->config().capture != CaptureMode::kProfilerApi) return;
  Status s = producer_->config().parts.activity ? EnableActivityKinds(start)
                                                : OkStatus();
  if (!s.ok()) {
    Say(LogLevel::kWarn, "%s", s.message().c_str());
    return;
  }
  producer_->set_capturing(start);
  // In counters mode a default flush here could leave a buffer holding a
  // replayed kernel's record with CUPTI for good; the sender's periodic
  // flush (SafeActivityFlush) collects it instead.
  if (!start && counters_ == nullptr) {
    (void)RT_CUPTI_CALL(api_, ActivityFlushAll, 0);
  }
}

void CUPTIAPI CuptiTracer::CallbackTrampoline(void* userdata,
                                              CUpti_CallbackDomain domain,
                                              CUpti_CallbackId cbid,
                                              const void* cbdata) {
  static_cast<CuptiTracer*>(userdata)->OnCallback(domain, cbid, cbdata);
}

void CuptiTracer::OnCallback(CUpti_CallbackDomain domain,
                             CUpti_CallbackId cbid, const void* cbdata) {
  // In a forked child the tracer, its counters mode and its producer are
  // the parent's (CUDA does not survive fork): touch none of them, and
  // take none of their locks, which the parent's threads may have held.
  if (g_fork_generation.load(std::memory_order_relaxed) != generation_) {
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    OnResource(cbid, static_cast<const CUpti_ResourceData*>(cbdata));
    return;
  }
  if (cbid >= kMaxCallbackIds) return;
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const ApiCallbackKind kind =
      runtime ? runtime_kind_[cbid] : driver_kind_[cbid];
  if (kind == ApiCallbackKind::kNotTraced) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
  ThreadState& t = CurrentThread();
  if (!runtime && t.runtime_depth > 0) {
    // The driver call a runtime call makes: the runtime one counts.
    if (count_nested_driver_) [[unlikely]] {
      nested_driver_callbacks_.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  if (data->callbackSite == CUPTI_API_ENTER) {
    OnApiEnter(domain, cbid, kind, data, t);
  } else {
    OnApiExit(runtime, kind, cbid, data, t);
  }
}

void CuptiTracer::OnResource(CUpti_CallbackId cbid,
                             const CUpti_ResourceData* resource) {
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    OnContextCreated(resource->context);
  } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    OnContextDestroyed(resource->context);
  }
}

void CuptiTracer::OnApiEnter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             ApiCallbackKind kind,
                             const CUpti_CallbackData* data, ThreadState& t) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (runtime) {
    ++t.runtime_depth;
    t.runtime_start_ns = MonotonicNs();
  } else {
    t.driver_start_ns = MonotonicNs();
  }
  if (counters_ != nullptr &&
      !CountersLaunchBegin(domain, cbid, kind, data, t)) {
    // Its records may be incomplete until the GPU runs it: no forced
    // activity flush until a profiled launch has ended after it.
    counters_->OnUnprofiledEnqueue();
  }
}

void CuptiTracer::OnApiExit(bool runtime, ApiCallbackKind kind,
                            CUpti_CallbackId cbid,
                            const CUpti_CallbackData* data, ThreadState& t) {
  if (t.counters_launch == data->correlationId + 1) {
    // The launch returns: a profiled one's range ends on this thread.
    t.counters_launch = 0;
    const bool launched =
        data->functionReturnValue == nullptr ||
        *static_cast<const int*>(data->functionReturnValue) == 0;
    counters_->OnLaunchEnd(data->context, data->correlationId, launched);
    if (launched && t_launch_facts.correlation_id == data->correlationId) {
      t_launch_facts.api_end_ns = MonotonicNs();
      counters_->RecordLaunchFacts(t_launch_facts);
    }
    t_launch_facts.correlation_id = 0;
  }
  uint64_t start_ns;
  if (runtime) {
    if (t.runtime_depth > 0) --t.runtime_depth;
    start_ns = t.runtime_start_ns;
  } else {
    start_ns = t.driver_start_ns;
  }
  if (kind == ApiCallbackKind::kCaptureBegin ||
      kind == ApiCallbackKind::kCaptureEnd) {
    OnCaptureCall(kind, data);
    return;
  }
  if (kind == ApiCallbackKind::kProfilerStart ||
      kind == ApiCallbackKind::kProfilerStop) {
    OnProfilerRange(kind == ApiCallbackKind::kProfilerStart);
    return;
  }
  if (!producer_->capturing()) {
    producer_->CountFiltered(wire::enums::kRecordLaunch);
    return;
  }
  EmitLaunch(kind, cbid, data->correlationId, start_ns, t);
}

void CuptiTracer::OnCaptureCall(ApiCallbackKind kind,
                                const CUpti_CallbackData* data) {
  if (counters_ == nullptr) return;
  const int result = data->functionReturnValue == nullptr
                         ? 0
                         : *static_cast<const int*>(data->functionReturnValue);
  if (kind == ApiCallbackKind::kCaptureBegin) {
    if (result == 0) counters_->OnCaptureBegan();
    return;
  }
  // An invalidated capture still ends; any other failure leaves it open.
  static_assert(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED == 901 &&
                cudaErrorStreamCaptureInvalidated == 901);
  if (result == 0 || result == 901) counters_->OnCaptureEnded();
}

void CuptiTracer::EmitLaunch(ApiCallbackKind kind, CUpti_CallbackId cbid,
                             uint32_t correlation_id, uint64_t start_ns,
                             ThreadState& t) {
  LaunchRecord r;
  r.correlation_id = correlation_id;
  r.api_start_ns = start_ns;
  r.api_end_ns = MonotonicNs();
  r.nvtx_range_id = t.InnermostRangeId();
  r.gemm_call_id = t.gemm_depth > 0 ? t.gemm_call_id : 0;
  r.thread_id = t.tid;
  r.kind = WireApiKind(kind);
  r.cbid = cbid;
  if (t.gemm_depth > 0 && t.gemm_correlation_count < kMaxGemmCorrelations) {
    t.gemm_correlations[t.gemm_correlation_count++] = correlation_id;
  }
  producer_->EmitLaunch(r);
}

bool CuptiTracer::CountersLaunchBegin(CUpti_CallbackDomain domain,
                                      CUpti_CallbackId cbid,
                                      ApiCallbackKind kind,
                                      const CUpti_CallbackData* data,
                                      ThreadState& t) {
  const bool graph = kind == ApiCallbackKind::kGraphLaunch;
  if ((kind != ApiCallbackKind::kKernelLaunch && !graph) ||
      t.counters_launch != 0 || !producer_->capturing() ||
      counters_->disabled()) {
    return false;
  }
  if (graph) counters_->OnGraphLaunch();  // says once what is not counted
  // A launch being captured into a graph runs no kernel, and profiling it
  // would synchronize the context (DecodeData), which breaks the capture:
  // none is profiled while any capture is open in the process (a capture in
  // global mode forbids synchronizing from every thread), nor one whose own
  // stream reports capturing.
  CUstream stream = nullptr;
  bool stream_known = false;
  bool in_capture = graph || counters_->CaptureInProgress();
  if (!in_capture) {
    stream_known = LaunchStream(domain, cbid, data->functionParams, &stream);
    in_capture = stream_known && StreamCapturing(driver_, stream);
  }
  const char* symbol = data->symbolName != nullptr ? data->symbolName : "";
  const std::string_view nvtx_path = counters_->needs_nvtx_path()
                                         ? NvtxPath(t, producer_->interner())
                                         : std::string_view();
  // Profiled or not, the launch ends on this thread (OnApiExit): a launch
  // that is not profiled still shares its context's auto range.
  LaunchGeometry geometry;
  const bool geometry_known =
      LaunchGeometryOf(domain, cbid, data->functionParams, &geometry);
  // The kernel signature counters mode samples by (a launch whose geometry
  // the API does not publish is signed by its name and GEMM shape alone).
  const uint64_t signature =
      KernelSignature(symbol, geometry.grid, geometry.block,
                      geometry.dynamic_shared_memory_bytes,
                      t.gemm_depth > 0 ? t.gemm_record : nullptr);
  const bool profiled =
      counters_->OnLaunchBegin(data->context, data->correlationId, symbol,
                               nvtx_path, in_capture, signature);
  t.counters_launch = data->correlationId + 1;
  if (profiled) {
    NoteLaunchFacts(domain, data, geometry_known ? &geometry : nullptr,
                    stream_known, stream, t);
  }
  return profiled;
}

void CuptiTracer::NoteLaunchFacts(CUpti_CallbackDomain domain,
                                  const CUpti_CallbackData* data,
                                  const LaunchGeometry* geometry,
                                  bool stream_known, CUstream stream,
                                  const ThreadState& t) {
  // What CUPTI's kernel record would carry, from the callback: its
  // record of a replayed kernel never completes (counters_mode.h).
  CountersMode::LaunchFacts& f = t_launch_facts;
  f = CountersMode::LaunchFacts{};
  f.correlation_id = data->correlationId;
  f.name_iid = producer_->Intern(
      data->symbolName != nullptr ? data->symbolName : "<unknown kernel>");
  if (geometry != nullptr) {
    std::copy(geometry->grid, geometry->grid + 3, f.grid);
    std::copy(geometry->block, geometry->block + 3, f.block);
    f.dynamic_shared_memory_bytes = geometry->dynamic_shared_memory_bytes;
  }
  // Direct calls, not RT_CUPTI_CALL: its failure message allocates.
  if (api_.GetDeviceId != nullptr) {
    (void)api_.GetDeviceId(data->context, &f.device_id);
  }
  if (api_.GetContextId != nullptr) {
    (void)api_.GetContextId(data->context, &f.context_id);
  }
  if (api_.GetStreamIdEx != nullptr && stream_known) {
    // The null stream of a _ptsz launch reads as CU_STREAM_PER_THREAD.
    const bool per_thread = stream == CU_STREAM_PER_THREAD;
    (void)api_.GetStreamIdEx(data->context, per_thread ? nullptr : stream,
                             per_thread ? 1 : 0, &f.stream_id);
  }
  f.api_start_ns = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? t.runtime_start_ns
                                                          : t.driver_start_ns;
}

void CUPTIAPI CuptiTracer::BufferRequested(uint8_t** buffer, size_t* size,
                                           size_t* max_records) {
  CuptiTracer* t = g_buffer_target.load(std::memory_order_acquire);
  if (t == nullptr || t->pool_ == nullptr) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    return;
  }
  t->pool_->OnRequested(buffer, size, max_records);
}

void CUPTIAPI CuptiTracer::BufferCompleted(CUcontext context,
                                           uint32_t stream_id, uint8_t* buffer,
                                           size_t /*size*/, size_t valid_size) {
  CuptiTracer* t = g_buffer_target.load(std::memory_order_acquire);
  if (t == nullptr || t->pool_ == nullptr) return;
  // CUPTI's dropped count for this buffer's queue: it resets at each read,
  // so it is added up (as NVIDIA's activity_trace_async sample reads it
  // here). Called directly, not through RT_CUPTI_CALL, whose failure
  // message would allocate inside a CUPTI callback.
  size_t dropped = 0;
  if (t->api_.ActivityGetNumDroppedRecords != nullptr &&
      t->api_.ActivityGetNumDroppedRecords(context, stream_id, &dropped) ==
          CUPTI_SUCCESS) {
    t->cupti_dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
  t->pool_->OnCompleted(buffer, valid_size);
  t->producer_->Wake();
}

}  // namespace rooftrace::inject
