#!/usr/bin/env bash
# The device recipe: every GPU claim of rooftrace comes from this script, run
# on a machine with an NVIDIA GPU over a build made elsewhere (it builds
# nothing). Prepare with `scripts/setup.sh && scripts/pack-for-device.sh`,
# carry build/, then run e.g.
#   scripts/gpu-check.sh env tests calibrate trace counters ncu
# Every figure goes to one file, $OUT/gpu-check.txt ($OUT defaults to
# gpu-check-out/), with the stores, traces and logs beside it. Stages:
#   env        GPU, driver, toolkit, PyTorch, ncu versions; library check
#   tests      every test binary of the suite (GPU tests run instead of skip)
#   calibrate  rooftrace calibrate --quick -> profile.json
#   bare       the example workload without rooftrace (wall times, token hash)
#   trace      the example under `rooftrace profile` (trace mode) + phase score
#   counters   the example under `rooftrace profile --mode counters` (reduced)
#   ncu        the same reduced workload under ncu with the counters metrics
# Each stage is independent; a failing stage is reported and the next runs.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
REPORT="$OUT/gpu-check.txt"
RT="$BUILD_DIR/bin/rooftrace"
EXAMPLE=scripts/examples/hf_generate.py
PY=${PYTHON:-python3}
# The reduced workload for counters mode and ncu (every kernel is replayed).
SMALL_ARGS=${SMALL_ARGS:---batch-sizes 8 --new-tokens 4 --layers 2 --warmup 1}
FULL_ARGS=${FULL_ARGS:---batch-sizes 1,8,32}
NCU_METRICS=${NCU_METRICS:-dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum,sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum}

say() { echo "$*" | tee -a "$REPORT"; }
rt() { LD_LIBRARY_PATH="$PWD/$BUILD_DIR/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$RT" "$@"; }
wall() { local s e; s=$(date +%s%N); "$@"; local rc=$?; e=$(date +%s%N); say "  wall: $(( (e - s) / 1000000 )) ms (rc $rc): $*"; return $rc; }

stage_env() {
  say "== env"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | tee -a "$REPORT"
  (nvcc --version | tail -1; ncu --version | tail -1; $PY -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)') 2>&1 | tee -a "$REPORT"
  say "libraries rooftrace needs that are missing here:"
  LD_LIBRARY_PATH="$BUILD_DIR/devlibs" ldd "$RT" "$BUILD_DIR"/lib/*.so 2>&1 | grep "not found" | tee -a "$REPORT" || say "  none"
}

stage_tests() {
  say "== tests (GPU tests run here instead of skipping)"
  local failed=0
  for t in "$BUILD_DIR"/tests/*_test; do
    [ -x "$t" ] || continue
    if LD_LIBRARY_PATH="$PWD/$BUILD_DIR/devlibs" "$t" --gtest_brief=1 >"$OUT/$(basename "$t").log" 2>&1; then
      say "  PASS $(basename "$t") $(grep -c '\[  SKIPPED \]' "$OUT/$(basename "$t").log") skipped"
    else
      failed=1; say "  FAIL $(basename "$t") (log: $(basename "$t").log)"
      tail -20 "$OUT/$(basename "$t").log" | tee -a "$REPORT"
    fi
  done
  return $failed
}

stage_calibrate() {
  say "== calibrate"
  wall rt calibrate --quick -o "$OUT/profile.json" 2>&1 | tee "$OUT/calibrate.log" | tee -a "$REPORT"
}

profile_flag() { [ -f "$OUT/profile.json" ] && echo "--device-profile $OUT/profile.json"; }

stage_bare() {
  say "== bare workload"
  wall $PY $EXAMPLE $FULL_ARGS --truth "$OUT/truth_bare.json" 2>&1 | tee "$OUT/bare.log" | tee -a "$REPORT"
}

stage_trace() {
  say "== trace mode"
  wall rt profile -o "$OUT/trace.sqlite" $(profile_flag) -- \
    $PY $EXAMPLE $FULL_ARGS --truth "$OUT/truth_trace.json" 2>&1 | tee "$OUT/trace.log" | tail -60 | tee -a "$REPORT"
  $PY scripts/score_phases.py "$OUT/trace.sqlite" "$OUT/truth_trace.json" --json "$OUT/score_trace.json" 2>&1 | tee -a "$REPORT"
  say "token hashes (bare vs trace):"
  grep -h "generated token ids sha256" "$OUT/bare.log" "$OUT/trace.log" 2>/dev/null | tee -a "$REPORT"
  $PY - "$OUT/truth_bare.json" "$OUT/truth_trace.json" <<'PY' 2>&1 | tee -a "$REPORT"
import json, sys
try:
    bare, traced = (json.load(open(p)) for p in sys.argv[1:3])
except OSError as e:
    sys.exit(f"overhead: {e}")
for b, t in zip(bare["runs"], traced["runs"]):
    print(f"  overhead batch {b['batch']}: generate {b['generate_ms']:.1f} ms bare, "
          f"{t['generate_ms']:.1f} ms traced: {100 * (t['generate_ms'] / b['generate_ms'] - 1):+.2f}%")
print("  identical token ids:", bare["token_ids_sha256"] == traced["token_ids_sha256"])
PY
  rt analyze "$OUT/trace.sqlite" --by family --top 25 2>&1 | tee -a "$REPORT"
  rt analyze "$OUT/trace.sqlite" --by phase 2>&1 | tee -a "$REPORT"
  rt analyze "$OUT/trace.sqlite" --html "$OUT/report.html" --svg "$OUT/roofline.svg" >/dev/null 2>&1
}

stage_counters() {
  say "== counters mode (reduced workload: $SMALL_ARGS)"
  wall $PY $EXAMPLE $SMALL_ARGS --truth "$OUT/truth_small_bare.json" >"$OUT/small_bare.log" 2>&1
  wall rt profile --mode counters -o "$OUT/counters.sqlite" $(profile_flag) -- \
    $PY $EXAMPLE $SMALL_ARGS --truth "$OUT/truth_counters.json" 2>&1 | tee "$OUT/counters.log" | tail -40 | tee -a "$REPORT"
  rt analyze "$OUT/counters.sqlite" --by kernel --top 30 2>&1 | tee -a "$REPORT"
  rt export "$OUT/counters.sqlite" --csv "$OUT/counters_csv" >/dev/null 2>&1
}

stage_ncu() {
  say "== ncu (same reduced workload, metrics $NCU_METRICS)"
  wall ncu --metrics "$NCU_METRICS" --csv --log-file "$OUT/ncu.csv" \
    $PY $EXAMPLE $SMALL_ARGS >"$OUT/ncu.log" 2>&1
  say "  ncu rows: $(grep -c '"' "$OUT/ncu.csv" 2>/dev/null || echo 0)"
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(env tests calibrate bare trace counters ncu)
say "# rooftrace gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) stages: ${stages[*]}"
status=0
for s in "${stages[@]}"; do
  if ! declare -F "stage_$s" >/dev/null; then say "unknown stage '$s'"; status=2; continue; fi
  "stage_$s" || { say "stage $s: FAILED"; status=1; }
done
exit $status
