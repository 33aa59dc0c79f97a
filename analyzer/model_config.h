// The architecture of a language model as `rooftrace predict` needs it,
// read from a Hugging Face config.json or from one of the configs built
// into the binary (model/configs/*.json): decoders (Llama, Mistral,
// Mixtral, Qwen2: grouped-query attention through num_key_value_heads,
// mixture of experts through num_local_experts / num_experts_per_tok, an
// explicit head_dim, tied embeddings, a sliding attention window) and BERT
// encoders (LayerNorm, bidirectional attention, a plain GELU MLP, one
// forward pass and no decode).
//
// Plain data and pure functions; thread-safe.
//
// The trap: a config that parses is not yet a model we can cost. Every
// size must be present and positive, the heads must divide into KV groups,
// and the model type must be one whose layer structure predict knows
// (RMSNorm, rotary attention, gated SiLU MLP; or BERT's encoder). The
// reader refuses anything else with the field name and the fix, rather
// than guess.
#ifndef ROOFTRACE_ANALYZER_MODEL_CONFIG_H_
#define ROOFTRACE_ANALYZER_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rooftrace::analyzer {

struct ModelConfig {
  std::string name;        // "Llama-2-7B", or the file's _name_or_path / path
  std::string source;      // "built-in" or the file path
  std::string model_type;  // "llama", "mistral", "mixtral", "qwen2", "bert"
  std::string hidden_act;  // "silu" (gated) or "gelu" (plain, seed 000)
  bool gated_mlp = true;   // act(x W_gate) * (x W_up), then W_down
  // An encoder (model_type "bert"): every token attends to every token,
  // LayerNorms with biases, biases on every projection, one forward pass.
  bool encoder = false;
  // An encoder's head, from "architectures": a masked-LM head over every
  // token (BertForMaskedLM, BertForPreTraining: dense + GELU + LayerNorm,
  // then the tied vocabulary projection), else BertModel's pooler (one
  // dense layer on each sequence's first token).
  bool mlm_head = false;
  int64_t type_vocab_size = 0;  // encoders: token-type embeddings

  int64_t hidden_size = 0;        // H
  int64_t intermediate_size = 0;  // I (per expert for a mixture of experts)
  int64_t num_layers = 0;
  int64_t num_heads = 0;     // query heads
  int64_t num_kv_heads = 0;  // = num_heads without GQA
  int64_t head_dim = 0;      // hidden_size / num_heads unless given
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  // Projection biases: Qwen2 has them on q, k and v; Llama's
  // "attention_bias" puts them on q, k, v and o. Counted in the parameters;
  // too small (one row per matrix) to change an op's bytes.
  bool qkv_bias = false;
  bool o_bias = false;
  int64_t num_experts = 0;              // 0: a dense MLP
  int64_t experts_per_token = 0;        // top-k routing
  int64_t sliding_window = 0;           // 0: every earlier token is attended to
  int64_t max_position_embeddings = 0;  // 0: not given
  std::string torch_dtype;              // as written; informative only

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
