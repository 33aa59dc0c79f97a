// The one reader of a model's Hugging Face config.json (or of a config
// built into the binary, model/configs/*.json). `analyze --model` and
// `import --model` take what the trace's operator arguments do not say
// from it (model/model_facts.h: experts per token, an expert's width, each
// layer's attention window); `predict` costs a whole model from it and
// checks more (analyzer/model_config.h). Both read through this file, so a
// field means the same in both.
//
// Plain data and pure functions; thread-safe.
//
// What is read, and the traps:
// - Field names differ between families (Mixtral's num_local_experts,
//   Qwen's num_experts, DeepSeek's n_routed_experts; DeepSeek's and
//   Qwen-MoE's per-expert width is moe_intermediate_size, the plain
//   intermediate_size being their dense layers'). A size the config does
//   not give stays 0; a size that is there must be a whole number > 0
//   (null counts as absent, as configs write "sliding_window": null).
// - Sliding-window attention, per layer, as each family's config defines
//   it (AttentionWindow): an explicit "layer_types" list
//   ("sliding_attention" is windowed; "full_attention" and any other kind,
//   such as "linear_attention", is not: gpt-oss, newer Gemma, Qwen);
//   else "sliding_window_pattern" p (Gemma 3, Cohere 2: layer i is
//   windowed unless (i + 1) is a multiple of p); else gpt-oss's and
//   Gemma 2's built-in alternation (even layers windowed); else Qwen2's
//   "use_sliding_window" with "max_window_layers" m (layers from m on are
//   windowed; use_sliding_window false: none); else a plain
//   "sliding_window" windows every layer (Mistral). A window w lets a
//   query see itself and the w - 1 tokens before it.
#ifndef ROOFTRACE_MODEL_MODEL_CONFIG_H_
#define ROOFTRACE_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rooftrace {

struct ModelConfig {
  std::string name;    // "gpt-oss-20b", or the file's _name_or_path / path
  std::string source;  // "built-in" or the file path
  std::string model_type;  // as written; "" when absent
  std::string hidden_act;  // as written; "" when absent
  std::string torch_dtype;  // as written; informative only
  std::vector<std::string> architectures;

  int64_t hidden_size = 0;        // hidden_size, else d_model
  int64_t intermediate_size = 0;  // the plain intermediate_size
  int64_t expert_intermediate_size = 0;  // moe_intermediate_size, else
                                         // intermediate_size
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // = num_heads when not given
  int64_t head_dim = 0;      // hidden_size / num_heads when not given
                             // and it divides; else 0
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  int64_t type_vocab_size = 0;
  int64_t num_experts = 0;        // routed experts; 0 (or 1): dense
  int64_t experts_per_token = 0;  // top-k
  bool gated_mlp = true;  // gate and up projections (all but BERT)
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  // Bits per expert weight: 4 for MXFP4/NVFP4 ("quantization_config":
  // {"quant_method": "mxfp4"}), 8 for fp8 methods; 0: the activations'.
  int expert_weight_bits = 0;

  // The window of the windowed layers (0: no layer is windowed), and which
  // layers are: empty when every layer is alike (all windowed when
  // sliding_window > 0), else one entry per layer.
  int64_t sliding_window = 0;
  std::vector<bool> windowed_layers;

  bool moe() const { return num_experts > 0 && experts_per_token > 0; }
  // The attention window of layer `layer` (0-based; taken modulo the
  // layer count): 0 when it attends to every earlier token.
  int64_t AttentionWindow(int64_t layer) const;
  // Whether some layers are windowed and others not (gpt-oss, Gemma).
  bool MixedAttention() const;
  // How many of the num_layers layers are windowed.
  int64_t WindowedLayerCount() const;
};

// Parses the text of a config.json; `source` names it in errors. Checks
// types and ranges of what is present; which fields are required is the
// caller's (model_facts.h, analyzer/model_config.h).
StatusOr<ModelConfig> ParseModelConfig(std::string_view json_text,
                                       const std::string& source);

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

// --model ARG read through FindModelConfig: a built-in config gets its file
// name as `name` and "built-in" as `source`. A file's parse error keeps
// ParseFile's message (the file, the offset).
StatusOr<ModelConfig> LoadModelConfig(const std::string& name_or_path,
                                      const std::string& builtin_names);

// Every built-in config's name, ", "-joined (file order).
std::string BuiltinConfigNames();

// The most a config.json file given to --model may hold (a real one is a
// few kilobytes): read with json::ParseFile's bound, a FIFO too.
inline constexpr uint64_t kMaxModelConfigBytes = uint64_t{4} << 20;

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_MODEL_CONFIG_H_
