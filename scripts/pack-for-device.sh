#!/usr/bin/env bash
# Prepares build/ to travel to a GPU machine, whose CUDA may not be the
# build's (CUDA 13) and which lacks Debian's protobuf / Boost / SQLite
# libraries:
#   build/devlibs/host  the shared libraries rooftrace's binaries need beyond
#                       glibc, libstdc++ and the CUDA driver; gpu-check.sh
#                       hands them to rooftrace's own processes through the
#                       dynamic loader's --library-path (never
#                       LD_LIBRARY_PATH, which `rooftrace profile` would pass
#                       on to the profiled program)
#   build/devlibs/cuda  CUDA 13's libcupti.so.13 with the nvperf libraries it
#                       loads from its own directory, libcudart.so.13, and
#                       (unless --no-cublas) libcublas.so.13 and
#                       libcublasLt.so.13 for calibrate and the tests.
#                       libinject gets CUPTI through ROOFTRACE_CUPTI_PATH.
# --no-cublas leaves cuBLAS out (about 570 MB): the device's PyTorch cu13
# wheels, or CUDA13_LIB_PATH, must then provide it (gpu-check.sh env says).
# --no-cuda leaves every CUDA library out (the device has a CUDA 13 toolkit
# or PyTorch cu13 wheels; gpu-check.sh env checks each one).
# --slim DIR also writes DIR (e.g. build-dev): the same layout with only
# what gpu-check.sh runs (rooftrace, the two .so, the GPU test binaries, the
# test app and the launch benchmark), stripped, so it fits a device tool's
# carry limit (tens of MiB instead of the build's 1.6 GB). Run gpu-check.sh
# with BUILD_DIR=DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
with_cublas=1
with_cuda=1
slim=""
while (($#)); do
  case $1 in
    --no-cublas) with_cublas=0 ;;
    --no-cuda) with_cuda=0 ;;
    --slim)
      [ $# -ge 2 ] || { echo "pack-for-device: --slim needs a directory" >&2; exit 2; }
      slim=$2
      shift ;;
    *) echo "pack-for-device: unknown option '$1' (known: --no-cublas, --no-cuda, --slim DIR)" >&2; exit 2 ;;
  esac
  shift
done
host="$BUILD_DIR/devlibs/host"
cuda="$BUILD_DIR/devlibs/cuda"
rm -rf "$BUILD_DIR/devlibs"
mkdir -p "$host" "$cuda"

for bin in "$BUILD_DIR"/bin/* "$BUILD_DIR"/tests/* "$BUILD_DIR"/lib/*.so; do
  [ -f "$bin" ] && [ -x "$bin" -o "${bin%.so}" != "$bin" ] || continue
  ldd "$bin" 2>/dev/null | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
      libcuda.so*|libnvidia*|libcupti*|libcudart*|libcublas*|libnvperf*) ;;
      *) cp -u "$lib" "$host/" ;;
    esac
  done
done

# The CUDA toolkit the build used (CMake's cache names its bin/), else
# /usr/local/cuda.
toolkit_bin=$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
toolkit_lib=${CUDA_LIB_DIR:-$(dirname "${toolkit_bin:-/usr/local/cuda/bin}")/lib64}
needed=(libcupti.so.13 libnvperf_host.so libnvperf_target.so libcudart.so.13)
((with_cublas)) && needed+=(libcublas.so.13 libcublasLt.so.13)
((with_cuda)) || needed=()
for name in ${needed[@]+"${needed[@]}"}; do
  if [ ! -e "$toolkit_lib/$name" ]; then
    echo "pack-for-device: $toolkit_lib/$name is missing: the CUDA 13 toolkit the build used has no $name" >&2
    exit 1
  fi
  cp -L "$toolkit_lib/$name" "$cuda/$name"   # the file under its soname
done
du -sh "$BUILD_DIR" "$host" "$cuda"
ls "$host" "$cuda"

if [ -n "$slim" ]; then
  rm -rf "$slim"
  mkdir -p "$slim/bin" "$slim/lib" "$slim/tests/libinject_apps"
  cp -r "$BUILD_DIR/devlibs" "$slim/"
  cp "$BUILD_DIR/bin/rooftrace" "$slim/bin/"
  cp "$BUILD_DIR"/lib/*.so "$slim/lib/"
  # The ops route's Python startup hook (profile --ops torch).
  cp -r "$BUILD_DIR/lib/python" "$slim/lib/"
  source scripts/gpu_tests.sh  # from the repository root (cd above)
  for t in "${GPU_TESTS[@]}"; do
    [ -x "$BUILD_DIR/tests/$t" ] && cp "$BUILD_DIR/tests/$t" "$slim/tests/"
  done
  cp "$BUILD_DIR"/tests/libinject_apps/rt_* "$slim/tests/libinject_apps/"
  # The launch microbenchmark (gpu-check.sh launch).
  if [ -x "$BUILD_DIR/bench/launch_bench" ]; then
    mkdir -p "$slim/bench"
    cp "$BUILD_DIR/bench/launch_bench" "$slim/bench/"
  fi
  find "$slim/bin" "$slim/lib" "$slim/tests" "$slim/bench" -type f \
    -exec strip --strip-debug {} + 2>/dev/null || true
  du -sh "$slim"
fi
