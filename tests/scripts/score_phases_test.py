"""Tests of scripts/score_phases.py on stores built from docs/store.md's DDL.

The store is created by executing the SQL block of docs/store.md, so the
scorer is tested against the documented schema, not a copy of it.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("ROOFTRACE_SOURCE_DIR",
                      os.path.join(os.path.dirname(__file__), "..", ".."))
SCORER = os.path.join(ROOT, "scripts", "score_phases.py")


def schema_sql():
    with open(os.path.join(ROOT, "docs", "store.md")) as f:
        text = f.read()
    blocks = re.findall(r"```sql\n(.*?)```", text, re.S)
    assert blocks, "docs/store.md has no sql block"
    return "\n".join(blocks)


def make_truth(path, steps):
    with open(path, "w") as f:
        json.dump({"steps": steps, "runs": []}, f)


class ScorePhasesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.store = os.path.join(self.dir.name, "run.sqlite")
        self.truth = os.path.join(self.dir.name, "truth.json")
        con = sqlite3.connect(self.store)
        con.executescript(schema_sql())
        con.execute("INSERT INTO runs(run_id, command) VALUES (1, 'test')")
        self.con = con
        # Batch 2, prompt 4: one prefill step [100, 200], two decode steps.
        make_truth(self.truth, [
            {"run": "batch2", "phase": "prefill", "start_ns": 100, "end_ns": 200,
             "token_count": 8, "index": 0},
            {"run": "batch2", "phase": "decode", "start_ns": 300, "end_ns": 400,
             "token_count": 2, "index": 1},
            {"run": "batch2", "phase": "decode", "start_ns": 500, "end_ns": 600,
             "token_count": 2, "index": 2},
        ])

    def tearDown(self):
        self.con.close()
        self.dir.cleanup()

    def add_kernel(self, api_ns, dur, phase):
        self.con.execute(
            "INSERT INTO kernels(run_id, session_id, api_start_ns, duration_ns,"
            " phase) VALUES (1, 1, ?, ?, ?)", (api_ns, dur, phase))

    def add_gemm(self, start_ns, tokens):
        self.con.execute(
            "INSERT INTO gemm_calls(run_id, session_id, start_ns, token_count)"
            " VALUES (1, 1, ?, ?)", (start_ns, tokens))

    def run_scorer(self, *extra):
        self.con.commit()
        out_json = os.path.join(self.dir.name, "scores.json")
        p = subprocess.run([sys.executable, SCORER, self.store, self.truth,
                            "--json", out_json, *extra],
                           capture_output=True, text=True)
        scores = None
        if os.path.exists(out_json):
            with open(out_json) as f:
                scores = json.load(f)
        return p, scores

    # Every kernel labelled as its true step: 100% and exit 0.
    def test_all_correct_passes(self):
        self.add_kernel(150, 1000, "prefill")
        self.add_kernel(350, 10, "decode")
        self.add_kernel(550, 10, "decode")
        self.add_gemm(120, 8)
        self.add_gemm(310, 2)
        p, scores = self.run_scorer()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = {(r["run"], r["phase"]): r for r in scores["rows"]}
        self.assertAlmostEqual(rows[("batch2", "prefill")]["correct_share"], 1.0)
        self.assertEqual(rows[("batch2", "decode")]["gpu_ns"], 20)
        self.assertEqual(rows[("batch2", "prefill")]["gemm_token_count_ok"], 1)
        self.assertEqual(rows[("batch2", "decode")]["gemm_token_count_ok"], 1)

    # Shares are weighted by GPU time: 30 of 40 decode ns right is 75%.
    def test_time_weighted_share_and_failure_exit(self):
        self.add_kernel(150, 100, "prefill")
        self.add_kernel(350, 30, "decode")
        self.add_kernel(550, 10, "prefill")  # wrong
        p, scores = self.run_scorer()
        self.assertEqual(p.returncode, 1, p.stdout)
        rows = {(r["run"], r["phase"]): r for r in scores["rows"]}
        self.assertAlmostEqual(rows[("batch2", "decode")]["correct_share"], 0.75)
        self.assertIn("FAIL", p.stdout)
        # A lower threshold accepts it.
        p, _ = self.run_scorer("--min-share", "0.7")
        self.assertEqual(p.returncode, 0, p.stdout)

    # Kernels launched outside every true step are reported, not scored.
    def test_unattributed_kernels(self):
        self.add_kernel(150, 100, "prefill")
        self.add_kernel(250, 999, "other")
        self.add_kernel(None, 5, "other")
        p, scores = self.run_scorer()
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(scores["unattributed"]["kernels"], 2)
        self.assertEqual(scores["unattributed"]["gpu_ns"], 1004)

    # A GEMM with the wrong token count is not counted as right.
    def test_gemm_token_count_mismatch(self):
        self.add_kernel(150, 100, "prefill")
        self.add_gemm(130, 4)
        _, scores = self.run_scorer()
        rows = {(r["run"], r["phase"]): r for r in scores["rows"]}
        self.assertEqual(rows[("batch2", "prefill")]["gemm_calls"], 1)
        self.assertEqual(rows[("batch2", "prefill")]["gemm_token_count_ok"], 0)
        self.assertEqual(rows[("batch2", "prefill")]["expected_token_count"], 8)

    # Bad input: missing store, bad truth, unknown run -> exit 2 with the name.
    def test_bad_input(self):
        p = subprocess.run([sys.executable, SCORER, "/nonexistent.sqlite",
                            self.truth], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("/nonexistent.sqlite", p.stderr)
        bad = os.path.join(self.dir.name, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        p = subprocess.run([sys.executable, SCORER, self.store, bad],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not JSON", p.stderr)
        p, _ = self.run_scorer("--run", "7")
        self.assertEqual(p.returncode, 2)
        self.assertIn("run 7 not found", p.stderr)


if __name__ == "__main__":
    unittest.main()
