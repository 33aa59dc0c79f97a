// Tests of the shared trace builder and the synthetic LLM trace: what other
// suites rely on (counts, token dimensions, pointers, framing) holds.
#include "sources/rft/testing/trace_builder.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "proto/framing.h"

namespace rooftrace::test_support {
namespace {

std::vector<wire::Packet> Decode(const std::string& bytes) {
  wire::FrameReader reader;
  reader.Feed(bytes);
  std::vector<wire::Packet> out;
  std::string_view payload;
  while (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
    wire::Packet p;
    EXPECT_TRUE(p.ParseFromArray(payload.data(), payload.size()));
    out.push_back(std::move(p));
  }
  EXPECT_EQ(reader.buffered_bytes(), 0u);
  return out;
}

// Default options: 1 prefill + 8 decode steps of 2 layers; counts by hand:
// 11*2+3 = 25 kernels and 4*2+1 = 9 GEMMs per step.
TEST(LlmTraceTest, CountsMatchTheLayerStack) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  const auto truth = GenerateLlmTrace(o, &b);
  ASSERT_EQ(truth.steps.size(), 9u);
  EXPECT_EQ(truth.kernels, 9u * 25u);
  EXPECT_EQ(truth.gemms, 9u * 9u);
  EXPECT_EQ(truth.memcpys, 9u);
  EXPECT_EQ(truth.steps[0].phase, "prefill");
  EXPECT_EQ(truth.steps[0].token_count, 4 * 128);
  EXPECT_EQ(truth.steps[1].phase, "decode");
  EXPECT_EQ(truth.steps[1].token_count, 4);
  // Prefill qkv GEMM: 2 * 3072 * 512 * 1024 FLOPs.
  const auto packets = Decode(b.Framed());
  ASSERT_EQ(packets.size(), b.packets_emitted());
  const wire::Gemm* first = nullptr;
  uint64_t kernels = 0;
  for (const auto& p : packets) {
    if (p.has_gemm_batch() && first == nullptr) first = &p.gemm_batch().gemms(0);
    if (p.has_kernel_batch()) kernels += p.kernel_batch().kernels_size();
  }
  EXPECT_EQ(kernels, truth.kernels);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->m(), 3072);
  EXPECT_EQ(first->n(), 512);
  EXPECT_EQ(first->k(), 1024);
  EXPECT_TRUE(packets.front().has_hello());
  EXPECT_TRUE(packets.back().has_goodbye());
}

// Weight pointers repeat in every step; activation pointers of prefill never
// reappear in decode.
TEST(LlmTraceTest, WeightPointersRepeatAcrossSteps) {
  LlmTraceOptions o;
  o.decode_steps = 3;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  std::multiset<uint64_t> a_ptrs;
  std::set<uint64_t> prefill_b, decode_b;
  for (const auto& p : b.packets()) {
    if (!p.has_gemm_batch()) continue;
    for (const auto& g : p.gemm_batch().gemms()) {
      a_ptrs.insert(g.a_ptr());
      (g.n() == 512 ? prefill_b : decode_b).insert(g.b_ptr());
    }
  }
  for (uint64_t a : a_ptrs) EXPECT_EQ(a_ptrs.count(a), 4u);
  for (uint64_t x : prefill_b) EXPECT_EQ(decode_b.count(x), 0u);
}

// Goodbye totals equal what was sent, dropped records included in `seen`.
TEST(TraceBuilderTest, GoodbyeTotalsCountSentAndDropped) {
  TraceBuilder b;
  b.Hello();
  b.AddKernel("k", 1, 10, 20);
  b.AddKernel("k", 2, 30, 40);
  b.AddDropped(wire::RECORD_KERNEL, 5);
  b.Goodbye(3);
  const auto& g = b.packets().back().goodbye();
  ASSERT_EQ(g.totals_size(), 1);
  EXPECT_EQ(g.totals(0).kind(), wire::RECORD_KERNEL);
  EXPECT_EQ(g.totals(0).sent(), 2u);
  EXPECT_EQ(g.totals(0).dropped(), 5u);
  EXPECT_EQ(g.totals(0).seen(), 7u);
  EXPECT_EQ(g.packets_sent(), 3u);
  EXPECT_EQ(g.exit_code(), 3);
  // "k" is interned once, in the kernel packet.
  EXPECT_EQ(b.packets()[1].interned_strings_size(), 1);
}

}  // namespace
}  // namespace rooftrace::test_support
