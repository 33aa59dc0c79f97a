// A stand-in libcublas.so.13 for tests without a GPU. cublasGemmEx is
// implemented on top of cublasLtMatmul, as the real library does, so a
// test can check that one call is recorded once (no double count).
// cublasSgemm_v2 returns CUBLAS_STATUS_INVALID_VALUE, the ILP64 strided
// batched call CUBLAS_STATUS_NOT_SUPPORTED; the strided batched call
// succeeds.
#include <cublasLt.h>
#include <cublas_api.h>

extern "C" {

cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t,
                              cublasOperation_t, int, int, int, const float*,
                              const float*, int, const float*, int,
                              const float*, float*, int) {
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t,
                                         cublasOperation_t, int, int, int,
                                         const float*, const float*, int,
                                         long long int, const float*, int,
                                         long long int, const float*, float*,
                                         int, long long int, int) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t,
    int64_t, const void*, const void*, cudaDataType, int64_t, long long int,
    const void*, cudaDataType, int64_t, long long int, const void*, void*,
    cudaDataType, int64_t, long long int, int64_t, cublasComputeType_t,
    cublasGemmAlgo_t) {
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k,
                            const void* alpha, const void* A,
                            cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta,
                            void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType,
                            cublasGemmAlgo_t) {
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, computeType, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                 sizeof transa);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                 sizeof transb);
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatrixLayoutCreate(&a, Atype, transa == CUBLAS_OP_N ? m : k,
                             transa == CUBLAS_OP_N ? k : m, lda);
  cublasLtMatrixLayoutCreate(&b, Btype, transb == CUBLAS_OP_N ? k : n,
                             transb == CUBLAS_OP_N ? n : k, ldb);
  cublasLtMatrixLayoutCreate(&c, Ctype, m, n, ldc);
  const cublasStatus_t s = cublasLtMatmul(nullptr, desc, alpha, A, a, B, b,
                                          beta, C, c, C, c, nullptr, nullptr,
                                          0, nullptr);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(c);
  cublasLtMatmulDescDestroy(desc);
  return s;
}

}  // extern "C"
