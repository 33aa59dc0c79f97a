// Drives CountersRuntime / CounterSession without a GPU: the Profiler Host
// entries are the installed CUPTI's (real config images and pass counts for
// GH100), the device-side entries are the fakes of fake_range_profiler.h
// (values ordinal * 1000 + metric index).
#include "libinject/counters/counter_session.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/libinject/counters/fake_range_profiler.h"

namespace rooftrace::counters {
namespace {

using fake::FakeDevice;
using fake::g;

class CounterSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g = FakeDevice{};
    StatusOr<CuptiProfilerApi> real =
        LoadCuptiProfilerApi(ROOFTRACE_CUPTI_LIBRARY);
    ASSERT_TRUE(real.ok()) << real.status().message();
    api_ = *real;
    fake::InstallFakes(&api_);
  }

  std::unique_ptr<CountersRuntime> Runtime(
      size_t ranges_per_image, inject::KernelFilterConfig filter = {}) {
    CountersOptions o;
    o.ranges_per_image = ranges_per_image;
    o.filter = filter;
    StatusOr<std::unique_ptr<CountersRuntime>> r =
        CountersRuntime::Create(api_, o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  // One launch through the runtime as libinject's callbacks do it: End
  // follows Begin whether the launch was profiled or not. True when it was.
  bool Launch(CountersRuntime& rt, CUcontext ctx, uint64_t corr,
              std::string_view name = "gemm") {
    const bool profiled =
        rt.OnKernelLaunchBegin(ctx, corr, inject::LaunchInfo{name, "", false});
    rt.OnKernelLaunchEnd(ctx, corr);
    return profiled;
  }

  CuptiProfilerApi api_;
  CUcontext ctx_a_ = reinterpret_cast<CUcontext>(0x1000);
  CUcontext ctx_b_ = reinterpret_cast<CUcontext>(0x2000);
};

std::map<uint64_t, KernelCounters> ByCorrelation(
    std::vector<KernelCounters> v) {
  std::map<uint64_t, KernelCounters> out;
  for (KernelCounters& k : v) out[k.correlation_id] = std::move(k);
  return out;
}

size_t P(Precision p) { return static_cast<size_t>(p); }

// Five launches, two ranges per image: two full images are handed over
// during the run, the last range at the final flush; every launch gets its
// own values (GH100 default set: ordinal*1000 + metric index).
TEST_F(CounterSessionTest, EveryLaunchIsAttributedToItsCorrelationId) {
  auto rt = Runtime(2);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  EXPECT_EQ(rt->passes(), 1u);
  for (uint64_t corr = 100; corr < 105; ++corr) {
    EXPECT_TRUE(Launch(*rt, ctx_a_, corr));
  }
  EXPECT_EQ(g.starts, 5);
  EXPECT_EQ(g.stops, 5);
  EXPECT_EQ(g.decodes, 5);
  // Initial image plus a fresh one after each of the two full images.
  EXPECT_EQ(g.image_inits, 3);
  EXPECT_EQ(g.set_configs, 3);

  std::map<uint64_t, KernelCounters> got = ByCorrelation(rt->Flush(true));
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(g.disables, 1);
  for (uint64_t ordinal = 0; ordinal < 5; ++ordinal) {
    const KernelCounters& k = got.at(100 + ordinal);
    const uint64_t b = ordinal * 1000;
    EXPECT_EQ(k.dram_read_bytes, b + 0);
    EXPECT_EQ(k.dram_write_bytes, b + 1);
    EXPECT_EQ(k.gpu_time_ns, b + 2);
    // fp16/bf16 tensor: hgmma bf16 (3), hgmma fp16 (4), hmma bf16 (7),
    // hmma fp16 (8).
    EXPECT_EQ(k.flops[P(Precision::kFp16Tensor)], 4 * b + 3 + 4 + 7 + 8);
    EXPECT_EQ(k.flops[P(Precision::kTf32Tensor)], b + 5);
    EXPECT_EQ(k.flops[P(Precision::kInt8Tensor)], b + 6);
    EXPECT_EQ(k.flops[P(Precision::kFp8Tensor)], b + 9);
    EXPECT_EQ(k.passes, 1u);
    EXPECT_EQ(k.device_id, 0u);
    EXPECT_EQ(k.raw_values.size(), 10u);
  }
  SessionStats s = rt->session_stats();
  EXPECT_EQ(s.profiled, 5u);
  EXPECT_EQ(s.evaluated, 5u);
  EXPECT_EQ(s.ranges_dropped, 0u);
}

// Restricted counters: one line with the fix, counters mode stands aside,
// launches are no longer touched.
TEST_F(CounterSessionTest, InsufficientPrivilegesFallsBackToTraceMode) {
  g.enable = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  auto rt = Runtime(8);
  Status s = rt->OnContextCreated(ctx_a_, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("NVreg_RestrictProfilingToAdminUsers=0"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(rt->disabled());
  EXPECT_FALSE(Launch(*rt, ctx_a_, 1));
  EXPECT_EQ(g.starts, 0);
  std::vector<std::string> w = rt->TakeWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], s.message());
  EXPECT_TRUE(rt->Flush(true).empty());
}

// Confidential computing reported by the device-support query: never even
// enables the profiler.
TEST_F(CounterSessionTest, UnsupportedDeviceNeverEnables) {
  g.confidential = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  auto rt = Runtime(8);
  Status s = rt->OnContextCreated(ctx_a_, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("confidential"), std::string::npos);
  EXPECT_EQ(g.enables, 0);
  EXPECT_TRUE(rt->disabled());
}

// cuptiProfilerInitialize runs with the first context, not in Create
// (which libinject calls inside InitializeInjection, during cuInit, where
// no driver call may be made); once, however many contexts.
TEST_F(CounterSessionTest, ProfilerIsInitializedAtTheFirstContextNotAtCreate) {
  auto rt = Runtime(8);
  EXPECT_EQ(g.profiler_initializes, 0);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  EXPECT_EQ(g.profiler_initializes, 1);
  ASSERT_TRUE(rt->OnContextCreated(ctx_b_, 1).ok());
  EXPECT_EQ(g.profiler_initializes, 1);
  EXPECT_TRUE(Launch(*rt, ctx_a_, 1));
}

// cuptiProfilerInitialize failing (another profiler API user in-process)
// says the line at the first context and disables counters mode; Create
// itself succeeds.
TEST_F(CounterSessionTest, ProfilerInitializeFailureIsReported) {
  g.profiler_initialize = CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED;
  auto rt = Runtime(8);
  ASSERT_NE(rt, nullptr);
  Status s = rt->OnContextCreated(ctx_a_, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("another CUPTI"), std::string::npos);
  EXPECT_TRUE(rt->disabled());
  EXPECT_EQ(g.enables, 0);
}

// Hardware holds two ranges, the session expected four: the third decode
// overflows. The two stored ranges keep their launches, the lost one is
// counted, and profiling continues into a fresh image.
TEST_F(CounterSessionTest, RangeOverflowDecodesAndContinues) {
  g.hw_capacity = 2;
  auto rt = Runtime(4);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  for (uint64_t corr = 1; corr <= 4; ++corr)
    EXPECT_TRUE(Launch(*rt, ctx_a_, corr));
  std::map<uint64_t, KernelCounters> got = ByCorrelation(rt->Flush(true));
  // Launch 3 (ordinal 2) was dropped by the hardware; launch 4 (ordinal 3)
  // landed in the fresh image.
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got.at(1).dram_read_bytes, 0u);
  EXPECT_EQ(got.at(2).dram_read_bytes, 1000u);
  EXPECT_EQ(got.count(3), 0u);
  EXPECT_EQ(got.at(4).dram_read_bytes, 3000u);
  EXPECT_EQ(rt->session_stats().ranges_dropped, 1u);
  bool said = false;
  for (const std::string& w : rt->TakeWarnings()) {
    said = said || w.find("overflowed") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

// CUPTI stores fewer ranges than launches recorded, with no overflow
// reported: the image's results are dropped, never shifted onto the wrong
// kernels.
TEST_F(CounterSessionTest, RangeCountMismatchDropsInsteadOfMisattributing) {
  g.lose_on_decode = 1;
  auto rt = Runtime(3);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  for (uint64_t corr = 1; corr <= 3; ++corr) Launch(*rt, ctx_a_, corr);
  EXPECT_TRUE(Launch(*rt, ctx_a_, 4));
  std::map<uint64_t, KernelCounters> got = ByCorrelation(rt->Flush(true));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at(4).dram_read_bytes, 3000u);
  EXPECT_EQ(rt->session_stats().ranges_dropped, 3u);
  bool said = false;
  for (const std::string& w : rt->TakeWarnings()) {
    said = said || w.find("rather than attributed") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

// A launch arriving while another is being profiled on the same context is
// not made to wait: it runs unprofiled. Auto range is context-wide, so its
// kernel may be in the profiled launch's range: that launch's counters are
// discarded and counted, not attributed.
TEST_F(CounterSessionTest, ConcurrentLaunchOnSameContextIsNotBlocked) {
  auto rt = Runtime(8);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  ASSERT_TRUE(
      rt->OnKernelLaunchBegin(ctx_a_, 1, inject::LaunchInfo{"k", "", false}));
  bool other = true;
  std::thread t([&] {
    other =
        rt->OnKernelLaunchBegin(ctx_a_, 2, inject::LaunchInfo{"k", "", false});
    rt->OnKernelLaunchEnd(ctx_a_, 2);
  });
  t.join();
  EXPECT_FALSE(other);
  rt->OnKernelLaunchEnd(ctx_a_, 1);
  EXPECT_EQ(rt->session_stats().busy_skipped, 1u);
  EXPECT_EQ(rt->session_stats().concurrent_discarded, 1u);
  EXPECT_TRUE(rt->Flush(true).empty());
}

// Two launching threads on one context (the hardware puts the second
// thread's kernel into the first one's auto range, as the fake does with
// extra_ranges_at_next_decode): the shared range's launch is discarded and
// counted; the launches profiled before it keep their own values, and so
// does the next one, in a fresh image. Launches of another thread that are
// not profiled (unselected) also hold profiling off while they run.
TEST_F(CounterSessionTest, TwoLaunchingThreadsNeverMisattribute) {
  auto rt = Runtime(64);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  EXPECT_TRUE(Launch(*rt, ctx_a_, 1));  // ordinal 0
  EXPECT_TRUE(Launch(*rt, ctx_a_, 2));  // ordinal 1
  // Thread A's launch 3 is being profiled (ordinal 2) ...
  ASSERT_TRUE(
      rt->OnKernelLaunchBegin(ctx_a_, 3, inject::LaunchInfo{"k", "", false}));
  std::thread b([&] {
    // ... when thread B launches 4 on the same context; its kernel runs
    // inside A's range.
    EXPECT_FALSE(
        rt->OnKernelLaunchBegin(ctx_a_, 4, inject::LaunchInfo{"k", "", false}));
    g.extra_ranges_at_next_decode = 1;
    rt->OnKernelLaunchEnd(ctx_a_, 4);
  });
  b.join();
  rt->OnKernelLaunchEnd(ctx_a_, 3);
  EXPECT_TRUE(Launch(*rt, ctx_a_, 5));  // ordinal 3, a fresh image
  // Thread B is inside an unselected launch: A's next launch is not
  // profiled (no waiting), the one after B's launch returned is.
  std::thread c([&] {
    rt->OnKernelLaunchBegin(ctx_a_, 6, inject::LaunchInfo{"k", "", true});
    EXPECT_FALSE(Launch(*rt, ctx_a_, 7));
    rt->OnKernelLaunchEnd(ctx_a_, 6);
  });
  c.join();
  EXPECT_TRUE(Launch(*rt, ctx_a_, 8));  // ordinal 4
  std::map<uint64_t, KernelCounters> got = ByCorrelation(rt->Flush(true));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got.at(1).dram_read_bytes, 0u);
  EXPECT_EQ(got.at(2).dram_read_bytes, 1000u);
  EXPECT_EQ(got.count(3), 0u);
  EXPECT_EQ(got.at(5).dram_read_bytes, 3000u);
  EXPECT_EQ(got.at(8).dram_read_bytes, 4000u);
  const SessionStats s = rt->session_stats();
  EXPECT_EQ(s.concurrent_discarded, 1u);
  EXPECT_EQ(s.busy_skipped, 2u);  // launches 4 and 7
  bool said = false;
  for (const std::string& w : rt->TakeWarnings()) {
    said = said || w.find("another thread launched") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

// Kernels the filter rejects never reach the range profiler.
TEST_F(CounterSessionTest, UnselectedKernelsRunUnprofiled) {
  inject::KernelFilterConfig sel;
  sel.kernel_include = "gemm";
  auto rt = Runtime(8, sel);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  EXPECT_FALSE(Launch(*rt, ctx_a_, 1, "softmax"));
  EXPECT_TRUE(Launch(*rt, ctx_a_, 2, "gemm_bf16"));
  EXPECT_EQ(g.starts, 1);
  EXPECT_EQ(rt->filter_stats().filtered_name, 1u);
  std::vector<KernelCounters> got = rt->Flush(true);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].correlation_id, 2u);
}

// A periodic flush asks for the partial image; it arrives with the next
// launch's end, and a destroyed context's data still reaches the flush.
TEST_F(CounterSessionTest, PartialImagesArriveAfterFlushRequestAndDestroy) {
  auto rt = Runtime(64);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  ASSERT_TRUE(rt->OnContextCreated(ctx_b_, 1).ok());
  EXPECT_TRUE(Launch(*rt, ctx_a_, 1));
  EXPECT_TRUE(rt->Flush().empty());  // requested, not yet handed over
  EXPECT_TRUE(Launch(*rt, ctx_a_, 2));
  std::vector<KernelCounters> first = rt->Flush();
  ASSERT_EQ(first.size(), 2u);

  EXPECT_TRUE(Launch(*rt, ctx_b_, 3));
  rt->OnContextDestroyed(ctx_b_);
  EXPECT_FALSE(Launch(*rt, ctx_b_, 4));  // context gone: not profiled
  std::vector<KernelCounters> second = rt->Flush();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].correlation_id, 3u);
  EXPECT_EQ(second[0].device_id, 1u);
  EXPECT_EQ(rt->session_stats().evaluated, 3u);
}

// Raw images can be kept for recording test data: they come back as .rfcd
// contents that survive the file round trip and evaluate to the same values.
TEST_F(CounterSessionTest, KeptRawImagesRoundTripThroughRfcd) {
  CountersOptions o;
  o.ranges_per_image = 2;
  o.keep_raw_images = 1;
  StatusOr<std::unique_ptr<CountersRuntime>> rt =
      CountersRuntime::Create(api_, o);
  ASSERT_TRUE(rt.ok());
  ASSERT_TRUE((*rt)->OnContextCreated(ctx_a_, 0).ok());
  for (uint64_t corr = 1; corr <= 3; ++corr) Launch(**rt, ctx_a_, corr);
  EXPECT_EQ((*rt)->Flush(true).size(), 3u);
  std::vector<CounterDataFile> raw = (*rt)->TakeRawImages();
  ASSERT_EQ(raw.size(), 1u);  // two images handed over, one kept
  EXPECT_EQ(raw[0].chip, "GH100");
  ASSERT_EQ(raw[0].metric_names.size(), 10u);
  EXPECT_EQ(raw[0].metric_names[0], "dram__bytes_read.sum");

  std::vector<uint8_t> bytes = SerializeCounterDataFile(raw[0]);
  StatusOr<CounterDataFile> back =
      ParseCounterDataFile(bytes.data(), bytes.size(), "kept.rfcd");
  ASSERT_TRUE(back.ok()) << back.status().message();
  std::vector<const char*> names;
  for (const std::string& n : back->metric_names) names.push_back(n.c_str());
  StatusOr<ProfilerHost> host = CreateHostWithMetrics(api_, back->chip, names);
  ASSERT_TRUE(host.ok());
  StatusOr<std::vector<double>> v =
      EvaluateRange(api_, *host, back->image, 1, names);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ((*v)[0], 1000.0);  // second launch, dram__bytes_read
  EXPECT_EQ((*v)[9], 1009.0);
}

// A launch the driver refused made no range: it is not recorded, and the
// ranges after it keep their launches.
TEST_F(CounterSessionTest, FailedLaunchIsNotRecorded) {
  auto rt = Runtime(8);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  ASSERT_TRUE(
      rt->OnKernelLaunchBegin(ctx_a_, 1, inject::LaunchInfo{"k", "", false}));
  g.no_kernel_at_next_stop = true;  // the driver refused the launch
  rt->OnKernelLaunchEnd(ctx_a_, 1, /*launched=*/false);
  EXPECT_TRUE(Launch(*rt, ctx_a_, 2));
  std::vector<KernelCounters> got = rt->Flush(true);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].correlation_id, 2u);
  EXPECT_EQ(rt->session_stats().profiled, 1u);
  EXPECT_EQ(rt->session_stats().ranges_dropped, 0u);
}

// Destroying a context waits for a launch in flight on another thread, keeps
// its range, and no launch starts profiling on the context afterwards.
TEST_F(CounterSessionTest, ContextDestroyWaitsForLaunchInFlight) {
  auto rt = Runtime(8);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  ASSERT_TRUE(
      rt->OnKernelLaunchBegin(ctx_a_, 1, inject::LaunchInfo{"k", "", false}));
  std::thread destroyer([&] { rt->OnContextDestroyed(ctx_a_); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  rt->OnKernelLaunchEnd(ctx_a_, 1);
  destroyer.join();
  EXPECT_EQ(g.disables, 1);
  EXPECT_FALSE(Launch(*rt, ctx_a_, 2));
  std::vector<KernelCounters> got = rt->Flush(true);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].correlation_id, 1u);
}

// A chip this CUPTI does not know: counters mode off with the chip named.
TEST_F(CounterSessionTest, UnknownChipFallsBackWithItsName) {
  g.chip = "GZ999";
  auto rt = Runtime(8);
  Status s = rt->OnContextCreated(ctx_a_, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("GZ999"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("using trace mode"), std::string::npos);
  EXPECT_TRUE(rt->disabled());
}

// ---- one pass without replay (issue 25, item 3)

std::unique_ptr<CountersRuntime> RuntimeWith(const CuptiProfilerApi& api,
                                             CountersOptions o) {
  StatusOr<std::unique_ptr<CountersRuntime>> r = CountersRuntime::Create(api, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

// GH100's default set fits one pass: the session asks for user replay
// (CUPTI neither saves, replays nor restores anything) and every launch
// still gets its own counters.
TEST_F(CounterSessionTest, OnePassSetIsProfiledWithoutReplay) {
  auto rt = RuntimeWith(api_, CountersOptions{});
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  ASSERT_EQ(rt->passes(), 1u);
  EXPECT_EQ(g.replay_mode, CUPTI_UserReplay);
  for (uint64_t corr = 100; corr < 103; ++corr) {
    EXPECT_TRUE(Launch(*rt, ctx_a_, corr));
  }
  std::map<uint64_t, KernelCounters> got = ByCorrelation(rt->Flush(true));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got.at(102).dram_read_bytes, 2000u);
  EXPECT_EQ(rt->session_stats().without_replay, 3u);
  EXPECT_EQ(rt->session_stats().ranges_dropped, 0u);
}

// A set that needs two passes (the full set: SASS counters are never
// scheduled with hardware counters) keeps kernel replay, and so does a
// one-pass set when kernel replay is asked for (ROOFTRACE_COUNTERS_REPLAY=
// kernel, to measure what replay costs on the same build).
TEST_F(CounterSessionTest, TwoPassSetAndKernelChoiceKeepKernelReplay) {
  CountersOptions full;
  full.set = CounterSet::kFull;
  auto rt = RuntimeWith(api_, full);
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  ASSERT_EQ(rt->passes(), 2u);
  EXPECT_EQ(g.replay_mode, CUPTI_KernelReplay);
  EXPECT_TRUE(Launch(*rt, ctx_a_, 100));
  EXPECT_EQ(rt->session_stats().without_replay, 0u);
  rt->Flush(true);

  g = FakeDevice{};
  CountersOptions kernel;
  kernel.replay = ReplayChoice::kKernel;
  auto rt2 = RuntimeWith(api_, kernel);
  ASSERT_TRUE(rt2->OnContextCreated(ctx_b_, 0).ok());
  ASSERT_EQ(rt2->passes(), 1u);
  EXPECT_EQ(g.replay_mode, CUPTI_KernelReplay);
  EXPECT_TRUE(Launch(*rt2, ctx_b_, 200));
  EXPECT_EQ(ByCorrelation(rt2->Flush(true)).size(), 1u);
  EXPECT_EQ(rt2->session_stats().without_replay, 0u);
}

// Should one pass without replay not collect the set after all (Stop says
// not every pass was submitted), that launch's partial range is dropped and
// counted, the launches before it keep theirs, one line says so, and the
// session goes on with kernel replay.
TEST_F(CounterSessionTest, IncompletePassWithoutReplayFallsBackToKernelReplay) {
  auto rt = RuntimeWith(api_, CountersOptions{});
  ASSERT_TRUE(rt->OnContextCreated(ctx_a_, 0).ok());
  ASSERT_EQ(g.replay_mode, CUPTI_UserReplay);
  EXPECT_TRUE(Launch(*rt, ctx_a_, 100));
  g.pass_incomplete_at_next_stop = true;
  EXPECT_TRUE(Launch(*rt, ctx_a_, 101));
  EXPECT_EQ(g.replay_mode, CUPTI_KernelReplay);
  EXPECT_TRUE(Launch(*rt, ctx_a_, 102));
  std::map<uint64_t, KernelCounters> got = ByCorrelation(rt->Flush(true));
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ(got.count(100), 1u);
  EXPECT_EQ(got.count(101), 0u);
  ASSERT_EQ(got.count(102), 1u);
  // The fake's third range: ordinal 2.
  EXPECT_EQ(got.at(102).dram_read_bytes, 2000u);
  const SessionStats s = rt->session_stats();
  EXPECT_EQ(s.ranges_dropped, 1u);
  EXPECT_EQ(s.without_replay, 1u);
  EXPECT_EQ(s.profiled, 2u);
  bool said = false;
  for (const std::string& w : rt->TakeWarnings()) {
    said |= w.find("kernel replay from now on") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace rooftrace::counters
