"""scripts/overhead_stats.py on generated samples whose answer is known.

Run from the source tree: python3 -m unittest overhead_stats_test
(ROOFTRACE_SOURCE_DIR names the tree).
"""
import os
import random
import sys
import unittest

SRC = os.environ.get(
    "ROOFTRACE_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
sys.path.insert(0, os.path.join(SRC, "scripts"))

import overhead_stats as st  # noqa: E402


def noisy(base, spread, n, seed):
    rng = random.Random(seed)
    return [base * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


class VerdictTest(unittest.TestCase):
    # The three outcomes at the edges of a 2% bound.
    def test_interval_within_the_bound_and_narrow_passes(self):
        self.assertEqual(st.verdict(1.000, 1.015, 1.02, 0.02), st.PASS)
        self.assertEqual(st.verdict(1.000, 1.020, 1.02, 0.02), st.PASS)

    def test_interval_above_the_bound_fails(self):
        self.assertEqual(st.verdict(1.021, 1.030, 1.02, 0.02), st.FAIL)

    def test_straddling_interval_cannot_judge(self):
        self.assertEqual(st.verdict(1.010, 1.030, 1.02, 0.02), st.CANNOT_JUDGE)

    # Below the bound but wider than the 2% margin: the VM's noise is
    # larger than the effect, and a lucky interval must not pass.
    def test_interval_wider_than_the_margin_cannot_judge(self):
        self.assertEqual(st.verdict(0.950, 1.010, 1.02, 0.02), st.CANNOT_JUDGE)

    def test_reversed_interval_is_refused(self):
        with self.assertRaises(ValueError):
            st.verdict(1.1, 1.0, 1.02, 0.02)


class RatioSummaryTest(unittest.TestCase):
    # Every traced round 10% slower than its bare round: 1.10 exactly, FAIL.
    def test_constant_ten_percent_slowdown_fails(self):
        bare = noisy(400.0, 0.2, 12, seed=1)
        traced = [b * 1.10 for b in bare]
        s = st.ratio_summary(bare, traced, 1.02)
        self.assertAlmostEqual(s["ratio"], 1.10)
        self.assertAlmostEqual(s["low"], 1.10)
        self.assertAlmostEqual(s["high"], 1.10)
        self.assertEqual(s["verdict"], st.FAIL)
        self.assertEqual(s["rounds"], 12)

    # 0.5% overhead with 0.2% noise per round: resolved, within 2%.
    def test_small_overhead_with_small_noise_passes(self):
        bare = noisy(400.0, 0.3, 15, seed=2)
        rng = random.Random(3)
        traced = [b * 1.005 * (1 + rng.uniform(-0.002, 0.002)) for b in bare]
        s = st.ratio_summary(bare, traced, 1.02)
        self.assertLess(s["low"], 1.005 + 0.002)
        self.assertGreater(s["high"], 1.005 - 0.002)
        self.assertLessEqual(s["high"], 1.02)
        self.assertEqual(s["verdict"], st.PASS)

    # Run 5 of the H100 runs: a bare process ranged from 546 to 1,061 ms.
    # Rounds that noisy cannot judge a 2% bound, whatever the median says.
    def test_vm_noise_larger_than_the_effect_cannot_judge(self):
        rng = random.Random(4)
        bare = [rng.uniform(546, 1061) for _ in range(10)]
        traced = [rng.uniform(546, 1061) for _ in range(10)]
        s = st.ratio_summary(bare, traced, 1.02)
        self.assertEqual(s["verdict"], st.CANNOT_JUDGE)
        self.assertGreater(s["high"] - s["low"], 0.02)

    # The machine slows down steadily through the run (a drifting VM);
    # alternation pairs each traced sample with its neighbour, so a 1%
    # overhead is still measured as 1%.
    def test_pairing_cancels_a_drift_common_to_both(self):
        bare = [300.0 + 20 * i for i in range(12)]
        traced = [b * 1.01 for b in bare]
        s = st.ratio_summary(bare, traced, 1.02)
        self.assertAlmostEqual(s["ratio"], 1.01)
        self.assertEqual(s["verdict"], st.PASS)

    def test_same_samples_give_the_same_interval(self):
        bare = noisy(100.0, 0.05, 10, seed=5)
        traced = noisy(101.0, 0.05, 10, seed=6)
        a = st.ratio_summary(bare, traced, 1.02)
        b = st.ratio_summary(bare, traced, 1.02)
        self.assertEqual((a["low"], a["high"]), (b["low"], b["high"]))
        self.assertLessEqual(a["low"], a["ratio"])
        self.assertLessEqual(a["ratio"], a["high"])

    # The printed line carries every figure.
    def test_format_prints_every_figure(self):
        s = st.ratio_summary([100.0, 100.0, 100.0], [110.0, 110.0, 110.0], 1.02)
        line = st.format_ratio("batch 32 wall", s)
        for part in ("batch 32 wall", "bare median 100", "traced median 110",
                     "+10.00%", "3 alternated rounds", "bound +2.00%"):
            self.assertIn(part, line)


    # "No slower than torch.profiler": a bound of 1.0 is resolved to the
    # margin given, not to 0.
    def test_bound_of_one_uses_the_margin_given(self):
        other = noisy(500.0, 0.2, 10, seed=8)
        ours = [o * 0.97 for o in other]
        s = st.ratio_summary(other, ours, 1.0, margin=0.02)
        self.assertAlmostEqual(s["ratio"], 0.97)
        self.assertEqual(s["verdict"], st.PASS)
        # Slower than the other by 1%: above the bound of 1.0.
        slower = st.ratio_summary(other, [o * 1.01 for o in other], 1.0,
                                  margin=0.02)
        self.assertEqual(slower["verdict"], st.FAIL)


class DifferenceSummaryTest(unittest.TestCase):
    # µs per launch: 2.0 bare, 2.6 traced in every round: +0.6 µs, within
    # a 1 µs bound.
    def test_added_cost_per_launch(self):
        bare = noisy(2.0, 0.01, 10, seed=7)
        traced = [b + 0.6 for b in bare]
        s = st.difference_summary(bare, traced, bound=1.0)
        self.assertAlmostEqual(s["added"], 0.6)
        self.assertAlmostEqual(s["low"], 0.6)
        self.assertAlmostEqual(s["high"], 0.6)
        self.assertEqual(s["verdict"], st.PASS)
        self.assertIsNone(st.difference_summary(bare, traced)["verdict"])


class BadInputTest(unittest.TestCase):
    def test_bad_samples_are_refused_with_a_reason(self):
        with self.assertRaisesRegex(ValueError, "pair one of each"):
            st.ratio_summary([1.0, 2.0], [1.0], 1.02)
        with self.assertRaisesRegex(ValueError, "at least 2 rounds"):
            st.ratio_summary([1.0], [1.0], 1.02)
        with self.assertRaisesRegex(ValueError, "0 or negative"):
            st.ratio_summary([0.0, 1.0], [1.0, 1.0], 1.02)
        with self.assertRaisesRegex(ValueError, "no samples"):
            st.difference_summary([], [])


if __name__ == "__main__":
    unittest.main()
