#include "pipeline/join.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <optional>
#include <unordered_map>

#include "pipeline/flat_index.h"
#include "pipeline/serving_step.h"
#include "model/kernel_names.h"
#include "proto/field_numbers.h"

namespace rooftrace {
namespace {

GemmShape ShapeOf(const GemmRecord& g) {
  GemmShape s;
  s.m = g.m;
  s.n = g.n;
  s.k = g.k;
  s.batch = g.batch > 0 ? g.batch : 1;
  s.a_type = g.a_type;
  s.b_type = g.b_type;
  s.c_type = g.c_type;
  s.d_type = g.d_type;
  s.compute_type = g.compute_type;
  s.bias_elements = g.bias_elements;
  return s;
}

// Resolves NVTX paths by walking parent ids, memoised per range.
class NvtxPaths {
 public:
  // `index` is the join's reused scratch (one allocation per window at
  // most, not one per range).
  NvtxPaths(const Session& s, JoinedSession* out, FlatIndex* index)
      : s_(s), out_(out), index_(*index) {
    const auto& ranges = s.nvtx_ranges();
    index_.Reset(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      index_.Emplace(ranges[i].range_id, static_cast<int32_t>(i));
    }
    path_of_.assign(ranges.size(), -2);  // -2: not computed yet
    root_of_.assign(ranges.size(), 0);
  }

  // Path index of range `id`; -1 when the range is unknown.
  int Path(uint64_t id) {
    const int i = index_.Find(id);
    return i < 0 ? -1 : Compute(i, 0);
  }
  uint64_t Root(uint64_t id) {
    const int i = index_.Find(id);
    if (i < 0) return 0;
    Compute(i, 0);
    return root_of_[i];
  }
  // The serving engine's step (serving_step.h) among range `id` and its
  // ancestors: the innermost that gives the sq/sk aggregates, else the
  // innermost step; null when none is one.
  const ServingStep* Step(uint64_t id) {
    const int i = index_.Find(id);
    const int k = i < 0 ? -1 : StepIndex(i, 0);
    return k < 0 ? nullptr : &steps_[k];
  }

 private:
  int StepIndex(int i, int depth) {
    if (step_of_.empty()) step_of_.assign(s_.nvtx_ranges().size(), -2);
    if (step_of_[i] != -2) return step_of_[i];
    const NvtxRecord& r = s_.nvtx_ranges()[i];
    const std::string* name = s_.String(r.name_iid);
    std::optional<ServingStep> own =
        name ? ParseServingStep(*name) : std::nullopt;
    const int parent = r.parent_range_id != 0 ? index_.Find(r.parent_range_id)
                                              : -1;
    // depth guard: a cycle in corrupt input must not recurse forever.
    const int outer = parent >= 0 && depth < 64 && parent != i
                          ? StepIndex(parent, depth + 1)
                          : -1;
    int chosen = outer;
    if (own) {
      steps_.push_back(*own);
      const ServingStep* pick = InnermostStep(
          &steps_.back(), outer >= 0 ? &steps_[outer] : nullptr);
      if (pick == &steps_.back()) {
        chosen = static_cast<int>(steps_.size()) - 1;
      } else {
        steps_.pop_back();
      }
    }
    step_of_[i] = chosen;
    return chosen;
  }

  int Compute(int i, int depth) {
    if (path_of_[i] != -2) return path_of_[i];
    const NvtxRecord& r = s_.nvtx_ranges()[i];
    const std::string* name = s_.String(r.name_iid);
    std::string own = name ? *name : "iid:" + std::to_string(r.name_iid);
    uint64_t root = r.range_id;
    const int parent = r.parent_range_id != 0 ? index_.Find(r.parent_range_id)
                                              : -1;
    std::string path;
    // depth guard: a cycle in corrupt input must not recurse forever.
    if (parent >= 0 && depth < 64 && parent != i) {
      const int pp = Compute(parent, depth + 1);
      if (pp >= 0) {
        const std::string& outer = out_->paths[pp];
        path.reserve(outer.size() + 1 + own.size());
        path.append(outer).append(1, '/').append(own);
      }
      root = root_of_[parent];
    }
    if (path.empty()) path = std::move(own);
    root_of_[i] = root;
    out_->paths.push_back(std::move(path));
    path_of_[i] = static_cast<int>(out_->paths.size()) - 1;
    return path_of_[i];
  }

  const Session& s_;
  JoinedSession* out_;
  FlatIndex& index_;
  std::vector<int> path_of_;
  std::vector<uint64_t> root_of_;
  // Serving steps per range: -2 not computed, -1 none, else an index into
  // steps_ (a deque: pointers handed out stay valid as it grows).
  std::vector<int> step_of_;
  std::deque<ServingStep> steps_;
};

}  // namespace

std::string GemmShapeText(const GemmRecord& g) {
  std::string out;
  GemmShapeText(g, &out);
  return out;
}

void GemmShapeText(const GemmRecord& g, std::string* out) {
  // Four int64 values in decimal (20 characters each at most) and labels.
  char buf[4 * 20 + 20];
  char* p = buf;
  char* const end = buf + sizeof(buf);
  auto field = [&](const char* label, int64_t v) {
    while (*label) *p++ = *label++;
    p = std::to_chars(p, end, v).ptr;
  };
  field("m=", g.m);
  field(" n=", g.n);
  field(" k=", g.k);
  field(" batch=", g.batch > 0 ? g.batch : 1);
  out->assign(buf, p);
}

JoinedSession Join(Session* session, const Roofs& roofs,
                   const AnnotateOptions& annotate_options,
                   const PhaseOptions& phase_options) {
  JoinedSession out;
  JoinInto(session, roofs, annotate_options, phase_options, &out);
  return out;
}

namespace {

// The stages of one join, in order; each reads what the ones before set.
class Joiner {
 public:
  Joiner(Session* session, const Roofs& roofs, const AnnotateOptions& annotate,
         const PhaseOptions& phases, JoinedSession* out,
         const std::atomic<bool>* stop)
      : stop_(stop),
        s_(*session),
        stats_(session->stats()),
        roofs_(roofs),
        annotate_(annotate),
        phases_(phases),
        out_(*out),
        scratch_(out->scratch),
        nvtx_(*session, out, &out->scratch.nvtx_of) {}

  void Run() {
    Reset();
    IndexLaunches();
    IndexGemms();
    IndexOps();
    IndexCounters();
    IndexMetrics();
    JoinKernels();
    FillFacts();
    JoinCopies();
    if (!JoinRanges()) return;  // stopped: the rest is not needed
    CountLeftovers();
    LabelSteps();
  }

 private:
  void Reset() {
    out_.kernels.clear();
    out_.gemms.clear();
    out_.ops.clear();
    out_.metric_order.clear();
    out_.memcpys.clear();
    out_.nvtx.clear();
    out_.steps.clear();
    out_.names.clear();
    out_.paths.clear();
    out_.any_counters = false;
    out_.any_analytic = false;
    out_.any_inherited = false;
    out_.any_sampled = false;
    out_.sampled.clear();
    out_.roofs = roofs_;
    out_.annotate = annotate_;
  }

  void IndexLaunches() {
    FlatIndex& launch_of = scratch_.launch_of;
    launch_of.Reset(s_.launches().size());
    for (size_t i = 0; i < s_.launches().size(); ++i) {
      launch_of.Emplace(s_.launches()[i].correlation_id, static_cast<int>(i));
    }
    scratch_.launch_used.assign(s_.launches().size(), 0);
  }

  void IndexGemms() {
    out_.gemms.resize(s_.gemms().size());
    FlatIndex& gemm_of_call = scratch_.gemm_of_call;
    FlatIndex& gemm_of_corr = scratch_.gemm_of_corr;
    gemm_of_call.Reset(s_.gemms().size());
    gemm_of_corr.Reset(s_.gemm_links().size());
    for (size_t i = 0; i < s_.gemms().size(); ++i) {
      const GemmRecord& g = s_.gemms()[i];
      JoinedGemm& jg = out_.gemms[i];
      jg.gemm = &g;
      const GemmShape shape = ShapeOf(g);
      // The producer classified with the same rule (model/gemm.h); its tag
      // only matters when the call's types did not reach the collector.
      jg.precision = GemmPrecision(shape);
      const int wire_prec = g.precision;
      if (jg.precision == Precision::kUnknown && wire_prec > 0 &&
          wire_prec < kNumPrecisions) {
        jg.precision = static_cast<Precision>(wire_prec);
      }
      jg.flops = GemmFlops(shape);
      jg.min_bytes = GemmMinBytes(shape);
      jg.op_name = g.op_name_iid != 0 ? s_.String(g.op_name_iid) : nullptr;
      gemm_of_call.Emplace(g.call_id, static_cast<int>(i));
    }
    scratch_.gemm_of_node.clear();
    for (const GemmLink& link : s_.gemm_links()) {
      const int g = gemm_of_call.Find(link.call_id);
      if (g < 0) continue;
      if (link.graph_node_id != 0) {
        scratch_.gemm_of_node[{link.correlation_id, link.graph_node_id}] = g;
      } else {
        gemm_of_corr.Emplace(link.correlation_id, g);
      }
    }
  }

  void IndexOps() {
    out_.ops.resize(s_.ops().size());
    FlatIndex& op_of_id = scratch_.op_of_id;
    FlatIndex& op_of_corr = scratch_.op_of_corr;
    op_of_id.Reset(s_.ops().size());
    op_of_corr.Reset(s_.op_links().size());
    for (size_t i = 0; i < s_.ops().size(); ++i) {
      const OpRecord& o = s_.ops()[i];
      JoinedOp& jo = out_.ops[i];
      jo.op = &o;
      if (const std::string* name = s_.String(o.name_iid)) jo.name = *name;
      if (const std::string* shape = s_.String(o.shape_iid)) jo.shape = *shape;
      op_of_id.Emplace(o.op_id, static_cast<int>(i));
    }
    scratch_.op_of_node.clear();
    for (const OpLink& link : s_.op_links()) {
      const int o = op_of_id.Find(link.op_id);
      if (o < 0) continue;
      if (link.graph_node_id != 0) {
        scratch_.op_of_node[{link.correlation_id, link.graph_node_id}] = o;
      } else {
        op_of_corr.Emplace(link.correlation_id, o);
      }
    }
  }

  void IndexCounters() {
    FlatIndex& counters_of = scratch_.counters_of;
    counters_of.Reset(s_.counters().size());
    for (size_t i = 0; i < s_.counters().size(); ++i) {
      counters_of.Emplace(s_.counters()[i].correlation_id,
                          static_cast<int>(i));
    }
    scratch_.counters_used.assign(s_.counters().size(), 0);
  }

  // Metrics grouped by correlation id: metric_order sorted by it, and the
  // first position of each id indexed.
  void IndexMetrics() {
    const auto& metrics = s_.metrics();
    FlatIndex& metrics_of = scratch_.metrics_of;
    metrics_of.Reset(metrics.size());
    std::vector<int>& order = out_.metric_order;
    order.resize(metrics.size());
    for (size_t i = 0; i < metrics.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (metrics[a].correlation_id != metrics[b].correlation_id) {
        return metrics[a].correlation_id < metrics[b].correlation_id;
      }
      return metrics[a].graph_node_id < metrics[b].graph_node_id;
    });
    for (size_t p = 0; p < order.size(); ++p) {
      if (p == 0 || metrics[order[p]].correlation_id !=
                        metrics[order[p - 1]].correlation_id) {
        metrics_of.Emplace(metrics[order[p]].correlation_id,
                           static_cast<int>(p));
      }
    }
  }

  int NameIndex(uint64_t iid) {
    auto it = name_of_.find(iid);
    if (it != name_of_.end()) return it->second;
    NameInfo info;
    const std::string* str = s_.String(iid);
    if (str == nullptr) {
      if (iid != 0) ++stats_[ImportStat::k_unresolved_strings];
      info.name = "iid:" + std::to_string(iid);
      info.demangled = info.name;
      info.family = info.name;
    } else {
      info.name = *str;
      info.demangled = Demangle(*str);
      info.family = KernelFamily(*str);
    }
    out_.names.push_back(std::move(info));
    const int idx = static_cast<int>(out_.names.size()) - 1;
    name_of_.emplace(iid, idx);
    return idx;
  }

  // Makes kernel `i` the carrier of a call or op when it is the longest.
  void ElectCarrier(int* carrier, size_t i) {
    const auto& kernels = s_.kernels();
    const KernelRecord& k = kernels[i];
    const uint64_t d = k.end_ns - std::min(k.end_ns, k.start_ns);
    if (*carrier < 0) {
      *carrier = static_cast<int>(i);
      return;
    }
    const KernelRecord& c = kernels[*carrier];
    if (d > c.end_ns - std::min(c.end_ns, c.start_ns)) {
      *carrier = static_cast<int>(i);
    }
  }

  void JoinKernels() {
    const auto& kernels = s_.kernels();
    out_.kernels.resize(kernels.size());
    // Longest kernel of each GEMM call carries the call's analytic numbers.
    scratch_.gemm_carrier.assign(out_.gemms.size(), -1);
    scratch_.op_carrier.assign(out_.ops.size(), -1);
    for (size_t i = 0; i < kernels.size(); ++i) {
      const KernelRecord& k = kernels[i];
      JoinedKernel& jk = out_.kernels[i];
      jk.kernel = &k;
      jk.name = NameIndex(k.name_iid);
      const int l = scratch_.launch_of.Find(k.correlation_id);
      if (l >= 0) {
        jk.launch = &s_.launches()[l];
        scratch_.launch_used[l] = 1;
      } else {
        ++stats_.unmatched[wire::enums::kRecordKernel];
      }
      // A graph node linked on its own takes its call or operator before
      // anything linked to its launch as a whole.
      int node_op = -1;
      if (k.graph_node_id != 0 && (!scratch_.gemm_of_node.empty() ||
                                   !scratch_.op_of_node.empty())) {
        const std::pair<uint64_t, uint64_t> key{k.correlation_id,
                                                k.graph_node_id};
        auto g = scratch_.gemm_of_node.find(key);
        if (g != scratch_.gemm_of_node.end()) jk.gemm = g->second;
        auto o = scratch_.op_of_node.find(key);
        if (o != scratch_.op_of_node.end()) node_op = o->second;
      }
      if (jk.gemm < 0 && node_op < 0 && jk.launch &&
          jk.launch->gemm_call_id != 0) {
        jk.gemm = scratch_.gemm_of_call.Find(jk.launch->gemm_call_id);
      }
      if (jk.gemm < 0 && node_op < 0 && !scratch_.gemm_of_corr.empty()) {
        jk.gemm = scratch_.gemm_of_corr.Find(k.correlation_id);
      }
      if (jk.gemm >= 0) {
        ++out_.gemms[jk.gemm].kernel_count;
        ElectCarrier(&scratch_.gemm_carrier[jk.gemm], i);
      } else {
        jk.op = node_op;
        if (jk.op < 0 && !scratch_.op_of_corr.empty()) {
          jk.op = scratch_.op_of_corr.Find(k.correlation_id);
        }
        if (jk.op >= 0) {
          ++out_.ops[jk.op].kernel_count;
          ElectCarrier(&scratch_.op_carrier[jk.op], i);
        }
      }
      if (jk.gemm < 0 && jk.op < 0) ++out_.names[jk.name].kernels_without_op;
      if (jk.launch && jk.launch->nvtx_range_id != 0) {
        jk.nvtx_path = nvtx_.Path(jk.launch->nvtx_range_id);
        if (jk.nvtx_path < 0) ++stats_[ImportStat::k_unmatched_nvtx_refs];
      }
      if (!scratch_.counters_of.empty()) {
        const int c = scratch_.counters_of.Find(k.correlation_id);
        if (c >= 0) {
          jk.counters = &s_.counters()[c];
          scratch_.counters_used[c] = 1;
        }
      }
      if (!scratch_.metrics_of.empty()) {
        const int m = scratch_.metrics_of.Find(k.correlation_id);
        if (m >= 0) {
          // The correlation's metrics, or within them, when they are of
          // graph nodes, this kernel's node's.
          const auto& metrics = s_.metrics();
          const std::vector<int>& order = out_.metric_order;
          // Sorted by (correlation, node): binary searches, as a graph
          // launch may hold many nodes' metrics.
          const auto first = order.begin() + m;
          auto last = std::partition_point(first, order.end(), [&](int i) {
            return metrics[i].correlation_id == k.correlation_id;
          });
          auto begin = first;
          if (metrics[*first].graph_node_id != 0) {
            begin = std::partition_point(first, last, [&](int i) {
              return metrics[i].graph_node_id < k.graph_node_id;
            });
            last = std::partition_point(begin, last, [&](int i) {
              return metrics[i].graph_node_id == k.graph_node_id;
            });
          }
          jk.metrics_begin = static_cast<int>(begin - order.begin());
          jk.metrics_end = static_cast<int>(last - order.begin());
        }
      }
    }
  }

  // Analytic figures of a call or op go to its carrier when nothing better
  // (counters) is known.
  void ApplyAnalytic(KernelFacts* f, uint64_t flops, Precision precision,
                     uint64_t min_bytes) {
    if (f->flops_source == Source::kNone && flops > 0 &&
        precision != Precision::kUnknown) {
      f->flops[static_cast<int>(precision)] = flops;
      f->flops_source = Source::kAnalytic;
      out_.any_analytic = true;
    }
    if (f->bytes_source == Source::kNone && min_bytes > 0) {
      f->dram_bytes = min_bytes;
      f->bytes_source = Source::kAnalytic;
    }
  }

  // Each kernel's duration and figures: its counters', else the analytic
  // ones of the call or op it carries. (It is annotated when its row is
  // emitted: JoinedSession::AnnotationOf.)
  void FillFacts() {
    for (size_t i = 0; i < out_.kernels.size(); ++i) {
      JoinedKernel& jk = out_.kernels[i];
      KernelFacts& f = jk.facts;
      const KernelRecord& k = *jk.kernel;
      f.duration_ns = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
      if (jk.counters != nullptr && f.duration_ns == 0) {
        // No activity timestamps (a replayed kernel): the counted GPU time.
        f.duration_ns = jk.counters->gpu_time_ns;
      }
      if (jk.counters != nullptr) {
        if (jk.counters->has_dram_bytes) {
          f.dram_bytes =
              jk.counters->dram_read_bytes + jk.counters->dram_write_bytes;
          f.bytes_source = Source::kCounters;
        }
        if (jk.counters->has_flops) {
          f.flops = jk.counters->flops;
          f.flops_source = Source::kCounters;
        }
        out_.any_counters = true;
      }
      const int self = static_cast<int>(i);
      if (jk.gemm >= 0 && scratch_.gemm_carrier[jk.gemm] == self) {
        const JoinedGemm& g = out_.gemms[jk.gemm];
        ApplyAnalytic(&f, g.flops, g.precision, g.min_bytes);
      } else if (jk.op >= 0 && scratch_.op_carrier[jk.op] == self) {
        const OpRecord& o = *out_.ops[jk.op].op;
        const int p = o.precision;
        ApplyAnalytic(&f, o.flops,
                      p > 0 && p < kNumPrecisions ? static_cast<Precision>(p)
                                                  : Precision::kUnknown,
                      o.min_bytes);
      }
    }
  }

  void JoinCopies() {
    const auto& copies = s_.memcpys();
    out_.memcpys.resize(copies.size());
    for (size_t i = 0; i < copies.size(); ++i) {
      JoinedMemcpy& jm = out_.memcpys[i];
      jm.memcpy = &copies[i];
      const int l = scratch_.launch_of.Find(copies[i].correlation_id);
      if (l >= 0) {
        jm.launch = &s_.launches()[l];
        scratch_.launch_used[l] = 1;
        if (jm.launch->nvtx_range_id != 0) {
          jm.nvtx_path = nvtx_.Path(jm.launch->nvtx_range_id);
        }
      } else {
        ++stats_.unmatched[wire::enums::kRecordMemcpy];
      }
    }
  }

  // False when the stop flag ended it.
  bool JoinRanges() {
    out_.nvtx.resize(s_.nvtx_ranges().size());
    for (size_t i = 0; i < s_.nvtx_ranges().size(); ++i) {
      if (stop_ != nullptr && (i & 0xffff) == 0 && stop_->load()) {
        return false;
      }
      const NvtxRecord& r = s_.nvtx_ranges()[i];
      JoinedNvtx& jn = out_.nvtx[i];
      jn.range = &r;
      const std::string* name = s_.String(r.name_iid);
      if (name) {
        jn.name = *name;
      } else if (r.name_iid != 0) {
        ++stats_[ImportStat::k_unresolved_strings];
      }
      if (r.domain_iid != 0) {
        const std::string* d = s_.String(r.domain_iid);
        if (d) jn.domain = *d;
      }
      jn.path = nvtx_.Path(r.range_id);
    }
    return true;
  }

  void CountLeftovers() {
    for (char used : scratch_.launch_used) {
      if (!used) ++stats_.unmatched[wire::enums::kRecordLaunch];
    }
    for (char used : scratch_.counters_used) {
      if (!used) ++stats_.unmatched[wire::enums::kRecordCounters];
    }
    for (const JoinedGemm& g : out_.gemms) {
      if (g.kernel_count == 0) ++stats_.unmatched[wire::enums::kRecordGemm];
    }
  }

  void LabelSteps() {
    const auto& kernels = s_.kernels();
    const auto& copies = s_.memcpys();
    PhaseInput& pin = scratch_.phase_input;
    pin.kernels.assign(kernels.size(), {});
    for (size_t i = 0; i < kernels.size(); ++i) {
      const JoinedKernel& jk = out_.kernels[i];
      auto& pk = pin.kernels[i];
      pk.start_ns = jk.kernel->start_ns;
      pk.end_ns = jk.kernel->end_ns;
      if (jk.launch) {
        pk.host_ns = jk.launch->api_start_ns;
        if (jk.launch->nvtx_range_id) {
          pk.nvtx_root = nvtx_.Root(jk.launch->nvtx_range_id);
          pk.serving_step = nvtx_.Step(jk.launch->nvtx_range_id);
        }
      }
      pk.gemm = jk.gemm;
    }
    pin.copies.assign(copies.size(), {});
    for (size_t i = 0; i < copies.size(); ++i) {
      pin.copies[i] = {copies[i].start_ns, copies[i].end_ns, copies[i].bytes,
                       copies[i].kind == wire::enums::kCopyDtoH};
    }
    pin.gemms.assign(out_.gemms.size(), {});
    for (size_t i = 0; i < out_.gemms.size(); ++i) {
      const GemmRecord& g = *out_.gemms[i].gemm;
      pin.gemms[i] = {g.m, g.n, g.a_ptr, g.b_ptr, g.weight_operand, g.k,
                     g.batch};
    }
    pin.prev_step_tokens = s_.flushed().last_step_tokens;
    PhaseResult pr = DetectPhases(pin, phases_);
    for (size_t i = 0; i < kernels.size(); ++i) {
      out_.kernels[i].step = pr.kernel_step[i];
    }
    for (size_t i = 0; i < copies.size(); ++i) {
      out_.memcpys[i].step = pr.copy_step[i];
    }
    for (size_t i = 0; i < out_.gemms.size(); ++i) {
      out_.gemms[i].weight = pr.gemm_weight[i];
      out_.gemms[i].token_count = pr.gemm_tokens[i];
      out_.gemms[i].step = pr.gemm_step[i];
    }
    out_.steps = std::move(pr.steps);
  }

  const std::atomic<bool>* stop_;  // JoinInto's
  const Session& s_;
  ImportStats& stats_;
  const Roofs& roofs_;
  const AnnotateOptions& annotate_;
  const PhaseOptions& phases_;
  JoinedSession& out_;
  JoinScratch& scratch_;
  NvtxPaths nvtx_;
  std::unordered_map<uint64_t, int> name_of_;
};

}  // namespace

void JoinInto(Session* session, const Roofs& roofs,
              const AnnotateOptions& annotate_options,
              const PhaseOptions& phase_options, JoinedSession* joined,
              const std::atomic<bool>* stop) {
  Joiner(session, roofs, annotate_options, phase_options, joined, stop).Run();
}

}  // namespace rooftrace
