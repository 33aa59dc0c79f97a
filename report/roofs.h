// The roofs a report is judged against: one compute roof per precision class
// and one DRAM roof, with where they came from. Built from the store's roofs
// table (what the collector annotated with), from the built-in datasheet, or
// from a calibrated device profile (--device-profile, re-annotation).
//
// Plain data and pure functions; thread-compatible.
#ifndef ROOFTRACE_REPORT_ROOFS_H_
#define ROOFTRACE_REPORT_ROOFS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/roof_model.h"
#include "pipeline/rows.h"

namespace rooftrace {



struct Roof {
  std::string precision;  // store key: 'bf16_tc', 'fp32', ...
  double peak_flops_per_s = 0;
  double dram_bytes_per_s = 0;
  double ridge_flops_per_byte = 0;
  std::string source;  // 'calibrated' | 'datasheet' | 'measured' ...
};

struct RoofTable {
  // What a person reads in the header: 'datasheet:h100-sxm',
  // 'calibrated:profile.json', or the run's roof_source.
  std::string source;
  double dram_bytes_per_s = 0;
  std::vector<Roof> roofs;  // by ascending peak; only precisions with a peak
  // The collector's roof model, set when the table came from a datasheet
  // key or a device profile (re-annotation).
  std::optional<rooftrace::Roofs> model;
  // The GPU-to-GPU link roof (one direction per GPU) collectives are
  // judged against, and its name; 0 when not known.
  double link_bytes_per_s = 0;
  std::string link_name;

  const Roof* Find(std::string_view precision) const;
  bool empty() const { return roofs.empty() && dram_bytes_per_s <= 0; }
};

// The first device's rows of the store's roofs table.
RoofTable RoofTableFromStore(const std::vector<RoofRow>& rows,
                             const std::string& run_roof_source);

// Sets `roofs`'s link roof from the datasheet entry of `device` (a CUDA
// name or key) when it has none: a store keeps no link roof, the link is
// a property of the GPU.
void AddDatasheetLink(std::string_view device, RoofTable* roofs);

// The built-in datasheet entry for a device name or key; nullopt if unknown.
std::optional<RoofTable> RoofTableFromDatasheet(std::string_view device_or_key);

// --device-profile P: a device profile file (rooftrace calibrate), or a
// datasheet key ('h100-sxm' or 'datasheet:h100-sxm'). Errors name P and the
// fix.
StatusOr<RoofTable> LoadRoofTable(const std::string& profile);

// `roofs` for kernels measured at an SM clock of `measured_sm_clock_hz`
// (a stored run's devices.measured_sm_clock_khz): the compute roofs scaled as
// the import scaled them (ScaleRoofsToClock), with its sentence added to
// `source`. Unchanged when the table has no roof model (the store's own
// roofs, already scaled) or the clock is 0.
RoofTable ScaleRoofTableToClock(const RoofTable& roofs,
                                double measured_sm_clock_hz);

// Empty when `roofs` describe the GPU `run_device` names (or either is
// unknown); else one line saying the roofs are another GPU's, so fractions
// of roof are not this run's (e.g. an A100 profile on an H100 run).
std::string RoofDeviceMismatch(const RoofTable& roofs,
                               std::string_view run_device);

struct KernelAnnotation {
  std::optional<double> roof_flops_per_s;
  std::optional<double> fraction_of_roof;
  const char* bound = "unknown";
};

// Re-annotates one stored kernel with the collector's roof model
// (model/roof_model.h, Annotate): the kernel's FLOPs count against its
// stored dominant precision; a value counts as known when it is not NULL.
// `roofs.model` must be set.
KernelAnnotation AnnotateKernel(const RoofTable& roofs,
                                std::string_view precision,
                                std::optional<double> flops,
                                std::string_view flops_source,
                                std::optional<double> bytes,
                                std::string_view bytes_source,
                                int64_t duration_ns);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_ROOFS_H_
