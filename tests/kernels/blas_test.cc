// cuBLASLt descriptors of the calibration GEMMs, read back without a GPU
// (creating and configuring a matmul descriptor needs no device).
#include "kernels/gpu/blas.h"

#include <gtest/gtest.h>

namespace rooftrace::kernels::gpu {
namespace {

// An attribute of a descriptor configured from `spec`.
template <typename T>
T Attribute(const LtGemmSpec& spec, cublasLtMatmulDescAttributes_t attr) {
  cublasLtMatmulDesc_t desc = nullptr;
  EXPECT_EQ(cublasLtMatmulDescCreate(&desc, spec.compute, spec.scale_type),
            CUBLAS_STATUS_SUCCESS);
  Status s = ConfigureMatmulDesc(desc, spec);
  EXPECT_TRUE(s.ok()) << s.message();
  T value{};
  size_t written = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, attr, &value, sizeof value,
                                           &written),
            CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulDescDestroy(desc);
  return value;
}

// The peak GEMMs are TN (A transposed), the form cuBLASLt requires for fp8.
TEST(MatmulDescTest, PeakGemmsAreTn) {
  const LtGemmSpec bf16 = PeakSpec(GemmType::kBf16, 256, 256, 256);
  EXPECT_EQ(Attribute<int32_t>(bf16, CUBLASLT_MATMUL_DESC_TRANSA), CUBLAS_OP_T);
  EXPECT_EQ(Attribute<int32_t>(bf16, CUBLASLT_MATMUL_DESC_TRANSB), CUBLAS_OP_N);
}

// The fp8 peak GEMM runs with fast accumulation, as inference engines run
// fp8 GEMMs (FAST_ACCUM kernels are faster: a roof calibrated without it
// would sit below kernels that really run). The other types have no such
// mode and keep the default.
TEST(MatmulDescTest, Fp8PeakUsesFastAccumulation) {
  EXPECT_EQ(Attribute<int8_t>(PeakSpec(GemmType::kFp8, 256, 256, 256),
                              CUBLASLT_MATMUL_DESC_FAST_ACCUM),
            1);
  EXPECT_EQ(Attribute<int8_t>(PeakSpec(GemmType::kBf16, 256, 256, 256),
                              CUBLASLT_MATMUL_DESC_FAST_ACCUM),
            0);
}

}  // namespace
}  // namespace rooftrace::kernels::gpu
