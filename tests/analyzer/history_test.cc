// `rooftrace history` on stores built here with known series: runs selected
// by label in time order, a regression injected in one family at a known
// run found by --check (exit 1) and absent without it (exit 0), incomplete
// runs in the window (exit 3), groups too short or too noisy said so, and
// bad input (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/changepoint.h"
#include "analyzer/changepoint_latest.h"
#include "analyzer/history.h"
#include "analyzer/commands.h"
#include "base/json.h"
#include "tests/support/test_store.h"
#include "tests/support/xml_check.h"

namespace rooftrace {
namespace {

using testing::ReadFile;
using testing::RunMain;
using testing::TempDir;
using testing::TestStore;

constexpr int kRuns = 40;

struct StoreSpec {
  // The run (1-based, in time order) from which the GEMM family is
  // `regression` slower; 0: never.
  int regression_from = 0;
  double regression = 0.08;
  // Runs stored as incomplete (1-based).
  std::vector<int> incomplete;
  // A family that runs only in the first few runs.
  bool short_family = false;
  // A family whose time scatters 30 % from run to run.
  bool noisy_family = false;
  // main's first and latest runs have steps with token counts: a 4,096-
  // token prefill over 2 ms and two 32-token decodes over 1 ms each (1.25
  // ms in the latest run).
  bool token_steps = false;
};

StoreSpec RegressedFrom(int night) {
  StoreSpec s;
  s.regression_from = night;
  return s;
}
StoreSpec IncompleteAt(int night) {
  StoreSpec s;
  s.incomplete = {night};
  return s;
}

// kRuns runs labelled branch=main (started in time order, but stored with
// ids in reverse so that time order is not id order) and, in between, runs
// of branch=other that are 50 % slower everywhere and must not count.
// Per run: a GEMM family (4 launches, 100 us, 50 % of roof) and a
// layernorm family (6 launches, 20 us), each run's mean drawn with 1 %
// noise (seeded).
void BuildStore(const std::string& path, const StoreSpec& spec) {
  TestStore s(path);
  stats::SyntheticSeriesSpec gemm, norm, noisy;
  gemm.runs = norm.runs = noisy.runs = kRuns;
  gemm.noise = norm.noise = 0.01;
  gemm.base = 100000;
  norm.base = 20000;
  noisy.base = 50000;
  noisy.noise = 0.30;
  if (spec.regression_from > 0) {
    gemm.step_at = spec.regression_from - 1;
    gemm.step = spec.regression;
  }
  const auto gemm_ns = stats::SyntheticSeries(gemm, 11);
  const auto norm_ns = stats::SyntheticSeries(norm, 12);
  const auto noisy_ns = stats::SyntheticSeries(noisy, 13);
  auto add = [&](int64_t run_id, int night, const std::string& branch,
                 double slow) {
    s.AddRun(run_id, "Test GPU 2TB");
    s.Exec("UPDATE runs SET started_unix_ns = " +
           std::to_string(int64_t{1700000000} * 1000000000 +
                          int64_t{night} * 86400 * 1000000000 +
                          (branch == "main" ? 0 : 3600000000000)) +
           " WHERE run_id = " + std::to_string(run_id));
    s.Exec("INSERT INTO run_labels VALUES (" + std::to_string(run_id) +
           ", 'branch', '" + branch + "'), (" + std::to_string(run_id) +
           ", 'night', '" + std::to_string(night) + "')");
    int64_t t = 1000;
    auto kernel = [&](const std::string& family, double ns, double roof,
                      int count) {
      for (int i = 0; i < count; ++i) {
        testing::KernelSpec k;
        k.run_id = k.session_id = run_id;
        k.name = family + "_kernel";
        k.family = family;
        k.shape = family == "gemm" ? std::optional<std::string>(
                                         "m=4096 n=16 k=11008 batch=1")
                                   : std::nullopt;
        k.start_ns = t;
        k.duration_ns = static_cast<int64_t>(ns * slow);
        k.fraction_of_roof = roof * 100000 / (ns * slow);
        k.phase = "decode";
        k.bound = "memory";
        s.AddKernel(k);
        t += k.duration_ns + 1000;
      }
    };
    if (spec.token_steps && branch == "main" &&
        (night == 1 || night == kRuns)) {
      const std::string r = std::to_string(run_id);
      const int64_t decode_ns = night == 1 ? 1000000 : 1250000;
      s.Exec("INSERT INTO steps (run_id, step_id, session_id, start_ns, "
             "end_ns, phase, token_count) VALUES (" + r + ", 1, " + r +
             ", 0, 2000000, 'prefill', 4096), (" + r + ", 2, " + r +
             ", 2000000, " + std::to_string(2000000 + decode_ns) +
             ", 'decode', 32), (" + r + ", 3, " + r + ", 4000000, " +
             std::to_string(4000000 + decode_ns) + ", 'decode', 32)");
    }
    kernel("gemm", gemm_ns[night - 1], 0.5, 4);
    kernel("layernorm", norm_ns[night - 1], 0.2, 6);
    if (spec.short_family && night <= 2) kernel("warmup", 30000, 0.1, 2);
    if (spec.noisy_family) kernel("sampler", noisy_ns[night - 1], 0.1, 3);
  };
  for (int night = 1; night <= kRuns; ++night) {
    const int64_t id = 2 * (kRuns - night) + 1;  // reverse id order
    add(id, night, "main", 1.0);
    add(id + 1, night, "other", 1.5);
    for (int bad : spec.incomplete) {
      if (bad == night) {
        s.Exec("UPDATE runs SET complete = 0, incomplete_reason = 'cut' "
               "WHERE run_id = " + std::to_string(id));
      }
    }
  }
}

// The run id of main's run of `night` in BuildStore.
int64_t MainRunId(int night) { return 2 * (kRuns - night) + 1; }

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TempDir("history"); }
  void TearDown() override { testing::RemoveTempDir(dir_); }
  int History(std::vector<std::string> args, std::string* out,
              std::string* err = nullptr) {
    std::string ignored;
    return RunMain(HistoryMain, "history", args, out, err ? err : &ignored);
  }
  std::string dir_;
};

// The integration case of issue 27: the GEMM family is 8 % slower from
// night 36 on (the latest 5 of 40 runs): --check exits 1, the JSON names
// the group, the run, the direction and the roofline move, and JUnit has
// one failing testcase. Runs of another branch are left out.
TEST_F(HistoryTest, CheckFindsAnInjectedRegressionAndExits1) {
  // Scenario: 40 nightly runs on branch=main, regression at night 36.
  const std::string store = dir_ + "/nightly.sqlite";
  BuildStore(store, RegressedFrom(36));
  std::string out, err;
  const std::string junit = dir_ + "/history.xml";
  EXPECT_EQ(History({store, "--where", "branch=main", "--check", "--format",
                     "json", "--junit", junit},
                    &out, &err),
            1)
      << err;
  StatusOr<json::Value> v = json::Parse(out, "history.json");
  ASSERT_TRUE(v.ok()) << v.status().message() << out;
  EXPECT_EQ(v->Find("runs")->as_array().size(), static_cast<size_t>(kRuns));
  // Time order, not id order; per-run totals (no steps in these runs).
  const json::Value& first = v->Find("runs")->as_array()[0];
  EXPECT_EQ(first.Find("run_id")->as_number(), MainRunId(1));
  EXPECT_GT(first.Find("gpu_time_ns")->as_number(), 4 * 90000 + 6 * 18000);
  EXPECT_TRUE(first.Find("gpu_time_per_step_ns")->is_null());
  EXPECT_EQ(v->Find("regressed")->as_number(), 1);
  const json::Value& g = v->Find("groups")->as_array()[0];
  EXPECT_EQ(g.Find("name")->as_string(), "gemm");
  EXPECT_EQ(g.Find("verdict")->as_string(), "REGRESSED");
  const json::Array& cps = g.Find("change_points")->as_array();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].Find("run_id")->as_number(), MainRunId(36));
  EXPECT_EQ(cps[0].Find("runs_ago")->as_number(), 4);
  EXPECT_EQ(cps[0].Find("direction")->as_string(), "slower");
  EXPECT_NEAR(cps[0].Find("magnitude")->as_number(), 0.08, 0.02);
  EXPECT_LT(cps[0].Find("pvalue")->as_number(), 0.01);
  EXPECT_NEAR(cps[0].Find("fraction_of_roof_before")->as_number(), 0.5, 0.02);
  EXPECT_NEAR(cps[0].Find("fraction_of_roof_after")->as_number(), 0.5 / 1.08,
              0.02);
  EXPECT_TRUE(cps[0].Find("in_window")->as_bool());
  // The other family is judged and fine.
  EXPECT_EQ(v->Find("groups")->as_array()[1].Find("verdict")->as_string(),
            "ok");
  const std::string xml = ReadFile(junit);
  EXPECT_EQ(testing::CheckXmlWellFormed(xml, nullptr), "");
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"rooftrace.history\" name=\"gemm "
                     "[m=4096 n=16 k=11008 batch=1]\"><failure"),
            std::string::npos)
      << xml;
  // The table says it in words.
  EXPECT_EQ(History({store, "--where", "branch=main"}, &out), 0);
  EXPECT_NE(out.find("REGRESSION: 1 of 2 groups judged regressed"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("run " + std::to_string(MainRunId(36)) +
                     " (4 runs ago): "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Benjamini-Hochberg"), std::string::npos);
}

// The same history without the regression passes the gate; so does the
// regressed one when the window ends before it starts (--window 3: the
// change is at the 5th-latest run).
// Tokens per second where the phases give token counts (StoreSpec::
// token_steps): decode 32,000 -> 25,600 tok/s (-20%), prefill 2,048,000;
// the runs between have no steps and no rate.
TEST_F(HistoryTest, TokensPerSecondWherePhasesGiveThem) {
  const std::string store = dir_ + "/nightly.sqlite";
  StoreSpec spec;
  spec.token_steps = true;
  BuildStore(store, spec);
  std::string out, err;
  ASSERT_EQ(History({store, "--where", "branch=main", "--format", "json"},
                    &out, &err),
            0)
      << err;
  StatusOr<json::Value> v = json::Parse(out, "history.json");
  ASSERT_TRUE(v.ok()) << out;
  const json::Array& runs = v->Find("runs")->as_array();
  EXPECT_DOUBLE_EQ(runs.front().Find("decode_tokens_per_s")->as_number(),
                   32000);
  EXPECT_DOUBLE_EQ(runs.front().Find("prefill_tokens_per_s")->as_number(),
                   2048000);
  EXPECT_DOUBLE_EQ(runs.back().Find("decode_tokens_per_s")->as_number(),
                   25600);
  EXPECT_TRUE(runs[1].Find("decode_tokens_per_s")->is_null());
  ASSERT_EQ(History({store, "--where", "branch=main"}, &out), 0);
  EXPECT_NE(out.find("tokens/s: decode 32000 -> 25600 tok/s (-20.0%"),
            std::string::npos)
      << out;
}

TEST_F(HistoryTest, CheckExits0WithoutARegressionInTheWindow) {
  // Scenario: 40 steady nights; then the regressed store with --window 3.
  const std::string steady = dir_ + "/steady.sqlite";
  BuildStore(steady, {});
  std::string out, err;
  EXPECT_EQ(History({steady, "--where", "branch=main", "--check"}, &out, &err),
            0)
      << out << err;
  EXPECT_NE(out.find("no regression in the latest 5 runs"), std::string::npos)
      << out;
  const std::string regressed = dir_ + "/regressed.sqlite";
  BuildStore(regressed, RegressedFrom(36));
  EXPECT_EQ(History({regressed, "--where", "branch=main", "--check",
                     "--window", "3"},
                    &out),
            0)
      << out;
  // The change point is still shown: it is history, not the gate.
  EXPECT_NE(out.find("slower"), std::string::npos) << out;
}

// A run in the window that is incomplete makes --check exit 3 (no verdict
// on figures that leave data out); outside the window it does not.
TEST_F(HistoryTest, IncompleteRunInTheWindowExits3) {
  // Scenario: night 39 incomplete; then night 10 incomplete.
  const std::string store = dir_ + "/incomplete.sqlite";
  BuildStore(store, IncompleteAt(39));
  std::string out, err;
  EXPECT_EQ(History({store, "--where", "branch=main", "--check"}, &out, &err),
            3);
  EXPECT_NE(out.find("INCOMPLETE"), std::string::npos) << out;
  const std::string early = dir_ + "/early.sqlite";
  BuildStore(early, IncompleteAt(10));
  EXPECT_EQ(History({early, "--where", "branch=main", "--check"}, &out), 0)
      << out;
}

// A family seen in 2 runs is too short (3 are judged), one that scatters 30 % too noisy:
// both said so (table, JUnit skipped), neither judged nor failing the gate.
TEST_F(HistoryTest, GroupsTooShortOrTooNoisyAreSaidSo) {
  // Scenario: 40 steady nights with a warmup family in nights 1-2 and a
  // sampler family with 30 % noise.
  const std::string store = dir_ + "/mixed.sqlite";
  StoreSpec spec;
  spec.short_family = spec.noisy_family = true;
  BuildStore(store, spec);
  std::string out;
  const std::string junit = dir_ + "/mixed.xml";
  EXPECT_EQ(History({store, "--where", "branch=main", "--check", "--junit",
                     junit},
                    &out),
            0)
      << out;
  EXPECT_NE(out.find("1 too noisy, 1 too short to judge"), std::string::npos)
      << out;
  EXPECT_NE(out.find("ran in 2 of the 40 runs; judging needs 3"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("cannot be told from noise"), std::string::npos) << out;
  const std::string xml = ReadFile(junit);
  EXPECT_NE(xml.find("skipped=\"2\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"too noisy: "), std::string::npos);
}

// Labels select runs: --where branch=other gives the other branch's runs;
// a label no run has is refused naming the labels that exist; bad words,
// --by and --format values exit 2.
TEST_F(HistoryTest, WhereSelectsRunsAndBadInputExits2) {
  // Scenario: the steady store, asked several ways.
  const std::string store = dir_ + "/steady.sqlite";
  BuildStore(store, {});
  std::string out, err;
  EXPECT_EQ(History({store, "--where", "branch=other", "--where", "night=3",
                     "--format", "json"},
                    &out),
            0);
  StatusOr<json::Value> v = json::Parse(out, "history.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_EQ(v->Find("runs")->as_array().size(), 1u);
  EXPECT_EQ(v->Find("runs")->as_array()[0].Find("run_id")->as_number(),
            MainRunId(3) + 1);
  EXPECT_EQ(History({store, "--where", "branch=dev"}, &out, &err), 2);
  EXPECT_NE(err.find("no run matches --where branch=dev"), std::string::npos)
      << err;
  EXPECT_NE(err.find("branch=main"), std::string::npos) << err;
  EXPECT_EQ(History({store, "--where", "branch"}, &out, &err), 2);
  EXPECT_NE(err.find("--where 'branch': no '='"), std::string::npos) << err;
  EXPECT_EQ(History({store, "--by", "kernel"}, &out, &err), 2);
  EXPECT_EQ(History({store, "--format", "csv"}, &out, &err), 2);
  EXPECT_EQ(History({store, "--window", "0"}, &out, &err), 2);
  EXPECT_EQ(History({dir_ + "/missing.sqlite"}, &out, &err), 2);
}

// Runs are read in id order but judged in time order: with ids the reverse
// of time, a group takes its shape from the latest run (family a ran shape
// m=2 there, m=1 before), and groups the window cannot tell apart (all too
// short, the same share of the latest run) keep the order the earliest run
// gave them (b, its longer kernel, first).
TEST_F(HistoryTest, GroupsAreNamedAndOrderedInTimeOrderNotIdOrder) {
  const std::string store = dir_ + "/reversed.sqlite";
  {
    testing::TestStore s(store);
    // id 2 ran first, id 1 last (two runs: every group too short).
    for (int64_t id = 1; id <= 2; ++id) {
      s.AddRun(id, "Test GPU 2TB");
      s.Exec("UPDATE runs SET started_unix_ns = " + std::to_string(10 - id) +
             " WHERE run_id = " + std::to_string(id));
      for (const char* name : {"a", "b"}) {
        testing::KernelSpec k;
        k.run_id = k.session_id = id;
        k.name = name;
        k.family = name;
        k.shape = name[0] == 'b' ? "m=3" : id == 1 ? "m=2" : "m=1";
        k.start_ns = name[0] == 'a' ? 1000 : 5000;
        k.duration_ns = name[0] == 'b' && id == 2 ? 3000 : 1000;
        s.AddKernel(k);
      }
    }
  }
  std::string out;
  ASSERT_EQ(History({store, "--by", "family", "--format", "json"}, &out), 0)
      << out;
  const size_t a = out.find("\"key\":\"a\"");
  const size_t b = out.find("\"key\":\"b\"");
  ASSERT_NE(a, std::string::npos) << out;
  ASSERT_NE(b, std::string::npos) << out;
  EXPECT_LT(b, a) << out;
  EXPECT_NE(out.find("\"key\":\"a\",\"name\":\"a\",\"shape\":\"m=2\""),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("m=1"), std::string::npos) << out;
}

// Markdown carries the verdict and one row per group.
TEST_F(HistoryTest, MarkdownHasTheVerdictAndARowPerGroup) {
  // Scenario: the regressed store as markdown, grouped by family.
  const std::string store = dir_ + "/nightly.sqlite";
  BuildStore(store, RegressedFrom(36));
  std::string out;
  EXPECT_EQ(History({store, "--where", "branch=main", "--by", "family",
                     "--format", "markdown"},
                    &out),
            0);
  EXPECT_NE(out.find("### rooftrace history: regression"), std::string::npos)
      << out;
  EXPECT_NE(out.find("| **REGRESSED** | gemm [m=4096 n=16 k=11008 batch=1] "
                     "| 40 |"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| ok | layernorm |"), std::string::npos) << out;
}

// The width and height a PNG's header (IHDR) says, or {0, 0}.
std::pair<uint32_t, uint32_t> PngSize(const std::string& png) {
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) {
      v = v << 8 | static_cast<unsigned char>(png[at + i]);
    }
    return v;
  };
  return {be32(16), be32(20)};
}

// --html writes a self-contained trend page: the verdict, one plot per
// group with the regression first, its change point marked as slower, no
// fetches; each plot is well-formed SVG, and headless Chromium renders the
// page (when installed) to a screenshot that is not blank.
TEST_F(HistoryTest, HtmlTrendPageHasOnePlotPerGroupWorstFirst) {
  // Scenario: the regressed store, --html.
  const std::string store = dir_ + "/nightly.sqlite";
  BuildStore(store, RegressedFrom(36));
  const std::string path = dir_ + "/trend.html";
  std::string out, err;
  ASSERT_EQ(History({store, "--where", "branch=main", "--html", path}, &out,
                    &err),
            0);
  EXPECT_NE(err.find("wrote " + path), std::string::npos) << err;
  const std::string html = ReadFile(path);
  EXPECT_NE(html.find("REGRESSION: 1 of 2 groups judged"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  std::vector<std::string> svgs;
  for (size_t b = html.find("<svg"); b != std::string::npos;
       b = html.find("<svg", b + 1)) {
    const size_t e = html.find("</svg>", b);
    ASSERT_NE(e, std::string::npos);
    svgs.push_back(html.substr(b, e + 6 - b));
    EXPECT_EQ(testing::CheckXmlWellFormed(svgs.back()), "") << svgs.back();
  }
  ASSERT_EQ(svgs.size(), 2u);
  // The regressed group first, with its change point marked slower.
  EXPECT_LT(html.find("<h2>gemm [m=4096"), html.find("<h2>layernorm"));
  EXPECT_NE(svgs[0].find("<line class=\"slower\""), std::string::npos);
  EXPECT_EQ(svgs[1].find("<line class="), std::string::npos);
  EXPECT_NE(svgs[0].find("<circle class=\"latest\""), std::string::npos);

  const char* chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) {
    GTEST_SKIP() << "chromium not installed: headless render skipped";
  }
  const std::string png = dir_ + "/trend.png";
  const std::string cmd =
      std::string(chromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update "
      "--disable-sync --user-data-dir=" + dir_ + "/chromium-profile" +
      " --screenshot=" + png + " --window-size=1000,700 file://" + path +
      " >" + dir_ + "/chromium.log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << ReadFile(dir_ + "/chromium.log");
  const std::string image = ReadFile(png);
  EXPECT_EQ(PngSize(image), (std::pair<uint32_t, uint32_t>{1000, 700}));
  // A blank page compresses to a few kB; text and plots do not.
  EXPECT_GT(image.size(), 20000u) << image.size();
}


// A 4.2 % step in the GEMM family on the latest night (1 % noise; this
// seed draws it as +2.5 %, 2.7 standard deviations): one night
// beyond the band, suspected, not yet regressed: --check exits 0 and says
// so, --check --strict exits 1; the JSON carries the finding with its
// interval and before/after figures; --strict without --check is refused.
TEST_F(HistoryTest, SuspectedOnTheLatestNightFailsOnlyWithStrict) {
  // Scenario: 40 nights, GEMM +4.2 % on night 40.
  const std::string store = dir_ + "/tonight.sqlite";
  StoreSpec spec = RegressedFrom(40);
  spec.regression = 0.042;
  BuildStore(store, spec);
  std::string out, err;
  EXPECT_EQ(History({store, "--where", "branch=main", "--check"}, &out, &err),
            0)
      << out << err;
  EXPECT_NE(out.find("1 suspected on the latest nights"), std::string::npos)
      << out;
  EXPECT_NE(out.find("[latest 1 night, suspected]"), std::string::npos) << out;
  EXPECT_EQ(History({store, "--where", "branch=main", "--check", "--strict"},
                    &out, &err),
            1);
  EXPECT_NE(err.find("suspected on the latest nights (--strict)"),
            std::string::npos)
      << err;
  ASSERT_EQ(History({store, "--where", "branch=main", "--format", "json"},
                    &out),
            0);
  StatusOr<json::Value> v = json::Parse(out, "history.json");
  ASSERT_TRUE(v.ok()) << out;
  EXPECT_EQ(v->Find("verdict")->as_string(), "suspected");
  const json::Value& g = v->Find("groups")->as_array()[0];
  EXPECT_EQ(g.Find("verdict")->as_string(), "suspected");
  const json::Array& cps = g.Find("change_points")->as_array();
  ASSERT_EQ(cps.size(), 1u) << out;
  EXPECT_EQ(cps[0].Find("kind")->as_string(), "latest nights");
  EXPECT_EQ(cps[0].Find("state")->as_string(), "suspected");
  EXPECT_EQ(cps[0].Find("run_id")->as_number(), MainRunId(40));
  EXPECT_EQ(cps[0].Find("labels")->Find("night")->as_string(), "40");
  const double m = cps[0].Find("magnitude")->as_number();
  EXPECT_NEAR(m, 0.042, 0.02);
  const json::Array& ci = cps[0].Find("magnitude_ci95")->as_array();
  EXPECT_LT(ci[0].as_number(), m);
  EXPECT_GT(ci[1].as_number(), m);
  EXPECT_EQ(cps[0].Find("before")->Find("runs")->as_number(), 39);
  EXPECT_GT(cps[0].Find("before")->Find("sd")->as_number(), 0);
  EXPECT_EQ(cps[0].Find("after")->Find("runs")->as_number(), 1);
  EXPECT_TRUE(g.Find("watch")->is_array());
  EXPECT_EQ(History({store, "--strict"}, &out, &err), 2);
  EXPECT_NE(err.find("--strict needs --check"), std::string::npos) << err;
}

// --metric judges another figure with its own worse direction: % of roof
// falls when GEMM slows (lower is worse), the run's GPU time rises (one
// series for the run; the groups shown, not judged); a metric that does
// not exist is refused naming those that do.
TEST_F(HistoryTest, MetricChoosesTheFigureAndItsWorseDirection) {
  // Scenario: GEMM 8 % slower from night 36 of 40.
  const std::string store = dir_ + "/nightly.sqlite";
  BuildStore(store, RegressedFrom(36));
  std::string out, err;
  EXPECT_EQ(History({store, "--where", "branch=main", "--check", "--metric",
                     "roof", "--format", "json"},
                    &out, &err),
            1)
      << err;
  StatusOr<json::Value> v = json::Parse(out, "history.json");
  ASSERT_TRUE(v.ok()) << out;
  EXPECT_EQ(v->Find("metric")->Find("name")->as_string(), "roof");
  EXPECT_EQ(v->Find("metric")->Find("worse")->as_string(), "lower");
  const json::Value& g = v->Find("groups")->as_array()[0];
  EXPECT_EQ(g.Find("name")->as_string(), "gemm");
  const json::Value& cp = g.Find("change_points")->as_array()[0];
  EXPECT_EQ(cp.Find("direction")->as_string(), "worse");
  EXPECT_LT(cp.Find("magnitude")->as_number(), -0.05);
  EXPECT_NEAR(cp.Find("before")->Find("mean")->as_number(), 0.5, 0.02);

  EXPECT_EQ(History({store, "--where", "branch=main", "--check", "--metric",
                     "gpu-time", "--format", "json"},
                    &out, &err),
            1)
      << err << out;
  v = json::Parse(out, "history.json");
  ASSERT_TRUE(v.ok()) << out;
  const json::Array& groups = v->Find("groups")->as_array();
  EXPECT_EQ(groups[0].Find("key")->as_string(), "run");
  EXPECT_EQ(groups[0].Find("verdict")->as_string(), "REGRESSED");
  EXPECT_EQ(groups[0].Find("change_points")->as_array()[0]
                .Find("direction")
                ->as_string(),
            "slower");
  EXPECT_EQ(groups[1].Find("verdict")->as_string(), "not judged");
  EXPECT_EQ(History({store, "--metric", "flops"}, &out, &err), 2);
  EXPECT_NE(err.find("--metric 'flops' is not one of time, roof"),
            std::string::npos)
      << err;
}

// A weak change point (p between --max-pvalue and --watch-pvalue) is
// listed as watch in the table, the JSON and the trend page (grey dots),
// and fails nothing.
TEST(HistoryWatchTest, WeakChangePointsAreListedAsWatch) {
  // Scenario: 40 runs of 2 % noise with a 2.5 % step at run 20; the first
  // of 60 seeds whose step is weak (found at the loose threshold only).
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    stats::SyntheticSeriesSpec spec;
    spec.runs = 40;
    spec.noise = 0.02;
    spec.step_at = 20;
    spec.step = 0.025;
    const analyzer::HistoryResult h = analyzer::HistoryOfSeries(
        {stats::SyntheticSeries(spec, seed)}, analyzer::HistoryOptions{});
    const analyzer::HistoryGroup& g = h.groups[0];
    if (g.watch.empty() || !g.changes.empty()) continue;
    EXPECT_EQ(h.regressed, 0);
    EXPECT_GT(g.watch[0].pvalue, 0.01);
    EXPECT_LE(g.watch[0].pvalue, 0.2);
    std::ostringstream table, js, html;
    analyzer::WriteHistoryTable(h, table);
    analyzer::WriteHistoryJson(h, js);
    analyzer::WriteHistoryHtml(h, html);
    EXPECT_NE(table.str().find("watch: run "), std::string::npos) << table.str();
    StatusOr<json::Value> v = json::Parse(js.str(), "history.json");
    ASSERT_TRUE(v.ok()) << js.str();
    const json::Value& w =
        v->Find("groups")->as_array()[0].Find("watch")->as_array()[0];
    EXPECT_EQ(w.Find("kind")->as_string(), "watch");
    EXPECT_NE(w.Find("text")->as_string().find("watch: run"), std::string::npos);
    EXPECT_NE(html.str().find("<line class=\"watch\""), std::string::npos);
    return;
  }
  FAIL() << "no seed gave a weak change point";
}

// Issue 38 acceptance, measured on generated stores whose answer is known
// (stats::SyntheticStore: 10 groups, each with its own noise around the
// store's level; group 0 steps or spikes), judged as `history --check`
// judges them (HistoryOfSeries), over fixed seeds.
struct NightVerdict {
  bool exit1 = false;     // the gate fails (a group regressed)
  bool flagged = false;   // group 0 suspected or regressed
  double size = 0;        // group 0's reported size (when flagged)
};

NightVerdict JudgeNight(const stats::SyntheticStoreSpec& spec, uint64_t seed,
                        int nights) {
  std::vector<std::vector<double>> store = stats::SyntheticStore(spec, seed);
  for (auto& series : store) series.resize(static_cast<size_t>(nights));
  const analyzer::HistoryResult h =
      analyzer::HistoryOfSeries(store, analyzer::HistoryOptions{});
  NightVerdict v;
  v.exit1 = h.regressed > 0;
  for (const analyzer::HistoryGroup& g : h.groups) {
    if (g.key != "series 0") continue;
    v.flagged = g.verdict == analyzer::HistoryVerdict::kRegressed ||
                g.verdict == analyzer::HistoryVerdict::kSuspected;
    for (const analyzer::HistoryChange& c : g.changes) {
      if (c.regression && c.in_window) v.size = c.magnitude;
    }
  }
  return v;
}

// `steady` nights of 2 % noise, then group 0 steps by `step` for `after`
// nights (0: no step).
stats::SyntheticStoreSpec Store(int steady, double step, int after) {
  stats::SyntheticStoreSpec spec;
  spec.noise = 0.02;
  spec.runs = steady + after;
  if (step != 0) {
    spec.step_at = steady;
    spec.step = step;
  }
  return spec;
}

// Noise only, 40 runs: at most 2 % of stores fail; 8 runs: at most 5 %.
TEST(LatestNightAcceptanceTest, NoiseOnlyStoresRarelyFail) {
  // Scenario: 300 stores of 40 runs, 300 of 8, 2 % noise.
  int fail40 = 0, fail8 = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    fail40 += JudgeNight(Store(40, 0, 0), 1000 + seed, 40).exit1;
    fail8 += JudgeNight(Store(8, 0, 0), 2000 + seed, 8).exit1;
  }
  EXPECT_LE(fail40, 6) << fail40 << " of 300";
  EXPECT_LE(fail8, 15) << fail8 << " of 300";
}

// An 8 % step on the latest night: suspected (or regressed) that night in
// >= 90 % of stores, regressed (exit 1) the next night in >= 95 %; the
// size at the first report is within 2 points of 8 (median).
TEST(LatestNightAcceptanceTest, EightPercentStepIsSuspectedThenRegressed) {
  // Scenario: 200 stores, 40 steady nights, the step on night 41.
  int suspected = 0, regressed = 0;
  std::vector<double> errors;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const stats::SyntheticStoreSpec spec = Store(40, 0.08, 2);
    const NightVerdict first = JudgeNight(spec, 3000 + seed, 41);
    const NightVerdict next = JudgeNight(spec, 3000 + seed, 42);
    suspected += first.flagged;
    regressed += next.exit1;
    if (first.flagged) {
      errors.push_back(first.size - 0.08);
    } else if (next.flagged) {
      errors.push_back(next.size - 0.08);
    }
  }
  EXPECT_GE(suspected, 180) << suspected << " of 200";
  EXPECT_GE(regressed, 190) << regressed << " of 200";
  ASSERT_FALSE(errors.empty());
  std::sort(errors.begin(), errors.end());
  EXPECT_LE(std::fabs(errors[errors.size() / 2]), 0.02);
}

// A 15 % step fails the gate the night it lands in >= 90 % of stores, on
// 40-run and on 8-run histories; its size is within 2 points (median).
TEST(LatestNightAcceptanceTest, FifteenPercentStepFailsTheNightItLands) {
  // Scenario: 200 stores each of 40 and 7 steady nights, the step on the
  // next (the latest of 41 and of 8 runs).
  int long_fail = 0, short_fail = 0;
  std::vector<double> errors;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const NightVerdict v = JudgeNight(Store(40, 0.15, 1), 4000 + seed, 41);
    long_fail += v.exit1;
    if (v.flagged) errors.push_back(v.size - 0.15);
    short_fail += JudgeNight(Store(7, 0.15, 1), 5000 + seed, 8).exit1;
  }
  EXPECT_GE(long_fail, 180) << long_fail << " of 200";
  EXPECT_GE(short_fail, 180) << short_fail << " of 200";
  ASSERT_FALSE(errors.empty());
  std::sort(errors.begin(), errors.end());
  EXPECT_LE(std::fabs(errors[errors.size() / 2]), 0.02);
}

// A one-night +30 % spike, back to normal the next night: that next night
// passes (exit 0) in >= 95 % of stores.
TEST(LatestNightAcceptanceTest, OneNightSpikeIsNoRegressionTheNightAfter) {
  // Scenario: 200 stores, 40 steady nights, the spike on night 40, night
  // 41 normal.
  int passed = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    stats::SyntheticStoreSpec spec = Store(41, 0, 0);
    spec.spike_at = 39;
    spec.spike = 0.30;
    passed += !JudgeNight(spec, 6000 + seed, 41).exit1;
  }
  EXPECT_GE(passed, 190) << passed << " of 200";
}

// From 3 runs a group is judged: a store of 3 runs whose latest night
// stepped 15 % (1 % noise) fails the gate; with 2 runs it is too short.
TEST(LatestNightAcceptanceTest, ThreeRunsAreJudgedTwoAreTooShort) {
  // Scenario: 2 steady nights then a 15 % step; 30 stores.
  int failed = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    stats::SyntheticStoreSpec spec = Store(2, 0.15, 1);
    spec.noise = 0.01;
    failed += JudgeNight(spec, 7000 + seed, 3).exit1;
  }
  EXPECT_GE(failed, 27) << failed << " of 30";
  const analyzer::HistoryResult two = analyzer::HistoryOfSeries(
      {{100.0, 130.0}}, analyzer::HistoryOptions{});
  EXPECT_EQ(two.too_short, 1);
  EXPECT_EQ(two.judged, 0);
}

}  // namespace
}  // namespace rooftrace
