// The one kernel filter of both modes: counters mode's launch selection
// (Decide) and trace mode's kernel records (Keep).
#include "libinject/kernel_filter.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

namespace rooftrace::inject {
namespace {

std::unique_ptr<KernelFilter> Make(const KernelFilterConfig& c) {
  StatusOr<std::unique_ptr<KernelFilter>> s = KernelFilter::Create(c);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

LaunchInfo L(std::string_view name, std::string_view nvtx = "") {
  return LaunchInfo{name, nvtx, false};
}

// No configuration: every direct launch is profiled.
TEST(KernelFilterLaunchTest, DefaultProfilesEveryLaunch) {
  auto s = Make(KernelFilterConfig{});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(s->Decide(L("any_kernel")), Selection::kSelected);
  }
  EXPECT_EQ(s->Stats().selected, 5u);
  EXPECT_FALSE(s->Exhausted());
}

// Include and exclude are searched in the name; exclude wins.
TEST(KernelFilterLaunchTest, IncludeAndExcludeRegexes) {
  KernelFilterConfig c;
  c.kernel_include = "gemm|flash";
  c.kernel_exclude = "splitK";
  auto s = Make(c);
  EXPECT_EQ(s->Decide(L("sm90_xmma_gemm_bf16")), Selection::kSelected);
  EXPECT_EQ(s->Decide(L("flash_fwd_kernel")), Selection::kSelected);
  EXPECT_EQ(s->Decide(L("gemm_splitKreduce")), Selection::kFilteredName);
  EXPECT_EQ(s->Decide(L("elementwise_kernel")), Selection::kFilteredName);
  // Cached answers stay the same.
  EXPECT_EQ(s->Decide(L("elementwise_kernel")), Selection::kFilteredName);
  FilterStats st = s->Stats();
  EXPECT_EQ(st.selected, 2u);
  EXPECT_EQ(st.filtered_name, 3u);
}

// The regexes also search the demangled name, as trace mode's filter does.
TEST(KernelFilterLaunchTest, RegexSearchesDemangledNameToo) {
  KernelFilterConfig c;
  c.kernel_include = "^flash::";
  c.kernel_exclude = "bwd";
  auto s = Make(c);
  // _ZN5flash9flash_fwdEv demangles to flash::flash_fwd().
  LaunchInfo fwd{"_ZN5flash9flash_fwdEv", "", false};
  LaunchInfo bwd{"_ZN5flash9flash_bwdEv", "", false};
  EXPECT_EQ(s->Decide(fwd), Selection::kSelected);
  EXPECT_EQ(s->Decide(bwd), Selection::kFilteredName);
  EXPECT_EQ(s->Decide(L("_ZN5flash9flash_fwdEv")),
            Selection::kSelected);  // cached
}

// Sampling keeps the 1st, 4th, 7th... of the launches that pass the name
// filter; the others are counted as sampled out.
TEST(KernelFilterLaunchTest, SampleEveryNthMatchingLaunch) {
  KernelFilterConfig c;
  c.kernel_include = "gemm";
  c.sample_every = 3;
  auto s = Make(c);
  std::vector<Selection> got;
  for (int i = 0; i < 7; ++i) {
    s->Decide(L("softmax"));  // never a candidate, does not shift sampling
    got.push_back(s->Decide(L("gemm")));
  }
  const std::vector<Selection> want = {
      Selection::kSelected,       Selection::kFilteredSample,
      Selection::kFilteredSample, Selection::kSelected,
      Selection::kFilteredSample, Selection::kFilteredSample,
      Selection::kSelected};
  EXPECT_EQ(got, want);
  EXPECT_EQ(s->Stats().filtered_sample, 4u);
  EXPECT_EQ(s->Stats().filtered_name, 7u);
}

// Per kernel signature: the first 2 launches of each signature are
// profiled, then one in 3 (launches 5, 8, ...); two signatures count
// apart, however their launches interleave, and the rest are counted as
// filtered by signature.
TEST(KernelFilterLaunchTest, FirstKThenOneInNPerSignature) {
  KernelFilterConfig c;
  c.signature_first = 2;
  c.signature_every = 3;
  auto s = Make(c);
  const uint32_t grid_a[3] = {4, 1, 1}, grid_b[3] = {8, 1, 1};
  const uint32_t block[3] = {128, 1, 1};
  const uint64_t a = KernelSignature("_Z4gemmv", grid_a, block, 0, nullptr);
  const uint64_t b = KernelSignature("_Z4gemmv", grid_b, block, 0, nullptr);
  ASSERT_NE(a, b);
  std::vector<int> profiled_a, profiled_b;
  for (int i = 1; i <= 10; ++i) {
    if (s->Decide(LaunchInfo{"_Z4gemmv", "", false, a}) ==
        Selection::kSelected) {
      profiled_a.push_back(i);
    }
    if (i % 2 == 0 && s->Decide(LaunchInfo{"_Z4gemmv", "", false, b}) ==
                          Selection::kSelected) {
      profiled_b.push_back(i / 2);
    }
  }
  EXPECT_EQ(profiled_a, (std::vector<int>{1, 2, 5, 8}));
  EXPECT_EQ(profiled_b, (std::vector<int>{1, 2, 5}));
  EXPECT_EQ(s->Stats().filtered_signature, 6u + 2u);
  EXPECT_EQ(s->Stats().signatures, 2u);
  EXPECT_EQ(s->Stats().selected, 7u);
}

// A signature marked unsettled (its samples disagree) is profiled ten
// times as often from then on: one in 20 becomes one in 2, the other
// signature keeps one in 20; an unknown signature cannot be marked and a
// marked one is counted once.
TEST(KernelFilterLaunchTest, UnsettledSignatureIsSampledTenTimesAsOften) {
  KernelFilterConfig c;
  c.signature_first = 2;
  c.signature_every = 20;
  auto s = Make(c);
  const uint32_t grid_a[3] = {4, 1, 1}, grid_b[3] = {8, 1, 1};
  const uint32_t block[3] = {128, 1, 1};
  const uint64_t a = KernelSignature("_Z4gemmv", grid_a, block, 0, nullptr);
  const uint64_t b = KernelSignature("_Z4gemmv", grid_b, block, 0, nullptr);
  EXPECT_FALSE(s->MarkUnsettled(a));  // not seen yet
  std::vector<int> profiled_a, profiled_b;
  auto launch = [&](uint64_t sig, int i, std::vector<int>* out) {
    if (s->Decide(LaunchInfo{"_Z4gemmv", "", false, sig}) ==
        Selection::kSelected) {
      out->push_back(i);
    }
  };
  for (int i = 1; i <= 2; ++i) {
    launch(a, i, &profiled_a);
    launch(b, i, &profiled_b);
  }
  EXPECT_TRUE(s->MarkUnsettled(a));
  EXPECT_FALSE(s->MarkUnsettled(a));
  for (int i = 3; i <= 22; ++i) {
    launch(a, i, &profiled_a);
    launch(b, i, &profiled_b);
  }
  EXPECT_EQ(profiled_a,
            (std::vector<int>{1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}));
  EXPECT_EQ(profiled_b, (std::vector<int>{1, 2, 22}));
  EXPECT_EQ(s->Stats().signatures_unsettled, 1u);
}

// A signature is the name, grid, block, dynamic shared memory and, in a
// hooked cuBLAS call, the GEMM's shape: any of them differing is another
// signature; the same inputs give the same one.
TEST(KernelFilterLaunchTest, SignatureSeparatesShapes) {
  const uint32_t grid[3] = {4, 1, 1}, block[3] = {128, 1, 1};
  const uint32_t block2[3] = {256, 1, 1};
  GemmRecord m16{}, m32{};
  m16.m = 16;
  m32.m = 32;
  const uint64_t base = KernelSignature("k", grid, block, 0, nullptr);
  EXPECT_EQ(base, KernelSignature("k", grid, block, 0, nullptr));
  EXPECT_NE(base, KernelSignature("k2", grid, block, 0, nullptr));
  EXPECT_NE(base, KernelSignature("k", grid, block2, 0, nullptr));
  EXPECT_NE(base, KernelSignature("k", grid, block, 1024, nullptr));
  EXPECT_NE(KernelSignature("k", grid, block, 0, &m16),
            KernelSignature("k", grid, block, 0, &m32));
  EXPECT_NE(base, 0u);
}

// First K only (every = 0): after K launches of a signature none is.
TEST(KernelFilterLaunchTest, FirstKOnlyWhenEveryIsZero) {
  KernelFilterConfig c;
  c.signature_first = 1;
  auto s = Make(c);
  EXPECT_EQ(s->Decide(LaunchInfo{"k", "", false, 77}), Selection::kSelected);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(s->Decide(LaunchInfo{"k", "", false, 77}),
              Selection::kFilteredSignature);
  }
  // A launch without a signature is not sampled by one.
  EXPECT_EQ(s->Decide(LaunchInfo{"k", "", false, 0}), Selection::kSelected);
}

// After max_kernels profiled launches nothing more is profiled.
TEST(KernelFilterLaunchTest, MaxKernelsStopsProfiling) {
  KernelFilterConfig c;
  c.max_kernels = 2;
  auto s = Make(c);
  EXPECT_EQ(s->Decide(L("a")), Selection::kSelected);
  EXPECT_FALSE(s->Exhausted());
  EXPECT_EQ(s->Decide(L("b")), Selection::kSelected);
  EXPECT_TRUE(s->Exhausted());
  EXPECT_EQ(s->Decide(L("c")), Selection::kFilteredMax);
  EXPECT_EQ(s->Stats().selected, 2u);
  EXPECT_EQ(s->Stats().filtered_max, 1u);
}

// NVTX include: only launches inside a matching range path; launches outside
// any range never match.
TEST(KernelFilterLaunchTest, NvtxIncludeMatchesRangePath) {
  KernelFilterConfig c;
  c.nvtx_include = "^forward/.*decode";
  auto s = Make(c);
  EXPECT_EQ(s->Decide(L("k", "forward/layer3/decode_attn")),
            Selection::kSelected);
  EXPECT_EQ(s->Decide(L("k", "forward/prefill")), Selection::kFilteredNvtx);
  EXPECT_EQ(s->Decide(L("k", "")), Selection::kFilteredNvtx);
  EXPECT_EQ(s->Stats().filtered_nvtx, 2u);
}

// Graph nodes and captured launches are never profiled.
TEST(KernelFilterLaunchTest, GraphAndCaptureLaunchesAreSkipped) {
  auto s = Make(KernelFilterConfig{});
  EXPECT_EQ(s->Decide(LaunchInfo{"gemm", "", true}), Selection::kFilteredGraph);
  EXPECT_EQ(s->Stats().filtered_graph, 1u);
  EXPECT_EQ(s->Stats().selected, 0u);
  EXPECT_EQ(s->Stats().Filtered(), 1u);
}

// With exclude_communication, NCCL, NVSHMEM and custom all-reduce kernels
// are filtered (counted apart); others, and every kernel without it, pass.
TEST(KernelFilterLaunchTest, CommunicationKernelsAreFilteredWhenAsked) {
  KernelFilterConfig c;
  c.exclude_communication = true;
  auto s = Make(c);
  for (const char* comm :
       {"ncclKernel_AllReduce_RING_LL_Sum_float",
        "ncclDevKernel_AllGather_RING_LL", "nvshmemi_transfer_rma_kernel",
        "_Z27cross_device_reduce_2stageIfLi8EEvPv",
        "_ZN12tensorrt_llm7kernels18oneShotAllReduceKernelEv",
        "reduce_scatter_kernel"}) {
    EXPECT_EQ(s->Decide(L(comm)), Selection::kFilteredCommunication) << comm;
  }
  EXPECT_EQ(s->Decide(L("sm90_xmma_gemm_bf16bf16_bf16f32")),
            Selection::kSelected);
  EXPECT_EQ(s->Decide(L("flash_fwd_kernel")), Selection::kSelected);
  EXPECT_EQ(s->Stats().filtered_communication, 6u);
  EXPECT_EQ(s->Stats().Filtered(), 6u);
  auto all = Make(KernelFilterConfig{});
  EXPECT_EQ(all->Decide(L("ncclDevKernel_AllGather_RING_LL")),
            Selection::kSelected);
}

// Many threads racing at max_kernels never profile more than the limit.
TEST(KernelFilterLaunchTest, MaxKernelsHoldsUnderConcurrency) {
  KernelFilterConfig c;
  c.max_kernels = 100;
  auto s = Make(c);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) s->Decide(L("k"));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(s->Stats().selected, 100u);
  EXPECT_EQ(s->Stats().filtered_max, 7900u);
}

// A bad pattern is refused with the variable name, not thrown.
TEST(KernelFilterLaunchTest, BadRegexIsInvalidArgument) {
  KernelFilterConfig c;
  c.kernel_include = "gemm(";
  StatusOr<std::unique_ptr<KernelFilter>> s = KernelFilter::Create(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("ROOFTRACE_KERNEL_INCLUDE='gemm('"),
            std::string::npos);
}

// Include / exclude regexes, then sampling, then the cap.
TEST(KernelFilterRecordTest, AppliesRegexesThenSamplingThenCap) {
  auto f = Make({"gemm|attn", "splitK", "", 2, 3});
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->Keep("elementwise_kernel"));          // not included
  EXPECT_FALSE(f->Keep("sm90_xmma_gemm_splitK_bf16"));  // excluded
  // Candidates in order: #0 kept, #1 sampled out, #2 kept, #3 out, #4 kept,
  // #5 out, #6 would be kept but the cap (3) is reached.
  std::vector<bool> kept;
  for (int i = 0; i < 7; ++i) kept.push_back(f->Keep("flash_attn_fwd"));
  EXPECT_EQ(kept,
            (std::vector<bool>{true, false, true, false, true, false, false}));
  EXPECT_EQ(f->kept(), 3u);
}

// Patterns match the demangled name too ("scale(float" finds _Z5scalePffi).
TEST(KernelFilterRecordTest, MatchesMangledOrDemangledNames) {
  auto f = Make({"^scale\\(float", "", "", 1, 0});
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->Keep("_Z5scalePffi"));
  EXPECT_FALSE(f->Keep("_Z3addPfPKfi"));
  EXPECT_TRUE(f->Keep("_Z5scalePffi"));  // cached verdict, same answer
  auto g = Make({"", "Pff", "", 1, 0});  // mangled-only text
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->Keep("_Z5scalePffi"));
  EXPECT_TRUE(g->Keep("triton_poi_fused_add_0"));  // not mangled: as is
}

// A bad pattern is an error naming the variable, not an exception.
TEST(KernelFilterRecordTest, BadPatternIsAnError) {
  auto f = KernelFilter::Create({"gemm(", "", "", 1, 0});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("ROOFTRACE_KERNEL_INCLUDE='gemm('"),
            std::string::npos);
  auto g = KernelFilter::Create({"", "[z-a]", "", 1, 0});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("ROOFTRACE_KERNEL_EXCLUDE"),
            std::string::npos);
  // Default filter keeps everything.
  auto all = Make({"", "", "", 1, 0});
  ASSERT_NE(all, nullptr);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(all->Keep("k"));
}

}  // namespace
}  // namespace rooftrace::inject
