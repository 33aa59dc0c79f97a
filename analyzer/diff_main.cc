// `rooftrace diff`: the nightly regression check between two runs.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "analyzer/analyze.h"
#include "analyzer/diff.h"
#include "base/cli.h"
#include "analyzer/commands.h"
#include "base/files.h"
#include "report/report_format.h"
#include "sources/stream_input.h"
#include "store/db.h"

namespace po = boost::program_options;

namespace rooftrace {
namespace {

// An incomplete run misses kernels: its groups would look faster, or gone.
// Says which side is incomplete and why (a warning when allowed); false
// when the comparison must not go on.
bool CompleteOrAllowed(const std::string& base_path, const RunRow& base,
                       const std::string& cand_path, const RunRow& cand,
                       bool allow_incomplete) {
  bool incomplete = false;
  for (const auto& [side, path, run] :
       {std::tuple{"baseline", base_path, base},
        std::tuple{"candidate", cand_path, cand}}) {
    const std::string w = IncompleteRunWarning(run);
    if (w.empty()) continue;
    incomplete = true;
    std::cerr << "rooftrace diff: " << (allow_incomplete ? "WARNING: " : "")
              << side << " " << StoreDisplayName(path) << ": " << w << "\n";
  }
  return !incomplete || allow_incomplete;
}

}  // namespace

int DiffMain(int argc, char** argv) {
  using namespace analyzer;
  CommandSpec spec;
  spec.name = "diff";
  spec.usage =
      "rooftrace diff BASELINE CANDIDATE [--threshold PCT] [--by "
      "family|family+shape|kernel] [--junit FILE] [--format "
      "table|markdown|json] [--min-count N] [--min-time-ms T]";
  spec.summary =
      "Compares two runs (stores or .rft traces) group by group, matching "
      "kernels by family and GEMM shape. A matched group regressed when its "
      "mean time per launch rose, or its % of roof fell, by more than the "
      "threshold, and both runs have at least --min-count launches and "
      "--min-time-ms of it (below that it is noise). Exit 1 when any group "
      "regressed, 0 otherwise, 2 on bad input, 3 when either run is "
      "incomplete (it lost data, or its writer never finished) unless "
      "--allow-incomplete. Runs from different GPUs are compared with a loud "
      "warning.";
  spec.epilog =
      "A gzip trace is decompressed within ROOFTRACE_MAX_DECOMPRESSED_MIB "
      "(MiB; default 64x the file's size, at least 1 GiB, at most a fifth of "
      "this machine's memory): a file that expands past it is refused, exit "
      "2.\n"
      "Examples:\n"
      "  rooftrace diff nightly-prev.sqlite nightly.sqlite --junit diff.xml\n"
      "  rooftrace diff base.rft cand.rft --threshold 3 --format markdown\n"
      "  rooftrace diff runs.sqlite runs.sqlite --baseline-run 1 "
      "--candidate-run 2";
  std::string base_path, cand_path, by, format, junit, device_profile;
  double threshold = 5, min_time_ms = 0.1;
  int64_t min_count = 5, base_run = -1, cand_run = -1;
  bool allow_incomplete = false;
  spec.options.add_options()
      ("threshold", po::value<double>(&threshold)->default_value(5, "5"),
       "regression threshold in percent")
      ("by", po::value<std::string>(&by)->default_value("family+shape"),
       "match groups by family+shape, family or kernel")
      ("junit", po::value<std::string>(&junit),
       "also write JUnit XML (one testcase per group)")
      ("format", po::value<std::string>(&format)->default_value("table"),
       "table, markdown or json (on stdout)")
      ("min-count", po::value<int64_t>(&min_count)->default_value(5),
       "launches a group needs on both sides to be judged")
      ("min-time-ms", po::value<double>(&min_time_ms)->default_value(0.1, "0.1"),
       "total milliseconds a group needs on both sides to be judged")
      ("baseline-run", po::value<int64_t>(&base_run),
       "run id in BASELINE (default: its latest run)")
      ("candidate-run", po::value<int64_t>(&cand_run),
       "run id in CANDIDATE (default: its latest run)")
      ("device-profile", po::value<std::string>(&device_profile),
       "re-annotate both runs with these roofs before comparing")
      ("allow-incomplete", po::bool_switch(&allow_incomplete),
       "compare incomplete runs anyway (with a warning) instead of exit 3");
  spec.hidden.add_options()("baseline", po::value<std::string>(&base_path))(
      "candidate", po::value<std::string>(&cand_path));
  spec.positional.add("baseline", 1).add("candidate", 1);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  const CommandFailure fail{"rooftrace diff"};
  if (base_path.empty() || cand_path.empty()) {
    return fail("needs two inputs: rooftrace diff BASELINE CANDIDATE");
  }
  ReportOptions options;
  const std::optional<GroupBy> group_by = GroupByFromName(by);
  if (!group_by || (*group_by != GroupBy::kFamilyShape &&
                    *group_by != GroupBy::kFamily && *group_by != GroupBy::kKernel)) {
    return fail("--by '" + by + "' is not one of family+shape, family, kernel");
  }
  if (format != "table" && format != "markdown" && format != "json") {
    return fail("--format '" + format + "' is not one of table, markdown, json");
  }
  if (!(threshold >= 0)) return fail("--threshold must be a percentage >= 0");
  if (min_count < 0 || !(min_time_ms >= 0)) {
    return fail("--min-count and --min-time-ms must be >= 0");
  }
  options.group_by = *group_by;
  options.with_families = false;
  ReportOptions base_options = options, cand_options = options;
  if (vm.count("baseline-run")) base_options.run_id = base_run;
  if (vm.count("candidate-run")) cand_options.run_id = cand_run;

  // "-", a pipe or a FIFO is read once into a private copy, read as a
  // file (an SQLite store or export is refused from them).
  StreamInputs streams;
  for (auto [side, path] : {std::pair{"baseline ", &base_path},
                            std::pair{"candidate ", &cand_path}}) {
    auto resolved = streams.Resolve(*path);
    if (!resolved.ok()) return fail(side + resolved.status().message());
    *path = *resolved;
  }
  auto base = OpenAndReport(base_path, device_profile, base_options);
  if (!base.ok()) {
    return fail("baseline " + base.status().message(), ExitCodeFor(base.status()));
  }
  auto cand = OpenAndReport(cand_path, device_profile, cand_options);
  if (!cand.ok()) {
    return fail("candidate " + cand.status().message(), ExitCodeFor(cand.status()));
  }
  if (!CompleteOrAllowed(base_path, base->report.header.run, cand_path,
                         cand->report.header.run, allow_incomplete)) {
    return fail("not comparing an incomplete run: store the run again (see "
                "its reason), or pass --allow-incomplete to compare anyway",
                kExitIncomplete);
  }
  // Roofs of another GPU make every fraction of roof meaningless: say so.
  for (const auto& [side, report] :
       {std::pair{"baseline", &base->report}, {"candidate", &cand->report}}) {
    if (report->header.device_mismatch.empty()) continue;
    std::cerr << "rooftrace diff: warning: --device-profile " << device_profile
              << ": " << side << ": " << report->header.device_mismatch
              << "\n";
  }
  DiffOptions diff_options;
  diff_options.threshold_pct = threshold;
  diff_options.min_count = min_count;
  diff_options.min_time_ms = min_time_ms;
  const DiffResult d = DiffReports(base->report, cand->report, diff_options);
  if (d.different_devices) {
    std::cerr << "rooftrace diff: WARNING: baseline ran on '" << d.base_device
              << "', candidate on '" << d.cand_device
              << "': different GPUs, compared anyway\n";
  }
  if (format == "table") WriteDiffTable(d, std::cout);
  if (format == "markdown") WriteDiffMarkdown(d, std::cout);
  if (format == "json") WriteDiffJson(d, std::cout);
  if (!junit.empty()) {
    std::ostringstream xml;
    WriteDiffJunit(d, xml);
    const Status st = WriteTextFile(junit, xml.str());
    if (!st.ok()) return fail("--junit " + st.message());
  }
  return d.regressions > 0 ? kExitFailure : kExitOk;
}

}  // namespace rooftrace
