#include "libinject/cupti_api.h"

#include <dlfcn.h>

namespace rooftrace::inject {

StatusOr<CuptiApi> LoadCuptiApi() {
  const char* candidates[] = {
      "libcupti.so.13", "libcupti.so",
#ifdef ROOFTRACE_CUPTI_LIBRARY_DIR
      ROOFTRACE_CUPTI_LIBRARY_DIR "/libcupti.so.13",
      ROOFTRACE_CUPTI_LIBRARY_DIR "/libcupti.so",
#endif
  };
  void* handle = nullptr;
  for (const char* name : candidates) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
  }
  if (handle == nullptr) {
    return Unavailable(
        "libcupti.so.13 could not be loaded: kernels and copies are not "
        "recorded (NVTX and cuBLAS shapes still are); add the CUDA "
        "toolkit's CUPTI directory to LD_LIBRARY_PATH");
  }
  CuptiApi api;
  api.handle = handle;
  bool missing = false;
  std::string missing_name;
  auto resolve = [&](auto& fn, const char* name, bool required) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, name));
    if (fn == nullptr && required && !missing) {
      missing = true;
      missing_name = name;
    }
  };
  resolve(api.GetResultString, "cuptiGetResultString", true);
  resolve(api.GetVersion, "cuptiGetVersion", true);
  resolve(api.Subscribe, "cuptiSubscribe", true);
  resolve(api.SubscribeV2, "cuptiSubscribe_v2", false);
  resolve(api.Unsubscribe, "cuptiUnsubscribe", true);
  resolve(api.EnableCallback, "cuptiEnableCallback", true);
  resolve(api.EnableDomain, "cuptiEnableDomain", true);
  resolve(api.GetCallbackName, "cuptiGetCallbackName", false);
  resolve(api.ActivityEnable, "cuptiActivityEnable", true);
  resolve(api.ActivityDisable, "cuptiActivityDisable", true);
  resolve(api.ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", true);
  resolve(api.ActivityRegisterTimestampCallback,
          "cuptiActivityRegisterTimestampCallback", false);
  resolve(api.ActivityFlushAll, "cuptiActivityFlushAll", true);
  resolve(api.ActivityGetNextRecord, "cuptiActivityGetNextRecord", true);
  resolve(api.ActivityGetNumDroppedRecords,
          "cuptiActivityGetNumDroppedRecords", false);
  resolve(api.GetTimestamp, "cuptiGetTimestamp", true);
  resolve(api.Finalize, "cuptiFinalize", false);
  resolve(api.GetDeviceId, "cuptiGetDeviceId", false);
  if (missing) {
    dlclose(handle);
    return Unavailable("libcupti has no symbol " + missing_name +
                       ": it is older than CUDA 13; point LD_LIBRARY_PATH at "
                       "the CUPTI of CUDA 13 or newer");
  }
  return api;
}

}  // namespace rooftrace::inject
