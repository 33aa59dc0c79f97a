// A sink that stops taking rows (a full disk, a read-only store): the run
// must end incomplete with the reason, count what was not stored, and
// write nothing more once a write failed (issue 18, item 1).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/recorder.h"
#include "pipeline/sink.h"
#include "proto/framing.h"
#include "sources/rft/wire_session.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::GenerateLlmTrace;
using test_support::LlmTraceOptions;
using test_support::TraceBuilder;

// Takes rows until the `fail_at`-th kernel (or NVTX range), then refuses
// every write with "disk full". Remembers the final run row.
class FailingSink : public RunSink {
 public:
  enum class Fail { kNever, kKernel, kNvtx };
  FailingSink(Fail what, uint64_t fail_at) : what_(what), fail_at_(fail_at) {}

  StatusOr<int64_t> BeginRun(const RunRow&) override { return 1; }
  Status FinishRun(const RunRow& run, const ImportStats& stats) override {
    finished = run;
    stats_at_finish = stats;
    return OkStatus();
  }
  Status AddRoof(const RoofRow&) override { return Write(); }
  StatusOr<int64_t> AddSession(const SessionRow&,
                               const std::vector<DeviceRow>&) override {
    RT_RETURN_IF_ERROR(Write());
    return ++sessions;
  }
  Status UpdateSession(const SessionRow&) override { return Write(); }
  StatusOr<int64_t> AddGemmCall(const GemmCallRow&) override {
    RT_RETURN_IF_ERROR(Write());
    return 0;
  }
  Status AddStep(const StepRow&) override { return Write(); }
  Status AddKernel(const KernelRow&) override {
    if (what_ == Fail::kKernel && kernels >= fail_at_) failed_ = true;
    RT_RETURN_IF_ERROR(Write());
    ++kernels;
    return OkStatus();
  }
  Status AddKernelMetric(const KernelMetricRow&) override { return Write(); }
  Status AddMemcpy(const MemcpyRow&) override { return Write(); }
  Status AddNvtx(const NvtxRow&) override {
    if (what_ == Fail::kNvtx && nvtx >= fail_at_) failed_ = true;
    RT_RETURN_IF_ERROR(Write());
    ++nvtx;
    return OkStatus();
  }
  Status EndWrite() override { return Write(); }

  uint64_t kernels = 0, nvtx = 0, sessions = 0;
  uint64_t writes_after_failure = 0;
  RunRow finished;
  ImportStats stats_at_finish;

 private:
  Status Write() {
    if (!failed_) return OkStatus();
    ++writes_after_failure;
    return Unavailable("runs.sqlite: cannot insert a kernel: database or disk "
                       "is full");
  }
  Fail what_;
  uint64_t fail_at_;
  bool failed_ = false;
};

uint64_t Stat(const ImportStats& stats, const std::string& name) {
  for (const auto& [n, v] : stats.Named()) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no import statistic named " << name;
  return 0;
}

class RecorderFailureTest : public ::testing::Test {
 protected:
  // A generated LLM stream (`sessions` sessions, one after another) and
  // the kernels and ranges it holds.
  std::string Stream(LlmTraceOptions o, int sessions, uint64_t* kernels,
                     uint64_t* ranges) {
    o.max_batch_records = 64;
    std::string framed;
    for (int i = 0; i < sessions; ++i) {
      o.session.pid = 100 + static_cast<uint32_t>(i);
      TraceBuilder b(o.session);
      const auto truth = GenerateLlmTrace(o, &b);
      *kernels += truth.kernels;
      *ranges += truth.nvtx_ranges;
      framed += b.Framed();
    }
    return framed;
  }

  // Records `framed` into `sink` as one run, packet by packet as the
  // collector's server does (going on after a failed write); returns the
  // first error.
  Status Record(const std::string& framed, FailingSink* sink,
                size_t flush_records = 0) {
    RecorderOptions ro;
    ro.origin = "collect";
    ro.flush_records = flush_records;
    ro.sink = sink;
    auto rec = RunRecorder::Create(ro);
    EXPECT_TRUE(rec.ok());
    recorder_ = std::move(*rec);
    Status first;
    auto keep = [&](Status s) {
      if (first.ok()) first = s;
    };
    wire::FrameReader reader;
    reader.Feed(framed);
    auto wire = std::make_unique<WireSession>("test");
    std::string_view payload;
    while (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
      Status s = wire->OnPacket(payload);
      if (s.ok() && wire->restart_pending()) {
        keep(recorder_->AddSession(&wire->session()));
        wire = std::make_unique<WireSession>("test");
        s = wire->OnPacket(payload);
      }
      EXPECT_TRUE(s.ok()) << s.message();
      keep(recorder_->MaybeFlush(&wire->session()));
    }
    keep(recorder_->AddSession(&wire->session()));
    EXPECT_TRUE(recorder_->Finish().ok());
    return first;
  }

  // A run of sessions kept whole (an ingest's recovered session) into
  // `sink`.
  static StatusOr<std::unique_ptr<RunRecorder>> IngestRecorder(RunSink* sink) {
    RecorderOptions ro;
    ro.origin = "ingest:test";
    ro.flush_records = 0;
    ro.sink = sink;
    return RunRecorder::Create(ro);
  }

  test_support::TempDir dir_{"recorder_failure"};
  std::unique_ptr<RunRecorder> recorder_;
};

// The 50th kernel row fails: the run is stored incomplete, the reason
// names the failure, every kernel not stored is counted, and the second
// session is not written at all.
TEST_F(RecorderFailureTest, KernelWriteFailureMarksRunIncomplete) {
  uint64_t kernels = 0, ranges = 0;
  const std::string path = Stream(LlmTraceOptions{}, 2, &kernels, &ranges);
  FailingSink sink(FailingSink::Fail::kKernel, 50);
  EXPECT_FALSE(Record(path, &sink).ok());
  ASSERT_TRUE(sink.finished.complete.has_value());
  EXPECT_EQ(*sink.finished.complete, 0);
  EXPECT_NE(sink.finished.incomplete_reason.find("disk is full"),
            std::string::npos)
      << sink.finished.incomplete_reason;
  EXPECT_EQ(sink.kernels, 50u);
  // The failing session's kernels and the whole second session.
  EXPECT_EQ(Stat(sink.stats_at_finish, "kernels_not_stored"), kernels);
  EXPECT_EQ(recorder_->kernels_stored(), 0u);
  EXPECT_EQ(Stat(sink.stats_at_finish, "store_write_failures"), 2u);
  // One refused write; then nothing more was tried.
  EXPECT_EQ(sink.writes_after_failure, 1u);
  EXPECT_FALSE(recorder_->write_error().ok());
}

// NVTX rows fail (profile used to lose them silently): counted, run
// incomplete.
TEST_F(RecorderFailureTest, NvtxWriteFailureIsCounted) {
  LlmTraceOptions o;
  o.nvtx = true;
  uint64_t kernels = 0, ranges = 0;
  const std::string path = Stream(o, 1, &kernels, &ranges);
  ASSERT_GT(ranges, 0u);
  FailingSink sink(FailingSink::Fail::kNvtx, 0);
  EXPECT_FALSE(Record(path, &sink).ok());
  EXPECT_EQ(sink.finished.complete, 0);
  EXPECT_EQ(Stat(sink.stats_at_finish, "nvtx_ranges_not_stored"), ranges);
  EXPECT_NE(sink.finished.incomplete_reason.find("NVTX"), std::string::npos)
      << sink.finished.incomplete_reason;
}

// A long session stored in windows: the failing window and every later
// one are counted, their records dropped (memory stays bounded), and
// stored + not stored = every kernel.
TEST_F(RecorderFailureTest, WindowWriteFailureCountsEveryLaterKernel) {
  LlmTraceOptions o;
  o.decode_steps = 40;
  uint64_t kernels = 0, ranges = 0;
  const std::string path = Stream(o, 1, &kernels, &ranges);
  FailingSink sink(FailingSink::Fail::kKernel, 300);
  EXPECT_FALSE(Record(path, &sink, 300).ok());
  EXPECT_EQ(sink.finished.complete, 0);
  const uint64_t lost = Stat(sink.stats_at_finish, "kernels_not_stored");
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(recorder_->kernels_stored() + lost, kernels);
  EXPECT_EQ(sink.writes_after_failure, 1u);
}

// Without a failure nothing changes: complete, no reason, nothing lost.
TEST_F(RecorderFailureTest, NoFailureNoReason) {
  uint64_t kernels = 0, ranges = 0;
  const std::string path = Stream(LlmTraceOptions{}, 1, &kernels, &ranges);
  FailingSink sink(FailingSink::Fail::kNever, 0);
  EXPECT_TRUE(Record(path, &sink).ok());
  EXPECT_EQ(sink.finished.complete, 1);
  EXPECT_EQ(sink.finished.incomplete_reason, "");
  EXPECT_EQ(Stat(sink.stats_at_finish, "kernels_not_stored"), 0u);
  EXPECT_EQ(sink.kernels, kernels);
}

// Issue 37 item 14: a stop signal while a session of millions of records
// (a recovered live buffer) is stored ends its write at once. The stop
// comes as the 50th kernel row is written: that row and those before it
// are made durable (EndWrite), no later row is given, the rest is counted
// as not stored, and a later session given with the flag writes nothing.
TEST_F(RecorderFailureTest, StopEndsTheWriteOfASession) {
  // Raises the stop flag when it takes its `at`-th kernel row.
  class StoppingSink : public FailingSink {
   public:
    StoppingSink(std::atomic<bool>* stop, uint64_t at)
        : FailingSink(Fail::kNever, 0), stop_(stop), at_(at) {}
    Status AddKernel(const KernelRow& row) override {
      RT_RETURN_IF_ERROR(FailingSink::AddKernel(row));
      if (kernels == at_) stop_->store(true);
      return OkStatus();
    }
    Status EndWrite() override {
      ++ends;
      return FailingSink::EndWrite();
    }
    uint64_t ends = 0;

   private:
    std::atomic<bool>* stop_;
    uint64_t at_;
  };
  uint64_t kernels = 0, ranges = 0;
  const std::string framed = Stream(LlmTraceOptions{}, 2, &kernels, &ranges);
  std::atomic<bool> stop{false};
  StoppingSink sink(&stop, 50);
  auto rec = IngestRecorder(&sink);
  ASSERT_TRUE(rec.ok());
  wire::FrameReader reader;
  reader.Feed(framed);
  auto wire = std::make_unique<WireSession>("test");
  std::string_view payload;
  uint64_t first_kernels = 0;
  int sessions = 0;
  while (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
    ASSERT_TRUE(wire->OnPacket(payload).ok());
    if (wire->restart_pending()) {
      first_kernels = wire->session().kernels().size();
      ASSERT_GT(first_kernels, 50u);
      ASSERT_TRUE((*rec)->AddSession(&wire->session(), &stop).ok());
      ++sessions;
      EXPECT_TRUE((*rec)->stopped());
      EXPECT_EQ(sink.kernels, 50u);
      EXPECT_EQ(sink.ends, 1u);  // the 50 rows are made durable
      wire = std::make_unique<WireSession>("test");
      ASSERT_TRUE(wire->OnPacket(payload).ok());
    }
  }
  ASSERT_EQ(sessions, 1);
  ASSERT_TRUE((*rec)->AddSession(&wire->session(), &stop).ok());
  EXPECT_EQ(sink.kernels, 50u);
  EXPECT_EQ(sink.sessions, 1u);
  EXPECT_EQ((*rec)->kernels_stored(), 50u);
  EXPECT_TRUE((*rec)->write_error().ok());
  (*rec)->MarkIncomplete("stopped");
  ASSERT_TRUE((*rec)->Finish().ok());
  EXPECT_EQ(Stat(sink.stats_at_finish, "kernels_not_stored"), kernels - 50);
  EXPECT_EQ(sink.finished.complete, 0);
}

// The same flag, set before the session is given: nothing of it is
// joined or written.
TEST_F(RecorderFailureTest, StopBeforeASessionWritesNothingOfIt) {
  uint64_t kernels = 0, ranges = 0;
  const std::string framed = Stream(LlmTraceOptions{}, 1, &kernels, &ranges);
  std::atomic<bool> stop{true};
  FailingSink sink(FailingSink::Fail::kNever, 0);
  auto rec = IngestRecorder(&sink);
  ASSERT_TRUE(rec.ok());
  wire::FrameReader reader;
  reader.Feed(framed);
  WireSession wire("test");
  std::string_view payload;
  while (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
    ASSERT_TRUE(wire.OnPacket(payload).ok());
  }
  ASSERT_TRUE((*rec)->AddSession(&wire.session(), &stop).ok());
  EXPECT_TRUE((*rec)->stopped());
  EXPECT_EQ(sink.sessions, 0u);
  EXPECT_EQ(sink.kernels, 0u);
  ASSERT_TRUE((*rec)->Finish().ok());
  EXPECT_EQ(Stat(sink.stats_at_finish, "kernels_not_stored"), kernels);
}

}  // namespace
}  // namespace rooftrace
