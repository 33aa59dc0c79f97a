// The one config.json reader (model/model_config.h): each family's way of
// saying which layers attend through a sliding window, as its own config
// class defines it, and the refusals of a layer list that cannot be read.
#include "model/model_config.h"

#include <gtest/gtest.h>

#include <string>

namespace rooftrace {
namespace {

ModelConfig Parse(const std::string& text) {
  StatusOr<ModelConfig> c = ParseModelConfig(text, "cfg.json");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : ModelConfig{};
}

std::string ErrorOf(const std::string& text) {
  StatusOr<ModelConfig> c = ParseModelConfig(text, "cfg.json");
  return c.ok() ? std::string() : c.status().message();
}

// gpt-oss's config lists each layer's kind: even layers see 128 tokens,
// odd ones every token (the built-in configs carry the real list).
TEST(ModelConfigTest, GptOssLayerTypesAlternateWindowAndFull) {
  for (const char* name : {"gpt-oss-20b", "gpt-oss-120b"}) {
    StatusOr<ModelConfig> c = LoadModelConfig(name, BuiltinConfigNames());
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->sliding_window, 128);
    EXPECT_TRUE(c->MixedAttention());
    EXPECT_EQ(c->AttentionWindow(0), 128);
    EXPECT_EQ(c->AttentionWindow(1), 0);
    EXPECT_EQ(c->AttentionWindow(c->num_layers - 2), 128);
    EXPECT_EQ(c->AttentionWindow(c->num_layers - 1), 0);
    EXPECT_EQ(c->AttentionWindow(c->num_layers), 128);  // the next step
    EXPECT_EQ(c->WindowedLayerCount(), c->num_layers / 2);
  }
  // Without the list, gpt-oss's and Gemma 2's classes alternate alike.
  const ModelConfig bare = Parse(
      R"({"model_type": "gpt_oss", "hidden_size": 64,
          "num_hidden_layers": 4, "sliding_window": 128})");
  EXPECT_EQ(bare.AttentionWindow(0), 128);
  EXPECT_EQ(bare.AttentionWindow(1), 0);
}

// Mistral windows every layer; Qwen2 only with use_sliding_window, from
// max_window_layers on; Gemma 3 all but every sliding_window_pattern-th.
TEST(ModelConfigTest, FamilyWindowRules) {
  const ModelConfig mistral = Parse(
      R"({"model_type": "mistral", "hidden_size": 64,
          "num_hidden_layers": 4, "sliding_window": 4096})");
  EXPECT_FALSE(mistral.MixedAttention());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(mistral.AttentionWindow(i), 4096);

  const ModelConfig qwen_off = Parse(
      R"({"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 4,
          "sliding_window": 4096, "use_sliding_window": false,
          "max_window_layers": 2})");
  EXPECT_EQ(qwen_off.sliding_window, 0);
  EXPECT_EQ(qwen_off.AttentionWindow(3), 0);
  const ModelConfig qwen_on = Parse(
      R"({"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 4,
          "sliding_window": 4096, "use_sliding_window": true,
          "max_window_layers": 2})");
  EXPECT_EQ(qwen_on.AttentionWindow(0), 0);
  EXPECT_EQ(qwen_on.AttentionWindow(1), 0);
  EXPECT_EQ(qwen_on.AttentionWindow(2), 4096);
  EXPECT_EQ(qwen_on.AttentionWindow(3), 4096);
  // max_window_layers at the layer count: no layer is windowed.
  const ModelConfig qwen_all_full = Parse(
      R"({"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 4,
          "sliding_window": 4096, "use_sliding_window": true,
          "max_window_layers": 4})");
  EXPECT_EQ(qwen_all_full.sliding_window, 0);

  const ModelConfig gemma3 = Parse(
      R"({"model_type": "gemma3_text", "hidden_size": 64,
          "num_hidden_layers": 12, "sliding_window": 1024,
          "sliding_window_pattern": 6})");
  EXPECT_EQ(gemma3.WindowedLayerCount(), 10);
  EXPECT_EQ(gemma3.AttentionWindow(4), 1024);
  EXPECT_EQ(gemma3.AttentionWindow(5), 0);
  EXPECT_EQ(gemma3.AttentionWindow(11), 0);

  const ModelConfig none = Parse(
      R"({"model_type": "mixtral", "hidden_size": 64,
          "num_hidden_layers": 4, "sliding_window": null})");
  EXPECT_EQ(none.AttentionWindow(0), 0);
  EXPECT_FALSE(none.MixedAttention());
}

// A layer list that does not fit the model is refused, naming the field;
// a kind rooftrace has no window for is read as unwindowed.
TEST(ModelConfigTest, BadLayerTypesAreRefused) {
  EXPECT_NE(ErrorOf(R"({"hidden_size": 64, "num_hidden_layers": 3,
                        "sliding_window": 8,
                        "layer_types": ["sliding_attention"]})")
                .find("\"layer_types\" has 1 entries for 3 layers"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"hidden_size": 64, "num_hidden_layers": 1,
                        "sliding_window": 8, "layer_types": [3]})")
                .find("\"layer_types\" must be a list of strings"),
            std::string::npos);
  // A kind without a window (Qwen3-Next's linear attention) is not
  // windowed, and does not stop the config from being read.
  const ModelConfig linear = Parse(
      R"({"hidden_size": 64, "num_hidden_layers": 2, "sliding_window": 8,
          "layer_types": ["linear_attention", "sliding_attention"]})");
  EXPECT_EQ(linear.AttentionWindow(0), 0);
  EXPECT_EQ(linear.AttentionWindow(1), 8);
  EXPECT_NE(ErrorOf(R"({"hidden_size": 64, "num_hidden_layers": 1,
                        "layer_types": ["sliding_attention"]})")
                .find("\"sliding_window\" is missing"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"hidden_size": 64, "sliding_window": "big"})")
                .find("cfg.json: \"sliding_window\" must be a whole number"),
            std::string::npos);
}

}  // namespace
}  // namespace rooftrace
