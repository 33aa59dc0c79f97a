// `rooftrace analyze`: the kernel table, phase summary, roofline SVG and
// HTML report of one run of a store or of a .rft trace.
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/expect.h"
#include "analyzer/input.h"
#include "report/report.h"
#include "report/report_format.h"
#include "report/roofline_svg.h"
#include "base/cli.h"
#include "analyzer/commands.h"
#include "base/files.h"

namespace po = boost::program_options;

namespace rooftrace {
namespace {

// What a reader must know before the numbers, on stderr: an incomplete
// run, roofs of another GPU, where a trace broke.
void WarnAboutHeader(const ReportHeader& h, const std::string& profile) {
  if (const std::string w = IncompleteRunWarning(h.run); !w.empty()) {
    std::cerr << "rooftrace analyze: WARNING: " << w << "\n";
  }
  if (!h.device_mismatch.empty()) {
    std::cerr << "rooftrace analyze: warning: --device-profile " << profile
              << ": " << h.device_mismatch << "\n";
  }
  if (!h.ingest_warning.empty()) {
    std::cerr << "rooftrace analyze: "
              << (h.input_cut_short ? "" : "warning: ") << h.ingest_warning
              << "\n";
  }
}

// --svg and --html (each skipped when its path is empty), each saying on
// stderr where it wrote: stdout is the report, which may be CSV or JSON.
Status WriteReportFiles(const Report& report, const std::string& svg_path,
                        const std::string& html_path) {
  if (!svg_path.empty()) {
    const Status st = WriteTextFile(
        svg_path, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
                      RenderRooflineSvg(report));
    if (!st.ok()) return Status(st.code(), "--svg " + st.message());
    std::cerr << "rooftrace analyze: wrote " << svg_path << "\n";
  }
  if (!html_path.empty()) {
    std::ostringstream html;
    MakeReportWriter("html")->Write(report, html);
    const Status st = WriteTextFile(html_path, html.str());
    if (!st.ok()) return Status(st.code(), "--html " + st.message());
    std::cerr << "rooftrace analyze: wrote " << html_path << "\n";
  }
  return OkStatus();
}

}  // namespace

int AnalyzeMain(int argc, char** argv) {
  using namespace analyzer;
  CommandSpec spec;
  spec.name = "analyze";
  spec.usage =
      "rooftrace analyze STORE|FILE.rft [--run ID] [--by "
      "kernel|family|phase|nvtx|step|op|category] [--top N] [--format table|csv|json] "
      "[--device-profile P] [--svg roofline.svg] [--html report.html]";
  spec.summary =
      "Reports where a run's GPU time goes and how far each kernel is from "
      "its roof: per group the count, total and mean time, FLOPs, bytes, "
      "arithmetic intensity, achieved TFLOP/s and GB/s, % of roof, bound and "
      "phase; a header with the device, the roofs and their source, the "
      "FLOP/byte sources and the import statistics; and a prefill/decode "
      "summary. Reads a run store (an SQLite file or a postgresql:// URL) "
      "or a raw .rft trace, told apart by content.";
  spec.epilog =
      "A gzip trace is decompressed within ROOFTRACE_MAX_DECOMPRESSED_MIB "
      "(MiB; default 64x the file's size, at least 1 GiB, at most a fifth of "
      "this machine's memory): a file that expands past it is refused, exit "
      "2.\n"
      "Examples:\n"
      "  rooftrace analyze run.sqlite\n"
      "  rooftrace analyze run.rft --by kernel --top 20\n"
      "  rooftrace analyze runs.sqlite --run 3 --format json > run3.json\n"
      "  rooftrace analyze run.sqlite --html report.html --svg roofline.svg\n"
      "  rooftrace analyze run.sqlite --device-profile h100.json   "
      "(re-annotate with calibrated roofs)\n"
      "  rooftrace analyze replay.json.gz --capture capture.json.gz   "
      "(a serving engine's graph replays with their captured shapes)";
  std::string input, by, format, device_profile, svg_path, html_path, expect;
  std::vector<std::string> captures;
  int64_t run_id = -1;
  int64_t top = 0;  // signed: a negative value is refused, not wrapped
  spec.options.add_options()
      ("run", po::value<int64_t>(&run_id), "run id (default: the latest run)")
      ("by", po::value<std::string>(&by)->default_value("family"),
       "group by kernel, family, phase, nvtx, step, op (the framework "
       "operator that launched each kernel, where it is one rooftrace "
       "models) or category (GEMM, attention, norm, elementwise, reduce, "
       "communication, ...); op and category need a trace, not a store")
      ("top", po::value<int64_t>(&top)->default_value(0),
       "show only the N groups with the most time (0: all)")
      ("format", po::value<std::string>(&format)->default_value("table"),
       "table, csv or json (on stdout)")
      ("device-profile", po::value<std::string>(&device_profile),
       "recompute roofs and bounds with a calibrated profile (rooftrace "
       "calibrate) or a datasheet key (h100-sxm)")
      ("capture", po::value<std::vector<std::string>>(&captures)->composing(),
       "a PyTorch profiler trace recorded while the engine captured its "
       "CUDA/HIP graphs (repeatable): the input's graph replays take the "
       "captured operators' shapes, launch by launch")
      ("svg", po::value<std::string>(&svg_path), "write the roofline plot (SVG)")
      ("html", po::value<std::string>(&html_path),
       "write a self-contained HTML report")
      ("expect", po::value<std::string>(&expect),
       "compare the run's GEMM kernels with a prediction (rooftrace predict "
       "--format json): per op and phase, predicted vs measured time, "
       "efficiency and bound; printed under the table, or instead of the "
       "report with --format csv|json");
  spec.hidden.add_options()("input", po::value<std::string>(&input));
  spec.positional.add("input", 1);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  auto fail = [](const std::string& message, int code = kExitUsage) {
    std::cerr << "rooftrace analyze: " << message << "\n";
    return code;
  };
  if (input.empty()) {
    return fail("no input: pass a run store or a .rft trace, e.g. `rooftrace "
                "analyze run.sqlite`");
  }
  ReportOptions options;
  const std::optional<GroupBy> group_by = GroupByFromName(by);
  if (!group_by || *group_by == GroupBy::kFamilyShape) {
    return fail("--by '" + by +
                "' is not one of kernel, family, phase, nvtx, step, op, "
                "category");
  }
  options.group_by = *group_by;
  if (top < 0) {
    return fail("--top " + std::to_string(top) +
                ": give the number of groups to show, or 0 for all");
  }
  options.top = static_cast<size_t>(top);
  if (vm.count("run")) options.run_id = run_id;
  if (format != "table" && format != "csv" && format != "json") {
    return fail("--format '" + format + "' is not one of table, csv, json");
  }
  StatusOr<Expectation> expected = Expectation{};
  if (!expect.empty()) expected = LoadExpectation(expect);
  if (!expected.ok()) return fail(expected.status().message());
  StatusOr<AnalyzedInput> analyzed = OpenAndReport(input, device_profile, options, captures);
  if (!analyzed.ok()) {
    return fail(analyzed.status().message(), ExitCodeFor(analyzed.status()));
  }
  const Report& report = analyzed->report;
  WarnAboutHeader(report.header, device_profile);
  if (expect.empty() || format == "table") {
    MakeReportWriter(format)->Write(report, std::cout);
  }
  if (!expect.empty()) {
    const StatusOr<ExpectReport> compared = CompareRunWithExpectation(
        input, report.header.run.run_id, *expected);
    if (!compared.ok()) {
      return fail(compared.status().message(),
                  ExitCodeFor(compared.status()));
    }
    // Said on stderr too: csv and json would otherwise be silently empty.
    if (compared->no_shapes()) {
      std::cerr << "rooftrace analyze: warning: --expect " << expect << ": "
                << NoShapesMessage(*compared) << "\n";
    }
    WriteExpectReport(*compared, format, std::cout);
  }
  if (const Status st = WriteReportFiles(report, svg_path, html_path);
      !st.ok()) {
    return fail(st.message());
  }
  if (report.header.input_cut_short) {
    // The report is shown, but a cut trace is no clean result (exit 3).
    std::cerr << "rooftrace analyze: " << input
              << " was cut short: the report holds only what came before "
                 "the break\n";
    return kExitIncomplete;
  }
  return kExitOk;
}

}  // namespace rooftrace
