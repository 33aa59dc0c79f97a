#include "analyzer/model_config.h"

#include <algorithm>
#include <cctype>

#include "model/builtin_configs.h"
#include "model/model_facts.h"
#include "base/json.h"

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

// Reads the members of one config object; every error names the source,
// the member and the fix.
class ConfigReader {
 public:
  ConfigReader(const std::string& source, const json::Value& obj)
      : source_(source),
        obj_(obj),
        fix_("fix the member or use a built-in config (" + BuiltinList() + ")"),
        reader_(source_, "", obj_, fix_) {}

  bool Has(std::string_view key) const {
    const json::Value* v = obj_.Find(key);
    return v && !v->is_null();
  }

  // A required size: present, a whole number, > 0.
  Status Size(std::string_view key, const char* meaning, int64_t* out) const {
    if (!Has(key)) {
      return InvalidArgument(source_ + ": missing \"" + std::string(key) +
                             "\" (" + meaning +
                             "): a Hugging Face config.json carries it; "
                             "add it, or use a built-in "
                             "config (" +
                             BuiltinList() + ")");
    }
    return OptionalSize(key, out);
  }

  // An optional size: when present it must be a whole number > 0.
  Status OptionalSize(std::string_view key, int64_t* out) const {
    if (!Has(key)) return OkStatus();
    int64_t v = 0;
    RT_RETURN_IF_ERROR(reader_.Int64(key, &v));
    if (v <= 0) {
      return InvalidArgument(source_ + ": \"" + std::string(key) +
                             "\" must be > 0 (found " + std::to_string(v) +
                             ")");
    }
    *out = v;
    return OkStatus();
  }

  Status String(std::string_view key, std::string* out) const {
    return reader_.String(key, out);
  }
  Status Bool(std::string_view key, bool* out) const {
    return reader_.Bool(key, out);
  }

 private:
  const std::string& source_;
  const json::Value& obj_;
  std::string fix_;
  json::ObjectReader reader_;
};

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
      StatusOr<json::Value> v = json::Parse(t.json, t.name);
      const json::Value* type = v.ok() ? v->Find("model_type") : nullptr;
      if (type == nullptr || !type->is_string() ||
          std::find(std::begin(kSupportedTypes), std::end(kSupportedTypes),
                    type->as_string()) == std::end(kSupportedTypes)) {
        continue;
      }
      out.emplace_back(t.name);
    }
    return out;
  }();
  return kNames;
}

namespace {

bool IsZeroNumber(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v && v->is_number() && v->as_number() == 0;
}

// BERT's fields past the common sizes: GELU, the head (from
// "architectures"), position and token-type embedding tables.
Status ReadEncoder(const ConfigReader& r, const json::Value& obj,
                   const std::string& source, ModelConfig* c) {
  c->encoder = true;
  c->gated_mlp = false;
  c->qkv_bias = c->o_bias = true;
  c->hidden_act = "gelu";
  RT_RETURN_IF_ERROR(r.String("hidden_act", &c->hidden_act));
  if (c->hidden_act.rfind("gelu", 0) != 0) {
    return InvalidArgument(source + ": hidden_act \"" + c->hidden_act +
                           "\" is not supported for model_type \"bert\": "
                           "predict costs BERT's plain GELU MLP "
                           "(\"hidden_act\": \"gelu\")");
  }
  if (const json::Value* a = obj.Find("architectures"); a && a->is_array()) {
    for (const json::Value& name : a->as_array()) {
      if (!name.is_string()) continue;
      const std::string& n = name.as_string();
      if (n.find("MaskedLM") != std::string::npos ||
          n.find("PreTraining") != std::string::npos) {
        c->mlm_head = true;
      }
    }
  }
  c->max_position_embeddings = 512;
  c->type_vocab_size = 2;
  RT_RETURN_IF_ERROR(
      r.OptionalSize("max_position_embeddings", &c->max_position_embeddings));
  RT_RETURN_IF_ERROR(r.OptionalSize("type_vocab_size", &c->type_vocab_size));
  RT_RETURN_IF_ERROR(r.String("torch_dtype", &c->torch_dtype));
  return OkStatus();
}

StatusOr<ModelConfig> FromValue(const StatusOr<json::Value>& parsed,
                                const std::string& source) {
  if (!parsed.ok()) {
    return InvalidArgument(parsed.status().message() +
                           " (expected a Hugging Face config.json)");
  }
  if (!parsed->is_object()) {
    return InvalidArgument(source +
                           ": not a config.json (the top level must be a "
                           "JSON object with hidden_size, num_hidden_layers, "
                           "...)");
  }
  const ConfigReader r(source, *parsed);
  ModelConfig c;
  c.source = source;
  RT_RETURN_IF_ERROR(r.String("_name_or_path", &c.name));
  if (c.name.empty()) c.name = source;

  if (!r.Has("model_type")) {
    return InvalidArgument(
        source +
        ": missing \"model_type\" (which architecture this is): predict "
        "costs llama, mistral, mixtral, qwen2 and bert models; add "
        "\"model_type\": \"llama\" if the model has that layer structure");
  }
  RT_RETURN_IF_ERROR(r.String("model_type", &c.model_type));
  if (std::find(std::begin(kSupportedTypes), std::end(kSupportedTypes),
                c.model_type) == std::end(kSupportedTypes)) {
    return InvalidArgument(
        source + ": model_type \"" + c.model_type +
        "\" is not supported: predict knows llama, mistral, mixtral and "
        "qwen2 (decoders with RMSNorm, rotary attention and a gated SiLU "
        "MLP) and bert (encoders); for a model with one of those "
        "structures set \"model_type\" to it");
  }

  RT_RETURN_IF_ERROR(r.Size("hidden_size", "the model width", &c.hidden_size));
  RT_RETURN_IF_ERROR(
      r.Size("num_hidden_layers", "the number of layers", &c.num_layers));
  RT_RETURN_IF_ERROR(
      r.Size("num_attention_heads", "the number of query heads", &c.num_heads));
  RT_RETURN_IF_ERROR(
      r.Size("intermediate_size", "the MLP width", &c.intermediate_size));
  RT_RETURN_IF_ERROR(
      r.Size("vocab_size", "the vocabulary size", &c.vocab_size));

  c.num_kv_heads = c.num_heads;
  RT_RETURN_IF_ERROR(r.OptionalSize("num_key_value_heads", &c.num_kv_heads));
  if (c.num_heads % c.num_kv_heads != 0) {
    return InvalidArgument(
        source + ": num_attention_heads " + std::to_string(c.num_heads) +
        " is not a multiple of num_key_value_heads " +
        std::to_string(c.num_kv_heads) +
        ": every KV head must serve the same number of query heads");
  }
  if (r.Has("head_dim")) {
    RT_RETURN_IF_ERROR(r.OptionalSize("head_dim", &c.head_dim));
  } else if (c.hidden_size % c.num_heads != 0) {
    return InvalidArgument(source + ": missing \"head_dim\" and hidden_size " +
                           std::to_string(c.hidden_size) +
                           " is not a multiple of num_attention_heads " +
                           std::to_string(c.num_heads) + ": add \"head_dim\"");
  } else {
    c.head_dim = c.hidden_size / c.num_heads;
  }
  if (c.model_type == "bert") {
    RT_RETURN_IF_ERROR(ReadEncoder(r, *parsed, source, &c));
    return c;
  }

  c.hidden_act = "silu";
  RT_RETURN_IF_ERROR(r.String("hidden_act", &c.hidden_act));
  if (c.hidden_act != "silu" && c.hidden_act != "swish") {
    return InvalidArgument(source + ": hidden_act \"" + c.hidden_act +
                           "\" is not supported for model_type \"" +
                           c.model_type +
                           "\": these models use a gated SiLU MLP "
                           "(\"hidden_act\": \"silu\")");
  }
  c.gated_mlp = true;
  RT_RETURN_IF_ERROR(r.Bool("tie_word_embeddings", &c.tie_word_embeddings));
  bool attention_bias = false;
  RT_RETURN_IF_ERROR(r.Bool("attention_bias", &attention_bias));
  c.qkv_bias = c.model_type == "qwen2" || attention_bias;
  c.o_bias = attention_bias;

  // Mixture of experts: Mixtral names it num_local_experts, Qwen2-MoE and
  // others num_experts.
  const char* experts_key =
      r.Has("num_local_experts") ? "num_local_experts" : "num_experts";
  // 0 or 1 expert is a dense MLP.
  if (r.Has(experts_key) && IsZeroNumber(*parsed, experts_key)) {
    c.num_experts = 0;
  } else {
    RT_RETURN_IF_ERROR(r.OptionalSize(experts_key, &c.num_experts));
  }
  if (c.num_experts == 1) c.num_experts = 0;
  if (c.num_experts > 0) {
    RT_RETURN_IF_ERROR(r.Size("num_experts_per_tok",
                              "how many experts each token is routed to",
                              &c.experts_per_token));
    if (c.experts_per_token > c.num_experts) {
      return InvalidArgument(source + ": num_experts_per_tok " +
                             std::to_string(c.experts_per_token) + " exceeds " +
                             experts_key + " " + std::to_string(c.num_experts));
    }
  }

  // Qwen2 writes a sliding_window it does not use unless use_sliding_window.
  bool use_window = true;
  RT_RETURN_IF_ERROR(r.Bool("use_sliding_window", &use_window));
  if (use_window) {
    RT_RETURN_IF_ERROR(r.OptionalSize("sliding_window", &c.sliding_window));
  }
  RT_RETURN_IF_ERROR(
      r.OptionalSize("max_position_embeddings", &c.max_position_embeddings));
  RT_RETURN_IF_ERROR(r.String("torch_dtype", &c.torch_dtype));
  return c;
}

}  // namespace

StatusOr<ModelConfig> ParseModelConfig(std::string_view json_text,
                                       const std::string& source) {
  return FromValue(json::Parse(json_text, source), source);
}

StatusOr<ModelConfig> LoadModelConfig(const std::string& name_or_path) {
  RT_ASSIGN_OR_RETURN(const ModelConfigRef ref,
                      FindModelConfig(name_or_path, BuiltinList()));
  if (ref.builtin == nullptr) {
    return FromValue(json::ParseFile(ref.path, kMaxModelConfigBytes,
                                     "--model", "a model's config.json"),
                     ref.path);
  }
  const BuiltinConfigText& t = *ref.builtin;
  StatusOr<ModelConfig> c =
      ParseModelConfig(t.json, "built-in " + std::string(t.name));
  if (!c.ok()) return c.status();
  c->name = std::string(t.name);
  c->source = "built-in";
  return c;
}

}  // namespace rooftrace::analyzer
