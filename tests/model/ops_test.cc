// Analytic figures of operators other than GEMMs (model/ops.h), checked
// against numbers worked out by hand in the comments.
#include "model/ops.h"

#include <gtest/gtest.h>

#include <utility>

#include "model/gemm.h"

namespace rooftrace {
namespace {

using namespace cuda_type;  // NOLINT

// What a tensor's memory holds from its dimensions and strides: the
// product for contiguous and sliced views, once per stored element for a
// stride-0 dimension, the span for an overlapping window.
TEST(StoredElementsTest, StrideZeroDimensionsAreStoredOnce) {
  const int64_t dims[] = {15360, 4096};
  const int64_t contiguous[] = {4096, 1};
  const int64_t slice[] = {6144, 1};  // a view of a wider row
  const int64_t expanded[] = {1, 0};  // a column expanded along rows
  const int64_t scalar[] = {0, 0};    // one value expanded to all
  EXPECT_EQ(StoredElements(dims, contiguous, 2), 15360 * 4096);
  EXPECT_EQ(StoredElements(dims, slice, 2), 15360 * 4096);
  EXPECT_EQ(StoredElements(dims, expanded, 2), 15360);
  EXPECT_EQ(StoredElements(dims, scalar, 2), 1);
  // unfold(0, 4, 1) of 10 elements: 7 windows of 4 over 10 elements.
  const int64_t windows[] = {7, 4}, overlap[] = {1, 1};
  EXPECT_EQ(StoredElements(windows, overlap, 2), 10);
  const int64_t flipped[] = {-4096, -1};
  EXPECT_EQ(StoredElements(dims, flipped, 2), 15360 * 4096);
  const int64_t empty[] = {0, 4096};
  EXPECT_EQ(StoredElements(empty, contiguous, 2), 0);
  EXPECT_EQ(StoredElements(dims, contiguous, 0), 1);  // a 0-d tensor
}

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
  // bf16 elementwise work is bf16's class, not fp16's (issue 28: a bf16
  // kernel was labelled fp16).
  EXPECT_EQ(PointwisePrecision(kR16BF), Precision::kBf16);
  EXPECT_EQ(PointwisePrecision(kR16F), Precision::kFp16);
  // Integer work is the integer class (issue 36: its FLOPs had no class).
  EXPECT_EQ(PointwisePrecision(kR8I), Precision::kInt);
  EXPECT_EQ(PointwisePrecision(cuda_type::kR64I), Precision::kInt);
  EXPECT_EQ(PointwisePrecision(kC32F), Precision::kUnknown);
}

// NCCL's bus factors, by hand: all_reduce over 8 ranks 2 * 7 / 8 = 1.75;
// all_gather, reduce_scatter, all_to_all over 8 ranks 7 / 8 = 0.875, over
// 4 ranks 3 / 4; broadcast, reduce, send, recv 1 whatever n.
TEST(CollectiveTest, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kAllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kReduce, 64), 1.0);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kSend, 2), 1.0);
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kRecv, 2), 1.0);
  // A group of one moves nothing over a link.
  EXPECT_DOUBLE_EQ(CollectiveBusFactor(Collective::kAllReduce, 1), 0.0);
}

// Without a group size or a known collective there is no factor: never a
// guess.
TEST(CollectiveTest, UnknownGroupOrCollectiveHasNoFactor) {
  EXPECT_LT(CollectiveBusFactor(Collective::kAllReduce, 0), 0);
  EXPECT_LT(CollectiveBusFactor(Collective::kUnknown, 8), 0);
  const CollectiveBandwidth b =
      CollectiveBandwidthOf(Collective::kAllReduce, 0, 1000, 1000);
  EXPECT_DOUBLE_EQ(b.algbw, 1e9);
  EXPECT_LT(b.busbw, 0);
  EXPECT_DOUBLE_EQ(CollectiveBandwidthOf(Collective::kAllReduce, 8, 0, 10).algbw,
                   0.0);
  EXPECT_DOUBLE_EQ(CollectiveBandwidthOf(Collective::kAllReduce, 8, 10, 0).algbw,
                   0.0);
}

// A bf16 all_reduce of 4 Mi elements (8 MiB = 8,388,608 bytes) over 8 ranks
// in 100 us: algbw 8,388,608 / 100e-6 = 83.88608 GB/s; busbw x 1.75 =
// 146.80064 GB/s. An all_gather's message is its output: 1 Mi bf16 in,
// 4 Mi out over 4 ranks = 8,388,608 bytes, busbw x 0.75.
TEST(CollectiveTest, MessageAndBandwidthsByHand) {
  const uint64_t bytes = CollectiveMessageBytes(4194304, 4194304, 2);
  EXPECT_EQ(bytes, 8388608u);
  CollectiveBandwidth b =
      CollectiveBandwidthOf(Collective::kAllReduce, 8, bytes, 100000);
  EXPECT_DOUBLE_EQ(b.algbw, 83.88608e9);
  EXPECT_DOUBLE_EQ(b.busbw, 146.80064e9);
  EXPECT_EQ(CollectiveMessageBytes(1048576, 4194304, 2), 8388608u);
  b = CollectiveBandwidthOf(Collective::kAllGather, 4, 8388608, 100000);
  EXPECT_DOUBLE_EQ(b.busbw, 83.88608e9 * 0.75);
  EXPECT_EQ(CollectiveMessageBytes(100, 100, 0), 0u);  // unknown dtype
}

// PyTorch's spellings of "Collective name" and NCCL's kernel names.
TEST(CollectiveTest, NamesFromPyTorchAndNcclKernels) {
  EXPECT_EQ(CollectiveFromName("allreduce"), Collective::kAllReduce);
  EXPECT_EQ(CollectiveFromName("all_reduce"), Collective::kAllReduce);
  EXPECT_EQ(CollectiveFromName("_allgather_base"), Collective::kAllGather);
  EXPECT_EQ(CollectiveFromName("all_gather_into_tensor_coalesced"),
            Collective::kAllGather);
  EXPECT_EQ(CollectiveFromName("_reduce_scatter_base"),
            Collective::kReduceScatter);
  EXPECT_EQ(CollectiveFromName("all_to_all"), Collective::kAllToAll);
  EXPECT_EQ(CollectiveFromName("alltoall_base"), Collective::kAllToAll);
  EXPECT_EQ(CollectiveFromName("broadcast"), Collective::kBroadcast);
  EXPECT_EQ(CollectiveFromName("recv"), Collective::kRecv);
  EXPECT_EQ(CollectiveFromName("barrier"), Collective::kUnknown);
  EXPECT_EQ(CollectiveFromName(
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            Collective::kAllReduce);
  EXPECT_EQ(CollectiveFromName("ncclKernel_ReduceScatter_RING_LL_Sum_half"),
            Collective::kReduceScatter);
  EXPECT_EQ(CollectiveFromName("ncclDevKernel_Reduce_Sum_f32_RING_LL"),
            Collective::kReduce);
  EXPECT_EQ(CollectiveFromName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            Collective::kUnknown);
  EXPECT_STREQ(CollectiveName(Collective::kReduceScatter), "reduce_scatter");
}


// An in-place form is its operator's; the listed in-place data movements
// keep their own entries; a name with no operator behind it is unknown.
TEST(PointwiseTest, InPlaceFormsAndMath) {
  EXPECT_EQ(PointwiseFlopsPerElement("rsqrt"), 1);
  EXPECT_EQ(PointwiseFlopsPerElement("rsqrt_"), 1);
  EXPECT_EQ(PointwiseFlopsPerElement("addcmul_"), 2);
  EXPECT_EQ(PointwiseFlopsPerElement("copy_"), 0);
  EXPECT_EQ(PointwiseFlopsPerElement("sort_"), -1);
  EXPECT_EQ(PointwiseFlopsPerElement("_"), -1);
}

// The row norms: RMS 4 an element and 2 a row, one more an element with a
// fused add, layer norm 7; bytes the activations plus the weight.
TEST(NormTest, FlopsAndBytes) {
  NormOp rms{NormKind::kRms, 10, 64, false, 1, 10 * 64 * 2 * 2, 2};
  EXPECT_EQ(NormFlops(rms), 10u * 64u * 4u + 20u);
  EXPECT_EQ(NormMinBytes(rms), 2560u + 128u);
  NormOp add = rms;
  add.fused_add = true;
  EXPECT_EQ(NormFlops(add), 10u * 64u * 5u + 20u);
  NormOp ln{NormKind::kLayer, 10, 64, false, 2, 2560, 2};
  EXPECT_EQ(NormFlops(ln), 10u * 64u * 7u + 20u);
  EXPECT_EQ(NormMinBytes(ln), 2560u + 256u);
  ln.activation_bytes = 0;
  EXPECT_EQ(NormMinBytes(ln), 0u);
}

// Unknown element sizes give no bytes rather than a partial count.
TEST(ReductionTest, UnknownSizesGiveNoBytes) {
  ReductionOp r{100, 1, 4, 4, false};
  EXPECT_EQ(ReductionFlops(r), 100u);
  EXPECT_EQ(ReductionMinBytes(r), 404u);
  r.writes_index = true;
  EXPECT_EQ(ReductionMinBytes(r), 412u);
  r.in_element_bytes = 0;
  EXPECT_EQ(ReductionMinBytes(r), 0u);
  EXPECT_EQ(CacheWriteMinBytes({10, 2, 0}), 0u);
  EXPECT_EQ(CacheWriteMinBytes({10, 2, 1}), 30u);
  EXPECT_EQ(GatherMinBytes({10, 0, 5, 8}), 0u);
  EXPECT_EQ(RotaryFlops({256, 0, 0, 2}), 0u);
  EXPECT_EQ(RotaryFlops({256, 128, 0, 2}), 768u);
  EXPECT_EQ(GatedActivationFlops({10, 4, 2}), 50u);
  EXPECT_EQ(GatedActivationMinBytes({10, 4, 2}), 60u);
}


// Serving engines' all-reduce kernels outside NCCL are communication; a
// kernel that merely reduces is not.
TEST(CollectiveTest, CommunicationKernelsBeyondNccl) {
  for (std::string_view name :
       {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
        "void c10d::symmetric_memory::multimem_all_reduce_kernel<c10::"
        "BFloat16, 4>(c10::BFloat16*, unsigned long, unsigned long, "
        "unsigned int**, unsigned long, unsigned long)",
        "void c10d::symmetric_memory::two_shot_all_reduce_kernel<float, 8>",
        "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>",
        "void tensorrt_llm::kernels::oneShotAllReduceKernel<half, 4>"}) {
    EXPECT_TRUE(IsCommunicationKernelName(name)) << name;
  }
  for (std::string_view name :
       {"void at::native::reduce_kernel<512, 1>",
        "void cub::DeviceReduceKernel<BlockAllReduce>",
        "dpsk::ep::internode::dispatch"}) {
    EXPECT_FALSE(IsCommunicationKernelName(name)) << name;
  }
}


// Operators of PyTorch, vLLM, SGLang and aiter by category, whatever
// their namespace.
TEST(OpCategoryTest, FrameworkOperatorsByName) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"aten::mm", "GEMM"},
      {"aten::linear", "GEMM"},
      {"aten::scaled_dot_product_attention", "attention"},
      {"aiter::mha_batch_prefill", "attention"},
      {"vllm::unified_attention_with_output", "attention"},
      {"aiter::rmsnorm", "norm"},
      {"_C::fused_add_rms_norm", "norm"},
      {"aten::layer_norm", "norm"},
      {"aten::norm", "reduce"},
      {"aten::mean", "reduce"},
      {"aten::_softmax", "reduce"},
      {"aten::copy_", "data movement"},
      {"aten::embedding", "data movement"},
      {"sglang::store_cache", "kv-cache"},
      {"_C_cache_ops::reshape_and_cache_flash", "kv-cache"},
      {"sgl_kernel::silu_and_mul", "elementwise"},
      {"sgl_kernel::rotary_embedding", "elementwise"},
      {"aten::rsqrt", "elementwise"},
      {"vllm::moe_forward", "moe"},
      {"_C::dynamic_scaled_fp8_quant", "quantize"},
      {"c10d::allreduce_", "communication"},
      {"symm_mem::multimem_all_reduce_", "communication"},
      {"aten::conv2d", "convolution"},
      {"aten::nonzero", "other"},
  };
  for (const auto& [op, category] : cases) {
    EXPECT_EQ(OpCategory(op), category) << op;
  }
}

// One attention call of the SGLang decode step of the MI300X trace (32
// requests, 32,785 tokens attended in all; Qwen3-8B: 32 query heads, 8 KV
// heads, 128 wide, bf16).
ServingAttentionOp SglangDecodeLayer() {
  ServingAttentionOp decode;
  decode.g_sq = 32;
  decode.g_sk = 32785;
  decode.g_sqsk = 32785;
  decode.heads = 32;
  decode.kv_heads = 8;
  decode.head_dim = 128;
  decode.q_element_bytes = decode.kv_element_bytes = 2;
  return decode;
}

// vLLM's mixed step of the gpt-oss trace: 9 prefill chunks (8,155 new of
// 8,430 tokens) and 37 decodes over 34,489 tokens; 64 heads, 8 KV heads,
// 64 wide, bf16.
ServingAttentionOp VllmMixedStep() {
  ServingAttentionOp s;
  s.c_sq = 8155;
  s.c_sk = 8430;
  s.c_sqsq = 7475785;
  s.c_sqsk = 7671310;
  s.g_sq = 37;
  s.g_sk = 34489;
  s.g_sqsk = 34489;
  s.heads = 64;
  s.kv_heads = 8;
  s.head_dim = 64;
  s.q_element_bytes = s.kv_element_bytes = 2;
  return s;
}

// The SGLang decode step and the vLLM step above: TraceLens's
// InferenceAttention_fwd figures for the same aggregates, 0.537 and 65.0
// GFLOP, 128.57 and 211.83 MiB.
TEST(OpsTest, ServingAttentionFiguresAreTraceLensOnes) {
  const ServingAttentionOp decode = SglangDecodeLayer();
  EXPECT_EQ(ServingAttentionFlops(decode), 537149440u);
  EXPECT_EQ(ServingAttentionMinBytes(decode), 134811648u);

  const ServingAttentionOp mixed = VllmMixedStep();
  EXPECT_EQ(ServingAttentionFlops(mixed), 65010180096u);
  EXPECT_EQ(ServingAttentionMinBytes(mixed), 222115840u);

  // An fp8 cache halves the cached tokens' bytes, not the new ones'.
  ServingAttentionOp fp8 = decode;
  fp8.kv_element_bytes = 1;
  const uint64_t cached = (32785u - 32u) * 8u * 256u;
  EXPECT_EQ(ServingAttentionMinBytes(fp8), 134811648u - cached);
  fp8.q_element_bytes = 0;
  EXPECT_EQ(ServingAttentionMinBytes(fp8), 0u);
}

// A split-KV decode attention writes its output from its reduce kernel:
// the SGLang decode's 32 tokens x 32 heads x 128 bf16 values, 262,144 B of
// the call's 134,811,648 (the QKV kernel keeps the rest). The reduce
// kernels of ROCm's and vLLM's paged attention and FlashAttention's
// split-KV combine are told apart from the attention kernels themselves.
TEST(OpsTest, SplitKvAttentionOutputGoesToItsReduceKernel) {
  ServingAttentionOp decode = SglangDecodeLayer();
  EXPECT_EQ(ServingAttentionOutputBytes(decode), 262144u);
  decode.head_dim_v = 64;  // a narrower V: a narrower output
  EXPECT_EQ(ServingAttentionOutputBytes(decode), 131072u);
  decode.kv_element_bytes = 0;  // the call's bytes unknown: so is its output
  EXPECT_EQ(ServingAttentionOutputBytes(decode), 0u);

  EXPECT_TRUE(IsAttentionReduceKernelName("paged_attention_ll4mi_reduce_kernel"));
  EXPECT_TRUE(IsAttentionReduceKernelName(
      "void vllm::paged_attention_v2_reduce_kernel<c10::BFloat16, 128, 128, "
      "512>(c10::BFloat16*, float const*, float const*, c10::BFloat16 const*, "
      "int const*, int)"));
  EXPECT_TRUE(IsAttentionReduceKernelName(
      "void flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, "
      "128, 4, false, false, cutlass::bfloat16_t>, 16, 5, true>(Params)"));
  EXPECT_FALSE(IsAttentionReduceKernelName("paged_attention_ll4mi_QKV_mfma16_kernel"));
  EXPECT_FALSE(IsAttentionReduceKernelName("at::native::reduce_kernel<512, 1>"));
  EXPECT_FALSE(IsAttentionReduceKernelName("kernel_unified_attention_2d"));
}

// An Inductor pointwise kernel's buffers, each swept once: vLLM's padding
// of gpt-oss's hidden states (8192 x 2880 bf16 in, 8192 x 3072 out,
// xnumel 25,165,824) moves 97,517,568 B. A buffer larger than xnumel (a
// fused embedding's table) is indexed, not swept: no figures.
TEST(OpsTest, TritonPointwiseBytesAreItsBuffers) {
  const TritonBuffer pad[] = {{8192 * 2880, 2}, {8192 * 3072, 2}};
  EXPECT_EQ(TritonPointwiseMinBytes(pad, 2, 25165824), 97517568u);
  const TritonBuffer embedding[] = {{8192, 4}, {201088LL * 2880, 2},
                                    {8192 * 2880, 2}};
  EXPECT_EQ(TritonPointwiseMinBytes(embedding, 3, 8192 * 2880), 0u);
  const TritonBuffer unknown_type[] = {{1024, 0}, {1024, 2}};
  EXPECT_EQ(TritonPointwiseMinBytes(unknown_type, 2, 1024), 0u);
  EXPECT_EQ(TritonPointwiseMinBytes(pad, 2, 0), 0u);
}

// The same vLLM step on one of gpt-oss's sliding-window layers (128
// tokens): each query multiplies at most 128 keys and each request reads
// at most 127 cached tokens, so the layer costs about a third of a full
// one; a window wider than every context changes nothing.
TEST(OpsTest, ServingAttentionWindowCapsKeysAndCache) {
  ServingAttentionOp full = VllmMixedStep();
  full.c_requests = 9;
  full.g_requests = 37;
  ServingAttentionOp windowed = full;
  windowed.window = 128;
  // Scores: prefill 8,155 queries x 128 (below its 3.93 M unwindowed),
  // decode 37 x 128 (below 34,489); two products of width 64, 64 heads.
  const uint64_t scores = 8155u * 128u + 37u * 128u;
  EXPECT_EQ(ServingAttentionFlops(windowed), 64u * 2u * 64u * 2u * scores);
  // Cache: prefill's 275 cached tokens (under 9 x 127), decode's 34,452
  // capped at 37 x 127; K and V of 8 heads x 64, bf16.
  const uint64_t new_side = 8192u * (64u * 128u + 8u * 128u) * 2u;
  const uint64_t cached = (275u + 37u * 127u) * 8u * 128u * 2u;
  EXPECT_EQ(ServingAttentionMinBytes(windowed), new_side + cached);
  EXPECT_LT(ServingAttentionMinBytes(windowed),
            ServingAttentionMinBytes(full));
  // Requests not given: each is at least one new token.
  ServingAttentionOp no_requests = windowed;
  no_requests.c_requests = no_requests.g_requests = 0;
  EXPECT_EQ(ServingAttentionMinBytes(no_requests),
            ServingAttentionMinBytes(windowed));  // caps not reached
  // A window past every context is full attention.
  ServingAttentionOp wide = full;
  wide.window = 1 << 20;
  EXPECT_EQ(ServingAttentionFlops(wide), ServingAttentionFlops(full));
  EXPECT_EQ(ServingAttentionMinBytes(wide), ServingAttentionMinBytes(full));
}

// gpt-oss's MoE layer in vLLM's 8,192-token step (32 experts, top 4,
// hidden and expert width padded to 3,072, MXFP4 weights): TraceLens's
// MoE_unfused_fwd figures, 1,236.95 and 618.48 GFLOP, 528 and 384 MiB.
TEST(OpsTest, MoeGemmFiguresAreTraceLensOnes) {
  MoeGemmOp up;
  up.tokens = 8192;
  up.hidden = 3072;
  up.inter = 3072;
  up.experts = 32;
  up.top_k = 4;
  up.activation_bytes = 2;
  up.weight_bits = 4;
  EXPECT_EQ(MoeGemmFlops(up), 1236950581248u);
  EXPECT_EQ(MoeGemmMinBytes(up), 528u << 20);
  MoeGemmOp down = up;
  down.up = false;
  EXPECT_EQ(MoeGemmFlops(down), 618475290624u);
  EXPECT_EQ(MoeGemmMinBytes(down), 384u << 20);
  // Decoding two tokens hits at most 8 of the 32 experts' weights.
  MoeGemmOp small = down;
  small.tokens = 2;
  EXPECT_EQ(MoeGemmMinBytes(small),
            (2u * 4 * 3072 + 2u * 3072) * 2 + 8u * 3072 * 3072 / 2);
  // The finalize sums each token's 4 routed rows: 8192 x 4 x 3072 adds;
  // 32768 routed rows read and 8192 written, 3072 bf16 each.
  EXPECT_EQ(MoeFinalizeFlops(up), 100663296u);
  EXPECT_EQ(MoeFinalizeMinBytes(up), (32768u + 8192u) * 3072u * 2u);
  // Without a fused activation the up projection writes gate and up.
  MoeGemmOp unfused = up;
  unfused.fused_activation = false;
  EXPECT_EQ(MoeGemmMinBytes(unfused), (528u << 20) + (192u << 20));
}

// Routing 8192 tokens over 32 experts, top 4, bf16 logits: 5 FLOPs per
// logit; the logits read, an int32 id and a bf16 weight per choice
// written. Unknown logits' size: no bytes.
TEST(OpsTest, MoeRoutingIsItsLogitsAndChoices) {
  MoeRoutingOp r;
  r.tokens = 8192;
  r.experts = 32;
  r.top_k = 4;
  r.logit_bytes = 2;
  EXPECT_EQ(MoeRoutingFlops(r), 5u * 8192 * 32);
  EXPECT_EQ(MoeRoutingMinBytes(r), 8192u * 32 * 2 + 8192u * 4 * (4 + 2));
  r.logit_bytes = 0;
  EXPECT_EQ(MoeRoutingMinBytes(r), 0u);
}

// A top-k of 4 among 32 bf16 logits a token, 8,192 tokens, int16 ids and
// a one-word bit matrix a token (triton_kernels' TopK); a sort writes every
// element and its index; argsort the index alone. No element size: 0.
TEST(OpsTest, SelectionIsItsInputAndOutputs) {
  SelectionOp s;
  s.in_elements = 8192 * 32;
  s.in_element_bytes = 2;
  s.out_elements = 8192 * 4;
  s.index_bytes = 2;
  s.extra_output_bytes = 8192 * 4;
  EXPECT_EQ(SelectionMinBytes(s), 524288u + 32768u * 4 + 32768u);
  SelectionOp sort;
  sort.in_elements = sort.out_elements = 1000;
  sort.in_element_bytes = 4;
  sort.index_bytes = 8;
  EXPECT_EQ(SelectionMinBytes(sort), 4000u + 12000u);
  sort.writes_values = false;
  EXPECT_EQ(SelectionMinBytes(sort), 4000u + 8000u);
  sort.in_element_bytes = 0;
  EXPECT_EQ(SelectionMinBytes(sort), 0u);
}

// The token sort of gpt-oss's layer: 8,192 tokens x 4 routed pairs over 32
// experts; bf16 gates, int16 ids. Read: 32,768 x (2 + 2) + the bit matrix
// (8,192 words); written: 32,768 x (2 x 4 + 2) + 32 counts x 4.
TEST(OpsTest, MoeTokenSortIsItsPairsAndCounts) {
  MoeTokenSortOp t;
  t.tokens = 8192;
  t.top_k = 4;
  t.experts = 32;
  t.gate_bytes = 2;
  t.id_bytes = 2;
  EXPECT_EQ(MoeTokenSortMinBytes(t),
            32768u * 4 + 8192u * 4 + 32768u * 10 + 128u);
  t.experts = 33;  // two words of the bit matrix a token
  EXPECT_EQ(MoeTokenSortMinBytes(t),
            32768u * 4 + 8192u * 8 + 32768u * 10 + 132u);
  t.id_bytes = 0;
  EXPECT_EQ(MoeTokenSortMinBytes(t), 0u);
}

// TensorRT-LLM's batched GEMM names: bmm_<out>_<A><B>_<acc>_...
TEST(OpsTest, BatchedGemmPrecisionFromItsOperandsNames) {
  // MXFP4 weights x MXFP8 activations run at the fp8 rate.
  EXPECT_EQ(BatchedGemmNamePrecision(
                "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x8x512u2_s6_swiGlu_sm100f"),
            Precision::kFp8Tensor);
  EXPECT_EQ(BatchedGemmNamePrecision("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128"),
            Precision::kFp8Tensor);
  EXPECT_EQ(BatchedGemmNamePrecision("Bmm_E4m3_E4m3E4m3_Fp32_t128"),
            Precision::kFp8Tensor);
  // fp4 on both sides: the fp4 rate.
  EXPECT_EQ(BatchedGemmNamePrecision("bmm_E2m1_E2m1E2m1_Fp32_t128x8x512"),
            Precision::kFp4Tensor);
  // Weights widened to bf16 activations: the 16-bit rate.
  EXPECT_EQ(BatchedGemmNamePrecision("bmm_Bfloat16_MxE2m1Bfloat16_Fp32_t128"),
            Precision::kFp16Tensor);
  // Not such a name, or operands it does not know: no class.
  EXPECT_EQ(BatchedGemmNamePrecision("_matmul_ogs_NNT_bf16xbf16xmxfp4_128"),
            Precision::kUnknown);
  EXPECT_EQ(BatchedGemmNamePrecision("bmm_Bfloat16_Int4Bfloat16_Fp32"),
            Precision::kUnknown);
  EXPECT_EQ(BatchedGemmNamePrecision("cublas_bmm_fallback"),
            Precision::kUnknown);
}

}  // namespace
}  // namespace rooftrace
