#include "pipeline/join.h"

#include <unordered_map>

#include "pipeline/flat_index.h"
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
  return s;
}

// Resolves NVTX paths by walking parent ids, memoised per range.
class NvtxPaths {
 public:
  NvtxPaths(const Session& s, JoinedSession* out) : s_(s), out_(out) {
    const auto& ranges = s.nvtx_ranges();
    index_.reserve(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      index_.emplace(ranges[i].range_id, static_cast<int>(i));
    }
    path_of_.assign(ranges.size(), -2);  // -2: not computed yet
    root_of_.assign(ranges.size(), 0);
  }

  // Path index of range `id`; -1 when the range is unknown.
  int Path(uint64_t id) {
    auto it = index_.find(id);
    if (it == index_.end()) return -1;
    return Compute(it->second, 0);
  }
  uint64_t Root(uint64_t id) {
    auto it = index_.find(id);
    if (it == index_.end()) return 0;
    Compute(it->second, 0);
    return root_of_[it->second];
  }

 private:
  int Compute(int i, int depth) {
    if (path_of_[i] != -2) return path_of_[i];
    const NvtxRecord& r = s_.nvtx_ranges()[i];
    const std::string* name = s_.String(r.name_iid);
    std::string own = name ? *name : "iid:" + std::to_string(r.name_iid);
    std::string path = own;
    uint64_t root = r.range_id;
    auto parent = index_.find(r.parent_range_id);
    // depth guard: a cycle in corrupt input must not recurse forever.
    if (r.parent_range_id != 0 && parent != index_.end() && depth < 64 &&
        parent->second != i) {
      const int pp = Compute(parent->second, depth + 1);
      if (pp >= 0) path = out_->paths[pp] + "/" + own;
      root = root_of_[parent->second];
    }
    root_of_[i] = root;
    out_->paths.push_back(std::move(path));
    path_of_[i] = static_cast<int>(out_->paths.size()) - 1;
    return path_of_[i];
  }

  const Session& s_;
  JoinedSession* out_;
  std::unordered_map<uint64_t, int> index_;
  std::vector<int> path_of_;
  std::vector<uint64_t> root_of_;
};

}  // namespace

std::string GemmShapeText(const GemmRecord& g) {
  return "m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
         " k=" + std::to_string(g.k) +
         " batch=" + std::to_string(g.batch > 0 ? g.batch : 1);
}

JoinedSession Join(Session* session, const Roofs& roofs,
                   const AnnotateOptions& annotate_options,
                   const PhaseOptions& phase_options) {
  JoinedSession out;
  JoinInto(session, roofs, annotate_options, phase_options, &out);
  return out;
}

void JoinInto(Session* session, const Roofs& roofs,
              const AnnotateOptions& annotate_options,
              const PhaseOptions& phase_options, JoinedSession* joined) {
  JoinedSession& out = *joined;
  out.kernels.clear();
  out.gemms.clear();
  out.memcpys.clear();
  out.nvtx.clear();
  out.steps.clear();
  out.names.clear();
  out.paths.clear();
  out.any_counters = false;
  out.any_analytic = false;
  JoinScratch& scratch = out.scratch;
  Session& s = *session;
  ImportStats& stats = s.stats();

  // ---- index launches, GEMM calls and counters by their join keys
  FlatIndex& launch_of = scratch.launch_of;
  launch_of.Reset(s.launches().size());
  for (size_t i = 0; i < s.launches().size(); ++i) {
    launch_of.Emplace(s.launches()[i].correlation_id, static_cast<int>(i));
  }
  std::vector<char>& launch_used = scratch.launch_used;
  launch_used.assign(s.launches().size(), 0);

  out.gemms.resize(s.gemms().size());
  FlatIndex& gemm_of_call = scratch.gemm_of_call;
  FlatIndex& gemm_of_corr = scratch.gemm_of_corr;
  gemm_of_call.Reset(s.gemms().size());
  gemm_of_corr.Reset(s.gemm_links().size());
  for (size_t i = 0; i < s.gemms().size(); ++i) {
    const GemmRecord& g = s.gemms()[i];
    JoinedGemm& jg = out.gemms[i];
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
    gemm_of_call.Emplace(g.call_id, static_cast<int>(i));
  }
  for (const GemmLink& link : s.gemm_links()) {
    const int g = gemm_of_call.Find(link.call_id);
    if (g >= 0) gemm_of_corr.Emplace(link.correlation_id, g);
  }

  FlatIndex& counters_of = scratch.counters_of;
  counters_of.Reset(s.counters().size());
  for (size_t i = 0; i < s.counters().size(); ++i) {
    counters_of.Emplace(s.counters()[i].correlation_id, static_cast<int>(i));
  }
  std::vector<char>& counters_used = scratch.counters_used;
  counters_used.assign(s.counters().size(), 0);

  NvtxPaths nvtx(s, &out);
  std::unordered_map<uint64_t, int> name_of;
  auto name_index = [&](uint64_t iid) {
    auto it = name_of.find(iid);
    if (it != name_of.end()) return it->second;
    NameInfo info;
    const std::string* str = s.String(iid);
    if (str == nullptr) {
      if (iid != 0) ++stats[ImportStat::k_unresolved_strings];
      info.name = "iid:" + std::to_string(iid);
      info.demangled = info.name;
      info.family = info.name;
    } else {
      info.name = *str;
      info.demangled = Demangle(*str);
      info.family = KernelFamily(*str);
    }
    out.names.push_back(std::move(info));
    const int idx = static_cast<int>(out.names.size()) - 1;
    name_of.emplace(iid, idx);
    return idx;
  };

  // ---- kernels
  const auto& kernels = s.kernels();
  out.kernels.resize(kernels.size());
  // Longest kernel of each GEMM call carries the call's analytic numbers.
  std::vector<int>& gemm_carrier = scratch.gemm_carrier;
  gemm_carrier.assign(out.gemms.size(), -1);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelRecord& k = kernels[i];
    JoinedKernel& jk = out.kernels[i];
    jk.kernel = &k;
    jk.name = name_index(k.name_iid);
    const int l = launch_of.Find(k.correlation_id);
    if (l >= 0) {
      jk.launch = &s.launches()[l];
      launch_used[l] = 1;
    } else {
      ++stats.unmatched[wire::enums::kRecordKernel];
    }
    if (jk.launch && jk.launch->gemm_call_id != 0) {
      jk.gemm = gemm_of_call.Find(jk.launch->gemm_call_id);
    }
    if (jk.gemm < 0 && !gemm_of_corr.empty()) {
      jk.gemm = gemm_of_corr.Find(k.correlation_id);
    }
    if (jk.gemm >= 0) {
      ++out.gemms[jk.gemm].kernel_count;
      int& carrier = gemm_carrier[jk.gemm];
      const uint64_t d = k.end_ns - std::min(k.end_ns, k.start_ns);
      if (carrier < 0) {
        carrier = static_cast<int>(i);
      } else {
        const KernelRecord& c = kernels[carrier];
        if (d > c.end_ns - std::min(c.end_ns, c.start_ns)) {
          carrier = static_cast<int>(i);
        }
      }
    }
    if (jk.launch && jk.launch->nvtx_range_id != 0) {
      jk.nvtx_path = nvtx.Path(jk.launch->nvtx_range_id);
      if (jk.nvtx_path < 0) ++stats[ImportStat::k_unmatched_nvtx_refs];
    }
    if (!counters_of.empty()) {
      const int c = counters_of.Find(k.correlation_id);
      if (c >= 0) {
        jk.counters = &s.counters()[c];
        counters_used[c] = 1;
      }
    }
  }

  // ---- facts and annotation
  for (size_t i = 0; i < kernels.size(); ++i) {
    JoinedKernel& jk = out.kernels[i];
    KernelFacts& f = jk.facts;
    const KernelRecord& k = *jk.kernel;
    f.duration_ns = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    const bool carrier = jk.gemm >= 0 && gemm_carrier[jk.gemm] == static_cast<int>(i);
    if (jk.counters != nullptr) {
      f.dram_bytes = jk.counters->dram_read_bytes + jk.counters->dram_write_bytes;
      f.bytes_source = Source::kCounters;
      if (jk.counters->has_flops) {
        f.flops = jk.counters->flops;
        f.flops_source = Source::kCounters;
      }
      out.any_counters = true;
    }
    if (carrier) {
      const JoinedGemm& g = out.gemms[jk.gemm];
      if (f.flops_source == Source::kNone && g.flops > 0 &&
          g.precision != Precision::kUnknown) {
        f.flops[static_cast<int>(g.precision)] = g.flops;
        f.flops_source = Source::kAnalytic;
        out.any_analytic = true;
      }
      if (f.bytes_source == Source::kNone && g.min_bytes > 0) {
        f.dram_bytes = g.min_bytes;
        f.bytes_source = Source::kAnalytic;
      }
    }
    jk.annotation = Annotate(f, roofs, annotate_options);
  }

  // ---- copies
  const auto& copies = s.memcpys();
  out.memcpys.resize(copies.size());
  for (size_t i = 0; i < copies.size(); ++i) {
    JoinedMemcpy& jm = out.memcpys[i];
    jm.memcpy = &copies[i];
    const int l = launch_of.Find(copies[i].correlation_id);
    if (l >= 0) {
      jm.launch = &s.launches()[l];
      launch_used[l] = 1;
      if (jm.launch->nvtx_range_id != 0) {
        jm.nvtx_path = nvtx.Path(jm.launch->nvtx_range_id);
      }
    } else {
      ++stats.unmatched[wire::enums::kRecordMemcpy];
    }
  }

  // ---- NVTX rows
  out.nvtx.resize(s.nvtx_ranges().size());
  for (size_t i = 0; i < s.nvtx_ranges().size(); ++i) {
    const NvtxRecord& r = s.nvtx_ranges()[i];
    JoinedNvtx& jn = out.nvtx[i];
    jn.range = &r;
    const std::string* name = s.String(r.name_iid);
    if (name) {
      jn.name = *name;
    } else if (r.name_iid != 0) {
      ++stats[ImportStat::k_unresolved_strings];
    }
    if (r.domain_iid != 0) {
      const std::string* d = s.String(r.domain_iid);
      if (d) jn.domain = *d;
    }
    jn.path = nvtx.Path(r.range_id);
  }

  // ---- leftovers
  for (char used : launch_used) {
    if (!used) ++stats.unmatched[wire::enums::kRecordLaunch];
  }
  for (char used : counters_used) {
    if (!used) ++stats.unmatched[wire::enums::kRecordCounters];
  }
  for (const JoinedGemm& g : out.gemms) {
    if (g.kernel_count == 0) ++stats.unmatched[wire::enums::kRecordGemm];
  }

  // ---- steps and phases
  PhaseInput& pin = scratch.phase_input;
  pin.kernels.assign(kernels.size(), {});
  for (size_t i = 0; i < kernels.size(); ++i) {
    const JoinedKernel& jk = out.kernels[i];
    auto& pk = pin.kernels[i];
    pk.start_ns = jk.kernel->start_ns;
    pk.end_ns = jk.kernel->end_ns;
    if (jk.launch) {
      pk.host_ns = jk.launch->api_start_ns;
      if (jk.launch->nvtx_range_id) pk.nvtx_root = nvtx.Root(jk.launch->nvtx_range_id);
    }
    pk.gemm = jk.gemm;
  }
  pin.copies.assign(copies.size(), {});
  for (size_t i = 0; i < copies.size(); ++i) {
    pin.copies[i] = {copies[i].start_ns, copies[i].end_ns, copies[i].bytes,
                     copies[i].kind == wire::enums::kCopyDtoH};
  }
  pin.gemms.assign(out.gemms.size(), {});
  for (size_t i = 0; i < out.gemms.size(); ++i) {
    const GemmRecord& g = *out.gemms[i].gemm;
    pin.gemms[i] = {g.m, g.n, g.a_ptr, g.b_ptr};
  }
  pin.prev_step_tokens = s.flushed().last_step_tokens;
  PhaseResult pr = DetectPhases(pin, phase_options);
  for (size_t i = 0; i < kernels.size(); ++i) out.kernels[i].step = pr.kernel_step[i];
  for (size_t i = 0; i < copies.size(); ++i) out.memcpys[i].step = pr.copy_step[i];
  for (size_t i = 0; i < out.gemms.size(); ++i) {
    out.gemms[i].weight = pr.gemm_weight[i];
    out.gemms[i].token_count = pr.gemm_tokens[i];
    out.gemms[i].step = pr.gemm_step[i];
  }
  out.steps = std::move(pr.steps);
}

}  // namespace rooftrace
