// EmitRows gives each sink the rows and columns it says it reads
// (RunSink::Needs): everything by default (the store), and for a sink that
// reads less (the in-memory report) no GEMM-call, metric or NVTX rows and
// no store-only kernel columns, the rest of the kernel row unchanged.
#include "pipeline/emit_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/join.h"
#include "pipeline/session.h"
#include "tests/support/null_sink.h"

namespace rooftrace {
namespace {

// Records what it is given; asks for `needs`.
class RecordingSink : public test_support::NullSink {
 public:
  explicit RecordingSink(RowNeeds needs) : needs_(needs) {}
  RowNeeds Needs() const override { return needs_; }
  StatusOr<int64_t> AddGemmCall(const GemmCallRow&) override {
    return ++gemm_calls;
  }
  Status AddKernel(const KernelRow& k) override {
    kernels.push_back(k);
    shapes.emplace_back(k.shape);  // the view is valid during the call only
    names.emplace_back(k.name);
    return OkStatus();
  }
  Status AddKernelMetric(const KernelMetricRow&) override {
    ++metrics;
    return OkStatus();
  }
  Status AddMemcpy(const MemcpyRow&) override {
    ++copies;
    return OkStatus();
  }
  Status AddNvtx(const NvtxRow&) override {
    ++ranges;
    return OkStatus();
  }

  int64_t gemm_calls = 0, metrics = 0, copies = 0, ranges = 0;
  std::vector<KernelRow> kernels;
  std::vector<std::string> shapes, names;

 private:
  RowNeeds needs_;
};

// One GEMM kernel launched in a cuBLAS call inside an NVTX range, with a
// raw metric and a copy after it.
Session MakeSession() {
  Session s("test");
  SessionHeader h;
  h.host = "host";
  h.pid = 42;
  h.mode = "trace";
  s.Start(h);
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  s.AddDevice(d);
  s.SetString(1, "sm90_xmma_gemm_bf16bf16_bf16f32");
  s.SetString(2, "forward");
  s.SetString(3, "inst");
  SessionRecords& r = s.records();
  KernelRecord k;
  k.correlation_id = 10;
  k.name_iid = 1;
  k.start_ns = 1000;
  k.end_ns = 51000;
  k.grid[0] = 132;
  k.block[0] = 384;
  k.registers_per_thread = 168;
  r.kernels.push_back(k);
  LaunchRecord l;
  l.correlation_id = 10;
  l.api_start_ns = 900;
  l.gemm_call_id = 3;
  l.nvtx_range_id = 5;
  l.thread_id = 77;
  r.launches.push_back(l);
  GemmRecord g;
  g.call_id = 3;
  g.m = 8;
  g.n = 4096;
  g.k = 4096;
  g.batch = 1;
  g.a_type = g.b_type = g.c_type = g.d_type = 14;  // bf16
  g.compute_type = 68;
  g.start_ns = 890;
  g.end_ns = 950;
  g.thread_id = 77;
  r.gemms.push_back(g);
  NvtxRecord n;
  n.range_id = 5;
  n.name_iid = 2;
  n.start_ns = 100;
  n.end_ns = 60000;
  n.thread_id = 77;
  r.nvtx.push_back(n);
  r.metrics.push_back({10, 3, 0, 42.0});
  MemcpyRecord m;
  m.correlation_id = 11;
  m.start_ns = 52000;
  m.end_ns = 53000;
  m.bytes = 64;
  r.memcpys.push_back(m);
  return s;
}

RowNeeds Fewer() {
  RowNeeds n;
  n.gemm_calls = false;
  n.kernel_details = false;
  n.kernel_metrics = false;
  n.nvtx = false;
  return n;
}

TEST(EmitRowsTest, SinkGetsOnlyTheRowsAndColumnsItNeeds) {
  Session full_session = MakeSession();
  const JoinedSession full_join =
      Join(&full_session, RoofsFromDatasheet("NVIDIA H100 80GB HBM3"));
  RowContext full_context;
  RecordingSink all{RowNeeds()};
  ASSERT_TRUE(
      EmitRows(&full_session, full_join, nullptr, &full_context, &all).ok());

  Session less_session = MakeSession();
  const JoinedSession less_join =
      Join(&less_session, RoofsFromDatasheet("NVIDIA H100 80GB HBM3"));
  RowContext less_context;
  RecordingSink less(Fewer());
  ASSERT_TRUE(
      EmitRows(&less_session, less_join, nullptr, &less_context, &less).ok());

  // Everything for the default sink.
  EXPECT_EQ(all.gemm_calls, 1);
  EXPECT_EQ(all.metrics, 1);
  EXPECT_EQ(all.ranges, 1);
  EXPECT_EQ(all.copies, 1);
  ASSERT_EQ(all.kernels.size(), 1u);
  const KernelRow& a = all.kernels[0];
  EXPECT_EQ(a.gemm_call_id, 1);
  EXPECT_EQ(a.grid[0], 132);
  EXPECT_EQ(a.registers_per_thread, 168);
  EXPECT_EQ(a.thread_id, 77);
  EXPECT_EQ(a.api_start_ns, 900);
  EXPECT_TRUE(a.flops_by_precision[static_cast<int>(Precision::kFp16Tensor)]);

  // Kernel and copy rows only, without the store-only columns.
  EXPECT_EQ(less.gemm_calls, 0);
  EXPECT_EQ(less.metrics, 0);
  EXPECT_EQ(less.ranges, 0);
  EXPECT_EQ(less.copies, 1);
  ASSERT_EQ(less.kernels.size(), 1u);
  const KernelRow& b = less.kernels[0];
  EXPECT_FALSE(b.gemm_call_id);
  EXPECT_EQ(b.grid[0], 0);
  EXPECT_EQ(b.registers_per_thread, 0);
  EXPECT_FALSE(b.thread_id);
  EXPECT_FALSE(b.api_start_ns);
  for (const auto& f : b.flops_by_precision) EXPECT_FALSE(f);

  // What the report reads is the same.
  EXPECT_EQ(less.names[0], all.names[0]);
  EXPECT_EQ(less.shapes[0], "m=8 n=4096 k=4096 batch=1");
  EXPECT_EQ(less.shapes[0], all.shapes[0]);
  EXPECT_EQ(b.start_ns, a.start_ns);
  EXPECT_EQ(b.end_ns, a.end_ns);
  EXPECT_EQ(b.duration_ns, 50000);
  EXPECT_EQ(b.device_id, a.device_id);
  EXPECT_EQ(b.flops, a.flops);
  EXPECT_EQ(b.flops, 2 * 8 * 4096 * 4096);
  EXPECT_EQ(b.precision, a.precision);
  EXPECT_EQ(b.flops_source, a.flops_source);
  EXPECT_EQ(b.dram_bytes, a.dram_bytes);
  EXPECT_EQ(b.bytes_source, a.bytes_source);
  EXPECT_EQ(b.fraction_of_roof, a.fraction_of_roof);
  EXPECT_EQ(b.bound, a.bound);
  EXPECT_EQ(b.step_id, a.step_id);
  EXPECT_EQ(b.phase, a.phase);
  EXPECT_EQ(b.token_count, a.token_count);
}

}  // namespace
}  // namespace rooftrace
