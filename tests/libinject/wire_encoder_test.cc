// libinject's hand-written encoder against the schema: every field number
// and enum value it uses is checked against the descriptor generated from
// rooftrace.proto, and what it encodes is decoded with libprotobuf.
#include <string>

#include "gtest/gtest.h"
#include "libinject/encoder.h"
#include "proto/field_numbers.h"
#include "libinject/proto_writer.h"
#include "proto/framing.h"
#include "proto/rooftrace.pb.h"
#include "proto/wire_constants.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace f = wire::fields;
namespace pb = rooftrace::wire;
using google::protobuf::Descriptor;

int Number(const Descriptor* d, const char* field) {
  const auto* fd = d->FindFieldByName(field);
  EXPECT_NE(fd, nullptr) << d->name() << "." << field;
  return fd == nullptr ? -1 : fd->number();
}

int EnumValue(const google::protobuf::EnumDescriptor* e, const char* name) {
  const auto* v = e->FindValueByName(name);
  EXPECT_NE(v, nullptr) << name;
  return v == nullptr ? -1 : v->number();
}

// Every field number in field_numbers.h matches rooftrace.proto.
TEST(FieldNumbersTest, MatchTheGeneratedDescriptor) {
  const Descriptor* p = pb::Packet::descriptor();
  EXPECT_EQ(f::packet::kSequence, Number(p, "sequence"));
  EXPECT_EQ(f::packet::kTimestampNs, Number(p, "timestamp_ns"));
  EXPECT_EQ(f::packet::kHello, Number(p, "hello"));
  EXPECT_EQ(f::packet::kDevice, Number(p, "device"));
  EXPECT_EQ(f::packet::kKernelBatch, Number(p, "kernel_batch"));
  EXPECT_EQ(f::packet::kMemcpyBatch, Number(p, "memcpy_batch"));
  EXPECT_EQ(f::packet::kGemmBatch, Number(p, "gemm_batch"));
  EXPECT_EQ(f::packet::kNvtxBatch, Number(p, "nvtx_batch"));
  EXPECT_EQ(f::packet::kStats, Number(p, "stats"));
  EXPECT_EQ(f::packet::kGoodbye, Number(p, "goodbye"));
  EXPECT_EQ(f::packet::kHelloReply, Number(p, "hello_reply"));
  EXPECT_EQ(f::packet::kInternedStrings, Number(p, "interned_strings"));

  const Descriptor* is = pb::InternedString::descriptor();
  EXPECT_EQ(f::interned_string::kIid, Number(is, "iid"));
  EXPECT_EQ(f::interned_string::kStr, Number(is, "str"));

  const Descriptor* h = pb::Hello::descriptor();
  EXPECT_EQ(f::hello::kMagic, Number(h, "magic"));
  EXPECT_EQ(f::hello::kProtocolVersion, Number(h, "protocol_version"));
  EXPECT_EQ(f::hello::kProducerVersion, Number(h, "producer_version"));
  EXPECT_EQ(f::hello::kPid, Number(h, "pid"));
  EXPECT_EQ(f::hello::kPpid, Number(h, "ppid"));
  EXPECT_EQ(f::hello::kHost, Number(h, "host"));
  EXPECT_EQ(f::hello::kArgv, Number(h, "argv"));
  EXPECT_EQ(f::hello::kStartUnixNs, Number(h, "start_unix_ns"));
  EXPECT_EQ(f::hello::kStartNs, Number(h, "start_ns"));
  EXPECT_EQ(f::hello::kCapabilities, Number(h, "capabilities"));
  EXPECT_EQ(f::hello::kMode, Number(h, "mode"));
  EXPECT_EQ(f::hello::kCounterPasses, Number(h, "counter_passes"));
  EXPECT_EQ(f::hello::kConfig, Number(h, "config"));

  const Descriptor* hr = pb::HelloReply::descriptor();
  EXPECT_EQ(f::hello_reply::kAccepted, Number(hr, "accepted"));
  EXPECT_EQ(f::hello_reply::kProtocolVersion, Number(hr, "protocol_version"));
  EXPECT_EQ(f::hello_reply::kReason, Number(hr, "reason"));

  const Descriptor* d = pb::Device::descriptor();
  EXPECT_EQ(f::device::kDeviceId, Number(d, "device_id"));
  EXPECT_EQ(f::device::kName, Number(d, "name"));
  EXPECT_EQ(f::device::kUuid, Number(d, "uuid"));
  EXPECT_EQ(f::device::kSmCount, Number(d, "sm_count"));
  EXPECT_EQ(f::device::kCcMajor, Number(d, "compute_capability_major"));
  EXPECT_EQ(f::device::kCcMinor, Number(d, "compute_capability_minor"));
  EXPECT_EQ(f::device::kCoreClockKhz, Number(d, "core_clock_khz"));
  EXPECT_EQ(f::device::kMemoryClockKhz, Number(d, "memory_clock_khz"));
  EXPECT_EQ(f::device::kMemoryBusWidthBits, Number(d, "memory_bus_width_bits"));
  EXPECT_EQ(f::device::kL2CacheBytes, Number(d, "l2_cache_bytes"));
  EXPECT_EQ(f::device::kGlobalMemoryBytes, Number(d, "global_memory_bytes"));
  EXPECT_EQ(f::device::kChipName, Number(d, "chip_name"));
  EXPECT_EQ(f::device::kPciBusId, Number(d, "pci_bus_id"));
  EXPECT_EQ(f::device::kDriverVersion, Number(d, "driver_version"));

  const Descriptor* k = pb::Kernel::descriptor();
  EXPECT_EQ(f::kernel::kCorrelationId, Number(k, "correlation_id"));
  EXPECT_EQ(f::kernel::kStartNs, Number(k, "start_ns"));
  EXPECT_EQ(f::kernel::kEndNs, Number(k, "end_ns"));
  EXPECT_EQ(f::kernel::kDeviceId, Number(k, "device_id"));
  EXPECT_EQ(f::kernel::kContextId, Number(k, "context_id"));
  EXPECT_EQ(f::kernel::kStreamId, Number(k, "stream_id"));
  EXPECT_EQ(f::kernel::kNameIid, Number(k, "name_iid"));
  EXPECT_EQ(f::kernel::kGridX, Number(k, "grid_x"));
  EXPECT_EQ(f::kernel::kGridY, Number(k, "grid_y"));
  EXPECT_EQ(f::kernel::kGridZ, Number(k, "grid_z"));
  EXPECT_EQ(f::kernel::kBlockX, Number(k, "block_x"));
  EXPECT_EQ(f::kernel::kBlockY, Number(k, "block_y"));
  EXPECT_EQ(f::kernel::kBlockZ, Number(k, "block_z"));
  EXPECT_EQ(f::kernel::kClusterX, Number(k, "cluster_x"));
  EXPECT_EQ(f::kernel::kClusterY, Number(k, "cluster_y"));
  EXPECT_EQ(f::kernel::kClusterZ, Number(k, "cluster_z"));
  EXPECT_EQ(f::kernel::kRegistersPerThread, Number(k, "registers_per_thread"));
  EXPECT_EQ(f::kernel::kStaticSharedMemoryBytes,
            Number(k, "static_shared_memory_bytes"));
  EXPECT_EQ(f::kernel::kDynamicSharedMemoryBytes,
            Number(k, "dynamic_shared_memory_bytes"));
  EXPECT_EQ(f::kernel::kGraphId, Number(k, "graph_id"));
  EXPECT_EQ(f::kernel::kGraphNodeId, Number(k, "graph_node_id"));

  const Descriptor* l = pb::Launch::descriptor();
  EXPECT_EQ(f::launch::kCorrelationId, Number(l, "correlation_id"));
  EXPECT_EQ(f::launch::kThreadId, Number(l, "thread_id"));
  EXPECT_EQ(f::launch::kApiStartNs, Number(l, "api_start_ns"));
  EXPECT_EQ(f::launch::kApiEndNs, Number(l, "api_end_ns"));
  EXPECT_EQ(f::launch::kNvtxRangeId, Number(l, "nvtx_range_id"));
  EXPECT_EQ(f::launch::kKind, Number(l, "kind"));
  EXPECT_EQ(f::launch::kGemmCallId, Number(l, "gemm_call_id"));
  EXPECT_EQ(f::launch::kCbid, Number(l, "cbid"));

  EXPECT_EQ(f::kernel_batch::kKernels,
            Number(pb::KernelBatch::descriptor(), "kernels"));
  EXPECT_EQ(f::kernel_batch::kLaunches,
            Number(pb::KernelBatch::descriptor(), "launches"));

  const Descriptor* m = pb::Memcpy::descriptor();
  EXPECT_EQ(f::memcpy_record::kCorrelationId, Number(m, "correlation_id"));
  EXPECT_EQ(f::memcpy_record::kStartNs, Number(m, "start_ns"));
  EXPECT_EQ(f::memcpy_record::kEndNs, Number(m, "end_ns"));
  EXPECT_EQ(f::memcpy_record::kBytes, Number(m, "bytes"));
  EXPECT_EQ(f::memcpy_record::kKind, Number(m, "kind"));
  EXPECT_EQ(f::memcpy_record::kDeviceId, Number(m, "device_id"));
  EXPECT_EQ(f::memcpy_record::kContextId, Number(m, "context_id"));
  EXPECT_EQ(f::memcpy_record::kStreamId, Number(m, "stream_id"));
  EXPECT_EQ(f::memcpy_record::kSrcKind, Number(m, "src_kind"));
  EXPECT_EQ(f::memcpy_record::kDstKind, Number(m, "dst_kind"));
  EXPECT_EQ(f::memcpy_record::kMemsetValue, Number(m, "memset_value"));
  EXPECT_EQ(f::memcpy_record::kGraphId, Number(m, "graph_id"));
  EXPECT_EQ(f::memcpy_record::kDstDeviceId, Number(m, "dst_device_id"));
  EXPECT_EQ(f::memcpy_batch::kMemcpys,
            Number(pb::MemcpyBatch::descriptor(), "memcpys"));

  const Descriptor* g = pb::Gemm::descriptor();
  EXPECT_EQ(f::gemm::kCallId, Number(g, "call_id"));
  EXPECT_EQ(f::gemm::kApi, Number(g, "api"));
  EXPECT_EQ(f::gemm::kM, Number(g, "m"));
  EXPECT_EQ(f::gemm::kN, Number(g, "n"));
  EXPECT_EQ(f::gemm::kK, Number(g, "k"));
  EXPECT_EQ(f::gemm::kBatch, Number(g, "batch"));
  EXPECT_EQ(f::gemm::kTransA, Number(g, "trans_a"));
  EXPECT_EQ(f::gemm::kTransB, Number(g, "trans_b"));
  EXPECT_EQ(f::gemm::kAType, Number(g, "a_type"));
  EXPECT_EQ(f::gemm::kBType, Number(g, "b_type"));
  EXPECT_EQ(f::gemm::kCType, Number(g, "c_type"));
  EXPECT_EQ(f::gemm::kDType, Number(g, "d_type"));
  EXPECT_EQ(f::gemm::kComputeType, Number(g, "compute_type"));
  EXPECT_EQ(f::gemm::kLda, Number(g, "lda"));
  EXPECT_EQ(f::gemm::kLdb, Number(g, "ldb"));
  EXPECT_EQ(f::gemm::kLdc, Number(g, "ldc"));
  EXPECT_EQ(f::gemm::kAPtr, Number(g, "a_ptr"));
  EXPECT_EQ(f::gemm::kBPtr, Number(g, "b_ptr"));
  EXPECT_EQ(f::gemm::kCPtr, Number(g, "c_ptr"));
  EXPECT_EQ(f::gemm::kDPtr, Number(g, "d_ptr"));
  EXPECT_EQ(f::gemm::kEpilogue, Number(g, "epilogue"));
  EXPECT_EQ(f::gemm::kStartNs, Number(g, "start_ns"));
  EXPECT_EQ(f::gemm::kEndNs, Number(g, "end_ns"));
  EXPECT_EQ(f::gemm::kThreadId, Number(g, "thread_id"));
  EXPECT_EQ(f::gemm::kStatus, Number(g, "status"));
  EXPECT_EQ(f::gemm::kPrecision, Number(g, "precision"));
  EXPECT_EQ(f::gemm::kStrideA, Number(g, "stride_a"));
  EXPECT_EQ(f::gemm::kStrideB, Number(g, "stride_b"));
  EXPECT_EQ(f::gemm::kStrideC, Number(g, "stride_c"));
  EXPECT_EQ(f::gemm::kCorrelationIds, Number(g, "correlation_ids"));
  EXPECT_EQ(f::gemm_batch::kGemms, Number(pb::GemmBatch::descriptor(), "gemms"));

  const Descriptor* r = pb::NvtxRange::descriptor();
  EXPECT_EQ(f::nvtx_range::kRangeId, Number(r, "range_id"));
  EXPECT_EQ(f::nvtx_range::kDomainIid, Number(r, "domain_iid"));
  EXPECT_EQ(f::nvtx_range::kNameIid, Number(r, "name_iid"));
  EXPECT_EQ(f::nvtx_range::kStartNs, Number(r, "start_ns"));
  EXPECT_EQ(f::nvtx_range::kEndNs, Number(r, "end_ns"));
  EXPECT_EQ(f::nvtx_range::kThreadId, Number(r, "thread_id"));
  EXPECT_EQ(f::nvtx_range::kEndThreadId, Number(r, "end_thread_id"));
  EXPECT_EQ(f::nvtx_range::kParentRangeId, Number(r, "parent_range_id"));
  EXPECT_EQ(f::nvtx_range::kKind, Number(r, "kind"));
  EXPECT_EQ(f::nvtx_range::kDepth, Number(r, "depth"));
  EXPECT_EQ(f::nvtx_range::kCategory, Number(r, "category"));
  EXPECT_EQ(f::nvtx_range::kColorArgb, Number(r, "color_argb"));

  const Descriptor* mk = pb::NvtxMark::descriptor();
  EXPECT_EQ(f::nvtx_mark::kDomainIid, Number(mk, "domain_iid"));
  EXPECT_EQ(f::nvtx_mark::kNameIid, Number(mk, "name_iid"));
  EXPECT_EQ(f::nvtx_mark::kTimestampNs, Number(mk, "timestamp_ns"));
  EXPECT_EQ(f::nvtx_mark::kThreadId, Number(mk, "thread_id"));
  EXPECT_EQ(f::nvtx_batch::kRanges, Number(pb::NvtxBatch::descriptor(), "ranges"));
  EXPECT_EQ(f::nvtx_batch::kMarks, Number(pb::NvtxBatch::descriptor(), "marks"));

  const Descriptor* rc = pb::RecordCount::descriptor();
  EXPECT_EQ(f::record_count::kKind, Number(rc, "kind"));
  EXPECT_EQ(f::record_count::kSeen, Number(rc, "seen"));
  EXPECT_EQ(f::record_count::kSent, Number(rc, "sent"));
  EXPECT_EQ(f::record_count::kDropped, Number(rc, "dropped"));
  EXPECT_EQ(f::record_count::kFiltered, Number(rc, "filtered"));

  const Descriptor* st = pb::Stats::descriptor();
  EXPECT_EQ(f::stats::kCounts, Number(st, "counts"));
  EXPECT_EQ(f::stats::kPacketsSent, Number(st, "packets_sent"));
  EXPECT_EQ(f::stats::kBytesSent, Number(st, "bytes_sent"));
  EXPECT_EQ(f::stats::kCuptiRecordsDropped, Number(st, "cupti_records_dropped"));
  EXPECT_EQ(f::stats::kCounterPasses, Number(st, "counter_passes"));
  EXPECT_EQ(f::stats::kWarnings, Number(st, "warnings"));

  const Descriptor* gb = pb::Goodbye::descriptor();
  EXPECT_EQ(f::goodbye::kTotals, Number(gb, "totals"));
  EXPECT_EQ(f::goodbye::kPacketsSent, Number(gb, "packets_sent"));
  EXPECT_EQ(f::goodbye::kEndUnixNs, Number(gb, "end_unix_ns"));
  EXPECT_EQ(f::goodbye::kEndNs, Number(gb, "end_ns"));
  EXPECT_EQ(f::goodbye::kExitCode, Number(gb, "exit_code"));
}

// Every enum value libinject writes matches rooftrace.proto.
TEST(FieldNumbersTest, EnumValuesMatchTheGeneratedDescriptor) {
  const auto* cap = pb::Capability_descriptor();
  EXPECT_EQ(wire::enums::kCapKernels, EnumValue(cap, "CAPABILITY_KERNELS"));
  EXPECT_EQ(wire::enums::kCapMemcpy, EnumValue(cap, "CAPABILITY_MEMCPY"));
  EXPECT_EQ(wire::enums::kCapNvtx, EnumValue(cap, "CAPABILITY_NVTX"));
  EXPECT_EQ(wire::enums::kCapGemmShapes, EnumValue(cap, "CAPABILITY_GEMM_SHAPES"));
  EXPECT_EQ(wire::enums::kCapCounters, EnumValue(cap, "CAPABILITY_COUNTERS"));
  EXPECT_EQ(wire::enums::kCapDeviceInfo, EnumValue(cap, "CAPABILITY_DEVICE_INFO"));
  EXPECT_EQ(wire::enums::kModeTrace, EnumValue(pb::Mode_descriptor(), "MODE_TRACE"));
  EXPECT_EQ(wire::enums::kModeCounters,
            EnumValue(pb::Mode_descriptor(), "MODE_COUNTERS"));
  const auto* api = pb::ApiKind_descriptor();
  EXPECT_EQ(wire::enums::kApiKernelLaunch, EnumValue(api, "API_KERNEL_LAUNCH"));
  EXPECT_EQ(wire::enums::kApiMemcpy, EnumValue(api, "API_MEMCPY"));
  EXPECT_EQ(wire::enums::kApiMemset, EnumValue(api, "API_MEMSET"));
  EXPECT_EQ(wire::enums::kApiGraphLaunch, EnumValue(api, "API_GRAPH_LAUNCH"));
  EXPECT_EQ(wire::enums::kApiOther, EnumValue(api, "API_OTHER"));
  const auto* ck = pb::CopyKind_descriptor();
  EXPECT_EQ(wire::enums::kCopyHtoD, EnumValue(ck, "COPY_HTOD"));
  EXPECT_EQ(wire::enums::kCopyDtoH, EnumValue(ck, "COPY_DTOH"));
  EXPECT_EQ(wire::enums::kCopyDtoD, EnumValue(ck, "COPY_DTOD"));
  EXPECT_EQ(wire::enums::kCopyHtoH, EnumValue(ck, "COPY_HTOH"));
  EXPECT_EQ(wire::enums::kCopyPtoP, EnumValue(ck, "COPY_PTOP"));
  EXPECT_EQ(wire::enums::kCopyMemset, EnumValue(ck, "COPY_MEMSET"));
  const auto* mk = pb::MemoryKind_descriptor();
  EXPECT_EQ(wire::enums::kMemoryPageable, EnumValue(mk, "MEMORY_PAGEABLE"));
  EXPECT_EQ(wire::enums::kMemoryPinned, EnumValue(mk, "MEMORY_PINNED"));
  EXPECT_EQ(wire::enums::kMemoryDevice, EnumValue(mk, "MEMORY_DEVICE"));
  EXPECT_EQ(wire::enums::kMemoryArray, EnumValue(mk, "MEMORY_ARRAY"));
  EXPECT_EQ(wire::enums::kMemoryManaged, EnumValue(mk, "MEMORY_MANAGED"));
  const auto* ga = pb::GemmApi_descriptor();
  EXPECT_EQ(wire::enums::kGemmApiSgemm, EnumValue(ga, "GEMM_API_SGEMM"));
  EXPECT_EQ(wire::enums::kGemmApiDgemm, EnumValue(ga, "GEMM_API_DGEMM"));
  EXPECT_EQ(wire::enums::kGemmApiHgemm, EnumValue(ga, "GEMM_API_HGEMM"));
  EXPECT_EQ(wire::enums::kGemmApiGemmEx, EnumValue(ga, "GEMM_API_GEMM_EX"));
  EXPECT_EQ(wire::enums::kGemmApiSgemmStridedBatched,
            EnumValue(ga, "GEMM_API_SGEMM_STRIDED_BATCHED"));
  EXPECT_EQ(wire::enums::kGemmApiDgemmStridedBatched,
            EnumValue(ga, "GEMM_API_DGEMM_STRIDED_BATCHED"));
  EXPECT_EQ(wire::enums::kGemmApiHgemmStridedBatched,
            EnumValue(ga, "GEMM_API_HGEMM_STRIDED_BATCHED"));
  EXPECT_EQ(wire::enums::kGemmApiGemmStridedBatchedEx,
            EnumValue(ga, "GEMM_API_GEMM_STRIDED_BATCHED_EX"));
  EXPECT_EQ(wire::enums::kGemmApiSgemmBatched, EnumValue(ga, "GEMM_API_SGEMM_BATCHED"));
  EXPECT_EQ(wire::enums::kGemmApiDgemmBatched, EnumValue(ga, "GEMM_API_DGEMM_BATCHED"));
  EXPECT_EQ(wire::enums::kGemmApiHgemmBatched, EnumValue(ga, "GEMM_API_HGEMM_BATCHED"));
  EXPECT_EQ(wire::enums::kGemmApiGemmBatchedEx,
            EnumValue(ga, "GEMM_API_GEMM_BATCHED_EX"));
  EXPECT_EQ(wire::enums::kGemmApiLtMatmul, EnumValue(ga, "GEMM_API_LT_MATMUL"));
  const auto* tr = pb::Transpose_descriptor();
  EXPECT_EQ(wire::enums::kTransposeN, EnumValue(tr, "TRANSPOSE_N"));
  EXPECT_EQ(wire::enums::kTransposeT, EnumValue(tr, "TRANSPOSE_T"));
  EXPECT_EQ(wire::enums::kTransposeC, EnumValue(tr, "TRANSPOSE_C"));
  const auto* pc = pb::PrecisionClass_descriptor();
  EXPECT_EQ(wire::enums::kPrecisionFp64, EnumValue(pc, "PRECISION_FP64"));
  EXPECT_EQ(wire::enums::kPrecisionFp32, EnumValue(pc, "PRECISION_FP32"));
  EXPECT_EQ(wire::enums::kPrecisionFp16, EnumValue(pc, "PRECISION_FP16"));
  EXPECT_EQ(wire::enums::kPrecisionFp64Tensor, EnumValue(pc, "PRECISION_FP64_TENSOR"));
  EXPECT_EQ(wire::enums::kPrecisionTf32Tensor, EnumValue(pc, "PRECISION_TF32_TENSOR"));
  EXPECT_EQ(wire::enums::kPrecisionFp16Tensor, EnumValue(pc, "PRECISION_FP16_TENSOR"));
  EXPECT_EQ(wire::enums::kPrecisionFp8Tensor, EnumValue(pc, "PRECISION_FP8_TENSOR"));
  EXPECT_EQ(wire::enums::kPrecisionInt8Tensor, EnumValue(pc, "PRECISION_INT8_TENSOR"));
  const auto* rk = pb::RangeKind_descriptor();
  EXPECT_EQ(wire::enums::kRangePushPop, EnumValue(rk, "RANGE_PUSH_POP"));
  EXPECT_EQ(wire::enums::kRangeStartEnd, EnumValue(rk, "RANGE_START_END"));
  const auto* rec = pb::RecordKind_descriptor();
  EXPECT_EQ(wire::enums::kRecordKernel, EnumValue(rec, "RECORD_KERNEL"));
  EXPECT_EQ(wire::enums::kRecordMemcpy, EnumValue(rec, "RECORD_MEMCPY"));
  EXPECT_EQ(wire::enums::kRecordGemm, EnumValue(rec, "RECORD_GEMM"));
  EXPECT_EQ(wire::enums::kRecordNvtxRange, EnumValue(rec, "RECORD_NVTX_RANGE"));
  EXPECT_EQ(wire::enums::kRecordNvtxMark, EnumValue(rec, "RECORD_NVTX_MARK"));
  EXPECT_EQ(wire::enums::kRecordCounters, EnumValue(rec, "RECORD_COUNTERS"));
  EXPECT_EQ(wire::enums::kRecordLaunch, EnumValue(rec, "RECORD_LAUNCH"));
  EXPECT_EQ(wire::enums::kRecordDevice, EnumValue(rec, "RECORD_DEVICE"));
  EXPECT_EQ(wire::enums::kRecordKindCount, rec->value_count());
}

// Encodes one framed packet whose data field is written by `fill`.
template <typename Fn>
pb::Packet RoundTrip(Fn fill,
                     const std::vector<StringInterner::Definition>& defs = {}) {
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
  g.precision = wire::enums::kPrecisionFp16Tensor;
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
