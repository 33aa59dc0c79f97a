#!/usr/bin/env bash
# Device call 7: counters mode on the two-layer workload (393 records were
# dropped there in run 4) with the sender's buffer fix and its debug log.
set -u
G=/tmp/gc7; mkdir -p $G
ROOFTRACE_LOG=debug OUT=$G BUILD_DIR=build-dev timeout 150 scripts/gpu-check.sh counters
python3 -c "
import sqlite3
c=sqlite3.connect('$G/counters.sqlite')
print('kernels', c.execute('select count(*), sum(duration_ns>0), sum(flops_source=\'counters\') from kernel_rows').fetchone())
print(dict(c.execute('select name,value from import_stats where value<>0').fetchall()))
" 2>&1 | tee $G/summary.txt
grep -E "counters: evaluated|activity buffer" $G/counters.log | head -30 > $G/debug_lines.txt
grep -c "counters: evaluated" $G/counters.log >> $G/debug_lines.txt
tar czf $OUT/gc7.tar.gz -C /tmp --exclude="*.rft" --exclude="*.sqlite" gc7
