#include "libinject/cupti_api.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

namespace rooftrace::inject {

namespace {

// ROOFTRACE_CUPTI_PATH: the libcupti to load (a file, or a directory that
// holds libcupti.so.13). Null handle and the reason when it does not load.
void* OpenCuptiFromPath(const char* path, std::string* error) {
  std::string file = path;
  struct stat st {};
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) file += "/libcupti.so.13";
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = std::string("ROOFTRACE_CUPTI_PATH=") + path + ": " +
             (why != nullptr ? why : "cannot be loaded") +
             ": kernels and copies are not recorded (NVTX and cuBLAS shapes "
             "still are); point it at CUDA 13's libcupti.so.13 or its "
             "directory";
  }
  return handle;
}

}  // namespace

StatusOr<CuptiApi> LoadCuptiApi() {
  void* handle = nullptr;
  if (const char* path = getenv("ROOFTRACE_CUPTI_PATH");
      path != nullptr && path[0] != '\0') {
    // Named by the user (scripts/gpu-check.sh does): that one or none, so
    // CUPTI reaches libinject without LD_LIBRARY_PATH, which the profiled
    // program would inherit.
    std::string error;
    handle = OpenCuptiFromPath(path, &error);
    if (handle == nullptr) return Unavailable(error);
  }
  // Else the library path, then the CUPTI directory of the build machine
  // (a last resort: it may not exist where the library runs).
  const char* candidates[] = {
      "libcupti.so.13",
      "libcupti.so",
#ifdef ROOFTRACE_CUPTI_LIBRARY_DIR
      ROOFTRACE_CUPTI_LIBRARY_DIR "/libcupti.so.13",
      ROOFTRACE_CUPTI_LIBRARY_DIR "/libcupti.so",
#endif
  };
  for (const char* name : candidates) {
    if (handle != nullptr) break;
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    return Unavailable(
        "libcupti.so.13 could not be loaded: kernels and copies are not "
        "recorded (NVTX and cuBLAS shapes still are); set "
        "ROOFTRACE_CUPTI_PATH to CUDA 13's libcupti.so.13 (or add its "
        "directory to LD_LIBRARY_PATH)");
  }
  return ResolveCuptiApi(handle);
}

StatusOr<CuptiApi> ResolveCuptiApi(void* handle) {
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
  resolve(api.GetContextId, "cuptiGetContextId", false);
  resolve(api.GetStreamIdEx, "cuptiGetStreamIdEx", false);
  if (missing) {
    dlclose(handle);
    return Unavailable("libcupti has no symbol " + missing_name +
                       ": it is older than CUDA 13; point LD_LIBRARY_PATH at "
                       "the CUPTI of CUDA 13 or newer");
  }
  return api;
}

}  // namespace rooftrace::inject
