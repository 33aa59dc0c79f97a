#!/usr/bin/env bash
# Device call 5: where trace mode's overhead goes, runs interleaved: bare,
# Kineto (torch.profiler, CUDA activities), rooftrace trace mode, rooftrace
# with activity off (ROOFTRACE_CAPTURE=profiler-api: callbacks and the
# sender only), twice each. Run as `bash build-dev/run5.sh` on the machine
# still warm from run 4, so extra.txt begins with run 4's lines.
set -u
G=/tmp/gc; mkdir -p $G
B=$PWD/build-dev
cat > /tmp/rt <<EOT
#!/bin/sh
ROOFTRACE_INJECT_LIB=$B/lib/librooftrace_inject.so ROOFTRACE_CUPTI_PATH=/usr/local/cuda/lib64/libcupti.so.13 exec /lib64/ld-linux-x86-64.so.2 --library-path $B/devlibs/host $B/bin/rooftrace "\$@"
EOT
chmod +x /tmp/rt
W="python3 scripts/examples/hf_generate.py"
O="--batch-sizes 1 --repeat 5 --deterministic --warmup 2"
for round in 1 2; do
for v in bare kineto trace activity_off; do
  echo "== round $round: $v" | tee -a $G/extra.txt
  rm -f $G/o.sqlite
  case $v in
    bare) timeout 60 $W $O --truth $G/o_$v$round.json ;;
    kineto) timeout 60 $W $O --torch-profiler --truth $G/o_$v$round.json ;;
    trace) timeout 70 /tmp/rt profile -o $G/o.sqlite -- $W $O --truth $G/o_$v$round.json ;;
    activity_off) ROOFTRACE_CAPTURE=profiler-api timeout 70 /tmp/rt profile -o $G/o.sqlite -- $W $O --truth $G/o_$v$round.json ;;
  esac > $G/o_$v$round.log 2>&1
  grep -E "^batch|kernels:" $G/o_$v$round.log | tee -a $G/extra.txt
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; print('  generate_ms_all', [round(x,1) for x in r['generate_ms_all']])" $G/o_$v$round.json 2>&1 | tee -a $G/extra.txt
done
done
tar czf $OUT/gc-logs.tar.gz -C /tmp --exclude="*.rft" --exclude="*.sqlite" gc
