#!/usr/bin/env bash
# The main job in one command: set up and build, then
#  - on a machine with an NVIDIA GPU: profile the bundled example workload
#    (scripts/examples/hf_generate.py) and write the roofline report;
#  - without a GPU: analyze the bundled trace and write the roofline report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
RT="$BUILD_DIR/bin/rooftrace"
OUT_DIR=${OUT_DIR:-example-out}
mkdir -p "$OUT_DIR"

have_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU
}

if have_gpu && [ -f "$BUILD_DIR/lib/librooftrace_inject.so" ] &&
   [ -f scripts/examples/hf_generate.py ]; then
  echo "== GPU found: profiling scripts/examples/hf_generate.py"
  "$RT" profile -o "$OUT_DIR/example.sqlite" -- \
    python3 scripts/examples/hf_generate.py --batch-sizes 8 --truth "$OUT_DIR/truth.json"
  "$RT" analyze "$OUT_DIR/example.sqlite" --html "$OUT_DIR/report.html" \
    --svg "$OUT_DIR/roofline.svg"
else
  TRACE=""
  for t in tests/data/hf_generate_trace.rft tests/data/example.rft; do
    if [ -f "$t" ]; then TRACE=$t; break; fi
  done
  if [ -z "$TRACE" ]; then
    TRACE="$OUT_DIR/generated-example.rft"
    echo "== No GPU and no recorded trace: generating a synthetic one (GENERATED, not a GPU recording)"
    "$BUILD_DIR/bin/rooftrace_example_trace" -o "$TRACE"
  fi
  KIND="bundled"
  case "$TRACE" in "$OUT_DIR"/generated-*) KIND="SYNTHETIC (generated)";; esac
  echo "== No GPU here: analyzing the $KIND trace $TRACE"
  "$RT" analyze "$TRACE" --by family --html "$OUT_DIR/report.html" \
    --svg "$OUT_DIR/roofline.svg"
fi
echo "== Roofline report: $OUT_DIR/report.html (plot: $OUT_DIR/roofline.svg)"
