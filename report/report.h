// The report model of `rooftrace analyze`: a run's kernels grouped by
// kernel, family, phase, NVTX range or step, with roofline numbers per
// group, the phase summary and the header (device, roofs and their source,
// import statistics). Built by streaming kernel rows from the store, so
// memory grows with the number of groups, never with the run length.
//
// Pure data plus one builder; thread-compatible.
#ifndef ROOFTRACE_REPORT_REPORT_H_
#define ROOFTRACE_REPORT_REPORT_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/busy_time.h"
#include "report/roofs.h"
#include "store/store_reader.h"
#include "base/status.h"

namespace rooftrace {

// kOp: the framework operator that launched each kernel (KernelRow::op);
// kCategory: its category (model/ops.h OpCategory).
enum class GroupBy {
  kKernel,
  kFamily,
  kPhase,
  kNvtx,
  kStep,
  kFamilyShape,
  kOp,
  kCategory
};

// "kernel", "family", "phase", "nvtx", "step", "family+shape", "op",
// "category".
const char* GroupByName(GroupBy g);
std::optional<GroupBy> GroupByFromName(std::string_view name);

// Phases in report order; kPhaseNames[i] names index i.
inline constexpr int kNumPhases = 5;
inline constexpr const char* kPhaseNames[kNumPhases] = {
    "prefill", "decode", "mixed", "other", "unknown"};
int PhaseIndex(std::string_view phase);

inline constexpr int kNumBounds = 4;
inline constexpr const char* kBoundNames[kNumBounds] = {"memory", "compute",
                                                         "latency", "unknown"};
int BoundIndex(std::string_view bound);

// One row of the kernel table. Optional numbers are unknown (no kernel of
// the group had them), never 0 pretending to be a measurement.
struct GroupRow {
  std::string key;     // grouping key (family, name, phase, ...)
  std::string name;    // display name
  std::string family;  // family of the group's first kernel
  // The GEMM shape holding most of the group's time (the group's only one
  // under family+shape grouping); empty when no kernel has a shape.
  std::string shape;
  // `shape` in the framework's convention where the kernels' token count
  // tells which cuBLAS dimension is the tokens' ("tokens=32 out=4096
  // in=11008"; cuBLAS's m, n, k are column-major, so a PyTorch linear of
  // 32 tokens, 11008 -> 4096 is m=4096 n=32 k=11008). Empty otherwise.
  std::string framework_shape;
  int64_t shape_count = 0;  // distinct GEMM shapes in the group
  double shape_share = 0;   // `shape`'s share of the group's time, 0..1
  std::string precision;  // dominant precision class key by FLOPs
  int64_t count = 0;
  int64_t total_ns = 0;
  double mean_ns = 0;
  // The spread of the group's kernel times: median (of an even count, the
  // mean of the middle two), extremes, population standard deviation.
  double median_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double stddev_ns = 0;
  double time_share = 0;  // of the run's kernel time, 0..1
  std::optional<double> flops;
  std::optional<double> bytes;
  std::optional<double> ai;  // FLOPs / bytes over kernels with both known
  std::optional<double> achieved_flops_per_s;
  std::optional<double> achieved_bytes_per_s;
  // Time-weighted mean of the kernels' fraction of roof (0..1+).
  std::optional<double> fraction_of_roof;
  std::string bound;   // bound holding most of the group's time
  std::string phase;   // phase holding most of the group's time
  double phase_share = 0;  // that phase's share of the group's time
  std::array<int64_t, kNumPhases> phase_time_ns{};
  // The group's kernels' sources, '+'-joined in the order counters,
  // sampled, analytic, inherited ('counters+sampled': some kernels measured,
  // the others given their signature's samples; 'analytic+inherited');
  // 'none' when no kernel has one.
  std::string flops_source;
  std::string bytes_source;
  // Kernels of the group computed above 100% of their roof (compute or
  // DRAM) and their time: the analytic model gave more FLOPs or bytes than
  // the GPU can do in the kernel's time, so its figures are suspect
  // (AboveRoofNote). Counted, never hidden: their fraction stays in
  // fraction_of_roof.
  int64_t above_roof_count = 0;
  int64_t above_roof_ns = 0;
  // Kernels of the group without figures of their own whose operator (or
  // GEMM call) is costed on another of its kernels (an operator of several
  // kernels whose split is not known: the routing kernels of an MoE layer,
  // a split-K GEMM's second kernel), and that operator (the first seen).
  int64_t in_op_count = 0;
  std::string in_op;
};

// Whether a kernel's fraction of its roof is above 100%: no kernel can run
// faster than its roof, so its modelled FLOPs or bytes are wrong.
inline bool AboveRoof(const std::optional<double>& fraction_of_roof) {
  return fraction_of_roof && *fraction_of_roof > 1.0;
}

// "model exceeds roof: figures suspect" for a group whose every kernel is
// above its roof, with "(k of n kernels)" when only some are; empty when
// none is.
std::string AboveRoofNote(const GroupRow& g);
// The note column of a group: AboveRoofNote, and "in op X" (with "k of n
// kernels" when only some are) for kernels whose figures their operator X
// carries on another of its kernels; empty when neither.
std::string GroupNote(const GroupRow& g);
// Whether kernel row `k` is such a kernel: no FLOPs or bytes of its own,
// but an operator and the shape its figures were computed from (a kernel
// row gets both only from a costed GEMM call or operator), and no
// collective (whose figures are its message, not FLOPs or bytes).
bool InCostedOp(const KernelRow& k, bool collective);

// The group's shape for a person: the dominant one alone when it is the
// only one, else with its share and the count:
// "m=4096 n=4096 k=4096 batch=1 (62%, 9 shapes)"; empty without a shape.
std::string ShapeLabel(const GroupRow& g);

struct PhaseRow {
  std::string phase;
  int64_t steps = 0;  // forward steps labelled with this phase
  int64_t count = 0;  // kernels
  int64_t time_ns = 0;
  double share = 0;
  std::optional<double> flops;
  std::optional<double> ai;
  std::optional<double> fraction_of_roof;
  std::optional<double> achieved_flops_per_s;
};

// The collective (NCCL) kernels of one kind of call: those whose shape,
// as the source wrote it, is the same ("all_reduce bf16 bytes=8388608
// ranks=8"; pipeline/records.h kCollective* metrics carry the figures),
// with their bandwidths over their summed time. Unknown stays unknown: a
// kernel named nccl* without a message size is counted under an empty
// shape, with no bandwidth.
struct CollectiveRow {
  std::string shape;  // empty: no message size in the trace
  int64_t count = 0;
  int64_t total_ns = 0;
  std::optional<double> message_bytes;  // per kernel, mean
  // Summed message bytes over summed time (bytes/s); the bus bandwidth
  // with each kernel's bus factor (model/ops.h), unknown when a kernel of
  // the row has no group size.
  std::optional<double> algbw;
  std::optional<double> busbw;
  // The bus bandwidth as a fraction of the link roof (RoofTable's
  // link_bytes_per_s): the collective's place on the link roofline, bound
  // "link". Unknown without a bus bandwidth or a link roof.
  std::optional<double> fraction_of_link;
};

// One collective kernel as it ran, for comparing ranks (job_report.h).
// `key` names the call: the shape a source gave it ("all_reduce bf16
// bytes=8388608 ranks=8"), else the kernel's family.
struct CollectiveCall {
  std::string key;
  int64_t start_ns = 0, end_ns = 0;
};

// FrameworkGemmShape("m=4096 n=32 k=11008 batch=1", 32) is "tokens=32
// out=4096 in=11008" (batch=B prefixed when B > 1); empty when the text is
// not a GEMM's or `tokens` is neither m nor n.
std::string FrameworkGemmShape(std::string_view cublas_shape, int64_t tokens);

struct ReportHeader {
  // Who prints it: the first line of the text report says
  // "<title>: <input> (<kind>), run N".
  std::string title = "rooftrace analyze";
  std::string input;       // the path the user gave
  std::string input_kind;  // 'store' | 'trace'
  std::string ingest_warning;
  // The trace broke before its end (ingest_warning says where): the
  // report holds what came before, and `analyze` exits 3.
  bool input_cut_short = false;
  RunRow run;
  std::string device_name;
  RoofTable roofs;
  bool reannotated = false;  // roofs and bounds recomputed by the analyzer
  // Non-empty when --device-profile describes another GPU than the run's
  // (RoofDeviceMismatch): shown in every header and warned on stderr.
  std::string device_mismatch;
  std::vector<std::pair<std::string, int64_t>> import_stats;
  int64_t dropped = 0;    // sum of producer_dropped_*
  int64_t unmatched = 0;  // sum of unmatched_*
  // The distributed rank the input says it is (SourceResult::rank).
  std::optional<int64_t> rank;
};

// Kernels by duration: how much of the GPU's time goes to kernels so short
// that launch overhead, not the roof, sets their pace (a kernel of a few
// microseconds cannot reach a roof: its ramp-up and tail are most of it).
// Bucket i holds kernels with duration in [kDurationBucketNs[i],
// kDurationBucketNs[i + 1]) ns, the last one everything from 1 ms up.
inline constexpr int kNumDurationBuckets = 7;
inline constexpr int64_t kDurationBucketNs[kNumDurationBuckets] = {
    0, 2'000, 5'000, 10'000, 50'000, 100'000, 1'000'000};
struct DurationBucket {
  int64_t kernels = 0;
  int64_t time_ns = 0;
};

struct Report {
  ReportHeader header;
  GroupBy group_by = GroupBy::kFamily;
  std::vector<GroupRow> groups;    // by total time, descending; top N
  int64_t groups_omitted = 0;      // groups past --top
  int64_t omitted_ns = 0;
  // Every (family, phase) pair, for the roofline plot: name "family (phase)",
  // key the family. A family's kernels above their roof are a point of their
  // own, "family (phase, above roof)", whose above_roof_count is its count.
  std::vector<GroupRow> families;
  std::vector<PhaseRow> phases;    // phases with kernels, in kPhaseNames order
  int64_t kernel_count = 0;
  int64_t total_ns = 0;
  int64_t kernels_with_flops = 0;
  int64_t kernels_with_bytes = 0;
  // GPU time of the kernels with FLOPs or bytes (whatever their source):
  // the share of the run that can be placed on the roofline.
  int64_t ns_with_figures = 0;
  // GPU time of the collective kernels whose message size is known (off the
  // roofline, on their bus bandwidth): with ns_with_figures, the share of
  // the run that is accounted for.
  int64_t ns_comm_with_message = 0;
  // GPU time of the kernels without figures whose operator is costed on
  // another of its kernels (InCostedOp): with ns_with_figures, the share
  // of the run whose operators are on the roofline (FiguresShare).
  int64_t ns_in_costed_op = 0;
  // Of those, the GPU time of the collectives placed on the link roof (a
  // bus bandwidth and a link roof known): counted as on the roofline.
  int64_t ns_comm_on_link_roof = 0;
  // Kernels computed above 100% of their roof (AboveRoof) and their GPU
  // time: findings, shown in the header and in their rows, and drawn apart
  // on the roofline (report.families holds them as their own points).
  int64_t kernels_above_roof = 0;
  int64_t ns_above_roof = 0;
  // Per device: wall span of its kernels, busy (kernels and copies) and
  // idle time (busy_time.h).
  std::vector<DeviceBusy> busy;
  // Collective kernels by kind of call, by total time, descending.
  std::vector<CollectiveRow> collectives;
  // Every collective kernel in start order (job_report.h compares ranks).
  std::vector<CollectiveCall> collective_calls;
  // Every kernel by its duration (kDurationBucketNs).
  std::array<DurationBucket, kNumDurationBuckets> durations{};
};

struct ReportOptions {
  std::optional<int64_t> run_id;
  GroupBy group_by = GroupBy::kFamily;
  size_t top = 0;  // 0: all groups
  bool with_families = true;
  // When set, every kernel's roof, fraction and bound are recomputed with
  // these roofs instead of the stored annotation.
  std::optional<RoofTable> reannotate;
};

// Aggregates kernel rows into a Report as they come: from a store scan
// (BuildReport) or from a trace joined in memory (analyzer/trace_report.h).
// Not thread-safe.
class ReportBuilder {
 public:
  explicit ReportBuilder(const ReportOptions& options);
  ~ReportBuilder();
  ReportBuilder(const ReportBuilder&) = delete;
  ReportBuilder& operator=(const ReportBuilder&) = delete;

  ReportHeader& header() { return report_.header; }
  // The options in force: --device-profile's roofs as scaled by
  // SetMeasuredSmClock.
  const ReportOptions& options() const { return options_; }
  // The SM clock (kHz) the run's kernels were measured at (0: not
  // measured). With --device-profile, its compute roofs are scaled to it, as
  // the import scaled the roofs it stored. Call before the first Add; only
  // the first nonzero clock counts.
  void SetMeasuredSmClock(int64_t khz);
  // One kernel; the view's strings are used during the call only.
  void Add(const KernelRow& k);
  // A stored group of launches (kernel_aggregates, store schema 8) at
  // once: the groups' and phases' sums as if each launch had been added.
  // Not kept from it: the busy timeline, collectives, the duration
  // histogram and each group's time spread (they need every launch).
  void AddAggregate(const KernelAggregateRow& a);
  // One raw metric of a kernel: the collective figures (kCollective*) are
  // kept for the kernel they name, whichever of it and its metrics comes
  // first; others are ignored.
  void AddKernelMetric(const KernelMetricRow& m);
  // Whether a kernel added so far looks like a collective (named nccl*, or
  // with a collective's shape): a store reader then reads the metrics.
  bool HasCollectiveKernels() const;
  // One forward step of `phase` (counted per phase for the phase table).
  void AddStep(std::string_view phase);
  // One copy or memset: busy time of its device (Report::busy).
  void AddCopy(const MemcpyRow& m);
  // The rows given so far form complete batches (a trace's windows): the
  // busy timeline may fold their intervals now (busy_time.h EndBatch).
  void EndBatch();
  // Groups, sorts and cuts to --top. An empty run is an InvalidArgument
  // naming `display_name`.
  StatusOr<Report> Finish(const std::string& display_name);

 private:
  std::vector<CollectiveRow> FinishCollectives();
  // Add() of a kernel or, with `a`, AddAggregate() of its group.
  void AddOne(const KernelRow& k, const KernelAggregateRow* a);
  // Into its group, family point and phase; `kernel_class` is report.cc's
  // KernelClass of `k`.
  void AddToGroups(const KernelRow& k, const void* kernel_class,
                   const KernelAggregateRow* a);

  struct State;
  ReportOptions options_;
  bool clock_set_ = false;
  Report report_;
  std::unique_ptr<State> state_;
};

// The header from what a run recorded (roofs replaced by --device-profile's
// when options.reannotate is set).
void FillReportHeader(const RunRow& run, std::string device_name,
                      const std::vector<RoofRow>& roof_rows,
                      std::vector<std::pair<std::string, int64_t>> import_stats,
                      const ReportOptions& options, ReportHeader* header);

// Streams the run's kernels and builds the report. Errors: run not found,
// empty run (InvalidArgument naming the input), store read errors.
StatusOr<Report> BuildReport(StoreReader& store, const ReportOptions& options);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_REPORT_H_
