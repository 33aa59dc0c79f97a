#!/usr/bin/env bash
# Device call 1: probe, then the recipe's stages. Run from the repository
# root on the GPU machine with build-dev/ carried
# (scripts/pack-for-device.sh --no-cuda --slim build-dev); the device call
# was `T=530 bash build-dev/run1.sh`.
set -u
G=/tmp/gc; mkdir -p $G
{
  echo "## probe $(date -u)"; nvidia-smi; nvcc --version | tail -2; which python3 ncu nsys
  ls /usr/local/cuda/ /usr/local/cuda/lib64 2>&1 | grep -iE "cupti|nvperf|cublas|cudart|^lib|targets" | head -30
  find / -name 'libcupti.so*' -not -path '*/proc/*' 2>/dev/null | head; find / -name 'libnvperf_host.so' 2>/dev/null | head
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())'
} > $G/probe.txt 2>&1
cat $G/probe.txt
export CUDA13_LIB_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64
OUT=$G BUILD_DIR=build-dev timeout ${T:-540} scripts/gpu-check.sh ${STAGES:-env tests calibrate bare trace counters}
echo "gpu-check rc $?"
tar czf $OUT/gc-logs.tar.gz -C /tmp --exclude="*.rft" --exclude="*.sqlite" gc; (cd /tmp && tar czf $OUT/gc-stores.tar.gz gc/*.sqlite); ls -la $OUT
