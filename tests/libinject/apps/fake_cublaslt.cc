// A stand-in libcublasLt.so.13 for tests without a GPU: layouts and matmul
// descriptors really store their attributes (so libinject's shape capture
// is exercised), and cublasLtMatmul counts its calls and returns
// CUBLAS_STATUS_EXECUTION_FAILED so a test can see the status passed back.
#include <cublasLt.h>

#include <cstring>

namespace {
struct FakeLayout {
  int32_t type;
  uint64_t rows;
  uint64_t cols;
  int64_t ld;
  int32_t batch;
  int64_t stride;
};
struct FakeDesc {
  int32_t compute;
  int32_t scale;
  int32_t transa;
  int32_t transb;
  uint32_t epilogue;
};
static_assert(sizeof(FakeLayout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(FakeDesc) <= sizeof(cublasLtMatmulDescOpaque_t));
int g_matmul_calls = 0;

template <typename T>
cublasStatus_t Put(void* buf, size_t size, size_t* written, T value) {
  if (written != nullptr) *written = sizeof value;
  if (buf == nullptr || size < sizeof value) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, &value, sizeof value);
  return CUBLAS_STATUS_SUCCESS;
}
template <typename T>
void Take(const void* buf, T* out) {
  std::memcpy(out, buf, sizeof *out);
}
}  // namespace

extern "C" {

int fake_lt_matmul_calls() { return g_matmul_calls; }

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  auto* opaque = new cublasLtMatrixLayoutOpaque_t{};
  auto* l = reinterpret_cast<FakeLayout*>(opaque);
  *l = FakeLayout{static_cast<int32_t>(type), rows, cols, ld, 1, 0};
  *layout = opaque;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(
    cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
    const void* buf, size_t) {
  auto* l = reinterpret_cast<FakeLayout*>(layout);
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) Take(buf, &l->batch);
  if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) Take(buf, &l->stride);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(
    cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
    void* buf, size_t size, size_t* written) {
  auto* l = reinterpret_cast<FakeLayout*>(layout);
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return Put(buf, size, written, static_cast<uint32_t>(l->type));
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return Put(buf, size, written, l->rows);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return Put(buf, size, written, l->cols);
    case CUBLASLT_MATRIX_LAYOUT_LD: return Put(buf, size, written, l->ld);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return Put(buf, size, written, l->batch);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return Put(buf, size, written, l->stride);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  auto* opaque = new cublasLtMatmulDescOpaque_t{};
  auto* d = reinterpret_cast<FakeDesc*>(opaque);
  *d = FakeDesc{static_cast<int32_t>(compute), static_cast<int32_t>(scale), 0,
                0, 1};
  *desc = opaque;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(
    cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
    const void* buf, size_t) {
  auto* d = reinterpret_cast<FakeDesc*>(desc);
  if (attr == CUBLASLT_MATMUL_DESC_TRANSA) Take(buf, &d->transa);
  if (attr == CUBLASLT_MATMUL_DESC_TRANSB) Take(buf, &d->transb);
  if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE) Take(buf, &d->epilogue);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(
    cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, void* buf,
    size_t size, size_t* written) {
  auto* d = reinterpret_cast<FakeDesc*>(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return Put(buf, size, written, d->compute);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return Put(buf, size, written, d->scale);
    case CUBLASLT_MATMUL_DESC_TRANSA: return Put(buf, size, written, d->transa);
    case CUBLASLT_MATMUL_DESC_TRANSB: return Put(buf, size, written, d->transb);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return Put(buf, size, written, d->epilogue);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t,
                              const void*, const void*, cublasLtMatrixLayout_t,
                              const void*, cublasLtMatrixLayout_t, const void*,
                              const void*, cublasLtMatrixLayout_t, void*,
                              cublasLtMatrixLayout_t,
                              const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t) {
  ++g_matmul_calls;
  return CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
