// FlatIndex: the id -> record index map of the join.
#include "pipeline/flat_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace rooftrace {
namespace {

// Builds an index of `ids` (index i for ids[i]) and checks every lookup.
void ExpectAllFound(const std::vector<uint64_t>& ids, FlatIndex* index) {
  index->Reset(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    index->Emplace(ids[i], static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_EQ(index->Find(ids[i]), static_cast<int32_t>(i)) << ids[i];
  }
}

// Correlation ids of launches: consecutive, or a fixed stride apart (every
// launch N API calls after the last), and the strides that share their low
// bits (multiples of 8, of 1,000, of 2^20) must not pile into a few slots.
TEST(FlatIndexTest, ConsecutiveAndStridedIdsStayShortToFind) {
  FlatIndex index;
  for (uint64_t stride : {1ull, 2ull, 3ull, 8ull, 16ull, 1000ull,
                          1ull << 20, 1ull << 40}) {
    std::vector<uint64_t> ids;
    for (uint64_t i = 0; i < 65536; ++i) ids.push_back(140 + i * stride);
    ExpectAllFound(ids, &index);
    // Half full at most: a uniform hash leaves the longest run of
    // displaced ids in the tens (28-83 for these); a hash that folded a
    // stride onto a few slots would push it into the thousands.
    EXPECT_LT(index.LongestProbe(), 128u) << "stride " << stride;
  }
}

// The first index stays for a repeated id; absent ids, 0 and the largest
// id are answered; a reset index forgets what it held.
TEST(FlatIndexTest, FirstIndexStaysAndResetForgets) {
  FlatIndex index;
  EXPECT_EQ(index.Find(7), -1);
  index.Reset(4);
  index.Emplace(7, 1);
  index.Emplace(7, 2);
  index.Emplace(0, 3);
  index.Emplace(std::numeric_limits<uint64_t>::max(), 4);
  EXPECT_EQ(index.Find(7), 1);
  EXPECT_EQ(index.Find(0), 3);
  EXPECT_EQ(index.Find(std::numeric_limits<uint64_t>::max()), 4);
  EXPECT_EQ(index.Find(8), -1);
  index.Reset(4);
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.Find(7), -1);
}

}  // namespace
}  // namespace rooftrace
