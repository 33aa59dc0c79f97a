# Writes a C++ source holding every configs/*.json as a string, so that the
# built-in model configs of `rooftrace predict` work from any directory.
# Run by analyzer/CMakeLists.txt at build time:
#   cmake -DCONFIG_DIR=<model/configs> -DOUT=<file.cc> -P embed_configs.cmake
# The output is rewritten only when its text changes (no needless rebuilds).
file(GLOB configs "${CONFIG_DIR}/*.json")
list(SORT configs)
set(body "")
foreach(path IN LISTS configs)
  get_filename_component(name "${path}" NAME)
  string(REGEX REPLACE "\\.json$" "" name "${name}")
  file(READ "${path}" text)
  string(FIND "${text}" ")rtjson\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path}: contains the raw-string delimiter )rtjson\"")
  endif()
  string(APPEND body "      {\"${name}\", R\"rtjson(${text})rtjson\"},\n")
endforeach()
set(source
"// Generated from model/configs/*.json by embed_configs.cmake; do not edit.
#include \"model/builtin_configs.h\"

namespace rooftrace {

const std::vector<BuiltinConfigText>& BuiltinConfigTexts() {
  static const std::vector<BuiltinConfigText> kTexts = {
${body}  };
  return kTexts;
}

}  // namespace rooftrace
")
file(WRITE "${OUT}.tmp" "${source}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
