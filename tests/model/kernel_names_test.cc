// Kernel families: template instances and launch variants of one algorithm
// share a family; different algorithms do not.
#include "model/kernel_names.h"

#include <gtest/gtest.h>

namespace rooftrace {
namespace {

// A mangled name demangles; a C (SASS) name is returned unchanged.
TEST(KernelNamesTest, DemanglesItaniumNamesOnly) {
  EXPECT_EQ(Demangle("_Z16flash_fwd_kernelIN5flash6TraitsILi128ELb1EEELb0EEv16"
                     "Flash_fwd_params"),
            "void flash_fwd_kernel<flash::Traits<128, true>, false>"
            "(Flash_fwd_params)");
  EXPECT_EQ(Demangle("ampere_sgemm_128x64_tn"), "ampere_sgemm_128x64_tn");
  // Broken mangling stays as it was rather than becoming empty.
  EXPECT_EQ(Demangle("_Zgarbage"), "_Zgarbage");
}

// Two tile configurations of cuBLAS's Ampere bf16 GEMM are one family.
TEST(KernelNamesTest, AmpereGemmTilesShareAFamily) {
  EXPECT_EQ(KernelFamily("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_"
                         "64x3_tn"),
            "ampere_bf16_s16816gemm");
  EXPECT_EQ(KernelFamily("ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_"
                         "stages_64x5_nn"),
            "ampere_bf16_s16816gemm");
  EXPECT_EQ(KernelFamily("ampere_sgemm_128x64_tn"), "ampere_sgemm");
  EXPECT_EQ(KernelFamily("volta_h884gemm_64x64_ldg8_nn"), "volta_h884gemm");
}

// Hopper xmma GEMMs with different tiles and split-k are one family.
TEST(KernelNamesTest, Sm90XmmaGemmVariantsShareAFamily) {
  EXPECT_EQ(KernelFamily("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x"
                         "128x64_warpgroupsize1x1x1_execute_segment_k_off_"
                         "kernel__5x_cublas"),
            "sm90_xmma_gemm");
  EXPECT_EQ(KernelFamily("sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize64x64x"
                         "64_cublas"),
            "sm90_xmma_gemm");
  EXPECT_EQ(KernelFamily("sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32"),
            "sm80_xmma_fprop");
  // No algorithm token: cut at the first tile token.
  EXPECT_EQ(KernelFamily("nvjet_tst_128x64_64x6_1x1_v_bz_TNT"), "nvjet_tst");
}

// CUTLASS: SASS-style names cut at the GEMM token; wrapper kernels take the
// wrapped kernel's name.
TEST(KernelNamesTest, CutlassNamesAndWrappers) {
  EXPECT_EQ(KernelFamily("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_"
                         "64x4_tn_align8"),
            "cutlass_80_tensorop_bf16_s16816gemm");
  EXPECT_EQ(KernelFamily("void cutlass::Kernel2<cutlass_80_tensorop_bf16_"
                         "s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_"
                         "tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_"
                         "align8::Params)"),
            "cutlass_80_tensorop_bf16_s16816gemm");
  EXPECT_EQ(KernelFamily("void cutlass::device_kernel<cutlass::gemm::kernel::"
                         "GemmUniversal<cute::tuple<int, int, int>, "
                         "cutlass::gemm::collective::CollectiveMma<4>, void> >("
                         "cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, "
                         "int, int>, cutlass::gemm::collective::CollectiveMma<"
                         "4>, void>::Params)"),
            "cutlass::gemm::kernel::GemmUniversal");
  EXPECT_EQ(ShortKernelName("void cutlass::device_kernel<flash::FlashAttnFwdSm90<"
                            "int, 128> >(flash::FlashAttnFwdSm90<int, 128>::"
                            "Params)"),
            "flash::FlashAttnFwdSm90");
}

// Flash-attention template instances (mangled or not) are one family, while
// the split-KV kernel stays its own family.
TEST(KernelNamesTest, FlashForwardInstancesShareAFamily) {
  EXPECT_EQ(KernelFamily("_Z16flash_fwd_kernelIN5flash6TraitsILi128ELb1EEELb0EE"
                         "v16Flash_fwd_params"),
            "flash_fwd_kernel");
  EXPECT_EQ(KernelFamily("void flash_fwd_kernel<Flash_fwd_kernel_traits<64, "
                         "128, 64, 4, false, false, cutlass::bfloat16_t>, true, "
                         "false, false, false, true, true, false>("
                         "Flash_fwd_params)"),
            "flash_fwd_kernel");
  EXPECT_EQ(KernelFamily("void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<"
                         "128, 64, 128, 4, false, false, cutlass::half_t>, true>("
                         "Flash_fwd_params)"),
            "flash_fwd_splitkv_kernel");
}

// Inductor's per-graph index is a launch variant of one fused operation.
TEST(KernelNamesTest, TritonIndexIsDropped) {
  EXPECT_EQ(KernelFamily("triton_poi_fused_add_mul_0"), "triton_poi_fused_add_mul");
  EXPECT_EQ(KernelFamily("triton_poi_fused_add_mul_12"),
            "triton_poi_fused_add_mul");
  EXPECT_EQ(KernelFamily("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_1"),
            "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt");
  EXPECT_EQ(KernelFamily("triton_"), "triton_");
}

// PyTorch's vectorized and unrolled launchers of one op are one family; two
// ops are two families.
TEST(KernelNamesTest, PytorchElementwiseGroupedByOperation) {
  const std::string add_vec =
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_"
      "addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_";
  const std::string add_unrolled =
      "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<"
      "c10::BFloat16>, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, "
      "unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::"
      "memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, "
      "at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)";
  const std::string silu =
      "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
      "namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()"
      "() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
      "at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::"
      "silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::"
      "{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
      "at::detail::Array<char*, 2>)";
  const std::string mul =
      "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_"
      "nocast<at::native::BinaryFunctor<float, float, float, at::native::"
      "binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
      "at::native::BinaryFunctor<float, float, float, at::native::"
      "binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, "
      "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, "
      "float, at::native::binary_internal::MulFunctor<float> > >("
      "at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, "
      "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})";
  EXPECT_EQ(KernelFamily(add_vec), "at::native::elementwise_kernel<CUDAFunctor_add>");
  EXPECT_EQ(KernelFamily(add_unrolled),
            "at::native::elementwise_kernel<CUDAFunctor_add>");
  EXPECT_EQ(KernelFamily(silu), "at::native::elementwise_kernel<silu_kernel>");
  EXPECT_EQ(KernelFamily(mul), "at::native::elementwise_kernel<MulFunctor>");
  EXPECT_EQ(ShortKernelName(add_vec),
            "at::native::vectorized_elementwise_kernel<CUDAFunctor_add>");
}

// Anonymous namespaces do not cut the name short.
TEST(KernelNamesTest, AnonymousNamespaceKeepsTheKernelName) {
  EXPECT_EQ(KernelFamily("_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIfEE"
                         "vPT_i"),
            "at::native::{anon}::indexSelectLargeIndex");
  EXPECT_EQ(KernelFamily("void at::native::reduce_kernel<512, 1, at::native::"
                         "ReduceOp<float, at::native::MeanOps<float, float> > >("
                         "at::native::ReduceOp<float, at::native::MeanOps<float, "
                         "float> >)"),
            "at::native::reduce_kernel");
  EXPECT_EQ(KernelFamily("my_plain_kernel"), "my_plain_kernel");
}

// vLLM's fused_add_rms_norm_kernel returns std::enable_if<...>::type, whose
// template argument holds a comparison "(8)>(0)": the family is the kernel,
// not the return type.
TEST(KernelNamesTest, EnableIfReturnTypeIsSkipped) {
  const char* mangled =
      "_ZN4vllm25fused_add_rms_norm_kernelIN3c108BFloat16ELi8EEENSt9enable_"
      "ifIXaagtT0_Li0EsrNS_12_typeConvertIT_EE6existsEvE4typeEPS5_lS8_PKS5_"
      "fii";
  ASSERT_NE(Demangle(mangled), mangled);  // the demangler accepts it
  EXPECT_EQ(KernelFamily(mangled), "vllm::fused_add_rms_norm_kernel");
  EXPECT_EQ(ShortKernelName(mangled), "vllm::fused_add_rms_norm_kernel");
  EXPECT_EQ(KernelFamily("std::enable_if<((4)>(0)), void>::type "
                         "vllm::rms_norm_kernel<float, 4>(float*, int)"),
            "vllm::rms_norm_kernel");
}

// A name the demangler rejects still yields its qualified base name.
TEST(KernelNamesTest, UndemangleableNamesFallBackToTheMangledPrefix) {
  const char* bad = "_Z19silu_and_mul_kernelXX";
  ASSERT_EQ(Demangle(bad), bad);  // the demangler refuses it
  EXPECT_EQ(KernelFamily(bad), "silu_and_mul_kernel");
  EXPECT_EQ(ShortKernelName(bad), "silu_and_mul_kernel");
  EXPECT_EQ(KernelFamily("_ZN2at6native7my_kernEbroken"), "at::native::my_kern");
  // A length past the end is not trusted.
  EXPECT_EQ(KernelFamily("_Z99short"), "_Z99short");
}

// Long names keep head and tail and respect the limit.
TEST(KernelNamesTest, ShortNameKeepsHeadAndTail) {
  const std::string n =
      "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn";  // 59
  EXPECT_EQ(ShortKernelName(n, 60), n);
  const std::string s = ShortKernelName(n, 30);
  EXPECT_EQ(s.size(), 30u);
  EXPECT_EQ(s, "ampere_bf16_s16816...s_64x3_tn");
}

}  // namespace
}  // namespace rooftrace
