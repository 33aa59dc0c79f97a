// The traced-callback table (libinject/api_callbacks.h) against the
// installed CUPTI: every runtime and driver callback id CUPTI 13 names is
// checked, so a launch, copy or memset API the table does not list (as
// __cudaLaunchKernel was missed by a rule on name prefixes) fails here.
#include "libinject/api_callbacks.h"

#include <cupti.h>
#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "proto/field_numbers.h"

namespace rooftrace::inject {
namespace {

using NameFn = CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);

NameFn RealCallbackName() {
  static NameFn fn = [] {
    void* h = dlopen(ROOFTRACE_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    return h == nullptr
               ? nullptr
               : reinterpret_cast<NameFn>(dlsym(h, "cuptiGetCallbackName"));
  }();
  return fn;
}

// What an API is, from its documented name (leading underscores of the
// compiler-facing entry points dropped): the expectation the table must
// meet.
ApiCallbackKind ExpectedKind(std::string name) {
  name.erase(0, name.find_first_not_of('_'));
  auto starts = [&](const char* pattern) {
    return std::regex_search(name, std::regex(pattern));
  };
  if (starts("^cu(da)?GraphLaunch")) return ApiCallbackKind::kGraphLaunch;
  if (starts("^cu(da)?Launch(Kernel|CooperativeKernel|Grid|_|$)")) {
    return ApiCallbackKind::kKernelLaunch;
  }
  if (starts("^cu(da)?ProfilerStart")) return ApiCallbackKind::kProfilerStart;
  if (starts("^cu(da)?ProfilerStop")) return ApiCallbackKind::kProfilerStop;
  if (starts("^cu(da)?(64)?Memcpy")) return ApiCallbackKind::kMemcpy;
  if (starts("^cu(da)?(64)?Memset")) return ApiCallbackKind::kMemset;
  if (starts("^cu(da)?StreamBeginCapture"))
    return ApiCallbackKind::kCaptureBegin;
  if (starts("^cu(da)?StreamEndCapture")) return ApiCallbackKind::kCaptureEnd;
  return ApiCallbackKind::kNotTraced;
}

// Every callback id CUPTI names, runtime and driver, has the kind its name
// says: nothing that enqueues work (or begins / ends a stream capture, or
// starts / stops the profiler) is left out, nothing else is in, and each
// is in the one table of its use.
TEST(ApiCallbacksTest, EveryCallbackCuptiNamesHasTheKindItsNameSays) {
  NameFn name_of = RealCallbackName();
  ASSERT_NE(name_of, nullptr) << "cannot load " << ROOFTRACE_CUPTI_LIBRARY;
  const struct {
    CUpti_CallbackDomain domain;
    uint32_t size;
  } domains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                 {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  int named = 0;
  int traced = 0;
  int capture = 0;
  int profiler = 0;
  for (const auto& d : domains) {
    for (uint32_t cbid = 1; cbid < d.size; ++cbid) {
      const char* name = nullptr;
      if (name_of(d.domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
        continue;
      }
      ++named;
      const ApiCallbackKind want = ExpectedKind(name);
      EXPECT_EQ(ApiCallbackKindOf(d.domain, cbid), want)
          << name << " (domain " << d.domain << ", cbid " << cbid << ")";
      if (want != ApiCallbackKind::kNotTraced) ++traced;
      if (want == ApiCallbackKind::kCaptureBegin ||
          want == ApiCallbackKind::kCaptureEnd) {
        ++capture;
      }
      if (want == ApiCallbackKind::kProfilerStart ||
          want == ApiCallbackKind::kProfilerStop) {
        ++profiler;
      }
    }
  }
  EXPECT_GT(named, 1000);  // both domains were read
  size_t listed = TracedCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API).size() +
                  TracedCallbacks(CUPTI_CB_DOMAIN_DRIVER_API).size();
  size_t capture_listed = CaptureCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API).size() +
                          CaptureCallbacks(CUPTI_CB_DOMAIN_DRIVER_API).size();
  size_t profiler_listed =
      ProfilerCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API).size() +
      ProfilerCallbacks(CUPTI_CB_DOMAIN_DRIVER_API).size();
  EXPECT_EQ(static_cast<size_t>(traced - capture - profiler), listed);
  EXPECT_EQ(static_cast<size_t>(capture), capture_listed);
  EXPECT_EQ(static_cast<size_t>(profiler), profiler_listed);
}

// The nvcc 13 launch stubs by name and id, and what each kind becomes on
// the wire.
TEST(ApiCallbacksTest, KnowsLaunchesCopiesGraphsAndProfilerRange) {
  NameFn name_of = RealCallbackName();
  ASSERT_NE(name_of, nullptr);
  const char* name = nullptr;
  ASSERT_EQ(name_of(CUPTI_CB_DOMAIN_RUNTIME_API, 505, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "__cudaLaunchKernel_v13000");
  ASSERT_EQ(name_of(CUPTI_CB_DOMAIN_RUNTIME_API, 506, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "__cudaLaunchKernel_ptsz_v13000");
  const CUpti_CallbackDomain rt = CUPTI_CB_DOMAIN_RUNTIME_API;
  const CUpti_CallbackDomain drv = CUPTI_CB_DOMAIN_DRIVER_API;
  EXPECT_EQ(ApiCallbackKindOf(rt, 505), ApiCallbackKind::kKernelLaunch);
  EXPECT_EQ(ApiCallbackKindOf(rt, 506), ApiCallbackKind::kKernelLaunch);
  EXPECT_EQ(
      ApiCallbackKindOf(rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
      ApiCallbackKind::kKernelLaunch);
  EXPECT_EQ(
      ApiCallbackKindOf(drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz),
      ApiCallbackKind::kKernelLaunch);
  EXPECT_EQ(ApiCallbackKindOf(drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid),
            ApiCallbackKind::kKernelLaunch);
  EXPECT_EQ(
      ApiCallbackKindOf(rt, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000),
      ApiCallbackKind::kGraphLaunch);
  EXPECT_EQ(
      ApiCallbackKindOf(drv, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2),
      ApiCallbackKind::kMemcpy);
  EXPECT_EQ(ApiCallbackKindOf(drv, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2),
            ApiCallbackKind::kMemset);
  EXPECT_EQ(
      ApiCallbackKindOf(rt, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000),
      ApiCallbackKind::kProfilerStart);
  EXPECT_EQ(ApiCallbackKindOf(drv, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop),
            ApiCallbackKind::kProfilerStop);
  EXPECT_EQ(
      ApiCallbackKindOf(rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000),
      ApiCallbackKind::kNotTraced);
  EXPECT_EQ(ApiCallbackKindOf(rt, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020),
            ApiCallbackKind::kNotTraced);
  EXPECT_EQ(ApiCallbackKindOf(drv, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize),
            ApiCallbackKind::kNotTraced);
  EXPECT_EQ(WireApiKind(ApiCallbackKind::kKernelLaunch),
            wire::enums::kApiKernelLaunch);
  EXPECT_EQ(WireApiKind(ApiCallbackKind::kGraphLaunch),
            wire::enums::kApiGraphLaunch);
  EXPECT_EQ(WireApiKind(ApiCallbackKind::kMemcpy), wire::enums::kApiMemcpy);
  EXPECT_EQ(WireApiKind(ApiCallbackKind::kMemset), wire::enums::kApiMemset);
}

// A profiled kernel's Kernel record takes grid, block and dynamic shared
// memory from the launch's parameter struct: the runtime's dim3 fields, the
// driver's gridDimX.. fields, and the config structs of the Ex launches;
// nvcc's __cudaLaunchKernel stub publishes none.
TEST(ApiCallbacksTest, LaunchGeometryComesFromEachLaunchFamily) {
  const auto rt = CUPTI_CB_DOMAIN_RUNTIME_API;
  const auto drv = CUPTI_CB_DOMAIN_DRIVER_API;
  cudaLaunchKernel_v7000_params k{};
  k.gridDim = dim3(132, 2, 1);
  k.blockDim = dim3(256, 1, 1);
  k.sharedMem = 49152;
  LaunchGeometry g;
  ASSERT_TRUE(LaunchGeometryOf(
      rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &k, &g));
  EXPECT_EQ(g.grid[0], 132u);
  EXPECT_EQ(g.grid[1], 2u);
  EXPECT_EQ(g.block[0], 256u);
  EXPECT_EQ(g.dynamic_shared_memory_bytes, 49152u);

  CUlaunchConfig config{};
  config.gridDimX = 7;
  config.gridDimY = 3;
  config.gridDimZ = 2;
  config.blockDimX = 64;
  config.blockDimY = 2;
  config.blockDimZ = 1;
  config.sharedMemBytes = 1024;
  cuLaunchKernelEx_params ex{};
  ex.config = &config;
  g = LaunchGeometry{};
  ASSERT_TRUE(
      LaunchGeometryOf(drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &ex, &g));
  EXPECT_EQ(g.grid[2], 2u);
  EXPECT_EQ(g.block[1], 2u);
  EXPECT_EQ(g.dynamic_shared_memory_bytes, 1024u);

  cudaLaunchConfig_t rconfig{};
  rconfig.gridDim = dim3(5, 1, 1);
  rconfig.blockDim = dim3(32, 4, 1);
  rconfig.dynamicSmemBytes = 2048;
  cudaLaunchKernelExC_v11060_params rex{};
  rex.config = &rconfig;
  g = LaunchGeometry{};
  ASSERT_TRUE(LaunchGeometryOf(
      rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, &rex, &g));
  EXPECT_EQ(g.grid[0], 5u);
  EXPECT_EQ(g.block[1], 4u);
  EXPECT_EQ(g.dynamic_shared_memory_bytes, 2048u);

  cuLaunchKernel_params d{};
  d.gridDimX = 9;
  d.blockDimX = 128;
  d.sharedMemBytes = 16;
  g = LaunchGeometry{};
  ASSERT_TRUE(
      LaunchGeometryOf(drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &d, &g));
  EXPECT_EQ(g.grid[0], 9u);
  EXPECT_EQ(g.block[0], 128u);
  EXPECT_EQ(g.dynamic_shared_memory_bytes, 16u);

  EXPECT_FALSE(LaunchGeometryOf(
      rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, nullptr, &g));
}

// The parameters of nvcc 13's <<<>>> entry (__cudaLaunchKernel(kernel,
// gridDim, blockDim, args, sharedMem, stream)) as CUDA 13.0's libcudart
// lays them out for its callback: 56 bytes, the kernel handle at 0, grid
// x, y, z at 8, block at 20, args at 32, sharedMem at 40, stream at 48
// (cudaLaunchKernel's stores, which __cudaLaunchKernel jumps into).
std::array<unsigned char, 56> StubParams(dim3 grid, dim3 block,
                                         uint64_t shared) {
  std::array<unsigned char, 56> b{};
  const uint64_t handle = 0x7f00'1234'5000;
  const uint32_t dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
  std::memcpy(b.data(), &handle, 8);
  std::memcpy(b.data() + 8, dims, sizeof(dims));
  std::memcpy(b.data() + 40, &shared, 8);
  return b;
}

// A <<<>>> launch reported by its own callback id (505 / 506) is signed by
// its geometry too, so two grids of one kernel are two signatures; a
// layout whose figures are no launch's is not believed.
TEST(ApiCallbacksTest, NvccLaunchStubGivesItsGeometry) {
  const auto rt = CUPTI_CB_DOMAIN_RUNTIME_API;
  alignas(8) std::array<unsigned char, 56> p =
      StubParams(dim3(4096, 3, 1), dim3(128, 2, 1), 8192);
  LaunchGeometry g;
  ASSERT_TRUE(LaunchGeometryOf(
      rt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, p.data(), &g));
  EXPECT_EQ(g.grid[0], 4096u);
  EXPECT_EQ(g.grid[1], 3u);
  EXPECT_EQ(g.grid[2], 1u);
  EXPECT_EQ(g.block[0], 128u);
  EXPECT_EQ(g.block[1], 2u);
  EXPECT_EQ(g.block[2], 1u);
  EXPECT_EQ(g.dynamic_shared_memory_bytes, 8192u);

  alignas(8) std::array<unsigned char, 56> q =
      StubParams(dim3(1, 1, 1), dim3(1024, 1, 1), 0);
  g = LaunchGeometry{};
  ASSERT_TRUE(LaunchGeometryOf(
      rt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, q.data(),
      &g));
  EXPECT_EQ(g.block[0], 1024u);

  // The same bytes read through cudaLaunchKernel's published struct (what
  // CUDA 13.0's runtime reports a <<<>>> launch as) give the same figures.
  g = LaunchGeometry{};
  ASSERT_TRUE(LaunchGeometryOf(
      rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, p.data(), &g));
  EXPECT_EQ(g.grid[0], 4096u);
  EXPECT_EQ(g.block[1], 2u);
  EXPECT_EQ(g.dynamic_shared_memory_bytes, 8192u);

  const std::array<unsigned char, 56> not_launches[] = {
      StubParams(dim3(0, 1, 1), dim3(32, 1, 1), 0),        // empty grid
      StubParams(dim3(8, 70000, 1), dim3(32, 1, 1), 0),    // y over 65535
      StubParams(dim3(8, 1, 1), dim3(1024, 2, 1), 0),      // 2048 threads
      StubParams(dim3(8, 1, 1), dim3(1, 1, 128), 0),       // z over 64
      StubParams(dim3(8, 1, 1), dim3(32, 1, 1), 1ull << 33),  // 8 GiB smem
  };
  for (const auto& bad : not_launches) {
    alignas(8) std::array<unsigned char, 56> b = bad;
    LaunchGeometry untouched;
    EXPECT_FALSE(LaunchGeometryOf(
        rt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, b.data(),
        &untouched));
    EXPECT_EQ(untouched.grid[0], 0u);
  }
  EXPECT_FALSE(LaunchGeometryOf(
      rt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, nullptr, &g));
}

}  // namespace
}  // namespace rooftrace::inject
