// The analytic figures of attention, convolution and pointwise PyTorch
// operators from their recorded inputs (op_shapes.h): which input is what,
// the layouts, and the scalar arguments read from "Concrete Inputs".
#include "sources/kineto/op_shapes.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace rooftrace::kineto {
namespace {

OpInput T(std::initializer_list<int64_t> dims, std::string_view type) {
  OpInput in;
  in.rank = 0;
  for (int64_t d : dims) in.dims[in.rank++] = d;
  in.type = type;
  return in;
}

OpInput S(std::string_view concrete, std::string_view type = "Scalar") {
  OpInput in;
  in.rank = 0;
  in.type = type;
  in.concrete = concrete;
  return in;
}

OpInputs Inputs(std::initializer_list<OpInput> ins) {
  OpInputs out;
  for (const OpInput& in : ins) out.in[out.count++] = in;
  return out;
}

constexpr std::string_view kBf16 = "c10::BFloat16";

// SDPA's (B, H, L, D) and flash's (B, L, H, D) of one attention agree:
// 4 * 2 * 16 * 256 * 256 * 64 = 536,870,912, halved when causal.
TEST(OpShapesTest, AttentionLayoutsAndCausal) {
  const OpInput bhld = T({2, 16, 256, 64}, kBf16);
  auto sdpa = FiguresOfOp(
      "aten::scaled_dot_product_attention",
      Inputs({bhld, bhld, bhld, S(""), S("0."), S("True"), S(""), S("False")}));
  ASSERT_TRUE(sdpa.has_value());
  EXPECT_EQ(sdpa->flops, 536870912u / 2);
  EXPECT_EQ(sdpa->precision, Precision::kFp16Tensor);
  EXPECT_EQ(sdpa->shape, "b=2 h=16 lq=256 lk=256 d=64 causal");
  const OpInput blhd = T({2, 256, 16, 64}, kBf16);
  OpInputs flash = Inputs({blhd, blhd, blhd, S(""), S(""), S("256"),
                           S("256"), S("0."), S("False"), S("False")});
  auto f = FiguresOfOp("aten::_flash_attention_forward", flash);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->flops, 536870912u);
  // 4 * 2 * 16 * 256 * 64 elements * 2 bytes.
  EXPECT_EQ(f->min_bytes, 4u * 524288u * 2u);
  EXPECT_EQ(f->shape, "b=2 h=16 lq=256 lk=256 d=64");
  // Mismatched head dims: no figures.
  flash.in[1] = T({2, 256, 16, 32}, kBf16);
  EXPECT_FALSE(FiguresOfOp("aten::_flash_attention_forward", flash));
}

// AlexNet's conv1 as aten::convolution: 1 x 3 x 224 x 224, 64 x 3 x 11 x
// 11, bias, stride [4, 4], padding [2, 2]: out 55 x 55, 140,747,200 FLOPs
// (model/ops.h's test works it out).
TEST(OpShapesTest, ConvolutionReadsStrideAndPadding) {
  OpInputs in = Inputs({T({1, 3, 224, 224}, "float"),
                        T({64, 3, 11, 11}, "float"), T({64}, "float"),
                        S("[4, 4]", "ScalarList"), S("[2, 2]", "ScalarList"),
                        S("[1, 1]", "ScalarList"), S("False"),
                        S("[0, 0]", "ScalarList"), S("1")});
  auto c = FiguresOfOp("aten::convolution", in);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->flops, 140747200u);
  EXPECT_EQ(c->precision, Precision::kFp32);
  EXPECT_EQ(c->shape, "x=1x3x224x224 w=64x3x11x11 out=55x55");
  in.in[6] = S("True");  // transposed: not modelled
  EXPECT_FALSE(FiguresOfOp("aten::convolution", in));
  in.in[6] = S("False");
  in.in[3] = S("");  // no stride recorded: the output size is unknown
  EXPECT_FALSE(FiguresOfOp("aten::convolution", in));
}

// Pointwise: a broadcast add reads both inputs and writes the larger; an
// in-place copy_ does not read what it overwrites.
TEST(OpShapesTest, PointwiseBytes) {
  auto add = FiguresOfOp("aten::add", Inputs({T({4, 8}, "float"),
                                              T({8}, "float"), S("1")}));
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(add->flops, 32u);
  EXPECT_EQ(add->min_bytes, (32u + 8u + 32u) * 4u);
  EXPECT_EQ(add->precision, Precision::kFp32);
  auto copy = FiguresOfOp("aten::copy_", Inputs({T({4, 8}, "float"),
                                                 T({4, 8}, "float"),
                                                 S("False")}));
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->flops, 0u);
  EXPECT_EQ(copy->min_bytes, 2u * 32u * 4u);
  EXPECT_TRUE(IsModelledOp("aten::layer_norm"));
  EXPECT_FALSE(IsModelledOp("aten::embedding"));
  EXPECT_FALSE(FiguresOfOp("aten::add", Inputs({S("1"), S("2")})));
}

}  // namespace
}  // namespace rooftrace::kineto
