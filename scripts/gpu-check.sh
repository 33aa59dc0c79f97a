#!/usr/bin/env bash
# The device recipe: every GPU claim of rooftrace comes from this script, run
# on a machine with an NVIDIA GPU over a build made elsewhere (it builds
# nothing). Prepare with `scripts/setup.sh && scripts/pack-for-device.sh`,
# carry build/, then run e.g.
#   scripts/gpu-check.sh env tests calibrate bare trace counters ncu
# Every figure goes to one file, $OUT/gpu-check.txt ($OUT defaults to
# gpu-check-out/), with the stores, traces and logs beside it. Stages:
#   env        GPU, driver (R580+ for CUDA 13), each CUDA 13 library, and
#              libinject loading CUPTI 13 in a CUDA program and in PyTorch
#   tests      every test binary of the suite; the GPU tests must not skip
#   calibrate  rooftrace calibrate --quick -> profile.json
#   bare       the example workload without rooftrace (wall times, tokens)
#   trace      the example under `rooftrace profile` (trace mode): tokens,
#              phase score, kernels joined to their launches (its one
#              overhead sample is printed, not judged)
#   overhead   the example bare and under `rooftrace profile`, alternated
#              OVERHEAD_ROUNDS times: per batch the median ratio traced /
#              bare of wall, generating-thread CPU and GPU time with a
#              bootstrap 95% interval; PASS, FAIL or CANNOT JUDGE against
#              MAX_OVERHEAD_PCT (docs/overhead.md); with
#              OVERHEAD_TORCH_PROFILER=1 also torch.profiler's processes,
#              and rooftrace against them
#   launch     bench/launch_bench under scripts/launch_overhead.py: µs of
#              host CPU per launch added by trace mode and each of its
#              parts, against LAUNCH_BOUND_US and the Kineto-like set
#   counters   the reduced workload under `rooftrace profile --mode
#              counters`: tokens, counter rows, no fallback line, nothing
#              lost (no dropped record, unmatched counters or zero
#              duration), GPU time with counted DRAM bytes
#   counters_full  the full workload under counters mode's defaults: tokens,
#              generate time <= COUNTERS_MAX_SLOWDOWN x bare per batch,
#              nothing lost, GPU time with counted DRAM bytes (after bare;
#              not in the default list)
#   sampling   the full workload under `rooftrace profile --mode sampling`
#              (after bare and counters_full): tokens, no fallback line,
#              generate time <= SAMPLING_MAX_SLOWDOWN x bare per batch,
#              samples all arrived and none lost, SAMPLING_TIME_SHARE of
#              GPU time with PM-sampled DRAM bytes, and per family whose
#              kernels last SAMPLING_MIN_KERNEL_US or more, DRAM bytes per
#              launch within SAMPLING_BYTES_PCT of counters mode's
#   sampling_graphs  the full workload compiled into CUDA graphs
#              (--compile: torch.compile mode="reduce-overhead", static KV
#              cache) bare and under --mode sampling: tokens, samples, and
#              SAMPLING_TIME_SHARE of GPU time with PM-sampled DRAM bytes
#              (kernels inside graphs included)
#   ops        the example under `rooftrace profile --ops torch` (the live
#              ops route; after bare): tokens, the route not turned off,
#              operators received and tied to kernels, OPS_TIME_SHARE of
#              GPU time with FLOPs or bytes, and per (kernel, op, shape) the
#              figures of an import of a torch.profiler trace
#              (record_shapes) of the same workload run bare
#   ncu        the reduced workload under ncu with the same metrics,
#              imported with `rooftrace import --format ncu` and compared
#              per kernel with the counters store, for the kernels holding
#              95% of its GPU time
# Each criterion of docs/validation/README.md is checked and printed as a
# PASS or FAIL line (CANNOT JUDGE where a measurement's interval cannot
# resolve its bound); a stage fails when any of its criteria fails, the
# next stage still runs, and the script exits 1 when a stage failed, 3
# when none failed but one could not be judged.
#
# Libraries: rooftrace's own host libraries (protobuf, Boost, SQLite) come
# from $BUILD_DIR/devlibs/host through the dynamic loader's --library-path,
# never LD_LIBRARY_PATH, which `rooftrace profile` would hand on to the
# profiled program. CUDA 13's libraries (CUPTI, nvperf, cudart, cuBLAS) come
# from $BUILD_DIR/devlibs/cuda, else $CUDA13_LIB_PATH, else PyTorch's CUDA
# wheels; CUPTI reaches libinject alone through ROOFTRACE_CUPTI_PATH.
#
# Knobs (environment): BUILD_DIR, OUT, PYTHON (the workload's Python),
# CHECK_PYTHON (standard library only), WORKLOAD (default "$PYTHON
# scripts/examples/hf_generate.py"), SCORE_PHASES, NVIDIA_SMI, NCU,
# CUDA13_LIB_PATH, MIN_DRIVER (580), MAX_OVERHEAD_PCT (2), OVERHEAD_ROUNDS
# (10), OVERHEAD_ARGS (FULL_ARGS), OVERHEAD_METRIC (wall|cpu|gpu: the one
# judged; all three are printed), OVERHEAD_TORCH_PROFILER (0), LAUNCH_ROUNDS
# (10), LAUNCH_ARGS, LAUNCH_BOUND_US (1), NCU_FLOPS_PCT (1),
# NCU_BYTES_PCT (3), NCU_TIME_SHARE (0.95), COUNTERS_TIME_SHARE (0.99),
# COUNTERS_MAX_SLOWDOWN (1.5), SAMPLING_MAX_SLOWDOWN (1.05),
# SAMPLING_TIME_SHARE (0.95), SAMPLING_BYTES_PCT (10), SAMPLING_MIN_KERNEL_US
# (20), OPS_TIME_SHARE (0.90), SMALL_ARGS, FULL_ARGS, NCU_METRICS.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
case $BUILD_DIR in /*) B=$BUILD_DIR ;; *) B=$PWD/$BUILD_DIR ;; esac
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
REPORT="$OUT/gpu-check.txt"
RT="$B/bin/rooftrace"
INJECT="$B/lib/librooftrace_inject.so"
HOST_LIBS="$B/devlibs/host"
CUDA_LIBS="$B/devlibs/cuda"
PY=${PYTHON:-python3}
CHECK_PY=${CHECK_PYTHON:-python3}
WORKLOAD=${WORKLOAD:-"$PY scripts/examples/hf_generate.py"}
SCORE_PHASES=${SCORE_PHASES:-"$CHECK_PY scripts/score_phases.py"}
NVIDIA_SMI=${NVIDIA_SMI:-nvidia-smi}
NCU=${NCU:-ncu}
CUDA13_LIB_PATH=${CUDA13_LIB_PATH-/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib}
MIN_DRIVER=${MIN_DRIVER:-580}
MAX_OVERHEAD_PCT=${MAX_OVERHEAD_PCT:-2}
OVERHEAD_ROUNDS=${OVERHEAD_ROUNDS:-10}
OVERHEAD_METRIC=${OVERHEAD_METRIC:-wall}
OVERHEAD_TORCH_PROFILER=${OVERHEAD_TORCH_PROFILER:-0}
LAUNCH_ROUNDS=${LAUNCH_ROUNDS:-10}
LAUNCH_ARGS=${LAUNCH_ARGS:-}
LAUNCH_BOUND_US=${LAUNCH_BOUND_US:-1}
OPS_TIME_SHARE=${OPS_TIME_SHARE:-0.90}
NCU_FLOPS_PCT=${NCU_FLOPS_PCT:-1}
NCU_BYTES_PCT=${NCU_BYTES_PCT:-3}
NCU_TIME_SHARE=${NCU_TIME_SHARE:-0.95}
COUNTERS_TIME_SHARE=${COUNTERS_TIME_SHARE:-0.99}
COUNTERS_MAX_SLOWDOWN=${COUNTERS_MAX_SLOWDOWN:-1.5}
SAMPLING_MAX_SLOWDOWN=${SAMPLING_MAX_SLOWDOWN:-1.05}
SAMPLING_TIME_SHARE=${SAMPLING_TIME_SHARE:-0.95}
SAMPLING_BYTES_PCT=${SAMPLING_BYTES_PCT:-10}
SAMPLING_MIN_KERNEL_US=${SAMPLING_MIN_KERNEL_US:-20}
# The reduced workload for counters mode and ncu (every kernel is replayed).
# --deterministic: without it the example's token ids differ from one bare
# run to the next at batch > 1 (H100, 2026-11-24), and the token check
# would compare noise.
SMALL_ARGS=${SMALL_ARGS:---batch-sizes 8 --new-tokens 4 --layers 2 --warmup 1 --deterministic}
FULL_ARGS=${FULL_ARGS:---batch-sizes 1,8,32 --deterministic}
OVERHEAD_ARGS=${OVERHEAD_ARGS:-$FULL_ARGS}
# Hopper's default counter set (docs/counters.md), as ncu names them.
NCU_METRICS=${NCU_METRICS:-dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum,sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum,sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum,sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum,sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum,sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum,sm__ops_path_tensor_src_fp8_sparsity_off.sum}
# CUDA 13 libraries rooftrace needs on the device.
CUDA13_NEEDED=(libcupti.so.13 libnvperf_host.so libnvperf_target.so
               libcudart.so.13 libcublas.so.13 libcublasLt.so.13)
# Test binaries that must run, not skip, on a GPU.
source scripts/gpu_tests.sh  # from the repository root (cd above)

say() { echo "$*" | tee -a "$REPORT"; }
failures=0
unjudged=0
pass() { say "  PASS $*"; }
fail() { say "  FAIL $*"; failures=$((failures + 1)); }
cannot_judge() { say "  CANNOT JUDGE $*"; unjudged=$((unjudged + 1)); }
# judge FILE: the verdict lines a statistics helper wrote to FILE ("PASS
# text", "FAIL text", "CANNOT JUDGE text", "INFO text"), each counted.
judge() {
  local line
  while IFS= read -r line; do
    case $line in
      "PASS "*) pass "${line#PASS }" ;;
      "FAIL "*) fail "${line#FAIL }" ;;
      "CANNOT JUDGE "*) cannot_judge "${line#CANNOT JUDGE }" ;;
      *) say "  ${line#INFO }" ;;
    esac
  done <"$1"
}
# check "criterion" COMMAND...: PASS or FAIL by the command's status. What
# the command prints (the figures it computed) goes into the report first,
# whatever the verdict.
check() {
  local what=$1 out rc
  shift
  out=$("$@" 2>&1)
  rc=$?
  [ -n "$out" ] && say "$out"
  if [ $rc -eq 0 ]; then pass "$what"; else fail "$what"; fi
}
# The checks that compute figures (scripts/gpu_check_lib.py, tested on CPU
# by tests/scripts/gpu_check_lib_test.py).
lib() { "$CHECK_PY" scripts/gpu_check_lib.py "$@"; }
wall() {
  local s e rc
  s=$(date +%s%N)
  "$@"
  rc=$?
  e=$(date +%s%N)
  say "  wall: $(((e - s) / 1000000)) ms (rc $rc): $*"
  return $rc
}
sql() { "$CHECK_PY" - "$@" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print(con.execute(sys.argv[2]).fetchone()[0])
PY
}

# ---- CUDA 13 libraries

torch_lib_dirs() {
  "$PY" -c 'import glob, os, site
for d in site.getsitepackages():
    for p in glob.glob(os.path.join(d, "nvidia", "*", "lib")):
        print(p)' 2>/dev/null
}
# The path of CUDA 13 library $1, or nothing.
find_cuda_lib() {
  local name=$1 dir
  local IFS=:
  for dir in $CUDA_LIBS $CUDA13_LIB_PATH $TORCH_LIB_DIRS; do
    [ -n "$dir" ] && [ -e "$dir/$name" ] && { echo "$dir/$name"; return 0; }
  done
  return 1
}
resolve_cuda_libs() {
  [ -n "${RESOLVED:-}" ] && return
  RESOLVED=1
  TORCH_LIB_DIRS=$(torch_lib_dirs | paste -sd:)
  CUPTI_LIB=$(find_cuda_lib libcupti.so.13 || true)
  CUDA_DIRS=""
  local name path
  for name in "${CUDA13_NEEDED[@]}"; do
    path=$(find_cuda_lib "$name") || continue
    case ":$CUDA_DIRS:" in *":$(dirname "$path"):"*) ;;
      *) CUDA_DIRS=${CUDA_DIRS:+$CUDA_DIRS:}$(dirname "$path") ;; esac
  done
}
loads() { "$CHECK_PY" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$1" 2>/dev/null; }

# rooftrace's own process. Its host libraries through the loader's
# --library-path (LD_LIBRARY_PATH would reach the profiled program);
# libinject gets CUPTI 13 through ROOFTRACE_CUPTI_PATH, and `profile`
# finds it through ROOFTRACE_INJECT_LIB. $RT_LIBS adds library directories
# (the CUDA ones, for calibrate).
rt() {
  local libs=$HOST_LIBS${RT_LIBS:+:$RT_LIBS}
  local env=(ROOFTRACE_INJECT_LIB="$INJECT" ROOFTRACE_CUPTI_PATH="${CUPTI_LIB:-}")
  if [ "$(head -c 4 "$RT" 2>/dev/null)" = $'\x7fELF' ]; then
    local loader
    loader=$(readelf -l "$RT" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]/\1/p')
    env "${env[@]}" "${loader:-/lib64/ld-linux-x86-64.so.2}" \
      --library-path "$libs" "$RT" "$@"
  else
    env "${env[@]}" "$RT" "$@"
  fi
}
# Our own test programs and apps: everything on their library path.
own() { LD_LIBRARY_PATH="$HOST_LIBS:$CUDA_DIRS" ROOFTRACE_CUPTI_PATH="${CUPTI_LIB:-}" "$@"; }
profile_flag() { [ -f "$OUT/profile.json" ] && echo "--device-profile $OUT/profile.json"; }

# ---- stages

stage_env() {
  say "== env"
  resolve_cuda_libs
  local gpu driver
  gpu=$("$NVIDIA_SMI" --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1)
  say "  GPU: $gpu"
  driver=$(echo "$gpu" | head -1 | awk -F', *' '{print $2}')
  if [[ "${driver%%.*}" =~ ^[0-9]+$ ]] && ((${driver%%.*} >= MIN_DRIVER)); then
    pass "driver $driver is R$MIN_DRIVER or newer (CUDA 13 needs it)"
  else
    fail "driver '${driver:-none}' is older than R$MIN_DRIVER or unreadable: CUDA 13's libraries and CUPTI need an R$MIN_DRIVER+ driver; install one"
  fi
  say "  $( (nvcc --version | tail -1) 2>&1 | head -1); $( ("$NCU" --version | tail -1) 2>&1 | head -1)"
  local versions
  if versions=$("$PY" -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' 2>&1); then
    pass "PyTorch and transformers import: $versions"
  else
    fail "PyTorch / transformers do not import with $PY: $(echo "$versions" | tail -1)"
  fi
  local name path
  for name in "${CUDA13_NEEDED[@]}"; do
    if ! path=$(find_cuda_lib "$name"); then
      fail "$name not found in devlibs/cuda, CUDA13_LIB_PATH or PyTorch's CUDA wheels: run scripts/pack-for-device.sh on the build machine, or set CUDA13_LIB_PATH"
    elif ! loads "$path"; then
      fail "$path does not load"
    else
      pass "$name: $path"
    fi
  done
  if [ -n "$CUPTI_LIB" ]; then
    check "libnvperf_host.so beside $CUPTI_LIB (CUPTI loads it from its own directory)" \
      test -e "$(dirname "$CUPTI_LIB")/libnvperf_host.so"
  fi
  local missing
  missing=$(LD_LIBRARY_PATH="$HOST_LIBS:$CUDA_DIRS" ldd "$RT" "$B"/lib/*.so 2>&1 | grep "not found")
  check "every library of rooftrace's binaries resolves${missing:+: $missing}" test -z "$missing"
  # libinject loading CUPTI 13 inside a CUDA program and inside PyTorch:
  # without it every trace has no kernels.
  local probe="$B/tests/libinject_apps/rt_gpu_kernels_app" log
  log=$(CUDA_INJECTION64_PATH="$INJECT" ROOFTRACE_LOG=info \
        ROOFTRACE_SINK="file:$OUT/env_probe_app.rft" own "$probe" 2>&1)
  echo "$log" >"$OUT/env_probe_app.log"
  check "libinject attaches CUPTI 13 in rt_gpu_kernels_app ($(echo "$log" | grep -o 'CUPTI [0-9]* attached' | head -1))" \
    grep -qE "CUPTI 13[0-9]{4} attached" <<<"$log"
  log=$(CUDA_INJECTION64_PATH="$INJECT" ROOFTRACE_CUPTI_PATH="${CUPTI_LIB:-}" \
        ROOFTRACE_LOG=info ROOFTRACE_SINK="file:$OUT/env_probe_torch.rft" \
        "$PY" -c 'import torch; a = torch.ones(512, 512, device="cuda"); print((a @ a).sum().item())' 2>&1)
  echo "$log" >"$OUT/env_probe_torch.log"
  check "libinject attaches CUPTI 13 in PyTorch (rooftrace: $(echo "$log" | grep -o 'CUPTI [0-9]* attached' | head -1))" \
    grep -qE "CUPTI 13[0-9]{4} attached" <<<"$log"
  rm -f "$OUT/env_probe_torch.sqlite"
  rt collect --ingest "$OUT/env_probe_torch.rft" --store "$OUT/env_probe_torch.sqlite" >>"$OUT/env_probe_torch.log" 2>&1
  local kernels
  kernels=$(sql "$OUT/env_probe_torch.sqlite" "SELECT COUNT(*) FROM kernels" 2>/dev/null)
  check "PyTorch's kernels are recorded (${kernels:-0} kernels)" test "${kernels:-0}" -gt 0
}

stage_tests() {
  say "== tests (GPU tests run here instead of skipping)"
  resolve_cuda_libs
  local t name log skipped
  # A GPU test that was not built or not carried passes nothing.
  check "every expected GPU test binary is present (${GPU_TESTS[*]})" \
    lib tests "$B/tests" "${GPU_TESTS[@]}"
  for t in "$B"/tests/*_test; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    log="$OUT/$name.log"
    if own "$t" --gtest_brief=1 >"$log" 2>&1; then
      skipped=$(grep -c '\[  SKIPPED \]' "$log")
      if [[ " ${GPU_TESTS[*]} " == *" $name "* ]] && ((skipped > 0)); then
        fail "$name skipped $skipped test(s) on a GPU machine (log: $name.log)"
        grep '\[  SKIPPED \]' "$log" | head -5 | tee -a "$REPORT"
      else
        pass "$name ($skipped skipped)"
      fi
    else
      fail "$name (log: $name.log)"
      tail -20 "$log" | tee -a "$REPORT"
    fi
  done
}

stage_calibrate() {
  say "== calibrate"
  resolve_cuda_libs
  RT_LIBS=$CUDA_DIRS wall rt calibrate --quick -o "$OUT/profile.json" 2>&1 | tee "$OUT/calibrate.log" | tee -a "$REPORT"
  check "rooftrace calibrate --quick succeeds" test "${PIPESTATUS[0]}" -eq 0
  check "profile.json is a device profile" "$CHECK_PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$OUT/profile.json"
}

stage_bare() {
  say "== bare workload"
  wall $WORKLOAD $FULL_ARGS --truth "$OUT/truth_bare.json" 2>&1 | tee "$OUT/bare.log" | tee -a "$REPORT"
  check "the bare workload runs" test "${PIPESTATUS[0]}" -eq 0
}

# Token ids of two truth files are the same (rooftrace changes nothing).
same_tokens() {
  "$CHECK_PY" - "$1" "$2" <<'PY'
import json, sys
try:
    a, b = (json.load(open(p))["token_ids_sha256"] for p in sys.argv[1:3])
except (OSError, KeyError, ValueError) as e:
    sys.exit(f"  {e}")
print(f"  token ids sha256: {a[:16]} / {b[:16]}")
sys.exit(0 if a == b else 1)
PY
}

# The one bare / traced sample of the bare and trace stages, printed: one
# process against one cannot judge a few percent on a VM (issue 26); the
# overhead stage judges.
overhead_sample() {
  "$CHECK_PY" - "$1" "$2" <<'PY'
import json, sys
try:
    bare, traced = (json.load(open(p)) for p in sys.argv[1:3])
except (OSError, ValueError) as e:
    sys.exit(f"  {e}")
for b, t in zip(bare["runs"], traced["runs"]):
    pct = 100 * (t["generate_ms"] / b["generate_ms"] - 1)
    print(f"  one sample, batch {b['batch']}: {b['generate_ms']:.1f} ms bare, "
          f"{t['generate_ms']:.1f} ms traced: {pct:+.2f}% (not judged: one "
          "process against one; see the overhead stage)")
PY
}

# overhead_verdicts OUTFILE METRIC BOUND_PCT TORCH(0|1) ROUND_FILES...:
# each round's truth files "bare.json:traced.json[:torch.json]"; writes
# verdict lines for judge(). Per batch and per metric (wall, cpu, gpu), the
# median of per-round ratios with a bootstrap 95% interval
# (scripts/overhead_stats.py); METRIC is judged against the bound, the
# others are printed.
overhead_verdicts() {
  "$CHECK_PY" - "$@" <<'PY'
import json, sys
sys.path.insert(0, "scripts")
import overhead_stats as st
out, metric, bound_pct, torch = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
keys = {"wall": "generate_ms", "cpu": "generate_cpu_ms", "gpu": "generate_gpu_ms"}
lines = []
rounds = []
for spec in sys.argv[5:]:
    try:
        rounds.append([json.load(open(p)) for p in spec.split(":")])
    except (OSError, ValueError) as e:
        lines.append(f"INFO a round is left out: {e}")
def per_batch(doc):
    return {r["batch"]: r for r in doc.get("runs", [])}
batches = sorted(per_batch(rounds[0][0])) if rounds else []
if len(rounds) < 2 or not batches:
    lines.append(f"CANNOT JUDGE overhead: {len(rounds)} complete round(s) "
                 "(at least 2 needed, 10 or more to judge a few percent)")
bound = 1 + bound_pct / 100
for b in batches:
    for name, key in keys.items():
        pairs = [(per_batch(r[0]).get(b, {}).get(key), per_batch(r[1]).get(b, {}).get(key))
                 for r in rounds]
        pairs = [(x, y) for x, y in pairs if x and y]
        if len(pairs) < 2:
            lines.append(f"{'CANNOT JUDGE' if name == metric else 'INFO'} batch {b} "
                         f"{name}: {len(pairs)} round(s) with {key}")
            continue
        s = st.ratio_summary([x for x, _ in pairs], [y for _, y in pairs], bound)
        text = st.format_ratio(f"trace-mode overhead, batch {b}, {name} time", s)
        if name == metric:
            lines.append(f"{s['verdict']} {text}")
        else:
            lines.append(f"INFO {text}: {s['verdict']} (not the judged metric)")
    if torch:
        key = keys[metric]
        pairs = [(per_batch(r[2]).get(b, {}).get(key), per_batch(r[1]).get(b, {}).get(key))
                 for r in rounds if len(r) > 2]
        pairs = [(x, y) for x, y in pairs if x and y]
        if len(pairs) >= 2:
            s = st.ratio_summary([x for x, _ in pairs], [y for _, y in pairs], 1.0,
                                 margin=bound_pct / 100)
            text = st.format_ratio(f"rooftrace against torch.profiler, batch {b}, "
                                   f"{metric} time", s, "torch.profiler", "rooftrace")
            lines.append(f"{s['verdict']} {text} (at or below torch.profiler)")
        else:
            lines.append(f"CANNOT JUDGE rooftrace against torch.profiler, batch {b}: "
                         f"{len(pairs)} round(s)")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
PY
}

stage_trace() {
  say "== trace mode"
  resolve_cuda_libs
  wall rt profile -o "$OUT/trace.sqlite" $(profile_flag) -- \
    $WORKLOAD $FULL_ARGS --truth "$OUT/truth_trace.json" 2>&1 | tee "$OUT/trace.log" | tail -60 | tee -a "$REPORT"
  check "rooftrace profile exits with the workload's code 0" test "${PIPESTATUS[0]}" -eq 0
  check "identical token ids bare and traced" same_tokens "$OUT/truth_bare.json" "$OUT/truth_trace.json"
  $SCORE_PHASES "$OUT/trace.sqlite" "$OUT/truth_trace.json" --json "$OUT/score_trace.json" 2>&1 | tee -a "$REPORT"
  check "phase score >= 99% of GPU time per phase (score_phases.py)" test "${PIPESTATUS[0]}" -eq 0
  [ -f "$OUT/truth_bare.json" ] &&
    overhead_sample "$OUT/truth_bare.json" "$OUT/truth_trace.json" 2>&1 | tee -a "$REPORT"
  local kernels joined
  kernels=$(sql "$OUT/trace.sqlite" "SELECT COUNT(*) FROM kernels" 2>/dev/null)
  joined=$(sql "$OUT/trace.sqlite" "SELECT COUNT(*) FROM kernels WHERE api_start_ns IS NOT NULL" 2>/dev/null)
  check "kernels recorded (${kernels:-0})" test "${kernels:-0}" -gt 0
  check "kernels joined to their launch: ${joined:-0} of ${kernels:-0} (>= 99%)" \
    test $((${joined:-0} * 100)) -ge $((${kernels:-0} * 99))
  rt analyze "$OUT/trace.sqlite" --by family --top 25 2>&1 | tee -a "$REPORT"
  rt analyze "$OUT/trace.sqlite" --by phase 2>&1 | tee -a "$REPORT"
  rt analyze "$OUT/trace.sqlite" --html "$OUT/report.html" --svg "$OUT/roofline.svg" >/dev/null 2>&1
  check "analyze writes the HTML report and the roofline" test -s "$OUT/report.html" -a -s "$OUT/roofline.svg"
}

# The live ops route (issue 35): the example under --ops torch, then the
# same workload bare under torch.profiler (record_shapes) imported; the
# two runs' figures compared per (kernel, op, shape). Needs the bare
# stage's truth file (same FULL_ARGS).
stage_ops() {
  say "== ops route (profile --ops torch: $FULL_ARGS)"
  resolve_cuda_libs
  wall rt profile --ops torch -o "$OUT/ops.sqlite" $(profile_flag) -- \
    $WORKLOAD $FULL_ARGS --truth "$OUT/truth_ops.json" 2>&1 | tee "$OUT/ops.log" | tail -60 | tee -a "$REPORT"
  check "rooftrace profile --ops torch exits with the workload's code 0" test "${PIPESTATUS[0]}" -eq 0
  check "identical token ids bare and with the ops route" same_tokens "$OUT/truth_bare.json" "$OUT/truth_ops.json"
  local off
  off=$(grep -E "rooftrace: ops route off" "$OUT/ops.log" | head -3)
  check "the ops route stayed on${off:+: $off}" test -z "$off"
  wall $WORKLOAD $FULL_ARGS --torch-trace "$OUT/torch_trace.json" \
    --truth "$OUT/truth_torch_trace.json" >"$OUT/torch_trace.log" 2>&1
  check "the workload runs bare under torch.profiler (record_shapes)" test $? -eq 0
  rt import "$OUT/torch_trace.json" -o "$OUT/ops_import.sqlite" $(profile_flag) 2>&1 | tail -20 | tee -a "$REPORT"
  check "rooftrace import of the torch.profiler trace" test "${PIPESTATUS[0]}" -eq 0
  check "ops route: operators tied to kernels, >= $OPS_TIME_SHARE of GPU time with figures, figures equal to the import's (gpu_check_lib.py ops)" \
    lib ops "$OUT/ops.sqlite" "$OUT/ops_import.sqlite" "$OPS_TIME_SHARE"
  rt analyze "$OUT/ops.sqlite" --by op --top 25 2>&1 | tee -a "$REPORT"
}

# Bare and traced processes alternated OVERHEAD_ROUNDS times (the first of
# each round alternates too), each writing its truth file with wall, CPU
# and GPU time per batch; then per batch the median ratio and its interval.
stage_overhead() {
  say "== overhead ($OVERHEAD_ROUNDS alternated rounds of bare and traced: $OVERHEAD_ARGS; judged: $OVERHEAD_METRIC time, bound $MAX_OVERHEAD_PCT%)"
  resolve_cuda_libs
  local dir="$OUT/overhead" r order name rc specs=() spec ok kernels
  case $OVERHEAD_METRIC in
    wall|cpu|gpu) ;;
    *) fail "OVERHEAD_METRIC='$OVERHEAD_METRIC' is not valid: use wall, cpu or gpu"
       return ;;
  esac
  if ! [[ $OVERHEAD_ROUNDS =~ ^[0-9]+$ ]] || ((OVERHEAD_ROUNDS < 2)); then
    fail "OVERHEAD_ROUNDS='$OVERHEAD_ROUNDS' is not valid: give 10 or more (2 at the least)"
    return
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  for ((r = 1; r <= OVERHEAD_ROUNDS; r++)); do
    order="bare traced"
    ((r % 2 == 0)) && order="traced bare"
    [ "$OVERHEAD_TORCH_PROFILER" = 1 ] && order="$order torch"
    ok=1
    for name in $order; do
      case $name in
        bare) $WORKLOAD $OVERHEAD_ARGS --truth "$dir/bare_$r.json" >"$dir/bare_$r.log" 2>&1 ;;
        torch) $WORKLOAD $OVERHEAD_ARGS --torch-profiler --truth "$dir/torch_$r.json" >"$dir/torch_$r.log" 2>&1 ;;
        traced) rm -f "$dir/traced.sqlite"  # one run's store kept: disk
                rt profile -o "$dir/traced.sqlite" -- \
                  $WORKLOAD $OVERHEAD_ARGS --truth "$dir/traced_$r.json" >"$dir/traced_$r.log" 2>&1 ;;
      esac
      rc=$?
      if [ $rc -ne 0 ]; then
        say "  round $r: $name exited $rc (log: overhead/${name}_$r.log)"
        ok=0
      elif [ "$name" = traced ]; then
        # A traced run that recorded no kernel measured nothing.
        kernels=$(sql "$dir/traced.sqlite" "SELECT COUNT(*) FROM kernels" 2>/dev/null)
        if ! [ "${kernels:-0}" -gt 0 ] 2>/dev/null; then
          say "  round $r: the traced run recorded no kernel (log: overhead/traced_$r.log)"
          ok=0
        fi
      fi
    done
    spec="$dir/bare_$r.json:$dir/traced_$r.json"
    [ "$OVERHEAD_TORCH_PROFILER" = 1 ] && spec="$spec:$dir/torch_$r.json"
    [ $ok = 1 ] && specs+=("$spec")
    say "  round $r/$OVERHEAD_ROUNDS ($order): $([ $ok = 1 ] && echo done || echo left out)"
  done
  overhead_verdicts "$dir/verdicts.txt" "$OVERHEAD_METRIC" "$MAX_OVERHEAD_PCT" \
    "$OVERHEAD_TORCH_PROFILER" "${specs[@]}" 2>&1 | tee -a "$REPORT"
  if [ -s "$dir/verdicts.txt" ]; then
    judge "$dir/verdicts.txt"
  else
    fail "the overhead statistics wrote no verdict (above)"
  fi
}

# The launch microbenchmark (bench/launch_bench) bare, under trace mode with
# each part off in turn, and Kineto-like, alternated LAUNCH_ROUNDS times.
stage_launch() {
  say "== launch ($LAUNCH_ROUNDS alternated rounds of launch_bench; bound $LAUNCH_BOUND_US µs per launch)"
  resolve_cuda_libs
  local bench="$B/bench/launch_bench" rc
  if [ ! -x "$bench" ]; then
    fail "$bench not found: build it (cmake --build BUILD --target launch_bench) and carry bench/"
    return
  fi
  # The benchmark needs CUDA's libraries only (libinject links nothing of
  # rooftrace's host libraries): they stay off the Python's library path.
  LD_LIBRARY_PATH="$CUDA_DIRS" ROOFTRACE_CUPTI_PATH="${CUPTI_LIB:-}" \
    "$CHECK_PY" scripts/launch_overhead.py --bench "$bench" --inject "$INJECT" \
    --rounds "$LAUNCH_ROUNDS" --bound-us "$LAUNCH_BOUND_US" \
    --json "$OUT/launch_overhead.json" $LAUNCH_ARGS 2>&1 | tee "$OUT/launch_overhead.txt"
  rc=${PIPESTATUS[0]}
  # Shown as it ran; into the report without the verdicts, which judge()
  # says and counts.
  grep -v -E "^  (PASS|FAIL|CANNOT JUDGE) " "$OUT/launch_overhead.txt" >>"$REPORT"
  grep -E "^  (PASS|FAIL|CANNOT JUDGE) " "$OUT/launch_overhead.txt" | sed 's/^  //' >"$OUT/launch_verdicts.txt"
  judge "$OUT/launch_verdicts.txt"
  if [ ! -s "$OUT/launch_verdicts.txt" ]; then
    fail "launch_overhead.py gave no verdict (exit $rc; log: launch_overhead.txt)"
  elif [ $rc -eq 3 ] && ! grep -q "^CANNOT JUDGE" "$OUT/launch_verdicts.txt"; then
    # Every line passed, but on fewer rounds than asked: a run failed.
    cannot_judge "launch_overhead.py is incomplete: a benchmark run failed (above)"
  fi
}

stage_counters() {
  say "== counters mode (reduced workload: $SMALL_ARGS)"
  resolve_cuda_libs
  wall $WORKLOAD $SMALL_ARGS --truth "$OUT/truth_small_bare.json" >"$OUT/small_bare.log" 2>&1
  check "the reduced workload runs bare" test $? -eq 0
  wall rt profile --mode counters -o "$OUT/counters.sqlite" $(profile_flag) -- \
    $WORKLOAD $SMALL_ARGS --truth "$OUT/truth_counters.json" 2>&1 | tee "$OUT/counters.log" | tail -40 | tee -a "$REPORT"
  check "rooftrace profile --mode counters exits with the workload's code 0" test "${PIPESTATUS[0]}" -eq 0
  check "identical token ids bare and under counters mode" same_tokens "$OUT/truth_small_bare.json" "$OUT/truth_counters.json"
  local fallback rows sessions
  fallback=$(grep -E "counters mode off|using trace mode" "$OUT/counters.log" | head -3)
  check "no fallback line${fallback:+: $fallback}" test -z "$fallback"
  sessions=$(sql "$OUT/counters.sqlite" "SELECT COUNT(*) FROM sessions WHERE mode = 'counters'" 2>/dev/null)
  check "a session in counters mode (${sessions:-0})" test "${sessions:-0}" -gt 0
  rows=$(sql "$OUT/counters.sqlite" "SELECT COUNT(*) FROM kernels WHERE flops_source = 'counters' OR bytes_source = 'counters'" 2>/dev/null)
  check "counter rows present (${rows:-0} kernels with counters)" test "${rows:-0}" -gt 0
  local sampled
  sampled=$(sql "$OUT/counters.sqlite" "SELECT COUNT(*) FROM kernels WHERE bytes_source LIKE 'counters (sampled%'" 2>/dev/null)
  say "  kernels given their signature's sampled counters: ${sampled:-0}"
  # Nothing lost (issue 25): no record dropped by CUPTI or libinject, no
  # activity buffer refused, no kernel without timestamps or with a zero
  # duration, no counters without their kernel, and DRAM bytes from
  # counters for COUNTERS_TIME_SHARE of the GPU time. A statistic the
  # store lacks fails.
  check "nothing lost and ${COUNTERS_TIME_SHARE} of GPU time counted (gpu_check_lib.py counters)" \
    lib counters "$OUT/counters.sqlite" "$COUNTERS_TIME_SHARE"
  rt analyze "$OUT/counters.sqlite" --by kernel --top 30 2>&1 | tee -a "$REPORT"
  rt export "$OUT/counters.sqlite" --csv "$OUT/counters_csv" >/dev/null 2>&1
}

# The full example under counters mode's defaults (sampled counters, one
# pass without replay): issue 25's acceptance. Needs the bare stage's
# truth file (same FULL_ARGS).
stage_counters_full() {
  say "== counters mode, full workload ($FULL_ARGS)"
  resolve_cuda_libs
  check "the bare stage ran first (truth_bare.json)" test -s "$OUT/truth_bare.json"
  wall rt profile --mode counters -o "$OUT/counters_full.sqlite" $(profile_flag) -- \
    $WORKLOAD $FULL_ARGS --truth "$OUT/truth_counters_full.json" 2>&1 | tee "$OUT/counters_full.log" | tail -40 | tee -a "$REPORT"
  check "rooftrace profile --mode counters exits with the workload's code 0" test "${PIPESTATUS[0]}" -eq 0
  check "identical token ids bare and under counters mode" same_tokens "$OUT/truth_bare.json" "$OUT/truth_counters_full.json"
  check "generate time under counters mode <= ${COUNTERS_MAX_SLOWDOWN}x bare per batch" \
    lib slowdown "$OUT/truth_bare.json" "$OUT/truth_counters_full.json" "$COUNTERS_MAX_SLOWDOWN"
  local sampled
  sampled=$(sql "$OUT/counters_full.sqlite" "SELECT COUNT(*) FROM kernels WHERE bytes_source LIKE 'counters (sampled%'" 2>/dev/null)
  say "  kernels given their signature's sampled counters: ${sampled:-0}"
  check "nothing lost and ${COUNTERS_TIME_SHARE} of GPU time counted (gpu_check_lib.py counters)" \
    lib counters "$OUT/counters_full.sqlite" "$COUNTERS_TIME_SHARE"
  rt analyze "$OUT/counters_full.sqlite" --by family --top 25 2>&1 | tee -a "$REPORT"
}

# Sampling mode (PM sampling) on the full example: issue 25 item 4's
# acceptance. Needs the bare stage's truth file and the counters_full
# stage's store (same FULL_ARGS).
stage_sampling() {
  say "== sampling mode, full workload ($FULL_ARGS)"
  resolve_cuda_libs
  check "the bare stage ran first (truth_bare.json)" test -s "$OUT/truth_bare.json"
  check "the counters_full stage ran first (counters_full.sqlite)" test -s "$OUT/counters_full.sqlite"
  wall rt profile --mode sampling -o "$OUT/sampling.sqlite" $(profile_flag) -- \
    $WORKLOAD $FULL_ARGS --truth "$OUT/truth_sampling.json" 2>&1 | tee "$OUT/sampling.log" | tail -40 | tee -a "$REPORT"
  check "rooftrace profile --mode sampling exits with the workload's code 0" test "${PIPESTATUS[0]}" -eq 0
  check "identical token ids bare and under sampling mode" same_tokens "$OUT/truth_bare.json" "$OUT/truth_sampling.json"
  local fallback sessions
  fallback=$(grep -E "sampling mode off|sampling mode:.*using trace mode" "$OUT/sampling.log" | head -3)
  check "no fallback line${fallback:+: $fallback}" test -z "$fallback"
  sessions=$(sql "$OUT/sampling.sqlite" "SELECT COUNT(*) FROM sessions WHERE mode = 'sampling'" 2>/dev/null)
  check "a session in sampling mode (${sessions:-0})" test "${sessions:-0}" -gt 0
  check "generate time under sampling mode <= ${SAMPLING_MAX_SLOWDOWN}x bare per batch" \
    lib slowdown "$OUT/truth_bare.json" "$OUT/truth_sampling.json" "$SAMPLING_MAX_SLOWDOWN"
  check "samples all arrived, none lost, ${SAMPLING_TIME_SHARE} of GPU time with PM-sampled DRAM bytes (gpu_check_lib.py sampling)" \
    lib sampling "$OUT/sampling.sqlite" "$SAMPLING_TIME_SHARE"
  check "per-family DRAM bytes within ${SAMPLING_BYTES_PCT}% of counters mode, families of ${SAMPLING_MIN_KERNEL_US} us kernels or longer (gpu_check_lib.py sampling_vs_counters)" \
    lib sampling_vs_counters "$OUT/sampling.sqlite" "$OUT/counters_full.sqlite" "$SAMPLING_BYTES_PCT" "$SAMPLING_MIN_KERNEL_US"
  rt analyze "$OUT/sampling.sqlite" --by family --top 25 2>&1 | tee -a "$REPORT"
}

# Sampling mode inside CUDA graphs: the example compiled with
# torch.compile(mode="reduce-overhead"), bare and sampled.
stage_sampling_graphs() {
  say "== sampling mode, CUDA graphs ($FULL_ARGS --compile)"
  resolve_cuda_libs
  wall $WORKLOAD $FULL_ARGS --compile --truth "$OUT/truth_graphs_bare.json" >"$OUT/graphs_bare.log" 2>&1
  check "the compiled workload runs bare" test $? -eq 0
  wall rt profile --mode sampling -o "$OUT/sampling_graphs.sqlite" $(profile_flag) -- \
    $WORKLOAD $FULL_ARGS --compile --truth "$OUT/truth_graphs_sampling.json" 2>&1 | tee "$OUT/sampling_graphs.log" | tail -40 | tee -a "$REPORT"
  check "rooftrace profile --mode sampling exits with the workload's code 0" test "${PIPESTATUS[0]}" -eq 0
  check "identical token ids bare and under sampling mode (CUDA graphs)" same_tokens "$OUT/truth_graphs_bare.json" "$OUT/truth_graphs_sampling.json"
  local graph_kernels
  graph_kernels=$(sql "$OUT/sampling_graphs.sqlite" "SELECT COUNT(*) FROM kernels WHERE graph_id IS NOT NULL AND graph_id <> 0" 2>/dev/null)
  check "kernels ran inside CUDA graphs (${graph_kernels:-0})" test "${graph_kernels:-0}" -gt 0
  check "samples all arrived, none lost, ${SAMPLING_TIME_SHARE} of GPU time with PM-sampled DRAM bytes, graph kernels included (gpu_check_lib.py sampling)" \
    lib sampling "$OUT/sampling_graphs.sqlite" "$SAMPLING_TIME_SHARE"
  rt analyze "$OUT/sampling_graphs.sqlite" --by family --top 25 2>&1 | tee -a "$REPORT"
}

stage_ncu() {
  say "== ncu (same reduced workload, metrics $NCU_METRICS)"
  resolve_cuda_libs
  # Caches and clocks as the Range Profiler leaves them: ncu's defaults
  # flush the caches and lock base clocks before every kernel.
  wall "$NCU" --metrics "$NCU_METRICS" --cache-control none --clock-control none \
    --replay-mode kernel --print-kernel-base mangled --csv --log-file "$OUT/ncu.csv" \
    $WORKLOAD $SMALL_ARGS >"$OUT/ncu.log" 2>&1
  check "ncu runs the reduced workload" test $? -eq 0
  rm -f "$OUT/ncu.sqlite"
  rt import --format ncu "$OUT/ncu.csv" -o "$OUT/ncu.sqlite" >>"$OUT/ncu.log" 2>&1
  check "rooftrace import --format ncu reads ncu's CSV" test $? -eq 0
  # Per kernel name, for the kernels holding NCU_TIME_SHARE of the counters
  # run's whole GPU time (memory-bound ones included): DRAM bytes within
  # NCU_BYTES_PCT, FLOPs within NCU_FLOPS_PCT where either side has any.
  check "per-kernel agreement with ncu (FLOPs within $NCU_FLOPS_PCT%, DRAM bytes within $NCU_BYTES_PCT%, kernels holding $NCU_TIME_SHARE of GPU time)" \
    lib ncu "$OUT/counters.sqlite" "$OUT/ncu.sqlite" "$NCU_FLOPS_PCT" "$NCU_BYTES_PCT" "$NCU_TIME_SHARE"
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(env tests calibrate bare trace overhead launch counters ncu)
say "# rooftrace gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) stages: ${stages[*]}"
status=0
failed=()
unjudged_stages=()
for s in "${stages[@]}"; do
  if ! declare -F "stage_$s" >/dev/null; then
    say "unknown stage '$s' (stages: env tests calibrate bare trace ops overhead launch counters counters_full sampling sampling_graphs ncu)"
    status=2
    continue
  fi
  failures=0
  unjudged=0
  "stage_$s"
  if ((failures > 0)); then
    say "stage $s: FAILED ($failures criterion/criteria)"
    failed+=("$s")
    [ $status -eq 0 ] && status=1
  elif ((unjudged > 0)); then
    say "stage $s: CANNOT JUDGE ($unjudged criterion/criteria; not passed)"
    unjudged_stages+=("$s")
  else
    say "stage $s: passed"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  say "# result: FAILED: ${failed[*]}${unjudged_stages[*]:+; cannot judge: ${unjudged_stages[*]}}"
elif [ ${#unjudged_stages[@]} -gt 0 ]; then
  say "# result: incomplete: cannot judge: ${unjudged_stages[*]}"
  [ $status -eq 0 ] && status=3
else
  say "# result: every stage passed"
fi
exit $status
