#!/usr/bin/env python3
"""Host CPU cost per launch that trace mode adds, by component (issue 26).

Runs bench/launch_bench (built by CMake where CUDA is; needs a GPU) in
alternation under each configuration below, ROUNDS times, and prints per
launch API and host thread count the µs of host CPU time each adds per
launch: the median over rounds of the difference from the bare run of the
same round, with a 95% bootstrap interval (scripts/overhead_stats.py).

Configurations (one process each, in a rotating order every round):
  bare         no injection
  trace        rooftrace trace mode as `rooftrace profile` injects it
               (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH, LD_PRELOAD),
               the default (lean) callback set, a file sink; a traced run
               whose libinject did not attach CUPTI is refused (it would
               measure nothing)
  full         trace mode with ROOFTRACE_CALLBACKS=full
  -activity, -runtime, -driver, -nvtx, -cublas
               trace mode with that part off (ROOFTRACE_TRACE_OFF): the
               component's cost is trace minus this, per round
  kineto-like  no rooftrace; the benchmark enables the CUPTI activity kinds
               torch.profiler asks for (launch_bench --kineto-like)

The benchmark makes no NVTX or cuBLAS call, so -nvtx and -cublas measure
what their mere presence costs a launch (expected 0); their cost per call
is libinject_bench's (CPU only).

Usage:
  launch_overhead.py --bench BUILD/bench/launch_bench
                     --inject BUILD/lib/librooftrace_inject.so
                     [--rounds 10] [--launches 20000] [--threads 1,4]
                     [--apis triple,runtime,driver,graph]
                     [--configs bare,trace,...] [--bound-us 1.0]
                     [--json out.json]
Acceptance lines (issue 26): trace mode adds at most --bound-us per launch,
and no more than kineto-like, for every API and thread count: PASS, FAIL
or CANNOT JUDGE (overhead_stats.verdict).
Exit: 0 every line passes, 1 one fails, 2 bad input, 3 incomplete (a line
cannot judge, or a run failed).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overhead_stats as st  # noqa: E402

CONFIGS = ["bare", "trace", "full", "-activity", "-runtime", "-driver",
           "-nvtx", "-cublas", "kineto-like"]
PARTS = {"-activity": "activity", "-runtime": "runtime", "-driver": "driver",
         "-nvtx": "nvtx", "-cublas": "cublas"}
ATTACHED = re.compile(r"CUPTI [0-9]+ attached")
LINE = re.compile(r"^launch api=(\S+) threads=(\d+) launches=\d+ "
                  r"cpu_ns_per_launch=([0-9.]+) wall_ns_per_launch=([0-9.]+)")


class BadInput(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", required=True, help="launch_bench binary")
    p.add_argument("--inject", default="",
                   help="librooftrace_inject.so (needed by every "
                        "configuration but bare and kineto-like)")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--launches", type=int, default=20000)
    p.add_argument("--threads", default="1,4")
    p.add_argument("--apis", default="triple,runtime,driver,graph")
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--bound-us", type=float, default=1.0,
                   help="the most trace mode may add per launch (µs)")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds one benchmark process may take")
    p.add_argument("--json", default="", help="write every sample here")
    a = p.parse_args(argv)
    configs = [c for c in a.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise BadInput(f"--configs: unknown {', '.join(unknown)} (known: "
                       f"{', '.join(CONFIGS)})")
    if "bare" not in configs:
        raise BadInput("--configs must include bare: every cost is measured "
                       "against the bare run of the same round")
    if a.rounds < 2:
        raise BadInput(f"--rounds {a.rounds}: at least 2 rounds are needed "
                       "for an interval (10 or more to judge 1 µs)")
    if not (os.path.isfile(a.bench) and os.access(a.bench, os.X_OK)):
        raise BadInput(f"--bench {a.bench}: not an executable; build it with "
                       "`cmake --build BUILD --target launch_bench`")
    if any(c not in ("bare", "kineto-like") for c in configs) and \
            not os.path.isfile(a.inject):
        raise BadInput(f"--inject '{a.inject}': not a file; give "
                       "BUILD/lib/librooftrace_inject.so")
    a.config_list = configs
    return a


def config_env(name, inject, spool):
    """The environment of one configuration's process."""
    env = dict(os.environ)
    for k in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH",
              "ROOFTRACE_TRACE_OFF", "ROOFTRACE_CALLBACKS", "ROOFTRACE_SINK"):
        env.pop(k, None)
    if name in ("bare", "kineto-like"):
        return env
    env["CUDA_INJECTION64_PATH"] = inject
    env["NVTX_INJECTION64_PATH"] = inject
    env["LD_PRELOAD"] = inject + (":" + env["LD_PRELOAD"]
                                  if env.get("LD_PRELOAD") else "")
    env["ROOFTRACE_SINK"] = "file:" + spool
    # Its "CUPTI ... attached" line: a run where libinject did not attach
    # measured nothing and is refused (run_one).
    env["ROOFTRACE_LOG"] = "info"
    if name == "full":
        env["ROOFTRACE_CALLBACKS"] = "full"
    if name in PARTS:
        env["ROOFTRACE_TRACE_OFF"] = PARTS[name]
    return env


def run_one(a, name, spool):
    """{(api, threads): µs of thread CPU per launch} of one process."""
    cmd = [a.bench, "--launches", str(a.launches), "--threads", a.threads,
           "--apis", a.apis]
    if name == "kineto-like":
        cmd.append("--kineto-like")
    try:
        r = subprocess.run(cmd, env=config_env(name, a.inject, spool),
                           capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return None, f"{name}: timed out after {a.timeout:.0f} s"
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        return None, f"{name}: exit {r.returncode}: {' | '.join(tail)}"
    if name not in ("bare", "kineto-like") and not ATTACHED.search(r.stderr):
        tail = r.stderr.strip().splitlines()[-2:]
        return None, (f"{name}: libinject did not attach CUPTI (no 'CUPTI ... "
                      f"attached' line; set ROOFTRACE_CUPTI_PATH to CUDA 13's "
                      f"libcupti.so.13): {' | '.join(tail)}")
    out = {}
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m:
            out[(m.group(1), int(m.group(2)))] = float(m.group(3)) / 1000
    if not out:
        return None, f"{name}: no 'launch api=' line in its output"
    return out, None


NESTED = re.compile(r"(\d+) driver API callbacks \(enter and exit each\) "
                    r"came inside runtime calls")
TOTAL = re.compile(r"^launch total=(\d+)", re.M)


def probe_nested_driver(a):
    """One traced run at ROOFTRACE_LOG=debug, <<<>>> launches on one thread:
    how many driver callbacks CUPTI made inside each runtime launch (2: the
    driver's enter and exit, i.e. every runtime launch is also seen by the
    driver callback; 0: it is not). None and a reason when it cannot say."""
    with tempfile.TemporaryDirectory(prefix="launch_probe_") as tmp:
        env = config_env("trace", a.inject, os.path.join(tmp, "probe.rft"))
        env["ROOFTRACE_LOG"] = "debug"
        cmd = [a.bench, "--launches", "1000", "--threads", "1", "--apis",
               "triple"]
        try:
            r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=a.timeout)
        except subprocess.TimeoutExpired:
            return None, "timed out"
    nested, total = NESTED.search(r.stderr), TOTAL.search(r.stdout)
    if r.returncode != 0 or not nested or not total or int(total.group(1)) == 0:
        return None, (f"exit {r.returncode}; no count in its output "
                      "(libinject older than issue 26, or CUPTI not attached)")
    return int(nested.group(1)) / int(total.group(1)), None


def measure(a, log=print):
    """samples[config][(api, threads)] = [µs per launch, one per round]."""
    samples = {c: {} for c in a.config_list}
    errors = []
    with tempfile.TemporaryDirectory(prefix="launch_overhead_") as tmp:
        n = len(a.config_list)
        for r in range(a.rounds):
            # Rotate the order so no configuration always runs first.
            order = a.config_list[r % n:] + a.config_list[:r % n]
            for name in order:
                spool = os.path.join(tmp, f"{name.strip('-')}-{r}.rft")
                out, err = run_one(a, name, spool)
                if os.path.exists(spool):
                    os.remove(spool)
                if err:
                    errors.append(f"round {r + 1}: {err}")
                    log(f"  round {r + 1}: {err}")
                    continue
                for key, us in out.items():
                    samples[name].setdefault(key, []).append((r, us))
            log(f"  round {r + 1}/{a.rounds} done")
    return samples, errors


def paired(samples, name, other, key):
    """Rounds where both have a sample: (other's, name's) lists."""
    a = dict(samples.get(other, {}).get(key, []))
    b = dict(samples.get(name, {}).get(key, []))
    rounds = sorted(set(a) & set(b))
    return [a[r] for r in rounds], [b[r] for r in rounds]


def summarize(samples, bound_us):
    """Rows of the table and the acceptance lines."""
    keys = sorted({k for per in samples.values() for k in per},
                  key=lambda k: (k[0], k[1]))
    rows, verdicts = [], []
    for key in keys:
        row = {"api": key[0], "threads": key[1], "cells": {}}
        bare = [us for _, us in samples["bare"].get(key, [])]
        row["bare_us"] = st.median(bare) if bare else None
        for name in samples:
            if name == "bare":
                continue
            x, y = paired(samples, name, "bare", key)
            if len(x) >= 2:
                row["cells"][name] = st.difference_summary(x, y)
        # A component's cost: trace minus trace without it, per round.
        for name, part in PARTS.items():
            if name not in samples or "trace" not in samples:
                continue
            x, y = paired(samples, "trace", name, key)
            if len(x) >= 2:
                row["cells"]["part:" + part] = st.difference_summary(x, y)
        rows.append(row)
        label = f"{key[0]} x{key[1]} thread(s)"
        if "trace" in row["cells"]:
            x, y = paired(samples, "trace", "bare", key)
            s = st.difference_summary(x, y, bound=bound_us)
            verdicts.append((s["verdict"],
                             f"{label}: trace mode adds {s['added']:+.3f} µs "
                             f"per launch (95% interval {s['low']:+.3f} .. "
                             f"{s['high']:+.3f}, {s['rounds']} rounds; bound "
                             f"{bound_us} µs)"))
        if "trace" in samples and "kineto-like" in samples:
            x, y = paired(samples, "trace", "kineto-like", key)
            if len(x) >= 2:
                # trace - kineto-like at most 0, resolved to bound_us.
                d = st.difference_summary(x, y)
                v = st.verdict(d["low"], d["high"], 0.0, bound_us)
                verdicts.append((v, f"{label}: trace mode minus kineto-like "
                                    f"{d['added']:+.3f} µs per launch (95% "
                                    f"interval {d['low']:+.3f} .. "
                                    f"{d['high']:+.3f}; bound 0)"))
    return rows, verdicts


def cell(s):
    if s is None:
        return "-"
    return f"{s['added']:+.3f} [{s['low']:+.3f},{s['high']:+.3f}]"


def format_table(rows, configs):
    cols = [c for c in configs if c != "bare"]
    cols += ["part:" + PARTS[c] for c in configs if c in PARTS]
    head = ["api", "thr", "bare µs"] + cols
    lines = ["  ".join(head)]
    for row in rows:
        bare = "-" if row["bare_us"] is None else f"{row['bare_us']:.3f}"
        lines.append("  ".join([row["api"], str(row["threads"]), bare] +
                               [cell(row["cells"].get(c)) for c in cols]))
    return "\n".join(lines)


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
    except BadInput as e:
        print(f"launch_overhead.py: {e}", file=sys.stderr)
        return 2
    print(f"launch_overhead: {a.rounds} rounds of {', '.join(a.config_list)}; "
          f"{a.launches} launches per thread per API; host thread CPU time "
          "(CLOCK_THREAD_CPUTIME_ID)", flush=True)
    if "trace" in a.config_list:
        per_launch, why = probe_nested_driver(a)
        if per_launch is None:
            print(f"  driver callbacks inside a runtime launch: unknown ({why})")
        else:
            print(f"  driver callbacks inside a runtime launch: {per_launch:.2f} "
                  "(2.00: CUPTI calls the driver callback of every runtime "
                  "launch too, enter and exit; 0: never)", flush=True)
    samples, errors = measure(a, log=lambda s: print(s, flush=True))
    rows, verdicts = summarize(samples, a.bound_us)
    print("\nµs of host CPU added per launch vs bare (median of per-round "
          "differences [95% bootstrap interval]); part:X = trace minus "
          "trace without X\n")
    print(format_table(rows, a.config_list))
    print()
    for v, line in verdicts:
        print(f"  {v} {line}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rounds": a.rounds, "launches": a.launches,
                       "configs": a.config_list, "errors": errors,
                       "samples": {c: {f"{k[0]}/{k[1]}": v
                                       for k, v in per.items()}
                                   for c, per in samples.items()},
                       "verdicts": [[v, line] for v, line in verdicts]},
                      f, indent=1)
    if any(v == st.FAIL for v, _ in verdicts):
        return 1
    if errors or not verdicts or any(v != st.PASS for v, _ in verdicts):
        print(f"  incomplete: {len(errors)} run(s) failed, "
              f"{sum(v != st.PASS for v, _ in verdicts)} line(s) not passed")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
