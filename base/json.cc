#include "base/json.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rooftrace::json {

std::string_view TypeName(Type t) {
  switch (t) {
    case Type::kNull: return "null";
    case Type::kBool: return "bool";
    case Type::kNumber: return "number";
    case Type::kString: return "string";
    case Type::kArray: return "array";
    case Type::kObject: return "object";
  }
  return "?";
}

const Value* Value::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : as_object()) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value& Value::Set(std::string_view key, Value value) {
  if (is_null()) v_ = Object{};
  Object& obj = as_object();
  for (auto& [k, v] : obj) {
    if (k == key) {
      v = std::move(value);
      return v;
    }
  }
  obj.emplace_back(std::string(key), std::move(value));
  return obj.back().second;
}

Value& Value::Append(Value value) {
  if (is_null()) v_ = Array{};
  Array& arr = as_array();
  arr.push_back(std::move(value));
  return arr.back();
}

// ------------------------------------------------------------------ parser
namespace {

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
      case '{': return ParseObject(depth, out);
      case '[': return ParseArray(depth, out);
      case '"': {
        std::string s;
        RT_RETURN_IF_ERROR(ParseString(&s));
        *out = Value(std::move(s));
        return OkStatus();
      }
      case 't': return ParseLiteral("true", Value(true), out);
      case 'f': return ParseLiteral("false", Value(false), out);
      case 'n': return ParseLiteral("null", Value(), out);
      default: break;
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
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return Error("expected 4 hex digits after \\u");
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
        case '"': s.push_back('"'); break;
        case '\\': s.push_back('\\'); break;
        case '/': s.push_back('/'); break;
        case 'b': s.push_back('\b'); break;
        case 'f': s.push_back('\f'); break;
        case 'n': s.push_back('\n'); break;
        case 'r': s.push_back('\r'); break;
        case 't': s.push_back('\t'); break;
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

// ------------------------------------------------------------------ writer
void WriteString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (u < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", u);
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void Newline(int indent, int depth, std::string* out) {
  if (indent <= 0) return;
  out->push_back('\n');
  out->append(static_cast<size_t>(indent) * depth, ' ');
}

void WriteValue(const Value& v, int indent, int depth, std::string* out) {
  switch (v.type()) {
    case Type::kNull: *out += "null"; return;
    case Type::kBool: *out += v.as_bool() ? "true" : "false"; return;
    case Type::kNumber: *out += FormatNumber(v.as_number()); return;
    case Type::kString: WriteString(v.as_string(), out); return;
    case Type::kArray: {
      const Array& a = v.as_array();
      if (a.empty()) {
        *out += "[]";
        return;
      }
      out->push_back('[');
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out->push_back(',');
        Newline(indent, depth + 1, out);
        WriteValue(a[i], indent, depth + 1, out);
      }
      Newline(indent, depth, out);
      out->push_back(']');
      return;
    }
    case Type::kObject: {
      const Object& o = v.as_object();
      if (o.empty()) {
        *out += "{}";
        return;
      }
      out->push_back('{');
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out->push_back(',');
        Newline(indent, depth + 1, out);
        WriteString(o[i].first, out);
        *out += indent > 0 ? ": " : ":";
        WriteValue(o[i].second, indent, depth + 1, out);
      }
      Newline(indent, depth, out);
      out->push_back('}');
      return;
    }
  }
}

}  // namespace

StatusOr<Value> Parse(std::string_view text, std::string_view source) {
  return Parser(text, source).ParseDocument();
}

StatusOr<Value> ParseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFound(path + ": cannot open (" + std::strerror(errno) +
                    "): check the path");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    return NotFound(path + ": read failed (" + std::strerror(errno) + ")");
  }
  return Parse(ss.str(), path);
}

std::string FormatNumber(double d) {
  if (!std::isfinite(d)) return "null";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  // Integral values up to 2^53 print as integers ("42", not "42.0" or
  // "4.2e+01"), which is what people expect to read in counts and sizes.
  if (std::fabs(d) < 9007199254740992.0 && d == std::trunc(d)) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", static_cast<long long>(d));
    return buf;
  }
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, d);
  if (ec != std::errc()) return "null";  // cannot happen with 64 bytes
  return std::string(buf, ptr);
}

std::string Write(const Value& value, const WriteOptions& options) {
  std::string out;
  WriteValue(value, options.indent, 0, &out);
  if (options.indent > 0) out.push_back('\n');
  return out;
}

std::string ObjectReader::Name(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  if (!key.empty() && key[0] == '[') return path_ + std::string(key);
  return path_ + "." + std::string(key);
}

Status ObjectReader::Error(std::string_view key,
                           const std::string& what) const {
  return InvalidArgument(source_ + ": " + Name(key) + " " + what +
                         (fix_.empty() ? "" : "; " + fix_));
}

Status ObjectReader::Number(std::string_view key, double* out) const {
  const Value* v = obj_.Find(key);
  if (!v || v->is_null()) return OkStatus();
  if (!v->is_number()) {
    return Error(key, "must be a number (found " +
                          std::string(TypeName(v->type())) + ")");
  }
  *out = v->as_number();
  return OkStatus();
}

Status ObjectReader::Int64(std::string_view key, int64_t* out) const {
  const Value* v = obj_.Find(key);
  if (!v || v->is_null()) return OkStatus();
  double d = 0;
  RT_RETURN_IF_ERROR(Number(key, &d));
  if (d != std::trunc(d) || std::fabs(d) > 9007199254740992.0) {
    return Error(key, "must be a whole number");
  }
  *out = static_cast<int64_t>(d);
  return OkStatus();
}

Status ObjectReader::Int(std::string_view key, int* out) const {
  int64_t v = *out;
  RT_RETURN_IF_ERROR(Int64(key, &v));
  if (v < INT32_MIN || v > INT32_MAX) return Error(key, "is out of range");
  *out = static_cast<int>(v);
  return OkStatus();
}

Status ObjectReader::Uint64(std::string_view key, uint64_t* out) const {
  int64_t v = static_cast<int64_t>(*out);
  RT_RETURN_IF_ERROR(Int64(key, &v));
  if (v < 0) return Error(key, "must not be negative");
  *out = static_cast<uint64_t>(v);
  return OkStatus();
}

Status ObjectReader::String(std::string_view key, std::string* out) const {
  const Value* v = obj_.Find(key);
  if (!v || v->is_null()) return OkStatus();
  if (!v->is_string()) {
    return Error(key, "must be a string (found " +
                          std::string(TypeName(v->type())) + ")");
  }
  *out = v->as_string();
  return OkStatus();
}

Status ObjectReader::Bool(std::string_view key, bool* out) const {
  const Value* v = obj_.Find(key);
  if (!v || v->is_null()) return OkStatus();
  if (!v->is_bool()) return Error(key, "must be true or false");
  *out = v->as_bool();
  return OkStatus();
}

StatusOr<const Value*> ObjectReader::Object(std::string_view key) const {
  const Value* v = obj_.Find(key);
  if (!v || v->is_null()) return static_cast<const Value*>(nullptr);
  if (!v->is_object()) return Error(key, "must be an object");
  return v;
}

StatusOr<const Value*> ObjectReader::ArrayOf(std::string_view key) const {
  const Value* v = obj_.Find(key);
  if (!v || v->is_null()) return static_cast<const Value*>(nullptr);
  if (!v->is_array()) return Error(key, "must be an array");
  return v;
}

StatusOr<ObjectReader> ObjectReader::Child(std::string_view key,
                                           const Value& v) const {
  if (!v.is_object()) return Error(key, "must be an object");
  return ObjectReader(source_, Name(key), v, fix_);
}

StatusOr<ObjectReader> ObjectReader::Element(std::string_view key,
                                             size_t index,
                                             const Value& v) const {
  const std::string name =
      std::string(key) + "[" + std::to_string(index) + "]";
  if (!v.is_object()) return Error(name, "must be an object");
  return ObjectReader(source_, Name(name), v, fix_);
}

}  // namespace rooftrace::json
