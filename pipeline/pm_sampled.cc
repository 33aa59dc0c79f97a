#include "pipeline/pm_sampled.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace rooftrace {

namespace {

constexpr int kRead = static_cast<int>(PmCounter::kDramReadBytes);
constexpr int kWrite = static_cast<int>(PmCounter::kDramWriteBytes);

uint64_t Bytes(double v) {
  return v > 0 ? static_cast<uint64_t>(std::llround(v)) : 0;
}

bool Timed(const KernelRecord& k) { return k.end_ns > k.start_ns; }

}  // namespace

std::string PmSampledLabel(const PmKernelCounts& c) {
  const double bytes = c.values[kRead] + c.values[kWrite];
  const double split = c.split[kRead] + c.split[kWrite];
  if (c.split_samples == 0 || bytes <= 0) return "pm-sampling (exact)";
  char label[64];
  std::snprintf(label, sizeof label, "pm-sampling (attributed, error %.1f%%)",
                100.0 * split / bytes);
  return label;
}

void PmSampledBytes::Apply(const Session& session, JoinedSession* j,
                           const WriteScope* scope, ImportStats* stats,
                           RecordMask* drop) {
  // Sampling mode by its samples, whatever the Hello said: a process whose
  // CUDA started after its Hello went out in trace mode samples too.
  const std::vector<PmSampleRecord>& samples = session.pm_samples();
  if (drop != nullptr) drop->pm_samples.assign(samples.size(), 0);
  if (samples.empty()) return;
  std::vector<Span>& kept = kept_[&session];
  std::vector<Span> still_kept;

  std::vector<uint32_t> devices;
  for (const PmSampleRecord& s : samples) {
    if (std::find(devices.begin(), devices.end(), s.device_id) ==
        devices.end()) {
      devices.push_back(s.device_id);
    }
  }
  std::vector<size_t> sample_of, kernel_of;
  std::vector<PmSample> device_samples;
  std::vector<PmKernelSpan> spans;
  for (const uint32_t device : devices) {
    sample_of.clear();
    kernel_of.clear();
    device_samples.clear();
    spans.clear();
    for (size_t i = 0; i < samples.size(); ++i) {
      const PmSampleRecord& r = samples[i];
      if (r.device_id != device) continue;
      PmSample s;
      s.start_ns = r.start_ns;
      s.end_ns = r.end_ns;
      std::copy(r.values.begin(), r.values.end(), s.values.begin());
      device_samples.push_back(s);
      sample_of.push_back(i);
    }
    // The kernels joined now, then the stored ones still overlapping held
    // samples (they take their share; it was given to them when stored).
    // Where no held kernel starts earlier, samples ending before
    // `retire_before` can go.
    uint64_t held_start = std::numeric_limits<uint64_t>::max();
    uint64_t stored_end = 0;
    for (size_t i = 0; i < j->kernels.size(); ++i) {
      const KernelRecord& k = *j->kernels[i].kernel;
      if (k.device_id != device || !Timed(k)) continue;
      spans.push_back({k.start_ns, k.end_ns});
      kernel_of.push_back(i);
      if (InScope(scope, j->kernels[i])) {
        stored_end = std::max(stored_end, k.end_ns);
      } else {
        held_start = std::min(held_start, k.start_ns);
      }
    }
    for (const Span& s : kept) {
      if (s.device == device) spans.push_back({s.start_ns, s.end_ns});
    }
    const PmAttribution a = AttributePmSamples(device_samples, spans);

    for (size_t n = 0; n < kernel_of.size(); ++n) {
      const PmKernelCounts& c = a.kernels[n];
      if (c.exact_samples + c.split_samples == 0) continue;
      JoinedKernel& k = j->kernels[kernel_of[n]];
      // A kernel's own counters, or its signature's, are per launch.
      if (k.counters != nullptr || k.sampled != nullptr) continue;
      SampledFigures& out = j->sampled.emplace_back();
      out.label = PmSampledLabel(c);
      out.samples = c.exact_samples + c.split_samples;
      out.has_dram_bytes = true;
      out.dram_read_bytes = Bytes(c.values[kRead]);
      out.dram_write_bytes = Bytes(c.values[kWrite]);
      const double bytes = c.values[kRead] + c.values[kWrite];
      out.spread = bytes > 0 ? (c.split[kRead] + c.split[kWrite]) / bytes : 0;
      KernelFacts& f = k.facts;
      f.dram_bytes = out.dram_read_bytes + out.dram_write_bytes;
      f.bytes_source = Source::kPmSampled;
      k.sampled = &out;
      if (InScope(scope, k)) ++(*stats)[ImportStat::k_kernels_pm_sampled];
    }

    // Which samples this write retires, counted once each.
    const uint64_t retire_before =
        scope == nullptr ? std::numeric_limits<uint64_t>::max()
                         : std::min(held_start, stored_end);
    for (size_t n = 0; n < device_samples.size(); ++n) {
      if (device_samples[n].end_ns > retire_before) continue;
      if (drop != nullptr) drop->pm_samples[sample_of[n]] = 1;
      switch (a.fates[n]) {
        case PmSampleFate::kExact:
          ++(*stats)[ImportStat::k_pm_samples_exact];
          break;
        case PmSampleFate::kSplit:
          ++(*stats)[ImportStat::k_pm_samples_split];
          break;
        case PmSampleFate::kUnattributed:
        case PmSampleFate::kInvalid:
          ++(*stats)[ImportStat::k_pm_samples_unattributed];
          break;
      }
    }
    if (scope == nullptr) continue;
    // Stored kernels that overlap a sample kept take part in its split
    // next window.
    for (size_t n = 0; n < kernel_of.size(); ++n) {
      const JoinedKernel& k = j->kernels[kernel_of[n]];
      if (InScope(scope, k) && k.kernel->end_ns > retire_before) {
        still_kept.push_back({device, k.kernel->start_ns, k.kernel->end_ns});
      }
    }
    for (const Span& s : kept) {
      if (s.device == device && s.end_ns > retire_before) {
        still_kept.push_back(s);
      }
    }
  }
  if (scope != nullptr) kept.swap(still_kept);
}

}  // namespace rooftrace
