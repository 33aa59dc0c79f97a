// The CUDA driver entry points libinject calls itself, as a table of
// function pointers found in the libcuda the host already loaded (never
// loaded by us: RTLD_NOLOAD), so libinject keeps no link-time dependency on
// the driver and tests can fill the table with fakes.
//
// What for: the capture status of a launch's stream (counters mode must
// not profile a launch being captured into a graph), the device attributes
// CUPTI's device record lacks, and synchronizing the contexts at exit
// before CUPTI's forced flush (cuptiActivityFlushAll issues no CUDA
// synchronization itself).
//
// Immutable once loaded; thread-safe to share. An entry is null when the
// driver is not loaded or lacks it: callers treat that as "cannot tell".
#ifndef ROOFTRACE_LIBINJECT_DRIVER_API_H_
#define ROOFTRACE_LIBINJECT_DRIVER_API_H_

#include <cuda.h>

namespace rooftrace::inject {

struct DriverApi {
  CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*CtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*CtxPopCurrent)(CUcontext*) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
};

// The entry points of the libcuda.so.1 loaded in this process; every entry
// null when none is.
DriverApi LoadDriverApi();

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_DRIVER_API_H_
