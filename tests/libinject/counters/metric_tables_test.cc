#include "libinject/counters/metric_tables.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace rooftrace::counters {
namespace {

const MetricSpec* Find(const MetricSet& s, std::string_view name) {
  for (const MetricSpec& m : s.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// The env value picks the set; anything else is refused with the fix.
TEST(CounterSetTest, ParsesDefaultFullAndRejectsOthers) {
  EXPECT_EQ(*ParseCounterSet("default"), CounterSet::kDefault);
  EXPECT_EQ(*ParseCounterSet(""), CounterSet::kDefault);
  EXPECT_EQ(*ParseCounterSet("full"), CounterSet::kFull);
  StatusOr<CounterSet> bad = ParseCounterSet("all");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("ROOFTRACE_COUNTERS='all'"),
            std::string::npos);
  EXPECT_NE(bad.status().message().find("'full'"), std::string::npos);
}

// Every chip appears in one family only, and every family measures DRAM
// read, DRAM write and time first.
TEST(ChipFamilyTest, ChipsAreUniqueAndSetsStartWithBytesAndTime) {
  std::set<std::string_view> seen;
  for (const ChipFamily& f : ChipFamilies()) {
    for (std::string_view c : f.chips) {
      EXPECT_TRUE(seen.insert(c).second) << c << " in two families";
    }
    ASSERT_GE(f.default_metrics.size(), 3u) << f.name;
    EXPECT_EQ(f.default_metrics[0].role, MetricRole::kDramReadBytes);
    EXPECT_EQ(f.default_metrics[1].role, MetricRole::kDramWriteBytes);
    EXPECT_EQ(f.default_metrics[2].role, MetricRole::kGpuTimeNs);
    for (size_t i = 3; i < f.default_metrics.size(); ++i) {
      EXPECT_EQ(f.default_metrics[i].role, MetricRole::kFlops);
      EXPECT_NE(f.default_metrics[i].precision, Precision::kUnknown);
      // Tensor op counters count FLOPs directly.
      EXPECT_EQ(f.default_metrics[i].flops_per_unit, 1.0)
          << f.default_metrics[i].name;
    }
  }
  for (std::string_view c : {"GA100", "GH100", "AD102", "GB100", "GB202"}) {
    EXPECT_NE(FindChipFamily(c), nullptr) << c;
  }
  EXPECT_EQ(FindChipFamily("GV100"), nullptr);
}

// GH100 default is exactly the documented one-pass list; full adds the nine
// CUDA-core counters with FMA = 2.
TEST(MetricSetTest, Gh100DefaultAndFullSets) {
  StatusOr<MetricSet> d = MetricSetForChip("GH100", CounterSet::kDefault);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->metrics.size(), 10u);
  const MetricSpec* hgmma = Find(
      *d, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum");
  ASSERT_NE(hgmma, nullptr);
  EXPECT_EQ(hgmma->precision, Precision::kFp16Tensor);
  const MetricSpec* fp8 =
      Find(*d, "sm__ops_path_tensor_src_fp8_sparsity_off.sum");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->precision, Precision::kFp8Tensor);
  const MetricSpec* igmma =
      Find(*d, "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum");
  ASSERT_NE(igmma, nullptr);
  EXPECT_EQ(igmma->precision, Precision::kInt8Tensor);
  EXPECT_EQ(Find(*d, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
            nullptr);

  StatusOr<MetricSet> f = MetricSetForChip("GH100", CounterSet::kFull);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->metrics.size(), 19u);
  const MetricSpec* dfma =
      Find(*f, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum");
  ASSERT_NE(dfma, nullptr);
  EXPECT_EQ(dfma->precision, Precision::kFp64);
  EXPECT_EQ(dfma->flops_per_unit, 2.0);
  const MetricSpec* hadd =
      Find(*f, "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum");
  ASSERT_NE(hadd, nullptr);
  EXPECT_EQ(hadd->precision, Precision::kFp16);
  EXPECT_EQ(hadd->flops_per_unit, 1.0);
}

// Names() hands CUPTI the metric names in table order.
TEST(MetricSetTest, NamesFollowMetricOrder) {
  StatusOr<MetricSet> s = MetricSetForChip("GA100", CounterSet::kDefault);
  ASSERT_TRUE(s.ok());
  std::vector<const char*> names = s->Names();
  ASSERT_EQ(names.size(), 5u);
  EXPECT_STREQ(names[0], "dram__bytes_read.sum");
  EXPECT_STREQ(names[2], "gpu__time_duration.sum");
}

// A chip with no table is NotFound, not a crash.
TEST(MetricSetTest, UnknownChipIsNotFound) {
  StatusOr<MetricSet> s = MetricSetForChip("GZ999", CounterSet::kDefault);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("GZ999"), std::string::npos);
}

// Source specs map to the roof model's classes; formats without a roof are
// left out.
TEST(TensorSourcePrecisionTest, MapsSpecsToClasses) {
  EXPECT_EQ(TensorSourcePrecision("bf16_dst_fp32"), Precision::kFp16Tensor);
  EXPECT_EQ(TensorSourcePrecision("fp16_dst_fp16"), Precision::kFp16Tensor);
  EXPECT_EQ(TensorSourcePrecision("fp16_bf16_tf32_dst_fp32"),
            Precision::kFp16Tensor);
  EXPECT_EQ(TensorSourcePrecision("tf32_dst_fp32"), Precision::kTf32Tensor);
  EXPECT_EQ(TensorSourcePrecision("fp64"), Precision::kFp64Tensor);
  EXPECT_EQ(TensorSourcePrecision("int8"), Precision::kInt8Tensor);
  EXPECT_EQ(TensorSourcePrecision("fp8_dst_fp32"), Precision::kFp8Tensor);
  EXPECT_EQ(TensorSourcePrecision("fp4_fp6_fp8_dst_fp16"),
            Precision::kFp8Tensor);
  EXPECT_EQ(TensorSourcePrecision("fp4_dst_fp32"), Precision::kUnknown);
  EXPECT_EQ(TensorSourcePrecision("fp4_fp6_dst_fp32"), Precision::kUnknown);
  EXPECT_EQ(TensorSourcePrecision("int4"), Precision::kUnknown);
  EXPECT_EQ(TensorSourcePrecision("int1"), Precision::kUnknown);
}

// A chip without a table: candidates come from its base metric list, dense
// variants preferred, fp16/bf16 first, unrooted formats and sparse/realtime
// variants dropped.
TEST(DiscoverMetricSetTest, BuildsCandidatesFromBaseMetrics) {
  std::vector<std::string> base = {
      "gpu__time_duration",
      "dram__bytes_op_read",
      "dram__bytes_op_write",
      "sm__ops_path_tensor_src_int8",
      "sm__ops_path_tensor_src_bf16_dst_fp32",
      "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off",
      "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_on",
      "sm__ops_path_tensor_src_bf16_dst_fp32_realtime",
      "sm__ops_path_tensor_src_fp4_dst_fp32",
      "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32",
      "smsp__sass_thread_inst_executed_op_ffma_pred_on",
      "smsp__sass_thread_inst_executed_op_hfma_pred_on",
  };
  StatusOr<MetricSet> d = DiscoverMetricSet("GX1", CounterSet::kDefault, base);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->discovered);
  std::vector<std::string> names;
  for (const MetricSpec& m : d->metrics) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "dram__bytes_op_read.sum", "dram__bytes_op_write.sum",
                       "gpu__time_duration.sum",
                       "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum",
                       "sm__ops_path_tensor_src_int8.sum"}));

  StatusOr<MetricSet> f = DiscoverMetricSet("GX1", CounterSet::kFull, base);
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->metrics.size(), 7u);
  EXPECT_EQ(f->metrics[5].name,
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
  EXPECT_EQ(f->metrics[5].flops_per_unit, 2.0);
  EXPECT_EQ(f->metrics[6].precision, Precision::kFp16);
}

// An integrated GPU has no DRAM counters: refuse with a message, so the
// caller falls back to trace mode.
TEST(DiscoverMetricSetTest, NoDramCountersIsFailedPrecondition) {
  std::vector<std::string> base = {"gpu__time_duration",
                                   "sm__ops_path_tensor_src_int8"};
  StatusOr<MetricSet> d =
      DiscoverMetricSet("GA10B", CounterSet::kDefault, base);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(d.status().message().find("GA10B"), std::string::npos);
  EXPECT_NE(d.status().message().find("trace mode"), std::string::npos);
}

// Blackwell paired fp32 instructions do two operations per thread.
TEST(CudaCoreMetricsTest, PairedFp32CountsTwoOperations) {
  std::vector<MetricSpec> m =
      CudaCoreMetrics({"smsp__sass_thread_inst_executed_op_ffma2_pred_on",
                       "smsp__sass_thread_inst_executed_op_fadd2_pred_on",
                       "smsp__sass_thread_inst_executed_op_dadd_pred_on"});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].name, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum");
  EXPECT_EQ(m[0].flops_per_unit, 1.0);
  EXPECT_EQ(m[1].name, "smsp__sass_thread_inst_executed_op_fadd2_pred_on.sum");
  EXPECT_EQ(m[1].flops_per_unit, 2.0);
  EXPECT_EQ(m[2].flops_per_unit, 4.0);
  EXPECT_EQ(m[2].precision, Precision::kFp32);
  EXPECT_EQ(CudaCoreMetrics({}).size(), 9u);
}

}  // namespace
}  // namespace rooftrace::counters
