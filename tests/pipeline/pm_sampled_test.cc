// PM samples of a sampling-mode session given to its kernels by time
// overlap (pipeline/pm_sampled.h): labels, bytes and counts on joined
// sessions built by hand, and through a RunRecorder that stores a long
// session in windows.
#include "pipeline/pm_sampled.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/join.h"
#include "pipeline/recorder.h"
#include "pipeline/session.h"
#include "proto/field_numbers.h"
#include "tests/support/h100_session.h"
#include "tests/support/joined_on_h100.h"
#include "tests/support/null_sink.h"
#include "tests/support/record_steps.h"

namespace rooftrace {
namespace {

constexpr uint64_t kAdd = 1;  // name iids
constexpr uint64_t kCopy = 2;

Session MakeSession(const std::string& mode = "sampling") {
  Session s = test_support::StartedH100Session(mode);
  s.SetString(kAdd, "vectorized_elementwise_kernel");
  s.SetString(kCopy, "copy_kernel");
  return s;
}

KernelRecord Kernel(uint64_t corr, uint64_t name, uint64_t start,
                    uint64_t end, uint32_t stream = 7) {
  KernelRecord k;
  k.correlation_id = corr;
  k.name_iid = name;
  k.start_ns = start;
  k.end_ns = end;
  k.stream_id = stream;
  k.grid[0] = 132;
  k.grid[1] = k.grid[2] = 1;
  k.block[0] = 256;
  k.block[1] = k.block[2] = 1;
  return k;
}

// A 10 us sample with `read` and `write` DRAM bytes.
PmSampleRecord Sample(uint64_t start, double read, double write) {
  PmSampleRecord p;
  p.start_ns = start;
  p.end_ns = start + 10000;
  p.values = {read, write, 0, 0, 0};
  return p;
}

using test_support::Joined;

Joined JoinAndAttribute(Session* s, PmSampledBytes* pm) {
  return test_support::JoinOnH100(s, [&](Joined* out) {
    pm->Apply(*s, &out->j, nullptr, &out->stats);
  });
}

// Kernel 1 runs alone for 30 us: its three samples are its own (exact).
// Kernels 2 and 3 run on two streams at once (2: 40..60 us, 3: 50..80 us):
// the sample 50..60 us is split 50/50, the others are each one's alone;
// the label states the share of the bytes that came from the split. The
// sample 90..100 us overlaps nothing (unattributed). Nothing is lost.
TEST(PmSampledBytesTest, ExactAloneSplitWhenConcurrentAndSaidSo) {
  Session s = MakeSession();
  s.records().kernels.push_back(Kernel(1, kAdd, 0, 30000));
  s.records().kernels.push_back(Kernel(2, kAdd, 40000, 60000, 7));
  s.records().kernels.push_back(Kernel(3, kCopy, 50000, 80000, 8));
  for (uint64_t t = 0; t < 100000; t += 10000) {
    s.records().pm_samples.push_back(Sample(t, 1000, 400));
  }
  PmSampledBytes pm;
  const Joined r = JoinAndAttribute(&s, &pm);
  std::map<uint64_t, const JoinedKernel*> by;
  for (const JoinedKernel& k : r.j.kernels) by[k.kernel->correlation_id] = &k;

  const JoinedKernel& one = *by.at(1);
  EXPECT_EQ(one.facts.bytes_source, Source::kPmSampled);
  ASSERT_NE(one.sampled, nullptr);
  EXPECT_EQ(one.sampled->label, "pm-sampling (exact)");
  EXPECT_EQ(one.sampled->dram_read_bytes, 3000u);
  EXPECT_EQ(one.sampled->dram_write_bytes, 1200u);
  EXPECT_EQ(one.facts.dram_bytes, 4200u);

  // 2: 40..50 alone, half of 50..60: 1400 + 700 bytes, 700 of them split.
  const JoinedKernel& two = *by.at(2);
  EXPECT_EQ(two.facts.dram_bytes, 2100u);
  EXPECT_EQ(two.sampled->label, "pm-sampling (attributed, error 33.3%)");
  // 3: half of 50..60, then 60..70 and 70..80 alone.
  const JoinedKernel& three = *by.at(3);
  EXPECT_EQ(three.facts.dram_bytes, 3500u);
  EXPECT_EQ(three.sampled->label, "pm-sampling (attributed, error 20.0%)");

  EXPECT_EQ(r.stats[ImportStat::k_kernels_pm_sampled], 3u);
  EXPECT_EQ(r.stats[ImportStat::k_pm_samples_exact], 6u);
  EXPECT_EQ(r.stats[ImportStat::k_pm_samples_split], 1u);
  // 30..40 and 80..100 overlap no kernel.
  EXPECT_EQ(r.stats[ImportStat::k_pm_samples_unattributed], 3u);
  // Every byte sampled went somewhere or is counted unattributed.
  EXPECT_EQ(one.facts.dram_bytes + two.facts.dram_bytes +
                three.facts.dram_bytes + 3 * 1400u,
            10 * 1400u);
}

// The label's error reads back (the report sums it per family).
TEST(PmSampledBytesTest, LabelStatesTheSplitShare) {
  PmKernelCounts c;
  c.exact_samples = 2;
  EXPECT_EQ(PmSampledLabel(c), "pm-sampling (exact)");
  c.split_samples = 1;
  c.values[0] = 800;
  c.values[1] = 200;
  c.split[0] = 125;
  EXPECT_EQ(PmSampledLabel(c), "pm-sampling (attributed, error 12.5%)");
  EXPECT_DOUBLE_EQ(PmSampledErrorFraction(PmSampledLabel(c)), 0.125);
  EXPECT_EQ(PmSampledErrorFraction("pm-sampling (exact)"), 0.0);
  EXPECT_EQ(PmSampledErrorFraction("counters"), 0.0);
}

// A session without samples is left alone; one whose Hello said trace
// (its CUDA, and so its sampling, started after the Hello) is sampled by
// its samples; a kernel with counters of its own keeps them.
TEST(PmSampledBytesTest, SamplesDecideAndOwnCountersWin) {
  {
    Session s = MakeSession();
    s.records().kernels.push_back(Kernel(1, kAdd, 0, 30000));
    PmSampledBytes pm;
    const Joined r = JoinAndAttribute(&s, &pm);
    EXPECT_EQ(r.j.kernels[0].sampled, nullptr);
    EXPECT_EQ(r.j.kernels[0].facts.bytes_source, Source::kNone);
  }
  {
    Session s = MakeSession("trace");
    s.records().kernels.push_back(Kernel(1, kAdd, 0, 30000));
    s.records().pm_samples.push_back(Sample(0, 1000, 400));
    PmSampledBytes pm;
    const Joined r = JoinAndAttribute(&s, &pm);
    EXPECT_EQ(r.j.kernels[0].facts.bytes_source, Source::kPmSampled);
    EXPECT_EQ(r.stats[ImportStat::k_pm_samples_exact], 1u);
  }
  Session s = MakeSession();
  s.records().kernels.push_back(Kernel(1, kAdd, 0, 30000));
  CounterRecord c;
  c.correlation_id = 1;
  c.dram_read_bytes = 77;
  s.records().counters.push_back(c);
  s.records().pm_samples.push_back(Sample(0, 1000, 400));
  PmSampledBytes pm;
  const Joined r = JoinAndAttribute(&s, &pm);
  EXPECT_EQ(r.j.kernels[0].facts.bytes_source, Source::kCounters);
  EXPECT_EQ(r.stats[ImportStat::k_kernels_pm_sampled], 0u);
}

// ------------------------------------------------------ through windows

class KernelRowsSink : public test_support::NullSink {
 public:
  struct Row {
    std::string bytes_source;
    std::optional<int64_t> dram_bytes, dram_read_bytes;
    bool operator==(const Row&) const = default;
  };
  Status FinishRun(const RunRow& run, const ImportStats& s) override {
    flops_sources = run.flops_sources;
    stats = s;
    return OkStatus();
  }
  Status AddKernel(const KernelRow& k) override {
    rows[k.correlation_id.value_or(0)] = {std::string(k.bytes_source),
                                          k.dram_bytes, k.dram_read_bytes};
    return OkStatus();
  }
  Status EndWrite() override {
    ++writes;
    return OkStatus();
  }

  std::map<int64_t, Row> rows;
  int writes = 0;
  ImportStats stats;
  std::string flops_sources;
};

// One forward step (100 us from t): kernels 0..30, 30..60 and 60..103 us
// (the last runs 3 us into the next step, on another stream), the
// device-to-host copy of its tokens, and the step's ten 10 us samples,
// each reading 1000 + step bytes and writing 500. The next step's first
// sample overlaps this step's last kernel: split across the cut.
void AddStep(Session* s, int step) {
  const uint64_t t = 1000000 + static_cast<uint64_t>(step) * 100000;
  const uint64_t corr = static_cast<uint64_t>(step) * 10 + 10;
  s->records().kernels.push_back(Kernel(corr, kAdd, t, t + 30000));
  s->records().kernels.push_back(Kernel(corr + 1, kAdd, t + 30000, t + 60000));
  s->records().kernels.push_back(
      Kernel(corr + 2, kCopy, t + 60000, t + 103000, 8));
  test_support::AddTokenCopy(s, 900000 + static_cast<uint64_t>(step),
                             t + 80000);
  for (uint64_t i = 0; i < 10; ++i) {
    s->records().pm_samples.push_back(
        Sample(t + i * 10000, 1000.0 + step, 500.0));
  }
  s->stats()[ImportStat::k_pm_samples] += 10;
}

std::unique_ptr<KernelRowsSink> Record(size_t flush_records) {
  return test_support::RecordSteps<KernelRowsSink>(
             MakeSession(), 20, flush_records,
             [](Session* s, int step) { AddStep(s, step); })
      .sink;
}

// A long session stored in windows gives every row what the whole-session
// join gives it, the samples split across a window's cut included, and
// counts every sample once.
TEST(PmSampledBytesTest, WindowsGiveTheRowsOfAWholeSessionJoin) {
  const auto whole = Record(0);
  const auto windows = Record(40);
  ASSERT_NE(whole, nullptr);
  ASSERT_NE(windows, nullptr);
  ASSERT_EQ(whole->writes, 1);
  ASSERT_GT(windows->writes, 2);  // the test is about windows
  ASSERT_EQ(whole->rows.size(), 60u);
  EXPECT_EQ(windows->rows, whole->rows);
  for (const ImportStat st :
       {ImportStat::k_kernels_pm_sampled, ImportStat::k_pm_samples_exact,
        ImportStat::k_pm_samples_split,
        ImportStat::k_pm_samples_unattributed}) {
    EXPECT_EQ(windows->stats[st], whole->stats[st]) << ImportStatName(st);
  }
  EXPECT_EQ(whole->stats[ImportStat::k_kernels_pm_sampled], 60u);
  // 200 samples: the first of each step after the first is split.
  EXPECT_EQ(whole->stats[ImportStat::k_pm_samples_split], 19u);
  EXPECT_EQ(whole->stats[ImportStat::k_pm_samples_exact], 181u);
  EXPECT_EQ(whole->stats[ImportStat::k_pm_samples_unattributed], 0u);
  EXPECT_NE(whole->flops_sources.find("pm-sampling"), std::string::npos)
      << whole->flops_sources;
  // Step 0's first kernel: three samples of its own, 1000 + 500 bytes each.
  EXPECT_EQ(whole->rows.at(10).bytes_source, "pm-sampling (exact)");
  EXPECT_EQ(whole->rows.at(10).dram_bytes, 4500);
  EXPECT_EQ(whole->rows.at(10).dram_read_bytes, 3000);
  // Step 1's first kernel shares its first sample with step 0's last
  // kernel (10 us against 3 us): 10/13 of 1501 bytes split, 2 * 1501 its own.
  EXPECT_EQ(whole->rows.at(20).bytes_source,
            "pm-sampling (attributed, error 27.8%)");
  EXPECT_EQ(whole->rows.at(20).dram_bytes, 4157);
}

}  // namespace
}  // namespace rooftrace
