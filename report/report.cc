#include "report/report.h"

#include <array>
#include <cmath>
#include <cstdio>

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "model/kernel_names.h"
#include "model/roof_model.h"
#include "model/ops.h"
#include "pipeline/records.h"
#include "report/text_util.h"
#include "report/time_spread.h"

namespace rooftrace {
namespace {

// The group of kernels no operator launched (--by op, --by category).
constexpr std::string_view kNoOperator = "(no operator)";

// Bits of a group's FLOP / byte sources.
constexpr int kSourceCounters = 1;
constexpr int kSourceAnalytic = 2;
constexpr int kSourceNone = 4;
constexpr int kSourceInherited = 8;
constexpr int kSourceSampled = 16;  // 'counters (sampled k of n, ...)'
constexpr int kSourcePmSampled = 32;  // 'pm-sampling (exact | attributed ...)'

int SourceBit(std::string_view s) {
  if (s == "counters") return kSourceCounters;
  if (IsSampledSourceName(s)) return kSourceSampled;
  if (IsPmSampledSourceName(s)) return kSourcePmSampled;
  if (s == "analytic") return kSourceAnalytic;
  if (s == "inherited") return kSourceInherited;
  return kSourceNone;
}

std::string SourceName(int bits) {
  std::string out;
  for (const auto& [bit, name] :
       {std::pair<int, const char*>{kSourceCounters, "counters"},
        {kSourceSampled, "sampled"},
        {kSourcePmSampled, "pm-sampling"},
        {kSourceAnalytic, "analytic"},
        {kSourceInherited, "inherited"}}) {
    if (!(bits & bit)) continue;
    if (!out.empty()) out += '+';
    out += name;
  }
  if (out.empty()) out = "none";
  return out;
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>()(s);
  }
};

// What every table a kernel is added to needs of it besides the row,
// worked out once per kernel.
struct KernelClass {
  std::optional<double> fraction;  // of its roof
  bool above_roof = false;         // AboveRoof(fraction)
  int phase = 0;                   // PhaseIndex
  int bound = 0;                   // BoundIndex
  int flops_source = 0, bytes_source = 0;  // SourceBit
  bool in_op = false;                      // InCostedOp
  // IsCollectiveKernel, for a kernel row (a group of launches has no
  // collective calls: false).
  bool collective = false;
};

// Sums of one group; Finish() derives the row.
struct Accumulator {
  std::string name;
  std::string family;
  std::string shape;
  // A catch-all group ("(no operator)"): kernels of unrelated work, so no
  // one kernel's shape or precision speaks for it.
  bool catch_all = false;
  int64_t count = 0;
  int64_t time_ns = 0;
  double flops = 0;
  int64_t flops_n = 0;
  int64_t flops_time_ns = 0;
  double bytes = 0;
  int64_t bytes_n = 0;
  int64_t bytes_time_ns = 0;
  double ai_flops = 0;  // over kernels with both known
  double ai_bytes = 0;
  double fraction_weighted = 0;  // sum of fraction * t
  int64_t fraction_time_ns = 0;
  int64_t above_roof_count = 0;  // kernels with a fraction above 1
  int64_t above_roof_ns = 0;
  int64_t in_op_count = 0;  // InCostedOp kernels, and their first op
  std::string in_op;
  std::array<int64_t, kNumPhases> phase_ns{};
  std::array<int64_t, kNumBounds> bound_ns{};
  // Launch counts break ties (zero-length kernels still have a phase).
  std::array<int64_t, kNumPhases> phase_n{};
  std::array<int64_t, kNumBounds> bound_n{};
  std::vector<std::pair<std::string, double>> precision_flops;
  int flops_sources = 0;
  int bytes_sources = 0;
  // PM-sampled DRAM bytes of the group and the part split samples decided
  // (each kernel's bytes times the error its source states).
  double pm_bytes = 0, pm_split_bytes = 0;
  TimeSpread spread;  // median, extremes, standard deviation
  // Time per GEMM shape, and the token count its first kernel saw (0:
  // none); GEMM families have few shapes, so a linear scan.
  struct ShapeTime {
    std::string name;
    int64_t ns = 0;
    int64_t tokens = 0;
  };
  std::vector<ShapeTime> shape_ns;

  void AddShape(std::string_view s, int64_t t, std::optional<int64_t> tokens) {
    if (s.empty()) return;
    const int64_t tok = tokens && *tokens > 0 ? *tokens : 0;
    for (ShapeTime& st : shape_ns) {
      if (st.name == s) {
        st.ns += t;
        if (st.tokens == 0) st.tokens = tok;
        return;
      }
    }
    shape_ns.push_back({std::string(s), t, tok});
  }

  // Median, extremes and standard deviation of the group's times into `r`.
  void FinishSpread(GroupRow* r) const {
    if (spread.count() == 0) return;
    const TimeSpread::Figures f = spread.Finish();
    r->median_ns = f.median_ns;
    r->min_ns = f.min_ns;
    r->max_ns = f.max_ns;
    r->stddev_ns = f.stddev_ns;
  }

  // The shape holding most time (ties: the smaller name), share and count.
  void FinishShapes(GroupRow* r) const {
    if (shape_ns.empty()) return;
    const ShapeTime* best = &shape_ns[0];
    for (const ShapeTime& s : shape_ns) {
      if (s.ns > best->ns || (s.ns == best->ns && s.name < best->name)) {
        best = &s;
      }
    }
    r->shape = best->name;
    if (best->tokens > 0) {
      r->framework_shape = FrameworkGemmShape(best->name, best->tokens);
    }
    r->shape_count = static_cast<int64_t>(shape_ns.size());
    r->shape_share = time_ns > 0 ? static_cast<double>(best->ns) /
                                       static_cast<double>(time_ns)
                                 : 1.0;
  }

  // FLOPs of a precision class (none without a class or FLOPs).
  void AddPrecisionFlops(std::string_view precision, double f) {
    if (precision.empty() || f <= 0) return;
    for (auto& [p, sum] : precision_flops) {
      if (p == precision) {
        sum += f;
        return;
      }
    }
    precision_flops.emplace_back(std::string(precision), f);
  }

  void Add(const KernelRow& k, const KernelClass& c) {
    ++count;
    const int64_t t = k.duration_ns;
    time_ns += t;
    spread.Add(t);
    AddShape(k.shape, t, k.token_count);
    if (k.flops) {
      flops += *k.flops;
      ++flops_n;
      flops_time_ns += t;
      AddPrecisionFlops(k.precision, static_cast<double>(*k.flops));
    }
    if (k.dram_bytes) {
      bytes += *k.dram_bytes;
      ++bytes_n;
      bytes_time_ns += t;
      if (c.bytes_source == kSourcePmSampled) {
        pm_bytes += static_cast<double>(*k.dram_bytes);
        pm_split_bytes += static_cast<double>(*k.dram_bytes) *
                          PmSampledErrorFraction(k.bytes_source);
      }
    }
    if (k.flops && k.dram_bytes) {
      ai_flops += *k.flops;
      ai_bytes += *k.dram_bytes;
    }
    if (c.fraction) {
      fraction_weighted += *c.fraction * static_cast<double>(t);
      fraction_time_ns += t;
    }
    if (c.above_roof) {
      ++above_roof_count;
      above_roof_ns += t;
    }
    if (c.in_op) {
      if (in_op_count++ == 0) in_op = std::string(k.op);
    }
    phase_ns[c.phase] += t;
    bound_ns[c.bound] += t;
    ++phase_n[c.phase];
    ++bound_n[c.bound];
    flops_sources |= c.flops_source;
    bytes_sources |= c.bytes_source;
  }

  // A stored group of launches (kernel_aggregates) at once: the same sums
  // as adding each launch, except the time spread (median, extremes and
  // deviation need every launch) and the PM-sampled error share.
  void AddAggregate(const KernelAggregateRow& a, const KernelClass& c) {
    count += a.launches;
    time_ns += a.time_ns;
    AddShape(a.shape, a.time_ns, a.token_count);
    if (a.flops_launches > 0) {
      flops += a.flops;
      flops_n += a.flops_launches;
      flops_time_ns += a.flops_time_ns;
      AddPrecisionFlops(a.precision, a.flops);
    }
    if (a.bytes_launches > 0) {
      bytes += a.dram_bytes;
      bytes_n += a.bytes_launches;
      bytes_time_ns += a.bytes_time_ns;
      if (c.bytes_source == kSourcePmSampled) pm_bytes += a.dram_bytes;
    }
    ai_flops += a.ai_flops;
    ai_bytes += a.ai_bytes;
    fraction_weighted += a.fraction_weighted;
    fraction_time_ns += a.fraction_time_ns;
    above_roof_count += a.above_roof_launches;
    above_roof_ns += a.above_roof_ns;
    phase_ns[c.phase] += a.time_ns;
    bound_ns[c.bound] += a.time_ns;
    phase_n[c.phase] += a.launches;
    bound_n[c.bound] += a.launches;
    flops_sources |= c.flops_source;
    bytes_sources |= c.bytes_source;
  }

  GroupRow Finish(const std::string& key, int64_t run_total_ns) const {
    GroupRow r;
    r.key = key;
    r.name = name;
    r.family = family;
    r.shape = shape;
    r.count = count;
    r.total_ns = time_ns;
    r.mean_ns = count ? static_cast<double>(time_ns) / count : 0;
    FinishSpread(&r);
    FinishShapes(&r);
    r.time_share = run_total_ns > 0
                       ? static_cast<double>(time_ns) / run_total_ns
                       : 0;
    if (flops_n) r.flops = flops;
    if (bytes_n) r.bytes = bytes;
    if (ai_bytes > 0) r.ai = ai_flops / ai_bytes;
    if (flops_n && flops_time_ns > 0) {
      r.achieved_flops_per_s = flops / (flops_time_ns * 1e-9);
    }
    if (bytes_n && bytes_time_ns > 0) {
      r.achieved_bytes_per_s = bytes / (bytes_time_ns * 1e-9);
    }
    if (fraction_time_ns > 0) {
      r.fraction_of_roof = fraction_weighted / fraction_time_ns;
    }
    r.above_roof_count = above_roof_count;
    r.above_roof_ns = above_roof_ns;
    r.in_op_count = in_op_count;
    r.in_op = in_op;
    double best = -1;
    for (const auto& [p, f] : precision_flops) {
      if (f > best) {
        best = f;
        r.precision = p;
      }
    }
    int best_phase = 0;
    for (int i = 1; i < kNumPhases; ++i) {
      if (phase_ns[i] > phase_ns[best_phase] ||
          (phase_ns[i] == phase_ns[best_phase] && phase_n[i] > phase_n[best_phase])) {
        best_phase = i;
      }
    }
    r.phase = kPhaseNames[best_phase];
    r.phase_share = time_ns > 0
                        ? static_cast<double>(phase_ns[best_phase]) / time_ns
                        : static_cast<double>(phase_n[best_phase]) / count;
    r.phase_time_ns = phase_ns;
    int best_bound = 0;
    for (int i = 1; i < kNumBounds; ++i) {
      if (bound_ns[i] > bound_ns[best_bound] ||
          (bound_ns[i] == bound_ns[best_bound] && bound_n[i] > bound_n[best_bound])) {
        best_bound = i;
      }
    }
    r.bound = kBoundNames[best_bound];
    if (catch_all) {
      r.shape.clear();
      r.framework_shape.clear();
      r.shape_share = 0;
      r.precision.clear();
    }
    r.flops_source = SourceName(flops_sources);
    r.bytes_source = SourceName(bytes_sources);
    if (bytes_sources & kSourcePmSampled) {
      // The group's PM-sampled bytes, with their attribution error.
      char pm[64];
      if (pm_split_bytes > 0 && pm_bytes > 0) {
        std::snprintf(pm, sizeof pm, "pm-sampling (attributed, error %.1f%%)",
                      100.0 * pm_split_bytes / pm_bytes);
      } else {
        std::snprintf(pm, sizeof pm, "pm-sampling (exact)");
      }
      const size_t at = r.bytes_source.find("pm-sampling");
      r.bytes_source.replace(at, std::string_view("pm-sampling").size(), pm);
    }
    return r;
  }
};

using GroupMap = std::unordered_map<std::string, Accumulator, StringHash,
                                    std::equal_to<>>;

// Family of a kernel row: the stored one, else derived (cached per name, so
// 10 million rows of the same kernels demangle a handful of times).
class FamilyCache {
 public:
  std::string_view Get(const KernelRow& k) {
    if (!k.family.empty()) return k.family;
    auto it = cache_.find(k.name);
    if (it == cache_.end()) {
      it = cache_.emplace(std::string(k.name), KernelFamily(k.name)).first;
    }
    return it->second;
  }

 private:
  std::unordered_map<std::string, std::string, StringHash, std::equal_to<>>
      cache_;
};

Accumulator& Lookup(GroupMap& map, std::string_view key, bool* inserted) {
  auto it = map.find(key);
  *inserted = it == map.end();
  if (*inserted) it = map.emplace(std::string(key), Accumulator()).first;
  return it->second;
}

// Most time first; equal times by key (layer.2 before layer.10), then in
// the map's order. The rows are sorted by index and moved once: a GroupRow
// is large, and swapping rows was a tenth of `history`'s time (1,000
// reports of 200 groups).
std::vector<GroupRow> SortedRows(const GroupMap& map, int64_t total_ns) {
  std::vector<GroupRow> rows;
  rows.reserve(map.size());
  for (const auto& [key, acc] : map) rows.push_back(acc.Finish(key, total_ns));
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&rows](size_t a, size_t b) {
    const GroupRow& x = rows[a];
    const GroupRow& y = rows[b];
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    return NaturalLess(x.key, y.key);
  });
  std::vector<GroupRow> sorted;
  sorted.reserve(rows.size());
  for (size_t i : order) sorted.push_back(std::move(rows[i]));
  return sorted;
}

}  // namespace

std::string AboveRoofNote(const GroupRow& g) {
  if (g.above_roof_count <= 0) return "";
  std::string note = "model exceeds roof: figures suspect";
  if (g.above_roof_count < g.count) {
    note += " (" + std::to_string(g.above_roof_count) + " of " +
            std::to_string(g.count) + " kernels)";
  }
  return note;
}

bool InCostedOp(const KernelRow& k, bool collective) {
  return !collective && !k.flops && !k.dram_bytes && !k.op.empty() &&
         !k.shape.empty();
}

std::string GroupNote(const GroupRow& g) {
  std::string note = AboveRoofNote(g);
  if (g.in_op_count <= 0) return note;
  if (!note.empty()) note += "; ";
  note += "in op " + g.in_op;
  if (g.in_op_count < g.count) {
    note += " (" + std::to_string(g.in_op_count) + " of " +
            std::to_string(g.count) + " kernels)";
  }
  return note;
}

std::string ShapeLabel(const GroupRow& g) {
  if (g.shape.empty() || g.shape_count <= 1) return g.shape;
  char buf[64];
  std::snprintf(buf, sizeof(buf), " (%.0f%%, %lld shapes)",
                g.shape_share * 100, static_cast<long long>(g.shape_count));
  return g.shape + buf;
}

const char* GroupByName(GroupBy g) {
  switch (g) {
    case GroupBy::kKernel: return "kernel";
    case GroupBy::kFamily: return "family";
    case GroupBy::kPhase: return "phase";
    case GroupBy::kNvtx: return "nvtx";
    case GroupBy::kStep: return "step";
    case GroupBy::kFamilyShape: return "family+shape";
    case GroupBy::kOp: return "op";
    case GroupBy::kCategory: return "category";
  }
  return "family";
}

std::optional<GroupBy> GroupByFromName(std::string_view name) {
  for (GroupBy g : {GroupBy::kKernel, GroupBy::kFamily, GroupBy::kPhase,
                    GroupBy::kNvtx, GroupBy::kStep, GroupBy::kFamilyShape,
                    GroupBy::kOp, GroupBy::kCategory}) {
    if (name == GroupByName(g)) return g;
  }
  return std::nullopt;
}

// The names as views: comparing a view with a `const char*` measures the
// C string every time, and these run several times per kernel.
template <size_t N>
constexpr std::array<std::string_view, N> Views(const char* const (&names)[N]) {
  std::array<std::string_view, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = names[i];
  return out;
}
constexpr auto kPhaseViews = Views(kPhaseNames);
constexpr auto kBoundViews = Views(kBoundNames);

int PhaseIndex(std::string_view phase) {
  for (int i = 0; i < kNumPhases - 1; ++i) {
    if (phase == kPhaseViews[i]) return i;
  }
  return kNumPhases - 1;
}

int BoundIndex(std::string_view bound) {
  for (int i = 0; i < kNumBounds - 1; ++i) {
    if (bound == kBoundViews[i]) return i;
  }
  return kNumBounds - 1;
}

void FillReportHeader(const RunRow& run, std::string device_name,
                      const std::vector<RoofRow>& roof_rows,
                      std::vector<std::pair<std::string, int64_t>> import_stats,
                      const ReportOptions& options, ReportHeader* h) {
  h->run = run;
  h->device_name = std::move(device_name);
  if (h->device_name.empty()) h->device_name = run.device_name;
  if (options.reannotate) {
    h->roofs = *options.reannotate;
    h->reannotated = true;
    h->device_mismatch = RoofDeviceMismatch(h->roofs, h->device_name);
  } else {
    h->roofs = RoofTableFromStore(roof_rows, run.roof_source);
  }
  AddDatasheetLink(h->device_name, &h->roofs);
  h->import_stats = std::move(import_stats);
  h->dropped = 0;
  h->unmatched = 0;
  for (const auto& [name, value] : h->import_stats) {
    if (name.rfind("producer_dropped_", 0) == 0) h->dropped += value;
    if (name.rfind("unmatched_", 0) == 0) h->unmatched += value;
  }
}

struct ReportBuilder::State {
  // A family's accumulators, found with one lookup per kernel instead of
  // one per table: its group when grouping by family, and its (family,
  // phase) points. The pointers stay valid: the maps' nodes do not move.
  struct FamilySlots {
    Accumulator* group = nullptr;
    // [phase]: the kernels within their roof; [kNumPhases + phase]: those
    // above it, a point of their own.
    std::array<Accumulator*, 2 * kNumPhases> by_phase{};
  };
  std::array<int64_t, kNumPhases> steps{};
  GroupMap groups;
  GroupMap families;
  std::array<Accumulator, kNumPhases> phases;  // by PhaseIndex
  FamilyCache family_cache;
  std::unordered_map<std::string, FamilySlots, StringHash, std::equal_to<>>
      family_slots;
  std::string key_buf;
  std::string family_key;
  BusyTimeline busy;
  // The same timeline without copies, and without copies and collectives:
  // busy minus the first is the copies' exposed time; the first minus the
  // second the collectives'. Most runs have no collective: compute_busy
  // is kept only from the first one on (any_comm_kernel), started as a
  // copy of kernels_busy, which until then held the same intervals.
  BusyTimeline kernels_busy, compute_busy;
  // Collective kernels by (session, correlation, graph node) until Finish: one small
  // entry per collective kernel, since a store gives its metrics apart
  // from its row.
  struct CommKernel {
    std::string shape;
    int64_t duration_ns = -1;  // -1: its row not seen
    double bytes = 0, algbw = 0, busbw = -1;
    // Its group's key when grouping by kernel or family (the group row
    // then shows the link roof's fraction and bound); empty otherwise.
    std::string group;
  };
  // (session, correlation, graph node): a graph launch's kernels share
  // its correlation.
  using CommKey = std::tuple<int64_t, int64_t, int64_t>;
  struct CommKeyHash {
    size_t operator()(const CommKey& k) const {
      return (std::hash<int64_t>()(std::get<0>(k)) * 31 +
              std::hash<int64_t>()(std::get<1>(k))) * 31 +
             std::hash<int64_t>()(std::get<2>(k));
    }
  };
  std::unordered_map<CommKey, CommKernel, CommKeyHash> comm_kernels;
  bool any_comm_kernel = false;
};

namespace {

// A kernel row of a collective: named by NCCL, or with the shape a source
// gives a collective ("all_reduce bf16 bytes=... ranks=...").
bool IsCollectiveKernel(const KernelRow& k) {
  if (IsCommunicationKernelName(k.name)) return true;
  const std::string_view word = k.shape.substr(0, k.shape.find(' '));
  return !word.empty() && CollectiveFromName(word) != Collective::kUnknown;
}

// The category of a kernel row: its operator's (model/ops.h OpCategory);
// without one, a GEMM call's kernels are GEMM and collectives are
// communication, the rest "(no operator)".
std::string_view KernelCategory(const KernelRow& k) {
  if (IsCollectiveKernel(k)) return "communication";
  if (!k.op.empty()) return OpCategory(k.op);
  if (k.gemm_call_id) return "GEMM";
  return kNoOperator;
}

}  // namespace

std::string FrameworkGemmShape(std::string_view cublas_shape,
                               int64_t tokens) {
  int64_t v[4] = {0, 0, 0, 1};  // m, n, k, batch
  const char* keys[4] = {"m=", "n=", "k=", "batch="};
  size_t at = 0;
  for (int i = 0; i < 4; ++i) {
    const std::string_view key = keys[i];
    if (cublas_shape.substr(at, key.size()) != key) {
      if (i == 3) break;  // batch is optional
      return "";
    }
    at += key.size();
    int64_t n = 0;
    size_t digits = 0;
    while (at < cublas_shape.size() && cublas_shape[at] >= '0' &&
           cublas_shape[at] <= '9' && digits < 18) {
      n = n * 10 + (cublas_shape[at++] - '0');
      ++digits;
    }
    if (digits == 0) return "";
    v[i] = n;
    if (at < cublas_shape.size() && cublas_shape[at] == ' ') ++at;
  }
  if (at != cublas_shape.size()) return "";
  int64_t out = 0;
  if (tokens == v[1]) {
    out = v[0];  // weight is op(A): C = W x, tokens along n
  } else if (tokens == v[0]) {
    out = v[1];  // weight is op(B): tokens along m
  } else {
    return "";
  }
  return (v[3] > 1 ? "batch=" + std::to_string(v[3]) + " " : std::string()) +
         "tokens=" + std::to_string(tokens) + " out=" + std::to_string(out) +
         " in=" + std::to_string(v[2]);
}

ReportBuilder::ReportBuilder(const ReportOptions& options)
    : options_(options), state_(std::make_unique<State>()) {
  report_.group_by = options.group_by;
}

ReportBuilder::~ReportBuilder() = default;

void ReportBuilder::AddStep(std::string_view phase) {
  ++state_->steps[PhaseIndex(phase)];
}

void ReportBuilder::AddCopy(const MemcpyRow& m) {
  state_->busy.AddCopy(m.device_id.value_or(0), m.start_ns.value_or(0),
                       m.end_ns.value_or(0));
}

void ReportBuilder::EndBatch() {
  state_->busy.EndBatch();
  state_->kernels_busy.EndBatch();
  if (state_->any_comm_kernel) state_->compute_busy.EndBatch();
}

void ReportBuilder::AddKernelMetric(const KernelMetricRow& m) {
  const std::string_view name = m.name;
  const bool bytes = name == kCollectiveMessageBytes;
  const bool algbw = name == kCollectiveAlgbw;
  const bool busbw = name == kCollectiveBusbw;
  if (!bytes && !algbw && !busbw) return;
  State::CommKernel& c =
      state_->comm_kernels[{m.session_id, m.correlation_id, m.graph_node_id}];
  if (bytes) c.bytes = m.value;
  if (algbw) c.algbw = m.value;
  if (busbw) c.busbw = m.value;
}

bool ReportBuilder::HasCollectiveKernels() const {
  return state_->any_comm_kernel;
}

void ReportBuilder::SetMeasuredSmClock(int64_t khz) {
  if (khz <= 0 || clock_set_ || !options_.reannotate) return;
  clock_set_ = true;
  options_.reannotate = ScaleRoofTableToClock(
      *options_.reannotate, static_cast<double>(khz) * 1e3);
}

void ReportBuilder::Add(const KernelRow& k) { AddOne(k, nullptr); }

void ReportBuilder::AddAggregate(const KernelAggregateRow& a) {
  // The group's launches as one kernel row for the grouping (its name,
  // shape, phase, operator); the sums come from `a`. Its gemm_call_id is
  // left unset as the store reader leaves a kernel's (ForEachKernel does
  // not read it), so that --by category puts a stored run's groups where
  // its kernels go.
  KernelRow k;
  k.run_id = a.run_id;
  k.name = a.name;
  k.demangled = a.demangled;
  k.family = a.family;
  k.shape = a.shape;
  k.token_count = a.token_count;
  k.phase = a.phase;
  k.op = a.op;
  k.precision = a.precision;
  k.bound = a.bound;
  k.flops_source = a.flops_source;
  k.bytes_source = a.bytes_source;
  k.duration_ns = a.time_ns;
  AddOne(k, &a);
}

void ReportBuilder::AddOne(const KernelRow& k, const KernelAggregateRow* a) {
  State& st = *state_;
  Report& report = report_;
  const ReportOptions& options = options_;
  // A group of launches has no times of its own: no busy timeline, no
  // collective calls, no duration buckets.
  if (a != nullptr) {
    KernelClass c;
    if (a->fraction_time_ns > 0) {
      c.fraction = a->fraction_weighted / static_cast<double>(a->fraction_time_ns);
    }
    c.above_roof = a->above_roof_launches > 0 &&
                   a->above_roof_launches == a->launches;
    c.phase = PhaseIndex(k.phase);
    c.bound = BoundIndex(k.bound);
    c.flops_source = SourceBit(k.flops_source);
    c.bytes_source = SourceBit(k.bytes_source);
    report.kernel_count += a->launches;
    report.total_ns += a->time_ns;
    report.kernels_with_flops += a->flops_launches;
    report.kernels_with_bytes += a->bytes_launches;
    // The launches with either figure: within a group both sources are
    // one each, so those with one are (nearly always) those with the other.
    report.ns_with_figures += std::max(a->flops_time_ns, a->bytes_time_ns);
    report.kernels_above_roof += a->above_roof_launches;
    report.ns_above_roof += a->above_roof_ns;
    AddToGroups(k, &c, a);
    return;
  }
  st.busy.AddKernel(k.device_id.value_or(0), k.start_ns.value_or(0),
                    k.end_ns.value_or(0));
  const bool collective = IsCollectiveKernel(k);
  if (collective && !st.any_comm_kernel) st.compute_busy = st.kernels_busy;
  st.kernels_busy.AddKernel(k.device_id.value_or(0), k.start_ns.value_or(0),
                            k.end_ns.value_or(0));
  if (!collective && st.any_comm_kernel) {
    st.compute_busy.AddKernel(k.device_id.value_or(0),
                              k.start_ns.value_or(0), k.end_ns.value_or(0));
  }
  if (collective) {
    State::CommKernel& ck =
        st.comm_kernels[{k.session_id, k.correlation_id.value_or(-1),
                         k.graph_node_id}];
    ck.shape = std::string(k.shape);
    ck.duration_ns = k.duration_ns;
    st.any_comm_kernel = true;
    if (k.start_ns && k.end_ns) {
      CollectiveCall call;
      call.key = !k.shape.empty()           ? std::string(k.shape)
                 : !k.family.empty()        ? std::string(k.family)
                                            : KernelFamily(k.name);
      call.start_ns = *k.start_ns;
      call.end_ns = *k.end_ns;
      report.collective_calls.push_back(std::move(call));
    }
  }
  KernelClass c;
  c.fraction = k.fraction_of_roof;
  std::string_view bound = k.bound;
  if (options.reannotate) {
    const KernelAnnotation a =
        AnnotateKernel(*options.reannotate, k.precision, k.flops,
                       k.flops_source, k.dram_bytes, k.bytes_source,
                       k.duration_ns);
    c.fraction = a.fraction_of_roof;
    bound = a.bound;
  }
  c.above_roof = AboveRoof(c.fraction);
  c.phase = PhaseIndex(k.phase);
  c.bound = BoundIndex(bound);
  c.flops_source = SourceBit(k.flops_source);
  c.bytes_source = SourceBit(k.bytes_source);
  c.in_op = InCostedOp(k, collective);
  c.collective = collective;
  ++report.kernel_count;
  report.total_ns += k.duration_ns;
  if (k.flops) ++report.kernels_with_flops;
  if (k.dram_bytes) ++report.kernels_with_bytes;
  if (k.flops || k.dram_bytes) report.ns_with_figures += k.duration_ns;
  if (c.in_op) report.ns_in_costed_op += k.duration_ns;
  if (c.above_roof) {
    ++report.kernels_above_roof;
    report.ns_above_roof += k.duration_ns;
  }
  {
    int b = kNumDurationBuckets - 1;
    while (b > 0 && k.duration_ns < kDurationBucketNs[b]) --b;
    ++report.durations[b].kernels;
    report.durations[b].time_ns += k.duration_ns;
  }

  AddToGroups(k, &c, nullptr);
}

void ReportBuilder::AddToGroups(const KernelRow& k, const void* kernel_class,
                                const KernelAggregateRow* a) {
  State& st = *state_;
  const ReportOptions& options = options_;
  const KernelClass& c = *static_cast<const KernelClass*>(kernel_class);
  auto put = [&](Accumulator& g) {
    if (a != nullptr) {
      g.AddAggregate(*a, c);
    } else {
      g.Add(k, c);
    }
  };
  std::string_view family = st.family_cache.Get(k);
  if (family.empty()) family = "(unnamed)";
  // A collective kernel is found again by its ids when its row is placed
  // on the link roof.
  if (c.collective && (options.group_by == GroupBy::kKernel ||
                       options.group_by == GroupBy::kFamily)) {
    st.comm_kernels[{k.session_id, k.correlation_id.value_or(-1),
                     k.graph_node_id}]
        .group = options.group_by == GroupBy::kFamily ? std::string(family)
                 : k.name.empty() ? std::string("(unnamed)")
                                  : std::string(k.name);
  }
  auto slot_it = st.family_slots.find(family);
  if (slot_it == st.family_slots.end()) {
    slot_it = st.family_slots.emplace(std::string(family), State::FamilySlots())
                  .first;
  }
  State::FamilySlots& slots = slot_it->second;
  bool inserted = false;
  Accumulator* group = nullptr;
  if (options.group_by == GroupBy::kFamily && slots.group != nullptr) {
    group = slots.group;  // the one lookup above found it
  } else {
    std::string_view key;
    std::string& key_buf = st.key_buf;
    switch (options.group_by) {
      case GroupBy::kKernel:
        key = k.name.empty() ? std::string_view("(unnamed)") : k.name;
        break;
      case GroupBy::kFamily: key = family; break;
      case GroupBy::kPhase: key = kPhaseNames[c.phase]; break;
      case GroupBy::kNvtx:
        key = k.nvtx_path.empty() ? std::string_view("(no range)")
                                  : k.nvtx_path;
        break;
      case GroupBy::kStep:
        key_buf = k.step_id ? std::to_string(*k.step_id) : "(no step)";
        key = key_buf;
        break;
      case GroupBy::kFamilyShape:
        key_buf.assign(family);
        key_buf += '|';
        key_buf.append(k.shape);
        key = key_buf;
        break;
      case GroupBy::kOp:
        key = k.op.empty() ? kNoOperator : k.op;
        break;
      case GroupBy::kCategory:
        key = KernelCategory(k);
        break;
    }
    Accumulator& g = Lookup(st.groups, key, &inserted);
    if (inserted) {
      g.family = std::string(family);
      g.shape = std::string(k.shape);
      g.catch_all = (options.group_by == GroupBy::kOp ||
                     options.group_by == GroupBy::kCategory) &&
                    key == kNoOperator;
      switch (options.group_by) {
        case GroupBy::kKernel:
          g.name = ShortKernelName(k.demangled.empty() ? key : k.demangled);
          break;
        case GroupBy::kFamily:
        case GroupBy::kFamilyShape:
          g.name = std::string(family);
          break;
        case GroupBy::kStep:
          g.name = k.step_id ? "step " + key_buf : key_buf;
          break;
        default:
          g.name = std::string(key);
      }
    }
    group = &g;
    if (options.group_by == GroupBy::kFamily) slots.group = group;
  }
  put(*group);
  if (options.with_families) {
    // One plot point per family and phase: prefill and decode launches of
    // one GEMM family sit at very different intensities. Kernels above
    // their roof are a point of their own, never averaged into the rest.
    Accumulator*& f =
        slots.by_phase[c.phase + (c.above_roof ? kNumPhases : 0)];
    if (f == nullptr) {
      const char* phase = kPhaseNames[c.phase];
      st.family_key.assign(family);
      st.family_key += '\x1f';
      st.family_key += phase;
      if (c.above_roof) st.family_key += "\x1f" "above roof";
      f = &Lookup(st.families, st.family_key, &inserted);
      if (inserted) {
        f->family = std::string(family);
        f->name = f->family + " (" + phase +
                  (c.above_roof ? ", above roof)" : ")");
      }
    }
    put(*f);
  }
  put(st.phases[c.phase]);
}

StatusOr<Report> ReportBuilder::Finish(const std::string& display_name) {
  State& st = *state_;
  Report report = std::move(report_);
  int64_t not_stored = 0;
  for (const auto& [name, value] : report.header.import_stats) {
    if (name == "kernels_not_stored") not_stored = value;
  }
  const RunRow& run = report.header.run;
  if (report.kernel_count == 0 && run.complete != 1 &&
      (not_stored > 0 || !run.complete.has_value())) {
    // A run that lost its kernels (a full disk), or whose writer never
    // finished: not a program without GPU work. Incomplete, not bad input.
    return Status(StatusCode::kResourceExhausted,
                  display_name + ": run " + std::to_string(run.run_id) +
                      " has no kernels and is INCOMPLETE (" +
                      (run.incomplete_reason.empty()
                           ? std::string("its writer never finished")
                           : run.incomplete_reason) +
                      "): its kernels were not stored; store the trace "
                      "again");
  }
  if (report.kernel_count == 0) {
    return InvalidArgument(display_name + ": run " +
                           std::to_string(report.header.run.run_id) +
                           " has no kernels (empty run); check that the "
                           "profiled program launched GPU work, or pick "
                           "another run with --run");
  }

  report.groups = SortedRows(st.groups, report.total_ns);
  if (options_.with_families) {
    report.families = SortedRows(st.families, report.total_ns);
    for (GroupRow& f : report.families) f.key = f.family;
  }
  if (options_.top > 0 && report.groups.size() > options_.top) {
    for (size_t i = options_.top; i < report.groups.size(); ++i) {
      ++report.groups_omitted;
      report.omitted_ns += report.groups[i].total_ns;
    }
    report.groups.resize(options_.top);
  }
  for (int i = 0; i < kNumPhases; ++i) {
    if (st.phases[i].count == 0) continue;
    const GroupRow row = st.phases[i].Finish(kPhaseNames[i], report.total_ns);
    PhaseRow p;
    p.phase = kPhaseNames[i];
    p.steps = st.steps[i];
    p.count = row.count;
    p.flops = row.flops;
    p.time_ns = row.total_ns;
    p.share = row.time_share;
    p.ai = row.ai;
    p.fraction_of_roof = row.fraction_of_roof;
    p.achieved_flops_per_s = row.achieved_flops_per_s;
    report.phases.push_back(std::move(p));
  }
  report.busy = st.busy.Finish();
  {
    // Exposed copy time: busy time with copies minus without. Exposed
    // communication: kernel time with collectives minus without (a device
    // that ran only collectives has them all exposed).
    std::map<int64_t, int64_t> kernels_ns, compute_ns;
    for (const DeviceBusy& b : st.kernels_busy.Finish()) {
      kernels_ns[b.device_id] = b.busy_ns;
    }
    if (st.any_comm_kernel) {
      for (const DeviceBusy& b : st.compute_busy.Finish()) {
        compute_ns[b.device_id] = b.busy_ns;
      }
    } else {
      compute_ns = kernels_ns;
    }
    for (DeviceBusy& b : report.busy) {
      const int64_t k = kernels_ns.count(b.device_id) ? kernels_ns[b.device_id]
                                                      : 0;
      const int64_t c = compute_ns.count(b.device_id) ? compute_ns[b.device_id]
                                                      : 0;
      b.exposed_copy_ns = std::max<int64_t>(0, b.busy_ns - k);
      b.exposed_comm_ns = std::max<int64_t>(0, k - c);
    }
  }
  for (const auto& [key, c] : st.comm_kernels) {
    if (c.duration_ns > 0 && c.bytes > 0) {
      report.ns_comm_with_message += c.duration_ns;
    }
  }
  // Collectives sit on the link roof: bus bandwidth against the link's.
  const double link = report.header.roofs.link_bytes_per_s;
  // A kernel or family group of collectives: time-weighted fraction of the
  // link roof, bound link when such kernels hold most of its time.
  if (link > 0) {
    std::unordered_map<std::string, std::pair<int64_t, double>> on_link;
    for (const auto& [key, c] : st.comm_kernels) {
      if (c.group.empty() || c.duration_ns <= 0 || c.busbw < 0) continue;
      auto& [ns, weighted] = on_link[c.group];
      ns += c.duration_ns;
      weighted += static_cast<double>(c.duration_ns) * c.busbw / link;
    }
    for (GroupRow& g : report.groups) {
      const auto it = on_link.find(g.key);
      if (it == on_link.end() || 2 * it->second.first < g.total_ns) continue;
      g.fraction_of_roof =
          it->second.second / static_cast<double>(it->second.first);
      g.bound = "link";
    }
  }
  report.collectives = FinishCollectives();  // consumes comm_kernels
  for (CollectiveRow& c : report.collectives) {
    if (!c.busbw || link <= 0) continue;
    c.fraction_of_link = *c.busbw / link;
    report.ns_comm_on_link_roof += c.total_ns;
  }
  // Rows may come per window or per stream: start order for comparing.
  std::stable_sort(report.collective_calls.begin(),
                   report.collective_calls.end(),
                   [](const CollectiveCall& a, const CollectiveCall& b) {
                     return a.start_ns < b.start_ns;
                   });
  return report;
}

std::vector<CollectiveRow> ReportBuilder::FinishCollectives() {
  struct Sums {
    CollectiveRow row;
    double bytes = 0, timed_bytes = 0, bus_bytes = 0;
    int64_t sized = 0, sized_ns = 0;
    bool bus_known = true;
  };
  std::map<std::string, Sums> by_shape;
  for (const auto& [key, ck] : state_->comm_kernels) {
    if (ck.duration_ns < 0) continue;  // metrics of a kernel not in the run
    Sums& s = by_shape[ck.bytes > 0 ? ck.shape : std::string()];
    ++s.row.count;
    s.row.total_ns += ck.duration_ns;
    if (ck.bytes <= 0) continue;
    ++s.sized;
    s.bytes += ck.bytes;
    if (ck.algbw <= 0 || ck.duration_ns <= 0) continue;  // no duration
    s.sized_ns += ck.duration_ns;
    s.timed_bytes += ck.bytes;
    // The kernel's bus bytes: its message times its bus factor.
    if (ck.busbw >= 0) {
      s.bus_bytes += ck.bytes * (ck.busbw / ck.algbw);
    } else {
      s.bus_known = false;
    }
  }
  state_->comm_kernels.clear();
  std::vector<CollectiveRow> rows;
  for (auto& [shape, s] : by_shape) {
    CollectiveRow r = s.row;
    r.shape = shape;
    if (s.sized > 0) {
      r.message_bytes = s.bytes / static_cast<double>(s.sized);
    }
    if (s.sized_ns > 0) {
      const double seconds = static_cast<double>(s.sized_ns) * 1e-9;
      r.algbw = s.timed_bytes / seconds;
      if (s.bus_known) r.busbw = s.bus_bytes / seconds;
    }
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const CollectiveRow& a, const CollectiveRow& b) {
                     return a.total_ns > b.total_ns;
                   });
  return rows;
}

StatusOr<Report> BuildReport(StoreReader& store, const ReportOptions& options) {
  RT_ASSIGN_OR_RETURN(const RunRow run, store.ResolveRun(options.run_id));
  RT_ASSIGN_OR_RETURN(std::string device_name, store.DeviceName(run.run_id));
  RT_ASSIGN_OR_RETURN(const std::vector<RoofRow> roof_rows,
                      store.Roofs(run.run_id));
  RT_ASSIGN_OR_RETURN(auto import_stats, store.ImportStats(run.run_id));
  RT_ASSIGN_OR_RETURN(const int64_t clock_khz,
                      store.MeasuredSmClockKhz(run.run_id));
  ReportBuilder builder(options);
  builder.SetMeasuredSmClock(clock_khz);
  FillReportHeader(run, std::move(device_name), roof_rows,
                   std::move(import_stats), builder.options(),
                   &builder.header());
  RT_RETURN_IF_ERROR(store.ForEachStep(run.run_id, [&](const StepRow& s) {
    builder.AddStep(s.phase);
    return OkStatus();
  }));
  if (run.store_kernels == "none" || run.store_kernels == "sampled") {
    // The run kept per-group aggregates, not every kernel row: the groups
    // are built from them; what needs each launch's times (busy time,
    // collectives, duration buckets, time spreads) is left out.
    if (options.group_by == GroupBy::kNvtx ||
        options.group_by == GroupBy::kStep) {
      return InvalidArgument(
          store.display_name() + ": run " + std::to_string(run.run_id) +
          " was stored with --store-kernels " + run.store_kernels +
          " (per-group aggregates, not every kernel), and --by " +
          GroupByName(options.group_by) +
          " needs every kernel; group by family, family+shape, phase, op, "
          "kernel or category, or store the run with --store-kernels all");
    }
    RT_RETURN_IF_ERROR(store.ForEachAggregateOfRuns(
        {run.run_id}, [&](const KernelAggregateRow& a) {
          builder.AddAggregate(a);
          return OkStatus();
        }));
    return builder.Finish(store.display_name());
  }
  // Kernels and copies in start order: the busy timeline then never meets
  // an interval older than what it has folded (busy_time.h), however long
  // the run, and any row ends a batch; one in 4,096 does.
  int64_t rows = 0;
  auto batch = [&] {
    if (++rows % 4096 == 0) builder.EndBatch();
  };
  RT_RETURN_IF_ERROR(store.ForEachKernelAndMemcpy(
      run.run_id,
      [&](const KernelRow& k) {
        builder.Add(k);
        batch();
        return OkStatus();
      },
      [&](const MemcpyRow& m) {
        builder.AddCopy(m);
        batch();
        return OkStatus();
      }));
  // The collective figures are metrics: read only when a kernel needs them.
  if (builder.HasCollectiveKernels()) {
    RT_RETURN_IF_ERROR(
        store.ForEachKernelMetric(run.run_id, [&](const KernelMetricRow& m) {
          builder.AddKernelMetric(m);
          return OkStatus();
        }));
  }
  return builder.Finish(store.display_name());
}

}  // namespace rooftrace
