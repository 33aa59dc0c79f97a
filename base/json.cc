#include "base/json.h"

#include "base/files.h"

#include <simdjson.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <unordered_set>

#include "base/json_checker.h"
#include "base/json_quote.h"

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

using internal::Utf8SequenceLength;

// Turns simdjson's DOM into a Value, enforcing what simdjson does not:
// unique keys and nesting at most kMaxDepth. Returns false at the first
// breach; CheckText then finds and names it. Stateless.
class Builder {
 public:
  static bool Build(simdjson::dom::element e, int depth, Value* out) {
    using simdjson::dom::element_type;
    if (depth > kMaxDepth) return false;
    switch (e.type()) {
      case element_type::ARRAY: {
        const simdjson::dom::array in = e.get_array().value_unsafe();
        Array arr;
        arr.reserve(in.size());
        for (simdjson::dom::element child : in) {
          if (!Build(child, depth + 1, &arr.emplace_back())) return false;
        }
        *out = Value(std::move(arr));
        return true;
      }
      case element_type::OBJECT: {
        const simdjson::dom::object in = e.get_object().value_unsafe();
        Object obj;
        obj.reserve(in.size());
        // Keys are views into the parser's string buffer, valid for the
        // whole build. The first few are searched linearly; a set takes
        // over after them, so a hostile file with 1e6 keys in one object
        // does not cost 1e12 compares.
        std::string_view first[kLinearKeySearch];
        size_t count = 0;
        std::unordered_set<std::string_view> seen;
        for (simdjson::dom::key_value_pair kv : in) {
          if (count < kLinearKeySearch) {
            for (size_t i = 0; i < count; ++i) {
              if (first[i] == kv.key) return false;
            }
            first[count] = kv.key;
          } else {
            if (seen.empty()) seen.insert(first, first + kLinearKeySearch);
            if (!seen.insert(kv.key).second) return false;
          }
          ++count;
          Member& m = obj.emplace_back(std::string(kv.key), Value());
          if (!Build(kv.value, depth + 1, &m.second)) return false;
        }
        *out = Value(std::move(obj));
        return true;
      }
      case element_type::INT64:
        *out = Value(e.get_int64().value_unsafe());
        return true;
      case element_type::UINT64:
        *out = Value(e.get_uint64().value_unsafe());
        return true;
      case element_type::DOUBLE:
        *out = Value(e.get_double().value_unsafe());
        return true;
      case element_type::STRING:
        *out = Value(e.get_string().value_unsafe());
        return true;
      case element_type::BOOL:
        *out = Value(e.get_bool().value_unsafe());
        return true;
      case element_type::NULL_VALUE:
        *out = Value();
        return true;
    }
    return false;
  }

 private:
  static constexpr size_t kLinearKeySearch = 16;
};

// Parses `len` bytes at `data`; `padded`: SIMDJSON_PADDING readable bytes
// follow them, so simdjson need not copy the text.
StatusOr<Value> ParseBytes(const char* data, size_t len, bool padded,
                           std::string_view source, bool retried = false) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::error_code error = parser.parse(data, len, !padded).get(root);
  Value value;
  if (!error && Builder::Build(root, 0, &value)) return value;

  // Refused by simdjson or by the Builder: find the first offending byte.
  const std::string_view text(data, len);
  const internal::CheckResult check = internal::CheckText(text, source);
  RT_RETURN_IF_ERROR(check.status);
  // Valid JSON that simdjson cannot hold: integers beyond 64 bits. An
  // exponent makes simdjson read them as doubles, which is what they are
  // to us anyway.
  if (!retried && !check.long_integers.empty()) {
    std::string widened;
    widened.reserve(len + 2 * check.long_integers.size());
    size_t from = 0;
    for (size_t end : check.long_integers) {
      widened.append(text.substr(from, end - from));
      widened.append("e0");
      from = end;
    }
    widened.append(text.substr(from));
    return ParseBytes(widened.data(), widened.size(), false, source, true);
  }
  // simdjson and the checker disagree; should not happen, but the user still
  // learns which file and what simdjson said.
  const std::string why =
      error ? std::string("simdjson: ") + simdjson::error_message(error)
            : "a duplicate key or nesting deeper than " +
                  std::to_string(kMaxDepth) + " levels";
  return Corrupt(std::string(source) + ": not valid JSON (" + why +
                 "; the position is not known)");
}

// ------------------------------------------------------------------ writer
// Strings are written as UTF-8, which is all a JSON reader must accept
// (RFC 8259 section 8.1) and all ours accepts: a byte that does not start a
// valid sequence is written as U+FFFD, so every file we write reads back.
void WriteString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
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
        } else if (u < 0x80) {
          out->push_back(c);
        } else if (const size_t n = Utf8SequenceLength(s, i); n > 0) {
          out->append(s.substr(i, n));
          i += n - 1;
        } else {
          *out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
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

std::string Quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  WriteString(s, &out);
  return out;
}

StatusOr<Value> Parse(std::string_view text, std::string_view source) {
  return ParseBytes(text.data(), text.size(), /*padded=*/false, source);
}

StatusOr<Value> ParseFile(const std::string& path, uint64_t max_bytes,
                          const std::string& what, const std::string& kind) {
  RT_ASSIGN_OR_RETURN(std::string text,
                      ReadBoundedFile(path, max_bytes, what, kind));
  const size_t len = text.size();
  text.append(simdjson::SIMDJSON_PADDING, '\0');
  return ParseBytes(text.data(), len, /*padded=*/true, path);
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

Status ObjectReader::NonNegative(std::string_view key, double* out) const {
  double d = *out;
  RT_RETURN_IF_ERROR(Number(key, &d));
  if (d < 0) return Error(key, "must not be negative");
  *out = d;
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
