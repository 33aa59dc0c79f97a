// `analyze FILE.rft --expect`: a trace as libinject writes it (the wire
// format, built by the shared trace builder: a synthetic LLM run with fused
// QKV and gate/up GEMMs) against a prediction for the same architecture.
// Every GEMM kernel of the trace finds its op, in both phases.
#include <gtest/gtest.h>

#include <fstream>

#include "base/json.h"
#include "analyzer/commands.h"
#include "tests/support/test_store.h"
#include "sources/rft/testing/trace_builder.h"

namespace rooftrace {
namespace {

using test_support::GenerateLlmTrace;
using test_support::LlmTraceOptions;
using test_support::LlmTraceTruth;
using test_support::TraceBuilder;
using testing::RunMain;

// The generator's model: hidden 1024, MLP 2816, 2 layers, MHA (QKV is 3 x
// hidden wide), vocabulary 32000; batch 4, prompt 64, 6 decode steps.
TEST(ExpectTraceTest, EveryGemmOfALibinjectTraceMatchesAPredictedOp) {
  const std::string dir = testing::TempDir("expect-trace");
  LlmTraceOptions o;
  o.batch = 4;
  o.prompt_len = 64;
  o.decode_steps = 6;
  o.layers = 2;
  TraceBuilder b(o.session);
  const LlmTraceTruth truth = GenerateLlmTrace(o, &b);
  const std::string rft = dir + "/run.rft";
  ASSERT_TRUE(b.WriteFile(rft).ok());

  const std::string config = dir + "/config.json";
  std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 1024,
      "num_hidden_layers": 2, "num_attention_heads": 16,
      "intermediate_size": 2816, "vocab_size": 32000})";
  std::string prediction, err;
  ASSERT_EQ(RunMain(PredictMain, "predict",
                    {"--model", config, "--device", "h100-sxm", "--batch", "4",
                     "--prompt", "64", "--generate", "7", "--format", "json"},
                    &prediction, &err),
            0)
      << err;
  const std::string prediction_path = dir + "/prediction.json";
  std::ofstream(prediction_path) << prediction;

  std::string out;
  ASSERT_EQ(RunMain(AnalyzeMain, "analyze",
                    {rft, "--expect", prediction_path, "--format", "json"},
                    &out, &err),
            0)
      << err;
  StatusOr<json::Value> doc = json::Parse(out, "expect.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message() << out;
  EXPECT_EQ(doc->Find("matched_kernels")->as_number(),
            static_cast<double>(truth.gemms));  // 7 steps x 9 GEMMs
  EXPECT_EQ(truth.gemms, 63u);
  EXPECT_EQ(doc->Find("unmatched_gemm_kernels")->as_number(), 0);
  EXPECT_EQ(doc->Find("other_kernels")->as_number(),
            static_cast<double>(truth.kernels - truth.gemms));
  // phase, op, calls: 2 layers per step; 1 prefill and 6 decode steps.
  // The generator runs its GEMMs at 75 % of the H100's DRAM roof (all are
  // memory-bound here) unless they hit its 2.5 us floor, as o_proj and the
  // decode down projection do: --expect must give back 0.75.
  std::vector<std::tuple<std::string, std::string, double>> rows;
  for (const json::Value& r : doc->Find("rows")->as_array()) {
    const std::string op = r.Find("op")->as_string();
    const std::string phase = r.Find("phase")->as_string();
    rows.emplace_back(phase, op, r.Find("calls")->as_number());
    EXPECT_EQ(r.Find("predicted_bound")->as_string(), "memory");
    if (op == "qkv" || op == "gate_up" || op == "lm_head" ||
        (op == "down" && phase == "prefill")) {
      EXPECT_NEAR(r.Find("efficiency")->as_number(), 0.75, 1e-3)
          << phase << " " << op;
    } else {
      EXPECT_LT(r.Find("efficiency")->as_number(), 0.75) << phase << " " << op;
    }
  }
  using Row = std::tuple<std::string, std::string, double>;
  EXPECT_EQ(rows,
            (std::vector<Row>{{"prefill", "qkv", 2},
                              {"prefill", "o_proj / qkv.q / qkv.k / qkv.v", 2},
                              {"prefill", "gate_up", 2},
                              {"prefill", "down", 2},
                              {"prefill", "lm_head", 1},
                              {"decode", "qkv", 12},
                              {"decode", "o_proj / qkv.q / qkv.k / qkv.v", 12},
                              {"decode", "gate_up", 12},
                              {"decode", "down", 12},
                              {"decode", "lm_head", 6}}));
  testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace rooftrace
