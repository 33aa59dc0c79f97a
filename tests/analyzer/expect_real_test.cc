// `analyze --expect` on traces recorded by other tools (read in place from
// ../shared/real-data; skipped when it is absent): the H100 BERT-small
// Kineto trace against `predict --model bert-small` (issue 17: an encoder's
// GEMMs matched by shape), and an Nsight Systems export, whose kernels carry
// no GEMM shape, where --expect must say so instead of printing an empty
// table.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "analyzer/commands.h"
#include "base/json.h"
#include "tests/support/real_data.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using test_support::RealDataFile;
using test_support::RealDataMissing;
using testing::RunMain;

constexpr char kBert[] =
    "tracelens/tests/traces/h100/"
    "gaunernst_bert-small-uncased__1016001.redacted.json.gz";
constexpr char kNsys[] =
    "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sanitized.sqlite";

// `predict --model bert-small --device h100-sxm --prompt 141 --format json`
// written to a file in `dir`; the trace ran one sequence of 141 tokens.
std::string BertPrediction(const std::string& dir) {
  std::string prediction, err;
  EXPECT_EQ(RunMain(PredictMain, "predict",
                    {"--model", "bert-small", "--device", "h100-sxm",
                     "--prompt", "141", "--format", "json"},
                    &prediction, &err),
            0)
      << err;
  const std::string path = dir + "/bert-small.json";
  std::ofstream(path) << prediction;
  return path;
}

struct Row {
  double kernels = 0, calls = 0, predicted_s = 0, measured_s = 0;
  std::string predicted_bound, shape;
};

// The 26 GEMM kernels of the BERT trace (4 layers x q, k, v, o, up, down;
// the masked-LM head's dense layer and its vocabulary projection) each
// find their op in the forward phase, predicted at their own shape.
TEST(ExpectRealTest, BertKinetoTraceGemmsMatchTheBertSmallPrediction) {
  const std::string trace = RealDataFile(kBert);
  if (trace.empty()) GTEST_SKIP() << RealDataMissing(kBert);
  const std::string dir = testing::TempDir("expect-bert");
  const std::string prediction = BertPrediction(dir);
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {trace, "--expect", prediction, "--format", "json"}, &out,
                    &err),
            0)
      << err;
  StatusOr<json::Value> doc = json::Parse(out, "expect.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message() << out;
  EXPECT_EQ(doc->Find("matched_kernels")->as_number(), 26);
  EXPECT_EQ(doc->Find("unmatched_gemm_kernels")->as_number(), 0);
  EXPECT_EQ(doc->Find("other_kernels")->as_number(), 34);  // of 60
  std::map<std::string, Row> rows;
  for (const json::Value& r : doc->Find("rows")->as_array()) {
    EXPECT_EQ(r.Find("phase")->as_string(), "forward");
    Row& row = rows[r.Find("op")->as_string()];
    row.kernels = r.Find("kernels")->as_number();
    row.calls = r.Find("calls")->as_number();
    row.predicted_s = r.Find("predicted_s")->as_number();
    row.measured_s = r.Find("measured_s")->as_number();
    row.predicted_bound = r.Find("predicted_bound")->as_string();
    row.shape = r.Find("shape")->as_string();
  }
  ASSERT_EQ(rows.size(), 4u) << out;
  // 141 x 512 x 512: q, k, v and o of each layer, and the head's dense
  // layer share one shape (and one row).
  const Row& proj = rows["o_proj / head_dense / qkv.q / qkv.k / qkv.v"];
  EXPECT_EQ(proj.kernels, 17);
  EXPECT_EQ(proj.calls, 17);
  EXPECT_EQ(rows["up"].kernels, 4);
  EXPECT_EQ(rows["down"].kernels, 4);
  EXPECT_EQ(rows["lm_head"].kernels, 1);
  // Predicted per call on the H100 SXM's datasheet roofs (3.35 TB/s,
  // 989.4 TFLOP/s bf16): all memory-bound at 141 tokens. lm_head: bytes
  // (141 x 512 + 512 x 30522 + 141 x 30522) x 2 = 40 006 116 -> 11.942 us.
  for (const auto& [op, row] : rows) {
    EXPECT_EQ(row.predicted_bound, "memory") << op;
  }
  EXPECT_NEAR(rows["lm_head"].predicted_s, 40006116 / 3.35e12, 1e-12);
  // (141 x 512 + 512 x 512 + 141 x 512) x 2 = 813 056 bytes per call.
  EXPECT_NEAR(proj.predicted_s, 17 * 813056 / 3.35e12, 1e-12);
  // (141 x 512 + 512 x 2048 + 141 x 2048) x 2 = 2 819 072 bytes per call.
  EXPECT_NEAR(rows["up"].predicted_s, 4 * 2819072 / 3.35e12, 1e-12);
  EXPECT_NEAR(rows["down"].predicted_s, 4 * 2819072 / 3.35e12, 1e-12);
  // Measured: the trace's kernel times (us), summed.
  EXPECT_NEAR(rows["lm_head"].measured_s, 41.28e-6, 1e-9);
  EXPECT_NEAR(rows["up"].measured_s,
              (6.047 + 6.144 + 5.984 + 6.336) * 1e-6, 1e-9);
  EXPECT_NEAR(rows["down"].measured_s,
              (8.16 + 8.224 + 8.225 + 8.48) * 1e-6, 1e-9);
}

// The table form names the prediction's workload as a forward pass, and
// the report above it the trace it read.
TEST(ExpectRealTest, BertTableSaysForwardPass) {
  const std::string trace = RealDataFile(kBert);
  if (trace.empty()) GTEST_SKIP() << RealDataMissing(kBert);
  const std::string dir = testing::TempDir("expect-bert-table");
  const std::string prediction = BertPrediction(dir);
  std::string out, err;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze", {trace, "--expect", prediction},
                    &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("batch 1, prompt 141 (one forward pass), tp 1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("forward  lm_head"), std::string::npos) << out;
  EXPECT_NE(out.find("  matched:   26 GEMM kernels"), std::string::npos)
      << out;
  // The report's header names the source (issue 15): the file's SHA-256
  // begins 9b012f118f5051d6.
  EXPECT_NE(out.find("  source:   kineto file " + trace +
                     " sha256 9b012f118f5051d6\u2026\n"),
            std::string::npos)
      << out;
}

// An nsys export has no cuBLAS arguments: no kernel has a shape. The table
// says so plainly, and csv / json (which would be empty) get a warning on
// stderr; the command still succeeds.
TEST(ExpectRealTest, NsysExportWithoutShapesSaysNothingToCompare) {
  const std::string nsys = RealDataFile(kNsys);
  if (nsys.empty()) GTEST_SKIP() << RealDataMissing(kNsys);
  const std::string dir = testing::TempDir("expect-nsys");
  const std::string prediction = BertPrediction(dir);
  std::string out, err;
  ASSERT_EQ(
      RunMain(AnalyzeMain, "analyze", {nsys, "--expect", prediction}, &out,
              &err),
      0)
      << err;
  EXPECT_NE(out.find("nothing to compare: none of the run's "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("kernels carries a GEMM shape"), std::string::npos);
  EXPECT_NE(err.find("warning: --expect"), std::string::npos) << err;
  std::string csv;
  err.clear();
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {nsys, "--expect", prediction, "--format", "csv"}, &csv,
                    &err),
            0)
      << err;
  EXPECT_NE(err.find("nothing to compare"), std::string::npos) << err;
}

}  // namespace
}  // namespace rooftrace
