// The parsed form of a Kineto trace (sources/kineto/kineto_trace.h) is
// the same whether the "traceEvents" array is read in chunks or whole:
// every recorded trace, read with chunks of a few KiB against one read
// whole, field by field; and the layouts the chunks cannot follow (a bare
// array, a chunk boundary inside a string, damage) fall back to the whole
// read, with its errors. The streamed read of a file (KinetoTrace::Read:
// a window of the file at a time, never the whole text) gives the same,
// wherever its windows and chunks end, for plain and gzip files, and the
// whole read's errors for damaged ones.
#include "sources/kineto/kineto_trace.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "sources/file_reader.h"
#include "sources/kineto/op_shapes.h"
#include "tests/support/real_data.h"
#include "tests/support/temp_dir.h"
#include "tests/support/write_file.h"

namespace rooftrace::kineto {
namespace {

using test_support::RealDataFile;

constexpr size_t kWhole = SIZE_MAX;

StatusOr<std::unique_ptr<KinetoTrace>> ParseText(const std::string& json,
                                                 size_t chunk_bytes) {
  std::string text = json;
  text.append(KinetoTrace::Padding(), '\0');
  return KinetoTrace::Parse(std::move(text), json.size(), "trace.json",
                            chunk_bytes);
}

StatusOr<std::unique_ptr<KinetoTrace>> ParseFile(const std::string& path,
                                                 size_t chunk_bytes) {
  size_t content = 0;
  RT_ASSIGN_OR_RETURN(std::string text,
                      ReadWholeFile(path, KinetoTrace::Padding(), &content));
  return KinetoTrace::Parse(std::move(text), content, path, chunk_bytes);
}

// Every field rooftrace reads, event by event.
void ExpectSame(const KinetoTrace& a, const KinetoTrace& b) {
  ASSERT_EQ(a.gpu.size(), b.gpu.size());
  for (size_t i = 0; i < a.gpu.size(); ++i) {
    const GpuEvent& x = a.gpu[i];
    const GpuEvent& y = b.gpu[i];
    SCOPED_TRACE("gpu event " + std::to_string(i));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.start_ns, y.start_ns);
    EXPECT_EQ(x.end_ns, y.end_ns);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.stream, y.stream);
    EXPECT_EQ(x.correlation, y.correlation);
    EXPECT_EQ(x.external_id, y.external_id);
    EXPECT_EQ(x.grid[0], y.grid[0]);
    EXPECT_EQ(x.block[0], y.block[0]);
    EXPECT_EQ(x.registers_per_thread, y.registers_per_thread);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.comm, y.comm);
    EXPECT_EQ(x.metrics_end - x.metrics_begin, y.metrics_end - y.metrics_begin);
  }
  ASSERT_EQ(a.host.size(), b.host.size());
  for (size_t i = 0; i < a.host.size(); ++i) {
    const HostEvent& x = a.host[i];
    const HostEvent& y = b.host[i];
    SCOPED_TRACE("host event " + std::to_string(i));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.start_ns, y.start_ns);
    EXPECT_EQ(x.end_ns, y.end_ns);
    EXPECT_EQ(x.tid, y.tid);
    EXPECT_EQ(x.correlation, y.correlation);
    EXPECT_EQ(x.external_id, y.external_id);
    EXPECT_EQ(x.input_count, y.input_count);
    const OpInputs xi = a.InputsOf(x), yi = b.InputsOf(y);
    ASSERT_EQ(xi.count, yi.count);
    for (int j = 0; j < xi.count; ++j) {
      EXPECT_EQ(xi.in[j].rank, yi.in[j].rank);
      for (int d = 0; d < kMaxRank; ++d) {
        EXPECT_EQ(xi.in[j].dims[d], yi.in[j].dims[d]);
      }
      EXPECT_EQ(xi.in[j].list_size, yi.in[j].list_size);
      EXPECT_EQ(xi.in[j].list_elements, yi.in[j].list_elements);
      EXPECT_EQ(xi.in[j].type, yi.in[j].type);
      EXPECT_EQ(xi.in[j].concrete, yi.in[j].concrete);
    }
  }
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (size_t i = 0; i < a.metrics.size(); ++i) {
    EXPECT_EQ(a.metrics[i].name, b.metrics[i].name);
    EXPECT_EQ(a.metrics[i].value, b.metrics[i].value);
  }
  EXPECT_EQ(a.flow_ends.size(), b.flow_ends.size());
  EXPECT_EQ(a.comms.size(), b.comms.size());
  EXPECT_EQ(a.process_names, b.process_names);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    EXPECT_EQ(a.devices[i].name, b.devices[i].name);
    EXPECT_EQ(a.devices[i].sm_count, b.devices[i].sm_count);
  }
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.schema_version, b.schema_version);
  EXPECT_EQ(a.counts.events, b.counts.events);
  EXPECT_EQ(a.counts.modelled_ops_without_shapes,
            b.counts.modelled_ops_without_shapes);
}

// Recorded Kineto traces (under ../shared/real-data) of training and
// serving, plain and gzip, that the chunked and streamed reads must read as
// the whole read does.
constexpr const char* kRecordedTraces[] = {
    "tracelens/tests/traces/h100/"
    "gaunernst_bert-small-uncased__1016001.redacted.json.gz",
    "hta/tests/data/critical_path/alexnet/"
    "benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/tests/data/cupti_profiler/"
    "benchmark_result_924719_1679055439_trace.json.gz",
    "tracelens/tests/traces/inference/sglang_decode/"
    "sglang_Qwen3-8B_decode.json.gz",
    "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/"
    "graph_execution.json.gz",
    "nano-vllm-fork/profile_results/decode_gpu_0.json",
    "deepseek-profile-data/train.json",
};

// Every recorded trace read in chunks of 4 KiB (hundreds of chunks) gives
// what reading it whole gives.
TEST(KinetoTraceChunksTest, RecordedTracesReadTheSameInChunks) {
  int read = 0;
  for (const char* relative : kRecordedTraces) {
    SCOPED_TRACE(relative);
    const std::string file = RealDataFile(relative);
    if (file.empty()) continue;
    ++read;
    auto whole = ParseFile(file, kWhole);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    auto chunked = ParseFile(file, 4096);
    ASSERT_TRUE(chunked.ok()) << chunked.status().message();
    EXPECT_GT((*whole)->gpu.size(), 0u);
    EXPECT_EQ((*whole)->counts.chunks, 0u);
    EXPECT_GT((*chunked)->counts.chunks, 10u);
    ExpectSame(**whole, **chunked);
  }
  if (read == 0) {
    GTEST_SKIP() << test_support::RealDataMissing("deepseek-profile-data");
  }
}

std::string Event(int i, const std::string& name) {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
         "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(100 + i) +
         ", \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, "
         "\"correlation\": " + std::to_string(i + 1) + "}}";
}

std::string Events(int n, const std::string& name) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? ",\n" : "") + Event(i, name);
  return out;
}

// Chunks of 64 bytes: every event a chunk of its own; fields after the
// array (deviceProperties, rank) are read too.
TEST(KinetoTraceChunksTest, TopLevelFieldsAfterTheArrayAreRead) {
  const std::string json =
      "{\"schemaVersion\": 1, \"traceEvents\": [" + Events(20, "k") +
      "], \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100\", "
      "\"numSms\": 132}], \"distributedInfo\": {\"rank\": 5}, "
      "\"traceName\": \"trace.json\"}";
  auto whole = ParseText(json, kWhole);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  auto chunked = ParseText(json, 64);
  ASSERT_TRUE(chunked.ok()) << chunked.status().message();
  EXPECT_EQ((*chunked)->gpu.size(), 20u);
  EXPECT_GT((*chunked)->counts.chunks, 10u);
  EXPECT_EQ((*chunked)->rank, 5);
  EXPECT_EQ((*chunked)->devices.size(), 1u);
  ExpectSame(**whole, **chunked);
}

// A kernel name holding "},{" where a chunk would end, a ']' in a string
// after the array, a bare array of events, and a file with the events'
// brackets unbalanced: each read as a whole, with the whole read's result
// or error.
TEST(KinetoTraceChunksTest, LayoutsChunksCannotFollowAreReadWhole) {
  const std::string tricky =
      "{\"traceEvents\": [" + Events(10, "a},{b},\\n{c") + "]}";
  auto whole = ParseText(tricky, kWhole);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  auto chunked = ParseText(tricky, 16);
  ASSERT_TRUE(chunked.ok()) << chunked.status().message();
  EXPECT_EQ((*chunked)->gpu[3].name, "a},{b},\n{c");
  ExpectSame(**whole, **chunked);

  const std::string bracket = "{\"traceEvents\": [" + Events(10, "k") +
                              "], \"traceName\": \"a]b\"}";
  auto bracket_whole = ParseText(bracket, kWhole);
  ASSERT_TRUE(bracket_whole.ok());
  auto bracket_chunked = ParseText(bracket, 64);
  ASSERT_TRUE(bracket_chunked.ok()) << bracket_chunked.status().message();
  ExpectSame(**bracket_whole, **bracket_chunked);

  const std::string bare = "[" + Events(10, "k") + "]";
  auto bare_whole = ParseText(bare, kWhole);
  ASSERT_TRUE(bare_whole.ok());
  auto bare_chunked = ParseText(bare, 64);
  ASSERT_TRUE(bare_chunked.ok()) << bare_chunked.status().message();
  EXPECT_EQ((*bare_chunked)->counts.chunks, 0u);
  ExpectSame(**bare_whole, **bare_chunked);

  std::string broken = "{\"traceEvents\": [" + Events(10, "k") + "]}";
  broken.erase(broken.find("}}") + 1, 1);  // an event's object never closes
  auto broken_whole = ParseText(broken, kWhole);
  auto broken_chunked = ParseText(broken, 64);
  ASSERT_FALSE(broken_whole.ok());
  ASSERT_FALSE(broken_chunked.ok());
  EXPECT_EQ(broken_chunked.status().message(),
            broken_whole.status().message());
}

// Values older profilers wrote that are not JSON (here "inf" in the 15th
// event's args, "-Infinity" in the 3rd) make the first read fail: they are
// blanked, counted, and the text read again, in chunks as before; a word
// that is no such value still breaks the read as it did.
TEST(KinetoTraceChunksTest, NonJsonValuesAreBlankedAndTheTextReadAgain) {
  std::string json = "{\"traceEvents\": [" + Events(20, "k") + "]}";
  const auto put_after = [&](int nth, const std::string& value) {
    size_t at = 0;
    for (int i = 0; i <= nth; ++i) at = json.find("\"correlation\": ", at + 1);
    json.insert(json.find('}', at), ", \"bw\": " + value);
  };
  put_after(14, "inf");
  put_after(2, "-Infinity");
  auto chunked = ParseText(json, 64);
  ASSERT_TRUE(chunked.ok()) << chunked.status().message();
  EXPECT_EQ((*chunked)->counts.non_json_values, 2u);
  EXPECT_GT((*chunked)->counts.chunks, 10u);
  EXPECT_EQ((*chunked)->gpu.size(), 20u);

  std::string wrong = "{\"traceEvents\": [" + Events(3, "k") + "]}";
  wrong.insert(wrong.find("\"correlation\": ") + 15, "infinite ");
  auto refused = ParseText(wrong, 64);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("JSON syntax error at byte"),
            std::string::npos)
      << refused.status().message();
}

// Files for the streamed read.
class KinetoTraceStreamTest : public ::testing::Test {
 protected:
  std::string WriteText(const std::string& name, const std::string& text) {
    return test_support::WriteTextFile(dir_.File(name), text);
  }
  std::string WriteGzip(const std::string& name, const std::string& text) {
    return test_support::WriteGzipFile(dir_.File(name), text);
  }
  test_support::TempDir dir_{"kineto_stream"};
};

// Every recorded trace, plain and gzip, streamed in windows and chunks of
// 4 KiB, gives what reading it whole gives; a file of at most one chunk
// is read whole.
TEST_F(KinetoTraceStreamTest, RecordedTracesStreamTheSame) {
  int read = 0;
  for (const char* relative : kRecordedTraces) {
    SCOPED_TRACE(relative);
    const std::string file = RealDataFile(relative);
    if (file.empty()) continue;
    ++read;
    auto whole = ParseFile(file, kWhole);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    auto streamed = KinetoTrace::Read(file, GzipBudget(), 4096);
    ASSERT_TRUE(streamed.ok()) << streamed.status().message();
    EXPECT_GT((*streamed)->counts.chunks, 10u);
    EXPECT_EQ((*streamed)->content_bytes, (*whole)->content_bytes);
    ExpectSame(**whole, **streamed);
    auto small = KinetoTrace::Read(file);  // one 16 MiB chunk: whole
    ASSERT_TRUE(small.ok()) << small.status().message();
    EXPECT_EQ((*small)->counts.chunks, 0u);
    ExpectSame(**whole, **small);
  }
  if (read == 0) {
    GTEST_SKIP() << test_support::RealDataMissing("deepseek-profile-data");
  }
}

// Names with escapes (\", \\, \u00e9, a surrogate pair), "},{" and ']'
// inside strings, every window and chunk size from 16 to 400 bytes: each
// event is split across windows at every offset, some chunks end inside a
// string (that read falls back to the whole one) and the answer is always
// the whole read's.
TEST_F(KinetoTraceStreamTest, AnyWindowAndChunkSizeGivesTheSame) {
  std::string events;
  const char* names[] = {"plain", "q\\\"uote\\\\d", "caf\\u00e9 \\ud83d\\ude00",
                         "a},{b", "x]y", "t\\t\\n"};
  for (int i = 0; i < 30; ++i) {
    events += (i ? ",\n  " : "") + Event(i, names[i % 6]);
  }
  const std::string json =
      " {\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": "
      "0, \"name\": \"NVIDIA H100\", \"numSms\": 132}],\n\"traceEvents\" : "
      "[\n  " + events + "\n], \"distributedInfo\": {\"rank\": 3}, "
      "\"traceName\": \"a]b\"}\n";
  const std::string path = WriteText("names.json", json);
  auto whole = ParseText(json, kWhole);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ((*whole)->gpu.size(), 30u);
  EXPECT_EQ((*whole)->gpu[1].name, "q\"uote\\d");
  EXPECT_EQ((*whole)->gpu[2].name, "caf\xC3\xA9 \xF0\x9F\x98\x80");
  int streamed_reads = 0;
  for (size_t chunk = 16; chunk <= 400; ++chunk) {
    SCOPED_TRACE("chunk bytes " + std::to_string(chunk));
    auto streamed = KinetoTrace::Read(path, GzipBudget(), chunk);
    ASSERT_TRUE(streamed.ok()) << streamed.status().message();
    streamed_reads += (*streamed)->counts.chunks > 1;
    EXPECT_EQ((*streamed)->rank, 3);
    ExpectSame(**whole, **streamed);
  }
  // Most sizes stream to the end (the others met "},{" in a name).
  EXPECT_GT(streamed_reads, 200);
}

// A gzip file streams the same as its plain text, and its budget still
// holds: past it, the read is refused with ReadWholeFile's message (the
// decompression bomb check) before anything is returned.
TEST_F(KinetoTraceStreamTest, GzipStreamsWithinItsBudget) {
  const std::string json = "{\"traceEvents\": [" + Events(400, "k") +
                           "], \"distributedInfo\": {\"rank\": 1}}";
  const std::string gz = WriteGzip("t.json.gz", json);
  auto whole = ParseText(json, kWhole);
  ASSERT_TRUE(whole.ok());
  auto streamed = KinetoTrace::Read(gz, GzipBudget(), 1024);
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  EXPECT_GT((*streamed)->counts.chunks, 10u);
  EXPECT_EQ((*streamed)->content_bytes, json.size());
  ExpectSame(**whole, **streamed);

  GzipBudget budget;
  budget.max_bytes = json.size() / 2;
  budget.raise_with = "--max-decompressed-mib N";
  auto refused = KinetoTrace::Read(gz, budget, 1024);
  ASSERT_FALSE(refused.ok());
  size_t content = 0;
  auto whole_refused = ReadWholeFile(gz, 64, &content, budget);
  ASSERT_FALSE(whole_refused.ok());
  EXPECT_EQ(refused.status().message(), whole_refused.status().message());
  EXPECT_NE(refused.status().message().find("--max-decompressed-mib"),
            std::string::npos);
  budget.max_bytes = json.size();  // exactly the content: read
  EXPECT_TRUE(KinetoTrace::Read(gz, budget, 1024).ok());
}

// A file cut short (plain, or a gzip stream cut short) gives the error a
// whole read gives: the syntax error with its byte offset, or the damaged
// gzip; a missing file is NotFound.
TEST_F(KinetoTraceStreamTest, TruncatedFilesGiveTheWholeReadsError) {
  const std::string json = "{\"traceEvents\": [" + Events(200, "k") + "]}";
  const std::string cut = json.substr(0, json.size() * 2 / 3);
  const std::string plain = WriteText("cut.json", cut);
  auto streamed = KinetoTrace::Read(plain, GzipBudget(), 512);
  auto whole = ParseFile(plain, 512);
  ASSERT_FALSE(streamed.ok());
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(streamed.status().message(), whole.status().message());
  EXPECT_NE(streamed.status().message().find("JSON syntax error at byte"),
            std::string::npos)
      << streamed.status().message();

  std::string bytes;
  {
    const std::string gz = WriteGzip("full.json.gz", json);
    FILE* f = std::fopen(gz.c_str(), "rb");
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
    std::fclose(f);
  }
  const std::string gz_cut =
      WriteText("cut.json.gz", bytes.substr(0, bytes.size() / 2));
  auto gz_streamed = KinetoTrace::Read(gz_cut, GzipBudget(), 512);
  size_t content = 0;
  auto gz_whole = ReadWholeFile(gz_cut, 64, &content);
  ASSERT_FALSE(gz_streamed.ok());
  ASSERT_FALSE(gz_whole.ok());
  EXPECT_EQ(gz_streamed.status().message(), gz_whole.status().message());
  EXPECT_EQ(gz_streamed.status().code(), StatusCode::kCorrupt);

  auto missing = KinetoTrace::Read(dir_.File("none.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// Values that are not JSON (inf) make a chunk fail: the file is read again
// whole, blanked and counted as Parse does; a bare array of events and a
// file that is no Chrome trace are read whole too, with Parse's answer.
TEST_F(KinetoTraceStreamTest, WhatChunksCannotReadIsReadWhole) {
  std::string json = "{\"traceEvents\": [" + Events(50, "k") + "]}";
  json.insert(json.find('}', json.find("\"correlation\": 30")),
              ", \"bw\": inf");
  auto streamed = KinetoTrace::Read(WriteText("inf.json", json), GzipBudget(),
                                    256);
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  EXPECT_EQ((*streamed)->counts.non_json_values, 1u);
  EXPECT_EQ((*streamed)->gpu.size(), 50u);

  const std::string bare = "[" + Events(50, "k") + "]";
  auto bare_streamed =
      KinetoTrace::Read(WriteText("bare.json", bare), GzipBudget(), 256);
  ASSERT_TRUE(bare_streamed.ok()) << bare_streamed.status().message();
  EXPECT_EQ((*bare_streamed)->counts.chunks, 0u);
  EXPECT_EQ((*bare_streamed)->gpu.size(), 50u);

  const std::string other = "{\"events\": [" + Events(50, "k") + "]}";
  auto other_streamed =
      KinetoTrace::Read(WriteText("other.json", other), GzipBudget(), 256);
  auto other_whole = ParseText(other, 256);
  ASSERT_FALSE(other_streamed.ok());
  ASSERT_FALSE(other_whole.ok());
  EXPECT_EQ(other_streamed.status().message().substr(
                other_streamed.status().message().find(':')),
            other_whole.status().message().substr(
                other_whole.status().message().find(':')));
}

// An operator's inputs come back from the packed form as read: six
// dimensions with a zero among them, a scalar, a list of tensors, a
// shape of too many dimensions (rank -1, its first six kept), types and
// concrete values.
// The inputs of the one operator `name` with `args` (the JSON of its
// "args" members after "External id"), read back from a parsed trace,
// which is kept: the inputs' strings are its.
struct OneOp {
  std::unique_ptr<KinetoTrace> trace;
  OpInputs in;
};
OneOp InputsOfOneOp(const std::string& name, const std::string& args) {
  const std::string op =
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name +
      "\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5, \"args\": {"
      "\"External id\": 7, " + args + "}}";
  auto t = ParseText("{\"traceEvents\": [" + op + ", " + Event(0, "k") + "]}",
                     kWhole);
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok() || (*t)->host.size() != 1u) {
    ADD_FAILURE() << "not one operator";
    return OneOp();
  }
  OneOp one;
  one.trace = std::move(*t);
  one.in = one.trace->InputsOf(one.trace->host[0]);
  return one;
}

TEST(KinetoTraceInputsTest, PackedInputsComeBackAsRead) {
  const OneOp op = InputsOfOneOp(
      "aten::cat",
      "\"Input Dims\": [[2, 0, 3, 4, 5, 6], [], "
      "[[2, 3], [4, 5]], [1, 2, 3, 4, 5, 6, 7]], \"Input type\": "
      "[\"float\", \"Scalar\", \"TensorList\", \"c10::BFloat16\"], "
      "\"Concrete Inputs\": [\"\", \"0.5\", \"\", \"\"]");
  const OpInputs& in = op.in;
  ASSERT_EQ(in.count, 4);
  EXPECT_EQ(in.in[0].rank, 6);
  const int64_t dims[] = {2, 0, 3, 4, 5, 6};
  for (int d = 0; d < 6; ++d) EXPECT_EQ(in.in[0].dims[d], dims[d]);
  EXPECT_EQ(in.in[0].type, "float");
  EXPECT_EQ(in.in[1].rank, 0);
  EXPECT_EQ(in.in[1].concrete, "0.5");
  EXPECT_EQ(in.in[2].rank, -1);
  EXPECT_EQ(in.in[2].list_size, 2);
  EXPECT_EQ(in.in[2].list_elements, 26);
  EXPECT_EQ(in.in[2].type, "TensorList");
  EXPECT_EQ(in.in[3].rank, -1);
  for (int d = 0; d < 6; ++d) EXPECT_EQ(in.in[3].dims[d], d + 1);
  EXPECT_EQ(in.in[3].type, "c10::BFloat16");
}

// "Input Strides" are kept where they store fewer elements than the shape
// (a stride-0 dimension: gather's expanded index), and nowhere else: a
// contiguous tensor and a sliced view come back without strides. An
// input's strides of another rank than its dims are not trusted.
TEST(KinetoTraceInputsTest, BroadcastStridesAreKept) {
  const OneOp op = InputsOfOneOp(
      "aten::gather",
      "\"Input Dims\": [[151936, 4096], [], "
      "[15360, 4096], [], [15360, 4096], [8, 4]], \"Input type\": "
      "[\"c10::BFloat16\", \"Scalar\", \"long int\", \"Scalar\", "
      "\"c10::BFloat16\", \"float\"], \"Input Strides\": [[4096, 1], [], "
      "[1, 0], [], [6144, 1], [0]], \"Concrete Inputs\": [\"\", \"0\", "
      "\"\", \"False\", \"\", \"\"]");
  const OpInputs& in = op.in;
  ASSERT_EQ(in.count, 6);
  EXPECT_FALSE(in.in[0].has_strides);  // contiguous
  ASSERT_TRUE(in.in[2].has_strides);   // the expanded index
  EXPECT_EQ(in.in[2].strides[0], 1);
  EXPECT_EQ(in.in[2].strides[1], 0);
  EXPECT_EQ(in.in[2].dims[0], 15360);
  EXPECT_EQ(in.in[2].dims[1], 4096);
  EXPECT_EQ(in.in[2].concrete, "");
  EXPECT_EQ(in.in[3].concrete, "False");
  EXPECT_FALSE(in.in[4].has_strides);  // a slice: every element once
  EXPECT_FALSE(in.in[5].has_strides);  // one stride for two dims
  EXPECT_EQ(StoredElementsOf(in.in[2]), 15360);
  EXPECT_EQ(StoredElementsOf(in.in[4]), 15360 * 4096);
}

// Strides may come before the dims; a list's, a fractional one and a
// non-number are not trusted (the input reads as contiguous).
TEST(KinetoTraceInputsTest, StridesInAnyOrderAndOddOnesIgnored) {
  const OneOp op = InputsOfOneOp(
      "aten::add",
      "\"Input Strides\": [[0, 1], [[1], [1]], [0.5, 1], [\"x\", 0]], "
      "\"Input Dims\": [[64, 1024], [[2], [3]], [64, 1024], [64, 1024]], "
      "\"Input type\": [\"float\", \"TensorList\", \"float\", "
      "\"float\"]");
  const OpInputs& in = op.in;
  ASSERT_EQ(in.count, 4);
  ASSERT_TRUE(in.in[0].has_strides);
  EXPECT_EQ(StoredElementsOf(in.in[0]), 1024);
  EXPECT_FALSE(in.in[1].has_strides);
  EXPECT_FALSE(in.in[2].has_strides);
  EXPECT_FALSE(in.in[3].has_strides);
  EXPECT_EQ(StoredElementsOf(in.in[3]), 64 * 1024);
}

}  // namespace
}  // namespace rooftrace::kineto
