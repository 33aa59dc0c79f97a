// Sampling mode inside libinject (ROOFTRACE_MODE=sampling): trace mode as
// it is, plus CUPTI PM sampling on every device the process uses. The
// bridge between the CUPTI resource callbacks (tracer.cc), the sender
// thread (sender.cc) and the counters library's PmSampler
// (libinject/counters/pm_sampler.h).
//
// Created once per producer from the libcupti handle trace mode already
// opened; lives as long as its producer. The first context of a device
// starts that device's sampler (cuptiProfilerInitialize once, the chip's
// name, the one-pass metric set, Enable, SetConfig, Start). Nothing runs on
// the application's threads after that: the sender decodes and evaluates
// the samples and sends them as PmSampleBatch packets; no kernel is
// serialized or replayed, so CUDA graphs and NCCL kernels run as they do.
//
// The host comes first: when sampling cannot start (an unsupported GPU,
// counters restricted to administrators, a CUPTI error) the one line says
// why, the mode reported becomes trace, and trace mode goes on untouched.
// A sampler that fails later (a decode error) stops; its line is said once.
//
// Threads: OnContextCreated on application threads (resource callback),
// Collect / TakeWarnings / counts on the sender thread. One mutex guards
// the samplers; a context created while the sender decodes waits for that
// decode (context creation is rare, a decode a few milliseconds).
// The trap: the counters library's types stay behind forward declarations
// so the tracer and sender do not see its CUPTI profiler headers.
#ifndef ROOFTRACE_LIBINJECT_SAMPLING_MODE_H_
#define ROOFTRACE_LIBINJECT_SAMPLING_MODE_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "libinject/clock.h"
#include "libinject/config.h"
#include "proto/wire_encoder.h"

namespace rooftrace::counters {
struct CuptiProfilerApi;
class PmSampler;
}  // namespace rooftrace::counters

namespace rooftrace::inject {

class SamplingMode {
 public:
  // Resolves the profiler entry points from libcupti's `cupti_handle`. The
  // error is the one line to say (a CUPTI without PM sampling).
  static StatusOr<std::unique_ptr<SamplingMode>> Create(void* cupti_handle,
                                                        const Config& config);
  // Same with a given entry-point table (tests pass fakes).
  static StatusOr<std::unique_ptr<SamplingMode>> CreateWithApi(
      const counters::CuptiProfilerApi& api, const Config& config);
  ~SamplingMode();

  // CUPTI resource callback CONTEXT_CREATED (application thread): the
  // first context of `device_ordinal` starts its sampler. `clock` turns
  // the samples' GPU timestamps into the host clock (measured by the
  // caller now). A failure says its line, stops every sampler and makes
  // the mode trace (failed()).
  void OnContextCreated(CUcontext ctx, uint32_t device_ordinal,
                        const ClockOffset& clock);

  // Sender thread: the samples decoded since the last call, on the host
  // clock; with `final`, every sampler is stopped first (call before CUPTI
  // and the contexts go away).
  void Collect(bool final, std::vector<PmSampleInfo>* out);

  // Sampling could not start, or stopped: the producer's mode is trace.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Samples handed out, and samples lost (overflow, incomplete, failed).
  uint64_t samples() const;
  uint64_t samples_lost() const;
  // Lines to say and put in Stats.warnings.
  std::vector<std::string> TakeWarnings();

 private:
  SamplingMode(const counters::CuptiProfilerApi& api, const Config& config);
  // Under mu_. Says `line`, stops what runs, marks the mode failed.
  void FailLocked(const std::string& line);
  StatusOr<std::string> ChipNameLocked(uint32_t device_ordinal);

  struct Device {
    uint32_t ordinal = 0;
    ClockOffset clock;
    std::unique_ptr<counters::PmSampler> sampler;
  };

  std::unique_ptr<counters::CuptiProfilerApi> api_;
  const uint64_t interval_ns_;
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  bool profiler_initialized_ = false;
  std::vector<Device> devices_;
  uint64_t samples_ = 0, lost_ = 0;  // of samplers already stopped and gone
  std::vector<std::string> warnings_;
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_SAMPLING_MODE_H_
