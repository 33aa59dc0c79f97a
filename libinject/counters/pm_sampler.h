// PM sampling on one device (cupti_pmsampling.h, CUDA 12.6+): the GPU reads
// device-wide counters every `interval_ns` into a hardware buffer; the
// sender thread decodes the buffer into a counter-data image, evaluates
// each completed sample on the CPU (Profiler Host API, host of type
// PM_SAMPLING, sample index as range index) and hands out samples with
// their start and end timestamps. The collector attributes them to kernels
// by time overlap (pipeline/pm_attribution.h). Nothing runs on the
// application's threads and no kernel is serialized or replayed.
//
// Flow: Create (config image from the Profiler Host, one pass or refused)
// -> Start: cuptiPmSamplingEnable(device), SetConfig(config, hardware
// buffer, interval, GPU_TIME_INTERVAL trigger, KEEP_OLDEST), counter-data
// image for `max_samples`, Start -> Collect (repeatedly, sender thread):
// DecodeData until END_OF_RECORDS; after each decode the completed samples
// are evaluated and the image re-initialized -> Stop: Stop, a last
// Collect, Disable.
//
// Losses are counted, never silent: a hardware-buffer overflow (KEEP_OLDEST
// keeps the oldest records and says overflow), samples populated but not
// completed when the image is re-initialized, samples whose evaluation
// failed.
//
// Owned by libinject's sampling mode (libinject/sampling_mode.h);
// Start/Collect/Stop from one thread at a time. Built like libinject: no
// exceptions.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_PM_SAMPLER_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_PM_SAMPLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "libinject/counters/cupti_profiler_api.h"
#include "libinject/counters/metric_config.h"

namespace rooftrace::counters {

// What sampling mode reads, by role, in the order of PmCounter
// (pipeline/pm_attribution.h). PM sampling collects one pass only, and the
// installed CUPTI says the budget is tight on every chip: DRAM read and
// write bytes plus the tensor pipe or the FMA pipe (never both) plus SM
// cycles (counters_pm_sampler_test). Each role takes the first of its
// candidates that keeps the set at one pass, in role order; DRAM bytes are
// required, a role none of whose candidates fits is left out and said.
enum class PmRole { kDramRead = 0, kDramWrite, kTensorPipe, kFmaPipe,
                    kSmCycles, kCount };
inline constexpr int kNumPmRoles = static_cast<int>(PmRole::kCount);

// The metrics chosen for a chip, one per role that fits.
struct PmMetricSet {
  std::vector<std::string> names;
  std::vector<PmRole> roles;  // parallel to names
  std::vector<std::string> left_out;  // roles that did not fit, by name
  PmSamplingConfig config;
  std::vector<const char*> Names() const;
};
StatusOr<PmMetricSet> BuildPmMetricSet(
    const CuptiProfilerApi& api, const std::string& chip,
    const std::vector<uint8_t>& counter_availability = {});

struct PmSamplingOptions {
  // Sampling interval (GPU_TIME_INTERVAL trigger, nanoseconds).
  uint64_t interval_ns = 20000;
  // The hardware buffer the GPU writes records into between decodes.
  size_t hardware_buffer_bytes = size_t{64} << 20;
  // Samples one counter-data image holds (one Collect evaluates at most
  // this many before re-initializing it and decoding on).
  uint32_t max_samples = 4096;
};

// One evaluated sample: the counts between start_ns and end_ns (GPU
// timestamps), one value per role (0 for a role the chip's set left out).
struct PmSampleValues {
  uint64_t start_ns = 0, end_ns = 0;
  double values[kNumPmRoles] = {0, 0, 0, 0, 0};
};

struct PmSamplerStats {
  uint64_t decodes = 0;
  uint64_t samples = 0;             // evaluated and handed out
  uint64_t overflows = 0;           // decodes that reported overflow
  uint64_t samples_incomplete = 0;  // populated, not completed, at a reset
  uint64_t samples_failed = 0;      // evaluation failed
};

class PmSampler {
 public:
  // Chooses the chip's metrics (BuildPmMetricSet) and builds the
  // evaluation host; makes no device call. GA100 and Turing chips
  // have no time trigger: refused with a line saying so.
  static StatusOr<std::unique_ptr<PmSampler>> Create(
      const CuptiProfilerApi& api, size_t device_index, std::string chip,
      const PmSamplingOptions& options,
      const std::vector<uint8_t>& counter_availability = {});
  ~PmSampler();  // Stop() if started (samples then are lost: call Stop)

  Status Start();
  // Decodes what the hardware buffer holds and appends the completed
  // samples to `out`.
  Status Collect(std::vector<PmSampleValues>* out);
  // Stops sampling, collects what is left, disables.
  Status Stop(std::vector<PmSampleValues>* out);

  const PmSamplerStats& stats() const { return stats_; }
  const PmMetricSet& metrics() const { return set_; }
  // Lines to say (overflow, incomplete samples), each kind once.
  std::vector<std::string> TakeWarnings();

 private:
  PmSampler(const CuptiProfilerApi& api, size_t device, std::string chip,
            const PmSamplingOptions& options, PmMetricSet set,
            ProfilerHost host)
      : api_(api),
        device_(device),
        chip_(std::move(chip)),
        options_(options),
        set_(std::move(set)),
        host_(std::move(host)) {}
  Status InitializeImage();
  // Evaluates the image's completed samples into `out`, then
  // re-initializes the image.
  Status Drain(std::vector<PmSampleValues>* out);
  void Warn(const std::string& key, std::string line);

  const CuptiProfilerApi api_;
  size_t device_;
  std::string chip_;
  PmSamplingOptions options_;
  PmMetricSet set_;
  ProfilerHost host_;
  CUpti_PmSampling_Object* object_ = nullptr;
  bool started_ = false;
  std::vector<uint8_t> image_;
  PmSamplerStats stats_;
  std::vector<std::string> warnings_, warned_;
};

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_PM_SAMPLER_H_
