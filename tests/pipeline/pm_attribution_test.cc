// PM samples attributed to kernels by time overlap (pipeline/
// pm_attribution.h): exact where one kernel ran, split by overlap and said
// so otherwise, nothing lost, per-family totals with their error.
#include "pipeline/pm_attribution.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace rooftrace {
namespace {

constexpr int kRead = static_cast<int>(PmCounter::kDramReadBytes);
constexpr int kTensor = static_cast<int>(PmCounter::kTensorPipe);

PmSample Sample(uint64_t start, uint64_t end, double read, double tensor = 0) {
  PmSample s;
  s.start_ns = start;
  s.end_ns = end;
  s.values[kRead] = read;
  s.values[kTensor] = tensor;
  return s;
}

// Three kernels one after the other, each spanning whole samples: every
// sample is exact and each kernel gets exactly its samples' counts.
TEST(PmAttributionTest, OneKernelAtATimeIsExact) {
  const std::vector<PmKernelSpan> kernels = {{0, 200}, {200, 300}, {300, 500}};
  const std::vector<PmSample> samples = {
      Sample(0, 100, 10), Sample(100, 200, 20), Sample(200, 300, 5, 7),
      Sample(300, 400, 1), Sample(400, 500, 2)};
  const PmAttribution a = AttributePmSamples(samples, kernels);
  ASSERT_EQ(a.kernels.size(), 3u);
  EXPECT_DOUBLE_EQ(a.kernels[0].values[kRead], 30);
  EXPECT_DOUBLE_EQ(a.kernels[1].values[kRead], 5);
  EXPECT_DOUBLE_EQ(a.kernels[1].values[kTensor], 7);
  EXPECT_DOUBLE_EQ(a.kernels[2].values[kRead], 3);
  EXPECT_EQ(a.samples_exact, 5u);
  EXPECT_EQ(a.samples_split, 0u);
  for (const PmKernelCounts& k : a.kernels) {
    EXPECT_DOUBLE_EQ(k.split[kRead], 0);
    EXPECT_EQ(k.split_samples, 0u);
  }
}

// Two kernels on two streams: A covers the whole sample [0, 100), B its
// second half. The sample is split 2:1 by overlap and counted as split.
TEST(PmAttributionTest, ConcurrentKernelsAreSplitByOverlapAndSaidSo) {
  const std::vector<PmKernelSpan> kernels = {{0, 100}, {50, 100}};
  const PmAttribution a =
      AttributePmSamples({Sample(0, 100, 300, 30)}, kernels);
  EXPECT_EQ(a.samples_split, 1u);
  EXPECT_EQ(a.samples_exact, 0u);
  EXPECT_DOUBLE_EQ(a.kernels[0].values[kRead], 200);
  EXPECT_DOUBLE_EQ(a.kernels[1].values[kRead], 100);
  EXPECT_DOUBLE_EQ(a.kernels[0].split[kRead], 200);
  EXPECT_DOUBLE_EQ(a.kernels[1].values[kTensor], 10);
  EXPECT_EQ(a.kernels[0].split_samples, 1u);
}

// A kernel ending inside a sample and the next starting in it: split too
// (counts need not be uniform in time), never guessed to be exact.
TEST(PmAttributionTest, SampleAcrossAKernelBoundaryIsSplit) {
  const std::vector<PmKernelSpan> kernels = {{0, 130}, {130, 300}};
  const PmAttribution a = AttributePmSamples(
      {Sample(0, 100, 100), Sample(100, 200, 100), Sample(200, 300, 100)},
      kernels);
  EXPECT_EQ(a.samples_exact, 2u);
  EXPECT_EQ(a.samples_split, 1u);
  EXPECT_DOUBLE_EQ(a.kernels[0].values[kRead], 130);
  EXPECT_DOUBLE_EQ(a.kernels[0].split[kRead], 30);
  EXPECT_DOUBLE_EQ(a.kernels[1].values[kRead], 170);
  EXPECT_DOUBLE_EQ(a.kernels[1].split[kRead], 70);
}

// Counts while no kernel ran (idle, a copy) are unattributed, not given to
// a neighbour; a sample whose end is not after its start is left out and
// counted.
TEST(PmAttributionTest, IdleAndInvalidSamplesAreCountedApart) {
  const std::vector<PmKernelSpan> kernels = {{0, 100}, {300, 400}};
  const PmAttribution a = AttributePmSamples(
      {Sample(0, 100, 1), Sample(100, 200, 50), Sample(200, 300, 60),
       Sample(300, 400, 2), Sample(500, 500, 9)},
      kernels);
  EXPECT_EQ(a.samples_unattributed, 2u);
  EXPECT_EQ(a.samples_invalid, 1u);
  EXPECT_DOUBLE_EQ(a.unattributed[kRead], 110);
  EXPECT_DOUBLE_EQ(a.kernels[0].values[kRead], 1);
  EXPECT_DOUBLE_EQ(a.kernels[1].values[kRead], 2);
}

// Nothing is lost: on a seeded random mix of overlapping kernels and
// samples given out of order, kernels' counts plus the unattributed ones
// add up to the samples' total, and the split parts to what split samples
// held.
TEST(PmAttributionTest, EveryCountIsAttributedOnceWhateverTheOverlaps) {
  std::mt19937_64 rng(25);
  std::uniform_int_distribution<uint64_t> start(0, 100000), len(1, 5000);
  std::vector<PmKernelSpan> kernels(300);
  for (PmKernelSpan& k : kernels) {
    k.start_ns = start(rng);
    k.end_ns = k.start_ns + len(rng);
  }
  std::vector<PmSample> samples;
  double total = 0;
  for (uint64_t t = 0; t < 110000; t += 1000) {
    const double v = static_cast<double>(rng() % 1000);
    samples.push_back(Sample(t, t + 1000, v));
    total += v;
  }
  std::shuffle(samples.begin(), samples.end(), rng);
  const PmAttribution a = AttributePmSamples(samples, kernels);
  double given = a.unattributed[kRead];
  for (const PmKernelCounts& k : a.kernels) given += k.values[kRead];
  EXPECT_NEAR(given, total, 1e-6 * total);
  EXPECT_EQ(a.samples_exact + a.samples_split + a.samples_unattributed,
            samples.size());
  EXPECT_GT(a.samples_split, 0u);
}

// Per family: the exact family's error is 0; the family that shared a
// sample carries the split part as its error.
TEST(PmAttributionTest, FamilyTotalsCarryTheirAttributionError) {
  const std::vector<PmKernelSpan> kernels = {{0, 200}, {200, 300}, {250, 300}};
  const PmAttribution a = AttributePmSamples(
      {Sample(0, 100, 10), Sample(100, 200, 10), Sample(200, 300, 40)},
      kernels);
  const auto totals = PmTotalsByFamily(a, {"gemm", "elementwise", "norm"});
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_DOUBLE_EQ(totals.at("gemm").values[kRead], 20);
  EXPECT_DOUBLE_EQ(totals.at("gemm").ErrorFraction(PmCounter::kDramReadBytes),
                   0);
  // [200, 300): elementwise 100 ns, norm 50 ns of overlap -> 2:1.
  EXPECT_NEAR(totals.at("elementwise").values[kRead], 80.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(
      totals.at("elementwise").ErrorFraction(PmCounter::kDramReadBytes), 1);
  EXPECT_EQ(totals.at("norm").kernels, 1u);
}

}  // namespace
}  // namespace rooftrace
