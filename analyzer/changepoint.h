// Change points in a nightly series (`rooftrace history`): where a series
// of one group's mean time per launch moved, how much, and how sure we are,
// plus the false-alarm control across the many groups a nightly gate
// judges at once. The one statistics module of rooftrace (STYLE.md): pure
// functions of their arguments, no I/O, no clock; the only randomness is the
// seeded generator of test series (SyntheticSeries), so every figure is
// reproducible from its seed.
//
// Method (docs/history.md): E-Divisive means (Matteson & James, "A
// Nonparametric Approach for Multiple Change Point Analysis of Multivariate
// Data", JASA 2014) picks where to split, hierarchically, as Apache Otava
// does (its docs/MATH.md); each split is then judged by Student's
// two-sample t-test between the runs before and after it, as Otava judges
// it, with
// the p-value multiplied by the number of split positions tried (see
// DetectChangePoints for why), and kept only when it is also at least
// `min_magnitude` in relative size.
//
// Thread-safe (no state). The trap: a p-value here is for one series; a
// gate over many groups must go through BenjaminiHochberg (or accept many
// false alarms: 1 % of 200 groups is two a night).
#ifndef ROOFTRACE_ANALYZER_CHANGEPOINT_H_
#define ROOFTRACE_ANALYZER_CHANGEPOINT_H_

#include <cstdint>
#include <vector>

namespace rooftrace::stats {

struct ChangePointOptions {
  // A split is a change point when its corrected p-value is at most this.
  double max_pvalue = 0.01;
  // ... and the mean moved by at least this fraction (0.02: 2 %): smaller
  // moves may be real but are not worth a person's night.
  double min_magnitude = 0.02;
  // Runs needed on each side of a split: fewer make a t-test of nothing.
  int min_segment = 5;
};

struct ChangePoint {
  int index = 0;  // the first run of the new level (0-based)
  // Means of the runs between the neighbouring change points (or the ends
  // of the series) before and after `index`.
  double mean_before = 0, mean_after = 0;
  double sd_before = 0, sd_after = 0;  // the runs' standard deviations
  int runs_before = 0, runs_after = 0;
  double magnitude = 0;  // mean_after / mean_before - 1 (signed)
  // Its 95 % interval (Student's t on the pooled variance, the ratio's
  // delta-method interval).
  double magnitude_low = 0, magnitude_high = 0;
  double pvalue = 1;     // Student's t-test, corrected for the positions tried
};

// The change points of `series` in index order. Deterministic: the same
// series and options give the same answer (no random draws; the t-test
// needs none). Series shorter than 2 * min_segment have none.
std::vector<ChangePoint> DetectChangePoints(const std::vector<double>& series,
                                            const ChangePointOptions& options);

// DetectChangePoints at `options` (strong) and at max_pvalue
// `loose_pvalue` (weak, the strong ones among them), from one search: the
// splits do not depend on the threshold, so this costs one search, not
// two. Equal to two calls.
void DetectChangePointsTwoLevels(const std::vector<double>& series,
                                 const ChangePointOptions& options,
                                 double loose_pvalue,
                                 std::vector<ChangePoint>* strong,
                                 std::vector<ChangePoint>* weak);

// E-Divisive's statistic q-hat for each split of series[begin, end) that
// leaves at least `min_seg` runs a side, in split order (the first entry
// splits at begin + min_seg); empty when there is no such split. The
// split DetectChangePoints tries is the largest. O(n log n).
std::vector<double> EnergySplitStatistics(const std::vector<double>& series,
                                          int begin, int end, int min_seg);

// The p-value a gate judges a group by: the smallest p-value of the change
// points of a series of `runs` that are regressions (`higher_is_worse`: the
// mean went up, as time per launch; else down, as % of roof) and touch the
// latest `window` runs (index >= runs - window); 1 when there is none.
double RegressionPValue(const std::vector<ChangePoint>& change_points,
                        int runs, int window, bool higher_is_worse = true);

// The mean, unbiased variance (n - 1) and size of x[begin, end).
struct Moments {
  double mean = 0, var = 0;
  int n = 0;
};
Moments MomentsOf(const std::vector<double>& x, int begin, int end);

// Two-sided p-value of Student's two-sample t-test (pooled variance)
// between two samples given by their means, unbiased variances and sizes
// (each >= 2). 1 when both variances are 0 and the means are equal, 0 when
// they differ.
double StudentTTestPValue(double mean1, double var1, int n1, double mean2,
                          double var2, int n2);

// Student's t distribution: P(|T| >= t) for `df` degrees of freedom.
double StudentTTwoSided(double t, double df);

// Benjamini-Hochberg (1995): which hypotheses are rejected when their
// p-values are `pvalues` and the false discovery rate is held at `q`.
// Under the global null (no group changed) this is a family-wise bound:
// P(any rejection) <= q.
std::vector<bool> BenjaminiHochberg(const std::vector<double>& pvalues,
                                    double q);

// A generated nightly series whose answer is known: `runs` values around
// `base` with multiplicative noise of relative size `noise` (Gaussian:
// its standard deviation; uniform: its half-width, every run within
// +-noise of its level), a
// step of relative size `step` from run `step_at` on (-1: none), a
// one-night spike of relative size `spike` at run `spike_at` (-1: none) and a
// drift of `drift_per_run` per run from run `drift_from` on (-1: none),
// compounding. The same seed gives the same series on every platform
// (mt19937_64 and Box-Muller written here, not std::normal_distribution,
// whose output the standard leaves to the library).
struct SyntheticSeriesSpec {
  enum class Noise { kGaussian, kUniform };
  int runs = 60;
  double base = 100.0;
  double noise = 0.03;
  Noise noise_kind = Noise::kGaussian;
  int step_at = -1;
  double step = 0.0;
  int drift_from = -1;
  double drift_per_run = 0.0;
  int spike_at = -1;
  double spike = 0.0;
};
std::vector<double> SyntheticSeries(const SyntheticSeriesSpec& spec,
                                    uint64_t seed);

}  // namespace rooftrace::stats

#endif  // ROOFTRACE_ANALYZER_CHANGEPOINT_H_
