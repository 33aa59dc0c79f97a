#include "libinject/counters/pm_sampler.h"

#include <algorithm>
#include <iterator>

#include "libinject/counters/failure_modes.h"

namespace rooftrace::counters {
namespace {

// Candidates per role, in PmRole order, best first (GB20x names its DRAM
// counters dram__bytes_op_*, as in metric_tables.cc).
const std::vector<std::vector<const char*>>& Candidates() {
  static const std::vector<std::vector<const char*>> c = {
      {"dram__bytes_read.sum", "dram__bytes_op_read.sum"},
      {"dram__bytes_write.sum", "dram__bytes_op_write.sum"},
      {"sm__inst_executed_pipe_tensor.sum",
       "sm__pipe_tensor_cycles_active.sum"},
      {"sm__inst_executed_pipe_fma.sum", "sm__pipe_fma_cycles_active.sum"},
      {"sm__cycles_active.sum"},
  };
  return c;
}

// Turing (TU1xx) and GA100 have no GPU_TIME_INTERVAL trigger
// (cupti_pmsampling.h, CUpti_PmSampling_TriggerMode).
bool HasTimeTrigger(const std::string& chip) {
  return chip.rfind("TU", 0) != 0 && chip != "GA100";
}

// Values of sample `index` (below the image's completed count; the Range
// Profiler's EvaluateRange counts ranges in a way PM images do not have).
StatusOr<std::vector<double>> EvaluateSample(
    const CuptiProfilerApi& api, const ProfilerHost& host,
    const std::vector<uint8_t>& image, size_t index,
    const std::vector<const char*>& names) {
  std::vector<double> values(names.size(), 0.0);
  auto p = RT_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  p.pHostObject = host.object();
  p.pCounterDataImage = image.data();
  p.counterDataImageSize = image.size();
  p.rangeIndex = index;
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  RT_RETURN_IF_ERROR(RT_CUPTI_CALL(api, ProfilerHostEvaluateToGpuValues, &p));
  return values;
}

}  // namespace

std::vector<const char*> PmMetricSet::Names() const {
  std::vector<const char*> out;
  for (const std::string& n : names) out.push_back(n.c_str());
  return out;
}

StatusOr<PmMetricSet> BuildPmMetricSet(const CuptiProfilerApi& api,
                                       const std::string& chip,
                                       const std::vector<uint8_t>& avail) {
  PmMetricSet set;
  for (int role = 0; role < kNumPmRoles; ++role) {
    bool taken = false;
    for (const char* candidate : Candidates()[role]) {
      std::vector<const char*> trial = set.Names();
      trial.push_back(candidate);
      StatusOr<PmSamplingConfig> c =
          BuildPmSamplingConfig(api, chip, trial, avail);
      if (!c.ok()) continue;
      set.names.emplace_back(candidate);
      set.roles.push_back(static_cast<PmRole>(role));
      set.config = std::move(c).value();
      taken = true;
      break;
    }
    if (!taken) {
      if (role <= static_cast<int>(PmRole::kDramWrite)) {
        return Unavailable("sampling mode: chip " + chip + " has no PM "
                           "sampling DRAM counter (" +
                           Candidates()[role][0] + "); use counters or "
                           "trace mode");
      }
      set.left_out.emplace_back(Candidates()[role][0]);
    }
  }
  return set;
}

StatusOr<std::unique_ptr<PmSampler>> PmSampler::Create(
    const CuptiProfilerApi& api, size_t device_index, std::string chip,
    const PmSamplingOptions& options,
    const std::vector<uint8_t>& availability) {
  if (!HasTimeTrigger(chip)) {
    return Unavailable("sampling mode: chip " + chip +
                       " has no time-based PM sampling trigger (GA10x or "
                       "newer needed); use counters or trace mode");
  }
  if (options.interval_ns == 0 || options.max_samples == 0 ||
      options.hardware_buffer_bytes == 0) {
    return InvalidArgument(
        "sampling mode: interval, samples per image and hardware buffer "
        "must be above 0");
  }
  RT_ASSIGN_OR_RETURN(PmMetricSet set,
                      BuildPmMetricSet(api, chip, availability));
  RT_ASSIGN_OR_RETURN(
      ProfilerHost host,
      CreatePmSamplingHost(api, chip, set.Names(), availability));
  std::unique_ptr<PmSampler> sampler(new PmSampler(
      api, device_index, std::move(chip), options, std::move(set),
      std::move(host)));
  for (const std::string& name : sampler->set_.left_out) {
    sampler->Warn(name, "sampling: " + name + " (and its fallbacks) does not "
                        "fit PM sampling's one pass on " + sampler->chip_ +
                        "; sampled without it");
  }
  return sampler;
}

PmSampler::~PmSampler() {
  if (started_ || object_ != nullptr) {
    std::vector<PmSampleValues> lost;
    (void)Stop(&lost);
  }
}

Status PmSampler::InitializeImage() {
  auto init =
      RT_CUPTI_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
  init.pPmSamplingObject = object_;
  init.counterDataSize = image_.size();
  init.pCounterData = image_.data();
  return CounterFailureStatus(
      RT_CUPTI_CALL(api_, PmSamplingCounterDataImageInitialize, &init));
}

Status PmSampler::Start() {
  auto enable = RT_CUPTI_PARAMS(CUpti_PmSampling_Enable_Params);
  enable.deviceIndex = device_;
  RT_RETURN_IF_ERROR(
      CounterFailureStatus(RT_CUPTI_CALL(api_, PmSamplingEnable, &enable)));
  object_ = enable.pPmSamplingObject;

  auto config = RT_CUPTI_PARAMS(CUpti_PmSampling_SetConfig_Params);
  config.pPmSamplingObject = object_;
  config.configSize = set_.config.config_image.size();
  config.pConfig = set_.config.config_image.data();
  config.hardwareBufferSize = options_.hardware_buffer_bytes;
  config.samplingInterval = options_.interval_ns;
  config.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  // The oldest records stay and an overflow is reported: a loss is counted,
  // never silent.
  config.hwBufferAppendMode =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  RT_RETURN_IF_ERROR(
      CounterFailureStatus(RT_CUPTI_CALL(api_, PmSamplingSetConfig, &config)));

  std::vector<const char*> names = set_.Names();
  auto size = RT_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
  size.pPmSamplingObject = object_;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxSamples = options_.max_samples;
  RT_RETURN_IF_ERROR(CounterFailureStatus(
      RT_CUPTI_CALL(api_, PmSamplingGetCounterDataSize, &size)));
  if (size.counterDataSize == 0) {
    return Unavailable("sampling mode: CUPTI sized the counter-data image "
                       "at 0 bytes; using trace mode");
  }
  image_.assign(size.counterDataSize, 0);
  RT_RETURN_IF_ERROR(InitializeImage());

  auto start = RT_CUPTI_PARAMS(CUpti_PmSampling_Start_Params);
  start.pPmSamplingObject = object_;
  RT_RETURN_IF_ERROR(
      CounterFailureStatus(RT_CUPTI_CALL(api_, PmSamplingStart, &start)));
  started_ = true;
  return OkStatus();
}

Status PmSampler::Drain(std::vector<PmSampleValues>* out) {
  auto info = RT_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
  info.pCounterDataImage = image_.data();
  info.counterDataImageSize = image_.size();
  RT_RETURN_IF_ERROR(CounterFailureStatus(
      RT_CUPTI_CALL(api_, PmSamplingGetCounterDataInfo, &info)));
  std::vector<const char*> names = set_.Names();
  for (size_t i = 0; i < info.numCompletedSamples; ++i) {
    auto sample =
        RT_CUPTI_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
    sample.pPmSamplingObject = object_;
    sample.pCounterDataImage = image_.data();
    sample.counterDataImageSize = image_.size();
    sample.sampleIndex = i;
    const inject::CuptiCall got =
        RT_CUPTI_CALL(api_, PmSamplingCounterDataGetSampleInfo, &sample);
    StatusOr<std::vector<double>> values =
        got.ok() ? EvaluateSample(api_, host_, image_, i, names)
                 : StatusOr<std::vector<double>>(got.status);
    if (!values.ok()) {
      ++stats_.samples_failed;
      Warn("failed", "sampling: a PM sample was not evaluated (" +
                         values.status().message() + "); counted and skipped");
      continue;
    }
    PmSampleValues v;
    v.start_ns = sample.startTimestamp;
    v.end_ns = sample.endTimestamp;
    for (size_t m = 0; m < set_.roles.size() && m < values->size(); ++m) {
      v.values[static_cast<int>(set_.roles[m])] = (*values)[m];
    }
    out->push_back(v);
    ++stats_.samples;
  }
  if (info.numPopulatedSamples > info.numCompletedSamples) {
    stats_.samples_incomplete +=
        info.numPopulatedSamples - info.numCompletedSamples;
    Warn("incomplete",
         "sampling: PM samples not completed when the counter-data image "
         "was re-initialized are lost (counted)");
  }
  return InitializeImage();
}

Status PmSampler::Collect(std::vector<PmSampleValues>* out) {
  if (object_ == nullptr) return FailedPrecondition("sampling not started");
  // Decode until the hardware buffer is empty; a full image is evaluated
  // and re-initialized in between.
  for (int round = 0; round < 1024; ++round) {
    auto decode = RT_CUPTI_PARAMS(CUpti_PmSampling_DecodeData_Params);
    decode.pPmSamplingObject = object_;
    decode.pCounterDataImage = image_.data();
    decode.counterDataImageSize = image_.size();
    RT_RETURN_IF_ERROR(CounterFailureStatus(
        RT_CUPTI_CALL(api_, PmSamplingDecodeData, &decode)));
    ++stats_.decodes;
    if (decode.overflow) {
      ++stats_.overflows;
      Warn("overflow",
           "sampling: the PM sampling hardware buffer overflowed between "
           "decodes; samples were lost (counted): raise the buffer or the "
           "interval");
    }
    RT_RETURN_IF_ERROR(Drain(out));
    if (decode.decodeStopReason !=
        CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) {
      break;
    }
  }
  return OkStatus();
}

Status PmSampler::Stop(std::vector<PmSampleValues>* out) {
  Status status;
  if (started_) {
    started_ = false;
    auto stop = RT_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params);
    stop.pPmSamplingObject = object_;
    status =
        CounterFailureStatus(RT_CUPTI_CALL(api_, PmSamplingStop, &stop));
    if (status.ok()) status = Collect(out);
  }
  if (object_ != nullptr) {
    auto disable = RT_CUPTI_PARAMS(CUpti_PmSampling_Disable_Params);
    disable.pPmSamplingObject = object_;
    object_ = nullptr;
    Status d =
        CounterFailureStatus(RT_CUPTI_CALL(api_, PmSamplingDisable, &disable));
    if (status.ok()) status = d;
  }
  return status;
}

void PmSampler::Warn(const std::string& key, std::string line) {
  if (std::find(warned_.begin(), warned_.end(), key) != warned_.end()) return;
  warned_.push_back(key);
  warnings_.push_back(std::move(line));
}

std::vector<std::string> PmSampler::TakeWarnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

}  // namespace rooftrace::counters
