#include "report/busy_time.h"

#include <algorithm>
#include <cstdint>

namespace rooftrace {
namespace {

constexpr size_t kMaxBatch = 4096;

}  // namespace

BusyTimeline::BusyTimeline(size_t max_intervals)
    : max_intervals_(std::max<size_t>(max_intervals, 2)),
      hard_max_(4 * max_intervals_),
      batch_(std::clamp<size_t>(max_intervals_ / 2, 1, kMaxBatch)) {}

void BusyTimeline::AddKernel(int64_t device, int64_t start_ns,
                             int64_t end_ns) {
  if (end_ns <= start_ns) return;
  Device& d = devices_[device];
  const bool grew = !d.has_kernel || start_ns < d.first || end_ns > d.last;
  d.first = d.has_kernel ? std::min(d.first, start_ns) : start_ns;
  d.last = d.has_kernel ? std::max(d.last, end_ns) : end_ns;
  d.has_kernel = true;
  ++d.kernels;
  bool late = grew && d.folded && SpanGrew(d);
  late |= Add(d, start_ns, end_ns);
  if (late) ++d.late;
}

void BusyTimeline::AddCopy(int64_t device, int64_t start_ns, int64_t end_ns) {
  if (end_ns <= start_ns) return;
  Device& d = devices_[device];
  ++d.copies;
  if (Add(d, start_ns, end_ns)) ++d.late;
}

bool BusyTimeline::Add(Device& d, int64_t start_ns, int64_t end_ns) {
  bool late = false;
  if (d.folded && start_ns < d.fold_end) {
    // Whether [start, frontier) was busy already is unknown: the folded
    // intervals are only a sum now.
    const int64_t cut = std::min(end_ns, d.fold_end);
    Unknown(d, start_ns, cut);
    late = true;
    start_ns = cut;
    if (start_ns >= end_ns) return late;
  }
  if (d.pending.empty() &&
      (d.open.empty() || start_ns >= d.open.back().first)) {
    // In start order (the usual case): extend or append, no batch.
    if (!d.open.empty() && start_ns <= d.open.back().second) {
      d.open.back().second = std::max(d.open.back().second, end_ns);
    } else {
      Push(d.open, {start_ns, end_ns});
      if (d.open.size() > hard_max_) {
        Fold(d, d.open.size() - max_intervals_ / 2);
      }
    }
    return late;
  }
  Push(d.pending, {start_ns, end_ns});
  if (d.pending.size() >= batch_) Compact(d, hard_max_);
  return late;
}

// Grows `v` by at most the bound's worth, so a vector at the bound does not
// double its capacity.
void BusyTimeline::Push(std::vector<Interval>& v, Interval iv) {
  if (v.size() == v.capacity()) {
    const size_t cap = hard_max_ + batch_;
    v.reserve(std::max(v.size() + 1,
                       std::min(cap, std::max<size_t>(64, 2 * v.size()))));
  }
  v.push_back(iv);
}

// Merges the pending batch into the disjoint, sorted `open` list. Only the
// open intervals that end at or after the batch's first start can touch
// it; the rest stay where they are.
void BusyTimeline::Compact(Device& d, size_t fold_above) {
  std::vector<Interval>& p = d.pending;
  if (!p.empty()) {
    if (!std::is_sorted(p.begin(), p.end())) std::sort(p.begin(), p.end());
    const auto from = std::lower_bound(
        d.open.begin(), d.open.end(), p.front().first,
        [](const Interval& iv, int64_t s) { return iv.second < s; });
    scratch_.assign(from, d.open.end());
    d.open.erase(from, d.open.end());
    size_t i = 0, j = 0;
    while (i < scratch_.size() || j < p.size()) {
      const Interval& next =
          j == p.size() || (i < scratch_.size() && scratch_[i] < p[j])
              ? scratch_[i++]
              : p[j++];
      if (!d.open.empty() && next.first <= d.open.back().second) {
        d.open.back().second = std::max(d.open.back().second, next.second);
      } else {
        Push(d.open, next);
      }
    }
    p.clear();
  }
  if (d.open.size() > fold_above) {
    Fold(d, d.open.size() - max_intervals_ / 2);
  }
}

void BusyTimeline::EndBatch() {
  for (auto& [id, d] : devices_) Compact(d, max_intervals_);
}

// Sums the `count` oldest open intervals away.
void BusyTimeline::Fold(Device& d, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const auto [s, e] = d.open[i];
    if (d.has_kernel) {
      const int64_t lo = std::max(s, d.first), hi = std::min(e, d.last);
      if (hi > lo) d.folded_busy += hi - lo;
    }
    NoteClipped(d, s, e, /*folded=*/true);
    d.fold_end = std::max(d.fold_end, e);
  }
  d.open.erase(d.open.begin(), d.open.begin() + static_cast<ptrdiff_t>(count));
  d.folded = true;
}

void BusyTimeline::NoteClipped(Device& d, int64_t s, int64_t e, bool folded) {
  if (!d.has_kernel) {
    d.below_end = std::max(d.below_end, e);
    return;
  }
  if (s < d.first) d.below_end = std::max(d.below_end, std::min(e, d.first));
  if (e > d.last) {
    const int64_t from = std::max(s, d.last);
    if (folded) {
      d.above_busy += e - from;
      d.above_start = std::min(d.above_start, from);
    } else {
      d.unknown_above_start = std::min(d.unknown_above_start, from);
    }
  }
}

void BusyTimeline::Unknown(Device& d, int64_t s, int64_t e) {
  if (d.has_kernel) {
    const int64_t lo = std::max(s, d.first), hi = std::min(e, d.last);
    if (hi > lo) d.uncertain += hi - lo;
  }
  NoteClipped(d, s, e, /*folded=*/false);
}

bool BusyTimeline::SpanGrew(Device& d) {
  bool uncertain = false;
  if (d.first < d.below_end) {
    d.uncertain += d.below_end - d.first;
    d.below_end = d.first;
    uncertain = true;
  }
  // Time clipped away above the span all lies before the frontier.
  if (d.last > d.above_start) {
    if (d.last >= d.fold_end) {
      // The span covers all of it now (the usual case: kernels go on after
      // a stretch of copies).
      d.folded_busy += d.above_busy;
      d.above_busy = 0;
      d.above_start = kMax;
    } else {
      // Part of above_busy lies before `last`, how much is unknown.
      d.uncertain += d.last - d.above_start;
      d.above_start = d.last;
      uncertain = true;
    }
  }
  if (d.last > d.unknown_above_start) {
    const int64_t hi = std::min(d.last, d.fold_end);
    if (hi > d.unknown_above_start) d.uncertain += hi - d.unknown_above_start;
    d.unknown_above_start = hi >= d.fold_end ? kMax : hi;
    uncertain = true;
  }
  return uncertain;
}

size_t BusyTimeline::HeldIntervals() const {
  size_t n = 0;
  for (const auto& [id, d] : devices_) n += d.open.size() + d.pending.size();
  return n;
}

std::vector<DeviceBusy> BusyTimeline::Finish() {
  std::vector<DeviceBusy> out;
  for (auto& [id, d] : devices_) {
    if (!d.has_kernel) continue;
    Compact(d, SIZE_MAX);  // nothing more comes: no need to fold
    DeviceBusy b;
    b.device_id = id;
    b.first_start_ns = d.first;
    b.last_end_ns = d.last;
    b.span_ns = d.last - d.first;
    b.busy_ns = d.folded_busy;
    for (const auto& [s, e] : d.open) {
      const int64_t lo = std::max(s, d.first), hi = std::min(e, d.last);
      if (hi > lo) b.busy_ns += hi - lo;
    }
    b.idle_ns = b.span_ns - b.busy_ns;
    b.idle_share =
        b.span_ns > 0 ? static_cast<double>(b.idle_ns) / b.span_ns : 0;
    b.kernels = d.kernels;
    b.copies = d.copies;
    b.late_intervals = d.late;
    b.busy_uncertain_ns = std::min(d.uncertain, b.idle_ns);
    out.push_back(b);
  }
  return out;
}

}  // namespace rooftrace
