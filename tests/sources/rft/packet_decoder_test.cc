// The collector's hand-written packet decoder against libprotobuf's parser:
// a WireSession fed through each (WireSession::UseReferenceDecoder) must keep the
// same records, strings and statistics for generated streams, hand-built
// packets that use the wire format's corners, and mutated and random bytes.
#include "sources/rft/packet_decoder.h"

#include <random>
#include <string>
#include <vector>

#include "sources/rft/wire_session.h"
#include "sources/rft/testing/session_diff.h"
#include "sources/rft/testing/trace_builder.h"
#include "gtest/gtest.h"
#include "proto/field_numbers.h"
#include "proto/framing.h"
#include "proto/wire_reader.h"

namespace rooftrace {
namespace {

namespace f = wire::fields;
namespace ts = test_support;

std::vector<std::string> Payloads(const std::vector<std::string>& frames) {
  std::string stream;
  for (const auto& fr : frames) stream += fr;
  wire::FrameReader reader;
  reader.Feed(stream);
  std::vector<std::string> out;
  std::string_view p;
  while (reader.Next(&p) == wire::FrameReader::Result::kFrame) {
    out.emplace_back(p);
  }
  return out;
}

std::vector<std::string> LlmPayloads(bool nvtx, bool counters) {
  ts::LlmTraceOptions o;
  o.decode_steps = 4;
  o.nvtx = nvtx;
  o.counters = counters;
  o.max_batch_records = 64;
  ts::TraceBuilder b(o.session);
  ts::GenerateLlmTrace(o, &b);
  return Payloads(b.Frames());
}

// Feeds `payloads` to a fast and a reference session; returns the first
// difference (empty: none). `refused` counts packets both refused.
struct Pair {
  WireSession fast{"fast"};
  WireSession ref{"ref"};
  Pair() { ref.UseReferenceDecoder(); }

  std::string Feed(std::string_view payload) {
    const Status a = fast.OnPacket(payload);
    const Status b = ref.OnPacket(payload);
    if (a.ok() != b.ok()) return "one refused the stream, the other did not";
    return test_support::DiffSessions(fast, ref);
  }
};

// ---- hand-built packets

void Varint(std::string* out, uint64_t v) { wire::AppendVarint(out, v); }
void Tag(std::string* out, uint32_t field, uint32_t wt) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | wt);
}
void VarintField(std::string* out, uint32_t field, uint64_t v) {
  Tag(out, field, wire::kWireVarint);
  Varint(out, v);
}
void BytesField(std::string* out, uint32_t field, std::string_view b) {
  Tag(out, field, wire::kWireBytes);
  Varint(out, b.size());
  out->append(b);
}

std::string KernelMessage(uint64_t corr, uint64_t start, uint64_t end) {
  std::string k;
  VarintField(&k, f::kernel::kCorrelationId, corr);
  VarintField(&k, f::kernel::kStartNs, start);
  VarintField(&k, f::kernel::kEndNs, end);
  VarintField(&k, f::kernel::kGridX, 132);
  return k;
}

std::string HelloPayload() {
  ts::TraceBuilder b;
  b.Hello();
  return Payloads(b.Frames()).at(0);
}

TEST(PacketDecoderTest, GeneratedStreamsDecodeLikeLibprotobuf) {
  for (const bool nvtx : {false, true}) {
    for (const bool counters : {false, true}) {
      Pair pair;
      const auto payloads = LlmPayloads(nvtx, counters);
      for (const auto& p : payloads) {
        ASSERT_EQ(pair.Feed(p), "") << "nvtx=" << nvtx << " counters="
                                    << counters;
      }
      EXPECT_GT(pair.fast.session().kernels().size(), 50u);
      EXPECT_GT(pair.fast.session().launches().size(), 50u);
      EXPECT_GT(pair.fast.session().gemms().size(), 10u);
      EXPECT_GT(pair.fast.session().memcpys().size(), 0u);
      EXPECT_EQ(pair.fast.session().nvtx_ranges().empty(), !nvtx);
      EXPECT_EQ(pair.fast.session().counters().empty(), !counters);
      EXPECT_TRUE(pair.fast.session().end().goodbye);
      EXPECT_EQ(pair.fast.session().stats()[ImportStat::k_undecodable_packets], 0u);
    }
  }
}

// A sampling-mode stream: PM samples (varints and doubles) decode alike
// through both decoders, values exact, and are counted as received.
TEST(PacketDecoderTest, PmSamplesDecodeLikeLibprotobuf) {
  ts::TraceBuilder b;
  b.Hello();
  b.AddKernel("_Z3addPf", 1, 1000, 31000);
  b.AddPmSample(0, 1000, 21000, 4096.5, 1024.0);
  wire::PmSample& full = b.AddPmSample(1, 21000, 41000, 0.0, 8e12);
  full.set_tensor_pipe(3.0);
  full.set_fma_pipe(4.0);
  full.set_sm_cycles(5.0);
  b.Goodbye();
  Pair pair;
  for (const auto& p : Payloads(b.Frames())) ASSERT_EQ(pair.Feed(p), "");
  const std::vector<PmSampleRecord>& got = pair.fast.session().pm_samples();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].device_id, 0u);
  EXPECT_EQ(got[0].start_ns, 1000u);
  EXPECT_EQ(got[0].end_ns, 21000u);
  EXPECT_EQ(got[0].values[0], 4096.5);
  EXPECT_EQ(got[0].values[1], 1024.0);
  EXPECT_EQ(got[1].device_id, 1u);
  EXPECT_EQ(got[1].values[1], 8e12);
  EXPECT_EQ(got[1].values[2], 3.0);
  EXPECT_EQ(got[1].values[3], 4.0);
  EXPECT_EQ(got[1].values[4], 5.0);
  EXPECT_EQ(pair.fast.session().stats()[ImportStat::k_pm_samples], 2u);
  EXPECT_EQ(pair.fast.session().stats()[ImportStat::k_unknown_fields], 0u);
}

TEST(PacketDecoderTest, KernelPacketFieldsAndUnknownsAreCounted) {
  Pair pair;
  ASSERT_EQ(pair.Feed(HelloPayload()), "");
  std::string k = KernelMessage(7, 100, 250);
  VarintField(&k, 99, 1);                        // unknown field: 1
  BytesField(&k, f::kernel::kStartNs, "xx");     // known, wrong type: 2
  VarintField(&k, f::kernel::kStartNs, 120);     // last value wins
  Tag(&k, 50, wire::kWireStartGroup);            // a group: 3
  VarintField(&k, 1, 5);
  Tag(&k, 50, wire::kWireEndGroup);
  std::string batch;
  BytesField(&batch, f::kernel_batch::kKernels, k);
  VarintField(&batch, 9, 1);  // unknown in the batch: 4
  std::string packet;
  VarintField(&packet, f::packet::kSequence, 2);
  BytesField(&packet, f::packet::kKernelBatch, batch);
  std::string str;
  VarintField(&str, f::interned_string::kIid, 3);
  BytesField(&str, f::interned_string::kStr, "gemm_kernel");
  BytesField(&packet, f::packet::kInternedStrings, str);
  VarintField(&packet, 77, 1);  // unknown in the packet: 5
  ASSERT_EQ(pair.Feed(packet), "");

  ASSERT_EQ(pair.fast.session().kernels().size(), 1u);
  const KernelRecord& r = pair.fast.session().kernels()[0];
  EXPECT_EQ(r.correlation_id, 7u);
  EXPECT_EQ(r.start_ns, 120u);
  EXPECT_EQ(r.end_ns, 250u);
  EXPECT_EQ(r.grid[0], 132u);
  EXPECT_EQ(pair.fast.session().stats()[ImportStat::k_unknown_fields], 5u);
  ASSERT_NE(pair.fast.session().String(3), nullptr);
  EXPECT_EQ(*pair.fast.session().String(3), "gemm_kernel");
  EXPECT_EQ(pair.fast.session().end().last_sequence, 2u);
}

TEST(PacketDecoderTest, OneofLastMemberWinsAndRepeatedMembersMerge) {
  Pair pair;
  ASSERT_EQ(pair.Feed(HelloPayload()), "");
  std::string kb1, kb2, mb;
  BytesField(&kb1, f::kernel_batch::kKernels, KernelMessage(1, 10, 20));
  BytesField(&kb2, f::kernel_batch::kKernels, KernelMessage(2, 30, 40));
  std::string m;
  VarintField(&m, f::memcpy_record::kCorrelationId, 3);
  VarintField(&m, f::memcpy_record::kBytes, 4096);
  BytesField(&mb, f::memcpy_batch::kMemcpys, m);

  // kernel, memcpy, kernel, kernel: the memcpy batch is replaced by the
  // kernel batch set after it, and the two after it merge.
  std::string packet;
  VarintField(&packet, f::packet::kSequence, 2);
  BytesField(&packet, f::packet::kKernelBatch, kb1);
  BytesField(&packet, f::packet::kMemcpyBatch, mb);
  BytesField(&packet, f::packet::kKernelBatch, kb2);
  BytesField(&packet, f::packet::kKernelBatch, kb1);
  ASSERT_EQ(pair.Feed(packet), "");
  ASSERT_EQ(pair.fast.session().kernels().size(), 2u);
  EXPECT_EQ(pair.fast.session().kernels()[0].correlation_id, 2u);
  EXPECT_EQ(pair.fast.session().kernels()[1].correlation_id, 1u);
  EXPECT_TRUE(pair.fast.session().memcpys().empty());
  EXPECT_EQ(pair.fast.session().stats().received[wire::RECORD_KERNEL], 2u);
}

TEST(PacketDecoderTest, GemmCorrelationIdsPackedOrNotBecomeLinks) {
  Pair pair;
  ASSERT_EQ(pair.Feed(HelloPayload()), "");
  std::string g;
  VarintField(&g, f::gemm::kCorrelationIds, 11);  // unpacked, before call_id
  std::string packed;
  Varint(&packed, 12);
  Varint(&packed, 300);
  BytesField(&g, f::gemm::kCorrelationIds, packed);
  VarintField(&g, f::gemm::kCallId, 5);
  VarintField(&g, f::gemm::kM, static_cast<uint64_t>(-1));  // int64 -1
  VarintField(&g, f::gemm::kN, 4096);
  VarintField(&g, f::gemm::kAType, 0xffffffffull);  // int32 -1
  std::string batch, packet;
  BytesField(&batch, f::gemm_batch::kGemms, g);
  VarintField(&packet, f::packet::kSequence, 2);
  BytesField(&packet, f::packet::kGemmBatch, batch);
  ASSERT_EQ(pair.Feed(packet), "");
  ASSERT_EQ(pair.fast.session().gemms().size(), 1u);
  EXPECT_EQ(pair.fast.session().gemms()[0].call_id, 5u);
  EXPECT_EQ(pair.fast.session().gemms()[0].m, -1);
  EXPECT_EQ(pair.fast.session().gemms()[0].n, 4096);
  EXPECT_EQ(pair.fast.session().gemms()[0].a_type, -1);
  ASSERT_EQ(pair.fast.session().gemm_links().size(), 3u);
  EXPECT_EQ(pair.fast.session().gemm_links()[0].correlation_id, 11u);
  EXPECT_EQ(pair.fast.session().gemm_links()[2].correlation_id, 300u);
  for (const GemmLink& l : pair.fast.session().gemm_links()) EXPECT_EQ(l.call_id, 5u);

  // Dropping the call drops its links.
  RecordMask mask;
  mask.gemms = {1};
  pair.fast.session().DropRecords(mask);
  EXPECT_TRUE(pair.fast.session().gemms().empty());
  EXPECT_TRUE(pair.fast.session().gemm_links().empty());
}

TEST(PacketDecoderTest, MalformedPacketsLeaveNothingBehind) {
  Pair pair;
  ASSERT_EQ(pair.Feed(HelloPayload()), "");
  std::string good = KernelMessage(1, 10, 20);
  std::string batch;
  BytesField(&batch, f::kernel_batch::kKernels, good);
  BytesField(&batch, f::kernel_batch::kKernels, good);
  std::string packet;
  BytesField(&packet, f::packet::kKernelBatch, batch);
  // The second kernel's last varint cut short inside the batch: the first
  // kernel, already decoded, must not stay.
  std::string bad_batch = batch;
  bad_batch.back() = static_cast<char>(0x80);
  std::string bad;
  BytesField(&bad, f::packet::kKernelBatch, bad_batch);
  ASSERT_EQ(pair.Feed(bad), "");
  EXPECT_TRUE(pair.fast.session().kernels().empty());
  EXPECT_EQ(pair.fast.session().stats()[ImportStat::k_undecodable_packets], 1u);

  // A string that is not UTF-8 refuses the packet, as libprotobuf does.
  std::string str;
  VarintField(&str, f::interned_string::kIid, 3);
  BytesField(&str, f::interned_string::kStr, "caf\xc3");
  std::string with_bad_string = packet;
  BytesField(&with_bad_string, f::packet::kInternedStrings, str);
  ASSERT_EQ(pair.Feed(with_bad_string), "");
  EXPECT_TRUE(pair.fast.session().kernels().empty());
  EXPECT_EQ(pair.fast.session().String(3), nullptr);

  // A malformed batch that a later member of the oneof replaces: libprotobuf
  // parses it all the same, and refuses the packet.
  std::string replaced;
  BytesField(&replaced, f::packet::kKernelBatch, bad_batch);
  BytesField(&replaced, f::packet::kNvtxBatch, "");
  ASSERT_EQ(pair.Feed(replaced), "");

  // An end-group without its start, and a field number 0.
  std::string stray = packet;
  Tag(&stray, 40, wire::kWireEndGroup);
  ASSERT_EQ(pair.Feed(stray), "");
  std::string zero = packet;
  VarintField(&zero, 0, 1);
  ASSERT_EQ(pair.Feed(zero), "");
  EXPECT_EQ(pair.fast.session().stats()[ImportStat::k_undecodable_packets], 5u);

  ASSERT_EQ(pair.Feed(packet), "");
  EXPECT_EQ(pair.fast.session().kernels().size(), 2u);
}

TEST(PacketDecoderTest, MutatedPacketsDecodeLikeLibprotobuf) {
  const auto payloads = LlmPayloads(/*nvtx=*/true, /*counters=*/true);
  std::mt19937_64 rng(20261123);
  Pair pair;
  ASSERT_EQ(pair.Feed(payloads[0]), "");
  uint64_t accepted = 0, refused = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string p = payloads[1 + rng() % (payloads.size() - 1)];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !p.empty(); ++e) {
      const size_t at = rng() % p.size();
      switch (rng() % 4) {
        case 0: p[at] = static_cast<char>(rng()); break;
        case 1: p[at] = static_cast<char>(p[at] ^ (1 << (rng() % 8))); break;
        case 2: p.resize(at); break;
        default: p.insert(at, 1, static_cast<char>(rng())); break;
      }
    }
    const uint64_t before = pair.fast.session().stats()[ImportStat::k_undecodable_packets];
    ASSERT_EQ(pair.Feed(p), "") << "round " << round;
    if (pair.fast.session().stats()[ImportStat::k_undecodable_packets] > before) {
      ++refused;
    } else {
      ++accepted;
    }
    if (pair.fast.restart_pending()) {
      pair.fast = WireSession("fast");
      pair.ref = WireSession("ref");
      pair.ref.UseReferenceDecoder();
      ASSERT_EQ(pair.Feed(payloads[0]), "");
    }
  }
  // Both outcomes are exercised.
  EXPECT_GT(accepted, 500u);
  EXPECT_GT(refused, 500u);
}

TEST(PacketDecoderTest, RandomBytesDecodeLikeLibprotobuf) {
  std::mt19937_64 rng(7);
  Pair pair;
  ASSERT_EQ(pair.Feed(HelloPayload()), "");
  for (int round = 0; round < 20000; ++round) {
    std::string p(rng() % 24, '\0');
    for (char& c : p) c = static_cast<char>(rng());
    // Steer some toward record packets: a batch tag and a length.
    if (round % 2 == 0 && p.size() > 2) {
      p[0] = static_cast<char>((5 + rng() % 5) << 3 | 2);
      p[1] = static_cast<char>(p.size() - 2);
    }
    std::string hex;
    for (unsigned char c : p) {
      static const char kHex[] = "0123456789abcdef";
      hex += kHex[c >> 4];
      hex += kHex[c & 15];
    }
    ASSERT_EQ(pair.Feed(p), "") << "round " << round << ": " << hex;
    if (pair.fast.restart_pending()) break;
  }
}

TEST(PacketDecoderTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("flash_fwd_kernel<cutlass::bfloat16_t>"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\x80"));          // overlong NUL
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\x80"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80"));              // stray continuation
}

}  // namespace
}  // namespace rooftrace
