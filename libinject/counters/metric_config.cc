#include "libinject/counters/metric_config.h"

#include <utility>

namespace rooftrace::counters {

ProfilerHost::ProfilerHost(ProfilerHost&& other) noexcept
    : api_(other.api_),
      object_(std::exchange(other.object_, nullptr)),
      chip_(std::move(other.chip_)) {}

ProfilerHost& ProfilerHost::operator=(ProfilerHost&& other) noexcept {
  if (this != &other) {
    this->~ProfilerHost();
    api_ = other.api_;
    object_ = std::exchange(other.object_, nullptr);
    chip_ = std::move(other.chip_);
  }
  return *this;
}

ProfilerHost::~ProfilerHost() {
  if (object_ != nullptr && api_ != nullptr) {
    auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = object_;
    // Nothing useful to do on failure.
    (void)RT_CUPTI_CALL(*api_, ProfilerHostDeinitialize, &p);
  }
  object_ = nullptr;
}

StatusOr<ProfilerHost> ProfilerHost::Create(
    const CuptiProfilerApi& api, std::string_view chip,
    const std::vector<uint8_t>& counter_availability, CUpti_ProfilerType type) {
  std::string chip_name(chip);
  auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = type;
  p.pChipName = chip_name.c_str();
  p.pCounterAvailabilityImage =
      counter_availability.empty() ? nullptr : counter_availability.data();
  const inject::CuptiCall init = RT_CUPTI_CALL(api, ProfilerHostInitialize, &p);
  if (!init.ok()) {
    if (init.result == CUPTI_ERROR_INVALID_CHIP_NAME ||
        init.result == CUPTI_ERROR_INVALID_PARAMETER) {
      return InvalidArgument("chip '" + chip_name +
                             "' is not supported by this CUPTI (" +
                             init.status.message() +
                             "): update the CUDA toolkit or use trace mode");
    }
    return init.status;
  }
  return ProfilerHost(&api, p.pHostObject, std::move(chip_name));
}

StatusOr<std::vector<std::string>> ProfilerHost::BaseMetrics(
    CUpti_MetricType type) const {
  auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
  p.pHostObject = object_;
  p.metricType = type;
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(*api_, ProfilerHostGetBaseMetrics, &p));
  std::vector<std::string> out;
  out.reserve(p.numMetrics);
  for (size_t i = 0; i < p.numMetrics; ++i) {
    if (p.ppMetricNames[i] != nullptr) out.emplace_back(p.ppMetricNames[i]);
  }
  return out;
}

StatusOr<std::vector<std::string>> SupportedChips(const CuptiProfilerApi& api) {
  auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api, ProfilerHostGetSupportedChips, &p));
  std::vector<std::string> out;
  for (size_t i = 0; i < p.numChips; ++i) {
    if (p.ppChipNames[i] != nullptr) out.emplace_back(p.ppChipNames[i]);
  }
  return out;
}

namespace {

// Adds `names` to a fresh host object; returns the CUPTI result of
// ConfigAddMetrics and leaves the object in `host` for image building.
StatusOr<ProfilerHost> HostWithMetrics(const CuptiProfilerApi& api,
                                       std::string_view chip,
                                       const std::vector<uint8_t>& availability,
                                       const std::vector<const char*>& names,
                                       CUptiResult* result,
                                       CUpti_ProfilerType type =
                                           CUPTI_PROFILER_TYPE_RANGE_PROFILER) {
  RT_ASSIGN_OR_RETURN(ProfilerHost host,
                      ProfilerHost::Create(api, chip, availability, type));
  auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  p.pHostObject = host.object();
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  const inject::CuptiCall added =
      RT_CUPTI_CALL(api, ProfilerHostConfigAddMetrics, &p);
  *result = added.result;
  RT_RETURN_IF_ERROR(added);
  return host;
}

StatusOr<int> PassesOf(const CuptiProfilerApi& api,
                       std::vector<uint8_t>& image) {
  auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api, ProfilerHostGetNumOfPasses, &p));
  return static_cast<int>(p.numOfPasses);
}

StatusOr<std::vector<uint8_t>> ConfigImageOf(const CuptiProfilerApi& api,
                                             const ProfilerHost& host) {
  auto sp = RT_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  sp.pHostObject = host.object();
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api, ProfilerHostGetConfigImageSize, &sp));
  std::vector<uint8_t> image(sp.configImageSize);
  auto ip = RT_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  ip.pHostObject = host.object();
  ip.configImageSize = image.size();
  ip.pConfigImage = image.data();
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api, ProfilerHostGetConfigImage, &ip));
  return image;
}

// Pass count of a candidate list; a list CUPTI rejects counts as "does not
// fit" (-1) so greedy fitting can skip it.
int PassesOrMinusOne(const CuptiProfilerApi& api, const MetricSet& set,
                     const std::vector<uint8_t>& availability) {
  StatusOr<MetricConfig> c = BuildConfigForMetrics(api, set, availability);
  return c.ok() ? c->passes : -1;
}

}  // namespace

StatusOr<ProfilerHost> CreateHostWithMetrics(
    const CuptiProfilerApi& api, std::string_view chip,
    const std::vector<const char*>& metric_names,
    const std::vector<uint8_t>& availability) {
  CUptiResult result = CUPTI_SUCCESS;
  return HostWithMetrics(api, chip, availability, metric_names, &result);
}

StatusOr<ProfilerHost> CreatePmSamplingHost(
    const CuptiProfilerApi& api, std::string_view chip,
    const std::vector<const char*>& metric_names,
    const std::vector<uint8_t>& availability) {
  CUptiResult result = CUPTI_SUCCESS;
  return HostWithMetrics(api, chip, availability, metric_names, &result,
                         CUPTI_PROFILER_TYPE_PM_SAMPLING);
}

StatusOr<PmSamplingConfig> BuildPmSamplingConfig(
    const CuptiProfilerApi& api, std::string_view chip,
    const std::vector<const char*>& metric_names,
    const std::vector<uint8_t>& availability) {
  if (metric_names.empty()) {
    return InvalidArgument("no metrics to sample for chip " +
                           std::string(chip));
  }
  CUptiResult result = CUPTI_SUCCESS;
  StatusOr<ProfilerHost> host =
      HostWithMetrics(api, chip, availability, metric_names, &result,
                      CUPTI_PROFILER_TYPE_PM_SAMPLING);
  if (!host.ok()) {
    if (result != CUPTI_ERROR_INVALID_METRIC_NAME &&
        result != CUPTI_ERROR_INVALID_PARAMETER) {
      return host.status();
    }
    std::string unknown;
    for (const char* name : metric_names) {
      CUptiResult one = CUPTI_SUCCESS;
      StatusOr<ProfilerHost> h =
          HostWithMetrics(api, chip, availability, {name}, &one,
                          CUPTI_PROFILER_TYPE_PM_SAMPLING);
      if (!h.ok() && one != CUPTI_SUCCESS) {
        unknown += (unknown.empty() ? "" : ", ") + std::string(name);
      }
    }
    if (unknown.empty()) return host.status();
    return InvalidArgument("chip " + std::string(chip) +
                           ": PM sampling has no metric(s) " + unknown +
                           ": fix libinject/counters/pm_sampler.cc's list");
  }
  PmSamplingConfig out;
  RT_ASSIGN_OR_RETURN(out.config_image, ConfigImageOf(api, *host));
  RT_ASSIGN_OR_RETURN(out.passes, PassesOf(api, out.config_image));
  if (out.passes != 1) {
    return InvalidArgument("chip " + std::string(chip) + ": the PM sampling "
                           "metrics need " + std::to_string(out.passes) +
                           " passes; PM sampling collects one");
  }
  return out;
}

StatusOr<MetricConfig> BuildConfigForMetrics(
    const CuptiProfilerApi& api, const MetricSet& metrics,
    const std::vector<uint8_t>& availability) {
  if (metrics.metrics.empty()) {
    return InvalidArgument("no metrics to configure for chip " + metrics.chip);
  }
  std::vector<const char*> names = metrics.Names();
  CUptiResult result = CUPTI_SUCCESS;
  StatusOr<ProfilerHost> host =
      HostWithMetrics(api, metrics.chip, availability, names, &result);
  if (!host.ok()) {
    if (result != CUPTI_ERROR_INVALID_METRIC_NAME &&
        result != CUPTI_ERROR_INVALID_PARAMETER) {
      return host.status();
    }
    // CUPTI refuses the whole list (with INVALID_PARAMETER for a name it
    // does not know); add the names one at a time to name the culprits.
    std::string unknown;
    for (const char* name : names) {
      CUptiResult one = CUPTI_SUCCESS;
      StatusOr<ProfilerHost> h =
          HostWithMetrics(api, metrics.chip, availability, {name}, &one);
      if (!h.ok() && one != CUPTI_SUCCESS) {
        unknown += (unknown.empty() ? "" : ", ") + std::string(name);
      }
    }
    if (unknown.empty()) return host.status();
    return InvalidArgument(
        "chip " + metrics.chip + ": unknown metric(s) " + unknown +
        ": check the names with `ncu --query-metrics --chip " + metrics.chip +
        "` and fix libinject/counters/metric_tables.cc");
  }
  MetricConfig out;
  out.metrics = metrics;
  RT_ASSIGN_OR_RETURN(out.config_image, ConfigImageOf(api, *host));
  RT_ASSIGN_OR_RETURN(out.passes, PassesOf(api, out.config_image));
  return out;
}

StatusOr<MetricConfig> BuildMetricConfig(
    const CuptiProfilerApi& api, std::string_view chip, CounterSet set,
    const std::vector<uint8_t>& availability) {
  if (FindChipFamily(chip) != nullptr) {
    RT_ASSIGN_OR_RETURN(MetricSet table, MetricSetForChip(chip, set));
    return BuildConfigForMetrics(api, table, availability);
  }
  RT_ASSIGN_OR_RETURN(ProfilerHost host,
                      ProfilerHost::Create(api, chip, availability));
  RT_ASSIGN_OR_RETURN(std::vector<std::string> base,
                      host.BaseMetrics(CUPTI_METRIC_TYPE_COUNTER));
  RT_ASSIGN_OR_RETURN(MetricSet candidates, DiscoverMetricSet(chip, set, base));

  // Greedy fit: DRAM and time are required (the first three candidates);
  // every further hardware counter is kept only while the set stays at one
  // pass, CUDA-core counters only while it stays at two.
  MetricSet kept = candidates;
  kept.metrics.assign(candidates.metrics.begin(),
                      candidates.metrics.begin() + 3);
  std::vector<std::string> left_out;
  if (PassesOrMinusOne(api, kept, availability) != 1) {
    return FailedPrecondition("chip " + std::string(chip) +
                              ": DRAM bytes and GPU time do not fit one pass; "
                              "counters mode is not available, use trace mode");
  }
  for (size_t i = 3; i < candidates.metrics.size(); ++i) {
    const MetricSpec& m = candidates.metrics[i];
    bool sass = m.name.rfind("smsp__sass_", 0) == 0;
    MetricSet trial = kept;
    trial.metrics.push_back(m);
    int passes = PassesOrMinusOne(api, trial, availability);
    if (passes > 0 && passes <= (sass ? 2 : 1)) {
      kept = std::move(trial);
    } else {
      left_out.push_back(m.name);
    }
  }
  RT_ASSIGN_OR_RETURN(MetricConfig config,
                      BuildConfigForMetrics(api, kept, availability));
  config.left_out = std::move(left_out);
  return config;
}

StatusOr<size_t> CounterDataRangeCount(const CuptiProfilerApi& api,
                                       const std::vector<uint8_t>& image) {
  if (image.empty()) {
    return Corrupt("counter-data image is empty: nothing was recorded");
  }
  auto p = RT_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  p.pCounterDataImage = image.data();
  p.counterDataImageSize = image.size();
  const inject::CuptiCall s =
      RT_CUPTI_CALL(api, RangeProfilerGetCounterDataInfo, &p);
  if (!s.ok()) {
    return Corrupt("counter-data image of " + std::to_string(image.size()) +
                   " bytes is not readable (" + s.status.message() +
                   "): it is damaged or was not written by the CUPTI Range "
                   "Profiler");
  }
  return p.numTotalRanges;
}

StatusOr<std::vector<double>> EvaluateRange(
    const CuptiProfilerApi& api, const ProfilerHost& host,
    const std::vector<uint8_t>& image, size_t range_index,
    const std::vector<const char*>& metric_names) {
  RT_ASSIGN_OR_RETURN(size_t ranges, CounterDataRangeCount(api, image));
  if (range_index >= ranges) {
    return InvalidArgument("range " + std::to_string(range_index) +
                           " is past the " + std::to_string(ranges) +
                           " range(s) of the counter-data image");
  }
  std::vector<double> values(metric_names.size(), 0.0);
  auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  p.pHostObject = host.object();
  p.pCounterDataImage = image.data();
  p.counterDataImageSize = image.size();
  p.rangeIndex = range_index;
  p.ppMetricNames = const_cast<const char**>(metric_names.data());
  p.numMetrics = metric_names.size();
  p.pMetricValues = values.data();
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api, ProfilerHostEvaluateToGpuValues, &p));
  return values;
}

}  // namespace rooftrace::counters
