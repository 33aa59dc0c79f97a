// `rooftrace export`: a run as Chrome trace event JSON (Perfetto) or as one
// CSV file per store table.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/export.h"
#include "analyzer/input.h"
#include "base/cli.h"
#include "analyzer/commands.h"
#include "sources/stream_input.h"

namespace po = boost::program_options;

namespace rooftrace {

int ExportMain(int argc, char** argv) {
  using namespace analyzer;
  CommandSpec spec;
  spec.name = "export";
  spec.usage =
      "rooftrace export STORE|FILE.rft [--run ID] --perfetto out.json | --csv DIR";
  spec.summary =
      "Exports one run. --perfetto writes Chrome trace event JSON that opens "
      "in Perfetto (ui.perfetto.dev, offline: trace_processor) and "
      "chrome://tracing: kernels and copies on one track per GPU stream, NVTX "
      "ranges on one track per host thread, each kernel's FLOPs, bytes, AI, "
      "% of roof, bound and phase in its args. --csv writes one CSV file per "
      "store table (docs/store.md), restricted to the run.";
  spec.epilog =
      "A gzip trace is decompressed within ROOFTRACE_MAX_DECOMPRESSED_MIB "
      "(MiB; default 64x the file's size, at least 1 GiB, at most a fifth of "
      "this machine's memory): a file that expands past it is refused, exit "
      "2.\n"
      "Examples:\n"
      "  rooftrace export run.sqlite --perfetto run.json\n"
      "  rooftrace export run.rft --csv run-csv/";
  std::string input, perfetto, csv_dir, device_profile;
  int64_t run_id = -1;
  spec.options.add_options()
      ("run", po::value<int64_t>(&run_id), "run id (default: the latest run)")
      ("perfetto", po::value<std::string>(&perfetto),
       "write Chrome trace event JSON to this file")
      ("csv", po::value<std::string>(&csv_dir),
       "write one CSV file per table into this directory")
      ("device-profile", po::value<std::string>(&device_profile),
       "for a .rft input: annotate with this calibrated profile");
  spec.hidden.add_options()("input", po::value<std::string>(&input));
  spec.positional.add("input", 1);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  const CommandFailure fail{"rooftrace export"};
  if (input.empty()) return fail("no input: pass a run store or a .rft trace");
  if (perfetto.empty() == csv_dir.empty()) {
    return fail("pass exactly one of --perfetto FILE or --csv DIR");
  }
  // "-", a pipe or a FIFO is read once into a private copy, read as a
  // file (an SQLite store or export is refused from them).
  StreamInputs streams;
  auto resolved = streams.Resolve(input);
  if (!resolved.ok()) return fail(resolved.status().message());
  InputOptions input_options;
  input_options.device_profile_path = device_profile;
  auto opened = AnalyzerInput::Open(*resolved, input_options);
  if (!opened.ok()) return fail(opened.status().message(), ExitCodeFor(opened.status()));
  AnalyzerInput& in = **opened;
  if (!in.ingest_warning().empty()) {
    std::cerr << "rooftrace export: " << (in.cut_short() ? "" : "warning: ")
              << in.ingest_warning() << "\n";
  }
  // A cut trace is exported up to the break, and the exit says so (3).
  const int done = in.cut_short() ? kExitIncomplete : kExitOk;
  std::optional<int64_t> wanted;
  if (vm.count("run")) wanted = run_id;
  auto run = in.store().ResolveRun(wanted);
  if (!run.ok()) return fail(run.status().message(), ExitCodeFor(run.status()));

  if (!perfetto.empty()) {
    std::ofstream f(perfetto, std::ios::binary | std::ios::trunc);
    if (!f) {
      return fail("--perfetto " + perfetto +
                  ": cannot write (does the directory exist and is it "
                  "writable?)");
    }
    PerfettoStats stats;
    const Status st = WritePerfettoJson(in.store(), run->run_id, f, &stats);
    f.close();
    if (!st.ok()) return fail(st.message(), ExitCodeFor(st));
    if (in.cut_short() && stats.kernels == 0) {
      std::remove(perfetto.c_str());
      return fail(input + " was cut short before its first kernel: nothing "
                  "to export, " + perfetto + " not written", kExitIncomplete);
    }
    std::cout << "wrote " << perfetto << ": run " << run->run_id << ", "
              << stats.kernels << " kernels, " << stats.memcpys << " copies, "
              << stats.nvtx_ranges << " NVTX ranges";
    if (stats.open_ranges) {
      std::cout << " (" << stats.open_ranges << " never-closed ranges left out)";
    }
    std::cout << "\n";
    return done;
  }
  std::vector<std::string> files;
  const Status st = WriteCsvTables(in.store(), run->run_id, csv_dir, &files);
  if (!st.ok()) return fail(st.message(), ExitCodeFor(st));
  std::cout << "wrote " << files.size() << " CSV files for run " << run->run_id
            << " into " << csv_dir << "\n";
  return done;
}

}  // namespace rooftrace
