// The source registry: formats are told by content (gzip read through),
// unknown ones are refused with the list of formats rooftrace reads, and a
// file read as one run records where it came from (format, file, SHA-256).
#include "sources/registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/file_digest.h"
#include "sources/rft/rft_source.h"
#include "sources/rft/testing/trace_builder.h"
#include "store/store.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"
#include "tests/support/write_file.h"

namespace rooftrace {
namespace {

using test_support::GenerateLlmTrace;
using test_support::LlmTraceOptions;
using test_support::StoreQuery;
using test_support::TraceBuilder;

class RegistryTest : public ::testing::Test {
 protected:
  std::string WriteText(const std::string& name, const std::string& text) {
    return test_support::WriteTextFile(dir_.File(name), text);
  }
  std::string WriteGzip(const std::string& name, const std::string& text) {
    return test_support::WriteGzipFile(dir_.File(name), text);
  }
  std::string Trace() {
    LlmTraceOptions o;
    TraceBuilder b(o.session);
    GenerateLlmTrace(o, &b);
    const std::string path = dir_.File("llm.rft");
    EXPECT_TRUE(b.WriteFile(path).ok());
    return path;
  }

  test_support::TempDir dir_{"registry"};
};

// A .rft is found by its first frame, whatever its name says.
TEST_F(RegistryTest, DetectsTheWireStreamByContent) {
  const std::string trace = Trace();
  const std::string renamed = dir_.File("trace.json");
  std::rename(trace.c_str(), renamed.c_str());
  auto s = DetectSource(renamed);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->format(), "rft");
}

// Text that starts with a newline (0x0A, the wire's first tag byte) is not
// taken for a trace: Kineto JSON and CSV files often start that way.
TEST_F(RegistryTest, NewlineLedJsonAndCsvAreNotTakenForRft) {
  const RftSource rft;
  const std::string json =
      "\n{\n  \"schemaVersion\": 1,\n  \"traceEvents\": []\n}\n";
  const std::string csv =
      "\n\"ID\",\"Process ID\",\"Kernel Name\",\"Metric Name\"\n";
  for (const std::string& text : {json, csv, std::string("\n"),
                                  std::string("\n\n\n")}) {
    EXPECT_FALSE(rft.Detect("x", text)) << text;
  }
  auto s = DetectSource(WriteText("newline.json", json));
  EXPECT_FALSE(s.ok() && (*s)->format() == "rft");
  s = DetectSource(WriteText("newline.csv", csv));
  EXPECT_FALSE(s.ok() && (*s)->format() == "rft");
  // A real trace's head still is one, and so is its first frame alone.
  auto head = ReadHead(Trace());
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(rft.Detect("x", *head));
  EXPECT_TRUE(rft.Detect("x", head->substr(0, 32)));
}

// gzip is read through: the head is the decompressed bytes.
TEST_F(RegistryTest, ReadHeadDecompressesGzip) {
  const std::string text(100000, 'x');
  const std::string gz = WriteGzip("x.gz", "{\"traceEvents\": [" + text);
  auto head = ReadHead(gz, 1024);
  ASSERT_TRUE(head.ok()) << head.status().message();
  ASSERT_EQ(head->size(), 1024u);
  EXPECT_EQ(head->substr(0, 16), "{\"traceEvents\": ");
  // A plain file is passed through unchanged.
  auto plain = ReadHead(WriteText("p.txt", "hello"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "hello");
}

// A gzip file cut short is refused, naming the file.
TEST_F(RegistryTest, TruncatedGzipIsRefused) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += std::to_string(i * 7919) + ",";
  const std::string gz = WriteGzip("cut.json.gz", text);
  std::FILE* f = std::fopen(gz.c_str(), "rb");
  std::string bytes(1 << 20, '\0');
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  const std::string cut = WriteText("cut2.json.gz", bytes.substr(0, 2000));
  auto head = ReadHead(cut, 1 << 20);
  ASSERT_FALSE(head.ok());
  EXPECT_NE(head.status().message().find("cut2.json.gz"), std::string::npos);
  EXPECT_NE(head.status().message().find("damaged"), std::string::npos)
      << head.status().message();
}

// #29 Messages: a file that cannot be read (/proc/self/mem fails with EIO
// at offset 0) is said to be unreadable, with the system's reason, not "the
// gzip file is damaged".
TEST_F(RegistryTest, UnreadableFileIsNotCalledDamagedGzip) {
  const std::string mem = "/proc/self/mem";
  if (access(mem.c_str(), R_OK) != 0) GTEST_SKIP() << mem << " not readable";
  auto source = DetectSource(mem);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().message().find("gzip"), std::string::npos)
      << source.status().message();
  EXPECT_NE(source.status().message().find(mem + ": cannot read it ("),
            std::string::npos)
      << source.status().message();
}

// Unknown content: the file is named and the formats are listed.
TEST_F(RegistryTest, UnknownContentNamesTheFileAndTheFormats) {
  auto s = DetectSource(WriteText("notes.txt", "just some notes\n"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("notes.txt"), std::string::npos);
  EXPECT_NE(s.status().message().find("rft ("), std::string::npos)
      << s.status().message();
  auto empty = DetectSource(WriteText("empty", ""));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  auto missing = DetectSource(dir_.File("nope.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto dir = DetectSource(dir_.path().string());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("directory"), std::string::npos);
  auto unknown = FindSource("perfetto");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown trace format "
                                            "'perfetto'"),
            std::string::npos);
}

// A whole file, plain or gzip, with zero padding after its content.
TEST_F(RegistryTest, ReadWholeFileDecompressesAndPads) {
  std::string text;
  for (int i = 0; i < 300000; ++i) text += std::to_string(i) + ",";
  size_t size = 0;
  auto plain = ReadWholeFile(WriteText("t.txt", text), 64, &size);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(size, text.size());
  EXPECT_EQ(plain->size(), text.size() + 64);
  EXPECT_EQ(plain->substr(0, size), text);
  EXPECT_EQ(plain->substr(size), std::string(64, '\0'));
  auto gz = ReadWholeFile(WriteGzip("t.gz", text), 8, &size);
  ASSERT_TRUE(gz.ok()) << gz.status().message();
  EXPECT_EQ(size, text.size());
  EXPECT_EQ(gz->substr(0, size), text);
  // Cut short: refused, not read as a shorter trace.
  std::FILE* f = std::fopen(dir_.File("t.gz").c_str(), "rb");
  std::string bytes(1 << 22, '\0');
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  auto cut = ReadWholeFile(WriteText("cut.gz", bytes.substr(0, bytes.size() / 2)),
                           0, &size);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(cut.status().message().find("cut.gz"), std::string::npos);
  EXPECT_EQ(ReadWholeFile(dir_.File("none"), 0, &size).status().code(),
            StatusCode::kNotFound);
}

// FileStream hands out a file in blocks of any size: plain or gzip, the
// same bytes ReadWholeFile reads, its size told beforehand; a gzip file
// cut short and one past its budget give ReadWholeFile's errors.
TEST_F(RegistryTest, FileStreamReadsWhatReadWholeFileReads) {
  std::string text;
  for (int i = 0; i < 300000; ++i) text += std::to_string(i) + ",";
  const std::string plain = WriteText("s.txt", text);
  const std::string gz = WriteGzip("s.gz", text);
  for (const std::string& path : {plain, gz}) {
    SCOPED_TRACE(path);
    auto stream = FileStream::Open(path);
    ASSERT_TRUE(stream.ok()) << stream.status().message();
    EXPECT_EQ((*stream)->size_hint(), text.size());
    std::string read;
    char block[7];
    for (;;) {
      auto n = (*stream)->Read(block, sizeof block);
      ASSERT_TRUE(n.ok()) << n.status().message();
      if (*n == 0) break;
      read.append(block, *n);
    }
    EXPECT_EQ(read, text);
  }

  std::FILE* f = std::fopen(gz.c_str(), "rb");
  std::string bytes(1 << 22, '\0');
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  const std::string cut = WriteText("cut.gz", bytes.substr(0, bytes.size() / 2));
  size_t size = 0;
  auto whole_cut = ReadWholeFile(cut, 0, &size);
  auto stream_cut = FileStream::Open(cut);
  ASSERT_TRUE(stream_cut.ok());
  Status cut_error = OkStatus();
  std::string buf(1 << 16, '\0');
  for (;;) {
    auto n = (*stream_cut)->Read(buf.data(), buf.size());
    if (!n.ok()) {
      cut_error = n.status();
      break;
    }
    if (*n == 0) break;
  }
  ASSERT_FALSE(whole_cut.ok());
  ASSERT_FALSE(cut_error.ok());
  EXPECT_EQ(cut_error.message(), whole_cut.status().message());

  GzipBudget budget;
  budget.max_bytes = text.size() - 1;
  auto whole_over = ReadWholeFile(gz, 0, &size, budget);
  auto stream_over = FileStream::Open(gz, budget);
  ASSERT_TRUE(stream_over.ok());
  Status over_error = OkStatus();
  size_t handed = 0;
  for (;;) {
    auto n = (*stream_over)->Read(buf.data(), buf.size());
    if (!n.ok()) {
      over_error = n.status();
      break;
    }
    if (*n == 0) break;
    handed += *n;
  }
  ASSERT_FALSE(whole_over.ok());
  ASSERT_FALSE(over_error.ok());
  EXPECT_EQ(over_error.message(), whole_over.status().message());
  EXPECT_LE(handed, budget.max_bytes);
}

// A gzip file's trailer gives the content's size, so the text is read
// into one buffer without growing it (growing copies the whole text); a
// trailer that lies, too small or absurdly large, only costs a regrowth or
// a bounded overshoot, never the content.
TEST_F(RegistryTest, GzipTrailerSizeIsOnlyAHint) {
  std::string text;
  for (int i = 0; i < 300000; ++i) text += std::to_string(i) + ",";
  const std::string path = WriteGzip("t.gz", text);
  size_t size = 0;
  auto gz = ReadWholeFile(path, 64, &size);
  ASSERT_TRUE(gz.ok()) << gz.status().message();
  EXPECT_EQ(size, text.size());
  EXPECT_EQ(gz->size(), text.size() + 64);
  EXPECT_LE(gz->capacity(), text.size() + 64 + 64);

  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string bytes(1 << 22, '\0');
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  for (const char* trailer : {"\x10\0\0\0", "\xff\xff\xff\xff"}) {
    std::string lying = bytes;
    lying.replace(lying.size() - 4, 4, trailer, 4);
    const std::string lpath = WriteText("lying.gz", lying);
    auto read = ReadWholeFile(lpath, 8, &size);
    // zlib checks ISIZE at the end of the stream: a wrong one is damage.
    if (!read.ok()) {
      EXPECT_EQ(read.status().code(), StatusCode::kCorrupt);
      continue;
    }
    EXPECT_EQ(size, text.size());
    EXPECT_EQ(read->substr(0, size), text);
    EXPECT_LE(read->capacity(), 64 * lying.size() + 64);
  }
}

// One file, one run, with its provenance: the format, the file and the
// SHA-256 sha256sum would print.
TEST_F(RegistryTest, ARunRecordsWhereItCameFrom) {
  const std::string trace = Trace();
  const std::string store_path = dir_.File("runs.sqlite");
  auto store = Store::Open(store_path);
  ASSERT_TRUE(store.ok());
  auto source = DetectSource(trace);
  ASSERT_TRUE(source.ok());
  auto r = ReadSourceInto(**source, trace, {}, store->get());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kernels, 225u);
  store->reset();
  StoreQuery q(store_path);
  EXPECT_EQ(q.Text("SELECT source_format FROM runs"), "rft");
  EXPECT_EQ(q.Text("SELECT source_file FROM runs"), trace);
  EXPECT_EQ(q.Text("SELECT origin FROM runs"), "ingest:" + trace);
  const std::string sha = q.Text("SELECT source_sha256 FROM runs");
  EXPECT_EQ(sha.size(), 64u);
  EXPECT_EQ(sha, *Sha256OfFile(trace));
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 225);
}

// --capture maps a PyTorch trace's graph replays; given with a rooftrace
// stream it is refused, naming both files, and nothing is stored.
TEST_F(RegistryTest, CaptureIsRefusedForOtherFormats) {
  const std::string trace = Trace();
  const std::string store_path = dir_.File("capture.sqlite");
  auto store = Store::Open(store_path);
  ASSERT_TRUE(store.ok());
  auto source = DetectSource(trace);
  ASSERT_TRUE(source.ok());
  SourceOptions o;
  o.capture_paths = {dir_.File("capture.json")};
  auto r = ReadSourceInto(**source, trace, o, store->get());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(trace + ": --capture " +
                                      dir_.File("capture.json") +
                                      ": only a PyTorch profiler (Kineto) "
                                      "trace"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("this file is rft"), std::string::npos);
  store->reset();
  StoreQuery q(store_path);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 0);
}

// The digest is the standard SHA-256 (FIPS 180-2 test vector "abc").
TEST(FileDigestTest, Sha256OfKnownBytes) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  test_support::TempDir dir("digest");
  const std::string path = dir.File("abc");
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs("abc", f);
  std::fclose(f);
  EXPECT_EQ(*Sha256OfFile(path), Sha256Hex("abc"));
  EXPECT_EQ(Sha256OfFile(dir.File("missing")).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace rooftrace
