// Median, minimum, maximum and standard deviation of a group's kernel times
// in bounded memory. Up to kExactSamples values are kept and the figures
// are exact; past that the values go into buckets under 0.8% wide (128 per
// power of two) and the median is the middle bucket's centre (within 0.4%
// of the true median),
// while minimum, maximum, mean and standard deviation stay exact (running
// sums). A report over 10 M kernels kept one 8-byte value per kernel per
// table before (about 240 MB at 10 M kernels); now at most 32 KiB per
// group. Not thread-safe.
#ifndef ROOFTRACE_REPORT_TIME_SPREAD_H_
#define ROOFTRACE_REPORT_TIME_SPREAD_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rooftrace {

class TimeSpread {
 public:
  static constexpr size_t kExactSamples = 4096;

  void Add(int64_t ns);

  struct Figures {
    double median_ns = 0, stddev_ns = 0;
    int64_t min_ns = 0, max_ns = 0;
    bool exact = true;  // false: the median is a bucket's (within 1%)
  };
  // Zero figures for an empty spread.
  Figures Finish() const;
  size_t count() const { return count_; }

 private:
  void Spill();
  void Count(int64_t ns);
  static int Bucket(int64_t ns);
  static double BucketCentre(int bucket);

  std::vector<int64_t> exact_;
  // Counts per bucket after the spill (index: Bucket(ns) + 1; index 0 is
  // zero-length kernels); grown to the largest bucket seen.
  std::vector<int64_t> buckets_;
  size_t count_ = 0;
  int64_t min_ = 0, max_ = 0;
  double sum_ = 0, sum_sq_ = 0;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_TIME_SPREAD_H_
