// How busy each GPU was over a run: per device, the wall span from its
// first kernel's start to its last kernel's end, the time some kernel or
// copy was running inside that span (the union of their intervals: two
// streams overlapping count once) and the rest, idle. Idle time is where
// the host, not the GPU, set the pace (launch overhead, synchronisation,
// data loading); the roofline says nothing about it.
//
// Memory is bounded. Per device the timeline keeps the disjoint busy
// intervals (16 bytes each); past `max_intervals` of them, the oldest are
// summed into a running total ("folded") until half remain. The end of the
// last folded interval is the fold frontier. Folding waits for the end of
// a batch (EndBatch: a trace's window, whose copies come after its
// kernels, so that no part of a window is folded before all of it has
// arrived), unless a device holds 4 x max_intervals (a caller that never
// ends a batch); plus a merge batch of at most 4,096.
//
// Intervals may arrive in any order, and the figures are exact as long as
// none starts before the frontier: none reaches back from its batch over
// `max_intervals / 2` newer disjoint intervals of its device. A store is
// read in start order (StoreReader::ForEachKernelAndMemcpy) and a trace
// window by window in step order, so that does not happen in practice.
// When it does, the late interval's part before the frontier is not
// counted (its overlap with the folded time is unknown), its length inside
// the span is added to `busy_uncertain_ns` and the interval to
// `late_intervals`: busy is then a lower bound, exceeded by at most
// busy_uncertain_ns. The same holds when the kernels' span (to which
// copies are clipped, known only at Finish) grows over time already folded
// as outside it.
//
// Not thread-safe.
#ifndef ROOFTRACE_REPORT_BUSY_TIME_H_
#define ROOFTRACE_REPORT_BUSY_TIME_H_

#include <cstddef>
#include <cstdint>
#include <limits>
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
  // Zero when busy_ns is exact. Otherwise the intervals that arrived after
  // time they overlap had been folded (busy_time.h), and how much more
  // than busy_ns (at most idle_ns) the true busy time may be.
  int64_t late_intervals = 0;
  int64_t busy_uncertain_ns = 0;
  // Time the GPU did nothing but communicate (collective kernels running,
  // no other kernel), and nothing but copy (copies or memsets running, no
  // kernel): what overlap with computation would save. -1: not measured
  // (the timeline alone cannot tell collectives from other kernels:
  // ReportBuilder fills these).
  int64_t exposed_comm_ns = -1;
  int64_t exposed_copy_ns = -1;
};

class BusyTimeline {
 public:
  // 1 MiB per device after a batch, at most 4 MiB within one.
  static constexpr size_t kDefaultMaxIntervals = size_t{1} << 16;

  // `max_intervals` (at least 2): disjoint intervals kept per device
  // before the oldest are folded at a batch's end.
  explicit BusyTimeline(size_t max_intervals = kDefaultMaxIntervals);

  // A kernel on `device` over [start_ns, end_ns); ignored when end <= start
  // (no timestamps).
  void AddKernel(int64_t device, int64_t start_ns, int64_t end_ns);
  // A copy or memset: counts as busy, clipped to the kernels' span.
  void AddCopy(int64_t device, int64_t start_ns, int64_t end_ns);
  // The intervals given so far form complete batches: they may be folded
  // now (those of a batch still arriving are not, below the hard bound).
  void EndBatch();
  // Per device with at least one timed kernel, by device id.
  std::vector<DeviceBusy> Finish();

  // Intervals held now over all devices (merged and waiting to be), for
  // tests of the bound.
  size_t HeldIntervals() const;

 private:
  using Interval = std::pair<int64_t, int64_t>;
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

  struct Device {
    bool has_kernel = false;
    int64_t first = 0, last = 0, kernels = 0, copies = 0;
    std::vector<Interval> open;     // disjoint, sorted, newer than folded
    std::vector<Interval> pending;  // not merged yet, any order
    // Folded: the busy time of the intervals summed away, clipped to the
    // span as it was then; all of them end at or before `fold_end`.
    bool folded = false;
    int64_t fold_end = kMin;
    int64_t folded_busy = 0;
    // Folded time left out as before the first kernel lies before
    // `below_end`: if the span later grows over it, its busy part is
    // unknown. Folded busy time left out as after the last kernel,
    // `above_busy`, lies in [above_start, fold_end): it counts whole once
    // the span reaches fold_end. Time of late intervals left uncounted as
    // after the last kernel starts at `unknown_above_start`.
    int64_t below_end = kMin;
    int64_t above_busy = 0, above_start = kMax;
    int64_t unknown_above_start = kMax;
    int64_t late = 0, uncertain = 0;
  };
  // Adds one interval; true when it arrived late (started before the
  // fold frontier).
  bool Add(Device& d, int64_t start_ns, int64_t end_ns);
  void Push(std::vector<Interval>& v, Interval iv);
  // Merges the pending intervals into `open`, then folds if over
  // `fold_above` intervals.
  void Compact(Device& d, size_t fold_above);
  void Fold(Device& d, size_t count);
  // Records the parts of [s, e) outside the span, `folded` (busy time known
  // to be disjoint from the rest) or left uncounted, in case the span grows
  // over them.
  static void NoteClipped(Device& d, int64_t s, int64_t e, bool folded);
  // [s, e) is left uncounted: its part inside the span is uncertain.
  static void Unknown(Device& d, int64_t s, int64_t e);
  // After the span grew over time clipped away: folded busy time it now
  // covers whole counts; the rest is uncertain. True when some is.
  static bool SpanGrew(Device& d);

  size_t max_intervals_;
  size_t hard_max_;  // 4 x max_intervals_: folded even within a batch
  size_t batch_;
  std::vector<Interval> scratch_;  // Compact's, reused
  std::map<int64_t, Device> devices_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_BUSY_TIME_H_
