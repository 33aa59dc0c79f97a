#include "proto/wire_encoder.h"

#include "proto/framing.h"
#include "proto/wire_constants.h"
#include "proto/wire_reader.h"

namespace rooftrace::inject {

namespace f = wire::fields;

void EncodeHello(ProtoWriter& w, uint32_t field, const HelloInfo& h) {
  const size_t t = w.BeginMessage(field);
  w.Fixed64(f::hello::kMagic, wire::kTraceMagic);
  w.Uint(f::hello::kProtocolVersion, wire::kProtocolVersion);
  w.String(f::hello::kProducerVersion, "rooftrace libinject");
  w.Uint(f::hello::kPid, h.pid);
  w.Uint(f::hello::kPpid, h.ppid);
  w.String(f::hello::kHost, h.host);
  for (const auto& a : h.argv) w.String(f::hello::kArgv, a, /*always=*/true);
  w.Uint(f::hello::kStartUnixNs, h.start_unix_ns);
  w.Uint(f::hello::kStartNs, h.start_ns);
  std::vector<uint64_t> caps(h.capabilities.begin(), h.capabilities.end());
  w.PackedUint(f::hello::kCapabilities, caps.data(), caps.size());
  w.Uint(f::hello::kMode, h.mode);
  w.Uint(f::hello::kCounterPasses, h.counter_passes);
  for (const auto& c : h.config) w.String(f::hello::kConfig, c, true);
  w.String(f::hello::kLiveBuffer, h.live_buffer);
  w.EndMessage(t);
}

void EncodeDevice(ProtoWriter& w, uint32_t field, const DeviceInfo& d) {
  const size_t t = w.BeginMessage(field);
  w.Uint(f::device::kDeviceId, d.device_id);
  w.String(f::device::kName, d.name);
  w.String(f::device::kUuid, d.uuid);
  w.Uint(f::device::kSmCount, d.sm_count);
  w.Uint(f::device::kCcMajor, d.cc_major);
  w.Uint(f::device::kCcMinor, d.cc_minor);
  w.Uint(f::device::kCoreClockKhz, d.core_clock_khz);
  w.Uint(f::device::kMemoryClockKhz, d.memory_clock_khz);
  w.Uint(f::device::kMemoryBusWidthBits, d.memory_bus_width_bits);
  w.Uint(f::device::kL2CacheBytes, d.l2_cache_bytes);
  w.Uint(f::device::kGlobalMemoryBytes, d.global_memory_bytes);
  w.String(f::device::kChipName, d.chip_name);
  w.Uint(f::device::kPciBusId, d.pci_bus_id);
  w.String(f::device::kDriverVersion, d.driver_version);
  w.EndMessage(t);
}

void EncodeKernel(ProtoWriter& w, uint32_t field, const KernelInfo& k) {
  const size_t t = w.BeginMessage(field);
  w.Uint(f::kernel::kCorrelationId, k.correlation_id);
  w.Uint(f::kernel::kStartNs, k.start_ns);
  w.Uint(f::kernel::kEndNs, k.end_ns);
  w.Uint(f::kernel::kDeviceId, k.device_id);
  w.Uint(f::kernel::kContextId, k.context_id);
  w.Uint(f::kernel::kStreamId, k.stream_id);
  w.Uint(f::kernel::kNameIid, k.name_iid);
  w.Uint(f::kernel::kGridX, k.grid[0]);
  w.Uint(f::kernel::kGridY, k.grid[1]);
  w.Uint(f::kernel::kGridZ, k.grid[2]);
  w.Uint(f::kernel::kBlockX, k.block[0]);
  w.Uint(f::kernel::kBlockY, k.block[1]);
  w.Uint(f::kernel::kBlockZ, k.block[2]);
  w.Uint(f::kernel::kClusterX, k.cluster[0]);
  w.Uint(f::kernel::kClusterY, k.cluster[1]);
  w.Uint(f::kernel::kClusterZ, k.cluster[2]);
  w.Uint(f::kernel::kRegistersPerThread, k.registers_per_thread);
  w.Uint(f::kernel::kStaticSharedMemoryBytes, k.static_shared_memory_bytes);
  w.Uint(f::kernel::kDynamicSharedMemoryBytes, k.dynamic_shared_memory_bytes);
  w.Uint(f::kernel::kGraphId, k.graph_id);
  w.Uint(f::kernel::kGraphNodeId, k.graph_node_id);
  w.EndMessage(t);
}

void EncodeLaunch(ProtoWriter& w, uint32_t field, const LaunchRecord& l) {
  const size_t t = w.BeginMessage(field);
  w.Uint(f::launch::kCorrelationId, l.correlation_id);
  w.Uint(f::launch::kThreadId, l.thread_id);
  w.Uint(f::launch::kApiStartNs, l.api_start_ns);
  w.Uint(f::launch::kApiEndNs, l.api_end_ns);
  w.Uint(f::launch::kNvtxRangeId, l.nvtx_range_id);
  w.Uint(f::launch::kKind, l.kind);
  w.Uint(f::launch::kGemmCallId, l.gemm_call_id);
  w.Uint(f::launch::kCbid, l.cbid);
  w.EndMessage(t);
}

void EncodeMemcpy(ProtoWriter& w, uint32_t field, const MemcpyInfo& c) {
  const size_t t = w.BeginMessage(field);
  w.Uint(f::memcpy_record::kCorrelationId, c.correlation_id);
  w.Uint(f::memcpy_record::kStartNs, c.start_ns);
  w.Uint(f::memcpy_record::kEndNs, c.end_ns);
  w.Uint(f::memcpy_record::kBytes, c.bytes);
  w.Uint(f::memcpy_record::kKind, c.kind);
  w.Uint(f::memcpy_record::kDeviceId, c.device_id);
  w.Uint(f::memcpy_record::kContextId, c.context_id);
  w.Uint(f::memcpy_record::kStreamId, c.stream_id);
  w.Uint(f::memcpy_record::kSrcKind, c.src_kind);
  w.Uint(f::memcpy_record::kDstKind, c.dst_kind);
  w.Uint(f::memcpy_record::kMemsetValue, c.memset_value);
  w.Uint(f::memcpy_record::kGraphId, c.graph_id);
  w.Uint(f::memcpy_record::kDstDeviceId, c.dst_device_id);
  w.EndMessage(t);
}

void EncodeGemm(ProtoWriter& w, uint32_t field, const GemmRecord& g) {
  const size_t t = w.BeginMessage(field);
  w.Uint(f::gemm::kCallId, g.call_id);
  w.Uint(f::gemm::kApi, g.api);
  w.Int(f::gemm::kM, g.m);
  w.Int(f::gemm::kN, g.n);
  w.Int(f::gemm::kK, g.k);
  w.Int(f::gemm::kBatch, g.batch);
  w.Uint(f::gemm::kTransA, g.trans_a);
  w.Uint(f::gemm::kTransB, g.trans_b);
  w.Int(f::gemm::kAType, g.a_type);
  w.Int(f::gemm::kBType, g.b_type);
  w.Int(f::gemm::kCType, g.c_type);
  w.Int(f::gemm::kDType, g.d_type);
  w.Int(f::gemm::kComputeType, g.compute_type);
  w.Int(f::gemm::kLda, g.lda);
  w.Int(f::gemm::kLdb, g.ldb);
  w.Int(f::gemm::kLdc, g.ldc);
  w.Uint(f::gemm::kAPtr, g.a_ptr);
  w.Uint(f::gemm::kBPtr, g.b_ptr);
  w.Uint(f::gemm::kCPtr, g.c_ptr);
  w.Uint(f::gemm::kDPtr, g.d_ptr);
  w.Uint(f::gemm::kEpilogue, g.epilogue);
  w.Uint(f::gemm::kStartNs, g.start_ns);
  w.Uint(f::gemm::kEndNs, g.end_ns);
  w.Uint(f::gemm::kThreadId, g.thread_id);
  w.Int(f::gemm::kStatus, g.status);
  w.Uint(f::gemm::kPrecision, g.precision);
  w.Int(f::gemm::kStrideA, g.stride_a);
  w.Int(f::gemm::kStrideB, g.stride_b);
  w.Int(f::gemm::kStrideC, g.stride_c);
  const uint32_t n = g.correlation_count < kMaxGemmCorrelations
                         ? g.correlation_count
                         : kMaxGemmCorrelations;
  w.PackedUint(f::gemm::kCorrelationIds, g.correlation_ids, n);
  w.EndMessage(t);
}

void EncodeNvtxRange(ProtoWriter& w, uint32_t field, const NvtxRangeRecord& r) {
  const size_t t = w.BeginMessage(field);
  w.Uint(f::nvtx_range::kRangeId, r.range_id);
  w.Uint(f::nvtx_range::kDomainIid, r.domain_iid);
  w.Uint(f::nvtx_range::kNameIid, r.name_iid);
  w.Uint(f::nvtx_range::kStartNs, r.start_ns);
  w.Uint(f::nvtx_range::kEndNs, r.end_ns);
  w.Uint(f::nvtx_range::kThreadId, r.thread_id);
  w.Uint(f::nvtx_range::kEndThreadId, r.end_thread_id);
  w.Uint(f::nvtx_range::kParentRangeId, r.parent_range_id);
  w.Uint(f::nvtx_range::kKind, r.kind);
  w.Uint(f::nvtx_range::kDepth, r.depth);
  w.Uint(f::nvtx_range::kCategory, r.category);
  w.Uint(f::nvtx_range::kColorArgb, r.color_argb);
  w.EndMessage(t);
}

void EncodeNvtxMark(ProtoWriter& w, uint32_t field, const NvtxMarkRecord& m) {
  const size_t t = w.BeginMessage(field);
  w.Uint(f::nvtx_mark::kDomainIid, m.domain_iid);
  w.Uint(f::nvtx_mark::kNameIid, m.name_iid);
  w.Uint(f::nvtx_mark::kTimestampNs, m.timestamp_ns);
  w.Uint(f::nvtx_mark::kThreadId, m.thread_id);
  w.EndMessage(t);
}

namespace {
void EncodeCounts(ProtoWriter& w, uint32_t field, const CountTable& counts) {
  for (int kind = 1; kind < wire::enums::kRecordKindCount; ++kind) {
    const RecordCountValues& c = counts[kind];
    if (c.seen == 0 && c.sent == 0 && c.dropped == 0 && c.filtered == 0) {
      continue;
    }
    const size_t t = w.BeginMessage(field);
    w.Uint(f::record_count::kKind, static_cast<uint64_t>(kind));
    w.Uint(f::record_count::kSeen, c.seen);
    w.Uint(f::record_count::kSent, c.sent);
    w.Uint(f::record_count::kDropped, c.dropped);
    w.Uint(f::record_count::kFiltered, c.filtered);
    w.EndMessage(t);
  }
}
}  // namespace

void EncodeKernelCounters(ProtoWriter& w, uint32_t field,
                          const KernelCountersInfo& c) {
  namespace kc = f::kernel_counters;
  const size_t t = w.BeginMessage(field);
  w.Uint(kc::kCorrelationId, c.correlation_id);
  w.Uint(kc::kDeviceId, c.device_id);
  w.Uint(kc::kDramReadBytes, c.dram_read_bytes);
  w.Uint(kc::kDramWriteBytes, c.dram_write_bytes);
  w.Uint(kc::kGpuTimeNs, c.gpu_time_ns);
  for (const auto& [precision, flops] : c.flops) {
    const size_t pf = w.BeginMessage(kc::kFlops);
    w.Uint(f::precision_flops::kPrecision, precision);
    w.Uint(f::precision_flops::kFlops, flops);
    w.EndMessage(pf);
  }
  for (const auto& [iid, value] : c.metrics) {
    const size_t mv = w.BeginMessage(kc::kMetrics);
    w.Uint(f::metric_value::kMetricIid, iid);
    w.Double(f::metric_value::kValue, value);
    w.EndMessage(mv);
  }
  w.Uint(kc::kPasses, c.passes);
  w.Uint(kc::kRangeIndex, c.range_index);
  w.EndMessage(t);
}

void EncodePmSample(ProtoWriter& w, uint32_t field, const PmSampleInfo& s) {
  namespace ps = f::pm_sample;
  const size_t t = w.BeginMessage(field);
  w.Uint(ps::kDeviceId, s.device_id);
  w.Uint(ps::kStartNs, s.start_ns);
  w.Uint(ps::kEndNs, s.end_ns);
  static constexpr uint32_t kValueFields[5] = {
      ps::kDramReadBytes, ps::kDramWriteBytes, ps::kTensorPipe, ps::kFmaPipe,
      ps::kSmCycles};
  for (int i = 0; i < 5; ++i) w.Double(kValueFields[i], s.values[i]);
  w.EndMessage(t);
}

void EncodeStats(ProtoWriter& w, uint32_t field, const StatsInfo& s) {
  const size_t t = w.BeginMessage(field);
  EncodeCounts(w, f::stats::kCounts, s.counts);
  w.Uint(f::stats::kPacketsSent, s.packets_sent);
  w.Uint(f::stats::kBytesSent, s.bytes_sent);
  w.Uint(f::stats::kCuptiRecordsDropped, s.cupti_records_dropped);
  w.Uint(f::stats::kCounterPasses, s.counter_passes);
  for (const auto& warning : s.warnings) w.String(f::stats::kWarnings, warning);
  for (uint32_t c : s.capabilities) w.Uint(f::stats::kCapabilities, c);
  w.Uint(f::stats::kMode, s.mode);
  w.Uint(f::stats::kActivityBuffersRequested, s.activity_buffers_requested);
  w.Uint(f::stats::kActivityBuffersCompleted, s.activity_buffers_completed);
  w.Uint(f::stats::kActivityBuffersOutstanding,
         s.activity_buffers_outstanding);
  w.Uint(f::stats::kActivityBuffersRefused, s.activity_buffers_refused);
  w.Uint(f::stats::kKernelsFromLaunch, s.kernels_from_launch);
  w.Uint(f::stats::kKernelsUntimed, s.kernels_untimed);
  w.Uint(f::stats::kPmSamples, s.pm_samples);
  w.Uint(f::stats::kPmSamplesLost, s.pm_samples_lost);
  w.EndMessage(t);
}

void EncodeGoodbye(ProtoWriter& w, uint32_t field, const CountTable& totals,
                   uint64_t packets_sent, uint64_t end_unix_ns,
                   uint64_t end_ns, int32_t exit_code) {
  const size_t t = w.BeginMessage(field);
  EncodeCounts(w, f::goodbye::kTotals, totals);
  w.Uint(f::goodbye::kPacketsSent, packets_sent);
  w.Uint(f::goodbye::kEndUnixNs, end_unix_ns);
  w.Uint(f::goodbye::kEndNs, end_ns);
  w.Int(f::goodbye::kExitCode, exit_code);
  w.EndMessage(t);
}

ProtoWriter& PacketEncoder::Begin(uint64_t timestamp_ns) {
  writer_.Discard();  // what a packet begun and never finished left
  payload_.clear();
  writer_.Uint(f::packet::kSequence, next_sequence_);
  writer_.Uint(f::packet::kTimestampNs, timestamp_ns);
  return writer_;
}

uint64_t PacketEncoder::Finish(
    const std::vector<StringDefinition>& definitions,
    std::string* frames) {
  for (const auto& [iid, str] : definitions) {
    const size_t t = writer_.BeginMessage(f::packet::kInternedStrings);
    writer_.Uint(f::interned_string::kIid, iid);
    writer_.String(f::interned_string::kStr, str);
    writer_.EndMessage(t);
  }
  writer_.Flush();
  wire::AppendFrame(frames, payload_);
  return next_sequence_++;
}

bool ParseHelloReply(std::string_view packet, bool* accepted,
                     uint32_t* protocol_version, std::string* reason) {
  wire::WireReader outer(packet);
  uint32_t field, wt;
  uint64_t v = 0;
  std::string_view bytes;
  bool found = false;
  while (outer.Next(&field, &wt, &v, &bytes)) {
    if (field != wire::fields::packet::kHelloReply || wt != 2) continue;
    found = true;
    *accepted = false;
    *protocol_version = 0;
    reason->clear();
    wire::WireReader inner(bytes, 1);
    while (inner.Next(&field, &wt, &v, &bytes)) {
      if (field == wire::fields::hello_reply::kAccepted && wt == 0) *accepted = v != 0;
      if (field == wire::fields::hello_reply::kProtocolVersion && wt == 0) {
        *protocol_version = static_cast<uint32_t>(v);
      }
      if (field == wire::fields::hello_reply::kReason && wt == 2) {
        reason->assign(bytes.data(), bytes.size());
      }
    }
    if (!inner.ok()) return false;
  }
  return found && outer.ok();
}

}  // namespace rooftrace::inject
