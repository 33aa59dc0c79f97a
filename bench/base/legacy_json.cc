// Frozen copy of the pre-simdjson parser; see legacy_json.h.
#include "bench/base/legacy_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace rooftrace::bench {
namespace {

using json::Array;
using json::kMaxDepth;
using json::Object;
using json::Value;

class Parser {
 public:
  Parser(std::string_view text, std::string_view source)
      : text_(text), source_(source) {}

  StatusOr<Value> ParseDocument() {
    SkipSpace();
    Value v;
    RT_RETURN_IF_ERROR(ParseValue(0, &v));
    SkipSpace();
    if (pos_ != text_.size()) {
      return Error("unexpected text after the JSON value");
    }
    return v;
  }

 private:
  Status Error(const std::string& what) const {
    // Line and column (1-based, column in bytes) of pos_.
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Corrupt(std::string(source_) + ":" + std::to_string(line) + ":" +
                   std::to_string(col) + ": " + what);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string Describe() const {
    if (AtEnd()) return "end of input";
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c < 0x20 || c >= 0x7f) {
      char buf[16];
      snprintf(buf, sizeof buf, "byte 0x%02x", c);
      return buf;
    }
    return std::string("'") + static_cast<char>(c) + "'";
  }

  Status ParseValue(int depth, Value* out) {
    if (depth > kMaxDepth) {
      return Error("nesting deeper than " + std::to_string(kMaxDepth) +
                   " levels");
    }
    switch (Peek()) {
      case '{':
        return ParseObject(depth, out);
      case '[':
        return ParseArray(depth, out);
      case '"': {
        std::string s;
        RT_RETURN_IF_ERROR(ParseString(&s));
        *out = Value(std::move(s));
        return OkStatus();
      }
      case 't':
        return ParseLiteral("true", Value(true), out);
      case 'f':
        return ParseLiteral("false", Value(false), out);
      case 'n':
        return ParseLiteral("null", Value(), out);
      default:
        break;
    }
    char c = Peek();
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
    return Error("expected a value, found " + Describe());
  }

  Status ParseLiteral(std::string_view word, Value v, Value* out) {
    if (text_.substr(pos_, word.size()) != word) {
      return Error("expected a value, found " + Describe());
    }
    pos_ += word.size();
    *out = std::move(v);
    return OkStatus();
  }

  Status ParseNumber(Value* out) {
    const size_t start = pos_;
    auto digit = [&] { return !AtEnd() && Peek() >= '0' && Peek() <= '9'; };
    if (Peek() == '-') ++pos_;
    if (!digit()) return Error("expected a digit in the number");
    if (Peek() == '0') {
      ++pos_;
      if (digit()) return Error("a number may not have a leading zero");
    } else {
      while (digit()) ++pos_;
    }
    if (Peek() == '.') {
      ++pos_;
      if (!digit()) return Error("expected a digit after the decimal point");
      while (digit()) ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!digit()) return Error("expected a digit in the exponent");
      while (digit()) ++pos_;
    }
    double d = 0;
    auto [ptr, ec] =
        std::from_chars(text_.data() + start, text_.data() + pos_, d);
    if (ec == std::errc::result_out_of_range || !std::isfinite(d)) {
      pos_ = start;
      return Error("number out of the range of a double");
    }
    if (ec != std::errc() || ptr != text_.data() + pos_) {
      pos_ = start;
      return Error("malformed number");
    }
    *out = Value(d);
    return OkStatus();
  }

  Status ParseHex4(uint32_t* out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = Peek();
      uint32_t d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        return Error("expected 4 hex digits after \\u");
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

  Status ParseString(std::string* out) {
    ++pos_;  // opening quote
    std::string s;
    while (true) {
      if (AtEnd()) return Error("unterminated string");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        break;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return Error("control character " + Describe() +
                     " inside a string (escape it)");
      }
      if (c != '\\') {
        s.push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      const char e = Peek();
      ++pos_;
      switch (e) {
        case '"':
          s.push_back('"');
          break;
        case '\\':
          s.push_back('\\');
          break;
        case '/':
          s.push_back('/');
          break;
        case 'b':
          s.push_back('\b');
          break;
        case 'f':
          s.push_back('\f');
          break;
        case 'n':
          s.push_back('\n');
          break;
        case 'r':
          s.push_back('\r');
          break;
        case 't':
          s.push_back('\t');
          break;
        case 'u': {
          uint32_t cp = 0;
          RT_RETURN_IF_ERROR(ParseHex4(&cp));
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") {
              return Error("high surrogate \\u escape without its low half");
            }
            pos_ += 2;
            uint32_t lo = 0;
            RT_RETURN_IF_ERROR(ParseHex4(&lo));
            if (lo < 0xDC00 || lo > 0xDFFF) {
              return Error("high surrogate followed by a non-low surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Error("low surrogate \\u escape without its high half");
          }
          AppendUtf8(cp, &s);
          break;
        }
        default:
          --pos_;
          return Error("invalid escape: " + Describe() +
                       " after a backslash in a string");
      }
    }
    *out = std::move(s);
    return OkStatus();
  }

  Status ParseArray(int depth, Value* out) {
    ++pos_;  // [
    Array arr;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      *out = Value(std::move(arr));
      return OkStatus();
    }
    while (true) {
      SkipSpace();
      Value v;
      RT_RETURN_IF_ERROR(ParseValue(depth + 1, &v));
      arr.push_back(std::move(v));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
        if (Peek() == ']') return Error("trailing comma before ']'");
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        break;
      }
      return Error("expected ',' or ']' after an array element, found " +
                   Describe());
    }
    *out = Value(std::move(arr));
    return OkStatus();
  }

  Status ParseObject(int depth, Value* out) {
    ++pos_;  // {
    Object obj;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      *out = Value(std::move(obj));
      return OkStatus();
    }
    while (true) {
      SkipSpace();
      if (Peek() != '"') {
        return Error("expected a string key, found " + Describe());
      }
      const size_t key_pos = pos_;
      std::string key;
      RT_RETURN_IF_ERROR(ParseString(&key));
      for (const auto& m : obj) {
        if (m.first == key) {
          pos_ = key_pos;
          return Error("duplicate key \"" + key + "\"");
        }
      }
      SkipSpace();
      if (Peek() != ':') {
        return Error("expected ':' after the key \"" + key + "\", found " +
                     Describe());
      }
      ++pos_;
      SkipSpace();
      Value v;
      RT_RETURN_IF_ERROR(ParseValue(depth + 1, &v));
      obj.emplace_back(std::move(key), std::move(v));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
        if (Peek() == '}') return Error("trailing comma before '}'");
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        break;
      }
      return Error("expected ',' or '}' after an object member, found " +
                   Describe());
    }
    *out = Value(std::move(obj));
    return OkStatus();
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<json::Value> LegacyParse(std::string_view text,
                                  std::string_view source) {
  return Parser(text, source).ParseDocument();
}

}  // namespace rooftrace::bench
