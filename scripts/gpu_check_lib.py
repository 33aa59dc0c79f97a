#!/usr/bin/env python3
"""The checks of scripts/gpu-check.sh that compute figures, as pure functions.

Each check returns (ok, lines): `lines` are every figure it computed, which
the recipe prints into gpu-check.txt whether the check passes or not. A
check never passes without evidence: nothing to compare, a statistic the
store does not have, or a kernel it cannot find is a failure, never a
silent pass. Standard library only (the device's Python may have nothing
else). tests/scripts/gpu_check_lib_test.py tests every rule on CPU.

Command line (what gpu-check.sh runs; exit 0 pass, 1 fail, 2 bad input):
  gpu_check_lib.py ncu OURS.sqlite NCU.sqlite FLOPS_PCT BYTES_PCT SHARE
  gpu_check_lib.py counters STORE.sqlite MIN_TIME_SHARE
  gpu_check_lib.py tests TESTS_DIR NAME...
  gpu_check_lib.py slowdown BARE_TRUTH.json PROFILED_TRUTH.json LIMIT
  gpu_check_lib.py sampling STORE.sqlite MIN_TIME_SHARE
  gpu_check_lib.py sampling_vs_counters SAMPLING.sqlite COUNTERS.sqlite
                   BYTES_PCT MIN_KERNEL_US
  gpu_check_lib.py ops LIVE.sqlite IMPORT.sqlite MIN_TIME_SHARE
"""
import json
import os
import sqlite3
import sys
from collections import namedtuple

# One kernel name's launches in a store: its GPU time and, over the launches
# whose figures came from counters (measured, or sampled from launches of
# the same signature), their FLOPs and DRAM bytes.
Kernel = namedtuple("Kernel", "demangled launches time_ns flops flops_launches "
                              "dram dram_launches")

# Statistics that must be in the store of a counters-mode run, and 0:
# nothing lost (issue 25). Missing is a failure, not a 0.
NOTHING_LOST = (
    "producer_cupti_dropped",             # records CUPTI dropped
    "producer_activity_buffers_refused",  # buffer requests the pool refused
    "producer_kernels_untimed",           # kernel records without timestamps
    "producer_dropped_kernel",            # kernel records libinject dropped
    "producer_dropped_counters",          # counter results libinject dropped
    "unmatched_counters",                 # counters no kernel claimed
)


def counted(source):
    """Whether a stored flops_source / bytes_source is a hardware count."""
    return source is not None and (source == "counters" or
                                   source.startswith("counters (sampled"))


def pm_sampled(source):
    """Whether a stored bytes_source is sampling mode's ("pm-sampling
    (exact)" or "pm-sampling (attributed, error e%)")."""
    return source is not None and source.startswith("pm-sampling")


def pm_error(source):
    """The attribution error a pm-sampling source states, as a fraction
    (0 for exact and anything else)."""
    if not pm_sampled(source) or "error " not in source:
        return 0.0
    text = source.split("error ", 1)[1].split("%", 1)[0]
    try:
        return float(text) / 100
    except ValueError:
        return 0.0


def rel_pct(a, b):
    """Relative difference in percent of the larger magnitude (0 when equal)."""
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b)) * 100


def compare_with_ncu(ours, theirs, flops_pct, bytes_pct, share):
    """Per kernel name, our counters against ncu's, for the kernels holding
    `share` of OUR run's whole GPU time (every kernel counts toward the
    total, whatever its figures: memory-bound and FLOP-less kernels are
    compared on DRAM bytes like any other). A compared kernel fails when
    ncu does not have it, when any of our launches lacks counted DRAM
    bytes, when the DRAM bytes per launch differ by more than bytes_pct,
    or when either side counted FLOPs and they differ by more than
    flops_pct."""
    lines = []
    total = sum(k.time_ns for k in ours.values())
    if not ours or not theirs or total <= 0:
        return False, ["nothing to compare: no kernels in our store "
                       f"({len(ours)}) or in the ncu import ({len(theirs)}), "
                       f"or no GPU time ({total} ns)"]
    by_demangled = {k.demangled: name for name, k in theirs.items() if k.demangled}
    ok, covered, compared = True, 0, 0
    for name, k in sorted(ours.items(), key=lambda kv: (-kv[1].time_ns, kv[0])):
        if covered >= share * total:
            break
        covered += k.time_ns
        compared += 1
        label = name[:60]
        key = name if name in theirs else by_demangled.get(k.demangled or name)
        if key is None:
            ok = False
            lines.append(f"BAD {label}: {k.time_ns / total * 100:.1f}% of GPU "
                         "time, not in the ncu import")
            continue
        t = theirs[key]
        if k.dram_launches < k.launches:
            ok = False
            lines.append(f"BAD {label}: {k.time_ns / total * 100:.1f}% of GPU "
                         f"time, DRAM bytes counted for {k.dram_launches} of "
                         f"{k.launches} launches")
            continue
        if t.launches <= 0:
            ok = False
            lines.append(f"BAD {label}: no launch in the ncu import")
            continue
        dram, ndram = k.dram / k.launches, t.dram / t.launches
        eb = rel_pct(dram, ndram)
        flops = k.flops / k.flops_launches if k.flops_launches else 0.0
        nflops = t.flops / t.launches
        ef = rel_pct(flops, nflops)
        flops_counted = k.flops_launches == k.launches
        good = eb <= bytes_pct
        if nflops > 0 or flops > 0:
            good = good and flops_counted and ef <= flops_pct
        ok = ok and good
        lines.append(
            f"{'ok ' if good else 'BAD'} {label}: {k.time_ns / total * 100:.1f}% "
            f"of GPU time, {k.launches} launches, DRAM bytes {dram:.6g} vs ncu "
            f"{ndram:.6g} ({eb:.2f}%, limit {bytes_pct}%), FLOPs {flops:.6g} vs "
            f"ncu {nflops:.6g} ({ef:.2f}%, limit {flops_pct}%"
            f"{'' if flops_counted else ', FLOPs not counted for every launch'})")
    lines.append(f"compared {compared} kernel names holding "
                 f"{covered / total * 100:.1f}% of the GPU time "
                 f"(required {share * 100:.0f}%)")
    ok = ok and covered >= share * total
    return ok, lines


def all_zero(stats, names):
    """Whether each statistic in `names` is in the store and 0, with one
    ok/BAD line each (a missing one is BAD: it was never counted)."""
    ok, lines = True, []
    for name in names:
        value = stats.get(name)
        good = value is not None and value == 0
        ok = ok and good
        lines.append(f"{'ok ' if good else 'BAD'} {name} = "
                     f"{'missing from the store' if value is None else value}")
    return ok, lines


def check_counters_run(stats, kernels, zero_duration, time_ns, dram_time_ns,
                       flops_time_ns, min_share):
    """A counters-mode run lost nothing: every NOTHING_LOST statistic is in
    the store and 0, no kernel has a zero duration, there are kernels, and
    at least `min_share` of the GPU time has DRAM bytes from counters
    (measured or sampled). The share with FLOPs from counters is printed
    beside it (the default counter set has no CUDA-core FLOPs)."""
    ok, lines = all_zero(stats, NOTHING_LOST)
    good = kernels > 0
    ok = ok and good
    lines.append(f"{'ok ' if good else 'BAD'} kernels recorded: {kernels}")
    good = zero_duration == 0 and kernels > 0
    ok = ok and good
    lines.append(f"{'ok ' if good else 'BAD'} kernels with a zero duration: "
                 f"{zero_duration} of {kernels}")
    share = dram_time_ns / time_ns if time_ns > 0 else 0.0
    good = time_ns > 0 and share >= min_share
    ok = ok and good
    lines.append(f"{'ok ' if good else 'BAD'} GPU time with DRAM bytes from "
                 f"counters (measured or sampled): {share * 100:.2f}% of "
                 f"{time_ns} ns (required {min_share * 100:.0f}%)")
    fshare = flops_time_ns / time_ns if time_ns > 0 else 0.0
    lines.append(f"    GPU time with FLOPs from counters: {fshare * 100:.2f}%")
    return ok, lines


def check_slowdown(bare_runs, profiled_runs, limit):
    """Each batch's generate time under rooftrace is at most `limit` times
    the bare one (hf_generate.py truth files' "runs"). No runs, or not the
    same batches, is a failure."""
    lines = []
    if not bare_runs or len(bare_runs) != len(profiled_runs):
        return False, [f"BAD {len(bare_runs)} bare run(s) against "
                       f"{len(profiled_runs)} profiled: nothing to compare"]
    ok = True
    for b, p in zip(bare_runs, profiled_runs):
        if b.get("batch") != p.get("batch") or b.get("generate_ms", 0) <= 0:
            ok = False
            lines.append(f"BAD batch {b.get('batch')} against {p.get('batch')}: "
                         "not comparable")
            continue
        ratio = p["generate_ms"] / b["generate_ms"]
        good = ratio <= limit
        ok = ok and good
        lines.append(f"{'ok ' if good else 'BAD'} batch {b['batch']}: "
                     f"{b['generate_ms']:.1f} ms bare, {p['generate_ms']:.1f} ms "
                     f"profiled: {ratio:.2f}x (limit {limit}x)")
    return ok, lines


# Statistics of a sampling-mode run: must be in the store. Samples lost by
# the producer and kernel records dropped must be 0; every sample the
# producers sent must have arrived.
SAMPLING_LOST = (
    "producer_pm_samples_lost",  # overflow, incomplete or failed samples
    "producer_cupti_dropped",    # kernel records CUPTI dropped
    "producer_dropped_kernel",   # kernel records libinject dropped
)


def check_sampling_run(stats, time_ns, pm_time_ns, min_share):
    """A sampling-mode run: samples arrived (pm_samples > 0 and equal to
    what the producers said they sent), none lost, kernels' records not
    dropped, and at least `min_share` of the GPU time has DRAM bytes from
    PM sampling. The samples' fates (exact, split, unattributed) are
    printed."""
    ok, lines = all_zero(stats, SAMPLING_LOST)
    got, sent = stats.get("pm_samples"), stats.get("producer_pm_samples")
    good = got is not None and sent is not None and got > 0 and got == sent
    ok = ok and good
    lines.append(f"{'ok ' if good else 'BAD'} PM samples received {got} of "
                 f"{sent} sent")
    fates = [(n, stats.get(f"pm_samples_{n}")) for n in
             ("exact", "split", "unattributed")]
    lines.append("    samples: " + ", ".join(
        f"{n} {'missing' if v is None else v}" for n, v in fates))
    share = pm_time_ns / time_ns if time_ns > 0 else 0.0
    good = time_ns > 0 and share >= min_share
    ok = ok and good
    lines.append(f"{'ok ' if good else 'BAD'} GPU time with DRAM bytes from "
                 f"PM sampling: {share * 100:.2f}% of {time_ns} ns (required "
                 f"{min_share * 100:.0f}%)")
    return ok, lines


# One kernel family of a store: launches, GPU time, and the DRAM bytes of
# its launches whose bytes have the wanted provenance (with the part PM
# sampling's split samples decided).
Family = namedtuple("Family", "launches time_ns dram dram_launches split")


def compare_sampling_with_counters(sampling, counters, bytes_pct, min_us):
    """Per family whose kernels last `min_us` or more on average in the
    sampling run, the DRAM bytes per launch from PM sampling against counters
    mode's (measured or sampled per signature). A compared family fails
    when any of its launches lacks PM-sampled bytes, when counters mode has
    no counted bytes for it, or when the two differ by more than
    `bytes_pct`. No family to compare is a failure."""
    lines, ok, compared = [], True, 0
    for name, f in sorted(sampling.items(), key=lambda kv: -kv[1].time_ns):
        if f.launches == 0 or f.time_ns / f.launches < min_us * 1000:
            continue
        compared += 1
        mean_us = f.time_ns / f.launches / 1000
        label = name[:50]
        if f.dram_launches < f.launches:
            ok = False
            lines.append(f"BAD {label}: {mean_us:.1f} us per launch, DRAM "
                         f"bytes from PM sampling for {f.dram_launches} of "
                         f"{f.launches} launches")
            continue
        c = counters.get(name)
        if c is None or c.dram_launches == 0:
            ok = False
            lines.append(f"BAD {label}: {mean_us:.1f} us per launch, no "
                         "counted DRAM bytes in the counters-mode store")
            continue
        ours, theirs = f.dram / f.launches, c.dram / c.dram_launches
        diff = rel_pct(ours, theirs)
        error = f.split / f.dram * 100 if f.dram > 0 else 0.0
        good = diff <= bytes_pct
        ok = ok and good
        lines.append(f"{'ok ' if good else 'BAD'} {label}: {mean_us:.1f} us "
                     f"per launch, DRAM bytes per launch {ours:.6g} "
                     f"(pm-sampling, attribution error {error:.1f}%) vs "
                     f"counters {theirs:.6g}: {diff:.2f}% (limit {bytes_pct}%)")
    if compared == 0:
        return False, [f"BAD no family with kernels of {min_us} us or more "
                       "in the sampling run: nothing to compare"]
    lines.append(f"compared {compared} families with kernels of {min_us} us "
                 "or more")
    return ok, lines


# One stored kernel as the ops route's check reads it.
OpsKernel = namedtuple("OpsKernel", "name op shape time_ns flops dram")


def check_ops_route(stats, live, imported, min_share):
    """The ops route's run (profile --ops torch) against an import of a
    torch.profiler trace of the same workload: operators were received and
    tied to kernels, `min_share` of the live run's GPU time has FLOPs or
    bytes, and every (kernel, op, shape) both stores cost has the same
    per-kernel figures in both (two runs: kernels are matched by what they
    are, not one by one)."""
    lines = []
    ok = True
    for name in ("ops_received", "kernels_from_ops"):
        if name not in stats:
            lines.append(f"BAD statistic {name} is not in the store (was "
                         "the run made with --ops torch?)")
            ok = False
        elif stats[name] <= 0:
            lines.append(f"BAD {name} = {stats[name]}: the route brought "
                         "nothing")
            ok = False
        else:
            lines.append(f"{name} = {stats[name]}")

    def share(rows):
        total = sum(k.time_ns for k in rows)
        covered = sum(k.time_ns for k in rows
                      if k.flops is not None or k.dram is not None)
        return covered / total if total else 0.0

    live_share, import_share = share(live), share(imported)
    lines.append(f"GPU time with FLOPs or bytes: live {100 * live_share:.1f}%, "
                 f"import of the torch.profiler trace {100 * import_share:.1f}%"
                 f" (needed: {100 * min_share:.1f}% live)")
    if not live or live_share < min_share:
        ok = False
        lines.insert(0, f"BAD live coverage {100 * live_share:.1f}% < "
                        f"{100 * min_share:.1f}%")

    def figures(rows):
        out = {}
        for k in rows:
            if k.op and (k.flops is not None or k.dram is not None):
                out.setdefault((k.name, k.op, k.shape), set()).add(
                    (k.flops, k.dram))
        return out

    a, b = figures(live), figures(imported)
    both = sorted(set(a) & set(b))
    differ = [key for key in both if a[key] != b[key]]
    lines.append(f"(kernel, op, shape) costed in both runs: {len(both)} "
                 f"(live only {len(set(a) - set(b))}, import only "
                 f"{len(set(b) - set(a))}); equal figures: "
                 f"{len(both) - len(differ)}, different: {len(differ)}")
    for key in differ[:5]:
        lines.insert(0, f"BAD {key[1]} {key[2]} ({key[0][:60]}): live "
                        f"{sorted(a[key])} import {sorted(b[key])}")
    if not both:
        lines.insert(0, "BAD nothing to compare: no (kernel, op, shape) is "
                        "costed in both runs")
    return ok and bool(both) and not differ, lines


def missing_tests(tests_dir, names):
    """The expected test binaries that are not executables in tests_dir."""
    return [n for n in names
            if not os.access(os.path.join(tests_dir, n), os.X_OK)]


# ---------------------------------------------------------------- stores

def read_stats(con):
    """A store's import statistics, summed over its runs, by name."""
    return dict(con.execute(
        "SELECT name, SUM(value) FROM import_stats GROUP BY name"))


def read_kernels(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT name, demangled, COALESCE(duration_ns, 0), flops, flops_source, "
        "dram_bytes, bytes_source FROM kernels").fetchall()
    out = {}
    for name, dem, ns, flops, fsrc, dram, bsrc in rows:
        k = out.get(name) or Kernel(dem, 0, 0, 0, 0, 0, 0)
        fc = counted(fsrc) and flops is not None
        bc = counted(bsrc) and dram is not None
        out[name] = Kernel(k.demangled or dem, k.launches + 1, k.time_ns + ns,
                           k.flops + (flops if fc else 0),
                           k.flops_launches + (1 if fc else 0),
                           k.dram + (dram if bc else 0),
                           k.dram_launches + (1 if bc else 0))
    return out


def read_import(path):
    """An ncu import: every figure it has counts as counted."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT name, demangled, COUNT(*), SUM(COALESCE(duration_ns, 0)), "
        "SUM(COALESCE(flops, 0)), SUM(COALESCE(dram_bytes, 0)) FROM kernels "
        "GROUP BY name").fetchall()
    return {r[0]: Kernel(r[1], r[2], r[3], r[4], r[2], r[5], r[2]) for r in rows}


def read_counters_run(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    stats = read_stats(con)
    kernels = read_kernels(path)
    zero = con.execute("SELECT COUNT(*) FROM kernels WHERE "
                       "COALESCE(duration_ns, 0) <= 0").fetchone()[0]
    n = sum(k.launches for k in kernels.values())
    time_ns = dram_ns = flops_ns = 0
    for name, ns, fsrc, bsrc in con.execute(
            "SELECT name, COALESCE(duration_ns, 0), flops_source, bytes_source "
            "FROM kernels"):
        time_ns += ns
        dram_ns += ns if counted(bsrc) else 0
        flops_ns += ns if counted(fsrc) else 0
    return stats, n, zero, time_ns, dram_ns, flops_ns


def read_families(path, wanted):
    """Families of a store, counting the DRAM bytes whose bytes_source
    satisfies `wanted`."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {}
    for fam, ns, dram, src in con.execute(
            "SELECT COALESCE(family, name), COALESCE(duration_ns, 0), "
            "dram_bytes, bytes_source FROM kernels"):
        f = out.get(fam) or Family(0, 0, 0, 0, 0.0)
        got = wanted(src) and dram is not None
        out[fam] = Family(f.launches + 1, f.time_ns + ns,
                          f.dram + (dram if got else 0),
                          f.dram_launches + (1 if got else 0),
                          f.split + (dram * pm_error(src) if got else 0.0))
    return out


def read_ops_run(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    stats = read_stats(con)
    rows = [OpsKernel(*r) for r in con.execute(
        "SELECT name, COALESCE(op, ''), COALESCE(shape, ''), "
        "COALESCE(duration_ns, 0), flops, dram_bytes FROM kernels")]
    return stats, rows


def read_sampling_run(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    stats = read_stats(con)
    time_ns = pm_ns = 0
    for ns, src in con.execute(
            "SELECT COALESCE(duration_ns, 0), bytes_source FROM kernels"):
        time_ns += ns
        pm_ns += ns if pm_sampled(src) else 0
    return stats, time_ns, pm_ns


def main(argv):
    usage = __doc__.split("Command line")[1]
    try:
        cmd = argv[1]
        if cmd == "ncu" and len(argv) == 7:
            ok, lines = compare_with_ncu(read_kernels(argv[2]), read_import(argv[3]),
                                         float(argv[4]), float(argv[5]),
                                         float(argv[6]))
        elif cmd == "counters" and len(argv) == 4:
            ok, lines = check_counters_run(*read_counters_run(argv[2]),
                                           float(argv[3]))
        elif cmd == "sampling" and len(argv) == 4:
            ok, lines = check_sampling_run(*read_sampling_run(argv[2]),
                                           float(argv[3]))
        elif cmd == "sampling_vs_counters" and len(argv) == 6:
            ok, lines = compare_sampling_with_counters(
                read_families(argv[2], pm_sampled),
                read_families(argv[3], counted), float(argv[4]),
                float(argv[5]))
        elif cmd == "ops" and len(argv) == 5:
            stats, live = read_ops_run(argv[2])
            _, imported = read_ops_run(argv[3])
            ok, lines = check_ops_route(stats, live, imported, float(argv[4]))
        elif cmd == "slowdown" and len(argv) == 5:
            try:
                with open(argv[2]) as a, open(argv[3]) as b:
                    bare, profiled = json.load(a), json.load(b)
            except (OSError, ValueError) as e:
                print(f"  BAD cannot read the truth files: {e}")
                return 1
            ok, lines = check_slowdown(bare.get("runs", []),
                                       profiled.get("runs", []), float(argv[4]))
        elif cmd == "tests" and len(argv) >= 3:
            missing = missing_tests(argv[2], argv[3:])
            ok = not missing
            lines = [f"BAD {n}: expected in {argv[2]}, not there (build it and "
                     "carry it with scripts/pack-for-device.sh)" for n in missing]
            lines.append(f"{len(argv) - 3 - len(missing)} of {len(argv) - 3} "
                         "expected GPU test binaries present")
        else:
            print(f"gpu_check_lib.py: bad arguments {argv[1:]}; usage:{usage}",
                  file=sys.stderr)
            return 2
    except (IndexError, ValueError) as e:
        print(f"gpu_check_lib.py: bad arguments {argv[1:]} ({e}); usage:{usage}",
              file=sys.stderr)
        return 2
    except sqlite3.Error as e:
        print(f"  BAD cannot read the store: {e}")
        return 1
    for line in lines:
        print("  " + line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
