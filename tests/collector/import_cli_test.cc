// `rooftrace import`: one run per file with its provenance; every file is
// checked before anything is written; bad options and bad files exit 2 with
// one line naming them.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "collector/commands.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"
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

}  // namespace
}  // namespace rooftrace
