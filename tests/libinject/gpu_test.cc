// Device checks (run on a machine with a GPU; skipped elsewhere): the CUDA
// program with known kernels runs under libinject through
// CUDA_INJECTION64_PATH, and the spool must hold each kernel exactly once
// with its grid, sane timestamps on the host clock, its Launch record, the
// copies and a Device packet.
#include <cuda_runtime_api.h>

#include <map>

#include "gtest/gtest.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace pb = rooftrace::wire;

bool HaveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Every known kernel of the app appears once, joined to its launch.
TEST(GpuTraceTest, KnownKernelsAppearOnceWithGridsAndLaunches) {
  if (!HaveDevice()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = testing::MakeTempDir("gpu");
  const std::string spool = dir + "/gpu.rft";
  auto r = testing::RunProcess(
      {testing::BuildPath(ROOFTRACE_GPU_APP_REL)},
      {{"CUDA_INJECTION64_PATH", testing::BuildPath(ROOFTRACE_INJECT_LIB_REL)},
                                {"ROOFTRACE_SINK", "file:" + spool}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out, "ok 8.0\n") << r.err;
  auto packets = testing::ReadTrace(spool);
  auto strings = testing::Strings(packets);
  std::map<std::string, std::vector<pb::Kernel>> kernels;
  std::map<uint64_t, pb::Launch> launches;
  std::vector<pb::Memcpy> copies;
  int devices = 0;
  for (const auto& p : packets) {
    for (const auto& k : p.kernel_batch().kernels()) {
      kernels[strings[k.name_iid()]].push_back(k);
    }
    for (const auto& l : p.kernel_batch().launches()) {
      launches[l.correlation_id()] = l;
    }
    for (const auto& m : p.memcpy_batch().memcpys()) copies.push_back(m);
    devices += p.has_device() ? 1 : 0;
  }
  ASSERT_EQ(kernels["_Z5scalePffi"].size(), 3u) << r.err;
  ASSERT_EQ(kernels["_Z3addPfPKfi"].size(), 1u);
  const pb::Kernel& add = kernels["_Z3addPfPKfi"][0];
  EXPECT_EQ(add.grid_x(), 8u);
  EXPECT_EQ(add.grid_y(), 2u);
  EXPECT_EQ(add.block_x(), 128u);
  EXPECT_EQ(add.block_y(), 2u);
  for (const auto& k : kernels["_Z5scalePffi"]) {
    EXPECT_EQ(k.grid_x(), 64u);
    EXPECT_EQ(k.block_x(), 256u);
    EXPECT_GT(k.end_ns(), k.start_ns());
    ASSERT_TRUE(launches.count(k.correlation_id())) << k.correlation_id();
    const pb::Launch& l = launches[k.correlation_id()];
    // The GPU starts the kernel after the host called the launch API.
    EXPECT_GE(k.start_ns(), l.api_start_ns());
    EXPECT_LT(k.start_ns() - l.api_start_ns(), 10'000'000'000ull);
  }
  int htod = 0, dtoh = 0, memset = 0;
  for (const auto& c : copies) {
    htod += c.kind() == pb::COPY_HTOD && c.bytes() == (1u << 20);
    dtoh += c.kind() == pb::COPY_DTOH && c.bytes() == (1u << 20);
    memset += c.kind() == pb::COPY_MEMSET;
  }
  EXPECT_EQ(htod, 1);
  EXPECT_EQ(dtoh, 1);
  EXPECT_EQ(memset, 1);
  EXPECT_GE(devices, 1);
  ASSERT_TRUE(packets.back().has_goodbye());
}

}  // namespace
}  // namespace rooftrace::inject
