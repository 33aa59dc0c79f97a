#include "libinject/counters/failure_modes.h"

namespace rooftrace::counters {
namespace {

constexpr std::string_view kFallback = "; using trace mode";

CounterFailureReport Report(CounterFailure kind, std::string_view call,
                            std::string_view why) {
  std::string line = "counters mode off";
  if (!call.empty()) line += " (" + std::string(call) + ")";
  line += ": ";
  line += why;
  line += kFallback;
  return CounterFailureReport{kind, std::move(line)};
}

}  // namespace

Status CounterFailureStatus(const inject::CuptiCall& call) {
  if (call.ok()) return OkStatus();
  return Unavailable(ClassifyCuptiFailure(call.result, call.function).line);
}

std::string_view CounterFailureName(CounterFailure f) {
  switch (f) {
    case CounterFailure::kInsufficientPrivileges:
      return "insufficient-privileges";
    case CounterFailure::kHardwareBusy:
      return "hardware-busy";
    case CounterFailure::kMigUnsupported:
      return "mig-unsupported";
    case CounterFailure::kConfidentialCompute:
      return "confidential-compute";
    case CounterFailure::kVirtualGpu:
      return "virtual-gpu";
    case CounterFailure::kUnsupportedDevice:
      return "unsupported-device";
    case CounterFailure::kOtherCuptiClient:
      return "other-cupti-client";
    case CounterFailure::kNoDevice:
      return "no-device";
    case CounterFailure::kOutOfMemory:
      return "out-of-memory";
    case CounterFailure::kNotSupported:
      return "not-supported";
    case CounterFailure::kOther:
      return "other";
  }
  return "other";
}

CounterFailureReport ClassifyCuptiFailure(CUptiResult result,
                                          std::string_view call) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return Report(
          CounterFailure::kInsufficientPrivileges, call,
          "the driver allows GPU performance counters to administrators "
          "only; run with CAP_SYS_ADMIN (root, or `--cap-add SYS_ADMIN` for "
          "a container) or let every user profile: `options nvidia "
          "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/, then "
          "reload the nvidia module or reboot");
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return Report(CounterFailure::kVirtualGpu, call,
                    "profiling is not enabled for this vGPU; ask the host "
                    "administrator to enable it for the VM (vGPU "
                    "enable_profiling)");
    case CUPTI_ERROR_HARDWARE_BUSY:
      return Report(
          CounterFailure::kHardwareBusy, call,
          "the GPU performance counters are in use by another profiler "
          "(Nsight Compute or Systems, another rooftrace) or by DCGM "
          "profiling metrics; stop it (DCGM: `dcgmi profile --pause`) and "
          "run again");
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return Report(CounterFailure::kMigUnsupported, call,
                    "range profiling is not supported on this MIG instance; "
                    "run on a GPU with MIG disabled");
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return Report(CounterFailure::kConfidentialCompute, call,
                    "GPU counters are unavailable while confidential "
                    "computing is on");
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return Report(CounterFailure::kVirtualGpu, call,
                    "this virtualized GPU does not support range profiling");
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return Report(CounterFailure::kUnsupportedDevice, call,
                    "this GPU or platform (CMP, SLI, WSL, or an architecture "
                    "older than Volta or newer than this CUPTI) does not "
                    "support range profiling");
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return Report(CounterFailure::kOtherCuptiClient, call,
                    "another CUPTI profiling client is active in this "
                    "process (e.g. a framework profiler); disable it for "
                    "counters mode");
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_INVALID_CONTEXT:
      return Report(CounterFailure::kNoDevice, call,
                    "no usable CUDA device or context (driver missing or "
                    "context destroyed)");
    case CUPTI_ERROR_OUT_OF_MEMORY:
      return Report(CounterFailure::kOutOfMemory, call,
                    "CUPTI ran out of memory for the counter-data image; "
                    "lower ROOFTRACE_MAX_KERNELS or free GPU memory");
    case CUPTI_ERROR_NOT_SUPPORTED:
      return Report(CounterFailure::kNotSupported, call,
                    "range profiling is not supported in this configuration "
                    "(an MPS client, a vGPU, or an unsupported device); run "
                    "outside MPS on a bare-metal GPU");
    default: {
      std::string why = "CUPTI returned error " +
                        std::to_string(static_cast<int>(result)) +
                        "; run with ROOFTRACE_LOG=debug and report it";
      return Report(CounterFailure::kOther, call, why);
    }
  }
}

std::optional<CounterFailureReport> ClassifyDeviceSupport(
    const CUpti_Profiler_DeviceSupported_Params& s) {
  constexpr std::string_view kCall = "cuptiProfilerDeviceSupported";
  auto unsupported = [](CUpti_Profiler_Support_Level l) {
    return l == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED ||
           l == CUPTI_PROFILER_CONFIGURATION_DISABLED;
  };
  if (unsupported(s.confidentialCompute)) {
    return ClassifyCuptiFailure(
        CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED, kCall);
  }
  if (s.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) {
    return ClassifyCuptiFailure(
        CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES, kCall);
  }
  if (unsupported(s.vGpu)) {
    return ClassifyCuptiFailure(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED,
                                kCall);
  }
  if (unsupported(s.architecture) || unsupported(s.cmp) || unsupported(s.sli) ||
      unsupported(s.wsl)) {
    return ClassifyCuptiFailure(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED, kCall);
  }
  if (unsupported(s.isSupported)) {
    return ClassifyCuptiFailure(CUPTI_ERROR_NOT_SUPPORTED, kCall);
  }
  return std::nullopt;
}

std::string_view CudaGraphNote() {
  return "counters mode measures kernels launched directly on a stream; "
         "kernel nodes of CUDA graphs (cudaGraphLaunch) and launches made "
         "during stream capture are not counted: they keep their trace-mode "
         "timing and, for cuBLAS calls, analytic FLOPs";
}

}  // namespace rooftrace::counters
