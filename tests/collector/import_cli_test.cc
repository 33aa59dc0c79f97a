// `rooftrace import`: one run per file with its provenance; every file is
// checked before anything is written; bad options and bad files exit 2 with
// one line naming them.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sqlite3.h>

#include "collector/commands.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/stream_feed.h"
#include "tests/support/temp_dir.h"
#include "tests/support/write_file.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using test_support::StoreQuery;

class ImportCliTest : public ::testing::Test {
 protected:
  std::string Trace(const std::string& name) {
    test_support::LlmTraceOptions o;
    test_support::TraceBuilder b(o.session);
    test_support::GenerateLlmTrace(o, &b);
    const std::string path = dir_.File(name);
    EXPECT_TRUE(b.WriteFile(path).ok());
    return path;
  }
  std::string Text(const std::string& name, const std::string& text) {
    const std::string path = dir_.File(name);
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return path;
  }
  // A gzip Kineto trace of `kernels` launch/kernel pairs: repeated events
  // compress about 50x, so a few MiB of JSON make a file of some KiB.
  std::string GzipKineto(const std::string& name, int kernels) {
    std::string text =
        "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 "
        "80GB HBM3\", \"numSms\": 132}],\n\"traceEvents\": [\n";
    for (int i = 1; i <= kernels; ++i) {
      const std::string c = std::to_string(i), ts = std::to_string(i * 10);
      text += "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
              "\"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": " +
              ts + ", \"dur\": 2, \"args\": {\"correlation\": " + c +
              "}},\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
              "\"pid\": 0, \"tid\": 7, \"ts\": " + ts +
              ", \"dur\": 3, \"args\": {\"device\": 0, \"stream\": 7, "
              "\"correlation\": " + c + "}}" + (i < kernels ? ",\n" : "\n");
    }
    text += "]}\n";
    return test_support::WriteGzipFile(dir_.File(name), text);
  }
  int Import(const std::vector<std::string>& args) {
    out_.clear();
    err_.clear();
    return testing::RunMain(ImportMain, "import", args, &out_, &err_);
  }

  test_support::TempDir dir_{"import_cli"};
  std::string store_ = dir_.File("runs.sqlite");
  std::string out_, err_;
};

// Two files, two runs, each saying where it came from.
TEST_F(ImportCliTest, OneRunPerFileWithProvenance) {
  const std::string a = Trace("a.rft"), b = Trace("b.rft");
  ASSERT_EQ(Import({a, b, "-o", store_, "--quiet"}), 0) << err_;
  EXPECT_NE(out_.find("a.rft (rft) -> run 1, 225 kernels"), std::string::npos)
      << out_;
  EXPECT_NE(out_.find("b.rft (rft) -> run 2, 225 kernels"), std::string::npos);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 450);
  EXPECT_EQ(q.Text("SELECT source_file FROM runs WHERE run_id=2"), b);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs WHERE length(source_sha256)=64 "
                  "AND source_format='rft'"),
            2);
}

// --label pairs are stored with every run the import writes, in the order
// given; a bad one (no '=', an empty key, a key twice) is refused before
// anything is written, exit 2, naming the word.
TEST_F(ImportCliTest, LabelsAreStoredWithEachRunAndBadOnesRefused) {
  // Scenario: two files labelled commit=abc123 and batch=8.
  const std::string a = Trace("a.rft"), b = Trace("b.rft");
  ASSERT_EQ(Import({a, b, "-o", store_, "-q", "--label", "commit=abc123",
                    "--label", "batch=8"}),
            0)
      << err_;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM run_labels"), 4);
  EXPECT_EQ(q.Text("SELECT group_concat(key || '=' || value, ' ') FROM "
                   "(SELECT * FROM run_labels WHERE run_id=2 ORDER BY rowid)"),
            "commit=abc123 batch=8");
  const std::string fresh = dir_.File("fresh.sqlite");
  for (const auto& [word, why] :
       std::vector<std::pair<std::string, std::string>>{
           {"commit", "no '='"},
           {"=abc", "an empty key"},
           {"commit=b", "key 'commit' given twice"}}) {
    EXPECT_EQ(Import({a, "-o", fresh, "-q", "--label", "commit=a", "--label",
                      word}),
              2)
        << word;
    EXPECT_NE(err_.find("--label '" + word + "': "), std::string::npos)
        << err_;
    EXPECT_NE(err_.find(why), std::string::npos) << err_;
    EXPECT_FALSE(std::filesystem::exists(fresh)) << word;
  }
}

// --store-kernels sampled keeps each group's first 8 launches, then every
// 64th (a trace of 200 decode steps: fewer rows), and every launch in the
// run's aggregates; a value it does not take exits 2 naming the flag,
// with nothing written.
TEST_F(ImportCliTest, StoreKernelsKeepsTheRowsItSays) {
  test_support::LlmTraceOptions o;
  o.decode_steps = 200;
  test_support::TraceBuilder b(o.session);
  const auto truth = test_support::GenerateLlmTrace(o, &b);
  const std::string a = dir_.File("long.rft");
  ASSERT_TRUE(b.WriteFile(a).ok());
  const int64_t kernels = static_cast<int64_t>(truth.kernels);
  const std::string fresh = dir_.File("fresh.sqlite");
  EXPECT_EQ(Import({a, "-o", fresh, "-q", "--store-kernels", "most"}), 2);
  EXPECT_NE(err_.find("--store-kernels most: unknown value"),
            std::string::npos)
      << err_;
  EXPECT_FALSE(std::filesystem::exists(fresh));
  ASSERT_EQ(Import({a, "-o", store_, "-q", "--store-kernels", "sampled"}), 0)
      << err_;
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT store_kernels FROM runs"), "sampled");
  EXPECT_EQ(q.Int("SELECT SUM(launches) FROM kernel_aggregates"), kernels);
  const int64_t kept = q.Int("SELECT COUNT(*) FROM kernel_rows");
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, kernels / 4);
  EXPECT_EQ(kept, q.Int("SELECT SUM(MIN(launches, 8) + launches / 64) FROM "
                        "kernel_aggregates"));
}

// --device overrides the roofs the file's device would give.
TEST_F(ImportCliTest, DeviceKeyOverridesTheRoofs) {
  ASSERT_EQ(Import({Trace("a.rft"), "-o", store_, "--device", "a100-80gb",
                    "-q"}),
            0)
      << err_;
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:a100-80gb");
  // A100 80GB: 312 TFLOP/s bf16 over 2039 GB/s.
  EXPECT_NEAR(q.Real("SELECT ridge_flops_per_byte FROM roofs WHERE "
                     "precision='bf16_tc'"),
              312e12 / 2039e9, 1e-9);
}

// --device-profile takes a datasheet key as analyze does ("mi300x",
// "datasheet:a100-80gb"): the key's roofs, not a refusal for a missing
// file; a name that is neither a file nor a key is refused, naming both.
TEST_F(ImportCliTest, DeviceProfileTakesADatasheetKey) {
  ASSERT_EQ(Import({Trace("a.rft"), "-o", store_, "--device-profile",
                    "mi300x", "-q"}),
            0)
      << err_;
  {
    StoreQuery q(store_);
    EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:mi300x");
  }
  const std::string other = dir_.File("other.sqlite");
  ASSERT_EQ(Import({Trace("b.rft"), "-o", other, "--device-profile",
                    "datasheet:a100-80gb", "-q"}),
            0)
      << err_;
  {
    StoreQuery q(other);
    EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:a100-80gb");
  }
  EXPECT_EQ(Import({Trace("c.rft"), "-o", dir_.File("bad.sqlite"),
                    "--device-profile", "gtx-9999", "-q"}),
            2);
  EXPECT_NE(err_.find("gtx-9999"), std::string::npos) << err_;
  EXPECT_NE(err_.find("not a datasheet key"), std::string::npos) << err_;
}

// A bad second file is found before the first is stored: nothing written,
// not even the store file.
TEST_F(ImportCliTest, EveryFileIsCheckedFirst) {
  const std::string good = Trace("a.rft");
  const std::string bad = Text("notes.txt", "not a trace\n");
  EXPECT_EQ(Import({good, bad, "-o", store_}), 2);
  EXPECT_NE(err_.find("notes.txt"), std::string::npos) << err_;
  EXPECT_NE(err_.find("not a trace format rooftrace knows"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(store_));
  EXPECT_EQ(Import({good, dir_.File("missing.json"), "-o", store_}), 2);
  EXPECT_NE(err_.find("missing.json"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(store_));
}

TEST_F(ImportCliTest, BadOptionsExit2WithOneLine) {
  const std::string good = Trace("a.rft");
  EXPECT_EQ(Import({good}), 2);
  EXPECT_NE(err_.find("-o runs.sqlite"), std::string::npos) << err_;
  EXPECT_EQ(Import({"-o", store_}), 2);
  EXPECT_NE(err_.find("no trace file"), std::string::npos);
  EXPECT_EQ(Import({good, "-o", store_, "--device", "gtx-9999"}), 2);
  EXPECT_NE(err_.find("rooftrace devices"), std::string::npos);
  EXPECT_EQ(Import({good, "-o", store_, "--format", "perfetto"}), 2);
  EXPECT_NE(err_.find("unknown trace format 'perfetto'"), std::string::npos);
  EXPECT_EQ(Import({good, "-o", store_, "--device", "h100-sxm",
                    "--device-profile", "p.json"}),
            2);
  EXPECT_NE(err_.find("not both"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(store_));
  EXPECT_EQ(Import({"--help"}), 0);
  EXPECT_NE(out_.find("one run per file"), std::string::npos);
}

// An Nsight Compute CSV is detected and imported; a truncated one, a CSV
// of another tool and an empty file exit 2 with one line naming the file,
// and the store keeps only the runs it had; a --counters file that is not
// an ncu CSV is refused before the store is touched.
TEST_F(ImportCliTest, NcuCsvAndItsBadInput) {
  const std::string header =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel "
      "Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\","
      "\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric "
      "Unit\",\"Metric Value\"\n";
  const std::string row =
      "\"0\",\"1\",\"a\",\"h\",\"k\",\"1\",\"7\",\"(1, 1, 1)\","
      "\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
      "\"dram__bytes.sum\",\"Kbyte\",\"1,5\"\n";
  const std::string good = Text("ncu.csv", "==PROF== Disconnected\n" +
                                               header + row);
  ASSERT_EQ(Import({good, "-o", store_, "--quiet"}), 0) << err_;
  EXPECT_NE(out_.find("ncu.csv (ncu) -> run 1, 1 kernels"), std::string::npos)
      << out_;
  const std::string both = header + row + row;
  for (const std::string& bad :
       {Text("cut.csv", both.substr(0, both.size() - 25)),
        Text("stats.csv", "\"Time (%)\",\"Name\"\n\"1\",\"k\"\n"),
        Text("empty.csv", "")}) {
    EXPECT_EQ(Import({bad, "-o", store_, "--quiet"}), 2) << bad;
    EXPECT_EQ(err_.rfind("rooftrace import: " + bad + ": ", 0), 0u) << err_;
    EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
  }
  EXPECT_EQ(Import({good, "--format", "ncu", "-o", store_, "--quiet"}), 0);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 2);
  const std::string fresh = dir_.File("fresh.sqlite");
  EXPECT_EQ(Import({Trace("t.rft"), "--counters", dir_.File("empty.csv"),
                    "-o", fresh, "--quiet"}),
            2);
  EXPECT_NE(err_.find("--counters " + dir_.File("empty.csv")),
            std::string::npos)
      << err_;
  EXPECT_FALSE(std::filesystem::exists(fresh));
}

// A gzip file that expands past the decompressed-size budget the user set
// (a decompression bomb, in small) is refused with exit 2 and one line
// naming the file, the budget and the option; no run is stored. A gzip
// file under the same budget is read.
TEST_F(ImportCliTest, GzipPastTheDecompressedBudgetIsRefused) {
  const std::string big = GzipKineto("big.json.gz", 20000);  // ~5 MiB
  ASSERT_LT(std::filesystem::file_size(big), 1u << 20);
  EXPECT_EQ(Import({big, "-o", store_, "-q", "--max-decompressed-mib", "1"}),
            2);
  EXPECT_EQ(err_.rfind("rooftrace import: " + big + ": ", 0), 0u) << err_;
  EXPECT_NE(err_.find("1 MiB"), std::string::npos) << err_;
  EXPECT_NE(err_.find("--max-decompressed-mib"), std::string::npos) << err_;
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
  if (std::filesystem::exists(store_)) {
    EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM runs"), 0);
  }

  const std::string small = GzipKineto("small.json.gz", 50);
  ASSERT_EQ(Import({small, "-o", store_, "-q", "--max-decompressed-mib", "1"}),
            0)
      << err_;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 50);
}

// A trace cut short (an .rft copy stopped half-way) is stored as an
// incomplete run with the reason and exits 3, the rule every command
// follows (collect --ingest, analyze, export); the next file is still
// read. Before, import exited 0 with a warning.
TEST_F(ImportCliTest, CutTraceIsStoredIncompleteAndExitsThree) {
  const std::string cut = Trace("cut.rft");
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
  const std::string whole = Trace("whole.rft");
  EXPECT_EQ(Import({cut, whole, "-o", store_, "-q"}), 3) << err_;
  EXPECT_NE(err_.find(cut + ": ends inside frame"), std::string::npos)
      << err_;
  EXPECT_NE(err_.find("run 1 stored INCOMPLETE"), std::string::npos) << err_;
  EXPECT_NE(out_.find("whole.rft (rft) -> run 2, 225 kernels"),
            std::string::npos)
      << out_;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs WHERE run_id=1"), 0);
  EXPECT_NE(q.Text("SELECT incomplete_reason FROM runs WHERE run_id=1")
                .find("ends inside frame"),
            std::string::npos);
  EXPECT_EQ(q.Int("SELECT complete FROM runs WHERE run_id=2"), 1);
  EXPECT_EQ(Import({"--help"}), 0);
  EXPECT_NE(out_.find("stored as an incomplete run with the reason and the "
                      "other files are still read (exit 3)"),
            std::string::npos)
      << out_;
}


// #29 D3: `import -o` naming another program's database (an nsys export,
// as a user who swapped the arguments would) refuses it with exit 2 and
// leaves it byte for byte as it was, with no -wal beside it. Its header
// used to be rewritten (journal_mode=WAL) before it was refused.
TEST_F(ImportCliTest, ForeignOutputIsRefusedAndLeftUntouched) {
  const std::string foreign = dir_.File("report.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE StringIds (id INTEGER, value TEXT);"
                         "INSERT INTO StringIds VALUES (1, 'kernel')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto bytes = [](const std::string& path) {
    std::string out;
    FILE* f = std::fopen(path.c_str(), "rb");
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
      out.append(buf, n);
    }
    std::fclose(f);
    return out;
  };
  const std::string before = bytes(foreign);
  EXPECT_EQ(Import({Trace("a.rft"), "-o", foreign, "-q"}), 2) << err_;
  EXPECT_NE(err_.find("another program"), std::string::npos) << err_;
  EXPECT_TRUE(bytes(foreign) == before);
  EXPECT_FALSE(std::filesystem::exists(foreign + "-wal"));
}


std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// #29 D14: the formats read front to back are read from a FIFO (what a
// shell's <(cat x) names) and from standard input ("-"), as from a file:
// a rooftrace trace through a FIFO, a gzip Kineto trace on standard input,
// a gzip Nsight Compute CSV through a FIFO. Importing a FIFO used to be
// refused (before that it blocked for ever); "-" was "No such file".
TEST_F(ImportCliTest, StreamsAreImportedLikeFiles) {
  const std::string fifo = dir_.File("trace.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  {
    test_support::FifoFeed feed(fifo, Slurp(Trace("t.rft")));
    EXPECT_EQ(Import({fifo, "-o", store_, "-q"}), 0) << err_;
  }
  {
    test_support::StdinFeed feed(Slurp(GzipKineto("k.json.gz", 50)));
    EXPECT_EQ(Import({"-", "-o", store_, "-q"}), 0) << err_;
  }
  {
    test_support::FifoFeed feed(
        fifo, Slurp(std::string(ROOFTRACE_TEST_DATA_DIR) +
                    "/ncu/h100_hf_generate_tiny.csv.gz"));
    EXPECT_EQ(Import({fifo, "-o", store_, "-q"}), 0) << err_;
  }
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT group_concat(source_format || ':' || "
                   "(SELECT COUNT(*) FROM kernels k WHERE k.run_id = "
                   "r.run_id), ' ') FROM runs r ORDER BY run_id"),
            "rft:225 kineto:50 ncu:249");
  // The private copies are gone once the command ends.
  EXPECT_FALSE(std::filesystem::exists(
      q.Text("SELECT source_file FROM runs WHERE run_id = 1")));
}

// #29 D14: what cannot be read as a stream is refused by what it is, with
// the fix, and nothing is stored: an SQLite database (an nsys export) on
// standard input (SQLite seeks), standard input named twice, and a stream
// past --max-decompressed-mib (read no further).
TEST_F(ImportCliTest, StreamsThatCannotBeReadAreRefusedClearly) {
  const std::string nsys = dir_.File("export.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(nsys.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (x)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  {
    test_support::StdinFeed feed(Slurp(nsys));
    EXPECT_EQ(Import({"-", "-o", store_, "-q"}), 2) << err_;
  }
  EXPECT_NE(err_.find("- (standard input): an SQLite database (an nsys "
                      "export or a rooftrace store) cannot be read from a "
                      "pipe"),
            std::string::npos)
      << err_;
  {
    test_support::StdinFeed feed(Slurp(Trace("t.rft")));
    EXPECT_EQ(Import({"-", "-", "-o", store_, "-q"}), 2) << err_;
  }
  EXPECT_NE(err_.find("named twice"), std::string::npos) << err_;
  const std::string fifo = dir_.File("big.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  {
    test_support::FifoFeed feed(fifo, std::string(3 << 20, 'x'));
    EXPECT_EQ(Import({fifo, "-o", store_, "-q", "--max-decompressed-mib",
                      "1"}),
              2)
        << err_;
  }
  EXPECT_NE(err_.find(fifo + ": more than 1 MiB came from the stream"),
            std::string::npos)
      << err_;
  EXPECT_NE(err_.find("--max-decompressed-mib N"), std::string::npos) << err_;
  EXPECT_FALSE(std::filesystem::exists(store_));
}

}  // namespace
}  // namespace rooftrace
