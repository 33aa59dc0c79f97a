// PM sampling without a GPU: the config of sampling mode's metrics comes
// from the installed CUPTI's Profiler Host API (PM sampling host type), the
// device-side entries are the fakes of fake_pm_sampling.h (values seed *
// 1000 + metric index).
#include "libinject/counters/pm_sampler.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/libinject/counters/fake_pm_sampling.h"

namespace rooftrace::counters {
namespace {

using fake_pm::pm;

class PmSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pm = fake_pm::FakePmDevice{};
    StatusOr<CuptiProfilerApi> real =
        LoadCuptiProfilerApi(ROOFTRACE_CUPTI_LIBRARY);
    ASSERT_TRUE(real.ok()) << real.status().message();
    host_api_ = *real;
    api_ = *real;
    fake_pm::InstallFakes(&api_);
  }

  std::unique_ptr<PmSampler> Sampler(PmSamplingOptions o = {},
                                     const char* chip = "GH100") {
    StatusOr<std::unique_ptr<PmSampler>> s =
        PmSampler::Create(api_, 0, chip, o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  CuptiProfilerApi host_api_, api_;
};

// PM sampling has one pass and, by the installed CUPTI, a tight budget:
// every chip family gets DRAM bytes read and written, one of the tensor or
// FMA pipes, and SM cycles, never both pipes. On GH100 the tensor pipe's
// instruction counter does not fit even beside DRAM bytes: its active
// cycles do. GB20x names its DRAM counters dram__bytes_op_*.
TEST_F(PmSamplerTest, EachChipGetsTheRolesThatFitOnePass) {
  for (const char* chip : {"GA102", "AD102", "GH100", "GB100", "GB202"}) {
    StatusOr<PmMetricSet> set = BuildPmMetricSet(host_api_, chip);
    ASSERT_TRUE(set.ok()) << chip << ": " << set.status().message();
    EXPECT_EQ(set->config.passes, 1) << chip;
    ASSERT_GE(set->roles.size(), 3u) << chip;
    EXPECT_EQ(set->roles[0], PmRole::kDramRead) << chip;
    EXPECT_EQ(set->roles[1], PmRole::kDramWrite) << chip;
    EXPECT_EQ(set->names.size() + set->left_out.size(),
              static_cast<size_t>(kNumPmRoles)) << chip;
    std::string all;
    for (const std::string& n : set->names) all += n + " ";
    std::string out;
    for (const std::string& n : set->left_out) out += n + " ";
    std::printf("%s: sampled %s| left out %s\n", chip, all.c_str(),
                out.c_str());
  }
  StatusOr<PmMetricSet> gh100 = BuildPmMetricSet(host_api_, "GH100");
  ASSERT_TRUE(gh100.ok());
  EXPECT_EQ(gh100->names,
            (std::vector<std::string>{"dram__bytes_read.sum",
                                      "dram__bytes_write.sum",
                                      "sm__pipe_tensor_cycles_active.sum",
                                      "sm__cycles_active.sum"}));
  EXPECT_EQ(gh100->left_out,
            (std::vector<std::string>{"sm__inst_executed_pipe_fma.sum"}));
  StatusOr<PmMetricSet> gb202 = BuildPmMetricSet(host_api_, "GB202");
  ASSERT_TRUE(gb202.ok());
  EXPECT_EQ(gb202->names[0], "dram__bytes_op_read.sum");
}

// A name PM sampling does not know is named in the error.
TEST_F(PmSamplerTest, UnknownMetricIsNamed) {
  StatusOr<PmSamplingConfig> c = BuildPmSamplingConfig(
      host_api_, "GH100", {"dram__bytes_read.sum", "no__such_metric.sum"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no__such_metric.sum"),
            std::string::npos)
      << c.status().message();
}

// Start sets the device up as cupti_pmsampling.h asks: enable on the
// device, the config image, the time trigger at the interval, the oldest
// records kept (so an overflow is reported), an image for max_samples; the
// completed samples come back with their timestamps and values.
TEST_F(PmSamplerTest, StartConfiguresAndCollectReturnsEverySample) {
  PmSamplingOptions o;
  o.interval_ns = 50000;
  o.hardware_buffer_bytes = 1 << 20;
  o.max_samples = 16;
  auto s = Sampler(o);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Start().ok());
  EXPECT_EQ(pm.enabled_device, 0u);
  EXPECT_EQ(pm.trigger, CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL);
  EXPECT_EQ(pm.append, CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST);
  EXPECT_EQ(pm.interval, 50000u);
  EXPECT_EQ(pm.hardware_buffer, size_t{1} << 20);
  EXPECT_GT(pm.config_size, 0u);
  EXPECT_EQ(pm.max_samples, 16u);
  EXPECT_EQ(pm.metrics, s->metrics().names.size());
  EXPECT_EQ(pm.starts, 1);
  for (uint64_t i = 0; i < 5; ++i) {
    pm.hardware.push_back({1000 + i * 100, 1100 + i * 100, i + 1});
  }
  std::vector<PmSampleValues> got;
  ASSERT_TRUE(s->Collect(&got).ok());
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[2].start_ns, 1200u);
  EXPECT_EQ(got[2].end_ns, 1300u);
  // GH100: read, write, tensor pipe cycles, SM cycles (metric index 3);
  // the FMA pipe is left out.
  EXPECT_DOUBLE_EQ(got[2].values[static_cast<int>(PmRole::kDramRead)], 3000);
  EXPECT_DOUBLE_EQ(got[2].values[static_cast<int>(PmRole::kTensorPipe)], 3002);
  EXPECT_DOUBLE_EQ(got[2].values[static_cast<int>(PmRole::kFmaPipe)], 0);
  EXPECT_DOUBLE_EQ(got[2].values[static_cast<int>(PmRole::kSmCycles)], 3003);
  EXPECT_EQ(s->stats().samples, 5u);
  // The left-out role is said once.
  const std::vector<std::string> w = s->TakeWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("sm__inst_executed_pipe_fma.sum"), std::string::npos);
}

// More records than one image holds: the full image is evaluated and
// re-initialized, and decoding goes on in the same Collect.
TEST_F(PmSamplerTest, FullImageIsDrainedAndDecodingGoesOn) {
  PmSamplingOptions o;
  o.max_samples = 2;
  auto s = Sampler(o);
  ASSERT_TRUE(s->Start().ok());
  for (uint64_t i = 0; i < 5; ++i) pm.hardware.push_back({i, i + 1, i});
  std::vector<PmSampleValues> got;
  ASSERT_TRUE(s->Collect(&got).ok());
  ASSERT_EQ(got.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(got[i].start_ns, i);
  EXPECT_EQ(pm.decodes, 3);
  EXPECT_EQ(s->stats().decodes, 3u);
}

// An overflow of the hardware buffer and samples populated but not
// completed at a reset are lost: counted, said once each.
TEST_F(PmSamplerTest, OverflowAndIncompleteSamplesAreCountedAndSaid) {
  auto s = Sampler();
  ASSERT_TRUE(s->Start().ok());
  pm.hardware.push_back({0, 10, 1});
  pm.hardware.push_back({10, 20, 2});
  pm.overflow_at_next_decode = true;
  pm.incomplete_at_next_decode = true;
  std::vector<PmSampleValues> got;
  ASSERT_TRUE(s->Collect(&got).ok());
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(s->stats().overflows, 1u);
  EXPECT_EQ(s->stats().samples_incomplete, 1u);
  std::vector<std::string> w = s->TakeWarnings();
  ASSERT_EQ(w.size(), 3u);  // the left-out FMA pipe, then the two losses
  EXPECT_NE(w[1].find("overflowed"), std::string::npos) << w[1];
  EXPECT_NE(w[2].find("not completed"), std::string::npos) << w[2];
}

// Stop collects what the buffer still holds, then disables; nothing is
// called on the device after that.
TEST_F(PmSamplerTest, StopCollectsTheRestAndDisables) {
  auto s = Sampler();
  ASSERT_TRUE(s->Start().ok());
  pm.hardware.push_back({0, 10, 7});
  std::vector<PmSampleValues> got;
  ASSERT_TRUE(s->Stop(&got).ok());
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(pm.stops, 1);
  EXPECT_EQ(pm.disables, 1);
  s.reset();
  EXPECT_EQ(pm.disables, 1);
}

// GA100 and Turing have no time trigger: refused with a line that says so.
TEST_F(PmSamplerTest, ChipsWithoutTimeTriggerAreRefused) {
  for (const char* chip : {"GA100", "TU102"}) {
    StatusOr<std::unique_ptr<PmSampler>> s =
        PmSampler::Create(api_, 0, chip, PmSamplingOptions{});
    ASSERT_FALSE(s.ok()) << chip;
    EXPECT_NE(s.status().message().find("time-based"), std::string::npos);
  }
}

}  // namespace
}  // namespace rooftrace::counters
