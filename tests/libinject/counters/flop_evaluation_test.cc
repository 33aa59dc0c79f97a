#include "libinject/counters/flop_evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace rooftrace::counters {
namespace {

size_t P(Precision p) { return static_cast<size_t>(p); }

// GH100 full set, one value per metric in table order; every figure below is
// worked out by hand from the conversion factors.
TEST(FlopEvaluationTest, Gh100FullSetConvertsEveryClass) {
  StatusOr<MetricSet> set = MetricSetForChip("GH100", CounterSet::kFull);
  ASSERT_TRUE(set.ok());
  ASSERT_EQ(set->metrics.size(), 19u);
  const std::vector<double> values = {
      1e6,           // dram__bytes_read
      5e5,           // dram__bytes_write
      12345.4,       // gpu__time_duration (ns)
      137438953472,  // hgmma bf16: 2*4096^3, a 4096^3 GEMM
      1000,          // hgmma fp16
      10,            // hgmma tf32
      7,             // igmma int8
      3,             // hmma bf16
      4,             // hmma fp16
      1048576,       // fp8
      1,
      2,
      3,  // dadd dmul dfma  -> 1 + 2 + 2*3 = 9
      10,
      20,
      30,  // fadd fmul ffma  -> 10 + 20 + 2*30 = 90
      5,
      6,
      7,  // hadd hmul hfma  -> 5 + 6 + 2*7 = 25
  };
  StatusOr<KernelCounters> k = EvaluateKernelCounters(*set, values);
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(k->dram_read_bytes, 1000000u);
  EXPECT_EQ(k->dram_write_bytes, 500000u);
  EXPECT_EQ(k->gpu_time_ns, 12345u);
  EXPECT_EQ(k->flops[P(Precision::kFp16Tensor)], 137438954479u);
  EXPECT_EQ(k->flops[P(Precision::kTf32Tensor)], 10u);
  EXPECT_EQ(k->flops[P(Precision::kInt8Tensor)], 7u);
  EXPECT_EQ(k->flops[P(Precision::kFp8Tensor)], 1048576u);
  EXPECT_EQ(k->flops[P(Precision::kFp64)], 9u);
  EXPECT_EQ(k->flops[P(Precision::kFp32)], 90u);
  EXPECT_EQ(k->flops[P(Precision::kFp16)], 25u);
  EXPECT_EQ(k->flops[P(Precision::kFp64Tensor)], 0u);
  EXPECT_EQ(k->flops[P(Precision::kUnknown)], 0u);
  EXPECT_EQ(k->TotalFlops(), 137440003196u);
  EXPECT_EQ(k->DominantPrecision(), Precision::kFp16Tensor);
  EXPECT_EQ(k->raw_values, values);
  EXPECT_TRUE(k->invalid_metrics.empty());
}

// A kernel that counted nothing (a copy kernel) has no dominant class.
TEST(FlopEvaluationTest, NoFlopsMeansUnknownClass) {
  StatusOr<MetricSet> set = MetricSetForChip("GA100", CounterSet::kDefault);
  ASSERT_TRUE(set.ok());
  StatusOr<KernelCounters> k =
      EvaluateKernelCounters(*set, {4096, 4096, 2000, 0, 0});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->TotalFlops(), 0u);
  EXPECT_EQ(k->DominantPrecision(), Precision::kUnknown);
  EXPECT_EQ(k->dram_read_bytes + k->dram_write_bytes, 8192u);
}

// NaN and negative values are left out and named, the rest still counts.
TEST(FlopEvaluationTest, InvalidValuesAreNamedAndSkipped) {
  StatusOr<MetricSet> set = MetricSetForChip("GA100", CounterSet::kDefault);
  ASSERT_TRUE(set.ok());
  StatusOr<KernelCounters> k = EvaluateKernelCounters(
      *set,
      {std::nan(""), 64, -1, 128, std::numeric_limits<double>::infinity()});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->dram_read_bytes, 0u);
  EXPECT_EQ(k->dram_write_bytes, 64u);
  EXPECT_EQ(k->gpu_time_ns, 0u);
  EXPECT_EQ(k->flops[P(Precision::kFp16Tensor)], 128u);
  EXPECT_EQ(k->invalid_metrics,
            (std::vector<std::string>{
                "dram__bytes_read.sum", "gpu__time_duration.sum",
                "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum"}));
}

// Values beyond 64 bits saturate instead of wrapping.
TEST(FlopEvaluationTest, HugeValuesSaturate) {
  StatusOr<MetricSet> set = MetricSetForChip("GA100", CounterSet::kDefault);
  ASSERT_TRUE(set.ok());
  StatusOr<KernelCounters> k =
      EvaluateKernelCounters(*set, {1e30, 0, 0, 1e30, 1e30});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->dram_read_bytes, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(k->flops[P(Precision::kFp16Tensor)],
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(k->TotalFlops(), std::numeric_limits<uint64_t>::max());
}

// The value count must match the metric count.
TEST(FlopEvaluationTest, MismatchedValueCountIsRejected) {
  StatusOr<MetricSet> set = MetricSetForChip("GA100", CounterSet::kDefault);
  ASSERT_TRUE(set.ok());
  StatusOr<KernelCounters> k = EvaluateKernelCounters(*set, {1, 2, 3});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("3 metric values for 5"),
            std::string::npos);
}

// The Precision enum mirrors wire PrecisionClass numbering (the flops array
// index is the wire value).
TEST(FlopEvaluationTest, PrecisionIndexIsWireNumbering) {
  EXPECT_EQ(P(Precision::kFp64), 1u);
  EXPECT_EQ(P(Precision::kFp32), 2u);
  EXPECT_EQ(P(Precision::kFp16), 3u);
  EXPECT_EQ(P(Precision::kFp64Tensor), 4u);
  EXPECT_EQ(P(Precision::kTf32Tensor), 5u);
  EXPECT_EQ(P(Precision::kFp16Tensor), 6u);
  EXPECT_EQ(P(Precision::kFp8Tensor), 7u);
  EXPECT_EQ(P(Precision::kInt8Tensor), 8u);
}

}  // namespace
}  // namespace rooftrace::counters
