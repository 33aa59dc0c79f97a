// `rooftrace predict`: the analytic roofline of a model on a GPU, per op and
// phase, before anything runs (analyzer/predict.h, docs/predict.md).
#include <iostream>
#include <sstream>
#include <string>

#include "analyzer/analyze.h"
#include "analyzer/model_config.h"
#include "analyzer/predict.h"
#include "analyzer/predict_format.h"
#include "base/cli.h"
#include "base/files.h"

namespace po = boost::program_options;

namespace rooftrace {

// Declared in analyzer/commands.h; cli/ registers it.
int PredictMain(int argc, char** argv) {
  using namespace analyzer;
  std::string builtins;
  for (const std::string& n : BuiltinModelNames()) {
    builtins += (builtins.empty() ? "" : ", ") + n;
  }
  CommandSpec spec;
  spec.name = "predict";
  spec.usage =
      "rooftrace predict --model CONFIG (--device KEY | --device-profile "
      "FILE) [--batch N] [--prompt N] [--generate N] [--dtype D] [--tp N] "
      "[--format table|csv|json] [--html FILE] [--svg FILE]";
  spec.summary =
      "Predicts a model's roofline before it runs: for every operation of a "
      "forward step (embedding, norms, QKV, attention, output projection, "
      "MLP, lm head), at prefill (the whole prompt) and at decode (the first "
      "and the last generated position), its GEMM shape, FLOPs, minimum "
      "bytes (weights, KV cache, activations; a lower bound), intensity, "
      "bound, and the times T_math = FLOPs / peak, T_mem = bytes / DRAM "
      "bandwidth and T_comm = link bytes / link bandwidth (tensor "
      "parallelism's all-reduces). max(...) is the roofline time, a lower "
      "bound; the sum an upper bound. Totals: time to first token, time per "
      "output token, decode tokens/s, and the batch at which decode turns "
      "compute-bound. Save the JSON and compare a measured run with it: "
      "rooftrace analyze RUN --expect PREDICTION.json.";
  spec.epilog =
      "CONFIG is a Hugging Face config.json (llama, mistral, mixtral, qwen2) "
      "or a built-in name: " +
      builtins +
      ".\n\n"
      "Examples:\n"
      "  rooftrace predict --model Llama-2-7B --device h100-sxm\n"
      "  rooftrace predict --model config.json --device a100-80gb --batch 32 "
      "--prompt 2048 --generate 256\n"
      "  rooftrace predict --model Llama-2-70B --device h100-sxm --tp 8 "
      "--weight-dtype int4\n"
      "  rooftrace predict --model Mistral-7B --device-profile h100.json "
      "--format json > prediction.json\n"
      "  rooftrace predict --model Llama-3-8B --device l4 --html "
      "prediction.html";
  std::string model_arg, device, device_profile, dtype, weight_dtype,
      activation_dtype, kv_dtype, attention, mlp_fusion, format, html_path,
      svg_path;
  int64_t batch = 0, prompt = 0, generate = 0, tp = 0;
  double link_gb = 0;
  // One option per paragraph reads better than the formatter's packing of
  // the chained calls.
  // clang-format off
  spec.options.add_options()
      ("model", po::value<std::string>(&model_arg),
       "a Hugging Face config.json, or a built-in config name (see below)")
      ("device", po::value<std::string>(&device),
       "datasheet key or CUDA device name (rooftrace devices lists them), "
       "e.g. h100-sxm")
      ("device-profile", po::value<std::string>(&device_profile),
       "a calibrated device profile (rooftrace calibrate) instead of "
       "--device: its measured roofs")
      ("batch", po::value<int64_t>(&batch)->default_value(1),
       "sequences per step")
      ("prompt", po::value<int64_t>(&prompt)->default_value(512),
       "prompt length in tokens (the prefill step)")
      ("generate", po::value<int64_t>(&generate)->default_value(128),
       "tokens generated per sequence; the first comes from the prefill, "
       "the rest from generate - 1 decode steps")
      ("dtype", po::value<std::string>(&dtype)->default_value("bf16"),
       "element type of weights, activations and KV cache at once: bf16, "
       "fp16, fp8 or int8")
      ("weight-dtype", po::value<std::string>(&weight_dtype),
       "weights: bf16, fp16, fp8, int8 or int4 (int8 / int4 with 16-bit "
       "activations are widened: the GEMMs run on the bf16 roof); default "
       "--dtype")
      ("activation-dtype", po::value<std::string>(&activation_dtype),
       "activations, which pick the GEMM roof: bf16 / fp16 (fp16/bf16 "
       "tensor), fp8 (fp8 tensor), int8 (int8 tensor); default --dtype")
      ("kv-dtype", po::value<std::string>(&kv_dtype),
       "KV cache: bf16, fp16, fp8 or int8; default --dtype")
      ("tp", po::value<int64_t>(&tp)->default_value(1),
       "tensor-parallel GPUs: heads, MLP and vocabulary split N ways, two "
       "all-reduces per layer over the GPU link")
      ("link-bandwidth", po::value<double>(&link_gb),
       "GPU-to-GPU bandwidth in GB/s (1e9 bytes/s), one direction per GPU; "
       "default: the datasheet's (H100 SXM NVLink 4: 450)")
      ("attention", po::value<std::string>(&attention)->default_value("flash"),
       "flash (one fused kernel, scores stay on chip) or unfused (score "
       "GEMM, softmax, value GEMM with the scores stored)")
      ("mlp-fusion",
       po::value<std::string>(&mlp_fusion)->default_value("unfused"),
       "MLP activation traffic (seed 000): unfused (every intermediate "
       "stored and reloaded), epilogue (activation in the first GEMM's "
       "epilogue), full (no intermediate reaches DRAM)")
      ("format", po::value<std::string>(&format)->default_value("table"),
       "table, csv or json on stdout (json is what analyze --expect reads)")
      ("html", po::value<std::string>(&html_path),
       "write a self-contained HTML page: header, totals, roofline plot "
       "(analyze's style, one point per op and phase), tables")
      ("svg", po::value<std::string>(&svg_path),
       "write the roofline plot alone (SVG)");
  // clang-format on
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  auto fail = [](const std::string& message) {
    std::cerr << "rooftrace predict: " << message << "\n";
    return kExitUsage;
  };
  if (model_arg.empty()) {
    return fail("no model: pass --model with a config.json or one of " +
                builtins);
  }
  if (format != "table" && format != "csv" && format != "json") {
    return fail("--format '" + format + "' is not one of table, csv, json");
  }
  if (vm.count("link-bandwidth") && link_gb <= 0) {
    return fail("--link-bandwidth must be > 0 GB/s (found " +
                std::to_string(link_gb) + ")");
  }
  PredictOptions options;
  options.batch = batch;
  options.prompt = prompt;
  options.generate = generate;
  if (tp <= 0 || tp > 1024) {
    return fail("--tp must be between 1 and 1024 (found " + std::to_string(tp) +
                ")");
  }
  options.tp = static_cast<int>(tp);
  struct DtypeOption {
    const char* flag;
    const std::string* value;
    Dtype* out;
  };
  const std::optional<Dtype> all = DtypeFromName(dtype);
  if (!all || *all == Dtype::kInt4) {
    return fail("--dtype '" + dtype +
                "' is not one of bf16, fp16, fp8, int8 (int4 is for "
                "--weight-dtype)");
  }
  options.weights = options.activations = options.kv_cache = *all;
  for (const DtypeOption& d :
       {DtypeOption{"--weight-dtype", &weight_dtype, &options.weights},
        DtypeOption{"--activation-dtype", &activation_dtype,
                    &options.activations},
        DtypeOption{"--kv-dtype", &kv_dtype, &options.kv_cache}}) {
    if (d.value->empty()) continue;
    const std::optional<Dtype> v = DtypeFromName(*d.value);
    if (!v) {
      return fail(std::string(d.flag) + " '" + *d.value +
                  "' is not one of bf16, fp16, fp8, int8, int4");
    }
    *d.out = *v;
  }
  if (attention == "flash") {
    options.attention = AttentionImpl::kFlash;
  } else if (attention == "unfused") {
    options.attention = AttentionImpl::kUnfused;
  } else {
    return fail("--attention '" + attention + "' is not one of flash, unfused");
  }
  if (mlp_fusion == "unfused") {
    options.mlp_fusion = MlpFusion::kUnfused;
  } else if (mlp_fusion == "epilogue") {
    options.mlp_fusion = MlpFusion::kEpilogue;
  } else if (mlp_fusion == "full") {
    options.mlp_fusion = MlpFusion::kFull;
  } else {
    return fail("--mlp-fusion '" + mlp_fusion +
                "' is not one of unfused, epilogue, full");
  }

  StatusOr<ModelConfig> model = LoadModelConfig(model_arg);
  if (!model.ok()) return fail(model.status().message());
  StatusOr<PredictDevice> dev =
      ResolvePredictDevice(device, device_profile, link_gb);
  if (!dev.ok()) return fail(dev.status().message());
  StatusOr<Prediction> prediction = Predict(*model, options, *dev);
  if (!prediction.ok()) return fail(prediction.status().message());

  for (const std::string& w : prediction->warnings) {
    std::cerr << "rooftrace predict: warning: " << w << "\n";
  }
  MakePredictionWriter(format)->Write(*prediction, std::cout);
  if (!svg_path.empty()) {
    const Status st =
        WriteTextFile(svg_path, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
                                    RenderPredictionSvg(*prediction));
    if (!st.ok()) return fail("--svg " + st.message());
  }
  if (!html_path.empty()) {
    std::ostringstream html;
    MakePredictionWriter("html")->Write(*prediction, html);
    const Status st = WriteTextFile(html_path, html.str());
    if (!st.ok()) return fail("--html " + st.message());
  }
  return kExitOk;
}

}  // namespace rooftrace
