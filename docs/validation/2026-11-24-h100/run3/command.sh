#!/usr/bin/env bash
# Device call 3: deterministic workload (token ids bare vs traced), the
# counters-mode duration fix, a small ncu CSV of H100 kernels.
# Run as `bash build-dev/run3.sh`.
set -u
G=/tmp/gc; mkdir -p $G
B=$PWD/build-dev
export CUDA13_LIB_PATH=/usr/local/cuda/lib64
CUPTI=/usr/local/cuda/lib64/libcupti.so.13
LD=/lib64/ld-linux-x86-64.so.2
rt() { $LD --library-path $B/devlibs/host $B/bin/rooftrace "$@"; }
W="python3 scripts/examples/hf_generate.py"
export FULL_ARGS="--batch-sizes 1,8,32 --deterministic" SMALL_ARGS="--batch-sizes 8 --new-tokens 4 --layers 2 --warmup 1 --deterministic"
OUT=$G BUILD_DIR=build-dev timeout 200 scripts/gpu-check.sh bare trace
echo "== determinism: bare again, --deterministic" | tee -a $G/extra.txt
timeout 60 $W $FULL_ARGS --truth $G/truth_bare2.json 2>&1 | tee -a $G/extra.txt
echo "== rt_gpu_kernels_app, counters mode" | tee -a $G/extra.txt
CUDA_INJECTION64_PATH=$B/lib/librooftrace_inject.so ROOFTRACE_CUPTI_PATH=$CUPTI ROOFTRACE_MODE=counters ROOFTRACE_COUNTERS=full \
  ROOFTRACE_SINK=file:$G/app_counters.rft LD_LIBRARY_PATH=$B/devlibs/host:/usr/local/cuda/lib64 \
  timeout 20 $B/tests/libinject_apps/rt_gpu_kernels_app > $G/app_counters.log 2>&1
rt collect --ingest $G/app_counters.rft --store $G/app_counters.sqlite >> $G/app_counters.log 2>&1
python3 -c "
import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
for r in c.execute('select correlation_id,start_ns,end_ns,duration_ns,flops_source,flops,dram_bytes,substr(n.name,1,30) from kernel_rows join kernel_names n using(name_id)'): print(r)
" $G/app_counters.sqlite 2>&1 | tee -a $G/extra.txt
OUT=$G BUILD_DIR=build-dev timeout 120 scripts/gpu-check.sh counters
echo "== ncu, first 60 kernels of the reduced workload" | tee -a $G/extra.txt
timeout 120 ncu -c 60 --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum,sm__inst_executed_pipe_tensor.sum,launch__grid_size,launch__block_size \
  --cache-control none --clock-control none --replay-mode kernel --print-kernel-base mangled --csv --log-file $G/ncu_h100_60.csv \
  $W --batch-sizes 8 --new-tokens 2 --layers 2 --warmup 0 --deterministic > $G/ncu.log 2>&1
echo "ncu rc $? $(wc -l < $G/ncu_h100_60.csv) lines" | tee -a $G/extra.txt
tar czf $OUT/gc-logs.tar.gz -C /tmp --exclude="*.rft" --exclude="*.sqlite" gc
(cd /tmp && tar czf $OUT/gc-stores.tar.gz gc/counters.sqlite gc/app_counters.sqlite)
ls -la $OUT
