#include "analyzer/history.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "report/report_format.h"
#include "report/text_util.h"

namespace rooftrace::analyzer {
namespace {

bool Matches(const RunLabels& labels, const RunLabels& where) {
  for (const auto& [key, value] : where) {
    const auto it = std::find_if(labels.begin(), labels.end(),
                                 [&](const auto& l) { return l.first == key; });
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

// "key=value, ..." of every label the store's runs have (at most 12), for
// a message saying what --where could have asked for.
std::string KnownLabels(const std::vector<RunRow>& runs) {
  std::set<std::string> seen;
  for (const RunRow& r : runs) {
    for (const auto& [k, v] : r.labels) seen.insert(k + "=" + v);
  }
  if (seen.empty()) return "no run of it has labels (--label on profile, "
                           "collect or import)";
  std::string out = "its labels: ";
  int n = 0;
  for (const std::string& s : seen) {
    if (n == 12) {
      out += ", ...";
      break;
    }
    out += (n++ ? ", " : "") + s;
  }
  return out;
}

std::string Percent(std::optional<double> fraction, int digits = 1) {
  if (!fraction) return "-";
  return Fixed(*fraction * 100, digits) + "%";
}

std::string Signed(double fraction) {
  return (fraction >= 0 ? "+" : "") + Fixed(fraction * 100, 1) + "%";
}

std::string PValue(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

std::string GroupTitle(const HistoryGroup& g) {
  return g.name + (g.shape.empty() ? "" : " [" + g.shape + "]");
}

// The shown value of a figure of the judged metric ("100.05 us per launch").
std::string MetricText(const HistoryResult& h, double v) {
  const HistoryMetricInfo& m = MetricInfo(h.options.metric);
  return Fixed(v * m.scale, 2) + " " + m.unit;
}

// "slower"/"faster" for times, "worse"/"better" for the rest.
std::string Direction(const HistoryResult& h, bool worse) {
  const HistoryMetricInfo& m = MetricInfo(h.options.metric);
  if (m.higher_is_worse && h.options.metric != HistoryMetric::kTimeShare) {
    return worse ? "slower" : "faster";
  }
  return worse ? "worse" : "better";
}

const char* LatestStateName(LatestState s) {
  switch (s) {
    case LatestState::kWatch: return "watch";
    case LatestState::kSuspected: return "suspected";
    case LatestState::kRegressed: return "regressed";
  }
  return "?";
}

// "run 45 (15 runs ago): 100.0 -> 105.1 us per launch (+5.1% [+4.2%,
// +6.0%], slower), sd 1.02 -> 0.98, 30 -> 15 runs, p=3.2e-05; % of roof
// 71.0% -> 58.0%"; a latest-night finding says so after the run, a weak
// change point starts with "watch:".
std::string ChangeLine(const HistoryResult& h, const HistoryChange& c) {
  const HistoryMetricInfo& m = MetricInfo(h.options.metric);
  std::string out =
      std::string(c.kind == HistoryChangeKind::kWatch ? "watch: " : "") +
      "run " + std::to_string(c.run_id) + " (" +
      (c.runs_ago == 0 ? std::string("the latest run")
                       : std::to_string(c.runs_ago) + " runs ago") +
      ")";
  if (c.kind == HistoryChangeKind::kLatestNights) {
    out += " [latest " + std::to_string(c.runs_after) +
           (c.runs_after == 1 ? " night, " : " nights, ") +
           LatestStateName(c.state) + "]";
  }
  out += ": " + MetricText(h, c.mean_before) + " -> " +
         MetricText(h, c.mean_after) + " (" + Signed(c.magnitude) + " [" +
         Signed(c.magnitude_low) + ", " + Signed(c.magnitude_high) + "], " +
         Direction(h, c.regression) + "), sd " +
         Fixed(c.sd_before * m.scale, 2) + " -> " +
         Fixed(c.sd_after * m.scale, 2) + ", " +
         std::to_string(c.runs_before) + " -> " +
         std::to_string(c.runs_after) + " runs, p=" + PValue(c.pvalue);
  if (c.roof_before || c.roof_after) {
    out += "; % of roof " + Percent(c.roof_before) + " -> " +
           Percent(c.roof_after);
  }
  return out + (c.in_window ? " [window]" : "");
}

std::optional<double> Latest(const std::vector<std::optional<double>>& v) {
  for (auto it = v.rbegin(); it != v.rend(); ++it) {
    if (*it) return *it;
  }
  return std::nullopt;
}

std::string MethodLine(const HistoryResult& h) {
  const auto& cp = h.options.change_points;
  const HistoryMetricInfo& m = MetricInfo(h.options.metric);
  return std::string("judged on ") + m.title + " (" +
         (m.higher_is_worse ? "higher" : "lower") +
         " is worse); E-Divisive means change points, each judged by "
         "Student's t-test (p <= " + PValue(cp.max_pvalue) +
         " after correction for the split positions tried; watch: p <= " +
         PValue(h.options.watch_pvalue) + ") and kept when it moved >= " +
         Fixed(cp.min_magnitude * 100, 1) +
         "%; latest nights against the runs since the last change point, "
         "noise from the run-to-run spread moderated by the spread pooled "
         "across the groups (" + Fixed(h.pooled_noise.sigma * 100, 2) +
         "%): suspected beyond the band, regressed when the next night "
         "confirms or one night is significant with the noise x" +
         Fixed(h.options.latest.one_night_margin, 1) +
         "; gate: Benjamini-Hochberg, false discovery rate " +
         Fixed(h.options.fdr, 2) + " (suspected: " +
         Fixed(h.options.suspect_fdr, 2) + ") across the " + std::to_string(h.judged) +
         " groups judged";
}

std::string WindowLine(const HistoryResult& h) {
  const size_t n = h.runs.size();
  const size_t w = std::min<size_t>(h.options.window, n);
  if (n == 0) return "no runs";
  return "the latest " + std::to_string(w) + " runs (" +
         std::to_string(h.runs[n - w].run_id) + " to " +
         std::to_string(h.runs[n - 1].run_id) + ")";
}

std::string Verdict(const HistoryResult& h) {
  if (h.regressed > 0) {
    return "REGRESSION: " + std::to_string(h.regressed) + " of " +
           std::to_string(h.judged) + " groups judged regressed in " +
           WindowLine(h);
  }
  return "no regression in " + WindowLine(h) + " (" +
         std::to_string(h.judged) + " groups judged" +
         (h.suspected > 0 ? "; " + std::to_string(h.suspected) +
                                " suspected on the latest nights"
                          : std::string()) +
         ")";
}

// The decode and prefill tokens/s of the first and the latest run with
// them ("decode 1520 -> 1498 tok/s (-1.4%)"); empty when no run has them.
std::string RatesLine(const HistoryResult& h) {
  std::string out;
  auto add = [&](const char* phase,
                 std::optional<double> HistoryRun::*rate) {
    const HistoryRun* first = nullptr;
    const HistoryRun* last = nullptr;
    for (const HistoryRun& r : h.runs) {
      if (!(r.*rate)) continue;
      if (first == nullptr) first = &r;
      last = &r;
    }
    if (first == nullptr) return;
    char buf[160];
    const double a = *(first->*rate), b = *(last->*rate);
    if (first == last) {
      std::snprintf(buf, sizeof buf, "%s %.0f tok/s (run %lld)", phase, b,
                    static_cast<long long>(last->run_id));
    } else {
      std::snprintf(buf, sizeof buf,
                    "%s %.0f -> %.0f tok/s (%+.1f%%, run %lld -> %lld)", phase,
                    a, b, a > 0 ? 100.0 * (b - a) / a : 0.0,
                    static_cast<long long>(first->run_id),
                    static_cast<long long>(last->run_id));
    }
    out += (out.empty() ? "" : "; ") + std::string(buf);
  };
  add("decode", &HistoryRun::decode_tokens_per_s);
  add("prefill", &HistoryRun::prefill_tokens_per_s);
  return out;
}

std::string NotJudgedLine(const HistoryResult& h) {
  return std::to_string(h.too_noisy) + " too noisy, " +
         std::to_string(h.too_short) + " too short to judge";
}

// "run(s) 3, 7".
std::string RunIds(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) {
    out += (out.empty() ? "" : ", ") + std::to_string(id);
  }
  return "run(s) " + out;
}

std::string IncompleteLine(const HistoryResult& h) {
  return RunIds(h.incomplete_in_window) +
         " in the window are INCOMPLETE: their figures leave data out";
}

std::string InProgressLine(const HistoryResult& h) {
  return RunIds(h.in_progress) +
         " in progress (another process is writing them): left out, not "
         "judged";
}

std::string WhereText(const HistoryResult& h) {
  return h.options.where.empty() ? "all runs" : LabelsLine(h.options.where);
}

// The latest value of the judged figure, shown ("-" when none).
std::string LatestText(const HistoryResult& h, const HistoryGroup& g) {
  const std::optional<double> v = Latest(g.values);
  if (!v) return "-";
  return Fixed(*v * MetricInfo(h.options.metric).scale, 2);
}

// A verdict that is not a judgement says why in words.
bool HasReasonOnly(const HistoryGroup& g) {
  return g.verdict == HistoryVerdict::kTooShort ||
         g.verdict == HistoryVerdict::kTooNoisy ||
         g.verdict == HistoryVerdict::kNotJudged;
}

}  // namespace

const char* HistoryVerdictName(HistoryVerdict v) {
  switch (v) {
    case HistoryVerdict::kOk: return "ok";
    case HistoryVerdict::kRegressed: return "REGRESSED";
    case HistoryVerdict::kTooShort: return "too short";
    case HistoryVerdict::kTooNoisy: return "too noisy";
    case HistoryVerdict::kSuspected: return "suspected";
    case HistoryVerdict::kNotJudged: return "not judged";
  }
  return "?";
}

namespace {
constexpr HistoryMetricInfo kMetrics[] = {
    {"time", "time per launch", "us per launch", 1e-3, true, false},
    {"roof", "% of roof", "% of roof", 100, false, false},
    {"share", "share of GPU time", "% of GPU time", 100, true, false},
    {"gpu-time", "GPU time per run", "ms", 1e-6, true, true},
    {"gpu-time-per-step", "GPU time per step", "ms per step", 1e-6, true,
     true},
    {"decode-tokens/s", "decode tokens/s", "tok/s", 1, false, true},
    {"prefill-tokens/s", "prefill tokens/s", "tok/s", 1, false, true},
};
}  // namespace

const HistoryMetricInfo& MetricInfo(HistoryMetric m) {
  return kMetrics[static_cast<int>(m)];
}

std::optional<HistoryMetric> MetricFromName(const std::string& name) {
  for (size_t i = 0; i < std::size(kMetrics); ++i) {
    if (name == kMetrics[i].name) return static_cast<HistoryMetric>(i);
  }
  return std::nullopt;
}

std::string MetricNames() {
  std::string out;
  for (const HistoryMetricInfo& m : kMetrics) {
    out += (out.empty() ? "" : ", ") + std::string(m.name);
  }
  return out;
}

StatusOr<HistoryResult> BuildHistory(StoreReader& store,
                                     const std::string& input,
                                     const HistoryOptions& options) {
  HistoryResult h;
  h.input = input;
  h.options = options;
  std::vector<RunRow> runs;
  // A run being written has no figures yet to judge, and is no crashed
  // run either: it is left out and listed (docs/history.md).
  const std::set<int64_t> writing = store.RunsBeingWritten();
  for (const RunRow& r : store.runs()) {
    if (!Matches(r.labels, options.where)) continue;
    if (writing.count(r.run_id)) {
      h.in_progress.push_back(r.run_id);
    } else {
      runs.push_back(r);
    }
  }
  if (runs.empty() && !h.in_progress.empty()) {
    return NotFound(input + ": the only runs that match are being written "
                    "now (" + InProgressLine(h) + "): run history again "
                    "once they end");
  }
  if (runs.empty()) {
    return NotFound(input + ": no run matches " +
                    (options.where.empty() ? std::string("(the store is empty)")
                                           : "--where " +
                                                 LabelsLine(options.where)) +
                    "; " + KnownLabels(store.runs()));
  }
  // Time order: when each run started; the run id breaks ties (and orders
  // runs that do not say when they started, first).
  std::stable_sort(runs.begin(), runs.end(),
                   [](const RunRow& a, const RunRow& b) {
                     const int64_t sa = a.started_unix_ns.value_or(
                         std::numeric_limits<int64_t>::min());
                     const int64_t sb = b.started_unix_ns.value_or(
                         std::numeric_limits<int64_t>::min());
                     return sa != sb ? sa < sb : a.run_id < b.run_id;
                   });
  std::map<int64_t, size_t> position;  // run id -> index in h.runs
  std::vector<int64_t> ids;
  // Runs whose groups come from their aggregates (store schema 8), and
  // those read kernel by kernel. A run that kept only some kernel rows
  // (--store-kernels sampled or none) is read from its aggregates only; a
  // grouping they cannot serve (an NVTX range, a step) is refused for it.
  const bool aggregates_serve = options.group_by != GroupBy::kNvtx &&
                                options.group_by != GroupBy::kStep;
  std::vector<int64_t> aggregate_ids, kernel_ids;
  std::string partial_runs;
  for (const RunRow& r : runs) {
    const bool partial = !r.store_kernels.empty() && r.store_kernels != "all";
    if (!r.store_kernels.empty() && aggregates_serve &&
        (options.read_aggregates || partial)) {
      aggregate_ids.push_back(r.run_id);
    } else if (partial) {
      partial_runs += (partial_runs.empty() ? "" : ", ") +
                      std::to_string(r.run_id);
    } else {
      kernel_ids.push_back(r.run_id);
    }
  }
  if (!partial_runs.empty()) {
    return InvalidArgument(
        input + ": --by " + GroupByName(options.group_by) +
        " needs every kernel row, and runs " + partial_runs +
        " were stored with --store-kernels sampled or none (per-group "
        "aggregates only); group them by family+shape, family, phase, op, "
        "kernel or category, or store their kernels with --store-kernels "
        "all");
  }
  for (const RunRow& r : runs) {
    HistoryRun run;
    run.run_id = r.run_id;
    run.started_unix_ns = r.started_unix_ns;
    run.labels = r.labels;
    run.complete = r.complete.value_or(0) == 1;
    run.incomplete_reason = r.incomplete_reason;
    position[r.run_id] = h.runs.size();
    ids.push_back(r.run_id);
    h.runs.push_back(std::move(run));
  }
  // The report's grouping, fed only what the series need: the kernels and
  // the steps. BuildReport would also read each run's copies, roofs, device
  // and import statistics: history_bench, 1,000 runs x 200 groups, 1.23 s
  // CPU that way, 0.78 s this way. Both are read for all the runs at once
  // (StoreReader::ForEach*OfRuns), run by run in id order, not time order:
  // one query per run cost a PostgreSQL store 6,000 round trips.
  //
  // Per run: its steps per phase (what the report counts of them), and per
  // phase the tokens and GPU step time of the steps that have a count.
  struct RunSteps {
    std::vector<std::pair<std::string, int64_t>> per_phase;
    int64_t tokens[2] = {0, 0}, span_ns[2] = {0, 0};
  };
  std::vector<RunSteps> steps(h.runs.size());
  RT_RETURN_IF_ERROR(store.ForEachStepOfRuns(ids, [&](const StepRow& s) {
    const auto run = position.find(s.run_id);
    if (run == position.end()) return OkStatus();  // not asked for
    RunSteps& rs = steps[run->second];
    ++h.runs[run->second].steps;
    const auto it =
        std::find_if(rs.per_phase.begin(), rs.per_phase.end(),
                     [&](const auto& p) { return p.first == s.phase; });
    if (it == rs.per_phase.end()) {
      rs.per_phase.emplace_back(s.phase, 1);
    } else {
      ++it->second;
    }
    const int p = s.phase == "decode" ? 0 : s.phase == "prefill" ? 1 : -1;
    if (p >= 0 && s.token_count && *s.token_count > 0 &&
        s.end_ns > s.start_ns) {
      rs.tokens[p] += *s.token_count;
      rs.span_ns[p] += s.end_ns - s.start_ns;
    }
    return OkStatus();
  }));
  for (size_t i = 0; i < h.runs.size(); ++i) {
    auto per_s = [&](int p) -> std::optional<double> {
      if (steps[i].span_ns[p] <= 0) return std::nullopt;
      return static_cast<double>(steps[i].tokens[p]) * 1e9 /
             static_cast<double>(steps[i].span_ns[p]);
    };
    h.runs[i].decode_tokens_per_s = per_s(0);
    h.runs[i].prefill_tokens_per_s = per_s(1);
  }

  // The groups as the runs in time order meet them: a group is placed
  // where it first ran (the run, then its place in that run's report) and
  // named by the latest run it ran in, whatever order the runs are read in.
  std::map<std::string, size_t> group_index;
  std::vector<std::pair<size_t, size_t>> first_seen;  // per group
  std::vector<size_t> named_by;                       // per group
  const bool by_kernels = options.group_by == GroupBy::kFamilyShape ||
                          options.group_by == GroupBy::kFamily;
  // Groups by name, operator or category read the columns a grouping by
  // family, shape, phase or range has no use for.
  const bool grouping_columns = options.group_by != GroupBy::kKernel &&
                                options.group_by != GroupBy::kOp &&
                                options.group_by != GroupBy::kCategory;
  // The run whose kernels are being read, at `at` in h.runs. A run without
  // kernels adds to no series (and has no report).
  std::optional<ReportBuilder> builder;
  size_t at = 0;
  auto finish_run = [&]() -> Status {
    if (!builder) return OkStatus();
    RT_ASSIGN_OR_RETURN(const Report report, builder->Finish(input));
    builder.reset();
    h.runs[at].total_ns = report.total_ns;
    for (size_t j = 0; j < report.groups.size(); ++j) {
      const GroupRow& g = report.groups[j];
      auto [it, added] = group_index.emplace(g.key, h.groups.size());
      if (added) {
        HistoryGroup group;
        group.key = g.key;
        group.mean_ns.resize(h.runs.size());
        group.fraction_of_roof.resize(h.runs.size());
        group.time_share.resize(h.runs.size());
        h.groups.push_back(std::move(group));
        first_seen.emplace_back(at, j);
        named_by.push_back(at);
      }
      const size_t gi = it->second;
      HistoryGroup& group = h.groups[gi];
      first_seen[gi] = std::min(first_seen[gi], std::make_pair(at, j));
      // The latest run names the group. A phase or an NVTX range holds
      // many shapes: its dominant one would read as the group's.
      if (added || at >= named_by[gi]) {
        named_by[gi] = at;
        group.name = g.name;
        group.shape = by_kernels ? ShapeLabel(g) : std::string();
      }
      group.mean_ns[at] = g.mean_ns;
      group.fraction_of_roof[at] = g.fraction_of_roof;
      group.time_share[at] = g.time_share;
    }
    return OkStatus();
  };
  // Rows of run `run_id` arrive: the previous run is complete at its
  // first one. False: not a run asked for.
  std::set<int64_t> with_aggregates;  // runs that had aggregate rows
  auto start_run = [&](int64_t run_id, bool* asked) -> Status {
    *asked = true;
    if (builder && h.runs[at].run_id == run_id) return OkStatus();
    RT_RETURN_IF_ERROR(finish_run());
    const auto run = position.find(run_id);
    if (run == position.end()) {
      *asked = false;
      return OkStatus();
    }
    at = run->second;
    ReportOptions ro;
    ro.run_id = run_id;
    ro.group_by = options.group_by;
    ro.with_families = false;
    builder.emplace(ro);
    for (const auto& [phase, count] : steps[at].per_phase) {
      for (int64_t n = 0; n < count; ++n) builder->AddStep(phase);
    }
    return OkStatus();
  };
  // A group's series figures are its sums' (mean time per launch, time
  // share, time-weighted % of roof), the same from a run's aggregates as
  // from its kernels (store_backends_test); a few hundred rows a run
  // instead of one per kernel.
  RT_RETURN_IF_ERROR(store.ForEachAggregateOfRuns(
      aggregate_ids, [&](const KernelAggregateRow& a) {
        bool asked = false;
        RT_RETURN_IF_ERROR(start_run(a.run_id, &asked));
        if (!asked) return OkStatus();
        builder->AddAggregate(a);
        h.runs[at].kernel_count += a.launches;
        with_aggregates.insert(a.run_id);
        return OkStatus();
      }, grouping_columns ? StoreReader::KernelColumnSet::kGrouping
                          : StoreReader::KernelColumnSet::kAll));
  RT_RETURN_IF_ERROR(finish_run());
  // A run whose writer died before its aggregates were first written has
  // none: its kernel rows, when it kept them all, are read instead.
  for (const RunRow& r : runs) {
    if (r.store_kernels == "all" && aggregates_serve &&
        options.read_aggregates && !with_aggregates.count(r.run_id)) {
      kernel_ids.push_back(r.run_id);
    }
  }
  RT_RETURN_IF_ERROR(
      store.ForEachKernelOfRuns(kernel_ids, [&](const KernelRow& k) {
        bool asked = false;
        RT_RETURN_IF_ERROR(start_run(k.run_id, &asked));
        if (!asked) return OkStatus();
        builder->Add(k);
        ++h.runs[at].kernel_count;
        return OkStatus();
      }, grouping_columns ? StoreReader::KernelColumnSet::kGrouping
                          : StoreReader::KernelColumnSet::kAll));
  RT_RETURN_IF_ERROR(finish_run());
  std::vector<size_t> order(h.groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return first_seen[a] < first_seen[b];
  });
  std::vector<HistoryGroup> sorted;
  sorted.reserve(h.groups.size());
  for (size_t i : order) sorted.push_back(std::move(h.groups[i]));
  h.groups = std::move(sorted);
  JudgeHistory(&h);
  return h;
}

namespace {

// The judged figure of `g` in run `i` (options.metric).
std::optional<double> MetricValue(const HistoryResult& h,
                                  const HistoryGroup& g, size_t i) {
  const HistoryRun& r = h.runs[i];
  switch (h.options.metric) {
    case HistoryMetric::kTimePerLaunch: return g.mean_ns[i];
    case HistoryMetric::kRoof: return g.fraction_of_roof[i];
    case HistoryMetric::kTimeShare: return g.time_share[i];
    case HistoryMetric::kGpuTime:
      if (r.total_ns <= 0) return std::nullopt;
      return static_cast<double>(r.total_ns);
    case HistoryMetric::kGpuTimePerStep:
      if (r.total_ns <= 0 || r.steps <= 0) return std::nullopt;
      return static_cast<double>(r.total_ns) / static_cast<double>(r.steps);
    case HistoryMetric::kDecodeTokensPerS: return r.decode_tokens_per_s;
    case HistoryMetric::kPrefillTokensPerS: return r.prefill_tokens_per_s;
  }
  return std::nullopt;
}

// The time-weighted % of roof of g over the series positions [begin, end)
// (`at` maps them to runs); nullopt when none has it.
std::optional<double> RoofMean(const HistoryGroup& g,
                               const std::vector<int>& at, int begin,
                               int end) {
  double sum = 0;
  int count = 0;
  for (int i = begin; i < end; ++i) {
    if (const auto& f = g.fraction_of_roof[at[i]]) {
      sum += *f;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

// A change point of the series (positions through `at`) in run terms.
HistoryChange FromChangePoint(const HistoryResult& h, const HistoryGroup& g,
                              const std::vector<int>& at,
                              const stats::ChangePoint& cp, int before,
                              int after, HistoryChangeKind kind) {
  const int n = static_cast<int>(h.runs.size());
  const int window = std::min(std::max(h.options.window, 1), n);
  HistoryChange ch;
  ch.kind = kind;
  ch.run = static_cast<size_t>(at[cp.index]);
  ch.run_id = h.runs[ch.run].run_id;
  ch.runs_ago = n - 1 - static_cast<int>(ch.run);
  ch.mean_before = cp.mean_before;
  ch.mean_after = cp.mean_after;
  ch.sd_before = cp.sd_before;
  ch.sd_after = cp.sd_after;
  ch.runs_before = cp.runs_before;
  ch.runs_after = cp.runs_after;
  ch.magnitude = cp.magnitude;
  ch.magnitude_low = cp.magnitude_low;
  ch.magnitude_high = cp.magnitude_high;
  ch.pvalue = cp.pvalue;
  ch.regression = MetricInfo(h.options.metric).higher_is_worse
                      ? cp.magnitude > 0
                      : cp.magnitude < 0;
  ch.in_window = static_cast<int>(ch.run) >= n - window;
  // % of roof over the same runs as the means.
  ch.roof_before = RoofMean(g, at, before, cp.index);
  ch.roof_after = RoofMean(g, at, cp.index, after);
  return ch;
}

}  // namespace

void JudgeHistory(HistoryResult* h) {
  const int n = static_cast<int>(h->runs.size());
  const int window = std::min(std::max(h->options.window, 1), n);
  const HistoryMetricInfo& metric = MetricInfo(h->options.metric);
  h->judged = h->regressed = h->suspected = h->too_short = h->too_noisy = 0;
  h->incomplete_in_window.clear();
  for (int i = n - window; i < n; ++i) {
    if (!h->runs[i].complete) h->incomplete_in_window.push_back(h->runs[i].run_id);
  }
  // A per-run figure is one series: the run's own "group", judged alone;
  // the groups' series are shown, not judged.
  if (metric.per_run) {
    h->groups.erase(std::remove_if(h->groups.begin(), h->groups.end(),
                                   [](const HistoryGroup& g) {
                                     return g.key == "run";
                                   }),
                    h->groups.end());
    HistoryGroup run;
    run.key = "run";
    run.name = std::string("per run: ") + metric.title;
    run.mean_ns.resize(h->runs.size());
    run.fraction_of_roof.resize(h->runs.size());
    run.time_share.resize(h->runs.size());
    h->groups.insert(h->groups.begin(), std::move(run));
  }
  // The series the runs give each group: its figure where it ran.
  struct Series {
    std::vector<double> x;
    std::vector<int> at;  // series position -> run
    std::vector<stats::ChangePoint> cps;
    stats::NoiseEstimate own;
  };
  std::vector<Series> series(h->groups.size());
  std::vector<size_t> candidates;  // neither too short nor too noisy
  std::vector<stats::NoiseEstimate> owns;
  for (size_t gi = 0; gi < h->groups.size(); ++gi) {
    HistoryGroup& g = h->groups[gi];
    Series& s = series[gi];
    g.values.assign(h->runs.size(), std::nullopt);
    g.present = 0;
    g.changes.clear();
    g.watch.clear();
    g.night_noise = 0;
    g.check_pvalue = 1;
    g.reason.clear();
    if (metric.per_run && g.key != "run") {
      for (int i = 0; i < n; ++i) {
        if (g.mean_ns[i]) ++g.present;
      }
      g.verdict = HistoryVerdict::kNotJudged;
      g.reason = std::string("--metric ") + metric.name +
                 " is a per-run figure: the groups are shown, not judged";
      continue;
    }
    for (int i = 0; i < n; ++i) {
      g.values[i] = MetricValue(*h, g, static_cast<size_t>(i));
      if (g.values[i]) {
        s.x.push_back(*g.values[i]);
        s.at.push_back(i);
      }
    }
    g.present = static_cast<int>(s.x.size());
    // Three runs: two to measure a baseline and its noise against, and
    // tonight (with the noise pooled across the groups).
    if (g.present < 3) {
      g.verdict = HistoryVerdict::kTooShort;
      g.reason = "ran in " + std::to_string(g.present) + " of the " +
                 std::to_string(n) + " runs; judging needs 3";
      ++h->too_short;
      continue;
    }
    // E-Divisive needs min_segment runs a side; shorter series are judged
    // by the latest-night test alone.
    const stats::ChangePointOptions& cpo = h->options.change_points;
    // Watch: the change points a looser first pass finds that the strict
    // one does not (one search for both).
    std::vector<stats::ChangePoint> weak;
    stats::DetectChangePointsTwoLevels(s.x, cpo, h->options.watch_pvalue,
                                       &s.cps, &weak);
    // Noise: the spread of the runs around the levels between change
    // points, relative to the series' mean.
    double ss = 0, total = 0;
    for (size_t c = 0; c <= s.cps.size(); ++c) {
      const int begin = c == 0 ? 0 : s.cps[c - 1].index;
      const int end = c == s.cps.size() ? g.present : s.cps[c].index;
      double mean = 0;
      for (int i = begin; i < end; ++i) mean += s.x[i] / (end - begin);
      for (int i = begin; i < end; ++i) ss += (s.x[i] - mean) * (s.x[i] - mean);
    }
    for (double v : s.x) total += v;
    const int dof = std::max(1, g.present - static_cast<int>(s.cps.size()) - 1);
    g.noise = total > 0 ? std::sqrt(ss / dof) / (total / g.present) : 0;
    std::vector<stats::ChangePoint> in_runs;
    for (size_t c = 0; c < s.cps.size(); ++c) {
      const int before = c == 0 ? 0 : s.cps[c - 1].index;
      const int after = c + 1 == s.cps.size() ? g.present : s.cps[c + 1].index;
      g.changes.push_back(FromChangePoint(*h, g, s.at, s.cps[c], before, after,
                                          HistoryChangeKind::kChangePoint));
      stats::ChangePoint mapped = s.cps[c];
      mapped.index = static_cast<int>(g.changes.back().run);
      in_runs.push_back(mapped);
    }
    g.check_pvalue =
        stats::RegressionPValue(in_runs, n, window, metric.higher_is_worse);
    for (size_t c = 0; c < weak.size(); ++c) {
      const bool strong = std::any_of(
          s.cps.begin(), s.cps.end(),
          [&](const stats::ChangePoint& cp) { return cp.index == weak[c].index; });
      if (strong) continue;
      const int before = c == 0 ? 0 : weak[c - 1].index;
      const int after = c + 1 == weak.size() ? g.present : weak[c + 1].index;
      g.watch.push_back(FromChangePoint(*h, g, s.at, weak[c], before, after,
                                        HistoryChangeKind::kWatch));
    }
    if (g.noise > h->options.max_noise) {
      g.verdict = HistoryVerdict::kTooNoisy;
      g.reason = "its runs scatter " + Fixed(g.noise * 100, 1) +
                 "% around their levels (more than " +
                 Fixed(h->options.max_noise * 100, 1) + "%): a " +
                 Fixed(h->options.change_points.min_magnitude * 100, 1) +
                 "% move cannot be told from noise";
      ++h->too_noisy;
      continue;
    }
    // The run-to-run noise of every run but tonight's.
    s.own = stats::RunToRunNoise(s.x, g.present - 1);
    owns.push_back(s.own);
    g.verdict = HistoryVerdict::kOk;
    candidates.push_back(gi);
  }
  h->pooled_noise = stats::PooledNoise(owns, h->options.pooled_noise_dof);

  // The latest nights of each judged group against its baseline: the runs
  // since its last change point.
  std::vector<double> gate_p, suspect_p;
  stats::LatestNightOptions lo = h->options.latest;
  lo.min_magnitude = h->options.change_points.min_magnitude;
  for (size_t gi : candidates) {
    HistoryGroup& g = h->groups[gi];
    const Series& s = series[gi];
    // The pool includes this group's own estimate (one of many); with a
    // single group there is no pool.
    stats::NoiseEstimate pooled = h->pooled_noise;
    if (candidates.size() < 2) pooled = {};
    const stats::NoiseEstimate noise = stats::ModeratedNoise(s.own, pooled);
    g.night_noise = noise.sigma;
    const int begin = s.cps.empty() ? 0 : s.cps.back().index;
    const stats::LatestNightTest t = stats::TestLatestNights(
        s.x, begin, noise, metric.higher_is_worse, lo);
    double gate = g.check_pvalue, suspect = 1;
    if (t.tail > 0 && s.at[t.onset] >= n - window) {
      const HistoryChange ch =
          FromChangePoint(*h, g, s.at, t.change, begin, g.present,
                          HistoryChangeKind::kLatestNights);
      g.changes.push_back(ch);
      suspect = t.change.pvalue;
      // Two nights or more that agree confirm it; one night alone must be
      // significant even with the noise widened.
      gate = std::min(gate, t.tail >= 2 ? t.pvalue_confirm : t.pvalue_wide);
    }
    gate_p.push_back(gate);
    suspect_p.push_back(suspect);
  }
  h->judged = static_cast<int>(candidates.size());
  const std::vector<bool> regressed =
      stats::BenjaminiHochberg(gate_p, h->options.fdr);
  const std::vector<bool> suspected =
      stats::BenjaminiHochberg(suspect_p, h->options.suspect_fdr);
  for (size_t j = 0; j < candidates.size(); ++j) {
    HistoryGroup& g = h->groups[candidates[j]];
    g.check_pvalue = gate_p[j];
    HistoryChange* latest = nullptr;
    for (HistoryChange& c : g.changes) {
      if (c.kind == HistoryChangeKind::kLatestNights) latest = &c;
    }
    if (regressed[j]) {
      g.verdict = HistoryVerdict::kRegressed;
      ++h->regressed;
    } else if (suspected[j] && latest != nullptr) {
      g.verdict = HistoryVerdict::kSuspected;
      ++h->suspected;
    }
    if (latest != nullptr) {
      latest->state = regressed[j]   ? LatestState::kRegressed
                      : suspected[j] ? LatestState::kSuspected
                                     : LatestState::kWatch;
      if (latest->state == LatestState::kWatch) {
        // Beyond the band but not significant across the groups: a weak
        // finding, listed with the watch change points.
        g.watch.push_back(*latest);
        g.changes.erase(g.changes.begin() + (latest - g.changes.data()));
        latest = nullptr;
      }
    }
    if (g.verdict == HistoryVerdict::kOk) continue;
    // The reason: the finding the verdict rests on.
    for (const HistoryChange& c : g.changes) {
      if (c.kind == HistoryChangeKind::kLatestNights ||
          (c.regression && c.in_window && c.pvalue == gate_p[j])) {
        g.reason = ChangeLine(*h, c);
        if (c.kind == HistoryChangeKind::kChangePoint) break;
      }
    }
  }
  // Regressions first, then suspected, the groups judged, then those that
  // were not; within each, by the latest share of GPU time.
  auto rank = [](HistoryVerdict v) {
    switch (v) {
      case HistoryVerdict::kRegressed: return 0;
      case HistoryVerdict::kSuspected: return 1;
      case HistoryVerdict::kOk: return 2;
      case HistoryVerdict::kTooNoisy: return 3;
      case HistoryVerdict::kTooShort: return 4;
      case HistoryVerdict::kNotJudged: return 5;
    }
    return 6;
  };
  std::stable_sort(h->groups.begin(), h->groups.end(),
                   [&](const HistoryGroup& a, const HistoryGroup& b) {
                     if (rank(a.verdict) != rank(b.verdict)) {
                       return rank(a.verdict) < rank(b.verdict);
                     }
                     return Latest(a.time_share).value_or(0) >
                            Latest(b.time_share).value_or(0);
                   });
}

HistoryResult HistoryOfSeries(const std::vector<std::vector<double>>& series,
                              const HistoryOptions& options) {
  HistoryResult h;
  h.input = "generated";
  h.options = options;
  size_t runs = 0;
  for (const auto& s : series) runs = std::max(runs, s.size());
  for (size_t i = 0; i < runs; ++i) {
    HistoryRun r;
    r.run_id = static_cast<int64_t>(i) + 1;
    r.complete = true;
    h.runs.push_back(r);
  }
  for (size_t gi = 0; gi < series.size(); ++gi) {
    HistoryGroup g;
    g.key = g.name = "series " + std::to_string(gi);
    g.mean_ns.resize(runs);
    g.fraction_of_roof.resize(runs);
    g.time_share.resize(runs);
    for (size_t i = 0; i < series[gi].size(); ++i) {
      g.mean_ns[i] = series[gi][i];
      g.time_share[i] = 1.0 / static_cast<double>(series.size());
    }
    h.groups.push_back(std::move(g));
  }
  JudgeHistory(&h);
  return h;
}

void WriteHistoryTable(const HistoryResult& h, std::ostream& out) {
  out << "rooftrace history: " << h.input << ", " << h.runs.size()
      << " runs (" << WhereText(h) << "), by " << GroupByName(h.options.group_by)
      << "\n";
  if (!h.runs.empty()) {
    out << "  runs:     " << h.runs.front().run_id << " ... "
        << h.runs.back().run_id << " in time order; latest: run "
        << h.runs.back().run_id;
    if (!h.runs.back().labels.empty()) {
      out << " (" << LabelsLine(h.runs.back().labels) << ")";
    }
    out << "\n";
    const std::string rates = RatesLine(h);
    if (!rates.empty()) out << "  tokens/s: " << rates << "\n";
  }
  out << "  method:   " << MethodLine(h) << "\n";
  out << "  verdict:  " << Verdict(h) << "\n";
  out << "  not judged: " << NotJudgedLine(h) << "\n";
  if (!h.incomplete_in_window.empty()) {
    out << "  WARNING:  " << IncompleteLine(h) << "\n";
  }
  if (!h.in_progress.empty()) out << "  note:     " << InProgressLine(h) << "\n";
  out << "\n"
      << "status     runs     latest  % roof  noise  group  (latest: "
      << MetricInfo(h.options.metric).unit << ")\n";
  for (const HistoryGroup& g : h.groups) {
    std::string status = HistoryVerdictName(g.verdict);
    status.resize(std::max<size_t>(status.size(), 9), ' ');
    std::string runs = std::to_string(g.present);
    std::string latest = LatestText(h, g);
    std::string roof = Percent(Latest(g.fraction_of_roof));
    std::string noise = Percent(g.noise);
    out << status << "  " << std::string(4 - std::min<size_t>(4, runs.size()), ' ')
        << runs << "  " << std::string(9 - std::min<size_t>(9, latest.size()), ' ')
        << latest << "  " << std::string(6 - std::min<size_t>(6, roof.size()), ' ')
        << roof << "  " << std::string(5 - std::min<size_t>(5, noise.size()), ' ')
        << noise << "  " << GroupTitle(g) << "\n";
    if (HasReasonOnly(g)) out << "           " << g.reason << "\n";
    for (const HistoryChange& c : g.changes) {
      out << "           " << ChangeLine(h, c) << "\n";
    }
    for (const HistoryChange& c : g.watch) {
      out << "           " << ChangeLine(h, c) << "\n";
    }
  }
}

void WriteHistoryMarkdown(const HistoryResult& h, std::ostream& out) {
  out << "### rooftrace history: "
      << (h.regressed ? "regression" : "no regression") << "\n\n";
  if (!h.incomplete_in_window.empty()) {
    out << "> **" << IncompleteLine(h) << "**\n\n";
  }
  if (!h.in_progress.empty()) out << "> " << InProgressLine(h) << "\n\n";
  out << "`" << h.input << "`, " << h.runs.size() << " runs (" << WhereText(h)
      << "), by " << GroupByName(h.options.group_by) << ". " << Verdict(h)
      << "; " << NotJudgedLine(h) << ".\n\n"
      << "Method: " << MethodLine(h) << ".\n\n"
      << "| status | group | runs | latest (" << MetricInfo(h.options.metric).unit
      << ") | % roof | noise | changes |\n|---|---|---:|---:|---:|---:|---|\n";
  auto cell = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o;
  };
  for (const HistoryGroup& g : h.groups) {
    std::string changes;
    if (HasReasonOnly(g)) changes = g.reason;
    for (const auto* list : {&g.changes, &g.watch}) {
      for (const HistoryChange& c : *list) {
        changes += (changes.empty() ? "" : "<br>") + ChangeLine(h, c);
      }
    }
    out << "| " << (g.verdict == HistoryVerdict::kRegressed ? "**REGRESSED**"
                                                           : HistoryVerdictName(g.verdict))
        << " | " << cell(GroupTitle(g)) << " | " << g.present << " | "
        << LatestText(h, g) << " | "
        << Percent(Latest(g.fraction_of_roof)) << " | " << Percent(g.noise)
        << " | " << cell(changes) << " |\n";
  }
}

void WriteHistoryJson(const HistoryResult& h, std::ostream& out) {
  auto labels_json = [](const RunLabels& labels) {
    std::string o = "{";
    for (size_t i = 0; i < labels.size(); ++i) {
      o += (i ? "," : "") + JsonString(labels[i].first) + ":" +
           JsonString(labels[i].second);
    }
    return o + "}";
  };
  auto series = [](const std::vector<std::optional<double>>& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      o += (i ? "," : "") + JsonNumber(v[i]);
    }
    return o + "]";
  };
  const HistoryMetricInfo& metric = MetricInfo(h.options.metric);
  // Everything a bot needs to open a ticket: what moved, from which run
  // (and its labels: the commit), by how much with its interval, the
  // figures before and after, how sure, and what the verdict rests on.
  auto changes = [&](const std::vector<HistoryChange>& list) {
    std::string o = "[";
    for (size_t c = 0; c < list.size(); ++c) {
      const HistoryChange& ch = list[c];
      const char* kind = ch.kind == HistoryChangeKind::kChangePoint
                             ? "change point"
                         : ch.kind == HistoryChangeKind::kWatch
                             ? "watch"
                             : "latest nights";
      o += std::string(c ? "," : "") + "{\"kind\":" + JsonString(kind) +
           ",\"state\":" +
           (ch.kind == HistoryChangeKind::kLatestNights
                ? JsonString(LatestStateName(ch.state))
                : std::string("null")) +
           ",\"run_id\":" + std::to_string(ch.run_id) +
           ",\"run_index\":" + std::to_string(ch.run) +
           ",\"runs_ago\":" + std::to_string(ch.runs_ago) +
           ",\"labels\":" + labels_json(h.runs[ch.run].labels) +
           ",\"direction\":" + JsonString(Direction(h, ch.regression)) +
           ",\"worse\":" + (ch.regression ? "true" : "false") +
           ",\"magnitude\":" + JsonNumber(ch.magnitude) +
           ",\"magnitude_ci95\":[" + JsonNumber(ch.magnitude_low) + "," +
           JsonNumber(ch.magnitude_high) + "]" +
           ",\"pvalue\":" + JsonNumber(ch.pvalue) +
           ",\"before\":{\"mean\":" + JsonNumber(ch.mean_before) +
           ",\"sd\":" + JsonNumber(ch.sd_before) +
           ",\"runs\":" + std::to_string(ch.runs_before) + "}" +
           ",\"after\":{\"mean\":" + JsonNumber(ch.mean_after) +
           ",\"sd\":" + JsonNumber(ch.sd_after) +
           ",\"runs\":" + std::to_string(ch.runs_after) + "}";
      if (h.options.metric == HistoryMetric::kTimePerLaunch) {
        o += ",\"mean_ns_before\":" + JsonNumber(ch.mean_before) +
             ",\"mean_ns_after\":" + JsonNumber(ch.mean_after);
      }
      o += ",\"fraction_of_roof_before\":" + JsonNumber(ch.roof_before) +
           ",\"fraction_of_roof_after\":" + JsonNumber(ch.roof_after) +
           ",\"in_window\":" + (ch.in_window ? "true" : "false") +
           ",\"text\":" + JsonString(ChangeLine(h, ch)) + "}";
    }
    return o + "]";
  };
  const auto& cp = h.options.change_points;
  out << "{\"input\":" << JsonString(h.input)
      << ",\"metric\":{\"name\":" << JsonString(metric.name)
      << ",\"title\":" << JsonString(metric.title)
      << ",\"unit\":" << JsonString(metric.unit)
      << ",\"scale\":" << JsonNumber(metric.scale)
      << ",\"worse\":" << JsonString(metric.higher_is_worse ? "higher" : "lower")
      << "}"
      << ",\"where\":" << labels_json(h.options.where)
      << ",\"group_by\":" << JsonString(GroupByName(h.options.group_by))
      << ",\"window\":" << h.options.window
      << ",\"method\":{\"change_points\":\"e-divisive-means\","
         "\"significance\":\"student-t, corrected for split positions\","
         "\"max_pvalue\":"
      << JsonNumber(cp.max_pvalue)
      << ",\"min_magnitude\":" << JsonNumber(cp.min_magnitude)
      << ",\"min_segment\":" << cp.min_segment
      << ",\"across_groups\":\"benjamini-hochberg\",\"fdr\":"
      << JsonNumber(h.options.fdr)
      << ",\"max_noise\":" << JsonNumber(h.options.max_noise)
      << ",\"latest_nights\":\"student-t against the runs since the last "
         "change point, run-to-run noise moderated by the pooled noise\""
      << ",\"band_pvalue\":" << JsonNumber(h.options.latest.band_pvalue)
      << ",\"tail_range_sd\":" << JsonNumber(h.options.latest.tail_range_sd)
      << ",\"suspect_fdr\":" << JsonNumber(h.options.suspect_fdr)
      << ",\"one_night_margin\":" << JsonNumber(h.options.latest.one_night_margin)
      << ",\"two_night_margin\":" << JsonNumber(h.options.latest.two_night_margin)
      << ",\"pooled_noise\":" << JsonNumber(h.pooled_noise.sigma)
      << ",\"pooled_noise_dof\":" << JsonNumber(h.pooled_noise.dof)
      << ",\"watch_pvalue\":" << JsonNumber(h.options.watch_pvalue) << "}"
      << ",\"verdict\":" << JsonString(h.regressed   ? "regression"
                                        : h.suspected ? "suspected"
                                                      : "ok")
      << ",\"judged\":" << h.judged << ",\"regressed\":" << h.regressed
      << ",\"suspected\":" << h.suspected
      << ",\"too_noisy\":" << h.too_noisy << ",\"too_short\":" << h.too_short
      << ",\"incomplete_in_window\":[";
  for (size_t i = 0; i < h.incomplete_in_window.size(); ++i) {
    out << (i ? "," : "") << h.incomplete_in_window[i];
  }
  out << "],\"in_progress\":[";
  for (size_t i = 0; i < h.in_progress.size(); ++i) {
    out << (i ? "," : "") << h.in_progress[i];
  }
  out << "],\"runs\":[";
  for (size_t i = 0; i < h.runs.size(); ++i) {
    const HistoryRun& r = h.runs[i];
    out << (i ? "," : "") << "{\"run_id\":" << r.run_id
        << ",\"started_unix_ns\":"
        << (r.started_unix_ns ? std::to_string(*r.started_unix_ns) : "null")
        << ",\"labels\":" << labels_json(r.labels)
        << ",\"complete\":" << (r.complete ? "true" : "false")
        << ",\"kernel_count\":" << r.kernel_count
        << ",\"gpu_time_ns\":" << r.total_ns << ",\"steps\":" << r.steps
        << ",\"gpu_time_per_step_ns\":"
        << JsonNumber(r.steps > 0 ? std::optional<double>(
                                        static_cast<double>(r.total_ns) /
                                        static_cast<double>(r.steps))
                                  : std::nullopt)
        << ",\"decode_tokens_per_s\":" << JsonNumber(r.decode_tokens_per_s)
        << ",\"prefill_tokens_per_s\":" << JsonNumber(r.prefill_tokens_per_s)
        << "}";
  }
  out << "],\"groups\":[";
  for (size_t i = 0; i < h.groups.size(); ++i) {
    const HistoryGroup& g = h.groups[i];
    out << (i ? "," : "") << "{\"key\":" << JsonString(g.key)
        << ",\"name\":" << JsonString(g.name)
        << ",\"shape\":" << JsonString(g.shape)
        << ",\"verdict\":" << JsonString(HistoryVerdictName(g.verdict))
        << ",\"reason\":" << JsonString(g.reason)
        << ",\"runs\":" << g.present << ",\"noise\":" << JsonNumber(g.noise)
        << ",\"check_pvalue\":" << JsonNumber(g.check_pvalue)
        << ",\"mean_ns\":" << series(g.mean_ns)
        << ",\"fraction_of_roof\":" << series(g.fraction_of_roof)
        << ",\"time_share\":" << series(g.time_share)
        << ",\"values\":" << series(g.values)
        << ",\"night_noise\":" << JsonNumber(g.night_noise)
        << ",\"change_points\":" << changes(g.changes)
        << ",\"watch\":" << changes(g.watch) << "}";
  }
  out << "]}\n";
}

namespace {

// The plot of one group: its judged figure (the metric; time per launch
// for a group a per-run metric does not judge) against run index.
void WriteGroupSvg(const HistoryResult& h, const HistoryGroup& g,
                   std::ostream& out) {
  constexpr double kW = 360, kH = 96, kLeft = 48, kRight = 8, kTop = 8,
                   kBottom = 16;
  const size_t n = h.runs.size();
  const bool judged = std::any_of(g.values.begin(), g.values.end(),
                                  [](const auto& v) { return v.has_value(); });
  const std::vector<std::optional<double>>& ys = judged ? g.values : g.mean_ns;
  const double scale = judged ? MetricInfo(h.options.metric).scale : 1e-3;
  const std::string unit =
      judged ? std::string(MetricInfo(h.options.metric).unit) : "us";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& v : ys) {
    if (v) {
      lo = std::min(lo, *v);
      hi = std::max(hi, *v);
    }
  }
  if (!(lo <= hi)) lo = hi = 0;
  // A flat series still gets a band, so that noise is not drawn as cliffs.
  const double pad = std::max((hi - lo) * 0.1, std::max(hi, 1.0) * 0.01);
  lo -= pad;
  hi += pad;
  auto x = [&](double run) {
    return kLeft + (n > 1 ? run / static_cast<double>(n - 1) : 0.5) *
                       (kW - kLeft - kRight);
  };
  auto y = [&](double ns) {
    return kTop + (hi - ns) / (hi - lo) * (kH - kTop - kBottom);
  };
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW
      << "\" height=\"" << kH << "\" viewBox=\"0 0 " << kW << " " << kH
      << "\" role=\"img\">";
  const size_t w = std::min<size_t>(h.options.window, n);
  if (w > 0) {
    const double x0 = std::max(x(static_cast<double>(n - w) - 0.5), kLeft);
    out << "<rect class=\"window\" x=\"" << Fixed(x0, 1) << "\" y=\"" << kTop
        << "\" width=\"" << Fixed(kW - kRight - x0, 1) << "\" height=\""
        << kH - kTop - kBottom << "\"/>";
  }
  out << "<text class=\"axis\" x=\"" << kLeft - 4 << "\" y=\"" << kTop + 8
      << "\">" << Fixed(hi * scale, 1) << "</text><text class=\"axis\" x=\""
      << kLeft - 4 << "\" y=\"" << kH - kBottom << "\">" << Fixed(lo * scale, 1)
      << "</text><text class=\"axis\" x=\"" << kLeft - 4 << "\" y=\""
      << kH - 3 << "\">" << XmlEscape(unit.substr(0, unit.find(' ')))
      << "</text>";
  // Change points: red (worse) or green (better) dashes; the latest
  // nights: orange when suspected; watch: grey dots.
  std::vector<const HistoryChange*> marks;
  for (const HistoryChange& c : g.changes) marks.push_back(&c);
  for (const HistoryChange& c : g.watch) marks.push_back(&c);
  for (const HistoryChange* m : marks) {
    const HistoryChange& c = *m;
    const std::string cx = Fixed(x(static_cast<double>(c.run) - 0.5), 1);
    const char* cls =
        c.kind == HistoryChangeKind::kWatch ||
                (c.kind == HistoryChangeKind::kLatestNights &&
                 c.state == LatestState::kWatch)
            ? "watch"
        : c.kind == HistoryChangeKind::kLatestNights &&
                c.state == LatestState::kSuspected
            ? "suspected"
        : c.regression ? "slower"
                       : "faster";
    out << "<line class=\"" << cls
        << "\" x1=\"" << cx << "\" x2=\"" << cx << "\" y1=\"" << kTop
        << "\" y2=\"" << kH - kBottom << "\"><title>"
        << XmlEscape(ChangeLine(h, c)) << "</title></line>";
  }
  std::string points;
  std::optional<size_t> last;
  for (size_t i = 0; i < n; ++i) {
    if (!ys[i]) continue;
    points += (points.empty() ? "" : " ") +
              Fixed(x(static_cast<double>(i)), 1) + "," +
              Fixed(y(*ys[i]), 1);
    last = i;
  }
  out << "<polyline class=\"series\" points=\"" << points << "\"/>";
  if (last) {
    out << "<circle class=\"latest\" cx=\""
        << Fixed(x(static_cast<double>(*last)), 1) << "\" cy=\""
        << Fixed(y(*ys[*last]), 1) << "\" r=\"3.5\"><title>run "
        << h.runs[*last].run_id << ": " << Fixed(*ys[*last] * scale, 2) << " "
        << XmlEscape(unit) << "</title></circle>";
  }
  out << "<text class=\"axis\" x=\"" << kLeft << "\" y=\"" << kH - 3
      << "\" style=\"text-anchor:start\">run " << (n ? h.runs.front().run_id : 0)
      << "</text><text class=\"axis\" x=\"" << kW - kRight << "\" y=\""
      << kH - 3 << "\">run " << (n ? h.runs.back().run_id : 0) << "</text>";
  out << "</svg>";
}

}  // namespace

void WriteHistoryHtml(const HistoryResult& h, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<title>rooftrace history</title><style>"
         "body{font:14px sans-serif;margin:16px;color:#222}"
         "h1{font-size:20px;margin:0 0 8px}h2{font-size:14px;margin:0 0 4px;"
         "word-break:break-all}p{margin:4px 0}"
         ".verdict{font-weight:bold;font-size:16px}.bad{color:#b00}"
         ".good{color:#060}.method{color:#555;font-size:12px}"
         ".grid{display:flex;flex-wrap:wrap;gap:12px;margin-top:12px}"
         ".card{border:1px solid #ccc;border-radius:4px;padding:8px;"
         "width:360px}.card.REGRESSED{border:2px solid #b00}"
         ".card .status{font-size:12px;color:#555}"
         ".card.REGRESSED .status{color:#b00;font-weight:bold}"
         ".cp{font-size:11px;color:#444}"
         "svg .window{fill:#fff4c2}svg .series{fill:none;stroke:#2a5db0;"
         "stroke-width:1.5}svg .latest{fill:#2a5db0}"
         ".REGRESSED svg .latest{fill:#b00}"
         "svg .slower{stroke:#b00;stroke-width:2;stroke-dasharray:4 2}"
         "svg .faster{stroke:#080;stroke-width:2;stroke-dasharray:4 2}"
         "svg .suspected{stroke:#e08000;stroke-width:2;stroke-dasharray:4 2}"
         "svg .watch{stroke:#999;stroke-width:1;stroke-dasharray:1 2}"
         ".card.suspected{border:2px solid #e08000}"
         "svg .axis{font-size:10px;fill:#666;text-anchor:end}"
         "</style></head><body>\n<h1>rooftrace history</h1>\n";
  if (!h.incomplete_in_window.empty()) {
    out << "<p class=\"verdict bad\">WARNING: " << XmlEscape(IncompleteLine(h))
        << "</p>\n";
  }
  out << "<p class=\"verdict " << (h.regressed ? "bad" : "good") << "\">"
      << XmlEscape(Verdict(h)) << "</p>\n<p>" << XmlEscape(h.input) << ", "
      << h.runs.size() << " runs (" << XmlEscape(WhereText(h)) << "), by "
      << GroupByName(h.options.group_by) << "; "
      << XmlEscape(NotJudgedLine(h)) << ". The shaded band is "
      << XmlEscape(WindowLine(h)) << ".</p>\n<p class=\"method\">"
      << XmlEscape(MethodLine(h)) << ".</p>\n<div class=\"grid\">\n";
  for (const HistoryGroup& g : h.groups) {
    out << "<div class=\"card " << (g.verdict == HistoryVerdict::kRegressed
                                       ? "REGRESSED"
                                   : g.verdict == HistoryVerdict::kSuspected
                                       ? "suspected"
                                       : "")
        << "\"><h2>" << XmlEscape(GroupTitle(g)) << "</h2><p class=\"status\">"
        << HistoryVerdictName(g.verdict) << " &#183; latest "
        << LatestText(h, g) << " "
        << (std::any_of(g.values.begin(), g.values.end(),
                        [](const auto& v) { return v.has_value(); })
                ? MetricInfo(h.options.metric).unit
                : "")
        << ", "
        << Percent(Latest(g.fraction_of_roof)) << " of roof, noise "
        << Percent(g.noise) << "</p>";
    WriteGroupSvg(h, g, out);
    if (HasReasonOnly(g)) {
      out << "<p class=\"cp\">" << XmlEscape(g.reason) << "</p>";
    }
    for (const auto* list : {&g.changes, &g.watch}) {
      for (const HistoryChange& c : *list) {
        out << "<p class=\"cp\">" << XmlEscape(ChangeLine(h, c)) << "</p>";
      }
    }
    out << "</div>\n";
  }
  out << "</div>\n</body></html>\n";
}

void WriteHistoryJunit(const HistoryResult& h, std::ostream& out) {
  int skipped = 0;
  for (const HistoryGroup& g : h.groups) skipped += HasReasonOnly(g);
  const std::string counts =
      " tests=\"" + std::to_string(h.groups.size()) + "\" failures=\"" +
      std::to_string(h.regressed) + "\" errors=\"0\" skipped=\"" +
      std::to_string(skipped) + "\"";
  const std::string suite = "rooftrace history " + h.input + " (" +
                            WhereText(h) + ")";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<testsuites name=\"rooftrace history\""
      << counts << ">\n<testsuite name=\"" << XmlEscape(suite) << "\""
      << counts << ">\n<properties><property name=\"method\" value=\""
      << XmlEscape(MethodLine(h)) << "\"/><property name=\"window\" value=\""
      << XmlEscape(WindowLine(h)) << "\"/>";
  if (!h.incomplete_in_window.empty()) {
    out << "<property name=\"warning\" value=\""
        << XmlEscape(IncompleteLine(h)) << "\"/>";
  }
  out << "</properties>\n";
  for (const HistoryGroup& g : h.groups) {
    out << "<testcase classname=\"rooftrace.history\" name=\""
        << XmlEscape(GroupTitle(g)) << "\"";
    switch (g.verdict) {
      case HistoryVerdict::kOk:
      case HistoryVerdict::kSuspected:
        // Suspected passes (exit 0 without --strict); it says so.
        if (g.verdict == HistoryVerdict::kSuspected) {
          out << "><system-out>" << XmlEscape("suspected: " + g.reason)
              << "</system-out></testcase>\n";
        } else {
          out << "/>\n";
        }
        break;
      case HistoryVerdict::kRegressed:
        out << "><failure message=\"" << XmlEscape(g.reason)
            << "\" type=\"regression\"/></testcase>\n";
        break;
      case HistoryVerdict::kTooShort:
      case HistoryVerdict::kTooNoisy:
      case HistoryVerdict::kNotJudged:
        out << "><skipped message=\""
            << XmlEscape(std::string(HistoryVerdictName(g.verdict)) + ": " +
                         g.reason)
            << "\"/></testcase>\n";
        break;
    }
  }
  out << "</testsuite>\n</testsuites>\n";
}

}  // namespace rooftrace::analyzer
