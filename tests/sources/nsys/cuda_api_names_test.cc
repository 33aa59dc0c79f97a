// Which CUDA API calls of an nsys export count as launches: the callback
// names of CUPTI, with nsys's decorations, and the CUPTI headers themselves
// when the CUDA Toolkit is installed.
#include "sources/nsys/cuda_api_names.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "proto/field_numbers.h"

namespace rooftrace::nsys {
namespace {

namespace en = wire::enums;

// Callback names lose their version and per-thread-stream suffixes.
TEST(CudaApiNamesTest, BaseNameDropsDecorations) {
  EXPECT_EQ(CudaApiBaseName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(CudaApiBaseName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(CudaApiBaseName("cuMemcpyHtoD_v2_ptds"), "cuMemcpyHtoD");
  EXPECT_EQ(CudaApiBaseName("__cudaLaunchKernel_ptsz_v13000"),
            "__cudaLaunchKernel");
  EXPECT_EQ(CudaApiBaseName("cuLaunchKernel"), "cuLaunchKernel");
  // Digits that are part of the name stay.
  EXPECT_EQ(CudaApiBaseName("cuMemsetD32"), "cuMemsetD32");
  EXPECT_EQ(CudaApiBaseName("cudaMemcpy2D_v3020"), "cudaMemcpy2D");
}

// Runtime, driver and the internal __cudaLaunchKernel launches; graphs;
// copies; what is not a launch.
TEST(CudaApiNamesTest, ClassifiesLaunchesCopiesAndOthers) {
  for (const char* name :
       {"cudaLaunchKernel_v7000", "cudaLaunchKernel", "cudaLaunch_v3020",
        "cudaLaunchKernel_ptsz_v7000", "cudaLaunchCooperativeKernel_v9000",
        "cudaLaunchKernelExC_v11060", "__cudaLaunchKernel_v13000",
        "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
        "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel", "cuLaunchGrid",
        "cuLaunchGridAsync", "cuLaunch"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiKernelLaunch) << name;
  }
  for (const char* name :
       {"cudaGraphLaunch_v10000", "cudaGraphLaunch_ptsz_v10000",
        "cuGraphLaunch", "cuGraphLaunch_ptsz"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiGraphLaunch) << name;
  }
  for (const char* name : {"cudaMemcpy_v3020", "cudaMemcpyAsync_ptsz_v7000",
                           "cudaMemcpyPeerAsync_v4000", "cuMemcpyHtoD_v2",
                           "cuMemcpyDtoHAsync_v2_ptsz", "cu64MemcpyHtoD",
                           "cudaMemcpyBatchAsync_v12080"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiMemcpy) << name;
  }
  for (const char* name : {"cudaMemset_v3020", "cudaMemsetAsync_ptsz_v7000",
                           "cuMemsetD32Async", "cuMemsetD8_v2_ptds"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiMemset) << name;
  }
  for (const char* name :
       {"cudaLaunchHostFunc_v10000", "cuLaunchHostFunc", "cudaMalloc_v3020",
        "cudaStreamSynchronize_v3020", "cudaGraphAddMemcpyNode_v10000",
        "cudaGraphAddKernelNode_v10000", "cudaMemSetMemPool_v13000",
        "cuMemSetAccess", "cuModuleGetLoadingMode", "", "Launch"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiUnknown) << name;
  }
}

// HIP's calls as a PyTorch profiler trace recorded on ROCm names them: the
// launches join their kernels by correlation id as CUDA's do.
TEST(CudaApiNamesTest, ClassifiesHipCalls) {
  for (const char* name :
       {"hipLaunchKernel", "hipLaunchKernel_spt", "hipExtLaunchKernel",
        "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
        "hipHccModuleLaunchKernel", "hipLaunchCooperativeKernel",
        "hipExtLaunchMultiKernelMultiDevice"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiKernelLaunch) << name;
  }
  EXPECT_EQ(ClassifyCudaApi("hipGraphLaunch"), en::kApiGraphLaunch);
  EXPECT_EQ(ClassifyCudaApi("hipGraphLaunch_spt"), en::kApiGraphLaunch);
  for (const char* name :
       {"hipMemcpyAsync", "hipMemcpyWithStream", "hipMemcpyHtoDAsync",
        "hipMemcpyAsync_spt"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiMemcpy) << name;
  }
  EXPECT_EQ(ClassifyCudaApi("hipMemsetAsync"), en::kApiMemset);
  for (const char* name :
       {"hipDeviceSynchronize", "hipLaunchHostFunc", "hipGraphAddMemcpyNode",
        "hipMalloc", "hipStreamSynchronize"}) {
    EXPECT_EQ(ClassifyCudaApi(name), en::kApiUnknown) << name;
  }
}

// Every callback name of the CUPTI headers, where the toolkit is installed.
std::set<std::string> CallbackNames(const std::string& file,
                                    const std::string& prefix) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::set<std::string> names;
  const std::regex re(prefix + "([A-Za-z0-9_]+)\\s*=");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name == "INVALID" || name == "SIZE" || name == "FORCE_INT") continue;
    names.insert(name);
  }
  return names;
}

std::string CuptiInclude() {
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(env); v && *v) {
      return std::string(v) + "/include";
    }
  }
  return "/usr/local/cuda/include";
}

// The launch lists are CUPTI's: every callback whose name says it launches
// a kernel or a graph is classified so, every other one is not, and each
// listed launch name is a real callback (no typo).
TEST(CudaApiNamesTest, LaunchNamesMatchTheCuptiHeaders) {
  const std::string dir = CuptiInclude();
  std::set<std::string> names =
      CallbackNames(dir + "/cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_");
  const std::set<std::string> driver =
      CallbackNames(dir + "/cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_");
  if (names.empty() || driver.empty()) {
    GTEST_SKIP() << "CUPTI headers not found in " << dir
                 << " (set CUDA_HOME); the listed names are checked above";
  }
  names.insert(driver.begin(), driver.end());
  std::set<std::string_view> bases;
  int launches = 0, graphs = 0;
  for (const std::string& n : names) {
    const std::string_view base = CudaApiBaseName(n);
    bases.insert(base);
    const bool launch_word = base.find("Launch") != std::string_view::npos;
    const bool host_func = base.find("HostFunc") != std::string_view::npos;
    const bool graph = base.find("GraphLaunch") != std::string_view::npos;
    int32_t want = en::kApiUnknown;
    if (launch_word && !host_func) {
      want = graph ? en::kApiGraphLaunch : en::kApiKernelLaunch;
    }
    const int32_t got = ClassifyCudaApi(n);
    if (want != en::kApiUnknown || got == en::kApiKernelLaunch ||
        got == en::kApiGraphLaunch) {
      EXPECT_EQ(got, want) << n;
    }
    launches += got == en::kApiKernelLaunch;
    graphs += got == en::kApiGraphLaunch;
  }
  EXPECT_GE(launches, 20);  // runtime and driver, with their _ptsz forms
  EXPECT_GE(graphs, 4);
  for (const char* listed :
       {"cudaLaunch", "cudaLaunchKernel", "cudaLaunchCooperativeKernel",
        "cudaLaunchCooperativeKernelMultiDevice", "cudaLaunchKernelExC",
        "__cudaLaunchKernel", "cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync",
        "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
        "cuLaunchCooperativeKernelMultiDevice", "cudaGraphLaunch",
        "cuGraphLaunch"}) {
    EXPECT_TRUE(bases.count(listed)) << listed << " is no CUPTI callback";
  }
}

}  // namespace
}  // namespace rooftrace::nsys
