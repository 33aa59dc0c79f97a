#include "libinject/api_callbacks.h"

// cupti.h brings the parameter structs of every API
// (generated_cuda_runtime_api_meta.h, generated_cuda_meta.h).
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstddef>

#include "proto/field_numbers.h"

namespace rooftrace::inject {

namespace {

// CUDA 13.0's callbacks that enqueue GPU work, by domain; in each, kernel
// launches first, then graph launches, copies, memsets. Copies and memsets include the
// _ptds / _ptsz (per-thread default stream) and cu64* forms; the graph
// node calls (cudaGraphAddMemcpyNode, ...) enqueue nothing and are not
// here.
using enum ApiCallbackKind;

constexpr TracedCallback kRuntimeCallbacks[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
     kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
     kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, kKernelLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, kGraphLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, kGraphLaunch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToArray_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DToArray_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromArray_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DFromArray_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyArrayToArray_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DArrayToArray_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToArrayAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromArrayAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DToArrayAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DFromArrayAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbolAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbolAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_v3020, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeer_v4000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeerAsync_v4000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToArray_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DToArray_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromArray_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DFromArray_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyArrayToArray_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DArrayToArray_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToArrayAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromArrayAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DToArrayAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DFromArrayAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbolAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbolAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeer_ptds_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeerAsync_ptsz_v7000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v12080, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_ptsz_v12080, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_v12080, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_ptsz_v12080, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_ptsz_v13000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_v13000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DBatchAsync_ptsz_v13000, kMemcpy},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset2D_v3020, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_v3020, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset3D_v3020, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset3DAsync_v3020, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset2D_ptds_v7000, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_ptsz_v7000, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset3D_ptds_v7000, kMemset},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemset3DAsync_ptsz_v7000, kMemset},
};
constexpr TracedCallback kDriverCallbacks[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunch, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
     kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, kKernelLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, kGraphLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, kGraphLaunch},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyHtoD, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyDtoH, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyDtoD, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoA, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyDtoA, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoD, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyAtoD, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoA, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoH, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoA, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64Memcpy3D, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyHtoDAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyDtoHAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemcpyDtoDAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoAAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoHAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64Memcpy3DAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64Memcpy2D, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64Memcpy2DUnaligned, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cu64Memcpy2DAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoH_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoHAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoD_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoA_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoA_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoA_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoAAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeer, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoA_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoD_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoA_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoH_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoA_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeer_ptds, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoAAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoHAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_v2, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_v2_ptsz, kMemcpy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD8, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD16, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD32, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD2D8, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD2D16, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD2D32, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD8Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD16Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD32Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD2D8Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD2D16Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cu64MemsetD2D32Async, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2_ptds, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2_ptds, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2_ptds, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2_ptds, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2_ptds, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2_ptds, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz, kMemset},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz, kMemset},
};

// cu(da)ProfilerStart / Stop: enabled only where they matter
// (ROOFTRACE_CAPTURE=profiler-api) or with ROOFTRACE_CALLBACKS=full.
constexpr TracedCallback kRuntimeProfilerCallbacks[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, kProfilerStart},
    {CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, kProfilerStop},
};
constexpr TracedCallback kDriverProfilerCallbacks[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, kProfilerStart},
    {CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, kProfilerStop},
};

constexpr TracedCallback kRuntimeCaptureCallbacks[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, kCaptureBegin},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000,
     kCaptureBegin},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030,
     kCaptureBegin},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030,
     kCaptureBegin},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, kCaptureEnd},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000, kCaptureEnd},
};

constexpr TracedCallback kDriverCaptureCallbacks[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture, kCaptureBegin},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz, kCaptureBegin},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, kCaptureBegin},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz, kCaptureBegin},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, kCaptureBegin},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz, kCaptureBegin},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, kCaptureEnd},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz, kCaptureEnd},
};

template <typename Params>
CUstream StreamField(const void* params) {
  return static_cast<const Params*>(params)->stream;
}

template <typename Params>
CUstream HStreamField(const void* params) {
  return static_cast<const Params*>(params)->hStream;
}

// `stream` as the driver reads it: the null stream of a _ptsz entry point is
// the calling thread's default stream.
CUstream PerThread(CUstream stream) {
  return stream == nullptr ? CU_STREAM_PER_THREAD : stream;
}

bool RuntimeLaunchStream(uint32_t cbid, const void* p, CUstream* stream) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      *stream = StreamField<cudaLaunchKernel_v7000_params>(p);
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      *stream = PerThread(StreamField<cudaLaunchKernel_ptsz_v7000_params>(p));
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      *stream = StreamField<cudaLaunchCooperativeKernel_v9000_params>(p);
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      *stream = PerThread(
          StreamField<cudaLaunchCooperativeKernel_ptsz_v9000_params>(p));
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060: {
      const auto* c =
          static_cast<const cudaLaunchKernelExC_v11060_params*>(p)->config;
      if (c == nullptr) return false;
      *stream = c->stream;
      return true;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto* c =
          static_cast<const cudaLaunchKernelExC_ptsz_v11060_params*>(p)->config;
      if (c == nullptr) return false;
      *stream = PerThread(c->stream);
      return true;
    }
    default:
      return false;
  }
}

bool DriverLaunchStream(uint32_t cbid, const void* p, CUstream* stream) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      *stream = HStreamField<cuLaunchKernel_params>(p);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      *stream = PerThread(HStreamField<cuLaunchKernel_ptsz_params>(p));
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      *stream = HStreamField<cuLaunchCooperativeKernel_params>(p);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      *stream =
          PerThread(HStreamField<cuLaunchCooperativeKernel_ptsz_params>(p));
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
      *stream = HStreamField<cuLaunchGridAsync_params>(p);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const CUlaunchConfig* c =
          static_cast<const cuLaunchKernelEx_params*>(p)->config;
      if (c == nullptr) return false;
      *stream = c->hStream;
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const CUlaunchConfig* c =
          static_cast<const cuLaunchKernelEx_ptsz_params*>(p)->config;
      if (c == nullptr) return false;
      *stream = PerThread(c->hStream);
      return true;
    }
    default:
      return false;
  }
}

// cudaLaunchKernel-like runtime structs: dim3 gridDim, blockDim, size_t
// sharedMem.
template <typename Params>
void RuntimeDims(const void* p, LaunchGeometry* g) {
  const auto* s = static_cast<const Params*>(p);
  g->grid[0] = s->gridDim.x;
  g->grid[1] = s->gridDim.y;
  g->grid[2] = s->gridDim.z;
  g->block[0] = s->blockDim.x;
  g->block[1] = s->blockDim.y;
  g->block[2] = s->blockDim.z;
  g->dynamic_shared_memory_bytes = static_cast<uint32_t>(s->sharedMem);
}

// cuLaunchKernel-like driver structs (and CUlaunchConfig): gridDimX..Z,
// blockDimX..Z, sharedMemBytes.
template <typename Params>
void DriverDims(const Params* s, LaunchGeometry* g) {
  g->grid[0] = s->gridDimX;
  g->grid[1] = s->gridDimY;
  g->grid[2] = s->gridDimZ;
  g->block[0] = s->blockDimX;
  g->block[1] = s->blockDimY;
  g->block[2] = s->blockDimZ;
  g->dynamic_shared_memory_bytes = s->sharedMemBytes;
}

// nvcc 13's <<<>>> entry points, __cudaLaunchKernel and
// __cudaLaunchKernel_ptsz (crt/device_functions.h: cudaKernel_t kernel,
// dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t
// stream), have callback ids (505, 506) but no published parameter struct.
// CUPTI's runtime parameter structs are the function's parameters in order
// (generated_cuda_runtime_api_meta.h), so theirs is written here from the
// declaration. It is cudaLaunchKernel's layout field for field (asserted
// below): CUDA 13.0's libcudart makes __cudaLaunchKernel a jump into
// cudaLaunchKernel, which reports cbid 211 with that very struct, so a
// runtime that reports 505 with its own struct can only differ in the
// kernel handle's type.
struct NvccLaunchStubParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};
static_assert(sizeof(NvccLaunchStubParams) ==
              sizeof(cudaLaunchKernel_v7000_params));
static_assert(offsetof(NvccLaunchStubParams, gridDim) ==
              offsetof(cudaLaunchKernel_v7000_params, gridDim));
static_assert(offsetof(NvccLaunchStubParams, blockDim) ==
              offsetof(cudaLaunchKernel_v7000_params, blockDim));
static_assert(offsetof(NvccLaunchStubParams, sharedMem) ==
              offsetof(cudaLaunchKernel_v7000_params, sharedMem));
static_assert(offsetof(NvccLaunchStubParams, stream) ==
              offsetof(cudaLaunchKernel_v7000_params, stream));

// What any launch's geometry satisfies (CUDA 13's limits on every GPU it
// supports: grid x < 2^31, y and z <= 65535, a block of at most 1024
// threads with z <= 64, under 4 GiB of dynamic shared memory). A layout
// read without a published struct is kept only when it passes; otherwise
// the launch is signed by its name, as before.
bool PlausibleGeometry(const LaunchGeometry& g) {
  if (g.grid[0] == 0 || g.grid[0] > 0x7fffffffu) return false;
  if (g.grid[1] == 0 || g.grid[1] > 65535 || g.grid[2] == 0 ||
      g.grid[2] > 65535) {
    return false;
  }
  if (g.block[0] == 0 || g.block[1] == 0 || g.block[2] == 0 ||
      g.block[2] > 64) {
    return false;
  }
  const uint64_t threads =
      uint64_t{g.block[0]} * g.block[1] * uint64_t{g.block[2]};
  return threads <= 1024;
}

bool NvccStubGeometry(const void* p, LaunchGeometry* g) {
  const auto* s = static_cast<const NvccLaunchStubParams*>(p);
  if (s->sharedMem > 0xffffffffu) return false;
  LaunchGeometry read;
  RuntimeDims<NvccLaunchStubParams>(p, &read);
  if (!PlausibleGeometry(read)) return false;
  *g = read;
  return true;
}

bool RuntimeGeometry(uint32_t cbid, const void* p, LaunchGeometry* g) {
  switch (cbid) {
    // The stream of these stays unread (LaunchStream): a wrong geometry
    // only signs a launch wrongly, a wrong stream handle handed to the
    // driver could fault the host.
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
      return NvccStubGeometry(p, g);
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      RuntimeDims<cudaLaunchKernel_v7000_params>(p, g);
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      RuntimeDims<cudaLaunchKernel_ptsz_v7000_params>(p, g);
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      RuntimeDims<cudaLaunchCooperativeKernel_v9000_params>(p, g);
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      RuntimeDims<cudaLaunchCooperativeKernel_ptsz_v9000_params>(p, g);
      return true;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      // Both structs start with the same `config` pointer.
      const cudaLaunchConfig_t* c =
          static_cast<const cudaLaunchKernelExC_v11060_params*>(p)->config;
      if (c == nullptr) return false;
      g->grid[0] = c->gridDim.x;
      g->grid[1] = c->gridDim.y;
      g->grid[2] = c->gridDim.z;
      g->block[0] = c->blockDim.x;
      g->block[1] = c->blockDim.y;
      g->block[2] = c->blockDim.z;
      g->dynamic_shared_memory_bytes =
          static_cast<uint32_t>(c->dynamicSmemBytes);
      return true;
    }
    default:
      return false;
  }
}

bool DriverGeometry(uint32_t cbid, const void* p, LaunchGeometry* g) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      DriverDims(static_cast<const cuLaunchKernel_params*>(p), g);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      DriverDims(static_cast<const cuLaunchKernel_ptsz_params*>(p), g);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      DriverDims(static_cast<const cuLaunchCooperativeKernel_params*>(p), g);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      DriverDims(static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(p),
                 g);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const CUlaunchConfig* c =
          static_cast<const cuLaunchKernelEx_params*>(p)->config;
      if (c == nullptr) return false;
      DriverDims(c, g);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bool LaunchGeometryOf(CUpti_CallbackDomain domain, uint32_t cbid,
                      const void* params, LaunchGeometry* out) {
  if (params == nullptr) return false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return RuntimeGeometry(cbid, params, out);
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    return DriverGeometry(cbid, params, out);
  }
  return false;
}

std::span<const TracedCallback> ProfilerCallbacks(
    CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
      return kRuntimeProfilerCallbacks;
    case CUPTI_CB_DOMAIN_DRIVER_API:
      return kDriverProfilerCallbacks;
    default:
      return {};
  }
}

std::span<const TracedCallback> CaptureCallbacks(CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
      return kRuntimeCaptureCallbacks;
    case CUPTI_CB_DOMAIN_DRIVER_API:
      return kDriverCaptureCallbacks;
    default:
      return {};
  }
}

bool LaunchStream(CUpti_CallbackDomain domain, uint32_t cbid,
                  const void* params, CUstream* stream) {
  if (params == nullptr) return false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return RuntimeLaunchStream(cbid, params, stream);
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    return DriverLaunchStream(cbid, params, stream);
  }
  return false;
}

std::span<const TracedCallback> TracedCallbacks(CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
      return kRuntimeCallbacks;
    case CUPTI_CB_DOMAIN_DRIVER_API:
      return kDriverCallbacks;
    default:
      return {};
  }
}

ApiCallbackKind ApiCallbackKindOf(CUpti_CallbackDomain domain, uint32_t cbid) {
  for (const TracedCallback& c : TracedCallbacks(domain)) {
    if (c.cbid == cbid) return c.kind;
  }
  for (const TracedCallback& c : ProfilerCallbacks(domain)) {
    if (c.cbid == cbid) return c.kind;
  }
  for (const TracedCallback& c : CaptureCallbacks(domain)) {
    if (c.cbid == cbid) return c.kind;
  }
  return ApiCallbackKind::kNotTraced;
}

}  // namespace rooftrace::inject
