// `rooftrace history`: the runs of a store that carry the asked labels, in
// time order, and per group (family+shape, family, phase or NVTX range) the
// series of mean time per launch and % of roof across them; where each
// series moved (change points, analyzer/changepoint.h), whether the latest
// nights moved (analyzer/changepoint_latest.h: suspected, regressed) and
// whether a regression landed in the latest runs, with false alarms held
// across all the groups judged at once (Benjamini-Hochberg); the figure
// judged is --metric's. docs/history.md.
//
// BuildHistory reads the store; the rest is pure. Not thread-safe (one
// StoreReader).
#ifndef ROOFTRACE_ANALYZER_HISTORY_H_
#define ROOFTRACE_ANALYZER_HISTORY_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/changepoint.h"
#include "analyzer/changepoint_latest.h"
#include "base/status.h"
#include "report/report.h"
#include "store/store_reader.h"

namespace rooftrace::analyzer {

// What history judges: a group's figure (time per launch, % of roof, share
// of GPU time) or a per-run figure (one series for the whole run).
enum class HistoryMetric {
  kTimePerLaunch,
  kRoof,
  kTimeShare,
  kGpuTime,
  kGpuTimePerStep,
  kDecodeTokensPerS,
  kPrefillTokensPerS,
};
struct HistoryMetricInfo {
  const char* name;   // the --metric word: "time", "roof", ...
  const char* title;  // "time per launch"
  const char* unit;   // "us per launch"
  double scale;       // shown value = value * scale
  bool higher_is_worse;
  bool per_run;  // one series for the run, not one per group
};
const HistoryMetricInfo& MetricInfo(HistoryMetric m);
// The metric named `name`; nullopt when none is (MetricNames lists them).
std::optional<HistoryMetric> MetricFromName(const std::string& name);
std::string MetricNames();  // "time, roof, ..."

struct HistoryOptions {
  RunLabels where;  // every pair must match a run's labels
  GroupBy group_by = GroupBy::kFamilyShape;
  // The latest runs a gate looks at: a regression that starts there fails it.
  int window = 5;
  stats::ChangePointOptions change_points;
  // The false discovery rate held across the groups judged (Benjamini-
  // Hochberg); with no real change anywhere it bounds the chance that any
  // group fails the gate.
  double fdr = 0.05;
  // The false discovery rate of "suspected" (an early warning, exit 0
  // unless --strict): looser than the gate's, so that tonight's step is
  // flagged tonight.
  double suspect_fdr = 0.10;
  // A group whose runs scatter more than this (coefficient of variation of
  // the judged figure around its levels) is too noisy to judge: a move
  // of min_magnitude would hide in it.
  double max_noise = 0.10;
  // The latest-night test (changepoint_latest.h); its min_magnitude is
  // change_points.min_magnitude.
  stats::LatestNightOptions latest;
  // Degrees of freedom the noise pooled across the groups is worth at most
  // (a short history leans on it; changepoint_latest.h ModeratedNoise).
  double pooled_noise_dof = 10;
  // Change points found at this looser p-value but not at max_pvalue are
  // listed as "watch" (a first pass, as Otava's weak change points).
  double watch_pvalue = 0.2;
  HistoryMetric metric = HistoryMetric::kTimePerLaunch;
  // Read a run's stored aggregates (kernel_aggregates, store schema 8)
  // instead of its kernels where they serve the grouping (all but --by
  // nvtx and step). Tests turn it off to compare both reads.
  bool read_aggregates = true;
};

struct HistoryRun {
  int64_t run_id = 0;
  std::optional<int64_t> started_unix_ns;
  RunLabels labels;
  bool complete = false;
  std::string incomplete_reason;
  int64_t kernel_count = 0;
  int64_t total_ns = 0;  // GPU time of its kernels
  int64_t steps = 0;     // forward steps (all phases); 0: none labelled
  // Tokens per second of GPU step time, where the phases give token
  // counts: decode steps' tokens (one per sequence) over those steps'
  // spans, and prefill steps' (the prompts' tokens) over theirs.
  std::optional<double> decode_tokens_per_s, prefill_tokens_per_s;
};

// How a change was found: an E-Divisive change point, the latest-night
// test (changepoint_latest.h), or a weak change point (the watch pass).
enum class HistoryChangeKind { kChangePoint, kLatestNights, kWatch };
// What a latest-night finding amounts to after the control across groups.
enum class LatestState { kWatch, kSuspected, kRegressed };

// One change of a group's series, in the selected runs' terms.
struct HistoryChange {
  HistoryChangeKind kind = HistoryChangeKind::kChangePoint;
  LatestState state = LatestState::kWatch;  // kLatestNights only
  size_t run = 0;  // index into HistoryResult::runs of the first moved run
  int64_t run_id = 0;
  int runs_ago = 0;  // 0: the latest run
  // The judged figure (metric's units, unscaled) before and after: mean,
  // standard deviation, runs.
  double mean_before = 0, mean_after = 0, sd_before = 0, sd_after = 0;
  int runs_before = 0, runs_after = 0;
  double magnitude = 0;  // relative change of the figure
  double magnitude_low = 0, magnitude_high = 0;  // its 95 % interval
  double pvalue = 1;
  bool regression = false;  // the metric's worse way
  // Time-weighted % of roof (0..1) of the same runs before and after.
  std::optional<double> roof_before, roof_after;
  bool in_window = false;
};

// kSuspected: the latest night moved beyond the noise band (exit 0, or 1
// with --strict); kNotJudged: the metric is per run, so the groups' series
// are shown, not judged.
enum class HistoryVerdict {
  kOk,
  kRegressed,
  kSuspected,
  kTooShort,
  kTooNoisy,
  kNotJudged,
};
const char* HistoryVerdictName(HistoryVerdict v);  // "ok", "REGRESSED", ...

struct HistoryGroup {
  std::string key, name, shape;
  // Per selected run (HistoryResult::runs order); unset where the group
  // did not run.
  std::vector<std::optional<double>> mean_ns, fraction_of_roof, time_share;
  // The judged figure per run (options.metric), unset where absent.
  std::vector<std::optional<double>> values;
  int present = 0;  // runs with the group
  double noise = 0;  // coefficient of variation around its levels
  // Run-to-run noise the latest-night test used (own moderated by pooled).
  double night_noise = 0;
  std::vector<HistoryChange> changes;  // change points, then latest nights
  std::vector<HistoryChange> watch;    // weak findings, not judged
  // The gate's p-value: the smallest of its change points' regression
  // p-value in the window (stats::RegressionPValue) and its latest nights'
  // (two nights confirming, or one with the noise widened).
  double check_pvalue = 1;
  HistoryVerdict verdict = HistoryVerdict::kOk;
  std::string reason;  // one sentence for a verdict other than ok
};

struct HistoryResult {
  std::string input;
  HistoryOptions options;
  std::vector<HistoryRun> runs;  // time order
  std::vector<HistoryGroup> groups;  // regressions first, then by time
  int judged = 0, regressed = 0, suspected = 0, too_short = 0, too_noisy = 0;
  // The noise pooled across the judged groups (changepoint_latest.h).
  stats::NoiseEstimate pooled_noise;
  // Runs of the window that are not complete (ids).
  std::vector<int64_t> incomplete_in_window;
  // Matching runs another process is writing now (ids; StoreReader::
  // RunsBeingWritten): left out of `runs`, neither judged nor incomplete.
  std::vector<int64_t> in_progress;
};

// Reads the runs of `store` matching options.where and builds the history.
// NotFound when no run matches (naming the labels the store has).
StatusOr<HistoryResult> BuildHistory(StoreReader& store,
                                     const std::string& input,
                                     const HistoryOptions& options);

// Judges the groups' series (change points, noise, the gate); pure.
void JudgeHistory(HistoryResult* h);

// A history of generated series (tests, bench): one group per series, one
// run per value (ids 1..), every run complete, judged with `options`.
HistoryResult HistoryOfSeries(const std::vector<std::vector<double>>& series,
                              const HistoryOptions& options);

void WriteHistoryTable(const HistoryResult& h, std::ostream& out);
void WriteHistoryMarkdown(const HistoryResult& h, std::ostream& out);
void WriteHistoryJson(const HistoryResult& h, std::ostream& out);
// A self-contained HTML trend page (no scripts, no fetches): the verdict
// and method, then one small plot per group, worst first, of its mean time
// per launch across the runs, with its change points marked (red: slower,
// green: faster), the --window runs shaded and the latest run's point
// drawn larger.
void WriteHistoryHtml(const HistoryResult& h, std::ostream& out);
// JUnit XML: one testcase per group; a regression is a failure, a group
// too short or too noisy to judge is skipped with the reason.
void WriteHistoryJunit(const HistoryResult& h, std::ostream& out);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_HISTORY_H_
