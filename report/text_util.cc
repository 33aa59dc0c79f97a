#include "report/text_util.h"

#include "base/json_quote.h"

#include <cmath>
#include <cstdio>

namespace rooftrace {

std::string JsonString(std::string_view s) { return json::Quote(s); }

std::string NoControlCharacters(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xc2 && i + 1 < s.size() &&
               static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      out += '?';
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

// Integers below 2^53 print exactly as integers; other values with the 17
// significant digits that round-trip a double.
std::string ExactNumber(double v) {
  char buf[40];
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v)) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.17g", v);
  }
  return buf;
}

}  // namespace

std::string JsonNumber(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "null";
  return ExactNumber(*v);
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out.push_back(' ');
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    return std::string(s);
  }
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string Fixed(std::optional<double> v, int digits, std::string_view missing) {
  if (!v || !std::isfinite(*v)) return std::string(missing);
  char buf[64];
  // Absurd magnitudes (damaged data) stay one cell wide.
  if (std::fabs(*v) >= 1e15) {
    std::snprintf(buf, sizeof(buf), "%.3g", *v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.*f", digits, *v);
  }
  return buf;
}

std::string Plain(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "";
  return ExactNumber(*v);
}

std::string SiPrefix(double v) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  double x = v;
  while (std::fabs(x) >= 1000 && i < 6) {
    x /= 1000;
    ++i;
  }
  char buf[32];
  if (std::fabs(x) >= 100 || x == std::floor(x)) {
    std::snprintf(buf, sizeof(buf), "%.0f %s", x, kPrefixes[i]);
  } else if (std::fabs(x) >= 10) {
    std::snprintf(buf, sizeof(buf), "%.1f %s", x, kPrefixes[i]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f %s", x, kPrefixes[i]);
  }
  return buf;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      // Compare the runs by value without overflow: strip leading zeros,
      // then the longer run is the larger number.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      const std::string_view x = a.substr(is, ie - is);
      const std::string_view y = b.substr(js, je - js);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

}  // namespace rooftrace
