#include "libinject/counters/kernel_selector.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

namespace rooftrace::counters {
namespace {

std::unique_ptr<KernelSelector> Make(const SelectorConfig& c) {
  StatusOr<std::unique_ptr<KernelSelector>> s = KernelSelector::Create(c);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

LaunchInfo L(std::string_view name, std::string_view nvtx = "") {
  return LaunchInfo{name, nvtx, false};
}

// No configuration: every direct launch is profiled.
TEST(KernelSelectorTest, DefaultProfilesEveryLaunch) {
  auto s = Make(SelectorConfig{});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(s->Decide(L("any_kernel")), Selection::kProfile);
  }
  EXPECT_EQ(s->Stats().profiled, 5u);
  EXPECT_FALSE(s->Exhausted());
}

// Include and exclude are searched in the name; exclude wins.
TEST(KernelSelectorTest, IncludeAndExcludeRegexes) {
  SelectorConfig c;
  c.kernel_include = "gemm|flash";
  c.kernel_exclude = "splitK";
  auto s = Make(c);
  EXPECT_EQ(s->Decide(L("sm90_xmma_gemm_bf16")), Selection::kProfile);
  EXPECT_EQ(s->Decide(L("flash_fwd_kernel")), Selection::kProfile);
  EXPECT_EQ(s->Decide(L("gemm_splitKreduce")), Selection::kFilteredName);
  EXPECT_EQ(s->Decide(L("elementwise_kernel")), Selection::kFilteredName);
  // Cached answers stay the same.
  EXPECT_EQ(s->Decide(L("elementwise_kernel")), Selection::kFilteredName);
  SelectorStats st = s->Stats();
  EXPECT_EQ(st.profiled, 2u);
  EXPECT_EQ(st.filtered_name, 3u);
}

// The regexes also search the demangled name, as trace mode's filter does.
TEST(KernelSelectorTest, RegexSearchesDemangledNameToo) {
  SelectorConfig c;
  c.kernel_include = "^flash::";
  c.kernel_exclude = "bwd";
  auto s = Make(c);
  LaunchInfo fwd{"_ZN5flash9flash_fwdEv", "", false, "flash::flash_fwd()"};
  LaunchInfo bwd{"_ZN5flash9flash_bwdEv", "", false, "flash::flash_bwd()"};
  EXPECT_EQ(s->Decide(fwd), Selection::kProfile);
  EXPECT_EQ(s->Decide(bwd), Selection::kFilteredName);
  EXPECT_EQ(s->Decide(L("_ZN5flash9flash_fwdEv")),
            Selection::kProfile);  // cached
}

// Sampling keeps the 1st, 4th, 7th... of the launches that pass the name
// filter; the others are counted as sampled out.
TEST(KernelSelectorTest, SampleEveryNthMatchingLaunch) {
  SelectorConfig c;
  c.kernel_include = "gemm";
  c.sample_every = 3;
  auto s = Make(c);
  std::vector<Selection> got;
  for (int i = 0; i < 7; ++i) {
    s->Decide(L("softmax"));  // never a candidate, does not shift sampling
    got.push_back(s->Decide(L("gemm")));
  }
  const std::vector<Selection> want = {
      Selection::kProfile,        Selection::kFilteredSample,
      Selection::kFilteredSample, Selection::kProfile,
      Selection::kFilteredSample, Selection::kFilteredSample,
      Selection::kProfile};
  EXPECT_EQ(got, want);
  EXPECT_EQ(s->Stats().filtered_sample, 4u);
  EXPECT_EQ(s->Stats().filtered_name, 7u);
}

// After max_kernels profiled launches nothing more is profiled.
TEST(KernelSelectorTest, MaxKernelsStopsProfiling) {
  SelectorConfig c;
  c.max_kernels = 2;
  auto s = Make(c);
  EXPECT_EQ(s->Decide(L("a")), Selection::kProfile);
  EXPECT_FALSE(s->Exhausted());
  EXPECT_EQ(s->Decide(L("b")), Selection::kProfile);
  EXPECT_TRUE(s->Exhausted());
  EXPECT_EQ(s->Decide(L("c")), Selection::kFilteredMax);
  EXPECT_EQ(s->Stats().profiled, 2u);
  EXPECT_EQ(s->Stats().filtered_max, 1u);
}

// NVTX include: only launches inside a matching range path; launches outside
// any range never match.
TEST(KernelSelectorTest, NvtxIncludeMatchesRangePath) {
  SelectorConfig c;
  c.nvtx_include = "^forward/.*decode";
  auto s = Make(c);
  EXPECT_EQ(s->Decide(L("k", "forward/layer3/decode_attn")),
            Selection::kProfile);
  EXPECT_EQ(s->Decide(L("k", "forward/prefill")), Selection::kFilteredNvtx);
  EXPECT_EQ(s->Decide(L("k", "")), Selection::kFilteredNvtx);
  EXPECT_EQ(s->Stats().filtered_nvtx, 2u);
}

// Graph nodes and captured launches are never profiled.
TEST(KernelSelectorTest, GraphAndCaptureLaunchesAreSkipped) {
  auto s = Make(SelectorConfig{});
  EXPECT_EQ(s->Decide(LaunchInfo{"gemm", "", true}), Selection::kFilteredGraph);
  EXPECT_EQ(s->Stats().filtered_graph, 1u);
  EXPECT_EQ(s->Stats().profiled, 0u);
  EXPECT_EQ(s->Stats().Filtered(), 1u);
}

// Many threads racing at max_kernels never profile more than the limit.
TEST(KernelSelectorTest, MaxKernelsHoldsUnderConcurrency) {
  SelectorConfig c;
  c.max_kernels = 100;
  auto s = Make(c);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) s->Decide(L("k"));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(s->Stats().profiled, 100u);
  EXPECT_EQ(s->Stats().filtered_max, 7900u);
}

// A bad pattern is refused with the variable name, not thrown.
TEST(KernelSelectorTest, BadRegexIsInvalidArgument) {
  SelectorConfig c;
  c.kernel_include = "gemm(";
  StatusOr<std::unique_ptr<KernelSelector>> s = KernelSelector::Create(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("ROOFTRACE_KERNEL_INCLUDE='gemm('"),
            std::string::npos);
}

// Environment parsing: good values, and each bad value named with a fix.
TEST(SelectorConfigFromEnvTest, ParsesAndRejects) {
  std::map<std::string, std::string> env = {
      {"ROOFTRACE_KERNEL_INCLUDE", "gemm"},
      {"ROOFTRACE_SAMPLE_EVERY", "10"},
      {"ROOFTRACE_MAX_KERNELS", "0"},
      {"ROOFTRACE_NVTX_INCLUDE", "decode"}};
  auto get = [&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  StatusOr<SelectorConfig> c = SelectorConfigFromEnv(get);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->kernel_include, "gemm");
  EXPECT_EQ(c->kernel_exclude, "");
  EXPECT_EQ(c->sample_every, 10u);
  EXPECT_EQ(c->max_kernels, 0u);
  EXPECT_EQ(c->nvtx_include, "decode");

  for (const char* bad : {"0", "-3", "ten", "5x", " 5"}) {
    env["ROOFTRACE_SAMPLE_EVERY"] = bad;
    StatusOr<SelectorConfig> r = SelectorConfigFromEnv(get);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(
                  std::string("ROOFTRACE_SAMPLE_EVERY='") + bad + "'"),
              std::string::npos);
  }
  env["ROOFTRACE_SAMPLE_EVERY"] = "1";
  env["ROOFTRACE_MAX_KERNELS"] = "99999999999999999999999";
  StatusOr<SelectorConfig> r = SelectorConfigFromEnv(get);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ROOFTRACE_MAX_KERNELS"),
            std::string::npos);
}

}  // namespace
}  // namespace rooftrace::counters
