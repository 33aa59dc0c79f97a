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
  EXPECT_TRUE(IsModelledOp("aten::embedding"));
  EXPECT_FALSE(IsModelledOp("aten::embedding_bag"));
  EXPECT_FALSE(FiguresOfOp("aten::add", Inputs({S("1"), S("2")})));
}


// The figures below are TraceLens's for the same operator calls of the
// SGLang and vLLM traces under real-data/tracelens/.../inference/
// (perf_csvs: RMSNorm_fwd, UnaryElementwise, RoPE_fwd, Reduce_fwd,
// InferenceAttention_fwd): every one is equal to the FLOP and the byte.

// Integer elementwise and scan operators (position and index math in the
// SGLang decode step) run in the integer class, with FLOPs as TraceLens
// counts them: aten::neg of 32 int64, 32 FLOPs and 512 B
// (UnaryElementwise); aten::cumsum of 32 int32, 32 FLOPs and 256 B
// (Reduce_fwd).
TEST(OpShapesTest, IntegerOpsAsTraceLensCountsThem) {
  auto neg = FiguresOfOp("aten::neg", Inputs({T({32}, "long int")}));
  ASSERT_TRUE(neg.has_value());
  EXPECT_EQ(neg->flops, 32u);
  EXPECT_EQ(neg->min_bytes, 512u);
  EXPECT_EQ(neg->precision, Precision::kInt);
  auto cumsum = FiguresOfOp("aten::cumsum",
                            Inputs({T({32}, "int"), S("0"), S("")}));
  ASSERT_TRUE(cumsum.has_value());
  EXPECT_EQ(cumsum->flops, 32u);
  EXPECT_EQ(cumsum->min_bytes, 256u);
  EXPECT_EQ(cumsum->precision, Precision::kInt);
  auto sub = FiguresOfOp("aten::sub", Inputs({T({15}, "long int"),
                                              T({15}, "long int"), S("1")}));
  ASSERT_TRUE(sub.has_value());
  EXPECT_EQ(sub->precision, Precision::kInt);
  EXPECT_EQ(PrecisionKey(Precision::kInt), "int");
  EXPECT_EQ(PrecisionFromKey("int"), Precision::kInt);
}

// aiter's RMS norms, with and without the fused residual add, and the
// vLLM form whose output is not an argument: 4 FLOPs an element and 2 a
// row (+1 an element for the add); 2 or 4 activation tensors and the
// weight.
TEST(OpShapesTest, RmsNormsAsTraceLensCountsThem) {
  auto norm = FiguresOfOp(
      "aiter::rmsnorm", Inputs({T({491520, 128}, kBf16), T({491520, 128}, kBf16),
                                T({128}, kBf16), S("1e-06")}));
  ASSERT_TRUE(norm.has_value());
  EXPECT_EQ(norm->flops, 252641280u);      // 0.25264128 GFLOP
  EXPECT_EQ(norm->min_bytes, 251658496u);  // 240.000244140625 MiB
  EXPECT_EQ(norm->precision, Precision::kBf16);
  EXPECT_EQ(norm->shape, "491520x128");
  const OpInput x = T({15360, 4096}, kBf16);
  auto add = FiguresOfOp("aiter::add_rmsnorm",
                         Inputs({x, x, x, x, T({4096}, kBf16), S("1e-06")}));
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(add->flops, 314603520u);      // 0.31460352 GFLOP
  EXPECT_EQ(add->min_bytes, 503324672u);  // 480.0078125 MiB
  const OpInput v = T({8192, 2880}, kBf16);
  auto vllm = FiguresOfOp("aiter::rms_norm",
                          Inputs({v, T({2880}, kBf16), S("1e-05"), S("0")}));
  ASSERT_TRUE(vllm.has_value());
  EXPECT_EQ(vllm->flops, 94388224u);      // 0.094388224 GFLOP
  EXPECT_EQ(vllm->min_bytes, 94377600u);  // 90.0054931640625 MiB
  auto ck = FiguresOfOp(
      "aiter::rmsnorm2d_fwd_with_add_ck",
      Inputs({v, v, v, v, T({2880}, kBf16), S("1e-05"), S("0")}));
  ASSERT_TRUE(ck.has_value());
  EXPECT_EQ(ck->flops, 117981184u);       // 0.117981184 GFLOP
  EXPECT_EQ(ck->min_bytes, 188749440u);   // 180.0054931640625 MiB
  // vLLM's in-place fused add: input and residual each read and written.
  auto inplace = FiguresOfOp(
      "_C::fused_add_rms_norm", Inputs({v, v, T({2880}, kBf16), S("1e-05")}));
  ASSERT_TRUE(inplace.has_value());
  EXPECT_EQ(inplace->min_bytes, ck->min_bytes);
  EXPECT_FALSE(FiguresOfOp("aiter::rmsnorm", Inputs({S("1e-06")})));
}

// silu_and_mul(out [15360, 12288], input [15360, 24576]): 5 FLOPs an
// output element, the input read and the output written.
TEST(OpShapesTest, GatedActivation) {
  auto f = FiguresOfOp("sgl_kernel::silu_and_mul",
                       Inputs({T({15360, 12288}, kBf16),
                               T({15360, 24576}, kBf16)}));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->flops, 943718400u);        // 0.9437184 GFLOP
  EXPECT_EQ(f->min_bytes, 1132462080u);   // 1080 MiB
  EXPECT_EQ(f->shape, "15360x12288");
  auto gelu = FiguresOfOp("_C::gelu_and_mul",
                          Inputs({T({2, 4}, "float"), T({2, 8}, "float")}));
  ASSERT_TRUE(gelu.has_value());
  EXPECT_EQ(gelu->flops, 8u * 9u);
  // An odd input width is not a gated activation's.
  EXPECT_FALSE(FiguresOfOp("_C::silu_and_mul",
                           Inputs({T({2, 3}, "float"), T({2, 7}, "float")})));
}

// rotary_embedding(positions, query, key, head_size, cos_sin_cache,
// is_neox): 3 FLOPs a rotated element; q and k read and written.
TEST(OpShapesTest, RotaryEmbedding) {
  OpInputs in = Inputs({T({15360}, "long int"), T({15360, 4096}, kBf16),
                        T({15360, 1024}, kBf16), S("128"),
                        T({41216, 128}, kBf16), S("True")});
  auto f = FiguresOfOp("sgl_kernel::rotary_embedding", in);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->flops, 235929600u);       // 0.2359296 GFLOP
  EXPECT_EQ(f->min_bytes, 314572800u);   // 300 MiB
  // A partial rotary (64 of 128 dimensions) rotates half the elements.
  in.in[4] = T({41216, 64}, kBf16);
  auto half = FiguresOfOp("_C::rotary_embedding", in);
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(half->flops, 235929600u / 2);
  EXPECT_EQ(half->min_bytes, 314572800u);
  // Without the head size the rotated share is unknown: no figures.
  in.in[3] = S("");
  EXPECT_FALSE(FiguresOfOp("_C::rotary_embedding", in));
}

// store_cache(k, v, k_cache, v_cache, loc): the new keys and values read
// and written into the cache at the cache's element size; no FLOPs.
TEST(OpShapesTest, KvCacheWrites) {
  const OpInput kv = T({15360, 1024}, kBf16);
  const OpInput cache = T({835874, 1024}, kBf16);
  auto f = FiguresOfOp("sglang::store_cache",
                       Inputs({kv, kv, cache, cache, T({15360}, "long int"),
                               S("2048"), S("0")}));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->flops, 0u);
  EXPECT_EQ(f->min_bytes, 125829120u);  // 120 MiB
  // An fp8 cache (stored as bytes) is written at one byte an element.
  const OpInput k3 = T({32, 8, 128}, kBf16);
  const OpInput fp8 = T({1000, 16, 8, 128}, "unsigned char");
  auto v = FiguresOfOp("_C_cache_ops::reshape_and_cache_flash",
                       Inputs({k3, k3, fp8, fp8, T({32}, "long int"),
                               S("fp8"), T({}, "float"), T({}, "float")}));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->min_bytes, 2u * 32u * 8u * 128u * (2u + 1u));
}

// Reductions: one FLOP an input element; the input read, the output (and
// the index max/min return along a dimension) written.
TEST(OpShapesTest, Reductions) {
  auto cumsum = FiguresOfOp("aten::cumsum",
                            Inputs({T({15}, "long int"), S("0"), S("")}));
  ASSERT_TRUE(cumsum.has_value());
  EXPECT_EQ(cumsum->flops, 15u);
  EXPECT_EQ(cumsum->min_bytes, 240u);  // 0.0002288818359375 MiB
  auto max = FiguresOfOp("aten::max", Inputs({T({32}, "int")}));
  ASSERT_TRUE(max.has_value());
  EXPECT_EQ(max->min_bytes, 132u);  // 0.000125885009765625 MiB
  // mean over the last dimension of [4, 8, 16] bf16: 32 outputs.
  auto mean = FiguresOfOp("aten::mean", Inputs({T({4, 8, 16}, kBf16),
                                                S("[-1]"), S("True")}));
  ASSERT_TRUE(mean.has_value());
  EXPECT_EQ(mean->flops, 512u);
  EXPECT_EQ(mean->min_bytes, (512u + 32u) * 2u);
  EXPECT_EQ(mean->shape, "4x8x16 -> 32");
  // max along a dimension writes values and int64 indices; argmax only
  // indices.
  auto maxdim = FiguresOfOp("aten::max", Inputs({T({4, 8}, "float"), S("1"),
                                                 S("False")}));
  ASSERT_TRUE(maxdim.has_value());
  EXPECT_EQ(maxdim->min_bytes, 32u * 4u + 4u * (4u + 8u));
  auto argmax = FiguresOfOp("aten::argmax", Inputs({T({32, 151936}, "float"),
                                                    S("-1"), S("False")}));
  ASSERT_TRUE(argmax.has_value());
  EXPECT_EQ(argmax->min_bytes, 32u * 151936u * 4u + 32u * 8u);
  // max of two tensors is elementwise.
  auto pair = FiguresOfOp("aten::max", Inputs({T({4}, "float"),
                                               T({4}, "float")}));
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->min_bytes, 3u * 16u);
  // A dimension beyond the tensor's rank: not this operator's inputs.
  EXPECT_FALSE(FiguresOfOp("aten::sum", Inputs({T({4}, "float"), S("[3]")})));
}

// Copies and elementwise operators on integer tensors count their bytes
// (a long int is 8): a copy from int64 counted 0 bytes for its source.
TEST(OpShapesTest, IntegerTensorsHaveBytes) {
  auto copy = FiguresOfOp("aten::copy_", Inputs({T({15}, "long int"),
                                                 T({15}, "long int"),
                                                 S("False")}));
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->min_bytes, 240u);  // 0.0002288818359375 MiB
  auto widen = FiguresOfOp("aten::copy_", Inputs({T({15}, "long int"),
                                                  T({15}, "int"), S("False")}));
  ASSERT_TRUE(widen.has_value());
  EXPECT_EQ(widen->min_bytes, 180u);  // 0.000171661376953125 MiB
  auto neg = FiguresOfOp("aten::neg", Inputs({T({32}, "long int")}));
  ASSERT_TRUE(neg.has_value());
  EXPECT_EQ(neg->min_bytes, 512u);  // 0.00048828125 MiB
  auto mask = FiguresOfOp("aten::copy_", Inputs({T({46}, "bool"),
                                                 T({46}, "bool"), S("True")}));
  ASSERT_TRUE(mask.has_value());
  EXPECT_EQ(mask->min_bytes, 92u);
}

// Elementary math and its in-place forms are pointwise operators.
TEST(OpShapesTest, UnaryMath) {
  for (std::string_view op : {"aten::pow", "aten::rsqrt", "aten::exp",
                              "aten::sin", "aten::cos", "aten::rsqrt_",
                              "aten::masked_fill_"}) {
    auto f = FiguresOfOp(op, Inputs({T({64, 32}, kBf16), S("2")}));
    ASSERT_TRUE(f.has_value()) << op;
    EXPECT_EQ(f->flops, 2048u) << op;
    EXPECT_EQ(f->min_bytes, 2u * 2048u * 2u) << op;
  }
}

// Gathers: the gathered elements read and written, the index read.
TEST(OpShapesTest, Gathers) {
  auto emb = FiguresOfOp("aten::embedding",
                         Inputs({T({151936, 1024}, kBf16),
                                 T({1, 141}, "long int"), S("-1")}));
  ASSERT_TRUE(emb.has_value());
  EXPECT_EQ(emb->flops, 0u);
  EXPECT_EQ(emb->min_bytes, 2u * 141u * 1024u * 2u + 141u * 8u);
  auto sel = FiguresOfOp("aten::index_select",
                         Inputs({T({100, 64}, "float"), S("0"),
                                 T({10}, "long int")}));
  ASSERT_TRUE(sel.has_value());
  EXPECT_EQ(sel->min_bytes, 2u * 640u * 4u + 80u);
  auto gather = FiguresOfOp("aten::gather",
                            Inputs({T({4, 100}, "float"), S("1"),
                                    T({4, 3}, "long int")}));
  ASSERT_TRUE(gather.has_value());
  EXPECT_EQ(gather->min_bytes, 2u * 12u * 4u + 12u * 8u);
}


// Strides decide bytes: a stride-0 (broadcast, expanded) dimension is read
// once. SGLang's prefill gathers the last token's logits with an index
// expanded from one column: gather(self [151936, 4096], 0, index [15360,
// 4096] strides [1, 0], out [15360, 4096]). The index holds 15,360 int64s,
// not 62,914,560: 2 x 62,914,560 x 2 bytes gathered and written plus
// 122,880 of index, where the logical size counted 503 MB more.
TEST(OpShapesTest, BroadcastStridesAreReadOnce) {
  OpInput index = T({15360, 4096}, "long int");
  index.has_strides = true;
  index.strides[0] = 1;
  index.strides[1] = 0;
  EXPECT_EQ(StoredElementsOf(index), 15360);
  auto gather = FiguresOfOp(
      "aten::gather", Inputs({T({151936, 4096}, kBf16), S("0"), index,
                              S("False"), T({15360, 4096}, kBf16)}));
  ASSERT_TRUE(gather.has_value());
  EXPECT_EQ(gather->min_bytes, 2u * 62914560u * 2u + 15360u * 8u);
  // An expanded operand of an elementwise op: [256] with stride 0 is one
  // element, copied into 256.
  OpInput one = T({256}, "int");
  one.has_strides = true;
  one.strides[0] = 0;
  auto copy = FiguresOfOp("aten::copy_", Inputs({T({256}, "int"), one,
                                                 S("False")}));
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->min_bytes, 256u * 4u + 1u * 4u);
  // A bias broadcast along rows by expand: read once per column.
  OpInput bias = T({64, 1024}, "float");
  bias.has_strides = true;
  bias.strides[0] = 0;
  bias.strides[1] = 1;
  auto add = FiguresOfOp("aten::add", Inputs({T({64, 1024}, "float"), bias,
                                              S("1")}));
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(add->flops, 64u * 1024u);  // FLOPs per logical element
  EXPECT_EQ(add->min_bytes, (65536u + 1024u + 65536u) * 4u);
  // A reduction over an expanded tensor reads it once, adds per element.
  auto sum = FiguresOfOp("aten::sum", Inputs({bias, S("[0]"), S("False")}));
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ(sum->flops, 65536u);
  EXPECT_EQ(sum->min_bytes, (1024u + 1024u) * 4u);
}

// fp8 and fp4 quantisation (out, input, scales): the bf16 input read, the
// output written at its own size (fp8 a byte an element, fp4 two elements
// a byte), the scales read; a multiply an element (and the absolute
// maximum for the dynamic and block-scaled forms).
TEST(OpShapesTest, Fp8Quantisation) {
  OpInputs in = Inputs({T({32, 4096}, "c10::Float8_e4m3fn"),
                        T({32, 4096}, kBf16), T({1}, "float")});
  auto f = FiguresOfOp("_C::static_scaled_fp8_quant", in);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->flops, 131072u);
  EXPECT_EQ(f->min_bytes, 131072u * 2u + 4u + 131072u);
  EXPECT_EQ(f->precision, Precision::kBf16);
  auto d = FiguresOfOp("_C::dynamic_per_token_scaled_fp8_quant", in);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->flops, 2u * 131072u);
  // NVFP4: the output packs two values a byte ([32, 2048] bytes), one fp8
  // scale per 16-element block ([32, 256]), one fp32 global scale.
  OpInputs fp4 = Inputs({T({32, 2048}, "unsigned char"), T({32, 4096}, kBf16),
                         T({32, 256}, "c10::Float8_e4m3fn"), T({1}, "float")});
  auto q = FiguresOfOp("_C::scaled_fp4_quant", fp4);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->flops, 2u * 131072u);
  EXPECT_EQ(q->min_bytes, 65536u + 262144u + 8192u + 4u);
  EXPECT_EQ(q->shape, "32x4096");
}

// Per-token-group fp8 quantisation (vLLM's _C::per_token_group_fp8_quant,
// its documented signature: input first, then output_q, output_s, the
// group size): a DeepSeek-V3 hidden row of 7,168 bf16 in groups of 128.
// Read 229,376 bf16, written 229,376 fp8 and 32 x 56 fp32 scales; the
// absolute maximum and the multiply per element.
TEST(OpShapesTest, PerTokenGroupQuantisationReadsItsFirstInput) {
  OpInputs in = Inputs({T({32, 7168}, kBf16),
                        T({32, 7168}, "c10::Float8_e4m3fn"),
                        T({32, 56}, "float"), S("128"), S("1e-10"),
                        S("-448."), S("448."), S("False")});
  for (std::string_view op : {"_C::per_token_group_fp8_quant",
                              "sgl_kernel::sgl_per_token_group_quant_fp8"}) {
    auto f = FiguresOfOp(op, in);
    ASSERT_TRUE(f.has_value()) << op;
    EXPECT_EQ(f->flops, 2u * 229376u) << op;
    EXPECT_EQ(f->min_bytes, 229376u * 2u + 229376u + 32u * 56u * 4u) << op;
    EXPECT_EQ(f->precision, Precision::kBf16) << op;
    EXPECT_EQ(f->shape, "32x7168") << op;
  }
  // The input alone (no output passed in): not the operator's layout.
  EXPECT_FALSE(FiguresOfOp("_C::per_token_group_fp8_quant",
                           Inputs({T({32, 7168}, kBf16), S("128")})));
}

// TensorRT-LLM's fp4_quantize (input, globalScale, sfVecSize, sfUseUE8M0,
// isSfSwizzledLayout) -> (values, scales), the operator around its
// quantize_with_block_size kernel: the outputs are returned, so they come
// from the input and the block size: [32, 4096] bf16 read with its fp32
// global scale, 65,536 bytes of fp4 pairs and 8,192 one-byte block scales
// written (the swizzled layout's padding not counted: a lower bound).
TEST(OpShapesTest, TrtllmFp4QuantizeReturnsItsOutputs) {
  auto f = FiguresOfOp("trtllm::fp4_quantize",
                       Inputs({T({32, 4096}, kBf16), T({1}, "float"),
                               S("16"), S("False"), S("True")}));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->min_bytes, 131072u * 2u + 4u + 65536u + 8192u);
  EXPECT_EQ(f->flops, 2u * 131072u);
  // No block size: not guessed.
  EXPECT_FALSE(FiguresOfOp("trtllm::fp4_quantize",
                           Inputs({T({32, 4096}, kBf16), T({1}, "float")})));
}

// Top-k and sorts are costed as bytes only (comparisons are no FLOPs): the
// input read, the selected values written at its size and an int64 index
// each; argsort writes the indices alone. A lower bound (a large sort
// passes over its data more than once). Shapes from the operators'
// documented signatures (aten::topk(self, k, dim, largest, sorted),
// sort(self, dim, descending), argsort(self, dim, descending)); the
// DeepSeek trace here has aten::topk, recorded without shapes.
TEST(OpShapesTest, TopkAndSortsMoveTheirInputAndOutputs) {
  // A router's top-8 of 256 experts over 4,096 tokens, fp32 scores.
  auto topk = FiguresOfOp("aten::topk",
                          Inputs({T({4096, 256}, "float"), S("8"), S("-1"),
                                  S("True"), S("True")}));
  ASSERT_TRUE(topk.has_value());
  EXPECT_EQ(topk->flops, 0u);
  EXPECT_EQ(topk->min_bytes, 4096u * 256u * 4u + 4096u * 8u * (4u + 8u));
  EXPECT_EQ(topk->shape, "4096x256 top8");
  // Along dimension 0: 8 of the 4,096 rows per column.
  auto rows = FiguresOfOp("aten::topk", Inputs({T({4096, 256}, "float"),
                                                S("8"), S("0")}));
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->min_bytes, 4096u * 256u * 4u + 8u * 256u * 12u);
  // k above the dimension, or no k: no figures.
  EXPECT_FALSE(FiguresOfOp("aten::topk", Inputs({T({4, 3}, "float"), S("8")})));
  EXPECT_FALSE(FiguresOfOp("aten::topk", Inputs({T({4, 3}, "float")})));
  // Sampling's sort of one row of Qwen's 151,936 logits.
  auto sort = FiguresOfOp("aten::sort", Inputs({T({1, 151936}, "float"),
                                                S("-1"), S("True")}));
  ASSERT_TRUE(sort.has_value());
  EXPECT_EQ(sort->min_bytes, 151936u * 4u + 151936u * (4u + 8u));
  auto argsort = FiguresOfOp("aten::argsort", Inputs({T({2, 1000}, "long int"),
                                                      S("-1"), S("False")}));
  ASSERT_TRUE(argsort.has_value());
  EXPECT_EQ(argsort->min_bytes, 2000u * 8u + 2000u * 8u);
  EXPECT_EQ(argsort->precision, Precision::kInt);
}

// gpt-oss's routing in vLLM (the real capture trace: triton_kernels'
// autograd functions, recorded by class name inside vllm::moe_forward).
// TopK(x [8192, 32] bf16, k 4, apply_softmax True, dim 1, ...) reads the
// logits and writes 4 bf16 values and 4 int16 expert ids a token (the ids
// SortTokens is then given as "short int") and a 32-bit word of the bit
// matrix a token: 524,288 + 131,072 + 32,768 bytes. SortTokens(gates,
// ids, 32 experts, bitmatrix) reads them and the bit matrix, writes two
// int32 indices and a bf16 gate per routed pair and 32 int32 counts:
// 163,840 + 327,808 bytes.
TEST(OpShapesTest, RouterTopkAndTokenSortFromTheVllmTrace) {
  auto topk = FiguresOfOp(
      "TopK", Inputs({T({8192, 32}, kBf16), S("4"), S("True"), S("1"),
                      S("True"), S(""), S("")}));
  ASSERT_TRUE(topk.has_value());
  EXPECT_EQ(topk->flops, 0u);
  EXPECT_EQ(topk->min_bytes, 524288u + 131072u + 32768u);
  EXPECT_EQ(topk->shape, "8192x32 top4");
  auto sort = FiguresOfOp(
      "SortTokens", Inputs({T({8192, 4}, kBf16), T({8192, 4}, "short int"),
                            S("32"), S("")}));
  ASSERT_TRUE(sort.has_value());
  EXPECT_EQ(sort->min_bytes, 163840u + 327808u);
  EXPECT_EQ(sort->shape, "moe sort t=8192 e=32 k=4");
  // Other classes named TopK (a user's (scores, k) function) do not have
  // the layout: no figures.
  EXPECT_FALSE(FiguresOfOp("TopK", Inputs({T({1000}, "float"), S("10")})));
  EXPECT_FALSE(FiguresOfOp("TopK", Inputs({T({64, 32}, "float"), S("4")})));
  EXPECT_FALSE(FiguresOfOp("SortTokens", Inputs({T({8192, 4}, kBf16)})));
}

// vLLM's fused-MoE routing steps pass their outputs in (documented
// signatures of _moe_C): topk_softmax(topk_weights [32, 8] fp32,
// topk_indices [32, 8] int32, token_expert_indices [32, 8] int32,
// gating_output [32, 128] bf16, renormalize) and
// moe_align_block_size(topk_ids [32, 8], 128 experts, block 16,
// sorted_token_ids [256 + 128 x 15], experts_ids [136],
// num_tokens_post_pad [1]): every tensor moved once.
TEST(OpShapesTest, MoeRoutingStepsMoveEveryTensorOnce) {
  auto softmax = FiguresOfOp(
      "_moe_C::topk_softmax",
      Inputs({T({32, 8}, "float"), T({32, 8}, "int"), T({32, 8}, "int"),
              T({32, 128}, kBf16), S("False")}));
  ASSERT_TRUE(softmax.has_value());
  EXPECT_EQ(softmax->min_bytes, 3u * 256u * 4u + 4096u * 2u);
  EXPECT_EQ(softmax->precision, Precision::kBf16);
  auto align = FiguresOfOp(
      "_moe_C::moe_align_block_size",
      Inputs({T({32, 8}, "int"), S("128"), S("16"), T({2176}, "int"),
              T({136}, "int"), T({1}, "int")}));
  ASSERT_TRUE(align.has_value());
  EXPECT_EQ(align->min_bytes, (256u + 2176u + 136u + 1u) * 4u);
  EXPECT_EQ(align->shape, "32x8 2176 136 1");
  EXPECT_FALSE(FiguresOfOp("_moe_C::moe_align_block_size",
                           Inputs({T({32, 8}, "int"), S("128")})));
}

// Memsets of the real vLLM capture: aten::fill_ of a [8192, 64, 64] bf16
// view with 0 (and zero_, the same kernel) writes every element and
// reads nothing; fill_ of one int64 writes 8 bytes.
TEST(OpShapesTest, FillAndZeroWriteTheirTensor) {
  for (std::string_view op : {"aten::fill_", "aten::zero_"}) {
    auto f = FiguresOfOp(op, Inputs({T({8192, 64, 64}, kBf16), S("0")}));
    ASSERT_TRUE(f.has_value()) << op;
    EXPECT_EQ(f->min_bytes, 8192u * 4096u * 2u) << op;
  }
  auto one = FiguresOfOp("aten::fill_", Inputs({T({1}, "long int"), S("0")}));
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->min_bytes, 8u);
}

// vLLM's moe_forward for gpt-oss: hidden states padded from 2,880 to
// 3,072 and router logits over 32 experts. gpt-oss's config fits (the
// expert width is padded alike, to 3,072); Mixtral's does not (4,096
// hidden, 8 experts), and a dense model is no MoE: no figures, not a guess.
TEST(OpShapesTest, MoeLayerTakesTheModelThatFitsIt) {
  const OpInputs in = Inputs({T({8192, 3072}, kBf16), T({8192, 32}, kBf16),
                              S(""), S("")});
  auto oss = LoadModelFacts("gpt-oss-20b");
  ASSERT_TRUE(oss.ok());
  auto f = MoeFiguresOf(in, *oss, MoeRun{});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->up.flops, 1236950581248u);
  EXPECT_EQ(f->up.min_bytes, 528u << 20);
  EXPECT_EQ(f->down.flops, 618475290624u);
  EXPECT_EQ(f->up.precision, Precision::kFp16Tensor);
  EXPECT_EQ(f->up.shape, "moe up t=8192 h=3072 i=3072 e=32 k=4 w4");
  auto mixtral = LoadModelFacts("Mixtral-8x7B");
  ASSERT_TRUE(mixtral.ok());
  EXPECT_FALSE(MoeFiguresOf(in, *mixtral, MoeRun{}).has_value());
  auto dense = LoadModelFacts("Llama-2-7B");
  ASSERT_TRUE(dense.ok());
  EXPECT_FALSE(MoeFiguresOf(in, *dense, MoeRun{}).has_value());
  // Which of its kernels are the grouped GEMMs, and which fuse the gate.
  EXPECT_TRUE(IsMoeGemmKernel("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu"));
  EXPECT_TRUE(IsFusedActivationKernel("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu"));
  EXPECT_TRUE(IsMoeGemmKernel("fused_moe_kernel"));
  EXPECT_FALSE(IsFusedActivationKernel("fused_moe_kernel"));
  EXPECT_FALSE(IsMoeGemmKernel("_finalize_matmul_scatter_bf16"));
  EXPECT_FALSE(IsMoeGemmKernel("_combined_routing_compute"));
  // TensorRT-LLM's generated names: the gate fused as "swiGlu", routing.
  EXPECT_TRUE(IsFusedActivationKernel("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128_swiGlu_sm100f"));
  EXPECT_TRUE(IsMoeRoutingKernel("routingIndicesClusterKernel"));
  EXPECT_TRUE(IsMoeRoutingKernel("_topk_forward"));
  EXPECT_FALSE(IsMoeRoutingKernel("_sum_bitmatrix_rows"));

  // A width the tensor-parallel degree does not divide does not fit; one
  // it divides gives each rank its slice, rounded up as the layout is.
  MoeRun tp7;
  tp7.tensor_parallel = 7;
  EXPECT_FALSE(MoeFiguresOf(in, *oss, tp7).has_value());
  MoeRun tp2;
  tp2.tensor_parallel = 2;
  tp2.kernel_precision = Precision::kFp8Tensor;
  auto half = MoeFiguresOf(in, *oss, tp2);
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(half->up.shape, "moe up t=8192 h=3072 i=1536 e=32 k=4 w4 tp=2");
  EXPECT_EQ(half->up.flops, 1236950581248u / 2);
  EXPECT_EQ(half->up.precision, Precision::kFp8Tensor);
}

// Inductor records each Triton pointwise kernel as an operator of its own
// name, its buffers then xnumel (vLLM's gpt-oss trace): the padding moves
// its input and output once, the fp32-to-bf16 copy of the rotary table
// 131072 x 64 x (4 + 2) B. The fused embedding (no xnumel recorded, a
// 201,088-row table of which it reads a few rows) and a record that may
// have lost arguments (the reader keeps ten) get none.
TEST(OpShapesTest, TritonPointwiseKernelsMoveTheirBuffers) {
  ASSERT_TRUE(IsModelledOp("triton_poi_fused_constant_pad_nd_moe_forward_0"));
  EXPECT_FALSE(IsModelledOp("triton_red_fused_sum_0"));
  auto pad = FiguresOfOp(
      "triton_poi_fused_constant_pad_nd_moe_forward_0",
      Inputs({T({8192, 2880}, kBf16), T({8192, 3072}, kBf16),
              S("25165824")}));
  ASSERT_TRUE(pad.has_value());
  EXPECT_EQ(pad->flops, 0u);
  EXPECT_EQ(pad->min_bytes, 97517568u);
  EXPECT_EQ(pad->precision, Precision::kBf16);
  EXPECT_EQ(pad->shape, "triton 2 buffers xnumel=25165824");
  auto copy = FiguresOfOp("triton_poi_fused__to_copy_1",
                          Inputs({T({131072, 64}, "float"),
                                  T({131072, 64}, kBf16), S("8388608")}));
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->min_bytes, 131072u * 64u * 6u);
  EXPECT_EQ(copy->precision, Precision::kFp32);
  EXPECT_FALSE(FiguresOfOp(
      "triton_poi_fused_0",
      Inputs({T({8192}, "int"), T({201088, 2880}, kBf16),
              T({131072, 64}, "float"), T({8192, 2880}, kBf16),
              T({131072, 64}, kBf16)})));
  // The same table with an xnumel: still larger than what is swept.
  EXPECT_FALSE(FiguresOfOp(
      "triton_poi_fused_0",
      Inputs({T({8192}, "int"), T({201088, 2880}, kBf16),
              T({8192, 2880}, kBf16), S("23592960")})));
  OpInputs ten = Inputs({T({4}, kBf16), T({4}, kBf16), T({4}, kBf16),
                         T({4}, kBf16), T({4}, kBf16), T({4}, kBf16),
                         T({4}, kBf16), T({4}, kBf16), T({4}, kBf16),
                         S("4")});
  ASSERT_EQ(ten.count, kMaxOpInputs);
  EXPECT_FALSE(FiguresOfOp("triton_poi_fused_add_0", ten));
}

// A serving attention call's heads and widths from its inputs (vLLM's
// q/k/v/out; aiter's ragged paged attention with (out, workspace, q,
// k_cache, v_cache, ...)), costed only with a step that has aggregates
// and no more tokens than the call was given.
TEST(OpShapesTest, ServingAttentionArgsAndSteps) {
  auto args = ServingAttentionArgsOf(
      "sglang_profiler::attention_paged_attention_ragged_100",
      Inputs({T({32, 32, 128}, kBf16), T({10905190400}, "unsigned char"),
              T({32, 32, 128}, kBf16), T({835874, 1, 8, 128}, kBf16),
              T({835874, 1, 8, 128}, kBf16)}));
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->heads, 32);
  EXPECT_EQ(args->kv_heads, 8);
  EXPECT_EQ(args->head_dim_v, 128);
  auto step = ParseServingStep(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32"
      "(sq32sk32785sqsq32sqsk32785)");
  ASSERT_TRUE(step.has_value());
  auto f = ServingAttentionFigures(*args, *step);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->flops, 537149440u);
  EXPECT_EQ(f->min_bytes, 134811648u);
  EXPECT_EQ(f->output_bytes, 262144u);  // 32 tokens x 32 heads x 128 bf16
  // The plain annotation gives no KV lengths; a step of 64 tokens is not
  // this 32-token call's.
  EXPECT_FALSE(ServingAttentionFigures(*args, *ParseServingStep("step[DECODE bs=32]")));
  auto big = ParseServingStep(
      "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_64"
      "(sq64sk65536sqsq64sqsk65536)");
  EXPECT_FALSE(ServingAttentionFigures(*args, *big));
  // A KV-head count that does not divide the query heads: not attention.
  EXPECT_FALSE(ServingAttentionArgsOf(
      "vllm::unified_attention_with_output",
      Inputs({T({8, 32, 64}, kBf16), T({8, 5, 64}, kBf16),
              T({8, 5, 64}, kBf16), T({8, 32, 64}, kBf16)})));
}

// vLLM's cache write names the cache's element size; ragged paged
// attention reads the cache as its key input, vLLM's call does not.
TEST(OpShapesTest, KvCacheElementSize) {
  const OpInputs fp8 = Inputs({T({4, 1, 64}, kBf16), T({4, 1, 64}, kBf16),
                               T({1024, 16, 1, 64}, "unsigned char"),
                               T({1024, 16, 1, 64}, "unsigned char")});
  EXPECT_TRUE(IsKvCacheWriteOp("_C_cache_ops::reshape_and_cache_flash"));
  EXPECT_TRUE(IsKvCacheWriteOp("sglang::store_cache"));
  EXPECT_FALSE(IsKvCacheWriteOp("aten::copy_"));
  EXPECT_EQ(KvCacheElementBytes(fp8), 1);
  EXPECT_EQ(KvCacheElementBytes(Inputs({T({4, 1, 64}, kBf16)})), 0);
  EXPECT_TRUE(ServingAttentionKeyIsCache("aiter::paged_attention_ragged"));
  EXPECT_FALSE(
      ServingAttentionKeyIsCache("vllm::unified_attention_with_output"));
}

TEST(OpShapesTest, OpaqueElementBytesOfCatKernels) {
  EXPECT_EQ(OpaqueElementBytes("void at::native::(anonymous namespace)::"
                               "CatArrayBatchedCopy_contig<at::native::("
                               "anonymous namespace)::OpaqueType<4u>, "
                               "unsigned int, 2, 128, 1>"),
            4);
  EXPECT_EQ(OpaqueElementBytes("elementwise_kernel<128, 4>"), 0);
  EXPECT_EQ(OpaqueElementBytes("OpaqueType<999999u>"), 0);
}

}  // namespace
}  // namespace rooftrace::kineto
