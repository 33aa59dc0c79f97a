// Collective (NCCL) kernels in `analyze`: a Kineto trace written here with
// an all_reduce, an all_gather, an all_reduce without a group size and a
// kernel without any message size, analyzed as a trace and from a store
// the same trace was imported into; the bandwidths against numbers worked
// out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "analyzer/commands.h"
#include "base/json.h"
#include "model/device_profile.h"
#include "report/report.h"
#include "sources/kineto/kineto_source.h"
#include "sources/registry.h"
#include "store/store.h"
#include "store/store_reader.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using testing::RunMain;
using testing::TempDir;

std::string NcclKernel(const std::string& name, const std::string& ts,
                       const std::string& dur, int corr,
                       const std::string& args) {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
         "\", \"pid\": 0, \"tid\": 21, \"ts\": " + ts + ", \"dur\": " + dur +
         ", \"args\": {" + args + "\"device\": 0, \"stream\": 21, "
         "\"correlation\": " + std::to_string(corr) +
         ", \"grid\": [8, 1, 1], \"block\": [512, 1, 1]}}";
}

std::string Launch(const std::string& ts, int corr, int external) {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
         "\"cudaLaunchKernelExC\", \"pid\": 100, \"tid\": 100, \"ts\": " +
         ts + ", \"dur\": 2, \"args\": {\"correlation\": " +
         std::to_string(corr) + ", \"External id\": " +
         std::to_string(external) + "}}";
}

// Four NCCL kernels on an H100:
// - corr 1: all_reduce, args on the kernel (recent PyTorch): 4 Mi bf16
//   elements = 8,388,608 bytes over 8 ranks in 100 us: algbw 83.89 GB/s,
//   busbw x 2*7/8 = 146.80 GB/s;
// - corr 2: all_gather whose args are on its record_param_comms cpu_op
//   (External id 50, through its launch): 1 Mi fp32 in, 4 Mi out over 4
//   ranks = 16,777,216 bytes in 200 us: algbw 83.89 GB/s, busbw x 3/4 =
//   62.91 GB/s;
// - corr 3: all_reduce of 1,000 fp32 without "Group size": 4,000 bytes in
//   4 us, algbw 1.00 GB/s, no bus bandwidth;
// - corr 4: a broadcast kernel with no collective args at all.
std::string CollectiveTrace() {
  const std::string all_reduce_args =
      "\"Collective name\": \"allreduce\", \"dtype\": \"BFloat16\", "
      "\"In msg nelems\": 4194304, \"Out msg nelems\": 4194304, "
      "\"Group size\": 8, \"Process Group Name\": \"0\", ";
  return "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, "
         "\"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132, "
         "\"computeMajor\": 9, \"computeMinor\": 0}],\n"
         "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
         "\"world_size\": 8},\n\"traceEvents\": [\n" +
         Launch("10", 1, 40) + ",\n" +
         NcclKernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL("
                    "ncclDevKernelArgsStorage<4096ul>)",
                    "100", "100", 1, all_reduce_args) +
         ",\n"
         "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
         "\"record_param_comms\", \"pid\": 100, \"tid\": 100, \"ts\": 300, "
         "\"dur\": 10, \"args\": {\"External id\": 50, \"Collective name\": "
         "\"_allgather_base\", \"dtype\": \"Float\", \"In msg nelems\": "
         "1048576, \"Out msg nelems\": 4194304, \"Group size\": 4}},\n" +
         Launch("301", 2, 50) + ",\n" +
         NcclKernel("ncclDevKernel_AllGather_RING_LL("
                    "ncclDevKernelArgsStorage<4096ul>)",
                    "400", "200", 2, "") +
         ",\n" + Launch("700", 3, 60) + ",\n" +
         NcclKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL("
                    "ncclDevKernelArgsStorage<4096ul>)",
                    "800", "4", 3,
                    "\"Collective name\": \"allreduce\", \"dtype\": "
                    "\"Float\", \"In msg nelems\": 1000, \"Out msg nelems\": "
                    "1000, ") +
         ",\n" + Launch("900", 4, 70) + ",\n" +
         NcclKernel("ncclDevKernel_Broadcast_RING_LL("
                    "ncclDevKernelArgsStorage<4096ul>)",
                    "1000", "50", 4, "") +
         "\n]}\n";
}

class CollectivesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("collectives");
    trace_ = dir_ + "/trace.json";
    std::ofstream(trace_, std::ios::binary) << CollectiveTrace();
  }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  std::string dir_, trace_;
};

// The text report's comms lines, from the trace read in memory: one per
// kind of call, by time; what the trace does not give is said. The H100's
// link roof (NVLink 4, 450 GB/s per direction) places each call with a bus
// bandwidth on it: 62.91 / 450 = 14.0%, 146.80 / 450 = 32.6%, bound link.
TEST_F(CollectivesTest, AnalyzeShowsMessageSizeAndBandwidths) {
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze", {trace_}, &out, &err), 0) << err;
  EXPECT_NE(out.find("  comms:    all_gather fp32 bytes=16777216 ranks=4: 1 "
                     "kernel, 0.200 ms, algbw 83.89 GB/s, busbw 62.91 GB/s = "
                     "14.0% of link roof, bound link\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("            all_reduce bf16 bytes=8388608 ranks=8: 1 "
                     "kernel, 0.100 ms, algbw 83.89 GB/s, busbw 146.80 GB/s = "
                     "32.6% of link roof, bound link\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("            all_reduce fp32 bytes=4000 ranks=?: 1 "
                     "kernel, 0.004 ms, algbw 1.00 GB/s, busbw unknown (no "
                     "group size)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("            (no message size): 1 kernel, 0.050 ms, no "
                     "bandwidth (the trace gives no message size)\n"),
            std::string::npos)
      << out;
  // 304 of the 354 us are collectives whose message size is known (the
  // broadcast's is not); the 300 us with a bus bandwidth sit on the link
  // roof, counted as on the roofline.
  EXPECT_NE(out.find("0.0% of GPU time has FLOPs or bytes, 85.9% with the "
                     "collectives' message sizes; 84.7% on a roof (84.7% "
                     "collectives on the link roof)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("; link 450 GB/s per direction (NVLink 4 (18 links, 900 "
                     "GB/s both ways))"),
            std::string::npos)
      << out;
  const std::string both = out + err;
  EXPECT_NE(both.find("1 NCCL kernels without a message size"),
            std::string::npos)
      << both;
  EXPECT_NE(both.find("1 collective kernels without a group size"),
            std::string::npos)
      << both;
}

// The store holds the figures as kernel metrics; the report built from it
// equals the one built from the trace.
TEST_F(CollectivesTest, StoreReportEqualsTraceReport) {
  const std::string store_path = dir_ + "/runs.sqlite";
  {
    auto store = Store::Open(store_path, Store::Durability::kScratch);
    ASSERT_TRUE(store.ok()) << store.status().message();
    static const KinetoSource source;
    auto r = ReadSourceInto(source, trace_, {}, store->get());
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_path, store_path).ok());
  int metrics = 0;
  double busbw = 0;
  ASSERT_TRUE(reader
                  .ForEachKernelMetric(1,
                                       [&](const KernelMetricRow& m) {
                                         ++metrics;
                                         if (m.correlation_id == 1 &&
                                             m.name == "collective.busbw") {
                                           EXPECT_EQ(m.unit, "bytes/s");
                                           busbw = m.value;
                                         }
                                         return OkStatus();
                                       })
                  .ok());
  // bytes, ranks, algbw, busbw for two kernels; bytes and algbw for one.
  EXPECT_EQ(metrics, 10);
  EXPECT_DOUBLE_EQ(busbw, 8388608.0 * 1e9 / 100000.0 * 1.75);
  ReportOptions o;
  o.run_id = 1;
  auto from_store = BuildReport(reader, o);
  ASSERT_TRUE(from_store.ok()) << from_store.status().message();
  const std::vector<CollectiveRow>& c = from_store->collectives;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].shape, "all_gather fp32 bytes=16777216 ranks=4");
  EXPECT_EQ(c[0].count, 1);
  EXPECT_EQ(c[0].total_ns, 200000);
  EXPECT_DOUBLE_EQ(*c[0].message_bytes, 16777216.0);
  EXPECT_DOUBLE_EQ(*c[0].algbw, 16777216.0 / 200e-6);
  EXPECT_DOUBLE_EQ(*c[0].busbw, 16777216.0 / 200e-6 * 0.75);
  EXPECT_EQ(c[1].shape, "all_reduce bf16 bytes=8388608 ranks=8");
  EXPECT_NEAR(*c[1].busbw, 146.80064e9, 1e3);
  EXPECT_EQ(c[2].shape, "");
  EXPECT_FALSE(c[2].algbw);
  EXPECT_EQ(c[3].shape, "all_reduce fp32 bytes=4000 ranks=?");
  EXPECT_NEAR(*c[3].algbw, 1e9, 1);
  EXPECT_FALSE(c[3].busbw);

  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze", {trace_, "--format", "json"},
                    &out, &err),
            0)
      << err;
  StatusOr<json::Value> v = json::Parse(out, "analyze.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const json::Value* rows = v->Find("collectives");
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->as_array().size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const json::Value& r = rows->as_array()[i];
    EXPECT_EQ(r.Find("shape")->as_string(), c[i].shape);
    EXPECT_EQ(r.Find("count")->as_number(), c[i].count);
    if (c[i].busbw) {
      EXPECT_NEAR(r.Find("busbw_bytes_per_s")->as_number(), *c[i].busbw,
                  1e-6 * *c[i].busbw);
      EXPECT_NEAR(r.Find("fraction_of_link")->as_number(),
                  *c[i].busbw / 450e9, 1e-9);
      EXPECT_EQ(r.Find("bound")->as_string(), "link");
    } else {
      EXPECT_TRUE(r.Find("busbw_bytes_per_s")->is_null());
      EXPECT_TRUE(r.Find("fraction_of_link")->is_null());
    }
  }
  // The store's report places them alike (the link is the GPU's).
  ASSERT_TRUE(c[1].fraction_of_link.has_value());
  EXPECT_NEAR(*c[1].fraction_of_link, 146.80064e9 / 450e9, 1e-9);
  EXPECT_FALSE(c[3].fraction_of_link);
  EXPECT_EQ(from_store->ns_comm_on_link_roof, 300000);
  EXPECT_EQ(v->Find("ns_comm_on_link_roof")->as_number(), 300000);
  EXPECT_EQ(v->Find("link_bytes_per_s")->as_number(), 450e9);
}

// Grouped by kernel, a collective kernel's row is on the link roof too:
// its % of roof is its bus bandwidth's share of the link's (the bf16
// all-reduce, 146.80 of 450 GB/s), bound link; the kernel with no bus
// bandwidth stays unknown.
TEST_F(CollectivesTest, KernelRowsOfCollectivesAreBoundByTheLink) {
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {trace_, "--by", "kernel", "--format", "json"}, &out,
                    &err),
            0)
      << err;
  StatusOr<json::Value> v = json::Parse(out, "analyze.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  int seen = 0;
  for (const json::Value& g : v->Find("groups")->as_array()) {
    const std::string& name = g.Find("name")->as_string();
    if (name.find("AllReduce_Sum_bf16") != std::string::npos) {
      ++seen;
      EXPECT_EQ(g.Find("bound")->as_string(), "link");
      EXPECT_NEAR(g.Find("fraction_of_roof")->as_number(),
                  146.80064e9 / 450e9, 1e-6);
    } else if (name.find("AllReduce_Sum_f32") != std::string::npos) {
      ++seen;
      EXPECT_NE(g.Find("bound")->as_string(), "link");
    }
  }
  EXPECT_EQ(seen, 2);
}

// The HTML page draws the measured communication roofline: the two calls
// with a bus bandwidth as points under the link roof's line.
TEST_F(CollectivesTest, HtmlDrawsTheCommsRoofline) {
  const std::string html = dir_ + "/report.html";
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze", {trace_, "--html", html}, &out,
                    &err),
            0)
      << err;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  const size_t at = page.find("<h2>Communication roofline</h2>");
  ASSERT_NE(at, std::string::npos);
  const std::string svg = page.substr(at, page.find("</svg>", at) - at);
  size_t points = 0;
  for (size_t p = svg.find("class=\"collective\""); p != std::string::npos;
       p = svg.find("class=\"collective\"", p + 1)) {
    ++points;
  }
  EXPECT_EQ(points, 2u);
  EXPECT_NE(svg.find("class=\"link-roof\""), std::string::npos);
  EXPECT_NE(svg.find("all_reduce bf16 bytes=8388608 ranks=8: busbw 146.80 "
                     "GB/s = 32.6% of link roof"),
            std::string::npos);
}

// A device profile can set the link roof (a measured bandwidth): the same
// calls are then judged against it.
TEST_F(CollectivesTest, DeviceProfileLinkReplacesTheDatasheets) {
  DeviceProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  ASSERT_TRUE(FillDatasheet(&p));
  EXPECT_EQ(p.datasheet_link_bytes_per_s, 450e9);
  p.measured_dram_bytes_per_s = 3.0e12;
  p.measured_link_bytes_per_s = 360e9;
  p.link_name = "NVLink 4, measured";
  const std::string profile = dir_ + "/h100.json";
  ASSERT_TRUE(SaveDeviceProfile(p, profile).ok());
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {trace_, "--device-profile", profile}, &out, &err),
            0)
      << err;
  // 146.80 / 360 = 40.8%.
  EXPECT_NE(out.find("busbw 146.80 GB/s = 40.8% of link roof, bound link"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("; link 360 GB/s per direction (NVLink 4, measured)"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace rooftrace
