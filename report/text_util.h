// Escaping and number formatting shared by the analyzer's output formats.
// Pure functions; thread-safe.
#ifndef ROOFTRACE_REPORT_TEXT_UTIL_H_
#define ROOFTRACE_REPORT_TEXT_UTIL_H_

#include <optional>
#include <string>
#include <string_view>

namespace rooftrace {

// A JSON string literal with quotes (base/json_quote.h: control
// characters as \u00XX, invalid UTF-8 as U+FFFD).
std::string JsonString(std::string_view s);
// A JSON number that round-trips (integers exact, else 17 digits), or null
// when absent or not finite.
std::string JsonNumber(std::optional<double> v);
// Text or attribute content for XML / HTML.
std::string XmlEscape(std::string_view s);
// `s` with every control character (C0 and DEL as bytes, C1 as their
// UTF-8 encodings C2 80..C2 9F) shown as '?': text from traces and users
// (labels) printed on a terminal cannot carry escape sequences.
std::string NoControlCharacters(std::string_view s);
// One CSV field (RFC 4180): quoted when it holds a comma, quote or newline.
std::string CsvField(std::string_view s);
// printf("%.*f") ("%.3g" from 1e15 up), or `missing` when absent or not
// finite.
std::string Fixed(std::optional<double> v, int digits,
                  std::string_view missing = "-");
// A CSV cell number (as JsonNumber), empty when absent.
std::string Plain(std::optional<double> v);
// 3 significant digits with an SI prefix: 989.4e12 -> "989 T".
std::string SiPrefix(double v);
// Orders names as people number them: runs of digits compare by value, so
// "layer.2" < "layer.10" (plain `<` puts "layer.10" first). Ties of equal
// value ("7" vs "07") fall back to plain order, so the order is total.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_TEXT_UTIL_H_
