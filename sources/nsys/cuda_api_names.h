// Which CUDA API calls of an Nsight Systems export are launches: nsys names
// each CUPTI_ACTIVITY_KIND_RUNTIME row by its CUPTI callback name
// ("cudaLaunchKernel_v7000", "cuLaunchKernelEx_ptsz",
// "__cudaLaunchKernel_v13000") or, in its backtrace rows, by the plain API
// name ("cudaLaunchKernel"). The launch names are exactly those of
// cupti_runtime_cbid.h and cupti_driver_cbid.h (tests check the lists
// against the headers when the CUDA Toolkit is installed). HIP's launches,
// copies and memsets are classified too: a PyTorch profiler trace recorded
// on ROCm names its runtime events so (hipLaunchKernel,
// hipExtModuleLaunchKernel, hipMemcpyAsync).
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_SOURCES_NSYS_CUDA_API_NAMES_H_
#define ROOFTRACE_SOURCES_NSYS_CUDA_API_NAMES_H_

#include <cstdint>
#include <string_view>

namespace rooftrace::nsys {

// The API name without its callback-id decorations: trailing "_v<N>"
// (version), "_ptsz" and "_ptds" (per-thread default stream; HIP's "_spt")
// in any order.
// "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync";
// "cuMemcpyHtoD_v2_ptds" -> "cuMemcpyHtoD".
std::string_view CudaApiBaseName(std::string_view name);

// The wire::enums::ApiKind of a runtime or driver API call by its name:
// kApiKernelLaunch, kApiGraphLaunch, kApiMemcpy, kApiMemset, or
// kApiUnknown for every other call (cudaMalloc, cudaLaunchHostFunc, ...),
// which rooftrace does not keep.
int32_t ClassifyCudaApi(std::string_view name);

}  // namespace rooftrace::nsys

#endif  // ROOFTRACE_SOURCES_NSYS_CUDA_API_NAMES_H_
