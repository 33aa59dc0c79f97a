// `rooftrace analyze`: the kernel table, phase summary, roofline SVG and
// HTML report of one run of a store or of a .rft trace; with several
// inputs (or a folder), a job's ranks side by side.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/expect.h"
#include "analyzer/input.h"
#include "sources/stream_input.h"
#include "report/job_report.h"
#include "report/report.h"
#include "report/report_format.h"
#include "report/text_util.h"
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
    StatusOr<std::string> svg = RenderRooflineSvg(report);
    if (!svg.ok()) {
      return Status(svg.status().code(), "--svg " + svg.status().message());
    }
    const Status st = WriteTextFile(
        svg_path, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + *svg);
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

namespace {

using analyzer::AnalyzedInput;
using analyzer::DetectInput;
using analyzer::ExitCodeFor;
using analyzer::OpenAndReport;
using analyzer::TraceExtras;

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The files of a job: the inputs given, a folder's files (hidden ones
// and ones no source reads skipped, said on stderr) in natural order.
StatusOr<std::vector<std::string>> JobFiles(
    const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    if (!IsDirectory(in)) {
      files.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(in, ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name[0] == '.' || !e.is_regular_file()) continue;
      if (!DetectInput(e.path().string()).ok()) {
        std::cerr << "rooftrace analyze: " << e.path().string()
                  << ": skipped, not a trace or store rooftrace reads\n";
        continue;
      }
      found.push_back(e.path().string());
    }
    if (ec) {
      return InvalidArgument(in + ": cannot list the folder (" + ec.message() +
                             ")");
    }
    if (found.empty()) {
      return InvalidArgument(in + ": no trace or store in the folder; pass "
                                  "the ranks' traces");
    }
    std::sort(found.begin(), found.end(),
              [](const std::string& a, const std::string& b) {
                return NaturalLess(a, b);
              });
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// `analyze RANK0 RANK1 ...` or `analyze DIR`: each input's report, then
// the ranks side by side (report/job_report.h).
int AnalyzeJob(const std::vector<std::string>& inputs,
               const std::string& device_profile, const ReportOptions& base,
               const TraceExtras& extras, const std::string& format) {
  const CommandFailure fail{"rooftrace analyze"};
  StatusOr<std::vector<std::string>> files = JobFiles(inputs);
  if (!files.ok()) return fail(files.status().message());
  std::vector<Report> reports;
  std::vector<int64_t> ranks;
  std::map<int64_t, std::string> file_of_rank;
  bool cut = false;
  for (size_t i = 0; i < files->size(); ++i) {
    const std::string& file = (*files)[i];
    if (files->size() > 8) {
      std::cerr << "rooftrace analyze: [" << i + 1 << "/" << files->size()
                << "] " << file << "\n";
    }
    StatusOr<AnalyzedInput> analyzed =
        OpenAndReport(file, device_profile, base, extras);
    if (!analyzed.ok()) {
      return fail(analyzed.status().message(), ExitCodeFor(analyzed.status()));
    }
    WarnAboutHeader(analyzed->report.header, device_profile);
    const int64_t rank = analyzed->report.header.rank.value_or(
        static_cast<int64_t>(i));
    auto [it, fresh] = file_of_rank.emplace(rank, file);
    if (!fresh) {
      return fail(it->second + " and " + file + " are both rank " +
                  std::to_string(rank) +
                  ": pass one trace per rank of one job");
    }
    cut |= analyzed->report.header.input_cut_short;
    ranks.push_back(rank);
    reports.push_back(std::move(analyzed->report));
  }
  const JobReport job = BuildJobReport(reports, ranks);
  if (format == "json") {
    WriteJobJson(job, std::cout);
  } else {
    WriteJobTable(job, std::cout);
  }
  if (cut) {
    std::cerr << "rooftrace analyze: an input was cut short: its rank holds "
                 "only what came before the break\n";
    return kExitIncomplete;
  }
  return kExitOk;
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
      "or a raw .rft trace, told apart by content. Given several inputs or a "
      "folder (one trace per rank of a job), it puts the ranks side by side "
      "instead: each rank's GPU time, busy and idle time, exposed "
      "communication, and the time it waited in collectives for the last "
      "rank to arrive (read from the collective kernels' durations, which "
      "need no shared clock).";
  spec.epilog =
      "A gzip trace is decompressed within ROOFTRACE_MAX_DECOMPRESSED_MIB "
      "(MiB; default 64x the file's size, at least 1 GiB, at most a fifth of "
      "this machine's memory): a file that expands past it is refused, exit "
      "2.\n"
      "Examples:\n"
      "  rooftrace analyze run.sqlite\n"
      "  rooftrace analyze run.rft --by kernel --top 20\n"
      "  rooftrace analyze traces/   (a job's ranks side by side)\n"
      "  rooftrace analyze runs.sqlite --run 3 --format json > run3.json\n"
      "  rooftrace analyze run.sqlite --html report.html --svg roofline.svg\n"
      "  rooftrace analyze run.sqlite --device-profile h100.json   "
      "(re-annotate with calibrated roofs)\n"
      "  rooftrace analyze replay.json.gz --capture capture.json.gz   "
      "(a serving engine's graph replays with their captured shapes)\n"
      "  rooftrace analyze vllm.json.gz --model gpt-oss-20b   "
      "(MoE layers' top-k and expert sizes from the model's config)";
  std::string input, by, format, device_profile, svg_path, html_path, expect,
      model;
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
      ("model", po::value<std::string>(&model),
       "the model the trace ran: a Hugging Face config.json or a built-in "
       "name (gpt-oss-20b, DeepSeek-V3, Mixtral-8x7B, ...); gives what "
       "operator arguments do not say (an MoE layer's top-k and expert "
       "width); without it such layers stay blank")
      ("svg", po::value<std::string>(&svg_path), "write the roofline plot (SVG)")
      ("html", po::value<std::string>(&html_path),
       "write a self-contained HTML report")
      ("expect", po::value<std::string>(&expect),
       "compare the run's GEMM kernels with a prediction (rooftrace predict "
       "--format json): per op and phase, predicted vs measured time, "
       "efficiency and bound; printed under the table, or instead of the "
       "report with --format csv|json");
  std::vector<std::string> inputs;
  spec.hidden.add_options()(
      "input", po::value<std::vector<std::string>>(&inputs)->composing());
  spec.positional.add("input", -1);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  const CommandFailure fail{"rooftrace analyze"};
  if (inputs.empty()) {
    return fail("no input: pass a run store or a .rft trace, e.g. `rooftrace "
                "analyze run.sqlite`");
  }
  // "-", a pipe or a FIFO is read once into a private copy, read as a
  // file (an SQLite store or export is refused from them).
  StreamInputs streams;
  for (std::string& in : inputs) {
    auto path = streams.Resolve(in);
    if (!path.ok()) return fail(path.status().message());
    in = *path;
  }
  for (std::string& capture : captures) {
    auto path = streams.Resolve(capture);
    if (!path.ok()) return fail(path.status().message());
    capture = *path;
  }
  input = inputs.front();
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
  TraceExtras extras;
  extras.captures = captures;
  if (!model.empty()) {
    StatusOr<ModelFacts> facts = LoadModelFacts(model);
    if (!facts.ok()) return fail(facts.status().message());
    extras.model = std::move(*facts);
  }
  if (inputs.size() > 1 || (inputs.size() == 1 && IsDirectory(inputs[0]))) {
    if (format == "csv" || !expect.empty() || !svg_path.empty() ||
        !html_path.empty() || vm.count("run")) {
      return fail("several inputs (a job's ranks) give the ranks side by "
                  "side, as a table or --format json; --format csv, "
                  "--expect, --svg, --html and --run are for one input: "
                  "analyze each rank on its own for those");
    }
    return AnalyzeJob(inputs, device_profile, options, extras, format);
  }
  StatusOr<AnalyzedInput> analyzed =
      OpenAndReport(input, device_profile, options, extras);
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
