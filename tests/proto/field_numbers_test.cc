// Every field number and enum value in proto/field_numbers.h (used by
// libinject's encoder and the collector's packet decoder, which read and
// write the wire by hand) matches the descriptor generated from
// rooftrace.proto.
#include "gtest/gtest.h"
#include "model/precision.h"
#include "proto/field_numbers.h"
#include "proto/rooftrace.pb.h"

namespace rooftrace::wire {
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
  EXPECT_EQ(f::packet::kConnectionAuth, Number(p, "connection_auth"));
  EXPECT_EQ(f::packet::kPmSampleBatch, Number(p, "pm_sample_batch"));
  const Descriptor* ps = pb::PmSample::descriptor();
  EXPECT_EQ(f::pm_sample::kDeviceId, Number(ps, "device_id"));
  EXPECT_EQ(f::pm_sample::kStartNs, Number(ps, "start_ns"));
  EXPECT_EQ(f::pm_sample::kEndNs, Number(ps, "end_ns"));
  EXPECT_EQ(f::pm_sample::kDramReadBytes, Number(ps, "dram_read_bytes"));
  EXPECT_EQ(f::pm_sample::kDramWriteBytes, Number(ps, "dram_write_bytes"));
  EXPECT_EQ(f::pm_sample::kTensorPipe, Number(ps, "tensor_pipe"));
  EXPECT_EQ(f::pm_sample::kFmaPipe, Number(ps, "fma_pipe"));
  EXPECT_EQ(f::pm_sample::kSmCycles, Number(ps, "sm_cycles"));
  EXPECT_EQ(f::pm_sample_batch::kSamples,
            Number(pb::PmSampleBatch::descriptor(), "samples"));

  const Descriptor* is = pb::InternedString::descriptor();
  EXPECT_EQ(f::interned_string::kIid, Number(is, "iid"));
  EXPECT_EQ(f::interned_string::kStr, Number(is, "str"));

  const Descriptor* ca = pb::ConnectionAuth::descriptor();
  EXPECT_EQ(f::connection_auth::kToken, Number(ca, "token"));

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
  EXPECT_EQ(f::stats::kCapabilities, Number(st, "capabilities"));
  EXPECT_EQ(f::stats::kMode, Number(st, "mode"));
  EXPECT_EQ(f::stats::kActivityBuffersRequested,
            Number(st, "activity_buffers_requested"));
  EXPECT_EQ(f::stats::kActivityBuffersCompleted,
            Number(st, "activity_buffers_completed"));
  EXPECT_EQ(f::stats::kActivityBuffersOutstanding,
            Number(st, "activity_buffers_outstanding"));
  EXPECT_EQ(f::stats::kActivityBuffersRefused,
            Number(st, "activity_buffers_refused"));
  EXPECT_EQ(f::stats::kKernelsFromLaunch, Number(st, "kernels_from_launch"));
  EXPECT_EQ(f::stats::kKernelsUntimed, Number(st, "kernels_untimed"));
  EXPECT_EQ(f::stats::kPmSamples, Number(st, "pm_samples"));
  EXPECT_EQ(f::stats::kPmSamplesLost, Number(st, "pm_samples_lost"));

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
  EXPECT_EQ(wire::enums::kCapPmSampling, EnumValue(cap, "CAPABILITY_PM_SAMPLING"));
  EXPECT_EQ(wire::enums::kModeTrace, EnumValue(pb::Mode_descriptor(), "MODE_TRACE"));
  EXPECT_EQ(wire::enums::kModeCounters,
            EnumValue(pb::Mode_descriptor(), "MODE_COUNTERS"));
  EXPECT_EQ(wire::enums::kModeSampling,
            EnumValue(pb::Mode_descriptor(), "MODE_SAMPLING"));
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
  // The wire's precision classes are model/precision.h's, value for value:
  // libinject writes static_cast<uint32_t>(Precision) on the wire.
  auto P = [](Precision p) { return static_cast<int>(p); };
  EXPECT_EQ(pc->value_count(), kNumPrecisions);
  EXPECT_EQ(P(Precision::kUnknown), EnumValue(pc, "PRECISION_UNKNOWN"));
  EXPECT_EQ(P(Precision::kFp64), EnumValue(pc, "PRECISION_FP64"));
  EXPECT_EQ(P(Precision::kFp32), EnumValue(pc, "PRECISION_FP32"));
  EXPECT_EQ(P(Precision::kFp16), EnumValue(pc, "PRECISION_FP16"));
  EXPECT_EQ(P(Precision::kFp64Tensor), EnumValue(pc, "PRECISION_FP64_TENSOR"));
  EXPECT_EQ(P(Precision::kTf32Tensor), EnumValue(pc, "PRECISION_TF32_TENSOR"));
  EXPECT_EQ(P(Precision::kFp16Tensor), EnumValue(pc, "PRECISION_FP16_TENSOR"));
  EXPECT_EQ(P(Precision::kFp8Tensor), EnumValue(pc, "PRECISION_FP8_TENSOR"));
  EXPECT_EQ(P(Precision::kInt8Tensor), EnumValue(pc, "PRECISION_INT8_TENSOR"));
  EXPECT_EQ(P(Precision::kBf16), EnumValue(pc, "PRECISION_BF16"));
  EXPECT_EQ(P(Precision::kFp4Tensor), EnumValue(pc, "PRECISION_FP4_TENSOR"));
  EXPECT_EQ(P(Precision::kInt), EnumValue(pc, "PRECISION_INT"));
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

}  // namespace
}  // namespace rooftrace::wire
