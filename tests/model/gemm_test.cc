// The one GEMM precision classifier (model/gemm.h), as libinject tags calls
// on the wire and the collector and importers classify them. These cases
// were libinject's own classifier's until the two were merged; where the two
// disagreed the merged rule is stated and checked here.
#include "model/gemm.h"

#include <gtest/gtest.h>

namespace rooftrace {
namespace {

using namespace cuda_type;       // NOLINT
using namespace cublas_compute;  // NOLINT

Precision Classify(int32_t compute_type, int32_t a_type) {
  GemmShape g;
  g.m = g.n = g.k = 8;
  g.a_type = g.b_type = a_type;
  g.compute_type = compute_type;
  return GemmPrecision(g);
}

// Compute type (and input type) -> the roof the FLOPs count against.
TEST(GemmPrecisionTest, FollowsComputeAndInputTypes) {
  // compute 32F with bf16 / fp16 inputs: tensor cores, 16-bit roof.
  EXPECT_EQ(Classify(k32F, kR16BF), Precision::kFp16Tensor);
  EXPECT_EQ(Classify(k32F, kR16F), Precision::kFp16Tensor);
  // compute 32F with fp32 inputs: CUDA cores.
  EXPECT_EQ(Classify(k32F, kR32F), Precision::kFp32);
  EXPECT_EQ(Classify(k32FFastTf32, kR32F), Precision::kTf32Tensor);
  EXPECT_EQ(Classify(k32FFast16F, kR32F), Precision::kFp16Tensor);
  EXPECT_EQ(Classify(k32F, kR8FE4M3), Precision::kFp8Tensor);
  EXPECT_EQ(Classify(k32F, kR8FE5M2), Precision::kFp8Tensor);
  // fp4 (E2M1: MXFP4, NVFP4) inputs: fp4 tensor instructions.
  EXPECT_EQ(Classify(k32F, kR4FE2M1), Precision::kFp4Tensor);
  EXPECT_EQ(Classify(k32I, kR8I), Precision::kInt8Tensor);
  EXPECT_EQ(Classify(k16F, kR16F), Precision::kFp16Tensor);
  // Legacy cudaDataType compute types.
  EXPECT_EQ(Classify(kR32F, kR32F), Precision::kFp32);
  EXPECT_EQ(Classify(kR32F, kR16BF), Precision::kFp16Tensor);
  EXPECT_EQ(Classify(12345, kR32F), Precision::kUnknown);
}

// DGEMM runs on the fp64 tensor units (DMMA) where a GPU has them; the roof
// falls back to the fp64 peak where it does not (model/roof_model.h). Before
// the merge libinject said fp64 and the collector fp64-tensor.
TEST(GemmPrecisionTest, Fp64IsFp64TensorWithEveryComputeForm) {
  EXPECT_EQ(Classify(k64F, kR64F), Precision::kFp64Tensor);
  EXPECT_EQ(Classify(k64FPedantic, kR64F), Precision::kFp64Tensor);
  EXPECT_EQ(Classify(kR64F, kR64F), Precision::kFp64Tensor);
  EXPECT_EQ(Classify(-1, kR64F), Precision::kFp64Tensor);
}

// int8 inputs count against the int8 roof with a 32I or a 32F compute type
// (cublasGemmEx accepts both); an int8 compute on other inputs says nothing.
// Before the merge the collector left int8 with 32F compute unknown.
TEST(GemmPrecisionTest, Int8InputsWithIntegerOrFloatCompute) {
  EXPECT_EQ(Classify(k32I, kR8I), Precision::kInt8Tensor);
  EXPECT_EQ(Classify(k32IPedantic, kR8I), Precision::kInt8Tensor);
  EXPECT_EQ(Classify(k32F, kR8I), Precision::kInt8Tensor);
  EXPECT_EQ(Classify(kR32I, kR8I), Precision::kInt8Tensor);
  EXPECT_EQ(Classify(k32I, 99), Precision::kUnknown);
}

// fp8 inputs decide alone: their only unit is the fp8 tensor core.
TEST(GemmPrecisionTest, Fp8InputsWinOverTheComputeType) {
  EXPECT_EQ(Classify(k32FFast16BF, kR8FE4M3), Precision::kFp8Tensor);
  EXPECT_EQ(Classify(-1, kR8FE5M2), Precision::kFp8Tensor);
}

// No compute type given (a framework matmul read by an importer): the input
// type decides.
TEST(GemmPrecisionTest, NoComputeTypeUsesTheInputType) {
  EXPECT_EQ(Classify(-1, kR16BF), Precision::kFp16Tensor);
  EXPECT_EQ(Classify(-1, kR32F), Precision::kFp32);
  EXPECT_EQ(Classify(-1, -1), Precision::kUnknown);
}

// A bias added to the output (aten::addmm, read by the Kineto importer)
// adds one FLOP per output element and its elements read at the output's
// size: TraceLens's 2*M*N*K + M*N for BERT's 141 x 512 x 512 projection.
TEST(GemmFlopsTest, BiasAddsItsAddsAndItsElements) {
  GemmShape g;
  g.m = 512, g.n = 141, g.k = 512;
  g.a_type = g.b_type = g.d_type = cuda_type::kR16BF;
  EXPECT_EQ(GemmFlops(g), 73924608u);
  EXPECT_EQ(GemmMinBytes(g), 813056u);
  g.bias_elements = 512;
  EXPECT_EQ(GemmFlops(g), 73996800u);
  EXPECT_EQ(GemmMinBytes(g), 814080u);
  g.batch = 2;  // a batched bias of all batches' elements
  g.bias_elements = 2 * 512 * 141;
  EXPECT_EQ(GemmFlops(g), 2 * 73996800u);
  EXPECT_EQ(GemmMinBytes(g), 2 * 813056u + 2 * 512 * 141 * 2);
}

}  // namespace
}  // namespace rooftrace
