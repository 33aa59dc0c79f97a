#include "libinject/clock.h"

namespace rooftrace::inject {

ClockOffset MeasureClockOffset(uint64_t before_ns, uint64_t cupti_ns,
                               uint64_t after_ns) {
  const uint64_t mid = before_ns + (after_ns - before_ns) / 2;
  ClockOffset offset;
  offset.offset_ns = static_cast<int64_t>(mid - cupti_ns);
  return offset;
}

uint64_t CuptiToMonotonicNs(uint64_t cupti_ns, const ClockOffset& offset) {
  if (cupti_ns == 0) return 0;
  if (offset.offset_ns < 0 &&
      cupti_ns < static_cast<uint64_t>(-offset.offset_ns)) {
    return 0;
  }
  return cupti_ns + static_cast<uint64_t>(offset.offset_ns);
}

}  // namespace rooftrace::inject
