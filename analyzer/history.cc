#include "analyzer/history.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

// "run 45 (15 runs ago): 100.0 -> 105.1 us per launch (+5.1%, slower),
// p=3.2e-05; % of roof 71.0% -> 58.0%"
std::string ChangeLine(const HistoryChange& c) {
  return "run " + std::to_string(c.run_id) + " (" +
         (c.runs_ago == 0 ? std::string("the latest run")
                          : std::to_string(c.runs_ago) + " runs ago") +
         "): " + Fixed(c.mean_ns_before / 1e3, 2) + " -> " +
         Fixed(c.mean_ns_after / 1e3, 2) + " us per launch (" +
         Signed(c.magnitude) + ", " + (c.regression ? "slower" : "faster") +
         "), p=" + PValue(c.pvalue) + "; % of roof " + Percent(c.roof_before) +
         " -> " + Percent(c.roof_after) + (c.in_window ? " [window]" : "");
}

std::optional<double> Latest(const std::vector<std::optional<double>>& v) {
  for (auto it = v.rbegin(); it != v.rend(); ++it) {
    if (*it) return *it;
  }
  return std::nullopt;
}

std::string MethodLine(const HistoryResult& h) {
  const auto& cp = h.options.change_points;
  return "E-Divisive means change points, each judged by Student's t-test "
         "(p <= " + PValue(cp.max_pvalue) +
         " after correction for the split positions tried) and kept when "
         "mean time per launch moved >= " + Fixed(cp.min_magnitude * 100, 1) +
         "%; gate: Benjamini-Hochberg, false discovery rate " +
         Fixed(h.options.fdr, 2) + " across the " + std::to_string(h.judged) +
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
         std::to_string(h.judged) + " groups judged)";
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

std::string IncompleteLine(const HistoryResult& h) {
  std::string ids;
  for (int64_t id : h.incomplete_in_window) {
    ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  }
  return "run(s) " + ids +
         " in the window are INCOMPLETE: their figures leave data out";
}

std::string WhereText(const HistoryResult& h) {
  return h.options.where.empty() ? "all runs" : LabelsLine(h.options.where);
}

}  // namespace

const char* HistoryVerdictName(HistoryVerdict v) {
  switch (v) {
    case HistoryVerdict::kOk: return "ok";
    case HistoryVerdict::kRegressed: return "REGRESSED";
    case HistoryVerdict::kTooShort: return "too short";
    case HistoryVerdict::kTooNoisy: return "too noisy";
  }
  return "?";
}

StatusOr<HistoryResult> BuildHistory(StoreReader& store,
                                     const std::string& input,
                                     const HistoryOptions& options) {
  HistoryResult h;
  h.input = input;
  h.options = options;
  std::vector<RunRow> runs;
  for (const RunRow& r : store.runs()) {
    if (Matches(r.labels, options.where)) runs.push_back(r);
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
  RT_RETURN_IF_ERROR(
      store.ForEachKernelOfRuns(ids, [&](const KernelRow& k) {
        if (!builder || h.runs[at].run_id != k.run_id) {
          // The first kernel of the next run: the previous one is complete.
          RT_RETURN_IF_ERROR(finish_run());
          const auto run = position.find(k.run_id);
          if (run == position.end()) return OkStatus();  // not asked for
          at = run->second;
          ReportOptions ro;
          ro.run_id = k.run_id;
          ro.group_by = options.group_by;
          ro.with_families = false;
          builder.emplace(ro);
          for (const auto& [phase, count] : steps[at].per_phase) {
            for (int64_t n = 0; n < count; ++n) builder->AddStep(phase);
          }
        }
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

void JudgeHistory(HistoryResult* h) {
  const int n = static_cast<int>(h->runs.size());
  const int window = std::min(std::max(h->options.window, 1), n);
  const int min_seg = std::max(2, h->options.change_points.min_segment);
  h->judged = h->regressed = h->too_short = h->too_noisy = 0;
  h->incomplete_in_window.clear();
  for (int i = n - window; i < n; ++i) {
    if (!h->runs[i].complete) h->incomplete_in_window.push_back(h->runs[i].run_id);
  }
  std::vector<size_t> judged;
  for (size_t gi = 0; gi < h->groups.size(); ++gi) {
    HistoryGroup& g = h->groups[gi];
    // The runs the group ran in: its series skips the others.
    std::vector<double> x;
    std::vector<int> at;
    for (int i = 0; i < n; ++i) {
      if (g.mean_ns[i]) {
        x.push_back(*g.mean_ns[i]);
        at.push_back(i);
      }
    }
    g.present = static_cast<int>(x.size());
    g.changes.clear();
    if (g.present < 2 * min_seg) {
      g.verdict = HistoryVerdict::kTooShort;
      g.reason = "ran in " + std::to_string(g.present) + " of the " +
                 std::to_string(n) + " runs; a change needs " +
                 std::to_string(min_seg) + " runs on each side to be judged";
      ++h->too_short;
      continue;
    }
    const auto cps = stats::DetectChangePoints(x, h->options.change_points);
    // Noise: the spread of the runs around the levels between change
    // points, relative to the series' mean.
    double ss = 0, total = 0;
    for (size_t s = 0; s <= cps.size(); ++s) {
      const int begin = s == 0 ? 0 : cps[s - 1].index;
      const int end = s == cps.size() ? g.present : cps[s].index;
      double mean = 0;
      for (int i = begin; i < end; ++i) mean += x[i] / (end - begin);
      for (int i = begin; i < end; ++i) ss += (x[i] - mean) * (x[i] - mean);
    }
    for (double v : x) total += v;
    const int dof = std::max(1, g.present - static_cast<int>(cps.size()) - 1);
    g.noise = total > 0 ? std::sqrt(ss / dof) / (total / g.present) : 0;
    std::vector<stats::ChangePoint> in_runs;
    for (size_t c = 0; c < cps.size(); ++c) {
      const stats::ChangePoint& cp = cps[c];
      HistoryChange ch;
      ch.run = static_cast<size_t>(at[cp.index]);
      ch.run_id = h->runs[ch.run].run_id;
      ch.runs_ago = n - 1 - static_cast<int>(ch.run);
      ch.mean_ns_before = cp.mean_before;
      ch.mean_ns_after = cp.mean_after;
      ch.magnitude = cp.magnitude;
      ch.pvalue = cp.pvalue;
      ch.regression = cp.magnitude > 0;
      ch.in_window = static_cast<int>(ch.run) >= n - window;
      // % of roof over the same runs as the means.
      const int before = c == 0 ? 0 : cps[c - 1].index;
      const int after = c + 1 == cps.size() ? g.present : cps[c + 1].index;
      auto roof_mean = [&](int begin, int end) -> std::optional<double> {
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
      };
      ch.roof_before = roof_mean(before, cp.index);
      ch.roof_after = roof_mean(cp.index, after);
      g.changes.push_back(ch);
      stats::ChangePoint mapped = cp;
      mapped.index = static_cast<int>(ch.run);
      in_runs.push_back(mapped);
    }
    g.check_pvalue = stats::RegressionPValue(in_runs, n, window);
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
    g.verdict = HistoryVerdict::kOk;
    g.reason.clear();
    judged.push_back(gi);
  }
  h->judged = static_cast<int>(judged.size());
  std::vector<double> p;
  for (size_t gi : judged) p.push_back(h->groups[gi].check_pvalue);
  const std::vector<bool> rejected =
      stats::BenjaminiHochberg(p, h->options.fdr);
  for (size_t j = 0; j < judged.size(); ++j) {
    if (!rejected[j]) continue;
    HistoryGroup& g = h->groups[judged[j]];
    g.verdict = HistoryVerdict::kRegressed;
    for (const HistoryChange& c : g.changes) {
      if (c.regression && c.in_window && c.pvalue == g.check_pvalue) {
        g.reason = ChangeLine(c);
        break;
      }
    }
    ++h->regressed;
  }
  // Regressions first, then the groups judged, then those that were not;
  // within each, by the latest share of GPU time.
  auto rank = [](HistoryVerdict v) {
    switch (v) {
      case HistoryVerdict::kRegressed: return 0;
      case HistoryVerdict::kOk: return 1;
      case HistoryVerdict::kTooNoisy: return 2;
      case HistoryVerdict::kTooShort: return 3;
    }
    return 4;
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
  out << "\n"
      << "status     runs  latest us  % roof  noise  group\n";
  for (const HistoryGroup& g : h.groups) {
    std::string status = HistoryVerdictName(g.verdict);
    status.resize(std::max<size_t>(status.size(), 9), ' ');
    std::string runs = std::to_string(g.present);
    std::string latest = Fixed(Latest(g.mean_ns).value_or(0) / 1e3, 2);
    std::string roof = Percent(Latest(g.fraction_of_roof));
    std::string noise = Percent(g.noise);
    out << status << "  " << std::string(4 - std::min<size_t>(4, runs.size()), ' ')
        << runs << "  " << std::string(9 - std::min<size_t>(9, latest.size()), ' ')
        << latest << "  " << std::string(6 - std::min<size_t>(6, roof.size()), ' ')
        << roof << "  " << std::string(5 - std::min<size_t>(5, noise.size()), ' ')
        << noise << "  " << GroupTitle(g) << "\n";
    if (g.verdict == HistoryVerdict::kTooShort ||
        g.verdict == HistoryVerdict::kTooNoisy) {
      out << "           " << g.reason << "\n";
    }
    for (const HistoryChange& c : g.changes) {
      out << "           " << ChangeLine(c) << "\n";
    }
  }
}

void WriteHistoryMarkdown(const HistoryResult& h, std::ostream& out) {
  out << "### rooftrace history: "
      << (h.regressed ? "regression" : "no regression") << "\n\n";
  if (!h.incomplete_in_window.empty()) {
    out << "> **" << IncompleteLine(h) << "**\n\n";
  }
  out << "`" << h.input << "`, " << h.runs.size() << " runs (" << WhereText(h)
      << "), by " << GroupByName(h.options.group_by) << ". " << Verdict(h)
      << "; " << NotJudgedLine(h) << ".\n\n"
      << "Method: " << MethodLine(h) << ".\n\n"
      << "| status | group | runs | latest us | % roof | noise | change "
         "points |\n|---|---|---:|---:|---:|---:|---|\n";
  auto cell = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o;
  };
  for (const HistoryGroup& g : h.groups) {
    std::string changes;
    if (g.verdict == HistoryVerdict::kTooShort ||
        g.verdict == HistoryVerdict::kTooNoisy) {
      changes = g.reason;
    }
    for (const HistoryChange& c : g.changes) {
      changes += (changes.empty() ? "" : "<br>") + ChangeLine(c);
    }
    out << "| " << (g.verdict == HistoryVerdict::kRegressed ? "**REGRESSED**"
                                                           : HistoryVerdictName(g.verdict))
        << " | " << cell(GroupTitle(g)) << " | " << g.present << " | "
        << Fixed(Latest(g.mean_ns).value_or(0) / 1e3, 2) << " | "
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
  const auto& cp = h.options.change_points;
  out << "{\"input\":" << JsonString(h.input)
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
      << ",\"max_noise\":" << JsonNumber(h.options.max_noise) << "}"
      << ",\"verdict\":" << JsonString(h.regressed ? "regression" : "ok")
      << ",\"judged\":" << h.judged << ",\"regressed\":" << h.regressed
      << ",\"too_noisy\":" << h.too_noisy << ",\"too_short\":" << h.too_short
      << ",\"incomplete_in_window\":[";
  for (size_t i = 0; i < h.incomplete_in_window.size(); ++i) {
    out << (i ? "," : "") << h.incomplete_in_window[i];
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
        << ",\"change_points\":[";
    for (size_t c = 0; c < g.changes.size(); ++c) {
      const HistoryChange& ch = g.changes[c];
      out << (c ? "," : "") << "{\"run_id\":" << ch.run_id
          << ",\"run_index\":" << ch.run << ",\"runs_ago\":" << ch.runs_ago
          << ",\"direction\":" << JsonString(ch.regression ? "slower" : "faster")
          << ",\"magnitude\":" << JsonNumber(ch.magnitude)
          << ",\"pvalue\":" << JsonNumber(ch.pvalue)
          << ",\"mean_ns_before\":" << JsonNumber(ch.mean_ns_before)
          << ",\"mean_ns_after\":" << JsonNumber(ch.mean_ns_after)
          << ",\"fraction_of_roof_before\":" << JsonNumber(ch.roof_before)
          << ",\"fraction_of_roof_after\":" << JsonNumber(ch.roof_after)
          << ",\"in_window\":" << (ch.in_window ? "true" : "false") << "}";
    }
    out << "]}";
  }
  out << "]}\n";
}

namespace {

// The plot of one group: mean time per launch (us) against run index.
void WriteGroupSvg(const HistoryResult& h, const HistoryGroup& g,
                   std::ostream& out) {
  constexpr double kW = 360, kH = 96, kLeft = 48, kRight = 8, kTop = 8,
                   kBottom = 16;
  const size_t n = h.runs.size();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& v : g.mean_ns) {
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
      << "\">" << Fixed(hi / 1e3, 1) << "</text><text class=\"axis\" x=\""
      << kLeft - 4 << "\" y=\"" << kH - kBottom << "\">" << Fixed(lo / 1e3, 1)
      << "</text><text class=\"axis\" x=\"" << kLeft - 4 << "\" y=\""
      << kH - 3 << "\">us</text>";
  for (const HistoryChange& c : g.changes) {
    const std::string cx = Fixed(x(static_cast<double>(c.run) - 0.5), 1);
    out << "<line class=\"" << (c.regression ? "slower" : "faster")
        << "\" x1=\"" << cx << "\" x2=\"" << cx << "\" y1=\"" << kTop
        << "\" y2=\"" << kH - kBottom << "\"><title>"
        << XmlEscape(ChangeLine(c)) << "</title></line>";
  }
  std::string points;
  std::optional<size_t> last;
  for (size_t i = 0; i < n; ++i) {
    if (!g.mean_ns[i]) continue;
    points += (points.empty() ? "" : " ") +
              Fixed(x(static_cast<double>(i)), 1) + "," +
              Fixed(y(*g.mean_ns[i]), 1);
    last = i;
  }
  out << "<polyline class=\"series\" points=\"" << points << "\"/>";
  if (last) {
    out << "<circle class=\"latest\" cx=\""
        << Fixed(x(static_cast<double>(*last)), 1) << "\" cy=\""
        << Fixed(y(*g.mean_ns[*last]), 1) << "\" r=\"3.5\"><title>run "
        << h.runs[*last].run_id << ": " << Fixed(*g.mean_ns[*last] / 1e3, 2)
        << " us per launch</title></circle>";
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
                                       : "")
        << "\"><h2>" << XmlEscape(GroupTitle(g)) << "</h2><p class=\"status\">"
        << HistoryVerdictName(g.verdict) << " &#183; latest "
        << Fixed(Latest(g.mean_ns).value_or(0) / 1e3, 2) << " us per launch, "
        << Percent(Latest(g.fraction_of_roof)) << " of roof, noise "
        << Percent(g.noise) << "</p>";
    WriteGroupSvg(h, g, out);
    if (g.verdict == HistoryVerdict::kTooShort ||
        g.verdict == HistoryVerdict::kTooNoisy) {
      out << "<p class=\"cp\">" << XmlEscape(g.reason) << "</p>";
    }
    for (const HistoryChange& c : g.changes) {
      out << "<p class=\"cp\">" << XmlEscape(ChangeLine(c)) << "</p>";
    }
    out << "</div>\n";
  }
  out << "</div>\n</body></html>\n";
}

void WriteHistoryJunit(const HistoryResult& h, std::ostream& out) {
  const int skipped = h.too_noisy + h.too_short;
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
        out << "/>\n";
        break;
      case HistoryVerdict::kRegressed:
        out << "><failure message=\"" << XmlEscape(g.reason)
            << "\" type=\"regression\"/></testcase>\n";
        break;
      case HistoryVerdict::kTooShort:
      case HistoryVerdict::kTooNoisy:
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
