// Field numbers and enum values of proto/rooftrace.proto for the code that
// reads and writes the wire format by hand: libinject's encoder (libinject
// does not link libprotobuf; the host may link its own) and the collector's
// packet decoder (sources/rft/packet_decoder.h, the hot path of ingest). These
// constants are their only link to the schema; the tests
// tests/libinject/wire_encoder_test.cc and
// tests/collector/packet_decoder_test.cc check them against the descriptor
// generated from rooftrace.proto.
#ifndef ROOFTRACE_PROTO_FIELD_NUMBERS_H_
#define ROOFTRACE_PROTO_FIELD_NUMBERS_H_

#include <cstdint>

namespace rooftrace::wire::fields {

namespace packet {
inline constexpr uint32_t kSequence = 1;
inline constexpr uint32_t kTimestampNs = 2;
inline constexpr uint32_t kHello = 3;
inline constexpr uint32_t kDevice = 4;
inline constexpr uint32_t kKernelBatch = 5;
inline constexpr uint32_t kMemcpyBatch = 6;
inline constexpr uint32_t kGemmBatch = 7;
inline constexpr uint32_t kNvtxBatch = 8;
inline constexpr uint32_t kCounterBatch = 9;
inline constexpr uint32_t kStats = 10;
inline constexpr uint32_t kGoodbye = 11;
inline constexpr uint32_t kHelloReply = 12;
inline constexpr uint32_t kInternedStrings = 13;
inline constexpr uint32_t kConnectionAuth = 14;
inline constexpr uint32_t kPmSampleBatch = 15;
}  // namespace packet

namespace connection_auth {
inline constexpr uint32_t kToken = 1;
}  // namespace connection_auth

namespace interned_string {
inline constexpr uint32_t kIid = 1;
inline constexpr uint32_t kStr = 2;
}  // namespace interned_string

namespace hello {
inline constexpr uint32_t kMagic = 1;
inline constexpr uint32_t kProtocolVersion = 2;
inline constexpr uint32_t kProducerVersion = 3;
inline constexpr uint32_t kPid = 4;
inline constexpr uint32_t kPpid = 5;
inline constexpr uint32_t kHost = 6;
inline constexpr uint32_t kArgv = 7;
inline constexpr uint32_t kStartUnixNs = 8;
inline constexpr uint32_t kStartNs = 9;
inline constexpr uint32_t kCapabilities = 10;
inline constexpr uint32_t kMode = 11;
inline constexpr uint32_t kCounterPasses = 12;
inline constexpr uint32_t kConfig = 13;
inline constexpr uint32_t kLiveBuffer = 14;
}  // namespace hello

namespace hello_reply {
inline constexpr uint32_t kAccepted = 1;
inline constexpr uint32_t kProtocolVersion = 2;
inline constexpr uint32_t kReason = 3;
}  // namespace hello_reply

namespace device {
inline constexpr uint32_t kDeviceId = 1;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kUuid = 3;
inline constexpr uint32_t kSmCount = 4;
inline constexpr uint32_t kCcMajor = 5;
inline constexpr uint32_t kCcMinor = 6;
inline constexpr uint32_t kCoreClockKhz = 7;
inline constexpr uint32_t kMemoryClockKhz = 8;
inline constexpr uint32_t kMemoryBusWidthBits = 9;
inline constexpr uint32_t kL2CacheBytes = 10;
inline constexpr uint32_t kGlobalMemoryBytes = 11;
inline constexpr uint32_t kChipName = 12;
inline constexpr uint32_t kPciBusId = 13;
inline constexpr uint32_t kDriverVersion = 14;
}  // namespace device

namespace kernel {
inline constexpr uint32_t kCorrelationId = 1;
inline constexpr uint32_t kStartNs = 2;
inline constexpr uint32_t kEndNs = 3;
inline constexpr uint32_t kDeviceId = 4;
inline constexpr uint32_t kContextId = 5;
inline constexpr uint32_t kStreamId = 6;
inline constexpr uint32_t kNameIid = 7;
inline constexpr uint32_t kGridX = 8;
inline constexpr uint32_t kGridY = 9;
inline constexpr uint32_t kGridZ = 10;
inline constexpr uint32_t kBlockX = 11;
inline constexpr uint32_t kBlockY = 12;
inline constexpr uint32_t kBlockZ = 13;
inline constexpr uint32_t kClusterX = 14;
inline constexpr uint32_t kClusterY = 15;
inline constexpr uint32_t kClusterZ = 16;
inline constexpr uint32_t kRegistersPerThread = 17;
inline constexpr uint32_t kStaticSharedMemoryBytes = 18;
inline constexpr uint32_t kDynamicSharedMemoryBytes = 19;
inline constexpr uint32_t kGraphId = 20;
inline constexpr uint32_t kGraphNodeId = 21;
}  // namespace kernel

namespace launch {
inline constexpr uint32_t kCorrelationId = 1;
inline constexpr uint32_t kThreadId = 2;
inline constexpr uint32_t kApiStartNs = 3;
inline constexpr uint32_t kApiEndNs = 4;
inline constexpr uint32_t kNvtxRangeId = 5;
inline constexpr uint32_t kKind = 6;
inline constexpr uint32_t kGemmCallId = 7;
inline constexpr uint32_t kCbid = 8;
}  // namespace launch

namespace kernel_batch {
inline constexpr uint32_t kKernels = 1;
inline constexpr uint32_t kLaunches = 2;
}  // namespace kernel_batch

namespace memcpy_record {
inline constexpr uint32_t kCorrelationId = 1;
inline constexpr uint32_t kStartNs = 2;
inline constexpr uint32_t kEndNs = 3;
inline constexpr uint32_t kBytes = 4;
inline constexpr uint32_t kKind = 5;
inline constexpr uint32_t kDeviceId = 6;
inline constexpr uint32_t kContextId = 7;
inline constexpr uint32_t kStreamId = 8;
inline constexpr uint32_t kSrcKind = 9;
inline constexpr uint32_t kDstKind = 10;
inline constexpr uint32_t kMemsetValue = 11;
inline constexpr uint32_t kGraphId = 12;
inline constexpr uint32_t kDstDeviceId = 13;
}  // namespace memcpy_record

namespace memcpy_batch {
inline constexpr uint32_t kMemcpys = 1;
}  // namespace memcpy_batch

namespace gemm {
inline constexpr uint32_t kCallId = 1;
inline constexpr uint32_t kApi = 2;
inline constexpr uint32_t kM = 3;
inline constexpr uint32_t kN = 4;
inline constexpr uint32_t kK = 5;
inline constexpr uint32_t kBatch = 6;
inline constexpr uint32_t kTransA = 7;
inline constexpr uint32_t kTransB = 8;
inline constexpr uint32_t kAType = 9;
inline constexpr uint32_t kBType = 10;
inline constexpr uint32_t kCType = 11;
inline constexpr uint32_t kDType = 12;
inline constexpr uint32_t kComputeType = 13;
inline constexpr uint32_t kLda = 14;
inline constexpr uint32_t kLdb = 15;
inline constexpr uint32_t kLdc = 16;
inline constexpr uint32_t kAPtr = 17;
inline constexpr uint32_t kBPtr = 18;
inline constexpr uint32_t kCPtr = 19;
inline constexpr uint32_t kDPtr = 20;
inline constexpr uint32_t kEpilogue = 21;
inline constexpr uint32_t kStartNs = 22;
inline constexpr uint32_t kEndNs = 23;
inline constexpr uint32_t kThreadId = 24;
inline constexpr uint32_t kStatus = 25;
inline constexpr uint32_t kPrecision = 26;
inline constexpr uint32_t kStrideA = 27;
inline constexpr uint32_t kStrideB = 28;
inline constexpr uint32_t kStrideC = 29;
inline constexpr uint32_t kCorrelationIds = 30;
}  // namespace gemm

namespace gemm_batch {
inline constexpr uint32_t kGemms = 1;
}  // namespace gemm_batch

namespace nvtx_range {
inline constexpr uint32_t kRangeId = 1;
inline constexpr uint32_t kDomainIid = 2;
inline constexpr uint32_t kNameIid = 3;
inline constexpr uint32_t kStartNs = 4;
inline constexpr uint32_t kEndNs = 5;
inline constexpr uint32_t kThreadId = 6;
inline constexpr uint32_t kEndThreadId = 7;
inline constexpr uint32_t kParentRangeId = 8;
inline constexpr uint32_t kKind = 9;
inline constexpr uint32_t kDepth = 10;
inline constexpr uint32_t kCategory = 11;
inline constexpr uint32_t kColorArgb = 12;
}  // namespace nvtx_range

namespace nvtx_mark {
inline constexpr uint32_t kDomainIid = 1;
inline constexpr uint32_t kNameIid = 2;
inline constexpr uint32_t kTimestampNs = 3;
inline constexpr uint32_t kThreadId = 4;
}  // namespace nvtx_mark

namespace nvtx_batch {
inline constexpr uint32_t kRanges = 1;
inline constexpr uint32_t kMarks = 2;
}  // namespace nvtx_batch

namespace precision_flops {
inline constexpr uint32_t kPrecision = 1;
inline constexpr uint32_t kFlops = 2;
}  // namespace precision_flops

namespace metric_value {
inline constexpr uint32_t kMetricIid = 1;
inline constexpr uint32_t kValue = 2;
}  // namespace metric_value

namespace kernel_counters {
inline constexpr uint32_t kCorrelationId = 1;
inline constexpr uint32_t kDeviceId = 2;
inline constexpr uint32_t kDramReadBytes = 3;
inline constexpr uint32_t kDramWriteBytes = 4;
inline constexpr uint32_t kGpuTimeNs = 5;
inline constexpr uint32_t kFlops = 6;
inline constexpr uint32_t kMetrics = 7;
inline constexpr uint32_t kPasses = 8;
inline constexpr uint32_t kRangeIndex = 9;
}  // namespace kernel_counters

namespace counter_batch {
inline constexpr uint32_t kCounters = 1;
}  // namespace counter_batch

namespace pm_sample {
inline constexpr uint32_t kDeviceId = 1;
inline constexpr uint32_t kStartNs = 2;
inline constexpr uint32_t kEndNs = 3;
inline constexpr uint32_t kDramReadBytes = 4;
inline constexpr uint32_t kDramWriteBytes = 5;
inline constexpr uint32_t kTensorPipe = 6;
inline constexpr uint32_t kFmaPipe = 7;
inline constexpr uint32_t kSmCycles = 8;
}  // namespace pm_sample

namespace pm_sample_batch {
inline constexpr uint32_t kSamples = 1;
}  // namespace pm_sample_batch

namespace record_count {
inline constexpr uint32_t kKind = 1;
inline constexpr uint32_t kSeen = 2;
inline constexpr uint32_t kSent = 3;
inline constexpr uint32_t kDropped = 4;
inline constexpr uint32_t kFiltered = 5;
}  // namespace record_count

namespace stats {
inline constexpr uint32_t kCounts = 1;
inline constexpr uint32_t kPacketsSent = 2;
inline constexpr uint32_t kBytesSent = 3;
inline constexpr uint32_t kCuptiRecordsDropped = 4;
inline constexpr uint32_t kCounterPasses = 5;
inline constexpr uint32_t kWarnings = 6;
inline constexpr uint32_t kCapabilities = 7;
inline constexpr uint32_t kMode = 8;
inline constexpr uint32_t kActivityBuffersRequested = 9;
inline constexpr uint32_t kActivityBuffersCompleted = 10;
inline constexpr uint32_t kActivityBuffersOutstanding = 11;
inline constexpr uint32_t kActivityBuffersRefused = 12;
inline constexpr uint32_t kKernelsFromLaunch = 13;
inline constexpr uint32_t kKernelsUntimed = 14;
inline constexpr uint32_t kPmSamples = 15;
inline constexpr uint32_t kPmSamplesLost = 16;
}  // namespace stats

namespace goodbye {
inline constexpr uint32_t kTotals = 1;
inline constexpr uint32_t kPacketsSent = 2;
inline constexpr uint32_t kEndUnixNs = 3;
inline constexpr uint32_t kEndNs = 4;
inline constexpr uint32_t kExitCode = 5;
}  // namespace goodbye

}  // namespace rooftrace::wire::fields

namespace rooftrace::wire {

// Protobuf wire types: the low three bits of a field's tag.
enum WireType : uint32_t {
  kWireVarint = 0,
  kWireFixed64 = 1,
  kWireBytes = 2,
  kWireStartGroup = 3,
  kWireEndGroup = 4,
  kWireFixed32 = 5,
};

}  // namespace rooftrace::wire

// Enum values of rooftrace.proto libinject writes (checked by the same test).
namespace rooftrace::wire::enums {

enum Capability : uint32_t {
  kCapKernels = 1,
  kCapMemcpy = 2,
  kCapNvtx = 3,
  kCapGemmShapes = 4,
  kCapCounters = 5,
  kCapDeviceInfo = 6,
  kCapPmSampling = 7,
};

enum Mode : uint32_t { kModeTrace = 1, kModeCounters = 2, kModeSampling = 3 };

enum ApiKind : uint32_t {
  kApiUnknown = 0,
  kApiKernelLaunch = 1,
  kApiMemcpy = 2,
  kApiMemset = 3,
  kApiGraphLaunch = 4,
  kApiOther = 5,
};

enum CopyKind : uint32_t {
  kCopyUnknown = 0,
  kCopyHtoD = 1,
  kCopyDtoH = 2,
  kCopyDtoD = 3,
  kCopyHtoH = 4,
  kCopyPtoP = 5,
  kCopyMemset = 6,
};

enum MemoryKind : uint32_t {
  kMemoryUnknown = 0,
  kMemoryPageable = 1,
  kMemoryPinned = 2,
  kMemoryDevice = 3,
  kMemoryArray = 4,
  kMemoryManaged = 5,
};

enum GemmApi : uint32_t {
  kGemmApiUnknown = 0,
  kGemmApiSgemm = 1,
  kGemmApiDgemm = 2,
  kGemmApiHgemm = 3,
  kGemmApiGemmEx = 4,
  kGemmApiSgemmStridedBatched = 5,
  kGemmApiDgemmStridedBatched = 6,
  kGemmApiHgemmStridedBatched = 7,
  kGemmApiGemmStridedBatchedEx = 8,
  kGemmApiSgemmBatched = 9,
  kGemmApiDgemmBatched = 10,
  kGemmApiHgemmBatched = 11,
  kGemmApiGemmBatchedEx = 12,
  kGemmApiLtMatmul = 13,
};

enum Transpose : uint32_t {
  kTransposeUnknown = 0,
  kTransposeN = 1,
  kTransposeT = 2,
  kTransposeC = 3,
};

// Precision classes are model/precision.h's Precision values (one enum for
// the project; tests/proto/field_numbers_test.cc holds them equal).

enum RangeKind : uint32_t { kRangePushPop = 1, kRangeStartEnd = 2 };

enum RecordKind : uint32_t {
  kRecordUnknown = 0,
  kRecordKernel = 1,
  kRecordMemcpy = 2,
  kRecordGemm = 3,
  kRecordNvtxRange = 4,
  kRecordNvtxMark = 5,
  kRecordCounters = 6,
  kRecordLaunch = 7,
  kRecordDevice = 8,
};
inline constexpr int kRecordKindCount = 9;

}  // namespace rooftrace::wire::enums

#endif  // ROOFTRACE_PROTO_FIELD_NUMBERS_H_
