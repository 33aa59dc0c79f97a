// What `rooftrace calibrate` runs: the sweep definitions of every step, in
// full and --quick form, and which GEMM precisions a GPU supports. Host-only
// (no CUDA), so the definitions are unit-tested without a GPU; the CUDA
// runner in kernels/gpu/ executes a plan step by step.
//
// Plain data; thread-compatible.
#ifndef ROOFTRACE_KERNELS_PLAN_H_
#define ROOFTRACE_KERNELS_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/datasheet.h"

namespace rooftrace::kernels {

// The GEMM input types calibrated with cuBLAS / cuBLASLt.
enum class GemmType { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8 };

struct GemmTypeInfo {
  GemmType type;
  std::string_view key;     // "bf16"
  double ab_elem_bytes;     // bytes per A/B element
  double c_elem_bytes;      // bytes per C element as calibrated
  int min_sm;               // lowest compute capability, as 10*major+minor
  std::string_view needs;   // "sm_89 (Ada) or newer"
};

const std::vector<GemmTypeInfo>& GemmTypes();
const GemmTypeInfo& GemmTypeInfoOf(GemmType t);
std::optional<GemmType> GemmTypeFromKey(std::string_view key);

// The roof a GEMM of this type measures on a GPU of compute capability
// `sm` (10*major+minor). fp64 runs on tensor cores (DMMA) on sm_80, sm_90
// and sm_100 (the data-centre parts), on the CUDA cores elsewhere.
Precision RoofOf(GemmType t, int sm);

// Whether the GPU can run this type; `why` gets the reason when it cannot.
bool GemmTypeSupported(GemmType t, int sm, std::string* why);

struct GemmShape {
  int64_t m, n, k;
  bool operator==(const GemmShape&) const = default;
};

struct CalibrationPlan {
  bool quick = false;

  // STREAM: fp32 elements per buffer (>= 8x L2 and >= 256 MiB), best of
  // `stream_repeats` timed runs of each of copy and triad.
  uint64_t stream_elements = 0;
  int stream_repeats = 0;

  // cuBLAS / cuBLASLt peak GEMMs: every supported type at every shape.
  std::vector<GemmType> gemm_types;
  std::vector<GemmShape> peak_shapes;  // 8192^3 first
  int gemm_repeats = 0;

  // Own reference kernels (tiled fp32 CUDA-core, bf16 mma.sync), checked
  // against cuBLAS at the same shape.
  GemmShape own_fp32_shape{0, 0, 0};
  GemmShape own_bf16_shape{0, 0, 0};

  // Seed 000: y = gelu(x @ M) @ N in fp16, I = 1024, H = I * h.
  std::vector<int64_t> mlp_batches;  // 16 and 1024
  int64_t mlp_input_dim = 0;         // I
  std::vector<int> mlp_h;            // 1..9
  int mlp_repeats = 0;

  // Seed 004: bf16 GEMM M = 1, 2, 4 … 8192 at N = K = 4096.
  std::vector<int64_t> msweep_m;
  int64_t msweep_n = 0, msweep_k = 0;
  int msweep_repeats = 0;
};

// The plan for a GPU with `l2_bytes` of L2 and compute capability `sm`.
// Types the GPU lacks are left out (SkippedGemmTypes says why).
CalibrationPlan MakePlan(bool quick, uint64_t l2_bytes, int sm);

// (type, reason) for every type the GPU of compute capability `sm` lacks.
std::vector<std::pair<GemmType, std::string>> SkippedGemmTypes(int sm);

// A short human description of the plan, one line per step.
std::vector<std::string> DescribePlan(const CalibrationPlan& plan);

}  // namespace rooftrace::kernels

#endif  // ROOFTRACE_KERNELS_PLAN_H_
