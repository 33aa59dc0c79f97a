#!/usr/bin/env python3
"""Scores rooftrace's phase labels against the truth side file of a workload.

Reads a rooftrace store (SQLite, docs/store.md) and the --truth JSON written by
scripts/examples/hf_generate.py (one record per forward step: host
CLOCK_MONOTONIC interval of the forward call, phase, token count). Each kernel
is attributed to the true step whose host interval contains the kernel's
launch time (kernels.api_start_ns), so the answer never passes through NVTX
or through rooftrace's own step detection.

Prints, per run label (batch size) and true phase: GPU time, the share of it
labelled with the true phase, and how many GEMM calls carry the true token
count (batch x prompt for prefill, batch for decode). Exits 1 when a share is
below --min-share (default 0.99), 2 on bad input, 0 otherwise.

Usage: score_phases.py STORE TRUTH.json [--run ID] [--json OUT] [--min-share F]
"""
import argparse
import bisect
import json
import os
import sqlite3
import sys


def fail(msg):
    print(f"score_phases: {msg}", file=sys.stderr)
    sys.exit(2)


def load_truth(path):
    try:
        with open(path) as f:
            truth = json.load(f)
    except OSError as e:
        fail(f"{path}: {e.strerror}: give the --truth file written by hf_generate.py")
    except json.JSONDecodeError as e:
        fail(f"{path}: not JSON ({e}): give the --truth file written by hf_generate.py")
    steps = truth.get("steps")
    if not isinstance(steps, list) or not steps:
        fail(f"{path}: has no 'steps': not a truth file of hf_generate.py")
    steps = sorted(steps, key=lambda s: s["start_ns"])
    return truth, steps


def open_store(path, run_id):
    if not os.path.exists(path):
        fail(f"{path}: no such file: give the store written by rooftrace profile -o")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id")]
    except sqlite3.DatabaseError as e:
        fail(f"{path}: not a rooftrace store ({e})")
    if not runs:
        fail(f"{path}: holds no run")
    if run_id is None:
        run_id = runs[-1]
    elif run_id not in runs:
        fail(f"{path}: run {run_id} not found (runs: {', '.join(map(str, runs))})")
    return con, run_id


def find_step(starts, steps, t):
    """Index of the truth step whose [start_ns, end_ns] holds t, or None."""
    i = bisect.bisect_right(starts, t) - 1
    if i >= 0 and steps[i]["start_ns"] <= t <= steps[i]["end_ns"]:
        return i
    return None


def score(con, run_id, steps):
    starts = [s["start_ns"] for s in steps]
    # (label, true phase) -> [gpu_ns, correct_ns, kernels, label counts]
    table = {}
    unattributed = {"kernels": 0, "gpu_ns": 0}
    for api_ns, dur, phase in con.execute(
            "SELECT api_start_ns, duration_ns, phase FROM kernels "
            "WHERE run_id = ?", (run_id,)):
        i = find_step(starts, steps, api_ns) if api_ns is not None else None
        if i is None:
            unattributed["kernels"] += 1
            unattributed["gpu_ns"] += dur or 0
            continue
        s = steps[i]
        key = (s.get("run", "run"), s["phase"])
        row = table.setdefault(key, {"gpu_ns": 0, "correct_ns": 0, "kernels": 0,
                                     "labels": {}})
        row["gpu_ns"] += dur or 0
        row["kernels"] += 1
        row["labels"][phase] = row["labels"].get(phase, 0) + (dur or 0)
        if phase == s["phase"]:
            row["correct_ns"] += dur or 0

    gemms = {}
    for start_ns, tokens in con.execute(
            "SELECT start_ns, token_count FROM gemm_calls WHERE run_id = ?",
            (run_id,)):
        i = find_step(starts, steps, start_ns) if start_ns is not None else None
        if i is None:
            continue
        s = steps[i]
        key = (s.get("run", "run"), s["phase"])
        g = gemms.setdefault(key, {"calls": 0, "token_count_ok": 0,
                                   "expected": s["token_count"], "seen": {}})
        g["calls"] += 1
        g["seen"][tokens] = g["seen"].get(tokens, 0) + 1
        if tokens == s["token_count"]:
            g["token_count_ok"] += 1
    return table, gemms, unattributed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("truth")
    ap.add_argument("--run", type=int, default=None, help="run id (default: last)")
    ap.add_argument("--json", default="", help="also write the scores here")
    ap.add_argument("--min-share", type=float, default=0.99,
                    help="share of GPU time that must carry the true phase")
    args = ap.parse_args()

    truth, steps = load_truth(args.truth)
    con, run_id = open_store(args.store, args.run)
    table, gemms, unattributed = score(con, run_id, steps)
    if not table:
        fail(f"{args.store}: no kernel of run {run_id} was launched inside a "
             f"step of {args.truth}: were they recorded on the same host and run?")

    print(f"phase scoring of {args.store} run {run_id} against {args.truth}")
    print(f"{'run':<10} {'true phase':<10} {'kernels':>8} {'GPU ms':>10} "
          f"{'correct':>8} {'GEMMs':>6} {'tokens ok':>9}  labels given (ms)")
    ok = True
    out = []
    for key in sorted(table):
        row = table[key]
        share = row["correct_ns"] / row["gpu_ns"] if row["gpu_ns"] else 0.0
        g = gemms.get(key, {"calls": 0, "token_count_ok": 0, "expected": None})
        labels = ", ".join(f"{k}={v / 1e6:.2f}" for k, v in
                           sorted(row["labels"].items(), key=lambda kv: str(kv[0])))
        print(f"{key[0]:<10} {key[1]:<10} {row['kernels']:>8} "
              f"{row['gpu_ns'] / 1e6:>10.3f} {share * 100:>7.2f}% "
              f"{g['calls']:>6} {g['token_count_ok']:>9}  {labels}")
        scored = key[0] != "warmup"
        if scored and share < args.min_share:
            ok = False
        out.append({"run": key[0], "phase": key[1], "kernels": row["kernels"],
                    "gpu_ns": row["gpu_ns"], "correct_share": share,
                    "gemm_calls": g["calls"],
                    "gemm_token_count_ok": g["token_count_ok"],
                    "expected_token_count": g["expected"],
                    "labels_ns": row["labels"], "scored": scored})
    print(f"kernels outside every true step: {unattributed['kernels']} "
          f"({unattributed['gpu_ns'] / 1e6:.3f} GPU ms, not scored)")
    print("result: " + ("PASS" if ok else "FAIL") +
          f" (threshold {args.min_share * 100:.1f}% of GPU time per phase)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"store": args.store, "run_id": run_id,
                       "threshold": args.min_share, "pass": ok, "rows": out,
                       "unattributed": unattributed}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
