// Wraps every CUDA runtime / cuBLAS / cuBLASLt call of kernels/gpu/ in one
// macro that turns a failure into a Status naming the call text and the
// library's error string ("cublasLtMatmul(...) failed:
// CUBLAS_STATUS_NOT_SUPPORTED"), so the calibration report says exactly
// which call failed. Header-only; thread-safe.
#ifndef ROOFTRACE_KERNELS_GPU_CHECK_H_
#define ROOFTRACE_KERNELS_GPU_CHECK_H_

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "base/status.h"

namespace rooftrace::kernels::gpu {

inline Status CudaStatus(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return OkStatus();
  return InternalError(std::string(call) + " failed: " +
                       cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                       ")");
}

inline Status CublasStatus(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return OkStatus();
  return InternalError(std::string(call) + " failed: " +
                       cublasGetStatusName(s));
}

}  // namespace rooftrace::kernels::gpu

#define RT_CUDA(call) \
  RT_RETURN_IF_ERROR(::rooftrace::kernels::gpu::CudaStatus((call), #call))
#define RT_CUBLAS(call) \
  RT_RETURN_IF_ERROR(::rooftrace::kernels::gpu::CublasStatus((call), #call))

#endif  // ROOFTRACE_KERNELS_GPU_CHECK_H_
