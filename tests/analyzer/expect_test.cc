// `analyze --expect`: a run's GEMM kernels matched to a prediction's ops by
// shape (either operand order, fused or split projections, decode attention
// over the generated KV lengths, split-K kernels of one call counted once),
// per-op predicted vs measured time and bound, and the analyze CLI around
// it, with bad prediction files refused.
#include "analyzer/expect.h"

#include <gtest/gtest.h>

#include <fstream>

#include "analyzer/predict.h"
#include "base/json.h"
#include "analyzer/commands.h"
#include "tests/support/test_store.h"

namespace rooftrace::analyzer {
namespace {

using rooftrace::testing::KernelSpec;
using rooftrace::testing::TestStore;

constexpr double kPeak = 989.4e12, kBandwidth = 3350e9;

// Llama-2-7B, batch 2, prompt 96, 4 new tokens, on an H100 SXM.
std::string PredictionJson() {
  StatusOr<ModelConfig> m = LoadModelConfig("Llama-2-7B");
  StatusOr<PredictDevice> d = ResolvePredictDevice("h100-sxm", "", 0);
  PredictOptions o;
  o.batch = 2;
  o.prompt = 96;
  o.generate = 4;
  StatusOr<Prediction> p = Predict(*m, o, *d);
  EXPECT_TRUE(p.ok());
  return json::Write(PredictionToJson(*p));
}

Expectation Expected() {
  StatusOr<Expectation> e = ParseExpectation(PredictionJson(), "p.json");
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? *e : Expectation{};
}

// The roofline time of one bf16 GEMM on the H100 datasheet roofs.
double Roof(double m, double n, double k, double batch = 1) {
  return std::max(2 * m * n * k * batch / kPeak,
                  (m * k + k * n + m * n) * 2 * batch / kBandwidth);
}

KernelRow Kernel(std::string_view shape, int64_t ns, std::string_view phase,
                  std::string_view bound, std::optional<int64_t> corr) {
  KernelRow k;
  k.shape = shape;
  k.duration_ns = ns;
  k.phase = phase;
  k.bound = bound;
  k.correlation_id = corr;
  return k;
}

const ExpectRow* Row(const ExpectReport& r, const std::string& phase,
                     const std::string& op) {
  for (const ExpectRow& row : r.rows) {
    if (row.phase == phase && row.op == op) return &row;
  }
  return nullptr;
}

// Shapes parse with or without batch; anything else is not a shape.
TEST(ExpectTest, ParsesKernelShapes) {
  const std::optional<KernelShape> s =
      ParseKernelShape("m=8 n=4096 k=11008 batch=3");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->m, 8);
  EXPECT_EQ(s->n, 4096);
  EXPECT_EQ(s->k, 11008);
  EXPECT_EQ(s->batch, 3);
  EXPECT_EQ(ParseKernelShape("m=1 n=2 k=3")->batch, 1);
  EXPECT_FALSE(ParseKernelShape("m=1 n=2").has_value());
  EXPECT_FALSE(ParseKernelShape("m=x n=2 k=3").has_value());
  EXPECT_FALSE(ParseKernelShape("m=0 n=2 k=3").has_value());
  EXPECT_FALSE(ParseKernelShape("gemm").has_value());
}

// The prediction's GEMM forms: fused ops, their split parts (identical
// shapes share one entry), and decode attention as a range of KV lengths.
TEST(ExpectTest, FormsOfThePrediction) {
  const Expectation e = Expected();
  EXPECT_EQ(e.model, "Llama-2-7B");
  EXPECT_EQ(e.workload, "batch 2, prompt 96, generate 4, tp 1");
  EXPECT_EQ(e.dram_bytes_per_s, kBandwidth);
  std::vector<std::string> prefill;
  for (const ExpectedGemm& g : e.gemms) {
    if (g.phase == "prefill") prefill.push_back(g.label);
  }
  EXPECT_EQ(prefill, (std::vector<std::string>{
                         "qkv", "o_proj / qkv.q / qkv.k / qkv.v",
                         "attention.score", "attention.value", "gate_up",
                         "gate_up.gate / gate_up.up", "down", "lm_head"}));
  for (const ExpectedGemm& g : e.gemms) {
    if (g.phase == "decode" && g.label == "attention.score") {
      EXPECT_EQ(g.m_lo, 1);
      EXPECT_EQ(g.n_lo, 97);   // first decode step: prompt + 1 keys
      EXPECT_EQ(g.n_hi, 99);   // last: prompt + generate - 1
      EXPECT_EQ(g.batch, 64);  // sequences x heads
    }
  }
}

// Kernels of both operand orders, split projections, split-K pairs and
// decode attention land on their ops with hand-computed predictions.
TEST(ExpectTest, MatchesKernelsToOpsByShape) {
  ExpectMatcher m(Expected());
  // Fused QKV as cuBLAS sees x W^T: m = out features, n = tokens; a split-K
  // reduction kernel of the same call follows.
  m.Add(Kernel("m=12288 n=192 k=4096 batch=1", 100000, "prefill", "memory", 1));
  m.Add(Kernel("m=12288 n=192 k=4096 batch=1", 5000, "prefill", "memory", 1));
  // Framework order (m = tokens), the o_proj shape.
  m.Add(Kernel("m=192 n=4096 k=4096 batch=1", 20000, "prefill", "compute", 2));
  // Decode: gate/up fused, then an unfused attention score product at KV
  // length 98.
  m.Add(Kernel("m=22016 n=2 k=4096 batch=1", 70000, "decode", "memory", 3));
  m.Add(Kernel("m=98 n=1 k=128 batch=64", 4000, "decode", "memory", 4));
  // A GEMM of no predicted shape and a kernel without a shape.
  m.Add(Kernel("m=7 n=7 k=7 batch=1", 1000, "prefill", "latency", 5));
  m.Add(Kernel("", 9000, "prefill", "", 6));
  const ExpectReport r = m.Finish();

  const ExpectRow* qkv = Row(r, "prefill", "qkv");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->kernels, 2);
  EXPECT_EQ(qkv->calls, 1);
  EXPECT_DOUBLE_EQ(qkv->measured_s, 105e-6);
  EXPECT_DOUBLE_EQ(qkv->predicted_s, Roof(192, 12288, 4096));  // 31.62 us
  EXPECT_NEAR(*qkv->efficiency(), Roof(192, 12288, 4096) / 105e-6, 1e-12);
  EXPECT_EQ(qkv->predicted_bound(), "memory");
  EXPECT_EQ(qkv->measured_bound(), "memory");

  const ExpectRow* o = Row(r, "prefill", "o_proj / qkv.q / qkv.k / qkv.v");
  ASSERT_NE(o, nullptr);
  EXPECT_DOUBLE_EQ(o->predicted_s, Roof(192, 4096, 4096));
  EXPECT_EQ(o->measured_bound(), "compute");

  const ExpectRow* up = Row(r, "decode", "gate_up");
  ASSERT_NE(up, nullptr);
  EXPECT_DOUBLE_EQ(up->predicted_s, Roof(2, 22016, 4096));  // 53.84 us
  EXPECT_EQ(up->predicted_bound(), "memory");

  const ExpectRow* score = Row(r, "decode", "attention.score");
  ASSERT_NE(score, nullptr);
  EXPECT_DOUBLE_EQ(score->predicted_s, Roof(1, 98, 128, 64));

  EXPECT_EQ(r.matched_kernels, 5);
  EXPECT_DOUBLE_EQ(r.matched_s, 199e-6);
  EXPECT_EQ(r.unmatched_gemm_kernels, 1);
  ASSERT_EQ(r.unmatched_shapes.size(), 1u);
  EXPECT_EQ(r.unmatched_shapes[0].shape, "m=7 n=7 k=7 batch=1");
  EXPECT_EQ(r.other_kernels, 1);
  EXPECT_DOUBLE_EQ(r.other_s, 9e-6);
  // Report order: prefill before decode, ops in prediction order
  // (attention before the MLP).
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].op, "qkv");
  EXPECT_EQ(r.rows[2].op, "attention.score");
  EXPECT_EQ(r.rows[3].op, "gate_up");
}

// A decode-shaped GEMM that is also a prefill shape goes to the phase the
// run's step classification gave the kernel.
TEST(ExpectTest, PrefersTheKernelsPhaseWhenShapesCoincide) {
  StatusOr<ModelConfig> model = LoadModelConfig("Llama-2-7B");
  StatusOr<PredictDevice> d = ResolvePredictDevice("h100-sxm", "", 0);
  PredictOptions o;
  o.batch = 1;
  o.prompt = 1;  // prefill and decode GEMMs have M = 1 alike
  o.generate = 2;
  StatusOr<Prediction> p = Predict(*model, o, *d);
  ASSERT_TRUE(p.ok());
  StatusOr<Expectation> e =
      ParseExpectation(json::Write(PredictionToJson(*p)), "p.json");
  ASSERT_TRUE(e.ok());
  ExpectMatcher m(*e);
  m.Add(Kernel("m=4096 n=1 k=11008 batch=1", 40000, "decode", "memory", 1));
  m.Add(Kernel("m=4096 n=1 k=11008 batch=1", 41000, "prefill", "memory", 2));
  const ExpectReport r = m.Finish();
  ASSERT_NE(Row(r, "decode", "down"), nullptr);
  ASSERT_NE(Row(r, "prefill", "down"), nullptr);
  EXPECT_EQ(Row(r, "decode", "down")->kernels, 1);
  EXPECT_EQ(Row(r, "prefill", "down")->kernels, 1);
}

// Files that are not predictions are refused with the fix.
TEST(ExpectTest, RefusesWhatIsNotAPrediction) {
  StatusOr<Expectation> e = ParseExpectation("{\"format\": \"x\"}", "a.json");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "--expect a.json: not a rooftrace prediction (no \"format\": "
            "\"rooftrace-prediction\"); write the prediction with `rooftrace "
            "predict ... --format json > prediction.json`");
  e = ParseExpectation("{\"format\": \"rooftrace-prediction\", \"version\": 9}",
                       "b.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("prediction version 9 is newer"),
            std::string::npos);
  e = ParseExpectation("not json", "c.json");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message().rfind("--expect c.json:1:1:", 0), 0u);
  e = LoadExpectation("/nonexistent/p.json");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message().rfind("--expect /nonexistent/p.json: cannot "
                                       "open",
                                       0),
            0u);
}

class ExpectCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rooftrace::testing::TempDir("expect-cli");
    store_ = dir_ + "/run.sqlite";
    prediction_ = dir_ + "/prediction.json";
    std::ofstream(prediction_) << PredictionJson();
    TestStore s(store_);
    s.AddRun(1, "NVIDIA H100 80GB HBM3", "datasheet:h100-sxm");
    s.AddRoof(1, "bf16_tc", kPeak, kBandwidth);
    auto add = [&](const std::string& shape, int64_t start, int64_t ns,
                   const std::string& phase, int64_t corr) {
      KernelSpec k;
      k.name = "sm90_xmma_gemm_bf16bf16_bf16f32";
      k.shape = shape;
      k.start_ns = start;
      k.duration_ns = ns;
      k.phase = phase;
      k.bound = "memory";
      k.correlation_id = corr;
      k.precision = "bf16_tc";
      s.AddKernel(k);
    };
    add("m=12288 n=192 k=4096 batch=1", 0, 100000, "prefill", 1);
    add("m=22016 n=2 k=4096 batch=1", 200000, 70000, "decode", 2);
    add("m=22016 n=2 k=4096 batch=1", 300000, 64000, "decode", 3);
    s.Close();
  }
  void TearDown() override { rooftrace::testing::RemoveTempDir(dir_); }

  std::string dir_, store_, prediction_;
};

// Table: the report, then the comparison section with its rows.
TEST_F(ExpectCliTest, TableAppendsTheComparison) {
  std::string out, err;
  ASSERT_EQ(rooftrace::testing::RunMain(AnalyzeMain, "analyze",
                                        {store_, "--expect", prediction_}, &out,
                                        &err),
            0)
      << err;
  EXPECT_NE(out.find("rooftrace analyze: " + store_), std::string::npos);
  EXPECT_NE(out.find("Measured vs predicted (" + prediction_ +
                     ": Llama-2-7B, batch 2, prompt 96, generate 4, tp 1, "
                     "roofs datasheet:h100-sxm)"),
            std::string::npos)
      << out;
  // gate_up decode: 2 calls, predicted 2 x 53.84 us, measured 134 us.
  const double pred = 2 * Roof(2, 22016, 4096);
  char expected[200];
  std::snprintf(expected, sizeof(expected),
                "decode   gate_up        2      2         %.3f        0.134"
                "          %.1f",
                pred * 1e3, pred / 134e-6 * 100);
  EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
}

// JSON: the comparison alone, parseable, with the same numbers.
TEST_F(ExpectCliTest, JsonIsTheComparison) {
  std::string out, err;
  ASSERT_EQ(
      rooftrace::testing::RunMain(
          AnalyzeMain, "analyze",
          {store_, "--expect", prediction_, "--format", "json"}, &out, &err),
      0)
      << err;
  StatusOr<json::Value> doc = json::Parse(out, "out");
  ASSERT_TRUE(doc.ok()) << doc.status().message() << out;
  const json::Array& rows = doc->Find("rows")->as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].Find("op")->as_string(), "qkv");
  EXPECT_EQ(rows[0].Find("measured_s")->as_number(), 100e-6);
  EXPECT_EQ(rows[1].Find("calls")->as_number(), 2);
  EXPECT_NEAR(rows[1].Find("efficiency")->as_number(),
              2 * Roof(2, 22016, 4096) / 134e-6, 1e-12);
  EXPECT_EQ(doc->Find("matched_kernels")->as_number(), 3);
}

// A bad prediction file exits 2 before any report is printed.
TEST_F(ExpectCliTest, BadPredictionFileExitsTwo) {
  const std::string bad = dir_ + "/bad.json";
  std::ofstream(bad) << "{\"ops\": []}";
  std::string out, err;
  EXPECT_EQ(rooftrace::testing::RunMain(AnalyzeMain, "analyze",
                                        {store_, "--expect", bad}, &out, &err),
            2);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(err, "rooftrace analyze: --expect " + bad +
                     ": not a rooftrace prediction (no \"format\": "
                     "\"rooftrace-prediction\"); write the prediction with "
                     "`rooftrace predict ... --format json > "
                     "prediction.json`\n");
}

}  // namespace
}  // namespace rooftrace::analyzer
