#!/usr/bin/env bash
# Device call 2: the fixes of call 1 (calibrate through the loader, step
# token counts), determinism and CUPTI's own cost, counters-mode probes,
# ncu's CSV of the reduced workload. Run as `bash build-dev/run2.sh`.
set -u
G=/tmp/gc; mkdir -p $G
B=$PWD/build-dev
export CUDA13_LIB_PATH=/usr/local/cuda/lib64
CUPTI=/usr/local/cuda/lib64/libcupti.so.13
LD=/lib64/ld-linux-x86-64.so.2
rt() { $LD --library-path $B/devlibs/host $B/bin/rooftrace "$@"; }
W="python3 scripts/examples/hf_generate.py"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $G/probe.txt
OUT=$G BUILD_DIR=build-dev FULL_ARGS="--batch-sizes 1,8,32 --repeat 3" timeout 230 scripts/gpu-check.sh calibrate bare trace
echo "== determinism: bare again" | tee -a $G/extra.txt
timeout 60 $W --batch-sizes 1,8,32 --repeat 3 --truth $G/truth_bare2.json 2>&1 | tee -a $G/extra.txt
echo "== CUPTI's own cost: torch.profiler (Kineto) with CUDA activities" | tee -a $G/extra.txt
timeout 70 $W --batch-sizes 1,8,32 --repeat 3 --torch-profiler --truth $G/truth_kineto.json 2>&1 | tail -5 | tee -a $G/extra.txt
for mode in trace counters; do
  echo "== rt_gpu_kernels_app, $mode mode" | tee -a $G/extra.txt
  rm -f $G/app_$mode.rft $G/app_$mode.sqlite
  CUDA_INJECTION64_PATH=$B/lib/librooftrace_inject.so ROOFTRACE_CUPTI_PATH=$CUPTI ROOFTRACE_MODE=$mode ROOFTRACE_LOG=debug \
    ROOFTRACE_SINK=file:$G/app_$mode.rft LD_LIBRARY_PATH=$B/devlibs/host:/usr/local/cuda/lib64 \
    timeout 20 $B/tests/libinject_apps/rt_gpu_kernels_app > $G/app_$mode.log 2>&1
  echo "rc $?" >> $G/app_$mode.log
  rt collect --ingest $G/app_$mode.rft --store $G/app_$mode.sqlite >> $G/app_$mode.log 2>&1
  python3 -c "
import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
for r in c.execute('select correlation_id,start_ns,end_ns,duration_ns,flops_source,flops,dram_bytes,api_start_ns is not null,substr(n.name,1,30) from kernel_rows join kernel_names n using(name_id)'): print(r)
for r in c.execute('select name,value from import_stats where value<>0'): print(r)
" $G/app_$mode.sqlite 2>&1 | tee -a $G/extra.txt
  grep -v '^$' $G/app_$mode.log | tail -25 >> $G/extra.txt
done
echo "== counters stage with libinject's log" | tee -a $G/extra.txt
ROOFTRACE_LOG=info OUT=$G BUILD_DIR=build-dev timeout 100 scripts/gpu-check.sh counters
echo "== ncu of the reduced workload" | tee -a $G/extra.txt
timeout 130 ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum,sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum,sm__inst_executed_pipe_tensor.sum,launch__grid_size,launch__block_size \
  --cache-control none --clock-control none --replay-mode kernel --print-kernel-base mangled --csv --log-file $G/ncu.csv \
  $W --batch-sizes 8 --new-tokens 4 --layers 2 --warmup 1 > $G/ncu.log 2>&1
echo "ncu rc $? $(wc -l < $G/ncu.csv) lines" | tee -a $G/extra.txt
gzip -k $G/ncu.csv
tar czf $OUT/gc-logs.tar.gz -C /tmp --exclude="*.rft" --exclude="*.sqlite" --exclude="ncu.csv" gc
(cd /tmp && tar czf $OUT/gc-stores.tar.gz gc/*.sqlite)
ls -la $OUT
