// `rooftrace diff` on crafted baseline/candidate pairs: exit codes,
// thresholds, the noise floor, matching by family+shape vs family, JUnit,
// different GPUs, bad input.
#include <gtest/gtest.h>

#include "analyzer/diff.h"
#include "base/json.h"
#include "analyzer/commands.h"
#include "tests/support/golden_store.h"
#include "tests/support/xml_check.h"

namespace rooftrace {
namespace {

using testing::ReadFile;
using testing::RunMain;
using testing::TempDir;
using testing::TestStore;

class DiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("diff");
    base_ = dir_ + "/base.sqlite";
    slow_ = dir_ + "/slow.sqlite";
    other_gpu_ = dir_ + "/other.sqlite";
    {
      TestStore s(base_);
      testing::BuildGoldenRun(s);
    }
    {
      // The 4096^3 GEMMs take 120 us instead of 100: +20 % mean time,
      // fraction of roof 0.5 -> 0.4167 (-16.7 %).
      TestStore s(slow_);
      testing::BuildGoldenRun(s, 1, 1.2);
    }
    {
      TestStore s(other_gpu_);
      testing::BuildGoldenRun(s, 1, 1.0, "Other GPU");
    }
  }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  int Diff(std::vector<std::string> args, std::string* out, std::string* err = nullptr) {
    std::string ignored;
    return RunMain(DiffMain, "diff", args, out, err ? err : &ignored);
  }

  std::string dir_, base_, slow_, other_gpu_;
};

const std::vector<std::string> kLowFloor = {"--min-count", "2", "--min-time-ms",
                                            "0.01"};

std::vector<std::string> With(std::vector<std::string> a,
                              const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Rows that moved equally (identical runs: all 0) read in natural name
// order, layer.2 before layer.10 (issue 18 item 22).
TEST(DiffOrderTest, TiesAreOrderedNaturally) {
  Report r;
  for (const char* key : {"layer.10", "layer.2", "layer.1", "layer.0"}) {
    GroupRow g;
    g.key = g.name = key;
    g.count = 10;
    g.total_ns = 1000000;
    g.mean_ns = 100000;
    r.groups.push_back(g);
  }
  r.kernel_count = 40;
  r.total_ns = 4000000;
  const analyzer::DiffResult d = analyzer::DiffReports(r, r, {});
  std::vector<std::string> keys;
  for (const auto& row : d.rows) keys.push_back(row.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"layer.0", "layer.1", "layer.2",
                                            "layer.10"}));
}

// +20 % on a matched family+shape past a 5 % threshold: exit 1, named.
TEST_F(DiffTest, SlowerGemmIsARegression) {
  std::string out;
  EXPECT_EQ(Diff(With({base_, slow_}, kLowFloor), &out), 1) << out;
  EXPECT_NE(out.find("ampere_bf16_s16816gemm [m=4096 n=4096 k=4096 batch=1]: "
                     "mean time per launch 100.00 -> 120.00 us (+20.0%); % of "
                     "roof 50.0 -> 41.7 (-16.7%)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Result: 1 regression in 4 matched groups (0 improved, 1 "
                     "below the noise floor, 0 new, 0 gone)"),
            std::string::npos)
      << out;
}

// The same pair under a 25 % threshold, identical runs, and the default
// noise floor (3 launches < 5): exit 0.
TEST_F(DiffTest, ThresholdIdenticalRunsAndNoiseFloorPass) {
  std::string out;
  EXPECT_EQ(Diff(With({base_, slow_, "--threshold", "25"}, kLowFloor), &out), 0) << out;
  EXPECT_EQ(Diff(With({base_, base_}, kLowFloor), &out), 0) << out;
  EXPECT_NE(out.find("Result: 0 regressions in 4 matched groups"), std::string::npos);
  EXPECT_EQ(Diff({base_, slow_}, &out), 0) << out;
  EXPECT_NE(out.find("below the noise floor"), std::string::npos);
  // The reverse direction is an improvement, not a regression.
  EXPECT_EQ(Diff(With({slow_, base_}, kLowFloor), &out), 0) << out;
  EXPECT_NE(out.find("1 improved"), std::string::npos) << out;
}

// --by family mixes the two GEMM shapes: mean (3 x 120 + 2 x 20) / 5 = 80 us
// against 68 us, +17.6 %.
TEST_F(DiffTest, ByFamilyComparesFamilyMeans) {
  std::string out;
  EXPECT_EQ(Diff(With({base_, slow_, "--by", "family", "--format", "json"}, kLowFloor),
                 &out),
            1);
  StatusOr<json::Value> v = json::Parse(out, "diff.json");
  ASSERT_TRUE(v.ok()) << v.status().message() << out;
  EXPECT_EQ(v->Find("regressions")->as_number(), 1);
  EXPECT_EQ(v->Find("matched")->as_number(), 3);
  const json::Value& g = v->Find("groups")->as_array()[0];
  EXPECT_EQ(g.Find("name")->as_string(), "ampere_bf16_s16816gemm");
  EXPECT_EQ(g.Find("status")->as_string(), "REGRESSED");
  // The family spans two shapes: the dominant one with its share and the
  // count (issue 18 item 19), never one shape standing for all.
  EXPECT_EQ(g.Find("shape")->as_string(),
            "m=4096 n=4096 k=4096 batch=1 (88%, 2 shapes)");
  EXPECT_NEAR(g.Find("mean_time_change_pct")->as_number(), (80.0 - 68.0) / 68.0 * 100,
              1e-6);
  EXPECT_NEAR(g.Find("total_time_change_pct")->as_number(), 60.0 / 340.0 * 100, 1e-6);
  // Prefill share of the family: 300/340 -> 360/400.
  EXPECT_NEAR(g.Find("baseline")->Find("prefill_share")->as_number(), 300.0 / 340, 1e-9);
  EXPECT_NEAR(g.Find("candidate")->Find("prefill_share")->as_number(), 0.9, 1e-9);
  // Run phase mix: prefill 300/502 -> 360/562.
  const json::Value& prefill = v->Find("phases")->as_array()[0];
  EXPECT_NEAR(prefill.Find("baseline_share")->as_number(), 300.0 / 502, 1e-9);
  EXPECT_NEAR(prefill.Find("candidate_share")->as_number(), 360.0 / 562, 1e-9);
}

// JUnit: one testcase per group, the regression a failure, the noisy group
// skipped; well-formed XML.
TEST_F(DiffTest, JunitHasOneTestcasePerGroup) {
  std::string out;
  const std::string junit = dir_ + "/diff.xml";
  EXPECT_EQ(Diff(With({base_, slow_, "--junit", junit}, kLowFloor), &out), 1);
  const std::string xml = ReadFile(junit);
  std::string root;
  EXPECT_EQ(testing::CheckXmlWellFormed(xml, &root), "");
  EXPECT_EQ(root, "testsuites");
  EXPECT_EQ(testing::CountElements(xml, "testcase"), 4);
  EXPECT_EQ(testing::CountElements(xml, "failure"), 1);
  EXPECT_EQ(testing::CountElements(xml, "skipped"), 1);
  EXPECT_NE(xml.find("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            std::string::npos);
  EXPECT_NE(xml.find("name=\"ampere_bf16_s16816gemm [m=4096 n=4096 k=4096 "
                     "batch=1]\" time=\"0.000360\"><failure"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"at::native::elementwise_kernel&lt;CUDAFunctor_add&gt;\""),
            std::string::npos);
}

// Markdown for a PR comment highlights the regression.
TEST_F(DiffTest, MarkdownHighlightsRegressions) {
  std::string out;
  EXPECT_EQ(Diff(With({base_, slow_, "--format", "markdown"}, kLowFloor), &out), 1);
  EXPECT_EQ(out.rfind("### rooftrace diff: regression\n", 0), 0u);
  EXPECT_NE(out.find("| **REGRESSED** | ampere_bf16_s16816gemm | m=4096 n=4096 k=4096 "
                     "batch=1 | 3 -> 3 | 100.00 -> 120.00 | +20.0% |"),
            std::string::npos)
      << out;
}

// --device-profile of another GPU than the runs' (an H100 datasheet on
// runs of "Test GPU 2TB"): a warning per side naming both (issue 18
// item 20); the same profile on both sides still compares.
TEST_F(DiffTest, DeviceProfileOfAnotherGpuWarns) {
  std::string out, err;
  EXPECT_EQ(Diff(With({base_, base_, "--device-profile", "h100-sxm"},
                      kLowFloor),
                 &out, &err),
            0)
      << err;
  EXPECT_NE(err.find("rooftrace diff: warning: --device-profile h100-sxm: "
                     "baseline: the roofs (datasheet:h100-sxm) are for"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("candidate: the roofs"), std::string::npos) << err;
  EXPECT_NE(err.find("Test GPU 2TB"), std::string::npos) << err;
}

// Different GPUs: a loud warning on stderr and in the report, still
// compared (identical numbers: exit 0).
TEST_F(DiffTest, DifferentGpusWarnButCompare) {
  std::string out, err;
  EXPECT_EQ(Diff(With({base_, other_gpu_}, kLowFloor), &out, &err), 0);
  EXPECT_NE(err.find("WARNING: baseline ran on 'Test GPU 2TB', candidate on 'Other "
                     "GPU': different GPUs, compared anyway"),
            std::string::npos)
      << err;
  EXPECT_NE(out.find("WARNING: the runs are from different GPUs"), std::string::npos);
  EXPECT_NE(out.find("Result: 0 regressions in 4 matched groups"), std::string::npos);
}

// New and gone groups are listed, not regressions; bad input exits 2.
TEST_F(DiffTest, NewGoneAndBadInput) {
  const std::string extra = dir_ + "/extra.sqlite";
  {
    TestStore s(extra);
    testing::BuildGoldenRun(s);
    testing::KernelSpec k;
    k.name = "brand_new_kernel";
    k.start_ns = 9000000;
    k.duration_ns = 50000;
    s.AddKernel(k);
  }
  std::string out, err;
  EXPECT_EQ(Diff(With({base_, extra}, kLowFloor), &out), 0) << out;
  EXPECT_NE(out.find("1 new, 0 gone"), std::string::npos) << out;
  EXPECT_EQ(Diff(With({extra, base_}, kLowFloor), &out), 0);
  EXPECT_NE(out.find("0 new, 1 gone"), std::string::npos) << out;

  EXPECT_EQ(Diff({base_}, &out, &err), 2);
  EXPECT_NE(err.find("needs two inputs"), std::string::npos);
  EXPECT_EQ(Diff({base_, dir_ + "/missing.sqlite"}, &out, &err), 2);
  EXPECT_NE(err.find("candidate " + dir_ + "/missing.sqlite: No such file"),
            std::string::npos)
      << err;
  EXPECT_EQ(Diff({base_, slow_, "--by", "phase"}, &out, &err), 2);
  EXPECT_EQ(Diff({base_, slow_, "--baseline-run", "4"}, &out, &err), 2);
  EXPECT_NE(err.find("baseline " + base_ + ": run 4 not found"), std::string::npos);
  EXPECT_EQ(Diff({base_, slow_, "--threshold", "-3"}, &out, &err), 2);
}

// An incomplete run on either side (complete = 0 with its reason, or NULL:
// its writer was killed) would be judged on missing data: exit 3 naming
// the side and the reason, unless --allow-incomplete (then a warning).
TEST_F(DiffTest, IncompleteRunsAreRefusedUnlessAllowed) {
  const std::string killed = dir_ + "/killed.sqlite";
  const std::string failed = dir_ + "/failed.sqlite";
  {
    TestStore s(killed);
    testing::BuildGoldenRun(s);
    s.Exec("UPDATE runs SET complete = NULL");
  }
  {
    TestStore s(failed);
    testing::BuildGoldenRun(s);
    s.Exec("UPDATE runs SET complete = 0, incomplete_reason = 'a store "
           "write failed (database or disk is full)'");
  }
  std::string out, err;
  EXPECT_EQ(Diff(With({base_, killed}, kLowFloor), &out, &err), 3);
  EXPECT_NE(err.find("candidate " + killed + ": run 1 is INCOMPLETE"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--allow-incomplete"), std::string::npos) << err;
  EXPECT_EQ(Diff(With({failed, base_}, kLowFloor), &out, &err), 3);
  EXPECT_NE(err.find("baseline " + failed + ": run 1 is INCOMPLETE"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("disk is full"), std::string::npos) << err;
  EXPECT_EQ(Diff(With({failed, base_, "--allow-incomplete"}, kLowFloor), &out,
                 &err),
            0)
      << err;
  EXPECT_NE(err.find("WARNING"), std::string::npos) << err;
  // A regression still says so when incomplete runs are allowed.
  EXPECT_EQ(Diff(With({killed, slow_, "--allow-incomplete"}, kLowFloor), &out,
                 &err),
            1);
}

// Both runs' labels are in the diff's header in every format: the table's
// labels line, markdown, JSON (per side) and JUnit properties.
TEST_F(DiffTest, HeaderShowsBothRunsLabels) {
  // Scenario: the baseline is commit=aaa branch=main, the candidate
  // commit=bbb.
  const std::string base = dir_ + "/base-labelled.sqlite";
  const std::string cand = dir_ + "/cand-labelled.sqlite";
  {
    TestStore s(base);
    testing::BuildGoldenRun(s);
    s.Exec("INSERT INTO run_labels VALUES (1, 'commit', 'aaa'), "
           "(1, 'branch', 'main')");
  }
  {
    TestStore s(cand);
    testing::BuildGoldenRun(s, 1, 1.2);
    s.Exec("INSERT INTO run_labels VALUES (1, 'commit', 'bbb')");
  }
  std::string out;
  EXPECT_EQ(Diff(With({base, cand}, kLowFloor), &out), 1);
  EXPECT_NE(out.find("  labels: commit=aaa branch=main -> commit=bbb\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(Diff(With({base, cand, "--format", "markdown"}, kLowFloor), &out),
            1);
  EXPECT_NE(out.find("Labels: `commit=aaa branch=main` -> `commit=bbb`."),
            std::string::npos)
      << out;
  EXPECT_EQ(Diff(With({base, cand, "--format", "json"}, kLowFloor), &out), 1);
  StatusOr<json::Value> v = json::Parse(out, "diff.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->Find("baseline")->Find("labels")->Find("branch")->as_string(),
            "main");
  EXPECT_EQ(v->Find("candidate")->Find("labels")->Find("commit")->as_string(),
            "bbb");
  const std::string junit = dir_ + "/labels.xml";
  EXPECT_EQ(Diff(With({base, cand, "--junit", junit}, kLowFloor), &out), 1);
  const std::string xml = ReadFile(junit);
  EXPECT_EQ(testing::CheckXmlWellFormed(xml, nullptr), "");
  EXPECT_NE(xml.find("<property name=\"candidate.label.commit\" "
                     "value=\"bbb\"/>"),
            std::string::npos)
      << xml;
  // Runs without labels have no labels line.
  EXPECT_EQ(Diff(With({base_, slow_}, kLowFloor), &out), 1);
  EXPECT_EQ(out.find("labels:"), std::string::npos);
}

}  // namespace
}  // namespace rooftrace
