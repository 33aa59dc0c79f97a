#include "libinject/sampling_mode.h"

#include <string_view>
#include <utility>

#include "libinject/counters/cupti_profiler_api.h"
#include "libinject/counters/failure_modes.h"
#include "libinject/counters/pm_sampler.h"
#include "libinject/cupti_call.h"
#include "libinject/log.h"

namespace rooftrace::inject {

namespace {

// The counters library words its failure lines for counters mode; the
// same causes stop sampling mode.
std::string SamplingLine(std::string line) {
  constexpr std::string_view kCounters = "counters mode";
  constexpr std::string_view kSampling = "sampling mode";
  if (line.compare(0, kSampling.size(), kSampling) == 0) return line;
  if (line.compare(0, kCounters.size(), kCounters) == 0) {
    line.replace(0, kCounters.size(), "sampling mode");
    return line;
  }
  return "sampling mode: " + line;
}

}  // namespace

StatusOr<std::unique_ptr<SamplingMode>> SamplingMode::Create(
    void* cupti_handle, const Config& config) {
  StatusOr<counters::CuptiProfilerApi> api =
      counters::ResolveCuptiProfilerApi(cupti_handle);
  if (!api.ok()) {
    return Unavailable("sampling mode: " + api.status().message() +
                       "; using trace mode");
  }
  return CreateWithApi(*api, config);
}

StatusOr<std::unique_ptr<SamplingMode>> SamplingMode::CreateWithApi(
    const counters::CuptiProfilerApi& api, const Config& config) {
  if (api.PmSamplingEnable == nullptr || api.PmSamplingStart == nullptr) {
    return Unavailable(
        "sampling mode: this libcupti has no PM sampling API (CUDA 12.6 or "
        "newer has it); using trace mode");
  }
  return std::unique_ptr<SamplingMode>(new SamplingMode(api, config));
}

SamplingMode::SamplingMode(const counters::CuptiProfilerApi& api,
                           const Config& config)
    : api_(std::make_unique<counters::CuptiProfilerApi>(api)),
      interval_ns_(config.sampling_interval_us * 1000) {}

SamplingMode::~SamplingMode() {
  std::vector<PmSampleInfo> lost;
  Collect(/*final=*/true, &lost);
}

StatusOr<std::string> SamplingMode::ChipNameLocked(uint32_t device_ordinal) {
  if (!profiler_initialized_) {
    auto init = RT_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    RT_RETURN_IF_ERROR(counters::CounterFailureStatus(
        RT_CUPTI_CALL(*api_, ProfilerInitialize, &init)));
    profiler_initialized_ = true;
  }
  auto support = RT_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  support.cuDevice = static_cast<CUdevice>(device_ordinal);
  support.api = CUPTI_PROFILER_PM_SAMPLING;
  RT_RETURN_IF_ERROR(counters::CounterFailureStatus(
      RT_CUPTI_CALL(*api_, ProfilerDeviceSupported, &support)));
  if (std::optional<counters::CounterFailureReport> r =
          counters::ClassifyDeviceSupport(support)) {
    return Unavailable(r->line);
  }
  auto chip = RT_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = device_ordinal;
  const CuptiCall named = RT_CUPTI_CALL(*api_, DeviceGetChipName, &chip);
  RT_RETURN_IF_ERROR(counters::CounterFailureStatus(named));
  if (chip.pChipName == nullptr) {
    return Unavailable("sampling mode: CUPTI named no chip for device " +
                       std::to_string(device_ordinal) + "; using trace mode");
  }
  return std::string(chip.pChipName);
}

void SamplingMode::OnContextCreated(CUcontext /*ctx*/, uint32_t device_ordinal,
                                    const ClockOffset& clock) {
  if (failed()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Device& d : devices_) {
    if (d.ordinal == device_ordinal) return;  // sampled since its first one
  }
  StatusOr<std::string> chip = ChipNameLocked(device_ordinal);
  if (!chip.ok()) {
    FailLocked(SamplingLine(chip.status().message()));
    return;
  }
  counters::PmSamplingOptions options;
  options.interval_ns = interval_ns_;
  StatusOr<std::unique_ptr<counters::PmSampler>> sampler =
      counters::PmSampler::Create(*api_, device_ordinal, *chip, options);
  if (!sampler.ok()) {
    FailLocked(SamplingLine(sampler.status().message()));
    return;
  }
  if (Status s = (*sampler)->Start(); !s.ok()) {
    FailLocked(SamplingLine(s.message()));
    return;  // the sampler's destructor disables what Start enabled
  }
  for (std::string& line : (*sampler)->TakeWarnings()) {
    warnings_.push_back(std::move(line));
  }
  Device d;
  d.ordinal = device_ordinal;
  d.clock = clock;
  d.sampler = std::move(*sampler);
  devices_.push_back(std::move(d));
  Say(LogLevel::kInfo, "sampling mode: PM sampling device %u (%s) every %llu ns",
      device_ordinal, chip->c_str(),
      static_cast<unsigned long long>(interval_ns_));
}

void SamplingMode::FailLocked(const std::string& line) {
  std::string said = line;
  if (said.find("using trace mode") == std::string::npos) {
    said += "; using trace mode";
  }
  warnings_.push_back(std::move(said));
  for (Device& d : devices_) {
    std::vector<counters::PmSampleValues> rest;
    (void)d.sampler->Stop(&rest);
    samples_ += d.sampler->stats().samples;
    lost_ += d.sampler->stats().samples_incomplete +
             d.sampler->stats().samples_failed;
  }
  devices_.clear();
  failed_.store(true, std::memory_order_release);
}

void SamplingMode::Collect(bool final, std::vector<PmSampleInfo>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<counters::PmSampleValues> values;
  for (size_t i = 0; i < devices_.size();) {
    Device& d = devices_[i];
    values.clear();
    const Status s =
        final ? d.sampler->Stop(&values) : d.sampler->Collect(&values);
    for (const counters::PmSampleValues& v : values) {
      PmSampleInfo info;
      info.device_id = d.ordinal;
      info.start_ns = CuptiToMonotonicNs(v.start_ns, d.clock);
      info.end_ns = CuptiToMonotonicNs(v.end_ns, d.clock);
      for (int r = 0; r < counters::kNumPmRoles; ++r) {
        info.values[r] = v.values[r];
      }
      out->push_back(info);
    }
    for (std::string& line : d.sampler->TakeWarnings()) {
      warnings_.push_back(std::move(line));
    }
    if (s.ok() && !final) {
      ++i;
      continue;
    }
    // Stopped (at exit), or failed: what it counted stays counted.
    if (!s.ok()) {
      (void)d.sampler->Stop(&values);
      warnings_.push_back(SamplingLine(s.message()) +
                          " (device " + std::to_string(d.ordinal) +
                          "; its sampling stopped)");
    }
    samples_ += d.sampler->stats().samples;
    lost_ += d.sampler->stats().samples_incomplete +
             d.sampler->stats().samples_failed;
    devices_.erase(devices_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

uint64_t SamplingMode::samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = samples_;
  for (const Device& d : devices_) n += d.sampler->stats().samples;
  return n;
}

uint64_t SamplingMode::samples_lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = lost_;
  for (const Device& d : devices_) {
    n += d.sampler->stats().samples_incomplete +
         d.sampler->stats().samples_failed;
  }
  return n;
}

std::vector<std::string> SamplingMode::TakeWarnings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

}  // namespace rooftrace::inject
