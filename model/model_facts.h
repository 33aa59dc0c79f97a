// The sizes of a language model that a trace's operator arguments do not
// say, for `analyze --model` and `import --model`: how many experts each
// token is routed to and how wide each expert is (an MoE operator's inputs
// give only the tokens, the hidden size and the router's expert count),
// and which layers attend through a sliding window (a serving attention
// call's KV read is capped at its layer's window). Read leniently, any
// model_type, through the one config.json reader (model/model_config.h);
// `predict`, which costs a whole model, checks the same reading more
// strictly (analyzer/model_config.h).
//
// Plain data and pure functions; thread-safe.
//
// The trap: a size the config does not give stays 0 and whatever needs it
// stays blank; only hidden_size is required.
#ifndef ROOFTRACE_MODEL_MODEL_FACTS_H_
#define ROOFTRACE_MODEL_MODEL_FACTS_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "model/model_config.h"

namespace rooftrace {

// The facts are the config as read (model_config.h), checked for sizes no
// model has.
using ModelFacts = ModelConfig;

// Parses the text of a config.json; `source` names it in errors.
StatusOr<ModelFacts> ParseModelFacts(std::string_view json_text,
                                     const std::string& source);

// --model ARG: a built-in config's name (case-insensitive; model/configs)
// or a config.json path. Errors name ARG, the fix and the built-ins.
StatusOr<ModelFacts> LoadModelFacts(const std::string& name_or_path);

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_MODEL_FACTS_H_
