#include "pipeline/inherit.h"

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

size_t SignatureFigures::KeyHash::operator()(const Key& k) const {
  uint64_t h = Mix(static_cast<uint64_t>(k.name));
  const uint32_t fields[] = {k.grid[0],     k.grid[1],     k.grid[2],
                             k.block[0],    k.block[1],    k.block[2],
                             k.registers,   k.static_shared,
                             k.dynamic_shared};
  for (uint32_t f : fields) h = Mix(h ^ (h << 7) ^ f);
  return static_cast<size_t>(h);
}

void SignatureFigures::MapNames(const JoinedSession& joined) {
  window_names_.resize(joined.names.size());
  for (size_t i = 0; i < joined.names.size(); ++i) {
    const auto [it, added] = name_ids_.try_emplace(
        joined.names[i].name, static_cast<int>(name_ids_.size()));
    (void)added;
    window_names_[i] = it->second;
  }
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
                             const Roofs& roofs,
                             const AnnotateOptions& annotate,
                             ImportStats* stats) {
  MapNames(*joined);
  Learn(*joined, stats);
  Inherit(joined, roofs, annotate);
  CountStored(*joined, scope, stats);
}

void SignatureFigures::Learn(const JoinedSession& j, ImportStats* stats) {
  // The figures a carrier's call or op gives (join.cc ApplyAnalytic's).
  std::array<uint64_t, kNumPrecisions> flops;
  uint64_t min_bytes = 0;
  std::string& shape = shape_scratch_;
  for (const JoinedKernel& k : j.kernels) {
    if (!k.carrier) continue;
    flops.fill(0);
    Precision p = Precision::kUnknown;
    uint64_t f = 0;
    if (k.gemm >= 0) {
      const JoinedGemm& g = j.gemms[static_cast<size_t>(k.gemm)];
      p = g.precision;
      f = g.flops;
      min_bytes = g.min_bytes;
      GemmShapeText(*g.gemm, &shape);
    } else if (k.op >= 0) {
      const JoinedOp& o = j.ops[static_cast<size_t>(k.op)];
      p = PrecisionOf(o.op->precision);
      f = o.op->flops;
      min_bytes = o.op->min_bytes;
      shape = o.shape;
    } else {
      continue;
    }
    if (f > 0 && p != Precision::kUnknown) flops[static_cast<int>(p)] = f;
    // An op without figures or shape says nothing about its kernels' work.
    if (f == 0 && min_bytes == 0 && shape.empty()) continue;
    Entry& e = entries_[KeyOf(k)];
    if (e.shapes == 0) {
      e.shapes = 1;
      e.flops = flops;
      e.min_bytes = min_bytes;
      e.shape = shape;
      (*stats)[ImportStat::k_kernels_inherit_too_late] += e.stored_blank;
      e.stored_blank = 0;
    } else if (e.shapes == 1 &&
               (e.flops != flops || e.min_bytes != min_bytes ||
                e.shape != shape)) {
      e.shapes = 2;
    }
  }
}

void SignatureFigures::Inherit(JoinedSession* j, const Roofs& roofs,
                               const AnnotateOptions& annotate) const {
  if (entries_.empty()) return;
  for (JoinedKernel& k : j->kernels) {
    if (!Eligible(k)) continue;
    KernelFacts& f = k.facts;
    if (f.flops_source != Source::kNone || f.bytes_source != Source::kNone) {
      continue;
    }
    const auto it = entries_.find(KeyOf(k));
    if (it == entries_.end() || it->second.shapes != 1) continue;
    const Entry& e = it->second;
    bool any_flops = false;
    for (uint64_t v : e.flops) any_flops |= v > 0;
    if (!any_flops && e.min_bytes == 0) continue;
    if (any_flops) {
      f.flops = e.flops;
      f.flops_source = Source::kInherited;
    }
    if (e.min_bytes > 0) {
      f.dram_bytes = e.min_bytes;
      f.bytes_source = Source::kInherited;
    }
    k.inherited_shape = &e.shape;
    k.annotation = Annotate(f, roofs, annotate);
    j->any_inherited = true;
  }
}

void SignatureFigures::CountStored(const JoinedSession& j,
                                   const WriteScope* scope,
                                   ImportStats* stats) {
  for (const JoinedKernel& k : j.kernels) {
    if (!Eligible(k) || !InScope(scope, k)) continue;
    if (k.inherited_shape != nullptr) {
      ++(*stats)[ImportStat::k_kernels_inherited];
      continue;
    }
    Entry& e = entries_[KeyOf(k)];
    if (e.shapes == 0) {
      ++e.stored_blank;
    } else if (e.shapes == 2) {
      ++(*stats)[ImportStat::k_kernels_signature_ambiguous];
    }
  }
}

}  // namespace rooftrace
