"""The checks of scripts/gpu_check_lib.py: none passes without evidence.

Run from the source tree: python3 -m unittest gpu_check_lib_test
(ROOFTRACE_SOURCE_DIR names the tree).
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get(
    "ROOFTRACE_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import gpu_check_lib as g  # noqa: E402

K = g.Kernel


def counted_kernel(launches, time_ns, flops, dram, demangled=None):
    """`launches` launches, every one counted, with these per-launch figures."""
    return K(demangled, launches, time_ns, flops * launches, launches,
             dram * launches, launches)


class CompareWithNcuTest(unittest.TestCase):
    # A GEMM (90% of the time) and a copy (10%, no FLOPs) that agree: pass,
    # and every figure is printed.
    def test_agreeing_kernels_pass_with_their_figures(self):
        ours = {"gemm": counted_kernel(4, 900, 1e9, 1e6),
                "copy": counted_kernel(2, 100, 0, 2e6)}
        theirs = {"gemm": counted_kernel(4, 0, 1e9, 1.01e6),
                  "copy": counted_kernel(2, 0, 0, 2e6)}
        ok, lines = g.compare_with_ncu(ours, theirs, 1, 3, 0.95)
        self.assertTrue(ok, lines)
        text = "\n".join(lines)
        self.assertIn("gemm: 90.0% of GPU time", text)
        self.assertIn("DRAM bytes 1e+06 vs ncu 1.01e+06 (0.99%", text)
        self.assertIn("compared 2 kernel names holding 100.0%", text)

    # Run 6's flaw: a memory-bound kernel holding most of the time and no
    # FLOPs was left out of the comparison; now its DRAM bytes are compared
    # and a 5% difference fails.
    def test_memory_bound_kernel_is_compared_on_bytes(self):
        ours = {"gemm": counted_kernel(1, 300, 1e9, 1e6),
                "elementwise": counted_kernel(10, 700, 0, 1e6)}
        theirs = {"gemm": counted_kernel(1, 0, 1e9, 1e6),
                  "elementwise": counted_kernel(10, 0, 0, 1.05e6)}
        ok, lines = g.compare_with_ncu(ours, theirs, 1, 3, 0.95)
        self.assertFalse(ok)
        self.assertTrue(any(l.startswith("BAD elementwise") for l in lines), lines)

    # A kernel holding time but whose DRAM bytes were never counted (trace
    # mode's figures only) fails instead of being skipped.
    def test_kernel_without_counted_bytes_fails(self):
        ours = {"gemm": K(None, 4, 900, 0, 0, 0, 0),
                "copy": counted_kernel(2, 100, 0, 2e6)}
        theirs = {"gemm": counted_kernel(4, 0, 1e9, 1e6),
                  "copy": counted_kernel(2, 0, 0, 2e6)}
        ok, lines = g.compare_with_ncu(ours, theirs, 1, 3, 0.95)
        self.assertFalse(ok)
        self.assertIn("DRAM bytes counted for 0 of 4 launches", "\n".join(lines))

    def test_kernel_missing_from_ncu_fails(self):
        ours = {"gemm": counted_kernel(4, 900, 1e9, 1e6)}
        theirs = {"other": counted_kernel(4, 0, 1e9, 1e6)}
        ok, lines = g.compare_with_ncu(ours, theirs, 1, 3, 0.95)
        self.assertFalse(ok)
        self.assertIn("not in the ncu import", lines[0])

    def test_flops_beyond_tolerance_fail(self):
        ours = {"gemm": counted_kernel(4, 900, 1e9, 1e6)}
        theirs = {"gemm": counted_kernel(4, 0, 1.02e9, 1e6)}
        ok, _ = g.compare_with_ncu(ours, theirs, 1, 3, 0.95)
        self.assertFalse(ok)

    # Nothing to compare is a failure, not a vacuous pass.
    def test_nothing_to_compare_fails(self):
        for ours, theirs in (({}, {"a": counted_kernel(1, 0, 1, 1)}),
                             ({"a": counted_kernel(1, 10, 1, 1)}, {}),
                             ({"a": counted_kernel(1, 0, 1, 1)},
                              {"a": counted_kernel(1, 0, 1, 1)})):
            ok, lines = g.compare_with_ncu(ours, theirs, 1, 3, 0.95)
            self.assertFalse(ok)
            self.assertIn("nothing to compare", lines[0])

    # The kernels compared hold at least the share asked for: with many
    # small kernels every one up to 95% is compared, matched by demangled
    # name when the mangled names differ.
    def test_covers_the_share_and_matches_demangled_names(self):
        ours = {f"k{i}": counted_kernel(1, 10, 0, 100, demangled=f"d{i}")
                for i in range(100)}
        theirs = {f"other{i}": counted_kernel(1, 0, 0, 100, demangled=f"d{i}")
                  for i in range(100)}
        ok, lines = g.compare_with_ncu(ours, theirs, 1, 3, 0.95)
        self.assertTrue(ok, lines)
        self.assertIn("compared 95 kernel names holding 95.0%", lines[-1])


class CountersRunTest(unittest.TestCase):
    def stats(self, **override):
        s = {name: 0 for name in g.NOTHING_LOST}
        s.update(override)
        return s

    def test_complete_run_passes_and_prints_every_figure(self):
        ok, lines = g.check_counters_run(self.stats(), 100, 0, 1000, 995, 400, 0.99)
        self.assertTrue(ok, lines)
        text = "\n".join(lines)
        for name in g.NOTHING_LOST:
            self.assertIn(f"{name} = 0", text)
        self.assertIn("DRAM bytes from counters (measured or sampled): 99.50%", text)
        self.assertIn("FLOPs from counters: 40.00%", text)

    # Run 7 on the H100: 407 kernel records dropped.
    def test_dropped_records_fail(self):
        ok, _ = g.check_counters_run(self.stats(producer_cupti_dropped=407),
                                     100, 0, 1000, 1000, 0, 0.99)
        self.assertFalse(ok)

    def test_unmatched_counters_fail(self):
        ok, _ = g.check_counters_run(self.stats(unmatched_counters=3),
                                     100, 0, 1000, 1000, 0, 0.99)
        self.assertFalse(ok)

    def test_zero_duration_kernels_fail(self):
        ok, lines = g.check_counters_run(self.stats(), 100, 2, 1000, 1000, 0, 0.99)
        self.assertFalse(ok)
        self.assertIn("zero duration: 2 of 100", "\n".join(lines))

    # A store without the statistic is not a store where it is 0.
    def test_missing_statistic_fails(self):
        s = self.stats()
        del s["unmatched_counters"]
        ok, lines = g.check_counters_run(s, 100, 0, 1000, 1000, 0, 0.99)
        self.assertFalse(ok)
        self.assertIn("unmatched_counters = missing from the store", "\n".join(lines))

    def test_low_counted_share_and_empty_run_fail(self):
        ok, _ = g.check_counters_run(self.stats(), 100, 0, 1000, 900, 0, 0.99)
        self.assertFalse(ok)
        ok, _ = g.check_counters_run(self.stats(), 0, 0, 0, 0, 0, 0.99)
        self.assertFalse(ok)


class SlowdownTest(unittest.TestCase):
    def runs(self, *ms):
        return [{"batch": b, "generate_ms": m} for b, m in zip((1, 8, 32), ms)]

    def test_within_the_limit_passes_with_each_ratio(self):
        ok, lines = g.check_slowdown(self.runs(100, 200, 400),
                                     self.runs(140, 250, 500), 1.5)
        self.assertTrue(ok, lines)
        self.assertIn("batch 1: 100.0 ms bare, 140.0 ms profiled: 1.40x", lines[0])

    def test_one_batch_over_the_limit_fails(self):
        ok, _ = g.check_slowdown(self.runs(100, 200, 400),
                                 self.runs(140, 310, 500), 1.5)
        self.assertFalse(ok)

    # No runs, or not the same batches, compare nothing: a failure.
    def test_nothing_comparable_fails(self):
        self.assertFalse(g.check_slowdown([], [], 1.5)[0])
        self.assertFalse(g.check_slowdown(self.runs(100), self.runs(100, 1), 1.5)[0])
        ok, lines = g.check_slowdown([{"batch": 1, "generate_ms": 100}],
                                     [{"batch": 8, "generate_ms": 100}], 1.5)
        self.assertFalse(ok)
        self.assertIn("not comparable", lines[0])


class SamplingRunTest(unittest.TestCase):
    def stats(self, **override):
        s = {name: 0 for name in g.SAMPLING_LOST}
        s.update(pm_samples=5000, producer_pm_samples=5000,
                 pm_samples_exact=4000, pm_samples_split=900,
                 pm_samples_unattributed=100)
        s.update(override)
        return s

    def test_complete_run_passes_and_prints_every_figure(self):
        ok, lines = g.check_sampling_run(self.stats(), 1000, 990, 0.95)
        self.assertTrue(ok, lines)
        text = "\n".join(lines)
        self.assertIn("PM samples received 5000 of 5000 sent", text)
        self.assertIn("exact 4000, split 900, unattributed 100", text)
        self.assertIn("DRAM bytes from PM sampling: 99.00% of 1000 ns", text)

    # Sampling that never started (the fallback to trace mode) leaves no
    # sample and no PM-sampled bytes: it fails, it does not pass empty.
    def test_no_samples_fail(self):
        ok, lines = g.check_sampling_run(
            self.stats(pm_samples=0, producer_pm_samples=0), 1000, 0, 0.95)
        self.assertFalse(ok)
        self.assertIn("BAD PM samples received 0 of 0", "\n".join(lines))

    def test_lost_or_missing_samples_fail(self):
        self.assertFalse(g.check_sampling_run(
            self.stats(producer_pm_samples_lost=3), 1000, 990, 0.95)[0])
        self.assertFalse(g.check_sampling_run(
            self.stats(pm_samples=4990), 1000, 990, 0.95)[0])
        s = self.stats()
        del s["producer_pm_samples"]
        self.assertFalse(g.check_sampling_run(s, 1000, 990, 0.95)[0])
        s = self.stats()
        del s["producer_pm_samples_lost"]
        ok, lines = g.check_sampling_run(s, 1000, 990, 0.95)
        self.assertFalse(ok)
        self.assertIn("producer_pm_samples_lost = missing from the store",
                      "\n".join(lines))

    def test_low_covered_share_fails(self):
        self.assertFalse(g.check_sampling_run(self.stats(), 1000, 900, 0.95)[0])


class SamplingVsCountersTest(unittest.TestCase):
    F = g.Family

    # A 100 us GEMM family within 10% (8% off, 20% of its bytes split) and
    # a 5 us elementwise family 50% off that is not compared (under 20 us).
    def test_long_families_within_the_limit_pass(self):
        sampling = {"gemm": self.F(10, 1_000_000, 10 * 1.08e6, 10, 2.16e6),
                    "elementwise": self.F(100, 500_000, 100 * 1.5e3, 100, 0)}
        counters = {"gemm": self.F(10, 1_000_000, 10 * 1e6, 10, 0),
                    "elementwise": self.F(100, 500_000, 100 * 1e3, 100, 0)}
        ok, lines = g.compare_sampling_with_counters(sampling, counters, 10, 20)
        self.assertTrue(ok, lines)
        text = "\n".join(lines)
        self.assertIn("ok  gemm: 100.0 us per launch", text)
        self.assertIn("attribution error 20.0%", text)
        self.assertIn("7.41% (limit 10", text)
        self.assertNotIn("elementwise", text)
        self.assertIn("compared 1 families", text)

    def test_family_beyond_the_limit_fails(self):
        sampling = {"gemm": self.F(10, 1_000_000, 10 * 1.2e6, 10, 0)}
        counters = {"gemm": self.F(10, 1_000_000, 10 * 1e6, 10, 0)}
        ok, lines = g.compare_sampling_with_counters(sampling, counters, 10, 20)
        self.assertFalse(ok)
        self.assertTrue(lines[0].startswith("BAD gemm"), lines)

    # Evidence missing on either side is a failure: a launch without
    # PM-sampled bytes, a family counters mode did not count, no long
    # family at all.
    def test_missing_evidence_fails(self):
        counters = {"gemm": self.F(10, 1_000_000, 10 * 1e6, 10, 0)}
        partial = {"gemm": self.F(10, 1_000_000, 9 * 1e6, 9, 0)}
        ok, lines = g.compare_sampling_with_counters(partial, counters, 10, 20)
        self.assertFalse(ok)
        self.assertIn("for 9 of 10 launches", lines[0])
        full = {"gemm": self.F(10, 1_000_000, 10 * 1e6, 10, 0)}
        self.assertFalse(g.compare_sampling_with_counters(
            full, {"gemm": self.F(10, 1_000_000, 0, 0, 0)}, 10, 20)[0])
        self.assertFalse(g.compare_sampling_with_counters(full, {}, 10, 20)[0])
        short = {"gemm": self.F(10, 100_000, 10 * 1e6, 10, 0)}
        ok, lines = g.compare_sampling_with_counters(short, counters, 10, 20)
        self.assertFalse(ok)
        self.assertIn("nothing to compare", lines[0])

    def test_pm_sources(self):
        self.assertTrue(g.pm_sampled("pm-sampling (exact)"))
        self.assertFalse(g.pm_sampled("counters"))
        self.assertFalse(g.pm_sampled(None))
        self.assertAlmostEqual(
            g.pm_error("pm-sampling (attributed, error 12.5%)"), 0.125)
        self.assertEqual(g.pm_error("pm-sampling (exact)"), 0.0)

    # The ops route's check: operators received, coverage, and the same
    # figures per (kernel, op, shape) as the import; each missing piece of
    # evidence fails.
    def test_ops_route_against_the_import(self):
        K = g.OpsKernel
        stats = {"ops_received": 500, "kernels_from_ops": 90}
        live = [K("gemm", "aten::mm", "m=1 n=2 k=3", 900, 12, 34),
                K("gemm", "aten::mm", "m=1 n=2 k=3", 900, 12, 34),
                K("copy", "", "", 50, None, None)]
        imported = [K("gemm", "aten::mm", "m=1 n=2 k=3", 950, 12, 34)]
        ok, lines = g.check_ops_route(stats, live, imported, 0.9)
        self.assertTrue(ok, lines)
        self.assertIn("equal figures: 1, different: 0", lines[-1])
        # A figure that differs fails and is named.
        other = [K("gemm", "aten::mm", "m=1 n=2 k=3", 950, 12, 35)]
        ok, lines = g.check_ops_route(stats, live, other, 0.9)
        self.assertFalse(ok)
        self.assertTrue(lines[0].startswith("BAD aten::mm"), lines)
        # Coverage below the bound fails.
        ok, lines = g.check_ops_route(stats, live, imported, 0.99)
        self.assertFalse(ok)
        # No operators, or no statistic, fails.
        self.assertFalse(g.check_ops_route(
            {"ops_received": 0, "kernels_from_ops": 0}, live, imported, 0.9)[0])
        self.assertFalse(g.check_ops_route({}, live, imported, 0.9)[0])
        # Nothing in common to compare fails.
        ok, lines = g.check_ops_route(stats, live, [], 0.9)
        self.assertFalse(ok)
        self.assertIn("nothing to compare", lines[0])

    # The command lines over real stores: families from the kernels' view,
    # exit 1 on a failing figure, 2 on bad arguments.
    def test_command_lines_read_stores(self):
        d = tempfile.mkdtemp(prefix="gpu_check_lib_")

        def store(name, rows, stats):
            path = os.path.join(d, name)
            con = sqlite3.connect(path)
            con.execute("CREATE TABLE kernels (name TEXT, family TEXT, "
                        "duration_ns INTEGER, dram_bytes INTEGER, "
                        "bytes_source TEXT)")
            con.execute("CREATE TABLE import_stats (run_id INTEGER, "
                        "name TEXT, value INTEGER)")
            con.executemany("INSERT INTO kernels VALUES (?,?,?,?,?)", rows)
            con.executemany("INSERT INTO import_stats VALUES (1, ?, ?)",
                            stats.items())
            con.commit()
            return path

        stats = {n: 0 for n in g.SAMPLING_LOST}
        stats.update(pm_samples=10, producer_pm_samples=10)
        sampling = store("s.sqlite", [
            ("k1", "gemm", 50_000, 1000, "pm-sampling (exact)"),
            ("k2", "gemm", 50_000, 1100,
             "pm-sampling (attributed, error 10.0%)"),
            ("e", "elementwise", 1_000, None, "none")], stats)
        counters = store("c.sqlite", [
            ("k1", "gemm", 50_000, 1000, "counters"),
            ("k2", "gemm", 50_000, 1000, "counters (sampled 1 of 2)")], {})
        script = os.path.join(SRC, "scripts", "gpu_check_lib.py")
        p = subprocess.run([sys.executable, script, "sampling_vs_counters",
                            sampling, counters, "10", "20"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("ok  gemm: 50.0 us per launch", p.stdout)
        p = subprocess.run([sys.executable, script, "sampling_vs_counters",
                            sampling, counters, "1", "20"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        p = subprocess.run([sys.executable, script, "sampling", sampling,
                            "0.95"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("99.01% of 101000 ns", p.stdout)
        p = subprocess.run([sys.executable, script, "sampling", sampling],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)


class SourcesAndStoresTest(unittest.TestCase):
    def test_counted_sources(self):
        self.assertTrue(g.counted("counters"))
        self.assertTrue(g.counted("counters (sampled 3 of 120, spread 0.4%)"))
        for s in ("analytic", "inherited", "none", None):
            self.assertFalse(g.counted(s))

    # The command line over a real store: sampled launches count as counted,
    # analytic ones do not; exit 1 with the failing figure printed.
    def test_command_line_reads_a_store(self):
        d = tempfile.mkdtemp(prefix="gpu_check_lib_")
        path = os.path.join(d, "c.sqlite")
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE kernels (name TEXT, demangled TEXT, "
                    "duration_ns INTEGER, flops INTEGER, flops_source TEXT, "
                    "dram_bytes INTEGER, bytes_source TEXT)")
        con.execute("CREATE TABLE import_stats (run_id INTEGER, name TEXT, "
                    "value INTEGER)")
        for name in g.NOTHING_LOST:
            con.execute("INSERT INTO import_stats VALUES (1, ?, 0)", (name,))
        rows = [("k", None, 100, 10, "counters", 50, "counters"),
                ("k", None, 100, 10, "counters (sampled 1 of 2)", 50,
                 "counters (sampled 1 of 2)"),
                ("g", None, 100, 99, "analytic", 10, "analytic")]
        con.executemany("INSERT INTO kernels VALUES (?,?,?,?,?,?,?)", rows)
        con.commit()
        kernels = g.read_kernels(path)
        self.assertEqual(kernels["k"].dram_launches, 2)
        self.assertEqual(kernels["g"].dram_launches, 0)
        script = os.path.join(SRC, "scripts", "gpu_check_lib.py")
        p = subprocess.run([sys.executable, script, "counters", path, "0.99"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("66.67% of 300 ns", p.stdout)
        p = subprocess.run([sys.executable, script, "counters", path, "0.5"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = subprocess.run([sys.executable, script, "counters", path],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage", p.stderr)

    def test_missing_test_binaries(self):
        d = tempfile.mkdtemp(prefix="gpu_check_lib_")
        exe = os.path.join(d, "counters_gpu_test")
        with open(exe, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(exe, 0o755)
        self.assertEqual(g.missing_tests(d, ["counters_gpu_test", "kernels_gpu_test"]),
                         ["kernels_gpu_test"])


if __name__ == "__main__":
    unittest.main()
