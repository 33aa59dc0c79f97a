// The GPU side of `rooftrace calibrate`: probes the device and runs a
// CalibrationPlan step by step (kernels/gpu/, CUDA builds only; the host
// code calls it only when ROOFTRACE_HAVE_CUDA is defined).
//
// Not thread-safe: one calibration per process at a time (it owns the GPU's
// memory while it runs). Every kernel runs inside an NVTX range naming
// itself, so a trace of calibration is self-describing.
#ifndef ROOFTRACE_KERNELS_GPU_RUNNER_H_
#define ROOFTRACE_KERNELS_GPU_RUNNER_H_

#include <functional>
#include <string>

#include "base/status.h"
#include "kernels/calibration_result.h"

namespace rooftrace::kernels {

struct GpuRunOptions {
  bool quick = false;
  int device = 0;                 // CUDA device ordinal
  std::string command;            // recorded in the result
  // One line per step ("[4/31] gemm bf16 8192x8192x8192: 712.4 TFLOP/s").
  std::function<void(const std::string&)> progress;
};

// kUnavailable with a clear message when there is no usable GPU (no driver,
// no device, or the ordinal does not exist). Step failures (a cuBLAS error,
// a precision the GPU lacks) do not fail the run: they are recorded in the
// result with status skipped/failed and a note naming the call.
StatusOr<CalibrationResult> RunCalibrationOnGpu(const GpuRunOptions& options);

// True when a CUDA GPU can be used; otherwise false and `why` says why.
bool GpuAvailable(std::string* why);

// One own-kernel check (own_sgemm_tiled or, with bf16, own_bf16_mma) at
// `shape` on the current device: timed, compared with cuBLAS. For tests and
// the runner.
StatusOr<OwnKernelRun> RunOwnGemmCheck(bool bf16, const GemmShape& shape,
                                       int repeats);

}  // namespace rooftrace::kernels

#endif  // ROOFTRACE_KERNELS_GPU_RUNNER_H_
