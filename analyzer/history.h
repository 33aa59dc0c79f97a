// `rooftrace history`: the runs of a store that carry the asked labels, in
// time order, and per group (family+shape, family, phase or NVTX range) the
// series of mean time per launch and % of roof across them; where each
// series moved (change points, analyzer/changepoint.h) and whether a
// regression landed in the latest runs, with false alarms held across all
// the groups judged at once (Benjamini-Hochberg). docs/history.md.
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
#include "base/status.h"
#include "report/report.h"
#include "store/store_reader.h"

namespace rooftrace::analyzer {

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
  // A group whose runs scatter more than this (coefficient of variation of
  // mean time per launch around its levels) is too noisy to judge: a move
  // of min_magnitude would hide in it.
  double max_noise = 0.10;
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

// One change point of a group's series, in the selected runs' terms.
struct HistoryChange {
  size_t run = 0;  // index into HistoryResult::runs of the first moved run
  int64_t run_id = 0;
  int runs_ago = 0;  // 0: the latest run
  double mean_ns_before = 0, mean_ns_after = 0;
  double magnitude = 0;  // relative change of mean time per launch
  double pvalue = 1;
  bool regression = false;  // slower
  // Time-weighted % of roof (0..1) of the same runs before and after.
  std::optional<double> roof_before, roof_after;
  bool in_window = false;
};

enum class HistoryVerdict { kOk, kRegressed, kTooShort, kTooNoisy };
const char* HistoryVerdictName(HistoryVerdict v);  // "ok", "REGRESSED", ...

struct HistoryGroup {
  std::string key, name, shape;
  // Per selected run (HistoryResult::runs order); unset where the group
  // did not run.
  std::vector<std::optional<double>> mean_ns, fraction_of_roof, time_share;
  int present = 0;  // runs with the group
  double noise = 0;  // coefficient of variation around its levels
  std::vector<HistoryChange> changes;
  double check_pvalue = 1;  // the gate's p-value (stats::RegressionPValue)
  HistoryVerdict verdict = HistoryVerdict::kOk;
  std::string reason;  // one sentence for a verdict other than ok
};

struct HistoryResult {
  std::string input;
  HistoryOptions options;
  std::vector<HistoryRun> runs;  // time order
  std::vector<HistoryGroup> groups;  // regressions first, then by time
  int judged = 0, regressed = 0, too_short = 0, too_noisy = 0;
  // Runs of the window that are not complete (ids).
  std::vector<int64_t> incomplete_in_window;
};

// Reads the runs of `store` matching options.where and builds the history.
// NotFound when no run matches (naming the labels the store has).
StatusOr<HistoryResult> BuildHistory(StoreReader& store,
                                     const std::string& input,
                                     const HistoryOptions& options);

// Judges the groups' series (change points, noise, the gate); pure.
void JudgeHistory(HistoryResult* h);

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
