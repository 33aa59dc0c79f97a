// The statistics of `history` (analyzer/changepoint.h) on generated series
// whose answer is known (seeded, so every figure is reproducible): the
// detection-quality acceptance of issue 27 (a 5 % step in 60 runs of 3 %
// noise found at its run +-1; at most 1 % false positives per noise-only
// series; at most 5 % of 200-group gates failing on noise alone), and the
// building blocks against textbook values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "analyzer/changepoint.h"
#include "analyzer/changepoint_latest.h"

namespace rooftrace::stats {
namespace {

// The nightly series: 60 runs, 3 % multiplicative noise.
SyntheticSeriesSpec Nightly() {
  SyntheticSeriesSpec s;
  s.runs = 60;
  s.noise = 0.03;
  return s;
}

// Student's t tail against printed tables: t = 2.228 is the two-sided 5 %
// point for 10 degrees of freedom, 2.576 the 1 % point of the normal.
TEST(StudentTTest, TailMatchesTables) {
  // Scenario: table quantiles in, their tail probability out.
  EXPECT_NEAR(StudentTTwoSided(2.228, 10), 0.05, 2e-4);
  EXPECT_NEAR(StudentTTwoSided(3.169, 10), 0.01, 1e-4);
  EXPECT_NEAR(StudentTTwoSided(2.576, 1e7), 0.01, 1e-4);
  EXPECT_NEAR(StudentTTwoSided(1.0, 1), 0.5, 1e-12);  // Cauchy: atan
  EXPECT_DOUBLE_EQ(StudentTTwoSided(0.0, 5), 1.0);
}

// Student's two-sample test on samples given by moments: equal constant
// samples are not different (p = 1), different constant ones certainly are
// (p = 0), and a hand-worked case: n = 10 each, variance 4, means 10 and
// 12 give t = 2 / sqrt(0.8) on 18 degrees of freedom.
TEST(StudentTTestTest, PoolsTheVariances) {
  // Scenario: the hand-worked case, then unequal sizes against the formula.
  EXPECT_NEAR(StudentTTestPValue(10, 4, 10, 12, 4, 10),
              StudentTTwoSided(2.0 / std::sqrt(0.8), 18), 1e-12);
  // n 5 and 15, variances 2 and 6: pooled (4 * 2 + 14 * 6) / 18.
  const double pooled = (4 * 2.0 + 14 * 6.0) / 18;
  EXPECT_NEAR(StudentTTestPValue(1, 2, 5, 3, 6, 15),
              StudentTTwoSided(2.0 / std::sqrt(pooled * (0.2 + 1.0 / 15)), 18),
              1e-12);
  EXPECT_DOUBLE_EQ(StudentTTestPValue(5, 0, 4, 5, 0, 4), 1.0);
  EXPECT_DOUBLE_EQ(StudentTTestPValue(5, 0, 4, 6, 0, 4), 0.0);
}

// Benjamini-Hochberg on hand-worked p-values: p_(k) <= k q / m.
TEST(BenjaminiHochbergTest, RejectsUpToTheLargestPassingRank) {
  // Scenario: q = 0.05 over four, three and four hypotheses.
  EXPECT_EQ(BenjaminiHochberg({0.01, 0.04, 0.03, 0.005}, 0.05),
            (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(BenjaminiHochberg({0.02, 0.5, 0.04}, 0.05),
            (std::vector<bool>{false, false, false}));
  EXPECT_EQ(BenjaminiHochberg({0.001, 0.5, 0.04, 0.03}, 0.05),
            (std::vector<bool>{true, false, false, false}));
}

// The generator is seeded: one seed, one series; another seed, another.
TEST(SyntheticSeriesTest, IsDeterministicForASeed) {
  // Scenario: the nightly spec drawn twice with seed 7, once with seed 8.
  const auto a = SyntheticSeries(Nightly(), 7);
  EXPECT_EQ(a, SyntheticSeries(Nightly(), 7));
  EXPECT_NE(a, SyntheticSeries(Nightly(), 8));
  ASSERT_EQ(a.size(), 60u);
  double mean = 0;
  for (double v : a) mean += v / 60;
  EXPECT_NEAR(mean, 100.0, 3.0);  // 3 % noise: the mean of 60 is within 1 %
}

// A clean step is found exactly, with its size, direction and a tiny
// p-value; so is a step back down later in the same series.
TEST(DetectChangePointsTest, NoiselessStepsAreFoundExactly) {
  // Scenario: 20 runs at 100, 20 at 110, 20 at 100 (no noise).
  std::vector<double> x(60, 100.0);
  for (int i = 20; i < 40; ++i) x[i] = 110.0;
  x[3] = 100.5;  // some spread, so that the t-test has a variance
  x[25] = 109.5;
  x[50] = 99.5;
  const auto cps = DetectChangePoints(x, {});
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 20);
  EXPECT_NEAR(cps[0].magnitude, 0.10, 0.01);
  EXPECT_EQ(cps[1].index, 40);
  EXPECT_NEAR(cps[1].magnitude, -0.09, 0.01);
  EXPECT_LT(cps[0].pvalue, 1e-6);
  EXPECT_EQ(cps[0].runs_before, 20);
  EXPECT_EQ(cps[0].runs_after, 20);
}

// q-hat of one split straight from its definition (Matteson & James eq.
// 5-6), every pair summed: what EnergySplitStatistics keeps up to date.
double QHatByDefinition(const std::vector<double>& x, int begin, int tau,
                        int end) {
  double cross = 0, left = 0, right = 0;
  for (int i = begin; i < tau; ++i) {
    for (int j = tau; j < end; ++j) cross += std::fabs(x[i] - x[j]);
    for (int j = i + 1; j < tau; ++j) left += std::fabs(x[i] - x[j]);
  }
  for (int i = tau; i < end; ++i) {
    for (int j = i + 1; j < end; ++j) right += std::fabs(x[i] - x[j]);
  }
  const double m = tau - begin, k = end - tau;
  const double e =
      2 * cross / (m * k) - left / (m * (m - 1) / 2) - right / (k * (k - 1) / 2);
  return m * k / (m + k) * e;
}

// The statistic kept up to date through rank-indexed sums equals its
// definition at every split, on steps, drifts, noise and ties.
TEST(EnergySplitStatisticsTest, EqualsTheDefinitionAtEverySplit) {
  // Scenario: seeded series (a step, a drift, pure noise, values repeated
  // from a few levels), whole and in a middle segment; min_seg 2 and 5.
  std::vector<std::vector<double>> series;
  SyntheticSeriesSpec step = Nightly();
  step.base = 10000;
  step.step_at = 31;
  step.step = 0.05;
  series.push_back(SyntheticSeries(step, 7));
  SyntheticSeriesSpec drift = Nightly();
  drift.drift_from = 10;
  drift.drift_per_run = 0.003;
  series.push_back(SyntheticSeries(drift, 8));
  series.push_back(SyntheticSeries(Nightly(), 9));
  std::vector<double> ties(60);
  for (size_t i = 0; i < ties.size(); ++i) ties[i] = 100.0 + (i * 7) % 3;
  series.push_back(ties);
  for (const std::vector<double>& x : series) {
    const int n = static_cast<int>(x.size());
    for (const auto& [begin, end] : {std::pair{0, n}, std::pair{13, 47}}) {
      for (int min_seg : {2, 5}) {
        const std::vector<double> q =
            EnergySplitStatistics(x, begin, end, min_seg);
        ASSERT_EQ(q.size(), static_cast<size_t>(end - begin - 2 * min_seg + 1));
        for (size_t i = 0; i < q.size(); ++i) {
          const int tau = begin + min_seg + static_cast<int>(i);
          const double want = QHatByDefinition(x, begin, tau, end);
          EXPECT_NEAR(q[i], want, 1e-9 * (1 + std::fabs(want)))
              << "split at " << tau << " of [" << begin << ", " << end << ")";
        }
      }
    }
  }
  // Too short to split with min_seg runs a side: no statistic.
  EXPECT_TRUE(EnergySplitStatistics(series[0], 0, 9, 5).empty());
}

// How many of `seeds` series of `spec` have a rising change point within
// one run of `at`.
int FoundNear(SyntheticSeriesSpec spec, int at, int seeds) {
  int found = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    for (const ChangePoint& cp :
         DetectChangePoints(SyntheticSeries(spec, seed), {})) {
      if (std::abs(cp.index - at) <= 1 && cp.magnitude > 0) {
        ++found;
        break;
      }
    }
  }
  return found;
}

// Issue 27 acceptance: 60 runs, 3 % noise, a 5 % step at run 45 is found
// at 45 +- 1 in >= 95 % of seeds, with "3 % noise" read as every run
// within +-3 % of its level (uniform; standard deviation 1.73 %).
TEST(DetectChangePointsTest, FivePercentStepFoundAtItsRunIn95PercentOfSeeds) {
  // Scenario: 1000 seeds of the nightly series, uniform +-3 % noise, the
  // step at run 45.
  SyntheticSeriesSpec spec = Nightly();
  spec.noise_kind = SyntheticSeriesSpec::Noise::kUniform;
  spec.step_at = 45;
  spec.step = 0.05;
  const int found = FoundNear(spec, 45, 1000);
  EXPECT_GE(found, 950) << found << " of 1000";
}

// Read as a 3 % standard deviation (Gaussian), a 5 % step is 1.67 sigma:
// then no estimator places it within +-1 run 95 % of the time (least
// squares, the maximum-likelihood split for Gaussian noise, manages 73.9 %
// over 5000 seeds, ours 69.1 %: bench/analyzer/changepoint_bench). Ours
// must stay near that ceiling, and find the step somewhere nearly always.
TEST(DetectChangePointsTest, GaussianThreePercentStepIsPlacedNearTheCeiling) {
  // Scenario: 1000 seeds, Gaussian noise of standard deviation 3 %.
  SyntheticSeriesSpec spec = Nightly();
  spec.step_at = 45;
  spec.step = 0.05;
  const int found = FoundNear(spec, 45, 1000);
  EXPECT_GE(found, 680) << found << " of 1000";
  int anywhere = 0;
  for (int seed = 1; seed <= 1000; ++seed) {
    anywhere += !DetectChangePoints(SyntheticSeries(spec, seed), {}).empty();
  }
  EXPECT_GE(anywhere, 930) << anywhere << " of 1000";
}

// Issue 27 acceptance: at most 1 % of noise-only series have any change
// point (over >= 200 series; 2000 here).
TEST(DetectChangePointsTest, NoiseOnlySeriesHaveAtMostOnePercentFalseAlarms) {
  // Scenario: 2000 seeds of the nightly series without a step.
  int alarms = 0;
  const int series = 2000;
  for (int seed = 1; seed <= series; ++seed) {
    if (!DetectChangePoints(SyntheticSeries(Nightly(), 100000 + seed), {})
             .empty()) {
      ++alarms;
    }
  }
  RecordProperty("false_alarm_pct", std::to_string(100.0 * alarms / series));
  EXPECT_LE(alarms, series / 100) << alarms << " of " << series;
}

// One gate over 200 noise-only groups (each judged on its latest 5 runs),
// with Benjamini-Hochberg at q = 0.05 across the groups: it fails in at
// most 5 % of seeds (issue 27 acceptance).
TEST(BenjaminiHochbergTest, TwoHundredNoiseGroupsFailAGateInAtMost5Percent) {
  // Scenario: 200 gates (seeds) of 200 groups x 60 runs of noise.
  const int gates = 200, groups = 200, window = 5;
  int failed = 0;
  for (int gate = 0; gate < gates; ++gate) {
    std::vector<double> p;
    for (int g = 0; g < groups; ++g) {
      const auto x = SyntheticSeries(
          Nightly(), 1000000 + static_cast<uint64_t>(gate) * groups + g);
      p.push_back(RegressionPValue(DetectChangePoints(x, {}), 60, window));
    }
    for (bool r : BenjaminiHochberg(p, 0.05)) {
      if (r) {
        ++failed;
        break;
      }
    }
  }
  RecordProperty("failed_gates_pct", std::to_string(100.0 * failed / gates));
  EXPECT_LE(failed, gates * 5 / 100) << failed << " of " << gates;
}

// The same gate with one group that regressed 8 % in its latest 5 runs
// fails, and says which group: control across groups does not hide a
// real regression.
TEST(BenjaminiHochbergTest, ARealRegressionAmongNoiseGroupsStillFailsTheGate) {
  // Scenario: 200 groups of noise, group 17 steps up 8 % at run 55.
  std::vector<double> p;
  for (int g = 0; g < 200; ++g) {
    SyntheticSeriesSpec spec = Nightly();
    if (g == 17) {
      spec.step_at = 55;
      spec.step = 0.08;
    }
    p.push_back(RegressionPValue(
        DetectChangePoints(SyntheticSeries(spec, 500 + g), {}), 60, 5));
  }
  const std::vector<bool> rejected = BenjaminiHochberg(p, 0.05);
  EXPECT_TRUE(rejected[17]) << "p = " << p[17];
  int others = 0;
  for (int g = 0; g < 200; ++g) others += g != 17 && rejected[g];
  EXPECT_EQ(others, 0);
}

// Regressions only, and only in the window: an improvement in the window
// or a regression before it does not count.
TEST(RegressionPValueTest, CountsOnlyRegressionsTouchingTheWindow) {
  // Scenario: change points at run 20 (+10 %), 56 (-5 %), 57 (+6 %).
  std::vector<ChangePoint> cps(3);
  cps[0].index = 20, cps[0].magnitude = 0.10, cps[0].pvalue = 1e-9;
  cps[1].index = 56, cps[1].magnitude = -0.05, cps[1].pvalue = 1e-8;
  cps[2].index = 57, cps[2].magnitude = 0.06, cps[2].pvalue = 1e-4;
  EXPECT_DOUBLE_EQ(RegressionPValue(cps, 60, 5), 1e-4);
  EXPECT_DOUBLE_EQ(RegressionPValue(cps, 60, 2), 1.0);
  EXPECT_DOUBLE_EQ(RegressionPValue(cps, 60, 5, /*higher_is_worse=*/false),
                   1e-8);
}


// The t quantile inverts the tail: 2.228 is the two-sided 5 % point for 10
// degrees of freedom (0.025 a side), 12.706 for 1.
TEST(StudentTQuantileTest, MatchesTables) {
  EXPECT_NEAR(StudentTQuantileUpper(0.025, 10), 2.228, 1e-3);
  EXPECT_NEAR(StudentTQuantileUpper(0.025, 1), 12.706, 1e-3);
  EXPECT_NEAR(StudentTQuantileUpper(0.975, 10), -2.228, 1e-3);
  EXPECT_NEAR(StudentTUpper(2.228, 10), 0.025, 1e-4);
}

// Run-to-run noise: Gaussian noise of 2 % reads as about 2 %; a step and a
// one-night spike in the series barely move it (successive differences
// and their median), where a standard deviation would double.
TEST(RunToRunNoiseTest, ReadsTheNoiseAndIgnoresAStepAndASpike) {
  // Scenario: 400 runs of 2 % noise; then 40 runs with a 15 % step at 20
  // and a 40 % spike at 10.
  SyntheticSeriesSpec spec;
  spec.runs = 400;
  spec.noise = 0.02;
  const NoiseEstimate long_run = RunToRunNoise(SyntheticSeries(spec, 7), 400);
  EXPECT_NEAR(long_run.sigma, 0.02, 0.003);
  // 2/3 dof per difference kept: Gaussian noise keeps nearly all 399.
  EXPECT_NEAR(long_run.dof, 2.0 / 3.0 * 399, 2.0 / 3.0 * 2);
  spec.runs = 40;
  const double quiet = RunToRunNoise(SyntheticSeries(spec, 8), 40).sigma;
  spec.step_at = 20;
  spec.step = 0.15;
  spec.spike_at = 10;
  spec.spike = 0.40;
  const double moved = RunToRunNoise(SyntheticSeries(spec, 8), 40).sigma;
  EXPECT_LT(moved, quiet * 1.25) << quiet << " -> " << moved;
  EXPECT_EQ(RunToRunNoise({100.0}, 1).dof, 0);
}

// The pool is the dof-weighted mean of the variances, worth at most the
// prior's dof; moderation tops a group's own dof up to the pool's.
TEST(PooledNoiseTest, MeanVarianceToppingUpShortHistories) {
  // Scenario: groups at 1, 2 and 3 % noise, 5 dof each.
  const std::vector<NoiseEstimate> groups = {{0.01, 5}, {0.02, 5}, {0.03, 5}};
  const NoiseEstimate pooled = PooledNoise(groups, 10);
  EXPECT_NEAR(pooled.sigma, std::sqrt((1e-4 + 4e-4 + 9e-4) / 3), 1e-12);
  EXPECT_DOUBLE_EQ(pooled.dof, 10);
  EXPECT_DOUBLE_EQ(PooledNoise({{0.02, 3}}, 10).dof, 3);
  // 4 dof of its own: 6 from the pool.
  const NoiseEstimate m = ModeratedNoise({0.04, 4}, pooled);
  EXPECT_NEAR(m.sigma,
              std::sqrt((4 * 0.0016 + 6 * pooled.sigma * pooled.sigma) / 10),
              1e-12);
  EXPECT_DOUBLE_EQ(m.dof, 10);
  // 30 dof of its own: the pool adds nothing.
  EXPECT_DOUBLE_EQ(ModeratedNoise({0.04, 30}, pooled).sigma, 0.04);
}

// The latest nights of a noiseless series: a 10 % step on the latest two
// nights is a tail of 2 placed at its run, sized exactly, before/after
// figures given; the night after a one-night spike there is no tail; a
// drop is the worse way only when lower is worse.
TEST(TestLatestNightsTest, FindsTheTailPlacesAndSizesIt) {
  // Scenario: 10 runs at 100 (+-1 alternating), then 110, 110.
  std::vector<double> x;
  for (int i = 0; i < 10; ++i) x.push_back(i % 2 ? 101 : 99);
  x.push_back(110);
  x.push_back(110);
  const NoiseEstimate noise{0.01, 20};
  const LatestNightTest t = TestLatestNights(x, 0, noise, true, {});
  EXPECT_EQ(t.tail, 2);
  EXPECT_EQ(t.onset, 10);
  EXPECT_DOUBLE_EQ(t.change.mean_before, 100);
  EXPECT_EQ(t.change.runs_before, 10);
  EXPECT_DOUBLE_EQ(t.change.mean_after, 110);
  EXPECT_EQ(t.change.runs_after, 2);
  EXPECT_NEAR(t.change.sd_before, std::sqrt(10.0 / 9), 1e-9);
  EXPECT_NEAR(t.change.magnitude, 0.10, 1e-12);
  EXPECT_LT(t.change.magnitude_low, 0.10);
  EXPECT_GT(t.change.magnitude_high, 0.10);
  EXPECT_LT(t.change.pvalue, 1e-6);
  EXPECT_GT(t.pvalue_wide, t.change.pvalue);
  // Lower is worse (tokens/s): a rise is no tail.
  EXPECT_EQ(TestLatestNights(x, 0, noise, false, {}).tail, 0);
  // A spike on night 11, back to 100 on night 12: nothing tonight.
  x[10] = 130;
  x[11] = 100;
  EXPECT_EQ(TestLatestNights(x, 0, noise, true, {}).tail, 0);
  // The baseline starts at the last change point: with runs 0-9 at 110
  // and a change point at 10, tonight's 110 is a move only against 0-9.
  std::vector<double> y(12, 110.0);
  for (int i = 0; i < 10; ++i) y[i] = 100;
  EXPECT_EQ(TestLatestNights(y, 10, noise, true, {}).tail, 0);
  EXPECT_EQ(TestLatestNights(y, 0, noise, true, {}).tail, 2);
}

// The 95 % interval of a change point's size holds the true step in about
// 95 % of seeds (8 % step at run 30 of 60, 3 % noise).
TEST(DetectChangePointsTest, SizeIntervalCoversTheTrueStep) {
  // Scenario: 400 seeds.
  SyntheticSeriesSpec spec = Nightly();
  spec.step_at = 30;
  spec.step = 0.08;
  int found = 0, covered = 0;
  for (int seed = 1; seed <= 400; ++seed) {
    for (const ChangePoint& cp :
         DetectChangePoints(SyntheticSeries(spec, 7000 + seed), {})) {
      if (cp.index != 30) continue;
      ++found;
      covered += cp.magnitude_low <= 0.08 && 0.08 <= cp.magnitude_high;
      EXPECT_GT(cp.sd_before, 0);
    }
  }
  ASSERT_GT(found, 200);
  EXPECT_GE(covered, found * 90 / 100) << covered << " of " << found;
}

// One search for both levels gives what two searches give: the strong
// change points at 0.01, the weak ones at 0.2 (a 3 % step in 3 % noise is
// often only weak).
TEST(DetectChangePointsTest, TwoLevelsEqualTwoSearches) {
  // Scenario: 200 seeds of 60 runs, 3 % noise, a 3 % step at run 30.
  SyntheticSeriesSpec spec = Nightly();
  spec.step_at = 30;
  spec.step = 0.03;
  ChangePointOptions loose;
  loose.max_pvalue = 0.2;
  int weak_only = 0;
  for (int seed = 1; seed <= 200; ++seed) {
    const std::vector<double> x = SyntheticSeries(spec, 9000 + seed);
    std::vector<ChangePoint> strong, weak;
    DetectChangePointsTwoLevels(x, {}, 0.2, &strong, &weak);
    const auto want_strong = DetectChangePoints(x, {});
    const auto want_weak = DetectChangePoints(x, loose);
    ASSERT_EQ(strong.size(), want_strong.size()) << seed;
    ASSERT_EQ(weak.size(), want_weak.size()) << seed;
    for (size_t i = 0; i < strong.size(); ++i) {
      EXPECT_EQ(strong[i].index, want_strong[i].index);
      EXPECT_DOUBLE_EQ(strong[i].pvalue, want_strong[i].pvalue);
    }
    for (size_t i = 0; i < weak.size(); ++i) {
      EXPECT_EQ(weak[i].index, want_weak[i].index);
    }
    weak_only += strong.empty() && !weak.empty();
  }
  EXPECT_GT(weak_only, 0);
}

// A store built from a real run's families (latest_night_bench --trace):
// one series per given time per launch, around it, group 0 the one that
// steps; without bases, 10 groups of 1,000 x (g + 1).
TEST(SyntheticStoreTest, BasesGiveTheGroupsAndTheirLevels) {
  SyntheticStoreSpec spec;
  spec.runs = 200;
  spec.noise = 0.02;
  spec.bases = {52000, 700, 3100};
  spec.step_at = 100;
  spec.step = 0.10;
  const std::vector<std::vector<double>> store = SyntheticStore(spec, 7);
  ASSERT_EQ(store.size(), 3u);
  for (size_t g = 0; g < store.size(); ++g) {
    ASSERT_EQ(store[g].size(), 200u);
    double before = 0, after = 0;
    for (int r = 0; r < 100; ++r) before += store[g][r] / 100;
    for (int r = 100; r < 200; ++r) after += store[g][r] / 100;
    // 100 runs of <= 3 % noise: the mean within 1 % of its level.
    EXPECT_NEAR(before / spec.bases[g], 1.0, 0.01) << "group " << g;
    const double level = g == 0 ? 1.10 : 1.0;
    EXPECT_NEAR(after / spec.bases[g], level, 0.01) << "group " << g;
  }
  spec.bases.clear();
  const std::vector<std::vector<double>> generated = SyntheticStore(spec, 7);
  ASSERT_EQ(generated.size(), 10u);
  double mean9 = 0;
  for (int r = 0; r < 100; ++r) mean9 += generated[9][r] / 100;
  EXPECT_NEAR(mean9 / 10000.0, 1.0, 0.01);
}

}  // namespace
}  // namespace rooftrace::stats
