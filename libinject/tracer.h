// CUPTI tracing for one producer: the callback subscriber (runtime / driver
// API calls that enqueue GPU work -> Launch records on the launching
// thread) and the activity API (kernels, copies, memsets, devices).
//
// Created by StartCuptiTracing(); lives as long as its producer (forever in
// a host process). OnCallback() runs on application threads and does not
// allocate; the buffer callbacks forward to the producer's pool.
// The trap: buffer callbacks have no user data, so one tracer per process
// is reachable through a global (set in Start()).
#ifndef ROOFTRACE_LIBINJECT_TRACER_H_
#define ROOFTRACE_LIBINJECT_TRACER_H_

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "base/status.h"
#include "libinject/activity.h"
#include "libinject/api_callbacks.h"
#include "libinject/cupti_api.h"
#include "libinject/driver_api.h"

namespace rooftrace::inject {

class CountersMode;
class SamplingMode;
class Producer;
struct ThreadState;

// Callback ids per domain we keep a kind for (CUDA 13: < 1000).
inline constexpr uint32_t kMaxCallbackIds = 2048;

// True when libcuda or libcudart is already loaded in this process.
bool HostLinksCuda();

// Starts CUPTI tracing for `producer` once; on any failure (no libcupti, no
// driver, no GPU, another subscriber) says one line and stands aside, and
// NVTX and cuBLAS capture go on.
void StartCuptiTracing(Producer* producer);

// How often, at most, the sender asks CUPTI for its half-full activity
// buffers (cuptiActivityFlushAll, checked every sender pass): once a second
// in trace mode (a default flush); every 50 ms in counters mode, and then
// only the flush CountersMode::SafeActivityFlush allows (forced once the
// profiled kernels' records are the only incomplete ones; none while a
// launch that was not profiled may still run). A default flush after a
// replayed kernel is what lost records on the H100 (run 7 of
// docs/validation/2026-11-24-h100: CUPTI held all 32 buffers).
uint64_t ActivityFlushPeriodNs(bool counters_mode);

class CuptiTracer {
 public:
  CuptiTracer(Producer* producer, CuptiApi api);
  ~CuptiTracer();

  // Subscribes, enables callbacks and activity. Errors say what failed.
  Status Start();
  // Stands aside after a successful Start() (its producer could not start):
  // activity off, unsubscribed, no buffer callbacks. Idempotent.
  void Detach();
  // After the sender has drained: unsubscribe, cuptiFinalize (CUDA 13.0 /
  // 13.1 crash at unload without it). Idempotent. With ROOFTRACE_LOG=debug
  // it first says how many driver callbacks came inside runtime calls.
  void Finalize();

  // Driver API callbacks (enter and exit each count) that came inside a
  // runtime call and were skipped, counted only when asked for
  // (ROOFTRACE_LOG=debug at Start(), or tests): the launch benchmark reads
  // from it whether CUPTI also calls the driver callback of every runtime
  // launch (issue 26).
  void set_count_nested_driver(bool on) { count_nested_driver_ = on; }
  uint64_t nested_driver_callbacks() const {
    return nested_driver_callbacks_.load(std::memory_order_relaxed);
  }

  // The real callback (public for tests and the benchmark).
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  const void* cbdata);
  static void CUPTIAPI CallbackTrampoline(void* userdata,
                                          CUpti_CallbackDomain domain,
                                          CUpti_CallbackId cbid,
                                          const void* cbdata);
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size,
                                       size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id,
                                       uint8_t* buffer, size_t size,
                                       size_t valid_size);

  // What Start() enables from api_callbacks.h; tests set kinds directly.
  void SetApiKind(CUpti_CallbackDomain domain, uint32_t cbid,
                  ApiCallbackKind kind);
  // Creates the buffer pool and decoder and attaches them to the producer
  // (Start() does it; tests call it with fake CUPTI tables).
  void AttachActivity(size_t buffer_count, size_t buffer_bytes,
                      size_t max_buffers = 0);
  // The same with a pool of `buffer_bytes` buffers, as many as
  // `budget_bytes` holds (Start(): Config::activity_buffer_bytes).
  void AttachActivityBudget(size_t budget_bytes, size_t buffer_bytes);
  ActivityBufferPool* pool() { return pool_.get(); }
  ActivityDecoder* decoder() { return decoder_.get(); }
  // Makes this tracer the target of the buffer callbacks.
  void MakeBufferTarget();
  // The driver entry points (loaded at construction; tests set fakes).
  void set_driver_api(const DriverApi& driver) { driver_ = driver; }

  // Counters mode (ROOFTRACE_MODE=counters): Start() creates it from the
  // libcupti handle; tests attach one built on fake entry points. Attaching
  // tells the producer (Hello mode and capability, CounterBatch packets).
  void AttachCounters(std::unique_ptr<CountersMode> counters);
  CountersMode* counters() { return counters_.get(); }
  // Sampling mode (ROOFTRACE_MODE=sampling): the same, with a SamplingMode
  // (PmSampleBatch packets).
  void AttachSampling(std::unique_ptr<SamplingMode> sampling);
  SamplingMode* sampling() { return sampling_.get(); }
  // Resource callbacks: the live contexts (for SynchronizeContexts), and
  // one counters session per context.
  void OnContextCreated(CUcontext context);
  void OnContextDestroyed(CUcontext context);
  // Waits for every live context's work (driver push / synchronize / pop),
  // on the calling thread: the exit path, before CUPTI's forced flush.
  void SynchronizeContexts();

 private:
  // One warning when libcupti is newer than the headers built with.
  void WarnIfNewer(uint32_t version);
  // cuptiSubscribe_v2 when libcupti has it (it names another subscriber
  // in `old_name`), else cuptiSubscribe.
  CuptiCall Subscribe(char* old_name, size_t old_name_size);
  Status EnableCallbacks();
  Status EnableActivityKinds(bool enable);
  void AttachPool(std::unique_ptr<ActivityBufferPool> pool);
  // Sender thread: the pool's refused buffer requests, said once.
  void ReportRefusedBuffers(uint64_t refused);
  void OnProfilerRange(bool start);
  // Start()'s steps after subscribing: callbacks, clock, buffers,
  // activity; then counters mode when configured (its failure leaves trace
  // mode running).
  Status EnableTracing();
  void StartCountersMode();
  void StartSamplingMode();
  Status EnableCountersCallbacks();
  // OnCallback's parts (application threads).
  void OnResource(CUpti_CallbackId cbid, const CUpti_ResourceData* resource);
  void OnApiEnter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  ApiCallbackKind kind, const CUpti_CallbackData* data,
                  ThreadState& t);
  void OnApiExit(bool runtime, ApiCallbackKind kind, CUpti_CallbackId cbid,
                 const CUpti_CallbackData* data, ThreadState& t);
  void EmitLaunch(ApiCallbackKind kind, CUpti_CallbackId cbid,
                  uint32_t correlation_id, uint64_t start_ns, ThreadState& t);
  // Stream capture begin / end (counters mode).
  void OnCaptureCall(ApiCallbackKind kind, const CUpti_CallbackData* data);
  // Counters mode at a launch API's enter (app thread): true when the
  // launch is profiled.
  bool CountersLaunchBegin(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                           ApiCallbackKind kind, const CUpti_CallbackData* data,
                           ThreadState& t);
  // A profiled launch's facts for its Kernel record (app thread; the only
  // allocation is the interner's, the first time a kernel name is seen, as
  // for NVTX messages).
  void NoteLaunchFacts(CUpti_CallbackDomain domain,
                       const CUpti_CallbackData* data,
                       const LaunchGeometry* geometry, bool stream_known,
                       CUstream stream, const ThreadState& t);

  Producer* producer_;
  CuptiApi api_;
  DriverApi driver_;
  // The process generation (thread_state.h) the tracer was made in; its
  // callbacks do nothing in a forked child.
  const uint64_t generation_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  ApiCallbackKind runtime_kind_[kMaxCallbackIds] = {};
  ApiCallbackKind driver_kind_[kMaxCallbackIds] = {};
  std::unique_ptr<ActivityBufferPool> pool_;
  std::unique_ptr<ActivityDecoder> decoder_;
  bool activity_enabled_ = false;
  std::unique_ptr<CountersMode> counters_;
  std::unique_ptr<SamplingMode> sampling_;
  bool finalized_ = false;
  // CUPTI's dropped activity records, added up: every read of its counter
  // resets it (cuptiActivityGetNumDroppedRecords).
  std::atomic<uint64_t> cupti_dropped_{0};
  bool refused_buffers_said_ = false;  // sender thread only
  // nested_driver_callbacks(): touched only when counting (debug).
  bool count_nested_driver_ = false;
  std::atomic<uint64_t> nested_driver_callbacks_{0};
  // Live contexts (the resource callbacks); rare changes, no heap.
  static constexpr size_t kMaxContexts = 64;
  std::mutex contexts_mu_;
  CUcontext contexts_[kMaxContexts] = {};
  size_t context_count_ = 0;
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_TRACER_H_
