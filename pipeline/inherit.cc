#include "pipeline/inherit.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace rooftrace {
namespace {

// 64-bit mix (the finalizer of MurmurHash3): the key's fields are small
// integers that differ in few bits.
uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

bool Blank(const KernelFacts& f) {
  return f.flops_source == Source::kNone && f.bytes_source == Source::kNone;
}

// Figures a launched kernel may pass on by position: analytic or
// inherited ones (or none), not a kernel's own measurements.
bool Teachable(const JoinedKernel& k) {
  auto ok = [](Source s) {
    return s == Source::kNone || s == Source::kAnalytic ||
           s == Source::kInherited;
  };
  return k.counters == nullptr && k.sampled == nullptr &&
         ok(k.facts.flops_source) && ok(k.facts.bytes_source);
}

Precision PrecisionOf(int wire_precision) {
  return wire_precision > 0 && wire_precision < kNumPrecisions
             ? static_cast<Precision>(wire_precision)
             : Precision::kUnknown;
}

}  // namespace

uint64_t SignatureFigures::HashOf(const Key& k) {
  auto pair = [](uint64_t hi, uint64_t lo) { return hi << 32 | lo; };
  // Five words, each weighted by its own odd constant, then mixed once.
  const uint64_t words[] = {
      pair(static_cast<uint32_t>(k.name), k.grid[0]),
      pair(k.grid[1], k.grid[2]),
      pair(k.block[0], k.block[1]),
      pair(k.block[2], k.registers),
      pair(k.static_shared, k.dynamic_shared),
  };
  const uint64_t weights[] = {0x9e3779b97f4a7c15ULL, 0xbf58476d1ce4e5b9ULL,
                              0x94d049bb133111ebULL, 0xd6e8feb86659fd93ULL,
                              0xa0761d6478bd642fULL};
  uint64_t h = 0;
  for (int i = 0; i < 5; ++i) h += words[i] * weights[i];
  return Mix(h);
}

SignatureFigures::Entry& SignatureFigures::Lookup(const Key& key) {
  const uint64_t hash = HashOf(key);
  if (2 * (entries_.size() + 1) > slots_.size()) {
    // Grow: every entry placed again in a table twice the size.
    slots_.assign(std::max<size_t>(64, 2 * slots_.size()), -1);
    const size_t mask = slots_.size() - 1;
    for (size_t e = 0; e < entries_.size(); ++e) {
      size_t i = entries_[e].hash & mask;
      while (slots_[i] >= 0) i = (i + 1) & mask;
      slots_[i] = static_cast<int32_t>(e);
    }
  }
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  for (; slots_[i] >= 0; i = (i + 1) & mask) {
    Entry& e = entries_[static_cast<size_t>(slots_[i])];
    if (e.hash == hash && e.key == key) return e;
  }
  slots_[i] = static_cast<int32_t>(entries_.size());
  Entry& e = entries_.emplace_back();
  e.key = key;
  e.hash = hash;
  return e;
}

const SignatureFigures::Entry* SignatureFigures::Find(const Key& key) const {
  if (slots_.empty()) return nullptr;
  const uint64_t hash = HashOf(key);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask; slots_[i] >= 0; i = (i + 1) & mask) {
    const Entry& e = entries_[static_cast<size_t>(slots_[i])];
    if (e.hash == hash && e.key == key) return &e;
  }
  return nullptr;
}

void SignatureFigures::MapNames(const JoinedSession& joined) {
  window_names_.resize(joined.names.size());
  for (size_t i = 0; i < joined.names.size(); ++i) {
    const auto [it, added] = name_ids_.try_emplace(
        joined.names[i].name, static_cast<int>(name_ids_.size()));
    (void)added;
    window_names_[i] = it->second;
  }
  learned_names_.resize(name_ids_.size(), 0);
}

SignatureFigures::Key SignatureFigures::KeyOf(const JoinedKernel& jk) const {
  const KernelRecord& r = *jk.kernel;
  Key k;
  k.name = window_names_[static_cast<size_t>(jk.name)];
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = r.grid[i];
    k.block[i] = r.block[i];
  }
  k.registers = r.registers_per_thread;
  k.static_shared = r.static_shared_memory_bytes;
  k.dynamic_shared = r.dynamic_shared_memory_bytes;
  return k;
}

void SignatureFigures::Apply(JoinedSession* joined, const WriteScope* scope,
                             ImportStats* stats) {
  MapNames(*joined);
  Learn(*joined);
  InheritAndCount(joined, scope, stats);
  InheritByPosition(joined, scope, stats);
}

void SignatureFigures::ShapeOf(const JoinedSession& j, const JoinedKernel& k,
                               std::string* out) {
  out->clear();
  if (Blank(k.facts)) return;
  if (k.inherited_shape != nullptr) {
    *out = *k.inherited_shape;
  } else if (k.gemm >= 0) {
    GemmShapeText(*j.gemms[static_cast<size_t>(k.gemm)].gemm, out);
  } else if (k.op >= 0) {
    *out = j.ops[static_cast<size_t>(k.op)].shape;
  }
}

void SignatureFigures::InheritByPosition(JoinedSession* j,
                                         const WriteScope* scope,
                                         ImportStats* stats) {
  std::vector<JoinedKernel>& kernels = j->kernels;
  auto orphan = [](const JoinedKernel& k) {
    return k.launch == nullptr && Eligible(k) && Blank(k.facts);
  };
  // Most joins (every window of a live stream) have no orphan: one pass.
  std::unordered_map<uint64_t, std::vector<uint32_t>> launched;
  for (const JoinedKernel& k : kernels) {
    if (orphan(k)) launched.emplace(HashOf(KeyOf(k)), std::vector<uint32_t>());
  }
  if (launched.empty()) return;

  // Every kernel in start order on its device and stream (4 bytes a
  // kernel: keys are made again where compared), and the launched places
  // of the orphans' signatures.
  const size_t n = kernels.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto at = [&](size_t p) -> const KernelRecord& {
    return *kernels[order[p]].kernel;
  };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const KernelRecord& x = *kernels[a].kernel;
    const KernelRecord& y = *kernels[b].kernel;
    if (x.device_id != y.device_id) return x.device_id < y.device_id;
    if (x.stream_id != y.stream_id) return x.stream_id < y.stream_id;
    return x.start_ns < y.start_ns;
  });
  for (size_t p = 0; p < n; ++p) {
    const JoinedKernel& k = kernels[order[p]];
    if (k.launch == nullptr) continue;
    auto it = launched.find(HashOf(KeyOf(k)));
    if (it != launched.end()) it->second.push_back(static_cast<uint32_t>(p));
  }
  auto same_run = [&](size_t a, size_t b) {
    return at(a).device_id == at(b).device_id &&
           at(a).stream_id == at(b).stream_id;
  };
  // Neighbours of position p on its run, up to `c`, before and after.
  auto reach = [&](size_t p, size_t c, size_t* before, size_t* after) {
    *before = 0;
    while (*before < c && p > *before && same_run(p - *before - 1, p)) {
      ++*before;
    }
    *after = 0;
    while (*after < c && p + *after + 1 < n && same_run(p + *after + 1, p)) {
      ++*after;
    }
  };
  auto key_at = [&](size_t p) { return KeyOf(kernels[order[p]]); };

  std::string first_shape, shape;
  for (size_t p = 0; p < n; ++p) {
    JoinedKernel& k = kernels[order[p]];
    if (!orphan(k)) continue;
    const Key key = KeyOf(k);
    const std::vector<uint32_t>& places = launched.at(HashOf(key));
    if (places.empty()) continue;  // nothing to compare with
    const bool stored = InScope(scope, k);
    if (places.size() > kMaxPositionCandidates) {
      if (stored) ++(*stats)[ImportStat::k_kernels_position_ambiguous];
      continue;
    }
    // The widest context any launched place shares decides: every place
    // that shares it must carry the same figures.
    const JoinedKernel* first = nullptr;
    bool agree = true;
    for (size_t c = kPositionContext; c >= 1 && first == nullptr; --c) {
      size_t before = 0, after = 0;
      reach(p, c, &before, &after);
      agree = true;
      for (uint32_t q : places) {
        // A place near the end of its run, with fewer neighbours than
        // the orphan, is compared on those it has: what is missing cannot
        // rule it out.
        size_t qb = 0, qa = 0;
        reach(q, c, &qb, &qa);
        if (!(key_at(q) == key)) continue;
        bool same = true;
        for (size_t d = 1; same && d <= std::min(before, qb); ++d) {
          same = key_at(q - d) == key_at(p - d);
        }
        for (size_t d = 1; same && d <= std::min(after, qa); ++d) {
          same = key_at(q + d) == key_at(p + d);
        }
        if (!same) continue;
        const JoinedKernel& t = kernels[order[q]];
        if (!Teachable(t)) {
          agree = false;
          first = &t;
          break;
        }
        if (first == nullptr) {
          first = &t;
          ShapeOf(*j, t, &first_shape);
          continue;
        }
        ShapeOf(*j, t, &shape);
        if (t.facts.flops != first->facts.flops ||
            t.facts.dram_bytes != first->facts.dram_bytes ||
            (t.facts.flops_source == Source::kNone) !=
                (first->facts.flops_source == Source::kNone) ||
            (t.facts.bytes_source == Source::kNone) !=
                (first->facts.bytes_source == Source::kNone) ||
            shape != first_shape) {
          agree = false;
          break;
        }
      }
    }
    if (first == nullptr) continue;  // no place like its own
    if (!agree) {
      if (stored) ++(*stats)[ImportStat::k_kernels_position_ambiguous];
      continue;
    }
    if (Blank(first->facts)) continue;  // its places have no figures either
    KernelFacts& f = k.facts;
    if (first->facts.flops_source != Source::kNone) {
      f.flops = first->facts.flops;
      f.flops_source = Source::kInherited;
    }
    if (first->facts.bytes_source != Source::kNone) {
      f.dram_bytes = first->facts.dram_bytes;
      f.bytes_source = Source::kInherited;
    }
    position_shapes_.push_back(first_shape);
    k.inherited_shape = &position_shapes_.back();
    j->any_inherited = true;
    if (!stored) continue;
    ++(*stats)[ImportStat::k_kernels_inherited_by_position];
    // InheritAndCount counted it blank by its signature's two shapes.
    const Entry* e = Find(key);
    if (e != nullptr && e->shapes == 2) {
      --(*stats)[ImportStat::k_kernels_signature_ambiguous];
    }
  }
}

void SignatureFigures::Learn(const JoinedSession& j) {
  // The carriers only (join.h JoinScratch): a window has far fewer calls
  // and ops than kernels.
  for (size_t g = 0; g < j.gemms.size(); ++g) {
    const int carrier = j.scratch.gemm_carrier[g];
    if (carrier < 0) continue;
    const JoinedGemm& jg = j.gemms[g];
    GemmShapeText(*jg.gemm, &shape_scratch_);
    LearnOne(j.kernels[static_cast<size_t>(carrier)], jg.precision, jg.flops,
             jg.min_bytes, shape_scratch_);
  }
  for (size_t o = 0; o < j.ops.size(); ++o) {
    const int carrier = j.scratch.op_carrier[o];
    if (carrier < 0) continue;
    const JoinedOp& jo = j.ops[o];
    LearnOne(j.kernels[static_cast<size_t>(carrier)],
             PrecisionOf(jo.op->precision), jo.op->flops, jo.op->min_bytes,
             jo.shape);
  }
}

void SignatureFigures::LearnOne(const JoinedKernel& k, Precision p,
                                uint64_t flops, uint64_t min_bytes,
                                const std::string& shape) {
  // The figures join.cc ApplyAnalytic gives a carrier.
  const bool has_flops = flops > 0 && p != Precision::kUnknown;
  // An op without figures or shape says nothing about its kernels' work.
  if (!has_flops && min_bytes == 0 && shape.empty()) return;
  std::array<uint64_t, kNumPrecisions> by_precision{};
  if (has_flops) by_precision[static_cast<int>(p)] = flops;
  const Key key = KeyOf(k);
  learned_names_[static_cast<size_t>(key.name)] = 1;
  Entry& e = Lookup(key);
  if (e.shapes == 0) {
    e.shapes = 1;
    e.flops = by_precision;
    e.min_bytes = min_bytes;
    e.shape = shape;
    e.has_figures = has_flops || min_bytes > 0;
  } else if (e.shapes == 1 &&
             (e.flops != by_precision || e.min_bytes != min_bytes ||
              e.shape != shape)) {
    e.shapes = 2;
  }
}

void SignatureFigures::InheritAndCount(JoinedSession* j,
                                       const WriteScope* scope,
                                       ImportStats* stats) const {
  // A window (most of a stream's) whose kernels without an op all have
  // names no carrier taught is passed over without touching its kernels.
  bool any = false;
  for (size_t i = 0; i < j->names.size() && !any; ++i) {
    any = j->names[i].kernels_without_op > 0 &&
          learned_names_[static_cast<size_t>(window_names_[i])];
  }
  if (!any) return;
  for (JoinedKernel& k : j->kernels) {
    if (!Eligible(k)) continue;
    const int name = window_names_[static_cast<size_t>(k.name)];
    if (!learned_names_[static_cast<size_t>(name)]) continue;
    const Entry* found = Find(KeyOf(k));
    if (found == nullptr) continue;
    const Entry& e = *found;
    const bool stored = InScope(scope, k);
    if (e.shapes == 2) {
      if (stored) ++(*stats)[ImportStat::k_kernels_signature_ambiguous];
      continue;
    }
    if (!e.has_figures) continue;
    KernelFacts& f = k.facts;
    bool any_flops = false;
    for (uint64_t v : e.flops) any_flops |= v > 0;
    if (any_flops) {
      f.flops = e.flops;
      f.flops_source = Source::kInherited;
    }
    if (e.min_bytes > 0) {
      f.dram_bytes = e.min_bytes;
      f.bytes_source = Source::kInherited;
    }
    k.inherited_shape = &e.shape;
    j->any_inherited = true;
    if (stored) ++(*stats)[ImportStat::k_kernels_inherited];
  }
}

}  // namespace rooftrace
