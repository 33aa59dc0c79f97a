#include "report/roofs.h"

#include <sys/stat.h>

#include <algorithm>

#include "store/store_reader.h"
#include "model/datasheet.h"
#include "model/device_profile.h"

namespace rooftrace {
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
  t.source = run_roof_source.empty() ? "none" : run_roof_source;
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

namespace {

RoofTable FromModel(const rooftrace::Roofs& model) {
  RoofTable t;
  t.source = model.source;
  t.dram_bytes_per_s = model.dram_bytes_per_s;
  for (int i = 1; i < kNumPrecisions; ++i) {
    const double peak = model.peak_flops_per_s[i];
    if (peak <= 0) continue;
    Roof r;
    r.precision = std::string(PrecisionKey(static_cast<Precision>(i)));
    r.peak_flops_per_s = peak;
    r.dram_bytes_per_s = model.dram_bytes_per_s;
    r.ridge_flops_per_byte = RidgePoint(peak, model.dram_bytes_per_s);
    r.source = model.kind;
    t.roofs.push_back(std::move(r));
  }
  SortRoofs(&t);
  t.model = model;
  t.link_bytes_per_s = model.link_bytes_per_s;
  t.link_name = model.link_name;
  return t;
}

Source SourceOf(std::string_view stored, bool present) {
  if (!present) return Source::kNone;
  if (stored == "counters") return Source::kCounters;
  if (stored == "inherited") return Source::kInherited;
  if (IsSampledSourceName(stored)) return Source::kSampled;
  if (IsPmSampledSourceName(stored)) return Source::kPmSampled;
  return Source::kAnalytic;
}

}  // namespace

void AddDatasheetLink(std::string_view device, RoofTable* roofs) {
  if (roofs->link_bytes_per_s > 0 || device.empty()) return;
  const DatasheetEntry* e = FindDatasheetEntry(device);
  const DatasheetLink* link = e ? FindDatasheetLink(*e) : nullptr;
  if (link == nullptr) return;
  roofs->link_bytes_per_s = link->bytes_per_s;
  roofs->link_name = std::string(link->name);
}

std::optional<RoofTable> RoofTableFromDatasheet(std::string_view device_or_key) {
  const rooftrace::Roofs model = RoofsFromDatasheet(device_or_key);
  if (!model.known()) return std::nullopt;
  return FromModel(model);
}

StatusOr<RoofTable> LoadRoofTable(const std::string& profile) {
  if (const std::string key = DatasheetKeyOfProfileArg(profile);
      !key.empty()) {
    if (std::optional<RoofTable> t = RoofTableFromDatasheet(key)) return *t;
  }
  struct stat st;
  if (stat(profile.c_str(), &st) != 0) {
    return NotFound("--device-profile " + profile +
                    ": no such file and not a datasheet key; pass a profile "
                    "written by `rooftrace calibrate` or a key listed by "
                    "`rooftrace devices` (e.g. h100-sxm)");
  }
  StatusOr<DeviceProfile> p = LoadDeviceProfile(profile);
  if (!p.ok()) {
    return Status(p.status().code(), "--device-profile " + p.status().message());
  }
  RoofTable t = FromModel(RoofsFromProfile(*p, profile));
  if (p->sample) t.source += " (SAMPLE profile: numbers not measured)";
  if (t.dram_bytes_per_s <= 0) {
    return InvalidArgument("--device-profile " + profile +
                           ": the profile has no DRAM bandwidth (measured or "
                           "datasheet); re-run `rooftrace calibrate`");
  }
  return t;
}

RoofTable ScaleRoofTableToClock(const RoofTable& roofs,
                                double measured_sm_clock_hz) {
  if (!roofs.model || measured_sm_clock_hz <= 0) return roofs;
  const rooftrace::Roofs scaled =
      ScaleRoofsToClock(*roofs.model, measured_sm_clock_hz);
  if (scaled.clock_note.empty()) return roofs;  // at or above its clock
  RoofTable t = FromModel(scaled);
  t.source = roofs.source + "; " + scaled.clock_note;
  return t;
}

std::string RoofDeviceMismatch(const RoofTable& roofs,
                               std::string_view run_device) {
  if (!roofs.model || roofs.model->device_name.empty() || run_device.empty()) {
    return "";
  }
  const std::string& roof_device = roofs.model->device_name;
  const DatasheetEntry* a = FindDatasheetEntry(roof_device);
  const DatasheetEntry* b = FindDatasheetEntry(run_device);
  // Known GPUs compare by datasheet entry (a key against a CUDA name);
  // others by name, and an unknown one against a known one is a mismatch.
  const bool same = a != nullptr || b != nullptr ? a == b
                                                 : roof_device == run_device;
  if (same) return "";
  return "the roofs (" + roofs.source + ") are for " +
         (a ? std::string(a->name) + " (" + std::string(a->key) + ")"
            : roof_device) +
         ", but the run ran on " + std::string(run_device) +
         ": its fractions of roof are against another GPU's roofs; pass "
         "the run's own GPU (a profile calibrated on it, or its datasheet "
         "key from `rooftrace devices`)";
}

KernelAnnotation AnnotateKernel(const RoofTable& roofs,
                                std::string_view precision,
                                std::optional<double> flops,
                                std::string_view flops_source,
                                std::optional<double> bytes,
                                std::string_view bytes_source,
                                int64_t duration_ns) {
  KernelAnnotation out;
  if (!roofs.model || duration_ns <= 0) return out;
  KernelFacts facts;
  facts.duration_ns = static_cast<uint64_t>(duration_ns);
  facts.flops_source = SourceOf(flops_source, flops.has_value());
  if (flops && *flops > 0) {
    const std::optional<Precision> p = PrecisionFromKey(precision);
    // FLOPs of an unknown class count against fp32, the CUDA-core default.
    facts.flops[static_cast<int>(p ? *p : Precision::kFp32)] =
        static_cast<uint64_t>(*flops);
  }
  facts.bytes_source = SourceOf(bytes_source, bytes.has_value());
  if (bytes && *bytes > 0) facts.dram_bytes = static_cast<uint64_t>(*bytes);
  const Annotation a = Annotate(facts, *roofs.model);
  out.roof_flops_per_s = a.roof_flops_per_s;
  out.fraction_of_roof = a.fraction_of_roof;
  out.bound = BoundName(a.bound).data();
  return out;
}

}  // namespace rooftrace
