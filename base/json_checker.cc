#include "base/json_checker.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <system_error>

#include "base/json.h"

namespace rooftrace::json::internal {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u;
  };
  const auto cont = [&](size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
  const unsigned c = byte(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && byte(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && byte(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

namespace {

// One pass over one text (see json_checker.h). A recursive descent that
// mirrors the grammar; recursion is bounded by kMaxDepth.
class Checker {
 public:
  Checker(std::string_view text, std::string_view source)
      : text_(text), source_(source) {}

  // The error at the first offending byte; OK when the text is valid.
  Status Check() {
    SkipSpace();
    RT_RETURN_IF_ERROR(CheckValue(0));
    SkipSpace();
    if (pos_ != text_.size()) {
      return Error("unexpected text after the JSON value");
    }
    return OkStatus();
  }

  // Valid integer literals too long for simdjson, which holds integers in
  // 64 bits and refuses longer ones: the offset just past each one's last
  // digit. Collected by Check().
  const std::vector<size_t>& long_integers() const { return long_integers_; }
  // Where Check() stopped: the offending byte after an error.
  size_t pos() const { return pos_; }

 private:
  Status Error(const std::string& what) const {
    TextPosition at;
    AdvancePosition(text_.substr(0, std::min(pos_, text_.size())), &at);
    return Corrupt(std::string(source_) + ":" + FormatPosition(at) + ": " +
                   what);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  std::string Describe() const {
    if (AtEnd()) return "end of input";
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c < 0x20 || c >= 0x7f) {
      char buf[16];
      snprintf(buf, sizeof buf, "byte 0x%02x", c);
      return buf;
    }
    return std::string("'") + static_cast<char>(c) + "'";
  }

  Status CheckValue(int depth) {
    if (depth > kMaxDepth) {
      return Error("nesting deeper than " + std::to_string(kMaxDepth) +
                   " levels");
    }
    switch (Peek()) {
      case '{':
        return CheckObject(depth);
      case '[':
        return CheckArray(depth);
      case '"': {
        std::string unused;
        return CheckString(&unused);
      }
      case 't':
        return CheckLiteral("true");
      case 'f':
        return CheckLiteral("false");
      case 'n':
        return CheckLiteral("null");
      default:
        break;
    }
    const char c = Peek();
    if (c == '-' || (c >= '0' && c <= '9')) return CheckNumber();
    return Error("expected a value, found " + Describe());
  }

  Status CheckLiteral(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return Error("expected a value, found " + Describe());
    }
    pos_ += word.size();
    return OkStatus();
  }

  Status CheckNumber() {
    const size_t start = pos_;
    auto digit = [&] { return !AtEnd() && Peek() >= '0' && Peek() <= '9'; };
    if (Peek() == '-') ++pos_;
    if (!digit()) return Error("expected a digit in the number");
    const size_t first_digit = pos_;
    if (Peek() == '0') {
      ++pos_;
      if (digit()) return Error("a number may not have a leading zero");
    } else {
      while (digit()) ++pos_;
    }
    bool integer = true;
    if (Peek() == '.') {
      integer = false;
      ++pos_;
      if (!digit()) return Error("expected a digit after the decimal point");
      while (digit()) ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      integer = false;
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!digit()) return Error("expected a digit in the exponent");
      while (digit()) ++pos_;
    }
    const std::string_view number = text_.substr(start, pos_ - start);
    double d = 0;
    auto [ptr, ec] =
        std::from_chars(number.data(), number.data() + number.size(), d);
    // from_chars says "out of range" for underflow too; a number too small
    // for a double reads as 0 (simdjson does so), only a too large one is
    // an error.
    if (ec == std::errc::result_out_of_range && !TooLarge(number)) {
      ec = std::errc();
      ptr = number.data() + number.size();
      d = 0;
    }
    if (ec == std::errc::result_out_of_range || !std::isfinite(d)) {
      pos_ = start;
      return Error("number out of the range of a double");
    }
    if (ec != std::errc() || ptr != text_.data() + pos_) {
      pos_ = start;
      return Error("malformed number");
    }
    // 19 digits can already overflow int64; listing a few integers that
    // would fit costs nothing (see Parse()).
    if (integer && pos_ - first_digit >= 19) long_integers_.push_back(pos_);
    return OkStatus();
  }

  // Whether a number's magnitude is at least 1 (decimal order >= 0), for a
  // number from_chars found out of range, which then means above the
  // largest double rather than below the smallest. `number` is grammatical.
  static bool TooLarge(std::string_view number) {
    size_t i = number[0] == '-' ? 1 : 0;
    auto digit = [&] {
      return i < number.size() && number[i] >= '0' && number[i] <= '9';
    };
    bool nonzero = false;
    int64_t int_digits = 0, leading_fraction_zeros = 0;
    for (; digit(); ++i) {
      if (nonzero || number[i] != '0') {
        nonzero = true;
        ++int_digits;
      }
    }
    if (i < number.size() && number[i] == '.') {
      for (++i; digit(); ++i) {
        if (nonzero) continue;
        if (number[i] == '0') {
          ++leading_fraction_zeros;
        } else {
          nonzero = true;
        }
      }
    }
    int64_t exponent = 0;
    if (i < number.size() && (number[i] == 'e' || number[i] == 'E')) {
      ++i;
      const bool negative = number[i] == '-';
      if (number[i] == '-' || number[i] == '+') ++i;
      // Saturates: any exponent beyond 1e15 decides the order alone.
      for (; digit(); ++i) {
        if (exponent < 1'000'000'000'000'000) {
          exponent = exponent * 10 + (number[i] - '0');
        }
      }
      if (negative) exponent = -exponent;
    }
    if (!nonzero) return false;
    const int64_t order = int_digits > 0
                              ? int_digits - 1 + exponent
                              : exponent - leading_fraction_zeros - 1;
    return order >= 0;
  }

  Status CheckHex4(uint32_t* out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = Peek();
      uint32_t d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return Error("expected 4 hex digits after \\u");
      }
      v = v * 16 + d;
      ++pos_;
    }
    *out = v;
    return OkStatus();
  }

  static void AppendUtf8(uint32_t cp, std::string* s) {
    if (cp < 0x80) {
      s->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // Decodes into *out as well: duplicate keys are compared decoded ("a"
  // and "\u0061" are one key), as simdjson hands them to the Builder.
  Status CheckString(std::string* out) {
    ++pos_;  // opening quote
    while (true) {
      if (AtEnd()) return Error("unterminated string");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return OkStatus();
      }
      const unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20) {
        return Error("control character " + Describe() +
                     " inside a string (escape it)");
      }
      if (u >= 0x80) {
        const size_t n = Utf8SequenceLength(text_, pos_);
        if (n == 0) {
          return Error("invalid UTF-8 (" + Describe() +
                       ") inside a string; save the file as UTF-8");
        }
        out->append(text_.substr(pos_, n));
        pos_ += n;
        continue;
      }
      if (c != '\\') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      const char e = Peek();
      ++pos_;
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp = 0;
          RT_RETURN_IF_ERROR(CheckHex4(&cp));
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") {
              return Error("high surrogate \\u escape without its low half");
            }
            pos_ += 2;
            uint32_t lo = 0;
            RT_RETURN_IF_ERROR(CheckHex4(&lo));
            if (lo < 0xDC00 || lo > 0xDFFF) {
              return Error("high surrogate followed by a non-low surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Error("low surrogate \\u escape without its high half");
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          --pos_;
          return Error("invalid escape: " + Describe() +
                       " after a backslash in a string");
      }
    }
  }

  Status CheckArray(int depth) {
    ++pos_;  // [
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return OkStatus();
    }
    while (true) {
      SkipSpace();
      RT_RETURN_IF_ERROR(CheckValue(depth + 1));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
        if (Peek() == ']') return Error("trailing comma before ']'");
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        return OkStatus();
      }
      return Error("expected ',' or ']' after an array element, found " +
                   Describe());
    }
  }

  Status CheckObject(int depth) {
    ++pos_;  // {
    std::set<std::string> keys;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return OkStatus();
    }
    while (true) {
      SkipSpace();
      if (Peek() != '"') {
        return Error("expected a string key, found " + Describe());
      }
      const size_t key_pos = pos_;
      std::string key;
      RT_RETURN_IF_ERROR(CheckString(&key));
      if (!keys.insert(key).second) {
        pos_ = key_pos;
        return Error("duplicate key \"" + key + "\"");
      }
      SkipSpace();
      if (Peek() != ':') {
        return Error("expected ':' after the key \"" + key + "\", found " +
                     Describe());
      }
      ++pos_;
      SkipSpace();
      RT_RETURN_IF_ERROR(CheckValue(depth + 1));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
        if (Peek() == '}') return Error("trailing comma before '}'");
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        return OkStatus();
      }
      return Error("expected ',' or '}' after an object member, found " +
                   Describe());
    }
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  std::vector<size_t> long_integers_;
};

}  // namespace

void AdvancePosition(std::string_view chunk, TextPosition* p) {
  for (const char c : chunk) {
    if (c == '\n') {
      ++p->line;
      p->column = 1;
    } else {
      ++p->column;
    }
  }
}

std::string FormatPosition(const TextPosition& p) {
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}

CheckResult CheckText(std::string_view text, std::string_view source) {
  Checker checker(text, source);
  CheckResult result;
  result.status = checker.Check();
  if (!result.status.ok()) result.offset = checker.pos();
  result.long_integers = checker.long_integers();
  return result;
}

}  // namespace rooftrace::json::internal
