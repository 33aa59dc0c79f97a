#include "report/busy_time.h"

#include <algorithm>

namespace rooftrace {
namespace {

constexpr size_t kMinPending = 4096;

}  // namespace

void BusyTimeline::AddKernel(int64_t device, int64_t start_ns,
                             int64_t end_ns) {
  if (end_ns <= start_ns) return;
  Device& d = devices_[device];
  d.first = d.has_kernel ? std::min(d.first, start_ns) : start_ns;
  d.last = d.has_kernel ? std::max(d.last, end_ns) : end_ns;
  d.has_kernel = true;
  ++d.kernels;
  Add(d, start_ns, end_ns);
}

void BusyTimeline::AddCopy(int64_t device, int64_t start_ns, int64_t end_ns) {
  if (end_ns <= start_ns) return;
  Device& d = devices_[device];
  ++d.copies;
  Add(d, start_ns, end_ns);
}

void BusyTimeline::Add(Device& d, int64_t start_ns, int64_t end_ns) {
  d.pending.emplace_back(start_ns, end_ns);
  if (d.pending.size() >= std::max(kMinPending, d.merged.size())) Compact(d);
}

// Folds the pending intervals into the disjoint, sorted merged list.
void BusyTimeline::Compact(Device& d) {
  std::vector<std::pair<int64_t, int64_t>>& all = d.pending;
  all.insert(all.end(), d.merged.begin(), d.merged.end());
  std::sort(all.begin(), all.end());
  d.merged.clear();
  for (const auto& [s, e] : all) {
    if (!d.merged.empty() && s <= d.merged.back().second) {
      d.merged.back().second = std::max(d.merged.back().second, e);
    } else {
      d.merged.emplace_back(s, e);
    }
  }
  all.clear();
}

std::vector<DeviceBusy> BusyTimeline::Finish() {
  std::vector<DeviceBusy> out;
  for (auto& [id, d] : devices_) {
    if (!d.has_kernel) continue;
    Compact(d);
    DeviceBusy b;
    b.device_id = id;
    b.first_start_ns = d.first;
    b.last_end_ns = d.last;
    b.span_ns = d.last - d.first;
    for (const auto& [s, e] : d.merged) {
      const int64_t lo = std::max(s, d.first), hi = std::min(e, d.last);
      if (hi > lo) b.busy_ns += hi - lo;
    }
    b.idle_ns = b.span_ns - b.busy_ns;
    b.idle_share =
        b.span_ns > 0 ? static_cast<double>(b.idle_ns) / b.span_ns : 0;
    b.kernels = d.kernels;
    b.copies = d.copies;
    out.push_back(b);
  }
  return out;
}

}  // namespace rooftrace
