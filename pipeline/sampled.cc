#include "pipeline/sampled.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

namespace rooftrace {
namespace {

uint64_t TotalFlops(const std::array<uint64_t, kNumPrecisions>& f) {
  uint64_t t = 0;
  for (uint64_t v : f) t += v;
  return t;
}

// (max - min) / mean, 0 when the mean is 0.
double Spread(double min, double max, double sum, uint64_t n) {
  const double mean = n > 0 ? sum / static_cast<double>(n) : 0;
  return mean > 0 ? (max - min) / mean : 0;
}

uint64_t Mean(double sum, uint64_t n) {
  return static_cast<uint64_t>(std::llround(sum / static_cast<double>(n)));
}

}  // namespace

size_t SampledCounters::KeyHash::operator()(const Key& k) const {
  size_t h = std::hash<int>()(k.name);
  auto mix = [&h](uint64_t v) {
    h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) +
         (h >> 2);
  };
  for (int i = 0; i < 3; ++i) mix(uint64_t{k.grid[i]} << 32 | k.block[i]);
  mix(k.dynamic_shared);
  if (k.gemm) {
    for (int64_t v : {k.m, k.n, k.k, k.batch}) mix(static_cast<uint64_t>(v));
  }
  return h;
}

SampledCounters::Key SampledCounters::KeyOf(const JoinedSession& j,
                                            const JoinedKernel& jk,
                                            const std::vector<int>& name_ids) {
  const KernelRecord& r = *jk.kernel;
  Key k;
  k.name = jk.name >= 0 ? name_ids[static_cast<size_t>(jk.name)] : -1;
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = r.grid[i];
    k.block[i] = r.block[i];
  }
  k.dynamic_shared = r.dynamic_shared_memory_bytes;
  if (jk.gemm >= 0) {
    const GemmRecord& g = *j.gemms[static_cast<size_t>(jk.gemm)].gemm;
    k.gemm = true;
    k.m = g.m;
    k.n = g.n;
    k.k = g.k;
    k.batch = g.batch;
    const int32_t types[5] = {g.a_type, g.b_type, g.c_type, g.d_type,
                              g.compute_type};
    std::copy(types, types + 5, k.types);
    k.trans[0] = g.trans_a;
    k.trans[1] = g.trans_b;
  }
  return k;
}

void SampledCounters::NoteLaunch(Signature* s, uint64_t corr) {
  // Launches come in correlation order but for held kernels seen again.
  if (s->launches.empty() || s->launches.back() < corr) {
    s->launches.push_back(corr);
    return;
  }
  auto it = std::lower_bound(s->launches.begin(), s->launches.end(), corr);
  if (it == s->launches.end() || *it != corr) s->launches.insert(it, corr);
}

void SampledCounters::Learn(Signature* s, const JoinedKernel& k) {
  const CounterRecord& c = *k.counters;
  auto it = std::lower_bound(
      s->samples.begin(), s->samples.end(), c.correlation_id,
      [](const Sample& a, uint64_t corr) { return a.correlation_id < corr; });
  if (it != s->samples.end() && it->correlation_id == c.correlation_id) {
    return;  // a held kernel, learned in an earlier window
  }
  Sample sample;
  sample.correlation_id = c.correlation_id;
  sample.read = c.dram_read_bytes;
  sample.write = c.dram_write_bytes;
  sample.flops = c.flops;
  sample.has_flops = c.has_flops;
  sample.has_dram = c.has_dram_bytes;
  const size_t at = static_cast<size_t>(it - s->samples.begin());
  s->samples.insert(it, sample);
  Accumulate(s, at);
}

SampledCounters::Running SampledCounters::Then(const Running& r,
                                               const Sample& x) {
  const double bytes = static_cast<double>(x.read + x.write);
  const double flops = static_cast<double>(TotalFlops(x.flops));
  Running out;
  out.n = r.n + 1;
  // 0 + v is v: the first sample's sums are its own figures.
  out.sum_read = r.sum_read + static_cast<double>(x.read);
  out.sum_write = r.sum_write + static_cast<double>(x.write);
  for (int p = 0; p < kNumPrecisions; ++p) {
    out.sum_flops[p] = r.sum_flops[p] + static_cast<double>(x.flops[p]);
  }
  out.with_flops = r.with_flops + (x.has_flops ? 1 : 0);
  out.with_dram = r.with_dram + (x.has_dram ? 1 : 0);
  out.min_bytes = r.n == 0 ? bytes : std::min(r.min_bytes, bytes);
  out.max_bytes = r.n == 0 ? bytes : std::max(r.max_bytes, bytes);
  out.min_flops = r.n == 0 ? flops : std::min(r.min_flops, flops);
  out.max_flops = r.n == 0 ? flops : std::max(r.max_flops, flops);
  return out;
}

void SampledCounters::Accumulate(Signature* s, size_t from) {
  for (size_t i = from; i < s->samples.size(); ++i) {
    s->samples[i].running =
        Then(i == 0 ? s->folded : s->samples[i - 1].running, s->samples[i]);
  }
}

void SampledCounters::Fold(const Session& session, const JoinedSession& j,
                           Signatures* signatures) {
  uint64_t floor = std::numeric_limits<uint64_t>::max();
  for (const JoinedKernel& k : j.kernels) {
    floor = std::min(floor, k.kernel->correlation_id);
  }
  for (const LaunchRecord& l : session.launches()) {
    floor = std::min(floor, l.correlation_id);
  }
  if (floor <= signatures->floor) return;
  signatures->floor = floor;
  for (auto& [key, s] : signatures->by_key) {
    const auto samples = std::lower_bound(
        s.samples.begin(), s.samples.end(), floor,
        [](const Sample& a, uint64_t c) { return a.correlation_id < c; });
    if (samples != s.samples.begin()) {
      // The running figures of the newest folded sample cover every
      // folded one, the earlier folded ones included.
      s.folded = (samples - 1)->running;
      s.samples.erase(s.samples.begin(), samples);
    }
    const auto launches =
        std::lower_bound(s.launches.begin(), s.launches.end(), floor);
    s.folded_launches +=
        static_cast<uint64_t>(launches - s.launches.begin());
    s.launches.erase(s.launches.begin(), launches);
  }
}

size_t SampledCounters::HeldEntries() const {
  size_t n = 0;
  for (const auto& [session, signatures] : sessions_) {
    for (const auto& [key, s] : signatures.by_key) {
      n += s.samples.size() + s.launches.size();
    }
  }
  return n;
}

void SampledCounters::Apply(const Session& session, JoinedSession* j,
                            const WriteScope* scope, ImportStats* stats) {
  // Only libinject's counters mode samples by signature. Trace mode has no
  // counters; an import's kernels without counters were not sampled by
  // this rule (ncu's or nsys' selection is their own).
  if (session.header().mode != "counters") return;
  auto found = sessions_.find(&session);
  if (found == sessions_.end()) {
    found = sessions_.emplace(&session, Signatures()).first;
  }
  Signatures& signatures = found->second;
  if (j->kernels.empty()) return;
  // What every kernel held or still to come needs of the older samples is
  // their running figures: fold them (the memory bound, sampled.h).
  Fold(session, *j, &signatures);
  std::vector<int> name_ids(j->names.size());
  for (size_t i = 0; i < j->names.size(); ++i) {
    name_ids[i] = signatures.names
                      .try_emplace(j->names[i].name,
                                   static_cast<int>(signatures.names.size()))
                      .first->second;
  }
  // Learn every sample and launch first: within one join a launch sees
  // every sample before it, whatever the kernels' order.
  std::vector<Signature*> of(j->kernels.size(), nullptr);
  for (size_t i = 0; i < j->kernels.size(); ++i) {
    const JoinedKernel& k = j->kernels[i];
    Signature& s = signatures.by_key[KeyOf(*j, k, name_ids)];
    of[i] = &s;
    // A kernel below the floor (it came after the flush gave up on its
    // launch) is kept like any other: the running figures of the samples
    // after it start from the folded ones, so every later launch counts
    // it, and the next fold takes it in once it is no longer held.
    const uint64_t corr = k.kernel->correlation_id;
    NoteLaunch(&s, corr);
    if (k.counters != nullptr) Learn(&s, k);
  }
  for (size_t i = 0; i < j->kernels.size(); ++i) {
    JoinedKernel& k = j->kernels[i];
    if (k.counters != nullptr) continue;
    const Signature& s = *of[i];
    const uint64_t corr = k.kernel->correlation_id;
    const auto before = std::lower_bound(
        s.samples.begin(), s.samples.end(), corr,
        [](const Sample& a, uint64_t c) { return a.correlation_id < c; });
    const auto count = s.folded.n +
                       static_cast<uint64_t>(before - s.samples.begin());
    if (count == 0) continue;
    const Running& last =
        before == s.samples.begin() ? s.folded : (before - 1)->running;
    const bool dram = last.with_dram == count;
    const bool flops = last.with_flops == count;
    if (!dram && !flops) continue;
    const auto launches =
        s.folded_launches +
        static_cast<uint64_t>(
            std::upper_bound(s.launches.begin(), s.launches.end(), corr) -
            s.launches.begin());

    SampledFigures& out = j->sampled.emplace_back();
    out.samples = count;
    out.launches = launches;
    out.has_dram_bytes = dram;
    KernelFacts& f = k.facts;
    if (dram) {
      out.dram_read_bytes = Mean(last.sum_read, count);
      out.dram_write_bytes = Mean(last.sum_write, count);
      f.dram_bytes = out.dram_read_bytes + out.dram_write_bytes;
      f.bytes_source = Source::kSampled;
    }
    if (flops) {
      for (int p = 0; p < kNumPrecisions; ++p) {
        f.flops[p] = Mean(last.sum_flops[p], count);
      }
      f.flops_source = Source::kSampled;
    }
    const double total_bytes = last.sum_read + last.sum_write;
    double total_flops = 0;
    for (double v : last.sum_flops) total_flops += v;
    out.spread = std::max(
        dram ? Spread(last.min_bytes, last.max_bytes, total_bytes, count) : 0,
        flops ? Spread(last.min_flops, last.max_flops, total_flops, count)
              : 0);
    char label[96];
    if (count > 1) {
      std::snprintf(label, sizeof label,
                    "counters (sampled %llu of %llu, spread %.1f%%)",
                    static_cast<unsigned long long>(count),
                    static_cast<unsigned long long>(launches),
                    100.0 * out.spread);
    } else {
      std::snprintf(label, sizeof label, "counters (sampled %llu of %llu)",
                    static_cast<unsigned long long>(count),
                    static_cast<unsigned long long>(launches));
    }
    out.label = label;
    k.sampled = &out;
    j->any_sampled = true;
    if (InScope(scope, k)) ++(*stats)[ImportStat::k_kernels_sampled];
  }
}

}  // namespace rooftrace
