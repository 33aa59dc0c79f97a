// `rooftrace predict` end to end: registered in the front-end, --help names
// every option with units and defaults, the table, CSV and JSON carry the
// numbers of analyzer/predict.h, built-in configs work from any directory,
// the HTML and SVG carry the roofline plot in analyze's style, and bad input
// exits 2 with one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/json.h"
#include "analyzer/commands.h"
#include "cli/rooftrace.h"
#include "tests/support/test_store.h"
#include "tests/support/xml_check.h"

namespace rooftrace {
namespace {

using testing::ReadFile;
using testing::RunMain;
using testing::TempDir;

int Predict(const std::vector<std::string>& args, std::string* out,
            std::string* err) {
  return RunMain(PredictMain, "predict", args, out, err);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string LineStartingWith(const std::string& text, const std::string& p) {
  for (const std::string& l : Lines(text)) {
    if (l.rfind(p, 0) == 0) return l;
  }
  return "";
}

class PredictCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TempDir("predict-cli"); }
  void TearDown() override { testing::RemoveTempDir(dir_); }
  std::string dir_;
};

// `rooftrace predict` is a subcommand of the front-end.
TEST_F(PredictCliTest, RegisteredInFrontEnd) {
  std::string out, err;
  EXPECT_EQ(RunMain(RooftraceMain, "rooftrace", {"--help"}, &out, &err), 0);
  EXPECT_NE(out.find("  predict     analytic roofline of a model"),
            std::string::npos)
      << out;
  EXPECT_EQ(RunMain(RooftraceMain, "rooftrace",
                    {"predict", "--model", "Qwen1.5-0.5B", "--device", "l4"},
                    &out, &err),
            0)
      << err;
}

// --help explains every option, with units and defaults, and lists the
// built-in configs.
TEST_F(PredictCliTest, HelpNamesEveryOption) {
  std::string out, err;
  ASSERT_EQ(Predict({"--help"}, &out, &err), 0);
  for (const char* option :
       {"--model", "--device ", "--device-profile", "--batch", "--prompt",
        "--generate", "--dtype", "--weight-dtype", "--activation-dtype",
        "--kv-dtype", "--tp", "--link-bandwidth", "--attention", "--mlp-fusion",
        "--format", "--html", "--svg"}) {
    EXPECT_NE(out.find(option), std::string::npos) << option;
  }
  EXPECT_NE(out.find("GB/s (1e9 bytes/s)"), std::string::npos);
  EXPECT_NE(out.find("(=512)"), std::string::npos);  // --prompt default
  EXPECT_NE(out.find("Llama-2-7B, Llama-3-70B"), std::string::npos);
}

// The op table's cells for Llama-2-7B on an H100 SXM, and the totals.
TEST_F(PredictCliTest, TableCellsAndTotals) {
  std::string out, err;
  ASSERT_EQ(
      Predict({"--model", "Llama-2-7B", "--device", "h100-sxm"}, &out, &err), 0)
      << err;
  EXPECT_EQ(Lines(out)[0],
            "rooftrace predict: Llama-2-7B on NVIDIA H100 SXM5 80GB");
  EXPECT_EQ(Words(LineStartingWith(out, "prefill       qkv")),
            (std::vector<std::string>{
                "prefill", "qkv", "32", "512", "12288", "4096", "1",
                "51.540",   // GFLOP
                "100.663",  // MB weights
                "0.000",    // MB KV
                "16.777",   // MB activations
                "438.9",    // AI
                "compute", "52.09", "35.06", "0.00", "52.09", "87.15",
                "22.2"}));  // % of the prefill step
  EXPECT_EQ(Words(LineStartingWith(out, "decode-first  qkv")),
            (std::vector<std::string>{"decode-first", "qkv", "32", "1", "12288",
                                      "4096", "1", "0.101", "100.663", "0.000",
                                      "0.033", "1.0", "memory", "0.10", "30.06",
                                      "0.00", "30.06", "30.16", "23.9"}));
  EXPECT_NE(out.find("  time to first token:   >= 7.510 ms (<= 12.111 ms "
                     "with nothing overlapped)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  time per output token: >= 4.037 ms (<= 4.051 ms), "
                     "mean of 127 decode steps at KV length 513..639"),
            std::string::npos);
  EXPECT_NE(out.find("  decode tokens/s:       <= 247.7"), std::string::npos);
  EXPECT_NE(out.find("  decode compute-bound:  GEMMs from batch 327, whole "
                     "step never below batch 16777216 (attention reads"),
            std::string::npos);
}

// CSV: one row per op and phase with raw units; JSON: the document analyze
// --expect reads, with the same numbers.
TEST_F(PredictCliTest, CsvAndJsonCarryRawNumbers) {
  std::string csv, json_text, err;
  const std::vector<std::string> args = {"--model",  "Llama-2-7B", "--device",
                                         "h100-sxm", "--generate", "2"};
  std::vector<std::string> with_csv = args, with_json = args;
  with_csv.insert(with_csv.end(), {"--format", "csv"});
  with_json.insert(with_json.end(), {"--format", "json"});
  ASSERT_EQ(Predict(with_csv, &csv, &err), 0) << err;
  ASSERT_EQ(Predict(with_json, &json_text, &err), 0) << err;
  const std::vector<std::string> rows = Lines(csv);
  EXPECT_EQ(
      rows[0].rfind("phase,op,kind,precision,count,m,n,k,batch,flops,", 0), 0u);
  // 12 ops per phase (embed, 2 norms, qkv, attention, o_proj, gate_up,
  // silu_mul, down, final_norm, lm_head), prefill and decode-first.
  EXPECT_EQ(rows.size(), 1u + 2 * 11);
  EXPECT_EQ(LineStartingWith(csv, "prefill,qkv,")
                .rfind("prefill,qkv,gemm,bf16_tc,32,512,12288,4096,1,"
                       "51539607552,100663296,0,16777216,117440512,0,",
                       0),
            0u);

  StatusOr<json::Value> doc = json::Parse(json_text, "prediction.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->Find("format")->as_string(), "rooftrace-prediction");
  const json::Value& ops = *doc->Find("ops");
  ASSERT_EQ(ops.as_array().size(), 22u);
  const json::Value& qkv = ops.as_array()[2];
  EXPECT_EQ(qkv.Find("op")->as_string(), "qkv");
  EXPECT_EQ(qkv.Find("flops")->as_number(), 51539607552.0);
  EXPECT_EQ(qkv.Find("gemm")->Find("n")->as_number(), 12288);
  EXPECT_EQ(qkv.Find("parts")->as_array().size(), 3u);
  EXPECT_EQ(doc->Find("device")->Find("ridge_flops_per_byte")->as_number(),
            989.4e12 / 3350e9);
  EXPECT_TRUE(
      doc->Find("totals")->Find("decode_step_compute_bound_batch")->is_null());
}

// Built-in configs are compiled in: predict works from another directory.
TEST_F(PredictCliTest, BuiltinConfigsWorkFromAnyDirectory) {
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  std::string out, err;
  const int rc = Predict({"--model", "Mixtral-8x7B", "--device", "h100-sxm",
                          "--tp", "2", "--format", "csv"},
                         &out, &err);
  std::filesystem::current_path(before);
  EXPECT_EQ(rc, 0) << err;
  EXPECT_NE(out.find("prefill,experts.gate_up,gemm,bf16_tc,32,1024,14336,"),
            std::string::npos)
      << out;
}

// A config.json on disk with GQA, a window and tied embeddings.
TEST_F(PredictCliTest, ReadsConfigFile) {
  const std::string cfg = dir_ + "/config.json";
  std::ofstream(cfg) << R"({"model_type": "qwen2", "hidden_size": 896,
      "num_hidden_layers": 24, "num_attention_heads": 14,
      "num_key_value_heads": 2, "intermediate_size": 4864,
      "vocab_size": 151936, "tie_word_embeddings": true})";
  std::string out, err;
  ASSERT_EQ(Predict({"--model", cfg, "--device", "a100-80gb", "--format",
                     "json", "--generate", "1"},
                    &out, &err),
            0)
      << err;
  StatusOr<json::Value> doc = json::Parse(out, "out");
  ASSERT_TRUE(doc.ok());
  const json::Value& qkv = doc->Find("ops")->as_array()[2];
  EXPECT_EQ(qkv.Find("n")->as_number(), (14 + 2 * 2) * 64);
}

// HTML: self-contained, the roofline plot of analyze with the predicted
// points (one per op and phase; decode-last only where attention grows).
TEST_F(PredictCliTest, HtmlAndSvgPlotPredictedPoints) {
  std::string out, err;
  const std::string html_path = dir_ + "/p.html", svg_path = dir_ + "/p.svg";
  ASSERT_EQ(Predict({"--model", "Llama-2-7B", "--device", "h100-sxm", "--html",
                     html_path, "--svg", svg_path},
                    &out, &err),
            0)
      << err;
  const std::string html = ReadFile(html_path);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_NE(html.find("<title>rooftrace prediction: Llama-2-7B on NVIDIA "
                      "H100 SXM5 80GB</title>"),
            std::string::npos);
  const std::string svg = ReadFile(svg_path);
  std::string root;
  EXPECT_EQ(testing::CheckXmlWellFormed(svg, &root), "");
  EXPECT_EQ(root, "svg");
  EXPECT_NE(svg.find("predicted: Llama-2-7B, batch 1, prompt 512, generate "
                     "128, tp 1; roofs datasheet:h100-sxm"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>qkv (prefill)\n32 kernels"), std::string::npos);
  EXPECT_NE(svg.find("<title>qkv (decode-first)\n"), std::string::npos);
  EXPECT_NE(svg.find("<title>attention (decode-last)\n"), std::string::npos);
  EXPECT_EQ(svg.find("<title>qkv (decode-last)\n"), std::string::npos);
  // One ridge mark per roof level (H100: 6), prefill 10 ops with FLOPs and
  // bytes (embed has no FLOPs), decode-first 10, decode-last only
  // attention, 2 legend keys.
  const size_t b = html.find("<svg"), e = html.find("</svg>");
  ASSERT_NE(b, std::string::npos);
  const std::string inline_svg = html.substr(b, e + 6 - b);
  EXPECT_EQ(testing::CheckXmlWellFormed(inline_svg), "");
  EXPECT_EQ(testing::CountElements(inline_svg, "circle"), 6 + 10 + 10 + 1 + 2);
}

// Bad input: exit 2 and one line naming the input and the fix.
TEST_F(PredictCliTest, BadInputExitsTwoWithOneLine) {
  const std::string incomplete = dir_ + "/incomplete.json";
  std::ofstream(incomplete) << R"({"model_type": "llama", "hidden_size": 512,
      "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100})";
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"--device", "h100-sxm"}, "no model: pass --model"},
      {{"--model", "Llama-9-1B", "--device", "h100-sxm"},
       "--model Llama-9-1B: no such file and not a built-in config"},
      {{"--model", incomplete, "--device", "h100-sxm"},
       incomplete + ": missing \"intermediate_size\" (the MLP width)"},
      {{"--model", "Llama-2-7B"}, "no device: pass --device KEY"},
      {{"--model", "Llama-2-7B", "--device", "z100"},
       "--device z100: not in the datasheet"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--tp", "3"},
       "--tp 3: Llama-2-7B has 32 attention heads, not divisible by 3"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--batch=0"},
       "--batch must be > 0 (found 0)"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--generate=-4"},
       "--generate must be > 0 (found -4)"},
      {{"--model", "Llama-2-7B", "--device", "a100-80gb", "--dtype", "fp8"},
       "NVIDIA A100 80GB SXM (datasheet:a100-80gb) has no fp8-tensor peak "
       "for --activation-dtype fp8"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--dtype", "fp4"},
       "--dtype 'fp4' is not one of bf16, fp16, fp8, int8"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--kv-dtype", "int4"},
       "--kv-dtype int4: the KV cache is bf16, fp16, fp8 or int8"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--attention",
        "paged"},
       "--attention 'paged' is not one of flash, unfused"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--link-bandwidth=-1"},
       "--link-bandwidth must be > 0 GB/s"},
      {{"--model", "Llama-2-7B", "--device", "h100-sxm", "--format", "xml"},
       "--format 'xml' is not one of table, csv, json"},
  };
  for (const Case& c : cases) {
    std::string out, err;
    EXPECT_EQ(Predict(c.args, &out, &err), 2) << c.error;
    EXPECT_EQ(err.rfind("rooftrace predict: " + c.error, 0), 0u)
        << "got: " << err;
    EXPECT_EQ(Lines(err).size(), 1u) << err;
    EXPECT_TRUE(out.empty());
  }
}

}  // namespace
}  // namespace rooftrace
