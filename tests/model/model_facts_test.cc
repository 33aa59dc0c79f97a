// --model for analyze and import: a config.json of any model family gives
// the sizes a trace's operators do not (experts per token, an expert's
// width), under each family's own field names; what is missing stays 0,
// and a bad value or a missing file is refused with the fix.
#include "model/model_facts.h"

#include <gtest/gtest.h>

namespace rooftrace {
namespace {

// The built-in gpt-oss and DeepSeek configs carry their MoE sizes.
TEST(ModelFactsTest, BuiltinMoeConfigsGiveRoutingSizes) {
  StatusOr<ModelFacts> oss = LoadModelFacts("GPT-OSS-20B");
  ASSERT_TRUE(oss.ok()) << oss.status().message();
  EXPECT_EQ(oss->name, "gpt-oss-20b");
  EXPECT_EQ(oss->source, "built-in");
  EXPECT_EQ(oss->hidden_size, 2880);
  EXPECT_EQ(oss->expert_intermediate_size, 2880);
  EXPECT_EQ(oss->num_experts, 32);
  EXPECT_EQ(oss->experts_per_token, 4);
  EXPECT_EQ(oss->head_dim, 64);
  EXPECT_EQ(oss->expert_weight_bits, 4);  // MXFP4
  EXPECT_TRUE(oss->moe());

  StatusOr<ModelFacts> big = LoadModelFacts("gpt-oss-120b");
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(big->num_experts, 128);
  EXPECT_EQ(big->experts_per_token, 4);

  StatusOr<ModelFacts> ds = LoadModelFacts("DeepSeek-V3");
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ(ds->num_experts, 256);  // n_routed_experts
  EXPECT_EQ(ds->experts_per_token, 8);
  // moe_intermediate_size, not the dense layers' 18,432.
  EXPECT_EQ(ds->expert_intermediate_size, 2048);
}

// A dense model is no MoE; a Qwen-MoE spelling is read; head_dim defaults.
TEST(ModelFactsTest, FieldSpellingsOfEachFamily) {
  StatusOr<ModelFacts> dense = LoadModelFacts("Llama-2-7B");
  ASSERT_TRUE(dense.ok());
  EXPECT_FALSE(dense->moe());
  EXPECT_EQ(dense->head_dim, 128);
  StatusOr<ModelFacts> qwen = ParseModelFacts(
      R"({"model_type": "qwen3_moe", "hidden_size": 2048,
          "intermediate_size": 6144, "moe_intermediate_size": 768,
          "num_experts": 128, "num_experts_per_tok": 8,
          "num_attention_heads": 32, "num_key_value_heads": 4,
          "head_dim": 128, "sliding_window": null})",
      "qwen.json");
  ASSERT_TRUE(qwen.ok()) << qwen.status().message();
  EXPECT_EQ(qwen->num_experts, 128);
  EXPECT_EQ(qwen->expert_intermediate_size, 768);
  EXPECT_EQ(qwen->num_kv_heads, 4);
}

// Bad values and missing files name the input and the fix.
TEST(ModelFactsTest, BadConfigsAreRefusedWithTheFix) {
  StatusOr<ModelFacts> bad = ParseModelFacts(
      R"({"hidden_size": 4096, "num_experts_per_tok": 2.5})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.json: \"num_experts_per_tok\""),
            std::string::npos)
      << bad.status().message();
  StatusOr<ModelFacts> empty = ParseModelFacts("{}", "e.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("hidden_size"), std::string::npos);
  StatusOr<ModelFacts> missing = LoadModelFacts("no-such-model.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("gpt-oss-20b"), std::string::npos)
      << missing.status().message();
}

// Issue 37 P2.11: a config whose values cannot be a model's is refused,
// naming the field: more experts per token than experts (1,000 of 32 gave
// 8.86 PFLOP/s "achieved"), a size past any model's (9e15 gave 2.4e19
// bytes), more key-value heads than heads. Real configs still load.
TEST(ModelFactsTest, ImpossibleConfigsAreRefused) {
  StatusOr<ModelFacts> topk = ParseModelFacts(
      R"({"hidden_size": 4096, "num_local_experts": 32,
          "num_experts_per_tok": 1000, "intermediate_size": 14336})",
      "m.json");
  ASSERT_FALSE(topk.ok());
  EXPECT_NE(topk.status().message().find("\"num_experts_per_tok\" is 1000, "
                                         "more than its 32 experts"),
            std::string::npos)
      << topk.status().message();
  StatusOr<ModelFacts> huge = ParseModelFacts(
      R"({"hidden_size": 9000000000000000, "intermediate_size": 14336})",
      "h.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("\"hidden_size\" is 9000000000000000"),
            std::string::npos)
      << huge.status().message();
  StatusOr<ModelFacts> heads = ParseModelFacts(
      R"({"hidden_size": 4096, "num_attention_heads": 32,
          "num_key_value_heads": 64})",
      "k.json");
  ASSERT_FALSE(heads.ok());
  EXPECT_NE(heads.status().message().find("num_key_value_heads"),
            std::string::npos);
  for (const char* name : {"gpt-oss-20b", "DeepSeek-V3", "Mixtral-8x7B",
                           "Llama-3-70B"}) {
    EXPECT_TRUE(LoadModelFacts(name).ok()) << name;
  }
}

}  // namespace
}  // namespace rooftrace
