// Profiler Host API work: chip lists, metric discovery, config images, pass
// counts, and evaluation of counter-data images into metric values. All of
// it runs on the CPU with no GPU or driver, given a CUPTI chip name.
//
// ProfilerHost owns one CUpti_Profiler_Host_Object; it is move-only and not
// thread-safe (use one per thread). The free functions create their own.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_METRIC_CONFIG_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_METRIC_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "libinject/counters/cupti_profiler_api.h"
#include "libinject/counters/metric_tables.h"

namespace rooftrace::counters {

class ProfilerHost {
 public:
  // `counter_availability` is the image cuptiProfilerGetCounterAvailability
  // returns for a live context (empty: assume every counter is available,
  // which is what the CPU-only tests do).
  // `type`: the Range Profiler's host (counters mode) or PM sampling's.
  static StatusOr<ProfilerHost> Create(
      const CuptiProfilerApi& api, std::string_view chip,
      const std::vector<uint8_t>& counter_availability = {},
      CUpti_ProfilerType type = CUPTI_PROFILER_TYPE_RANGE_PROFILER);
  ProfilerHost(ProfilerHost&& other) noexcept;
  ProfilerHost& operator=(ProfilerHost&& other) noexcept;
  ProfilerHost(const ProfilerHost&) = delete;
  ProfilerHost& operator=(const ProfilerHost&) = delete;
  ~ProfilerHost();

  // Base metric names (no rollup suffix) of one type.
  StatusOr<std::vector<std::string>> BaseMetrics(CUpti_MetricType type) const;
  CUpti_Profiler_Host_Object* object() const { return object_; }
  const std::string& chip() const { return chip_; }

 private:
  ProfilerHost(const CuptiProfilerApi* api, CUpti_Profiler_Host_Object* obj,
               std::string chip)
      : api_(api), object_(obj), chip_(std::move(chip)) {}
  const CuptiProfilerApi* api_ = nullptr;
  CUpti_Profiler_Host_Object* object_ = nullptr;
  std::string chip_;
};

// A host object with `metric_names` added (what EvaluateRange needs: the
// same metrics the image was configured with).
StatusOr<ProfilerHost> CreateHostWithMetrics(
    const CuptiProfilerApi& api, std::string_view chip,
    const std::vector<const char*>& metric_names,
    const std::vector<uint8_t>& counter_availability = {});

// PM sampling (cupti_pmsampling.h): a host of type PM_SAMPLING with
// `metric_names` added (for evaluating samples), and its config image.
// PM sampling cannot replay: a set that needs more than one pass is an
// InvalidArgument naming the pass count; an unknown name one naming it.
struct PmSamplingConfig {
  std::vector<uint8_t> config_image;  // for cuptiPmSamplingSetConfig
  int passes = 0;
};
StatusOr<PmSamplingConfig> BuildPmSamplingConfig(
    const CuptiProfilerApi& api, std::string_view chip,
    const std::vector<const char*>& metric_names,
    const std::vector<uint8_t>& counter_availability = {});
StatusOr<ProfilerHost> CreatePmSamplingHost(
    const CuptiProfilerApi& api, std::string_view chip,
    const std::vector<const char*>& metric_names,
    const std::vector<uint8_t>& counter_availability = {});

// Chip names this CUPTI can build configs for ("GA100", "GH100", ...).
StatusOr<std::vector<std::string>> SupportedChips(const CuptiProfilerApi& api);

struct MetricConfig {
  MetricSet metrics;
  std::vector<uint8_t> config_image;  // for cuptiRangeProfilerSetConfig
  int passes = 0;                     // replay passes per kernel
  // Discovered candidates left out because they did not fit the pass budget.
  std::vector<std::string> left_out;
};

// Config image and pass count for exactly `metrics` on `metrics.chip`.
// An unknown metric name fails with InvalidArgument naming every unknown
// metric and the chip.
StatusOr<MetricConfig> BuildConfigForMetrics(
    const CuptiProfilerApi& api, const MetricSet& metrics,
    const std::vector<uint8_t>& counter_availability = {});

// The counters-mode config for `chip`: its table when it has one, else a set
// discovered from the chip's base metrics, keeping the hardware candidates
// that fit one pass (and, for kFull, the CUDA-core counters in a second).
StatusOr<MetricConfig> BuildMetricConfig(
    const CuptiProfilerApi& api, std::string_view chip, CounterSet set,
    const std::vector<uint8_t>& counter_availability = {});

// Number of ranges recorded in a counter-data image. Corrupt for an empty
// image or one CUPTI cannot read. Only pass images CUPTI produced in this
// process or that passed ParseCounterDataFile (counter_data_file.h): CUPTI
// does not survive arbitrary bytes.
StatusOr<size_t> CounterDataRangeCount(const CuptiProfilerApi& api,
                                       const std::vector<uint8_t>& image);

// Values of `metric_names` for range `range_index` of a counter-data image,
// in the order of the names. Runs on the CPU (evaluation happens on
// libinject's sender thread, never on an application thread).
StatusOr<std::vector<double>> EvaluateRange(
    const CuptiProfilerApi& api, const ProfilerHost& host,
    const std::vector<uint8_t>& image, size_t range_index,
    const std::vector<const char*>& metric_names);

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_METRIC_CONFIG_H_
