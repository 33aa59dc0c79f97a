// libinject's hand-written encoder against the schema: what it encodes is
// decoded with libprotobuf (the field numbers and enum values it uses are
// checked in tests/foundation/field_numbers_test.cc).
#include <string>

#include "gtest/gtest.h"
#include "proto/wire_encoder.h"
#include "model/precision.h"
#include "proto/field_numbers.h"
#include "proto/proto_writer.h"
#include "proto/framing.h"
#include "proto/rooftrace.pb.h"
#include "proto/wire_constants.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace f = wire::fields;
namespace pb = rooftrace::wire;
// Encodes one framed packet whose data field is written by `fill`.
template <typename Fn>
pb::Packet RoundTrip(Fn fill,
                     const std::vector<StringDefinition>& defs = {}) {
  PacketEncoder enc;
  ProtoWriter& w = enc.Begin(123456789);
  fill(w);
  std::string frames;
  EXPECT_EQ(enc.Finish(defs, &frames), 1u);
  auto packets = testing::DecodeFrames(frames);
  EXPECT_EQ(packets.size(), 1u);
  return packets.empty() ? pb::Packet() : packets[0];
}

// A Hello with every field set decodes to the same values (incl. the magic).
TEST(EncoderRoundTripTest, HelloDecodesWithLibprotobuf) {
  HelloInfo h;
  h.pid = 4242;
  h.ppid = 1;
  h.host = "node-7";
  h.argv = {"python", "", "serve.py"};
  h.start_unix_ns = 1700000000123456789ull;
  h.start_ns = 987654321;
  h.capabilities = {wire::enums::kCapNvtx, wire::enums::kCapKernels};
  h.config = {"ROOFTRACE_MODE=trace"};
  pb::Packet p = RoundTrip(
      [&](ProtoWriter& w) { EncodeHello(w, f::packet::kHello, h); },
      {{1, "gemm"}, {2, "näme"}});
  ASSERT_TRUE(p.has_hello());
  EXPECT_EQ(p.sequence(), 1u);
  EXPECT_EQ(p.timestamp_ns(), 123456789u);
  EXPECT_EQ(p.hello().magic(), wire::kTraceMagic);
  EXPECT_EQ(p.hello().protocol_version(), wire::kProtocolVersion);
  EXPECT_EQ(p.hello().pid(), 4242u);
  EXPECT_EQ(p.hello().host(), "node-7");
  ASSERT_EQ(p.hello().argv_size(), 3);
  EXPECT_EQ(p.hello().argv(1), "");  // empty argv entries are kept
  EXPECT_EQ(p.hello().argv(2), "serve.py");
  EXPECT_EQ(p.hello().start_unix_ns(), 1700000000123456789ull);
  ASSERT_EQ(p.hello().capabilities_size(), 2);
  EXPECT_EQ(p.hello().capabilities(1), pb::CAPABILITY_KERNELS);
  EXPECT_EQ(p.hello().mode(), pb::MODE_TRACE);
  EXPECT_EQ(p.hello().config(0), "ROOFTRACE_MODE=trace");
  ASSERT_EQ(p.interned_strings_size(), 2);
  EXPECT_EQ(p.interned_strings(1).iid(), 2u);
  EXPECT_EQ(p.interned_strings(1).str(), "näme");
}

// Kernels and launches with large and zero values decode exactly.
TEST(EncoderRoundTripTest, KernelBatchDecodesWithLibprotobuf) {
  KernelInfo k;
  k.correlation_id = 77;
  k.start_ns = 5'000'000'000'123ull;
  k.end_ns = 5'000'000'100'456ull;
  k.device_id = 0;  // zero: omitted on the wire, default on decode
  k.context_id = 1;
  k.stream_id = 13;
  k.name_iid = 9;
  k.grid[0] = 1024;
  k.grid[1] = 2;
  k.grid[2] = 1;
  k.block[0] = 256;
  k.cluster[0] = 2;
  k.registers_per_thread = 168;
  k.static_shared_memory_bytes = 49152;
  k.dynamic_shared_memory_bytes = 232448;
  k.graph_id = 4;
  k.graph_node_id = 0xFFFFFFFFFFull;
  LaunchRecord l{};
  l.correlation_id = 77;
  l.thread_id = 31337;
  l.api_start_ns = 10;
  l.api_end_ns = 20;
  l.nvtx_range_id = 3;
  l.kind = wire::enums::kApiKernelLaunch;
  l.gemm_call_id = 2;
  l.cbid = 211;
  pb::Packet p = RoundTrip([&](ProtoWriter& w) {
    const size_t t = w.BeginMessage(f::packet::kKernelBatch);
    EncodeKernel(w, f::kernel_batch::kKernels, k);
    EncodeKernel(w, f::kernel_batch::kKernels, k);
    EncodeLaunch(w, f::kernel_batch::kLaunches, l);
    w.EndMessage(t);
  });
  ASSERT_TRUE(p.has_kernel_batch());
  ASSERT_EQ(p.kernel_batch().kernels_size(), 2);
  const pb::Kernel& d = p.kernel_batch().kernels(1);
  EXPECT_EQ(d.correlation_id(), 77u);
  EXPECT_EQ(d.start_ns(), 5'000'000'000'123ull);
  EXPECT_EQ(d.end_ns(), 5'000'000'100'456ull);
  EXPECT_EQ(d.device_id(), 0u);
  EXPECT_EQ(d.stream_id(), 13u);
  EXPECT_EQ(d.name_iid(), 9u);
  EXPECT_EQ(d.grid_x(), 1024u);
  EXPECT_EQ(d.grid_y(), 2u);
  EXPECT_EQ(d.block_x(), 256u);
  EXPECT_EQ(d.cluster_x(), 2u);
  EXPECT_EQ(d.registers_per_thread(), 168u);
  EXPECT_EQ(d.static_shared_memory_bytes(), 49152u);
  EXPECT_EQ(d.dynamic_shared_memory_bytes(), 232448u);
  EXPECT_EQ(d.graph_id(), 4u);
  EXPECT_EQ(d.graph_node_id(), 0xFFFFFFFFFFull);
  ASSERT_EQ(p.kernel_batch().launches_size(), 1);
  const pb::Launch& dl = p.kernel_batch().launches(0);
  EXPECT_EQ(dl.thread_id(), 31337u);
  EXPECT_EQ(dl.api_end_ns(), 20u);
  EXPECT_EQ(dl.nvtx_range_id(), 3u);
  EXPECT_EQ(dl.kind(), pb::API_KERNEL_LAUNCH);
  EXPECT_EQ(dl.gemm_call_id(), 2u);
  EXPECT_EQ(dl.cbid(), 211u);
}

// A Gemm with negative status, packed correlation ids and int64 shapes.
TEST(EncoderRoundTripTest, GemmDecodesWithLibprotobuf) {
  GemmRecord g{};
  g.call_id = 5;
  g.api = wire::enums::kGemmApiGemmStridedBatchedEx;
  g.m = 8192;
  g.n = 1;
  g.k = 3'000'000'000ll;
  g.batch = 32;
  g.trans_a = wire::enums::kTransposeT;
  g.trans_b = wire::enums::kTransposeN;
  g.a_type = 14;
  g.b_type = 14;
  g.c_type = 0;
  g.d_type = 0;
  g.compute_type = 68;
  g.lda = 8192;
  g.stride_a = 1ll << 40;
  g.a_ptr = 0x7f0000001000ull;
  g.d_ptr = 0x7f0000009000ull;
  g.epilogue = 32;
  g.status = -3;
  g.precision = static_cast<uint32_t>(Precision::kFp16Tensor);
  g.correlation_count = 3;
  g.correlation_ids[0] = 100;
  g.correlation_ids[1] = 101;
  g.correlation_ids[2] = 300;
  pb::Packet p = RoundTrip([&](ProtoWriter& w) {
    const size_t t = w.BeginMessage(f::packet::kGemmBatch);
    EncodeGemm(w, f::gemm_batch::kGemms, g);
    w.EndMessage(t);
  });
  ASSERT_EQ(p.gemm_batch().gemms_size(), 1);
  const pb::Gemm& d = p.gemm_batch().gemms(0);
  EXPECT_EQ(d.call_id(), 5u);
  EXPECT_EQ(d.api(), pb::GEMM_API_GEMM_STRIDED_BATCHED_EX);
  EXPECT_EQ(d.m(), 8192);
  EXPECT_EQ(d.n(), 1);
  EXPECT_EQ(d.k(), 3'000'000'000ll);
  EXPECT_EQ(d.batch(), 32);
  EXPECT_EQ(d.trans_a(), pb::TRANSPOSE_T);
  EXPECT_EQ(d.a_type(), 14);
  EXPECT_EQ(d.c_type(), 0);
  EXPECT_EQ(d.compute_type(), 68);
  EXPECT_EQ(d.stride_a(), 1ll << 40);
  EXPECT_EQ(d.a_ptr(), 0x7f0000001000ull);
  EXPECT_EQ(d.d_ptr(), 0x7f0000009000ull);
  EXPECT_EQ(d.epilogue(), 32u);
  EXPECT_EQ(d.status(), -3);
  EXPECT_EQ(d.precision(), pb::PRECISION_FP16_TENSOR);
  ASSERT_EQ(d.correlation_ids_size(), 3);
  EXPECT_EQ(d.correlation_ids(2), 300u);
}

// Memcpy, Device, NVTX, Stats and Goodbye all decode to what was encoded.
TEST(EncoderRoundTripTest, OtherMessagesDecodeWithLibprotobuf) {
  MemcpyInfo c;
  c.correlation_id = 9;
  c.bytes = 1ull << 33;
  c.kind = wire::enums::kCopyMemset;
  c.memset_value = 0xAB;
  c.dst_kind = wire::enums::kMemoryDevice;
  c.dst_device_id = 3;
  pb::Packet p = RoundTrip([&](ProtoWriter& w) {
    const size_t t = w.BeginMessage(f::packet::kMemcpyBatch);
    EncodeMemcpy(w, f::memcpy_batch::kMemcpys, c);
    w.EndMessage(t);
  });
  ASSERT_EQ(p.memcpy_batch().memcpys_size(), 1);
  EXPECT_EQ(p.memcpy_batch().memcpys(0).bytes(), 1ull << 33);
  EXPECT_EQ(p.memcpy_batch().memcpys(0).kind(), pb::COPY_MEMSET);
  EXPECT_EQ(p.memcpy_batch().memcpys(0).memset_value(), 0xABu);
  EXPECT_EQ(p.memcpy_batch().memcpys(0).dst_kind(), pb::MEMORY_DEVICE);
  EXPECT_EQ(p.memcpy_batch().memcpys(0).dst_device_id(), 3u);

  DeviceInfo dev;
  dev.device_id = 1;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  dev.sm_count = 132;
  dev.cc_major = 9;
  dev.l2_cache_bytes = 50u << 20;
  dev.global_memory_bytes = 85ull << 30;
  dev.memory_bus_width_bits = 5120;
  dev.driver_version = "13000";
  p = RoundTrip([&](ProtoWriter& w) { EncodeDevice(w, f::packet::kDevice, dev); });
  EXPECT_EQ(p.device().name(), dev.name);
  EXPECT_EQ(p.device().uuid(), dev.uuid);
  EXPECT_EQ(p.device().sm_count(), 132u);
  EXPECT_EQ(p.device().compute_capability_major(), 9u);
  EXPECT_EQ(p.device().l2_cache_bytes(), 50u << 20);
  EXPECT_EQ(p.device().global_memory_bytes(), 85ull << 30);
  EXPECT_EQ(p.device().memory_bus_width_bits(), 5120u);
  EXPECT_EQ(p.device().driver_version(), "13000");

  NvtxRangeRecord r{};
  r.range_id = 12;
  r.domain_iid = 4;
  r.name_iid = 5;
  r.start_ns = 100;
  r.end_ns = 250;
  r.thread_id = 7;
  r.end_thread_id = 8;
  r.parent_range_id = 11;
  r.kind = wire::enums::kRangeStartEnd;
  r.depth = 2;
  r.category = 6;
  r.color_argb = 0xFF112233u;
  NvtxMarkRecord m{4, 6, 175, 7};
  p = RoundTrip([&](ProtoWriter& w) {
    const size_t t = w.BeginMessage(f::packet::kNvtxBatch);
    EncodeNvtxRange(w, f::nvtx_batch::kRanges, r);
    EncodeNvtxMark(w, f::nvtx_batch::kMarks, m);
    w.EndMessage(t);
  });
  ASSERT_EQ(p.nvtx_batch().ranges_size(), 1);
  const pb::NvtxRange& dr = p.nvtx_batch().ranges(0);
  EXPECT_EQ(dr.range_id(), 12u);
  EXPECT_EQ(dr.parent_range_id(), 11u);
  EXPECT_EQ(dr.end_thread_id(), 8u);
  EXPECT_EQ(dr.kind(), pb::RANGE_START_END);
  EXPECT_EQ(dr.depth(), 2u);
  EXPECT_EQ(dr.color_argb(), 0xFF112233u);
  ASSERT_EQ(p.nvtx_batch().marks_size(), 1);
  EXPECT_EQ(p.nvtx_batch().marks(0).timestamp_ns(), 175u);

  StatsInfo s;
  s.counts[wire::enums::kRecordKernel] = {10, 8, 1, 1};
  s.counts[wire::enums::kRecordGemm] = {3, 3, 0, 0};
  s.packets_sent = 17;
  s.bytes_sent = 4096;
  s.cupti_records_dropped = 2;
  s.activity_buffers_requested = 40;
  s.activity_buffers_completed = 37;
  s.activity_buffers_outstanding = 3;
  s.activity_buffers_refused = 1;
  s.kernels_from_launch = 5;
  s.kernels_untimed = 6;
  s.warnings = {"collector gone"};
  p = RoundTrip([&](ProtoWriter& w) { EncodeStats(w, f::packet::kStats, s); });
  ASSERT_EQ(p.stats().counts_size(), 2);  // kinds with all zeros are omitted
  EXPECT_EQ(p.stats().counts(0).kind(), pb::RECORD_KERNEL);
  EXPECT_EQ(p.stats().counts(0).seen(), 10u);
  EXPECT_EQ(p.stats().counts(0).sent(), 8u);
  EXPECT_EQ(p.stats().counts(0).dropped(), 1u);
  EXPECT_EQ(p.stats().counts(0).filtered(), 1u);
  EXPECT_EQ(p.stats().counts(1).kind(), pb::RECORD_GEMM);
  EXPECT_EQ(p.stats().cupti_records_dropped(), 2u);
  EXPECT_EQ(p.stats().activity_buffers_requested(), 40u);
  EXPECT_EQ(p.stats().activity_buffers_completed(), 37u);
  EXPECT_EQ(p.stats().activity_buffers_outstanding(), 3u);
  EXPECT_EQ(p.stats().activity_buffers_refused(), 1u);
  EXPECT_EQ(p.stats().kernels_from_launch(), 5u);
  EXPECT_EQ(p.stats().kernels_untimed(), 6u);
  EXPECT_EQ(p.stats().warnings(0), "collector gone");

  p = RoundTrip([&](ProtoWriter& w) {
    EncodeGoodbye(w, f::packet::kGoodbye, s.counts, 18, 99, 98, -1);
  });
  EXPECT_EQ(p.goodbye().packets_sent(), 18u);
  EXPECT_EQ(p.goodbye().exit_code(), -1);
  EXPECT_EQ(p.goodbye().totals_size(), 2);
}

// Nested messages longer than 127 bytes get a multi-byte length prefix.
TEST(ProtoWriterTest, LongNestedMessagesGetMultiByteLengths) {
  std::string out;
  ProtoWriter w(&out);
  const size_t t = w.BeginMessage(f::packet::kHello);
  w.String(f::hello::kHost, std::string(300, 'x'));
  w.EndMessage(t);
  pb::Packet p;
  ASSERT_TRUE(p.ParseFromString(out));
  EXPECT_EQ(p.hello().host().size(), 300u);
  // tag(1) + length varint(2: 303 > 127) + inner tag(1) + len(2) + 300.
  EXPECT_EQ(out.size(), 1u + 2u + 1u + 2u + 300u);
}

// Sequences count from 1 without gaps across packets of one encoder.
TEST(PacketEncoderTest, SequencesCountFromOne) {
  PacketEncoder enc;
  std::string frames;
  for (int i = 0; i < 3; ++i) {
    ProtoWriter& w = enc.Begin(1);
    EncodeStats(w, f::packet::kStats, StatsInfo{});
    enc.Finish({}, &frames);
  }
  auto packets = testing::DecodeFrames(frames);
  ASSERT_EQ(packets.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(packets[i].sequence(), i + 1u);
}

// The collector's HelloReply (encoded by libprotobuf) is read correctly.
TEST(HelloReplyTest, ParsesRefusalWithReason) {
  pb::Packet reply;
  reply.set_sequence(1);
  reply.mutable_hello_reply()->set_accepted(false);
  reply.mutable_hello_reply()->set_protocol_version(2);
  reply.mutable_hello_reply()->set_reason("producer protocol 3 is newer");
  bool accepted = true;
  uint32_t version = 0;
  std::string reason;
  ASSERT_TRUE(ParseHelloReply(reply.SerializeAsString(), &accepted, &version,
                              &reason));
  EXPECT_FALSE(accepted);
  EXPECT_EQ(version, 2u);
  EXPECT_EQ(reason, "producer protocol 3 is newer");

  reply.mutable_hello_reply()->set_accepted(true);
  ASSERT_TRUE(ParseHelloReply(reply.SerializeAsString(), &accepted, &version,
                              &reason));
  EXPECT_TRUE(accepted);
  // Not a HelloReply; truncated bytes.
  pb::Packet other;
  other.mutable_stats()->set_packets_sent(1);
  EXPECT_FALSE(ParseHelloReply(other.SerializeAsString(), &accepted, &version,
                               &reason));
  std::string cut = reply.SerializeAsString();
  cut.pop_back();
  EXPECT_FALSE(ParseHelloReply(cut, &accepted, &version, &reason));
}

// Mutated and truncated replies never crash the parser or read out of
// bounds (the deterministic cousin of hello_reply_fuzzer); an intact reply
// still parses afterwards.
TEST(HelloReplyTest, SurvivesMutatedInput) {
  pb::Packet reply;
  reply.set_sequence(1);
  reply.mutable_hello_reply()->set_accepted(true);
  reply.mutable_hello_reply()->set_reason(std::string(200, 'r'));
  const std::string good = reply.SerializeAsString();
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  bool accepted;
  uint32_t version;
  std::string reason;
  for (int i = 0; i < 20000; ++i) {
    std::string bad = good.substr(0, next() % (good.size() + 1));
    for (int flips = static_cast<int>(next() % 4); flips > 0 && !bad.empty();
         --flips) {
      bad[next() % bad.size()] = static_cast<char>(next());
    }
    ParseHelloReply(bad, &accepted, &version, &reason);
    EXPECT_LE(reason.size(), good.size());
  }
  ASSERT_TRUE(ParseHelloReply(good, &accepted, &version, &reason));
  EXPECT_TRUE(accepted);
}

}  // namespace
}  // namespace rooftrace::inject
