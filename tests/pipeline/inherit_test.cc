// Kernels without their op inherit the figures of their signature's one
// shape (pipeline/inherit.h): on joined sessions built by hand, and through
// a RunRecorder that stores a long session in windows.
#include "pipeline/inherit.h"

#include <gtest/gtest.h>

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

constexpr uint64_t kGemmName = 1;   // the GEMM kernel's name iid
constexpr uint64_t kOtherName = 2;  // a kernel no call or op ever names

// A started session on an H100 with the two kernel names.
Session MakeSession() {
  Session s = test_support::StartedH100Session("import");
  s.SetString(kGemmName, "sm90_xmma_gemm_bf16bf16_bf16f32");
  s.SetString(kOtherName, "vectorized_elementwise_kernel");
  return s;
}

// A kernel of `name` with the launch configuration every test uses unless
// it changes one field: grid 66x1x1, block 128, 168 registers, 0 + 49,152
// bytes of shared memory.
KernelRecord Kernel(uint64_t corr, uint64_t name, uint64_t start,
                    uint64_t end) {
  KernelRecord k;
  k.correlation_id = corr;
  k.name_iid = name;
  k.start_ns = start;
  k.end_ns = end;
  k.grid[0] = 66;
  k.grid[1] = k.grid[2] = 1;
  k.block[0] = 128;
  k.block[1] = k.block[2] = 1;
  k.registers_per_thread = 168;
  k.dynamic_shared_memory_bytes = 49152;
  return k;
}

// A bf16 cuBLAS call m x n x k launched as correlation id `corr`: its
// launch (host time just before `start`), the call and its kernel.
void AddGemm(Session* s, uint64_t corr, uint64_t call, int64_t m, int64_t n,
             int64_t k, uint64_t start) {
  SessionRecords& r = s->records();
  LaunchRecord l;
  l.correlation_id = corr;
  l.api_start_ns = start - 100;
  l.api_end_ns = start - 90;
  l.gemm_call_id = call;
  r.launches.push_back(l);
  GemmRecord g;
  g.call_id = call;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = 1;
  g.a_type = g.b_type = g.c_type = g.d_type = 14;  // CUDA_R_16BF
  g.compute_type = 68;                             // CUBLAS_COMPUTE_32F
  g.start_ns = start - 100;
  g.end_ns = start - 90;
  r.gemms.push_back(g);
  r.kernels.push_back(Kernel(corr, kGemmName, start, start + 20000));
}

// 2 * 4096 * 8 * 4096 FLOPs, (4096*4096 + 4096*8 + 8*4096) * 2 bytes.
constexpr uint64_t kFlops = 268435456;
constexpr uint64_t kBytes = 33685504;
constexpr int kTc16 = static_cast<int>(Precision::kFp16Tensor);

using test_support::Joined;

Joined JoinAndInherit(Session* s, SignatureFigures* sig) {
  return test_support::JoinOnH100(
      s, [&](Joined* out) { sig->Apply(&out->j, nullptr, &out->stats); });
}

// Two GEMMs of the same shape launched normally, and one kernel of the same
// signature whose launch was never recorded: it takes their FLOPs (16-bit tensor class),
// minimum bytes and shape, labelled inherited, and is annotated with them.
TEST(SignatureFiguresTest, KernelWithoutLaunchInheritsTheOneShape) {
  Session s = MakeSession();
  AddGemm(&s, 10, 1, 4096, 8, 4096, 100000);
  AddGemm(&s, 11, 2, 4096, 8, 4096, 200000);
  s.records().kernels.push_back(Kernel(5, kGemmName, 50000, 70000));
  SignatureFigures sig;
  const Joined r = JoinAndInherit(&s, &sig);
  ASSERT_EQ(r.j.kernels.size(), 3u);
  const JoinedKernel& orphan = r.j.kernels[2];
  EXPECT_EQ(orphan.launch, nullptr);
  EXPECT_EQ(orphan.facts.flops_source, Source::kInherited);
  EXPECT_EQ(orphan.facts.bytes_source, Source::kInherited);
  EXPECT_EQ(orphan.facts.flops[kTc16], kFlops);
  EXPECT_EQ(orphan.facts.dram_bytes, kBytes);
  ASSERT_NE(orphan.inherited_shape, nullptr);
  EXPECT_EQ(*orphan.inherited_shape, "m=4096 n=8 k=4096 batch=1");
  const Annotation a = r.j.AnnotationOf(orphan);
  ASSERT_TRUE(a.ai.has_value());
  EXPECT_DOUBLE_EQ(*a.ai,
                   static_cast<double>(kFlops) / static_cast<double>(kBytes));
  EXPECT_EQ(a.precision, Precision::kFp16Tensor);
  EXPECT_TRUE(r.j.any_inherited);
  EXPECT_EQ(r.stats[ImportStat::k_kernels_inherited], 1u);
  EXPECT_EQ(r.stats[ImportStat::k_kernels_signature_ambiguous], 0u);
  // The teachers keep their own analytic figures.
  EXPECT_EQ(r.j.kernels[0].facts.flops_source, Source::kAnalytic);
  EXPECT_EQ(r.j.kernels[0].inherited_shape, nullptr);
}

// The same kernel name ran two shapes (m = 4096 and m = 1024): its
// signature is ambiguous, so the kernel without its launch stays blank and
// is counted.
TEST(SignatureFiguresTest, AmbiguousSignatureStaysBlankAndIsCounted) {
  Session s = MakeSession();
  AddGemm(&s, 10, 1, 4096, 8, 4096, 100000);
  AddGemm(&s, 11, 2, 1024, 8, 4096, 200000);
  s.records().kernels.push_back(Kernel(5, kGemmName, 50000, 70000));
  SignatureFigures sig;
  const Joined r = JoinAndInherit(&s, &sig);
  const JoinedKernel& orphan = r.j.kernels[2];
  EXPECT_EQ(orphan.facts.flops_source, Source::kNone);
  EXPECT_EQ(orphan.facts.bytes_source, Source::kNone);
  EXPECT_EQ(orphan.inherited_shape, nullptr);
  EXPECT_FALSE(r.j.AnnotationOf(orphan).flops.has_value());
  EXPECT_FALSE(r.j.any_inherited);
  EXPECT_EQ(r.stats[ImportStat::k_kernels_inherited], 0u);
  EXPECT_EQ(r.stats[ImportStat::k_kernels_signature_ambiguous], 1u);
}

// Every part of the signature matters: a kernel of the same name with
// another grid, block, register count or shared memory, and a kernel of
// another name with the same launch configuration, inherit nothing.
TEST(SignatureFiguresTest, AnyOtherSignatureFieldInheritsNothing) {
  Session s = MakeSession();
  AddGemm(&s, 10, 1, 4096, 8, 4096, 100000);
  std::vector<KernelRecord> others(6, Kernel(0, kGemmName, 1000, 2000));
  others[0].grid[0] = 67;
  others[1].block[0] = 256;
  others[2].registers_per_thread = 128;
  others[3].dynamic_shared_memory_bytes = 0;
  others[4].static_shared_memory_bytes = 1024;
  others[5].name_iid = kOtherName;
  for (size_t i = 0; i < others.size(); ++i) {
    others[i].correlation_id = 20 + i;
    s.records().kernels.push_back(others[i]);
  }
  SignatureFigures sig;
  const Joined r = JoinAndInherit(&s, &sig);
  ASSERT_EQ(r.j.kernels.size(), 7u);
  for (size_t i = 1; i < r.j.kernels.size(); ++i) {
    EXPECT_EQ(r.j.kernels[i].facts.flops_source, Source::kNone) << i;
  }
  EXPECT_EQ(r.stats[ImportStat::k_kernels_inherited], 0u);
}

// A GEMM call that ran two kernels of one signature (the call's figures go
// to the longer): the shorter one belongs to the call and must not inherit
// its figures a second time; a kernel with counters keeps its own.
TEST(SignatureFiguresTest, KernelsOfACallOrWithCountersDoNotInherit) {
  Session s = MakeSession();
  AddGemm(&s, 10, 1, 4096, 8, 4096, 100000);
  s.records().kernels.push_back(Kernel(10, kGemmName, 130000, 131000));
  s.records().kernels.push_back(Kernel(30, kGemmName, 150000, 170000));
  CounterRecord c;
  c.correlation_id = 30;
  c.dram_read_bytes = 1000;
  s.records().counters.push_back(c);
  SignatureFigures sig;
  const Joined r = JoinAndInherit(&s, &sig);
  ASSERT_EQ(r.j.kernels.size(), 3u);
  EXPECT_EQ(r.j.kernels[1].gemm, 0);
  EXPECT_EQ(r.j.kernels[1].facts.flops_source, Source::kNone);
  EXPECT_EQ(r.j.kernels[2].facts.bytes_source, Source::kCounters);
  EXPECT_EQ(r.j.kernels[2].facts.flops_source, Source::kNone);
  EXPECT_EQ(r.stats[ImportStat::k_kernels_inherited], 0u);
}

// An operation other than a GEMM teaches too: a kernel without its launch
// of the attention kernel's signature takes the op's FLOPs, bytes,
// precision and shape text.
TEST(SignatureFiguresTest, OperationFiguresAreInheritedWithItsShapeText) {
  Session s = MakeSession();
  s.SetString(3, "flash_fwd_kernel");
  s.SetString(4, "b=8 h=12 sq=128 sk=128 d=64");
  SessionRecords& r = s.records();
  r.kernels.push_back(Kernel(10, 3, 100000, 150000));
  r.kernels.push_back(Kernel(5, 3, 10000, 60000));
  OpRecord op;
  op.op_id = 7;
  op.shape_iid = 4;
  op.flops = 1'000'000'000;
  op.min_bytes = 50'000'000;
  op.precision = static_cast<int32_t>(Precision::kFp16Tensor);
  r.ops.push_back(op);
  r.op_links.push_back({10, 7});
  SignatureFigures sig;
  const Joined j = JoinAndInherit(&s, &sig);
  const JoinedKernel& orphan = j.j.kernels[1];
  EXPECT_EQ(orphan.op, -1);
  EXPECT_EQ(orphan.facts.flops_source, Source::kInherited);
  EXPECT_EQ(orphan.facts.flops[kTc16], 1'000'000'000u);
  EXPECT_EQ(orphan.facts.dram_bytes, 50'000'000u);
  ASSERT_NE(orphan.inherited_shape, nullptr);
  EXPECT_EQ(*orphan.inherited_shape, "b=8 h=12 sq=128 sk=128 d=64");
  EXPECT_EQ(j.stats[ImportStat::k_kernels_inherited], 1u);
}

// ------------------------------------------------------ through windows

// Keeps what the tests read of each kernel row (the row's views die with
// the call).
class KernelRowsSink : public test_support::NullSink {
 public:
  struct Row {
    int64_t correlation_id;
    std::string shape, flops_source, bytes_source;
    std::optional<int64_t> flops;
  };
  Status FinishRun(const RunRow& run, const ImportStats&) override {
    flops_sources = run.flops_sources;
    return OkStatus();
  }
  Status AddKernel(const KernelRow& k) override {
    rows.push_back({k.correlation_id.value_or(0), std::string(k.shape),
                    std::string(k.flops_source), std::string(k.bytes_source),
                    k.flops});
    return OkStatus();
  }
  Status EndWrite() override {
    ++writes;
    return OkStatus();
  }

  std::vector<Row> rows;
  int writes = 0;
  std::string flops_sources;
};

// One forward step: `orphans` kernels of the GEMM's signature without a
// launch, then (when `gemm`) a GEMM 4096 x 8 x 4096 launched normally, then
// the 8-byte device-to-host copy of its sampled tokens. Orphans get
// correlation ids from 1,000,000 up, so they never meet a launch.
void AddStep(Session* s, int step, int orphans, bool gemm) {
  const uint64_t t = 1000000 + static_cast<uint64_t>(step) * 100000;
  for (int i = 0; i < orphans; ++i) {
    s->records().kernels.push_back(
        Kernel(1000000 + static_cast<uint64_t>(step) * 10 + i, kGemmName,
               t + static_cast<uint64_t>(i) * 1000,
               t + static_cast<uint64_t>(i) * 1000 + 500));
  }
  if (gemm) {
    AddGemm(s, 100 + static_cast<uint64_t>(step),
            100 + static_cast<uint64_t>(step), 4096, 8, 4096, t + 20000);
  }
  test_support::AddTokenCopy(s, 500000 + static_cast<uint64_t>(step),
                             t + 60000);
}

// A long session stored in windows of 24 records. Steps 0-9 have only
// kernels without their launch (3 records a step: the first window is
// stored at step 7, before any GEMM); the GEMM that shows their signature's
// shape first runs in step 10. The orphans of the steps stored before that
// window stay blank (rows are not rewritten); every orphan from step 10 on
// inherits, however long after the shape
// was learned (steps 14-19 have no GEMM at all).
TEST(SignatureFiguresTest, WindowsKeepWhatEarlierWindowsLearned) {
  const auto recorded = test_support::RecordSteps<KernelRowsSink>(
      MakeSession(), 20, 24, [](Session* s, int step) {
        AddStep(s, step, 2, step >= 10 && step < 14);
      });
  const KernelRowsSink* rows = recorded.sink.get();
  ASSERT_NE(rows, nullptr);
  // The test is about windows: several writes, the first before step 10.
  ASSERT_GT(rows->writes, 2);
  const ImportStats& stats = recorded.stats;
  ASSERT_GT(stats[ImportStat::k_windows_stored], 1u);
  ASSERT_EQ(rows->rows.size(), 40u + 4u);
  uint64_t blank = 0, inherited = 0;
  for (const auto& r : rows->rows) {
    if (r.correlation_id < 1000000) {
      EXPECT_EQ(r.flops_source, "analytic");
      continue;
    }
    const int step = static_cast<int>((r.correlation_id - 1000000) / 10);
    if (r.flops_source == "none") {
      ++blank;
      EXPECT_LT(step, 10) << r.correlation_id;
      EXPECT_EQ(r.bytes_source, "none");
      EXPECT_EQ(r.shape, "");
      continue;
    }
    ++inherited;
    EXPECT_EQ(r.flops_source, "inherited") << r.correlation_id;
    EXPECT_EQ(r.bytes_source, "inherited");
    EXPECT_EQ(r.shape, "m=4096 n=8 k=4096 batch=1");
    EXPECT_EQ(r.flops, static_cast<int64_t>(kFlops));
  }
  // The first window (steps 0-5 at least) was stored blank.
  EXPECT_GE(blank, 12u);
  EXPECT_GE(inherited, 20u);  // steps 10-19
  EXPECT_EQ(blank + inherited, 40u);
  EXPECT_EQ(stats[ImportStat::k_kernels_inherited], inherited);
  EXPECT_EQ(stats[ImportStat::k_kernels_signature_ambiguous], 0u);
  EXPECT_EQ(rows->flops_sources, "analytic+inherited");
}

// Learning is run-wide: a second session whose kernels all lack their
// launch inherits the shape the first session's GEMMs showed.
TEST(SignatureFiguresTest, LaterSessionsOfTheRunInherit) {
  auto sink = std::make_unique<KernelRowsSink>();
  KernelRowsSink* rows = sink.get();
  RecorderOptions ro;
  ro.origin = "test";
  ro.flush_records = 0;
  auto rec = RunRecorder::Create(ro, std::move(sink));
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  Session first = MakeSession();
  AddGemm(&first, 10, 1, 4096, 8, 4096, 100000);
  ASSERT_TRUE((*rec)->AddSession(&first).ok());
  Session second = MakeSession();
  second.records().kernels.push_back(Kernel(7, kGemmName, 1000, 21000));
  ASSERT_TRUE((*rec)->AddSession(&second).ok());
  ASSERT_EQ(rows->rows.size(), 2u);
  EXPECT_EQ(rows->rows[1].flops_source, "inherited");
  EXPECT_EQ(rows->rows[1].shape, "m=4096 n=8 k=4096 batch=1");
  EXPECT_EQ((*rec)->stats()[ImportStat::k_kernels_inherited], 1u);
}

}  // namespace
}  // namespace rooftrace
