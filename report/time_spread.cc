#include "report/time_spread.h"

#include <algorithm>
#include <cmath>

namespace rooftrace {
// Buckets without a logarithm per value: below 128 ns one per nanosecond;
// above, 128 per power of two (the top 8 bits of the value), each under
// 0.8% wide.
int TimeSpread::Bucket(int64_t ns) {
  if (ns <= 0) return -1;  // zero-length kernels: a bucket of their own
  const uint64_t v = static_cast<uint64_t>(ns);
  if (v < 128) return static_cast<int>(v);
  const int e = 63 - __builtin_clzll(v);  // floor(log2 v), >= 7
  const int top = static_cast<int>(v >> (e - 7));  // 128..255
  return 128 * (e - 6) + (top - 128);
}

double TimeSpread::BucketCentre(int bucket) {
  if (bucket < 0) return 0;
  if (bucket < 128) return bucket;
  const int e = bucket / 128 + 6;
  const double width = std::ldexp(1.0, e - 7);
  const double low = static_cast<double>(128 + bucket % 128) * width;
  return low + width / 2;
}

void TimeSpread::Add(int64_t ns) {
  if (count_ == 0 || ns < min_) min_ = ns;
  if (count_ == 0 || ns > max_) max_ = ns;
  ++count_;
  const double d = static_cast<double>(ns);
  sum_ += d;
  sum_sq_ += d * d;
  if (buckets_.empty() && exact_.size() < kExactSamples) {
    exact_.push_back(ns);
    return;
  }
  if (buckets_.empty()) Spill();
  Count(ns);
}

void TimeSpread::Count(int64_t ns) {
  const size_t i = static_cast<size_t>(Bucket(ns) + 1);
  if (i >= buckets_.size()) buckets_.resize(i + 1, 0);
  ++buckets_[i];
}

void TimeSpread::Spill() {
  buckets_.assign(1, 0);
  for (int64_t v : exact_) Count(v);
  exact_.clear();
  exact_.shrink_to_fit();
}

TimeSpread::Figures TimeSpread::Finish() const {
  Figures f;
  if (count_ == 0) return f;
  f.min_ns = min_;
  f.max_ns = max_;
  const double n = static_cast<double>(count_);
  const double mean = sum_ / n;
  f.stddev_ns = std::sqrt(std::max(0.0, sum_sq_ / n - mean * mean));
  if (buckets_.empty()) {
    std::vector<int64_t> d = exact_;
    const size_t mid = d.size() / 2;
    std::nth_element(d.begin(), d.begin() + mid, d.end());
    f.median_ns = static_cast<double>(d[mid]);
    if (d.size() % 2 == 0) {
      const int64_t below = *std::max_element(d.begin(), d.begin() + mid);
      f.median_ns = (f.median_ns + static_cast<double>(below)) / 2;
    }
    double sq = 0;  // two passes while the values are here: no cancellation
    for (int64_t x : d) sq += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
    f.stddev_ns = std::sqrt(sq / n);
    return f;
  }
  f.exact = false;
  const size_t half = (count_ + 1) / 2;  // the lower middle value's rank
  size_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += static_cast<size_t>(buckets_[i]);
    if (seen >= half) {
      f.median_ns = std::clamp(BucketCentre(static_cast<int>(i) - 1),
                               static_cast<double>(min_),
                               static_cast<double>(max_));
      break;
    }
  }
  return f;
}

}  // namespace rooftrace
