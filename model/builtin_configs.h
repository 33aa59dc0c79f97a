// The model configs built into the binary (model/configs/*.json, turned
// into a source file at build time by configs/embed_configs.cmake), so that
// `rooftrace predict --model Llama-2-7B` works from any directory.
//
// Immutable static data; thread-safe.
#ifndef ROOFTRACE_MODEL_BUILTIN_CONFIGS_H_
#define ROOFTRACE_MODEL_BUILTIN_CONFIGS_H_

#include <string_view>
#include <vector>

namespace rooftrace {

struct BuiltinConfigText {
  std::string_view name;  // the file name without .json: "Llama-2-7B"
  std::string_view json;  // the file's text, a Hugging Face config.json
};

// In file-name order.
const std::vector<BuiltinConfigText>& BuiltinConfigTexts();

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_BUILTIN_CONFIGS_H_
