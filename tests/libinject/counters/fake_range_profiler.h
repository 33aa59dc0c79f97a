// Fake device-side CUPTI Range Profiler entries for tests without a GPU.
// They emulate a counter-data image:
//   bytes [0, 8): number of ranges stored
//   bytes [8 + 8*i, 16 + 8*i): ordinal of the kernel launch in range i
// and EvaluateToGpuValues returns ordinal * 1000 + metric index, so every
// figure a test checks is computable by hand. The Profiler Host entries stay
// the installed CUPTI's (real config images and pass counts).
//
// One global fake device (`g`): tests reset it in SetUp; not thread-safe.
#ifndef ROOFTRACE_TESTS_COUNTERS_FAKE_RANGE_PROFILER_H_
#define ROOFTRACE_TESTS_COUNTERS_FAKE_RANGE_PROFILER_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "libinject/counters/cupti_profiler_api.h"

namespace rooftrace::counters::fake {

struct FakeDevice {
  CUptiResult profiler_initialize = CUPTI_SUCCESS;
  CUptiResult enable = CUPTI_SUCCESS;
  CUptiResult start = CUPTI_SUCCESS;
  CUpti_Profiler_Support_Level confidential =
      CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  const char* chip = "GH100";
  size_t hw_capacity = 1 << 20;         // ranges the image really holds
  int lose_on_decode = -1;              // this decode (0-based) stores nothing
  bool no_kernel_at_next_stop = false;  // the launch made no range
  // Kernels of other launches on the context that ran inside the profiled
  // range (auto range is context-wide): stored after it at the next decode,
  // with ordinal kForeignOrdinal.
  int extra_ranges_at_next_decode = 0;
  // The replay mode of the last SetConfig, and (user replay) a Stop that
  // reports a pass not submitted: the set did not fit one pass.
  CUpti_ProfilerReplayMode replay_mode = CUPTI_Replay_INVALID;
  bool pass_incomplete_at_next_stop = false;
  int starts = 0, stops = 0, decodes = 0, set_configs = 0, image_inits = 0;
  int enables = 0, disables = 0, profiler_initializes = 0;
  uint64_t ordinal = 0;          // launches that ran under the profiler
  uint64_t pending_ordinal = 0;  // the launch awaiting decode
  bool pending = false;
};
inline FakeDevice g;
inline constexpr uint64_t kForeignOrdinal = 999;
// Each enabled context gets its own fake profiler object (an index into
// these arrays) and its own counter-data image.
constexpr int kMaxObjects = 8;
inline int g_objects[kMaxObjects];
inline uint8_t* g_images[kMaxObjects];
inline size_t g_image_sizes[kMaxObjects];
inline int ObjectIndex(CUpti_RangeProfiler_Object* o) {
  return static_cast<int>(reinterpret_cast<int*>(o) - g_objects);
}

inline uint64_t Get(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void Put(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

inline CUptiResult FakeProfilerInitialize(CUpti_Profiler_Initialize_Params*) {
  ++g.profiler_initializes;
  return g.profiler_initialize;
}
inline CUptiResult FakeDeviceSupported(
    CUpti_Profiler_DeviceSupported_Params* p) {
  p->isSupported = g.confidential == CUPTI_PROFILER_CONFIGURATION_SUPPORTED
                       ? CUPTI_PROFILER_CONFIGURATION_SUPPORTED
                       : CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  p->architecture = p->sli = p->vGpu = p->cmp = p->wsl =
      CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->confidentialCompute = g.confidential;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeChipName(CUpti_Device_GetChipName_Params* p) {
  p->pChipName = g.chip;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeAvailability(
    CUpti_Profiler_GetCounterAvailability_Params* p) {
  p->counterAvailabilityImageSize = 0;  // "everything available"
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeEnable(CUpti_RangeProfiler_Enable_Params* p) {
  if (g.enable != CUPTI_SUCCESS) return g.enable;
  p->pRangeProfilerObject =
      reinterpret_cast<CUpti_RangeProfiler_Object*>(&g_objects[g.enables++]);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDisable(CUpti_RangeProfiler_Disable_Params*) {
  ++g.disables;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDataSize(
    CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  p->counterDataSize = 8 + 8 * p->maxNumOfRanges;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeImageInit(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  ++g.image_inits;
  std::memset(p->pCounterData, 0, p->counterDataSize);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  ++g.set_configs;
  EXPECT_EQ(p->range, CUPTI_AutoRange);
  EXPECT_TRUE(p->replayMode == CUPTI_KernelReplay ||
              p->replayMode == CUPTI_UserReplay);
  g.replay_mode = p->replayMode;
  EXPECT_EQ(p->numNestingLevels, 1);
  EXPECT_GT(p->configSize, 0u);
  g_images[ObjectIndex(p->pRangeProfilerObject)] = p->pCounterDataImage;
  g_image_sizes[ObjectIndex(p->pRangeProfilerObject)] = p->counterDataImageSize;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeStart(CUpti_RangeProfiler_Start_Params*) {
  if (g.start != CUPTI_SUCCESS) return g.start;
  ++g.starts;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeStop(CUpti_RangeProfiler_Stop_Params* p) {
  ++g.stops;
  p->isAllPassSubmitted = 1;
  if (g.pass_incomplete_at_next_stop && g.replay_mode == CUPTI_UserReplay) {
    // The kernel ran and made a (partial) range; one pass was not enough.
    g.pass_incomplete_at_next_stop = false;
    g.pending = true;
    g.pending_ordinal = g.ordinal++;
    p->isAllPassSubmitted = 0;
    return CUPTI_SUCCESS;
  }
  if (g.no_kernel_at_next_stop) {
    g.no_kernel_at_next_stop = false;
    return CUPTI_SUCCESS;
  }
  g.pending = true;
  g.pending_ordinal = g.ordinal++;
  p->isAllPassSubmitted = 1;
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDecode(CUpti_RangeProfiler_DecodeData_Params* p) {
  const int this_decode = g.decodes++;
  p->numOfRangeDropped = 0;
  if (!g.pending) return CUPTI_SUCCESS;
  g.pending = false;
  if (this_decode == g.lose_on_decode) return CUPTI_SUCCESS;
  uint8_t* image = g_images[ObjectIndex(p->pRangeProfilerObject)];
  const size_t slots =
      (g_image_sizes[ObjectIndex(p->pRangeProfilerObject)] - 8) / 8;
  const uint64_t count = Get(image);
  if (count >= g.hw_capacity || count >= slots) {
    p->numOfRangeDropped = 1;
    return CUPTI_SUCCESS;
  }
  Put(image + 8 + 8 * count, g.pending_ordinal);
  uint64_t stored = count + 1;
  for (; g.extra_ranges_at_next_decode > 0 && stored < slots;
       --g.extra_ranges_at_next_decode) {
    Put(image + 8 + 8 * stored++, kForeignOrdinal);
  }
  Put(image, stored);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeDataInfo(
    CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  p->numTotalRanges = Get(p->pCounterDataImage);
  return CUPTI_SUCCESS;
}
inline CUptiResult FakeEvaluate(
    CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  const uint64_t ordinal = Get(p->pCounterDataImage + 8 + 8 * p->rangeIndex);
  for (size_t m = 0; m < p->numMetrics; ++m) {
    p->pMetricValues[m] = static_cast<double>(ordinal * 1000 + m);
  }
  return CUPTI_SUCCESS;
}

// Replaces the device-side entries of `api` with the fakes above.
inline void InstallFakes(CuptiProfilerApi* api) {
  api->ProfilerInitialize = FakeProfilerInitialize;
  api->ProfilerDeviceSupported = FakeDeviceSupported;
  api->DeviceGetChipName = FakeChipName;
  api->ProfilerGetCounterAvailability = FakeAvailability;
  api->RangeProfilerEnable = FakeEnable;
  api->RangeProfilerDisable = FakeDisable;
  api->RangeProfilerGetCounterDataSize = FakeDataSize;
  api->RangeProfilerCounterDataImageInitialize = FakeImageInit;
  api->RangeProfilerSetConfig = FakeSetConfig;
  api->RangeProfilerStart = FakeStart;
  api->RangeProfilerStop = FakeStop;
  api->RangeProfilerDecodeData = FakeDecode;
  api->RangeProfilerGetCounterDataInfo = FakeDataInfo;
  api->ProfilerHostEvaluateToGpuValues = FakeEvaluate;
}

}  // namespace rooftrace::counters::fake

#endif  // ROOFTRACE_TESTS_COUNTERS_FAKE_RANGE_PROFILER_H_
