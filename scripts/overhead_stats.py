"""Overhead statistics for alternated bare / traced measurements (issue 26).

Pure functions, standard library only, seeded: the same samples give the
same interval on every machine. Used by scripts/gpu-check.sh (the trace
stage's overhead line) and scripts/launch_overhead.py (the launch
microbenchmark's table); tested by tests/scripts/overhead_stats_test.py.

Method. Measurements are taken in alternation (bare, traced, bare, traced,
...), so neighbours share the machine's state of the moment; each traced
sample is paired with the bare sample of its round, and the overhead is
the median of the per-round ratios traced / bare (or differences, for
figures in absolute units such as µs per launch). The 95% interval is a
percentile bootstrap over rounds: resample the rounds with replacement,
take the median again, 2,000 times (Efron and Tibshirani, "An Introduction
to the Bootstrap", 1993, ch. 13). A VM whose noise is larger than the
effect gives a wide interval, and the verdict then says so instead of
passing on a lucky median.

Verdict against a bound (e.g. 1.02 for "at most 2% slower"):
  PASS          the interval's upper end is within the bound, and the
                interval is no wider than the margin the bound allows
                (bound - 1 for a ratio): the measurement resolves the bound
  FAIL          the interval's lower end is above the bound
  CANNOT JUDGE  anything else: the interval straddles the bound, or is
                wider than the margin (too noisy to tell 2% from 0)
"""
import random
import statistics

PASS = "PASS"
FAIL = "FAIL"
CANNOT_JUDGE = "CANNOT JUDGE"

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 26


def median(values):
    """The median of a non-empty sequence."""
    if not values:
        raise ValueError("median of no values")
    return statistics.median(values)


def paired_ratios(bare, traced):
    """Per-round ratios traced / bare; both lists in round order."""
    _check_pairs(bare, traced)
    if any(b <= 0 for b in bare):
        raise ValueError("a bare sample is 0 or negative: no ratio to take")
    return [t / b for b, t in zip(bare, traced)]


def paired_differences(bare, traced):
    """Per-round differences traced - bare; both lists in round order."""
    _check_pairs(bare, traced)
    return [t - b for b, t in zip(bare, traced)]


def bootstrap_median_interval(values, level=0.95,
                              resamples=DEFAULT_RESAMPLES, seed=DEFAULT_SEED):
    """(low, high): percentile bootstrap interval of the median of values."""
    if len(values) < 2:
        raise ValueError("a bootstrap interval needs at least 2 rounds, got "
                         f"{len(values)}")
    if not 0 < level < 1:
        raise ValueError(f"level {level} is not between 0 and 1")
    rng = random.Random(seed)
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n))
                  for _ in range(resamples))
    tail = (1 - level) / 2
    low = meds[int(tail * (resamples - 1))]
    high = meds[int(round((1 - tail) * (resamples - 1)))]
    return low, high


def verdict(low, high, bound, margin):
    """PASS, FAIL or CANNOT JUDGE for an interval against an upper bound.

    margin: how wide an interval may be and still resolve the bound
    (bound - 1 for a ratio bound, the bound itself for an added cost).
    """
    if low > high:
        raise ValueError(f"interval [{low}, {high}] is reversed")
    if low > bound:
        return FAIL
    # A relative tolerance for the rounding of figures like 1.02 - 1.00.
    if high <= bound and high - low <= margin * (1 + 1e-9):
        return PASS
    return CANNOT_JUDGE


def ratio_summary(bare, traced, bound, level=0.95,
                  resamples=DEFAULT_RESAMPLES, seed=DEFAULT_SEED, margin=None):
    """The overhead of traced over bare as a ratio, against `bound`.

    margin: the widest interval that resolves the bound (default bound - 1;
    give one for a bound of 1.0, "no slower than the other").
    Returns a dict: rounds, bare_median, traced_median, ratio (median of
    the per-round ratios), low, high (its interval), bound, verdict.
    """
    ratios = paired_ratios(bare, traced)
    low, high = bootstrap_median_interval(ratios, level, resamples, seed)
    if margin is None:
        margin = bound - 1
    return {
        "rounds": len(ratios),
        "bare_median": median(bare),
        "traced_median": median(traced),
        "ratio": median(ratios),
        "low": low,
        "high": high,
        "bound": bound,
        "verdict": verdict(low, high, bound, margin),
    }


def difference_summary(bare, traced, bound=None, level=0.95,
                       resamples=DEFAULT_RESAMPLES, seed=DEFAULT_SEED):
    """The cost traced adds over bare in absolute units (e.g. µs per
    launch): median of the per-round differences and its interval; a
    verdict when `bound` (the most it may add) is given, else None."""
    diffs = paired_differences(bare, traced)
    low, high = bootstrap_median_interval(diffs, level, resamples, seed)
    return {
        "rounds": len(diffs),
        "bare_median": median(bare),
        "traced_median": median(traced),
        "added": median(diffs),
        "low": low,
        "high": high,
        "bound": bound,
        "verdict": None if bound is None else verdict(low, high, bound, bound),
    }


def format_ratio(name, s, bare="bare", traced="traced"):
    """One line: every figure of a ratio_summary (its verdict is the
    caller's to print)."""
    pct = lambda r: 100 * (r - 1)  # noqa: E731
    return (f"{name}: {bare} median {s['bare_median']:.4g}, {traced} median "
            f"{s['traced_median']:.4g}, overhead {pct(s['ratio']):+.2f}% "
            f"(95% interval {pct(s['low']):+.2f}% .. {pct(s['high']):+.2f}%, "
            f"{s['rounds']} alternated rounds; bound {pct(s['bound']):+.2f}%)")


def _check_pairs(bare, traced):
    if len(bare) != len(traced):
        raise ValueError(f"{len(bare)} bare and {len(traced)} traced samples: "
                         "alternated rounds pair one of each")
    if not bare:
        raise ValueError("no samples")
