// Tests of the live buffer (proto/live_buffer.h): a reader sees a buffer
// only once its owner is gone, finds the committed records in order, and
// re-encodes exactly those the stream did not carry.
#include "proto/live_buffer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "proto/field_numbers.h"
#include "proto/framing.h"
#include "proto/rooftrace.pb.h"
#include "tests/support/temp_dir.h"

namespace rooftrace::inject {
namespace {

CapturedRecord Range(uint64_t id) {
  CapturedRecord r{};
  r.type = RecordType::kNvtxRange;
  r.range = NvtxRangeRecord{};
  r.range.range_id = id;
  r.range.name_iid = 1;
  r.range.start_ns = id * 10;
  r.range.end_ns = id * 10 + 5;
  return r;
}

std::vector<wire::Packet> Decode(const std::string& frames) {
  std::vector<wire::Packet> out;
  wire::FrameReader reader;
  reader.Feed(frames);
  std::string_view payload;
  while (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
    out.emplace_back();
    EXPECT_TRUE(out.back().ParseFromArray(payload.data(),
                                          static_cast<int>(payload.size())));
  }
  return out;
}

// A child process owns the buffer: while it lives a reader is told so and
// reads nothing; once it has ended (here with _exit, no clean-up) the
// records it committed are there in order, and the one it took and the
// sender already freed is not.
TEST(LiveBufferTest, ReadableOnlyOnceItsOwnerIsGone) {
  test_support::TempDir dir("live");
  const std::string path = dir.path().string() + "/p.live";
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  if (child == 0) {
    auto live = LiveBuffer::Create(path, 8, 4096, "hello", 4242, 99);
    if (!live.ok()) _exit(1);
    LiveSlot* slots = (*live)->slots();
    (*live)->AppendString(1, "step");
    // Positions 0..4 written; 0 taken by the sender and freed. (A slot
    // stores its sequence minus its index: position + 1 is stored as 1,
    // position + capacity as 8.)
    for (uint64_t p = 0; p < 5; ++p) {
      slots[p].value = Range(100 + p);
      slots[p].seq.store(1);
    }
    slots[0].seq.store(8);
    char c = 1;
    (void)!write(ready[1], &c, 1);
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  LiveContents got;
  LiveReadResult result = LiveReadResult::kRead;
  ASSERT_TRUE(ReadLiveBuffer(path, getuid(), 4242, 99, &got, &result).ok());
  EXPECT_EQ(result, LiveReadResult::kOwnerAlive);
  ASSERT_EQ(write(go[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  Status s = ReadLiveBuffer(path, getuid(), 4242, 99, &got, &result);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(result, LiveReadResult::kRead);
  ASSERT_EQ(got.records.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got.records[i].first, i + 1);
    EXPECT_EQ(got.records[i].second.range.range_id, 101 + i);
  }
  ASSERT_EQ(got.strings.size(), 1u);
  EXPECT_EQ(got.strings[0].second, "step");
  EXPECT_EQ(got.hello_frame, "hello");
  // Another process's buffer (pid or start time) is refused, saying so.
  s = ReadLiveBuffer(path, getuid(), 4243, 99, &got, &result);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("another process"), std::string::npos);
  EXPECT_NE(s.message().find(path), std::string::npos);
}

// Not a live buffer at all: refused with the file's name.
TEST(LiveBufferTest, ForeignFileIsRefused) {
  test_support::TempDir dir("live");
  const std::string path = dir.path().string() + "/x.live";
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string junk(8192, 'x');
  fwrite(junk.data(), 1, junk.size(), f);
  fclose(f);
  LiveContents got;
  LiveReadResult result;
  Status s = ReadLiveBuffer(path, getuid(), 0, 0, &got, &result);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a rooftrace live buffer"), std::string::npos)
      << s.message();
}

// A pass of six ranges (positions 10..15, two per packet from sequence 5)
// was being written when the producer died; the collector got up to
// sequence 6. Ranges of packets 5 and 6 arrived and are skipped; those of
// packet 7 and the four queued after the pass are re-encoded, from the
// sequence after the last one received, the first packet defining the
// strings.
TEST(LiveBufferTest, RecoveryResumesExactlyAfterTheLastPacketReceived) {
  LiveContents live;
  for (uint64_t p = 10; p < 20; ++p) live.records.emplace_back(p, Range(p));
  live.strings.emplace_back(1, "step");
  live.inflight_from = 10;
  live.inflight_to = 16;
  live.inflight_batch = 2;
  live.inflight_first_seq[static_cast<int>(RecordType::kNvtxRange)] = 5;
  std::string frames;
  const RecoveryCounts counts = EncodeRecovered(live, 6, 7, 3, &frames);
  EXPECT_EQ(counts.already_received, 4u);
  EXPECT_EQ(counts.total(), 6u);
  const auto packets = Decode(frames);
  ASSERT_EQ(packets.size(), 2u);  // 6 ranges, 3 per packet
  EXPECT_EQ(packets[0].sequence(), 7u);
  EXPECT_EQ(packets[1].sequence(), 8u);
  ASSERT_EQ(packets[0].interned_strings_size(), 1);
  EXPECT_EQ(packets[0].interned_strings(0).str(), "step");
  EXPECT_EQ(packets[1].interned_strings_size(), 0);
  std::vector<uint64_t> ids;
  for (const auto& p : packets) {
    for (const auto& r : p.nvtx_batch().ranges()) ids.push_back(r.range_id());
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{14, 15, 16, 17, 18, 19}));
  // Nothing received of the pass: all ten come back.
  std::string all;
  EXPECT_EQ(EncodeRecovered(live, 4, 5, 100, &all).total(), 10u);
}

// Leaves at `path` the live buffer of a producer that died: `capacity`
// slots, the ranges of `positions` committed (each in slot position %
// capacity). Made by a child that ends with _exit, as a killed one would.
void LeaveDeadBuffer(const std::string& path, uint64_t capacity,
                     const std::vector<uint64_t>& positions) {
  const pid_t child = fork();
  if (child == 0) {
    auto live = LiveBuffer::Create(path, capacity, 4096, "hello", 4242, 99);
    if (!live.ok()) _exit(1);
    (*live)->AppendString(1, "step");
    LiveSlot* slots = (*live)->slots();
    for (const uint64_t p : positions) {
      const uint64_t i = p % capacity;
      slots[i].value = Range(p);
      slots[i].seq.store(p + 1 - i);  // committed: position + 1, less i
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A queue that wrapped: slots 5..7 hold positions 5..7, slots 0..4 the
// later positions 8..12. The reader gives them in position order (the two
// sorted runs of slot order merged).
TEST(LiveBufferTest, WrappedQueueIsReadInPositionOrder) {
  test_support::TempDir dir("live");
  const std::string path = dir.path().string() + "/w.live";
  LeaveDeadBuffer(path, 8, {5, 6, 7, 8, 9, 10, 11, 12});
  LiveContents got;
  LiveReadResult result = LiveReadResult::kOwnerAlive;
  ASSERT_TRUE(ReadLiveBuffer(path, getuid(), 4242, 99, &got, &result).ok());
  ASSERT_EQ(result, LiveReadResult::kRead);
  std::vector<uint64_t> positions, ids;
  for (const auto& [pos, r] : got.records) {
    positions.push_back(pos);
    ids.push_back(r.range.range_id);
  }
  EXPECT_EQ(positions, (std::vector<uint64_t>{5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(ids, positions);
}

// A stop asked before or while a buffer is read or re-encoded (#37.14:
// SIGTERM waited for a 3 M-record recovery): reading ends as kStopped with
// nothing kept, encoding as `stopped`, and the file is left as it was.
TEST(LiveBufferTest, StopFlagEndsTheReadAndTheEncoding) {
  test_support::TempDir dir("live");
  const std::string path = dir.path().string() + "/s.live";
  std::vector<uint64_t> positions;
  for (uint64_t p = 0; p < 1000; ++p) positions.push_back(p);
  LeaveDeadBuffer(path, 1024, positions);
  std::atomic<bool> stop{true};
  LiveContents got;
  LiveReadResult result = LiveReadResult::kOwnerAlive;
  ASSERT_TRUE(
      ReadLiveBuffer(path, getuid(), 4242, 99, &got, &result, &stop).ok());
  EXPECT_EQ(result, LiveReadResult::kStopped);
  EXPECT_TRUE(got.records.empty());
  // Still there and whole for the next reader.
  stop = false;
  ASSERT_TRUE(
      ReadLiveBuffer(path, getuid(), 4242, 99, &got, &result, &stop).ok());
  ASSERT_EQ(result, LiveReadResult::kRead);
  EXPECT_EQ(got.records.size(), 1000u);
  stop = true;
  std::string frames;
  const RecoveryCounts counts =
      EncodeRecovered(got, 0, 1, 100, &frames, &stop);
  EXPECT_TRUE(counts.stopped);
  stop = false;
  std::string all;
  const RecoveryCounts whole = EncodeRecovered(got, 0, 1, 100, &all, &stop);
  EXPECT_FALSE(whole.stopped);
  EXPECT_EQ(whole.total(), 1000u);
}

}  // namespace
}  // namespace rooftrace::inject
