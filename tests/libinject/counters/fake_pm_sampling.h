// Fake device-side CUPTI PM sampling entries (cupti_pmsampling.h, CUDA 13
// structures) for tests without a GPU. The "hardware buffer" is a list of
// records the test pushes; DecodeData moves them into the counter-data
// image, laid out as
//   bytes [0, 8): samples populated, [8, 16): samples completed,
//   then 24 bytes per sample: start, end, seed
// and EvaluateToGpuValues returns seed * 1000 + metric index. The Profiler
// Host entries for configs stay the installed CUPTI's (real PM sampling
// config images and pass counts).
//
// One global fake (`pm`): tests reset it in SetUp; not thread-safe.
#ifndef ROOFTRACE_TESTS_COUNTERS_FAKE_PM_SAMPLING_H_
#define ROOFTRACE_TESTS_COUNTERS_FAKE_PM_SAMPLING_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>

#include "libinject/counters/cupti_profiler_api.h"

namespace rooftrace::counters::fake_pm {

struct Record {
  uint64_t start = 0, end = 0, seed = 0;
};

struct FakePmDevice {
  std::deque<Record> hardware;       // records not decoded yet
  bool overflow_at_next_decode = false;
  bool incomplete_at_next_decode = false;  // one populated, not completed
  CUptiResult enable = CUPTI_SUCCESS;      // what Enable answers
  // What the sampler asked for.
  size_t enabled_device = ~size_t{0};
  CUpti_PmSampling_TriggerMode trigger = CUPTI_PM_SAMPLING_TRIGGER_MODE_COUNT;
  CUpti_PmSampling_HardwareBuffer_AppendMode append =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
  uint64_t interval = 0;
  size_t hardware_buffer = 0, config_size = 0;
  uint32_t max_samples = 0;
  size_t metrics = 0;
  int enables = 0, disables = 0, starts = 0, stops = 0, decodes = 0;
  int image_inits = 0, set_configs = 0;
};
inline FakePmDevice pm;
inline int pm_object;  // the one fake PM sampling object

constexpr size_t kHeader = 16, kSampleBytes = 24;

inline uint64_t Get(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void Put(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

inline CUptiResult FakeEnable(CUpti_PmSampling_Enable_Params* p) {
  EXPECT_EQ(p->structSize, CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  ++pm.enables;
  if (pm.enable != CUPTI_SUCCESS) return pm.enable;
  pm.enabled_device = p->deviceIndex;
  p->pPmSamplingObject = reinterpret_cast<CUpti_PmSampling_Object*>(&pm_object);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDisable(CUpti_PmSampling_Disable_Params*) {
  ++pm.disables;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeSetConfig(CUpti_PmSampling_SetConfig_Params* p) {
  EXPECT_EQ(p->structSize, CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  ++pm.set_configs;
  pm.trigger = p->triggerMode;
  pm.append = p->hwBufferAppendMode;
  pm.interval = p->samplingInterval;
  pm.hardware_buffer = p->hardwareBufferSize;
  pm.config_size = p->configSize;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeStart(CUpti_PmSampling_Start_Params*) {
  ++pm.starts;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeStop(CUpti_PmSampling_Stop_Params*) {
  ++pm.stops;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  pm.max_samples = p->maxSamples;
  pm.metrics = p->numMetrics;
  p->counterDataSize = kHeader + kSampleBytes * p->maxSamples;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeImageInit(
    CUpti_PmSampling_CounterDataImage_Initialize_Params* p) {
  ++pm.image_inits;
  std::memset(p->pCounterData, 0, p->counterDataSize);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDecode(CUpti_PmSampling_DecodeData_Params* p) {
  EXPECT_EQ(p->structSize, CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
  ++pm.decodes;
  uint8_t* image = p->pCounterDataImage;
  const size_t capacity = (p->counterDataImageSize - kHeader) / kSampleBytes;
  uint64_t populated = Get(image);
  p->overflow = pm.overflow_at_next_decode ? 1 : 0;
  pm.overflow_at_next_decode = false;
  while (!pm.hardware.empty() && populated < capacity) {
    const Record r = pm.hardware.front();
    pm.hardware.pop_front();
    uint8_t* s = image + kHeader + kSampleBytes * populated++;
    Put(s, r.start);
    Put(s + 8, r.end);
    Put(s + 16, r.seed);
  }
  uint64_t completed = populated;
  if (pm.incomplete_at_next_decode && populated > 0) {
    pm.incomplete_at_next_decode = false;
    completed = populated - 1;
  }
  Put(image, populated);
  Put(image + 8, completed);
  p->decodeStopReason =
      pm.hardware.empty() ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS
                          : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  p->numTotalSamples = (p->counterDataImageSize - kHeader) / kSampleBytes;
  p->numPopulatedSamples = Get(p->pCounterDataImage);
  p->numCompletedSamples = Get(p->pCounterDataImage + 8);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeSampleInfo(
    CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
  if (p->sampleIndex >= Get(p->pCounterDataImage)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const uint8_t* s = p->pCounterDataImage + kHeader + kSampleBytes * p->sampleIndex;
  p->startTimestamp = Get(s);
  p->endTimestamp = Get(s + 8);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeEvaluate(
    CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  const uint64_t seed =
      Get(p->pCounterDataImage + kHeader + kSampleBytes * p->rangeIndex + 16);
  for (size_t m = 0; m < p->numMetrics; ++m) {
    p->pMetricValues[m] = static_cast<double>(seed * 1000 + m);
  }
  return CUPTI_SUCCESS;
}

// Replaces the device-side PM sampling entries and the evaluation;
// everything else stays the installed CUPTI's.
inline void InstallFakes(CuptiProfilerApi* api) {
  api->PmSamplingEnable = FakeEnable;
  api->PmSamplingDisable = FakeDisable;
  api->PmSamplingSetConfig = FakeSetConfig;
  api->PmSamplingStart = FakeStart;
  api->PmSamplingStop = FakeStop;
  api->PmSamplingGetCounterDataSize = FakeDataSize;
  api->PmSamplingCounterDataImageInitialize = FakeImageInit;
  api->PmSamplingDecodeData = FakeDecode;
  api->PmSamplingGetCounterDataInfo = FakeDataInfo;
  api->PmSamplingCounterDataGetSampleInfo = FakeSampleInfo;
  api->ProfilerHostEvaluateToGpuValues = FakeEvaluate;
}

}  // namespace rooftrace::counters::fake_pm

#endif  // ROOFTRACE_TESTS_COUNTERS_FAKE_PM_SAMPLING_H_
