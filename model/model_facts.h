// The sizes of a language model that a trace's operator arguments do not
// say, read leniently from a Hugging Face config.json (any model_type):
// how many experts each token is routed to and how wide each expert is,
// for a mixture-of-experts operator whose inputs give only the tokens,
// the hidden size and the router's expert count. `analyze --model` and
// `import --model` hand these to the trace readers; `predict`, which
// costs a whole model, reads the same files more strictly
// (analyzer/model_config.h).
//
// Plain data and pure functions; thread-safe.
//
// The trap: field names differ between families (Mixtral's
// num_local_experts, Qwen's num_experts, DeepSeek's n_routed_experts;
// DeepSeek's and Qwen-MoE's per-expert width is moe_intermediate_size,
// not intermediate_size, which is their dense layers'). A size the
// config does not give stays 0 and whatever needs it stays blank.
#ifndef ROOFTRACE_MODEL_MODEL_FACTS_H_
#define ROOFTRACE_MODEL_MODEL_FACTS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rooftrace {

struct ModelFacts {
  std::string name;    // "gpt-oss-20b", or the file's _name_or_path / path
  std::string source;  // "built-in" or the file path
  std::string model_type;
  int64_t hidden_size = 0;
  int64_t expert_intermediate_size = 0;  // one expert's MLP width
  int64_t num_experts = 0;               // routed experts; 0: dense
  int64_t experts_per_token = 0;         // top-k
  int64_t num_heads = 0, num_kv_heads = 0, head_dim = 0;
  bool gated_mlp = true;  // gate and up projections (SiLU/SwiGLU MLPs)
  // Bits per expert weight: 4 for MXFP4 ("quantization_config":
  // {"quant_method": "mxfp4"}), 8 for fp8 methods; 0: the activations'.
  int expert_weight_bits = 0;

  bool moe() const { return num_experts > 0 && experts_per_token > 0; }
};

// Parses the text of a config.json; `source` names it in errors.
StatusOr<ModelFacts> ParseModelFacts(std::string_view json_text,
                                     const std::string& source);

// --model ARG: a built-in config's name (case-insensitive; model/configs)
// or a config.json path. Errors name ARG, the fix and the built-ins.
StatusOr<ModelFacts> LoadModelFacts(const std::string& name_or_path);

// Where --model ARG points: the built-in config of that name (case-
// insensitive), else `path`, an existing regular file. NotFound names ARG
// and the fix, offering `builtin_names` (", "-joined): predict offers the
// configs it can cost, analyze and import all of them.
struct BuiltinConfigText;
struct ModelConfigRef {
  const BuiltinConfigText* builtin = nullptr;
  std::string path;
};
StatusOr<ModelConfigRef> FindModelConfig(const std::string& name_or_path,
                                         const std::string& builtin_names);
// The most a config.json file given to --model may hold (a real one is a
// few kilobytes): read with json::ParseFile's bound, a FIFO too.
inline constexpr uint64_t kMaxModelConfigBytes = uint64_t{4} << 20;

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_MODEL_FACTS_H_
