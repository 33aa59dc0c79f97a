#include "kernels/gpu/blas.h"

#include <cstring>

#include "kernels/gpu/check.h"

namespace rooftrace::kernels::gpu {

size_t ElementBytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F:
    case CUDA_R_32I: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_8I:
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2: return 1;
    default: return 0;
  }
}

LtGemmSpec PeakSpec(GemmType type, int64_t m, int64_t n, int64_t k) {
  LtGemmSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  switch (type) {
    case GemmType::kFp64:
      s.a_type = s.b_type = s.c_type = CUDA_R_64F;
      s.compute = CUBLAS_COMPUTE_64F;
      s.scale_type = CUDA_R_64F;
      break;
    case GemmType::kFp32:
      s.a_type = s.b_type = s.c_type = CUDA_R_32F;
      s.compute = CUBLAS_COMPUTE_32F;  // no TF32: the CUDA-core roof
      s.scale_type = CUDA_R_32F;
      break;
    case GemmType::kTf32:
      s.a_type = s.b_type = s.c_type = CUDA_R_32F;
      s.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      s.scale_type = CUDA_R_32F;
      break;
    case GemmType::kFp16:
      s.a_type = s.b_type = s.c_type = CUDA_R_16F;
      s.compute = CUBLAS_COMPUTE_32F;
      s.scale_type = CUDA_R_32F;
      break;
    case GemmType::kBf16:
      s.a_type = s.b_type = s.c_type = CUDA_R_16BF;
      s.compute = CUBLAS_COMPUTE_32F;
      s.scale_type = CUDA_R_32F;
      break;
    case GemmType::kFp8:
      s.a_type = s.b_type = CUDA_R_8F_E4M3;
      s.c_type = CUDA_R_16BF;
      s.compute = CUBLAS_COMPUTE_32F;
      s.scale_type = CUDA_R_32F;
      // The fastest fp8 kernels (what engines run) accumulate without
      // periodic promotion; the roof must not sit below them.
      s.fast_accum = 1;
      break;
    case GemmType::kInt8:
      s.a_type = s.b_type = CUDA_R_8I;
      s.c_type = CUDA_R_32I;
      s.compute = CUBLAS_COMPUTE_32I;
      s.scale_type = CUDA_R_32I;
      break;
  }
  return s;
}

Status ConfigureMatmulDesc(cublasLtMatmulDesc_t desc, const LtGemmSpec& spec) {
  RT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                           &spec.trans_a, sizeof spec.trans_a));
  RT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                           &spec.trans_b, sizeof spec.trans_b));
  if (spec.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    RT_CUBLAS(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                       &spec.epilogue, sizeof spec.epilogue));
  }
  if (spec.fast_accum != 0) {
    RT_CUBLAS(cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &spec.fast_accum,
        sizeof spec.fast_accum));
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<LtGemm>> LtGemm::Create(cublasLtHandle_t handle,
                                                 const LtGemmSpec& spec,
                                                 void* workspace,
                                                 size_t workspace_bytes) {
  std::unique_ptr<LtGemm> g(new LtGemm());
  g->handle_ = handle;
  g->spec_ = spec;
  g->workspace_ = workspace;
  g->workspace_bytes_ = workspace_bytes;
  RT_CUBLAS(cublasLtMatmulDescCreate(&g->desc_, spec.compute, spec.scale_type));
  RT_RETURN_IF_ERROR(ConfigureMatmulDesc(g->desc_, spec));
  // Stored shapes: op(A) is m x k, so A is k x m when transposed.
  const bool ta = spec.trans_a != CUBLAS_OP_N, tb = spec.trans_b != CUBLAS_OP_N;
  const uint64_t a_rows = ta ? spec.k : spec.m, a_cols = ta ? spec.m : spec.k;
  const uint64_t b_rows = tb ? spec.n : spec.k, b_cols = tb ? spec.k : spec.n;
  RT_CUBLAS(cublasLtMatrixLayoutCreate(&g->a_layout_, spec.a_type, a_rows,
                                       a_cols, a_rows));
  RT_CUBLAS(cublasLtMatrixLayoutCreate(&g->b_layout_, spec.b_type, b_rows,
                                       b_cols, b_rows));
  RT_CUBLAS(cublasLtMatrixLayoutCreate(&g->c_layout_, spec.c_type, spec.m,
                                       spec.n, spec.m));

  cublasLtMatmulPreference_t pref = nullptr;
  RT_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
      sizeof workspace_bytes);
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(handle, g->desc_, g->a_layout_,
                                        g->b_layout_, g->c_layout_,
                                        g->c_layout_, pref, 1, &heur, &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  RT_CUBLAS(st);
  if (found == 0) {
    return Unavailable(
        "cublasLtMatmulAlgoGetHeuristic found no algorithm for this type "
        "and shape on this GPU");
  }
  g->algo_ = heur.algo;

  if (spec.scale_type == CUDA_R_64F) {
    const double one = 1, zero = 0;
    std::memcpy(g->alpha_, &one, sizeof one);
    std::memcpy(g->beta_, &zero, sizeof zero);
  } else if (spec.scale_type == CUDA_R_32I) {
    const int32_t one = 1, zero = 0;
    std::memcpy(g->alpha_, &one, sizeof one);
    std::memcpy(g->beta_, &zero, sizeof zero);
  } else {
    const float one = 1, zero = 0;
    std::memcpy(g->alpha_, &one, sizeof one);
    std::memcpy(g->beta_, &zero, sizeof zero);
  }
  return g;
}

LtGemm::~LtGemm() {
  if (c_layout_) cublasLtMatrixLayoutDestroy(c_layout_);
  if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

Status LtGemm::Run(const void* a, const void* b, void* c,
                   cudaStream_t stream) {
  RT_CUBLAS(cublasLtMatmul(handle_, desc_, alpha_, a, a_layout_, b, b_layout_,
                           beta_, c, c_layout_, c, c_layout_, &algo_,
                           workspace_, workspace_bytes_, stream));
  return OkStatus();
}

}  // namespace rooftrace::kernels::gpu
