#include "libinject/counters/cupti_profiler_api.h"

#include <dlfcn.h>

#include <string>

namespace rooftrace::counters {

StatusOr<CuptiProfilerApi> ResolveCuptiProfilerApi(void* handle) {
  if (handle == nullptr) {
    return InvalidArgument("libcupti handle is null: open libcupti first");
  }
  CuptiProfilerApi api;
  std::string missing;
  // Each entry is named like its field with the "cupti" prefix, so one macro
  // resolves all of them and reports the first one the library lacks.
#define RT_RESOLVE_(field)                                           \
  do {                                                               \
    void* sym = dlsym(handle, "cupti" #field);                       \
    if (sym == nullptr && missing.empty()) missing = "cupti" #field; \
    api.field = reinterpret_cast<decltype(api.field)>(sym);          \
  } while (0)
  RT_RESOLVE_(GetResultString);
  RT_RESOLVE_(ProfilerInitialize);
  RT_RESOLVE_(ProfilerDeInitialize);
  RT_RESOLVE_(DeviceGetChipName);
  RT_RESOLVE_(ProfilerGetCounterAvailability);
  RT_RESOLVE_(ProfilerDeviceSupported);
  RT_RESOLVE_(ProfilerHostGetSupportedChips);
  RT_RESOLVE_(ProfilerHostInitialize);
  RT_RESOLVE_(ProfilerHostDeinitialize);
  RT_RESOLVE_(ProfilerHostGetBaseMetrics);
  RT_RESOLVE_(ProfilerHostGetSubMetrics);
  RT_RESOLVE_(ProfilerHostConfigAddMetrics);
  RT_RESOLVE_(ProfilerHostGetConfigImageSize);
  RT_RESOLVE_(ProfilerHostGetConfigImage);
  RT_RESOLVE_(ProfilerHostGetNumOfPasses);
  RT_RESOLVE_(ProfilerHostEvaluateToGpuValues);
  RT_RESOLVE_(RangeProfilerEnable);
  RT_RESOLVE_(RangeProfilerDisable);
  RT_RESOLVE_(RangeProfilerSetConfig);
  RT_RESOLVE_(RangeProfilerStart);
  RT_RESOLVE_(RangeProfilerStop);
  RT_RESOLVE_(RangeProfilerDecodeData);
  RT_RESOLVE_(RangeProfilerGetCounterDataSize);
  RT_RESOLVE_(RangeProfilerCounterDataImageInitialize);
  RT_RESOLVE_(RangeProfilerGetCounterDataInfo);
  RT_RESOLVE_(PmSamplingSetConfig);
  RT_RESOLVE_(PmSamplingEnable);
  RT_RESOLVE_(PmSamplingDisable);
  RT_RESOLVE_(PmSamplingStart);
  RT_RESOLVE_(PmSamplingStop);
  RT_RESOLVE_(PmSamplingDecodeData);
  RT_RESOLVE_(PmSamplingGetCounterAvailability);
  RT_RESOLVE_(PmSamplingGetCounterDataSize);
  RT_RESOLVE_(PmSamplingCounterDataImageInitialize);
  RT_RESOLVE_(PmSamplingGetCounterDataInfo);
  RT_RESOLVE_(PmSamplingCounterDataGetSampleInfo);
#undef RT_RESOLVE_
  if (!missing.empty()) {
    return FailedPrecondition(
        "libcupti has no " + missing +
        ": counters mode needs the CUDA 13 CUPTI (Range Profiler API); "
        "install CUDA 13 or use trace mode (ROOFTRACE_MODE=trace)");
  }
  return api;
}

StatusOr<CuptiProfilerApi> LoadCuptiProfilerApi(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Unavailable(std::string("cannot load ") + library + ": " +
                       (why ? why : "unknown error") +
                       ": put the CUDA 13 lib directory (with libcupti) on "
                       "LD_LIBRARY_PATH, or use trace mode");
  }
  return ResolveCuptiProfilerApi(handle);
}

}  // namespace rooftrace::counters
