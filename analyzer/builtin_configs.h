// The model configs built into the binary (analyzer/configs/*.json, turned
// into a source file at build time by configs/embed_configs.cmake), so that
// `rooftrace predict --model Llama-2-7B` works from any directory.
//
// Immutable static data; thread-safe.
#ifndef ROOFTRACE_ANALYZER_BUILTIN_CONFIGS_H_
#define ROOFTRACE_ANALYZER_BUILTIN_CONFIGS_H_

#include <string_view>
#include <vector>

namespace rooftrace::analyzer {

struct BuiltinConfigText {
  std::string_view name;  // the file name without .json: "Llama-2-7B"
  std::string_view json;  // the file's text, a Hugging Face config.json
};

// In file-name order.
const std::vector<BuiltinConfigText>& BuiltinConfigTexts();

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_BUILTIN_CONFIGS_H_
