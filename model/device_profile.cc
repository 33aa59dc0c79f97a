#include "model/device_profile.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "base/files.h"
#include "base/json.h"

namespace rooftrace {
namespace {

constexpr char kFix[] =
    "run `rooftrace calibrate -o profile.json` on the GPU to write a valid "
    "profile";

json::Value NonZero(double d) { return d > 0 ? json::Value(d) : json::Value(); }

}  // namespace

double PrecisionRoof::Ratio() const {
  if (measured_flops_per_s <= 0 || datasheet_flops_per_s <= 0) return 0;
  return measured_flops_per_s / datasheet_flops_per_s;
}

double CounterValidation::ErrorPercent() const {
  if (expected == 0) return 0;
  return 100.0 * (counted - expected) / expected;
}

double DeviceProfile::LinkBytesPerS() const {
  return measured_link_bytes_per_s > 0 ? measured_link_bytes_per_s
                                       : datasheet_link_bytes_per_s;
}

double DeviceProfile::DramBytesPerS() const {
  return measured_dram_bytes_per_s > 0 ? measured_dram_bytes_per_s
                                       : datasheet_dram_bytes_per_s;
}

double DeviceProfile::DramRatio() const {
  if (measured_dram_bytes_per_s <= 0 || datasheet_dram_bytes_per_s <= 0) {
    return 0;
  }
  return measured_dram_bytes_per_s / datasheet_dram_bytes_per_s;
}

double DeviceProfile::PeakFlopsPerS(Precision p) const {
  const PrecisionRoof& r = roof(p);
  return r.measured_flops_per_s > 0 ? r.measured_flops_per_s
                                    : r.datasheet_flops_per_s;
}

double DeviceProfile::Ridge(Precision p) const {
  return RidgePoint(PeakFlopsPerS(p), DramBytesPerS());
}

std::string DeviceProfile::RoofSource(Precision p) const {
  const bool peak_measured = roof(p).measured_flops_per_s > 0;
  const bool dram_measured = measured_dram_bytes_per_s > 0;
  if (PeakFlopsPerS(p) <= 0 || DramBytesPerS() <= 0) return "none";
  if (peak_measured && dram_measured) return "measured";
  if (!peak_measured && !dram_measured) return "datasheet";
  return "measured+datasheet";
}

json::Value DeviceIdentityToJson(const DeviceIdentity& d) {
  json::Value dev;
  dev.Set("name", d.name);
  dev.Set("uuid", d.uuid);
  dev.Set("chip", d.chip);
  dev.Set("sm_count", d.sm_count);
  dev.Set("sm_clock_mhz", d.sm_clock_mhz);
  dev.Set("memory_clock_mhz", d.memory_clock_mhz);
  dev.Set("memory_bus_width_bits", d.memory_bus_width_bits);
  dev.Set("memory_bytes", static_cast<uint64_t>(d.memory_bytes));
  dev.Set("l2_bytes", static_cast<uint64_t>(d.l2_bytes));
  dev.Set("driver_version", d.driver_version);
  dev.Set("runtime_version", d.runtime_version);
  return dev;
}

Status DeviceIdentityFromJson(const json::ObjectReader& r, DeviceIdentity* d) {
  RT_RETURN_IF_ERROR(r.String("name", &d->name));
  RT_RETURN_IF_ERROR(r.String("uuid", &d->uuid));
  RT_RETURN_IF_ERROR(r.String("chip", &d->chip));
  RT_RETURN_IF_ERROR(r.Int("sm_count", &d->sm_count));
  RT_RETURN_IF_ERROR(r.Number("sm_clock_mhz", &d->sm_clock_mhz));
  RT_RETURN_IF_ERROR(r.Number("memory_clock_mhz", &d->memory_clock_mhz));
  RT_RETURN_IF_ERROR(
      r.Int("memory_bus_width_bits", &d->memory_bus_width_bits));
  RT_RETURN_IF_ERROR(r.Uint64("memory_bytes", &d->memory_bytes));
  RT_RETURN_IF_ERROR(r.Uint64("l2_bytes", &d->l2_bytes));
  RT_RETURN_IF_ERROR(r.String("driver_version", &d->driver_version));
  RT_RETURN_IF_ERROR(r.String("runtime_version", &d->runtime_version));
  return OkStatus();
}


bool FillDatasheet(DeviceProfile* profile) {
  const DatasheetEntry* e = nullptr;
  if (!profile->datasheet_key.empty()) {
    e = FindDatasheetEntry(profile->datasheet_key);
  }
  if (!e) e = FindDatasheetEntry(profile->device.name);
  if (!e) return false;
  profile->datasheet_key = std::string(e->key);
  profile->datasheet_dram_bytes_per_s = e->dram_bytes_per_s;
  for (int i = 1; i < kNumPrecisions; ++i) {
    profile->roofs[i].datasheet_flops_per_s = e->peak_flops_per_s[i];
  }
  if (const DatasheetLink* link = FindDatasheetLink(*e)) {
    profile->datasheet_link_bytes_per_s = link->bytes_per_s;
    if (profile->link_name.empty()) profile->link_name = std::string(link->name);
  }
  return true;
}

std::string DeviceProfileToJson(const DeviceProfile& p) {
  json::Value root;
  root.Set("format", kDeviceProfileFormat);
  root.Set("version", kDeviceProfileVersion);
  root.Set("rooftrace_version", p.rooftrace_version);
  root.Set("created_utc", p.created_utc);
  root.Set("sample", p.sample);

  root.Set("device", DeviceIdentityToJson(p.device));
  root.Set("datasheet_key", p.datasheet_key);

  json::Value dram;
  dram.Set("measured_bytes_per_s", NonZero(p.measured_dram_bytes_per_s));
  dram.Set("datasheet_bytes_per_s", NonZero(p.datasheet_dram_bytes_per_s));
  dram.Set("ratio", NonZero(p.DramRatio()));
  dram.Set("kernel", p.dram_kernel);
  root.Set("dram", std::move(dram));
  if (p.LinkBytesPerS() > 0 || !p.link_name.empty()) {
    json::Value link;
    link.Set("measured_bytes_per_s", NonZero(p.measured_link_bytes_per_s));
    link.Set("datasheet_bytes_per_s", NonZero(p.datasheet_link_bytes_per_s));
    link.Set("name", p.link_name);
    root.Set("link", std::move(link));
  }

  json::Value compute = json::Value::MakeObject();
  for (int i = 1; i < kNumPrecisions; ++i) {
    const auto prec = static_cast<Precision>(i);
    const PrecisionRoof& r = p.roof(prec);
    if (r.measured_flops_per_s <= 0 && r.datasheet_flops_per_s <= 0 &&
        r.kernel.empty() && r.note.empty()) {
      continue;
    }
    json::Value c;
    c.Set("measured_flops_per_s", NonZero(r.measured_flops_per_s));
    c.Set("datasheet_flops_per_s", NonZero(r.datasheet_flops_per_s));
    c.Set("ratio", NonZero(r.Ratio()));
    c.Set("ridge_flops_per_byte", NonZero(p.Ridge(prec)));
    c.Set("source", p.RoofSource(prec));
    c.Set("kernel", r.kernel);
    c.Set("note", r.note);
    compute.Set(PrecisionKey(prec), std::move(c));
  }
  root.Set("compute", std::move(compute));

  json::Value val = json::Value::MakeArray();
  for (const CounterValidation& v : p.validation) {
    json::Value e;
    e.Set("kernel", v.kernel);
    e.Set("quantity", v.quantity);
    e.Set("expected", v.expected);
    e.Set("counted", v.counted);
    e.Set("error_pct", v.ErrorPercent());
    val.Append(std::move(e));
  }
  root.Set("counter_validation", std::move(val));
  return json::Write(root);
}

namespace {

// `key` of `r` into `*out` when present: 0 (not measured / not published)
// or a roof inside [lo, hi]. A roof outside it is a typo or a damaged file,
// and would turn every ratio and ridge derived from it into inf or nan.
Status Roof(const json::ObjectReader& r, std::string_view key, double lo,
            double hi, const char* unit, double* out) {
  double d = 0;
  RT_RETURN_IF_ERROR(r.NonNegative(key, &d));
  if (d != 0 && !(d >= lo && d <= hi)) {
    return r.Error(key, "is " + json::FormatNumber(d) + " " + unit +
                            ", outside what a GPU can have (" +
                            json::FormatNumber(lo) + " to " +
                            json::FormatNumber(hi) +
                            "; 0 or absent: not measured)");
  }
  *out = d;
  return OkStatus();
}

// A bandwidth object of a profile ("dram", "link"): its measured and
// datasheet bytes per second, each refused outside what a GPU's memory or
// link can have (Roof), and one text member (`text_key`); absent members
// keep their defaults.
Status ReadBandwidth(const json::ObjectReader& top, std::string_view key,
                     std::string_view text_key, double* measured,
                     double* datasheet, std::string* text) {
  RT_ASSIGN_OR_RETURN(const json::Value* v, top.Object(key));
  if (v == nullptr) return OkStatus();
  RT_ASSIGN_OR_RETURN(const json::ObjectReader r, top.Child(key, *v));
  RT_RETURN_IF_ERROR(Roof(r, "measured_bytes_per_s", kMinDramBytesPerS,
                          kMaxDramBytesPerS, "bytes/s", measured));
  RT_RETURN_IF_ERROR(Roof(r, "datasheet_bytes_per_s", kMinDramBytesPerS,
                          kMaxDramBytesPerS, "bytes/s", datasheet));
  return r.String(text_key, text);
}

StatusOr<DeviceProfile> ProfileFromValue(const json::Value& root,
                                         const std::string& source) {
  if (!root.is_object()) {
    return Corrupt(source + ": not a rooftrace device profile (the top level "
                   "is not an object); " + kFix);
  }
  const json::Value* format = root.Find("format");
  if (!format || !format->is_string() ||
      format->as_string() != kDeviceProfileFormat) {
    return Corrupt(source + ": not a rooftrace device profile (\"format\" is "
                   "not \"" + kDeviceProfileFormat + "\"); " + kFix);
  }
  const std::string fix = kFix;
  const json::ObjectReader top(source, "", root, fix);
  int version = 0;
  RT_RETURN_IF_ERROR(top.Int("version", &version));
  if (version < 1) return top.Error("version", "is missing or below 1");
  if (version > kDeviceProfileVersion) {
    return InvalidArgument(
        source + ": device profile version " + std::to_string(version) +
        " was written by a newer rooftrace (this one reads up to version " +
        std::to_string(kDeviceProfileVersion) +
        "); upgrade rooftrace or re-run `rooftrace calibrate` with this one");
  }

  DeviceProfile p;
  RT_RETURN_IF_ERROR(top.String("rooftrace_version", &p.rooftrace_version));
  RT_RETURN_IF_ERROR(top.String("created_utc", &p.created_utc));
  RT_RETURN_IF_ERROR(top.Bool("sample", &p.sample));
  RT_RETURN_IF_ERROR(top.String("datasheet_key", &p.datasheet_key));

  RT_ASSIGN_OR_RETURN(const json::Value* dev, top.Object("device"));
  if (dev) {
    RT_ASSIGN_OR_RETURN(const json::ObjectReader d, top.Child("device", *dev));
    RT_RETURN_IF_ERROR(DeviceIdentityFromJson(d, &p.device));
  }

  RT_RETURN_IF_ERROR(ReadBandwidth(top, "dram", "kernel",
                                   &p.measured_dram_bytes_per_s,
                                   &p.datasheet_dram_bytes_per_s,
                                   &p.dram_kernel));
  RT_RETURN_IF_ERROR(ReadBandwidth(top, "link", "name",
                                   &p.measured_link_bytes_per_s,
                                   &p.datasheet_link_bytes_per_s,
                                   &p.link_name));

  RT_ASSIGN_OR_RETURN(const json::Value* compute, top.Object("compute"));
  if (compute) {
    RT_ASSIGN_OR_RETURN(const json::ObjectReader all,
                        top.Child("compute", *compute));
    for (const auto& [key, value] : compute->as_object()) {
      auto prec = PrecisionFromKey(key);
      if (!prec) {
        // Schemas only grow: a precision class from a newer rooftrace is
        // skipped, not fatal.
        continue;
      }
      RT_ASSIGN_OR_RETURN(const json::ObjectReader c, all.Child(key, value));
      PrecisionRoof& r = p.roof(*prec);
      for (const auto& [field, out] :
           {std::pair{"measured_flops_per_s", &r.measured_flops_per_s},
            std::pair{"datasheet_flops_per_s", &r.datasheet_flops_per_s}}) {
        RT_RETURN_IF_ERROR(
            Roof(c, field, kMinFlopsPerS, kMaxFlopsPerS, "FLOP/s", out));
      }
      RT_RETURN_IF_ERROR(c.String("kernel", &r.kernel));
      RT_RETURN_IF_ERROR(c.String("note", &r.note));
    }
  }

  RT_ASSIGN_OR_RETURN(const json::Value* val,
                      top.ArrayOf("counter_validation"));
  if (val) {
    const json::Array& arr = val->as_array();
    for (size_t i = 0; i < arr.size(); ++i) {
      RT_ASSIGN_OR_RETURN(const json::ObjectReader v,
                          top.Element("counter_validation", i, arr[i]));
      CounterValidation cv;
      RT_RETURN_IF_ERROR(v.String("kernel", &cv.kernel));
      RT_RETURN_IF_ERROR(v.String("quantity", &cv.quantity));
      RT_RETURN_IF_ERROR(v.NonNegative("expected", &cv.expected));
      RT_RETURN_IF_ERROR(v.NonNegative("counted", &cv.counted));
      p.validation.push_back(std::move(cv));
    }
  }

  if (p.DramBytesPerS() <= 0) {
    return InvalidArgument(source + ": the profile has no DRAM bandwidth "
                           "(dram.measured_bytes_per_s and "
                           "dram.datasheet_bytes_per_s are both missing); " +
                           kFix);
  }
  bool any_peak = false;
  for (int i = 1; i < kNumPrecisions; ++i) {
    any_peak |= p.PeakFlopsPerS(static_cast<Precision>(i)) > 0;
  }
  if (!any_peak) {
    return InvalidArgument(source + ": the profile has no compute roof (no "
                           "precision under \"compute\" has a measured or "
                           "datasheet FLOP/s); " + kFix);
  }
  return p;
}

}  // namespace

StatusOr<DeviceProfile> DeviceProfileFromJson(std::string_view text,
                                              const std::string& source) {
  auto parsed = json::Parse(text, source);
  if (!parsed.ok()) {
    return Corrupt(parsed.status().message() +
                   " (a device profile must be JSON; " + kFix + ")");
  }
  return ProfileFromValue(*parsed, source);
}

StatusOr<DeviceProfile> LoadDeviceProfile(const std::string& path) {
  // A profile is a few kilobytes: /dev/zero or an endless FIFO is refused
  // at the cap instead of filling memory.
  StatusOr<std::string> text =
      ReadBoundedFile(path, kMaxDeviceProfileBytes, "", "a device profile");
  if (!text.ok() && text.status().code() == StatusCode::kNotFound) {
    return NotFound(path + ": cannot open the device profile (" +
                    std::strerror(ENOENT) +
                    "), and it is not a datasheet key; check the path, pass "
                    "a key listed by `rooftrace devices` (e.g. h100-sxm), "
                    "or " + kFix);
  }
  if (!text.ok()) {
    return Status(text.status().code(),
                  text.status().message() + " (" + kFix + ")");
  }
  return DeviceProfileFromJson(*text, path);
}

Status SaveDeviceProfile(const DeviceProfile& profile,
                         const std::string& path) {
  return WriteTextFile(path, DeviceProfileToJson(profile));
}

std::string DatasheetKeyOfProfileArg(const std::string& arg) {
  if (arg.empty()) return "";
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return "";  // a file wins
  std::string key = arg;
  if (key.rfind("datasheet:", 0) == 0) key = key.substr(10);
  const DatasheetEntry* entry = FindDatasheetEntry(key);
  return entry == nullptr ? std::string() : std::string(entry->key);
}

}  // namespace rooftrace
