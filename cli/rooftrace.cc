#include "cli/rooftrace.h"

#include <cstring>
#include <iostream>
#include <string>

#include "analyzer/commands.h"
#include "collector/commands.h"
#include "kernels/commands.h"
#include "rooftrace_version.h"

namespace rooftrace {
namespace {

struct Subcommand {
  const char* name;
  int (*main)(int, char**);
  const char* summary;
};

constexpr Subcommand kSubcommands[] = {
    {"profile", ProfileMain,
     "run a command under rooftrace and print its kernel table"},
    {"collect", CollectMain,
     "standalone collector for many processes, or ingest .rft spools"},
    {"import", ImportMain,
     "read other profilers' traces (Kineto, Nsight) into a store"},
    {"analyze", AnalyzeMain,
     "reports, roofline SVG/HTML from a store or any trace"},
    {"diff", DiffMain, "compare two runs; non-zero exit on regression (CI)"},
    {"history", HistoryMain,
     "a store's runs over time: change points, a CI gate (--check)"},
    {"export", ExportMain, "export a run to Perfetto JSON or CSV"},
    {"predict", PredictMain,
     "analytic roofline of a model per op and phase, before it runs"},
    {"calibrate", CalibrateMain,
     "measure this GPU's roofs with the reference kernels"},
    {"devices", DevicesMain, "the built-in datasheet table of GPU roofs"},
};

void PrintUsage(std::ostream& out) {
  out << "rooftrace " << kRooftraceVersion
      << " - per-kernel roofline profiler for GPU inference\n\n"
         "Usage: rooftrace <command> [options]\n"
         "       rooftrace <command> --help\n\n"
         "Commands:\n";
  for (const auto& s : kSubcommands) {
    std::string name = s.name;
    out << "  " << name << std::string(12 - name.size(), ' ') << s.summary
        << "\n";
  }
  out << "\nExample: rooftrace profile -o run.sqlite -- python serve.py\n";
}

}  // namespace

int RooftraceMain(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  if (cmd == "--version" || cmd == "version") {
    std::cout << "rooftrace " << kRooftraceVersion << "\n";
    return 0;
  }
  for (const auto& s : kSubcommands) {
    if (cmd == s.name) return s.main(argc - 1, argv + 1);
  }
  std::cerr << "rooftrace: unknown command '" << cmd << "'\n\n";
  PrintUsage(std::cerr);
  return 2;
}

}  // namespace rooftrace
