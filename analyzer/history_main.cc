// `rooftrace history`: the nightly view of a store (analyzer/history.h);
// with --check, a CI gate.
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/commands.h"
#include "analyzer/history.h"
#include "analyzer/input.h"
#include "base/cli.h"
#include "base/files.h"
#include "store/db.h"

namespace po = boost::program_options;

namespace rooftrace {

int HistoryMain(int argc, char** argv) {
  using namespace analyzer;
  CommandSpec spec;
  spec.name = "history";
  spec.usage =
      "rooftrace history STORE [--where KEY=VALUE]... [--by "
      "family+shape|family|phase|nvtx] [--format table|markdown|json] "
      "[--check [--strict]] [--window N] [--metric NAME] [--junit FILE] "
      "[--html FILE]";
  spec.summary =
      "The runs of a store whose labels match every --where (the --label "
      "pairs given to profile, collect or import), in the order they "
      "started, and per group the series of mean time per launch and % of "
      "roof across them. --metric chooses the figure judged (time per "
      "launch by default; % of roof, share of GPU time, or a per-run figure: "
      "GPU time, GPU time per step, decode or prefill tokens/s), each with "
      "its worse direction (a drop in tokens/s is a regression). "
      "Where a series moved it shows a change point: the "
      "run, the direction, the size, its p-value, and the group's % of roof "
      "before and after. Change points are found by E-Divisive means and "
      "judged by Student's t-test (p <= --max-pvalue, corrected for the "
      "split positions tried) and a minimum size (--min-change); a group "
      "that ran in too few runs, or whose runs scatter too much to judge "
      "(--max-noise), is said to be so. The latest nights are also tested "
      "against the runs since the last change point (from 3 runs on): "
      "suspected on the first night beyond the noise band, regressed when "
      "the next night confirms it or one night is far beyond it. Weaker "
      "change points (--watch-pvalue) are listed as watch. --check makes it "
      "a CI gate: exit 1 when a regression starts in the latest --window "
      "runs (with --strict also when one is suspected), 0 otherwise; false "
      "alarms are held across all the groups "
      "judged at once with Benjamini-Hochberg (--fdr), so hundreds of groups "
      "do not make a gate that fails most nights. Exit 3 with --check when "
      "a run in the window is incomplete; 2 on bad input. docs/history.md "
      "explains the method.";
  spec.epilog =
      "Examples:\n"
      "  rooftrace import trace.json.gz -o nightly.sqlite --label "
      "branch=main --label commit=$GIT_SHA\n"
      "  rooftrace history nightly.sqlite --where branch=main\n"
      "  rooftrace history nightly.sqlite --where branch=main --check "
      "--junit history.xml\n"
      "  rooftrace history nightly.sqlite --by phase --format markdown";
  std::string input, by, format, junit, html, metric_name;
  std::vector<std::string> where_words;
  bool check = false, strict = false;
  double watch_pvalue = 0.2;
  int64_t window = 5, min_segment = 5;
  double max_pvalue = 0.01, min_change = 2.0, fdr = 0.05, max_noise = 10.0;
  spec.options.add_options()
      ("where", po::value(&where_words)->composing(),
       "KEY=VALUE a run's labels must hold (repeatable; all must match)")
      ("by", po::value<std::string>(&by)->default_value("family+shape"),
       "group by family+shape, family, phase or nvtx")
      ("format", po::value<std::string>(&format)->default_value("table"),
       "table, markdown or json (on stdout)")
      ("check", po::bool_switch(&check),
       "exit 1 when a regression starts in the latest --window runs")
      ("strict", po::bool_switch(&strict),
       "with --check, exit 1 also when a group is suspected (one night "
       "beyond its noise band, not yet confirmed)")
      ("metric", po::value<std::string>(&metric_name)->default_value("time"),
       "the figure judged: time (per launch), roof, share, gpu-time, "
       "gpu-time-per-step, decode-tokens/s or prefill-tokens/s")
      ("watch-pvalue",
       po::value<double>(&watch_pvalue)->default_value(0.2, "0.2"),
       "change points up to this p-value (above --max-pvalue) are listed "
       "as watch")
      ("window", po::value<int64_t>(&window)->default_value(5),
       "the latest runs --check judges")
      ("junit", po::value<std::string>(&junit),
       "also write JUnit XML: one testcase per group")
      ("html", po::value<std::string>(&html),
       "also write a self-contained trend page: one plot per group, worst "
       "first, change points marked, the window shaded")
      ("max-pvalue", po::value<double>(&max_pvalue)->default_value(0.01, "0.01"),
       "a change point's p-value must be at most this")
      ("min-change", po::value<double>(&min_change)->default_value(2.0, "2"),
       "and its size at least this many percent")
      ("min-segment", po::value<int64_t>(&min_segment)->default_value(5),
       "runs needed on each side of a change point")
      ("fdr", po::value<double>(&fdr)->default_value(0.05, "0.05"),
       "false discovery rate held across the groups --check judges")
      ("max-noise", po::value<double>(&max_noise)->default_value(10.0, "10"),
       "percent scatter above which a group is too noisy to judge");
  spec.hidden.add_options()("input", po::value<std::string>(&input));
  spec.positional.add("input", 1);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  const CommandFailure fail{"rooftrace history"};
  if (input.empty()) {
    return fail("no store given: rooftrace history STORE (a store written by "
                "profile -o, collect --store or import -o)");
  }
  HistoryOptions options;
  const auto where = ParseKeyValues(where_words, "--where");
  if (!where.ok()) return fail(where.status().message());
  options.where = *where;
  const std::optional<GroupBy> group_by = GroupByFromName(by);
  if (!group_by ||
      (*group_by != GroupBy::kFamilyShape && *group_by != GroupBy::kFamily &&
       *group_by != GroupBy::kPhase && *group_by != GroupBy::kNvtx)) {
    return fail("--by '" + by +
                "' is not one of family+shape, family, phase, nvtx");
  }
  options.group_by = *group_by;
  if (format != "table" && format != "markdown" && format != "json") {
    return fail("--format '" + format + "' is not one of table, markdown, json");
  }
  const std::optional<HistoryMetric> metric = MetricFromName(metric_name);
  if (!metric) {
    return fail("--metric '" + metric_name + "' is not one of " +
                MetricNames());
  }
  options.metric = *metric;
  if (strict && !check) return fail("--strict needs --check (it sets the exit code)");
  if (!(watch_pvalue > 0 && watch_pvalue < 1)) {
    return fail("--watch-pvalue must be between 0 and 1");
  }
  options.watch_pvalue = watch_pvalue;
  if (window < 1) return fail("--window must be at least 1 run");
  if (min_segment < 2) return fail("--min-segment must be at least 2 runs");
  if (!(max_pvalue > 0 && max_pvalue < 1) || !(fdr > 0 && fdr < 1)) {
    return fail("--max-pvalue and --fdr must be between 0 and 1");
  }
  if (!(min_change >= 0) || !(max_noise > 0)) {
    return fail("--min-change must be >= 0 and --max-noise > 0 (percent)");
  }
  options.window = static_cast<int>(window);
  options.change_points.max_pvalue = max_pvalue;
  options.change_points.min_magnitude = min_change / 100;
  options.change_points.min_segment = static_cast<int>(min_segment);
  options.fdr = fdr;
  options.max_noise = max_noise / 100;

  // A store only: a history is many runs, and a trace file is one.
  const StatusOr<InputKind> kind = DetectInputKind(input);
  if (!kind.ok()) return fail(kind.status().message());
  if (*kind != InputKind::kStore) {
    return fail(input + " is a trace, not a run store: import the nightly "
                "traces into one store (rooftrace import FILE -o STORE "
                "--label KEY=VALUE) and give the store");
  }
  StoreReader store;
  // Every output names the store without its password.
  const std::string shown = StoreDisplayName(input);
  if (const Status st = store.Open(input, shown); !st.ok()) {
    return fail(st.message());
  }
  const StatusOr<HistoryResult> history = BuildHistory(store, shown, options);
  if (!history.ok()) return fail(history.status().message());
  const HistoryResult& h = *history;
  if (format == "table") WriteHistoryTable(h, std::cout);
  if (format == "markdown") WriteHistoryMarkdown(h, std::cout);
  if (format == "json") WriteHistoryJson(h, std::cout);
  if (!junit.empty()) {
    std::ostringstream xml;
    WriteHistoryJunit(h, xml);
    const Status st = WriteTextFile(junit, xml.str());
    if (!st.ok()) return fail("--junit " + st.message());
  }
  if (!html.empty()) {
    std::ostringstream page;
    WriteHistoryHtml(h, page);
    const Status st = WriteTextFile(html, page.str());
    if (!st.ok()) return fail("--html " + st.message());
    std::cerr << "rooftrace history: wrote " << html << "\n";
  }
  if (!check) return kExitOk;
  if (!h.incomplete_in_window.empty()) {
    // Numbers of an incomplete run leave data out: no verdict either way.
    std::cerr << "rooftrace history: a run in the window is incomplete; "
                 "store it again or widen the history past it\n";
    return kExitIncomplete;
  }
  if (h.regressed > 0) {
    std::cerr << "rooftrace history: " << h.regressed
              << " group(s) regressed in the latest " << options.window
              << " runs\n";
    return kExitFailure;
  }
  if (strict && h.suspected > 0) {
    std::cerr << "rooftrace history: " << h.suspected
              << " group(s) suspected on the latest nights (--strict)\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace rooftrace
