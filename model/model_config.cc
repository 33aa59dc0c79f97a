#include "model/model_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "base/json.h"
#include "model/builtin_configs.h"

namespace rooftrace {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string Found(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

// Reads the members of one config object; every error names the source,
// the member and the fix.
class Reader {
 public:
  Reader(const std::string& source, const json::Value& obj)
      : source_(source), obj_(obj) {}

  const json::Value* Get(std::string_view key) const {
    const json::Value* v = obj_.Find(key);
    return v == nullptr || v->is_null() ? nullptr : v;
  }

  // The first of `keys` present, as a whole number > 0 (0 when none is).
  // `zero_is_absent`: a 0 there means "none" (num_experts: 0 is dense).
  Status Size(std::initializer_list<std::string_view> keys, int64_t* out,
              bool zero_is_absent = false) const {
    *out = 0;
    for (std::string_view key : keys) {
      const json::Value* v = Get(key);
      if (v == nullptr) continue;
      if (!v->is_number()) {
        return Error(key, "must be a whole number > 0 (found a " +
                              std::string(v->is_string() ? "string" : "value") +
                              ")");
      }
      const double d = v->as_number();
      if (zero_is_absent && d == 0) return OkStatus();
      if (!(d >= 1) || d != std::floor(d) || d > 9.0e15) {
        return Error(key, "must be a whole number > 0 (found " + Found(d) + ")");
      }
      *out = static_cast<int64_t>(d);
      return OkStatus();
    }
    return OkStatus();
  }

  Status String(std::string_view key, std::string* out) const {
    const json::Value* v = Get(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_string()) return Error(key, "must be a string");
    *out = v->as_string();
    return OkStatus();
  }

  // `*present` (optional) says whether the key was there.
  Status Bool(std::string_view key, bool* out, bool* present = nullptr) const {
    const json::Value* v = Get(key);
    if (present) *present = v != nullptr;
    if (v == nullptr) return OkStatus();
    if (!v->is_bool()) return Error(key, "must be true or false");
    *out = v->as_bool();
    return OkStatus();
  }

  Status Error(std::string_view key, const std::string& what) const {
    return InvalidArgument(source_ + ": \"" + std::string(key) + "\" " + what +
                           "; fix the config.json");
  }

 private:
  const std::string& source_;
  const json::Value& obj_;
};

// Which layers are windowed, by the family rules of the header.
Status ReadWindows(const Reader& r, ModelConfig* c) {
  int64_t window = 0;
  RT_RETURN_IF_ERROR(r.Size({"sliding_window"}, &window));
  bool use_window = true, use_given = false;
  RT_RETURN_IF_ERROR(r.Bool("use_sliding_window", &use_window, &use_given));
  int64_t pattern = 0, max_window_layers = 0;
  RT_RETURN_IF_ERROR(r.Size({"sliding_window_pattern"}, &pattern));
  RT_RETURN_IF_ERROR(r.Size({"max_window_layers"}, &max_window_layers));
  const int64_t layers = c->num_layers;

  if (const json::Value* types = r.Get("layer_types")) {
    if (!types->is_array()) {
      return r.Error("layer_types", "must be a list of \"sliding_attention\" "
                                    "and \"full_attention\"");
    }
    const auto& list = types->as_array();
    if (layers > 0 && static_cast<int64_t>(list.size()) != layers) {
      return r.Error("layer_types",
                     "has " + std::to_string(list.size()) +
                         " entries for " + std::to_string(layers) +
                         " layers (num_hidden_layers)");
    }
    // Other kinds (Qwen3-Next's "linear_attention", Llama 4's chunked
    // layers) have no sliding window: not windowed here, their own ops
    // are costed by what their calls say.
    std::vector<bool> windowed;
    for (const json::Value& t : list) {
      if (!t.is_string()) {
        return r.Error("layer_types", "must be a list of strings such as "
                                      "\"sliding_attention\"");
      }
      windowed.push_back(t.as_string() == "sliding_attention");
    }
    const bool any = std::find(windowed.begin(), windowed.end(), true) !=
                     windowed.end();
    if (any && window == 0) {
      return r.Error("sliding_window",
                     "is missing, and \"layer_types\" names sliding layers: "
                     "give the window");
    }
    if (!any) return OkStatus();
    c->sliding_window = window;
    c->windowed_layers = std::move(windowed);
    return OkStatus();
  }
  if (window == 0 || (use_given && !use_window)) return OkStatus();
  c->sliding_window = window;
  // The families' alternations, as their configs define a layer's kind.
  if (pattern == 0 &&
      (c->model_type == "gpt_oss" || c->model_type == "gemma2")) {
    pattern = 2;
  }
  if (pattern > 1 && layers > 0) {
    c->windowed_layers.resize(layers);
    for (int64_t i = 0; i < layers; ++i) {
      c->windowed_layers[i] = (i + 1) % pattern != 0;
    }
  } else if (use_given && max_window_layers > 0 && layers > 0) {
    c->windowed_layers.resize(layers);
    for (int64_t i = 0; i < layers; ++i) {
      c->windowed_layers[i] = i >= max_window_layers;
    }
  }
  if (!c->windowed_layers.empty() &&
      std::find(c->windowed_layers.begin(), c->windowed_layers.end(), true) ==
          c->windowed_layers.end()) {
    c->sliding_window = 0;  // max_window_layers covers every layer
    c->windowed_layers.clear();
  }
  return OkStatus();
}

StatusOr<ModelConfig> FromValue(StatusOr<json::Value> parsed,
                                const std::string& source) {
  if (!parsed.ok()) {
    return InvalidArgument(parsed.status().message() +
                           " (expected a Hugging Face config.json)");
  }
  const json::Value& obj = *parsed;
  if (!obj.is_object()) {
    return InvalidArgument(source +
                           ": not a config.json (the top level must be a "
                           "JSON object with hidden_size, num_hidden_layers, "
                           "...); pass a Hugging Face config.json");
  }
  const Reader r(source, obj);
  ModelConfig c;
  c.source = source;
  RT_RETURN_IF_ERROR(r.String("_name_or_path", &c.name));
  if (c.name.empty()) c.name = source;
  RT_RETURN_IF_ERROR(r.String("model_type", &c.model_type));
  RT_RETURN_IF_ERROR(r.String("hidden_act", &c.hidden_act));
  RT_RETURN_IF_ERROR(r.String("torch_dtype", &c.torch_dtype));
  if (const json::Value* a = r.Get("architectures"); a && a->is_array()) {
    for (const json::Value& n : a->as_array()) {
      if (n.is_string()) c.architectures.push_back(n.as_string());
    }
  }
  RT_RETURN_IF_ERROR(r.Size({"hidden_size", "d_model"}, &c.hidden_size));
  RT_RETURN_IF_ERROR(r.Size({"intermediate_size"}, &c.intermediate_size));
  // An expert's width: the MoE-specific field first (the plain one is
  // then the dense layers').
  RT_RETURN_IF_ERROR(r.Size({"moe_intermediate_size", "intermediate_size"},
                            &c.expert_intermediate_size));
  RT_RETURN_IF_ERROR(r.Size({"num_hidden_layers"}, &c.num_layers));
  RT_RETURN_IF_ERROR(r.Size({"num_attention_heads"}, &c.num_heads));
  RT_RETURN_IF_ERROR(r.Size({"num_key_value_heads"}, &c.num_kv_heads));
  if (c.num_kv_heads == 0) c.num_kv_heads = c.num_heads;
  RT_RETURN_IF_ERROR(r.Size({"head_dim"}, &c.head_dim));
  if (c.head_dim == 0 && c.num_heads > 0 && c.hidden_size > 0 &&
      c.hidden_size % c.num_heads == 0) {
    c.head_dim = c.hidden_size / c.num_heads;
  }
  RT_RETURN_IF_ERROR(r.Size({"vocab_size"}, &c.vocab_size));
  RT_RETURN_IF_ERROR(
      r.Size({"max_position_embeddings"}, &c.max_position_embeddings));
  RT_RETURN_IF_ERROR(r.Size({"type_vocab_size"}, &c.type_vocab_size));
  RT_RETURN_IF_ERROR(
      r.Size({"num_local_experts", "num_experts", "n_routed_experts"},
             &c.num_experts, /*zero_is_absent=*/true));
  if (c.num_experts == 1) c.num_experts = 0;  // one expert is a dense MLP
  RT_RETURN_IF_ERROR(
      r.Size({"num_experts_per_tok", "experts_per_token", "moe_topk"},
             &c.experts_per_token));
  RT_RETURN_IF_ERROR(r.Bool("tie_word_embeddings", &c.tie_word_embeddings));
  RT_RETURN_IF_ERROR(r.Bool("attention_bias", &c.attention_bias));
  c.gated_mlp = c.model_type != "bert";  // BERT's MLP is a plain GELU one
  if (const json::Value* q = r.Get("quantization_config"); q && q->is_object()) {
    const json::Value* m = q->Find("quant_method");
    const std::string method = m && m->is_string() ? Lower(m->as_string()) : "";
    if (method == "mxfp4" || method == "nvfp4") {
      c.expert_weight_bits = 4;
    } else if (method.find("fp8") != std::string::npos) {
      c.expert_weight_bits = 8;
    }
  }
  RT_RETURN_IF_ERROR(ReadWindows(r, &c));
  return c;
}

}  // namespace

int64_t ModelConfig::AttentionWindow(int64_t layer) const {
  if (sliding_window <= 0) return 0;
  if (windowed_layers.empty()) return sliding_window;
  const int64_t n = static_cast<int64_t>(windowed_layers.size());
  const int64_t i = ((layer % n) + n) % n;
  return windowed_layers[i] ? sliding_window : 0;
}

bool ModelConfig::MixedAttention() const {
  return sliding_window > 0 && !windowed_layers.empty() &&
         std::find(windowed_layers.begin(), windowed_layers.end(), false) !=
             windowed_layers.end();
}

int64_t ModelConfig::WindowedLayerCount() const {
  if (sliding_window <= 0) return 0;
  if (windowed_layers.empty()) return num_layers;
  return std::count(windowed_layers.begin(), windowed_layers.end(), true);
}

StatusOr<ModelConfig> ParseModelConfig(std::string_view json_text,
                                       const std::string& source) {
  return FromValue(json::Parse(json_text, source), source);
}

std::string BuiltinConfigNames() {
  std::string out;
  for (const BuiltinConfigText& t : BuiltinConfigTexts()) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

StatusOr<ModelConfigRef> FindModelConfig(const std::string& name_or_path,
                                         const std::string& builtin_names) {
  const std::string wanted = Lower(name_or_path);
  ModelConfigRef ref;
  for (const BuiltinConfigText& t : BuiltinConfigTexts()) {
    if (Lower(t.name) == wanted) {
      ref.builtin = &t;
      return ref;
    }
  }
  // Whatever exists is read as a file (a FIFO too); a device or a folder
  // is refused by the bounded read, by name.
  struct stat st;
  if (stat(name_or_path.c_str(), &st) != 0) {
    return NotFound("--model " + name_or_path +
                    ": no such file and not a built-in config; pass a "
                    "Hugging Face config.json or one of: " +
                    builtin_names);
  }
  ref.path = name_or_path;
  return ref;
}

StatusOr<ModelConfig> LoadModelConfig(const std::string& name_or_path,
                                      const std::string& builtin_names) {
  RT_ASSIGN_OR_RETURN(const ModelConfigRef ref,
                      FindModelConfig(name_or_path, builtin_names));
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

}  // namespace rooftrace
