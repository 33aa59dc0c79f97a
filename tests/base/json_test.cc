#include "base/json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "base/files.h"
#include "base/json_checker.h"

namespace rooftrace::json {
namespace {

Value MustParse(std::string_view text) {
  auto v = Parse(text, "t.json");
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? *v : Value();
}

std::string ParseError(std::string_view text) {
  auto v = Parse(text, "t.json");
  EXPECT_FALSE(v.ok()) << "accepted: " << text;
  return v.ok() ? "" : v.status().message();
}

// A document with every kind of value parses into the matching tree.
// Issue 37 item 14: a one-line JSON of 3 GB said its error was at
// "1:-1294967279": the column was an int. Positions are 64-bit; checked
// from a column just under 2^32 (no 3 GB text needed), through the same
// function the checker's messages use.
TEST(JsonCheckerTest, PositionsPast4GiBAreNotWrapped) {
  internal::TextPosition p;
  p.column = 3000000000ull;
  internal::AdvancePosition("0123456789abcdefg", &p);
  EXPECT_EQ(internal::FormatPosition(p), "1:3000000017");
  p.column = (uint64_t{1} << 32) - 3;
  internal::AdvancePosition("abcd", &p);
  EXPECT_EQ(internal::FormatPosition(p), "1:4294967297");
  internal::AdvancePosition("x\nab", &p);
  EXPECT_EQ(internal::FormatPosition(p), "2:3");
  // The checker's own message, on a small text, from the same count.
  const internal::CheckResult bad = internal::CheckText("[1,\n 2,]", "t.json");
  ASSERT_FALSE(bad.status.ok());
  EXPECT_EQ(bad.status.message().substr(0, 11), "t.json:2:4:")
      << bad.status.message();
}

TEST(JsonParseTest, ParsesEveryValueKind) {
  Value v = MustParse(
      R"({"n": null, "t": true, "f": false, "i": -12, "d": 2.5e3,
          "s": "a\"b\\c\/\n\t", "a": [1, [], {}], "o": {"k": "v"}})");
  ASSERT_TRUE(v.is_object());
  EXPECT_TRUE(v.Find("n")->is_null());
  EXPECT_TRUE(v.Find("t")->as_bool());
  EXPECT_FALSE(v.Find("f")->as_bool());
  EXPECT_EQ(v.Find("i")->as_number(), -12.0);
  EXPECT_EQ(v.Find("d")->as_number(), 2500.0);
  EXPECT_EQ(v.Find("s")->as_string(), "a\"b\\c/\n\t");
  const Array& a = v.Find("a")->as_array();
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].as_number(), 1.0);
  EXPECT_TRUE(a[1].is_array());
  EXPECT_TRUE(a[2].is_object());
  EXPECT_EQ(v.Find("o")->Find("k")->as_string(), "v");
  EXPECT_EQ(v.Find("missing"), nullptr);
  // Members keep their order.
  EXPECT_EQ(v.as_object()[0].first, "n");
  EXPECT_EQ(v.as_object()[7].first, "o");
}

// \u escapes decode to UTF-8, surrogate pairs to one 4-byte character.
TEST(JsonParseTest, DecodesUnicodeEscapes) {
  EXPECT_EQ(MustParse(R"("\u0041\u00e9\u20ac")").as_string(),
            "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(MustParse(R"("\ud83d\ude00")").as_string(), "\xf0\x9f\x98\x80");
  // Raw UTF-8 passes through unchanged.
  EXPECT_EQ(MustParse("\"\xc3\xa9\"").as_string(), "\xc3\xa9");
}

// Each violation of the grammar is refused with line and column.
TEST(JsonParseTest, RejectsWhatRfc8259Rejects) {
  EXPECT_EQ(ParseError("{\"a\": 1,}"),
            "t.json:1:9: trailing comma before '}'");
  EXPECT_EQ(ParseError("[1,]"), "t.json:1:4: trailing comma before ']'");
  EXPECT_EQ(ParseError("{\n  \"a\": 1\n  \"b\": 2}"),
            "t.json:3:3: expected ',' or '}' after an object member, found "
            "'\"'");
  EXPECT_EQ(ParseError("01"), "t.json:1:2: a number may not have a leading zero");
  EXPECT_EQ(ParseError("NaN"), "t.json:1:1: expected a value, found 'N'");
  EXPECT_EQ(ParseError("1."), "t.json:1:3: expected a digit after the decimal point");
  EXPECT_EQ(ParseError("-"), "t.json:1:2: expected a digit in the number");
  EXPECT_EQ(ParseError("1e"), "t.json:1:3: expected a digit in the exponent");
  EXPECT_EQ(ParseError("1e999"), "t.json:1:1: number out of the range of a double");
  EXPECT_EQ(ParseError("// c\n1"), "t.json:1:1: expected a value, found '/'");
  EXPECT_EQ(ParseError("\"a\nb\""),
            "t.json:1:3: control character byte 0x0a inside a string "
            "(escape it)");
  EXPECT_EQ(ParseError("\"abc"), "t.json:1:5: unterminated string");
  EXPECT_EQ(ParseError("\"\\x\""),
            "t.json:1:3: invalid escape: 'x' after a backslash in a string");
  EXPECT_EQ(ParseError("\"\\ud83d\""),
            "t.json:1:8: high surrogate \\u escape without its low half");
  EXPECT_EQ(ParseError("\"\\ude00\""),
            "t.json:1:8: low surrogate \\u escape without its high half");
  EXPECT_EQ(ParseError("{\"a\":1,\"a\":2}"), "t.json:1:8: duplicate key \"a\"");
  EXPECT_EQ(ParseError("{a:1}"), "t.json:1:2: expected a string key, found 'a'");
  EXPECT_EQ(ParseError("{\"a\" 1}"),
            "t.json:1:6: expected ':' after the key \"a\", found '1'");
  EXPECT_EQ(ParseError("[1 2]"),
            "t.json:1:4: expected ',' or ']' after an array element, found "
            "'2'");
  EXPECT_EQ(ParseError("1 2"), "t.json:1:3: unexpected text after the JSON value");
  EXPECT_EQ(ParseError(""), "t.json:1:1: expected a value, found end of input");
  EXPECT_EQ(ParseError("tru"), "t.json:1:1: expected a value, found 't'");
}

// Nesting is bounded so a hostile file cannot exhaust the stack.
TEST(JsonParseTest, BoundsNestingDepth) {
  std::string ok(kMaxDepth, '[');
  ok += std::string(kMaxDepth, ']');
  EXPECT_TRUE(Parse(ok).ok());
  std::string deep(kMaxDepth + 2, '[');
  deep += std::string(kMaxDepth + 2, ']');
  auto v = Parse(deep, "deep.json");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nesting deeper than 256"),
            std::string::npos);
}

// Integers print without fraction; other doubles print shortest and parse
// back bit-identical.
TEST(JsonWriteTest, NumbersRoundTrip) {
  EXPECT_EQ(FormatNumber(42), "42");
  EXPECT_EQ(FormatNumber(-7), "-7");
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(3.35e12), "3350000000000");
  EXPECT_EQ(FormatNumber(1e300), "1e+300");
  EXPECT_EQ(FormatNumber(std::nan("")), "null");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), "null");
  for (double d : {0.1, 1.0 / 3.0, 989.4e12, 2.2250738585072014e-308,
                   1.7976931348623157e308, -123456.789e-7, 9007199254740993.0,
                   5e-324}) {
    auto v = Parse(FormatNumber(d));
    ASSERT_TRUE(v.ok()) << FormatNumber(d);
    EXPECT_EQ(v->as_number(), d) << FormatNumber(d);
  }
}

// Control characters and quotes are escaped; the output parses back equal.
TEST(JsonWriteTest, EscapesStringsAndRoundTrips) {
  Value v;
  v.Set("s", std::string("q\"b\\n\n\x01\x1f") + "\xc3\xa9");
  v.Set("arr", Value(Array{1, "x", nullptr, true}));
  v.Set("empty_o", Value::MakeObject());
  v.Set("empty_a", Value::MakeArray());
  EXPECT_EQ(Write(v, {.indent = 0}),
            "{\"s\":\"q\\\"b\\\\n\\n\\u0001\\u001f\xc3\xa9\",\"arr\":[1,\"x\","
            "null,true],\"empty_o\":{},\"empty_a\":[]}");
  for (int indent : {0, 2, 4}) {
    auto back = Parse(Write(v, {.indent = indent}));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, v);
  }
}

// Indented output is one member per line, two spaces per level.
TEST(JsonWriteTest, IndentsNestedValues) {
  Value v;
  v.Set("a", 1);
  v.Set("b", Value(Array{2, 3}));
  EXPECT_EQ(Write(v), "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ]\n}\n");
}

// Set replaces an existing member in place instead of duplicating it.
TEST(JsonValueTest, SetReplacesExistingMember) {
  Value v;
  v.Set("a", 1);
  v.Set("b", 2);
  v.Set("a", 3);
  ASSERT_EQ(v.as_object().size(), 2u);
  EXPECT_EQ(v.as_object()[0].first, "a");
  EXPECT_EQ(v.Find("a")->as_number(), 3.0);
}

// Files: a missing file and a broken file are both named in the error;
// WriteTextFile + ParseFile round-trip.
TEST(JsonFileTest, ErrorsNameTheFile) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("json_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/x.json";
  auto missing = ParseFile(dir + "/nope.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir + "/nope.json: cannot open"),
            std::string::npos);

  ASSERT_TRUE(WriteTextFile(path, "{\"a\": [1,\n 2,,]}").ok());
  auto bad = ParseFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            path + ":2:4: expected a value, found ','");

  Value v;
  v.Set("k", 0.25);
  ASSERT_TRUE(WriteTextFile(path, Write(v)).ok());
  auto good = ParseFile(path);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, v);

  auto unwritable = WriteTextFile(dir + "/no/such/dir/x.json", "{}");
  EXPECT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.message().find("no/such/dir/x.json: cannot write"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rooftrace::json

namespace rooftrace::json {
namespace {

// Typed member reads: absent keeps the default, wrong type names the path.
TEST(JsonObjectReaderTest, NamesTheMemberPathInErrors) {
  auto v = Parse(R"({"n": 3, "s": "x", "f": 1.5, "neg": -1, "b": true,
                     "arr": [{"k": "bad"}], "o": {"deep": []}})");
  ASSERT_TRUE(v.ok());
  const std::string source = "r.json", fix = "re-run it";
  ObjectReader r(source, "", *v, fix);
  int64_t n = 7;
  EXPECT_TRUE(r.Int64("missing", &n).ok());
  EXPECT_EQ(n, 7);
  EXPECT_TRUE(r.Int64("n", &n).ok());
  EXPECT_EQ(n, 3);
  EXPECT_EQ(r.Int64("f", &n).message(),
            "r.json: f must be a whole number; re-run it");
  uint64_t u = 0;
  EXPECT_EQ(r.Uint64("neg", &u).message(),
            "r.json: neg must not be negative; re-run it");
  std::string s;
  EXPECT_EQ(r.String("n", &s).message(),
            "r.json: n must be a string (found number); re-run it");
  bool b = false;
  EXPECT_TRUE(r.Bool("b", &b).ok());
  EXPECT_TRUE(b);
  auto arr = r.ArrayOf("arr");
  ASSERT_TRUE(arr.ok());
  auto el = r.Element("arr", 0, (*arr)->as_array()[0]);
  ASSERT_TRUE(el.ok());
  double d = 0;
  EXPECT_EQ(el->Number("k", &d).message(),
            "r.json: arr[0].k must be a number (found string); re-run it");
  auto o = r.Object("o");
  ASSERT_TRUE(o.ok());
  auto child = r.Child("o", **o);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->Object("deep").status().message(),
            "r.json: o.deep must be an object; re-run it");
  EXPECT_EQ(r.Object("s").status().message(),
            "r.json: s must be an object; re-run it");
}

// NonNegative: absent keeps the default, a negative figure is refused with
// the member's path, zero and positive figures are read.
TEST(JsonObjectReaderTest, NonNegativeRefusesNegativeFigures) {
  auto v = Parse(R"({"rate": 2.5e12, "zero": 0, "neg": -1e-9, "s": "1"})");
  ASSERT_TRUE(v.ok());
  const std::string source = "p.json", fix = "re-run it";
  ObjectReader r(source, "dram", *v, fix);
  double d = 7;
  EXPECT_TRUE(r.NonNegative("missing", &d).ok());
  EXPECT_EQ(d, 7.0);
  EXPECT_TRUE(r.NonNegative("rate", &d).ok());
  EXPECT_EQ(d, 2.5e12);
  EXPECT_TRUE(r.NonNegative("zero", &d).ok());
  EXPECT_EQ(d, 0.0);
  EXPECT_EQ(r.NonNegative("neg", &d).message(),
            "p.json: dram.neg must not be negative; re-run it");
  EXPECT_EQ(d, 0.0);  // untouched by a refused member
  EXPECT_EQ(r.NonNegative("s", &d).message(),
            "p.json: dram.s must be a number (found string); re-run it");
}

}  // namespace
}  // namespace rooftrace::json

namespace rooftrace::json {
namespace {

// Every integer type converts without a cast and writes as an integer.
TEST(JsonValueTest, IntegerTypesConvert) {
  Value v;
  v.Set("i", 1);
  v.Set("u", 2u);
  v.Set("l", int64_t{-3});
  v.Set("ul", uint64_t{4});
  v.Set("ll", -5LL);
  v.Set("ull", 6ULL);
  v.Set("size", size_t{7});
  EXPECT_EQ(Write(v, {.indent = 0}),
            "{\"i\":1,\"u\":2,\"l\":-3,\"ul\":4,\"ll\":-5,\"ull\":6,"
            "\"size\":7}");
}

}  // namespace
}  // namespace rooftrace::json

namespace rooftrace::json {
namespace {

// JSON text is UTF-8 (RFC 8259 8.1): invalid bytes inside a string are
// refused at the byte, with the fix; valid multi-byte characters pass.
TEST(JsonParseTest, RefusesInvalidUtf8WhereItIs) {
  EXPECT_EQ(ParseError("[\"ok\", \"a\xff\"]"),
            "t.json:1:10: invalid UTF-8 (byte 0xff) inside a string; save "
            "the file as UTF-8");
  // An overlong '/', an encoded surrogate, a sequence cut short.
  EXPECT_EQ(ParseError("\"\xc0\xaf\""),
            "t.json:1:2: invalid UTF-8 (byte 0xc0) inside a string; save the "
            "file as UTF-8");
  EXPECT_EQ(ParseError("\"\xed\xa0\x80\""),
            "t.json:1:2: invalid UTF-8 (byte 0xed) inside a string; save the "
            "file as UTF-8");
  EXPECT_EQ(ParseError("{\"k\": \"\xe2\x82\"}"),
            "t.json:1:8: invalid UTF-8 (byte 0xe2) inside a string; save the "
            "file as UTF-8");
  // Outside a string any byte above 0x7f is simply not JSON.
  EXPECT_EQ(ParseError("\xef\xbb\xbf{}"),
            "t.json:1:1: expected a value, found byte 0xef");
  EXPECT_EQ(MustParse("\"\xf0\x9f\x98\x80 \xe2\x82\xac\"").as_string(),
            "\xf0\x9f\x98\x80 \xe2\x82\xac");
}

// Columns count bytes: a two-byte character before the error moves it by
// two.
TEST(JsonParseTest, ColumnsCountBytes) {
  EXPECT_EQ(ParseError("{\"\xc3\xa9\": 1,}"),
            "t.json:1:10: trailing comma before '}'");
  EXPECT_EQ(ParseError("[1,\n\n   2,\r\n  x]"),
            "t.json:4:3: expected a value, found 'x'");
}

// Keys are compared decoded, so an escaped spelling of a key is still a
// duplicate; large objects (searched through a set) refuse them too.
TEST(JsonParseTest, RefusesDuplicateKeysHoweverSpelled) {
  EXPECT_EQ(ParseError("{\"a\": 1, \"\\u0061\": 2}"),
            "t.json:1:10: duplicate key \"a\"");
  std::string big = "{";
  for (int i = 0; i < 100; ++i) big += "\"k" + std::to_string(i) + "\": 0, ";
  EXPECT_TRUE(Parse(big + "\"last\": 1}").ok());
  EXPECT_EQ(
      ParseError(big + "\"k42\": 1}"),
      "t.json:1:" + std::to_string(big.size() + 1) + ": duplicate key \"k42\"");
  // The same key in different objects is fine.
  EXPECT_TRUE(Parse("[{\"a\": 1}, {\"a\": 2}]").ok());
}

// Depth counts arrays and objects alike; the error points at the value that
// goes one level too deep.
TEST(JsonParseTest, NamesWhereNestingGoesTooDeep) {
  // Objects at depths 0..kMaxDepth-1, the number at depth kMaxDepth.
  std::string ok;
  for (int i = 0; i < kMaxDepth; ++i) ok += "{\"k\":";
  ok += "1" + std::string(kMaxDepth, '}');
  EXPECT_TRUE(Parse(ok).ok());
  // Arrays at depths 0..kMaxDepth, then one more value: an array or a
  // number, refused alike at its first byte.
  const std::string open(kMaxDepth + 1, '['), close(kMaxDepth + 1, ']');
  const std::string where = "t.json:1:" + std::to_string(kMaxDepth + 2);
  EXPECT_TRUE(Parse(open + close).ok());
  EXPECT_EQ(ParseError(open + "[]" + close),
            where + ": nesting deeper than 256 levels");
  EXPECT_EQ(ParseError(open + "7" + close),
            where + ": nesting deeper than 256 levels");
  // simdjson's own limit (1024) is far above ours; ours speaks first.
  std::string very_deep(5000, '[');
  EXPECT_EQ(ParseError(very_deep + std::string(5000, ']')),
            "t.json:1:" + std::to_string(kMaxDepth + 2) +
                ": nesting deeper than 256 levels");
}

// Integers beyond 64 bits are valid JSON; they read as the nearest double,
// as any number does.
TEST(JsonParseTest, ReadsIntegersBeyond64Bits) {
  Value v = MustParse(
      "[18446744073709551616, -9223372036854775809, "
      "123456789012345678901234567890, 18446744073709551615, 42]");
  ASSERT_EQ(v.as_array().size(), 5u);
  EXPECT_EQ(v.as_array()[0].as_number(), 18446744073709551616.0);
  EXPECT_EQ(v.as_array()[1].as_number(), -9223372036854775808.0);
  EXPECT_EQ(v.as_array()[2].as_number(), 1.2345678901234568e29);
  EXPECT_EQ(v.as_array()[3].as_number(), 18446744073709551615.0);
  EXPECT_EQ(v.as_array()[4].as_number(), 42.0);
  // FormatNumber writes 2^64 as an integer; it reads back.
  EXPECT_EQ(FormatNumber(18446744073709551616.0), "18446744073709551616");
  EXPECT_EQ(MustParse(FormatNumber(18446744073709551616.0)).as_number(),
            18446744073709551616.0);
  // Still refused: a bad number among them, named where it is.
  EXPECT_EQ(ParseError("[18446744073709551616, 01]"),
            "t.json:1:25: a number may not have a leading zero");
}

// Numbers read exactly as the standard library reads them (correctly
// rounded), across ints, fractions, exponents and subnormals.
TEST(JsonParseTest, NumbersMatchFromChars) {
  for (const char* text :
       {"0", "-0.0", "1", "-1", "9007199254740993", "0.1", "1e-7", "2.5E+3",
        "4.9406564584124654e-324", "2.2250738585072011e-308",
        "1.7976931348623157e308", "3.141592653589793238462643383279",
        "7205759403792793.5", "-1234567890123456789"}) {
    double expected = 0;
    std::from_chars(text, text + strlen(text), expected);
    EXPECT_EQ(MustParse(text).as_number(), expected) << text;
  }
}

// Beyond the smallest double a number reads as 0 (as simdjson reads it);
// beyond the largest it is refused.
TEST(JsonParseTest, TinyNumbersReadAsZeroHugeOnesAreRefused) {
  EXPECT_EQ(MustParse("1e-400").as_number(), 0.0);
  EXPECT_EQ(MustParse("-981e-4000000000").as_number(), 0.0);
  EXPECT_EQ(MustParse("0." + std::string(400, '0') + "1").as_number(), 0.0);
  EXPECT_EQ(MustParse("4.9406564584124654e-324").as_number(), 5e-324);
  EXPECT_EQ(MustParse("1.7976931348623158e308").as_number(),
            std::numeric_limits<double>::max());
  EXPECT_EQ(ParseError("[1.7976931348623159e308]"),
            "t.json:1:2: number out of the range of a double");
  EXPECT_EQ(ParseError("[1" + std::string(400, '0') + "]"),
            "t.json:1:2: number out of the range of a double");
  EXPECT_EQ(ParseError("[0.001e99999999999999999999]"),
            "t.json:1:2: number out of the range of a double");
}

// The writer emits only valid UTF-8: a stray byte becomes U+FFFD, so what
// we write always reads back.
TEST(JsonWriteTest, ReplacesInvalidUtf8) {
  Value v;
  v.Set("name", std::string("gpu\xff\xc3") + "\xa9\xe2\x82");
  const std::string text = Write(v, {.indent = 0});
  EXPECT_EQ(text,
            "{\"name\":\"gpu\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\"}");
  auto back = Parse(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->Find("name")->as_string(),
            "gpu\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd");
}

// A large document (arrays of objects, 200k values) parses whole, from a
// string and from a file.
TEST(JsonFileTest, ParsesALargeDocument) {
  std::string text = "{\"events\": [";
  for (int i = 0; i < 20000; ++i) {
    if (i) text += ",\n";
    text += "{\"name\": \"k" + std::to_string(i) +
            "\", \"ts\": " + std::to_string(i) +
            ".5, \"dur\": 2, \"args\": {\"grid\": [1, 2, 3]}}";
  }
  text += "]}";
  auto v = Parse(text);
  ASSERT_TRUE(v.ok()) << v.status().message();
  const Array& events = v->Find("events")->as_array();
  ASSERT_EQ(events.size(), 20000u);
  EXPECT_EQ(events[19999].Find("name")->as_string(), "k19999");
  EXPECT_EQ(events[19999].Find("ts")->as_number(), 19999.5);

  const std::string path = std::filesystem::temp_directory_path() /
                           ("json_large_" + std::to_string(::getpid()));
  ASSERT_TRUE(WriteTextFile(path, text).ok());
  auto from_file = ParseFile(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  EXPECT_EQ(*from_file, *v);
  // Cut short, the file is refused at its end.
  ASSERT_TRUE(WriteTextFile(path, text.substr(0, text.size() - 1)).ok());
  auto cut = ParseFile(path);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(),
            path +
                ":20000:" + std::to_string(text.size() - 1 - text.rfind('\n')) +
                ": expected ',' or '}' after an object member, found end of "
                "input");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rooftrace::json
