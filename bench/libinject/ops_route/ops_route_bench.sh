#!/usr/bin/env bash
# The ops route's cost on the host (docs/overhead.md): workload.py run bare
# and under `rooftrace profile --ops torch`, alternated PAIRS times; prints
# each run's loop time and, per operator, the host time the route adds
# (CPU and wall, median and min..max over the pairs). Operators per pass
# are counted by the bare runs with torch's profiler.
#
#   bench/libinject/ops_route/ops_route_bench.sh [PAIRS]   (BUILD_DIR, default build)
set -euo pipefail
cd "$(dirname "$0")/../../.."
BUILD_DIR=${BUILD_DIR:-build}
PAIRS=${1:-5}
PY=${PYTHON:-/usr/bin/python3}
RT="$BUILD_DIR/bin/rooftrace"
WORK=bench/libinject/ops_route/workload.py
[ -x "$RT" ] || { echo "ops_route_bench: $RT not built" >&2; exit 2; }
[ -f "$BUILD_DIR/lib/librooftrace_inject.so" ] ||
  { echo "ops_route_bench: $BUILD_DIR/lib/librooftrace_inject.so not built (needs the CUDA toolkit)" >&2; exit 2; }
"$PY" -c 'import torch' 2>/dev/null ||
  { echo "ops_route_bench: $PY has no torch (scripts/setup.sh installs python3-torch)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$PAIRS"); do
  "$PY" "$WORK" | grep '^iters=' | sed 's/^/bare /' >> "$tmp/runs"
  "$RT" profile --ops torch -o "$tmp/run$i.sqlite" -- "$PY" "$WORK" 2>/dev/null |
    grep '^iters=' | sed 's/^/ops  /' >> "$tmp/runs"
  sqlite3 "$tmp/run$i.sqlite" \
    "SELECT value FROM import_stats WHERE name = 'ops_received'" >> "$tmp/received"
done
cat "$tmp/runs"
"$PY" - "$tmp/runs" "$tmp/received" <<'PYEOF'
import re, statistics, sys
runs = {"bare": [], "ops": []}
ops_per_pass = None
for line in open(sys.argv[1]):
    kind, rest = line.split(None, 1)
    f = dict(kv.split("=") for kv in rest.split())
    runs[kind].append((float(f["wall_s"]), float(f["cpu_s"]), int(f["iters"])))
    if kind == "bare":
        ops_per_pass = int(f["ops_per_pass"])
received = [int(x) for x in open(sys.argv[2]) if x.strip()]
iters = runs["bare"][0][2]
ops = ops_per_pass * iters
print("operators per pass %d, per run %d (timed loop); the route received "
      "%s per run (warm-up included)" % (ops_per_pass, ops, received))
for i, name in ((1, "cpu"), (0, "wall")):
    deltas = [(o[i] - b[i]) / ops * 1e6 for b, o in zip(runs["bare"], runs["ops"])]
    bare = [b[i] / ops * 1e6 for b in runs["bare"]]
    print("%-4s per operator: bare %.2f us (median), added by the route: "
          "median %.2f us, min %.2f, max %.2f over %d alternated pairs"
          % (name, statistics.median(bare), statistics.median(deltas),
             min(deltas), max(deltas), len(deltas)))
PYEOF
