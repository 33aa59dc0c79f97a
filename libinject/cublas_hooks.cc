// The interposed cuBLAS / cuBLASLt entry points (exported by the version
// script; active when libinject is LD_PRELOADed). Each records the call's
// shape through GemmScope and forwards to the real function, returning its
// status unchanged. The real function is found in the already-loaded
// libcublas / libcublasLt (also when it was dlopen()ed RTLD_LOCAL), else
// through RTLD_NEXT.
#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>

#include "libinject/field_numbers.h"
#include "libinject/gemm_shapes.h"
#include "libinject/log.h"

namespace rooftrace::inject {
namespace {

void* FindReal(const char* name, const char* const* libraries,
               const char* version) {
  for (const char* const* lib = libraries; *lib != nullptr; ++lib) {
    void* handle = dlopen(*lib, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* fn = dlvsym(handle, name, version);
    if (fn == nullptr) fn = dlsym(handle, name);
    dlclose(handle);  // still loaded: the host holds its own reference
    if (fn != nullptr) return fn;
  }
  void* fn = dlvsym(RTLD_NEXT, name, version);
  if (fn == nullptr) fn = dlsym(RTLD_NEXT, name);
  return fn;
}

const char* const kCublasLibs[] = {"libcublas.so.13", "libcublas.so.12",
                                   "libcublas.so", nullptr};
const char* const kCublasLtLibs[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                     "libcublasLt.so", nullptr};

std::atomic<bool> g_missing_said{false};

template <typename Fn>
Fn Resolve(std::atomic<Fn>& cache, const char* name, bool lt) {
  Fn fn = cache.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  fn = reinterpret_cast<Fn>(
      FindReal(name, lt ? kCublasLtLibs : kCublasLibs,
               lt ? "libcublasLt.so.13" : "libcublas.so.13"));
  if (fn == nullptr) {
    RT_SAY_ONCE(g_missing_said, LogLevel::kWarn,
                "%s called but no libcublas%s provides it; returning "
                "CUBLAS_STATUS_NOT_INITIALIZED",
                name, lt ? "Lt" : "");
    return nullptr;
  }
  cache.store(fn, std::memory_order_release);
  return fn;
}

// Resolves the real `name` once per hook; `type` is its pointer type.
#define RT_REAL_T(name, lt, type)                                        \
  static std::atomic<type> real_cache{nullptr};                          \
  auto real = ::rooftrace::inject::Resolve(real_cache, #name, lt);       \
  if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED
#define RT_REAL(name, lt) RT_REAL_T(name, lt, decltype(&::name))

void FillShape(GemmRecord& r, cublasOperation_t ta, cublasOperation_t tb,
               int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
               int64_t ldc, const void* a, const void* b, const void* c,
               int32_t a_type, int32_t b_type, int32_t c_type,
               int32_t compute_type) {
  r.trans_a = TransposeOf(ta);
  r.trans_b = TransposeOf(tb);
  r.m = m;
  r.n = n;
  r.k = k;
  r.lda = lda;
  r.ldb = ldb;
  r.ldc = ldc;
  r.a_ptr = reinterpret_cast<uintptr_t>(a);
  r.b_ptr = reinterpret_cast<uintptr_t>(b);
  r.c_ptr = reinterpret_cast<uintptr_t>(c);
  r.d_ptr = r.c_ptr;
  r.a_type = a_type;
  r.b_type = b_type;
  r.c_type = c_type;
  r.d_type = c_type;
  r.compute_type = compute_type;
  r.precision = PrecisionClassOf(compute_type, a_type);
}

template <typename T>
T LayoutAttr(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
             T fallback) {
  using GetFn = decltype(&::cublasLtMatrixLayoutGetAttribute);
  static std::atomic<GetFn> cache{nullptr};
  GetFn get = Resolve(cache, "cublasLtMatrixLayoutGetAttribute", true);
  T value = fallback;
  size_t written = 0;
  if (get == nullptr || layout == nullptr ||
      get(layout, attr, &value, sizeof value, &written) != CUBLAS_STATUS_SUCCESS) {
    return fallback;
  }
  return value;
}

template <typename T>
T DescAttr(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
           T fallback) {
  using GetFn = decltype(&::cublasLtMatmulDescGetAttribute);
  static std::atomic<GetFn> cache{nullptr};
  GetFn get = Resolve(cache, "cublasLtMatmulDescGetAttribute", true);
  T value = fallback;
  size_t written = 0;
  if (get == nullptr || desc == nullptr ||
      get(desc, attr, &value, sizeof value, &written) != CUBLAS_STATUS_SUCCESS) {
    return fallback;
  }
  return value;
}

}  // namespace
}  // namespace rooftrace::inject

using rooftrace::inject::FillShape;
using rooftrace::inject::GemmScope;
namespace enums = rooftrace::inject::enums;

// Exported (the version script names each of them); the rest of the
// library is built with hidden visibility.
#pragma GCC visibility push(default)
extern "C" {

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const float* alpha, const float* A, int lda,
                              const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
  RT_REAL(cublasSgemm_v2, false);
  GemmScope scope(enums::kGemmApiSgemm);
  if (scope.recording()) {
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, A, B, C,
              CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const double* alpha, const double* A, int lda,
                              const double* B, int ldb, const double* beta,
                              double* C, int ldc) {
  RT_REAL(cublasDgemm_v2, false);
  GemmScope scope(enums::kGemmApiDgemm);
  if (scope.recording()) {
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, A, B, C,
              CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F);
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k,
                           const __half* alpha, const __half* A, int lda,
                           const __half* B, int ldb, const __half* beta,
                           __half* C, int ldc) {
  RT_REAL_T(cublasHgemm, false,
            cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                               cublasOperation_t, int, int, int, const __half*,
                               const __half*, int, const __half*, int,
                               const __half*, __half*, int));
  GemmScope scope(enums::kGemmApiHgemm);
  if (scope.recording()) {
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, A, B, C,
              CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F);
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k,
                            const void* alpha, const void* A,
                            cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta,
                            void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  RT_REAL_T(cublasGemmEx, false,
            cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                               cublasOperation_t, int, int, int, const void*,
                               const void*, cudaDataType, int, const void*,
                               cudaDataType, int, const void*, void*,
                               cudaDataType, int, cublasComputeType_t,
                               cublasGemmAlgo_t));
  GemmScope scope(enums::kGemmApiGemmEx);
  if (scope.recording()) {
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, A, B, C,
              Atype, Btype, Ctype, computeType);
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype,
           ldb, beta, C, Ctype, ldc, computeType, algo);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const float* alpha, const float* A, int lda,
    long long int strideA, const float* B, int ldb, long long int strideB,
    const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
  RT_REAL(cublasSgemmStridedBatched, false);
  GemmScope scope(enums::kGemmApiSgemmStridedBatched);
  if (scope.recording()) {
    auto& r = scope.record();
    FillShape(r, transa, transb, m, n, k, lda, ldb, ldc, A, B, C, CUDA_R_32F,
              CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);
    r.batch = batchCount;
    r.stride_a = strideA;
    r.stride_b = strideB;
    r.stride_c = strideC;
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
           strideB, beta, C, ldc, strideC, batchCount);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const double* alpha, const double* A, int lda,
    long long int strideA, const double* B, int ldb, long long int strideB,
    const double* beta, double* C, int ldc, long long int strideC,
    int batchCount) {
  RT_REAL(cublasDgemmStridedBatched, false);
  GemmScope scope(enums::kGemmApiDgemmStridedBatched);
  if (scope.recording()) {
    auto& r = scope.record();
    FillShape(r, transa, transb, m, n, k, lda, ldb, ldc, A, B, C, CUDA_R_64F,
              CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F);
    r.batch = batchCount;
    r.stride_a = strideA;
    r.stride_b = strideB;
    r.stride_c = strideC;
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
           strideB, beta, C, ldc, strideC, batchCount);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasHgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const __half* alpha, const __half* A, int lda,
    long long int strideA, const __half* B, int ldb, long long int strideB,
    const __half* beta, __half* C, int ldc, long long int strideC,
    int batchCount) {
  RT_REAL_T(cublasHgemmStridedBatched, false,
            cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                               cublasOperation_t, int, int, int, const __half*,
                               const __half*, int, long long int, const __half*,
                               int, long long int, const __half*, __half*, int,
                               long long int, int));
  GemmScope scope(enums::kGemmApiHgemmStridedBatched);
  if (scope.recording()) {
    auto& r = scope.record();
    FillShape(r, transa, transb, m, n, k, lda, ldb, ldc, A, B, C, CUDA_R_16F,
              CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F);
    r.batch = batchCount;
    r.stride_a = strideA;
    r.stride_b = strideB;
    r.stride_c = strideC;
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
           strideB, beta, C, ldc, strideC, batchCount);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
    int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
    long long int strideB, const void* beta, void* C, cudaDataType Ctype,
    int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  RT_REAL_T(cublasGemmStridedBatchedEx, false,
            cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                               cublasOperation_t, int, int, int, const void*,
                               const void*, cudaDataType, int, long long int,
                               const void*, cudaDataType, int, long long int,
                               const void*, void*, cudaDataType, int,
                               long long int, int, cublasComputeType_t,
                               cublasGemmAlgo_t));
  GemmScope scope(enums::kGemmApiGemmStridedBatchedEx);
  if (scope.recording()) {
    auto& r = scope.record();
    FillShape(r, transa, transb, m, n, k, lda, ldb, ldc, A, B, C, Atype, Btype,
              Ctype, computeType);
    r.batch = batchCount;
    r.stride_a = strideA;
    r.stride_b = strideB;
    r.stride_c = strideC;
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
           Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount,
           computeType, algo);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle,
                                  cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n,
                                  int k, const float* alpha,
                                  const float* const Aarray[], int lda,
                                  const float* const Barray[], int ldb,
                                  const float* beta, float* const Carray[],
                                  int ldc, int batchCount) {
  RT_REAL(cublasSgemmBatched, false);
  GemmScope scope(enums::kGemmApiSgemmBatched);
  if (scope.recording()) {
    // Pointer arrays live in device memory: their addresses are recorded.
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, Aarray,
              Barray, Carray, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
              CUBLAS_COMPUTE_32F);
    scope.record().batch = batchCount;
  }
  const cublasStatus_t s = real(handle, transa, transb, m, n, k, alpha, Aarray,
                                lda, Barray, ldb, beta, Carray, ldc, batchCount);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t handle,
                                  cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n,
                                  int k, const double* alpha,
                                  const double* const Aarray[], int lda,
                                  const double* const Barray[], int ldb,
                                  const double* beta, double* const Carray[],
                                  int ldc, int batchCount) {
  RT_REAL(cublasDgemmBatched, false);
  GemmScope scope(enums::kGemmApiDgemmBatched);
  if (scope.recording()) {
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, Aarray,
              Barray, Carray, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F,
              CUBLAS_COMPUTE_64F);
    scope.record().batch = batchCount;
  }
  const cublasStatus_t s = real(handle, transa, transb, m, n, k, alpha, Aarray,
                                lda, Barray, ldb, beta, Carray, ldc, batchCount);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasHgemmBatched(cublasHandle_t handle,
                                  cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n,
                                  int k, const __half* alpha,
                                  const __half* const Aarray[], int lda,
                                  const __half* const Barray[], int ldb,
                                  const __half* beta, __half* const Carray[],
                                  int ldc, int batchCount) {
  RT_REAL_T(cublasHgemmBatched, false,
            cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                               cublasOperation_t, int, int, int, const __half*,
                               const __half* const[], int,
                               const __half* const[], int, const __half*,
                               __half* const[], int, int));
  GemmScope scope(enums::kGemmApiHgemmBatched);
  if (scope.recording()) {
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, Aarray,
              Barray, Carray, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F,
              CUBLAS_COMPUTE_16F);
    scope.record().batch = batchCount;
  }
  const cublasStatus_t s = real(handle, transa, transb, m, n, k, alpha, Aarray,
                                lda, Barray, ldb, beta, Carray, ldc, batchCount);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasGemmBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void* alpha, const void* const Aarray[],
    cudaDataType Atype, int lda, const void* const Barray[],
    cudaDataType Btype, int ldb, const void* beta, void* const Carray[],
    cudaDataType Ctype, int ldc, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  RT_REAL_T(cublasGemmBatchedEx, false,
            cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                               cublasOperation_t, int, int, int, const void*,
                               const void* const[], cudaDataType, int,
                               const void* const[], cudaDataType, int,
                               const void*, void* const[], cudaDataType, int,
                               int, cublasComputeType_t, cublasGemmAlgo_t));
  GemmScope scope(enums::kGemmApiGemmBatchedEx);
  if (scope.recording()) {
    FillShape(scope.record(), transa, transb, m, n, k, lda, ldb, ldc, Aarray,
              Barray, Carray, Atype, Btype, Ctype, computeType);
    scope.record().batch = batchCount;
  }
  const cublasStatus_t s =
      real(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray,
           Btype, ldb, beta, Carray, Ctype, ldc, batchCount, computeType, algo);
  scope.Finish(s);
  return s;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
                              cublasLtMatmulDesc_t computeDesc,
                              const void* alpha, const void* A,
                              cublasLtMatrixLayout_t Adesc, const void* B,
                              cublasLtMatrixLayout_t Bdesc, const void* beta,
                              const void* C, cublasLtMatrixLayout_t Cdesc,
                              void* D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t* algo,
                              void* workspace, size_t workspaceSizeInBytes,
                              cudaStream_t stream) {
  RT_REAL(cublasLtMatmul, true);
  GemmScope scope(enums::kGemmApiLtMatmul);
  if (scope.recording()) {
    using rooftrace::inject::DescAttr;
    using rooftrace::inject::LayoutAttr;
    auto& r = scope.record();
    const int32_t ta = DescAttr<int32_t>(computeDesc, CUBLASLT_MATMUL_DESC_TRANSA, 0);
    const int32_t tb = DescAttr<int32_t>(computeDesc, CUBLASLT_MATMUL_DESC_TRANSB, 0);
    const int32_t compute =
        DescAttr<int32_t>(computeDesc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, -1);
    const uint64_t rows_d = LayoutAttr<uint64_t>(Ddesc, CUBLASLT_MATRIX_LAYOUT_ROWS, 0);
    const uint64_t cols_d = LayoutAttr<uint64_t>(Ddesc, CUBLASLT_MATRIX_LAYOUT_COLS, 0);
    const uint64_t rows_a = LayoutAttr<uint64_t>(Adesc, CUBLASLT_MATRIX_LAYOUT_ROWS, 0);
    const uint64_t cols_a = LayoutAttr<uint64_t>(Adesc, CUBLASLT_MATRIX_LAYOUT_COLS, 0);
    const int32_t a_type = static_cast<int32_t>(
        LayoutAttr<uint32_t>(Adesc, CUBLASLT_MATRIX_LAYOUT_TYPE, ~0u));
    FillShape(r, static_cast<cublasOperation_t>(ta),
              static_cast<cublasOperation_t>(tb), static_cast<int64_t>(rows_d),
              static_cast<int64_t>(cols_d),
              static_cast<int64_t>(ta == CUBLAS_OP_N ? cols_a : rows_a),
              LayoutAttr<int64_t>(Adesc, CUBLASLT_MATRIX_LAYOUT_LD, 0),
              LayoutAttr<int64_t>(Bdesc, CUBLASLT_MATRIX_LAYOUT_LD, 0),
              LayoutAttr<int64_t>(Cdesc, CUBLASLT_MATRIX_LAYOUT_LD, 0), A, B, C,
              a_type,
              static_cast<int32_t>(
                  LayoutAttr<uint32_t>(Bdesc, CUBLASLT_MATRIX_LAYOUT_TYPE, ~0u)),
              static_cast<int32_t>(
                  LayoutAttr<uint32_t>(Cdesc, CUBLASLT_MATRIX_LAYOUT_TYPE, ~0u)),
              compute);
    r.d_ptr = reinterpret_cast<uintptr_t>(D);
    r.d_type = static_cast<int32_t>(
        LayoutAttr<uint32_t>(Ddesc, CUBLASLT_MATRIX_LAYOUT_TYPE, ~0u));
    r.batch = LayoutAttr<int32_t>(Ddesc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1);
    r.stride_a = LayoutAttr<int64_t>(Adesc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
    r.stride_b = LayoutAttr<int64_t>(Bdesc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
    r.stride_c = LayoutAttr<int64_t>(Cdesc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
    r.epilogue = DescAttr<uint32_t>(computeDesc, CUBLASLT_MATMUL_DESC_EPILOGUE, 1);
  }
  const cublasStatus_t s =
      real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc,
           D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
  scope.Finish(s);
  return s;
}

}  // extern "C"
#pragma GCC visibility pop
