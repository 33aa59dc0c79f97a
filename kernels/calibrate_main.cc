// `rooftrace calibrate`: runs the reference kernels on this GPU and writes a
// device profile; or rebuilds the profile and report from a recorded result
// (--from-result), or renders a modelled SAMPLE report (--sample), neither
// of which needs a GPU.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "base/cli.h"
#include "base/executable.h"
#include "base/files.h"
#include "kernels/commands.h"
#include "model/datasheet.h"
#include "model/device_profile.h"
#include "kernels/calibration_result.h"
#include "kernels/counter_validation.h"
#include "kernels/report.h"
#include "rooftrace_version.h"
#ifdef ROOFTRACE_HAVE_CUDA
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "kernels/gpu_module.h"
#endif

namespace po = boost::program_options;

namespace rooftrace {
namespace {

using kernels::CalibrationResult;

std::string JoinArgs(int argc, char** argv) {
  std::string s = "rooftrace";
  for (int i = 0; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

// Writes the outputs every mode shares: profile (-o), result, HTML, summary.
int WriteOutputs(const CalibrationResult& result, const std::string& output,
                 const std::string& save_result, const std::string& html) {
  const DeviceProfile profile = kernels::BuildProfile(result);
  if (!output.empty()) {
    if (Status s = SaveDeviceProfile(profile, output); !s.ok()) {
      std::cerr << "rooftrace calibrate: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  if (!save_result.empty()) {
    if (Status s = kernels::SaveCalibrationResult(result, save_result);
        !s.ok()) {
      std::cerr << "rooftrace calibrate: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  if (!html.empty()) {
    if (Status s = WriteTextFile(
            html, kernels::RenderCalibrationHtml(result, profile));
        !s.ok()) {
      std::cerr << "rooftrace calibrate: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  std::cout << kernels::RenderCalibrationSummary(result, profile);
  if (!output.empty()) std::cout << "device profile: " << output << "\n";
  if (!save_result.empty()) std::cout << "calibration result: " << save_result << "\n";
  if (!html.empty()) std::cout << "report: " << html << "\n";

  // A reference kernel that disagrees with cuBLAS, or a step that failed,
  // is a finding: exit 1 after writing everything.
  bool failed = false;
  for (const auto& o : result.own) {
    if (o.status == kernels::StepStatus::kOk && !o.matches_cublas) {
      std::cerr << "rooftrace calibrate: " << o.kernel
                << " does not match cuBLAS (max relative error "
                << o.max_rel_error << ", tolerance " << o.tolerance << ")\n";
      failed = true;
    }
  }
  for (const auto& n : result.notes) {
    if (n.status == kernels::StepStatus::kFailed) {
      std::cerr << "rooftrace calibrate: step failed: " << n.step << ": "
                << n.message << "\n";
      failed = true;
    }
  }
  return failed ? kExitFailure : kExitOk;
}

#ifdef ROOFTRACE_HAVE_CUDA
// Loads librooftrace_calibrate.so ($ROOFTRACE_CALIBRATE_MODULE, else
// ../lib/ next to the running executable, else the loader's search path)
// and runs the calibration through it.
StatusOr<CalibrationResult> RunThroughModule(bool quick, int device,
                                             const std::string& command) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(kernels::kCalibrateModuleEnv)) {
    candidates.push_back(env);
  } else {
    const std::string prefix = ExecutablePrefix();
    if (!prefix.empty()) {
      candidates.push_back(prefix + "/lib/" + kernels::kCalibrateModuleFile);
    }
    candidates.push_back(kernels::kCalibrateModuleFile);
  }
  void* module = nullptr;
  std::string errors;
  for (const std::string& path : candidates) {
    module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (module) break;
    const char* why = dlerror();
    errors += "\n  " + path + ": " + (why ? why : "not loadable");
  }
  if (!module) {
    return FailedPrecondition(
        std::string("cannot load the calibration module ") +
        kernels::kCalibrateModuleFile + " (it holds the CUDA kernels and "
        "links cuBLAS):" + errors +
        "\nBuild it with the project (CUDA build), keep it in lib/ next to "
        "bin/rooftrace, or point " + kernels::kCalibrateModuleEnv +
        " at it");
  }
  auto entry = reinterpret_cast<RooftraceCalibrateFn>(
      dlsym(module, kernels::kCalibrateEntryPoint));
  if (!entry) {
    return FailedPrecondition(std::string(kernels::kCalibrateModuleFile) +
                              " has no entry point " +
                              kernels::kCalibrateEntryPoint +
                              ": it is from another rooftrace version; "
                              "rebuild it with this one");
  }
  RooftraceCalibrateArgs args{};
  args.quick = quick ? 1 : 0;
  args.device = device;
  args.command = command.c_str();
  args.progress = [](const char* line, void*) {
    std::cout << line << std::endl;  // flush: progress must show as it goes
  };
  char* out = nullptr;
  const int rc = entry(&args, &out);
  const std::string text = out ? out : "";
  std::free(out);
  // The module stays loaded: CUDA's runtime keeps state until exit.
  if (rc == kRooftraceCalibrateUnavailable) return Unavailable(text);
  if (rc != kRooftraceCalibrateOk) return InternalError(text);
  return kernels::CalibrationResultFromJson(text, "calibration module output");
}
#endif

}  // namespace

namespace {

// What the command line says.
struct CalibrateArgs {
  std::string output, html, save_result, from_result, sample, counters_store;
  bool quick = false;
  int device = 0;
  int64_t run_id = -1;
};

// --from-result (and --counters-store): no GPU, the profile and report of a
// saved calibration result, its counters validated when a store is given.
int RenderFromResult(const CalibrateArgs& a) {
  auto result = kernels::LoadCalibrationResult(a.from_result);
  if (!result.ok()) {
    std::cerr << "rooftrace calibrate: " << result.status().message()
              << "\n";
    return kExitUsage;
  }
  if (!a.counters_store.empty()) {
    auto counted = kernels::ReadCountedKernels(a.counters_store, a.run_id);
    if (!counted.ok()) {
      std::cerr << "rooftrace calibrate: " << counted.status().message()
                << "\n";
      return kExitUsage;
    }
    result->validation = kernels::ValidateCounters(*result, *counted);
    if (result->validation.empty()) {
      std::cerr << "rooftrace calibrate: " << a.counters_store
                << ": no counted FLOPs or DRAM bytes of calibration's "
                   "reference kernels (rooftrace:stream_*, rooftrace:own_*"
                   " ranges) in "
                << (a.run_id < 0 ? std::string("the newest run")
                               : "run " + std::to_string(a.run_id))
                << "; record it with `rooftrace profile --mode counters` "
                   "around the calibrate run that saved "
                << a.from_result << "\n";
      return kExitUsage;
    }
    auto& notes = result->notes;
    notes.erase(std::remove_if(notes.begin(), notes.end(),
                               [](const kernels::StepNote& n) {
                                 return n.step == "counter validation";
                               }),
                notes.end());
  }
  return WriteOutputs(*result, a.output, a.save_result, a.html);
}

// --sample: no GPU, a report modelled from a datasheet entry.
int RenderSample(const CalibrateArgs& a, const std::string& command) {
  const DatasheetEntry* e = FindDatasheetEntry(a.sample);
  if (!e) {
    std::cerr << "rooftrace calibrate: --sample '" << a.sample
              << "' is not a GPU of the datasheet table; see `rooftrace "
                 "devices` for the keys (e.g. h100-sxm)\n";
    return kExitUsage;
  }
  if (!a.output.empty()) {
    std::cerr << "rooftrace calibrate: --sample renders a modelled report "
                 "only; it writes no device profile (-o): a profile must "
                 "hold measurements\n";
    return kExitUsage;
  }
  // Compute capability and L2 of the a.sample's GPU: the datasheet table
  // does not carry them.
  struct Arch {
    const char* key;
    int sm;
    uint64_t l2_mib;
  };
  constexpr Arch kArchs[] = {
      {"t4", 75, 4},        {"v100", 70, 6},     {"a100-80gb", 80, 40},
      {"a100-40gb", 80, 40}, {"h100-pcie", 90, 50}, {"h100-sxm", 90, 50},
      {"h200", 90, 50},      {"l40s", 89, 96},    {"l4", 89, 48},
      {"b200", 100, 126}};
  const Arch* arch = nullptr;
  for (const Arch& a : kArchs) {
    if (e->key == a.key) arch = &a;
  }
  if (!arch) {
    std::cerr << "rooftrace calibrate: --sample '" << a.sample
              << "': no compute capability is known for " << e->name
              << " (rooftrace calibrates NVIDIA GPUs); pick an NVIDIA "
                 "entry of `rooftrace devices`\n";
    return kExitUsage;
  }
  const uint64_t kSampleL2 = arch->l2_mib << 20;
  const int sm = arch->sm;
  CalibrationResult r =
      kernels::MakeModelledSample(*e, sm, kSampleL2, a.quick);
  r.command = command + " (modelled, no GPU used)";
  return WriteOutputs(r, "", a.save_result, a.html);
}

}  // namespace

int CalibrateMain(int argc, char** argv) {
  CommandSpec spec;
  spec.name = "calibrate";
  spec.usage = "rooftrace calibrate [-o profile.json] [--quick] "
               "[--html report.html] [--save-result result.json]";
  spec.summary =
      "Measures this GPU's roofs with rooftrace's reference kernels: STREAM "
      "copy/triad (DRAM bytes/s), cuBLAS/cuBLASLt GEMM at 8192^3 for every "
      "precision the GPU supports (peak FLOP/s), the project's own fp32 and "
      "bf16 GEMMs checked against cuBLAS, seed 000's MLP gelu(x@M)@N fused "
      "vs non-fused, and seed 004's GEMM M-sweep. Writes a device profile "
      "for --device-profile of profile/collect/analyze. Needs the CUDA build "
      "and a GPU, except --from-result and --sample, which only render.";
  spec.epilog =
      "Examples:\n"
      "  rooftrace calibrate --quick -o profile.json --html calibration.html\n"
      "  rooftrace calibrate -o profile.json --save-result result.json\n"
      "  rooftrace calibrate --from-result result.json --html report.html\n"
      "  rooftrace calibrate --sample h100-sxm --html sample.html\n"
      "Counter validation (two steps, on the GPU):\n"
      "  rooftrace profile --mode counters -o cal.sqlite -- \\\n"
      "      rooftrace calibrate --quick --save-result r.json -o p0.json\n"
      "  rooftrace calibrate --from-result r.json --counters-store cal.sqlite "
      "-o profile.json\n";
  CalibrateArgs a;
  spec.options.add_options()
      ("output,o", po::value<std::string>(&a.output),
       "device profile to write (default profile.json; with --from-result "
       "only when given)")
      ("quick", po::bool_switch(&a.quick),
       "smaller sweeps, fewer repeats: under a minute")
      ("html", po::value<std::string>(&a.html),
       "write the calibration report (roofline with MLP points and M-sweep)")
      ("save-result", po::value<std::string>(&a.save_result),
       "also save the raw calibration result (JSON) for later rendering")
      ("from-result", po::value<std::string>(&a.from_result),
       "no GPU: rebuild profile/report from a saved calibration result")
      ("sample", po::value<std::string>(&a.sample),
       "no GPU: render a report MODELLED from a datasheet entry (e.g. "
       "h100-sxm), labelled SAMPLE / not measured")
      ("counters-store", po::value<std::string>(&a.counters_store),
       "with --from-result: validate the hardware counts of a counters-mode "
       "run of that calibration (store of `rooftrace profile --mode "
       "counters`) against the reference kernels' FLOPs and bytes")
      ("run", po::value<int64_t>(&a.run_id)->default_value(-1),
       "run id in --counters-store (default: the newest)")
      ("device", po::value<int>(&a.device)->default_value(0),
       "CUDA device ordinal");
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  if (!a.from_result.empty() && !a.sample.empty()) {
    std::cerr << "rooftrace calibrate: --from-result and --sample exclude "
                 "each other: pick the recorded result or the sample\n";
    return kExitUsage;
  }

  if (!a.from_result.empty()) return RenderFromResult(a);
  if (!a.counters_store.empty()) {
    std::cerr << "rooftrace calibrate: --counters-store works with "
                 "--from-result (the result of the calibrate run that was "
                 "recorded in counters mode)\n";
    return kExitUsage;
  }

  if (!a.sample.empty()) return RenderSample(a, JoinArgs(argc, argv));

  if (a.output.empty()) a.output = "profile.json";
#ifdef ROOFTRACE_HAVE_CUDA
  auto result = RunThroughModule(a.quick, a.device, JoinArgs(argc, argv));
  if (!result.ok()) {
    std::cerr << "rooftrace calibrate: " << result.status().message() << "\n";
    return kExitUsage;
  }
  result->rooftrace_version = kRooftraceVersion;
  return WriteOutputs(*result, a.output, a.save_result, a.html);
#else
  (void)a.device;
  std::cerr << "rooftrace calibrate: calibration needs the CUDA build of "
               "rooftrace and a GPU; this rooftrace was built without CUDA. "
               "Rebuild with the CUDA Toolkit (cmake -DROOFTRACE_WITH_CUDA=ON) "
               "and run it on the GPU, or render a recorded result with "
               "--from-result result.json\n";
  return kExitUsage;
#endif
}

}  // namespace rooftrace
