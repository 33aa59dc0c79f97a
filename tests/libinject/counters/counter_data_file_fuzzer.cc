// libFuzzer target for the .rfcd parser (outside input: files under
// tests/libinject/counters/data and whatever a user points the tools at).
// Built with -DROOFTRACE_BUILD_FUZZERS=ON and clang. Whatever the bytes, parsing must
// neither crash nor read out of bounds, and what parses must serialize back
// to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "libinject/counters/counter_data_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rooftrace::StatusOr<rooftrace::counters::CounterDataFile> f =
      rooftrace::counters::ParseCounterDataFile(data, size, "fuzz");
  if (f.ok()) {
    std::vector<uint8_t> again =
        rooftrace::counters::SerializeCounterDataFile(*f);
    if (again.size() != size || !std::equal(again.begin(), again.end(), data)) {
      std::abort();
    }
  }
  return 0;
}
