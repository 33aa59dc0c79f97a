#include "analyzer/changepoint.h"

#include "analyzer/changepoint_latest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <utility>

namespace rooftrace::stats {

Moments MomentsOf(const std::vector<double>& x, int begin, int end) {
  Moments m;
  m.n = end - begin;
  if (m.n <= 0) return m;
  double sum = 0;
  for (int i = begin; i < end; ++i) sum += x[i];
  m.mean = sum / m.n;
  double ss = 0;
  for (int i = begin; i < end; ++i) ss += (x[i] - m.mean) * (x[i] - m.mean);
  m.var = m.n > 1 ? ss / (m.n - 1) : 0;
  return m;
}

namespace {

// Counts and sums of the values of a set, indexed by their rank in the
// segment (a Fenwick tree each), so that the summed distance from one
// value to every member is two prefix queries: for v of rank r,
//   sum |v - y| = v c - s + (S - s) - v (C - c)
// with c, s the count and sum of the members ranked below r, C and S of
// all of them. Equal values may fall on either side: they add 0 either way.
class RankedSet {
 public:
  explicit RankedSet(int n) : count_(n + 1, 0), sum_(n + 1, 0.0) {}

  void Add(int rank, double v, int sign) {
    total_count_ += sign;
    total_sum_ += sign * v;
    for (int i = rank + 1; i < static_cast<int>(count_.size()); i += i & -i) {
      count_[i] += sign;
      sum_[i] += sign * v;
    }
  }

  double DistanceSum(int rank, double v) const {
    int c = 0;
    double s = 0;
    for (int i = rank; i > 0; i -= i & -i) {
      c += count_[i];
      s += sum_[i];
    }
    return (v * c - s) + ((total_sum_ - s) - v * (total_count_ - c));
  }

 private:
  std::vector<int> count_;
  std::vector<double> sum_;
  int total_count_ = 0;
  double total_sum_ = 0;
};

}  // namespace

// q-hat(tau) for each split of x[begin, end) with min_seg runs a side:
//   q-hat(tau) = m k / (m + k) * E-hat, where E-hat is the energy distance
// (alpha = 1) between X = x[begin, tau) (m runs) and Y = x[tau, end)
// (k runs):
//   E-hat = 2/(m k) sum|X_i - Y_j| - 1/C(m,2) sum_{i<i'}|X_i - X_i'|
//           - 1/C(k,2) sum_{j<j'}|Y_j - Y_j'|
// (Matteson & James 2014, eq. 5-6, with the series' end as kappa, as
// Otava does). The three sums are kept up to date as tau moves right, one
// run at a time; each move needs the summed distance from the moving run
// to either side, which two rank-indexed sets give in O(log n), so a
// segment of n runs costs O(n log n). (The sums run by run cost O(n^2):
// 0.24 s of history_bench's 1,000 runs x 200 groups.) The values are
// taken relative to the segment's first, which changes no distance and
// keeps the sums small.
std::vector<double> EnergySplitStatistics(const std::vector<double>& x,
                                          int begin, int end, int min_seg) {
  const int first = begin + min_seg, last = end - min_seg;
  std::vector<double> out;
  if (first > last) return out;
  const int n = end - begin;
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    v[i] = x[begin + i] - x[begin];
    // Not a number has no rank: no split can be told (and none is better).
    if (!std::isfinite(v[i])) {
      return std::vector<double>(static_cast<size_t>(last - first + 1), NAN);
    }
  }
  std::vector<int> order(static_cast<size_t>(n)), rank(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return v[a] != v[b] ? v[a] < v[b] : a < b;
  });
  for (int r = 0; r < n; ++r) rank[order[r]] = r;
  RankedSet left(n), right(n);
  double within_left = 0, within_right = 0, cross = 0;
  const int cut = first - begin;
  for (int i = 0; i < cut; ++i) {
    within_left += left.DistanceSum(rank[i], v[i]);
    left.Add(rank[i], v[i], +1);
  }
  for (int i = cut; i < n; ++i) {
    within_right += right.DistanceSum(rank[i], v[i]);
    right.Add(rank[i], v[i], +1);
  }
  for (int i = 0; i < cut; ++i) cross += right.DistanceSum(rank[i], v[i]);
  out.reserve(static_cast<size_t>(last - first + 1));
  for (int t = cut;; ++t) {
    const double m = t, k = n - t;
    const double e = 2.0 * cross / (m * k) - within_left / (m * (m - 1) / 2) -
                     within_right / (k * (k - 1) / 2);
    out.push_back(m * k / (m + k) * e);
    if (begin + t == last) break;
    // Run t moves from the right side to the left.
    right.Add(rank[t], v[t], -1);
    const double to_left = left.DistanceSum(rank[t], v[t]);
    const double to_right = right.DistanceSum(rank[t], v[t]);
    left.Add(rank[t], v[t], +1);
    within_left += to_left;
    within_right -= to_right;
    cross += to_right - to_left;
  }
  return out;
}

namespace {

// The E-Divisive split of x[begin, end): the tau with the largest q-hat.
int BestSplit(const std::vector<double>& x, int begin, int end, int min_seg) {
  const std::vector<double> q = EnergySplitStatistics(x, begin, end, min_seg);
  int best = 0;
  // Strictly greater: on a tie the earlier split wins, deterministically.
  for (size_t i = 1; i < q.size(); ++i) {
    if (q[i] > q[best]) best = static_cast<int>(i);
  }
  return begin + min_seg + best;
}

// The change point at `at` judged between the runs [begin, at) and
// [at, end) by Student's t-test, as Otava judges its candidates (a
// permutation test of q-hat, Matteson & James' own, needs thousands of
// shuffles per split for the p-values of 1e-4 a 200-group gate needs, and
// its answer varies with the shuffles; the t-test's is exact for Gaussian
// noise, deterministic, and costs O(n)). The t-test's p-value is multiplied by the number of split
// positions the segment offered (Bonferroni): the split is the best of
// them, so its raw p-value is the smallest of many and, uncorrected, a
// 0.01 threshold on 60 runs of pure noise fires far more often than 1 %
// of the time (bench/analyzer/changepoint_bench prints how often).
ChangePoint Judge(const std::vector<double>& x, int begin, int at, int end,
                  int min_seg) {
  const Moments a = MomentsOf(x, begin, at), b = MomentsOf(x, at, end);
  ChangePoint cp;
  cp.index = at;
  cp.mean_before = a.mean;
  cp.mean_after = b.mean;
  cp.runs_before = a.n;
  cp.runs_after = b.n;
  cp.sd_before = std::sqrt(a.var);
  cp.sd_after = std::sqrt(b.var);
  cp.magnitude = a.mean != 0 ? b.mean / a.mean - 1 : 0;
  if (a.mean != 0) {
    // se of mean_after / mean_before by the delta method, on the pooled
    // variance the test uses.
    const int df = a.n + b.n - 2;
    const double pooled = ((a.n - 1) * a.var + (b.n - 1) * b.var) / df;
    const double ratio = b.mean / a.mean;
    const double se = std::sqrt(pooled / b.n + ratio * ratio * pooled / a.n) /
                      std::fabs(a.mean);
    const double half = StudentTQuantileUpper(0.025, df) * se;
    cp.magnitude_low = cp.magnitude - half;
    cp.magnitude_high = cp.magnitude + half;
  }
  const int positions = std::max(1, (end - begin) - 2 * min_seg + 1);
  cp.pvalue = std::min(
      1.0, StudentTTestPValue(a.mean, a.var, a.n, b.mean, b.var, b.n) * positions);
  return cp;
}

bool Passes(const ChangePoint& cp, const ChangePointOptions& o) {
  return cp.pvalue <= o.max_pvalue && std::fabs(cp.magnitude) >= o.min_magnitude;
}

// The continued fraction of the regularized incomplete beta function
// I_x(a, b), by the modified Lentz method (converges for x < (a+1)/(a+b+2)).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m <= 300; ++m) {
    // Even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)).
    double num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1.0 + num * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    f *= d * c;
    // Odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1.0 + num * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    f *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return f;
}

// I_x(a, b), the regularized incomplete beta function.
double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) -
                                std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1.0 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

}  // namespace

double StudentTTwoSided(double t, double df) {
  if (!std::isfinite(t)) return 0;
  // P(|T| >= t) = I_{df / (df + t^2)}(df / 2, 1 / 2).
  return RegularizedBeta(df / 2, 0.5, df / (df + t * t));
}

double StudentTTestPValue(double mean1, double var1, int n1, double mean2,
                          double var2, int n2) {
  // Pooled variance: under the null hypothesis (no change) both sides are
  // one distribution, so they share one variance, and the test is exact
  // for Gaussian noise. Welch's unequal-variance test, tried first, fired
  // on 1.2 % of noise-only nightly series instead of 0.25 %: its
  // degrees-of-freedom approximation is loose in the far tail where the
  // position correction puts the threshold, with 5 runs on one side.
  const int df = n1 + n2 - 2;
  const double pooled = ((n1 - 1) * var1 + (n2 - 1) * var2) / df;
  const double se = std::sqrt(pooled * (1.0 / n1 + 1.0 / n2));
  if (se <= 0) return mean1 == mean2 ? 1.0 : 0.0;
  return StudentTTwoSided(std::fabs(mean2 - mean1) / se, df);
}

namespace {

// The hierarchical search: split the segment where E-Divisive says, keep
// the split if it passes the loose test, then look inside each side the
// same way. The splits do not depend on the threshold, so the strict
// search's tree is this one cut where a split fails the strict test:
// `strict` gets the splits whose every ancestor, and they, pass it.
void Search(const std::vector<double>& series, int min_seg,
            const ChangePointOptions& loose, const ChangePointOptions& strict,
            std::vector<int>* found_loose, std::vector<int>* found_strict) {
  const int n = static_cast<int>(series.size());
  struct Segment {
    int begin, end;
    bool strict;  // every split above it passed the strict test
  };
  std::vector<Segment> todo = {{0, n, true}};
  while (!todo.empty()) {
    const Segment seg = todo.back();
    todo.pop_back();
    if (seg.end - seg.begin < 2 * min_seg) continue;
    const int at = BestSplit(series, seg.begin, seg.end, min_seg);
    const ChangePoint cp = Judge(series, seg.begin, at, seg.end, min_seg);
    if (!Passes(cp, loose)) continue;
    const bool strict_too = seg.strict && Passes(cp, strict);
    found_loose->push_back(at);
    if (strict_too) found_strict->push_back(at);
    todo.push_back({seg.begin, at, strict_too});
    todo.push_back({at, seg.end, strict_too});
  }
}

// Each change point is judged again between its final neighbours (a split
// found first was judged against runs that later splits cut away); the
// weakest that no longer passes goes, until all pass.
std::vector<ChangePoint> Rejudge(const std::vector<double>& series,
                                 std::vector<int> found, int min_seg,
                                 const ChangePointOptions& options) {
  const int n = static_cast<int>(series.size());
  std::sort(found.begin(), found.end());
  while (true) {
    std::vector<ChangePoint> judged;
    for (size_t i = 0; i < found.size(); ++i) {
      const int begin = i == 0 ? 0 : found[i - 1];
      const int end = i + 1 == found.size() ? n : found[i + 1];
      judged.push_back(Judge(series, begin, found[i], end, min_seg));
    }
    int weakest = -1;
    for (size_t i = 0; i < judged.size(); ++i) {
      if (Passes(judged[i], options)) continue;
      if (weakest < 0 || judged[i].pvalue > judged[weakest].pvalue) {
        weakest = static_cast<int>(i);
      }
    }
    if (weakest < 0) return judged;
    found.erase(found.begin() + weakest);
  }
}

}  // namespace

std::vector<ChangePoint> DetectChangePoints(const std::vector<double>& series,
                                            const ChangePointOptions& options) {
  const int min_seg = std::max(2, options.min_segment);
  std::vector<int> found, unused;
  Search(series, min_seg, options, options, &found, &unused);
  return Rejudge(series, std::move(found), min_seg, options);
}

void DetectChangePointsTwoLevels(const std::vector<double>& series,
                                 const ChangePointOptions& options,
                                 double loose_pvalue,
                                 std::vector<ChangePoint>* strong,
                                 std::vector<ChangePoint>* weak) {
  const int min_seg = std::max(2, options.min_segment);
  ChangePointOptions loose = options;
  loose.max_pvalue = std::max(options.max_pvalue, loose_pvalue);
  std::vector<int> found_loose, found_strict;
  Search(series, min_seg, loose, options, &found_loose, &found_strict);
  *strong = Rejudge(series, std::move(found_strict), min_seg, options);
  *weak = Rejudge(series, std::move(found_loose), min_seg, loose);
}

double RegressionPValue(const std::vector<ChangePoint>& change_points,
                        int runs, int window, bool higher_is_worse) {
  double p = 1.0;
  for (const ChangePoint& cp : change_points) {
    const bool worse = higher_is_worse ? cp.magnitude > 0 : cp.magnitude < 0;
    if (worse && cp.index >= runs - window) p = std::min(p, cp.pvalue);
  }
  return p;
}

std::vector<bool> BenjaminiHochberg(const std::vector<double>& pvalues,
                                    double q) {
  const size_t m = pvalues.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return pvalues[a] < pvalues[b];
  });
  // The largest rank k with p_(k) <= k q / m; every p up to it is rejected.
  size_t k = 0;
  for (size_t r = 1; r <= m; ++r) {
    if (pvalues[order[r - 1]] <= static_cast<double>(r) * q / m) k = r;
  }
  std::vector<bool> rejected(m, false);
  for (size_t r = 0; r < k; ++r) rejected[order[r]] = true;
  return rejected;
}

std::vector<double> SyntheticSeries(const SyntheticSeriesSpec& spec,
                                    uint64_t seed) {
  std::mt19937_64 gen(seed);
  constexpr double kTwoPi = 6.283185307179586;
  constexpr double kUnit = 1.0 / 9007199254740992.0;  // 2^-53
  std::vector<double> out;
  out.reserve(spec.runs);
  for (int i = 0; i < spec.runs; ++i) {
    // Box-Muller; u1 in (0, 1] so that log(u1) is finite.
    const double u1 = (static_cast<double>(gen() >> 11) + 1.0) * kUnit;
    const double u2 = static_cast<double>(gen() >> 11) * kUnit;
    const double z =
        spec.noise_kind == SyntheticSeriesSpec::Noise::kUniform
            ? 2.0 * u2 - 1.0
            : std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
    double level = spec.base;
    if (spec.step_at >= 0 && i >= spec.step_at) level *= 1.0 + spec.step;
    if (i == spec.spike_at) level *= 1.0 + spec.spike;
    if (spec.drift_from >= 0 && i >= spec.drift_from) {
      level *= std::pow(1.0 + spec.drift_per_run, i - spec.drift_from + 1);
    }
    out.push_back(level * (1.0 + spec.noise * z));
  }
  return out;
}

}  // namespace rooftrace::stats
