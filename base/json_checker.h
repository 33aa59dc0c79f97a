// The strict JSON checker behind the error messages of json::Parse (json.cc,
// its test and the device-profile fuzzer use it; callers use json::Parse),
// and of the importers that parse large traces with simdjson themselves
// (sources/kineto/), which ask it where a refused text breaks.
//
// simdjson says *that* a text is not JSON, with an error code and no
// position. CheckText re-reads such a text by the grammar of RFC 8259 plus
// rooftrace's own rules (no duplicate keys, nesting at most kMaxDepth, UTF-8
// strings) and stops at the first byte that breaks one, so the user gets a
// line, a column and a reason. It runs only after a refusal and favours
// clarity over speed. Stateless; thread-safe.
//
// The trap: it must refuse exactly what json::Parse refuses. The fuzzer
// (tests/model/device_profile_fuzzer.cc) holds the two to that.
#ifndef ROOFTRACE_BASE_JSON_CHECKER_H_
#define ROOFTRACE_BASE_JSON_CHECKER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rooftrace::json::internal {

// Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF) that starts at s[i]; 0 if none does.
size_t Utf8SequenceLength(std::string_view s, size_t i);

struct CheckResult {
  // kCorrupt "SOURCE:LINE:COLUMN: what" at the first offending byte (LINE
  // 1-based; COLUMN 1-based, in bytes); OK when the text is valid.
  Status status;
  // Byte offset of the offending byte when status is not OK.
  size_t offset = 0;
  // Valid integer literals that may be too long for simdjson, which holds
  // integers in 64 bits and refuses longer ones: the offset just past each
  // one's last digit (every integer of 19 digits or more).
  std::vector<size_t> long_integers;
};

CheckResult CheckText(std::string_view text, std::string_view source);

// A position in a text, 1-based, the column in bytes; 64-bit, since a
// one-line trace of 3 GB has columns past 2^31 (an int printed
// "1:-1294967279").
struct TextPosition {
  uint64_t line = 1;
  uint64_t column = 1;
};
// `*p` moved past `chunk`: a newline starts the next line at column 1.
void AdvancePosition(std::string_view chunk, TextPosition* p);
// "LINE:COLUMN".
std::string FormatPosition(const TextPosition& p);

}  // namespace rooftrace::json::internal

#endif  // ROOFTRACE_BASE_JSON_CHECKER_H_
