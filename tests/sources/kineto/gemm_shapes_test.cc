// The GEMM of each PyTorch operator from its recorded shapes, in cuBLAS's
// column-major terms, with the bias addmm adds.
#include "sources/kineto/gemm_shapes.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "model/gemm.h"

namespace rooftrace::kineto {
namespace {

OpInput T(std::initializer_list<int64_t> dims, std::string_view type) {
  OpInput in;
  in.rank = 0;
  for (int64_t d : dims) in.dims[in.rank++] = d;
  in.type = type;
  return in;
}

OpInput Scalar() {
  OpInput in;
  in.rank = 0;
  in.type = "Scalar";
  return in;
}

OpInputs Inputs(std::initializer_list<OpInput> ins) {
  OpInputs out;
  for (const OpInput& in : ins) out.in[out.count++] = in;
  return out;
}

uint64_t Flops(const GemmRecord& g) {
  GemmShape s;
  s.m = g.m, s.n = g.n, s.k = g.k, s.batch = g.batch;
  s.bias_elements = g.bias_elements;
  return GemmFlops(s);
}

constexpr std::string_view kBf16 = "c10::BFloat16";

// addmm(bias[512], x[141, 512], w^T[512, 512]): BERT's projections, with
// the bias counted (TraceLens's 73,996,800 FLOPs).
TEST(GemmShapesTest, AddmmCountsItsBiasAndNamesTheWeight) {
  auto g = GemmOfOp("aten::addmm",
                    Inputs({T({512}, kBf16), T({141, 512}, kBf16),
                            T({512, 512}, kBf16), Scalar(), Scalar()}),
                    false);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->m, 512);
  EXPECT_EQ(g->n, 141);
  EXPECT_EQ(g->k, 512);
  EXPECT_EQ(g->batch, 1);
  EXPECT_EQ(g->bias_elements, 512);
  EXPECT_EQ(g->weight_operand, 1);
  EXPECT_EQ(g->a_type, cuda_type::kR16BF);
  EXPECT_EQ(g->d_type, cuda_type::kR16BF);
  EXPECT_EQ(Flops(*g), 73996800u);
}

// mm inside linear (nano-vllm's decode: 3 tokens) knows its weight; a bare
// mm does not.
TEST(GemmShapesTest, MmTakesItsWeightFromAnEnclosingLinear) {
  const OpInputs in = Inputs({T({3, 1024}, kBf16), T({1024, 6144}, kBf16)});
  auto g = GemmOfOp("aten::mm", in, true);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->m, 6144);
  EXPECT_EQ(g->n, 3);
  EXPECT_EQ(g->k, 1024);
  EXPECT_EQ(g->bias_elements, 0);
  EXPECT_EQ(g->weight_operand, 1);
  EXPECT_EQ(GemmOfOp("aten::mm", in, false)->weight_operand, 0);
}

// bmm and baddbmm are batched; matmul follows torch.matmul's rules.
TEST(GemmShapesTest, BatchedAndBroadcastShapes) {
  auto bmm = GemmOfOp("aten::bmm",
                      Inputs({T({8, 2, 128}, kBf16), T({8, 128, 17}, kBf16)}),
                      false);
  ASSERT_TRUE(bmm.has_value());
  EXPECT_EQ(bmm->m, 17);
  EXPECT_EQ(bmm->n, 2);
  EXPECT_EQ(bmm->k, 128);
  EXPECT_EQ(bmm->batch, 8);
  auto baddbmm = GemmOfOp("aten::baddbmm",
                          Inputs({T({8, 2, 17}, "float"),
                                  T({8, 2, 128}, "float"),
                                  T({8, 128, 17}, "float")}),
                          false);
  ASSERT_TRUE(baddbmm.has_value());
  EXPECT_EQ(baddbmm->bias_elements, 8 * 2 * 17);
  EXPECT_EQ(Flops(*baddbmm), 2u * 17 * 2 * 128 * 8 + 17 * 2 * 8);
  // A 3-D activation through a 2-D weight folds its batch into M.
  auto mm = GemmOfOp("aten::matmul",
                     Inputs({T({4, 141, 512}, kBf16), T({512, 256}, kBf16)}),
                     false);
  ASSERT_TRUE(mm.has_value());
  EXPECT_EQ(mm->n, 4 * 141);
  EXPECT_EQ(mm->batch, 1);
  // Both batched: broadcast batch.
  auto bb = GemmOfOp("aten::matmul",
                     Inputs({T({2, 8, 16, 64}, kBf16), T({1, 8, 64, 32}, kBf16)}),
                     false);
  ASSERT_TRUE(bb.has_value());
  EXPECT_EQ(bb->batch, 16);
  EXPECT_EQ(bb->m, 32);
  EXPECT_EQ(bb->n, 16);
}

// linear(x[1, 141, 512], w[2048, 512], b[2048]).
TEST(GemmShapesTest, LinearWithAndWithoutBias) {
  auto g = GemmOfOp("aten::linear",
                    Inputs({T({1, 141, 512}, kBf16), T({2048, 512}, kBf16),
                            T({2048}, kBf16)}),
                    false);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->m, 2048);
  EXPECT_EQ(g->n, 141);
  EXPECT_EQ(g->k, 512);
  EXPECT_EQ(g->bias_elements, 2048);
  OpInput none;
  none.rank = 0;
  auto nb = GemmOfOp("aten::linear",
                     Inputs({T({3, 2048}, kBf16), T({1024, 2048}, kBf16), none}),
                     false);
  ASSERT_TRUE(nb.has_value());
  EXPECT_EQ(nb->bias_elements, 0);
}

// fp8 _scaled_mm classifies as fp8-tensor; its output type is unknown.
TEST(GemmShapesTest, ScaledMmIsFp8) {
  auto g = GemmOfOp("aten::_scaled_mm",
                    Inputs({T({128, 256}, "c10::Float8_e4m3fn"),
                            T({256, 512}, "c10::Float8_e4m3fn"), T({}, "float"),
                            T({}, "float")}),
                    false);
  ASSERT_TRUE(g.has_value());
  GemmShape s;
  s.m = g->m, s.n = g->n, s.k = g->k;
  s.a_type = g->a_type, s.b_type = g->b_type;
  s.c_type = g->c_type, s.d_type = g->d_type;
  s.compute_type = g->compute_type;
  EXPECT_EQ(GemmPrecision(s), Precision::kFp8Tensor);
  EXPECT_EQ(g->d_type, -1);
}

// Shapes that are not a GEMM's are refused, not guessed.
TEST(GemmShapesTest, MismatchedOrMissingShapesAreRefused) {
  EXPECT_FALSE(GemmOfOp("aten::mm",
                        Inputs({T({3, 1024}, kBf16), T({512, 6144}, kBf16)}),
                        false));
  EXPECT_FALSE(GemmOfOp("aten::mm", Inputs({T({3, 1024}, kBf16)}), false));
  OpInput list;  // a tensor list
  EXPECT_FALSE(GemmOfOp("aten::bmm", Inputs({list, list}), false));
  EXPECT_FALSE(GemmOfOp("aten::addmm",
                        Inputs({T({512}, kBf16), T({141, 0}, kBf16),
                                T({0, 512}, kBf16)}),
                        false));
  EXPECT_FALSE(IsGemmOp("aten::conv2d"));
  EXPECT_TRUE(IsGemmOp("aten::_scaled_mm"));
  EXPECT_EQ(CudaTypeOfTorchType("c10::Half"), cuda_type::kR16F);
  EXPECT_EQ(CudaTypeOfTorchType("Scalar"), -1);
}

}  // namespace
}  // namespace rooftrace::kineto
