// Built-in datasheet roofs: dense peak FLOP/s per precision class and DRAM
// bandwidth for the GPUs rooftrace knows by name. Never the sparsity figures
// (H100 SXM bf16 is 989 TFLOP/s dense, not 1979).
//
// Immutable static data; thread-safe.
#ifndef ROOFTRACE_MODEL_DATASHEET_H_
#define ROOFTRACE_MODEL_DATASHEET_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/precision.h"

namespace rooftrace {

struct DatasheetEntry {
  std::string_view key;          // "h100-sxm"
  std::string_view name;         // "NVIDIA H100 SXM5 80GB"
  // Substrings that must all appear (case-insensitive) in the CUDA device
  // name for this entry to match; the first matching entry wins.
  std::array<std::string_view, 3> match;
  double dram_bytes_per_s;
  // Dense peak FLOP/s (OP/s for int8) per Precision; 0 = not published or
  // not supported.
  std::array<double, kNumPrecisions> peak_flops_per_s;
  std::string_view note;         // where the figures come from
  // The SM (boost) clock the compute peaks assume, in Hz: a peak is SMs x
  // lanes x 2 x this clock. 0 when the vendor publishes none; compute roofs
  // are then never scaled to another clock (model/roof_model.h).
  double boost_clock_hz = 0;
};

const std::vector<DatasheetEntry>& Datasheet();

// Finds the entry for a CUDA device name ("NVIDIA H100 80GB HBM3") or a key
// ("h100-sxm"). nullptr when unknown.
const DatasheetEntry* FindDatasheetEntry(std::string_view device_name_or_key);

// Ridge point in FLOP/byte: peak / bandwidth.
inline double RidgePoint(double peak_flops_per_s, double bytes_per_s) {
  return bytes_per_s > 0 ? peak_flops_per_s / bytes_per_s : 0.0;
}

// The highest published dense peak of an entry and its precision.
Precision HeadlinePrecision(const DatasheetEntry& e);

// The GPU-to-GPU link of a datasheet GPU, for the communication roofline of
// tensor parallelism (`rooftrace predict --tp`): the bandwidth one GPU sends
// at, one direction (vendors quote both directions summed: H100 SXM NVLink
// 900 GB/s is 450 out and 450 in). GPUs without NVLink get their PCIe
// slot's rate.
struct DatasheetLink {
  std::string_view key;   // the DatasheetEntry key
  double bytes_per_s;     // per GPU, one direction
  std::string_view name;  // "NVLink 4 (18 links, 900 GB/s both ways)"
};

// nullptr when the table has no link figure for `e`.
const DatasheetLink* FindDatasheetLink(const DatasheetEntry& e);

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_DATASHEET_H_
