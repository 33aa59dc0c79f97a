// The reference kernels on a real GPU. Every test skips when there is none
// (CI); on the device they check the own kernels against cuBLAS and a quick
// end-to-end calibration.
#include <gtest/gtest.h>

#include "kernels/gpu_runner.h"

namespace rooftrace::kernels {
namespace {

#define SKIP_WITHOUT_GPU()                               \
  do {                                                   \
    std::string why;                                     \
    if (!GpuAvailable(&why)) GTEST_SKIP() << why;        \
  } while (0)

// Tiled fp32 GEMM equals cuBLAS SGEMM on square and non-square shapes.
TEST(OwnKernelsGpuTest, SgemmMatchesCublas) {
  SKIP_WITHOUT_GPU();
  for (GemmShape s : {GemmShape{256, 256, 256}, GemmShape{128, 192, 320},
                      GemmShape{1024, 512, 2048}}) {
    auto o = RunOwnGemmCheck(false, s, 2);
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_TRUE(o->matches_cublas)
        << s.m << "x" << s.n << "x" << s.k << ": " << o->max_rel_error;
    EXPECT_GT(o->best_s, 0);
  }
}

// mma.sync bf16 GEMM equals cuBLAS (bf16 in, fp32 accumulate and out).
TEST(OwnKernelsGpuTest, Bf16MmaMatchesCublas) {
  SKIP_WITHOUT_GPU();
  for (GemmShape s : {GemmShape{64, 64, 16}, GemmShape{128, 192, 320},
                      GemmShape{2048, 1024, 4096}}) {
    auto o = RunOwnGemmCheck(true, s, 2);
    if (!o.ok() && o.status().code() == StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << o.status().message();
    }
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_TRUE(o->matches_cublas)
        << s.m << "x" << s.n << "x" << s.k << ": " << o->max_rel_error;
  }
}

// Shapes off the 64x64x16 tile grid are refused, not computed wrong.
TEST(OwnKernelsGpuTest, OffGridShapeIsRefused) {
  SKIP_WITHOUT_GPU();
  auto o = RunOwnGemmCheck(false, GemmShape{100, 64, 16}, 1);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
}

// --quick end to end: every step ran, every rate is positive and below the
// datasheet (the datasheet peaks are upper bounds), the own kernels match.
TEST(CalibrationGpuTest, QuickRunMeasuresEverything) {
  SKIP_WITHOUT_GPU();
  GpuRunOptions options;
  options.quick = true;
  auto r = RunCalibrationOnGpu(options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->stream.size(), 2u);
  for (const StreamRun& s : r->stream) EXPECT_GT(s.BytesPerS(), 1e10);
  for (const OwnKernelRun& o : r->own) {
    if (o.status == StepStatus::kOk) {
      EXPECT_TRUE(o.matches_cublas) << o.kernel << " " << o.max_rel_error;
    }
  }
  for (const MlpRun& m : r->mlp) {
    EXPECT_EQ(m.status, StepStatus::kOk) << m.note;
  }
  for (const MSweepRun& m : r->msweep) {
    EXPECT_EQ(m.status, StepStatus::kOk) << m.note;
  }
  const DeviceProfile p = BuildProfile(*r);
  EXPECT_GT(p.measured_dram_bytes_per_s, 0);
  if (p.datasheet_dram_bytes_per_s > 0) {
    EXPECT_LT(p.measured_dram_bytes_per_s, 1.05 * p.datasheet_dram_bytes_per_s);
  }
  EXPECT_GT(p.roof(Precision::kFp16Tensor).measured_flops_per_s, 0);
}

}  // namespace
}  // namespace rooftrace::kernels
