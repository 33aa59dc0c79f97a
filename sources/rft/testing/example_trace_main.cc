// rooftrace_example_trace -o FILE.rft: writes a GENERATED synthetic LLM
// inference trace (sources/rft/testing/trace_builder.h) so the analyzer can be
// tried without a GPU. It says loudly that the data is not a recording.
#include <iostream>
#include <string>

#include "base/cli.h"
#include "sources/rft/testing/trace_builder.h"

namespace po = boost::program_options;
using rooftrace::test_support::GenerateLlmTrace;
using rooftrace::test_support::LlmTraceOptions;
using rooftrace::test_support::TraceBuilder;

int main(int argc, char** argv) {
  rooftrace::CommandSpec spec;
  spec.name = "rooftrace_example_trace";
  spec.usage = "rooftrace_example_trace -o FILE.rft [options]";
  spec.summary =
      "Writes a GENERATED synthetic trace of a small Llama-like model in bf16 "
      "(one prefill step over batch x prompt tokens, then decode steps), "
      "as libinject would stream it. Not a GPU recording.";
  std::string out;
  LlmTraceOptions o;
  spec.options.add_options()("output,o", po::value(&out)->required(),
                             "trace file to write (.rft)")(
      "batch", po::value(&o.batch)->default_value(8), "sequences per step")(
      "prompt", po::value(&o.prompt_len)->default_value(128),
      "prompt length in tokens")(
      "steps", po::value(&o.decode_steps)->default_value(32), "decode steps")(
      "layers", po::value(&o.layers)->default_value(4), "decoder layers")(
      "hidden", po::value(&o.hidden)->default_value(2048), "hidden size")(
      "intermediate", po::value(&o.intermediate)->default_value(5632),
      "MLP intermediate size")(
      "nvtx", po::bool_switch(&o.nvtx), "add NVTX step and layer ranges")(
      "counters", po::bool_switch(&o.counters),
      "counters mode: add per-kernel hardware counter records");
  po::variables_map vm;
  if (auto rc = rooftrace::ParseCommandLine(spec, argc, argv, &vm, std::cout,
                                            std::cerr)) {
    return *rc;
  }
  if (o.batch <= 0 || o.prompt_len <= 0 || o.decode_steps < 0 ||
      o.layers <= 0 || o.hidden <= 0 || o.intermediate <= 0) {
    std::cerr << "rooftrace_example_trace: --batch, --prompt, --layers, "
                 "--hidden and --intermediate must be positive and --steps "
                 "not negative\n";
    return rooftrace::kExitUsage;
  }
  if (o.counters) o.session.mode = rooftrace::wire::MODE_COUNTERS;
  o.session.argv = {"python3", "generated_llm.py", "--batch",
                    std::to_string(o.batch)};
  // Issue 18 item 16: every report of this trace says it is synthetic.
  rooftrace::test_support::MarkSynthetic(&o);
  TraceBuilder builder(o.session);
  builder.set_keep_packets(false);
  const auto truth = GenerateLlmTrace(o, &builder);
  if (auto st = builder.WriteFile(out); !st.ok()) {
    std::cerr << "rooftrace_example_trace: " << st.message() << "\n";
    return rooftrace::kExitUsage;
  }
  std::cout << "GENERATED synthetic trace (not a GPU recording): " << out
            << "\n  " << truth.steps.size() << " steps (1 prefill of "
            << o.batch * o.prompt_len << " tokens, " << o.decode_steps
            << " decode of " << o.batch << "), " << truth.kernels
            << " kernels, " << truth.gemms << " GEMM calls, "
            << truth.gemm_flops << " GEMM FLOPs\n";
  return rooftrace::kExitOk;
}
