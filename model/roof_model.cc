#include "model/roof_model.h"

#include <algorithm>
#include <cstdio>

namespace rooftrace {
double Roofs::Peak(Precision p) const {
  double peak = peak_flops_per_s[static_cast<int>(p)];
  if (peak > 0) return peak;
  switch (p) {
    case Precision::kFp64Tensor:
      return peak_flops_per_s[static_cast<int>(Precision::kFp64)];
    case Precision::kTf32Tensor:
      return peak_flops_per_s[static_cast<int>(Precision::kFp32)];
    case Precision::kFp8Tensor:
      return Peak(Precision::kFp16Tensor);
    case Precision::kFp16Tensor:
      return peak_flops_per_s[static_cast<int>(Precision::kFp16)];
    // bf16 on CUDA cores runs fp16's path where a datasheet or profile
    // does not list it apart (the datasheet lists A100's, half of fp16's).
    case Precision::kBf16:
      return peak_flops_per_s[static_cast<int>(Precision::kFp16)];
    default:
      return 0;
  }
}

double Roofs::Ridge(Precision p) const {
  return RidgePoint(Peak(p), dram_bytes_per_s);
}

double Roofs::LowestPeak() const {
  double lowest = 0;
  for (double peak : peak_flops_per_s) {
    if (peak > 0 && (lowest == 0 || peak < lowest)) lowest = peak;
  }
  return lowest;
}

Roofs RoofsFromDatasheet(std::string_view device_name_or_key) {
  Roofs r;
  r.device_name = std::string(device_name_or_key);
  const DatasheetEntry* e = FindDatasheetEntry(device_name_or_key);
  if (e == nullptr) return r;
  r.peak_flops_per_s = e->peak_flops_per_s;
  r.dram_bytes_per_s = e->dram_bytes_per_s;
  r.source = "datasheet:" + std::string(e->key);
  r.kind = "datasheet";
  r.sm_clock_hz = e->boost_clock_hz;
  if (const DatasheetLink* link = FindDatasheetLink(*e)) {
    r.link_bytes_per_s = link->bytes_per_s;
    r.link_name = std::string(link->name);
  }
  return r;
}

Roofs RoofsFromProfile(const DeviceProfile& profile, const std::string& path) {
  Roofs r;
  r.device_name = profile.device.name;
  for (int i = 0; i < kNumPrecisions; ++i) {
    r.peak_flops_per_s[i] = profile.PeakFlopsPerS(static_cast<Precision>(i));
  }
  r.dram_bytes_per_s = profile.DramBytesPerS();
  r.source = "calibrated:" + path;
  r.kind = "calibrated";
  r.sm_clock_hz = profile.device.sm_clock_mhz * 1e6;
  r.link_bytes_per_s = profile.LinkBytesPerS();
  r.link_name = profile.link_name;
  // A profile written before links were part of it: its GPU's datasheet
  // link.
  const DatasheetEntry* e = FindDatasheetEntry(profile.datasheet_key.empty()
                                                   ? profile.device.name
                                                   : profile.datasheet_key);
  if (r.link_bytes_per_s <= 0 && e != nullptr) {
    if (const DatasheetLink* link = FindDatasheetLink(*e)) {
      r.link_bytes_per_s = link->bytes_per_s;
      r.link_name = std::string(link->name);
    }
  }
  if (r.link_name.empty() && r.link_bytes_per_s > 0) {
    r.link_name = profile.measured_link_bytes_per_s > 0 ? "measured link"
                                                        : "datasheet link";
  }
  return r;
}

namespace {

std::string Ghz(double hz) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f GHz", hz * 1e-9);
  return buf;
}

}  // namespace

Roofs ScaleRoofsToClock(Roofs roofs, double measured_sm_clock_hz) {
  if (measured_sm_clock_hz <= 0 || !roofs.known()) return roofs;
  if (roofs.sm_clock_hz <= 0) {
    roofs.clock_note =
        "compute roofs not scaled to the " + Ghz(measured_sm_clock_hz) +
        " SM clock the kernels ran at: the roofs (" + roofs.source +
        ") name no clock they assume";
    return roofs;
  }
  if (measured_sm_clock_hz >= roofs.sm_clock_hz) return roofs;
  const double ratio = measured_sm_clock_hz / roofs.sm_clock_hz;
  for (double& peak : roofs.peak_flops_per_s) peak *= ratio;
  roofs.clock_note = "compute roofs scaled to " + Ghz(measured_sm_clock_hz) +
                     " (the clock the counters ran at) from " +
                     Ghz(roofs.sm_clock_hz) +
                     "; DRAM roof not scaled (the memory clock is not "
                     "locked with the SM clock)";
  roofs.sm_clock_hz = measured_sm_clock_hz;
  return roofs;
}

std::string_view SourceName(Source s) {
  switch (s) {
    case Source::kAnalytic: return "analytic";
    case Source::kCounters: return "counters";
    case Source::kInherited: return "inherited";
    case Source::kSampled: return "counters (sampled)";
    case Source::kPmSampled: return "pm-sampling";
    case Source::kNone: break;
  }
  return "none";
}

bool IsSampledSourceName(std::string_view stored) {
  return stored.substr(0, 17) == "counters (sampled";
}

bool IsPmSampledSourceName(std::string_view stored) {
  return stored.substr(0, 11) == "pm-sampling";
}

double PmSampledErrorFraction(std::string_view stored) {
  constexpr std::string_view kError = "error ";
  if (!IsPmSampledSourceName(stored)) return 0;
  const size_t at = stored.find(kError);
  if (at == std::string_view::npos) return 0;
  // Digits and one point, as PmSampledLabel writes them ("%.1f").
  double whole = 0, scale = 0;
  bool any = false;
  for (size_t i = at + kError.size(); i < stored.size(); ++i) {
    const char ch = stored[i];
    if (ch >= '0' && ch <= '9') {
      any = true;
      if (scale == 0) {
        whole = whole * 10 + (ch - '0');
      } else {
        whole += (ch - '0') * scale;
        scale /= 10;
      }
    } else if (ch == '.' && scale == 0) {
      scale = 0.1;
    } else {
      break;
    }
  }
  return any ? whole / 100.0 : 0;
}

std::string_view BoundName(Bound b) {
  switch (b) {
    case Bound::kMemory: return "memory";
    case Bound::kCompute: return "compute";
    case Bound::kLatency: return "latency";
    case Bound::kUnknown: break;
  }
  return "unknown";
}

Annotation Annotate(const KernelFacts& f, const Roofs& roofs,
                    const AnnotateOptions& options) {
  Annotation a;
  const bool have_flops = f.flops_source != Source::kNone;
  const bool have_bytes = f.bytes_source != Source::kNone;
  uint64_t total = 0;
  uint64_t best = 0;
  for (int i = 0; i < kNumPrecisions; ++i) {
    total += f.flops[i];
    if (f.flops[i] > best) {
      best = f.flops[i];
      a.precision = static_cast<Precision>(i);
    }
  }
  if (have_flops) a.flops = total;
  // Zero FLOPs counted is "a kernel without FLOPs" (a copy): judged on
  // bandwidth alone, like a kernel whose FLOPs are unknown.
  const bool flop_kernel = have_flops && total > 0;
  if (flop_kernel && have_bytes && f.dram_bytes > 0) {
    a.ai = static_cast<double>(total) / static_cast<double>(f.dram_bytes);
  }
  if (f.duration_ns == 0) return a;
  const double t = static_cast<double>(f.duration_ns) * 1e-9;
  if (have_flops) a.achieved_flops_per_s = static_cast<double>(total) / t;
  if (have_bytes) {
    a.achieved_bytes_per_s = static_cast<double>(f.dram_bytes) / t;
  }
  const double bw = roofs.dram_bytes_per_s;
  const double peak = flop_kernel ? roofs.Peak(a.precision) : 0;
  const bool short_kernel = f.duration_ns < options.latency_max_ns;

  if (flop_kernel && a.ai && peak > 0 && bw > 0) {
    const double roof = std::min(peak, *a.ai * bw);
    a.roof_flops_per_s = roof;
    a.fraction_of_roof = *a.achieved_flops_per_s / roof;
    const bool far_below =
        *a.achieved_flops_per_s < options.latency_fraction * peak &&
        *a.achieved_bytes_per_s < options.latency_fraction * bw;
    if (short_kernel && far_below) {
      a.bound = Bound::kLatency;
    } else {
      a.bound = *a.ai < peak / bw ? Bound::kMemory : Bound::kCompute;
    }
  } else if (flop_kernel && a.ai && bw > 0) {
    // FLOPs and bytes, but no peak for their precision. The roof at this
    // intensity is min(P, AI*B) <= AI*B whatever P is: below the ridge of
    // every roof the device has (AI*B under its lowest peak), the kernel is
    // memory-bound on AI*B. Above one, the bound is unknown; but bytes
    // moved faster than B put it above any roof, and bytes/s over B is
    // then a lower bound of its fraction.
    const double lowest = roofs.LowestPeak();
    const double bytes_fraction = *a.achieved_bytes_per_s / bw;
    if (lowest > 0 && *a.ai * bw < lowest) {
      a.roof_flops_per_s = *a.ai * bw;
      a.fraction_of_roof = bytes_fraction;
      a.bound = short_kernel && bytes_fraction < options.latency_fraction
                    ? Bound::kLatency
                    : Bound::kMemory;
    } else if (bytes_fraction > 1.0) {
      a.fraction_of_roof = bytes_fraction;
    }
  } else if (flop_kernel && peak > 0) {
    // FLOPs without bytes: only the compute roof applies.
    a.roof_flops_per_s = peak;
    a.fraction_of_roof = *a.achieved_flops_per_s / peak;
    if (short_kernel && *a.fraction_of_roof < options.latency_fraction) {
      a.bound = Bound::kLatency;
    }
  } else if (!flop_kernel && have_bytes && bw > 0) {
    a.fraction_of_roof = *a.achieved_bytes_per_s / bw;
    a.bound = short_kernel && *a.fraction_of_roof < options.latency_fraction
                  ? Bound::kLatency
                  : Bound::kMemory;
  }
  return a;
}

}  // namespace rooftrace
