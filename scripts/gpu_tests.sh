# Test binaries that must run, not skip, on a GPU: sourced by gpu-check.sh
# (which fails a stage where one skips) and pack-for-device.sh (which
# carries them to the device), so the two cannot disagree.
GPU_TESTS=(libinject_gpu_test counters_gpu_test kernels_gpu_test)
