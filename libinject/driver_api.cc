#include "libinject/driver_api.h"

#include <dlfcn.h>

#include <type_traits>

namespace rooftrace::inject {

DriverApi LoadDriverApi() {
  DriverApi api;
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (cuda == nullptr) return api;
  auto resolve = [cuda](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(cuda, name));
  };
  // The exported names of cuda.h's macros (cuCtxPushCurrent is
  // cuCtxPushCurrent_v2, ...).
  resolve(api.StreamIsCapturing, "cuStreamIsCapturing");
  resolve(api.CtxPushCurrent, "cuCtxPushCurrent_v2");
  resolve(api.CtxPopCurrent, "cuCtxPopCurrent_v2");
  resolve(api.CtxSynchronize, "cuCtxSynchronize");
  resolve(api.DeviceGet, "cuDeviceGet");
  resolve(api.DeviceGetAttribute, "cuDeviceGetAttribute");
  resolve(api.DriverGetVersion, "cuDriverGetVersion");
  // The handle is kept: the host loaded libcuda and never unloads it while
  // its CUDA work runs; our reference keeps the pointers valid after that.
  return api;
}

}  // namespace rooftrace::inject
