// changepoint_bench: the detection figures of `history`'s statistics
// (analyzer/changepoint.h) on generated, seeded series, printed; never a
// timed test. The tests (tests/analyzer/changepoint_test.cc) assert the
// acceptance on fewer seeds; this prints the figures docs/history.md quotes
// and the ones that justify the method's choices:
//  - a 5 % step at run 45 of 60 placed within +-1 run, for 3 % noise read
//    as uniform +-3 % and as Gaussian sd 3 %, against least squares (the
//    maximum-likelihood split for Gaussian noise: the best any split can do);
//  - false alarms per noise-only series, with the position correction and
//    without it (max_pvalue scaled by the 51 positions of a 60-run series);
//  - 200-group gates on noise failing, with Benjamini-Hochberg at 0.05;
//  - a 0.3 %/night drift over 30 nights: nights from passing 5 % to the
//    first night a gate (window 5) reports it;
//  - CPU time of one gate over 1,000 runs x 200 groups.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

#include "analyzer/changepoint.h"

namespace st = rooftrace::stats;

namespace {

double CpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

// The least-squares split of x (min 5 runs a side).
int LeastSquaresSplit(const std::vector<double>& x) {
  const int n = static_cast<int>(x.size());
  double total = 0, left = 0, best = -1;
  for (double v : x) total += v;
  int at = 0;
  for (int t = 1; t < n; ++t) {
    left += x[t - 1];
    if (t < 5 || t > n - 5) continue;
    const double d = left / t - (total - left) / (n - t);
    const double s = static_cast<double>(t) * (n - t) / n * d * d;
    if (s > best) {
      best = s;
      at = t;
    }
  }
  return at;
}

void StepPlacement(st::SyntheticSeriesSpec::Noise kind, const char* name) {
  st::SyntheticSeriesSpec spec;
  spec.noise_kind = kind;
  spec.step_at = 45;
  spec.step = 0.05;
  const int seeds = 5000;
  int ours = 0, anywhere = 0, ls = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto x = st::SyntheticSeries(spec, seed);
    const auto cps = st::DetectChangePoints(x, {});
    anywhere += !cps.empty();
    for (const auto& cp : cps) {
      if (std::abs(cp.index - 45) <= 1 && cp.magnitude > 0) {
        ++ours;
        break;
      }
    }
    ls += std::abs(LeastSquaresSplit(x) - 45) <= 1;
  }
  std::printf(
      "5%% step at run 45 of 60, %s noise, %d seeds: found at 45+-1 %.1f%% "
      "(least squares %.1f%%), a change point anywhere %.1f%%\n",
      name, seeds, 100.0 * ours / seeds, 100.0 * ls / seeds,
      100.0 * anywhere / seeds);
}

void FalseAlarms(st::SyntheticSeriesSpec::Noise kind, const char* name) {
  st::SyntheticSeriesSpec spec;
  spec.noise_kind = kind;
  const int series = 20000;
  st::ChangePointOptions uncorrected;
  uncorrected.max_pvalue *= 51;  // 60 - 2 * 5 + 1 positions at the top
  int alarms = 0, raw = 0;
  for (int seed = 1; seed <= series; ++seed) {
    const auto x = st::SyntheticSeries(spec, 100000 + seed);
    alarms += !st::DetectChangePoints(x, {}).empty();
    raw += !st::DetectChangePoints(x, uncorrected).empty();
  }
  std::printf(
      "noise only, %s, %d series of 60: false alarms %.2f%% per series "
      "(without the position correction %.1f%%)\n",
      name, series, 100.0 * alarms / series, 100.0 * raw / series);
}

void Gates() {
  const int gates = 1000, groups = 200, window = 5;
  int failed = 0;
  for (int gate = 0; gate < gates; ++gate) {
    std::vector<double> p;
    for (int g = 0; g < groups; ++g) {
      const auto x = st::SyntheticSeries(
          {}, 1000000 + static_cast<uint64_t>(gate) * groups + g);
      p.push_back(st::RegressionPValue(st::DetectChangePoints(x, {}), 60,
                                       window));
    }
    for (bool r : st::BenjaminiHochberg(p, 0.05)) {
      if (r) {
        ++failed;
        break;
      }
    }
  }
  std::printf(
      "gates of 200 noise-only groups (Gaussian sd 3%%, window 5, "
      "Benjamini-Hochberg q=0.05), %d gates: %.2f%% failed\n",
      gates, 100.0 * failed / gates);
}

void Drift() {
  // 30 flat nights, then 0.3 % per night for 30 nights; 5 % is passed on
  // the night the level first reaches 1.05.
  st::SyntheticSeriesSpec spec;
  spec.drift_from = 30;
  spec.drift_per_run = 0.003;
  int passed_at = 30;
  while (std::pow(1.003, passed_at - 30 + 1) < 1.05) ++passed_at;
  const int seeds = 1000;
  // Reported: by a gate (a rising change point touching the latest 5
  // runs), or in the history at all (a rising change point after run 30,
  // wherever it is placed: a drift has no one night to point at).
  int gate10 = 0, shown10 = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto full = st::SyntheticSeries(spec, 7000 + seed);
    int gate = -1, shown = -1;
    for (int night = 31; night <= 60 && (gate < 0 || shown < 0); ++night) {
      const std::vector<double> x(full.begin(), full.begin() + night);
      const auto cps = st::DetectChangePoints(x, {});
      if (gate < 0 && st::RegressionPValue(cps, night, 5) <= 0.01) {
        gate = night - 1;  // the index of that night's run
      }
      for (const auto& cp : cps) {
        if (shown < 0 && cp.index > 30 && cp.magnitude > 0) shown = night - 1;
      }
    }
    gate10 += gate >= 0 && gate - passed_at <= 10;
    shown10 += shown >= 0 && shown - passed_at <= 10;
  }
  std::printf(
      "0.3%%/night drift from run 30 (passes 5%% at run %d), Gaussian sd "
      "3%%, %d seeds: within 10 nights of passing 5%%, a rising change "
      "point in the history %.1f%%, a gate (window 5) failing %.1f%%\n",
      passed_at, seeds, 100.0 * shown10 / seeds, 100.0 * gate10 / seeds);
}

void Speed() {
  const int groups = 200, runs = 1000;
  std::vector<std::vector<double>> series;
  for (int g = 0; g < groups; ++g) {
    st::SyntheticSeriesSpec spec;
    spec.runs = runs;
    series.push_back(st::SyntheticSeries(spec, 42 + g));
  }
  const double t0 = CpuSeconds();
  size_t found = 0;
  for (const auto& x : series) found += st::DetectChangePoints(x, {}).size();
  std::printf(
      "one gate over %d runs x %d groups: %.3f s CPU (%zu change points)\n",
      runs, groups, CpuSeconds() - t0, found);
}

}  // namespace

int main() {
  StepPlacement(st::SyntheticSeriesSpec::Noise::kUniform, "uniform +-3%");
  StepPlacement(st::SyntheticSeriesSpec::Noise::kGaussian, "Gaussian sd 3%");
  FalseAlarms(st::SyntheticSeriesSpec::Noise::kGaussian, "Gaussian sd 3%");
  FalseAlarms(st::SyntheticSeriesSpec::Noise::kUniform, "uniform +-3%");
  Gates();
  Drift();
  Speed();
  return 0;
}
