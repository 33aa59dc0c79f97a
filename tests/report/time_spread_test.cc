#include "report/time_spread.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rooftrace {
namespace {

// Few values: exact median (the mean of the middle two for an even count),
// extremes and population standard deviation.
TEST(TimeSpreadTest, SmallGroupsAreExact) {
  TimeSpread s;
  for (int64_t v : {40, 10, 30, 20}) s.Add(v);
  const TimeSpread::Figures f = s.Finish();
  EXPECT_TRUE(f.exact);
  EXPECT_DOUBLE_EQ(f.median_ns, 25.0);
  EXPECT_EQ(f.min_ns, 10);
  EXPECT_EQ(f.max_ns, 40);
  EXPECT_DOUBLE_EQ(f.stddev_ns, std::sqrt(125.0));
  EXPECT_EQ(TimeSpread().Finish().max_ns, 0);
}

// A group past kExactSamples (a kernel launched a million times) keeps its
// memory bounded: the median is within 1%, the rest exact. The values
// 1..1,000,000 ns: median 500,000.5, population stddev sqrt((n^2-1)/12).
TEST(TimeSpreadTest, LargeGroupsStayWithinOnePercent) {
  TimeSpread s;
  const int64_t n = 1'000'000;
  for (int64_t v = n; v >= 1; --v) s.Add(v);
  const TimeSpread::Figures f = s.Finish();
  EXPECT_FALSE(f.exact);
  EXPECT_NEAR(f.median_ns, 500000.5, 5000.0);
  EXPECT_EQ(f.min_ns, 1);
  EXPECT_EQ(f.max_ns, n);
  const double nd = static_cast<double>(n);
  EXPECT_NEAR(f.stddev_ns, std::sqrt((nd * nd - 1) / 12), 1.0);
}

}  // namespace
}  // namespace rooftrace
