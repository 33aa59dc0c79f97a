// A job's ranks side by side (`rooftrace analyze RANK0 RANK1 ...`, a
// folder): two ranks' Kineto traces written here, each with three
// all_reduces of one size. Rank 1 arrives last to the first two (its
// kernels are the shorter: 40 and 50 us against rank 0's 100 and 90),
// rank 0 to the third (60 against 80): rank 0 waited 60 + 40 = 100 us,
// rank 1 20 us. The clocks differ by a second between the files, which the
// durations do not care about.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analyzer/commands.h"
#include "base/json.h"
#include "report/job_report.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using testing::RunMain;
using test_support::TempDir;

std::string RankTrace(int rank, const std::string& t0,
                      const std::vector<std::string>& durations) {
  std::string events;
  for (size_t i = 0; i < durations.size(); ++i) {
    const std::string corr = std::to_string(i + 1);
    const std::string ts = t0 + std::to_string(100 + 1000 * i);
    events += std::string(i ? ",\n" : "") +
              "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
              "\"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": " +
              t0 + std::to_string(90 + 1000 * i) +
              ", \"dur\": 2, \"args\": {\"correlation\": " + corr + "}},\n" +
              "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
              "\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL\", \"pid\": 0, "
              "\"tid\": 21, \"ts\": " + ts + ", \"dur\": " + durations[i] +
              ", \"args\": {\"Collective name\": \"allreduce\", \"dtype\": "
              "\"BFloat16\", \"In msg nelems\": 1048576, \"Out msg nelems\": "
              "1048576, \"Group size\": 2, \"device\": 0, \"stream\": 21, "
              "\"correlation\": " + corr + "}}";
  }
  return "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, "
         "\"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132}],\n"
         "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " +
         std::to_string(rank) + ", \"world_size\": 2},\n\"traceEvents\": [\n" +
         events + "\n]}\n";
}

class JobReportTest : public ::testing::Test {
 protected:
  JobReportTest() : dir_("job") {
    std::filesystem::create_directories(dir_.File("ranks"));
    // File names in the other order than the ranks: the trace says its rank.
    std::ofstream(dir_.File("ranks/a.json"))
        << RankTrace(1, "2000000", {"40", "50", "80"});
    std::ofstream(dir_.File("ranks/b.json"))
        << RankTrace(0, "1000000", {"100", "90", "60"});
  }
  TempDir dir_;
};

TEST_F(JobReportTest, RanksWaitedForTheLastToArrive) {
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {dir_.File("ranks"), "--format", "json"}, &out, &err),
            0)
      << err;
  auto v = json::Parse(out);
  ASSERT_TRUE(v.ok()) << out;
  const json::Value& ranks = *v->Find("ranks");
  ASSERT_EQ(ranks.as_array().size(), 2u);
  const json::Value& r0 = ranks.as_array()[0];
  const json::Value& r1 = ranks.as_array()[1];
  EXPECT_EQ(r0.Find("rank")->as_number(), 0);
  EXPECT_NE(r0.Find("input")->as_string().find("b.json"), std::string::npos);
  EXPECT_EQ(r0.Find("wait_ns")->as_number(), 100000);
  EXPECT_EQ(r1.Find("wait_ns")->as_number(), 20000);
  EXPECT_EQ(r0.Find("last_arrivals")->as_number(), 1);
  EXPECT_EQ(r1.Find("last_arrivals")->as_number(), 2);
  EXPECT_EQ(r0.Find("comm_ns")->as_number(), 250000);
  const json::Value& coll = v->Find("collectives")->as_array()[0];
  EXPECT_EQ(coll.Find("calls")->as_number(), 3);
  // Spreads 60, 40, 20 us: mean 40, max 60.
  EXPECT_EQ(coll.Find("mean_spread_ns")->as_number(), 40000);
  EXPECT_EQ(coll.Find("max_spread_ns")->as_number(), 60000);
  EXPECT_EQ(v->Find("unmatched_calls")->as_number(), 0);

  // The table says the same, and the two files given one by one too.
  std::string table;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {dir_.File("ranks/b.json"), dir_.File("ranks/a.json")},
                    &table, &err),
            0)
      << err;
  EXPECT_NE(table.find("Ranks (2)"), std::string::npos) << table;
  EXPECT_NE(table.find("3 calls, spread mean 40.0 us, max 60.0 us"),
            std::string::npos)
      << table;
}

// A collective one rank made more often is counted, not compared; two
// inputs claiming one rank, and single-input options, are refused.
TEST_F(JobReportTest, UnmatchedCallsAndBadJobsAreSaid) {
  std::ofstream(dir_.File("ranks/b.json"))
      << RankTrace(0, "1000000", {"100", "90", "60", "70"});
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {dir_.File("ranks"), "--format", "json"}, &out, &err),
            0)
      << err;
  auto v = json::Parse(out);
  ASSERT_TRUE(v.ok()) << out;
  EXPECT_EQ(v->Find("unmatched_calls")->as_number(), 1);
  EXPECT_EQ(v->Find("collectives")->as_array()[0].Find("calls")->as_number(),
            3);

  std::ofstream(dir_.File("ranks/a.json"))
      << RankTrace(0, "2000000", {"40", "50", "80"});
  EXPECT_EQ(RunMain(AnalyzeMain, "analyze", {dir_.File("ranks")}, &out, &err),
            2);
  EXPECT_NE(err.find("are both rank 0"), std::string::npos) << err;
  EXPECT_EQ(RunMain(AnalyzeMain, "analyze",
                    {dir_.File("ranks"), "--format", "csv"}, &out, &err),
            2);
  EXPECT_NE(err.find("are for one input"), std::string::npos) << err;
}

}  // namespace
}  // namespace rooftrace
