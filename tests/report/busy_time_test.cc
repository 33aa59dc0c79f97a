#include "report/busy_time.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report/report.h"
#include "report/report_format.h"

namespace rooftrace {
namespace {

struct Interval {
  int64_t start = 0, end = 0;
  bool kernel = true;
};

// The busy time the timeline must report: the union of every interval,
// clipped to [first kernel start, last kernel end), computed the obvious
// way (everything held and sorted).
int64_t TrueBusy(const std::vector<Interval>& all) {
  int64_t first = INT64_MAX, last = INT64_MIN;
  std::vector<std::pair<int64_t, int64_t>> v;
  for (const Interval& i : all) {
    if (i.end <= i.start) continue;
    if (i.kernel) {
      first = std::min(first, i.start);
      last = std::max(last, i.end);
    }
    v.emplace_back(i.start, i.end);
  }
  std::sort(v.begin(), v.end());
  int64_t busy = 0, lo = INT64_MIN, hi = INT64_MIN;
  auto flush = [&] {
    const int64_t a = std::max(lo, first), b = std::min(hi, last);
    if (b > a) busy += b - a;
  };
  for (const auto& [s, e] : v) {
    if (s > hi) {
      flush();
      lo = s;
      hi = e;
    } else {
      hi = std::max(hi, e);
    }
  }
  flush();
  return busy;
}

void Feed(BusyTimeline* t, const Interval& i) {
  if (i.kernel) {
    t->AddKernel(0, i.start, i.end);
  } else {
    t->AddCopy(0, i.start, i.end);
  }
}

// Three streams of back-to-back kernels with random gaps and lengths plus
// copies on a fourth, 200,000 intervals, in start order except shuffled
// within blocks of 16 (the way windows and streams interleave), a batch
// ending every 100. With room for 64 disjoint intervals, the timeline
// folds thousands of times and never holds more than 4 x 64 + its merge
// batch, yet the result is exact: nothing reaches back over the 32 newer
// intervals a fold keeps.
TEST(BusyTimelineTest, FoldingStaysExactOnInterleavedStreams) {
  std::mt19937_64 rng(7);
  std::vector<Interval> all;
  int64_t clock[4] = {0, 0, 0, 0};
  for (int i = 0; i < 200000; ++i) {
    const int stream = static_cast<int>(rng() % 4);
    const int64_t gap = static_cast<int64_t>(rng() % 400);
    const int64_t len = 1 + static_cast<int64_t>(rng() % 300);
    Interval iv;
    iv.start = clock[stream] + gap;
    iv.end = iv.start + len;
    iv.kernel = stream != 3;
    clock[stream] = iv.end;
    all.push_back(iv);
  }
  std::sort(all.begin(), all.end(), [](const Interval& a, const Interval& b) {
    return a.start < b.start;
  });
  for (size_t b = 0; b < all.size(); b += 16) {
    std::shuffle(all.begin() + static_cast<ptrdiff_t>(b),
                 all.begin() + static_cast<ptrdiff_t>(
                                   std::min(b + 16, all.size())),
                 rng);
  }
  BusyTimeline t(64);
  size_t held = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    Feed(&t, all[i]);
    if (i % 100 == 99) t.EndBatch();
    held = std::max(held, t.HeldIntervals());
  }
  EXPECT_LE(held, 4 * 64u + 32u);
  const std::vector<DeviceBusy> b = t.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].busy_ns, TrueBusy(all));
  EXPECT_EQ(b[0].late_intervals, 0);
  EXPECT_EQ(b[0].busy_uncertain_ns, 0);
  EXPECT_EQ(b[0].idle_ns, b[0].span_ns - b[0].busy_ns);
  EXPECT_EQ(b[0].kernels + b[0].copies, 200000);
}

// 100 kernels of 10 ns every 20 ns fold (room for 8); then two copies
// arrive from time already folded: [15, 17) in a gap (busy, but the
// timeline cannot know) and [100, 105) inside the folded kernel
// [100, 110). Busy is reported as the exact 1000 ns without them, marked
// approximate with up to 2 + 5 ns more; the truth, 1002, lies inside.
TEST(BusyTimelineTest, IntervalBeforeTheFoldFrontierIsCountedApproximate) {
  BusyTimeline t(8);
  for (int i = 0; i < 100; ++i) t.AddKernel(0, i * 20, i * 20 + 10);
  t.AddCopy(0, 15, 17);
  t.AddCopy(0, 100, 105);
  const std::vector<DeviceBusy> b = t.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].span_ns, 1990);
  EXPECT_EQ(b[0].busy_ns, 1000);
  EXPECT_EQ(b[0].late_intervals, 2);
  EXPECT_EQ(b[0].busy_uncertain_ns, 7);
  EXPECT_LE(b[0].busy_ns, 1002);
  EXPECT_GE(b[0].busy_ns + b[0].busy_uncertain_ns, 1002);
}

// A load phase: 100 copies before any kernel fold away (room for 8) while
// the span is still unknown; a long copy [2995, 3015) overlaps the first
// kernel [3000, 3010). The copies before the span count nothing, the long
// one its 5 ns past the kernel: 50 kernels x 10 ns + 5, exact.
TEST(BusyTimelineTest, CopiesBeforeTheFirstKernelFoldAndClipExactly) {
  BusyTimeline t(8);
  for (int i = 0; i < 100; ++i) t.AddCopy(0, i * 20, i * 20 + 10);
  t.AddCopy(0, 2995, 3015);
  for (int i = 0; i < 50; ++i) {
    t.AddKernel(0, 3000 + i * 20, 3000 + i * 20 + 10);
  }
  const std::vector<DeviceBusy> b = t.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].first_start_ns, 3000);
  EXPECT_EQ(b[0].span_ns, 990);
  EXPECT_EQ(b[0].busy_ns, 505);
  EXPECT_EQ(b[0].late_intervals, 0);
  EXPECT_EQ(b[0].copies, 101);
}

// A trace's window: kernels first, then the window's copies, which reach
// back to its start. 50 windows of 150 kernels (10 ns every 20 ns) and 15
// copies in their gaps, room for 64 intervals: folding at window ends
// keeps each window whole until its copies have come, so the busy time is
// exact (150 x 10 + 15 x 5 ns per window). Fed as one batch of 7,500
// kernels and then the copies, the early copies arrive after their time
// was folded and the figure says it is approximate.
TEST(BusyTimelineTest, WindowsFoldOnlyOnceTheyAreComplete) {
  std::vector<Interval> kernels, copies;
  for (int w = 0; w < 50; ++w) {
    const int64_t base = int64_t{w} * 150 * 20;
    for (int i = 0; i < 150; ++i) {
      kernels.push_back({base + i * 20, base + i * 20 + 10, true});
    }
    for (int c = 0; c < 15; ++c) {
      copies.push_back({base + c * 200 + 12, base + c * 200 + 17, false});
    }
  }
  BusyTimeline windows(64);
  for (int w = 0; w < 50; ++w) {
    for (int i = 0; i < 150; ++i) Feed(&windows, kernels[w * 150 + i]);
    for (int c = 0; c < 15; ++c) Feed(&windows, copies[w * 15 + c]);
    windows.EndBatch();
  }
  std::vector<DeviceBusy> b = windows.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].busy_ns, 50 * (150 * 10 + 15 * 5));
  EXPECT_EQ(b[0].late_intervals, 0);

  BusyTimeline one_batch(64);
  for (const Interval& k : kernels) Feed(&one_batch, k);
  for (const Interval& c : copies) Feed(&one_batch, c);
  b = one_batch.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(b[0].late_intervals, 0);
  EXPECT_LT(b[0].busy_ns, 50 * (150 * 10 + 15 * 5));
  EXPECT_GE(b[0].busy_ns + b[0].busy_uncertain_ns,
            50 * (150 * 10 + 15 * 5));
}

// A stretch of copies between two kernels, longer than the room (8): the
// copies fold while the span still ends at the first kernel, then the
// second kernel brings them inside it. 5 + 100 x 10 + 10 ns, exact.
TEST(BusyTimelineTest, CopiesAfterTheLastKernelCountOnceKernelsGoOn) {
  BusyTimeline t(8);
  t.AddKernel(0, 0, 5);
  for (int i = 0; i < 100; ++i) t.AddCopy(0, 10 + i * 20, 20 + i * 20);
  t.AddKernel(0, 3000, 3010);
  const std::vector<DeviceBusy> b = t.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].span_ns, 3010);
  EXPECT_EQ(b[0].busy_ns, 1015);
  EXPECT_EQ(b[0].late_intervals, 0);
}

// Copies before the only kernel [2000, 2010) fold away as outside the span
// (room for 8); then a kernel [0, 1) arrives late and moves the span's
// start over them. Their busy time (1,000 ns) is not known any more: busy
// is a lower bound and the uncertainty covers the truth, 1,010 ns.
TEST(BusyTimelineTest, SpanGrowingOverFoldedCopiesIsUncertain) {
  BusyTimeline t(8);
  t.AddKernel(0, 2000, 2010);
  for (int i = 0; i < 100; ++i) t.AddCopy(0, i * 20, i * 20 + 10);
  t.AddKernel(0, 0, 1);
  const std::vector<DeviceBusy> b = t.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].span_ns, 2010);
  EXPECT_EQ(b[0].late_intervals, 1);
  EXPECT_LT(b[0].busy_ns, 1010);
  EXPECT_GE(b[0].busy_ns + b[0].busy_uncertain_ns, 1010);
}

// Devices fold separately: device 1's intervals arriving between device
// 0's do not push device 0's out.
TEST(BusyTimelineTest, DevicesFoldSeparately) {
  BusyTimeline t(8);
  std::vector<Interval> d0;
  for (int i = 0; i < 1000; ++i) {
    const Interval a{i * 20, i * 20 + 10 + (i % 3) * 7, i % 5 != 0};
    d0.push_back(a);
    Feed(&t, a);
    t.AddKernel(1, i * 30, i * 30 + 10);
  }
  const std::vector<DeviceBusy> b = t.Finish();
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].busy_ns, TrueBusy(d0));
  EXPECT_EQ(b[0].late_intervals, 0);
  EXPECT_EQ(b[1].busy_ns, 10000);
  EXPECT_EQ(b[1].span_ns, 999 * 30 + 10);
  EXPECT_EQ(b[1].late_intervals, 0);
}

// Whatever the order (random, reversed, copies far outside the span), the
// reported busy time is never more than the truth and the truth never more
// than busy + uncertain; with nothing late it is exact.
TEST(BusyTimelineTest, ApproximateFiguresBracketTheTruth) {
  int approximate = 0, exact_out_of_order = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Interval> all;
    const int n = 50 + static_cast<int>(rng() % 2000);
    for (int i = 0; i < n; ++i) {
      Interval iv;
      iv.start = static_cast<int64_t>(rng() % 100000);
      iv.end = iv.start + 1 + static_cast<int64_t>(rng() % 500);
      iv.kernel = rng() % 4 != 0;
      all.push_back(iv);
    }
    all.push_back({-5000, -4000, false});  // before every kernel
    all.push_back({200000, 200100, false});  // after every kernel
    all.push_back({50, 60, true});
    switch (seed % 3) {
      case 0: std::shuffle(all.begin(), all.end(), rng); break;
      case 1:
        std::sort(all.begin(), all.end(),
                  [](const Interval& a, const Interval& b) {
                    return a.start > b.start;
                  });
        break;
      default:
        std::sort(all.begin(), all.end(),
                  [](const Interval& a, const Interval& b) {
                    return a.start < b.start;
                  });
    }
    BusyTimeline t(2 + seed % 16);
    for (const Interval& i : all) Feed(&t, i);
    const std::vector<DeviceBusy> b = t.Finish();
    ASSERT_EQ(b.size(), 1u);
    const int64_t truth = TrueBusy(all);
    EXPECT_LE(b[0].busy_ns, truth) << "seed " << seed;
    EXPECT_GE(b[0].busy_ns + b[0].busy_uncertain_ns, truth) << "seed " << seed;
    if (b[0].late_intervals == 0) {
      EXPECT_EQ(b[0].busy_ns, truth) << "seed " << seed;
      if (seed % 3 != 2) ++exact_out_of_order;
    } else {
      ++approximate;
    }
    if (seed % 3 == 2) {
      EXPECT_EQ(b[0].late_intervals, 0) << "in start order, seed " << seed;
    }
  }
  // The cases exercise both outcomes.
  EXPECT_GT(approximate, 10);
}

// An approximate figure says so: the table's busy line names the late
// intervals and the bound; JSON carries both numbers (0 when exact).
TEST(BusyTimelineTest, ApproximateBusyIsSaidInTableAndJson) {
  BusyTimeline t(8);
  for (int i = 0; i < 100; ++i) t.AddKernel(0, i * 20000, i * 20000 + 10000);
  t.AddCopy(0, 15000, 17000);
  Report r;
  r.busy = t.Finish();
  ASSERT_EQ(r.busy.size(), 1u);
  std::ostringstream text, json;
  MakeReportWriter("table")->Write(r, text);
  EXPECT_NE(text.str().find("idle 0.990 ms = 49.7%; approximate: 1 interval "
                            "arrived after older time was summed, busy may "
                            "be up to 0.002 ms more"),
            std::string::npos)
      << text.str();
  MakeReportWriter("json")->Write(r, json);
  EXPECT_NE(json.str().find("\"late_intervals\":1,\"busy_uncertain_ns\":2000,"),
            std::string::npos)
      << json.str();
}

}  // namespace
}  // namespace rooftrace
