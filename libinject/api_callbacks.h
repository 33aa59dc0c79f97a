// Which CUPTI runtime / driver API callbacks libinject enables, by callback
// id, and what each one is to it: a kernel launch, a graph launch, a copy,
// a memset, or cu(da)ProfilerStart / Stop (ROOFTRACE_CAPTURE=profiler-api).
//
// By id, not by name: nvcc 13's <<<>>> launch stubs call __cudaLaunchKernel
// (crt/host_runtime.h), which CUPTI reports as runtime cbids 505/506
// ("__cudaLaunchKernel_v13000", "..._ptsz_v13000"); a rule on the name's
// prefix ("cuda"/"cu") missed every such launch. The table lists CUDA 13's
// ids by their enumerator names (cupti_runtime_cbid.h,
// cupti_driver_cbid.h), so a CUPTI that drops one fails the build, and
// api_callbacks_test holds it to every callback name the installed CUPTI
// reports, so one that adds a launch fails the tests.
//
// Pure functions over constant tables; thread-safe.
#ifndef ROOFTRACE_LIBINJECT_API_CALLBACKS_H_
#define ROOFTRACE_LIBINJECT_API_CALLBACKS_H_

#include <cuda.h>
#include <cupti_callbacks.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "proto/field_numbers.h"

namespace rooftrace::inject {

enum class ApiCallbackKind : uint8_t {
  kNotTraced = 0,
  kKernelLaunch,
  kGraphLaunch,
  kMemcpy,
  kMemset,
  kProfilerStart,
  kProfilerStop,
  // Counters mode only (CaptureCallbacks): a stream capture begins / ends.
  kCaptureBegin,
  kCaptureEnd,
};

struct TracedCallback {
  uint32_t cbid;
  ApiCallbackKind kind;
};

// The callbacks of every API that enqueues GPU work in `domain` (runtime or
// driver API): kernel and graph launches, copies, memsets. Trace mode
// enables them in both domains: the runtime's carry the correlation id a
// kernel record has (the driver call a runtime call makes inside is
// skipped, one Launch per launch), the driver's see the launches of hosts
// that call the driver directly (Triton, XLA).
std::span<const TracedCallback> TracedCallbacks(CUpti_CallbackDomain domain);

// cu(da)ProfilerStart / Stop in `domain`: enabled with
// ROOFTRACE_CAPTURE=profiler-api (they open and close the range recorded)
// or ROOFTRACE_CALLBACKS=full; they join nothing otherwise.
std::span<const TracedCallback> ProfilerCallbacks(CUpti_CallbackDomain domain);

// cu(da)StreamBeginCapture* and cu(da)StreamEndCapture* in `domain`:
// counters mode follows stream capture with them.
std::span<const TracedCallback> CaptureCallbacks(CUpti_CallbackDomain domain);

// The kind of one callback id (kNotTraced for the others).
ApiCallbackKind ApiCallbackKindOf(CUpti_CallbackDomain domain, uint32_t cbid);

// The stream a kernel launch enqueues on, read from the callback's
// functionParams for the launch APIs whose parameter struct CUDA 13 publishes
// (generated_cuda_runtime_api_meta.h, generated_cuda_meta.h): the
// cudaLaunchKernel, cudaLaunchCooperativeKernel, cudaLaunchKernelExC and
// cuLaunchKernel(Ex), cuLaunchCooperativeKernel, cuLaunchGridAsync
// families. A null stream of a per-thread-default-stream (_ptsz) entry is
// CU_STREAM_PER_THREAD. False for the others, __cudaLaunchKernel included
// (CUPTI publishes no parameter struct for it).
bool LaunchStream(CUpti_CallbackDomain domain, uint32_t cbid,
                  const void* params, CUstream* stream);

// Grid, block and dynamic shared memory of a kernel launch, read from the
// same parameter structs as LaunchStream (cudaLaunchKernel and
// cudaLaunchCooperativeKernel: gridDim, blockDim, sharedMem;
// cudaLaunchKernelExC: its cudaLaunchConfig_t; cuLaunchKernel and
// cuLaunchCooperativeKernel: gridDimX..blockDimZ, sharedMemBytes;
// cuLaunchKernelEx: its CUlaunchConfig). nvcc 13's <<<>>> entry points
// (__cudaLaunchKernel, __cudaLaunchKernel_ptsz: cbids 505, 506) have no
// published struct; theirs is written from the function's declaration
// (cudaLaunchKernel's layout) and kept only when its figures are a possible
// launch's. CUDA 13.0's libcudart reports a <<<>>> launch as
// cudaLaunchKernel (211, 214) anyway: its __cudaLaunchKernel jumps there.
// False for cuLaunchGrid* and a null `params`.
struct LaunchGeometry {
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t dynamic_shared_memory_bytes = 0;
};
bool LaunchGeometryOf(CUpti_CallbackDomain domain, uint32_t cbid,
                      const void* params, LaunchGeometry* out);

// The Launch record's kind (wire::enums::ApiKind) of a traced callback;
// kApiUnknown for the profiler start / stop calls, which make no Launch.
// Inline: every Launch record takes it.
inline uint32_t WireApiKind(ApiCallbackKind kind) {
  switch (kind) {
    case ApiCallbackKind::kKernelLaunch:
      return wire::enums::kApiKernelLaunch;
    case ApiCallbackKind::kGraphLaunch:
      return wire::enums::kApiGraphLaunch;
    case ApiCallbackKind::kMemcpy:
      return wire::enums::kApiMemcpy;
    case ApiCallbackKind::kMemset:
      return wire::enums::kApiMemset;
    default:
      return wire::enums::kApiUnknown;
  }
}

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_API_CALLBACKS_H_
