#include "pipeline/pm_attribution.h"

#include <algorithm>
#include <numeric>

namespace rooftrace {

PmAttribution AttributePmSamples(const std::vector<PmSample>& samples,
                                 const std::vector<PmKernelSpan>& kernels) {
  PmAttribution out;
  out.kernels.resize(kernels.size());
  out.fates.assign(samples.size(), PmSampleFate::kInvalid);
  // Kernels by start, samples by start: one sweep keeps the kernels that
  // may overlap the current sample (started before it ends, not ended
  // before it starts).
  std::vector<size_t> by_start(kernels.size());
  std::iota(by_start.begin(), by_start.end(), 0);
  std::sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) {
    return kernels[a].start_ns < kernels[b].start_ns;
  });
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return samples[a].start_ns < samples[b].start_ns;
  });
  std::vector<size_t> active;  // kernel indexes
  std::vector<std::pair<size_t, uint64_t>> overlaps;
  size_t next = 0;
  for (size_t si : order) {
    const PmSample& s = samples[si];
    if (s.end_ns <= s.start_ns) {
      ++out.samples_invalid;
      continue;
    }
    while (next < by_start.size() &&
           kernels[by_start[next]].start_ns < s.end_ns) {
      active.push_back(by_start[next++]);
    }
    // Kernels that ended before this sample cannot overlap a later one
    // either (samples come by start).
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](size_t k) {
                                  return kernels[k].end_ns <= s.start_ns;
                                }),
                 active.end());
    overlaps.clear();
    uint64_t total = 0;
    for (size_t k : active) {
      const uint64_t lo = std::max(kernels[k].start_ns, s.start_ns);
      const uint64_t hi = std::min(kernels[k].end_ns, s.end_ns);
      if (hi <= lo) continue;
      overlaps.emplace_back(k, hi - lo);
      total += hi - lo;
    }
    if (overlaps.empty()) {
      out.fates[si] = PmSampleFate::kUnattributed;
      ++out.samples_unattributed;
      for (int c = 0; c < kNumPmCounters; ++c) {
        out.unattributed[c] += s.values[c];
      }
      continue;
    }
    if (overlaps.size() == 1) {
      out.fates[si] = PmSampleFate::kExact;
      ++out.samples_exact;
      PmKernelCounts& k = out.kernels[overlaps[0].first];
      ++k.exact_samples;
      for (int c = 0; c < kNumPmCounters; ++c) k.values[c] += s.values[c];
      continue;
    }
    out.fates[si] = PmSampleFate::kSplit;
    ++out.samples_split;
    for (const auto& [index, ns] : overlaps) {
      PmKernelCounts& k = out.kernels[index];
      ++k.split_samples;
      const double share =
          static_cast<double>(ns) / static_cast<double>(total);
      for (int c = 0; c < kNumPmCounters; ++c) {
        k.values[c] += share * s.values[c];
        k.split[c] += share * s.values[c];
      }
    }
  }
  return out;
}

std::map<std::string, PmFamilyTotals> PmTotalsByFamily(
    const PmAttribution& attribution,
    const std::vector<std::string>& families) {
  std::map<std::string, PmFamilyTotals> out;
  const size_t n = std::min(families.size(), attribution.kernels.size());
  for (size_t i = 0; i < n; ++i) {
    PmFamilyTotals& t = out[families[i]];
    ++t.kernels;
    const PmKernelCounts& k = attribution.kernels[i];
    for (int c = 0; c < kNumPmCounters; ++c) {
      t.values[c] += k.values[c];
      t.split[c] += k.split[c];
    }
  }
  return out;
}

}  // namespace rooftrace
