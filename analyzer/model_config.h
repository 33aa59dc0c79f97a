// The architecture of a language model as `rooftrace predict` needs it:
// the config.json as the one reader (model/model_config.h) read it, checked
// for what predict costs. Decoders (Llama, Mistral, Mixtral, Qwen2:
// grouped-query attention through num_key_value_heads, mixture of experts
// through num_local_experts / num_experts_per_tok, an explicit head_dim,
// tied embeddings, sliding-window layers as the base reader places them)
// and BERT encoders (LayerNorm, bidirectional attention, a plain GELU MLP,
// one forward pass and no decode).
//
// Plain data and pure functions; thread-safe.
//
// The trap: a config that parses is not yet a model we can cost. Every
// size must be present and positive, the heads must divide into KV groups,
// and the model type must be one whose layer structure predict knows
// (RMSNorm, rotary attention, gated SiLU MLP; or BERT's encoder). The
// checker refuses anything else with the field name and the fix, rather
// than guess.
#ifndef ROOFTRACE_ANALYZER_MODEL_CONFIG_H_
#define ROOFTRACE_ANALYZER_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/model_config.h"

namespace rooftrace::analyzer {

// The base reading plus what predict derives from it. intermediate_size is
// per expert for a mixture of experts (Mixtral's); hidden_act is "silu"
// (gated) or "gelu" (plain) once checked.
struct ModelConfig : rooftrace::ModelConfig {
  // An encoder (model_type "bert"): every token attends to every token,
  // LayerNorms with biases, biases on every projection, one forward pass.
  bool encoder = false;
  // An encoder's head, from "architectures": a masked-LM head over every
  // token (BertForMaskedLM, BertForPreTraining: dense + GELU + LayerNorm,
  // then the tied vocabulary projection), else BertModel's pooler (one
  // dense layer on each sequence's first token).
  bool mlm_head = false;
  // Projection biases: Qwen2 has them on q, k and v; Llama's
  // "attention_bias" puts them on q, k, v and o. Counted in the parameters;
  // too small (one row per matrix) to change an op's bytes.
  bool qkv_bias = false;
  bool o_bias = false;

  bool moe() const { return num_experts > 0; }
  // Weights of the whole model (not sharded), counting a tied embedding
  // once: embedding, per layer attention + MLP (+ router) + two norms,
  // final norm, lm head.
  int64_t ParameterCount() const;
};

// Names of the built-in configs, in file order ("Llama-2-13B", ...).
std::vector<std::string> BuiltinModelNames();

// Parses the text of a config.json. `source` names it in errors:
// "cfg.json: missing \"intermediate_size\" (the MLP width); ...".
StatusOr<ModelConfig> ParseModelConfig(std::string_view json_text,
                                       const std::string& source);

// --model ARG: a built-in name (case-insensitive) or a config.json path.
// Errors name ARG and list the built-in names.
StatusOr<ModelConfig> LoadModelConfig(const std::string& name_or_path);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_MODEL_CONFIG_H_
