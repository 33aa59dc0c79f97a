// FLOP and byte formulas of every reference kernel in kernels/. They are the
// "expected" side of calibration: measured time turns them into FLOP/s and
// bytes/s, and counter validation compares hardware counts against them.
//
// Pure functions; thread-safe. The trap: byte counts here are the minimum a
// kernel must move through DRAM (each operand read once, each result written
// once). A kernel that re-reads operands moves more, which is what counter
// validation is there to show.
#ifndef ROOFTRACE_KERNELS_FORMULAS_H_
#define ROOFTRACE_KERNELS_FORMULAS_H_

#include <cstdint>

namespace rooftrace::kernels {

// STREAM copy c[i] = a[i]: one read and one write per element.
inline constexpr double StreamCopyBytes(uint64_t n, uint64_t elem_bytes) {
  return 2.0 * n * elem_bytes;
}
// STREAM triad a[i] = b[i] + s * c[i]: two reads, one write, 2 FLOP.
inline constexpr double StreamTriadBytes(uint64_t n, uint64_t elem_bytes) {
  return 3.0 * n * elem_bytes;
}
inline constexpr double StreamTriadFlops(uint64_t n) { return 2.0 * n; }

// C[MxN] = A[MxK] * B[KxN]: one multiply and one add per (m, n, k).
inline constexpr double GemmFlops(uint64_t m, uint64_t n, uint64_t k,
                                  uint64_t batch = 1) {
  return 2.0 * m * n * k * batch;
}
// Minimum DRAM bytes of a GEMM: A and B read once, C written once
// (seed 004's (M·K + K·N + M·N) · bytes_per_elem, with per-operand sizes).
inline constexpr double GemmMinBytes(uint64_t m, uint64_t n, uint64_t k,
                                     double ab_elem_bytes,
                                     double c_elem_bytes) {
  return (1.0 * m * k + 1.0 * k * n) * ab_elem_bytes +
         1.0 * m * n * c_elem_bytes;
}
// Arithmetic intensity of a GEMM with all operands of one size (FLOP/byte).
inline constexpr double GemmIntensity(uint64_t m, uint64_t n, uint64_t k,
                                      double elem_bytes) {
  return GemmFlops(m, n, k) / GemmMinBytes(m, n, k, elem_bytes, elem_bytes);
}

// Seed 004: the M at which an M x N x K GEMM (all operands elem_bytes) has
// arithmetic intensity `ridge` FLOP/byte — where decode-shaped GEMMs turn
// from memory bound to compute bound. Solves 2MNK = ridge·e·(MK + KN + MN):
//   M = ridge·e·K·N / (2·N·K − ridge·e·(K + N)).
// Returns 0 when the GEMM never reaches the ridge (its intensity tends to
// 2NK / (e(K + N)) as M grows).
inline constexpr double GemmRidgeCrossingM(uint64_t n, uint64_t k,
                                           double elem_bytes, double ridge) {
  const double denom = 2.0 * n * k - ridge * elem_bytes * (1.0 * k + n);
  return denom > 0 ? ridge * elem_bytes * k * n / denom : 0.0;
}

// GELU, tanh form: 12 FLOP per element by seed 000's count.
inline constexpr double kGeluFlopsPerElement = 12.0;
inline constexpr double GeluFlops(uint64_t elements) {
  return kGeluFlopsPerElement * elements;
}
// The standalone GELU kernel reads and writes every element once.
inline constexpr double GeluBytes(uint64_t elements, double elem_bytes) {
  return 2.0 * elements * elem_bytes;
}

// Seed 000's MLP y = gelu(x @ M) @ N with x: B×I, M: I×H, N: H×I.
// FLOPs: 2·B·I·H + 12·B·H + 2·B·H·I = 4BIH + 12BH.
inline constexpr double MlpFlops(uint64_t b, uint64_t i, uint64_t h) {
  return 4.0 * b * i * h + 12.0 * b * h;
}
// How the MLP's kernels move its bytes, in elements (times elem bytes):
//  non-fused  (GEMM, GELU kernel, GEMM): x, M, N read; x@M written and read
//             back; gelu written and read back; y written:
//             2BI + 2IH + 4BH          (seed 000: 4BI + 4IH + 8BH in fp16)
//  epilogue   (cuBLASLt GEMM+GELU epilogue, then GEMM): the GELU output is
//             written once and read once: 2BI + 2IH + 2BH
//  ideal      (seed 000's "compiled": no intermediate in DRAM at all):
//             2BI + 2IH                (seed 000: 4BI + 4IH in fp16)
// What rooftrace measures as "fused" is the epilogue form: cuBLASLt fuses
// GELU into the first GEMM, not the second GEMM into the first.
enum class MlpFusion { kNonFused, kEpilogueFused, kIdealFused };
inline constexpr double MlpBytes(uint64_t b, uint64_t i, uint64_t h,
                                 double elem_bytes, MlpFusion fusion) {
  const double base = 2.0 * b * i + 2.0 * i * h;
  const double inter = fusion == MlpFusion::kNonFused        ? 4.0 * b * h
                       : fusion == MlpFusion::kEpilogueFused ? 2.0 * b * h
                                                             : 0.0;
  return (base + inter) * elem_bytes;
}
inline constexpr double MlpIntensity(uint64_t b, uint64_t i, uint64_t h,
                                     double elem_bytes, MlpFusion fusion) {
  return MlpFlops(b, i, h) / MlpBytes(b, i, h, elem_bytes, fusion);
}

}  // namespace rooftrace::kernels

#endif  // ROOFTRACE_KERNELS_FORMULAS_H_
