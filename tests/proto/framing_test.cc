// Tests of the shared framing library: round trip through libprotobuf, any
// chunking, oversize frames, truncation and garbage.
#include "proto/framing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "proto/rooftrace.pb.h"

namespace rooftrace::wire {
namespace {

Packet MakeKernelPacket(uint64_t seq, int kernels) {
  Packet p;
  p.set_sequence(seq);
  p.set_timestamp_ns(1000 * seq);
  auto* batch = p.mutable_kernel_batch();
  for (int i = 0; i < kernels; ++i) {
    auto* k = batch->add_kernels();
    k->set_correlation_id(seq * 100 + i);
    k->set_start_ns(10 * i);
    k->set_end_ns(10 * i + 5);
    k->set_grid_x(128);
    k->set_name_iid(1);
  }
  auto* s = p.add_interned_strings();
  s->set_iid(1);
  s->set_str("_Z6kernelPf");
  return p;
}

std::string EncodeStream(const std::vector<Packet>& packets) {
  std::string out;
  for (const auto& p : packets) AppendFrame(&out, p.SerializeAsString());
  return out;
}

std::vector<Packet> DecodeAll(FrameReader* reader) {
  std::vector<Packet> out;
  std::string_view frame;
  while (reader->Next(&frame) == FrameReader::Result::kFrame) {
    Packet p;
    EXPECT_TRUE(p.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
    out.push_back(p);
  }
  return out;
}

std::string TempPath(const char* name) {
  return ::testing::TempDir() + "/" + name + std::to_string(getpid());
}

// Three packets written with AppendFrame come back identical.
TEST(FramingTest, RoundTrip) {
  std::vector<Packet> in = {MakeKernelPacket(1, 3), MakeKernelPacket(2, 0),
                            MakeKernelPacket(3, 500)};
  FrameReader reader;
  reader.Feed(EncodeStream(in));
  auto out = DecodeAll(&reader);
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].SerializeAsString(), in[i].SerializeAsString());
  }
  EXPECT_EQ(reader.buffered_bytes(), 0u);
  EXPECT_EQ(reader.frames_read(), 3u);
}

// The stream of frames is itself a valid Trace message.
TEST(FramingTest, StreamIsAValidTrace) {
  std::vector<Packet> in = {MakeKernelPacket(1, 2), MakeKernelPacket(2, 1)};
  Trace trace;
  ASSERT_TRUE(trace.ParseFromString(EncodeStream(in)));
  ASSERT_EQ(trace.packet_size(), 2);
  EXPECT_EQ(trace.packet(1).kernel_batch().kernels(0).correlation_id(), 200u);
  // And a Trace serialized by libprotobuf is a valid stream.
  FrameReader reader;
  reader.Feed(trace.SerializeAsString());
  EXPECT_EQ(DecodeAll(&reader).size(), 2u);
}

// Peer sends one byte per recv(); every frame must still decode.
TEST(FramingTest, HighlyFragmentedFrames) {
  std::vector<Packet> in;
  for (int i = 1; i <= 20; ++i) in.push_back(MakeKernelPacket(i, i * 7));
  const std::string bytes = EncodeStream(in);
  FrameReader reader;
  std::vector<Packet> out;
  std::string_view frame;
  for (char c : bytes) {
    reader.Feed(&c, 1);
    for (;;) {
      auto r = reader.Next(&frame);
      ASSERT_NE(r, FrameReader::Result::kCorrupt) << reader.error();
      if (r != FrameReader::Result::kFrame) break;
      Packet p;
      ASSERT_TRUE(p.ParseFromArray(frame.data(), frame.size()));
      out.push_back(p);
    }
  }
  ASSERT_EQ(out.size(), in.size());
  EXPECT_EQ(out.back().sequence(), 20u);
}

// Random chunk sizes (seeded) decode to the same packets.
TEST(FramingTest, RandomChunking) {
  std::vector<Packet> in;
  for (int i = 1; i <= 50; ++i) in.push_back(MakeKernelPacket(i, i % 9));
  const std::string bytes = EncodeStream(in);
  std::mt19937 rng(42);
  for (int round = 0; round < 20; ++round) {
    FrameReader reader;
    size_t pos = 0, frames = 0;
    std::string_view frame;
    while (pos < bytes.size()) {
      size_t n = std::min<size_t>(bytes.size() - pos, 1 + rng() % 300);
      reader.Feed(bytes.data() + pos, n);
      pos += n;
      while (reader.Next(&frame) == FrameReader::Result::kFrame) ++frames;
    }
    EXPECT_EQ(frames, in.size());
  }
}

// A frame declaring more than the limit is corrupt, without waiting for it.
TEST(FramingTest, OversizeFrameIsCorrupt) {
  std::string bytes;
  bytes.push_back(static_cast<char>(kPacketTag));
  AppendVarint(&bytes, 3100000000ull);
  FrameReader reader;
  reader.Feed(bytes);
  std::string_view frame;
  EXPECT_EQ(reader.Next(&frame), FrameReader::Result::kCorrupt);
  EXPECT_NE(reader.error().find("declares 3.1 GB (limit 64 MiB)"),
            std::string::npos)
      << reader.error();
  // Sticky: more bytes do not revive the stream.
  reader.Feed(EncodeStream({MakeKernelPacket(1, 1)}));
  EXPECT_EQ(reader.Next(&frame), FrameReader::Result::kCorrupt);
}

// A small configured limit applies too.
TEST(FramingTest, ConfiguredLimit) {
  FrameReader reader(/*max_frame_bytes=*/16);
  reader.Feed(EncodeStream({MakeKernelPacket(1, 10)}));
  std::string_view frame;
  EXPECT_EQ(reader.Next(&frame), FrameReader::Result::kCorrupt);
}

// A partial header or payload is "need more", not "corrupt".
TEST(FramingTest, PartialIsNeedMore) {
  const std::string bytes = EncodeStream({MakeKernelPacket(1, 200)});
  ASSERT_GT(bytes.size(), 300u);
  for (size_t cut : {size_t{1}, size_t{2}, size_t{3}, bytes.size() - 1}) {
    FrameReader reader;
    reader.Feed(bytes.substr(0, cut));
    std::string_view frame;
    EXPECT_EQ(reader.Next(&frame), FrameReader::Result::kNeedMore) << cut;
    EXPECT_EQ(reader.buffered_bytes(), cut);
  }
}

// Bytes that are not a rooftrace stream are corrupt at the first byte.
TEST(FramingTest, GarbageIsCorrupt) {
  FrameReader reader;
  reader.Feed(std::string("GET / HTTP/1.1\r\n\r\n"));
  std::string_view frame;
  EXPECT_EQ(reader.Next(&frame), FrameReader::Result::kCorrupt);
  EXPECT_NE(reader.error().find("starts with 0x47"), std::string::npos)
      << reader.error();
}

// A length varint that never ends is corrupt after 10 bytes.
TEST(FramingTest, EndlessVarintIsCorrupt) {
  std::string bytes(1, static_cast<char>(kPacketTag));
  bytes.append(12, static_cast<char>(0xff));
  FrameReader reader;
  reader.Feed(bytes);
  std::string_view frame;
  EXPECT_EQ(reader.Next(&frame), FrameReader::Result::kCorrupt);
}

// Random bytes never crash the reader and never yield an oversize frame.
TEST(FramingTest, RandomGarbageNeverCrashes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(rng() % 64, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    if (!bytes.empty() && round % 2 == 0) bytes[0] = kPacketTag;
    FrameReader reader(1024);
    reader.Feed(bytes);
    std::string_view frame;
    FrameReader::Result r;
    while ((r = reader.Next(&frame)) == FrameReader::Result::kFrame) {
      EXPECT_LE(frame.size(), 1024u);
    }
  }
}

// A file cut inside the last frame reports truncation and keeps the rest.
TEST(TraceFileReaderTest, TruncatedFile) {
  const std::string path = TempPath("trunc.rft");
  std::string bytes = EncodeStream(
      {MakeKernelPacket(1, 5), MakeKernelPacket(2, 5), MakeKernelPacket(3, 5)});
  bytes.resize(bytes.size() - 7);
  std::ofstream(path, std::ios::binary) << bytes;
  TraceFileReader reader;
  ASSERT_TRUE(reader.Open(path).ok());
  std::string_view frame;
  int frames = 0;
  TraceFileReader::Result r;
  while ((r = reader.Next(&frame)) == TraceFileReader::Result::kFrame) ++frames;
  EXPECT_EQ(frames, 2);
  EXPECT_EQ(r, TraceFileReader::Result::kTruncated);
  EXPECT_NE(reader.error().find(path), std::string::npos);
  EXPECT_NE(reader.error().find("ends inside frame 3"), std::string::npos)
      << reader.error();
  unlink(path.c_str());
}

// A whole file reads to a clean end; a missing file is a clear error.
TEST(TraceFileReaderTest, CleanEndAndMissingFile) {
  const std::string path = TempPath("ok.rft");
  std::ofstream(path, std::ios::binary)
      << EncodeStream({MakeKernelPacket(1, 1), MakeKernelPacket(2, 2)});
  TraceFileReader reader;
  ASSERT_TRUE(reader.Open(path).ok());
  std::string_view frame;
  EXPECT_EQ(reader.Next(&frame), TraceFileReader::Result::kFrame);
  EXPECT_EQ(reader.Next(&frame), TraceFileReader::Result::kFrame);
  EXPECT_EQ(reader.Next(&frame), TraceFileReader::Result::kEnd);
  unlink(path.c_str());

  TraceFileReader missing;
  Status s = missing.Open("/nonexistent/run.rft");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/run.rft"), std::string::npos);
}

// Varints agree with libprotobuf's encoding at the edges.
TEST(FramingTest, VarintEdges) {
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull,
                     (1ull << 63), ~0ull}) {
    std::string mine;
    AppendVarint(&mine, v);
    Packet p;
    p.set_sequence(v);
    std::string theirs = p.SerializeAsString();
    if (v == 0) {
      EXPECT_EQ(mine, std::string(1, '\0'));
      continue;
    }
    EXPECT_EQ(theirs.substr(1), mine) << v;  // after the tag byte 0x08
  }
}

}  // namespace
}  // namespace rooftrace::wire
