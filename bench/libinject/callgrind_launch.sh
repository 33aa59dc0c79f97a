#!/bin/sh
# Instructions libinject's own code executes per launch, counted by
# callgrind inside CuptiTracer::OnCallback (inclusive: the queue push, the
# clock reads, the thread state), for the launch path of libinject_bench:
# per iteration one runtime launch with its nested driver call (4 callbacks)
# and one driver launch (2 callbacks).
#
#   bench/libinject/callgrind_launch.sh BUILD_DIR [LAUNCHES]
#
# Prints the instructions per iteration and per launch. Exit 2 when the
# benchmark or valgrind is missing.
set -eu
build=${1:?usage: callgrind_launch.sh BUILD_DIR [LAUNCHES]}
n=${2:-20000}
bench="$build/bench/libinject_bench"
if [ ! -x "$bench" ]; then
  echo "callgrind_launch.sh: $bench not found: build it with" \
       "cmake --build $build --target libinject_bench" >&2
  exit 2
fi
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
  echo "callgrind_launch.sh: valgrind (callgrind) not found: install the" \
       "valgrind package (scripts/setup.sh)" >&2
  exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
  --toggle-collect='rooftrace::inject::CuptiTracer::OnCallback*' \
  "$bench" "$n" launch-path >"$out/log" 2>&1 || {
  cat "$out/log" >&2
  exit 1
}
total=$(callgrind_annotate "$out/cg.out" 2>/dev/null |
  awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
if [ -z "$total" ]; then
  echo "callgrind_launch.sh: no instruction total in callgrind's output" >&2
  exit 1
fi
awk -v t="$total" -v n="$n" 'BEGIN {
  printf "libinject OnCallback: %d instructions for %d iterations\n", t, n
  printf "  %.1f per iteration (runtime launch + nested driver call, and a driver launch)\n", t / n
  printf "  %.1f per launch (2 launches per iteration)\n", t / (2 * n)
}'
