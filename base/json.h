// A small JSON value type, a strict parser and a writer, for the files
// rooftrace reads and writes itself (device profiles, calibration results,
// JSON reports).
//
// Parsing goes through simdjson (its DOM parser, which validates the whole
// text, UTF-8 included); this layer adds what simdjson leaves out: refusing
// duplicate keys and deep nesting, and errors with a line and column (see
// Parse). simdjson stays an implementation detail: no header includes it.
// Value is for small files: a tree of 5.7 M values from 100 MB of trace
// events builds at ~450 MB/s against ~1.9 GB/s for simdjson's DOM alone,
// and peaks at ~9x the input in memory (bench/base/json_bench.cc). Traces
// of other tools are read with simdjson directly, not through Value.
//
// The writer is our own, deliberately: simdjson only parses, and the writer
// is small and decides what our files look like (members in insertion
// order, two-space indent, integers without a fraction, shortest round-trip
// doubles, NaN as null, valid UTF-8 only), which the tests pin and files
// already written follow. Another library just to write would add a
// dependency and change the files for nothing.
//
// Value is a plain value type (copyable, movable); thread-compatible.
// Objects keep their members in insertion order so written files diff well;
// the parser rejects duplicate keys rather than pick one silently.
//
// The trap: numbers are doubles. Integers are exact up to 2^53 (larger ones
// and ones beyond 64 bits read as the nearest double, a number too small for
// a double reads as 0, one too large is an error, "-0" reads as 0); the
// writer prints integral values without a fraction and other values with
// the shortest text that parses back to the same double. NaN and infinities
// have no JSON form: Write() turns them into null (callers that care check
// first). Strings are UTF-8: the parser refuses invalid UTF-8 and the writer
// writes each byte that is not valid UTF-8 as U+FFFD.
#ifndef ROOFTRACE_BASE_JSON_H_
#define ROOFTRACE_BASE_JSON_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"

namespace rooftrace::json {

class Value;
using Array = std::vector<Value>;
using Member = std::pair<std::string, Value>;
using Object = std::vector<Member>;

enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

// "null", "bool", "number", "string", "array", "object".
std::string_view TypeName(Type t);

class Value {
 public:
  Value() = default;  // null
  Value(std::nullptr_t) {}  // NOLINT: implicit by design
  Value(bool b) : v_(b) {}  // NOLINT
  Value(double d) : v_(d) {}  // NOLINT
  Value(int i) : v_(static_cast<double>(i)) {}  // NOLINT
  Value(int64_t i) : v_(static_cast<double>(i)) {}  // NOLINT
  Value(uint64_t i) : v_(static_cast<double>(i)) {}  // NOLINT
  Value(unsigned i) : v_(static_cast<double>(i)) {}  // NOLINT
  Value(long long i) : v_(static_cast<double>(i)) {}  // NOLINT
  Value(unsigned long long i) : v_(static_cast<double>(i)) {}  // NOLINT
  Value(const char* s) : v_(std::string(s)) {}  // NOLINT
  Value(std::string s) : v_(std::move(s)) {}  // NOLINT
  Value(std::string_view s) : v_(std::string(s)) {}  // NOLINT
  Value(Array a) : v_(std::move(a)) {}  // NOLINT
  Value(Object o) : v_(std::move(o)) {}  // NOLINT

  static Value MakeArray() { return Value(Array{}); }
  static Value MakeObject() { return Value(Object{}); }

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_number() const { return type() == Type::kNumber; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // Accessors; calling one for the wrong type is a broken invariant
  // (asserts in debug builds). Check the type first.
  bool as_bool() const { return std::get<bool>(v_); }
  double as_number() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // Object member lookup; nullptr when absent or when this is no object.
  const Value* Find(std::string_view key) const;
  // Sets (replacing) an object member; turns a null into an object first.
  Value& Set(std::string_view key, Value value);
  // Appends to an array; turns a null into an array first.
  Value& Append(Value value);

  friend bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }

 private:
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v_;
};

// Parses one JSON text (RFC 8259, nothing more: no comments, no trailing
// commas, no NaN, no leading zeros, no unescaped control characters, no
// invalid UTF-8, no duplicate keys, nesting at most kMaxDepth). Thread-safe
// (each call has its own simdjson parser). Errors are kCorrupt and read
// "SOURCE:LINE:COLUMN: what", e.g. "profile.json:3:17: expected ',' or '}'
// after an object member, found '\"'".
//
// Position precision: exact. simdjson answers a refusal with an error code
// and no position, so after one, Parse re-reads the text with a small
// checker of the same rules that stops at the first offending byte (only
// then: a valid text never pays for it). LINE is 1-based, counting '\n';
// COLUMN is 1-based and counts bytes, not characters (a line holding "é"
// before the error is one column further on than it looks). Should simdjson
// refuse a text the checker finds valid (a limit of simdjson's, e.g. a text
// over 4 GiB) the error names the source and simdjson's reason, with no
// position.
inline constexpr int kMaxDepth = 256;
StatusOr<Value> Parse(std::string_view text, std::string_view source = "json");

// Reads typed members of one object for a file format built on JSON, and
// names the member in errors: "r.json: gemm[3].best_s must be a number
// (found string); <fix>". A missing or null member leaves the output
// untouched (older files stay readable); a present member of the wrong type
// is an error. Holds references: the Value and strings must outlive it.
class ObjectReader {
 public:
  ObjectReader(const std::string& source, std::string path, const Value& obj,
               const std::string& fix)
      : source_(source), path_(std::move(path)), obj_(obj), fix_(fix) {}

  Status Number(std::string_view key, double* out) const;
  // A number that must not be negative (rates, sizes, counts).
  Status NonNegative(std::string_view key, double* out) const;
  Status Int64(std::string_view key, int64_t* out) const;
  Status Int(std::string_view key, int* out) const;
  Status Uint64(std::string_view key, uint64_t* out) const;
  Status String(std::string_view key, std::string* out) const;
  Status Bool(std::string_view key, bool* out) const;
  // Nested object / array; nullptr when absent.
  StatusOr<const Value*> Object(std::string_view key) const;
  StatusOr<const Value*> ArrayOf(std::string_view key) const;
  // A reader for a nested object (checked to be one) at path.key / path[i].
  StatusOr<ObjectReader> Child(std::string_view key, const Value& v) const;
  StatusOr<ObjectReader> Element(std::string_view key, size_t index,
                                 const Value& v) const;

  // "source: path.key what; fix".
  Status Error(std::string_view key, const std::string& what) const;
  std::string Name(std::string_view key) const;

 private:
  const std::string& source_;
  std::string path_;
  const Value& obj_;
  const std::string& fix_;
};

// Reads (ReadBoundedFile: at most `max_bytes`, a FIFO too, never a
// device) and parses a whole file; errors name the file (kNotFound when it
// does not exist). `what` and `kind` as ReadBoundedFile's. Write files
// with WriteTextFile (base/files.h).
// The default cap: far above any JSON file rooftrace reads whole.
inline constexpr uint64_t kMaxJsonFileBytes = uint64_t{256} << 20;
StatusOr<Value> ParseFile(const std::string& path,
                          uint64_t max_bytes = kMaxJsonFileBytes,
                          const std::string& what = "",
                          const std::string& kind = "a JSON file");

struct WriteOptions {
  int indent = 2;  // 0: one line, no spaces
};
std::string Write(const Value& value, const WriteOptions& options = {});

// Shortest decimal text that parses back to `d` ("0.1", "1e+300", "42").
std::string FormatNumber(double d);

}  // namespace rooftrace::json

#endif  // ROOFTRACE_BASE_JSON_H_
