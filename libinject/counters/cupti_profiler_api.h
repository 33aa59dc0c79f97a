// The CUPTI Profiler Host / Range Profiler entry points counters mode uses,
// as a table of function pointers resolved at run time.
//
// Why a table: libinject must stay loadable in a process with no CUDA at all,
// so nothing in it may carry a link-time dependency on libcupti. The table is
// filled by dlsym() from a handle the caller already holds (libinject opens
// libcupti once for the activity API and passes its handle here), or from a
// handle this file opens itself. Tests fill it with fakes to drive the range
// profiler logic without a GPU.
//
// Calls go through RT_CUPTI_CALL (libinject/cupti_call.h). The table is
// immutable once loaded; thread-safe to share.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_CUPTI_PROFILER_API_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_CUPTI_PROFILER_API_H_

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "libinject/cupti_call.h"

namespace rooftrace::counters {

struct CuptiProfilerApi {
  // Common.
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*ProfilerInitialize)(CUpti_Profiler_Initialize_Params*) =
      nullptr;
  CUptiResult (*ProfilerDeInitialize)(CUpti_Profiler_DeInitialize_Params*) =
      nullptr;
  CUptiResult (*DeviceGetChipName)(CUpti_Device_GetChipName_Params*) = nullptr;
  CUptiResult (*ProfilerGetCounterAvailability)(
      CUpti_Profiler_GetCounterAvailability_Params*) = nullptr;
  CUptiResult (*ProfilerDeviceSupported)(
      CUpti_Profiler_DeviceSupported_Params*) = nullptr;

  // Profiler Host API (works without a GPU or driver).
  CUptiResult (*ProfilerHostGetSupportedChips)(
      CUpti_Profiler_Host_GetSupportedChips_Params*) = nullptr;
  CUptiResult (*ProfilerHostInitialize)(
      CUpti_Profiler_Host_Initialize_Params*) = nullptr;
  CUptiResult (*ProfilerHostDeinitialize)(
      CUpti_Profiler_Host_Deinitialize_Params*) = nullptr;
  CUptiResult (*ProfilerHostGetBaseMetrics)(
      CUpti_Profiler_Host_GetBaseMetrics_Params*) = nullptr;
  CUptiResult (*ProfilerHostGetSubMetrics)(
      CUpti_Profiler_Host_GetSubMetrics_Params*) = nullptr;
  CUptiResult (*ProfilerHostConfigAddMetrics)(
      CUpti_Profiler_Host_ConfigAddMetrics_Params*) = nullptr;
  CUptiResult (*ProfilerHostGetConfigImageSize)(
      CUpti_Profiler_Host_GetConfigImageSize_Params*) = nullptr;
  CUptiResult (*ProfilerHostGetConfigImage)(
      CUpti_Profiler_Host_GetConfigImage_Params*) = nullptr;
  CUptiResult (*ProfilerHostGetNumOfPasses)(
      CUpti_Profiler_Host_GetNumOfPasses_Params*) = nullptr;
  CUptiResult (*ProfilerHostEvaluateToGpuValues)(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params*) = nullptr;

  // Range Profiler (needs a GPU).
  CUptiResult (*RangeProfilerEnable)(CUpti_RangeProfiler_Enable_Params*) =
      nullptr;
  CUptiResult (*RangeProfilerDisable)(CUpti_RangeProfiler_Disable_Params*) =
      nullptr;
  CUptiResult (*RangeProfilerSetConfig)(CUpti_RangeProfiler_SetConfig_Params*) =
      nullptr;
  CUptiResult (*RangeProfilerStart)(CUpti_RangeProfiler_Start_Params*) =
      nullptr;
  CUptiResult (*RangeProfilerStop)(CUpti_RangeProfiler_Stop_Params*) = nullptr;
  CUptiResult (*RangeProfilerDecodeData)(
      CUpti_RangeProfiler_DecodeData_Params*) = nullptr;
  CUptiResult (*RangeProfilerGetCounterDataSize)(
      CUpti_RangeProfiler_GetCounterDataSize_Params*) = nullptr;
  CUptiResult (*RangeProfilerCounterDataImageInitialize)(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params*) = nullptr;
  CUptiResult (*RangeProfilerGetCounterDataInfo)(
      CUpti_RangeProfiler_GetCounterDataInfo_Params*) = nullptr;

  // PM sampling (needs a GPU; sampling mode, pm_sampler.h).
  CUptiResult (*PmSamplingSetConfig)(CUpti_PmSampling_SetConfig_Params*) =
      nullptr;
  CUptiResult (*PmSamplingEnable)(CUpti_PmSampling_Enable_Params*) = nullptr;
  CUptiResult (*PmSamplingDisable)(CUpti_PmSampling_Disable_Params*) = nullptr;
  CUptiResult (*PmSamplingStart)(CUpti_PmSampling_Start_Params*) = nullptr;
  CUptiResult (*PmSamplingStop)(CUpti_PmSampling_Stop_Params*) = nullptr;
  CUptiResult (*PmSamplingDecodeData)(CUpti_PmSampling_DecodeData_Params*) =
      nullptr;
  CUptiResult (*PmSamplingGetCounterAvailability)(
      CUpti_PmSampling_GetCounterAvailability_Params*) = nullptr;
  CUptiResult (*PmSamplingGetCounterDataSize)(
      CUpti_PmSampling_GetCounterDataSize_Params*) = nullptr;
  CUptiResult (*PmSamplingCounterDataImageInitialize)(
      CUpti_PmSampling_CounterDataImage_Initialize_Params*) = nullptr;
  CUptiResult (*PmSamplingGetCounterDataInfo)(
      CUpti_PmSampling_GetCounterDataInfo_Params*) = nullptr;
  CUptiResult (*PmSamplingCounterDataGetSampleInfo)(
      CUpti_PmSampling_CounterData_GetSampleInfo_Params*) = nullptr;
};

// A zeroed CUPTI params struct with its structSize set (CUPTI checks the
// size to know which fields the caller has).
template <typename T>
T CuptiParams(size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

// `auto p = RT_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);`
#define RT_CUPTI_PARAMS(type) \
  ::rooftrace::counters::CuptiParams<type>(type##_STRUCT_SIZE)

// Resolves every entry of the table from `handle` (a dlopen() handle of
// libcupti). Fails, naming the first missing symbol, when the library is
// older than CUDA 13 (no Range Profiler API).
StatusOr<CuptiProfilerApi> ResolveCuptiProfilerApi(void* handle);

// Opens libcupti (the soname `library`, or a path) with RTLD_NOW|RTLD_LOCAL
// and resolves the table. The handle is deliberately never closed: CUPTI
// keeps hooks into the driver for the life of the process.
StatusOr<CuptiProfilerApi> LoadCuptiProfilerApi(
    const char* library = "libcupti.so.13");

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_CUPTI_PROFILER_API_H_
