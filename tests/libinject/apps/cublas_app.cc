// A host program that calls cuBLAS / cuBLASLt entry points, for libinject's
// tests. Built twice: against the stand-in libraries (fake_cublas*.cc) and
// against the real CUDA libraries (no GPU here: the real calls fail, and
// the failure must reach us unchanged). Prints every status on stdout;
// exit code 5.
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>

#ifdef ROOFTRACE_FAKE_CUBLAS
extern "C" int fake_lt_matmul_calls();
#endif

namespace {
template <typename T>
T* Ptr(uintptr_t v) {
  return reinterpret_cast<T*>(v);
}
}  // namespace

int main() {
  const float one = 1.0f;
  cublasStatus_t s = cublasSgemm_v2(nullptr, CUBLAS_OP_N, CUBLAS_OP_T, 128, 256,
                                    64, &one, Ptr<float>(0x1000), 128,
                                    Ptr<float>(0x2000), 256, &one,
                                    Ptr<float>(0x3000), 128);
  printf("sgemm status %d\n", static_cast<int>(s));

  s = cublasGemmEx(nullptr, CUBLAS_OP_T, CUBLAS_OP_N, 4096, 16, 4096, &one,
                   Ptr<void>(0xA000), CUDA_R_16BF, 4096, Ptr<void>(0xB000),
                   CUDA_R_16BF, 4096, &one, Ptr<void>(0xC000), CUDA_R_16BF,
                   4096, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  printf("gemmex status %d\n", static_cast<int>(s));

  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasStatus_t made =
      cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (made == CUBLAS_STATUS_SUCCESS) {
    const int32_t epilogue = CUBLASLT_EPILOGUE_GELU;
    const int32_t transb = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                   &epilogue, sizeof epilogue);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                   sizeof transb);
    cublasLtMatrixLayoutCreate(&a, CUDA_R_8F_E4M3, 8, 512, 8);
    cublasLtMatrixLayoutCreate(&b, CUDA_R_8F_E4M3, 1024, 512, 1024);
    cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, 8, 1024, 8);
    const int32_t batch = 4;
    const int64_t stride = 8 * 1024;
    cublasLtMatrixLayoutSetAttribute(c, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                     &batch, sizeof batch);
    cublasLtMatrixLayoutSetAttribute(
        c, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
  }
  printf("lt descriptors %d\n", static_cast<int>(made));
  s = cublasLtMatmul(nullptr, desc, &one, Ptr<void>(0xD000), a,
                     Ptr<void>(0xE000), b, &one, Ptr<void>(0xF000), c,
                     Ptr<void>(0xF000), c, nullptr, nullptr, 0, nullptr);
  printf("ltmatmul status %d\n", static_cast<int>(s));

  s = cublasSgemmStridedBatched(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16,
                                &one, Ptr<float>(0x10000), 64, 1024,
                                Ptr<float>(0x20000), 16, 512, &one,
                                Ptr<float>(0x30000), 64, 2048, 12);
  printf("strided status %d\n", static_cast<int>(s));

  // ILP64 entry point with sizes beyond 32 bits.
  s = cublasGemmStridedBatchedEx_64(
      nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 5000000000ll, 8, 128, &one,
      Ptr<void>(0x40000), CUDA_R_16F, 5000000000ll, 0, Ptr<void>(0x50000),
      CUDA_R_16F, 128, 1024, &one, Ptr<void>(0x60000), CUDA_R_16F,
      5000000000ll, 0, 2, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
  printf("strided64 status %d\n", static_cast<int>(s));

#ifdef ROOFTRACE_FAKE_CUBLAS
  printf("real cublasLtMatmul ran %d times\n", fake_lt_matmul_calls());
#else
  int devices = -1;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  printf("cudaGetDeviceCount error %d\n", static_cast<int>(e));
#endif
  return 5;
}
