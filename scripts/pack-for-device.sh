#!/usr/bin/env bash
# Prepares build/ to travel to the GPU device (which has CUDA, PyTorch and
# ncu, but not Debian's protobuf / Boost / SQLite libraries): copies the
# shared libraries rooftrace's binaries need beyond glibc, libstdc++ and the
# CUDA driver into build/devlibs/. scripts/gpu-check.sh puts that folder on
# LD_LIBRARY_PATH for rooftrace's own binaries only.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p "$BUILD_DIR/devlibs"
for bin in "$BUILD_DIR"/bin/* "$BUILD_DIR"/tests/* "$BUILD_DIR"/lib/*.so; do
  [ -f "$bin" ] && [ -x "$bin" -o "${bin%.so}" != "$bin" ] || continue
  ldd "$bin" 2>/dev/null | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
      libcuda.so*|libnvidia*|libcupti*|libcudart*|libcublas*|libnvperf*) ;;
      *) cp -u "$lib" "$BUILD_DIR/devlibs/" ;;
    esac
  done
done
du -sh "$BUILD_DIR" "$BUILD_DIR/devlibs"
ls "$BUILD_DIR/devlibs"
