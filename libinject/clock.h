// The one host clock of libinject and the one conversion of CUPTI
// timestamps to it.
//
// Every *_ns field on the wire is CLOCK_MONOTONIC nanoseconds. When CUPTI
// accepts our timestamp callback (cuptiActivityRegisterTimestampCallback),
// it stamps records with MonotonicNs() itself and the offset is zero; when it
// does not, the offset is measured once at start (CUPTI clock sampled between
// two reads of ours) and applied to every GPU timestamp by
// CuptiToMonotonicNs(). Thread-safe (pure functions).
#ifndef ROOFTRACE_LIBINJECT_CLOCK_H_
#define ROOFTRACE_LIBINJECT_CLOCK_H_

#include <cstdint>
#include <ctime>

namespace rooftrace::inject {

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// Relation between CUPTI's clock and ours: monotonic = cupti + offset_ns.
struct ClockOffset {
  int64_t offset_ns = 0;
};

// Measures the offset from one CUPTI timestamp `cupti_ns` taken between two
// readings of our clock, `before_ns` and `after_ns` (midpoint rule).
ClockOffset MeasureClockOffset(uint64_t before_ns, uint64_t cupti_ns,
                               uint64_t after_ns);

// CUPTI timestamp -> CLOCK_MONOTONIC ns. 0 stays 0 (CUPTI uses 0 for
// "unknown"); a result that would be negative clamps to 0.
uint64_t CuptiToMonotonicNs(uint64_t cupti_ns, const ClockOffset& offset);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_CLOCK_H_
