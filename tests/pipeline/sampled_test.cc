// Launches counters mode did not profile take the mean counters of the
// profiled launches of their signature before them (pipeline/sampled.h):
// on joined sessions built by hand, and through a RunRecorder that stores a
// long session in windows.
#include "pipeline/sampled.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "pipeline/inherit.h"
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

constexpr uint64_t kElementwise = 1;  // name iids
constexpr uint64_t kGemmName = 2;
constexpr int kFp32 = static_cast<int>(Precision::kFp32);
constexpr int kTc16 = static_cast<int>(Precision::kFp16Tensor);

// A started counters-mode session on an H100.
Session MakeSession() {
  Session s = test_support::StartedH100Session("counters");
  s.SetString(kElementwise, "vectorized_elementwise_kernel");
  s.SetString(kGemmName, "sm90_xmma_gemm_bf16bf16_bf16f32");
  return s;
}

// A kernel launched as `corr`: grid 132, block 256, 32 registers, 10 us.
KernelRecord Kernel(uint64_t corr, uint64_t name, uint64_t start) {
  KernelRecord k;
  k.correlation_id = corr;
  k.name_iid = name;
  k.start_ns = start;
  k.end_ns = start + 10000;
  k.grid[0] = 132;
  k.grid[1] = k.grid[2] = 1;
  k.block[0] = 256;
  k.block[1] = k.block[2] = 1;
  k.registers_per_thread = 32;
  return k;
}

CounterRecord Counters(uint64_t corr, uint64_t read, uint64_t write,
                       uint64_t fp32_flops) {
  CounterRecord c;
  c.correlation_id = corr;
  c.dram_read_bytes = read;
  c.dram_write_bytes = write;
  c.flops[kFp32] = fp32_flops;
  c.has_flops = true;
  return c;
}

using test_support::Joined;

Joined JoinAndSample(Session* s, SampledCounters* sampled) {
  return test_support::JoinOnH100(s, [&](Joined* out) {
    sampled->Apply(*s, &out->j, nullptr, &out->stats);
  });
}

// Six launches of one elementwise signature; launches 2, 3 and 5 were
// profiled. Launch 1 came before any sample and stays blank; 4 takes the
// mean of 2 and 3 (2 of 4 launches), 6 the mean of 2, 3 and 5 (3 of 6):
// never a sample that came after it. The profiled ones keep their own.
TEST(SampledCountersTest, UnprofiledLaunchesTakeTheMeanOfEarlierSamples) {
  Session s = MakeSession();
  for (uint64_t corr = 1; corr <= 6; ++corr) {
    s.records().kernels.push_back(Kernel(corr, kElementwise, corr * 100000));
  }
  s.records().counters.push_back(Counters(2, 1000, 500, 100));
  s.records().counters.push_back(Counters(3, 1100, 500, 110));
  s.records().counters.push_back(Counters(5, 4000, 2000, 400));
  SampledCounters sampled;
  const Joined r = JoinAndSample(&s, &sampled);
  ASSERT_EQ(r.j.kernels.size(), 6u);
  const auto& k = r.j.kernels;

  EXPECT_EQ(k[0].facts.flops_source, Source::kNone);
  EXPECT_EQ(k[0].facts.bytes_source, Source::kNone);
  EXPECT_EQ(k[0].sampled, nullptr);
  EXPECT_EQ(k[1].facts.bytes_source, Source::kCounters);
  EXPECT_EQ(k[1].sampled, nullptr);

  ASSERT_NE(k[3].sampled, nullptr);
  EXPECT_EQ(k[3].facts.bytes_source, Source::kSampled);
  EXPECT_EQ(k[3].facts.flops_source, Source::kSampled);
  EXPECT_EQ(k[3].sampled->samples, 2u);
  EXPECT_EQ(k[3].sampled->launches, 4u);
  EXPECT_EQ(k[3].sampled->dram_read_bytes, 1050u);
  EXPECT_EQ(k[3].sampled->dram_write_bytes, 500u);
  EXPECT_EQ(k[3].facts.dram_bytes, 1550u);
  EXPECT_EQ(k[3].facts.flops[kFp32], 105u);
  // Bytes 1500..1600 (6.5% of 1550), FLOPs 100..110 (9.5% of 105).
  EXPECT_NEAR(k[3].sampled->spread, 10.0 / 105.0, 1e-12);
  EXPECT_EQ(k[3].sampled->label, "counters (sampled 2 of 4, spread 9.5%)");
  const Annotation a3 = r.j.AnnotationOf(k[3]);
  ASSERT_TRUE(a3.ai.has_value());
  EXPECT_DOUBLE_EQ(*a3.ai, 105.0 / 1550.0);

  ASSERT_NE(k[5].sampled, nullptr);
  EXPECT_EQ(k[5].sampled->samples, 3u);
  EXPECT_EQ(k[5].sampled->launches, 6u);
  EXPECT_EQ(k[5].sampled->dram_read_bytes, 2033u);  // 6100 / 3
  EXPECT_EQ(k[5].facts.flops[kFp32], 203u);         // 610 / 3
  EXPECT_EQ(k[5].sampled->label, "counters (sampled 3 of 6, spread 148.4%)");

  EXPECT_TRUE(r.j.any_sampled);
  EXPECT_EQ(r.stats[ImportStat::k_kernels_sampled], 2u);
}

// One sample only: no spread to speak of, the label says so by leaving it
// out.
TEST(SampledCountersTest, OneSampleLabelHasNoSpread) {
  Session s = MakeSession();
  s.records().kernels.push_back(Kernel(1, kElementwise, 100000));
  s.records().kernels.push_back(Kernel(2, kElementwise, 200000));
  s.records().counters.push_back(Counters(1, 1000, 500, 100));
  SampledCounters sampled;
  const Joined r = JoinAndSample(&s, &sampled);
  ASSERT_NE(r.j.kernels[1].sampled, nullptr);
  EXPECT_EQ(r.j.kernels[1].sampled->label, "counters (sampled 1 of 2)");
}

// Another grid, block, dynamic shared memory or name is another signature:
// its launches take nothing from these samples.
TEST(SampledCountersTest, AnotherSignatureTakesNothing) {
  Session s = MakeSession();
  s.records().kernels.push_back(Kernel(1, kElementwise, 100000));
  s.records().counters.push_back(Counters(1, 1000, 500, 100));
  std::vector<KernelRecord> others(4, Kernel(0, kElementwise, 0));
  others[0].grid[0] = 133;
  others[1].block[0] = 128;
  others[2].dynamic_shared_memory_bytes = 1024;
  others[3].name_iid = kGemmName;
  for (size_t i = 0; i < others.size(); ++i) {
    others[i].correlation_id = 10 + i;
    others[i].start_ns = 1000000 + i * 100000;
    others[i].end_ns = others[i].start_ns + 5000;
    s.records().kernels.push_back(others[i]);
  }
  SampledCounters sampled;
  const Joined r = JoinAndSample(&s, &sampled);
  for (size_t i = 1; i < r.j.kernels.size(); ++i) {
    EXPECT_EQ(r.j.kernels[i].sampled, nullptr) << i;
    EXPECT_EQ(r.j.kernels[i].facts.bytes_source, Source::kNone) << i;
  }
  EXPECT_EQ(r.stats[ImportStat::k_kernels_sampled], 0u);
}

// The Kernel record libinject makes for a profiled launch (CUPTI never
// completes a replayed kernel's record) has no register count or static
// shared memory; CUPTI's records of the unprofiled launches do. They are
// the same signature all the same.
TEST(SampledCountersTest, RecordMadeFromTheLaunchMatchesCuptisRecords) {
  Session s = MakeSession();
  KernelRecord profiled = Kernel(1, kElementwise, 100000);
  profiled.registers_per_thread = 0;
  profiled.static_shared_memory_bytes = 0;
  s.records().kernels.push_back(profiled);
  KernelRecord other = Kernel(2, kElementwise, 200000);
  other.static_shared_memory_bytes = 4096;
  s.records().kernels.push_back(other);
  s.records().counters.push_back(Counters(1, 1000, 500, 100));
  SampledCounters sampled;
  const Joined r = JoinAndSample(&s, &sampled);
  ASSERT_NE(r.j.kernels[1].sampled, nullptr);
  EXPECT_EQ(r.j.kernels[1].facts.dram_bytes, 1500u);
}

// A bf16 GEMM call m x 8 x 4096 launched as `corr`, its kernel 20 us.
void AddGemm(Session* s, uint64_t corr, int64_t m, uint64_t start) {
  SessionRecords& r = s->records();
  LaunchRecord l;
  l.correlation_id = corr;
  l.api_start_ns = start - 100;
  l.api_end_ns = start - 90;
  l.gemm_call_id = corr;
  r.launches.push_back(l);
  GemmRecord g;
  g.call_id = corr;
  g.m = m;
  g.n = 8;
  g.k = 4096;
  g.batch = 1;
  g.a_type = g.b_type = g.c_type = g.d_type = 14;  // CUDA_R_16BF
  g.compute_type = 68;                             // CUBLAS_COMPUTE_32F
  g.start_ns = start - 100;
  g.end_ns = start - 90;
  r.gemms.push_back(g);
  KernelRecord k = Kernel(corr, kGemmName, start);
  k.end_ns = start + 20000;
  r.kernels.push_back(k);
}

// The GEMM's shape is part of the signature: the unprofiled call of the
// profiled shape takes the counted FLOPs and DRAM bytes over its analytic
// ones (which are a lower bound for bytes), and a call of another shape
// with the same kernel and launch configuration keeps its analytic figures.
// A sampled kernel does not inherit analytic figures either.
TEST(SampledCountersTest, GemmShapeIsPartOfTheSignatureAndSampledBeatsAnalytic) {
  Session s = MakeSession();
  AddGemm(&s, 10, 4096, 100000);
  AddGemm(&s, 11, 4096, 200000);
  AddGemm(&s, 12, 1024, 300000);
  CounterRecord c;
  c.correlation_id = 10;
  c.dram_read_bytes = 40'000'000;
  c.dram_write_bytes = 100'000;
  c.flops[kTc16] = 268'000'000;
  c.has_flops = true;
  s.records().counters.push_back(c);
  SampledCounters sampled;
  Joined r = JoinAndSample(&s, &sampled);
  ASSERT_EQ(r.j.kernels.size(), 3u);
  const JoinedKernel& same = r.j.kernels[1];
  ASSERT_NE(same.sampled, nullptr);
  EXPECT_EQ(same.facts.flops_source, Source::kSampled);
  EXPECT_EQ(same.facts.flops[kTc16], 268'000'000u);
  EXPECT_EQ(same.facts.bytes_source, Source::kSampled);
  EXPECT_EQ(same.facts.dram_bytes, 40'100'000u);
  const JoinedKernel& other = r.j.kernels[2];
  EXPECT_EQ(other.sampled, nullptr);
  EXPECT_EQ(other.facts.flops_source, Source::kAnalytic);
  EXPECT_FALSE(SignatureFigures::Eligible(same));
}

// Only libinject's counters mode samples by signature: a trace-mode
// session, and an import whose tool chose which kernels to count (ncu,
// nsys), keep their kernels without counters as they are.
TEST(SampledCountersTest, TraceModeAndImportsAreLeftAlone) {
  for (const char* mode : {"trace", "import"}) {
    SCOPED_TRACE(mode);
    Session s(mode);
    SessionHeader h;
    h.mode = mode;
    s.Start(h);
    s.SetString(kElementwise, "vectorized_elementwise_kernel");
    s.records().kernels.push_back(Kernel(1, kElementwise, 100000));
    s.records().kernels.push_back(Kernel(2, kElementwise, 200000));
    s.records().counters.push_back(Counters(1, 1000, 500, 100));
    SampledCounters sampled;
    const Joined r = JoinAndSample(&s, &sampled);
    EXPECT_FALSE(r.j.any_sampled);
    EXPECT_EQ(r.j.kernels[1].sampled, nullptr);
    EXPECT_EQ(r.j.kernels[1].facts.bytes_source, Source::kNone);
  }
}

// The sampled figures of the kernel `corr` in `r` (none: it took none),
// copied: `r` points into records the next window replaces.
std::optional<SampledFigures> SampledOf(const Joined& r, uint64_t corr) {
  for (const JoinedKernel& k : r.j.kernels) {
    if (k.kernel->correlation_id == corr && k.sampled != nullptr) {
      return *k.sampled;
    }
  }
  return std::nullopt;
}

// Windows given to one SampledCounters as a live session's would be: each
// holds the kernels `corrs` (those of `profiled` with counters) once the
// earlier ones are stored and dropped. A kernel that arrives below the
// floor (older than all the session held at the last window: the flush had
// given up on its launch) is counted all the same by every later launch,
// which takes exactly what a whole-session join gives it.
TEST(SampledCountersTest, KernelArrivingBelowTheFloorIsStillCounted) {
  Session live = MakeSession();
  SampledCounters sampled;
  auto window = [&](Session* s, SampledCounters* into,
                    const std::vector<uint64_t>& corrs,
                    const std::vector<uint64_t>& profiled) {
    s->records().kernels.clear();
    s->records().counters.clear();
    for (uint64_t corr : corrs) {
      s->records().kernels.push_back(Kernel(corr, kElementwise, corr * 100000));
    }
    for (uint64_t corr : profiled) {
      s->records().counters.push_back(
          Counters(corr, 1000 + corr, 500, 100 + corr));
    }
    return JoinAndSample(s, into);
  };
  window(&live, &sampled, {10, 20, 30}, {10, 20});
  // Folds samples 10 and 20 and launches 10 to 30 below the floor 40.
  window(&live, &sampled, {40, 50, 60}, {50});
  EXPECT_EQ(sampled.HeldEntries(), 4u);  // launches 40-60, sample 50
  // Kernel 35, profiled, arrives late beside 70 and 80, and is still held
  // (seen again, counted once) in the window of 90.
  std::map<uint64_t, std::optional<SampledFigures>> got;
  {
    const Joined late = window(&live, &sampled, {35, 70, 80}, {35});
    got[70] = SampledOf(late, 70);
    got[80] = SampledOf(late, 80);
  }
  got[90] = SampledOf(window(&live, &sampled, {35, 90}, {35}), 90);

  Session whole_session = MakeSession();
  SampledCounters whole_sampled;
  const Joined whole =
      window(&whole_session, &whole_sampled,
             {10, 20, 30, 35, 40, 50, 60, 70, 80, 90}, {10, 20, 35, 50});
  for (uint64_t corr : {70, 80, 90}) {
    SCOPED_TRACE(corr);
    const std::optional<SampledFigures> want = SampledOf(whole, corr);
    ASSERT_TRUE(got[corr].has_value());
    ASSERT_TRUE(want.has_value());
    EXPECT_EQ(got[corr]->samples, 4u);  // 10, 20, 35, 50
    EXPECT_EQ(got[corr]->samples, want->samples);
    EXPECT_EQ(got[corr]->launches, want->launches);
    EXPECT_EQ(got[corr]->dram_read_bytes, want->dram_read_bytes);
    EXPECT_EQ(got[corr]->dram_write_bytes, want->dram_write_bytes);
    EXPECT_EQ(got[corr]->label, want->label);
  }
  EXPECT_EQ(got[70]->launches, 8u);
  EXPECT_EQ(got[90]->launches, 10u);
}

// ------------------------------------------------------ through windows

// Keeps what the tests read of each kernel row.
class KernelRowsSink : public test_support::NullSink {
 public:
  struct Row {
    std::string flops_source, bytes_source;
    std::optional<int64_t> flops, dram_bytes, dram_read_bytes;
    bool operator==(const Row&) const = default;
  };
  Status FinishRun(const RunRow& run, const ImportStats& stats) override {
    flops_sources = run.flops_sources;
    sampled = stats[ImportStat::k_kernels_sampled];
    return OkStatus();
  }
  Status AddKernel(const KernelRow& k) override {
    rows[k.correlation_id.value_or(0)] = {
        std::string(k.flops_source), std::string(k.bytes_source), k.flops,
        k.dram_bytes, k.dram_read_bytes};
    return OkStatus();
  }
  Status EndWrite() override {
    ++writes;
    return OkStatus();
  }

  std::map<int64_t, Row> rows;
  int writes = 0;
  uint64_t sampled = 0;
  std::string flops_sources;
};

// One forward step of 3 launches of the elementwise signature, then the
// device-to-host copy of its sampled tokens. As counters mode's default
// would: launches 1 and 2 of the signature profiled, then one in 5, each
// sample's bytes growing with its position.
void AddStep(Session* s, int step) {
  const uint64_t t = 1000000 + static_cast<uint64_t>(step) * 100000;
  for (uint64_t i = 0; i < 3; ++i) {
    const uint64_t ordinal = static_cast<uint64_t>(step) * 3 + i + 1;
    const uint64_t corr = ordinal * 10;
    s->records().kernels.push_back(Kernel(corr, kElementwise, t + i * 20000));
    if (ordinal <= 2 || (ordinal - 2) % 5 == 0) {
      s->records().counters.push_back(
          Counters(corr, 1000 + ordinal, 500, 100 + ordinal));
    }
  }
  test_support::AddTokenCopy(s, 900000 + static_cast<uint64_t>(step),
                             t + 80000);
}

std::unique_ptr<KernelRowsSink> Record(size_t flush_records) {
  return test_support::RecordSteps<KernelRowsSink>(
             MakeSession(), 20, flush_records,
             [](Session* s, int step) { AddStep(s, step); })
      .sink;
}

// A long session stored in windows gives every row exactly what the
// whole-session join gives it: the same samples, the same k of n.
TEST(SampledCountersTest, WindowsGiveTheRowsOfAWholeSessionJoin) {
  const auto whole = Record(0);
  const auto windows = Record(24);
  ASSERT_NE(whole, nullptr);
  ASSERT_NE(windows, nullptr);
  ASSERT_EQ(whole->writes, 1);
  ASSERT_GT(windows->writes, 2);  // the test is about windows
  ASSERT_EQ(whole->rows.size(), 60u);
  EXPECT_EQ(windows->rows, whole->rows);
  // 2 + 11 of the 60 launches were profiled; the rest took samples.
  EXPECT_EQ(whole->sampled, 47u);
  EXPECT_EQ(windows->sampled, 47u);
  EXPECT_EQ(whole->flops_sources, "counters+sampled");
  EXPECT_EQ(windows->flops_sources, "counters+sampled");
  // Launch 3 (corr 30): the mean of launches 1 and 2.
  const KernelRowsSink::Row& third = whole->rows.at(30);
  EXPECT_EQ(third.flops_source, "counters (sampled 2 of 3, spread 1.0%)");
  EXPECT_EQ(third.bytes_source, third.flops_source);
  EXPECT_EQ(third.dram_read_bytes, 1002);  // (1001 + 1002) / 2, rounded
  EXPECT_EQ(third.flops, 102);             // (101 + 102) / 2, rounded
  // Launch 60 (corr 600): the 13 samples 1, 2, 7, ..., 57.
  EXPECT_EQ(whole->rows.at(600).flops_source.substr(0, 31),
            "counters (sampled 13 of 60, spr");
  EXPECT_EQ(whole->rows.at(20).flops_source, "counters");
}

// One step of a long session, ended by its tokens' copy: 4 launches,
// alternating between two signatures (grid 132 and 264), with their launch
// records. Per signature the first 2 launches are profiled, then one in 7;
// the FLOPs are near 1e15 per launch so that the running sums pass 2^53
// (where a double sum depends on the order of its terms) within a few
// samples.
void AddLongStep(Session* s, int step) {
  const uint64_t t = 1000000 + static_cast<uint64_t>(step) * 100000;
  for (uint64_t i = 0; i < 4; ++i) {
    const uint64_t ordinal = static_cast<uint64_t>(step) * 4 + i + 1;
    const uint64_t corr = ordinal * 10;
    const uint64_t in_signature = static_cast<uint64_t>(step) * 2 + i / 2 + 1;
    LaunchRecord l;
    l.correlation_id = corr;
    l.api_start_ns = t + i * 20000 - 5000;
    l.api_end_ns = l.api_start_ns + 1000;
    s->records().launches.push_back(l);
    KernelRecord k = Kernel(corr, kElementwise, t + i * 20000);
    if (i % 2 == 1) k.grid[0] = 264;
    s->records().kernels.push_back(k);
    if (in_signature <= 2 || (in_signature - 2) % 7 == 0) {
      s->records().counters.push_back(
          Counters(corr, 1000 + ordinal * 3, 500 + ordinal % 11,
                   1'000'000'000'000'000 + ordinal * 7919));
    }
  }
  test_support::AddTokenCopy(s, 900000 + static_cast<uint64_t>(step),
                             t + 90000);
}

// A long counters-mode session stored window by window keeps about a
// window of samples and launches, not the session's: the older ones are
// folded into their signature's running figures. Every row is still what
// the whole-session join gives it (k of n, spread, means), and the memory
// does not grow with the session.
TEST(SampledCountersTest, LongWindowedSessionHoldsAboutAWindow) {
  constexpr int kSteps = 400;
  auto record = [](size_t flush_records, std::vector<size_t>* held) {
    return test_support::RecordSteps<KernelRowsSink>(
               MakeSession(), kSteps, flush_records,
               [](Session* s, int step) { AddLongStep(s, step); },
               [held](const RunRecorder& r) {
                 if (held != nullptr) {
                   held->push_back(r.sampled_entries_held());
                 }
               })
        .sink;
  };
  const auto whole = record(0, nullptr);
  std::vector<size_t> held;
  const auto windows = record(40, &held);
  ASSERT_NE(whole, nullptr);
  ASSERT_NE(windows, nullptr);
  ASSERT_EQ(whole->rows.size(), 4u * kSteps);
  ASSERT_GT(windows->writes, 50);  // the test is about many windows
  EXPECT_EQ(windows->rows, whole->rows);
  EXPECT_EQ(windows->sampled, whole->sampled);
  // 2 + 114 of each signature's 800 launches were profiled.
  EXPECT_EQ(whole->sampled, 4u * kSteps - 2u * 116u);
  // The second signature's launch 799 (corr 15980): every sample of its
  // signature before it (its launch 800 is the last one profiled).
  EXPECT_EQ(whole->rows.at(15980).flops_source.substr(0, 28),
            "counters (sampled 115 of 799");
  EXPECT_EQ(whole->rows.at(16000).flops_source, "counters");
  // Held: a window's kernels (40 records: about 6 steps' launches, kernels
  // and samples) at most, the same in the session's last quarter as in its
  // second.
  ASSERT_EQ(held.size(), static_cast<size_t>(kSteps));
  const size_t most_second =
      *std::max_element(held.begin() + kSteps / 4, held.begin() + kSteps / 2);
  const size_t most_last =
      *std::max_element(held.end() - kSteps / 4, held.end());
  EXPECT_LE(most_last, 40u);
  EXPECT_LE(most_last, most_second);
}

}  // namespace
}  // namespace rooftrace
