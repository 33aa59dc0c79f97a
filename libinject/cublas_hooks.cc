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

#include "model/gemm.h"
#include "proto/field_numbers.h"
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
  GemmShape shape;
  shape.a_type = a_type;
  shape.b_type = b_type;
  shape.compute_type = compute_type;
  // The one classifier the collector uses too (model/gemm.h); the wire
  // value is model::Precision's.
  r.precision = static_cast<uint32_t>(GemmPrecision(shape));
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

// ------------------------------------------------------------------ hooks
// One template per family, instantiated for the int (LP64) and int64_t
// (ILP64, the *_64 entry points) variants; the extern "C" functions below
// only resolve the real function and forward.
namespace rooftrace::inject {
namespace {

template <typename T, typename Int>
using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                  cublasOperation_t, Int, Int, Int, const T*,
                                  const T*, Int, const T*, Int, const T*, T*,
                                  Int);
template <typename T, typename Int>
using StridedFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                     cublasOperation_t, Int, Int, Int,
                                     const T*, const T*, Int, long long int,
                                     const T*, Int, long long int, const T*,
                                     T*, Int, long long int, Int);
template <typename T, typename Int>
using BatchedFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                     cublasOperation_t, Int, Int, Int,
                                     const T*, const T* const*, Int,
                                     const T* const*, Int, const T*,
                                     T* const*, Int, Int);
template <typename Int>
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                    cublasOperation_t, Int, Int, Int,
                                    const void*, const void*, cudaDataType,
                                    Int, const void*, cudaDataType, Int,
                                    const void*, void*, cudaDataType, Int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
template <typename Int>
using StridedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int, Int,
    const void*, const void*, cudaDataType, Int, long long int, const void*,
    cudaDataType, Int, long long int, const void*, void*, cudaDataType, Int,
    long long int, Int, cublasComputeType_t, cublasGemmAlgo_t);
template <typename Int>
using BatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int, Int,
    const void*, const void* const*, cudaDataType, Int, const void* const*,
    cudaDataType, Int, const void*, void* const*, cudaDataType, Int, Int,
    cublasComputeType_t, cublasGemmAlgo_t);

// Element type -> (cudaDataType, compute type) of the typed APIs.
template <typename T> struct Types;
template <> struct Types<float> {
  static constexpr int32_t kData = CUDA_R_32F;
  static constexpr int32_t kCompute = CUBLAS_COMPUTE_32F;
};
template <> struct Types<double> {
  static constexpr int32_t kData = CUDA_R_64F;
  static constexpr int32_t kCompute = CUBLAS_COMPUTE_64F;
};
template <> struct Types<__half> {
  static constexpr int32_t kData = CUDA_R_16F;
  static constexpr int32_t kCompute = CUBLAS_COMPUTE_16F;
};

template <typename T, typename Int>
cublasStatus_t Gemm(GemmFn<T, Int> real, uint32_t api, cublasHandle_t h,
                    cublasOperation_t ta, cublasOperation_t tb, Int m, Int n,
                    Int k, const T* alpha, const T* A, Int lda, const T* B,
                    Int ldb, const T* beta, T* C, Int ldc) {
  GemmScope scope(api);
  if (scope.recording()) {
    FillShape(scope.record(), ta, tb, m, n, k, lda, ldb, ldc, A, B, C,
              Types<T>::kData, Types<T>::kData, Types<T>::kData,
              Types<T>::kCompute);
  }
  const cublasStatus_t s =
      real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  scope.Finish(s);
  return s;
}

template <typename T, typename Int>
cublasStatus_t Strided(StridedFn<T, Int> real, uint32_t api, cublasHandle_t h,
                       cublasOperation_t ta, cublasOperation_t tb, Int m,
                       Int n, Int k, const T* alpha, const T* A, Int lda,
                       long long int sa, const T* B, Int ldb, long long int sb,
                       const T* beta, T* C, Int ldc, long long int sc,
                       Int batch) {
  GemmScope scope(api);
  if (scope.recording()) {
    auto& r = scope.record();
    FillShape(r, ta, tb, m, n, k, lda, ldb, ldc, A, B, C, Types<T>::kData,
              Types<T>::kData, Types<T>::kData, Types<T>::kCompute);
    r.batch = batch;
    r.stride_a = sa;
    r.stride_b = sb;
    r.stride_c = sc;
  }
  const cublasStatus_t s = real(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb,
                                sb, beta, C, ldc, sc, batch);
  scope.Finish(s);
  return s;
}

// Batched: the pointer arrays live in device memory; their addresses are
// what is recorded as operand pointers.
template <typename T, typename Int>
cublasStatus_t Batched(BatchedFn<T, Int> real, uint32_t api, cublasHandle_t h,
                       cublasOperation_t ta, cublasOperation_t tb, Int m,
                       Int n, Int k, const T* alpha, const T* const* A,
                       Int lda, const T* const* B, Int ldb, const T* beta,
                       T* const* C, Int ldc, Int batch) {
  GemmScope scope(api);
  if (scope.recording()) {
    FillShape(scope.record(), ta, tb, m, n, k, lda, ldb, ldc, A, B, C,
              Types<T>::kData, Types<T>::kData, Types<T>::kData,
              Types<T>::kCompute);
    scope.record().batch = batch;
  }
  const cublasStatus_t s =
      real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);
  scope.Finish(s);
  return s;
}

template <typename Int>
cublasStatus_t GemmEx(GemmExFn<Int> real, cublasHandle_t h,
                      cublasOperation_t ta, cublasOperation_t tb, Int m, Int n,
                      Int k, const void* alpha, const void* A, cudaDataType at,
                      Int lda, const void* B, cudaDataType bt, Int ldb,
                      const void* beta, void* C, cudaDataType ct, Int ldc,
                      cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  GemmScope scope(wire::enums::kGemmApiGemmEx);
  if (scope.recording()) {
    FillShape(scope.record(), ta, tb, m, n, k, lda, ldb, ldc, A, B, C, at, bt,
              ct, compute);
  }
  const cublasStatus_t s = real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt,
                                ldb, beta, C, ct, ldc, compute, algo);
  scope.Finish(s);
  return s;
}

template <typename Int>
cublasStatus_t StridedEx(StridedExFn<Int> real, cublasHandle_t h,
                         cublasOperation_t ta, cublasOperation_t tb, Int m,
                         Int n, Int k, const void* alpha, const void* A,
                         cudaDataType at, Int lda, long long int sa,
                         const void* B, cudaDataType bt, Int ldb,
                         long long int sb, const void* beta, void* C,
                         cudaDataType ct, Int ldc, long long int sc, Int batch,
                         cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  GemmScope scope(wire::enums::kGemmApiGemmStridedBatchedEx);
  if (scope.recording()) {
    auto& r = scope.record();
    FillShape(r, ta, tb, m, n, k, lda, ldb, ldc, A, B, C, at, bt, ct, compute);
    r.batch = batch;
    r.stride_a = sa;
    r.stride_b = sb;
    r.stride_c = sc;
  }
  const cublasStatus_t s =
      real(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C,
           ct, ldc, sc, batch, compute, algo);
  scope.Finish(s);
  return s;
}

template <typename Int>
cublasStatus_t BatchedEx(BatchedExFn<Int> real, cublasHandle_t h,
                         cublasOperation_t ta, cublasOperation_t tb, Int m,
                         Int n, Int k, const void* alpha,
                         const void* const* A, cudaDataType at, Int lda,
                         const void* const* B, cudaDataType bt, Int ldb,
                         const void* beta, void* const* C, cudaDataType ct,
                         Int ldc, Int batch, cublasComputeType_t compute,
                         cublasGemmAlgo_t algo) {
  GemmScope scope(wire::enums::kGemmApiGemmBatchedEx);
  if (scope.recording()) {
    FillShape(scope.record(), ta, tb, m, n, k, lda, ldb, ldc, A, B, C, at, bt,
              ct, compute);
    scope.record().batch = batch;
  }
  const cublasStatus_t s = real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt,
                                ldb, beta, C, ct, ldc, batch, compute, algo);
  scope.Finish(s);
  return s;
}

}  // namespace
}  // namespace rooftrace::inject

namespace ri = rooftrace::inject;
namespace enums = rooftrace::wire::enums;
using ri::GemmScope;
using ri::FillShape;

// Resolves the real `name` (pointer type Fn) once, or returns
// CUBLAS_STATUS_NOT_INITIALIZED from the hook.
#define RT_RESOLVE(name, lt)                                    \
  static std::atomic<Fn> real_cache{nullptr};                   \
  Fn real = ri::Resolve(real_cache, #name, lt);                 \
  if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED

#define RT_TYPED_GEMM(name, T, Int, api)                                     \
  cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta,                \
                      cublasOperation_t tb, Int m, Int n, Int k,             \
                      const T* alpha, const T* A, Int lda, const T* B,       \
                      Int ldb, const T* beta, T* C, Int ldc) {               \
    using Fn = ri::GemmFn<T, Int>;                                           \
    RT_RESOLVE(name, false);                                                 \
    return ri::Gemm<T, Int>(real, api, h, ta, tb, m, n, k, alpha, A, lda, B, \
                            ldb, beta, C, ldc);                              \
  }

#define RT_STRIDED_GEMM(name, T, Int, api)                                   \
  cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta,                \
                      cublasOperation_t tb, Int m, Int n, Int k,             \
                      const T* alpha, const T* A, Int lda, long long int sa, \
                      const T* B, Int ldb, long long int sb, const T* beta,  \
                      T* C, Int ldc, long long int sc, Int batch) {          \
    using Fn = ri::StridedFn<T, Int>;                                        \
    RT_RESOLVE(name, false);                                                 \
    return ri::Strided<T, Int>(real, api, h, ta, tb, m, n, k, alpha, A, lda, \
                               sa, B, ldb, sb, beta, C, ldc, sc, batch);     \
  }

#define RT_BATCHED_GEMM(name, T, Int, api)                                   \
  cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta,                \
                      cublasOperation_t tb, Int m, Int n, Int k,             \
                      const T* alpha, const T* const A[], Int lda,           \
                      const T* const B[], Int ldb, const T* beta,            \
                      T* const C[], Int ldc, Int batch) {                    \
    using Fn = ri::BatchedFn<T, Int>;                                        \
    RT_RESOLVE(name, false);                                                 \
    return ri::Batched<T, Int>(real, api, h, ta, tb, m, n, k, alpha, A, lda, \
                               B, ldb, beta, C, ldc, batch);                 \
  }

#define RT_GEMM_EX(name, Int)                                                \
  cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta,                \
                      cublasOperation_t tb, Int m, Int n, Int k,             \
                      const void* alpha, const void* A, cudaDataType at,     \
                      Int lda, const void* B, cudaDataType bt, Int ldb,      \
                      const void* beta, void* C, cudaDataType ct, Int ldc,   \
                      cublasComputeType_t compute, cublasGemmAlgo_t algo) {  \
    using Fn = ri::GemmExFn<Int>;                                            \
    RT_RESOLVE(name, false);                                                 \
    return ri::GemmEx<Int>(real, h, ta, tb, m, n, k, alpha, A, at, lda, B,   \
                           bt, ldb, beta, C, ct, ldc, compute, algo);        \
  }

#define RT_STRIDED_EX(name, Int)                                             \
  cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta,                \
                      cublasOperation_t tb, Int m, Int n, Int k,             \
                      const void* alpha, const void* A, cudaDataType at,     \
                      Int lda, long long int sa, const void* B,              \
                      cudaDataType bt, Int ldb, long long int sb,            \
                      const void* beta, void* C, cudaDataType ct, Int ldc,   \
                      long long int sc, Int batch,                           \
                      cublasComputeType_t compute, cublasGemmAlgo_t algo) {  \
    using Fn = ri::StridedExFn<Int>;                                         \
    RT_RESOLVE(name, false);                                                 \
    return ri::StridedEx<Int>(real, h, ta, tb, m, n, k, alpha, A, at, lda,   \
                              sa, B, bt, ldb, sb, beta, C, ct, ldc, sc,      \
                              batch, compute, algo);                         \
  }

#define RT_BATCHED_EX(name, Int)                                             \
  cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta,                \
                      cublasOperation_t tb, Int m, Int n, Int k,             \
                      const void* alpha, const void* const A[],              \
                      cudaDataType at, Int lda, const void* const B[],       \
                      cudaDataType bt, Int ldb, const void* beta,            \
                      void* const C[], cudaDataType ct, Int ldc, Int batch,  \
                      cublasComputeType_t compute, cublasGemmAlgo_t algo) {  \
    using Fn = ri::BatchedExFn<Int>;                                         \
    RT_RESOLVE(name, false);                                                 \
    return ri::BatchedEx<Int>(real, h, ta, tb, m, n, k, alpha, A, at, lda,   \
                              B, bt, ldb, beta, C, ct, ldc, batch, compute,  \
                              algo);                                         \
  }

// Exported (the version script names each of them); the rest of the
// library is built with hidden visibility. Parameter lists match
// cublas_api.h / cublasLt.h (the compiler checks them against the
// declarations).
#pragma GCC visibility push(default)
extern "C" {

RT_TYPED_GEMM(cublasSgemm_v2, float, int, enums::kGemmApiSgemm)
RT_TYPED_GEMM(cublasDgemm_v2, double, int, enums::kGemmApiDgemm)
RT_TYPED_GEMM(cublasHgemm, __half, int, enums::kGemmApiHgemm)
RT_TYPED_GEMM(cublasSgemm_v2_64, float, int64_t, enums::kGemmApiSgemm)
RT_TYPED_GEMM(cublasDgemm_v2_64, double, int64_t, enums::kGemmApiDgemm)
RT_TYPED_GEMM(cublasHgemm_64, __half, int64_t, enums::kGemmApiHgemm)

RT_STRIDED_GEMM(cublasSgemmStridedBatched, float, int,
                enums::kGemmApiSgemmStridedBatched)
RT_STRIDED_GEMM(cublasDgemmStridedBatched, double, int,
                enums::kGemmApiDgemmStridedBatched)
RT_STRIDED_GEMM(cublasHgemmStridedBatched, __half, int,
                enums::kGemmApiHgemmStridedBatched)
RT_STRIDED_GEMM(cublasSgemmStridedBatched_64, float, int64_t,
                enums::kGemmApiSgemmStridedBatched)
RT_STRIDED_GEMM(cublasDgemmStridedBatched_64, double, int64_t,
                enums::kGemmApiDgemmStridedBatched)
RT_STRIDED_GEMM(cublasHgemmStridedBatched_64, __half, int64_t,
                enums::kGemmApiHgemmStridedBatched)

RT_BATCHED_GEMM(cublasSgemmBatched, float, int, enums::kGemmApiSgemmBatched)
RT_BATCHED_GEMM(cublasDgemmBatched, double, int, enums::kGemmApiDgemmBatched)
RT_BATCHED_GEMM(cublasHgemmBatched, __half, int, enums::kGemmApiHgemmBatched)
RT_BATCHED_GEMM(cublasSgemmBatched_64, float, int64_t,
                enums::kGemmApiSgemmBatched)
RT_BATCHED_GEMM(cublasDgemmBatched_64, double, int64_t,
                enums::kGemmApiDgemmBatched)
RT_BATCHED_GEMM(cublasHgemmBatched_64, __half, int64_t,
                enums::kGemmApiHgemmBatched)

RT_GEMM_EX(cublasGemmEx, int)
RT_GEMM_EX(cublasGemmEx_64, int64_t)
RT_STRIDED_EX(cublasGemmStridedBatchedEx, int)
RT_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
RT_BATCHED_EX(cublasGemmBatchedEx, int)
RT_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)

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
  using Fn = decltype(&::cublasLtMatmul);
  RT_RESOLVE(cublasLtMatmul, true);
  GemmScope scope(enums::kGemmApiLtMatmul);
  if (scope.recording()) {
    using ri::DescAttr;
    using ri::LayoutAttr;
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
