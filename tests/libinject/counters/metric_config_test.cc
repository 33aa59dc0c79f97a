// Runs the installed CUPTI's Profiler Host API for real: no GPU or driver is
// needed to build config images and count replay passes for a chip.
#include "libinject/counters/metric_config.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace rooftrace::counters {
namespace {

class CuptiHostTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    StatusOr<CuptiProfilerApi> api =
        LoadCuptiProfilerApi(ROOFTRACE_CUPTI_LIBRARY);
    ASSERT_TRUE(api.ok()) << api.status().message();
    api_ = new CuptiProfilerApi(*api);
  }
  static const CuptiProfilerApi& api() { return *api_; }
  static bool Supported(std::string_view chip) {
    StatusOr<std::vector<std::string>> chips = SupportedChips(api());
    return chips.ok() &&
           std::find(chips->begin(), chips->end(), chip) != chips->end();
  }
  static CuptiProfilerApi* api_;
};
CuptiProfilerApi* CuptiHostTest::api_ = nullptr;

// The chips of interest are all known to the installed CUPTI.
TEST_F(CuptiHostTest, SupportedChipsIncludeTheChipsOfInterest) {
  StatusOr<std::vector<std::string>> chips = SupportedChips(api());
  ASSERT_TRUE(chips.ok()) << chips.status().message();
  for (std::string_view c : {"GA100", "GH100", "AD102", "GB100"}) {
    EXPECT_NE(std::find(chips->begin(), chips->end(), c), chips->end()) << c;
  }
}

// Every table, on every chip of its family: the default set takes one pass,
// the full set two, as documented.
TEST_F(CuptiHostTest, EveryFamilyTableHasItsDocumentedPassCount) {
  int checked = 0;
  for (const ChipFamily& f : ChipFamilies()) {
    for (std::string_view chip : f.chips) {
      ASSERT_TRUE(Supported(chip)) << chip << " is not in this CUPTI";
      StatusOr<MetricConfig> d =
          BuildMetricConfig(api(), chip, CounterSet::kDefault);
      ASSERT_TRUE(d.ok()) << chip << ": " << d.status().message();
      EXPECT_EQ(d->passes, f.default_passes) << chip << " default";
      EXPECT_FALSE(d->config_image.empty());
      EXPECT_FALSE(d->metrics.discovered);
      StatusOr<MetricConfig> full =
          BuildMetricConfig(api(), chip, CounterSet::kFull);
      ASSERT_TRUE(full.ok()) << chip << ": " << full.status().message();
      EXPECT_EQ(full->passes, f.full_passes) << chip << " full";
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
}

// The budget is tight: one more hardware counter on GH100's default set
// costs a second pass (why DMMA and HMMA fp16-accumulate are not in it).
TEST_F(CuptiHostTest, Gh100OneMoreTensorCounterCostsASecondPass) {
  StatusOr<MetricSet> s = MetricSetForChip("GH100", CounterSet::kDefault);
  ASSERT_TRUE(s.ok());
  s->metrics.push_back(MetricSpec{"sm__ops_path_tensor_src_fp64.sum",
                                  MetricRole::kFlops, Precision::kFp64Tensor,
                                  1.0});
  StatusOr<MetricConfig> c = BuildConfigForMetrics(api(), *s);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->passes, 2);
}

// Any smsp__sass_* counter forces a second pass on its own.
TEST_F(CuptiHostTest, OneSassCounterMakesTwoPasses) {
  StatusOr<MetricSet> s = MetricSetForChip("GH100", CounterSet::kDefault);
  ASSERT_TRUE(s.ok());
  s->metrics.push_back(
      MetricSpec{"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                 MetricRole::kFlops, Precision::kFp32, 2.0});
  StatusOr<MetricConfig> c = BuildConfigForMetrics(api(), *s);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->passes, 2);
}

// A misspelt metric is refused with its name, the chip and the fix.
TEST_F(CuptiHostTest, UnknownMetricNameIsRejectedByName) {
  MetricSet s;
  s.chip = "GH100";
  s.metrics = {MetricSpec{"dram__bytes_read.sum", MetricRole::kDramReadBytes,
                          Precision::kUnknown, 0},
               MetricSpec{"dram__bytes_reed.sum", MetricRole::kDramReadBytes,
                          Precision::kUnknown, 0},
               MetricSpec{"sm__ops_path_tensor_op_hgmma_src_fp16_dst_fp16.sum",
                          MetricRole::kFlops, Precision::kFp16Tensor, 1}};
  StatusOr<MetricConfig> c = BuildConfigForMetrics(api(), s);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("dram__bytes_reed.sum"), std::string::npos) << m;
  EXPECT_NE(m.find("sm__ops_path_tensor_op_hgmma_src_fp16_dst_fp16.sum"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("dram__bytes_read.sum"), std::string::npos) << m;
  EXPECT_NE(m.find("GH100"), std::string::npos) << m;
}

// A chip name CUPTI does not know is bad input, not an internal error.
TEST_F(CuptiHostTest, UnknownChipIsInvalidArgument) {
  StatusOr<MetricConfig> c =
      BuildMetricConfig(api(), "GZ999", CounterSet::kDefault);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("GZ999"), std::string::npos);
}

// Chips without a table (Volta, Turing) get a discovered set that keeps DRAM,
// time and the tensor counters that fit one pass; full adds CUDA-core
// counters in a second pass.
TEST_F(CuptiHostTest, DiscoveredSetsFitTheirPassBudget) {
  for (std::string_view chip : {"GV100", "TU102"}) {
    ASSERT_EQ(FindChipFamily(chip), nullptr);
    StatusOr<MetricConfig> d =
        BuildMetricConfig(api(), chip, CounterSet::kDefault);
    ASSERT_TRUE(d.ok()) << chip << ": " << d.status().message();
    EXPECT_TRUE(d->metrics.discovered);
    EXPECT_EQ(d->passes, 1) << chip;
    ASSERT_GE(d->metrics.metrics.size(), 4u) << chip;
    EXPECT_EQ(d->metrics.metrics[0].name, "dram__bytes_read.sum");
    EXPECT_EQ(d->metrics.metrics[3].precision, Precision::kFp16Tensor) << chip;
    StatusOr<MetricConfig> f =
        BuildMetricConfig(api(), chip, CounterSet::kFull);
    ASSERT_TRUE(f.ok()) << chip << ": " << f.status().message();
    EXPECT_EQ(f->passes, 2) << chip;
    EXPECT_GT(f->metrics.metrics.size(), d->metrics.metrics.size());
  }
}

// Jetson Orin (GA10B) has no DRAM counters: counters mode says so.
TEST_F(CuptiHostTest, IntegratedGpuFallsBackToTraceMode) {
  StatusOr<MetricConfig> c =
      BuildMetricConfig(api(), "GA10B", CounterSet::kDefault);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("trace mode"), std::string::npos);
}

// Evaluation path on the CPU: an empty image is refused as corrupt before
// CUPTI sees it (CUPTI's parser crashes on damaged images, so files reach it
// only through ParseCounterDataFile, tested in counter_data_file_test.cc).
TEST_F(CuptiHostTest, EmptyCounterDataIsCorruptBeforeCupti) {
  StatusOr<size_t> empty = CounterDataRangeCount(api(), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kCorrupt);

  StatusOr<MetricSet> s = MetricSetForChip("GH100", CounterSet::kDefault);
  ASSERT_TRUE(s.ok());
  std::vector<const char*> names = s->Names();
  StatusOr<ProfilerHost> host = CreateHostWithMetrics(api(), "GH100", names);
  ASSERT_TRUE(host.ok()) << host.status().message();
  StatusOr<std::vector<double>> v = EvaluateRange(api(), *host, {}, 0, names);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kCorrupt);
}

// Loading: a missing library and a null handle are explained.
TEST(CuptiLoadTest, MissingLibraryAndNullHandleAreExplained) {
  StatusOr<CuptiProfilerApi> missing =
      LoadCuptiProfilerApi("librooftrace-no-such-cupti.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(missing.status().message().find("librooftrace-no-such-cupti.so"),
            std::string::npos);
  EXPECT_NE(missing.status().message().find("trace mode"), std::string::npos);
  StatusOr<CuptiProfilerApi> null_handle = ResolveCuptiProfilerApi(nullptr);
  ASSERT_FALSE(null_handle.ok());
  EXPECT_EQ(null_handle.status().code(), StatusCode::kInvalidArgument);
}

// A handle without the CUDA 13 entry points (here: this program, which does
// not link libcupti) is refused, naming the first missing symbol.
TEST(CuptiLoadTest, LibraryWithoutRangeProfilerIsRefused) {
  void* self = dlopen(nullptr, RTLD_NOW);
  ASSERT_NE(self, nullptr);
  StatusOr<CuptiProfilerApi> api = ResolveCuptiProfilerApi(self);
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(api.status().message().find("cuptiGetResultString"),
            std::string::npos)
      << api.status().message();
  EXPECT_NE(api.status().message().find("CUDA 13"), std::string::npos);
}

}  // namespace
}  // namespace rooftrace::counters
