#include "libinject/counters/counter_data_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rooftrace::counters {
namespace {

CounterDataFile Sample() {
  CounterDataFile f;
  f.chip = "GH100";
  f.metric_names = {"dram__bytes_read.sum", "gpu__time_duration.sum"};
  f.image = {1, 2, 3, 4, 5, 250};
  return f;
}

// What is written reads back identically.
TEST(CounterDataFileTest, RoundTrips) {
  std::vector<uint8_t> bytes = SerializeCounterDataFile(Sample());
  // 8 magic + 4+5 chip + 4 count + (4+20) + (4+22) + 8+6 image + 8 checksum
  EXPECT_EQ(bytes.size(), 8u + 9 + 4 + 24 + 26 + 14 + 8);
  StatusOr<CounterDataFile> f =
      ParseCounterDataFile(bytes.data(), bytes.size(), "x.rfcd");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->chip, "GH100");
  EXPECT_EQ(f->metric_names, Sample().metric_names);
  EXPECT_EQ(f->image, Sample().image);
}

// Bytes that never were a rooftrace file are refused, naming the file.
TEST(CounterDataFileTest, GarbageIsCorrupt) {
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) {
    garbage[i] = static_cast<uint8_t>((i * 131u + 7u) & 0xff);
  }
  StatusOr<CounterDataFile> f =
      ParseCounterDataFile(garbage.data(), garbage.size(), "junk.rfcd");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(f.status().message().find("junk.rfcd"), std::string::npos);
  EXPECT_NE(f.status().message().find("magic"), std::string::npos);
  EXPECT_FALSE(ParseCounterDataFile(nullptr, 0, "empty").ok());
}

// Every truncation of a valid file is caught, none reads out of bounds.
TEST(CounterDataFileTest, EveryTruncationIsCorrupt) {
  std::vector<uint8_t> bytes = SerializeCounterDataFile(Sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    StatusOr<CounterDataFile> f = ParseCounterDataFile(cut.data(), n, "cut");
    EXPECT_FALSE(f.ok()) << "length " << n;
  }
}

// One flipped bit in the image fails the checksum.
TEST(CounterDataFileTest, FlippedBitFailsChecksum) {
  std::vector<uint8_t> bytes = SerializeCounterDataFile(Sample());
  bytes[bytes.size() - 10] ^= 0x10;  // inside the image
  StatusOr<CounterDataFile> f =
      ParseCounterDataFile(bytes.data(), bytes.size(), "flip.rfcd");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("checksum"), std::string::npos);
}

// A length field claiming more than the limit is refused before any copy.
TEST(CounterDataFileTest, OversizedLengthsAreRefused) {
  CounterDataFile big = Sample();
  big.chip = std::string(kMaxChipNameBytes + 1, 'G');
  std::vector<uint8_t> bytes = SerializeCounterDataFile(big);
  StatusOr<CounterDataFile> f =
      ParseCounterDataFile(bytes.data(), bytes.size(), "big.rfcd");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("chip"), std::string::npos);
  // Trailing bytes after the checksum are refused too.
  std::vector<uint8_t> extra = SerializeCounterDataFile(Sample());
  extra.push_back(0);
  EXPECT_FALSE(ParseCounterDataFile(extra.data(), extra.size(), "x").ok());
}

// Deterministic mutation run (the fuzzer's property in ctest): random byte
// changes of a valid file either still parse to something that serializes
// back to the same bytes, or are refused; nothing crashes.
TEST(CounterDataFileTest, RandomMutationsAreRefusedOrRoundTrip) {
  const std::vector<uint8_t> good = SerializeCounterDataFile(Sample());
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> b = good;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      b[next() % b.size()] = static_cast<uint8_t>(next());
    }
    if (next() % 4 == 0) b.resize(next() % (b.size() + 1));
    StatusOr<CounterDataFile> f = ParseCounterDataFile(b.data(), b.size(), "m");
    if (!f.ok()) {
      ++refused;
      continue;
    }
    EXPECT_EQ(SerializeCounterDataFile(*f), b);
  }
  // A change almost always breaks the checksum; only no-op edits pass.
  EXPECT_GT(refused, 19000);
}

// Known FNV-1a 64 values.
TEST(CounterDataFileTest, Fnv1aMatchesReferenceValues) {
  EXPECT_EQ(Fnv1a64(nullptr, 0), 0xcbf29ce484222325ull);
  const uint8_t a[] = {'a'};
  EXPECT_EQ(Fnv1a64(a, 1), 0xaf63dc4c8601ec8cull);
}

}  // namespace
}  // namespace rooftrace::counters
