#include "analyzer/model_config.h"

#include <algorithm>
#include <cctype>

#include "model/builtin_configs.h"

namespace rooftrace::analyzer {
namespace {

constexpr const char* kSupportedTypes[] = {"llama", "mistral", "mixtral",
                                           "qwen2", "bert"};

std::string BuiltinList() {
  std::string out;
  for (const std::string& n : BuiltinModelNames()) {
    out += (out.empty() ? "" : ", ") + n;
  }
  return out;
}

}  // namespace

int64_t ModelConfig::ParameterCount() const {
  const int64_t H = hidden_size;
  if (encoder) {
    // Word, position and token-type embeddings and their LayerNorm; per
    // layer Q, K, V, O with biases, the MLP with biases, two LayerNorms;
    // the masked-LM head (dense, LayerNorm, the tied decoder's bias) or
    // the pooler.
    const int64_t I = intermediate_size;
    const int64_t embed =
        (vocab_size + max_position_embeddings + type_vocab_size) * H + 2 * H;
    const int64_t layer = 4 * H * H + 4 * H + 2 * H * I + I + H + 4 * H;
    const int64_t head = mlm_head ? H * H + H + 2 * H + vocab_size : H * H + H;
    return embed + num_layers * layer + head;
  }
  const int64_t qkv = (num_heads + 2 * num_kv_heads) * head_dim;
  const int64_t attn = H * qkv + num_heads * head_dim * H +
                       (qkv_bias ? qkv : 0) + (o_bias ? H : 0);
  const int64_t mlp_one = (gated_mlp ? 3 : 2) * H * intermediate_size;
  const int64_t mlp = moe() ? num_experts * mlp_one + num_experts * H : mlp_one;
  const int64_t per_layer = attn + mlp + 2 * H;
  const int64_t embed = vocab_size * H;
  return embed + num_layers * per_layer + H + (tie_word_embeddings ? 0 : embed);
}

std::vector<std::string> BuiltinModelNames() {
  // model/configs also holds configs that only analyze's and import's
  // --model read (gpt-oss, DeepSeek): predict offers those it can cost.
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const BuiltinConfigText& t : BuiltinConfigTexts()) {
      StatusOr<rooftrace::ModelConfig> c =
          rooftrace::ParseModelConfig(t.json, std::string(t.name));
      if (!c.ok() ||
          std::find(std::begin(kSupportedTypes), std::end(kSupportedTypes),
                    c->model_type) == std::end(kSupportedTypes)) {
        continue;
      }
      out.emplace_back(t.name);
    }
    return out;
  }();
  return kNames;
}

namespace {

// A required size: the base reader left 0 where the config has none.
Status Required(int64_t value, const std::string& source, const char* key,
                const char* meaning) {
  if (value > 0) return OkStatus();
  return InvalidArgument(source + ": missing \"" + key + "\" (" + meaning +
                         "): a Hugging Face config.json carries it; add it, "
                         "or use a built-in config (" + BuiltinList() + ")");
}

// BERT's fields past the common sizes: GELU, the head (from
// "architectures"), position and token-type embedding tables.
Status CheckEncoder(ModelConfig* c) {
  c->encoder = true;
  c->gated_mlp = false;
  c->qkv_bias = c->o_bias = true;
  if (c->hidden_act.empty()) c->hidden_act = "gelu";
  if (c->hidden_act.rfind("gelu", 0) != 0) {
    return InvalidArgument(c->source + ": hidden_act \"" + c->hidden_act +
                           "\" is not supported for model_type \"bert\": "
                           "predict costs BERT's plain GELU MLP "
                           "(\"hidden_act\": \"gelu\")");
  }
  for (const std::string& n : c->architectures) {
    if (n.find("MaskedLM") != std::string::npos ||
        n.find("PreTraining") != std::string::npos) {
      c->mlm_head = true;
    }
  }
  if (c->max_position_embeddings == 0) c->max_position_embeddings = 512;
  if (c->type_vocab_size == 0) c->type_vocab_size = 2;
  c->sliding_window = 0;  // bidirectional: no window
  c->windowed_layers.clear();
  return OkStatus();
}

// Predict's checks of the one reader's result.
StatusOr<ModelConfig> Check(StatusOr<rooftrace::ModelConfig> base) {
  if (!base.ok()) return base.status();
  ModelConfig c;
  static_cast<rooftrace::ModelConfig&>(c) = std::move(*base);
  const std::string& source = c.source;
  if (c.model_type.empty()) {
    return InvalidArgument(
        source +
        ": missing \"model_type\" (which architecture this is): predict "
        "costs llama, mistral, mixtral, qwen2 and bert models; add "
        "\"model_type\": \"llama\" if the model has that layer structure");
  }
  if (std::find(std::begin(kSupportedTypes), std::end(kSupportedTypes),
                c.model_type) == std::end(kSupportedTypes)) {
    return InvalidArgument(
        source + ": model_type \"" + c.model_type +
        "\" is not supported: predict knows llama, mistral, mixtral and "
        "qwen2 (decoders with RMSNorm, rotary attention and a gated SiLU "
        "MLP) and bert (encoders); for a model with one of those "
        "structures set \"model_type\" to it");
  }
  RT_RETURN_IF_ERROR(
      Required(c.hidden_size, source, "hidden_size", "the model width"));
  RT_RETURN_IF_ERROR(Required(c.num_layers, source, "num_hidden_layers",
                              "the number of layers"));
  RT_RETURN_IF_ERROR(Required(c.num_heads, source, "num_attention_heads",
                              "the number of query heads"));
  RT_RETURN_IF_ERROR(Required(c.intermediate_size, source,
                              "intermediate_size", "the MLP width"));
  RT_RETURN_IF_ERROR(
      Required(c.vocab_size, source, "vocab_size", "the vocabulary size"));
  if (c.num_heads % c.num_kv_heads != 0) {
    return InvalidArgument(
        source + ": num_attention_heads " + std::to_string(c.num_heads) +
        " is not a multiple of num_key_value_heads " +
        std::to_string(c.num_kv_heads) +
        ": every KV head must serve the same number of query heads");
  }
  if (c.head_dim == 0) {
    return InvalidArgument(source + ": missing \"head_dim\" and hidden_size " +
                           std::to_string(c.hidden_size) +
                           " is not a multiple of num_attention_heads " +
                           std::to_string(c.num_heads) + ": add \"head_dim\"");
  }
  if (c.model_type == "bert") {
    RT_RETURN_IF_ERROR(CheckEncoder(&c));
    return c;
  }
  if (c.hidden_act.empty()) c.hidden_act = "silu";
  if (c.hidden_act != "silu" && c.hidden_act != "swish") {
    return InvalidArgument(source + ": hidden_act \"" + c.hidden_act +
                           "\" is not supported for model_type \"" +
                           c.model_type +
                           "\": these models use a gated SiLU MLP "
                           "(\"hidden_act\": \"silu\")");
  }
  c.gated_mlp = true;
  c.qkv_bias = c.model_type == "qwen2" || c.attention_bias;
  c.o_bias = c.attention_bias;
  // Predict's MLP width is an expert's (Mixtral's intermediate_size).
  if (c.num_experts > 0 && c.experts_per_token == 0) {
    return InvalidArgument(
        source + ": missing \"num_experts_per_tok\" (how many experts each "
        "token is routed to): a Hugging Face config.json carries it; add "
        "it, or use a built-in config (" + BuiltinList() + ")");
  }
  if (c.num_experts > 0 && c.experts_per_token > c.num_experts) {
    return InvalidArgument(source + ": num_experts_per_tok " +
                           std::to_string(c.experts_per_token) +
                           " exceeds the " + std::to_string(c.num_experts) +
                           " experts");
  }
  return c;
}

}  // namespace

StatusOr<ModelConfig> ParseModelConfig(std::string_view json_text,
                                       const std::string& source) {
  return Check(rooftrace::ParseModelConfig(json_text, source));
}

StatusOr<ModelConfig> LoadModelConfig(const std::string& name_or_path) {
  return Check(rooftrace::LoadModelConfig(name_or_path, BuiltinList()));
}

}  // namespace rooftrace::analyzer
