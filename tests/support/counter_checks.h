// What every `--counters` import of a four-sample ncu CSV (three samples of
// the timeline's kernels, one of `other_kernel(int)`, written with
// tests/support/ncu_rows.h) must leave, whatever the timeline's format: 3
// received and matched, 1 unmatched and named in the warning, and ncu's raw
// metrics (4 per matched kernel) kept as written.
#ifndef ROOFTRACE_TESTS_SUPPORT_COUNTER_CHECKS_H_
#define ROOFTRACE_TESTS_SUPPORT_COUNTER_CHECKS_H_

#include <gtest/gtest.h>

#include <string>

#include "tests/support/sqlite_query.h"

namespace rooftrace::test_support {

// `dram_read_by_correlation`: "CORR:VALUE UNIT ..." of the matched kernels'
// dram__bytes_read.sum, by correlation id.
inline void ExpectThreeOfFourCountersMatched(
    const StoreQuery& q, const std::string& warning, const std::string& csv,
    const std::string& dram_read_by_correlation) {
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE name = "
                  "'received_counters'"),
            3);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE name = "
                  "'unmatched_counters'"),
            1);
  EXPECT_EQ(q.Text("SELECT group_concat(correlation_id || ':' || value || ' '"
                   " || unit, ' ') FROM (SELECT * FROM kernel_metrics WHERE "
                   "name = 'dram__bytes_read.sum' ORDER BY correlation_id)"),
            dram_read_by_correlation);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernel_metrics"), 3 * 4);
  EXPECT_NE(warning.find(csv +
                         ": 3 of 4 counter samples matched a kernel; 1 names "
                         "no kernel of the timeline (first: "
                         "'other_kernel(int)')"),
            std::string::npos)
      << warning;
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_COUNTER_CHECKS_H_
