// analyze --device-profile on kernels Nsight Compute measured at a locked SM
// clock: the profile's compute roofs are scaled to that clock, as the import
// scaled the roofs it stored, whether the counters are read from the CSV or
// from a store they were imported into (devices.measured_sm_clock_khz).
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "analyzer/analyze.h"
#include "report/report.h"
#include "sources/registry.h"
#include "store/store.h"
#include "tests/support/ncu_rows.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/store_schema1.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using test_support::StoreQuery;
using testing::TempDir;

// The 8192^3 bf16 GEMM of ClockedH100NcuCsv: 0.922581 of its roof at the
// 1.59 GHz it ran at, 0.740861 of the boost-clock roof.
constexpr double kAtItsClock = 0.922581;
constexpr double kAtBoostClock = 0.740861;

class ReannotateClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("reannotate_clock");
    csv_ = dir_ + "/clocked.csv";
    std::ofstream(csv_) << test_support::ClockedH100NcuCsv("1,590,000,000");
    store_ = dir_ + "/runs.sqlite";
    auto store = Store::Open(store_, Store::Durability::kScratch);
    ASSERT_TRUE(store.ok()) << store.status().message();
    auto source = DetectSource(csv_);
    ASSERT_TRUE(source.ok()) << source.status().message();
    auto read = ReadSourceInto(**source, csv_, {}, store->get());
    ASSERT_TRUE(read.ok()) << read.status().message();
  }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  // The one group's fraction of roof and the header's roof source.
  std::pair<double, std::string> Analyze(const std::string& input,
                                         const std::string& profile) {
    auto analyzed = analyzer::OpenAndReport(input, profile, ReportOptions{});
    EXPECT_TRUE(analyzed.ok()) << analyzed.status().message();
    if (!analyzed.ok()) return {-1, ""};
    const Report& r = analyzed->report;
    EXPECT_EQ(r.groups.size(), 1u);
    if (r.groups.empty() || !r.groups[0].fraction_of_roof) return {-1, ""};
    return {*r.groups[0].fraction_of_roof, r.header.roofs.source};
  }

  std::string dir_, csv_, store_;
};

// The store says which clock the counters ran at.
TEST_F(ReannotateClockTest, TheStoreKeepsTheMeasuredClock) {
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT measured_sm_clock_khz FROM devices"), 1590000);
}

// Without --device-profile the stored (scaled) annotation is read back.
TEST_F(ReannotateClockTest, StoredRunWithoutAProfileKeepsItsScaledRoofs) {
  const auto [fraction, source] = Analyze(store_, "");
  EXPECT_NEAR(fraction, kAtItsClock, 1e-6);
}

// The bug this fixes: a stored ncu run re-annotated with a profile was
// judged against the profile's boost-clock peaks (0.740861).
TEST_F(ReannotateClockTest, StoredRunReannotatedAtTheClockItRanAt) {
  const auto [fraction, source] = Analyze(store_, "h100-sxm");
  EXPECT_NEAR(fraction, kAtItsClock, 1e-6);
  EXPECT_EQ(source,
            "datasheet:h100-sxm; compute roofs scaled to 1.59 GHz (the clock "
            "the counters ran at) from 1.98 GHz; DRAM roof not scaled (the "
            "memory clock is not locked with the SM clock)");
}

// The same from the CSV itself, read in memory.
TEST_F(ReannotateClockTest, TraceReannotatedAtTheClockItRanAt) {
  const auto [fraction, source] = Analyze(csv_, "h100-sxm");
  EXPECT_NEAR(fraction, kAtItsClock, 1e-6);
  EXPECT_NE(source.find("compute roofs scaled to 1.59 GHz"), std::string::npos)
      << source;
}

// A schema 4 store (written before the column) read without upgrading:
// nothing says the clock, so the profile's roofs stay as they are.
TEST_F(ReannotateClockTest, Schema4StoreIsJudgedAtTheProfilesClock) {
  ASSERT_EQ(test_support::ExecSql(store_, test_support::kDowngradeToSchema4),
            "");
  const auto [fraction, source] = Analyze(store_, "h100-sxm");
  EXPECT_NEAR(fraction, kAtBoostClock, 1e-6);
  EXPECT_EQ(source, "datasheet:h100-sxm");
}

}  // namespace
}  // namespace rooftrace
