// The JSON parser rooftrace used before simdjson (base/json.cc as of the
// commit that replaced it), frozen here only as the baseline of
// json_bench: a hand-written recursive descent that builds json::Value
// directly. Not used by any product code; do not fix or extend it.
#ifndef ROOFTRACE_BENCH_BASE_LEGACY_JSON_H_
#define ROOFTRACE_BENCH_BASE_LEGACY_JSON_H_

#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace rooftrace::bench {

StatusOr<json::Value> LegacyParse(std::string_view text,
                                  std::string_view source = "json");

}  // namespace rooftrace::bench

#endif  // ROOFTRACE_BENCH_BASE_LEGACY_JSON_H_
