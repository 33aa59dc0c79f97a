// Analytic figures of operators other than GEMMs (model/ops.h), checked
// against numbers worked out by hand in the comments.
#include "model/ops.h"

#include <gtest/gtest.h>

#include "model/gemm.h"

namespace rooftrace {
namespace {

using namespace cuda_type;  // NOLINT

// BERT-small's attention (the H100 Kineto trace): B=1, H=8, L=141, D=64,
// bf16. FLOPs 4 * 1 * 8 * 141 * 141 * 64 = 40,716,288; bytes
// 4 * (1 * 8 * 141 * 64) * 2 = 4 * 72,192 * 2 = 577,536.
TEST(AttentionTest, BertSmallLayer) {
  AttentionShape a;
  a.batch = 1, a.heads = 8, a.q_len = a.kv_len = 141, a.head_dim = 64;
  a.type = kR16BF;
  EXPECT_EQ(AttentionFlops(a), 40716288u);
  EXPECT_EQ(AttentionMinBytes(a), 577536u);
  EXPECT_EQ(MatrixOpPrecision(a.type), Precision::kFp16Tensor);
  a.causal = true;  // half the scores are masked
  EXPECT_EQ(AttentionFlops(a), 20358144u);
  EXPECT_EQ(AttentionMinBytes(a), 577536u);
}

// Grouped-query decode: B=2, H=32, Hkv=8, Lq=1, Lk=1024, D=128, fp16.
// FLOPs 4 * 2 * 32 * 1 * 1024 * 128 = 33,554,432. Bytes: Q 2*32*128 =
// 8,192; K and V 2*8*1024*128 = 2,097,152 each; O 8,192; total 4,210,688
// elements * 2 = 8,421,376.
TEST(AttentionTest, GroupedQueryDecode) {
  AttentionShape a;
  a.batch = 2, a.heads = 32, a.kv_heads = 8, a.q_len = 1, a.kv_len = 1024;
  a.head_dim = 128, a.type = kR16F;
  EXPECT_EQ(AttentionFlops(a), 33554432u);
  EXPECT_EQ(AttentionMinBytes(a), 8421376u);
}

TEST(AttentionTest, DegenerateOrUnknownType) {
  AttentionShape a;
  a.batch = 1, a.heads = 8, a.q_len = 0, a.kv_len = 141, a.head_dim = 64;
  EXPECT_EQ(AttentionFlops(a), 0u);
  a.q_len = 4;
  EXPECT_EQ(AttentionMinBytes(a), 0u);  // type unknown
}

// AlexNet's first layer: N=1, 3x224x224 in, 64 filters 11x11, stride 4,
// padding 2: out (224 + 4 - 10 - 1) / 4 + 1 = 55. FLOPs
// 2 * 1 * 64 * 55 * 55 * 3 * 121 + 64 * 55 * 55 (bias) = 140,553,600 +
// 193,600 = 140,747,200. fp32 bytes: input 150,528 + weight 23,232 +
// output 193,600 + bias 64 = 367,424 elements * 4 = 1,469,696.
TEST(ConvTest, AlexNetConv1) {
  EXPECT_EQ(ConvOutputSize(224, 11, 4, 2, 1), 55);
  ConvShape c;
  c.batch = 1, c.in_channels = 3, c.out_channels = 64, c.spatial_rank = 2;
  c.in_size[0] = c.in_size[1] = 224;
  c.kernel[0] = c.kernel[1] = 11;
  c.out_size[0] = c.out_size[1] = 55;
  c.bias = true, c.type = kR32F;
  EXPECT_EQ(ConvFlops(c), 140747200u);
  EXPECT_EQ(ConvMinBytes(c), 1469696u);
  EXPECT_EQ(MatrixOpPrecision(c.type), Precision::kFp32);
}

// Depthwise 3x3 (groups = channels = 32), 1 x 32 x 8 x 8, padding 1, no
// bias, bf16: out 8x8; FLOPs 2 * 32 * 64 * 1 * 9 = 36,864; bytes
// (2,048 + 288 + 2,048) * 2 = 8,768.
TEST(ConvTest, Depthwise) {
  EXPECT_EQ(ConvOutputSize(8, 3, 1, 1, 1), 8);
  ConvShape c;
  c.batch = 1, c.in_channels = c.out_channels = c.groups = 32;
  c.spatial_rank = 2;
  c.in_size[0] = c.in_size[1] = 8;
  c.kernel[0] = c.kernel[1] = 3;
  c.out_size[0] = c.out_size[1] = 8;
  c.type = kR16BF;
  EXPECT_EQ(ConvFlops(c), 36864u);
  EXPECT_EQ(ConvMinBytes(c), 8768u);
  c.groups = 5;  // 32 channels do not split into 5 groups
  EXPECT_EQ(ConvFlops(c), 0u);
  EXPECT_EQ(ConvOutputSize(2, 5, 1, 0, 1), 0);
}

// BERT's residual add, 1 x 141 x 512 bf16 twice in, once out: 72,192
// FLOPs, 3 * 72,192 * 2 = 433,152 bytes.
TEST(PointwiseTest, AddAndLayerNorm) {
  ASSERT_EQ(PointwiseFlopsPerElement("add"), 1);
  PointwiseOp add{72192, 1, 2 * 72192 * 2, 72192 * 2};
  EXPECT_EQ(PointwiseFlops(add), 72192u);
  EXPECT_EQ(PointwiseMinBytes(add), 433152u);
  // layer_norm over 512 with bf16 weight and bias: 7 * 72,192 = 505,344
  // FLOPs; bytes (72,192 + 512 + 512) * 2 in + 72,192 * 2 out = 290,816.
  ASSERT_EQ(PointwiseFlopsPerElement("native_layer_norm"), 7);
  PointwiseOp ln{72192, 7, (72192 + 1024) * 2, 72192 * 2};
  EXPECT_EQ(PointwiseFlops(ln), 505344u);
  EXPECT_EQ(PointwiseMinBytes(ln), 290816u);
  EXPECT_EQ(PointwiseFlopsPerElement("gelu"), 8);
  EXPECT_EQ(PointwiseFlopsPerElement("copy_"), 0);
  EXPECT_EQ(PointwiseFlopsPerElement("embedding"), -1);
  EXPECT_EQ(PointwisePrecision(kR16BF), Precision::kFp16);
  EXPECT_EQ(PointwisePrecision(kR8I), Precision::kUnknown);
}

}  // namespace
}  // namespace rooftrace
