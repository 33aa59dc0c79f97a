// Counters of one tool matched to another tool's timeline by kernel name and
// occurrence, on hand-built timelines; the key two demanglings of one kernel
// share.
#include "sources/counter_match.h"

#include <gtest/gtest.h>

namespace rooftrace {
namespace {

// Timeline A B A B A (correlation ids 10..14), A known by two names.
CounterMatchInput Timeline() {
  CounterMatchInput in;
  in.names = {{"_Z1Av", "A()"}, {"B"}};
  for (uint32_t i = 0; i < 5; ++i) in.kernels.push_back({10 + i, i % 2});
  return in;
}

CounterSample Sample(const std::string& name, uint64_t dram_read,
                     int64_t occurrence = -1, int64_t launch_index = -1) {
  CounterSample s;
  s.kernel_name = name;
  s.occurrence = occurrence;
  s.launch_index = launch_index;
  s.values.dram_read_bytes = dram_read;
  s.values.flops[1] = dram_read * 2;
  s.values.has_flops = true;
  return s;
}

// Samples without indices are occurrences in file order, per name; either
// name of a kernel matches it.
TEST(CounterMatchTest, NameAndOccurrenceInFileOrder) {
  CounterMatchInput in = Timeline();
  in.samples = {Sample("A()", 100), Sample("B", 200), Sample("_Z1Av", 300)};
  const CounterMatchResult r = MatchCounters(in);
  ASSERT_EQ(r.matched, 3u);
  ASSERT_EQ(r.counters.size(), 3u);
  // In timeline order: A#0 -> 10, B#0 -> 11, A#1 -> 12.
  EXPECT_EQ(r.counters[0].correlation_id, 10u);
  EXPECT_EQ(r.counters[0].dram_read_bytes, 100u);
  EXPECT_EQ(r.counters[1].correlation_id, 11u);
  EXPECT_EQ(r.counters[1].dram_read_bytes, 200u);
  EXPECT_EQ(r.counters[2].correlation_id, 12u);
  EXPECT_EQ(r.counters[2].dram_read_bytes, 300u);
  EXPECT_EQ(r.counters[2].flops[1], 600u);
  EXPECT_TRUE(r.counters[2].has_flops);
  EXPECT_EQ(r.unmatched(), 0u);
  EXPECT_EQ(r.kernels_without_counters, 2u);  // B#1 (13), A#2 (14)
}

// --launch-skip 2: occurrences count from the third launch on.
TEST(CounterMatchTest, LaunchSkipMovesTheFirstOccurrence) {
  CounterMatchInput in = Timeline();
  in.window.launch_skip = 2;
  in.samples = {Sample("A()", 1), Sample("B", 2), Sample("A()", 3)};
  const CounterMatchResult r = MatchCounters(in);
  ASSERT_EQ(r.matched, 3u);
  EXPECT_EQ(r.counters[0].correlation_id, 12u);
  EXPECT_EQ(r.counters[1].correlation_id, 13u);
  EXPECT_EQ(r.counters[2].correlation_id, 14u);
  EXPECT_EQ(r.kernels_without_counters, 0u);
}

// --launch-skip 1 --launch-count 2: the window is B A; a second A sample is
// beyond it.
TEST(CounterMatchTest, LaunchCountEndsTheWindow) {
  CounterMatchInput in = Timeline();
  in.window.launch_skip = 1;
  in.window.launch_count = 2;
  in.samples = {Sample("A()", 1), Sample("A()", 2)};
  const CounterMatchResult r = MatchCounters(in);
  EXPECT_EQ(r.matched, 1u);
  ASSERT_EQ(r.counters.size(), 1u);
  EXPECT_EQ(r.counters[0].correlation_id, 12u);
  EXPECT_EQ(r.beyond_timeline, 1u);
  EXPECT_EQ(r.kernels_without_counters, 1u);  // the B at 11
  EXPECT_NE(r.summary.find("1 of 2 counter samples matched"), std::string::npos)
      << r.summary;
}

// The profiler's own launch index (ncu "ID") counts every kernel after the
// skip; its name must agree with the timeline's.
TEST(CounterMatchTest, LaunchIndexMustNameTheSameKernel) {
  CounterMatchInput in = Timeline();
  in.window.launch_skip = 1;
  in.samples = {Sample("B", 7, -1, 0), Sample("A()", 8, -1, 1),
                Sample("A()", 9, -1, 2), Sample("B", 10, -1, 9)};
  const CounterMatchResult r = MatchCounters(in);
  EXPECT_EQ(r.matched, 2u);
  ASSERT_EQ(r.counters.size(), 2u);
  EXPECT_EQ(r.counters[0].correlation_id, 11u);  // skip 1 + index 0: B
  EXPECT_EQ(r.counters[1].correlation_id, 12u);  // index 1: A
  EXPECT_EQ(r.name_mismatch, 1u);                // index 2 is B, not A
  EXPECT_EQ(r.beyond_timeline, 1u);              // index 9
}

// An explicit occurrence picks that launch of the name.
TEST(CounterMatchTest, ExplicitOccurrence) {
  CounterMatchInput in = Timeline();
  in.samples = {Sample("_Z1Av", 5, 2), Sample("B", 6, 1)};
  const CounterMatchResult r = MatchCounters(in);
  ASSERT_EQ(r.matched, 2u);
  EXPECT_EQ(r.counters[0].correlation_id, 13u);
  EXPECT_EQ(r.counters[1].correlation_id, 14u);
}

// Unknown names and repeated launches are counted, never merged.
TEST(CounterMatchTest, UnknownNamesAndDuplicatesAreCounted) {
  CounterMatchInput in = Timeline();
  in.samples = {Sample("C", 1), Sample("C", 2), Sample("B", 3, 0),
                Sample("B", 4, 0)};
  const CounterMatchResult r = MatchCounters(in);
  EXPECT_EQ(r.matched, 1u);
  EXPECT_EQ(r.unknown_name, 2u);
  EXPECT_EQ(r.duplicate, 1u);
  EXPECT_EQ(r.unmatched(), 3u);
  EXPECT_NE(r.summary.find("(first: 'C')"), std::string::npos) << r.summary;
}

// Two kernels of one graph launch share a correlation id: a record keyed by
// it would land on both, so neither gets one.
TEST(CounterMatchTest, SharedCorrelationIdIsNotAttached) {
  CounterMatchInput in;
  in.names = {{"g1"}, {"g2"}, {"k"}};
  in.kernels = {{42, 0}, {42, 1}, {43, 2}};
  in.samples = {Sample("g1", 1), Sample("g2", 2), Sample("k", 3)};
  const CounterMatchResult r = MatchCounters(in);
  EXPECT_EQ(r.matched, 1u);
  EXPECT_EQ(r.shared_correlation, 2u);
  EXPECT_EQ(r.unmatched(), 2u);
  ASSERT_EQ(r.counters.size(), 1u);
  EXPECT_EQ(r.counters[0].correlation_id, 43u);
  EXPECT_NE(r.summary.find("2 measured a kernel of a CUDA graph launch"),
            std::string::npos)
      << r.summary;
}

// A short name standing for several kernels counts launches of all of them.
TEST(CounterMatchTest, AmbiguousAliasCountsEveryKernelItNames) {
  CounterMatchInput in;
  in.names = {{"gemm<1>()", "gemm"}, {"gemm<2>()", "gemm"}};
  in.kernels = {{1, 0}, {2, 1}, {3, 0}};
  in.samples = {Sample("gemm", 1), Sample("gemm", 2), Sample("gemm<1>()", 3)};
  const CounterMatchResult r = MatchCounters(in);
  ASSERT_EQ(r.matched, 3u);
  EXPECT_EQ(r.counters[0].correlation_id, 1u);
  EXPECT_EQ(r.counters[0].dram_read_bytes, 1u);
  EXPECT_EQ(r.counters[1].correlation_id, 2u);
  EXPECT_EQ(r.counters[2].correlation_id, 3u);  // gemm<1>() occurrence 1
  EXPECT_EQ(r.counters[2].dram_read_bytes, 3u);
}

// One kernel as NVIDIA's tools demangle it (ncu, nsys) and as the C++
// runtime does (Kineto), spelled as the recorded files spell them: one key.
TEST(CounterNameKeyTest, NvidiaAndRuntimeDemanglingsShareAKey) {
  const std::string ncu =
      "void at::native::vectorized_elementwise_kernel<(int)4, "
      "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, "
      "(unsigned long)3>>(int, T2, T3)";
  const std::string kineto =
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> "
      ">(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
      "3ul>)";
  EXPECT_EQ(CounterNameKey(kineto),
            "voidat::native::vectorized_elementwise_kernel<4,at::native::"
            "CUDAFunctor_add<c10::BFloat16>,std::array<char*,3>>");
  EXPECT_EQ(CounterNameKey(ncu), CounterNameKey(kineto));
  // Lambdas, and parameter lists inside template arguments.
  EXPECT_EQ(
      CounterNameKey(
          "void at::native::elementwise_kernel<(int)128, (int)2, void "
          "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float>>("
          "at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance "
          "1)]>(int, T3)"),
      CounterNameKey(
          "void at::native::elementwise_kernel<128, 2, void "
          "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> "
          ">(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
          "const&)::{lambda(int)#1}>(int, void "
          "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> "
          ">(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
          "const&)::{lambda(int)#1})"));
  // Anonymous namespaces, bools, const on either side.
  EXPECT_EQ(CounterNameKey("void <unnamed>::softmax_warp_forward<float, "
                           "float, float, (int)5, (bool)0, (bool)1>(T2 *, "
                           "const T1 *, int, int, int, const bool *, int, "
                           "bool)"),
            CounterNameKey("void (anonymous namespace)::softmax_warp_forward<"
                           "float, float, float, 5, false, true>(float*, "
                           "float const*, int, int, int, bool const*, int, "
                           "bool)"));
  // A mangled name is demangled first.
  EXPECT_EQ(CounterNameKey("_Z9gemm_bf16PKfPf"),
            CounterNameKey("gemm_bf16(float const*, float*)"));
  // Two instances of one template keep two keys; library names stay.
  EXPECT_NE(CounterNameKey("void k<(int)4>(T1)"),
            CounterNameKey("void k<8>(float)"));
  EXPECT_EQ(CounterNameKey("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn"),
            "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn");
}

// Samples named as ncu demangles are matched to a timeline that names its
// kernels as the C++ runtime does, by key, occurrences counted per kernel;
// an exact name still wins over a key.
TEST(CounterMatchTest, SpellingsOfOneKernelMatchByKey) {
  CounterMatchInput in;
  in.names = {{"void k<4>(float*)"}, {"void k<8>(float*)"}};
  in.kernels = {{1, 0}, {2, 1}, {3, 0}, {4, 1}};
  in.samples = {Sample("void k<(int)4>(T1 *)", 1),
                Sample("void k<(int)8>(T1 *)", 2),
                Sample("void k<(int)4>(T1 *)", 3),
                Sample("void k<(int)16>(T1 *)", 4)};
  const CounterMatchResult r = MatchCounters(in);
  ASSERT_EQ(r.matched, 3u);
  EXPECT_EQ(r.counters[0].correlation_id, 1u);
  EXPECT_EQ(r.counters[1].correlation_id, 2u);
  EXPECT_EQ(r.counters[2].correlation_id, 3u);
  EXPECT_EQ(r.counters[2].dram_read_bytes, 3u);
  EXPECT_EQ(r.unknown_name, 1u);
}

}  // namespace
}  // namespace rooftrace
