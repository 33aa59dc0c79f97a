// `rooftrace diff`: compares two runs group by group (kernel family and GEMM
// shape by default) and decides whether the candidate regressed: a matched
// group whose mean time per launch rose, or whose fraction of roof fell, by
// more than the threshold, provided both sides have enough launches and
// time to be above noise. Built from two Reports; pure and thread-compatible.
#ifndef ROOFTRACE_ANALYZER_DIFF_H_
#define ROOFTRACE_ANALYZER_DIFF_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/report.h"

namespace rooftrace::analyzer {

struct DiffOptions {
  double threshold_pct = 5.0;   // regression when worse by more than this
  int64_t min_count = 5;        // launches needed on both sides
  double min_time_ms = 0.1;     // total time needed on both sides
};

enum class DiffStatus { kOk, kRegressed, kImproved, kNoisy, kNew, kGone };
const char* DiffStatusName(DiffStatus s);  // "ok", "REGRESSED", ...

struct DiffRow {
  std::string key;     // matching key (family|shape, family or kernel)
  std::string name;    // display name
  std::string shape;
  std::optional<GroupRow> base, cand;
  // Relative changes in percent (candidate vs baseline); unknown when a
  // side lacks the number.
  std::optional<double> mean_time_change_pct;
  std::optional<double> total_time_change_pct;
  std::optional<double> fraction_change_pct;
  std::optional<double> ai_change_pct;
  // Share of the group's time spent in prefill, per side (phase mix).
  std::optional<double> base_prefill_share, cand_prefill_share;
  DiffStatus status = DiffStatus::kOk;
  std::string reason;  // one sentence: why it regressed / is noisy
};

struct PhaseShare {
  std::string phase;
  double base_share = 0;  // of the run's kernel time
  double cand_share = 0;
};

struct DiffResult {
  std::string base_input, cand_input;
  int64_t base_run = 0, cand_run = 0;
  std::string base_device, cand_device;
  bool different_devices = false;
  std::string base_roofs, cand_roofs;
  RunLabels base_labels, cand_labels;  // the runs' --label pairs
  GroupBy match_by = GroupBy::kFamilyShape;
  DiffOptions options;
  int64_t base_total_ns = 0, cand_total_ns = 0;
  std::vector<DiffRow> rows;  // regressions first, then by time moved
  std::vector<PhaseShare> phases;
  int regressions = 0, improvements = 0, noisy = 0, matched = 0;
  int added = 0, removed = 0;
};

DiffResult DiffReports(const Report& base, const Report& cand,
                       const DiffOptions& options);

// Output formats of the diff.
void WriteDiffTable(const DiffResult& d, std::ostream& out);
void WriteDiffMarkdown(const DiffResult& d, std::ostream& out);
void WriteDiffJson(const DiffResult& d, std::ostream& out);
// JUnit XML: one testsuite, one testcase per group; regressions are
// failures, noisy / new / gone groups are skipped with the reason.
void WriteDiffJunit(const DiffResult& d, std::ostream& out);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_DIFF_H_
