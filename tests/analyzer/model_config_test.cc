// Model configs for `rooftrace predict`: the built-in configs carry the
// public architecture numbers (parameter counts equal the published ones),
// Hugging Face fields are read with their defaults, and incomplete or
// unsupported configs are refused with the field named.
#include "analyzer/model_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/test_store.h"

namespace rooftrace::analyzer {
namespace {

ModelConfig Builtin(const std::string& name) {
  StatusOr<ModelConfig> c = LoadModelConfig(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : ModelConfig{};
}

std::string ErrorOf(const std::string& json) {
  StatusOr<ModelConfig> c = ParseModelConfig(json, "cfg.json");
  EXPECT_FALSE(c.ok()) << json;
  return c.ok() ? std::string() : c.status().message();
}

constexpr char kMinimal[] =
    R"({"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2,
        "num_attention_heads": 8, "intermediate_size": 1024,
        "vocab_size": 1000})";

// The built-in configs of the architectures predict costs are embedded
// and parse. The MoE configs beside them in model/configs, which only
// analyze's and import's --model read (their attention and routing are
// beyond predict's layer structures), are not offered, and predict
// refuses them with their model_type named.
TEST(ModelConfigTest, EveryBuiltinConfigParses) {
  const std::vector<std::string> names = BuiltinModelNames();
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "Llama-2-13B", "Llama-2-70B", "Llama-2-7B", "Llama-3-70B",
                "Llama-3-8B", "Mistral-7B", "Mixtral-8x7B", "Qwen1.5-0.5B",
                "bert-small"}));
  for (const std::string& n : names) {
    const ModelConfig c = Builtin(n);
    EXPECT_EQ(c.name, n);
    EXPECT_EQ(c.source, "built-in");
  }
  for (const char* n : {"gpt-oss-20b", "gpt-oss-120b", "DeepSeek-V3"}) {
    StatusOr<ModelConfig> c = LoadModelConfig(n);
    ASSERT_FALSE(c.ok()) << n;
    EXPECT_NE(c.status().message().find("model_type"), std::string::npos)
        << c.status().message();
  }
}

// Parameter counts equal the published ones (biases of Qwen2's QKV
// included), which checks every architecture number at once.
TEST(ModelConfigTest, BuiltinParameterCountsArePublishedOnes) {
  EXPECT_EQ(Builtin("Llama-2-7B").ParameterCount(), 6738415616);
  EXPECT_EQ(Builtin("Llama-2-13B").ParameterCount(), 13015864320);
  EXPECT_EQ(Builtin("Llama-2-70B").ParameterCount(), 68976648192);
  EXPECT_EQ(Builtin("Llama-3-8B").ParameterCount(), 8030261248);
  EXPECT_EQ(Builtin("Llama-3-70B").ParameterCount(), 70553706496);
  EXPECT_EQ(Builtin("Mistral-7B").ParameterCount(), 7241732096);
  EXPECT_EQ(Builtin("Mixtral-8x7B").ParameterCount(), 46702792704);
  EXPECT_EQ(Builtin("Qwen1.5-0.5B").ParameterCount(), 463987712);
}

// bert-small is an encoder with a masked-LM head: its parameters are
// BertForMaskedLM's with the decoder tied to the word embeddings:
// embeddings (30522 + 512 + 2) x 512 + LayerNorm 1024 = 15 891 456; four
// layers of 3 152 384; the head's dense, LayerNorm and decoder bias
// 294 202.
TEST(ModelConfigTest, BertSmallIsAnEncoder) {
  const ModelConfig bert = Builtin("bert-small");
  EXPECT_TRUE(bert.encoder);
  EXPECT_TRUE(bert.mlm_head);
  EXPECT_FALSE(bert.gated_mlp);
  EXPECT_EQ(bert.head_dim, 64);
  EXPECT_EQ(bert.num_kv_heads, 8);
  EXPECT_EQ(bert.ParameterCount(), 28795194);
  // Without a masked-LM architecture the head is BertModel's pooler.
  StatusOr<ModelConfig> plain = ParseModelConfig(
      R"({"model_type": "bert", "hidden_size": 512, "num_hidden_layers": 4,
          "num_attention_heads": 8, "intermediate_size": 2048,
          "vocab_size": 30522})",
      "cfg.json");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(plain->mlm_head);
  EXPECT_EQ(plain->ParameterCount(), 28795194 - 294202 + 262656);
  EXPECT_NE(ErrorOf(R"({"model_type": "bert", "hidden_act": "relu",
      "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
      "intermediate_size": 2048, "vocab_size": 30522})")
                .find("hidden_act \"relu\" is not supported"),
            std::string::npos);
}

// Names are matched case-insensitively, so `--model llama-2-7b` works.
TEST(ModelConfigTest, BuiltinNamesAreCaseInsensitive) {
  EXPECT_EQ(Builtin("llama-2-7b").hidden_size, 4096);
  EXPECT_EQ(Builtin("MIXTRAL-8X7B").num_experts, 8);
}

// GQA, MoE, tied embeddings and windows come from their HF fields.
TEST(ModelConfigTest, ArchitectureFieldsOfBuiltins) {
  const ModelConfig l70 = Builtin("Llama-2-70B");
  EXPECT_EQ(l70.num_heads, 64);
  EXPECT_EQ(l70.num_kv_heads, 8);
  EXPECT_EQ(l70.head_dim, 128);
  const ModelConfig mix = Builtin("Mixtral-8x7B");
  EXPECT_TRUE(mix.moe());
  EXPECT_EQ(mix.num_experts, 8);
  EXPECT_EQ(mix.experts_per_token, 2);
  EXPECT_EQ(mix.sliding_window, 0);  // null in the config
  const ModelConfig mistral = Builtin("Mistral-7B");
  EXPECT_EQ(mistral.sliding_window, 4096);
  const ModelConfig qwen = Builtin("Qwen1.5-0.5B");
  EXPECT_TRUE(qwen.tie_word_embeddings);
  EXPECT_TRUE(qwen.qkv_bias);
  EXPECT_EQ(qwen.sliding_window, 0);  // use_sliding_window: false
  EXPECT_FALSE(Builtin("Llama-3-8B").tie_word_embeddings);
}

// Defaults: KV heads = heads, head_dim = hidden / heads, no experts.
TEST(ModelConfigTest, DefaultsOfOptionalFields) {
  StatusOr<ModelConfig> c = ParseModelConfig(kMinimal, "cfg.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->num_kv_heads, 8);
  EXPECT_EQ(c->head_dim, 64);
  EXPECT_FALSE(c->moe());
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_EQ(c->name, "cfg.json");
}

// An explicit head_dim wins over hidden / heads (e.g. Gemma-like widths).
TEST(ModelConfigTest, ExplicitHeadDim) {
  StatusOr<ModelConfig> c = ParseModelConfig(
      R"({"model_type": "mistral", "hidden_size": 5120,
          "num_hidden_layers": 40, "num_attention_heads": 32,
          "num_key_value_heads": 8, "head_dim": 128,
          "intermediate_size": 14336, "vocab_size": 131072,
          "num_experts": 4, "num_experts_per_tok": 1})",
      "nemo.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->head_dim, 128);
  EXPECT_EQ(c->num_experts, 4);  // the num_experts spelling
  // "num_experts": 0 (dense configs of MoE families write it) is no MoE.
  c = ParseModelConfig(
      R"({"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2,
          "num_attention_heads": 8, "intermediate_size": 1024,
          "vocab_size": 1000, "num_experts": 0})",
      "dense.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->moe());
}

// A missing required field is named, with what it means.
TEST(ModelConfigTest, MissingFieldIsNamed) {
  EXPECT_EQ(
      ErrorOf(R"({"model_type": "llama", "hidden_size": 512,
                  "num_hidden_layers": 2, "num_attention_heads": 8,
                  "vocab_size": 1000})"),
      "cfg.json: missing \"intermediate_size\" (the MLP width): a Hugging "
      "Face config.json carries it; add it, or use a "
      "built-in config (Llama-2-13B, Llama-2-70B, Llama-2-7B, Llama-3-70B, "
      "Llama-3-8B, Mistral-7B, Mixtral-8x7B, Qwen1.5-0.5B, bert-small)");
  EXPECT_NE(ErrorOf(R"({"hidden_size": 512})").find("missing \"model_type\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model_type": "llama", "hidden_size": 512,
                        "num_hidden_layers": 2, "num_attention_heads": 8,
                        "intermediate_size": 1024, "vocab_size": 1000,
                        "num_local_experts": 8})")
                .find("missing \"num_experts_per_tok\""),
            std::string::npos);
}

// Zero, negative and fractional sizes are refused with the value found.
TEST(ModelConfigTest, NonPositiveSizesRefused) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "llama", "hidden_size": 0})"),
            "cfg.json: \"hidden_size\" must be a whole number > 0 (found 0); "
            "fix the config.json");
  EXPECT_EQ(ErrorOf(R"({"model_type": "llama", "hidden_size": 512,
                        "num_hidden_layers": -2})"),
            "cfg.json: \"num_hidden_layers\" must be a whole number > 0 "
            "(found -2); fix the config.json");
  EXPECT_NE(ErrorOf(R"({"model_type": "llama", "hidden_size": 51.5})")
                .find("\"hidden_size\" must be a whole number > 0 (found 51.5)"),
            std::string::npos);
}

// Structures predict does not know are refused, never guessed.
TEST(ModelConfigTest, UnsupportedStructuresRefused) {
  EXPECT_NE(ErrorOf(R"({"model_type": "gpt2", "n_embd": 768})")
                .find("model_type \"gpt2\" is not supported"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model_type": "llama", "hidden_size": 512,
                        "num_hidden_layers": 2, "num_attention_heads": 8,
                        "num_key_value_heads": 3, "intermediate_size": 1024,
                        "vocab_size": 1000})")
                .find("num_attention_heads 8 is not a multiple of "
                      "num_key_value_heads 3"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model_type": "llama", "hidden_size": 500,
                        "num_hidden_layers": 2, "num_attention_heads": 8,
                        "intermediate_size": 1024, "vocab_size": 1000})")
                .find("add \"head_dim\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model_type": "llama", "hidden_act": "gelu",
                        "hidden_size": 512, "num_hidden_layers": 2,
                        "num_attention_heads": 8, "intermediate_size": 1024,
                        "vocab_size": 1000})")
                .find("hidden_act \"gelu\" is not supported"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[1, 2]").find("not a config.json"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"model_type\": ").find("expected a Hugging Face"),
            std::string::npos);
}

// A config.json on disk loads; an unknown name lists the built-ins.
TEST(ModelConfigTest, LoadsFilesAndNamesUnknownArguments) {
  const std::string dir = testing::TempDir("model-config");
  const std::string path = dir + "/config.json";
  std::ofstream(path) << kMinimal;
  StatusOr<ModelConfig> c = LoadModelConfig(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->source, path);
  EXPECT_EQ(
      c->ParameterCount(),
      1000 * 512 * 2 + 2 * (4 * 512 * 512 + 3 * 512 * 1024 + 2 * 512) + 512);
  StatusOr<ModelConfig> missing = LoadModelConfig("Llama-9-1B");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "--model Llama-9-1B: no such file and not a built-in config; pass "
            "a Hugging Face config.json or one of: Llama-2-13B, Llama-2-70B, "
            "Llama-2-7B, Llama-3-70B, Llama-3-8B, Mistral-7B, Mixtral-8x7B, "
            "Qwen1.5-0.5B, bert-small");
  testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace rooftrace::analyzer
