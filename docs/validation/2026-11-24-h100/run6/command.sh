#!/usr/bin/env bash
# Device call 6: counters mode with the sender's debug log (why activity
# buffers run out) and the ncu stage, on a tiny workload.
set -u
G=/tmp/gc6; mkdir -p $G
export SMALL_ARGS="--batch-sizes 8 --new-tokens 2 --layers 1 --warmup 0 --deterministic"
printf '#!/bin/sh\nexec ncu -c 400 "$@"\n' > /tmp/ncu_c; chmod +x /tmp/ncu_c
ROOFTRACE_LOG=debug OUT=$G BUILD_DIR=build-dev timeout 90 scripts/gpu-check.sh counters
NCU=/tmp/ncu_c OUT=$G BUILD_DIR=build-dev timeout 170 scripts/gpu-check.sh ncu
grep -E "counters: evaluated|activity buffer" $G/counters.log | head -40 > $G/debug_lines.txt
grep -c "counters: evaluated" $G/counters.log >> $G/debug_lines.txt
gzip -k $G/ncu.csv 2>/dev/null
tar czf $OUT/gc6.tar.gz -C /tmp --exclude="*.rft" --exclude="ncu.csv" gc6
