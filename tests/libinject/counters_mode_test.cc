// Counters mode inside libinject without a GPU: the real CuptiTracer
// callbacks and Producer sender drive a CountersMode whose device-side Range
// Profiler entries are the fakes of tests/libinject/counters/fake_range_profiler.h
// (metric value = launch ordinal * 1000 + metric index; the Profiler Host
// entries are the installed CUPTI's, so GH100's real default metric set and
// pass count are used). The spool is decoded with libprotobuf.
#include "libinject/counters_mode.h"

#include <cuda.h>
#include <cupti.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "libinject/driver_api.h"
#include "libinject/process.h"
#include "libinject/tracer.h"
#include "tests/libinject/counters/fake_range_profiler.h"
#include "tests/libinject/fake_activity.h"
#include "tests/libinject/mode_test.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace pb = rooftrace::wire;
using counters::fake::FakeDevice;
using counters::fake::g;

constexpr uint32_t kLaunchCbid = 211;
constexpr uint32_t kGraphLaunchCbid = 311;
// nvcc 13's <<<>>> stub (no parameter struct published for it).
constexpr uint32_t kStubLaunchCbid = 505;
constexpr uint32_t kBeginCaptureCbid =
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000;
constexpr uint32_t kEndCaptureCbid =
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000;
CUcontext const kContext = reinterpret_cast<CUcontext>(0x5000);

class CountersModeTest : public ModeTest {
 protected:
  void SetUp() override {
    g = FakeDevice{};
    SetUpMode("counters_mode", InjectMode::kCounters, kContext);
    if (HasFatalFailure()) return;
    counters::fake::InstallFakes(&api_);
    // Every selected launch profiled, as most tests below count launches
    // of one kernel (SamplingPerSignatureIsTheDefault puts the defaults
    // back).
    options_.config.counters_first = 0;
    options_.config.counters_every = 0;
  }

  // Producer + tracer with counters mode attached the way Start() does it;
  // with `activity`, kernel records come from the fake CUPTI activity
  // buffers of fake_activity.h, through a pool sized as Start() sizes it.
  void Attach(bool activity = false) {
    producer_ = std::make_unique<Producer>(options_);
    CuptiApi cupti;
    if (activity) {
      fake::Fake().Reset();
      fake::InstallFakeActivity(&cupti);
    }
    tracer_ = std::make_unique<CuptiTracer>(producer_.get(), cupti);
    if (activity) {
      tracer_->AttachActivity(8, 4u << 20, 32);
      tracer_->MakeBufferTarget();
    }
    tracer_->SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunchCbid,
                        ApiCallbackKind::kKernelLaunch);
    tracer_->SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kGraphLaunchCbid,
                        ApiCallbackKind::kGraphLaunch);
    tracer_->SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kStubLaunchCbid,
                        ApiCallbackKind::kKernelLaunch);
    tracer_->SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kBeginCaptureCbid,
                        ApiCallbackKind::kCaptureBegin);
    tracer_->SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kEndCaptureCbid,
                        ApiCallbackKind::kCaptureEnd);
    StatusOr<std::unique_ptr<CountersMode>> mode = CountersMode::CreateWithApi(
        api_, producer_->config(), producer_->interner());
    ASSERT_TRUE(mode.ok()) << mode.status().message();
    tracer_->AttachCounters(std::move(mode).value());
    ASSERT_TRUE(producer_->Start().ok());
    CreateContext();
  }
};

std::map<uint64_t, pb::KernelCounters> CountersByCorrelation(
    const std::vector<pb::Packet>& packets) {
  std::map<uint64_t, pb::KernelCounters> out;
  for (const pb::Packet& p : packets) {
    for (const pb::KernelCounters& k : p.counter_batch().counters()) {
      EXPECT_TRUE(out.emplace(k.correlation_id(), k).second)
          << "correlation id " << k.correlation_id() << " sent twice";
    }
  }
  return out;
}

std::map<int, uint64_t> FlopsByPrecision(const pb::KernelCounters& k) {
  std::map<int, uint64_t> out;
  for (const pb::PrecisionFlops& f : k.flops()) out[f.precision()] = f.flops();
  return out;
}

std::map<int, pb::RecordCount> Totals(const std::vector<pb::Packet>& packets) {
  std::map<int, pb::RecordCount> out;
  for (const auto& c : packets.back().goodbye().totals()) out[c.kind()] = c;
  return out;
}

// Three profiled launches come out as one KernelCounters each, keyed by
// their correlation ids, with the fake's values turned into bytes, time and
// FLOPs per precision class; metric names travel as interned strings; the
// Hello says counters mode, Stats the pass count, Goodbye the totals.
TEST_F(CountersModeTest, ProfiledLaunchesStreamAsCounterBatches) {
  Attach();
  Call(kLaunchCbid, 10, "_Z4gemmv");
  Call(kLaunchCbid, 11, "_Z4gemmv");
  Call(kLaunchCbid, 12, "_Z4gemmv");
  const std::vector<pb::Packet> packets = StopAndRead();
  ASSERT_FALSE(packets.empty());

  ASSERT_TRUE(packets.front().has_hello());
  const pb::Hello& hello = packets.front().hello();
  EXPECT_EQ(hello.mode(), pb::MODE_COUNTERS);
  std::set<int> caps(hello.capabilities().begin(), hello.capabilities().end());
  EXPECT_TRUE(caps.count(pb::CAPABILITY_COUNTERS));

  const std::map<uint64_t, pb::KernelCounters> got =
      CountersByCorrelation(packets);
  ASSERT_EQ(got.size(), 3u);
  const std::map<uint64_t, std::string> strings = testing::Strings(packets);
  for (uint64_t ordinal = 0; ordinal < 3; ++ordinal) {
    const pb::KernelCounters& k = got.at(10 + ordinal);
    const uint64_t b = ordinal * 1000;
    EXPECT_EQ(k.dram_read_bytes(), b + 0);
    EXPECT_EQ(k.dram_write_bytes(), b + 1);
    EXPECT_EQ(k.gpu_time_ns(), b + 2);
    EXPECT_EQ(k.passes(), 1u);
    const std::map<int, uint64_t> flops = FlopsByPrecision(k);
    EXPECT_EQ(flops.at(pb::PRECISION_FP16_TENSOR), 4 * b + 3 + 4 + 7 + 8);
    EXPECT_EQ(flops.at(pb::PRECISION_TF32_TENSOR), b + 5);
    EXPECT_EQ(flops.at(pb::PRECISION_INT8_TENSOR), b + 6);
    EXPECT_EQ(flops.at(pb::PRECISION_FP8_TENSOR), b + 9);
    ASSERT_EQ(k.metrics_size(), 10);
    EXPECT_EQ(strings.at(k.metrics(0).metric_iid()), "dram__bytes_read.sum");
    EXPECT_EQ(strings.at(k.metrics(1).metric_iid()), "dram__bytes_write.sum");
    EXPECT_DOUBLE_EQ(k.metrics(2).value(), static_cast<double>(b + 2));
  }

  const pb::Stats* stats = LastStats(packets);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->counter_passes(), 1u);
  const std::map<int, pb::RecordCount> totals = Totals(packets);
  EXPECT_EQ(totals.at(pb::RECORD_COUNTERS).seen(), 3u);
  EXPECT_EQ(totals.at(pb::RECORD_COUNTERS).sent(), 3u);
  EXPECT_EQ(totals.at(pb::RECORD_LAUNCH).sent(), 3u);
  // The range profiler was torn down before the producer ended.
  EXPECT_EQ(g.disables, 1);
}

// With a name regex, counters mode profiles only matching kernels; trace
// mode still records every launch so the others keep their timing.
TEST_F(CountersModeTest, SelectionIsCountersModesAndTraceKeepsEveryLaunch) {
  options_.config.kernel_include = "gemm";
  Attach();
  Call(kLaunchCbid, 20, "_Z4gemmv");
  Call(kLaunchCbid, 21, "_Z8layernormv");
  Call(kLaunchCbid, 22, "_Z4gemmv");
  const std::vector<pb::Packet> packets = StopAndRead();

  const std::map<uint64_t, pb::KernelCounters> got =
      CountersByCorrelation(packets);
  EXPECT_EQ(got.size(), 2u);
  EXPECT_TRUE(got.count(20));
  EXPECT_TRUE(got.count(22));
  EXPECT_EQ(g.starts, 2);
  const std::map<int, pb::RecordCount> totals = Totals(packets);
  EXPECT_EQ(totals.at(pb::RECORD_LAUNCH).sent(), 3u);
  EXPECT_EQ(totals.at(pb::RECORD_COUNTERS).filtered(), 1u);
}

// Which kernel records trace mode keeps is decided by the mode at Start(),
// not by when counters mode attaches (CUPTI may attach later, or never): in
// counters mode the name regex selects launches to profile and every kernel
// record is kept; in trace mode it filters kernel records. A bad regex is
// refused in both.
TEST_F(CountersModeTest, CountersModeKeepsEveryKernelRecordWithoutCupti) {
  options_.config.kernel_include = "gemm";
  Producer counters(options_);
  ASSERT_TRUE(counters.Start().ok());
  EXPECT_TRUE(counters.kernel_filter()->Keep("_Z9layernormv"));
  counters.Stop();

  options_.config.mode = InjectMode::kTrace;
  options_.config.sink.path = dir_ + "/trace.rft";
  Producer trace(options_);
  ASSERT_TRUE(trace.Start().ok());
  EXPECT_FALSE(trace.kernel_filter()->Keep("_Z9layernormv"));
  EXPECT_TRUE(trace.kernel_filter()->Keep("_Z4gemmv"));
  trace.Stop();

  options_.config.mode = InjectMode::kCounters;
  options_.config.kernel_include = "gemm(";
  Producer bad(options_);
  EXPECT_FALSE(bad.Start().ok());
}

// A launch that fails (the API returns an error, no kernel ran, so the
// profiler made no range) gets no counters; the next one is profiled as
// usual and keeps its own values.
TEST_F(CountersModeTest, FailedLaunchGetsNoCounters) {
  Attach();
  g.no_kernel_at_next_stop = true;
  Call(kLaunchCbid, 30, "_Z4gemmv", /*result=*/1);
  Call(kLaunchCbid, 31, "_Z4gemmv");
  const std::map<uint64_t, pb::KernelCounters> got =
      CountersByCorrelation(StopAndRead());
  EXPECT_FALSE(got.count(30));
  ASSERT_TRUE(got.count(31));
  EXPECT_EQ(got.at(31).dram_read_bytes(), 0u);  // the first range: ordinal 0
  EXPECT_EQ(got.at(31).dram_write_bytes(), 1u);
}

// Restricted counters: one line with the fix reaches Stats.warnings, no
// launch is profiled, and trace mode goes on recording every launch.
TEST_F(CountersModeTest, InsufficientPrivilegesFallsBackToTraceMode) {
  g.enable = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  Attach();
  Call(kLaunchCbid, 40, "_Z4gemmv");
  Call(kLaunchCbid, 41, "_Z4gemmv");
  const std::vector<pb::Packet> packets = StopAndRead();
  EXPECT_TRUE(CountersByCorrelation(packets).empty());
  EXPECT_EQ(g.starts, 0);
  std::string warnings;
  for (const pb::Packet& p : packets) {
    for (const std::string& w : p.stats().warnings()) warnings += w + "\n";
  }
  EXPECT_NE(warnings.find("NVreg_RestrictProfilingToAdminUsers=0"),
            std::string::npos)
      << warnings;
  EXPECT_EQ(Totals(packets).at(pb::RECORD_LAUNCH).sent(), 2u);
}

// A cudaGraphLaunch is not profiled; the first one says so once.
TEST_F(CountersModeTest, GraphLaunchIsNotedOnce) {
  Attach();
  Call(kGraphLaunchCbid, 50, nullptr);
  Call(kGraphLaunchCbid, 51, nullptr);
  const std::vector<pb::Packet> packets = StopAndRead();
  EXPECT_EQ(g.starts, 0);
  int notes = 0;
  for (const pb::Packet& p : packets) {
    for (const std::string& w : p.stats().warnings()) {
      if (w.find("CUDA graphs") != std::string::npos) ++notes;
    }
  }
  EXPECT_EQ(notes, 1);
}

// NCCL (and other communication) kernels are not profiled by default: the
// kernel replay of a collective whose peers on other GPUs wait for it can
// hang. They keep their trace-mode timing and are counted as filtered;
// ROOFTRACE_COUNTERS_COMMUNICATION=profile profiles them.
TEST_F(CountersModeTest, CommunicationKernelsAreNotProfiledByDefault) {
  Attach();
  Call(kLaunchCbid, 80, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  Call(kLaunchCbid, 81, "_Z4gemmv");
  Call(kLaunchCbid, 82, "_Z27cross_device_reduce_1stageIfLi8EEvPv");
  const std::vector<pb::Packet> packets = StopAndRead();
  const std::map<uint64_t, pb::KernelCounters> got =
      CountersByCorrelation(packets);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_TRUE(got.count(81));
  EXPECT_EQ(g.starts, 1);
  EXPECT_EQ(Totals(packets).at(pb::RECORD_COUNTERS).filtered(), 2u);
  EXPECT_EQ(Totals(packets).at(pb::RECORD_LAUNCH).sent(), 3u);
}

TEST_F(CountersModeTest, CommunicationKernelsAreProfiledWhenAsked) {
  options_.config.counters_communication = true;
  Attach();
  Call(kLaunchCbid, 90, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  Call(kLaunchCbid, 91, "_Z4gemmv");
  EXPECT_EQ(CountersByCorrelation(StopAndRead()).size(), 2u);
}

// In a forked child (CUDA does not survive fork; the parent's CUPTI state
// and counters mode belong to the parent) the callbacks do nothing: no
// range profiler call, no lock of the parent's counters mode is taken, no
// Launch is queued into the parent's producer.
TEST_F(CountersModeTest, ForkedChildLeavesCountersModeAlone) {
  Attach();
  Call(kLaunchCbid, 100, "_Z4gemmv");
  ASSERT_EQ(g.starts, 1);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(5);
    const size_t queued = producer_->queued();
    Call(kLaunchCbid, 101, "_Z4gemmv");
    _exit(g.starts == 1 && producer_->queued() == queued ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child's callback reached counters mode or the queue";
  EXPECT_EQ(CountersByCorrelation(StopAndRead()).size(), 1u);
}

// The fake driver's capturing stream.
CUstream const kCapturingStream = reinterpret_cast<CUstream>(0xCAFE);
CUresult FakeStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  *status = stream == kCapturingStream ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                       : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

uint64_t CountersFiltered(const std::vector<pb::Packet>& packets) {
  return Totals(packets).at(pb::RECORD_COUNTERS).filtered();
}

// A launch into a stream that is being captured (torch.compile
// reduce-overhead, vLLM, static-cache generate) runs no kernel, and
// profiling it would synchronize the context inside the capture: it is not
// profiled (no Start, no DecodeData) and counted as filtered; a launch into
// another stream is profiled as usual.
TEST_F(CountersModeTest, LaunchIntoACapturingStreamIsNotProfiled) {
  Attach();
  DriverApi driver;
  driver.StreamIsCapturing = &FakeStreamIsCapturing;
  tracer_->set_driver_api(driver);
  cudaLaunchKernel_v7000_params captured{};
  captured.stream = kCapturingStream;
  Call(kLaunchCbid, 60, "_Z4gemmv", 0, &captured);
  EXPECT_EQ(g.starts, 0);
  EXPECT_EQ(g.decodes, 0);
  cudaLaunchKernel_v7000_params eager{};
  eager.stream = reinterpret_cast<CUstream>(0xBEEF);
  Call(kLaunchCbid, 61, "_Z4gemmv", 0, &eager);
  EXPECT_EQ(g.starts, 1);
  const std::vector<pb::Packet> packets = StopAndRead();
  const std::map<uint64_t, pb::KernelCounters> got =
      CountersByCorrelation(packets);
  EXPECT_FALSE(got.count(60));
  EXPECT_TRUE(got.count(61));
  EXPECT_EQ(CountersFiltered(packets), 1u);
}

// While any stream capture is open in the process (a capture in global
// mode forbids synchronizing from every thread), no launch is profiled,
// also one whose stream cannot be read (__cudaLaunchKernel); after
// cudaStreamEndCapture profiling resumes. A failed begin opens nothing.
TEST_F(CountersModeTest, NoLaunchIsProfiledWhileAStreamCaptureIsOpen) {
  Attach();
  Call(kBeginCaptureCbid, 70, nullptr, /*result=*/1);  // failed: no capture
  Call(kStubLaunchCbid, 71, "_Z4gemmv");
  EXPECT_EQ(g.starts, 1);
  Call(kBeginCaptureCbid, 72, nullptr);
  Call(kStubLaunchCbid, 73, "_Z4gemmv");
  Call(kStubLaunchCbid, 74, "_Z4gemmv");
  EXPECT_EQ(g.starts, 1);
  EXPECT_EQ(g.decodes, 1);
  Call(kEndCaptureCbid, 75, nullptr);
  Call(kStubLaunchCbid, 76, "_Z4gemmv");
  EXPECT_EQ(g.starts, 2);
  const std::vector<pb::Packet> packets = StopAndRead();
  const std::map<uint64_t, pb::KernelCounters> got =
      CountersByCorrelation(packets);
  EXPECT_TRUE(got.count(71));
  EXPECT_FALSE(got.count(73));
  EXPECT_FALSE(got.count(74));
  EXPECT_TRUE(got.count(76));
  EXPECT_EQ(CountersFiltered(packets), 2u);
}

std::map<uint64_t, int> KernelsByCorrelation(
    const std::vector<pb::Packet>& packets) {
  std::map<uint64_t, int> out;
  for (const pb::Packet& p : packets) {
    for (const pb::Kernel& k : p.kernel_batch().kernels()) {
      ++out[k.correlation_id()];
    }
  }
  return out;
}

// Checks that each of `launches` kernels arrived exactly once and that
// CUPTI (the fake) dropped none; the last Stats packet, null (a failure)
// when there is none.
const pb::Stats* EveryKernelArrivedOnce(const std::vector<pb::Packet>& packets,
                                        size_t launches) {
  const std::map<uint64_t, int> kernels = KernelsByCorrelation(packets);
  EXPECT_EQ(fake::Fake().dropped_total(), 0u);
  EXPECT_EQ(kernels.size(), launches);
  int twice = 0;
  for (const auto& [correlation, n] : kernels) twice += n > 1;
  EXPECT_EQ(twice, 0);
  const pb::Stats* stats = LastStats(packets);
  EXPECT_NE(stats, nullptr);
  return stats;
}

// Run 7 on the H100 (docs/validation/2026-11-24-h100): 1,354 profiled
// launches; every replayed kernel's activity record stays incomplete; the
// sender's periodic flush came about once per ~30 launches (a flush a
// second, 30 ms per profiled launch), with run 7's pool (8 buffers of
// 4 MiB growing to 32). Each kernel must arrive exactly once and CUPTI must
// drop nothing. Before the fix: 896 of 1,354 kernels arrived and CUPTI
// dropped 458 (each default flush stranded a buffer; 32 stranded, the pool
// refused).
TEST_F(CountersModeTest, ReplayedKernelsOfRun7AreAllRecordedOnce) {
  options_.stats_interval_ms = 1;
  Attach(/*activity=*/true);
  constexpr uint32_t kLaunches = 1354;
  constexpr uint32_t kPerFlush = 28;
  for (uint32_t i = 0; i < kLaunches; ++i) {
    const uint32_t correlation = 1000 + i;
    Call(kLaunchCbid, correlation, "_Z4gemmv");
    fake::Fake().AddKernel(correlation, "_Z4gemmv", /*complete=*/false);
    if (i % kPerFlush == kPerFlush - 1) {
      // Longer than any flush period libinject uses: the sender may flush.
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
    }
  }
  const std::vector<pb::Packet> packets = StopAndRead();
  const pb::Stats* stats = EveryKernelArrivedOnce(packets, kLaunches);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->cupti_records_dropped(), 0u);
  EXPECT_EQ(stats->activity_buffers_refused(), 0u);
  EXPECT_EQ(stats->activity_buffers_outstanding(), 0u);
  EXPECT_EQ(stats->activity_buffers_requested(),
            stats->activity_buffers_completed());
  // Every kernel was made from its launch, with the counted duration
  // (the fake's gpu__time_duration: ordinal * 1000 + 2 ns).
  EXPECT_EQ(stats->kernels_from_launch(), kLaunches);
  EXPECT_EQ(stats->kernels_untimed(), 0u);
  for (const pb::Packet& p : packets) {
    for (const pb::Kernel& k : p.kernel_batch().kernels()) {
      EXPECT_GT(k.end_ns(), k.start_ns()) << k.correlation_id();
    }
  }
  // The buffers came back while the process ran, not only at exit.
  EXPECT_GT(fake::Fake().forced_flushes(), 1u);
  EXPECT_EQ(fake::Fake().stranded(), 0u);
}

// Counters mode's default samples per signature: most launches are not
// profiled, so after a profiled (replayed, record never completed) launch
// the application has almost always enqueued more before the sender looks.
// Run 7's shape with sampling (1,354 launches, one in 10 profiled after
// the first 2): every kernel must still arrive once and CUPTI drop none.
TEST_F(CountersModeTest, SampledRunKeepsEveryKernelRecord) {
  options_.stats_interval_ms = 1;
  options_.config.counters_first = 2;
  options_.config.counters_every = 10;
  options_.config.counters_tolerance_pct = 0;
  Attach(/*activity=*/true);
  constexpr uint32_t kLaunches = 1354;
  for (uint32_t i = 0; i < kLaunches; ++i) {
    const uint32_t correlation = 1000 + i;
    const uint32_t ordinal = i + 1;
    const bool profiled = ordinal <= 2 || (ordinal - 2) % 10 == 0;
    Call(kLaunchCbid, correlation, "_Z4gemmv");
    // A replayed kernel's record stays incomplete; the others complete as
    // they run.
    fake::Fake().AddKernel(correlation, "_Z4gemmv", /*complete=*/!profiled,
                           profiled ? 0 : 10 * i + 1, profiled ? 0 : 10 * i + 5);
    if (i % 28 == 27) std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  const std::vector<pb::Packet> packets = StopAndRead();
  const pb::Stats* stats = EveryKernelArrivedOnce(packets, kLaunches);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->cupti_records_dropped(), 0u);
  EXPECT_EQ(stats->activity_buffers_refused(), 0u);
  EXPECT_EQ(stats->kernels_untimed(), 0u);
  std::printf("sampled run: %llu forced flushes, %zu buffers stranded at the "
              "end\n",
              static_cast<unsigned long long>(fake::Fake().forced_flushes()),
              fake::Fake().stranded());
}

// No activity record at all (CUPTI never completed it, or dropped it): the
// profiled launch still gets its Kernel, made from the launch callback
// (symbol, grid, block, dynamic shared memory, API start) and lasting the
// counted gpu__time_duration.
TEST_F(CountersModeTest, ProfiledLaunchGetsItsKernelFromTheLaunch) {
  Attach();
  cudaLaunchKernel_v7000_params params{};
  params.gridDim = dim3(4, 2, 1);
  params.blockDim = dim3(128, 1, 1);
  params.sharedMem = 1024;
  Call(kLaunchCbid, 10, "_Z4gemmv", 0, &params);
  const std::vector<pb::Packet> packets = StopAndRead();
  std::vector<pb::Kernel> kernels;
  std::vector<pb::Launch> launches;
  for (const pb::Packet& p : packets) {
    for (const pb::Kernel& k : p.kernel_batch().kernels()) kernels.push_back(k);
    for (const pb::Launch& l : p.kernel_batch().launches()) {
      launches.push_back(l);
    }
  }
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(launches.size(), 1u);
  const pb::Kernel& k = kernels[0];
  EXPECT_EQ(k.correlation_id(), 10u);
  EXPECT_EQ(testing::Strings(packets).at(k.name_iid()), "_Z4gemmv");
  EXPECT_EQ(k.grid_x(), 4u);
  EXPECT_EQ(k.grid_y(), 2u);
  EXPECT_EQ(k.block_x(), 128u);
  EXPECT_EQ(k.dynamic_shared_memory_bytes(), 1024u);
  EXPECT_EQ(k.start_ns(), launches[0].api_start_ns());
  EXPECT_EQ(k.end_ns() - k.start_ns(),
            CountersByCorrelation(packets).at(10).gpu_time_ns());
  const pb::Stats* stats = LastStats(packets);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->kernels_from_launch(), 1u);
  EXPECT_EQ(Totals(packets).at(pb::RECORD_KERNEL).sent(), 1u);
}

// nvcc 13's <<<>>> stub publishes no launch parameters, so a profiled
// launch made through it has no grid or block of its own; CUPTI's untimed
// record of it has them (and registers): the Kernel sent has them too,
// whichever of the record and the counters comes first (launch 50: the
// record is there before the counters are evaluated; launch 60: the
// counters are evaluated before the record comes).
TEST_F(CountersModeTest, MadeKernelTakesGeometryFromCuptisRecord) {
  options_.flush_interval_ms = 5;
  Attach(/*activity=*/true);
  Call(kStubLaunchCbid, 50, "_Z4gemmv");
  fake::Fake().AddKernel(50, "_Z4gemmv", /*complete=*/false);
  cudaLaunchKernel_v7000_params params{};
  params.gridDim = dim3(8, 1, 1);
  params.blockDim = dim3(64, 1, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Call(kLaunchCbid, 51, "_Z5otherv", 0, &params);  // hands the image over
  fake::Fake().AddKernel(51, "_Z5otherv", /*complete=*/false);
  Call(kStubLaunchCbid, 60, "_Z4gemmv");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Call(kLaunchCbid, 61, "_Z5otherv", 0, &params);  // hands 60's over
  // The sender evaluates 60's counters before its record comes.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fake::Fake().AddKernel(60, "_Z4gemmv", /*complete=*/false);
  fake::Fake().AddKernel(61, "_Z5otherv", /*complete=*/false);
  const std::vector<pb::Packet> packets = StopAndRead();
  std::map<uint64_t, pb::Kernel> kernels;
  for (const pb::Packet& p : packets) {
    for (const pb::Kernel& k : p.kernel_batch().kernels()) {
      EXPECT_TRUE(kernels.emplace(k.correlation_id(), k).second)
          << k.correlation_id() << " sent twice";
    }
  }
  ASSERT_EQ(kernels.size(), 4u);
  for (const uint64_t id : {50u, 60u}) {
    const pb::Kernel& k = kernels.at(id);
    EXPECT_EQ(k.grid_x(), 4u) << id;  // the fake record's
    EXPECT_EQ(k.block_x(), 128u) << id;
    EXPECT_EQ(k.registers_per_thread(), 32u) << id;
    EXPECT_EQ(k.static_shared_memory_bytes(), 256u) << id;
    EXPECT_GT(k.end_ns(), k.start_ns()) << id;  // the counted duration
  }
  // A launch that published its geometry keeps it.
  EXPECT_EQ(kernels.at(51).grid_x(), 8u);
  EXPECT_EQ(LastStats(packets)->kernels_from_launch(), 4u);
  EXPECT_EQ(LastStats(packets)->kernels_untimed(), 0u);
}

// Should CUPTI's record of a profiled kernel carry timestamps after all, it
// is the kernel (the GPU's own timing) and none is made from the launch.
TEST_F(CountersModeTest, TimedCuptiRecordOfAProfiledLaunchIsKept) {
  Attach(/*activity=*/true);
  Call(kLaunchCbid, 30, "_Z4gemmv");
  fake::Fake().AddKernel(30, "_Z4gemmv", /*complete=*/true, 5000, 6000);
  const std::vector<pb::Packet> packets = StopAndRead();
  std::vector<pb::Kernel> kernels;
  for (const pb::Packet& p : packets) {
    for (const pb::Kernel& k : p.kernel_batch().kernels()) kernels.push_back(k);
  }
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].start_ns(), 5000u);
  EXPECT_EQ(kernels[0].end_ns(), 6000u);
  EXPECT_EQ(LastStats(packets)->kernels_from_launch(), 0u);
}

// A profiled launch whose range CUPTI lost has no counters, so nothing to
// make its Kernel from: CUPTI's untimed record is sent as it is at exit,
// once; the kernel is not lost.
TEST_F(CountersModeTest, UntimedRecordWithoutCountersIsSentAtExit) {
  Attach(/*activity=*/true);
  g.lose_on_decode = 0;
  Call(kLaunchCbid, 40, "_Z4gemmv");
  fake::Fake().AddKernel(40, "_Z4gemmv", /*complete=*/false);
  const std::vector<pb::Packet> packets = StopAndRead();
  EXPECT_FALSE(CountersByCorrelation(packets).count(40));
  const std::map<uint64_t, int> kernels = KernelsByCorrelation(packets);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels.at(40), 1);
  EXPECT_EQ(LastStats(packets)->kernels_untimed(), 1u);
}

// Counters mode disabled by a failure mid-run (here cuptiRangeProfilerStart)
// replays nothing more: default flushes resume, so trace mode's records
// keep flowing although the last launch was never settled.
TEST_F(CountersModeTest, DisabledCountersModeFlushesByDefaultAgain) {
  Attach();
  CountersMode* mode = tracer_->counters();
  Call(kLaunchCbid, 120, "_Z4gemmv");
  g.start = CUPTI_ERROR_UNKNOWN;
  Call(kLaunchCbid, 121, "_Z4gemmv");
  ASSERT_TRUE(mode->disabled());
  EXPECT_EQ(mode->SafeActivityFlush(), CountersMode::ActivityFlush::kDefault);
  StopAndRead();
}

// Sampled per kernel signature (ROOFTRACE_COUNTERS_FIRST=1,
// ROOFTRACE_COUNTERS_EVERY=2): the same kernel at two grid sizes is two
// signatures; each has its first launch profiled, then every second one;
// the others are counted as filtered and keep their trace-mode record.
TEST_F(CountersModeTest, LaunchesAreSampledPerSignature) {
  options_.config.counters_first = 1;
  options_.config.counters_every = 2;
  Attach();
  cudaLaunchKernel_v7000_params small{}, large{};
  small.gridDim = dim3(4, 1, 1);
  large.gridDim = dim3(64, 1, 1);
  small.blockDim = large.blockDim = dim3(128, 1, 1);
  for (uint32_t i = 0; i < 5; ++i) {
    Call(kLaunchCbid, 200 + i, "_Z4gemmv", 0, &small);  // 1st, 3rd, 5th
  }
  for (uint32_t i = 0; i < 3; ++i) {
    Call(kLaunchCbid, 300 + i, "_Z4gemmv", 0, &large);  // 1st, 3rd
  }
  const std::vector<pb::Packet> packets = StopAndRead();
  const std::map<uint64_t, pb::KernelCounters> got =
      CountersByCorrelation(packets);
  std::set<uint64_t> ids;
  for (const auto& [id, k] : got) ids.insert(id);
  EXPECT_EQ(ids, (std::set<uint64_t>{200, 202, 204, 300, 302}));
  EXPECT_EQ(g.starts, 5);
  EXPECT_EQ(CountersFiltered(packets), 3u);
  EXPECT_EQ(Totals(packets).at(pb::RECORD_LAUNCH).sent(), 8u);
}

// nvcc 13's <<<>>> launches (callback 505, __cudaLaunchKernel) are sampled
// per signature like the others: a kernel launched at two grid sizes is two
// signatures, each with its first launch profiled. The parameters are laid
// out as CUDA 13.0's libcudart lays them (kernel handle, grid at 8, block
// at 20, args, sharedMem at 40, stream). Before, such a launch was signed
// by its name alone and the second grid's first launch went unprofiled.
TEST_F(CountersModeTest, NvccStubLaunchesAreSampledPerGridSize) {
  options_.config.counters_first = 1;
  options_.config.counters_every = 1000;
  Attach();
  auto stub_params = [](uint32_t grid_x) {
    std::array<uint64_t, 7> words{};  // 56 bytes, 8-aligned
    const uint32_t dims[6] = {grid_x, 1, 1, 256, 1, 1};
    std::memcpy(reinterpret_cast<unsigned char*>(words.data()) + 8, dims,
                sizeof(dims));
    return words;
  };
  const std::array<uint64_t, 7> small = stub_params(4);
  const std::array<uint64_t, 7> large = stub_params(512);
  Call(kStubLaunchCbid, 900, "_Z3addPf", 0, small.data());  // profiled
  Call(kStubLaunchCbid, 901, "_Z3addPf", 0, small.data());
  Call(kStubLaunchCbid, 902, "_Z3addPf", 0, large.data());  // profiled
  Call(kStubLaunchCbid, 903, "_Z3addPf", 0, large.data());
  const std::vector<pb::Packet> packets = StopAndRead();
  std::set<uint64_t> ids;
  for (const auto& [id, k] : CountersByCorrelation(packets)) ids.insert(id);
  EXPECT_EQ(ids, (std::set<uint64_t>{900, 902}));
  EXPECT_EQ(CountersFiltered(packets), 2u);
}

// Counters mode's default samples per signature: the first 2 launches of
// each, then one in 1000.
TEST_F(CountersModeTest, SamplingPerSignatureIsTheDefault) {
  const Config defaults;
  options_.config.counters_first = defaults.counters_first;
  options_.config.counters_every = defaults.counters_every;
  Attach();
  for (uint32_t i = 0; i < 12; ++i) Call(kLaunchCbid, 400 + i, "_Z4gemmv");
  const std::vector<pb::Packet> packets = StopAndRead();
  std::set<uint64_t> ids;
  for (const auto& [id, k] : CountersByCorrelation(packets)) ids.insert(id);
  EXPECT_EQ(ids, (std::set<uint64_t>{400, 401}));
  EXPECT_EQ(CountersFiltered(packets), 10u);
}

// The fake counts differ per launch (ordinal * 1000 + metric index), so the
// first two samples of a signature spread far beyond the 5% tolerance: once
// the sender has evaluated them the signature is profiled ten times as
// often (one in 10 -> every launch). Launch B (another signature) hands
// the image over after the sender asked for it. With the tolerance at 0
// (never sample more) the same launches are profiled one in 10.
TEST_F(CountersModeTest, SignatureWhoseSamplesDisagreeIsSampledMore) {
  for (const uint64_t tolerance : {uint64_t{5}, uint64_t{0}}) {
    SCOPED_TRACE(tolerance);
    g = FakeDevice{};
    options_.config.sink.path =
        dir_ + "/t" + std::to_string(tolerance) + ".rft";
    options_.config.counters_first = 2;
    options_.config.counters_every = 10;
    options_.config.counters_tolerance_pct = tolerance;
    Attach();
    CountersMode* mode = tracer_->counters();
    cudaLaunchKernel_v7000_params a{}, b{};
    a.gridDim = dim3(4, 1, 1);
    b.gridDim = dim3(64, 1, 1);
    a.blockDim = b.blockDim = dim3(128, 1, 1);
    Call(kLaunchCbid, 500, "_Z4gemmv", 0, &a);
    Call(kLaunchCbid, 501, "_Z4gemmv", 0, &a);
    // The sender asks for the image every 5 ms; B's launch hands it over.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Call(kLaunchCbid, 600, "_Z4gemmv", 0, &b);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (tolerance != 0 && mode->SelectionStats().signatures_unsettled == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(mode->SelectionStats().signatures_unsettled,
              tolerance != 0 ? 1u : 0u);
    for (uint32_t i = 2; i < 12; ++i) {
      Call(kLaunchCbid, 500 + i, "_Z4gemmv", 0, &a);  // ordinals 3..12
    }
    const std::vector<pb::Packet> packets = StopAndRead();
    std::set<uint64_t> ids;
    for (const auto& [id, k] : CountersByCorrelation(packets)) {
      if (id >= 500 && id < 600) ids.insert(id);
    }
    // Ordinal 12 is 2 + 10: profiled either way.
    EXPECT_EQ(ids.size(), tolerance != 0 ? 12u : 3u);
    EXPECT_EQ(ids.count(511), 1u);
  }
}

// A copy (or a launch not profiled) after the last profiled launch may
// still be running: its record would come back from a forced flush without
// timestamps, so none is made until a profiled launch has ended after it;
// with no profiled launch since the last flush a default flush is safe.
TEST_F(CountersModeTest, ForcedActivityFlushWaitsUntilEveryLaunchSettled) {
  Attach();
  CountersMode* mode = tracer_->counters();
  EXPECT_EQ(mode->SafeActivityFlush(), CountersMode::ActivityFlush::kDefault);
  Call(kLaunchCbid, 110, "_Z4gemmv");
  EXPECT_EQ(mode->SafeActivityFlush(), CountersMode::ActivityFlush::kForced);
  mode->OnUnprofiledEnqueue();  // an async copy after it
  EXPECT_EQ(mode->SafeActivityFlush(), CountersMode::ActivityFlush::kNone);
  Call(kLaunchCbid, 111, "_Z4gemmv");  // replay ran the copy to completion
  EXPECT_EQ(mode->SafeActivityFlush(), CountersMode::ActivityFlush::kForced);
  mode->ActivityFlushed(CountersMode::ActivityFlush::kForced);
  EXPECT_EQ(mode->SafeActivityFlush(), CountersMode::ActivityFlush::kDefault);
  StopAndRead();
}

}  // namespace
}  // namespace rooftrace::inject
