// The report model on the golden run: every column against hand-computed
// values (tests/support/golden_store.h explains each number).
#include "report/report.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "analyzer/input.h"
#include "analyzer/trace_report.h"
#include "report/report_format.h"
#include "report/roofline_svg.h"
#include "report/roofs.h"
#include "report/text_util.h"
#include "model/device_profile.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/golden_store.h"
#include "tests/support/real_data.h"
#include "tests/support/store_schema1.h"

namespace rooftrace::analyzer {
namespace {

using testing::BuildGoldenRun;
using testing::KernelSpec;
using testing::TempDir;
using testing::TestStore;

constexpr int64_t kTotalNs = 3 * 100000 + 2 * 20000 + 2 * 80000 + 2000;  // 502000

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("report");
    path_ = dir_ + "/golden.sqlite";
    TestStore s(path_);
    BuildGoldenRun(s);
    s.AddRun(2, "Test GPU 2TB");  // a run without kernels
  }

  Report Build(GroupBy by, size_t top = 0,
               std::optional<RoofTable> reannotate = std::nullopt,
               std::optional<int64_t> run = std::nullopt) {
    StoreReader store;
    EXPECT_TRUE(store.Open(path_, path_).ok());
    ReportOptions o;
    o.group_by = by;
    o.top = top;
    o.reannotate = std::move(reannotate);
    o.run_id = run.value_or(1);
    StatusOr<Report> r = BuildReport(store, o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : Report();
  }

  void TearDown() override { testing::RemoveTempDir(dir_); }

  std::string dir_;
  std::string path_;
};

// Grouping by family merges the two GEMM tile variants and derives the
// elementwise family from the mangled name.
TEST_F(ReportTest, FamilyGroupsHaveHandComputedNumbers) {
  const Report r = Build(GroupBy::kFamily);
  EXPECT_EQ(r.kernel_count, 8);
  EXPECT_EQ(r.total_ns, kTotalNs);
  EXPECT_EQ(r.kernels_with_flops, 5);
  EXPECT_EQ(r.kernels_with_bytes, 7);
  ASSERT_EQ(r.groups.size(), 3u);

  const GroupRow& g = r.groups[0];
  EXPECT_EQ(g.name, "ampere_bf16_s16816gemm");
  EXPECT_EQ(g.count, 5);
  EXPECT_EQ(g.total_ns, 340000);
  EXPECT_DOUBLE_EQ(g.mean_ns, 68000);
  EXPECT_DOUBLE_EQ(g.time_share, 340000.0 / kTotalNs);
  EXPECT_DOUBLE_EQ(*g.flops, 3 * 5e10 + 2 * 2e8);
  EXPECT_DOUBLE_EQ(*g.bytes, 3 * 1e8 + 2 * 2e7);
  EXPECT_DOUBLE_EQ(*g.ai, 1.504e11 / 3.4e8);
  EXPECT_DOUBLE_EQ(*g.achieved_flops_per_s, 1.504e11 / 340e-6);
  EXPECT_DOUBLE_EQ(*g.achieved_bytes_per_s, 3.4e8 / 340e-6);  // 1 TB/s
  EXPECT_DOUBLE_EQ(*g.fraction_of_roof, 0.5);
  EXPECT_EQ(g.bound, "compute");  // 300 of 340 us are compute-bound
  EXPECT_EQ(g.phase, "prefill");
  EXPECT_DOUBLE_EQ(g.phase_share, 300000.0 / 340000.0);
  EXPECT_EQ(g.phase_time_ns[PhaseIndex("prefill")], 300000);
  EXPECT_EQ(g.phase_time_ns[PhaseIndex("decode")], 40000);
  EXPECT_EQ(g.precision, "bf16_tc");
  EXPECT_EQ(g.flops_source, "analytic");
  EXPECT_EQ(g.bytes_source, "counters");
  // Issue 18 item 19: the family spans two GEMM shapes; the row shows the
  // one holding most time (300 of 340 us), its share and how many.
  EXPECT_EQ(g.shape, "m=4096 n=4096 k=4096 batch=1");
  EXPECT_EQ(g.shape_count, 2);
  EXPECT_DOUBLE_EQ(g.shape_share, 300000.0 / 340000.0);
  EXPECT_EQ(ShapeLabel(g), "m=4096 n=4096 k=4096 batch=1 (88%, 2 shapes)");
  // Issue 18 item 22: the spread of the group's kernel times (100, 100,
  // 100, 20, 20 us; population standard deviation).
  EXPECT_DOUBLE_EQ(g.median_ns, 100000);
  EXPECT_EQ(g.min_ns, 20000);
  EXPECT_EQ(g.max_ns, 100000);
  EXPECT_NEAR(g.stddev_ns, std::sqrt(1.536e9), 1e-6);

  const GroupRow& e = r.groups[1];
  EXPECT_EQ(e.name, "at::native::elementwise_kernel<CUDAFunctor_add>");
  EXPECT_EQ(e.count, 2);
  EXPECT_EQ(e.total_ns, 160000);
  EXPECT_DOUBLE_EQ(e.mean_ns, 80000);
  EXPECT_EQ(e.shape_count, 0);  // not a GEMM: no shape
  EXPECT_EQ(ShapeLabel(e), "");
  EXPECT_FALSE(e.flops.has_value());
  EXPECT_DOUBLE_EQ(*e.bytes, 8e7);
  EXPECT_FALSE(e.ai.has_value());
  EXPECT_FALSE(e.achieved_flops_per_s.has_value());
  EXPECT_DOUBLE_EQ(*e.achieved_bytes_per_s, 8e7 / 160e-6);  // 500 GB/s
  EXPECT_DOUBLE_EQ(*e.fraction_of_roof, 0.25);
  EXPECT_EQ(e.bound, "memory");
  EXPECT_EQ(e.phase, "decode");
  EXPECT_DOUBLE_EQ(e.phase_share, 1.0);
  EXPECT_EQ(e.precision, "");
  EXPECT_EQ(e.flops_source, "none");

  const GroupRow& t = r.groups[2];
  EXPECT_EQ(t.name, "my_tiny_kernel");
  EXPECT_EQ(t.count, 1);
  EXPECT_EQ(t.total_ns, 2000);
  EXPECT_FALSE(t.bytes.has_value());
  EXPECT_FALSE(t.fraction_of_roof.has_value());
  EXPECT_EQ(t.bound, "unknown");
  EXPECT_EQ(t.phase, "unknown");

  // The plot gets one point per family and phase: the GEMM family splits
  // into its prefill (AI 500) and decode (AI 10) launches.
  ASSERT_EQ(r.families.size(), 4u);
  EXPECT_EQ(r.families[0].name, "ampere_bf16_s16816gemm (prefill)");
  EXPECT_EQ(r.families[0].key, "ampere_bf16_s16816gemm");
  EXPECT_EQ(r.families[0].count, 3);
  EXPECT_DOUBLE_EQ(*r.families[0].ai, 500);
  EXPECT_DOUBLE_EQ(*r.families[0].achieved_flops_per_s, 5e14);
  EXPECT_EQ(r.families[0].phase, "prefill");
  EXPECT_EQ(r.families[1].name,
            "at::native::elementwise_kernel<CUDAFunctor_add> (decode)");
  EXPECT_EQ(r.families[2].name, "ampere_bf16_s16816gemm (decode)");
  EXPECT_DOUBLE_EQ(*r.families[2].ai, 10);
  EXPECT_DOUBLE_EQ(*r.families[2].achieved_flops_per_s, 1e13);
  EXPECT_EQ(r.families[3].name, "my_tiny_kernel (unknown)");
}

// Prefill and decode shares, AI over kernels with both FLOPs and bytes, and
// the time-weighted % of roof.
TEST_F(ReportTest, PhaseSummaryHasHandComputedNumbers) {
  const Report r = Build(GroupBy::kFamily);
  ASSERT_EQ(r.phases.size(), 3u);
  EXPECT_EQ(r.phases[0].phase, "prefill");
  EXPECT_EQ(r.phases[0].count, 3);
  EXPECT_EQ(r.phases[0].time_ns, 300000);
  EXPECT_DOUBLE_EQ(r.phases[0].share, 300000.0 / kTotalNs);
  EXPECT_DOUBLE_EQ(*r.phases[0].ai, 500);
  EXPECT_DOUBLE_EQ(*r.phases[0].fraction_of_roof, 0.5);
  EXPECT_DOUBLE_EQ(*r.phases[0].achieved_flops_per_s, 1.5e11 / 300e-6);

  EXPECT_EQ(r.phases[1].phase, "decode");
  EXPECT_EQ(r.phases[1].count, 4);
  EXPECT_EQ(r.phases[1].time_ns, 200000);
  EXPECT_DOUBLE_EQ(*r.phases[1].ai, 4e8 / 4e7);
  // (0.5 * 40 us + 0.25 * 160 us) / 200 us
  EXPECT_DOUBLE_EQ(*r.phases[1].fraction_of_roof, 0.3);
  EXPECT_DOUBLE_EQ(*r.phases[1].achieved_flops_per_s, 4e8 / 40e-6);

  EXPECT_EQ(r.phases[2].phase, "unknown");
  EXPECT_EQ(r.phases[2].count, 1);
  EXPECT_FALSE(r.phases[2].ai.has_value());
}

// Header: device, roofs sorted by peak with their ridge, summed import stats.
TEST_F(ReportTest, HeaderCarriesDeviceRoofsAndImportStats) {
  const Report r = Build(GroupBy::kFamily);
  const ReportHeader& h = r.header;
  EXPECT_EQ(h.device_name, "Test GPU 2TB");
  EXPECT_EQ(h.roofs.source, "datasheet:test");
  EXPECT_FALSE(h.reannotated);
  EXPECT_DOUBLE_EQ(h.roofs.dram_bytes_per_s, 2e12);
  ASSERT_EQ(h.roofs.roofs.size(), 2u);
  EXPECT_EQ(h.roofs.roofs[0].precision, "fp32");
  EXPECT_EQ(h.roofs.roofs[1].precision, "bf16_tc");
  EXPECT_DOUBLE_EQ(h.roofs.roofs[1].ridge_flops_per_byte, 500);
  EXPECT_EQ(h.dropped, 4);
  EXPECT_EQ(h.unmatched, 2);
  EXPECT_EQ(h.import_stats.size(), 4u);
  EXPECT_EQ(h.run.command, "python serve.py");
}

// Issue 15: a report says where its data came from (format, file, SHA-256
// of the file's content) near the top: the text header with the hash cut
// short, the HTML header with all of it; a live collection says so.
TEST(ReportSourceTest, HeadersSayWhereTheDataCameFrom) {
  Report r;
  r.header.title = "rooftrace analyze";
  r.header.input = "bert.json.gz";
  r.header.input_kind = "trace";
  r.header.run.complete = 1;  // (an incomplete run's warning comes first)
  r.header.run.source_format = "kineto";
  r.header.run.source_file = "bert.json.gz";
  r.header.run.source_sha256 =
      "9b012f118f5051d66e2e564ccc2079e5602c0f326b0c2e997670a08b817ca516";
  std::ostringstream text;
  WriteHeaderText(r, text);
  EXPECT_NE(text.str().find("  source:   kineto file bert.json.gz sha256 "
                            "9b012f118f5051d6\u2026\n"),
            std::string::npos)
      << text.str();
  // Second line, under the title.
  EXPECT_EQ(text.str().find("  source:"), text.str().find('\n') + 1);
  std::ostringstream html;
  MakeReportWriter("html")->Write(r, html);
  const size_t source = html.str().find(
      "<dt>source</dt><dd>kineto file bert.json.gz sha256 "
      "9b012f118f5051d66e2e564ccc2079e5602c0f326b0c2e997670a08b817ca516"
      "</dd>");
  ASSERT_NE(source, std::string::npos) << html.str();
  EXPECT_LT(source, html.str().find("<dt>device</dt>"));

  Report live;
  std::ostringstream live_text;
  WriteHeaderText(live, live_text);
  EXPECT_NE(live_text.str().find("  source:   live collection (no source "
                                 "file)\n"),
            std::string::npos);
}

// A kernel of run and session `run` on `device` / `stream` over
// [start, end) ns.
void AddTimedKernel(TestStore& s, int64_t run, const std::string& name,
                    int64_t device, int64_t stream, int64_t start,
                    int64_t end) {
  KernelSpec k;
  k.run_id = run;
  k.session_id = run;
  k.name = name;
  k.device_id = device;
  k.stream_id = stream;
  k.start_ns = start;
  k.duration_ns = end - start;
  s.AddKernel(k);
}

// Counters mode's sampled kernels (issue 25 item 2): a group with one
// measured launch and two that took their signature's samples says
// 'counters+sampled', whatever k, n and spread each row's label carries,
// and its figures count all three.
TEST_F(ReportTest, SampledKernelsGroupAsCountersPlusSampled) {
  {
    TestStore s(path_);
    s.AddRun(6, "NVIDIA H100 80GB HBM3");
    const char* sources[] = {"counters", "counters (sampled 1 of 2)",
                             "counters (sampled 2 of 3, spread 1.0%)"};
    for (int i = 0; i < 3; ++i) {
      KernelSpec k;
      k.run_id = 6;
      k.session_id = 6;
      k.name = "vectorized_elementwise_kernel";
      k.start_ns = 1000 + i * 20000;
      k.duration_ns = 10000;
      k.dram_bytes = 1e6;
      k.flops_source = "none";
      k.bytes_source = sources[i];
      s.AddKernel(k);
    }
  }  // the store is written when it closes
  const Report r = Build(GroupBy::kKernel, 0, std::nullopt, 6);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].bytes_source, "counters+sampled");
  EXPECT_EQ(r.groups[0].flops_source, "none");
  EXPECT_DOUBLE_EQ(*r.groups[0].bytes, 3e6);
}

// Sampling mode's kernels (issue 25 item 4): a family's PM-sampled bytes
// carry the family's attribution error, the split bytes of its kernels
// over all their bytes: 1 MB exact, 1 MB with 10% split, 2 MB with 25%
// split -> (0.1 + 0.5) / 4 = 15%. A group whose kernels took exact samples
// only says so.
TEST_F(ReportTest, PmSampledFamiliesCarryTheirAttributionError) {
  {
    TestStore s(path_);
    s.AddRun(7, "NVIDIA H100 80GB HBM3");
    struct {
      const char* name;
      double bytes;
      const char* source;
    } kernels[] = {
        {"vectorized_elementwise_kernel", 1e6, "pm-sampling (exact)"},
        {"vectorized_elementwise_kernel", 1e6,
         "pm-sampling (attributed, error 10.0%)"},
        {"vectorized_elementwise_kernel", 2e6,
         "pm-sampling (attributed, error 25.0%)"},
        {"reduce_kernel", 3e6, "pm-sampling (exact)"},
    };
    int i = 0;
    for (const auto& spec : kernels) {
      KernelSpec k;
      k.run_id = 7;
      k.session_id = 7;
      k.name = spec.name;
      k.start_ns = 1000 + i++ * 20000;
      k.duration_ns = 10000;
      k.dram_bytes = spec.bytes;
      k.flops_source = "none";
      k.bytes_source = spec.source;
      s.AddKernel(k);
    }
  }
  const Report r = Build(GroupBy::kKernel, 0, std::nullopt, 7);
  ASSERT_EQ(r.groups.size(), 2u);
  std::map<std::string, const GroupRow*> by;
  for (const GroupRow& g : r.groups) by[g.name] = &g;
  ASSERT_TRUE(by.count("vectorized_elementwise_kernel"));
  EXPECT_EQ(by["vectorized_elementwise_kernel"]->bytes_source,
            "pm-sampling (attributed, error 15.0%)");
  EXPECT_DOUBLE_EQ(*by["vectorized_elementwise_kernel"]->bytes, 4e6);
  ASSERT_TRUE(by.count("reduce_kernel"));
  EXPECT_EQ(by["reduce_kernel"]->bytes_source, "pm-sampling (exact)");
}

// The timeline's busy/idle breakdown on known intervals (run 3): device 0
// has kernels [1000, 3000) and [2000, 5000) on two streams (overlapping:
// counted once), a copy [5000, 6000) right after, a copy [8000, 9000) in
// the gap, a kernel [10000, 11000) and a copy [11500, 12500) after the last
// kernel (outside the span: not counted). Span 11000 - 1000 = 10000; busy
// 5000 + 1000 + 1000 = 7000; idle 3000 = 30%. Device 1: kernels
// [20000, 21000) and [23000, 24000): span 4000, busy 2000, idle 50%.
TEST_F(ReportTest, BusyAndIdleTimePerDevice) {
  const std::string busy_path = dir_ + "/busy.sqlite";
  {
    TestStore s(busy_path);
    s.AddRun(3, "Test GPU 2TB");
    auto kernel = [&](int64_t device, int64_t stream, int64_t start,
                      int64_t end) {
      AddTimedKernel(s, 3, "k", device, stream, start, end);
    };
    kernel(0, 7, 1000, 3000);
    kernel(0, 8, 2000, 5000);
    kernel(0, 7, 10000, 11000);
    kernel(1, 7, 20000, 21000);
    kernel(1, 7, 23000, 24000);
    s.AddMemcpy(3, "htod", 64, 5000, 6000, 7);
    s.AddMemcpy(3, "dtoh", 64, 8000, 9000, 7);
    s.AddMemcpy(3, "dtoh", 64, 11500, 12500, 7);
  }
  StoreReader store;
  ASSERT_TRUE(store.Open(busy_path, busy_path).ok());
  ReportOptions o;
  o.run_id = 3;
  StatusOr<Report> built = BuildReport(store, o);
  ASSERT_TRUE(built.ok()) << built.status().message();
  const Report& r = *built;
  ASSERT_EQ(r.busy.size(), 2u);
  const DeviceBusy& d0 = r.busy[0];
  EXPECT_EQ(d0.device_id, 0);
  EXPECT_EQ(d0.first_start_ns, 1000);
  EXPECT_EQ(d0.last_end_ns, 11000);
  EXPECT_EQ(d0.span_ns, 10000);
  EXPECT_EQ(d0.busy_ns, 7000);
  EXPECT_EQ(d0.idle_ns, 3000);
  EXPECT_DOUBLE_EQ(d0.idle_share, 0.3);
  EXPECT_EQ(d0.kernels, 3);
  EXPECT_EQ(d0.copies, 3);
  const DeviceBusy& d1 = r.busy[1];
  EXPECT_EQ(d1.device_id, 1);
  EXPECT_EQ(d1.span_ns, 4000);
  EXPECT_EQ(d1.busy_ns, 2000);
  EXPECT_DOUBLE_EQ(d1.idle_share, 0.5);
  EXPECT_EQ(d1.copies, 0);

  std::ostringstream text, json;
  MakeReportWriter("table")->Write(r, text);
  EXPECT_NE(text.str().find("  busy:     device 0: busy 0.007 of 0.010 ms "
                            "wall (first kernel start to last kernel end), "
                            "idle 0.003 ms = 30.0%"),
            std::string::npos)
      << text.str();
  MakeReportWriter("json")->Write(r, json);
  EXPECT_NE(json.str().find("\"busy\":[{\"device_id\":0,\"first_start_ns\":"
                            "1000,\"last_end_ns\":11000,\"span_ns\":10000,"
                            "\"busy_ns\":7000,\"idle_ns\":3000,\"idle_share\":"),
            std::string::npos)
      << json.str();
  EXPECT_NE(json.str().find("\"kernels\":3,\"copies\":3,\"exposed_comm_ns\":"
                            "0,\"exposed_copy_ns\":2000},{\"device_id\":1"),
            std::string::npos)
      << json.str();
  // The copies at 5-6 and 8-9 us overlap no kernel: 2 us exposed (the one
  // after the last kernel is outside the span).
  EXPECT_EQ(d0.exposed_copy_ns, 2000);
  EXPECT_EQ(d0.exposed_comm_ns, 0);
  EXPECT_NE(text.str().find("idle 0.003 ms = 30.0%; exposed copies 0.002 ms"),
            std::string::npos)
      << text.str();
}

// An all-reduce from 2 to 6 us beside a GEMM from 1 to 4 us and another
// from 5 to 8 us: communication runs alone from 4 to 5 us (1 us exposed);
// an all-gather from 9 to 11 us overlaps nothing (2 us more).
TEST_F(ReportTest, ExposedCommunicationIsCollectiveTimeWithNoOtherKernel) {
  const std::string path = dir_ + "/comm.sqlite";
  {
    TestStore s(path);
    s.AddRun(4, "Test GPU 2TB");
    auto kernel = [&](const std::string& name, int64_t stream, int64_t start,
                      int64_t end) {
      AddTimedKernel(s, 4, name, 0, stream, start, end);
    };
    kernel("sm90_gemm", 7, 1000, 4000);
    kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 8, 2000, 6000);
    kernel("sm90_gemm", 7, 5000, 8000);
    kernel("ncclDevKernel_AllGather_RING_LL", 8, 9000, 11000);
  }
  StoreReader store;
  ASSERT_TRUE(store.Open(path, path).ok());
  ReportOptions o;
  o.run_id = 4;
  StatusOr<Report> built = BuildReport(store, o);
  ASSERT_TRUE(built.ok()) << built.status().message();
  ASSERT_EQ(built->busy.size(), 1u);
  EXPECT_EQ(built->busy[0].busy_ns, 9000);
  EXPECT_EQ(built->busy[0].exposed_comm_ns, 3000);
  EXPECT_EQ(built->busy[0].exposed_copy_ns, 0);
  std::ostringstream text;
  MakeReportWriter("table")->Write(*built, text);
  EXPECT_NE(text.str().find("; exposed communication 0.003 ms"),
            std::string::npos)
      << text.str();
}

// The report reads a store's kernels and copies merged in start order, so
// that its busy timeline never meets an interval older than what it has
// folded (report/busy_time.h): three kernels and three copies interleaved;
// on a tie the kernel comes first.
TEST_F(ReportTest, StoreKernelsAndCopiesStreamTogetherInStartOrder) {
  const std::string path = dir_ + "/order.sqlite";
  {
    TestStore s(path);
    s.AddRun(4, "Test GPU 2TB");
    for (int64_t start : {1000, 3000, 5000}) {
      KernelSpec k;
      k.run_id = 4;
      k.session_id = 4;
      k.name = "k";
      k.device_id = 0;
      k.start_ns = start;
      k.duration_ns = 500;
      s.AddKernel(k);
    }
    s.AddMemcpy(4, "htod", 64, 500, 600, 7);
    s.AddMemcpy(4, "dtoh", 64, 3000, 3100, 7);
    s.AddMemcpy(4, "dtoh", 64, 6000, 6100, 7);
  }
  StoreReader store;
  ASSERT_TRUE(store.Open(path, path).ok());
  std::string order;
  const Status st = store.ForEachKernelAndMemcpy(
      4,
      [&](const KernelRow& k) {
        order += "k" + std::to_string(*k.start_ns) + " ";
        return OkStatus();
      },
      [&](const MemcpyRow& m) {
        order += "c" + std::to_string(*m.start_ns) + " ";
        return OkStatus();
      });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(order, "c500 k1000 k3000 c3000 k5000 c6000 ");
  // A callback's error stops the scan and comes back.
  int seen = 0;
  const Status stop = store.ForEachKernelAndMemcpy(
      4, [&](const KernelRow&) { return ++seen == 2 ? Corrupt("stop") : OkStatus(); },
      [&](const MemcpyRow&) { ++seen; return OkStatus(); });
  EXPECT_FALSE(stop.ok());
  EXPECT_EQ(seen, 2);
}

// The H100 BERT trace (one encoder forward pass, ProfilerStep#6): its 60
// kernels run 0.307 ms in all, and with its one copy the GPU is busy
// 309,437 ns of the 3,907,825 ns from the first kernel's start to the last
// kernel's end: 92.1% idle, the host setting the pace (eager PyTorch
// launching small kernels one by one).
TEST(BusyRealTraceTest, BertEncoderGpuIsMostlyIdle) {
  const char kBert[] =
      "tracelens/tests/traces/h100/"
      "gaunernst_bert-small-uncased__1016001.redacted.json.gz";
  const std::string file = test_support::RealDataFile(kBert);
  if (file.empty()) GTEST_SKIP() << test_support::RealDataMissing(kBert);
  StatusOr<Report> r = BuildTraceReport(file, "", ReportOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->busy.size(), 1u);
  const DeviceBusy& b = r->busy[0];
  EXPECT_EQ(b.kernels, 60);
  EXPECT_EQ(b.copies, 1);
  EXPECT_EQ(b.span_ns, 3907825);
  EXPECT_EQ(b.busy_ns, 309437);
  EXPECT_EQ(b.idle_ns, 3598388);
  EXPECT_NEAR(b.idle_share, 0.921, 0.0005);
  EXPECT_EQ(r->total_ns, 307197);
}

// Intervals in any order and more of them than one merge batch give the
// same union as sorted ones.
TEST(BusyTimelineTest, UnorderedIntervalsMergeAcrossBatches) {
  BusyTimeline t;
  // 10000 kernels of 10 ns every 20 ns, in reverse: busy 100000 of a
  // 199990 ns span.
  for (int i = 9999; i >= 0; --i) t.AddKernel(0, i * 20, i * 20 + 10);
  t.AddKernel(0, 5, 5);  // no duration: ignored
  const std::vector<DeviceBusy> b = t.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].span_ns, 199990);
  EXPECT_EQ(b[0].busy_ns, 100000);
  EXPECT_EQ(b[0].idle_ns, 99990);
  EXPECT_EQ(b[0].kernels, 10000);
}

// --by kernel keeps the two GEMM tile variants apart, with display names.
TEST_F(ReportTest, KernelGroupsSplitTileVariants) {
  const Report r = Build(GroupBy::kKernel);
  ASSERT_EQ(r.groups.size(), 4u);
  EXPECT_EQ(r.groups[0].name, testing::kGemmA);
  EXPECT_EQ(r.groups[0].count, 3);
  EXPECT_DOUBLE_EQ(*r.groups[0].ai, 500);
  EXPECT_DOUBLE_EQ(*r.groups[0].achieved_flops_per_s, 5e14);
  EXPECT_EQ(r.groups[0].bound, "compute");
  EXPECT_EQ(r.groups[1].name,
            "at::native::vectorized_elementwise_kernel<CUDAFunctor_add>");
  // 67 characters: 38 of the head and 19 of the tail around "...".
  EXPECT_EQ(r.groups[2].name,
            "ampere_bf16_s16816gemm_bf16_64x64_slic..._f2f_stages_64x5_nn");
  EXPECT_EQ(r.groups[2].key, testing::kGemmB);
  EXPECT_EQ(r.groups[2].family, "ampere_bf16_s16816gemm");
  EXPECT_DOUBLE_EQ(*r.groups[2].ai, 10);
  EXPECT_EQ(r.groups[2].bound, "memory");
  EXPECT_EQ(r.groups[2].phase, "decode");
  // The plot still gets one point per family.
  EXPECT_EQ(r.families.size(), 4u);
}

// --by phase / nvtx / step use the stored columns, with named fallbacks.
TEST_F(ReportTest, PhaseNvtxAndStepGroups) {
  Report r = Build(GroupBy::kPhase);
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.groups[0].key, "prefill");
  EXPECT_EQ(r.groups[1].key, "decode");
  EXPECT_EQ(r.groups[1].total_ns, 200000);
  EXPECT_EQ(r.groups[2].key, "unknown");

  r = Build(GroupBy::kNvtx);
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.groups[0].key, "forward/prefill");
  EXPECT_EQ(r.groups[1].key, "forward/decode");
  EXPECT_EQ(r.groups[1].count, 4);
  EXPECT_EQ(r.groups[2].key, "(no range)");

  r = Build(GroupBy::kStep);
  ASSERT_EQ(r.groups.size(), 4u);
  EXPECT_EQ(r.groups[0].key, "0");
  EXPECT_EQ(r.groups[0].name, "step 0");
  EXPECT_EQ(r.groups[1].key, "1");  // 20 + 80 us, tie with step 2 by key
  EXPECT_EQ(r.groups[1].total_ns, 100000);
  EXPECT_EQ(r.groups[2].key, "2");
  EXPECT_EQ(r.groups[3].key, "(no step)");
}

// Names number the way people count: layer.2 before layer.10, so rows of
// equal time read in order (issue 18 item 22: they sorted
// layer.0, layer.1, layer.10).
TEST(NaturalLessTest, DigitRunsCompareByValue) {
  std::vector<std::string> v = {"layer.10", "layer.1", "layer.2", "layer.0",
                                "layer.1.attn", "b", "a10", "a9", "a09"};
  std::sort(v.begin(), v.end(), [](const std::string& a,
                                   const std::string& b) {
    return NaturalLess(a, b);
  });
  const std::vector<std::string> want = {"a09", "a9", "a10", "b",
                                         "layer.0", "layer.1",
                                         "layer.1.attn", "layer.2",
                                         "layer.10"};
  EXPECT_EQ(v, want);
  EXPECT_FALSE(NaturalLess("x", "x"));
  EXPECT_TRUE(NaturalLess("", "x"));
  EXPECT_FALSE(NaturalLess("99999999999999999999999", "1"));
}

// --top keeps the N biggest groups and accounts for the rest.
TEST_F(ReportTest, TopKeepsBiggestGroupsAndCountsTheRest) {
  const Report r = Build(GroupBy::kFamily, 1);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups_omitted, 2);
  EXPECT_EQ(r.omitted_ns, 162000);
  EXPECT_EQ(r.families.size(), 4u);  // the plot is not truncated
}

// Re-annotation with the H100 SXM datasheet (bf16 989.4 TFLOP/s, 3.35 TB/s)
// recomputes every kernel's roof, fraction and bound.
TEST_F(ReportTest, ReannotationRecomputesFractionsAndBounds) {
  StatusOr<RoofTable> roofs = LoadRoofTable("h100-sxm");
  ASSERT_TRUE(roofs.ok()) << roofs.status().message();
  const Report r = Build(GroupBy::kKernel, 0, *roofs);
  EXPECT_TRUE(r.header.reannotated);
  EXPECT_EQ(r.header.roofs.source, "datasheet:h100-sxm");
  const double ridge = 989.4e12 / 3.35e12;  // 295.3
  ASSERT_EQ(r.groups.size(), 4u);
  // GEMM A: AI 500 > ridge -> compute; 500 / 989.4 of the roof.
  EXPECT_GT(500, ridge);
  EXPECT_NEAR(*r.groups[0].fraction_of_roof, 500e12 / 989.4e12, 1e-12);
  EXPECT_EQ(r.groups[0].bound, "compute");
  // Add kernel: 500 GB/s of 3350 GB/s.
  EXPECT_NEAR(*r.groups[1].fraction_of_roof, 500e9 / 3350e9, 1e-12);
  EXPECT_EQ(r.groups[1].bound, "memory");
  // GEMM B: AI 10 -> roof 33.5 TFLOP/s; 10 / 33.5.
  EXPECT_NEAR(*r.groups[2].fraction_of_roof, 10e12 / 33.5e12, 1e-12);
  EXPECT_EQ(r.groups[2].bound, "memory");
  // Nothing known: still unknown.
  EXPECT_FALSE(r.groups[3].fraction_of_roof.has_value());
  EXPECT_EQ(r.groups[3].bound, "unknown");
}

// Stored rows become the collector's KernelFacts: FLOPs under the stored
// precision, NULL means unknown. Expected values follow roof_model.h's rules
// (latency: shorter than 20 us and under 10 % of both roofs).
TEST(AnnotateKernelTest, StoredRowsMapOntoTheRoofModel) {
  rooftrace::Roofs model;
  model.peak_flops_per_s[static_cast<int>(Precision::kFp16Tensor)] = 1000e12;
  model.dram_bytes_per_s = 2e12;
  model.source = "test";
  RoofTable t;
  t.model = model;
  // Compute-bound at half the roof: AI 500 = ridge.
  KernelAnnotation a =
      AnnotateKernel(t, "bf16_tc", 5e10, "analytic", 1e8, "counters", 100000);
  EXPECT_DOUBLE_EQ(*a.roof_flops_per_s, 1000e12);
  EXPECT_DOUBLE_EQ(*a.fraction_of_roof, 0.5);
  EXPECT_STREQ(a.bound, "compute");
  // AI 3 -> roof 6 TFLOP/s; 1 TFLOP/s in 3 us is 16.7 %: memory, not latency.
  a = AnnotateKernel(t, "bf16_tc", 3e6, "counters", 1e6, "counters", 3000);
  EXPECT_DOUBLE_EQ(*a.roof_flops_per_s, 6e12);
  EXPECT_NEAR(*a.fraction_of_roof, 1e12 / 6e12, 1e-12);
  EXPECT_STREQ(a.bound, "memory");
  // 10 GFLOP/s and 3.3 GB/s in 3 us: far below both roofs and short.
  a = AnnotateKernel(t, "bf16_tc", 3e4, "counters", 1e4, "counters", 3000);
  EXPECT_STREQ(a.bound, "latency");
  // Bytes only: judged on bandwidth, 1 MB in 1 us = 1 TB/s of 2.
  a = AnnotateKernel(t, "", std::nullopt, "none", 1e6, "counters", 1000);
  EXPECT_DOUBLE_EQ(*a.fraction_of_roof, 0.5);
  EXPECT_FALSE(a.roof_flops_per_s.has_value());
  EXPECT_STREQ(a.bound, "memory");
  // FLOPs without bytes: only the compute roof, 1 TFLOP/s of 1000.
  a = AnnotateKernel(t, "bf16_tc", 1e8, "analytic", std::nullopt, "none", 100000);
  EXPECT_DOUBLE_EQ(*a.roof_flops_per_s, 1000e12);
  EXPECT_DOUBLE_EQ(*a.fraction_of_roof, 0.001);
  EXPECT_STREQ(a.bound, "unknown");
  // Without roofs nothing is judged.
  a = AnnotateKernel(RoofTable(), "bf16_tc", 5e10, "analytic", 1e8, "counters",
                     100000);
  EXPECT_FALSE(a.fraction_of_roof.has_value());
  EXPECT_STREQ(a.bound, "unknown");
}

// A run id that does not exist, and an empty run: clear errors.
TEST_F(ReportTest, MissingAndEmptyRunsAreErrors) {
  StoreReader store;
  ASSERT_TRUE(store.Open(path_, "golden.sqlite").ok());
  ReportOptions o;
  o.run_id = 9;
  StatusOr<Report> r = BuildReport(store, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "golden.sqlite: run 9 not found; runs in this store: 1, 2");
  o.run_id = 2;
  r = BuildReport(store, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("run 2 has no kernels"), std::string::npos)
      << r.status().message();
  // Without --run the latest run (2, empty) is chosen.
  o.run_id.reset();
  EXPECT_FALSE(BuildReport(store, o).ok());
}

// Stores from the future and SQLite files that are not stores are refused.
// A store written before kernel names had their own table (schema 1) gives
// the same report, whatever the grouping.
TEST_F(ReportTest, Schema1StoresGiveTheSameReport) {
  const GroupBy kAll[] = {GroupBy::kKernel, GroupBy::kFamily, GroupBy::kPhase,
                          GroupBy::kNvtx,   GroupBy::kStep,
                          GroupBy::kFamilyShape};
  auto summary = [&] {
    std::vector<std::string> out;
    for (GroupBy by : kAll) {
      const Report r = Build(by);
      for (const GroupRow& g : r.groups) {
        out.push_back(std::string(GroupByName(by)) + " " + g.key + " " +
                      g.name + " " + g.shape + " " + std::to_string(g.count) + " " +
                      std::to_string(g.total_ns) + " " +
                      std::to_string(g.flops.value_or(-1)) + " " +
                      std::to_string(g.bytes.value_or(-1)) + " " +
                      std::to_string(g.fraction_of_roof.value_or(-1)) + " " +
                      g.bound + " " + g.phase);
      }
    }
    return out;
  };
  const auto schema2 = summary();
  ASSERT_GT(schema2.size(), 10u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, rooftrace::test_support::kDowngradeToSchema1,
                              nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
  EXPECT_EQ(summary(), schema2);
}

TEST(StoreReaderTest, RefusesNewerSchemaAndForeignDatabases) {
  const std::string dir = TempDir("schema");
  {
    TestStore s(dir + "/new.sqlite");
    s.Exec("UPDATE schema_info SET value = '" +
           std::to_string(kStoreSchemaMajor + 1) +
           "' WHERE key = 'schema_version'");
  }
  StoreReader a;
  Status st = a.Open(dir + "/new.sqlite", "new.sqlite");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("schema version " +
                              std::to_string(kStoreSchemaMajor + 1) +
                              " is newer"),
            std::string::npos);

  {
    TestStore s(dir + "/foreign.sqlite");
    s.Exec("DROP TABLE schema_info");
  }
  StoreReader b;
  st = b.Open(dir + "/foreign.sqlite", "foreign.sqlite");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not a rooftrace store"), std::string::npos);
  testing::RemoveTempDir(dir);
}

// Inputs are told apart by content, not by extension.
TEST(InputTest, DetectsKindByContent) {
  const std::string dir = TempDir("detect");
  { TestStore s(dir + "/store.rft"); }  // a store with a trace's extension
  StatusOr<InputKind> k = DetectInputKind(dir + "/store.rft");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, InputKind::kStore);
  {
    // A trace's first frame: its Hello (rft detection decodes it).
    test_support::TraceBuilder b;
    b.Hello();
    std::ofstream(dir + "/trace.sqlite", std::ios::binary) << b.Framed();
  }
  k = DetectInputKind(dir + "/trace.sqlite");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, InputKind::kTrace);
  {
    FILE* f = std::fopen((dir + "/notes.txt").c_str(), "wb");
    std::fputs("hello", f);
    std::fclose(f);
  }
  k = DetectInputKind(dir + "/notes.txt");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("not a rooftrace store or trace"),
            std::string::npos);
  {
    FILE* f = std::fopen((dir + "/empty").c_str(), "wb");
    std::fclose(f);
  }
  k = DetectInputKind(dir + "/empty");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("the file is empty"), std::string::npos);
  k = DetectInputKind(dir + "/missing.sqlite");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kNotFound);
  testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace rooftrace::analyzer

namespace rooftrace::analyzer {
namespace {

// A calibrated profile (measured bf16 800 TFLOP/s, DRAM 3 TB/s) replaces the
// stored roofs: GEMM A reaches 500 / 800, the add kernel 0.5 / 3 TB/s.
TEST(ReannotateProfileTest, CalibratedProfileFileSetsTheRoofs) {
  const std::string dir = testing::TempDir("profile");
  DeviceProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  ASSERT_TRUE(FillDatasheet(&p));
  p.measured_dram_bytes_per_s = 3e12;
  p.roof(Precision::kFp16Tensor).measured_flops_per_s = 800e12;
  const std::string profile = dir + "/h100.json";
  ASSERT_TRUE(SaveDeviceProfile(p, profile).ok());

  StatusOr<RoofTable> roofs = LoadRoofTable(profile);
  ASSERT_TRUE(roofs.ok()) << roofs.status().message();
  EXPECT_EQ(roofs->source, "calibrated:" + profile);
  EXPECT_DOUBLE_EQ(roofs->dram_bytes_per_s, 3e12);
  ASSERT_NE(roofs->Find("bf16_tc"), nullptr);
  EXPECT_DOUBLE_EQ(roofs->Find("bf16_tc")->peak_flops_per_s, 800e12);
  EXPECT_DOUBLE_EQ(roofs->Find("bf16_tc")->ridge_flops_per_byte, 800.0 / 3);
  // Precisions it did not measure keep the datasheet figure (fp32 67).
  EXPECT_DOUBLE_EQ(roofs->Find("fp32")->peak_flops_per_s, 67e12);

  const std::string store_path = dir + "/golden.sqlite";
  {
    TestStore s(store_path);
    BuildGoldenRun(s);
  }
  StoreReader store;
  ASSERT_TRUE(store.Open(store_path, store_path).ok());
  ReportOptions o;
  o.group_by = GroupBy::kKernel;
  o.reannotate = *roofs;
  StatusOr<Report> r = BuildReport(store, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->header.roofs.source, "calibrated:" + profile);
  EXPECT_NEAR(*r->groups[0].fraction_of_roof, 500.0 / 800, 1e-12);
  EXPECT_EQ(r->groups[0].bound, "compute");  // AI 500 > ridge 266.7
  EXPECT_NEAR(*r->groups[1].fraction_of_roof, 0.5 / 3, 1e-12);

  // A file that is not a profile: the error names it.
  const std::string junk = dir + "/junk.json";
  std::ofstream(junk) << "{\"format\": 3";
  StatusOr<RoofTable> bad = LoadRoofTable(junk);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--device-profile "), std::string::npos);
  EXPECT_NE(bad.status().message().find("junk.json"), std::string::npos);
  testing::RemoveTempDir(dir);
}


// Kernels of 1, 3, 3, 20 and 2,000 us: the short-kernel study puts them
// in the < 2, 2-5, 10-50 and >= 1000 us buckets, with their time, in the
// table and the JSON.
TEST_F(ReportTest, ShortKernelStudyBucketsKernelsByDuration) {
  const std::string path = dir_ + "/durations.sqlite";
  {
    TestStore s(path);
    s.AddRun(5, "Test GPU 2TB");
    int64_t start = 0;
    for (int64_t us : {1, 3, 3, 20, 2000}) {
      AddTimedKernel(s, 5, "k" + std::to_string(us), 0, 7, start,
                     start + us * 1000);
      start += us * 1000 + 1000;
    }
  }
  StoreReader store;
  ASSERT_TRUE(store.Open(path, path).ok());
  ReportOptions o;
  o.run_id = 5;
  StatusOr<Report> built = BuildReport(store, o);
  ASSERT_TRUE(built.ok()) << built.status().message();
  const auto& d = built->durations;
  EXPECT_EQ(d[0].kernels, 1);
  EXPECT_EQ(d[0].time_ns, 1000);
  EXPECT_EQ(d[1].kernels, 2);
  EXPECT_EQ(d[1].time_ns, 6000);
  EXPECT_EQ(d[2].kernels, 0);
  EXPECT_EQ(d[3].kernels, 1);
  EXPECT_EQ(d[6].kernels, 1);
  EXPECT_EQ(d[6].time_ns, 2000000);
  std::ostringstream text, json;
  MakeReportWriter("table")->Write(*built, text);
  EXPECT_NE(text.str().find("2-5 us            2       40.0     0.006     0.3"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("5-10 us"), std::string::npos) << text.str();
  MakeReportWriter("json")->Write(*built, json);
  EXPECT_NE(json.str().find("\"durations\":[{\"from_ns\":0,\"kernels\":1,"
                            "\"time_ns\":1000},{\"from_ns\":2000,"
                            "\"kernels\":2,\"time_ns\":6000}"),
            std::string::npos)
      << json.str();
}


// A kernel row of run 1 named `name` that runs `ns` from *start on; *start
// moves to its end.
KernelRow KernelAt(const char* name, int64_t ns, int64_t* start) {
  KernelRow k;
  k.run_id = 1;
  k.session_id = 1;
  k.name = name;
  k.start_ns = *start;
  k.end_ns = *start + ns;
  k.duration_ns = ns;
  *start += ns;
  return k;
}

// Rows that name the operator that launched them group by it and by its
// category; a kernel without one is "(no operator)", unless it is a GEMM
// call's (GEMM) or a collective (communication).
TEST(ReportOpTest, KernelsGroupByOperatorAndCategory) {
  struct Spec {
    const char* name;
    const char* op;
    bool gemm;
    int64_t ns;
  };
  const Spec specs[] = {
      {"sm90_gemm", "aten::mm", true, 5000},
      {"sm90_gemm", "aten::mm", true, 3000},
      {"rmsnorm_kernel", "aiter::rmsnorm", false, 1000},
      {"act_and_mul_kernel", "sgl_kernel::silu_and_mul", false, 700},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "", false, 400},
      {"cutlass_gemm", "", true, 300},
      {"mystery_kernel", "", false, 200},
  };
  auto build = [&](GroupBy by) {
    ReportOptions o;
    o.group_by = by;
    ReportBuilder b(o);
    int64_t start = 0;
    for (const Spec& sp : specs) {
      KernelRow k = KernelAt(sp.name, sp.ns, &start);
      k.op = sp.op;
      if (sp.gemm) k.gemm_call_id = 1;
      b.Add(k);
    }
    return b.Finish("ops");
  };
  auto names = [](const Report& r) {
    std::string out;
    for (const GroupRow& g : r.groups) {
      out += (out.empty() ? "" : ",") + g.name + ":" +
             std::to_string(g.total_ns);
    }
    return out;
  };
  StatusOr<Report> by_op = build(GroupBy::kOp);
  ASSERT_TRUE(by_op.ok()) << by_op.status().message();
  EXPECT_EQ(names(*by_op),
            "aten::mm:8000,aiter::rmsnorm:1000,(no operator):900,"
            "sgl_kernel::silu_and_mul:700");
  StatusOr<Report> by_category = build(GroupBy::kCategory);
  ASSERT_TRUE(by_category.ok()) << by_category.status().message();
  EXPECT_EQ(names(*by_category),
            "GEMM:8300,norm:1000,elementwise:700,communication:400,"
            "(no operator):200");
  EXPECT_EQ(GroupByFromName("op"), GroupBy::kOp);
  EXPECT_EQ(GroupByFromName("category"), GroupBy::kCategory);
}

// A kernel computed above 100% of its roof (the model gave more bytes or
// FLOPs than the GPU can move in its time) is a finding: counted in the
// header with its share, its row says "model exceeds roof: figures
// suspect", and on the roofline it is a hollow red diamond of its own, not
// averaged into its family's point.
TEST(ReportAboveRoofTest, KernelsAboveTheirRoofAreFlaggedNotPlotted) {
  ReportOptions o;
  o.group_by = GroupBy::kFamily;
  ReportBuilder b(o);
  struct Spec {
    const char* name;
    double fraction;
    int64_t ns;
  };
  // gather: one launch at 215% of its roof, one at 60%; gemm within.
  const Spec specs[] = {{"gather_kernel", 2.15, 3000},
                        {"gather_kernel", 0.6, 1000},
                        {"gemm_kernel", 0.8, 6000}};
  int64_t start = 0;
  for (const Spec& sp : specs) {
    KernelRow k = KernelAt(sp.name, sp.ns, &start);
    k.phase = "decode";
    k.flops = 1e9;
    k.dram_bytes = 1e8;
    k.precision = "bf16";
    k.fraction_of_roof = sp.fraction;
    k.bound = "memory";
    b.Add(k);
  }
  b.header().roofs.dram_bytes_per_s = 1e12;
  StatusOr<Report> r = b.Finish("roof");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kernels_above_roof, 1);
  EXPECT_EQ(r->ns_above_roof, 3000);
  ASSERT_EQ(r->groups.size(), 2u);
  const GroupRow& gemm = r->groups[0];
  const GroupRow& gather = r->groups[1];
  EXPECT_EQ(gemm.above_roof_count, 0);
  EXPECT_EQ(AboveRoofNote(gemm), "");
  EXPECT_EQ(gather.above_roof_count, 1);
  EXPECT_EQ(gather.above_roof_ns, 3000);
  EXPECT_EQ(AboveRoofNote(gather),
            "model exceeds roof: figures suspect (1 of 2 kernels)");
  // Plot points: the gather's launch within its roof and the one above it
  // are two points; the one above carries the flag on all its kernels.
  std::map<std::string, const GroupRow*> points;
  for (const GroupRow& f : r->families) points[f.name] = &f;
  ASSERT_EQ(points.size(), 3u);
  ASSERT_TRUE(points.count("gather_kernel (decode)"));
  ASSERT_TRUE(points.count("gather_kernel (decode, above roof)"));
  EXPECT_EQ(points["gather_kernel (decode)"]->above_roof_count, 0);
  EXPECT_EQ(points["gather_kernel (decode, above roof)"]->count, 1);
  EXPECT_EQ(points["gather_kernel (decode, above roof)"]->above_roof_count,
            1);
  EXPECT_NEAR(*points["gather_kernel (decode, above roof)"]->fraction_of_roof,
              2.15, 1e-12);
  // Header, row and plot say so, in every format.
  auto written = [&](const char* format) {
    std::ostringstream out;
    MakeReportWriter(format)->Write(*r, out);
    return out.str();
  };
  const std::string text = written("table");
  EXPECT_NE(text.find("WARNING:  1 kernel (30.0% of GPU time) computed "
                      "above 100% of their roof"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("model exceeds roof: figures suspect (1 of 2 kernels)"),
            std::string::npos)
      << text;
  EXPECT_NE(written("json").find(
                "\"kernels_above_roof\":1,\"ns_above_roof\":3000"),
            std::string::npos);
  EXPECT_NE(written("csv").find(",1,3000,model exceeds roof: figures suspect "
                                "(1 of 2 kernels)\n"),
            std::string::npos);
  EXPECT_NE(written("html").find("ABOVE ROOF"), std::string::npos);
  const std::string svg = RenderRooflineSvg(*r).value();
  EXPECT_NE(svg.find("MODEL EXCEEDS ROOF: figures suspect"), std::string::npos);
  EXPECT_NE(svg.find("are hollow diamonds"), std::string::npos);
  // A run without such kernels prints no warning and no note column.
  ReportBuilder clean(o);
  int64_t at = 0;
  KernelRow k = KernelAt("gemm_kernel", 10, &at);
  k.fraction_of_roof = 1.0;  // at the roof: not above it
  clean.Add(k);
  StatusOr<Report> c = clean.Finish("clean");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kernels_above_roof, 0);
  std::ostringstream clean_text;
  MakeReportWriter("table")->Write(*c, clean_text);
  EXPECT_EQ(clean_text.str().find("above 100%"), std::string::npos);
  EXPECT_EQ(clean_text.str().find("note"), std::string::npos);
}

// An operator of several kernels whose split is not known (an MoE layer's
// routing: top-k, memset, compute) carries its figures on its longest
// kernel; its other kernels have the operator and its shape but no figures
// of their own. Their rows say "in op X", and the header counts their time
// apart: 60% of GPU time has figures, 80% counting them. A kernel without
// an operator, or a collective, is not "in op".
TEST(ReportInOpTest, KernelsOfACostedOperatorAreMarkedAndCountedApart) {
  ReportOptions o;
  o.group_by = GroupBy::kKernel;
  ReportBuilder b(o);
  int64_t start = 0;
  KernelRow carrier = KernelAt("_topk_forward", 600, &start);
  carrier.op = "vllm::moe_forward";
  carrier.shape = "moe routing t=8192 e=32 k=4";
  carrier.flops = 1310720;
  carrier.dram_bytes = 720896;
  carrier.precision = "bf16";
  b.Add(carrier);
  for (int i = 0; i < 2; ++i) {
    KernelRow memset = KernelAt("_combined_routing_memset", 100, &start);
    memset.op = "vllm::moe_forward";
    memset.shape = "moe routing t=8192 e=32 k=4";
    b.Add(memset);
  }
  KernelRow same_name = KernelAt("_combined_routing_memset", 100, &start);
  b.Add(same_name);  // no operator: blank, not in op
  KernelRow other = KernelAt("clamp_position_kernel", 100, &start);
  other.op = "sglang::clamp";  // an operator, but no shape: not costed
  b.Add(other);
  StatusOr<Report> r = b.Finish("in-op");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ns_with_figures, 600);
  EXPECT_EQ(r->ns_in_costed_op, 200);
  EXPECT_EQ(FiguresShare(*r),
            "60.0% of GPU time has FLOPs or bytes, 80.0% counting the "
            "kernels whose operator is costed on another of its kernels "
            "(in op)");
  std::map<std::string, const GroupRow*> rows;
  for (const GroupRow& g : r->groups) rows[g.name] = &g;
  ASSERT_TRUE(rows.count("_combined_routing_memset"));
  EXPECT_EQ(GroupNote(*rows["_combined_routing_memset"]),
            "in op vllm::moe_forward (2 of 3 kernels)");
  EXPECT_EQ(GroupNote(*rows["_topk_forward"]), "");
  EXPECT_EQ(GroupNote(*rows["clamp_position_kernel"]), "");
  EXPECT_FALSE(InCostedOp(carrier, false));
  KernelRow comm = KernelAt("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 10,
                            &start);
  comm.op = "nccl:all_reduce";
  comm.shape = "all_reduce bf16 bytes=8388608 ranks=8";
  EXPECT_FALSE(InCostedOp(comm, true));
  std::ostringstream csv;
  MakeReportWriter("csv")->Write(*r, csv);
  EXPECT_NE(csv.str().find("in op vllm::moe_forward (2 of 3 kernels)"),
            std::string::npos);
}

// The "(no operator)" row gathers unrelated kernels: it shows their summed
// FLOPs but no one kernel's shape or precision, while an operator's row
// keeps its dominant shape and precision.
TEST(ReportOpTest, NoOperatorRowShowsNoOneKernelsShapeOrPrecision) {
  ReportOptions o;
  o.group_by = GroupBy::kOp;
  ReportBuilder b(o);
  struct Spec {
    const char* name;
    const char* op;
    const char* shape;
    const char* precision;
    double flops;
  };
  const Spec specs[] = {
      {"sm90_gemm", "", "m=4096 n=4096 k=4096 batch=1", "bf16_tc", 1.2e12},
      {"rmsnorm_kernel", "", "", "fp32", 1e6},
      {"sm90_gemm", "aten::mm", "m=32 n=4096 k=4096 batch=1", "bf16_tc", 1e9},
  };
  int64_t start = 0;
  for (const Spec& sp : specs) {
    KernelRow k = KernelAt(sp.name, 1000, &start);
    k.op = sp.op;
    k.shape = sp.shape;
    k.precision = sp.precision;
    k.flops = sp.flops;
    b.Add(k);
  }
  StatusOr<Report> r = b.Finish("ops");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->groups.size(), 2u);
  const GroupRow& none = r->groups[0];
  ASSERT_EQ(none.name, "(no operator)");
  EXPECT_EQ(none.shape, "");
  EXPECT_EQ(none.framework_shape, "");
  EXPECT_EQ(none.precision, "");
  ASSERT_TRUE(none.flops.has_value());
  EXPECT_DOUBLE_EQ(*none.flops, 1.2e12 + 1e6);
  const GroupRow& mm = r->groups[1];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_EQ(mm.shape, "m=32 n=4096 k=4096 batch=1");
  EXPECT_EQ(mm.precision, "bf16_tc");
}

}  // namespace
}  // namespace rooftrace::analyzer

namespace rooftrace {
namespace {

// cuBLAS's column-major m, n, k read back in the framework's convention:
// a linear of 32 tokens from 11,008 to 4,096 features is m=4096 n=32
// k=11008 (weight op(A)); with the weight as op(B) the tokens are m. A
// token count that is neither, or a text that is not a GEMM's, gives
// nothing.
TEST(FrameworkGemmShapeTest, TokensOutIn) {
  EXPECT_EQ(FrameworkGemmShape("m=4096 n=32 k=11008 batch=1", 32),
            "tokens=32 out=4096 in=11008");
  EXPECT_EQ(FrameworkGemmShape("m=141 n=512 k=512 batch=1", 141),
            "tokens=141 out=512 in=512");
  EXPECT_EQ(FrameworkGemmShape("m=64 n=64 k=128 batch=16", 64),
            "batch=16 tokens=64 out=64 in=128");
  EXPECT_EQ(FrameworkGemmShape("m=4096 n=32 k=11008", 32),
            "tokens=32 out=4096 in=11008");
  EXPECT_EQ(FrameworkGemmShape("m=4096 n=32 k=11008 batch=1", 7), "");
  EXPECT_EQ(FrameworkGemmShape("b=1 h=8 lq=141 lk=141 d=64", 141), "");
  EXPECT_EQ(FrameworkGemmShape("m=4096 n=32 k=11008 batch=1 extra", 32), "");
}

}  // namespace
}  // namespace rooftrace
