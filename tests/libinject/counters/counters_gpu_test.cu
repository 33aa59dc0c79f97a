// Counters mode on a real GPU (acceptance run 1 of docs/counters.md).
// Skips where there is no GPU (CI). On the device it drives CountersRuntime
// the way libinject does around two kernels whose work is known exactly:
//  - an FFMA loop: every thread executes `kIters` FFMAs -> 2 FLOPs each;
//  - a float4 copy over buffers far larger than L2: it must read and write
//    `kCopyBytes` bytes of DRAM each.
// Set ROOFTRACE_COUNTERS_RECORD_DIR to also write the counter-data images as
// .rfcd files (to commit under tests/data/counters/).
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "libinject/counters/counter_session.h"

namespace rooftrace::counters {
namespace {

constexpr int kIters = 1000;
constexpr int kBlocks = 1024;
constexpr int kThreads = 256;
constexpr size_t kCopyFloats = size_t{64} << 20;  // 256 MiB per buffer
constexpr double kCopyBytes = kCopyFloats * sizeof(float);

__global__ void FfmaLoop(float* out, float b, float c) {
  float a = static_cast<float>(threadIdx.x);
  for (int i = 0; i < kIters; ++i) a = fmaf(a, b, c);
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

__global__ void Copy(const float4* in, float4* out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = in[i];
  }
}

CUcontext CurrentContext() {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) return nullptr;
  using GetCurrent = CUresult (*)(CUcontext*);
  auto get = reinterpret_cast<GetCurrent>(dlsym(cuda, "cuCtxGetCurrent"));
  CUcontext ctx = nullptr;
  if (get == nullptr || get(&ctx) != CUDA_SUCCESS) return nullptr;
  return ctx;
}

double RelErr(double got, double want) { return std::fabs(got - want) / want; }

// Known FLOPs and bytes come back from the hardware counters.
TEST(CountersGpuTest, CountsFfmaFlopsAndCopyBytes) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    GTEST_SKIP() << "no CUDA device: this test runs on the GPU machine";
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // creates the primary context
  CUcontext ctx = CurrentContext();
  ASSERT_NE(ctx, nullptr);

  // On the GPU machine the build machine's CUPTI path may not exist:
  // gpu-check.sh names the device's CUPTI 13 in ROOFTRACE_CUPTI_PATH, as
  // libinject reads it.
  const char* cupti = std::getenv("ROOFTRACE_CUPTI_PATH");
  StatusOr<CuptiProfilerApi> api = LoadCuptiProfilerApi(
      cupti != nullptr && *cupti != '\0' ? cupti : ROOFTRACE_CUPTI_LIBRARY);
  ASSERT_TRUE(api.ok()) << api.status().message();
  CountersOptions options;
  options.set = CounterSet::kFull;
  options.keep_raw_images = 4;
  StatusOr<std::unique_ptr<CountersRuntime>> rt =
      CountersRuntime::Create(*api, options);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  Status created = (*rt)->OnContextCreated(ctx, 0);
  ASSERT_TRUE(created.ok()) << created.message();
  std::printf("counter passes: %u\n", (*rt)->passes());

  float* ffma_out = nullptr;
  float4* in = nullptr;
  float4* out = nullptr;
  ASSERT_EQ(cudaMalloc(&ffma_out, kBlocks * kThreads * sizeof(float)),
            cudaSuccess);
  ASSERT_EQ(cudaMalloc(&in, kCopyFloats * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, kCopyFloats * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(in, 1, kCopyFloats * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  ASSERT_TRUE((*rt)->OnKernelLaunchBegin(
      ctx, 1, inject::LaunchInfo{"FfmaLoop", "", false}));
  FfmaLoop<<<kBlocks, kThreads>>>(ffma_out, 1.0001f, 0.5f);
  (*rt)->OnKernelLaunchEnd(ctx, 1);
  ASSERT_TRUE((*rt)->OnKernelLaunchBegin(
      ctx, 2, inject::LaunchInfo{"Copy", "", false}));
  Copy<<<1056, 512>>>(in, out, kCopyFloats / 4);
  (*rt)->OnKernelLaunchEnd(ctx, 2);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<KernelCounters> got = (*rt)->Flush(/*final=*/true);
  for (const std::string& w : (*rt)->TakeWarnings()) {
    std::printf("warning: %s\n", w.c_str());
  }
  ASSERT_EQ(got.size(), 2u);
  const KernelCounters& ffma = got[0].correlation_id == 1 ? got[0] : got[1];
  const KernelCounters& copy = got[0].correlation_id == 2 ? got[0] : got[1];
  const double want_flops = 2.0 * kIters * kBlocks * kThreads;
  const double fp32 =
      static_cast<double>(ffma.flops[static_cast<int>(Precision::kFp32)]);
  std::printf(
      "ffma: fp32 flops %.0f (expected %.0f, err %.4f%%), time %llu ns\n", fp32,
      want_flops, 100 * RelErr(fp32, want_flops),
      static_cast<unsigned long long>(ffma.gpu_time_ns));
  std::printf(
      "copy: dram read %llu write %llu (expected %.0f each, err %.3f%% "
      "/ %.3f%%), time %llu ns\n",
      static_cast<unsigned long long>(copy.dram_read_bytes),
      static_cast<unsigned long long>(copy.dram_write_bytes), kCopyBytes,
      100 * RelErr(copy.dram_read_bytes, kCopyBytes),
      100 * RelErr(copy.dram_write_bytes, kCopyBytes),
      static_cast<unsigned long long>(copy.gpu_time_ns));
  EXPECT_LT(RelErr(fp32, want_flops), 0.01);
  EXPECT_LT(RelErr(copy.dram_read_bytes, kCopyBytes), 0.03);
  EXPECT_LT(RelErr(copy.dram_write_bytes, kCopyBytes), 0.03);
  EXPECT_GT(ffma.gpu_time_ns, 0u);
  EXPECT_GT(copy.gpu_time_ns, 0u);

  if (const char* dir = std::getenv("ROOFTRACE_COUNTERS_RECORD_DIR")) {
    int i = 0;
    for (const CounterDataFile& f : (*rt)->TakeRawImages()) {
      std::vector<uint8_t> bytes = SerializeCounterDataFile(f);
      std::string path = std::string(dir) + "/" + f.chip + "_ffma_copy_" +
                         std::to_string(i++) + ".rfcd";
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()),
                 static_cast<std::streamsize>(bytes.size()));
      std::printf("recorded %s\n", path.c_str());
    }
  }
  cudaFree(ffma_out);
  cudaFree(in);
  cudaFree(out);
}

}  // namespace
}  // namespace rooftrace::counters
