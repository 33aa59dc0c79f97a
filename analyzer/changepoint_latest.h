// The latest-night test of `rooftrace history` (docs/history.md, "The
// latest nights"): tonight's run, and the few before it that moved with
// it, against the group's stable baseline (the runs since its last
// accepted change point), with the noise taken from the group's own
// run-to-run spread and, for short histories, pooled with the other
// groups of the same runs. E-Divisive (changepoint.h) needs five runs on
// each side of a split; this test answers on the night a step lands, and
// from three runs on.
//
// Pure functions of their arguments (the statistics module's rule,
// STYLE.md); thread-safe. The trap, as with change points: a p-value here
// is for one group; a gate over many must go through BenjaminiHochberg.
#ifndef ROOFTRACE_ANALYZER_CHANGEPOINT_LATEST_H_
#define ROOFTRACE_ANALYZER_CHANGEPOINT_LATEST_H_

#include <cstdint>
#include <vector>

#include "analyzer/changepoint.h"

namespace rooftrace::stats {

// A relative noise level (standard deviation over the level, 0.02: 2 %)
// and the degrees of freedom it is worth as a sample variance.
struct NoiseEstimate {
  double sigma = 0;
  double dof = 0;
};

// The run-to-run noise of x[0, end), from the relative successive
// differences (they ignore the level: a change point costs one): their
// median gives a robust scale, those within 3.5 of it (not a spike's or a
// step's) their root mean square over sqrt(2); worth 2/3 dof per
// difference kept (the von Neumann ratio's efficiency). {0, 0} under 2
// runs.
NoiseEstimate RunToRunNoise(const std::vector<double>& x, int end);

// The noise pooled across the groups of the same runs: the dof-weighted
// mean of their variances (unbiased; a median of few-dof estimates reads
// low), worth `prior_dof` degrees of freedom at most and never more than
// the groups' own together. {0, 0} when no group has an estimate.
NoiseEstimate PooledNoise(const std::vector<NoiseEstimate>& groups,
                          double prior_dof);

// A group's own estimate moderated by the pooled one (Smyth 2004, the
// moderated t of limma, with a fixed prior): the pool tops the group's
// own dof up to the pool's dof, the variances weighted by their dof. A
// short history leans on the pool, one of 10 dof or more on itself
// (families differ in noise: a pool is biased for any one of them).
NoiseEstimate ModeratedNoise(const NoiseEstimate& own,
                             const NoiseEstimate& pooled);

struct LatestNightOptions {
  // A night is beyond the noise band when its one-sided p-value against
  // the baseline is at most this (0.10: above the upper 80 % bound) and it
  // moved by at least min_magnitude the worse way. Loose on purpose: the
  // band only forms a tail; the tail's mean is what is judged, across the
  // groups.
  double band_pvalue = 0.10;
  // The nights of a tail must sit at one level: their range at most this
  // many standard deviations of a difference of two runs (3: 0.3 % of
  // two-night tails of a real step split). A one-night spike followed by
  // a normal night is two levels, not a tail.
  double tail_range_sd = 3.0;
  double min_magnitude = 0.02;
  // The most recent runs that may form the tail (one step's first nights;
  // past min_segment runs E-Divisive places it).
  int max_tail = 4;
  // Runs the baseline needs.
  int min_baseline = 2;
  // One night is regressed at once only when it is still significant with
  // the noise this many times wider: a single night's p-value leans on the
  // tail of the noise distribution, heavier in nightly timings than a
  // Gaussian's, and on a noise estimate that may be low.
  double one_night_margin = 1.5;
  // Two nights lean on the tail less (their mean), but a mean of two is
  // no average of many: the noise is widened by this for the confirmation.
  // Without it a store of 10 noise-only groups failed 3.3 % of nights (the
  // nominal Benjamini-Hochberg bound is 5 %), with it under 2 %.
  double two_night_margin = 1.15;
};

// The test of the latest runs of one series.
struct LatestNightTest {
  // The tail: the latest runs, each beyond the noise band the worse way
  // (0: tonight is not). It starts at run `onset` (index into the series).
  int tail = 0;
  int onset = 0;
  // The tail against the baseline [baseline_begin, onset), in a change
  // point's terms (index: onset; before: the baseline, after: the tail;
  // sd 0 for one run; magnitude and its 95 % interval). Its pvalue: one
  // sided, that the tail's mean is worse than the baseline's (Student's t
  // on the moderated noise); 1 without a tail.
  ChangePoint change;
  // With a tail of 2 or more: the p-value of the latest two nights' mean
  // against the runs before them, what a tail must pass to be regressed
  // (the next night confirms). Always the latest two, whatever the tail's
  // length, so that no length is chosen for its p-value (the band only
  // decides whether there is a tail: it can only remove rejections, and
  // the p-value stays valid).
  double pvalue_confirm = 1;
  // The same with the noise widened by one_night_margin: what a one-night
  // tail must pass to be regressed at once.
  double pvalue_wide = 1;
  NoiseEstimate noise;  // the moderated noise used
};

// Tests the latest runs of `x` against the baseline that starts at
// `baseline_begin` (the last accepted change point, or 0), with the noise
// `noise` (ModeratedNoise; sigma 0 makes every move significant). The
// tail is the longest run of latest nights, up to max_tail, that are all
// beyond the band against the runs before them, leaving min_baseline
// runs. `higher_is_worse`: time per launch; false for % of roof, tokens/s.
LatestNightTest TestLatestNights(const std::vector<double>& x,
                                 int baseline_begin, const NoiseEstimate& noise,
                                 bool higher_is_worse,
                                 const LatestNightOptions& options);

// A generated store whose answer is known (the latest-night figures of
// docs/history.md): `groups` series of `runs` nights, each group with its
// own Gaussian noise: group 0 (the one that may move) exactly `noise`, the
// others `noise` x a factor in [0.5, 1.5] drawn per group (families
// differ); group 0 may step by `step` from night `step_at` on
// and spike by `spike` on night `spike_at` (-1: none). Deterministic per
// seed (SyntheticSeries). `bases`, when given, are the groups' times per
// launch (ns; a real run's families, largest first: group 0 is the one that
// moves) and their count replaces `groups`; else group g is 1000 x (g + 1).
struct SyntheticStoreSpec {
  int groups = 10;
  std::vector<double> bases;
  int runs = 40;
  double noise = 0.02;
  int step_at = -1;
  double step = 0;
  int spike_at = -1;
  double spike = 0;
};
std::vector<std::vector<double>> SyntheticStore(const SyntheticStoreSpec& spec,
                                                uint64_t seed);

// Student's t: one-sided P(T >= t), any t, `df` > 0.
double StudentTUpper(double t, double df);
// The t with StudentTUpper(t, df) = p (0 < p < 1).
double StudentTQuantileUpper(double p, double df);

}  // namespace rooftrace::stats

#endif  // ROOFTRACE_ANALYZER_CHANGEPOINT_LATEST_H_
