// The one JSON string writer every JSON output goes through (base/json's
// Write, the reports' JsonString, `devices --format json`): quotes,
// escapes, control characters as \u00XX, and bytes that are not valid
// UTF-8 (a lone surrogate a trace decoded from \ud800 as ED A0 80, a name
// in another encoding) as U+FFFD, so that every file rooftrace writes is
// read by strict JSON parsers.
//
// Pure function; thread-safe. Its own header so that its users need not
// include base/json.h's value and parser.
#ifndef ROOFTRACE_BASE_JSON_QUOTE_H_
#define ROOFTRACE_BASE_JSON_QUOTE_H_

#include <string>
#include <string_view>

namespace rooftrace::json {

// `s` as a JSON string literal, quotes included.
std::string Quote(std::string_view s);

}  // namespace rooftrace::json

#endif  // ROOFTRACE_BASE_JSON_QUOTE_H_
