#!/usr/bin/env bash
# Device call 4: counters mode with the growing buffer pool; where trace
# mode's overhead goes. Run as `bash build-dev/run4.sh`. Its trace and
# activity_off rows printed nothing: `timeout` cannot run the shell
# function rt (fixed in run 5, which calls a wrapper script).
set -u
G=/tmp/gc; mkdir -p $G
B=$PWD/build-dev
export CUDA13_LIB_PATH=/usr/local/cuda/lib64
LD=/lib64/ld-linux-x86-64.so.2
rt() { ROOFTRACE_INJECT_LIB=$B/lib/librooftrace_inject.so ROOFTRACE_CUPTI_PATH=/usr/local/cuda/lib64/libcupti.so.13 $LD --library-path $B/devlibs/host $B/bin/rooftrace "$@"; }
W="python3 scripts/examples/hf_generate.py"
export SMALL_ARGS="--batch-sizes 8 --new-tokens 4 --layers 2 --warmup 1 --deterministic"
OUT=$G BUILD_DIR=build-dev timeout 120 scripts/gpu-check.sh counters
python3 -c "
import sqlite3
c=sqlite3.connect('$G/counters.sqlite')
print('kernels', c.execute('select count(*), sum(duration_ns>0), sum(duration_ns)/1e6, sum(flops_source=\'counters\'), sum(bytes_source=\'counters\') from kernel_rows').fetchone())
print(dict(c.execute('select name,value from import_stats where value<>0').fetchall()))
" 2>&1 | tee -a $G/extra.txt
O="--batch-sizes 1 --repeat 5 --deterministic --warmup 2"
for v in bare kineto trace activity_off bare_again; do
  echo "== overhead: $v" | tee -a $G/extra.txt
  case $v in
    bare|bare_again) timeout 60 $W $O --truth $G/o_$v.json ;;
    kineto) timeout 60 $W $O --torch-profiler --truth $G/o_$v.json ;;
    trace) timeout 70 rt profile -o $G/o_trace.sqlite -- $W $O --truth $G/o_$v.json ;;
    activity_off) ROOFTRACE_CAPTURE=profiler-api timeout 70 rt profile -o $G/o_off.sqlite -- $W $O --truth $G/o_$v.json ;;
  esac 2>&1 | grep -E "^batch|sha256:" | tee -a $G/extra.txt
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; print('  generate_ms_all', [round(x,1) for x in r['generate_ms_all']])" $G/o_$v.json 2>&1 | tee -a $G/extra.txt
done
tar czf $OUT/gc-logs.tar.gz -C /tmp --exclude="*.rft" --exclude="*.sqlite" gc
(cd /tmp && tar czf $OUT/gc-stores.tar.gz gc/counters.sqlite)
