#include "analyzer/roofs.h"

#include <sys/stat.h>

#include <algorithm>

#include "analyzer/store_reader.h"
#include "collector/datasheet.h"
#ifdef ROOFTRACE_HAVE_DEVICE_PROFILE
#include "collector/device_profile.h"
#endif

namespace rooftrace::analyzer {
namespace {

void SortRoofs(RoofTable* t) {
  std::sort(t->roofs.begin(), t->roofs.end(), [](const Roof& a, const Roof& b) {
    return a.peak_flops_per_s < b.peak_flops_per_s;
  });
}

}  // namespace

const Roof* RoofTable::Find(std::string_view precision) const {
  for (const Roof& r : roofs) {
    if (r.precision == precision) return &r;
  }
  return nullptr;
}

RoofTable RoofTableFromStore(const std::vector<RoofRow>& rows,
                             const std::string& run_roof_source) {
  RoofTable t;
  t.source = run_roof_source.empty() ? "store" : run_roof_source;
  if (rows.empty()) return t;
  const int64_t device = rows.front().device_id;
  for (const RoofRow& row : rows) {
    if (row.device_id != device) continue;
    if (row.dram_bytes_per_s > 0) t.dram_bytes_per_s = row.dram_bytes_per_s;
    if (row.peak_flops_per_s <= 0) continue;
    Roof r;
    r.precision = row.precision;
    r.peak_flops_per_s = row.peak_flops_per_s;
    r.dram_bytes_per_s = row.dram_bytes_per_s;
    r.ridge_flops_per_byte =
        row.ridge_flops_per_byte > 0
            ? row.ridge_flops_per_byte
            : RidgePoint(row.peak_flops_per_s, row.dram_bytes_per_s);
    r.source = row.source;
    t.roofs.push_back(std::move(r));
  }
  SortRoofs(&t);
  return t;
}

std::optional<RoofTable> RoofTableFromDatasheet(std::string_view device_or_key) {
  const DatasheetEntry* e = FindDatasheetEntry(device_or_key);
  if (!e) return std::nullopt;
  RoofTable t;
  t.source = "datasheet:" + std::string(e->key);
  t.dram_bytes_per_s = e->dram_bytes_per_s;
  for (int i = 1; i < kNumPrecisions; ++i) {
    const double peak = e->peak_flops_per_s[i];
    if (peak <= 0) continue;
    Roof r;
    r.precision = std::string(PrecisionKey(static_cast<Precision>(i)));
    r.peak_flops_per_s = peak;
    r.dram_bytes_per_s = e->dram_bytes_per_s;
    r.ridge_flops_per_byte = RidgePoint(peak, e->dram_bytes_per_s);
    r.source = "datasheet";
    t.roofs.push_back(std::move(r));
  }
  SortRoofs(&t);
  return t;
}

StatusOr<RoofTable> LoadRoofTable(const std::string& profile) {
  std::string key = profile;
  if (key.rfind("datasheet:", 0) == 0) key = key.substr(10);
  struct stat st;
  const bool is_file = stat(profile.c_str(), &st) == 0;
  if (!is_file) {
    if (std::optional<RoofTable> t = RoofTableFromDatasheet(key)) return *t;
    return NotFound("--device-profile " + profile +
                    ": no such file and not a datasheet key; pass a profile "
                    "written by `rooftrace calibrate` or a key listed by "
                    "`rooftrace devices` (e.g. h100-sxm)");
  }
#ifdef ROOFTRACE_HAVE_DEVICE_PROFILE
  RT_ASSIGN_OR_RETURN(const DeviceProfile p, LoadDeviceProfile(profile));
  RoofTable t;
  t.source = std::string(p.sample ? "sample-profile:" : "calibrated:") + profile;
  t.dram_bytes_per_s = p.DramBytesPerS();
  for (int i = 1; i < kNumPrecisions; ++i) {
    const Precision prec = static_cast<Precision>(i);
    const double peak = p.PeakFlopsPerS(prec);
    if (peak <= 0) continue;
    Roof r;
    r.precision = std::string(PrecisionKey(prec));
    r.peak_flops_per_s = peak;
    r.dram_bytes_per_s = t.dram_bytes_per_s;
    r.ridge_flops_per_byte = p.Ridge(prec);
    r.source = p.RoofSource(prec);
    t.roofs.push_back(std::move(r));
  }
  SortRoofs(&t);
  if (t.dram_bytes_per_s <= 0) {
    return InvalidArgument("--device-profile " + profile +
                           ": the profile has no DRAM bandwidth (measured or "
                           "datasheet); re-run `rooftrace calibrate`");
  }
  return t;
#else
  return FailedPrecondition(
      "--device-profile " + profile +
      ": this build cannot read device profile files yet "
      "(collector/device_profile.cc is missing); pass a datasheet key such as "
      "h100-sxm instead");
#endif
}

KernelAnnotation AnnotateKernel(const RoofTable& roofs,
                                std::string_view precision,
                                std::optional<double> flops,
                                std::optional<double> bytes,
                                int64_t duration_ns) {
  KernelAnnotation a;
  if (duration_ns <= 0) return a;
  const double t = static_cast<double>(duration_ns) * 1e-9;
  const Roof* roof = precision.empty() ? nullptr : roofs.Find(precision);
  const double bw = roof && roof->dram_bytes_per_s > 0 ? roof->dram_bytes_per_s
                                                       : roofs.dram_bytes_per_s;
  if (flops && *flops > 0 && bytes && *bytes > 0 && roof && bw > 0) {
    const double ai = *flops / *bytes;
    const double roof_value = std::min(roof->peak_flops_per_s, ai * bw);
    a.roof_flops_per_s = roof_value;
    a.fraction_of_roof = (*flops / t) / roof_value;
    a.bound = ai < roof->peak_flops_per_s / bw ? "memory" : "compute";
  } else if ((!flops || *flops == 0) && bytes && *bytes > 0 && bw > 0) {
    a.fraction_of_roof = (*bytes / t) / bw;
    a.bound = "memory";
  } else {
    return a;
  }
  if (*a.fraction_of_roof < kLatencyFraction && duration_ns < kLatencyMaxNs) {
    a.bound = "latency";
  }
  return a;
}

}  // namespace rooftrace::analyzer
