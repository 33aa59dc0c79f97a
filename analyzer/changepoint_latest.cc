#include "analyzer/changepoint_latest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "analyzer/changepoint.h"

namespace rooftrace::stats {
namespace {

// 1 / Phi^-1(3/4): the median absolute value of a standard normal.
constexpr double kMadToSd = 1.482602218505602;
// The asymptotic efficiency of the median absolute deviation against the
// standard deviation for Gaussian data: what n of them are worth.
constexpr double kMadEfficiency = 0.37;
// The mean square successive difference against the sample variance, for
// Gaussian data (von Neumann 1941): 2/3 as many dof.
constexpr double kVonNeumannEfficiency = 2.0 / 3.0;
// Differences beyond this many robust scales are a step or a spike.
constexpr double kKeepWithin = 3.5;

double Median(std::vector<double> v) {  // of a non-empty list
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double hi = v[mid];
  return (*std::max_element(v.begin(), v.begin() + mid) + hi) / 2;
}

// One-sided p-value of a move of `dev` (relative, the worse way positive)
// with standard error `se` (relative) on `dof` degrees of freedom.
double UpperP(double dev, double se, double dof) {
  if (se <= 0) return dev > 0 ? 0.0 : 1.0;
  return StudentTUpper(dev / se, dof);
}

}  // namespace

double StudentTUpper(double t, double df) {
  if (std::isnan(t)) return 1;
  const double two = StudentTTwoSided(std::fabs(t), df);
  return t >= 0 ? two / 2 : 1 - two / 2;
}

double StudentTQuantileUpper(double p, double df) {
  // Bisection on the monotone tail: 200 halvings of [0, 1e6] reach far
  // below double precision; the tail is exact (changepoint.cc's beta).
  if (p >= 0.5) return -StudentTQuantileUpper(1 - p, df);
  double lo = 0, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (StudentTUpper(mid, df) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

NoiseEstimate RunToRunNoise(const std::vector<double>& x, int end) {
  end = std::min<int>(end, static_cast<int>(x.size()));
  std::vector<double> d;
  for (int i = 1; i < end; ++i) {
    const double level = (x[i] + x[i - 1]) / 2;
    if (!(level > 0) || !std::isfinite(level)) continue;
    d.push_back(std::fabs(x[i] - x[i - 1]) / level);
  }
  NoiseEstimate e;
  if (d.empty()) return e;
  // A difference of two runs has sqrt(2) times one run's spread. The
  // median gives a first, robust scale; the differences within 3.5 of it
  // (all of Gaussian noise but 1 in 2,000; not a step's or a spike's) then
  // give the root mean square, the von Neumann estimate, worth 2/3 of a
  // sample variance's dof where the median alone is worth 0.37.
  const double robust = kMadToSd * Median(d);
  if (robust <= 0) {
    e.sigma = 0;
    e.dof = kMadEfficiency * static_cast<double>(d.size());
    return e;
  }
  double ss = 0;
  int kept = 0;
  for (double v : d) {
    if (v > kKeepWithin * robust) continue;
    ss += v * v;
    ++kept;
  }
  e.sigma = std::sqrt(ss / kept) / std::sqrt(2.0);
  e.dof = kVonNeumannEfficiency * kept;
  return e;
}

NoiseEstimate PooledNoise(const std::vector<NoiseEstimate>& groups,
                          double prior_dof) {
  // The dof-weighted mean of the variances: unbiased whatever each
  // group's dof (a median of few-dof estimates reads low: of one
  // difference each, by a third).
  double ss = 0, dof = 0;
  for (const NoiseEstimate& g : groups) {
    if (g.dof <= 0) continue;
    ss += g.dof * g.sigma * g.sigma;
    dof += g.dof;
  }
  NoiseEstimate e;
  if (dof <= 0) return e;
  e.sigma = std::sqrt(ss / dof);
  e.dof = std::min(prior_dof, dof);
  return e;
}

NoiseEstimate ModeratedNoise(const NoiseEstimate& own,
                             const NoiseEstimate& pooled) {
  // The pool tops the group's own dof up to the pool's: families differ
  // in noise, so a pool is biased for any one of them, and past ~10 dof a
  // t test gains little from more.
  NoiseEstimate p = pooled;
  p.dof = std::max(0.0, pooled.dof - own.dof);
  NoiseEstimate e;
  e.dof = own.dof + p.dof;
  if (e.dof <= 0) return e;
  e.sigma = std::sqrt(
      (own.dof * own.sigma * own.sigma + p.dof * p.sigma * p.sigma) / e.dof);
  return e;
}

LatestNightTest TestLatestNights(const std::vector<double>& x,
                                 int baseline_begin, const NoiseEstimate& noise,
                                 bool higher_is_worse,
                                 const LatestNightOptions& options) {
  LatestNightTest out;
  const int n = static_cast<int>(x.size());
  out.onset = n;
  out.noise = noise;
  if (noise.dof <= 0) return out;  // nothing to measure a move against
  const double sign = higher_is_worse ? 1.0 : -1.0;
  // The longest tail of latest nights that are each beyond the band.
  for (int k = 1; k <= options.max_tail; ++k) {
    const int onset = n - k;
    if (onset - baseline_begin < std::max(1, options.min_baseline)) break;
    const Moments base = MomentsOf(x, baseline_begin, onset);
    if (!(base.mean > 0)) break;
    const double se_run = noise.sigma * std::sqrt(1.0 + 1.0 / base.n);
    bool all = true;
    double lo = x[onset], hi = x[onset];
    for (int i = onset; i < n && all; ++i) {
      const double dev = sign * (x[i] / base.mean - 1);
      all = dev >= options.min_magnitude &&
            UpperP(dev, se_run, noise.dof) <= options.band_pvalue;
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    all = all && (hi - lo) / base.mean <=
                     options.tail_range_sd * noise.sigma * std::sqrt(2.0);
    if (!all) break;
    out.tail = k;
    out.onset = onset;
  }
  if (out.tail == 0) return out;
  const Moments base = MomentsOf(x, baseline_begin, out.onset);
  const Moments tail = MomentsOf(x, out.onset, n);
  ChangePoint& c = out.change;
  c.index = out.onset;
  c.mean_before = base.mean;
  c.sd_before = std::sqrt(base.var);
  c.runs_before = base.n;
  c.mean_after = tail.mean;
  c.sd_after = std::sqrt(tail.var);
  c.runs_after = tail.n;
  c.magnitude = tail.mean / base.mean - 1;
  // Under "no change" the tail's mean and the baseline's differ by noise
  // alone: relative standard error sigma sqrt(1/k + 1/m). The interval
  // scales it by the tail's level (the noise is relative), a delta-method
  // interval of the ratio.
  const double shape = std::sqrt(1.0 / tail.n + 1.0 / base.n);
  const double se0 = noise.sigma * shape;
  const double dev = sign * c.magnitude;
  c.pvalue = UpperP(dev, se0, noise.dof);
  if (out.tail >= 2) {
    const Moments b2 = MomentsOf(x, baseline_begin, n - 2);
    const Moments t2 = MomentsOf(x, n - 2, n);
    out.pvalue_confirm =
        UpperP(sign * (t2.mean / b2.mean - 1),
               options.two_night_margin * noise.sigma *
                   std::sqrt(0.5 + 1.0 / b2.n),
               noise.dof);
  }
  out.pvalue_wide = UpperP(dev, se0 * options.one_night_margin, noise.dof);
  const double half = StudentTQuantileUpper(0.025, noise.dof) * se0 *
                      (1 + c.magnitude);
  c.magnitude_low = c.magnitude - half;
  c.magnitude_high = c.magnitude + half;
  return out;
}

std::vector<std::vector<double>> SyntheticStore(const SyntheticStoreSpec& spec,
                                                uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<std::vector<double>> out;
  const int groups =
      spec.bases.empty() ? spec.groups : static_cast<int>(spec.bases.size());
  for (int g = 0; g < groups; ++g) {
    // 2^-53 steps: a uniform factor in [0, 1), the same everywhere.
    const double u = static_cast<double>(gen() >> 11) / 9007199254740992.0;
    SyntheticSeriesSpec s;
    s.runs = spec.runs;
    // ns: families of different sizes
    s.base = spec.bases.empty() ? 1000.0 * (g + 1) : spec.bases[g];
    s.noise = g == 0 ? spec.noise : spec.noise * (0.5 + u);
    if (g == 0) {
      s.step_at = spec.step_at;
      s.step = spec.step;
      s.spike_at = spec.spike_at;
      s.spike = spec.spike;
    }
    out.push_back(SyntheticSeries(s, seed * 1009 + static_cast<uint64_t>(g)));
  }
  return out;
}

}  // namespace rooftrace::stats
