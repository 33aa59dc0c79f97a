// The golden run used by the analyzer tests, with every number chosen so a
// person can check the expected values by hand (see the comments).
#ifndef ROOFTRACE_TESTS_SUPPORT_GOLDEN_STORE_H_
#define ROOFTRACE_TESTS_SUPPORT_GOLDEN_STORE_H_

#include <string>

#include "tests/support/test_store.h"

namespace rooftrace::testing {

inline constexpr char kGemmA[] =
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn";
inline constexpr char kGemmB[] =
    "ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_stages_64x5_nn";
inline constexpr char kAddKernel[] =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_"
    "addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_";

// Run 1 on a made-up GPU with round roofs: bf16_tc 1000 TFLOP/s, fp32
// 50 TFLOP/s, DRAM 2 TB/s (bf16 ridge 500 FLOP/byte).
//  - 3 x kGemmA, prefill, 100 us, 50 GFLOP, 100 MB: AI 500, 500 TFLOP/s,
//    roof 1000 TFLOP/s -> 50 %, compute.
//  - 2 x kGemmB, decode, 20 us, 0.2 GFLOP, 20 MB: AI 10, 10 TFLOP/s, roof
//    20 TFLOP/s -> 50 %, memory. Same family as kGemmA.
//  - 2 x kAddKernel, decode, 80 us, no FLOPs, 40 MB: 500 GB/s -> 25 % of
//    DRAM, memory. No stored family (the analyzer derives it).
//  - 1 x my_tiny_kernel, no phase, 2 us, nothing known.
// Import stats: dropped 3 kernels + 1 memcpy, 2 unmatched kernels.
// `gemm_a_scale` stretches the kGemmA launches (time x scale, so their
// fraction of roof / scale): a crafted regression for diff tests.
inline void BuildGoldenRun(TestStore& s, int64_t run_id = 1,
                           double gemm_a_scale = 1.0,
                           const std::string& device = "Test GPU 2TB") {
  s.AddRun(run_id, device, "datasheet:test");
  s.AddRoof(run_id, "bf16_tc", 1000e12, 2e12);
  s.AddRoof(run_id, "fp32", 50e12, 2e12);
  s.AddStat(run_id, "frames", 10);
  s.AddStat(run_id, "producer_dropped_kernel", 3);
  s.AddStat(run_id, "producer_dropped_memcpy", 1);
  s.AddStat(run_id, "unmatched_kernel", 2);
  int64_t t = 1000000;
  for (int i = 0; i < 3; ++i) {
    KernelSpec k;
    k.run_id = run_id;
    k.session_id = run_id;
    k.name = kGemmA;
    k.family = "ampere_bf16_s16816gemm";
    k.shape = "m=4096 n=4096 k=4096 batch=1";
    k.start_ns = t;
    k.duration_ns = static_cast<int64_t>(100000 * gemm_a_scale);
    k.precision = "bf16_tc";
    k.flops = 5e10;
    k.dram_bytes = 1e8;
    k.flops_source = "analytic";
    k.bytes_source = "counters";
    k.fraction_of_roof = 0.5 / gemm_a_scale;
    k.bound = "compute";
    k.phase = "prefill";
    k.nvtx_path = "forward/prefill";
    k.step_id = 0;
    k.correlation_id = 100 + i;
    k.thread_id = 11;
    s.AddKernel(k);
    t += 200000;
  }
  for (int i = 0; i < 2; ++i) {
    KernelSpec k;
    k.run_id = run_id;
    k.session_id = run_id;
    k.name = kGemmB;
    k.family = "ampere_bf16_s16816gemm";
    k.shape = "m=8 n=4096 k=4096 batch=1";
    k.start_ns = t;
    k.duration_ns = 20000;
    k.precision = "bf16_tc";
    k.flops = 2e8;
    k.dram_bytes = 2e7;
    k.flops_source = "analytic";
    k.bytes_source = "counters";
    k.fraction_of_roof = 0.5;
    k.bound = "memory";
    k.phase = "decode";
    k.nvtx_path = "forward/decode";
    k.step_id = 1 + i;
    k.correlation_id = 200 + i;
    k.stream_id = 8;
    s.AddKernel(k);
    t += 100000;
    KernelSpec a;
    a.run_id = run_id;
    a.session_id = run_id;
    a.name = kAddKernel;
    a.start_ns = t;
    a.duration_ns = 80000;
    a.dram_bytes = 4e7;
    a.flops_source = "none";
    a.bytes_source = "counters";
    a.fraction_of_roof = 0.25;
    a.bound = "memory";
    a.phase = "decode";
    a.nvtx_path = "forward/decode";
    a.step_id = 1 + i;
    a.correlation_id = 300 + i;
    s.AddKernel(a);
    t += 100000;
  }
  KernelSpec tiny;
  tiny.run_id = run_id;
  tiny.session_id = run_id;
  tiny.name = "my_tiny_kernel";
  tiny.start_ns = t;
  tiny.duration_ns = 2000;
  tiny.bound = "unknown";
  s.AddKernel(tiny);
  s.AddNvtx(run_id, "forward", 900000, t + 10000, 11, 0);
  s.AddMemcpy(run_id, "dtoh", 4096, t + 3000, t + 5000, 7);
}

}  // namespace rooftrace::testing

#endif  // ROOFTRACE_TESTS_SUPPORT_GOLDEN_STORE_H_
