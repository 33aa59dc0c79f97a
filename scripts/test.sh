#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite through ctest. The last line
# is ctest's summary. GPU tests skip without a GPU (scripts/gpu-check.sh runs
# them on a machine that has one).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
exec ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${JOBS:-$(nproc)}" \
  --timeout 600
