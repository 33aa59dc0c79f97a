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

namespace {

// What the command line says, as typed; checked by ToPredictOptions.
struct PredictArgs {
  std::string model_arg, device, device_profile, dtype, weight_dtype,
      activation_dtype, kv_dtype, attention, mlp_fusion, format, html_path,
      svg_path;
  int64_t batch = 0, prompt = 0, generate = 0, tp = 0;
  double link_gb = 0;
  bool link_gb_given = false;
};

std::string BuiltinList() {
  std::string builtins;
  for (const std::string& n : analyzer::BuiltinModelNames()) {
    builtins += (builtins.empty() ? "" : ", ") + n;
  }
  return builtins;
}

// The usage, help text and options of `predict`, bound to *a.
void DescribePredict(const std::string& builtins, PredictArgs* a,
                     CommandSpec* spec_out) {
  CommandSpec& spec = *spec_out;
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
      "compute-bound. An encoder (BERT) is one forward pass of the prompt: "
      "a single 'forward' phase, no decode. Save the JSON and compare a "
      "measured run with it: "
      "rooftrace analyze RUN --expect PREDICTION.json.";
  spec.epilog =
      "CONFIG is a Hugging Face config.json (llama, mistral, mixtral, qwen2, "
      "bert) "
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
      "prediction.html\n"
      "  rooftrace predict --model bert-small --device h100-sxm --prompt 141 "
      "--format json > bert.json";
  // One option per paragraph reads better than the formatter's packing of
  // the chained calls.
  // clang-format off
  spec.options.add_options()
      ("model", po::value<std::string>(&a->model_arg),
       "a Hugging Face config.json, or a built-in config name (see below)")
      ("device", po::value<std::string>(&a->device),
       "datasheet key or CUDA device name (rooftrace devices lists them), "
       "e.g. h100-sxm")
      ("device-profile", po::value<std::string>(&a->device_profile),
       "a calibrated device profile (rooftrace calibrate) instead of "
       "--device: its measured roofs")
      ("batch", po::value<int64_t>(&a->batch)->default_value(1),
       "sequences per step")
      ("prompt", po::value<int64_t>(&a->prompt)->default_value(512),
       "prompt length in tokens (the prefill step)")
      ("generate", po::value<int64_t>(&a->generate)->default_value(128),
       "tokens generated per sequence; the first comes from the prefill, "
       "the rest from generate - 1 decode steps")
      ("dtype", po::value<std::string>(&a->dtype)->default_value("bf16"),
       "element type of weights, activations and KV cache at once: bf16, "
       "fp16, fp8 or int8")
      ("weight-dtype", po::value<std::string>(&a->weight_dtype),
       "weights: bf16, fp16, fp8, int8 or int4 (int8 / int4 with 16-bit "
       "activations are widened: the GEMMs run on the bf16 roof); default "
       "--dtype")
      ("activation-dtype", po::value<std::string>(&a->activation_dtype),
       "activations, which pick the GEMM roof: bf16 / fp16 (fp16/bf16 "
       "tensor), fp8 (fp8 tensor), int8 (int8 tensor); default --dtype")
      ("kv-dtype", po::value<std::string>(&a->kv_dtype),
       "KV cache: bf16, fp16, fp8 or int8; default --dtype")
      ("tp", po::value<int64_t>(&a->tp)->default_value(1),
       "tensor-parallel GPUs: heads, MLP and vocabulary split N ways, two "
       "all-reduces per layer over the GPU link")
      ("link-bandwidth", po::value<double>(&a->link_gb),
       "GPU-to-GPU bandwidth in GB/s (1e9 bytes/s), one direction per GPU; "
       "default: the datasheet's (H100 SXM NVLink 4: 450)")
      ("attention", po::value<std::string>(&a->attention)->default_value("flash"),
       "flash (one fused kernel, scores stay on chip) or unfused (score "
       "GEMM, softmax, value GEMM with the scores stored)")
      ("mlp-fusion",
       po::value<std::string>(&a->mlp_fusion)->default_value("unfused"),
       "MLP activation traffic (seed 000): unfused (every intermediate "
       "stored and reloaded), epilogue (activation in the first GEMM's "
       "epilogue), full (no intermediate reaches DRAM)")
      ("format", po::value<std::string>(&a->format)->default_value("table"),
       "table, csv or json on stdout (json is what analyze --expect reads)")
      ("html", po::value<std::string>(&a->html_path),
       "write a self-contained HTML page: header, totals, roofline plot "
       "(analyze's style, one point per op and phase), tables")
      ("svg", po::value<std::string>(&a->svg_path),
       "write the roofline plot alone (SVG)");
  // clang-format on
}

// The options Predict() takes, from what was typed; one message per
// mistake, naming the option.
Status ToPredictOptions(const PredictArgs& a, const std::string& builtins,
                        analyzer::PredictOptions* options) {
  using namespace analyzer;
  if (a.model_arg.empty()) {
    return InvalidArgument(
        "no model: pass --model with a config.json or one of " + builtins);
  }
  if (a.format != "table" && a.format != "csv" && a.format != "json") {
    return InvalidArgument("--format '" + a.format +
                           "' is not one of table, csv, json");
  }
  if (a.link_gb_given && a.link_gb <= 0) {
    return InvalidArgument("--link-bandwidth must be > 0 GB/s (found " +
                           std::to_string(a.link_gb) + ")");
  }
  options->batch = a.batch;
  options->prompt = a.prompt;
  options->generate = a.generate;
  if (a.tp <= 0 || a.tp > 1024) {
    return InvalidArgument("--tp must be between 1 and 1024 (found " +
                           std::to_string(a.tp) + ")");
  }
  options->tp = static_cast<int>(a.tp);
  struct DtypeOption {
    const char* flag;
    const std::string* value;
    Dtype* out;
  };
  const std::optional<Dtype> all = DtypeFromName(a.dtype);
  if (!all || *all == Dtype::kInt4) {
    return InvalidArgument("--dtype '" + a.dtype +
                           "' is not one of bf16, fp16, fp8, int8 (int4 is for "
                           "--weight-dtype)");
  }
  options->weights = options->activations = options->kv_cache = *all;
  for (const DtypeOption& d :
       {DtypeOption{"--weight-dtype", &a.weight_dtype, &options->weights},
        DtypeOption{"--activation-dtype", &a.activation_dtype,
                    &options->activations},
        DtypeOption{"--kv-dtype", &a.kv_dtype, &options->kv_cache}}) {
    if (d.value->empty()) continue;
    const std::optional<Dtype> v = DtypeFromName(*d.value);
    if (!v) {
      return InvalidArgument(std::string(d.flag) + " '" + *d.value +
                             "' is not one of bf16, fp16, fp8, int8, int4");
    }
    *d.out = *v;
  }
  if (a.attention == "flash") {
    options->attention = AttentionImpl::kFlash;
  } else if (a.attention == "unfused") {
    options->attention = AttentionImpl::kUnfused;
  } else {
    return InvalidArgument("--attention '" + a.attention +
                           "' is not one of flash, unfused");
  }
  if (a.mlp_fusion == "unfused") {
    options->mlp_fusion = MlpFusion::kUnfused;
  } else if (a.mlp_fusion == "epilogue") {
    options->mlp_fusion = MlpFusion::kEpilogue;
  } else if (a.mlp_fusion == "full") {
    options->mlp_fusion = MlpFusion::kFull;
  } else {
    return InvalidArgument("--mlp-fusion '" + a.mlp_fusion +
                           "' is not one of unfused, epilogue, full");
  }

  return OkStatus();
}

// The --svg and --html files, when asked for.
Status WritePredictionFiles(const analyzer::Prediction& prediction,
                            const PredictArgs& a) {
  using namespace analyzer;
  if (!a.svg_path.empty()) {
    StatusOr<std::string> svg = RenderPredictionSvg(prediction);
    if (!svg.ok()) return InvalidArgument("--svg " + svg.status().message());
    const Status st = WriteTextFile(
        a.svg_path, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + *svg);
    if (!st.ok()) return InvalidArgument("--svg " + st.message());
  }
  if (!a.html_path.empty()) {
    std::ostringstream html;
    MakePredictionWriter("html")->Write(prediction, html);
    const Status st = WriteTextFile(a.html_path, html.str());
    if (!st.ok()) return InvalidArgument("--html " + st.message());
  }
  return OkStatus();
}

}  // namespace

// Declared in analyzer/commands.h; cli/ registers it.
int PredictMain(int argc, char** argv) {
  using namespace analyzer;
  const std::string builtins = BuiltinList();
  PredictArgs a;
  CommandSpec spec;
  DescribePredict(builtins, &a, &spec);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  a.link_gb_given = vm.count("link-bandwidth") > 0;
  const CommandFailure fail{"rooftrace predict"};
  PredictOptions options;
  if (Status st = ToPredictOptions(a, builtins, &options); !st.ok()) {
    return fail(st.message());
  }
  StatusOr<analyzer::ModelConfig> model = analyzer::LoadModelConfig(a.model_arg);
  if (!model.ok()) return fail(model.status().message());
  StatusOr<PredictDevice> dev =
      ResolvePredictDevice(a.device, a.device_profile, a.link_gb);
  if (!dev.ok()) return fail(dev.status().message());
  StatusOr<Prediction> prediction = Predict(*model, options, *dev);
  if (!prediction.ok()) return fail(prediction.status().message());

  for (const std::string& w : prediction->warnings) {
    std::cerr << "rooftrace predict: warning: " << w << "\n";
  }
  MakePredictionWriter(a.format)->Write(*prediction, std::cout);
  if (Status st = WritePredictionFiles(*prediction, a); !st.ok()) {
    return fail(st.message());
  }
  return kExitOk;
}

}  // namespace rooftrace
