// cuBLAS / cuBLASLt GEMMs for calibration: one LtGemm per (types, shape,
// epilogue), with its descriptors and the heuristic's best algorithm chosen
// once, then run many times for timing.
//
// Column-major, as cuBLAS is: D[m x n] = op(A) * op(B). The peak GEMMs use
// the "TN" form (A stored k x m and transposed, B stored k x n), the only
// form cuBLASLt accepts for fp8 and the fast one for int8.
// Not thread-safe; owned by the runner for the duration of one step.
#ifndef ROOFTRACE_KERNELS_GPU_BLAS_H_
#define ROOFTRACE_KERNELS_GPU_BLAS_H_

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "base/status.h"
#include "kernels/plan.h"

namespace rooftrace::kernels::gpu {

struct LtGemmSpec {
  cudaDataType_t a_type, b_type, c_type;
  cublasComputeType_t compute;
  cudaDataType_t scale_type;
  cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  // fp8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM (no periodic promotion of
  // partial sums to higher precision), as inference engines run fp8 GEMMs.
  int8_t fast_accum = 0;
};

// The spec of a peak GEMM of `type` at m x n x k (TN form).
LtGemmSpec PeakSpec(GemmType type, int64_t m, int64_t n, int64_t k);

// Sets a matmul descriptor's attributes from `spec` (transposes, epilogue,
// fp8 fast accumulation):
// the part of LtGemm::Create that needs no GPU, so tests can read the
// descriptor back.
Status ConfigureMatmulDesc(cublasLtMatmulDesc_t desc, const LtGemmSpec& spec);

class LtGemm {
 public:
  // Creates descriptors and picks the algorithm; errors name the cuBLASLt
  // call and status (e.g. CUBLAS_STATUS_NOT_SUPPORTED for a type the GPU or
  // library lacks).
  static StatusOr<std::unique_ptr<LtGemm>> Create(cublasLtHandle_t handle,
                                                  const LtGemmSpec& spec,
                                                  void* workspace,
                                                  size_t workspace_bytes);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // D = alpha * op(A) op(B) (+ beta * C = 0), D written in place of C.
  Status Run(const void* a, const void* b, void* c, cudaStream_t stream);
  const LtGemmSpec& spec() const { return spec_; }

 private:
  LtGemm() = default;
  cublasLtHandle_t handle_ = nullptr;
  LtGemmSpec spec_{};
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr,
                         c_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  // alpha = 1, beta = 0 in the scale type (double, float or int32).
  alignas(8) unsigned char alpha_[8] = {}, beta_[8] = {};
};

// Bytes per element of a cudaDataType_t used here.
size_t ElementBytes(cudaDataType_t t);

}  // namespace rooftrace::kernels::gpu

#endif  // ROOFTRACE_KERNELS_GPU_BLAS_H_
