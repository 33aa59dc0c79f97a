// latest_night_bench: how `rooftrace history --check` judges generated
// stores whose answer is known (stats::SyntheticStore: 10 groups, each
// with its own noise; group 0, at the noise level, steps or spikes), night by night, through
// the same judging the command runs (analyzer::HistoryOfSeries). Per
// history length (3, 5, 8, 40 runs before the step lands) and noise level
// (1, 2, 5 %), over --seeds stores each:
//   - noise only: stores that fail the gate (exit 1), and that would fail
//     with --strict (a group suspected);
//   - a step of 3, 5, 8, 15 % landing on the latest night: group 0
//     suspected (or regressed) that night, exit 1 that night, exit 1 the
//     next night, the median delay to exit 1 (nights after it lands; "-"
//     when half the stores never fail within 10), and the median error of
//     the size at the first report (points);
//   - a one-night +30 % spike on the night before the latest: stores that
//     pass (exit 0) the night after it.
// --trace FILE builds the stores from a real run instead: one group per
// kernel family of FILE (any input `analyze` reads), at its time per
// launch, the family with the most time being group 0 (the one that
// moves); the noise is still generated.
// Prints figures (docs/history.md quotes them), never a timed test.
//   build/bench/latest_night_bench [--seeds N] [--trace FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/changepoint_latest.h"
#include "analyzer/history.h"

namespace rt = rooftrace;

namespace {

struct Night {
  bool exit1 = false;      // the gate fails
  bool strict1 = false;    // --strict fails
  bool flagged0 = false;   // group 0 suspected or regressed
  std::optional<double> size0;  // group 0's reported size, when flagged
};

// The verdict on the store's first `runs` nights.
Night Judge(const std::vector<std::vector<double>>& store, int runs) {
  std::vector<std::vector<double>> cut;
  for (const auto& s : store) cut.emplace_back(s.begin(), s.begin() + runs);
  const rt::analyzer::HistoryResult h =
      rt::analyzer::HistoryOfSeries(cut, rt::analyzer::HistoryOptions{});
  Night n;
  n.exit1 = h.regressed > 0;
  n.strict1 = n.exit1 || h.suspected > 0;
  for (const auto& g : h.groups) {
    if (g.key != "series 0") continue;
    n.flagged0 = g.verdict == rt::analyzer::HistoryVerdict::kRegressed ||
                 g.verdict == rt::analyzer::HistoryVerdict::kSuspected;
    for (const auto& c : g.changes) {
      if (c.regression && c.in_window) n.size0 = c.magnitude;
    }
  }
  return n;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string Pct(int k, int n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", 100.0 * k / n);
  return buf;
}

// The time per launch of every kernel family of `path`, the family with
// the most time first (analyze's family grouping); empty when it cannot
// be read (said on stderr).
std::vector<double> FamilyBases(const std::string& path) {
  rt::ReportOptions options;
  options.group_by = rt::GroupBy::kFamily;
  options.top = 0;
  auto analyzed = rt::analyzer::OpenAndReport(path, "", options);
  if (!analyzed.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(),
                 analyzed.status().message().c_str());
    return {};
  }
  const rt::Report& r = analyzed->report;
  std::vector<double> bases;
  for (const rt::GroupRow& g : r.groups) {  // by total time, descending
    if (g.count > 0 && g.mean_ns > 0) bases.push_back(g.mean_ns);
  }
  if (!bases.empty()) {
    std::printf("groups: the %zu kernel families of %s; group 0 is %s, "
                "%.1f%% of its kernel time, %.0f ns a launch\n",
                bases.size(), path.c_str(), r.groups[0].name.c_str(),
                100.0 * r.groups[0].time_share, bases[0]);
  }
  return bases;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 100;
  std::vector<double> bases;  // empty: 10 generated groups
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seeds" && i + 1 < argc) {
      seeds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--trace" && i + 1 < argc) {
      bases = FamilyBases(argv[++i]);
      if (bases.empty()) return 2;
    } else {
      std::fprintf(stderr,
                   "usage: latest_night_bench [--seeds N] [--trace FILE]\n");
      return 2;
    }
  }
  constexpr int kFollow = 10;  // nights watched after a step lands
  std::printf("%d stores per cell, %zu groups each (group 0 at the noise "
              "level, the others at level x 0.5-1.5), default options\n\n",
              seeds, bases.empty() ? size_t{10} : bases.size());
  std::printf("| runs | noise | noise only: exit 1 %% | --strict exit 1 %% | "
              "+30%% spike: exit 0 next night %% |\n|---:|---:|---:|---:|---:|\n");
  const int lengths[] = {3, 5, 8, 40};
  const double noises[] = {0.01, 0.02, 0.05};
  const double steps[] = {0.03, 0.05, 0.08, 0.15};
  for (int runs : lengths) {
    for (double noise : noises) {
      int fail = 0, strict = 0, spike_ok = 0;
      for (int seed = 1; seed <= seeds; ++seed) {
        rt::stats::SyntheticStoreSpec spec;
        spec.bases = bases;
        spec.runs = runs;
        spec.noise = noise;
        const Night n = Judge(rt::stats::SyntheticStore(spec, seed), runs);
        fail += n.exit1;
        strict += n.strict1;
        // The spike on the night before the latest: runs - 1 earlier runs
        // to judge it against, the latest back to normal.
        spec.spike_at = runs - 1;
        spec.spike = 0.30;
        spec.runs = runs + 1;
        spike_ok += !Judge(rt::stats::SyntheticStore(spec, 50000 + seed),
                           runs + 1)
                         .exit1;
      }
      std::printf("| %d | %.0f%% | %s | %s | %s |\n", runs, noise * 100,
                  Pct(fail, seeds).c_str(), Pct(strict, seeds).c_str(),
                  Pct(spike_ok, seeds).c_str());
    }
  }
  std::printf("\nA step of group 0 landing on night runs + 1 (after `runs` "
              "steady nights):\n\n| runs | noise | step | suspected that "
              "night %% | exit 1 that night %% | exit 1 next night %% | "
              "median delay to exit 1 (nights) | size at first report: "
              "median error (points) |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int runs : lengths) {
    for (double noise : noises) {
      for (double step : steps) {
        int suspected = 0, night0 = 0, night1 = 0;
        std::vector<double> delays, errors;
        for (int seed = 1; seed <= seeds; ++seed) {
          rt::stats::SyntheticStoreSpec spec;
          spec.bases = bases;
          spec.runs = runs + kFollow;
          spec.noise = noise;
          spec.step_at = runs;
          spec.step = step;
          const auto store = rt::stats::SyntheticStore(spec, 100000 + seed);
          double delay = 1e9;  // never within kFollow nights
          bool reported = false;
          for (int k = 0; k < kFollow; ++k) {
            const Night n = Judge(store, runs + 1 + k);
            if (k == 0) {
              suspected += n.flagged0;
              night0 += n.exit1;
            }
            if (k == 1) night1 += n.exit1;
            if (!reported && n.flagged0 && n.size0) {
              reported = true;
              errors.push_back((*n.size0 - step) * 100);
            }
            if (n.exit1 && delay > kFollow) delay = k;
            // Nights 0 and 1 are counted whatever came before.
            if (delay <= kFollow && k >= 1) break;
          }
          delays.push_back(delay);
        }
        const double d = Median(delays);
        char delay_text[32];
        if (d > kFollow) {
          std::snprintf(delay_text, sizeof delay_text, "-");
        } else {
          std::snprintf(delay_text, sizeof delay_text, "%.1f", d);
        }
        std::printf("| %d | %.0f%% | %.0f%% | %s | %s | %s | %s | %+.2f |\n",
                    runs, noise * 100, step * 100,
                    Pct(suspected, seeds).c_str(), Pct(night0, seeds).c_str(),
                    Pct(night1, seeds).c_str(), delay_text, Median(errors));
      }
    }
  }
  return 0;
}
