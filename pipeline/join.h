// Joins one ended session's records by correlation id and annotates them:
// kernel + launch (thread, API time, NVTX range, GEMM call) + GEMM shape
// (analytic FLOPs and bytes) or another operation's analytic figures +
// counters (hardware FLOPs and bytes) + raw metrics, NVTX paths, kernel
// names (demangled, family), the roof model, and forward steps with their
// phase. Records that match nothing are kept and counted
// (unmatched_<kind> in the session's import statistics).
//
// Pure function of the session and the roofs; the result points into the
// session, which must outlive it. Thread-compatible.
//
// The trap: a GEMM call (or an operation) may launch several kernels
// (split-K reductions); its analytic FLOPs and bytes go to the longest of
// them only, so a run's FLOPs are never counted twice.
#ifndef ROOFTRACE_PIPELINE_JOIN_H_
#define ROOFTRACE_PIPELINE_JOIN_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "pipeline/flat_index.h"
#include "pipeline/phases.h"
#include "model/roof_model.h"
#include "pipeline/session.h"

namespace rooftrace {

struct NameInfo {
  std::string name;       // mangled, as reported
  std::string demangled;
  std::string family;
  // Kernels of this name with no GEMM call and no op: SignatureFigures
  // passes over a window where no such kernel has a name it learned.
  uint64_t kernels_without_op = 0;
};

// Figures a launch counters mode did not profile takes from the profiled
// launches of its signature before it (pipeline/sampled.h): the mean of
// those `samples` of the signature's `launches` so far, and the label its
// row's sources carry.
struct SampledFigures {
  std::string label;  // 'counters (sampled 3 of 1200, spread 0.4%)'
  uint64_t samples = 0, launches = 0;
  uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  bool has_dram_bytes = false;
  // (max - min) / mean over the samples, the larger of DRAM bytes' and
  // FLOPs'; 0 with one sample.
  double spread = 0;
};

struct JoinedKernel {
  const KernelRecord* kernel = nullptr;
  const LaunchRecord* launch = nullptr;     // nullptr: launch not seen
  const CounterRecord* counters = nullptr;  // nullptr: no counters
  int gemm = -1;                            // index into JoinedSession::gemms
  int op = -1;                              // index into JoinedSession::ops
  // This kernel's raw metrics: JoinedSession::metric_order[metrics_begin,
  // metrics_end) index Session::metrics().
  int metrics_begin = 0, metrics_end = 0;
  int name = -1;                            // index into names
  int nvtx_path = -1;                       // index into paths
  int step = -1;
  // What is known of the kernel. Its annotation is not kept beside it: a
  // row is annotated as it is emitted (JoinedSession::AnnotationOf), which
  // saves a third of this struct per kernel of a whole-run join.
  KernelFacts facts;
  // Set by SignatureFigures (pipeline/inherit.h) when this kernel inherited
  // figures: the shape text they are of, owned by the SignatureFigures.
  const std::string* inherited_shape = nullptr;
  // Set by SampledCounters (pipeline/sampled.h) when this kernel took the
  // counters of its signature's samples; owned by JoinedSession::sampled.
  const SampledFigures* sampled = nullptr;
};

struct JoinedGemm {
  const GemmRecord* gemm = nullptr;
  Precision precision = Precision::kUnknown;
  uint64_t flops = 0;
  uint64_t min_bytes = 0;
  int weight = 0;          // 0 unknown, 1 a, 2 b
  int64_t token_count = -1;
  uint64_t kernel_count = 0;
  int step = -1;
  const std::string* op_name = nullptr;  // GemmRecord::op_name_iid's string
};

struct JoinedOp {
  const OpRecord* op = nullptr;
  std::string name, shape;
  uint64_t kernel_count = 0;
};

struct JoinedMemcpy {
  const MemcpyRecord* memcpy = nullptr;
  const LaunchRecord* launch = nullptr;
  int nvtx_path = -1;
  int step = -1;
};

struct JoinedNvtx {
  const NvtxRecord* range = nullptr;
  std::string name, domain;
  int path = -1;
};

// Working memory of a join, kept in the JoinedSession so that JoinInto()
// on a reused one allocates nothing new (a long session is joined once per
// window).
struct JoinScratch {
  FlatIndex launch_of, gemm_of_call, gemm_of_corr, counters_of;
  FlatIndex op_of_id, op_of_corr, metrics_of, nvtx_of;
  std::vector<char> launch_used, counters_used;
  // Per GEMM call / op: the kernel that carries its analytic figures (the
  // longest of its kernels; see the trap above), -1 when none ran. Valid
  // after the join: SignatureFigures learns shapes from them.
  std::vector<int> gemm_carrier, op_carrier;
  // Links to one node of a graph launch ((correlation id, graph node id)
  // -> index into gemms / ops): only imports of replayed graphs have any.
  std::map<std::pair<uint64_t, uint64_t>, int> gemm_of_node, op_of_node;
  PhaseInput phase_input;
};

struct JoinedSession {
  std::vector<JoinedKernel> kernels;
  // What the kernels are annotated against (JoinInto's arguments, copied:
  // the caller's roofs may be a temporary).
  Roofs roofs;
  AnnotateOptions annotate;
  std::vector<JoinedGemm> gemms;
  std::vector<JoinedOp> ops;
  // Indexes of Session::metrics() grouped by correlation id (kernels point
  // at their range; metrics no kernel claims are left out).
  std::vector<int> metric_order;
  std::vector<JoinedMemcpy> memcpys;
  std::vector<JoinedNvtx> nvtx;
  std::vector<StepInfo> steps;
  std::vector<NameInfo> names;
  std::vector<std::string> paths;  // 'outer/inner'
  bool any_counters = false;
  bool any_analytic = false;
  bool any_inherited = false;  // set by SignatureFigures
  bool any_sampled = false;    // set by SampledCounters
  // What kernels[i].sampled points at (a deque: entries stay put).
  std::deque<SampledFigures> sampled;
  JoinScratch scratch;

  // The annotation of kernel `k` against `roofs`: a pure function of its
  // facts, so the same whenever it is asked for, once the facts are final
  // (after SampledCounters, SignatureFigures and PmSampledBytes).
  Annotation AnnotationOf(const JoinedKernel& k) const {
    return Annotate(k.facts, roofs, annotate);
  }
};

// 'm=8 n=4096 k=4096 batch=1': how a kernel row names its GEMM's shape.
std::string GemmShapeText(const GemmRecord& g);
// The same into `out` (replaced): no allocation once `out` has room, for
// the per-kernel path.
void GemmShapeText(const GemmRecord& g, std::string* out);

// Joins `session` (its import statistics gain the unmatched_* counts).
JoinedSession Join(Session* session, const Roofs& roofs,
                   const AnnotateOptions& annotate = {},
                   const PhaseOptions& phases = {});
// The same into `out`, whose memory is reused (its previous contents go).
// `stop` (may be null; a SIGINT/SIGTERM handler's flag): looked at every
// 64 Ki NVTX ranges (joining 3 M of them takes a second or more); once set
// the join ends early and `out` must not be used: the caller looks at the
// flag after the call.
void JoinInto(Session* session, const Roofs& roofs,
              const AnnotateOptions& annotate, const PhaseOptions& phases,
              JoinedSession* out, const std::atomic<bool>* stop = nullptr);

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_JOIN_H_
