// A device profile: the roofs of one GPU as `rooftrace calibrate` measured
// them, next to the datasheet figures, plus the counter-validation results.
// The collector and the analyzer take one with --device-profile and then use
// its measured roofs instead of the datasheet table. The file format (JSON)
// is documented in docs/device-profile.md.
//
// Plain data; thread-compatible. The trap: a roof of 0 means "not measured /
// not supported", never "zero FLOP/s" — always go through PeakFlopsPerS() and
// DramBytesPerS(), which fall back to the datasheet figure.
#ifndef ROOFTRACE_MODEL_DEVICE_PROFILE_H_
#define ROOFTRACE_MODEL_DEVICE_PROFILE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "model/datasheet.h"

namespace rooftrace {

inline constexpr char kDeviceProfileFormat[] = "rooftrace-device-profile";
inline constexpr int kDeviceProfileVersion = 1;

// Who the GPU is, as the CUDA runtime reported it during calibration.
struct DeviceIdentity {
  std::string name;            // "NVIDIA H100 80GB HBM3"
  std::string uuid;            // "GPU-5f3c…"
  std::string chip;            // "sm_90"
  int sm_count = 0;
  double sm_clock_mhz = 0;     // maximum SM clock
  double memory_clock_mhz = 0;
  int memory_bus_width_bits = 0;
  uint64_t memory_bytes = 0;
  uint64_t l2_bytes = 0;
  std::string driver_version;  // "580.65.06" or the CUDA driver API version
  std::string runtime_version; // CUDA runtime, "13.0"
};

// One precision class's compute roof.
struct PrecisionRoof {
  double measured_flops_per_s = 0;   // 0: not measured
  double datasheet_flops_per_s = 0;  // 0: not published / not supported
  std::string kernel;                // what measured it: "cublasLt bf16 8192x8192x8192"
  std::string note;                  // e.g. "skipped: fp8 needs sm_89 or newer"

  // measured / datasheet; 0 when either is missing.
  double Ratio() const;
};

// A counted quantity of a reference kernel against the value it must have.
struct CounterValidation {
  std::string kernel;    // "gemm_own_fp32 4096x4096x4096"
  std::string quantity;  // "flops" or "dram_bytes"
  double expected = 0;
  double counted = 0;

  // 100 * (counted - expected) / expected; 0 when expected is 0.
  double ErrorPercent() const;
};

struct DeviceProfile {
  DeviceIdentity device;
  std::string datasheet_key;  // "h100-sxm"; empty when the GPU is unknown

  double measured_dram_bytes_per_s = 0;   // read + write bytes per second
  double datasheet_dram_bytes_per_s = 0;
  std::string dram_kernel;                // "stream-triad 3x2 GiB"
  // The GPU-to-GPU link, one direction, bytes per second (a collective's
  // bus bandwidth is judged against it): measured (a bandwidth test of
  // your own, entered by hand) and the datasheet's; its name.
  double measured_link_bytes_per_s = 0;
  double datasheet_link_bytes_per_s = 0;
  std::string link_name;                  // "NVLink 4 (18 links, ...)"

  std::array<PrecisionRoof, kNumPrecisions> roofs;  // by Precision
  std::vector<CounterValidation> validation;

  std::string rooftrace_version;
  std::string created_utc;  // "2026-11-23T02:14:17Z"
  // True for fixtures and samples whose numbers were not measured; reports
  // must say so.
  bool sample = false;

  // Measured bandwidth when there is one, else the datasheet figure.
  double DramBytesPerS() const;
  double DramRatio() const;  // measured / datasheet, 0 when either missing
  // Measured link bandwidth when there is one, else the datasheet's (0:
  // none).
  double LinkBytesPerS() const;
  // Measured peak when there is one, else the datasheet figure (0: none).
  double PeakFlopsPerS(Precision p) const;
  // PeakFlopsPerS(p) / DramBytesPerS() in FLOP/byte; 0 when either is 0.
  double Ridge(Precision p) const;
  // "measured" when DRAM and this precision were measured, "datasheet" when
  // neither was, "measured+datasheet" when only one was, "none".
  std::string RoofSource(Precision p) const;

  PrecisionRoof& roof(Precision p) { return roofs[static_cast<int>(p)]; }
  const PrecisionRoof& roof(Precision p) const {
    return roofs[static_cast<int>(p)];
  }
};

// Fills the datasheet_* fields from the built-in table for the device name
// (or datasheet_key when set). Returns false when the GPU is unknown.
bool FillDatasheet(DeviceProfile* profile);

// The "device" object shared by profiles and calibration results.
json::Value DeviceIdentityToJson(const DeviceIdentity& d);
Status DeviceIdentityFromJson(const json::ObjectReader& reader,
                              DeviceIdentity* d);

// JSON text of a profile (the format of docs/device-profile.md).
std::string DeviceProfileToJson(const DeviceProfile& profile);
// Parses JSON text; `source` names the input in errors.
StatusOr<DeviceProfile> DeviceProfileFromJson(std::string_view text,
                                              const std::string& source);

// The physical range of a roof a profile may give (0: not measured). The
// widest today are about 8e12 bytes/s (HBM3e) and 2e16 FLOP/s (FP4 tensor
// cores); the bounds leave room for generations to come, and refuse what
// only a typo or a damaged file gives (1e-300 made every ridge inf).
inline constexpr double kMinDramBytesPerS = 1e9;   // 1 GB/s
inline constexpr double kMaxDramBytesPerS = 1e14;  // 100 TB/s
inline constexpr double kMinFlopsPerS = 1e9;       // 1 GFLOP/s
inline constexpr double kMaxFlopsPerS = 1e18;      // 1 EFLOP/s

// Errors name the file and the fix (kNotFound: missing file; kCorrupt: not
// JSON or not a profile; kInvalidArgument: a value out of range, a roof
// outside the ranges above).
// At most kMaxDeviceProfileBytes (ReadBoundedFile: a FIFO too, never a
// device).
inline constexpr uint64_t kMaxDeviceProfileBytes = uint64_t{1} << 20;
StatusOr<DeviceProfile> LoadDeviceProfile(const std::string& path);

// Every command's --device-profile takes a file written by `rooftrace
// calibrate` or, when no file has that name, a datasheet key ("mi300x",
// "datasheet:h100-sxm"): the datasheet key for the second case, empty for
// anything else (a file, or a name that is neither: LoadDeviceProfile then
// says so). One rule, so that no command refuses a key another accepts.
std::string DatasheetKeyOfProfileArg(const std::string& arg);
Status SaveDeviceProfile(const DeviceProfile& profile,
                         const std::string& path);

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_DEVICE_PROFILE_H_
