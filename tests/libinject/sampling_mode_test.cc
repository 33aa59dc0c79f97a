// Sampling mode (ROOFTRACE_MODE=sampling) through libinject's real
// resource callback and sender, without a GPU: the Profiler Host API is
// the installed CUPTI's (real PM sampling config images for GH100), the
// device side is fake_pm_sampling.h (CUDA 13's params structs, sizes
// checked), profiler initialization and the chip name come from
// fake_range_profiler.h, CUPTI's clock from a fake cuptiGetTimestamp.
#include "libinject/sampling_mode.h"

#include <cuda.h>
#include <cupti.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "libinject/clock.h"
#include "libinject/producer.h"
#include "libinject/tracer.h"
#include "tests/libinject/counters/fake_pm_sampling.h"
#include "tests/libinject/counters/fake_range_profiler.h"
#include "tests/libinject/mode_test.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace pb = rooftrace::wire;
using counters::fake_pm::pm;

constexpr uint32_t kLaunchCbid = 211;  // cudaLaunchKernel_v7000
CUcontext const kContext = reinterpret_cast<CUcontext>(0x6000);

// CUPTI's clock, 1 s after its epoch when the context is created.
constexpr uint64_t kGpuNow = 1'000'000'000;
CUptiResult FakeTimestamp(uint64_t* t) {
  *t = kGpuNow;
  return CUPTI_SUCCESS;
}

class SamplingModeTest : public ModeTest {
 protected:
  void SetUp() override {
    counters::fake::g = counters::fake::FakeDevice{};
    pm = counters::fake_pm::FakePmDevice{};
    SetUpMode("sampling_mode", InjectMode::kSampling, kContext);
    if (HasFatalFailure()) return;
    counters::fake::InstallFakes(&api_);
    counters::fake_pm::InstallFakes(&api_);
    options_.config.sampling_interval_us = 50;
  }

  // Producer + tracer with sampling mode attached as Start() attaches it,
  // then the context's CONTEXT_CREATED callback.
  void Attach() {
    producer_ = std::make_unique<Producer>(options_);
    CuptiApi cupti;
    cupti.GetTimestamp = FakeTimestamp;
    tracer_ = std::make_unique<CuptiTracer>(producer_.get(), cupti);
    tracer_->SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunchCbid,
                        ApiCallbackKind::kKernelLaunch);
    StatusOr<std::unique_ptr<SamplingMode>> mode =
        SamplingMode::CreateWithApi(api_, producer_->config());
    ASSERT_TRUE(mode.ok()) << mode.status().message();
    tracer_->AttachSampling(std::move(mode).value());
    ASSERT_TRUE(producer_->Start().ok());
    before_ns_ = MonotonicNs();
    CreateContext();
    after_ns_ = MonotonicNs();
  }

  void Launch(uint32_t correlation) {
    Call(kLaunchCbid, correlation, "_Z3addPf");
  }

  uint64_t before_ns_ = 0, after_ns_ = 0;
};

std::vector<pb::PmSample> Samples(const std::vector<pb::Packet>& packets) {
  std::vector<pb::PmSample> out;
  for (const pb::Packet& p : packets) {
    for (const pb::PmSample& s : p.pm_sample_batch().samples()) {
      out.push_back(s);
    }
  }
  return out;
}


std::string Warnings(const std::vector<pb::Packet>& packets) {
  std::string out;
  for (const pb::Packet& p : packets) {
    for (const std::string& w : p.stats().warnings()) out += w + "\n";
  }
  return out;
}

// The first context starts the device's sampler with the configured
// interval and the time trigger; the samples the GPU wrote come out as
// PmSampleBatch packets, each with its device, its interval on the host
// clock (CUPTI's clock measured at context creation) and the chip's
// counters in role order; the Hello and the Stats say MODE_SAMPLING and
// count the samples; launches are recorded as in trace mode.
TEST_F(SamplingModeTest, SamplesTravelAsPmSampleBatchesOnTheHostClock) {
  Attach();
  EXPECT_EQ(pm.enables, 1);
  EXPECT_EQ(pm.starts, 1);
  EXPECT_EQ(pm.interval, 50'000u);
  EXPECT_EQ(pm.trigger, CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL);
  // A second context on the same device starts nothing more.
  CUpti_ResourceData again{};
  again.context = reinterpret_cast<CUcontext>(0x6001);
  CuptiTracer::CallbackTrampoline(tracer_.get(), CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &again);
  EXPECT_EQ(pm.enables, 1);
  Launch(10);
  pm.hardware.push_back({kGpuNow + 1'000, kGpuNow + 51'000, 3});
  pm.hardware.push_back({kGpuNow + 51'000, kGpuNow + 101'000, 4});
  const std::vector<pb::Packet> packets = StopAndRead();
  EXPECT_EQ(pm.stops, 1);
  EXPECT_EQ(pm.disables, 1);

  const std::vector<pb::PmSample> samples = Samples(packets);
  ASSERT_EQ(samples.size(), 2u);
  // GPU now = between before_ns_ and after_ns_ on the host clock.
  EXPECT_GE(samples[0].start_ns(), before_ns_ + 1'000);
  EXPECT_LE(samples[0].start_ns(), after_ns_ + 1'000);
  EXPECT_EQ(samples[0].end_ns() - samples[0].start_ns(), 50'000u);
  EXPECT_EQ(samples[1].start_ns(), samples[0].end_ns());
  EXPECT_EQ(samples[0].device_id(), 0u);
  // GH100's set: DRAM read, DRAM write, tensor pipe cycles, SM cycles (no
  // FMA pipe); the fake evaluates metric m of seed s as s * 1000 + m.
  EXPECT_EQ(samples[0].dram_read_bytes(), 3000.0);
  EXPECT_EQ(samples[0].dram_write_bytes(), 3001.0);
  EXPECT_EQ(samples[0].tensor_pipe(), 3002.0);
  EXPECT_EQ(samples[0].fma_pipe(), 0.0);
  EXPECT_EQ(samples[0].sm_cycles(), 3003.0);
  EXPECT_EQ(samples[1].dram_read_bytes(), 4000.0);

  EXPECT_EQ(packets.front().hello().mode(), pb::MODE_SAMPLING);
  const pb::Stats* stats = LastStats(packets);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->mode(), pb::MODE_SAMPLING);
  EXPECT_EQ(stats->pm_samples(), 2u);
  EXPECT_EQ(stats->pm_samples_lost(), 0u);
  bool launch_sent = false;
  for (const pb::Packet& p : packets) {
    for (const pb::Launch& l : p.kernel_batch().launches()) {
      launch_sent |= l.correlation_id() == 10;
    }
  }
  EXPECT_TRUE(launch_sent);
}

// PM sampling refused (counters restricted to administrators): one line
// with the fix reaches stderr and Stats.warnings, the mode reported is
// trace, no sample is sent, and every launch is still recorded.
TEST_F(SamplingModeTest, SamplingThatCannotStartFallsBackToTraceMode) {
  pm.enable = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  Attach();
  Launch(20);
  Launch(21);
  const std::vector<pb::Packet> packets = StopAndRead();
  EXPECT_EQ(pm.starts, 0);
  EXPECT_TRUE(Samples(packets).empty());
  const std::string warnings = Warnings(packets);
  EXPECT_NE(warnings.find("NVreg_RestrictProfilingToAdminUsers=0"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("sampling mode"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("trace mode"), std::string::npos) << warnings;
  // Said once, however many Stats packets went out.
  EXPECT_EQ(warnings.find("NVreg_RestrictProfilingToAdminUsers=0"),
            warnings.rfind("NVreg_RestrictProfilingToAdminUsers=0"));
  const pb::Stats* stats = LastStats(packets);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->mode(), pb::MODE_TRACE);
  for (int c : stats->capabilities()) {
    EXPECT_NE(c, pb::CAPABILITY_PM_SAMPLING);
  }
  uint64_t launches = 0;
  for (const pb::Packet& p : packets) {
    launches += static_cast<uint64_t>(p.kernel_batch().launches_size());
  }
  EXPECT_EQ(launches, 2u);
}

// A chip without PM sampling's time trigger (GA100) is refused the same
// way: one line, trace mode.
TEST_F(SamplingModeTest, ChipWithoutTimeTriggerFallsBackToTraceMode) {
  counters::fake::g.chip = "GA100";
  Attach();
  const std::vector<pb::Packet> packets = StopAndRead();
  EXPECT_EQ(pm.enables, 0);
  EXPECT_NE(Warnings(packets).find("GA100"), std::string::npos)
      << Warnings(packets);
  EXPECT_EQ(LastStats(packets)->mode(), pb::MODE_TRACE);
}

// A hardware-buffer overflow and a sample not completed at a reset are
// counted as lost and said, never hidden.
TEST_F(SamplingModeTest, LostSamplesAreCountedAndSaid) {
  Attach();
  pm.overflow_at_next_decode = true;
  pm.incomplete_at_next_decode = true;
  pm.hardware.push_back({kGpuNow + 1'000, kGpuNow + 51'000, 1});
  pm.hardware.push_back({kGpuNow + 51'000, kGpuNow + 101'000, 2});
  const std::vector<pb::Packet> packets = StopAndRead();
  const pb::Stats* stats = LastStats(packets);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->pm_samples(), Samples(packets).size());
  EXPECT_GE(stats->pm_samples_lost(), 1u);
  EXPECT_NE(Warnings(packets).find("overflow"), std::string::npos)
      << Warnings(packets);
}

}  // namespace
}  // namespace rooftrace::inject
