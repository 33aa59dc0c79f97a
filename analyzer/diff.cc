#include "analyzer/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "report/report_format.h"
#include "report/text_util.h"

namespace rooftrace::analyzer {
namespace {

std::optional<double> ChangePct(std::optional<double> base,
                                std::optional<double> cand) {
  if (!base || !cand || *base == 0) return std::nullopt;
  return (*cand - *base) / *base * 100.0;
}

std::string Pct(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", *v);
  return buf;
}

int StatusRank(DiffStatus s) {
  switch (s) {
    case DiffStatus::kRegressed: return 0;
    case DiffStatus::kImproved: return 1;
    case DiffStatus::kOk: return 2;
    case DiffStatus::kNoisy: return 3;
    case DiffStatus::kNew: return 4;
    case DiffStatus::kGone: return 5;
  }
  return 6;
}

std::optional<double> PrefillShare(const GroupRow& g) {
  if (g.total_ns <= 0) return std::nullopt;
  return static_cast<double>(g.phase_time_ns[PhaseIndex("prefill")]) / g.total_ns;
}

std::string Arrow(const std::string& a, const std::string& b) { return a + " -> " + b; }

std::string Side(const std::optional<GroupRow>& g,
                 std::string (*cell)(const GroupRow&)) {
  return g ? cell(*g) : std::string("-");
}

std::string MeanUs(const GroupRow& g) { return Fixed(g.mean_ns * 1e-3, 2); }
std::string Count(const GroupRow& g) { return std::to_string(g.count); }
std::string RoofPct(const GroupRow& g) {
  return Fixed(g.fraction_of_roof ? std::optional<double>(*g.fraction_of_roof * 100)
                                  : std::nullopt,
               1);
}
std::string Ai(const GroupRow& g) { return Fixed(g.ai, 2); }
std::string PrefillPct(const GroupRow& g) {
  const std::optional<double> s = PrefillShare(g);
  return Fixed(s ? std::optional<double>(*s * 100) : std::nullopt, 0) + "%";
}

struct Cells {
  std::vector<std::string> titles = {"status", "name",   "shape",  "launches",
                                     "mean us", "d mean", "% roof", "d roof",
                                     "AI",      "prefill share"};
  std::vector<std::vector<std::string>> rows;
};

Cells BuildCells(const DiffResult& d) {
  Cells c;
  for (const DiffRow& r : d.rows) {
    c.rows.push_back({DiffStatusName(r.status), r.name, r.shape,
                      Arrow(Side(r.base, Count), Side(r.cand, Count)),
                      Arrow(Side(r.base, MeanUs), Side(r.cand, MeanUs)),
                      Pct(r.mean_time_change_pct),
                      Arrow(Side(r.base, RoofPct), Side(r.cand, RoofPct)),
                      Pct(r.fraction_change_pct),
                      Arrow(Side(r.base, Ai), Side(r.cand, Ai)),
                      Arrow(Side(r.base, PrefillPct), Side(r.cand, PrefillPct))});
  }
  return c;
}

std::string Summary(const DiffResult& d) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%d regression%s in %d matched groups (%d improved, %d below the "
                "noise floor, %d new, %d gone)",
                d.regressions, d.regressions == 1 ? "" : "s", d.matched,
                d.improvements, d.noisy, d.added, d.removed);
  return buf;
}

std::string DeviceWarning(const DiffResult& d) {
  return "WARNING: the runs are from different GPUs (baseline: " +
         (d.base_device.empty() ? std::string("unknown") : d.base_device) +
         ", candidate: " +
         (d.cand_device.empty() ? std::string("unknown") : d.cand_device) +
         "); times and % of roof are not comparable across GPUs, compared anyway";
}

std::string PhaseMix(const DiffResult& d) {
  std::string out;
  for (const PhaseShare& p : d.phases) {
    if (!out.empty()) out += ", ";
    out += p.phase + " " + Fixed(p.base_share * 100, 1) + "% -> " +
           Fixed(p.cand_share * 100, 1) + "%";
  }
  return out;
}

}  // namespace

const char* DiffStatusName(DiffStatus s) {
  switch (s) {
    case DiffStatus::kOk: return "ok";
    case DiffStatus::kRegressed: return "REGRESSED";
    case DiffStatus::kImproved: return "improved";
    case DiffStatus::kNoisy: return "noisy";
    case DiffStatus::kNew: return "new";
    case DiffStatus::kGone: return "gone";
  }
  return "?";
}

DiffResult DiffReports(const Report& base, const Report& cand,
                       const DiffOptions& options) {
  DiffResult d;
  d.base_input = base.header.input;
  d.cand_input = cand.header.input;
  d.base_run = base.header.run.run_id;
  d.cand_run = cand.header.run.run_id;
  d.base_device = base.header.device_name;
  d.cand_device = cand.header.device_name;
  d.different_devices = d.base_device != d.cand_device;
  d.base_roofs = base.header.roofs.source;
  d.cand_roofs = cand.header.roofs.source;
  d.base_labels = base.header.run.labels;
  d.cand_labels = cand.header.run.labels;
  d.match_by = base.group_by;
  d.options = options;
  d.base_total_ns = base.total_ns;
  d.cand_total_ns = cand.total_ns;

  std::map<std::string, const GroupRow*> base_by_key, cand_by_key;
  for (const GroupRow& g : base.groups) base_by_key[g.key] = &g;
  for (const GroupRow& g : cand.groups) cand_by_key[g.key] = &g;
  std::map<std::string, int> keys;
  for (const auto& [k, g] : base_by_key) keys[k] |= 1;
  for (const auto& [k, g] : cand_by_key) keys[k] |= 2;

  const int64_t min_ns = static_cast<int64_t>(options.min_time_ms * 1e6);
  for (const auto& [key, sides] : keys) {
    DiffRow r;
    r.key = key;
    const GroupRow* b = sides & 1 ? base_by_key[key] : nullptr;
    const GroupRow* c = sides & 2 ? cand_by_key[key] : nullptr;
    if (b) r.base = *b;
    if (c) r.cand = *c;
    const GroupRow& any = b ? *b : *c;
    r.name = any.name;
    // With --by family a group spans shapes: the dominant one, its share
    // and the count, never one shape standing for all.
    r.shape = ShapeLabel(any);
    if (b) r.base_prefill_share = PrefillShare(*b);
    if (c) r.cand_prefill_share = PrefillShare(*c);
    if (!b || !c) {
      r.status = b ? DiffStatus::kGone : DiffStatus::kNew;
      r.reason = b ? "only in the baseline" : "only in the candidate";
      (b ? d.removed : d.added)++;
      d.rows.push_back(std::move(r));
      continue;
    }
    ++d.matched;
    r.mean_time_change_pct = ChangePct(b->mean_ns, c->mean_ns);
    r.total_time_change_pct = ChangePct(static_cast<double>(b->total_ns),
                                        static_cast<double>(c->total_ns));
    r.fraction_change_pct = ChangePct(b->fraction_of_roof, c->fraction_of_roof);
    r.ai_change_pct = ChangePct(b->ai, c->ai);
    if (b->count < options.min_count || c->count < options.min_count ||
        b->total_ns < min_ns || c->total_ns < min_ns) {
      r.status = DiffStatus::kNoisy;
      r.reason = "below the noise floor: " + std::to_string(b->count) + " -> " +
                 std::to_string(c->count) + " launches, " +
                 Fixed(b->total_ns * 1e-6, 3) + " -> " +
                 Fixed(c->total_ns * 1e-6, 3) + " ms (needs " +
                 std::to_string(options.min_count) + " launches and " +
                 Fixed(options.min_time_ms, 3) + " ms on both sides)";
      ++d.noisy;
      d.rows.push_back(std::move(r));
      continue;
    }
    std::vector<std::string> worse, better;
    if (r.mean_time_change_pct) {
      const std::string what = "mean time per launch " +
                               Fixed(b->mean_ns * 1e-3, 2) + " -> " +
                               Fixed(c->mean_ns * 1e-3, 2) + " us (" +
                               Pct(r.mean_time_change_pct) + ")";
      if (*r.mean_time_change_pct > options.threshold_pct) worse.push_back(what);
      if (*r.mean_time_change_pct < -options.threshold_pct) better.push_back(what);
    }
    if (r.fraction_change_pct) {
      const std::string what = "% of roof " + RoofPct(*b) + " -> " + RoofPct(*c) +
                               " (" + Pct(r.fraction_change_pct) + ")";
      if (*r.fraction_change_pct < -options.threshold_pct) worse.push_back(what);
      if (*r.fraction_change_pct > options.threshold_pct) better.push_back(what);
    }
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "" : "; ") + x;
      return s;
    };
    if (!worse.empty()) {
      r.status = DiffStatus::kRegressed;
      r.reason = join(worse);
      ++d.regressions;
    } else if (!better.empty()) {
      r.status = DiffStatus::kImproved;
      r.reason = join(better);
      ++d.improvements;
    }
    d.rows.push_back(std::move(r));
  }
  std::stable_sort(d.rows.begin(), d.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    if (StatusRank(x.status) != StatusRank(y.status)) {
      return StatusRank(x.status) < StatusRank(y.status);
    }
    auto moved = [](const DiffRow& r) {
      return std::llabs((r.cand ? r.cand->total_ns : 0) - (r.base ? r.base->total_ns : 0));
    };
    if (moved(x) != moved(y)) return moved(x) > moved(y);
    return NaturalLess(x.key, y.key);  // layer.2 before layer.10
  });

  for (int i = 0; i < kNumPhases; ++i) {
    PhaseShare p;
    p.phase = kPhaseNames[i];
    bool seen = false;
    for (const PhaseRow& row : base.phases) {
      if (row.phase == p.phase) { p.base_share = row.share; seen = true; }
    }
    for (const PhaseRow& row : cand.phases) {
      if (row.phase == p.phase) { p.cand_share = row.share; seen = true; }
    }
    if (seen) d.phases.push_back(p);
  }
  return d;
}

namespace {

// A run's labels for a header line; "(none)" for a run without any.
std::string LabelsOrNone(const RunLabels& labels) {
  return labels.empty() ? "(none)" : LabelsLine(labels);
}

std::string LabelsJson(const RunLabels& labels) {
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    out += (i ? "," : "") + JsonString(labels[i].first) + ":" +
           JsonString(labels[i].second);
  }
  return out + "}";
}

}  // namespace

void WriteDiffTable(const DiffResult& d, std::ostream& out) {
  out << "rooftrace diff: baseline " << d.base_input << " run " << d.base_run
      << " (" << (d.base_device.empty() ? "unknown GPU" : d.base_device)
      << ") vs candidate " << d.cand_input << " run " << d.cand_run << " ("
      << (d.cand_device.empty() ? "unknown GPU" : d.cand_device) << ")\n";
  if (d.different_devices) out << "  " << DeviceWarning(d) << "\n";
  out << "  matched by " << GroupByName(d.match_by) << "; regression: mean time "
      << "per launch up or % of roof down by more than "
      << Fixed(d.options.threshold_pct, 1) << "%; noise floor "
      << d.options.min_count << " launches and " << Fixed(d.options.min_time_ms, 3)
      << " ms per side\n";
  out << "  roofs: " << d.base_roofs << " -> " << d.cand_roofs << "\n";
  if (!d.base_labels.empty() || !d.cand_labels.empty()) {
    out << "  labels: " << LabelsOrNone(d.base_labels) << " -> "
        << LabelsOrNone(d.cand_labels) << "\n";
  }
  out << "  GPU time: " << Fixed(d.base_total_ns * 1e-6, 3) << " -> "
      << Fixed(d.cand_total_ns * 1e-6, 3) << " ms ("
      << Pct(ChangePct(static_cast<double>(d.base_total_ns),
                       static_cast<double>(d.cand_total_ns)))
      << ")\n  phase mix: " << PhaseMix(d) << "\n\n";
  const Cells c = BuildCells(d);
  std::vector<size_t> w(c.titles.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = c.titles[i].size();
  for (const auto& row : c.rows) {
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = std::max(w[i], std::min<size_t>(row[i].size(), i == 1 ? 48 : 40));
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string v = cells[i];
      if (i == 1 && v.size() > 48) v = v.substr(0, 45) + "...";
      if (i) s += "  ";
      s += v + std::string(w[i] > v.size() ? w[i] - v.size() : 0, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(c.titles);
  for (const auto& row : c.rows) line(row);
  bool any_reason = false;
  for (const DiffRow& r : d.rows) {
    if (r.status != DiffStatus::kRegressed) continue;
    if (!any_reason) out << "\nRegressions:\n";
    any_reason = true;
    out << "  " << r.name << (r.shape.empty() ? "" : " [" + r.shape + "]") << ": "
        << r.reason << "\n";
  }
  out << "\nResult: " << Summary(d) << "\n";
}

void WriteDiffMarkdown(const DiffResult& d, std::ostream& out) {
  out << "### rooftrace diff: " << (d.regressions ? "regression" : "no regression")
      << "\n\n";
  if (d.different_devices) out << "> **" << DeviceWarning(d) << "**\n\n";
  out << "Baseline `" << d.base_input << "` run " << d.base_run << " ("
      << d.base_device << ") vs candidate `" << d.cand_input << "` run "
      << d.cand_run << " (" << d.cand_device << "). Matched by "
      << GroupByName(d.match_by) << ", threshold " << Fixed(d.options.threshold_pct, 1)
      << "%, noise floor " << d.options.min_count << " launches / "
      << Fixed(d.options.min_time_ms, 3) << " ms.\n\n";
  if (!d.base_labels.empty() || !d.cand_labels.empty()) {
    out << "Labels: `" << LabelsOrNone(d.base_labels) << "` -> `"
        << LabelsOrNone(d.cand_labels) << "`.\n\n";
  }
  out << "GPU time " << Fixed(d.base_total_ns * 1e-6, 3) << " -> "
      << Fixed(d.cand_total_ns * 1e-6, 3) << " ms; phase mix: " << PhaseMix(d)
      << "\n\n";
  const Cells c = BuildCells(d);
  auto md = [](std::string s) {
    std::string o;
    for (char ch : s) {
      if (ch == '|') o += "\\|";
      else if (ch == '<') o += "&lt;";
      else o.push_back(ch);
    }
    return o;
  };
  out << "|";
  for (const std::string& t : c.titles) out << " " << t << " |";
  out << "\n|";
  for (size_t i = 0; i < c.titles.size(); ++i) out << (i < 3 ? " --- |" : " ---: |");
  out << "\n";
  for (const auto& row : c.rows) {
    out << "|";
    for (size_t i = 0; i < row.size(); ++i) {
      out << " " << (i == 0 && row[i] == "REGRESSED" ? "**REGRESSED**" : md(row[i]))
          << " |";
    }
    out << "\n";
  }
  out << "\n**Result:** " << Summary(d) << "\n";
}

void WriteDiffJson(const DiffResult& d, std::ostream& out) {
  auto group = [&](const std::optional<GroupRow>& g) {
    if (!g) return std::string("null");
    return "{\"count\":" + std::to_string(g->count) +
           ",\"total_ns\":" + std::to_string(g->total_ns) +
           ",\"mean_ns\":" + JsonNumber(g->mean_ns) + ",\"ai\":" + JsonNumber(g->ai) +
           ",\"fraction_of_roof\":" + JsonNumber(g->fraction_of_roof) +
           ",\"achieved_flops_per_s\":" + JsonNumber(g->achieved_flops_per_s) +
           ",\"bound\":" + JsonString(g->bound) + ",\"phase\":" + JsonString(g->phase) +
           ",\"prefill_share\":" + JsonNumber(PrefillShare(*g)) + "}";
  };
  out << "{\"baseline\":{\"input\":" << JsonString(d.base_input)
      << ",\"run_id\":" << d.base_run << ",\"device\":" << JsonString(d.base_device)
      << ",\"roofs\":" << JsonString(d.base_roofs)
      << ",\"labels\":" << LabelsJson(d.base_labels)
      << ",\"total_ns\":" << d.base_total_ns << "},\"candidate\":{\"input\":"
      << JsonString(d.cand_input) << ",\"run_id\":" << d.cand_run
      << ",\"device\":" << JsonString(d.cand_device)
      << ",\"roofs\":" << JsonString(d.cand_roofs)
      << ",\"labels\":" << LabelsJson(d.cand_labels)
      << ",\"total_ns\":" << d.cand_total_ns
      << "},\"different_devices\":" << (d.different_devices ? "true" : "false")
      << ",\"match_by\":" << JsonString(GroupByName(d.match_by))
      << ",\"threshold_pct\":" << JsonNumber(d.options.threshold_pct)
      << ",\"min_count\":" << d.options.min_count
      << ",\"min_time_ms\":" << JsonNumber(d.options.min_time_ms)
      << ",\"regressions\":" << d.regressions << ",\"improvements\":" << d.improvements
      << ",\"noisy\":" << d.noisy << ",\"matched\":" << d.matched
      << ",\"new\":" << d.added << ",\"gone\":" << d.removed << ",\"phases\":[";
  for (size_t i = 0; i < d.phases.size(); ++i) {
    out << (i ? "," : "") << "{\"phase\":" << JsonString(d.phases[i].phase)
        << ",\"baseline_share\":" << JsonNumber(d.phases[i].base_share)
        << ",\"candidate_share\":" << JsonNumber(d.phases[i].cand_share) << "}";
  }
  out << "],\"groups\":[";
  for (size_t i = 0; i < d.rows.size(); ++i) {
    const DiffRow& r = d.rows[i];
    out << (i ? ",\n" : "\n") << "{\"key\":" << JsonString(r.key)
        << ",\"name\":" << JsonString(r.name) << ",\"shape\":" << JsonString(r.shape)
        << ",\"status\":" << JsonString(DiffStatusName(r.status))
        << ",\"reason\":" << JsonString(r.reason)
        << ",\"mean_time_change_pct\":" << JsonNumber(r.mean_time_change_pct)
        << ",\"total_time_change_pct\":" << JsonNumber(r.total_time_change_pct)
        << ",\"fraction_of_roof_change_pct\":" << JsonNumber(r.fraction_change_pct)
        << ",\"ai_change_pct\":" << JsonNumber(r.ai_change_pct)
        << ",\"baseline\":" << group(r.base) << ",\"candidate\":" << group(r.cand)
        << "}";
  }
  out << "\n]}\n";
}

void WriteDiffJunit(const DiffResult& d, std::ostream& out) {
  int skipped = 0;
  for (const DiffRow& r : d.rows) {
    if (r.status == DiffStatus::kNoisy || r.status == DiffStatus::kNew ||
        r.status == DiffStatus::kGone) {
      ++skipped;
    }
  }
  const std::string suite = "rooftrace diff " + d.base_input + " run " +
                            std::to_string(d.base_run) + " vs " + d.cand_input +
                            " run " + std::to_string(d.cand_run);
  const std::string counts = " tests=\"" + std::to_string(d.rows.size()) +
                             "\" failures=\"" + std::to_string(d.regressions) +
                             "\" errors=\"0\" skipped=\"" + std::to_string(skipped) +
                             "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"rooftrace "
         "diff\""
      << counts << ">\n<testsuite name=\"" << XmlEscape(suite) << "\"" << counts
      << " time=\"" << Fixed(d.cand_total_ns * 1e-9, 6) << "\">\n";
  if (d.different_devices || !d.base_labels.empty() ||
      !d.cand_labels.empty()) {
    out << "<properties>";
    if (d.different_devices) {
      out << "<property name=\"warning\" value=\""
          << XmlEscape(DeviceWarning(d)) << "\"/>";
    }
    // One property per label and side, so a CI page can show them.
    for (const auto& [side, labels] :
         {std::pair{"baseline", &d.base_labels},
          std::pair{"candidate", &d.cand_labels}}) {
      for (const auto& [key, value] : *labels) {
        out << "<property name=\"" << side << ".label." << XmlEscape(key)
            << "\" value=\"" << XmlEscape(value) << "\"/>";
      }
    }
    out << "</properties>\n";
  }
  for (const DiffRow& r : d.rows) {
    const std::string name = r.name + (r.shape.empty() ? "" : " [" + r.shape + "]");
    out << "<testcase classname=\"rooftrace.diff." << GroupByName(d.match_by)
        << "\" name=\"" << XmlEscape(name) << "\" time=\""
        << Fixed(r.cand ? r.cand->total_ns * 1e-9 : 0.0, 6) << "\"";
    switch (r.status) {
      case DiffStatus::kRegressed:
        out << "><failure message=\"" << XmlEscape(r.reason) << "\" type=\"regression\">"
            << XmlEscape(name + ": " + r.reason) << "</failure></testcase>\n";
        break;
      case DiffStatus::kNoisy:
      case DiffStatus::kNew:
      case DiffStatus::kGone:
        out << "><skipped message=\"" << XmlEscape(r.reason) << "\"/></testcase>\n";
        break;
      default:
        if (r.reason.empty()) {
          out << "/>\n";
        } else {
          out << "><system-out>" << XmlEscape(r.reason) << "</system-out></testcase>\n";
        }
    }
  }
  out << "</testsuite>\n</testsuites>\n";
}

}  // namespace rooftrace::analyzer
