#include "pipeline/inherit.h"

#include <algorithm>

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
