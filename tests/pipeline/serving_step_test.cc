// Serving engines' step annotations: every form vLLM, SGLang and ATOM
// write is read into the step's requests, tokens and (where given) the
// sq/sk aggregates; other annotations and self-contradictory ones are not
// steps.
#include "pipeline/serving_step.h"

#include <gtest/gtest.h>

namespace rooftrace {
namespace {

// The vLLM step of the piecewise-graph trace: 9 prefill chunks and 37
// decodes in one 8,192-token batch.
TEST(ServingStepTest, VllmDetailedGivesAggregates) {
  auto s = ParseServingStep(
      "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)"
      "_generation_37(sq37sk34489sqsq37sqsk34489)");
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->has_aggregates);
  EXPECT_TRUE(s->mixed());
  EXPECT_EQ(s->context_requests, 9);
  EXPECT_EQ(s->generation_requests, 37);
  EXPECT_EQ(s->c_sq, 8155);
  EXPECT_EQ(s->c_sk, 8430);
  EXPECT_EQ(s->c_sqsq, 7475785);
  EXPECT_EQ(s->c_sqsk, 7671310);
  EXPECT_EQ(s->g_sk, 34489);
  EXPECT_EQ(s->g_sqsk, 34489);
  EXPECT_EQ(s->tokens(), 8192);
}

TEST(ServingStepTest, VllmPlainGivesTokenCounts) {
  auto s = ParseServingStep("execute_context_2(14721)_generation_0(0)");
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->has_aggregates);
  EXPECT_TRUE(s->prefill());
  EXPECT_EQ(s->tokens(), 14721);
}

TEST(ServingStepTest, SglangForms) {
  auto extend = ParseServingStep("step[EXTEND bs=15 toks=15360]");
  ASSERT_TRUE(extend.has_value());
  EXPECT_TRUE(extend->prefill());
  EXPECT_EQ(extend->c_sq, 15360);
  EXPECT_FALSE(extend->has_aggregates);

  auto decode = ParseServingStep("step[DECODE bs=32]");
  ASSERT_TRUE(decode.has_value());
  EXPECT_TRUE(decode->decode());
  EXPECT_EQ(decode->g_sq, 32);

  auto detailed = ParseServingStep(
      "step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]");
  ASSERT_TRUE(detailed.has_value());
  EXPECT_TRUE(detailed->has_aggregates);
  EXPECT_EQ(detailed->g_sq, 128);  // speculative decoding: 2 per request
  EXPECT_EQ(detailed->g_sqsk, 262144);

  auto mixed = ParseServingStep(
      "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 "
      "g_sk=12 g_sqsq=1 g_sqsk=12]");
  ASSERT_TRUE(mixed.has_value());
  EXPECT_TRUE(mixed->mixed());
  EXPECT_EQ(mixed->tokens(), 6);
}

TEST(ServingStepTest, AtomForms) {
  auto prefill = ParseServingStep(
      "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 "
      "sqsk=108745533 sk=14721]");
  ASSERT_TRUE(prefill.has_value());
  EXPECT_TRUE(prefill->has_aggregates);
  EXPECT_EQ(prefill->c_sq, 14721);
  EXPECT_EQ(prefill->c_sqsk, 108745533);
  auto decode = ParseServingStep("decode[bs=117/128 tok=117 d=117]");
  ASSERT_TRUE(decode.has_value());
  EXPECT_EQ(decode->generation_requests, 117);  // the real batch, not 128
  EXPECT_FALSE(decode->has_aggregates);
}

// Other annotations, half forms and impossible sums are not steps.
TEST(ServingStepTest, OthersAreNotSteps) {
  for (const char* a :
       {"", "ProfilerStep#134", "capture_32_DECODE", "step[DECODE]",
        "execute_8192_context_9(sq8155sk8430)", "decode[tok=3]",
        "step[DECODE bs=0]",
        // sk below sq: attended tokens include the new ones.
        "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk2sqsq4sqsk2)"}) {
    EXPECT_FALSE(ParseServingStep(a).has_value()) << a;
  }
}

}  // namespace
}  // namespace rooftrace
