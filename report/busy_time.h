// How busy each GPU was over a run: per device, the wall span from its
// first kernel's start to its last kernel's end, the time some kernel or
// copy was running inside that span (the union of their intervals: two
// streams overlapping count once) and the rest, idle. Idle time is where
// the host, not the GPU, set the pace (launch overhead, synchronisation,
// data loading); the roofline says nothing about it.
//
// Intervals may arrive in any order. Memory: the disjoint busy intervals
// so far, plus at most as many pending ones (merged when they reach that
// count), 16 bytes each. Not thread-safe.
#ifndef ROOFTRACE_REPORT_BUSY_TIME_H_
#define ROOFTRACE_REPORT_BUSY_TIME_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace rooftrace {

struct DeviceBusy {
  int64_t device_id = 0;
  int64_t first_start_ns = 0, last_end_ns = 0;
  int64_t span_ns = 0;  // last_end_ns - first_start_ns
  int64_t busy_ns = 0;  // union of kernel and copy time inside the span
  int64_t idle_ns = 0;  // span_ns - busy_ns
  double idle_share = 0;  // idle_ns / span_ns (0 for an empty span)
  int64_t kernels = 0, copies = 0;
};

class BusyTimeline {
 public:
  // A kernel on `device` over [start_ns, end_ns); ignored when end <= start
  // (no timestamps).
  void AddKernel(int64_t device, int64_t start_ns, int64_t end_ns);
  // A copy or memset: counts as busy, clipped to the kernels' span.
  void AddCopy(int64_t device, int64_t start_ns, int64_t end_ns);
  // Per device with at least one timed kernel, by device id.
  std::vector<DeviceBusy> Finish();

 private:
  struct Device {
    bool has_kernel = false;
    int64_t first = 0, last = 0, kernels = 0, copies = 0;
    std::vector<std::pair<int64_t, int64_t>> merged, pending;
  };
  void Add(Device& d, int64_t start_ns, int64_t end_ns);
  static void Compact(Device& d);

  std::map<int64_t, Device> devices_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_BUSY_TIME_H_
