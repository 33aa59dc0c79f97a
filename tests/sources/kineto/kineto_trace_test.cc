// The parsed form of a Kineto trace (sources/kineto/kineto_trace.h) is
// the same whether the "traceEvents" array is read in chunks or whole:
// every recorded trace, read with chunks of a few KiB against one read
// whole, field by field; and the layouts the chunks cannot follow (a bare
// array, a chunk boundary inside a string, damage) fall back to the whole
// read, with its errors.
#include "sources/kineto/kineto_trace.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "sources/file_reader.h"
#include "tests/support/real_data.h"

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
      EXPECT_EQ(xi.in[j].dims[0], yi.in[j].dims[0]);
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

// Every recorded trace read in chunks of 4 KiB (hundreds of chunks) gives
// what reading it whole gives.
TEST(KinetoTraceChunksTest, RecordedTracesReadTheSameInChunks) {
  int read = 0;
  for (const char* relative :
       {"tracelens/tests/traces/h100/"
        "gaunernst_bert-small-uncased__1016001.redacted.json.gz",
        "hta/tests/data/critical_path/alexnet/"
        "benchmark_result_2869224_1695835535_trace.json.gz",
        "hta/tests/data/cupti_profiler/"
        "benchmark_result_924719_1679055439_trace.json.gz",
        "nano-vllm-fork/profile_results/decode_gpu_0.json",
        "deepseek-profile-data/train.json"}) {
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

}  // namespace
}  // namespace rooftrace::kineto
