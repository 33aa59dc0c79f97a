// The summary `rooftrace profile` prints, on a store with hand-computed
// numbers: kernel families by time with their sums, time-weighted % of
// roof and dominant bound; phase totals; drops. It is `rooftrace analyze
// --by family`'s table, columns and all.
#include "collector/summary.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

void Exec(const std::string& path, const std::string& sql) {
  ASSERT_EQ(test_support::ExecSql(path, sql), "");
}

// The whitespace-separated words of the first line starting with `first`
// (after its indent); empty when there is none.
std::vector<std::string> Words(const std::string& text,
                               const std::string& first) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::vector<std::string> words;
    std::string w;
    while (in >> w) words.push_back(w);
    if (!words.empty() && words[0] == first) return words;
  }
  return {};
}

using Row = std::vector<std::string>;

class SummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    { ASSERT_TRUE(Store::Open(store_).ok()); }
    // gemm/prefill: 600 ms compute-bound at 50 % of roof and 200 ms
    // memory-bound at 25 %: 43.75 % time-weighted, compute dominant,
    // AI 8e9 / 2e6 = 4000. norm/decode: 2 x 1000 ms memory-bound, bytes on
    // one, % of roof on the other (10 %). One kernel without family or
    // phase (100 ms). Total 2900 ms.
    Exec(store_,
         "INSERT INTO runs (run_id, device_name, roof_source, flops_sources, "
         "mode, complete) VALUES (1, 'NVIDIA H100 80GB HBM3', "
         "'datasheet:h100-sxm', 'analytic', 'trace', 1);"
         "INSERT INTO kernels (run_id, session_id, name, family, duration_ns, "
         "flops, dram_bytes, fraction_of_roof, bound, phase) VALUES "
         "(1, 1, 'g1', 'gemm', 600000000, 6000000000, 1000000, 0.5, "
         "'compute', 'prefill'),"
         "(1, 1, 'g2', 'gemm', 200000000, 2000000000, 1000000, 0.25, "
         "'memory', 'prefill'),"
         "(1, 1, 'n1', 'norm', 1000000000, NULL, 4000000, NULL, 'memory', "
         "'decode'),"
         "(1, 1, 'n2', 'norm', 1000000000, NULL, NULL, 0.1, 'memory', "
         "'decode'),"
         "(1, 1, 'x', NULL, 100000000, NULL, NULL, NULL, NULL, NULL);"
         "INSERT INTO steps (run_id, step_id, phase) VALUES (1, 1, 'prefill'),"
         "(1, 2, 'decode'), (1, 3, 'decode');"
         "INSERT INTO import_stats VALUES (1, 'producer_dropped_kernels', 3),"
         "(1, 'frames', 10)");
  }

  std::string Summary(int top) {
    std::ostringstream out;
    EXPECT_TRUE(PrintRunSummary(store_, 1, out, top).ok());
    return out.str();
  }

  test_support::TempDir dir_{"summary"};
  std::string store_ = dir_.File("run.sqlite");
};

TEST_F(SummaryTest, FamiliesHaveHandComputedNumbers) {
  const std::string s = Summary(15);
  EXPECT_NE(s.find("rooftrace profile: " + store_ + " (store), run 1\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  kernels:  5 kernels, 2900.000 ms GPU time\n"),
            std::string::npos);
  // name count total-ms time% mean-us GFLOP MB AI TFLOP/s GB/s %roof bound
  // phase, as `analyze` prints them.
  EXPECT_EQ(Words(s, "name"),
            (Row{"name", "count", "total", "ms", "time", "%", "mean", "us",
                 "GFLOP", "MB", "AI", "TFLOP/s", "GB/s", "%", "roof", "bound",
                 "phase"}));
  EXPECT_EQ(Words(s, "norm"),
            (Row{"norm", "2", "2000.000", "69.0", "1000000.00", "-", "4.000",
                 "-", "-", "0.0", "10.0", "memory", "decode"}));
  EXPECT_EQ(Words(s, "gemm"),
            (Row{"gemm", "2", "800.000", "27.6", "400000.00", "8.000", "2.000",
                 "4000.00", "0.010", "0.0", "43.8", "compute", "prefill"}));
  // A kernel without a family is grouped under its name.
  EXPECT_EQ(Words(s, "x"),
            (Row{"x", "1", "100.000", "3.4", "100000.00", "-", "-", "-", "-",
                 "-", "-", "unknown", "unknown"}));
  // Largest first.
  EXPECT_LT(s.find("\nnorm "), s.find("\ngemm "));
  EXPECT_LT(s.find("\ngemm "), s.find("\nx "));
}

TEST_F(SummaryTest, PhaseTotalsAndDrops) {
  const std::string s = Summary(15);
  // phase steps count total-ms time% GFLOP AI %roof TFLOP/s
  EXPECT_EQ(Words(s, "decode"),
            (Row{"decode", "2", "2", "2000.000", "69.0", "-", "-", "10.0",
                 "-"}));
  EXPECT_EQ(Words(s, "prefill"),
            (Row{"prefill", "1", "2", "800.000", "27.6", "8.000", "4000.00",
                 "43.8", "0.010"}));
  EXPECT_EQ(Words(s, "unknown"),
            (Row{"unknown", "0", "1", "100.000", "3.4", "-", "-", "-", "-"}));
  EXPECT_NE(s.find("  import:   dropped 3, unmatched 0\n"), std::string::npos);
  EXPECT_NE(s.find("producer_dropped_kernels=3"), std::string::npos);
  // #29: the default drop mode and the flag that keeps everything are said
  // in a line of their own (a burst used to lose 67-87 % unremarked).
  EXPECT_NE(s.find("rooftrace profile: 3 records were dropped"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("--lossless keeps every record"), std::string::npos) << s;
}

// No drop, no line about them.
TEST_F(SummaryTest, NoDropsNoDropLine) {
  Exec(store_, "DELETE FROM import_stats");
  const std::string s = Summary(15);
  EXPECT_EQ(s.find("--lossless"), std::string::npos) << s;
}

TEST_F(SummaryTest, TopKeepsTheLargestFamilies) {
  const std::string s = Summary(1);
  EXPECT_FALSE(Words(s, "norm").empty());
  EXPECT_TRUE(Words(s, "gemm").empty());
}

// A program with no CUDA activity: one plain statement that no GPU work was
// seen and the likely causes, no report header over an empty table and no
// "pick another run with --run" (issue 18 item 17).
TEST_F(SummaryTest, NoGpuWorkSaysSoPlainly) {
  Exec(store_,
       "INSERT INTO runs (run_id, device_name, roof_source, mode, complete) "
       "VALUES (2, '', 'none', 'trace', 1)");
  std::ostringstream out;
  ASSERT_TRUE(PrintRunSummary(store_, 2, out, 15).ok());
  const std::string s = out.str();
  EXPECT_NE(s.find("no GPU work was seen"), std::string::npos) << s;
  EXPECT_NE(s.find("CUPTI"), std::string::npos) << s;
  EXPECT_NE(s.find("nvidia-smi"), std::string::npos) << s;
  EXPECT_NE(s.find("does not use CUDA"), std::string::npos) << s;
  EXPECT_EQ(s.find("--run"), std::string::npos) << s;
  EXPECT_EQ(s.find("INCOMPLETE"), std::string::npos) << s;
  EXPECT_EQ(s.find("name "), std::string::npos) << s;  // no empty table
}

}  // namespace
}  // namespace rooftrace
