#include "sources/kineto/kineto_reader.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/ops.h"
#include "pipeline/flat_index.h"
#include "proto/field_numbers.h"
#include "sources/counter_match.h"
#include "sources/file_reader.h"
#include "sources/kineto/kineto_trace.h"
#include "sources/kineto/op_shapes.h"

namespace rooftrace::kineto {
namespace {

namespace en = wire::enums;

// Correlation ids given to GPU events that carry none: above CUPTI's.
constexpr uint64_t kSyntheticCorrelation = uint64_t{1} << 62;

// CUDA-core floating-point instructions of the CUPTI range profiler
// (smsp__sass_thread_inst_executed_op_<op>_pred_on.sum), counted per thread
// with all predicates true, and the FLOPs of one: an FMA is two; half
// precision counts 1/1/2 as Nsight Compute's roofline does (the same table
// as libinject/counters/metric_tables.cc, which sources may not include).
struct SassOp {
  std::string_view op;
  Precision precision;
  uint64_t flops;
};
constexpr SassOp kSassOps[] = {
    {"dadd", Precision::kFp64, 1}, {"dmul", Precision::kFp64, 1},
    {"dfma", Precision::kFp64, 2}, {"fadd", Precision::kFp32, 1},
    {"fmul", Precision::kFp32, 1}, {"ffma", Precision::kFp32, 2},
    {"hadd", Precision::kFp16, 1}, {"hmul", Precision::kFp16, 1},
    {"hfma", Precision::kFp16, 2},
};

// The FLOPs of one range profiler counter; false for other counters.
bool SassFlops(std::string_view name, double value, CounterRecord* c) {
  constexpr std::string_view kPrefix = "smsp__sass_thread_inst_executed_op_";
  constexpr std::string_view kSuffix = "_pred_on.sum";
  if (name.size() <= kPrefix.size() + kSuffix.size() ||
      name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  const std::string_view op = name.substr(
      kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  for (const SassOp& s : kSassOps) {
    if (s.op != op) continue;
    const uint64_t n = value > 0 ? static_cast<uint64_t>(value + 0.5) : 0;
    c->flops[static_cast<int>(s.precision)] += n * s.flops;
    c->has_flops = true;
    return true;
  }
  return false;
}

// DRAM bytes of one range profiler counter; false for other counters.
bool DramBytes(std::string_view name, double value, CounterRecord* c) {
  const uint64_t n = value > 0 ? static_cast<uint64_t>(value + 0.5) : 0;
  if (name == "dram__bytes_read.sum") {
    c->dram_read_bytes = n;
  } else if (name == "dram__bytes_write.sum") {
    c->dram_write_bytes = n;
  } else {
    return false;
  }
  return true;
}

// "bf16" for the shape text, else the dtype as PyTorch wrote it.
std::string_view ShortDtype(std::string_view dtype) {
  if (dtype.empty()) return "?";
  const TorchDtype* t = FindTorchDtype(dtype);
  return t ? t->short_name : dtype;
}

std::string JoinIds(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

// One host process of the trace and the session it becomes.
struct ProcessState {
  int64_t pid = -1;
  bool selected = true;
  uint64_t launches = 0;
  std::unique_ptr<Session> session;
  std::unordered_map<std::string_view, uint64_t> iids;
  std::set<uint32_t> devices;
};

// The collective a kernel runs, as CommArgs gives it (owning its strings:
// a capture's outlive its trace).
struct CollectiveArgs {
  int32_t comm = -1;  // index into KinetoTrace::comms (-1: outside NCCL)
  std::string collective, dtype;
  int64_t in_elements = -1, out_elements = -1, group_size = -1;
};

// One kernel a graph capture launched, with what its operator gave: a
// GEMM call or an operator's figures (ids and host times are those of the
// capture; a replay copies them under its own).
struct CapturedKernel {
  std::string kernel;
  std::optional<GemmRecord> gemm;
  std::optional<OpRecord> op;
  // A serving attention call, costed with the step of each replay (its
  // KV lengths are the replay's, not the capture's).
  std::optional<ServingAttentionArgs> attention;
  // Its layer: how many attention calls the graph made before it (a
  // full-graph step replays every layer in order); the window --model
  // gives that layer caps its KV read.
  int64_t attention_layer = 0;
  // A collective (an all-reduce outside NCCL, or NCCL's with its args):
  // each replay gets its message, group and bandwidths.
  std::optional<CollectiveArgs> collective;
  std::string op_name, op_shape;
  // The captured call or operator (unique in its capture): the kernels of
  // one replay that share it share one replayed record, so that an
  // operator of two kernels is counted once.
  uint64_t op_key = 0;
};
// The kernels of one captured graph in launch order.
using CapturedGraph = std::vector<CapturedKernel>;

// MoE layers left without figures (--model): no model given, a model
// whose sizes do not fit, a tensor-parallel degree that cannot be told.
struct MoeGaps {
  uint64_t no_model = 0, unfit = 0, no_parallel = 0;
  MoeGaps& operator+=(const MoeGaps& o) {
    no_model += o.no_model;
    unfit += o.unfit;
    no_parallel += o.no_parallel;
    return *this;
  }
};

// An open range or operator (GEMM or modelled) on the thread being swept.
struct Open {
  int host = -1;
  bool in_linear = false;
};

}  // namespace

namespace {

// Turns a parsed trace into sessions: processes first (and the filters),
// then the host events swept per thread (ranges, GEMM operators, launches),
// then the GPU events, each in the session of its launch.
class Assembler {
 public:
  Assembler(const KinetoTrace& trace, const std::string& path,
            const SourceOptions& options)
      : t_(trace), path_(path), options_(options) {}

  Status Check();
  void Build();
  // A capture trace (import --capture): Build() without Check()'s
  // requirement of kernels (a capture runs few or none), then the graphs
  // captured, per thread in capture order.
  void BuildCapture();
  std::vector<CapturedGraph> CapturedGraphs() const;
  // Gives the kernels of each graph launch the operators of the captured
  // graph whose kernels they are (same names in the same order, else the
  // same names: the n-th kernel of a name is the n-th captured). After
  // Build().
  void ApplyCaptures(const std::vector<CapturedGraph>& graphs);
  // What a capture trace's MoE layers lacked (--model), for Warning().
  const MoeGaps& moe_gaps() const { return moe_gaps_; }
  void AddMoeGaps(const MoeGaps& gaps) { moe_gaps_ += gaps; }
  // import --counters: matches the counter file's samples to the kernels
  // (counter_match.h) and adds them to their sessions. After Build().
  Status AttachCounters(RunRecorder* recorder);
  Status Hand(RunRecorder* recorder, SourceResult* result);
  // The selected processes' sessions as Build() left them (not started,
  // not handed to a recorder), for AssembleKinetoText.
  std::vector<std::unique_ptr<Session>> TakeSessions();
  std::string warning() const { return Warning(); }
  // Frees what only Build(), ApplyCaptures() and AttachCounters() use, so
  // that it is not held beside the join Hand() sets off.
  void ReleaseScratch();

 private:
  void MakeProcesses();
  void ReserveRecords();
  ProcessState* ProcessOf(int64_t pid);
  void SweepHost();
  void OnHostEvent(int h, std::vector<Open>* ranges, std::vector<Open>* ops);
  uint64_t CallOf(int h, bool in_linear);
  uint64_t OpOf(int h);
  void LinkLaunch(const std::vector<Open>& ops, Session& s, LaunchRecord* l,
                  int launch, const ServingStep* step);
  const ServingStep* StepOf(const std::vector<Open>& ranges);
  uint64_t AddOpRecord(int h, OpFigures f, uint64_t op_id);
  uint64_t ServingAttentionOf(int h, const ServingStep* step);
  void NoteAttentionOutput(Session& s, uint64_t op_id, uint64_t bytes);
  uint64_t SplitAttentionReduce(Session& s, uint64_t main_id,
                                uint64_t reduce_id);
  // The sliding window of the model's layer `layer` (--model); 0 without
  // a model or for a full-attention layer.
  int64_t WindowOfLayer(int64_t layer) const {
    return options_.model ? options_.model->AttentionWindow(layer) : 0;
  }
  uint64_t MoeOf(int h, std::string_view kernel);
  uint64_t MoeRoutingOf(int h);
  int64_t TensorParallel();
  std::optional<ServingAttentionArgs> AttentionArgsOf(const HostEvent& e) const;
  int KvCacheBytes() const;
  uint64_t CatOf(int h, int launch);
  std::string_view KernelOfLaunch(int launch);
  void AddGpuEvents();
  std::vector<uint64_t> RangeCorrelations() const;
  std::vector<uint64_t> FlowCorrelations() const;
  void AddGpuEvent(const GpuEvent& g, uint64_t corr);
  void AddRangeCounters(ProcessState& p, const GpuEvent& g, uint64_t corr);
  void AddCollective(ProcessState& p, const GpuEvent& g, int launch,
                     uint64_t corr);
  std::optional<CollectiveArgs> CollectiveOf(const GpuEvent* g,
                                             int launch) const;
  void EmitCollective(ProcessState& p, const CollectiveArgs& a,
                      std::string_view kernel, uint64_t start_ns,
                      uint64_t end_ns, uint64_t corr, uint64_t node,
                      uint64_t op_id);
  void AddDevices();
  const DeviceProps* PropsOf(uint32_t id) const;
  uint64_t Iid(ProcessState& p, std::string_view s);
  std::string Warning() const;

  const KinetoTrace& t_;
  const std::string& path_;
  const SourceOptions& options_;
  std::vector<ProcessState> processes_;
  int main_ = 0;  // the process of GPU events without a launch
  FlatIndex launch_of_corr_, op_of_external_, comm_of_external_;
  // GEMM call id, or OpRecord op_id, per host event (0: none).
  std::vector<uint64_t> call_of_host_;
  std::vector<char> call_tried_;
  // Built by BuildCapture(): link_of_launch_ and attention_of_launch_ are
  // filled (for CapturedGraphs()); Build() alone leaves them empty.
  bool capture_ = false;
  // Per kernel launch (host event): the GEMM call id and the op id its
  // operator gave (0: none), for CapturedGraphs().
  std::vector<std::pair<uint64_t, uint64_t>> link_of_launch_;
  // Graph launches given their captured operators, and not; kernels that
  // took an operator or a GEMM call from a capture.
  uint64_t graphs_mapped_ = 0, graphs_unmapped_ = 0, graph_kernels_ = 0;
  uint64_t next_replay_id_ = 0;  // ids of replayed calls and ops
  std::deque<std::string> shapes_;  // op shape texts the iids point into
  // Every kernel in the order the counter match needs (--counters only).
  struct TimelineEntry {
    size_t process;       // index into processes_
    uint64_t correlation;
    uint64_t order;       // its launch call's start, else its own
    uint64_t start;
    std::string_view name;
  };
  std::vector<TimelineEntry> timeline_;
  std::string counter_note_;  // the match's summary when samples missed
  uint64_t kernels_ = 0, unlaunched_ = 0, uncorrelated_ = 0;
  uint64_t ranges_ = 0, range_mismatch_ = 0, unshaped_gemms_ = 0;
  // NCCL kernels without a message size; with one but no group size.
  uint64_t comm_unsized_ = 0, comm_ungrouped_ = 0;
  // Serving steps (pipeline/serving_step.h): per annotation, 0 not yet
  // read, 1 a step (in steps_), 2 not a step.
  std::vector<int8_t> step_state_;
  std::unordered_map<int, ServingStep> steps_;
  // Graph launches inside a step, by correlation id (into steps_, whose
  // nodes do not move).
  std::unordered_map<uint64_t, const ServingStep*> step_of_graph_launch_;
  // Per kernel launch: the serving attention operator around it that had
  // no step to cost it with (-1: none), for CapturedGraphs().
  std::vector<int32_t> attention_of_launch_;
  // Per kernel launch: the all-reduce operator outside NCCL around it
  // (AllReduceMessageInput), whose tensor is the message; -1: none.
  std::vector<int32_t> allreduce_of_launch_;
  uint64_t outside_collectives_ = 0;  // their op ids
  // MoE operators: grouped-GEMM kernels linked so far (the first is the up
  // projection, the second the down one).
  std::unordered_map<int, int> moe_gemms_linked_;
  // Serving attention calls without a step's aggregates; MoE layers
  // without --model, or whose sizes do not fit it.
  uint64_t attention_unstepped_ = 0;
  // Serving attention calls seen so far under each step annotation: the
  // next call's layer (a step runs the model's layers in order).
  std::unordered_map<const ServingStep*, int64_t> attention_calls_of_step_;
  MoeGaps moe_gaps_;
  int64_t tensor_parallel_ = -1;  // TensorParallel(); -1: not yet
  // The element size of the run's KV cache, from its cache writes (0: none,
  // or writes that disagree), for serving attention calls whose key input
  // is the new tokens' and not the cache; made on first need (KvCacheBytes),
  // so that a trace without such calls pays nothing.
  mutable std::optional<int> kv_cache_bytes_;
  // Serving attention records by op id: where each is in its session's
  // ops, the output bytes a split-KV reduce kernel of the call writes, and
  // the record made for that kernel (0: none yet). SplitAttentionReduce's.
  struct AttentionOutput {
    size_t index = 0;
    uint64_t bytes = 0;
    uint64_t reduce_id = 0;
  };
  std::unordered_map<uint64_t, AttentionOutput> attention_output_;
  // MoE operators' routing records by host index (0: none).
  std::unordered_map<int, uint64_t> moe_routing_of_;
  // Kernel names by correlation id, made on first need (CatOf).
  std::unordered_map<uint64_t, std::string_view> kernel_of_corr_;
  bool kernel_of_corr_made_ = false;
};

// Op and call ids. A host event's own is its index + 1; the records one
// host event gives more than one of, and those of no host event, live in
// ranges of their own above every host index, each named here:
// - an MoE operator's down projection, finalize and routing: its own id
//   with kMoeDownBit, kMoeFinalizeBit or kMoeRoutingBit set;
// - a serving attention call's split-KV reduce kernel: its own id with
//   kAttentionReduceBit (a replayed call's: a replay id, as its own);
// - a captured serving attention call's key (CapturedKernel::op_key):
//   kCapturedAttentionBit with its host index + 1;
// - a collective kernel's OpRecord: kCollectiveOps + its CommArgs index,
//   or kOutsideCollectiveOps + n for an all-reduce outside NCCL.
constexpr uint64_t kMoeDownBit = uint64_t{1} << 62;
constexpr uint64_t kCapturedAttentionBit = uint64_t{1} << 61;
constexpr uint64_t kMoeFinalizeBit = uint64_t{1} << 60;
constexpr uint64_t kMoeRoutingBit = uint64_t{1} << 59;
constexpr uint64_t kAttentionReduceBit = uint64_t{1} << 58;
constexpr uint64_t kOutsideCollectiveOps = uint64_t{1} << 41;
constexpr uint64_t kCollectiveOps = uint64_t{1} << 40;

Status Assembler::Check() {
  uint64_t kernels = 0;
  for (const GpuEvent& g : t_.gpu) {
    kernels += g.kind == GpuEvent::Kind::kKernel ||
               g.kind == GpuEvent::Kind::kProfilerRange;
  }
  if (kernels == 0) {
    return InvalidArgument(
        "no GPU kernels in " + path_ +
        ": was the profiler run with CUDA activities? (torch.profiler."
        "profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]))");
  }
  MakeProcesses();
  std::vector<int64_t> pids;
  for (const ProcessState& p : processes_) pids.push_back(p.pid);
  if (options_.rank) {
    if (!t_.rank) {
      return InvalidArgument(
          path_ + ": --rank " + std::to_string(*options_.rank) +
          ": the trace names no rank (no distributedInfo); choose a process "
          "with --pid (processes: " + JoinIds(pids) + ")");
    }
    if (*t_.rank != *options_.rank) {
      return InvalidArgument(path_ + ": the trace is rank " +
                             std::to_string(*t_.rank) + " (distributedInfo), "
                             "not --rank " + std::to_string(*options_.rank));
    }
  }
  if (options_.pid) {
    if (std::find(pids.begin(), pids.end(), *options_.pid) == pids.end()) {
      return InvalidArgument(path_ + ": no process " +
                             std::to_string(*options_.pid) +
                             " in the trace; its processes: " + JoinIds(pids));
    }
    for (ProcessState& p : processes_) p.selected = p.pid == *options_.pid;
  }
  return OkStatus();
}

void Assembler::MakeProcesses() {
  std::vector<int64_t> pids;
  for (const HostEvent& h : t_.host) pids.push_back(h.pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  // A trace of GPU events alone: one session, named by the GPU rows' pid.
  if (pids.empty()) pids.push_back(t_.gpu.empty() ? 0 : t_.gpu[0].pid);
  processes_.resize(pids.size());
  for (size_t i = 0; i < pids.size(); ++i) {
    ProcessState& p = processes_[i];
    p.pid = pids[i];
    p.session = std::make_unique<Session>(path_ + ":pid " +
                                          std::to_string(p.pid));
  }
  for (const HostEvent& h : t_.host) {
    if (h.kind == HostEvent::Kind::kLaunch) ++ProcessOf(h.pid)->launches;
  }
  for (size_t i = 0; i < processes_.size(); ++i) {
    if (processes_[i].launches > processes_[main_].launches) {
      main_ = static_cast<int>(i);
    }
  }
}

// Room for each session's launches and kernels from the start: a vector
// grown by doubling holds old and new copies at once and up to half of it
// unused. Room a process does not fill costs address space, not memory.
void Assembler::ReserveRecords() {
  size_t kernels = 0;
  for (const GpuEvent& g : t_.gpu) {
    kernels += g.kind == GpuEvent::Kind::kKernel;
  }
  for (size_t i = 0; i < processes_.size(); ++i) {
    ProcessState& p = processes_[i];
    if (!p.selected) continue;
    p.session->records().launches.reserve(p.launches);
    p.session->records().kernels.reserve(
        static_cast<int>(i) == main_
            ? kernels
            : std::min<size_t>(kernels, p.launches));
  }
}

void Assembler::ReleaseScratch() {
  auto drop = [](auto& v) { std::decay_t<decltype(v)>().swap(v); };
  drop(call_of_host_);
  drop(call_tried_);
  drop(link_of_launch_);
  drop(step_state_);
  drop(attention_of_launch_);
  drop(allreduce_of_launch_);
  drop(timeline_);
  drop(kernel_of_corr_);
  drop(step_of_graph_launch_);
  drop(steps_);
  drop(moe_gemms_linked_);
  launch_of_corr_ = FlatIndex();
  op_of_external_ = FlatIndex();
  comm_of_external_ = FlatIndex();
}

ProcessState* Assembler::ProcessOf(int64_t pid) {
  auto it = std::lower_bound(
      processes_.begin(), processes_.end(), pid,
      [](const ProcessState& p, int64_t v) { return p.pid < v; });
  return it != processes_.end() && it->pid == pid ? &*it : nullptr;
}

uint64_t Assembler::Iid(ProcessState& p, std::string_view s) {
  auto [it, inserted] = p.iids.try_emplace(s, p.iids.size() + 1);
  if (inserted) p.session->SetString(it->second, s);
  return it->second;
}

}  // namespace

namespace {

void Assembler::Build() {
  call_of_host_.assign(t_.host.size(), 0);
  call_tried_.assign(t_.host.size(), 0);
  step_state_.assign(t_.host.size(), 0);
  allreduce_of_launch_.assign(t_.host.size(), -1);
  // Only a capture trace's graphs (CapturedGraphs) read what each launch's
  // operator gave it: a trace read for its sessions does without these 20
  // bytes a host event, held at the import's peak beside every event and
  // record.
  if (capture_) {
    link_of_launch_.assign(t_.host.size(), {0, 0});
    attention_of_launch_.assign(t_.host.size(), -1);
  }
  // Each index sized for what it will hold (its slots: 24 to 48 bytes an
  // id), not for every host event.
  size_t launches = 0, ops = 0;
  for (const HostEvent& h : t_.host) {
    launches += h.kind == HostEvent::Kind::kLaunch && h.has_correlation;
    ops += (h.kind == HostEvent::Kind::kGemmOp ||
            h.kind == HostEvent::Kind::kModelledOp) &&
           h.external_id >= 0;
  }
  launch_of_corr_.Reset(launches);
  op_of_external_.Reset(ops);
  for (size_t i = 0; i < t_.host.size(); ++i) {
    const HostEvent& h = t_.host[i];
    if (h.kind == HostEvent::Kind::kLaunch && h.has_correlation) {
      launch_of_corr_.Emplace(h.correlation, static_cast<int32_t>(i));
    } else if ((h.kind == HostEvent::Kind::kGemmOp ||
                h.kind == HostEvent::Kind::kModelledOp) &&
               h.external_id >= 0) {
      op_of_external_.Emplace(static_cast<uint64_t>(h.external_id),
                                   static_cast<int32_t>(i));
    }
  }
  comm_of_external_.Reset(t_.comm_ops.size());
  for (const CommOp& c : t_.comm_ops) {
    comm_of_external_.Emplace(static_cast<uint64_t>(c.external_id), c.comm);
  }
  ReserveRecords();
  SweepHost();
  // Read by StepOf() during the sweep only.
  std::vector<int8_t>().swap(step_state_);
  AddGpuEvents();
  AddDevices();
}

// Host events per thread in time order, enclosing ones first, so that two
// stacks (annotations, GEMM operators) hold what is open at each launch.
void Assembler::SweepHost() {
  std::vector<int> order(t_.host.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const HostEvent& x = t_.host[a];
    const HostEvent& y = t_.host[b];
    const bool xl = x.kind == HostEvent::Kind::kLaunch;
    const bool yl = y.kind == HostEvent::Kind::kLaunch;
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.tid != y.tid) return x.tid < y.tid;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (xl != yl) return yl;  // at one time, what encloses comes first
    if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
    return a < b;
  });
  std::vector<Open> ranges, ops;
  for (size_t i = 0; i < order.size(); ++i) {
    const HostEvent& e = t_.host[order[i]];
    if (i == 0 || e.pid != t_.host[order[i - 1]].pid ||
        e.tid != t_.host[order[i - 1]].tid) {
      ranges.clear();
      ops.clear();
    }
    OnHostEvent(order[i], &ranges, &ops);
  }
}

void Assembler::OnHostEvent(int h, std::vector<Open>* ranges,
                            std::vector<Open>* ops) {
  const HostEvent& e = t_.host[h];
  ProcessState& p = *ProcessOf(e.pid);
  if (!p.selected) return;
  // Half-open [start, end): a range ending as the next begins is closed.
  for (std::vector<Open>* open : {ranges, ops}) {
    while (!open->empty() && t_.host[open->back().host].end_ns <= e.start_ns) {
      open->pop_back();
    }
  }
  Session& s = *p.session;
  const auto tid = static_cast<uint32_t>(e.tid);
  switch (e.kind) {
    case HostEvent::Kind::kAnnotation: {
      NvtxRecord r;
      r.range_id = static_cast<uint64_t>(h) + 1;
      r.parent_range_id = ranges->empty() ? 0 : ranges->back().host + 1;
      r.name_iid = Iid(p, e.name);
      r.start_ns = e.start_ns;
      r.end_ns = e.end_ns;
      r.thread_id = r.end_thread_id = tid;
      r.depth = static_cast<uint32_t>(ranges->size());
      r.kind = en::kRangePushPop;
      s.records().nvtx.push_back(r);
      ++s.stats().received[en::kRecordNvtxRange];
      ranges->push_back({h, false});
      break;
    }
    case HostEvent::Kind::kGemmOp:
    case HostEvent::Kind::kModelledOp: {
      // Inside a linear (however deep), the GEMM's second input is the
      // weight.
      const bool in_linear =
          !ops->empty() && (ops->back().in_linear ||
                            t_.host[ops->back().host].name == "aten::linear");
      ops->push_back({h, in_linear});
      break;
    }
    case HostEvent::Kind::kLaunch: {
      LaunchRecord l;
      l.correlation_id = e.correlation;
      l.api_start_ns = e.start_ns;
      l.api_end_ns = e.end_ns;
      l.thread_id = tid;
      l.kind = e.api_kind;
      l.nvtx_range_id = ranges->empty() ? 0 : ranges->back().host + 1;
      const ServingStep* step = StepOf(*ranges);
      if (e.api_kind == en::kApiGraphLaunch && step != nullptr) {
        step_of_graph_launch_[e.correlation] = step;
      }
      if (e.api_kind == en::kApiKernelLaunch) {
        const size_t links = s.records().op_links.size();
        LinkLaunch(*ops, s, &l, h, step);
        if (capture_) {
          link_of_launch_[h] = {
              l.gemm_call_id, s.records().op_links.size() > links
                                  ? s.records().op_links.back().op_id
                                  : 0};
        }
      }
      s.records().launches.push_back(l);
      ++s.stats().received[en::kRecordLaunch];
      break;
    }
    case HostEvent::Kind::kCapture:
      break;  // read by CapturedGraphs()
  }
}

// The serving engine's step among the open annotations (InnermostStep),
// or null.
const ServingStep* Assembler::StepOf(const std::vector<Open>& ranges) {
  const ServingStep* chosen = nullptr;
  for (auto r = ranges.rbegin(); r != ranges.rend(); ++r) {
    int8_t& state = step_state_[r->host];
    if (state == 0) {
      std::optional<ServingStep> step = ParseServingStep(t_.host[r->host].name);
      state = step ? 1 : 2;
      if (step) steps_.emplace(r->host, *step);
    }
    if (state == 1) chosen = InnermostStep(chosen, &steps_.at(r->host));
  }
  return chosen;
}

// Ties a kernel launch to the innermost open operator whose shapes give
// figures: a GEMM's call (LaunchRecord::gemm_call_id) or a modelled
// operator's OpRecord (an OpLink). An elementwise copy inside a matmul is
// the copy's, not the GEMM's. A serving attention call takes the figures
// of `step`; an MoE layer's grouped GEMMs its up and down projections (its
// routing and padding kernels stay blank).
void Assembler::LinkLaunch(const std::vector<Open>& ops, Session& s,
                           LaunchRecord* l, int launch,
                           const ServingStep* step) {
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const HostEvent& op = t_.host[it->host];
    if (op.kind == HostEvent::Kind::kModelledOp) {
      uint64_t id = 0;
      if (IsMoeOp(op.name)) {
        const std::string_view kernel = KernelOfLaunch(launch);
        if (IsMoeGemmKernel(kernel)) {
          id = MoeOf(it->host, kernel);
        } else if (IsMoeFinalizeKernel(kernel) && call_of_host_[it->host]) {
          id = call_of_host_[it->host] | kMoeFinalizeBit;
        } else if (IsMoeRoutingKernel(kernel)) {
          id = MoeRoutingOf(it->host);
        }
        if (id == 0) return;  // padding, quantisation: no figures
      } else if (AllReduceMessageInput(op.name) >= 0) {
        allreduce_of_launch_[launch] = it->host;  // AddCollective's
        return;
      } else if (IsCatOp(op.name)) {
        id = CatOf(it->host, launch);
        if (id == 0) continue;
      } else if (IsServingAttentionOp(op.name)) {
        id = ServingAttentionOf(it->host, step);
        if (id == 0) {
          if (capture_) attention_of_launch_[launch] = it->host;
          return;
        }
        if (IsAttentionReduceKernelName(KernelOfLaunch(launch))) {
          const uint64_t reduce =
              SplitAttentionReduce(s, id, id | kAttentionReduceBit);
          if (reduce != 0) id = reduce;
        }
      } else {
        id = OpOf(it->host);
        if (id == 0) continue;
      }
      s.records().op_links.push_back({l->correlation_id, id});
      return;
    }
    l->gemm_call_id = CallOf(it->host, it->in_linear);
    if (l->gemm_call_id != 0) return;
  }
}

// Adds operator `h`'s OpRecord with figures `f` under `op_id`.
uint64_t Assembler::AddOpRecord(int h, OpFigures f, uint64_t op_id) {
  const HostEvent& e = t_.host[h];
  ProcessState& p = *ProcessOf(e.pid);
  OpRecord o;
  o.op_id = op_id;
  o.name_iid = Iid(p, e.name);
  shapes_.push_back(std::move(f.shape));
  o.shape_iid = Iid(p, shapes_.back());
  o.flops = f.flops;
  o.min_bytes = f.min_bytes;
  o.precision = static_cast<int32_t>(f.precision);
  o.start_ns = e.start_ns;
  o.end_ns = e.end_ns;
  o.thread_id = static_cast<uint32_t>(e.tid);
  p.session->records().ops.push_back(o);
  return op_id;
}

// The OpRecord of modelled operator `h` (made on first use): its op_id, or
// 0 when its inputs give no figures.
uint64_t Assembler::OpOf(int h) {
  if (call_tried_[h]) return call_of_host_[h];
  call_tried_[h] = 1;
  const HostEvent& e = t_.host[h];
  std::optional<OpFigures> f = FiguresOfOp(e.name, t_.InputsOf(e));
  if (!f) return 0;
  call_of_host_[h] = AddOpRecord(h, std::move(*f), static_cast<uint64_t>(h) + 1);
  return call_of_host_[h];
}

// Serving attention call `h` in `step` (made on first use); 0 when its
// inputs are not the operator's or no step gives its KV lengths.
uint64_t Assembler::ServingAttentionOf(int h, const ServingStep* step) {
  if (call_tried_[h]) return call_of_host_[h];
  call_tried_[h] = 1;
  const int64_t layer = step ? attention_calls_of_step_[step]++ : 0;
  const HostEvent& e = t_.host[h];
  std::optional<ServingAttentionArgs> args = AttentionArgsOf(e);
  if (!args) return 0;
  std::optional<OpFigures> f =
      step ? ServingAttentionFigures(*args, *step, WindowOfLayer(layer))
           : std::nullopt;
  if (!f) {
    ++attention_unstepped_;
    return 0;
  }
  const uint64_t output_bytes = f->output_bytes;
  call_of_host_[h] = AddOpRecord(h, std::move(*f), static_cast<uint64_t>(h) + 1);
  NoteAttentionOutput(*ProcessOf(e.pid)->session, call_of_host_[h],
                      output_bytes);
  return call_of_host_[h];
}

// Attention record `op_id`, just added to `s`, writes `bytes` of output.
void Assembler::NoteAttentionOutput(Session& s, uint64_t op_id,
                                    uint64_t bytes) {
  if (bytes == 0) return;
  attention_output_[op_id] = {s.records().ops.size() - 1, bytes, 0};
}

// The record of a split-KV attention's reduce kernel (model/ops.h
// IsAttentionReduceKernelName), made on its first launch under id
// `reduce_id`: the output bytes of attention record `main_id`, which keeps
// the rest and every FLOP (ServingAttentionOutputBytes), so the call is
// counted once and each of its kernels is on the roofline. 0 when
// `main_id` is no attention record with a known output.
uint64_t Assembler::SplitAttentionReduce(Session& s, uint64_t main_id,
                                         uint64_t reduce_id) {
  auto it = attention_output_.find(main_id);
  if (it == attention_output_.end()) return 0;
  AttentionOutput& a = it->second;
  if (a.reduce_id != 0) return a.reduce_id;
  std::vector<OpRecord>& ops = s.records().ops;
  if (a.bytes >= ops[a.index].min_bytes) return 0;
  OpRecord reduce = ops[a.index];
  ops[a.index].min_bytes -= a.bytes;
  reduce.op_id = reduce_id;
  reduce.flops = 0;
  reduce.min_bytes = a.bytes;
  ops.push_back(reduce);
  a.reduce_id = reduce_id;
  return reduce_id;
}

// The kernel launch `launch` ran: the name its args give, else the GPU
// event's of its correlation id; empty when neither is in the trace.
std::string_view Assembler::KernelOfLaunch(int launch) {
  const HostEvent& e = t_.host[launch];
  if (!e.kernel.empty()) return e.kernel;
  if (!kernel_of_corr_made_) {
    kernel_of_corr_made_ = true;
    for (const GpuEvent& g : t_.gpu) {
      if (g.kind == GpuEvent::Kind::kKernel && g.has_correlation) {
        kernel_of_corr_.emplace(g.correlation, g.name);
      }
    }
  }
  auto it = kernel_of_corr_.find(e.correlation);
  return it == kernel_of_corr_.end() ? std::string_view() : it->second;
}

// Concatenation `h` (made on its first launch, whose kernel gives the
// element size); 0 when neither its inputs nor the kernel's name give
// figures.
uint64_t Assembler::CatOf(int h, int launch) {
  if (call_tried_[h]) return call_of_host_[h];
  call_tried_[h] = 1;
  const HostEvent& e = t_.host[h];
  std::optional<OpFigures> f =
      CatFigures(t_.InputsOf(e), OpaqueElementBytes(KernelOfLaunch(launch)));
  if (!f) return 0;
  call_of_host_[h] = AddOpRecord(h, std::move(*f), static_cast<uint64_t>(h) + 1);
  return call_of_host_[h];
}

// The up (first grouped GEMM `kernel`) or down (second) projection of MoE
// operator `h`, both made on the first; 0 without --model, when the
// model does not fit, or for a third GEMM.
uint64_t Assembler::MoeOf(int h, std::string_view kernel) {
  const int ordinal = moe_gemms_linked_[h]++;
  if (ordinal > 1) return 0;
  if (!call_tried_[h]) {
    call_tried_[h] = 1;
    if (!options_.model) {
      ++moe_gaps_.no_model;
      return 0;
    }
    MoeRun run;
    run.fused_activation = IsFusedActivationKernel(kernel);
    run.kernel_precision = BatchedGemmNamePrecision(kernel);
    run.tensor_parallel = TensorParallel();
    if (run.tensor_parallel == 0) {
      ++moe_gaps_.no_parallel;
      return 0;
    }
    const HostEvent& e = t_.host[h];
    std::optional<MoeFigures> f =
        MoeFiguresOf(t_.InputsOf(e), *options_.model, run);
    if (!f) {
      ++moe_gaps_.unfit;
      return 0;
    }
    const uint64_t id = static_cast<uint64_t>(h) + 1;
    AddOpRecord(h, std::move(f->up), id);
    AddOpRecord(h, std::move(f->down), id | kMoeDownBit);
    AddOpRecord(h, std::move(f->finalize), id | kMoeFinalizeBit);
    call_of_host_[h] = id;
  }
  const uint64_t up = call_of_host_[h];
  return up == 0 || ordinal == 0 ? up : up | kMoeDownBit;
}

// A serving attention call's arguments, its cached keys and values read
// at the run's KV cache size where its key input is not the cache (vLLM's
// calls take the new tokens' keys; an fp8 cache is read at one byte).
std::optional<ServingAttentionArgs> Assembler::AttentionArgsOf(
    const HostEvent& e) const {
  std::optional<ServingAttentionArgs> a =
      ServingAttentionArgsOf(e.name, t_.InputsOf(e));
  if (a && !ServingAttentionKeyIsCache(e.name) && KvCacheBytes() > 0) {
    a->kv_bytes = KvCacheBytes();
  }
  return a;
}

int Assembler::KvCacheBytes() const {
  if (kv_cache_bytes_) return *kv_cache_bytes_;
  int bytes = -1;
  for (const HostEvent& h : t_.host) {
    if (h.kind != HostEvent::Kind::kModelledOp || !IsKvCacheWriteOp(h.name)) {
      continue;
    }
    const int b = KvCacheElementBytes(t_.InputsOf(h));
    if (b > 0) bytes = bytes < 0 || bytes == b ? b : 0;
  }
  kv_cache_bytes_ = std::max(bytes, 0);
  return *kv_cache_bytes_;
}

// The routing of MoE operator `h` (made on its first routing kernel); 0
// without --model or when the model does not fit.
uint64_t Assembler::MoeRoutingOf(int h) {
  const uint64_t id = (static_cast<uint64_t>(h) + 1) | kMoeRoutingBit;
  auto [it, made] = moe_routing_of_.emplace(h, 0);
  if (!made || !options_.model) return it->second;
  std::optional<OpFigures> f =
      MoeRoutingFiguresOf(t_.InputsOf(t_.host[h]), *options_.model);
  if (f) it->second = AddOpRecord(h, std::move(*f), id);
  return it->second;
}

// The tensor-parallel degree of the run (made on first need): the
// model's attention heads over the heads a serving attention call was
// given, which are one rank's; without such a call, 1 on a single rank.
// 0 when it cannot be told: heads that do not divide the model's, or
// several ranks and no attention call to count them by.
int64_t Assembler::TensorParallel() {
  if (tensor_parallel_ >= 0) return tensor_parallel_;
  tensor_parallel_ = t_.world_size.value_or(1) > 1 ? 0 : 1;
  const ModelFacts& model = *options_.model;
  for (const HostEvent& e : t_.host) {
    if (e.kind != HostEvent::Kind::kModelledOp ||
        !IsServingAttentionOp(e.name)) {
      continue;
    }
    std::optional<ServingAttentionArgs> a =
        ServingAttentionArgsOf(e.name, t_.InputsOf(e));
    if (!a || a->heads <= 0) continue;
    tensor_parallel_ = model.num_heads > 0 && model.num_heads % a->heads == 0
                           ? model.num_heads / a->heads
                           : 0;
    break;
  }
  return tensor_parallel_;
}

// The GEMM call of operator `h` (made on first use), or 0 when its shapes
// are not a GEMM's.
uint64_t Assembler::CallOf(int h, bool in_linear) {
  if (call_tried_[h]) return call_of_host_[h];
  call_tried_[h] = 1;
  const HostEvent& e = t_.host[h];
  std::optional<GemmRecord> g =
      GemmOfOp(e.name, t_.InputsOf(e), in_linear);
  if (!g) {
    ++unshaped_gemms_;
    return 0;
  }
  g->call_id = static_cast<uint64_t>(h) + 1;
  g->op_name_iid = Iid(*ProcessOf(e.pid), e.name);
  g->start_ns = e.start_ns;
  g->end_ns = e.end_ns;
  g->thread_id = static_cast<uint32_t>(e.tid);
  Session& s = *ProcessOf(e.pid)->session;
  s.records().gemms.push_back(*g);
  ++s.stats().received[en::kRecordGemm];
  call_of_host_[h] = g->call_id;
  return g->call_id;
}

}  // namespace

namespace {

int32_t CopyKindOfName(std::string_view name) {
  if (name.find("HtoD") != std::string_view::npos) return en::kCopyHtoD;
  if (name.find("DtoH") != std::string_view::npos) return en::kCopyDtoH;
  if (name.find("DtoD") != std::string_view::npos) return en::kCopyDtoD;
  if (name.find("HtoH") != std::string_view::npos) return en::kCopyHtoH;
  if (name.find("PtoP") != std::string_view::npos) return en::kCopyPtoP;
  return en::kCopyUnknown;
}

int32_t MemoryKindOfName(std::string_view name) {
  if (name == "Pageable") return en::kMemoryPageable;
  if (name == "Pinned") return en::kMemoryPinned;
  if (name == "Device") return en::kMemoryDevice;
  if (name == "Array") return en::kMemoryArray;
  if (name == "Managed") return en::kMemoryManaged;
  return en::kMemoryUnknown;
}

// "Memcpy HtoD (Pageable -> Device)", "Memset (Device)".
MemcpyRecord CopyOf(const GpuEvent& g, uint64_t corr) {
  MemcpyRecord m;
  m.correlation_id = corr;
  m.start_ns = g.start_ns;
  m.end_ns = g.end_ns;
  m.bytes = g.bytes;
  m.device_id = g.device;
  m.context_id = g.context;
  m.stream_id = g.stream;
  const std::string_view n = g.name;
  const size_t open = n.find('('), close = n.rfind(')');
  std::string_view kinds;
  if (open != std::string_view::npos && close != std::string_view::npos &&
      close > open) {
    kinds = n.substr(open + 1, close - open - 1);
  }
  const size_t arrow = kinds.find(" -> ");
  if (g.kind == GpuEvent::Kind::kMemset) {
    m.kind = en::kCopyMemset;
    m.dst_kind = MemoryKindOfName(kinds);
  } else {
    m.kind = CopyKindOfName(n);
    if (arrow != std::string_view::npos) {
      m.src_kind = MemoryKindOfName(kinds.substr(0, arrow));
      m.dst_kind = MemoryKindOfName(kinds.substr(arrow + 4));
    }
  }
  return m;
}

// The correlation id each profiler range measured: the n-th range (in
// time) is the n-th kernel, of the kernel events when the trace has them,
// else of the kernel launches. 0 for a range beyond the last; empty for a
// trace without ranges (most: nothing to hold per GPU event).
std::vector<uint64_t> Assembler::RangeCorrelations() const {
  if (std::none_of(t_.gpu.begin(), t_.gpu.end(), [](const GpuEvent& g) {
        return g.kind == GpuEvent::Kind::kProfilerRange;
      })) {
    return {};
  }
  std::vector<std::pair<uint64_t, uint64_t>> targets;  // (start, corr)
  std::vector<std::pair<uint64_t, size_t>> ranges;     // (start, index)
  bool any_kernel = false;
  for (size_t i = 0; i < t_.gpu.size(); ++i) {
    const GpuEvent& g = t_.gpu[i];
    if (g.kind == GpuEvent::Kind::kProfilerRange) {
      ranges.emplace_back(g.start_ns, i);
    } else if (g.kind == GpuEvent::Kind::kKernel && g.has_correlation) {
      any_kernel = true;
      targets.emplace_back(g.start_ns, g.correlation);
    }
  }
  std::vector<uint64_t> out(t_.gpu.size(), 0);
  if (ranges.empty()) return out;
  if (!any_kernel) {
    for (const HostEvent& h : t_.host) {
      if (h.kind == HostEvent::Kind::kLaunch && h.has_correlation &&
          h.api_kind == en::kApiKernelLaunch) {
        targets.emplace_back(h.start_ns, h.correlation);
      }
    }
  }
  std::stable_sort(targets.begin(), targets.end());
  std::stable_sort(ranges.begin(), ranges.end());
  for (size_t i = 0; i < ranges.size() && i < targets.size(); ++i) {
    out[ranges[i].second] = targets[i].second;
  }
  return out;
}

// For GPU events without args.correlation (older traces), the id of the
// ac2g flow that ends where they start; 0 where none does.
std::vector<uint64_t> Assembler::FlowCorrelations() const {
  std::vector<uint64_t> out;
  bool needed = false;
  for (const GpuEvent& g : t_.gpu) {
    needed |= !g.has_correlation && g.kind != GpuEvent::Kind::kProfilerRange;
  }
  if (!needed || t_.flow_ends.empty()) return out;
  std::vector<FlowEnd> ends = t_.flow_ends;
  auto key = [](const FlowEnd& f) {
    return std::make_tuple(f.pid, f.tid, f.ts_ns);
  };
  std::sort(ends.begin(), ends.end(), [&](const FlowEnd& a, const FlowEnd& b) {
    return key(a) < key(b);
  });
  out.assign(t_.gpu.size(), 0);
  for (size_t i = 0; i < t_.gpu.size(); ++i) {
    const GpuEvent& g = t_.gpu[i];
    if (g.has_correlation) continue;
    const FlowEnd probe{g.pid, g.tid, g.start_ns, 0};
    auto it = std::lower_bound(
        ends.begin(), ends.end(), probe,
        [&](const FlowEnd& a, const FlowEnd& b) { return key(a) < key(b); });
    if (it != ends.end() && key(*it) == key(probe)) out[i] = it->id;
  }
  return out;
}

void Assembler::AddGpuEvents() {
  const std::vector<uint64_t> range_corr = RangeCorrelations();
  const std::vector<uint64_t> flow_corr = FlowCorrelations();
  bool any_kernel = false;
  for (const GpuEvent& g : t_.gpu) {
    any_kernel |= g.kind == GpuEvent::Kind::kKernel;
  }
  for (size_t i = 0; i < t_.gpu.size(); ++i) {
    const GpuEvent& g = t_.gpu[i];
    uint64_t corr = g.correlation;
    if (g.kind == GpuEvent::Kind::kProfilerRange) {
      ++ranges_;
      corr = range_corr[i];
      if (corr == 0) ++range_mismatch_;
      if (any_kernel) {
        // Counters of a kernel event read on its own.
        const int l = corr ? launch_of_corr_.Find(corr) : -1;
        ProcessState* p =
            l >= 0 ? ProcessOf(t_.host[l].pid) : &processes_[main_];
        if (corr != 0 && p->selected) AddRangeCounters(*p, g, corr);
        continue;
      }
    } else if (!g.has_correlation) {
      corr = flow_corr.empty() ? 0 : flow_corr[i];
    }
    if (corr == 0) {
      corr = kSyntheticCorrelation + i;
      uncorrelated_ += g.kind != GpuEvent::Kind::kProfilerRange;
    }
    AddGpuEvent(g, corr);
  }
}

}  // namespace

namespace {

void Assembler::AddGpuEvent(const GpuEvent& g, uint64_t corr) {
  const int l = launch_of_corr_.Find(corr);
  ProcessState& p = l >= 0 ? *ProcessOf(t_.host[l].pid) : processes_[main_];
  if (!p.selected) return;
  Session& s = *p.session;
  if (g.kind == GpuEvent::Kind::kMemcpy || g.kind == GpuEvent::Kind::kMemset) {
    s.records().memcpys.push_back(CopyOf(g, corr));
    ++s.stats().received[en::kRecordMemcpy];
    return;
  }
  KernelRecord k;
  k.correlation_id = corr;
  k.start_ns = g.start_ns;
  k.end_ns = g.end_ns;
  k.name_iid = Iid(p, g.name);
  // Older traces name the device by the GPU row's pid only.
  k.device_id = g.has_device ? g.device
                             : static_cast<uint32_t>(std::max<int64_t>(0, g.pid));
  k.context_id = g.context;
  k.stream_id = g.stream;
  std::copy(g.grid, g.grid + 3, k.grid);
  std::copy(g.block, g.block + 3, k.block);
  k.registers_per_thread = g.registers_per_thread;
  // Kineto reports static and dynamic shared memory as one sum.
  k.static_shared_memory_bytes = g.shared_memory;
  s.records().kernels.push_back(k);
  ++s.stats().received[en::kRecordKernel];
  p.devices.insert(k.device_id);
  ++kernels_;
  if (!options_.counters_path.empty()) {
    timeline_.push_back({static_cast<size_t>(&p - processes_.data()), corr,
                         l >= 0 ? t_.host[l].start_ns : g.start_ns,
                         g.start_ns, g.name});
  }
  if (l < 0) {
    ++unlaunched_;
    // Without its launch, the operator it names by External id.
    const int op = g.external_id >= 0
                       ? op_of_external_.Find(
                             static_cast<uint64_t>(g.external_id))
                       : -1;
    if (op >= 0 && ProcessOf(t_.host[op].pid) == &p) {
      if (t_.host[op].kind == HostEvent::Kind::kModelledOp) {
        const uint64_t id = OpOf(op);
        if (id != 0) s.records().op_links.push_back({corr, id});
      } else {
        const uint64_t call = CallOf(op, false);
        if (call != 0) s.records().gemm_links.push_back({corr, call});
      }
    }
  }
  if (g.kind == GpuEvent::Kind::kProfilerRange) AddRangeCounters(p, g, corr);
  if (g.kind == GpuEvent::Kind::kKernel) AddCollective(p, g, l, corr);
}

// The collective a kernel runs (its own args, else the cpu_op of its or its
// launch's External id), or an all-reduce outside NCCL around its launch
// (AllReduceMessageInput: the operator's tensor is the message, the trace's
// world size the group, distributedInfo); nullopt when neither. `g` may be
// null: a capture trace's launches have no kernels.
std::optional<CollectiveArgs> Assembler::CollectiveOf(const GpuEvent* g,
                                                      int launch) const {
  int comm = g != nullptr ? g->comm : -1;
  for (int64_t ext : {g != nullptr ? g->external_id : -1,
                      launch >= 0 ? t_.host[launch].external_id : -1}) {
    if (comm >= 0 || comm_of_external_.empty()) break;
    if (ext >= 0) comm = comm_of_external_.Find(static_cast<uint64_t>(ext));
  }
  CollectiveArgs out;
  if (comm >= 0) {
    const CommArgs& a = t_.comms[comm];
    out.comm = comm;
    out.collective = a.collective;
    out.dtype = a.dtype;
    out.in_elements = a.in_elements;
    out.out_elements = a.out_elements;
    out.group_size = a.group_size;
    return out;
  }
  const int ar = launch >= 0 ? allreduce_of_launch_[launch] : -1;
  if (ar < 0) return std::nullopt;
  const OpInputs& in = t_.InputsOf(t_.host[ar]);
  const int m = AllReduceMessageInput(t_.host[ar].name);
  if (m >= in.count || in.in[m].rank < 0) return std::nullopt;
  int64_t n = 1;
  for (int d = 0; d < in.in[m].rank; ++d) n *= in.in[m].dims[d];
  out.collective = "allreduce";
  out.dtype = in.in[m].type;
  out.in_elements = out.out_elements = n;
  out.group_size = t_.world_size.value_or(-1);
  return out;
}

void Assembler::AddCollective(ProcessState& p, const GpuEvent& g, int launch,
                              uint64_t corr) {
  std::optional<CollectiveArgs> a = CollectiveOf(&g, launch);
  if (!a) {
    comm_unsized_ += IsNcclKernelName(g.name);
    return;
  }
  const uint64_t op_id =
      a->comm >= 0 ? kCollectiveOps + static_cast<uint64_t>(a->comm)
                   : kOutsideCollectiveOps + ++outside_collectives_;
  EmitCollective(p, *a, g.name, g.start_ns, g.end_ns, corr, 0, op_id);
}

// A collective kernel's message, algorithm and bus bandwidth (model/ops.h)
// as raw metrics, and an OpRecord without FLOPs or bytes whose shape text
// the kernel row shows ("all_reduce bf16 bytes=8388608 ranks=8"). What is
// missing stays missing: no message without a dtype and counts, no bus
// bandwidth without a group size. `node`: the kernel's graph node in its
// graph launch `corr` (0: a kernel of its own launch).
void Assembler::EmitCollective(ProcessState& p, const CollectiveArgs& a,
                               std::string_view kernel, uint64_t start_ns,
                               uint64_t end_ns, uint64_t corr, uint64_t node,
                               uint64_t op_id) {
  Collective c = CollectiveFromName(a.collective);
  if (c == Collective::kUnknown) c = CollectiveFromName(kernel);
  const uint64_t bytes = CollectiveMessageBytes(
      a.in_elements, a.out_elements, TorchTypeBytes(a.dtype));
  const uint64_t duration = end_ns > start_ns ? end_ns - start_ns : 0;
  const CollectiveBandwidth bw =
      CollectiveBandwidthOf(c, a.group_size, bytes, duration);
  if (bytes == 0) {
    ++comm_unsized_;
  } else if (bw.busbw < 0) {
    ++comm_ungrouped_;
  }

  Session& s = *p.session;
  std::string shape = c != Collective::kUnknown ? CollectiveName(c)
                                                : std::string(a.collective);
  if (shape.empty()) shape = "collective";
  shape += ' ';
  shape += ShortDtype(a.dtype);
  shape += " bytes=" + (bytes > 0 ? std::to_string(bytes) : std::string("?"));
  shape += " ranks=" + (a.group_size > 0 ? std::to_string(a.group_size)
                                         : std::string("?"));
  OpRecord o;
  o.op_id = op_id;
  o.name_iid = Iid(p, a.collective.empty() ? std::string_view("collective")
                                           : std::string_view(a.collective));
  shapes_.push_back(std::move(shape));
  o.shape_iid = Iid(p, shapes_.back());
  o.start_ns = start_ns;
  o.end_ns = end_ns;
  s.records().ops.push_back(o);
  s.records().op_links.push_back({corr, o.op_id, node});

  auto metric = [&](std::string_view name, std::string_view unit, double v) {
    s.records().metrics.push_back({corr, Iid(p, name), Iid(p, unit), v, node});
  };
  if (bytes > 0) {
    metric(kCollectiveMessageBytes, "bytes", static_cast<double>(bytes));
  }
  if (a.group_size > 0) {
    metric(kCollectiveGroupSize, "ranks", static_cast<double>(a.group_size));
  }
  if (bw.algbw > 0) metric(kCollectiveAlgbw, "bytes/s", bw.algbw);
  if (bw.busbw >= 0 && bw.algbw > 0) {
    metric(kCollectiveBusbw, "bytes/s", bw.busbw);
  }
}

// A range's counter values as raw metrics, and the FLOPs (and DRAM bytes)
// they measure as the kernel's counters.
void Assembler::AddRangeCounters(ProcessState& p, const GpuEvent& g,
                                 uint64_t corr) {
  Session& s = *p.session;
  CounterRecord c;
  c.correlation_id = corr;
  c.has_dram_bytes = false;
  for (uint32_t i = g.metrics_begin; i < g.metrics_end; ++i) {
    const Metric& m = t_.metrics[i];
    s.records().metrics.push_back({corr, Iid(p, m.name), 0, m.value});
    if (!SassFlops(m.name, m.value, &c) && DramBytes(m.name, m.value, &c)) {
      c.has_dram_bytes = true;
    }
  }
  if (c.has_flops || c.has_dram_bytes) {
    s.records().counters.push_back(c);
    ++s.stats().received[en::kRecordCounters];
  }
}

// The description of device `id`: the deviceProperties entry of that id;
// else, when every entry describes the same GPU model, that model. A ROCm
// trace numbers its kernels' devices by the node's GPUs (a rank on GPU 9
// writes "device": 9) but describes only the GPUs visible to the process,
// from 0; on a node of one GPU model (the only kind a trace shows with
// more than one entry) the name, SMs and memory are those of any of them.
const DeviceProps* Assembler::PropsOf(uint32_t id) const {
  const DeviceProps* same = nullptr;
  for (const DeviceProps& props : t_.devices) {
    if (props.id == id) return &props;
    if (same == nullptr) {
      same = &props;
    } else if (same->name != props.name || same->sm_count != props.sm_count ||
               same->global_memory_bytes != props.global_memory_bytes) {
      return nullptr;
    }
  }
  return same;
}

void Assembler::AddDevices() {
  for (ProcessState& p : processes_) {
    for (uint32_t id : p.devices) {
      DeviceInfo d;
      d.device_id = id;
      if (const DeviceProps* found = PropsOf(id)) {
        const DeviceProps& props = *found;
        d.name = std::string(props.name);
        d.sm_count = props.sm_count;
        d.cc_major = props.cc_major;
        d.cc_minor = props.cc_minor;
        d.global_memory_bytes = props.global_memory_bytes;
      }
      p.session->AddDevice(std::move(d));
      ++p.session->stats().received[en::kRecordDevice];
    }
  }
}

// The same matching as for an nsys timeline: the kernels of the selected
// processes in launch order (the launch call's start; a kernel without its
// launch by its own start), named as Kineto wrote them; a (process,
// correlation id) pair stands for one launch, so kernels of one graph
// launch keep sharing theirs.
Status Assembler::AttachCounters(RunRecorder* recorder) {
  if (options_.counters_path.empty()) return OkStatus();
  if (options_.counters == nullptr) {
    return FailedPrecondition(
        path_ + ": --counters " + options_.counters_path +
        ": the counter file was not read (read through the registry: "
        "ReadSourceInto reads it once)");
  }
  std::stable_sort(timeline_.begin(), timeline_.end(),
                   [](const TimelineEntry& a, const TimelineEntry& b) {
                     return a.order != b.order ? a.order < b.order
                                               : a.start < b.start;
                   });
  CounterMatchInput in;
  in.samples = options_.counters->samples;
  in.window = options_.counters->window;
  std::unordered_map<std::string_view, uint32_t> name_index;
  std::vector<std::pair<size_t, uint64_t>> keys;  // (process, correlation)
  std::map<std::pair<size_t, uint64_t>, uint64_t> key_id;
  in.kernels.reserve(timeline_.size());
  for (const TimelineEntry& e : timeline_) {
    auto [n, new_name] = name_index.try_emplace(
        e.name, static_cast<uint32_t>(in.names.size()));
    if (new_name) in.names.push_back({std::string(e.name)});
    auto [k, new_key] =
        key_id.try_emplace({e.process, e.correlation}, keys.size());
    if (new_key) keys.emplace_back(e.process, e.correlation);
    in.kernels.push_back({k->second, n->second});
  }
  const CounterMatchResult m = MatchCounters(in);
  for (size_t i = 0; i < m.counters.size(); ++i) {
    const auto [process, corr] = keys[m.counters[i].correlation_id];
    ProcessState& p = processes_[process];
    Session& s = *p.session;
    CounterRecord c = m.counters[i];
    c.correlation_id = corr;
    s.records().counters.push_back(c);
    ++s.stats().received[en::kRecordCounters];
    // The file's own sample (in.samples is a copy): its metric names
    // outlive the read, as the interned strings must.
    for (const CounterMetric& metric :
         options_.counters->samples[m.sample_of[i]].metrics) {
      s.records().metrics.push_back(
          {corr, Iid(p, metric.name),
           metric.unit.empty() ? 0 : Iid(p, metric.unit), metric.value});
    }
  }
  ImportStats unmatched;
  unmatched.unmatched[en::kRecordCounters] = m.unmatched();
  recorder->AddStats(unmatched);
  if (m.unmatched() > 0) {
    counter_note_ = options_.counters_path + ": " + m.summary;
  }
  return OkStatus();
}

void Assembler::BuildCapture() {
  capture_ = true;
  MakeProcesses();
  Build();
}

std::vector<CapturedGraph> Assembler::CapturedGraphs() const {
  // Call and op ids are unique in the trace; each with the session whose
  // strings its iids name.
  std::unordered_map<uint64_t, std::pair<const GemmRecord*, const Session*>>
      gemm_of;
  std::unordered_map<uint64_t, std::pair<const OpRecord*, const Session*>>
      op_of;
  for (const ProcessState& p : processes_) {
    for (const GemmRecord& g : p.session->records().gemms) {
      gemm_of.emplace(g.call_id, std::make_pair(&g, p.session.get()));
    }
    for (const OpRecord& o : p.session->records().ops) {
      op_of.emplace(o.op_id, std::make_pair(&o, p.session.get()));
    }
  }
  std::vector<int> order(t_.host.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const HostEvent& x = t_.host[a];
    const HostEvent& y = t_.host[b];
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.tid != y.tid) return x.tid < y.tid;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return a < b;
  });
  std::vector<CapturedGraph> graphs;
  bool open = false;
  CapturedGraph current;
  int64_t attention_calls = 0;  // in `current`
  int last_attention = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    const int h = order[i];
    const HostEvent& e = t_.host[h];
    if (i > 0 && (e.pid != t_.host[order[i - 1]].pid ||
                  e.tid != t_.host[order[i - 1]].tid)) {
      open = false;  // a capture left open on another thread
      current.clear();
      attention_calls = 0;
      last_attention = -1;
    }
    if (e.kind == HostEvent::Kind::kCapture) {
      if (e.api_kind == 2 && open && !current.empty()) {
        graphs.push_back(std::move(current));
      }
      open = e.api_kind == 1;
      current.clear();
      attention_calls = 0;
      last_attention = -1;
      continue;
    }
    if (!open || e.kind != HostEvent::Kind::kLaunch ||
        e.api_kind != en::kApiKernelLaunch || e.kernel.empty()) {
      continue;
    }
    CapturedKernel k;
    k.kernel = std::string(e.kernel);
    const auto [call, op] = link_of_launch_[h];
    if (auto g = gemm_of.find(call); call != 0 && g != gemm_of.end()) {
      k.gemm = *g->second.first;
      k.op_key = call;
      const Session& s = *g->second.second;
      if (const std::string* n = s.String(k.gemm->op_name_iid)) {
        k.op_name = *n;
      }
    } else if (auto o = op_of.find(op); op != 0 && o != op_of.end()) {
      k.op = *o->second.first;
      k.op_key = op;
      const Session& s = *o->second.second;
      if (const std::string* n = s.String(k.op->name_iid)) k.op_name = *n;
      if (const std::string* t = s.String(k.op->shape_iid)) k.op_shape = *t;
    } else if (const int a = attention_of_launch_[h]; a >= 0) {
      const HostEvent& op = t_.host[a];
      k.attention = AttentionArgsOf(op);
      // A call's kernels are consecutive: a new call is a new layer.
      if (a != last_attention) ++attention_calls;
      last_attention = a;
      k.attention_layer = attention_calls - 1;
      k.op_name = std::string(op.name);
      k.op_key = kCapturedAttentionBit | (static_cast<uint64_t>(a) + 1);
    } else {
      k.collective = CollectiveOf(nullptr, h);
    }
    current.push_back(std::move(k));
  }
  return graphs;
}

// The captured kernel of each kernel of a graph launch, whose names (as
// string iids of session `s`) are `iids` in start order: the captured
// graph with the same sequence, else one with the same names (the n-th
// kernel of a name is the n-th captured); empty when none.
std::vector<const CapturedKernel*> MatchCapture(
    const Session& s, const std::vector<uint64_t>& iids,
    const std::vector<CapturedGraph>& graphs) {
  std::vector<std::string_view> names(iids.size());
  for (size_t i = 0; i < iids.size(); ++i) {
    const std::string* n = s.String(iids[i]);
    names[i] = n ? std::string_view(*n) : std::string_view();
  }
  const size_t count = iids.size();
  std::vector<const CapturedKernel*> match;
  for (const CapturedGraph& g : graphs) {
    if (g.size() != count) continue;
    bool same = true;
    for (size_t i = 0; same && i < g.size(); ++i) {
      same = g[i].kernel == names[i];
    }
    if (!same) continue;
    for (const CapturedKernel& k : g) match.push_back(&k);
    break;
  }
  for (size_t gi = 0; match.empty() && gi < graphs.size(); ++gi) {
    const CapturedGraph& g = graphs[gi];
    if (g.size() != count) continue;
    std::map<std::string_view, std::vector<const CapturedKernel*>> of;
    for (const CapturedKernel& k : g) of[k.kernel].push_back(&k);
    std::map<std::string_view, size_t> used;
    std::vector<const CapturedKernel*> m;
    for (std::string_view n : names) {
      auto it = of.find(n);
      size_t& u = used[n];
      if (it == of.end() || u >= it->second.size()) break;
      m.push_back(it->second[u++]);
    }
    if (m.size() == count) match = std::move(m);
  }
  return match;
}

void Assembler::ApplyCaptures(const std::vector<CapturedGraph>& graphs) {
  next_replay_id_ = static_cast<uint64_t>(t_.host.size()) + 1;
  for (ProcessState& p : processes_) {
    if (!p.selected) continue;
    Session& s = *p.session;
    SessionRecords& rec = s.records();
    std::map<uint64_t, size_t> launch_of;  // graph launches by correlation
    for (size_t i = 0; i < rec.launches.size(); ++i) {
      if (rec.launches[i].kind == en::kApiGraphLaunch) {
        launch_of.emplace(rec.launches[i].correlation_id, i);
      }
    }
    if (launch_of.empty()) continue;
    std::map<uint64_t, std::vector<size_t>> kernels_of;
    for (size_t i = 0; i < rec.kernels.size(); ++i) {
      if (launch_of.count(rec.kernels[i].correlation_id)) {
        kernels_of[rec.kernels[i].correlation_id].push_back(i);
      }
    }
    // A serving trace replays a few graphs thousands of times: the match of
    // a sequence of kernel names (as the session's string iids) is found
    // once.
    std::map<std::vector<uint64_t>, std::vector<const CapturedKernel*>> seen;
    for (auto& [corr, ks] : kernels_of) {
      std::stable_sort(ks.begin(), ks.end(), [&](size_t a, size_t b) {
        return rec.kernels[a].start_ns < rec.kernels[b].start_ns;
      });
      std::vector<uint64_t> iids(ks.size());
      for (size_t i = 0; i < ks.size(); ++i) {
        iids[i] = rec.kernels[ks[i]].name_iid;
      }
      auto known = seen.find(iids);
      if (known == seen.end()) {
        known = seen.emplace(iids, MatchCapture(s, iids, graphs)).first;
      }
      const std::vector<const CapturedKernel*>& match = known->second;
      if (match.empty()) {
        ++graphs_unmapped_;
        continue;
      }
      ++graphs_mapped_;
      const LaunchRecord& launch = rec.launches[launch_of[corr]];
      const auto found = step_of_graph_launch_.find(corr);
      const ServingStep* step =
          found == step_of_graph_launch_.end() ? nullptr : found->second;
      // Captured call or op -> its replayed record, for this launch.
      std::unordered_map<uint64_t, uint64_t> replayed;
      for (size_t i = 0; i < ks.size(); ++i) {
        KernelRecord& kernel = rec.kernels[ks[i]];
        // Graph node ids are unique within the graph launch's kernels.
        if (kernel.graph_node_id == 0) kernel.graph_node_id = i + 1;
        const CapturedKernel& c = *match[i];
        if (c.collective) {
          EmitCollective(p, *c.collective, c.kernel, kernel.start_ns,
                         kernel.end_ns, corr, kernel.graph_node_id,
                         kOutsideCollectiveOps + ++outside_collectives_);
          ++graph_kernels_;
          continue;
        }
        if (auto r = replayed.find(c.op_key); c.op_key != 0 && r != replayed.end()) {
          if (c.attention && IsAttentionReduceKernelName(c.kernel)) {
            const uint64_t id =
                SplitAttentionReduce(s, r->second, next_replay_id_);
            if (id == next_replay_id_) ++next_replay_id_;
            if (id != 0) {
              rec.op_links.push_back({corr, id, kernel.graph_node_id});
              ++graph_kernels_;
              continue;
            }
          }
          if (c.gemm) {
            rec.gemm_links.push_back({corr, r->second, kernel.graph_node_id});
          } else {
            rec.op_links.push_back({corr, r->second, kernel.graph_node_id});
          }
          ++graph_kernels_;
          continue;
        }
        std::optional<OpRecord> op = c.op;
        uint64_t output_bytes = 0;  // a replayed attention's
        if (!op && c.attention) {
          std::optional<OpFigures> f =
              step ? ServingAttentionFigures(*c.attention, *step,
                                             WindowOfLayer(c.attention_layer))
                   : std::nullopt;
          if (!f) {
            ++attention_unstepped_;
            continue;
          }
          op.emplace();
          op->flops = f->flops;
          op->min_bytes = f->min_bytes;
          op->precision = static_cast<int32_t>(f->precision);
          output_bytes = f->output_bytes;
          shapes_.push_back(std::move(f->shape));
          op->shape_iid = Iid(p, shapes_.back());
        }
        if (c.gemm) {
          GemmRecord g = *c.gemm;
          g.call_id = next_replay_id_++;
          shapes_.push_back(c.op_name);
          g.op_name_iid = c.op_name.empty() ? 0 : Iid(p, shapes_.back());
          g.start_ns = launch.api_start_ns;
          g.end_ns = launch.api_end_ns;
          g.thread_id = launch.thread_id;
          rec.gemms.push_back(g);
          rec.gemm_links.push_back({corr, g.call_id, kernel.graph_node_id});
          ++s.stats().received[en::kRecordGemm];
          if (c.op_key != 0) replayed.emplace(c.op_key, g.call_id);
          ++graph_kernels_;
        } else if (op) {
          OpRecord o = *op;
          o.op_id = next_replay_id_++;
          shapes_.push_back(c.op_name);
          o.name_iid = Iid(p, shapes_.back());
          if (c.op) {
            shapes_.push_back(c.op_shape);
            o.shape_iid = Iid(p, shapes_.back());
          }
          o.start_ns = launch.api_start_ns;
          o.end_ns = launch.api_end_ns;
          o.thread_id = launch.thread_id;
          rec.ops.push_back(o);
          NoteAttentionOutput(s, o.op_id, output_bytes);
          rec.op_links.push_back({corr, o.op_id, kernel.graph_node_id});
          if (c.op_key != 0) replayed.emplace(c.op_key, o.op_id);
          ++graph_kernels_;
        }
      }
    }
  }
}

std::string Assembler::Warning() const {
  std::vector<std::string> notes;
  if (!counter_note_.empty()) notes.push_back(counter_note_);
  if (unlaunched_ > 0) {
    notes.push_back(
        std::to_string(unlaunched_) + " of " + std::to_string(kernels_) +
        " kernels have no launch event in the trace (launched before the "
        "profiler's first CPU event): kept, without host time, thread or "
        "operator; they inherit the figures of identical kernels that have "
        "one shape in the run, or of the kernel in the same place of a "
        "launched run of the same kernels where that place is unique "
        "(import_stats kernels_inherited_by_position)");
  }
  if (uncorrelated_ > 0) {
    notes.push_back(std::to_string(uncorrelated_) +
                    " GPU events carry no correlation id: kept, unjoined");
  }
  if (range_mismatch_ > 0) {
    notes.push_back(std::to_string(range_mismatch_) + " of " +
                    std::to_string(ranges_) +
                    " profiler ranges have no kernel to go with (more "
                    "ranges than kernels): kept as kernels of their own");
  }
  if (graphs_mapped_ > 0) {
    notes.push_back(std::to_string(graphs_mapped_) +
                    " graph launches matched a captured graph (--capture): " +
                    std::to_string(graph_kernels_) +
                    " replayed kernels took their captured operator's "
                    "shapes");
  }
  if (graphs_unmapped_ > 0) {
    notes.push_back(std::to_string(graphs_unmapped_) +
                    " graph launches matched no captured graph (no capture "
                    "launched the same kernels): their kernels have no "
                    "operator");
  }
  if (t_.counts.non_json_values > 0) {
    notes.push_back(std::to_string(t_.counts.non_json_values) +
                    " values that are not JSON (inf, nan, N/A, as PyTorch "
                    "1.8's profiler wrote them) read as missing");
  }
  const uint64_t unshaped = unshaped_gemms_ + t_.counts.gemm_ops_without_shapes;
  if (unshaped > 0) {
    notes.push_back(std::to_string(unshaped) +
                    " GEMM operators without usable shapes (profile with "
                    "record_shapes=True): their kernels have no analytic "
                    "FLOPs");
  }
  if (t_.counts.modelled_ops_without_shapes > 0) {
    notes.push_back(std::to_string(t_.counts.modelled_ops_without_shapes) +
                    " attention, convolution or pointwise operators without "
                    "shapes (profile with record_shapes=True): their kernels "
                    "have no analytic figures");
  }
  auto note = [&](uint64_t count, const std::string& what) {
    if (count > 0) notes.push_back(std::to_string(count) + what);
  };
  note(attention_unstepped_,
       " serving attention calls without a step annotation that gives the "
       "KV lengths (vLLM's execute_N_context_...(sq..sk..sqsq..sqsk..) or "
       "SGLang's step[... c_sqsk=...]): no figures; enable the engine's "
       "detailed step annotations");
  note(moe_gaps_.no_model,
       " MoE layers without their model's routing (top-k, expert width): no "
       "figures; pass --model CONFIG (a config.json or a built-in name)");
  note(moe_gaps_.no_parallel,
       " MoE layers on one of several ranks with no attention call to tell "
       "the tensor-parallel degree by (--model's heads over the call's): "
       "no figures");
  note(moe_gaps_.unfit,
       " MoE layers whose hidden size or expert count does not fit --model " +
           (options_.model ? options_.model->name : std::string()) +
           ": no figures; pass the config of the model the trace ran");
  if (comm_unsized_ > 0) {
    notes.push_back(std::to_string(comm_unsized_) +
                    " NCCL kernels without a message size (no \"In msg "
                    "nelems\" and \"dtype\" on the kernel or its "
                    "record_param_comms): no bandwidth");
  }
  if (comm_ungrouped_ > 0) {
    notes.push_back(std::to_string(comm_ungrouped_) +
                    " collective kernels without a group size or a known "
                    "collective: algorithm bandwidth only, no bus bandwidth");
  }
  std::string out;
  for (const std::string& n : notes) out += (out.empty() ? "" : "; ") + n;
  return out.empty() ? out : path_ + ": " + out;
}

}  // namespace

namespace {

Status Assembler::Hand(RunRecorder* recorder, SourceResult* result) {
  result->rank = t_.rank;
  for (ProcessState& p : processes_) {
    Session& s = *p.session;
    if (!p.selected) continue;
    if (s.kernels().empty() && s.memcpys().empty()) {
      // A process without GPU work (a data loader): statistics only.
      recorder->AddStats(s.stats());
      continue;
    }
    SessionHeader h;
    h.host = "kineto";
    h.pid = static_cast<uint32_t>(std::max<int64_t>(0, p.pid));
    for (const auto& [pid, name] : t_.process_names) {
      if (pid == p.pid && !name.empty()) h.argv = std::string(name);
    }
    h.producer_version =
        "PyTorch profiler (Kineto)" +
        (t_.schema_version >= 0
             ? " schema " + std::to_string(t_.schema_version)
             : std::string());
    h.mode = "import";
    uint64_t start = UINT64_MAX;
    for (const KernelRecord& k : s.kernels()) start = std::min(start, k.start_ns);
    for (const LaunchRecord& l : s.launches()) {
      start = std::min(start, l.api_start_ns);
    }
    h.start_ns = start == UINT64_MAX ? 0 : start;
    s.Start(h);
    s.end().complete = true;
    RT_RETURN_IF_ERROR(recorder->AddSession(&s));
  }
  result->warning = Warning();
  return OkStatus();
}

std::vector<std::unique_ptr<Session>> Assembler::TakeSessions() {
  std::vector<std::unique_ptr<Session>> out;
  for (ProcessState& p : processes_) {
    if (p.selected && p.session != nullptr) out.push_back(std::move(p.session));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<std::unique_ptr<Session>>> AssembleKinetoText(
    std::string text, size_t content_size, const std::string& name,
    const SourceOptions& options, std::string* warning) {
  text.resize(content_size + KinetoTrace::Padding(), '\0');
  RT_ASSIGN_OR_RETURN(std::unique_ptr<KinetoTrace> trace,
                      KinetoTrace::Parse(std::move(text), content_size, name));
  Assembler assembler(*trace, name, options);
  RT_RETURN_IF_ERROR(assembler.Check());
  assembler.Build();
  if (warning != nullptr) *warning = assembler.warning();
  return assembler.TakeSessions();
}

bool LooksLikeKinetoTrace(std::string_view head) {
  size_t i = 0;
  // A UTF-8 byte order mark, then JSON whitespace.
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' ||
                             head[i] == '\r' || head[i] == '\t')) {
    ++i;
  }
  if (i >= head.size() || head[i] != '{') return false;
  return head.find("\"traceEvents\"", i) != std::string_view::npos;
}

Status ReadKinetoTrace(const std::string& path, const SourceOptions& options,
                       RunRecorder* recorder, SourceResult* result) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<KinetoTrace> trace,
                      KinetoTrace::Read(path, options.gzip_budget));
  // The capture traces, each read and assembled on its own (their
  // operators' records are copied into the replay's sessions).
  std::vector<CapturedGraph> captured;
  MoeGaps capture_moe_gaps;
  for (const std::string& capture : options.capture_paths) {
    // Capture traces are small (the engine's warm-up): read whole.
    size_t capture_content = 0;
    StatusOr<std::string> capture_text =
        ReadWholeFile(capture, KinetoTrace::Padding(), &capture_content,
                      options.gzip_budget);
    if (!capture_text.ok()) {
      return InvalidArgument("--capture: " + capture_text.status().message());
    }
    auto capture_trace = KinetoTrace::Parse(std::move(*capture_text),
                                            capture_content, capture);
    if (!capture_trace.ok()) {
      return InvalidArgument("--capture " + capture + ": " +
                             capture_trace.status().message());
    }
    SourceOptions capture_options;
    capture_options.model = options.model;  // MoE layers inside the graphs
    Assembler capture_assembler(**capture_trace, capture, capture_options);
    capture_assembler.BuildCapture();
    std::vector<CapturedGraph> graphs = capture_assembler.CapturedGraphs();
    capture_moe_gaps += capture_assembler.moe_gaps();
    if (graphs.empty()) {
      return InvalidArgument(
          "--capture " + capture +
          ": no graph capture in it (no stream BeginCapture ... EndCapture "
          "with kernel launches that name their kernel): give the trace "
          "torch.profiler recorded while the engine captured its CUDA "
          "graphs (record_shapes=True)");
    }
    for (CapturedGraph& g : graphs) captured.push_back(std::move(g));
  }
  Assembler assembler(*trace, path, options);
  RT_RETURN_IF_ERROR(assembler.Check());
  assembler.Build();
  if (!captured.empty()) assembler.ApplyCaptures(captured);
  assembler.AddMoeGaps(capture_moe_gaps);
  RT_RETURN_IF_ERROR(assembler.AttachCounters(recorder));
  // The events and the joins' indexes are done with: they go before the
  // sessions are joined and stored, the import's peak.
  assembler.ReleaseScratch();
  trace->ReleaseEvents();
  ImportStats file;
  file[ImportStat::k_bytes] = trace->content_bytes;
  recorder->AddStats(file);
  if (options.progress && trace->counts.events >= 1000000) {
    fprintf(stderr, "rooftrace: %s: %zu events parsed\n", path.c_str(),
            static_cast<size_t>(trace->counts.events));
  }
  return assembler.Hand(recorder, result);
}

}  // namespace rooftrace::kineto
