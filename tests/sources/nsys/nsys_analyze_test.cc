// The analyzer's commands on an Nsight Systems export given directly:
// analyze --by nvtx|family|phase and export --perfetto on the recorded A100
// export, and bad input refused with exit 2 and one line on stderr.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/json.h"
#include "analyzer/commands.h"
#include "tests/support/test_store.h"
#include "tests/sources/nsys/export_builder.h"
#include "tests/support/real_data.h"

namespace rooftrace {
namespace {

using test_support::RealDataFile;
using test_support::RealDataMissing;
using testing::ReadFile;
using testing::RunMain;

constexpr char kRealExport[] =
    "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sanitized.sqlite";

class NsysAnalyzeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir("nsys_analyze");
    file_ = RealDataFile(kRealExport);
  }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  // `analyze FILE --by BY --format json`, parsed.
  json::Value Analyze(const std::string& file, const std::string& by) {
    std::string out, err;
    const int rc = RunMain(AnalyzeMain, "analyze",
                           {file, "--by", by, "--format", "json"}, &out, &err);
    EXPECT_EQ(rc, 0) << err;
    EXPECT_EQ(err, "");
    auto v = json::Parse(out, "analyze.json");
    EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.status().message());
    return v.ok() ? *v : json::Value();
  }

  // (group name, kernel count) of a report's groups.
  static std::map<std::string, double> Groups(const json::Value& v,
                                              const char* key) {
    std::map<std::string, double> out;
    for (const json::Value& g : v.Find("groups")->as_array()) {
      out[g.Find(key)->as_string()] += g.Find("count")->as_number();
    }
    return out;
  }

  std::string dir_, file_;
};

TEST_F(NsysAnalyzeTest, AnalyzeByNvtxFamilyAndPhase) {
  if (file_.empty()) GTEST_SKIP() << RealDataMissing(kRealExport);
  const json::Value by_family = Analyze(file_, "family");
  EXPECT_EQ(by_family.Find("input_kind")->as_string(), "trace");
  EXPECT_EQ(by_family.Find("device")->as_string(), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(by_family.Find("roof_source")->as_string(), "datasheet:a100-40gb");
  EXPECT_EQ(by_family.Find("kernel_count")->as_number(), 5);
  // The five saxpy kernels: 17704808 + 17733416 + 17700808 + 17720488 +
  // 17713960 ns on the GPU.
  EXPECT_EQ(by_family.Find("total_ns")->as_number(), 88573480);
  EXPECT_EQ(Groups(by_family, "family"),
            (std::map<std::string, double>{{"saxpy", 5}}));
  const json::Value by_nvtx = Analyze(file_, "nvtx");
  EXPECT_EQ(Groups(by_nvtx, "name"),
            (std::map<std::string, double>{{"saxpy", 5}}));
  const json::Value by_phase = Analyze(file_, "phase");
  double kernels = 0;
  for (const json::Value& p : by_phase.Find("phases")->as_array()) {
    kernels += p.Find("count")->as_number();
  }
  EXPECT_EQ(kernels, 5);
}

TEST_F(NsysAnalyzeTest, ExportPerfettoOfTheExport) {
  if (file_.empty()) GTEST_SKIP() << RealDataMissing(kRealExport);
  const std::string out_json = dir_ + "/trace.json";
  std::string out, err;
  ASSERT_EQ(RunMain(ExportMain, "export", {file_, "--perfetto", out_json}, &out,
                    &err),
            0)
      << err;
  auto v = json::Parse(ReadFile(out_json), out_json);
  ASSERT_TRUE(v.ok()) << v.status().message();
  std::map<std::string, int> by_cat;
  for (const json::Value& e : v->Find("traceEvents")->as_array()) {
    const json::Value* ph = e.Find("ph");
    const json::Value* cat = e.Find("cat");
    if (ph && cat && ph->as_string() == "X") ++by_cat[cat->as_string()];
  }
  EXPECT_EQ(by_cat["kernel"], 5);
  EXPECT_EQ(by_cat["memcpy"], 15);
  EXPECT_EQ(by_cat["nvtx"], 22);
}

// Exit 2 and a single line naming the file, what is wrong and what to do,
// for each kind of bad input.
TEST_F(NsysAnalyzeTest, BadInputExitsTwoWithOneLine) {
  std::vector<std::pair<std::string, std::string>> bad;  // file, message
  // Another program's SQLite file.
  {
    test_support::ExportBuilder b(dir_ + "/other.sqlite");
    b.Exec(
        "CREATE TABLE StringIds (id INTEGER, value TEXT);"
        "CREATE TABLE notes (body TEXT);");
  }
  bad.push_back({dir_ + "/other.sqlite",
                 "an SQLite file but not a rooftrace store (no schema_info "
                 "table); pass a store written by `rooftrace profile -o` or "
                 "`rooftrace collect --store`, or a .rft trace"});
  // An nsys export without CUDA tables.
  {
    test_support::ExportBuilder b(dir_ + "/nvtx_only.sqlite");
    b.Exec(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
        "INTEGER, text TEXT, globalTid INTEGER);");
  }
  bad.push_back({dir_ + "/nvtx_only.sqlite",
                 "this Nsight Systems export has no CUDA activity (no "
                 "CUPTI_ACTIVITY_KIND_KERNEL, _RUNTIME, _MEMCPY or _MEMSET "
                 "table); record CUDA with `nsys profile --trace=cuda,nvtx -o "
                 "report APP` and export it with `nsys export --type sqlite "
                 "report.nsys-rep`"});
  const std::string damaged =
      " (database disk image is malformed); export it again with `nsys "
      "export --type sqlite REPORT.nsys-rep`";
  if (!file_.empty()) {
    const std::string bytes = ReadFile(file_);
    // Cut after its first 64 KiB (its table list lies further on).
    std::ofstream(dir_ + "/cut.sqlite", std::ios::binary)
        << bytes.substr(0, 64 * 1024);
    bad.push_back(
        {dir_ + "/cut.sqlite",
         "the SQLite file is damaged while reading its schema" + damaged});
    // Its first page (the root of the table list) overwritten with noise.
    std::string corrupt = bytes;
    for (size_t i = 100; i < 4096; ++i) {
      corrupt[i] = static_cast<char>((i * 131) & 0xff);
    }
    std::ofstream(dir_ + "/corrupt.sqlite", std::ios::binary) << corrupt;
    bad.push_back(
        {dir_ + "/corrupt.sqlite",
         "the SQLite file is damaged while reading its schema" + damaged});
    // The page of CUPTI_ACTIVITY_KIND_RUNTIME (page 29 of this file, its
    // only one) overwritten past its header byte.
    std::string rows = bytes;
    for (size_t i = 28 * 4096 + 8; i < 29 * 4096; ++i) {
      rows[i] = static_cast<char>((i * 7) & 0xff);
    }
    std::ofstream(dir_ + "/rows.sqlite", std::ios::binary) << rows;
    bad.push_back({dir_ + "/rows.sqlite",
                   "the SQLite file is damaged while reading rows" + damaged});
  }
  for (const auto& [f, message] : bad) {
    std::string out, err;
    EXPECT_EQ(RunMain(AnalyzeMain, "analyze", {f}, &out, &err), 2) << f;
    EXPECT_EQ(err, "rooftrace analyze: " + f + ": " + message + "\n");
    EXPECT_EQ(out, "") << f;
  }
  // And export: the same refusal, nothing written.
  std::string out, err;
  EXPECT_EQ(
      RunMain(ExportMain, "export",
              {dir_ + "/nvtx_only.sqlite", "--perfetto", dir_ + "/never.json"},
              &out, &err),
      2);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/never.json"));
}

}  // namespace
}  // namespace rooftrace
