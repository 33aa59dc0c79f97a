#include "model/model_facts.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <utility>

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

// The first of `keys` present in `obj` as a whole number: 0 when none is,
// an error when one is there but is not a whole number > 0 (a null counts
// as absent, as configs write "sliding_window": null).
Status FirstSize(const json::Value& obj, const std::string& source,
                 std::initializer_list<std::string_view> keys, int64_t* out) {
  *out = 0;
  for (std::string_view key : keys) {
    const json::Value* v = obj.Find(key);
    if (v == nullptr || v->is_null()) continue;
    const double d = v->is_number() ? v->as_number() : -1;
    if (!(d >= 1) || d != std::floor(d) || d > 9.0e15) {
      return InvalidArgument(source + ": \"" + std::string(key) +
                             "\" must be a whole number > 0; fix the "
                             "config.json");
    }
    *out = static_cast<int64_t>(d);
    return OkStatus();
  }
  return OkStatus();
}

// What no model's config holds: a dimension past 2^20 (the widest today
// are about 50,000), more experts or heads than that, more experts per
// token than experts, more key-value heads than heads. A config that does
// would give impossible figures (a top-k of 1,000 of 32 experts made 8.86
// PFLOP/s "achieved"; sizes of 9e15, 2.4e19 bytes).
Status CheckRelations(const ModelFacts& f, const std::string& source) {
  constexpr int64_t kMaxDimension = int64_t{1} << 20;
  const std::pair<const char*, int64_t> sizes[] = {
      {"hidden_size", f.hidden_size},
      {"intermediate_size", f.expert_intermediate_size},
      {"num_experts", f.num_experts},
      {"num_experts_per_tok", f.experts_per_token},
      {"num_attention_heads", f.num_heads},
      {"num_key_value_heads", f.num_kv_heads},
      {"head_dim", f.head_dim}};
  for (const auto& [name, value] : sizes) {
    if (value > kMaxDimension) {
      return InvalidArgument(source + ": \"" + name + "\" is " +
                             std::to_string(value) + ", more than any model "
                             "has (at most " + std::to_string(kMaxDimension) +
                             "); fix the config.json");
    }
  }
  if (f.num_experts > 0 && f.experts_per_token > f.num_experts) {
    return InvalidArgument(
        source + ": \"num_experts_per_tok\" is " +
        std::to_string(f.experts_per_token) + ", more than its " +
        std::to_string(f.num_experts) +
        " experts: a token cannot be routed to more experts than there "
        "are; fix the config.json");
  }
  if (f.num_heads > 0 && f.num_kv_heads > f.num_heads) {
    return InvalidArgument(source + ": \"num_key_value_heads\" (" +
                           std::to_string(f.num_kv_heads) +
                           ") is more than \"num_attention_heads\" (" +
                           std::to_string(f.num_heads) +
                           "); fix the config.json");
  }
  return OkStatus();
}

StatusOr<ModelFacts> FromValue(StatusOr<json::Value> parsed,
                               const std::string& source) {
  if (!parsed.ok()) return parsed.status();
  const json::Value& obj = *parsed;
  if (!obj.is_object()) {
    return InvalidArgument(source +
                           ": not a config.json (the top level is not an "
                           "object); pass a Hugging Face config.json");
  }
  ModelFacts f;
  f.source = source;
  if (const json::Value* n = obj.Find("_name_or_path"); n && n->is_string()) {
    f.name = n->as_string();
  }
  if (f.name.empty()) f.name = source;
  if (const json::Value* t = obj.Find("model_type"); t && t->is_string()) {
    f.model_type = t->as_string();
  }
  RT_RETURN_IF_ERROR(FirstSize(obj, source, {"hidden_size", "d_model"},
                               &f.hidden_size));
  RT_RETURN_IF_ERROR(FirstSize(
      obj, source, {"num_local_experts", "num_experts", "n_routed_experts"},
      &f.num_experts));
  RT_RETURN_IF_ERROR(FirstSize(
      obj, source, {"num_experts_per_tok", "experts_per_token", "moe_topk"},
      &f.experts_per_token));
  // An expert's width: the MoE-specific field first (the plain one is
  // then the dense layers').
  RT_RETURN_IF_ERROR(FirstSize(
      obj, source, {"moe_intermediate_size", "intermediate_size"},
      &f.expert_intermediate_size));
  RT_RETURN_IF_ERROR(FirstSize(obj, source, {"num_attention_heads"},
                               &f.num_heads));
  RT_RETURN_IF_ERROR(FirstSize(obj, source, {"num_key_value_heads"},
                               &f.num_kv_heads));
  if (f.num_kv_heads == 0) f.num_kv_heads = f.num_heads;
  RT_RETURN_IF_ERROR(FirstSize(obj, source, {"head_dim"}, &f.head_dim));
  if (f.head_dim == 0 && f.num_heads > 0 && f.hidden_size > 0 &&
      f.hidden_size % f.num_heads == 0) {
    f.head_dim = f.hidden_size / f.num_heads;
  }
  f.gated_mlp = f.model_type != "bert";  // BERT's MLP is a plain GELU one
  if (const json::Value* q = obj.Find("quantization_config");
      q && q->is_object()) {
    const json::Value* m = q->Find("quant_method");
    const std::string method = m && m->is_string() ? Lower(m->as_string()) : "";
    if (method == "mxfp4" || method == "nvfp4") {
      f.expert_weight_bits = 4;
    } else if (method.find("fp8") != std::string::npos) {
      f.expert_weight_bits = 8;
    }
  }
  if (f.hidden_size == 0) {
    return InvalidArgument(source +
                           ": missing \"hidden_size\"; pass the model's "
                           "Hugging Face config.json");
  }
  RT_RETURN_IF_ERROR(CheckRelations(f, source));
  return f;
}

std::string BuiltinList() {
  std::string out;
  for (const BuiltinConfigText& t : BuiltinConfigTexts()) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

}  // namespace

StatusOr<ModelFacts> ParseModelFacts(std::string_view json_text,
                                     const std::string& source) {
  return FromValue(json::Parse(json_text, source), source);
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

StatusOr<ModelFacts> LoadModelFacts(const std::string& name_or_path) {
  RT_ASSIGN_OR_RETURN(const ModelConfigRef ref,
                      FindModelConfig(name_or_path, BuiltinList()));
  if (ref.builtin == nullptr) {
    return FromValue(json::ParseFile(ref.path, kMaxModelConfigBytes,
                                     "--model", "a model's config.json"),
                     ref.path);
  }
  const BuiltinConfigText& t = *ref.builtin;
  StatusOr<ModelFacts> f =
      ParseModelFacts(t.json, "built-in " + std::string(t.name));
  if (!f.ok()) return f.status();
  f->name = std::string(t.name);
  f->source = "built-in";
  return f;
}

}  // namespace rooftrace
