// The pipeline on sessions a source builds by hand (as an importer does):
// operations' analytic figures go to their longest kernel and only where
// nothing better is known, raw metrics reach the store beside their kernel,
// a source's weight hint decides a GEMM's token count, and the rows reach a
// store through the RunRecorder.
#include <gtest/gtest.h>

#include <string>

#include "pipeline/join.h"
#include "pipeline/recorder.h"
#include "pipeline/session.h"
#include "store/store.h"
#include "store/store_reader.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

// A started session on an H100 with interned names 1..9 set below.
Session MakeSession() {
  Session s("test");
  SessionHeader h;
  h.host = "host";
  h.pid = 42;
  h.mode = "import";
  s.Start(h);
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  s.AddDevice(d);
  s.SetString(1, "flash_fwd_kernel");
  s.SetString(2, "flash_fwd_combine");
  s.SetString(3, "aten::scaled_dot_product_attention");
  s.SetString(4, "b=8 h=12 sq=128 sk=128 d=64");
  s.SetString(5, "smsp__inst_executed_pipe_tensor.sum");
  s.SetString(6, "inst");
  return s;
}

KernelRecord Kernel(uint64_t corr, uint64_t name, uint64_t start,
                    uint64_t end) {
  KernelRecord k;
  k.correlation_id = corr;
  k.name_iid = name;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

// An attention op that ran two kernels: its FLOPs and bytes go to the
// longer one only, labelled analytic, with the op's shape text.
TEST(JoinTest, OperationFiguresGoToItsLongestKernel) {
  Session s = MakeSession();
  SessionRecords& r = s.records();
  r.kernels.push_back(Kernel(10, 1, 1000, 51000));  // 50 us
  r.kernels.push_back(Kernel(11, 2, 52000, 55000));  // 3 us
  OpRecord op;
  op.op_id = 7;
  op.name_iid = 3;
  op.shape_iid = 4;
  op.flops = 1'000'000'000;
  op.min_bytes = 50'000'000;
  op.precision = static_cast<int32_t>(Precision::kFp16Tensor);
  r.ops.push_back(op);
  r.op_links.push_back({10, 7});
  r.op_links.push_back({11, 7});
  const JoinedSession j =
      Join(&s, RoofsFromDatasheet("NVIDIA H100 80GB HBM3"));
  ASSERT_EQ(j.kernels.size(), 2u);
  const JoinedKernel& big = j.kernels[0];
  const JoinedKernel& small = j.kernels[1];
  EXPECT_EQ(big.op, 0);
  EXPECT_EQ(small.op, 0);
  EXPECT_EQ(j.ops[0].kernel_count, 2u);
  EXPECT_EQ(big.facts.flops_source, Source::kAnalytic);
  EXPECT_EQ(big.facts.flops[static_cast<int>(Precision::kFp16Tensor)],
            1'000'000'000u);
  EXPECT_EQ(big.facts.bytes_source, Source::kAnalytic);
  EXPECT_EQ(big.facts.dram_bytes, 50'000'000u);
  EXPECT_EQ(small.facts.flops_source, Source::kNone);
  EXPECT_EQ(small.facts.bytes_source, Source::kNone);
  EXPECT_EQ(j.ops[0].shape, "b=8 h=12 sq=128 sk=128 d=64");
  // 1e9 FLOP / 5e7 B = 20 FLOP/B, below the H100 bf16 ridge: memory bound.
  const Annotation a = j.AnnotationOf(big);
  ASSERT_TRUE(a.ai.has_value());
  EXPECT_DOUBLE_EQ(*a.ai, 20.0);
  EXPECT_EQ(a.bound, Bound::kMemory);
  EXPECT_TRUE(j.any_analytic);
}

// Counters win over an operation's analytic figures.
TEST(JoinTest, CountersWinOverOperationFigures) {
  Session s = MakeSession();
  SessionRecords& r = s.records();
  r.kernels.push_back(Kernel(10, 1, 1000, 51000));
  OpRecord op;
  op.op_id = 7;
  op.flops = 1000;
  op.min_bytes = 100;
  op.precision = static_cast<int32_t>(Precision::kFp16Tensor);
  r.ops.push_back(op);
  r.op_links.push_back({10, 7});
  CounterRecord c;
  c.correlation_id = 10;
  c.dram_read_bytes = 600;
  c.dram_write_bytes = 400;
  c.flops[static_cast<int>(Precision::kFp32)] = 5000;
  c.has_flops = true;
  r.counters.push_back(c);
  const JoinedSession j = Join(&s, Roofs());
  EXPECT_EQ(j.kernels[0].facts.flops_source, Source::kCounters);
  EXPECT_EQ(j.kernels[0].facts.flops[static_cast<int>(Precision::kFp32)],
            5000u);
  EXPECT_EQ(j.kernels[0].facts.flops[static_cast<int>(Precision::kFp16Tensor)],
            0u);
  EXPECT_EQ(j.kernels[0].facts.dram_bytes, 1000u);
  EXPECT_EQ(j.kernels[0].facts.bytes_source, Source::kCounters);
}

// On the H100, CUPTI gave every kernel the Range Profiler replayed start =
// end = 0 (cupti_activity.h: timestamps "could not be collected"), and
// counters mode stored 224 kernels with 0 ms of GPU time. The counted
// gpu__time_duration is the kernel's duration then; a kernel with its own
// timestamps keeps them.
TEST(JoinTest, ReplayedKernelWithoutTimestampsTakesTheCountedTime) {
  Session s = MakeSession();
  SessionRecords& r = s.records();
  r.kernels.push_back(Kernel(10, 1, 0, 0));
  r.kernels.push_back(Kernel(11, 1, 1000, 3000));
  for (uint64_t corr : {10u, 11u}) {
    CounterRecord c;
    c.correlation_id = corr;
    c.dram_read_bytes = 100;
    c.gpu_time_ns = 4500;
    r.counters.push_back(c);
  }
  const JoinedSession j = Join(&s, Roofs());
  ASSERT_EQ(j.kernels.size(), 2u);
  EXPECT_EQ(j.kernels[0].facts.duration_ns, 4500u);
  EXPECT_EQ(j.kernels[1].facts.duration_ns, 2000u);
}

// A GEMM without pointers (an importer's) takes its token count from the
// weight the source named: weight B (a linear layer's weight) leaves m.
TEST(JoinTest, WeightHintDecidesTheTokenCount) {
  Session s = MakeSession();
  SessionRecords& r = s.records();
  r.kernels.push_back(Kernel(10, 1, 1000, 2000));
  LaunchRecord l;
  l.correlation_id = 10;
  l.api_start_ns = 900;
  l.gemm_call_id = 3;
  r.launches.push_back(l);
  GemmRecord g;
  g.call_id = 3;
  g.m = 3;
  g.n = 4096;
  g.k = 4096;
  g.batch = 1;
  g.a_type = g.b_type = g.c_type = g.d_type = 14;  // bf16
  g.compute_type = 68;
  g.weight_operand = 2;
  r.gemms.push_back(g);
  const JoinedSession j = Join(&s, Roofs());
  ASSERT_EQ(j.gemms.size(), 1u);
  EXPECT_EQ(j.gemms[0].weight, 2);
  EXPECT_EQ(j.gemms[0].token_count, 3);
  ASSERT_EQ(j.steps.size(), 1u);
  EXPECT_EQ(j.steps[0].token_count, 3);
  // Without the hint, no pointer repeats: the smaller dimension.
  s.records().gemms[0].weight_operand = 0;
  s.records().gemms[0].m = 4096;
  s.records().gemms[0].n = 3;
  const JoinedSession k = Join(&s, Roofs());
  EXPECT_EQ(k.gemms[0].weight, 0);
  EXPECT_EQ(k.gemms[0].token_count, 3);
}

// Raw metrics travel to the store beside their kernel, exactly as given;
// metrics of no kernel are not stored.
TEST(JoinTest, RawMetricsReachTheStoreBesideTheirKernel) {
  test_support::TempDir dir("join");
  const std::string path = dir.File("runs.sqlite");
  RecorderOptions ro;
  ro.origin = "import:test";
  ro.source_format = "ncu";
  ro.source_file = "test.csv";
  auto rec = CreateStoreRecorder(ro, path);
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  Session s = MakeSession();
  SessionRecords& r = s.records();
  r.kernels.push_back(Kernel(10, 1, 1000, 51000));
  r.kernels.push_back(Kernel(11, 2, 52000, 55000));
  r.metrics.push_back({11, 5, 6, 1234567.0});
  r.metrics.push_back({10, 5, 6, 42.5});
  r.metrics.push_back({10, 6, 0, 7.0});
  r.metrics.push_back({99, 5, 6, 1.0});  // no such kernel
  ASSERT_TRUE((*rec)->AddSession(&s).ok());
  (*rec)->SetSourceSha256("ab12");
  ASSERT_TRUE((*rec)->Finish().ok());
  const int64_t run = (*rec)->run_id();
  rec->reset();

  StoreReader reader;
  ASSERT_TRUE(reader.Open(path, path).ok());
  std::vector<std::string> seen;
  ASSERT_TRUE(reader
                  .ForEachKernelMetric(run,
                                       [&](const KernelMetricRow& m) {
                                         seen.push_back(
                                             std::to_string(m.correlation_id) +
                                             " " + std::string(m.name) + " " +
                                             std::to_string(m.value) + " " +
                                             std::string(m.unit));
                                         return OkStatus();
                                       })
                  .ok());
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "10 smsp__inst_executed_pipe_tensor.sum 42.500000 inst",
                      "10 inst 7.000000 ",
                      "11 smsp__inst_executed_pipe_tensor.sum 1234567.000000 "
                      "inst"}));
  const RunRow row = *reader.ResolveRun(run);
  EXPECT_EQ(row.source_format, "ncu");
  EXPECT_EQ(row.source_file, "test.csv");
  EXPECT_EQ(row.source_sha256, "ab12");
  EXPECT_EQ(row.origin, "import:test");
}

}  // namespace
}  // namespace rooftrace
