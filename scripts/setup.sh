#!/usr/bin/env bash
# Installs every build and test dependency of rooftrace from Debian's
# packages, then configures and builds into build/. Idempotent: on a set-up,
# built tree it only re-runs the (incremental) build.
#
# The PostgreSQL server is installed for the tests only: they start a
# throwaway server of their own in a temporary folder (as `nobody` when run
# as root), so the Debian cluster the package may set up is never used.
#
# The CUDA Toolkit (with CUPTI) is not a Debian package of the right version:
# when it is installed under /usr/local/cuda, libinject and kernels/ are built
# too; without it the collector and analyzer are built and tested alone.
#
# Environment: BUILD_DIR (default build), BUILD_TYPE (default RelWithDebInfo),
# ROOFTRACE_WITH_CUDA (AUTO|ON|OFF, default AUTO), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config git python3
  protobuf-compiler libprotobuf-dev
  libboost-program-options-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3
  # The PostgreSQL store backend: libpq to build it, the server (initdb,
  # postgres) for the tests, which start a throwaway one of their own.
  libpq-dev postgresql postgresql-client
  zlib1g-dev libssl-dev libsimdjson-dev
  clang libclang-rt-14-dev
  chromium
  valgrind
  # The ops route's end-to-end test runs a real torch model (CPU build)
  # under profile --ops torch.
  python3-torch
  # collect --metrics-listen serves /metrics through prometheus-cpp; its
  # test scrapes it with a real Prometheus server (and checks the example
  # Grafana dashboard's queries with it).
  prometheus-cpp-dev prometheus
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  echo "setup: apt-get update"
  $SUDO apt-get update -qq
  # One line per package as it is set up (apt's own output is long).
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" 2>&1 |
    sed -un 's/^Setting up \([^ ]*\).*/setup:   set up \1/p; /^E: /p'
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    echo "setup: apt-get install failed (above); fix it and run scripts/setup.sh again" >&2
    exit 1
  fi
fi

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  echo "setup: configuring $BUILD_DIR/ (cmake)"
  cmake -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
    -DROOFTRACE_WITH_CUDA="${ROOFTRACE_WITH_CUDA:-AUTO}" >/dev/null
fi
echo "setup: building with $JOBS job(s) (a first build takes 10-15 minutes on 2 cores)"
# Progress: one line per finished target, plus warnings and errors; the
# per-file lines are hidden. The second build's status decides success.
cmake --build "$BUILD_DIR" -j "$JOBS" 2>&1 |
  grep --line-buffered -vE '^\[ *[0-9]+%\] (Building|Linking|Generating|Running)|^(Consolidate|Scanning)' |
  sed -u 's/^\[ *\([0-9]*\)%\] Built target /setup:   [\1%] built /' || true
cmake --build "$BUILD_DIR" -j "$JOBS" >/dev/null
echo "setup: built into $BUILD_DIR/: rooftrace is $BUILD_DIR/bin/rooftrace"
echo "setup: to type plain 'rooftrace', put it on your PATH:"
echo "         export PATH=\"$PWD/$BUILD_DIR/bin:\$PATH\""
