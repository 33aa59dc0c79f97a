// A counter-data image as rooftrace stores it on disk: recorded on a GPU
// (cuptiRangeProfilerDecodeData output), committed under tests/data/, and
// evaluated on the CPU by tests. CUPTI's own image parser does not survive
// damaged input (it crashes on garbage), so CUPTI is only ever handed an
// image that came out of CUPTI in this process or out of a container that
// passed ParseCounterDataFile: magic, bounded lengths and a checksum.
//
// Layout, little-endian:
//   "RFCNTR01"                      8-byte magic
//   u32 chip length, chip bytes     CUPTI chip name, e.g. "GH100"
//   u32 metric count, then per metric: u32 length, name bytes
//   u64 image length, image bytes
//   u64 FNV-1a 64 of every byte before it
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_COUNTER_DATA_FILE_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_COUNTER_DATA_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rooftrace::counters {

inline constexpr size_t kMaxChipNameBytes = 64;
inline constexpr size_t kMaxMetricCount = 256;
inline constexpr size_t kMaxMetricNameBytes = 256;
inline constexpr uint64_t kMaxCounterImageBytes = 256ull << 20;

struct CounterDataFile {
  std::string chip;
  std::vector<std::string> metric_names;  // as configured, with rollups
  std::vector<uint8_t> image;             // CUPTI counter-data image
};

std::vector<uint8_t> SerializeCounterDataFile(const CounterDataFile& file);

// `source` names the input in messages ("tests/data/gemm.rfcd").
StatusOr<CounterDataFile> ParseCounterDataFile(const uint8_t* data, size_t size,
                                               std::string_view source);

uint64_t Fnv1a64(const uint8_t* data, size_t size);

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_COUNTER_DATA_FILE_H_
