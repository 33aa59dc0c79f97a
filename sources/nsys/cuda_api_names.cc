#include "sources/nsys/cuda_api_names.h"

#include <array>

#include "proto/field_numbers.h"

namespace rooftrace::nsys {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "_v" followed by digits only.
bool EndsWithVersion(std::string_view s, size_t* suffix_len) {
  size_t i = s.size();
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
  if (i == s.size() || i < 2 || s[i - 1] != 'v' || s[i - 2] != '_') {
    return false;
  }
  *suffix_len = s.size() - (i - 2);
  return true;
}

// Kernel launches: the base names of every "Launch" callback of
// cupti_runtime_cbid.h and cupti_driver_cbid.h that starts a kernel (not
// cudaLaunchHostFunc / cuLaunchHostFunc, a host callback; not the graph
// launches below).
constexpr std::array<std::string_view, 13> kKernelLaunches = {
    "cudaLaunch",
    "cudaLaunchKernel",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice",
    "cudaLaunchKernelExC",
    "__cudaLaunchKernel",
    "cuLaunch",
    "cuLaunchGrid",
    "cuLaunchGridAsync",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuLaunchCooperativeKernel",
    "cuLaunchCooperativeKernelMultiDevice",
};

constexpr std::array<std::string_view, 2> kGraphLaunches = {
    "cudaGraphLaunch",
    "cuGraphLaunch",
};

// HIP's kernel launches (hip_runtime_api.h, hip_ext.h), as a PyTorch
// profiler trace recorded on ROCm names its "cuda_runtime" events.
constexpr std::array<std::string_view, 13> kHipKernelLaunches = {
    "hipLaunchKernel",
    "hipLaunchKernelExC",
    "hipLaunchByPtr",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel",
    "hipModuleLaunchKernelEx",
    "hipExtModuleLaunchKernel",
    "hipHccModuleLaunchKernel",
    "hipLaunchCooperativeKernel",
    "hipLaunchCooperativeKernelMultiDevice",
    "hipModuleLaunchCooperativeKernel",
    "hipModuleLaunchCooperativeKernelMultiDevice",
    "hipExtLaunchMultiKernelMultiDevice",
};

}  // namespace

std::string_view CudaApiBaseName(std::string_view name) {
  for (;;) {
    size_t n = 0;
    if (EndsWith(name, "_ptsz") || EndsWith(name, "_ptds")) {
      name.remove_suffix(5);
    } else if (EndsWith(name, "_spt")) {  // HIP's per-thread stream forms
      name.remove_suffix(4);
    } else if (EndsWithVersion(name, &n)) {
      name.remove_suffix(n);
    } else {
      return name;
    }
  }
}

int32_t ClassifyCudaApi(std::string_view name) {
  const std::string_view base = CudaApiBaseName(name);
  for (std::string_view k : kKernelLaunches) {
    if (base == k) return wire::enums::kApiKernelLaunch;
  }
  for (std::string_view k : kHipKernelLaunches) {
    if (base == k) return wire::enums::kApiKernelLaunch;
  }
  for (std::string_view g : kGraphLaunches) {
    if (base == g) return wire::enums::kApiGraphLaunch;
  }
  if (base == "hipGraphLaunch") return wire::enums::kApiGraphLaunch;
  // Every copy and memset entry point: cudaMemcpy*, cudaMemset*, and the
  // driver's cuMemcpy*, cuMemset* with their cu64 twins. Graph node
  // builders (cudaGraphAddMemcpyNode) do not start with these.
  for (std::string_view p :
       {"cudaMemcpy", "cuMemcpy", "cu64Memcpy", "hipMemcpy"}) {
    if (StartsWith(base, p)) return wire::enums::kApiMemcpy;
  }
  for (std::string_view p :
       {"cudaMemset", "cuMemset", "cu64Memset", "hipMemset"}) {
    if (StartsWith(base, p)) return wire::enums::kApiMemset;
  }
  return wire::enums::kApiUnknown;
}

}  // namespace rooftrace::nsys
