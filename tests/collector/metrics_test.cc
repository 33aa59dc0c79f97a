// CollectorMetrics alone: the families admitted to series of their own,
// "other", and the listen rules, fed kernel rows directly.
#include "collector/metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace rooftrace {
namespace {

// One kernel of `family` in `phase`, `ns` long, with FLOPs and bytes.
void Feed(CollectorMetrics* m, const std::string& family,
          const std::string& phase, int64_t ns) {
  KernelRow row;
  row.duration_ns = ns;
  row.flops = 1000;
  row.dram_bytes = 10;
  row.fraction_of_roof = 0.5;
  ObservedKernel k;
  k.host = "h";
  k.device = "0:GPU";
  k.family = family;
  k.phase = phase;
  k.row = &row;
  m->OnKernel(k);
}

// 100 families in 2 phases, top 5: 5 families and "other" per phase, and
// no more however many more families come later.
TEST(CollectorMetricsTest, SeriesAreBoundedByTopFamiliesAndOther) {
  MetricsOptions o;
  o.listen = "127.0.0.1:0";
  o.top = 5;
  auto m = CollectorMetrics::Start(o);
  ASSERT_TRUE(m.ok()) << m.status().message();
  for (int f = 0; f < 100; ++f) {
    for (const char* phase : {"prefill", "decode"}) {
      // Family f takes f+1 us: the top 5 by time are 95..99.
      Feed(m->get(), "family_" + std::to_string(f), phase, 1000 * (f + 1));
    }
  }
  (*m)->OnWriteEnd();
  EXPECT_EQ((*m)->series(), 12u);
  for (int f = 100; f < 200; ++f) {
    Feed(m->get(), "late_" + std::to_string(f), "decode", 1);
  }
  (*m)->OnWindowEnd(0, 1, ImportStats());
  EXPECT_EQ((*m)->series(), 12u);
  EXPECT_TRUE((*m)->admitted("family_99"));
  EXPECT_TRUE((*m)->admitted("family_95"));
  EXPECT_FALSE((*m)->admitted("family_94"));
}

// A non-loopback address without a token is refused, naming the fix; a
// malformed one names the form.
TEST(CollectorMetricsTest, ListenRulesAsTheCollectors) {
  MetricsOptions o;
  o.listen = "0.0.0.0:0";
  auto open = CollectorMetrics::Start(o);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("needs the collector's token"),
            std::string::npos);
  o.listen = "localhost:http";
  auto bad = CollectorMetrics::Start(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("give HOST:PORT or PORT"),
            std::string::npos);
  o.listen = "0.0.0.0:0";
  o.token = "0123456789abcdef";
  EXPECT_TRUE(CollectorMetrics::Start(o).ok());
}

}  // namespace
}  // namespace rooftrace
