#include "model/model_facts.h"

#include <utility>

namespace rooftrace {
namespace {

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

StatusOr<ModelFacts> Checked(StatusOr<ModelConfig> c) {
  if (!c.ok()) return c.status();
  if (c->hidden_size == 0) {
    return InvalidArgument(c->source +
                           ": missing \"hidden_size\"; pass the model's "
                           "Hugging Face config.json");
  }
  RT_RETURN_IF_ERROR(CheckRelations(*c, c->source));
  return c;
}

}  // namespace

StatusOr<ModelFacts> ParseModelFacts(std::string_view json_text,
                                     const std::string& source) {
  return Checked(ParseModelConfig(json_text, source));
}

StatusOr<ModelFacts> LoadModelFacts(const std::string& name_or_path) {
  return Checked(LoadModelConfig(name_or_path, BuiltinConfigNames()));
}

}  // namespace rooftrace
