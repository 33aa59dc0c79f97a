#include "sources/rft/wire_session.h"

#include <algorithm>
#include <cstdio>

#include <google/protobuf/unknown_field_set.h>

#include "proto/wire_constants.h"

namespace rooftrace {
namespace {

template <typename M>
uint64_t Unknown(const M& m) {
  return static_cast<uint64_t>(
      m.GetReflection()->GetUnknownFields(m).field_count());
}

std::string ModeName(int mode) {
  switch (mode) {
    case wire::MODE_TRACE: return "trace";
    case wire::MODE_COUNTERS: return "counters";
    case wire::MODE_SAMPLING: return "sampling";
    default: return "unknown";
  }
}

}  // namespace

WireSession::WireSession(std::string peer) : session_(std::move(peer)) {}

Status WireSession::OnHello(const wire::Hello& h) {
  if (h.magic() != wire::kTraceMagic) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "the Hello carries magic 0x%016llx, not 0x%016llx (\"RFTRACE1\"): "
             "not a rooftrace producer",
             static_cast<unsigned long long>(h.magic()),
             static_cast<unsigned long long>(wire::kTraceMagic));
    return FailedPrecondition(msg);
  }
  if (h.protocol_version() > wire::kProtocolVersion) {
    return FailedPrecondition(
        "producer speaks protocol version " +
        std::to_string(h.protocol_version()) + ", this collector reads up to " +
        std::to_string(wire::kProtocolVersion) +
        ": upgrade the collector (rooftrace) to the producer's version");
  }
  SessionHeader header;
  header.host = h.host();
  header.pid = h.pid();
  header.ppid = h.ppid();
  header.start_unix_ns = h.start_unix_ns();
  header.start_ns = h.start_ns();
  header.producer_version = h.producer_version();
  header.mode = ModeName(h.mode());
  header.counter_passes = h.counter_passes();
  header.protocol_version = h.protocol_version();
  for (int i = 0; i < h.argv_size(); ++i) {
    if (i) header.argv += ' ';
    header.argv += h.argv(i);
  }
  live_buffer_ = h.live_buffer();
  session_.Start(header);
  return OkStatus();
}

bool WireSession::IsRestatedHello(const wire::Packet& p) const {
  const wire::Hello& h = p.hello();
  const SessionHeader& mine = session_.header();
  return p.sequence() != 0 &&
         p.sequence() <= session_.end().last_sequence &&
         h.magic() == wire::kTraceMagic && h.pid() == mine.pid &&
         h.start_unix_ns() == mine.start_unix_ns && h.host() == mine.host &&
         h.live_buffer() == live_buffer_;
}

void WireSession::OnStats(
    const google::protobuf::RepeatedPtrField<wire::RecordCount>& counts) {
  // Cumulative: the latest report replaces earlier ones.
  ImportStats& stats = session_.stats();
  for (const auto& c : counts) {
    const int k = c.kind();
    if (k <= 0 || k >= kNumRecordKinds) continue;
    stats.producer_dropped[k] = c.dropped();
    stats.producer_filtered[k] = c.filtered();
  }
}

void WireSession::CountPacket(uint64_t sequence, uint64_t unknown_fields) {
  SessionEnd& e = session_.end();
  ++e.packets;
  ++session_.stats()[ImportStat::k_packets];
  if (sequence > e.last_sequence + 1 && e.last_sequence != 0) {
    e.sequence_gaps += sequence - e.last_sequence - 1;
  } else if (e.last_sequence == 0 && sequence > 1) {
    e.sequence_gaps += sequence - 1;
  }
  if (sequence > e.last_sequence) e.last_sequence = sequence;
  session_.stats()[ImportStat::k_unknown_fields] += unknown_fields;
  UpdateComplete();
}

Status WireSession::OnPacket(std::string_view payload) {
  // Record packets (all but a handful) take the hand-written decoder; the
  // Hello and the rest go through libprotobuf.
  if (!has_hello() || reference_decoder_) return OnPacketWithProtobuf(payload);
  PacketDigest& d = digest_;
  switch (DecodeRecordPacket(payload, &session_.records(), &d)) {
    case PacketDecode::kNotHot:
      return OnPacketWithProtobuf(payload);
    case PacketDecode::kMalformed:
      ++session_.stats()[ImportStat::k_undecodable_packets];
      return OkStatus();
    case PacketDecode::kDecoded:
      break;
  }
  for (const auto& [iid, str] : d.strings) {
    if (iid != 0) session_.SetString(iid, str);
  }
  ImportStats& stats = session_.stats();
  for (int k = 0; k < kNumRecordKinds; ++k) stats.received[k] += d.received[k];
  session_.end().nvtx_marks += d.nvtx_marks;
  stats[ImportStat::k_pm_samples] += d.pm_samples;
  CountPacket(d.sequence, d.unknown_fields);
  return OkStatus();
}

Status WireSession::OnPacketWithProtobuf(std::string_view payload) {
  wire::Packet& p = scratch_;
  ImportStats& stats = session_.stats();
  if (!p.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    ++stats[ImportStat::k_undecodable_packets];
    return OkStatus();
  }
  if (has_hello() && p.has_hello()) {
    if (IsRestatedHello(p)) {
      // The same producer's Hello again, at a sequence this session has
      // already had (a producer that fell back to its spool before it sent
      // anything wrote its Hello twice): not a new session. Only the
      // strings it restates are kept.
      for (const auto& s : p.interned_strings()) {
        if (s.iid() != 0) session_.SetString(s.iid(), s.str());
      }
      return OkStatus();
    }
    // A new session on the same stream (concatenated spool files): the
    // caller ends this one and feeds the payload to a fresh WireSession.
    restart_pending_ = true;
    return OkStatus();
  }
  if (!has_hello()) {
    if (!p.has_hello()) {
      return FailedPrecondition(
          "the first packet is not a Hello: not a rooftrace producer, or a "
          "stream that lost its beginning");
    }
    RT_RETURN_IF_ERROR(OnHello(p.hello()));
  }
  uint64_t unknown = Unknown(p);
  for (const auto& s : p.interned_strings()) {
    unknown += Unknown(s);
    if (s.iid() != 0) session_.SetString(s.iid(), s.str());
  }

  switch (p.data_case()) {
    case wire::Packet::kHello:
      unknown += Unknown(p.hello());
      break;
    case wire::Packet::kDevice: {
      const wire::Device& d = p.device();
      DeviceInfo info;
      info.device_id = d.device_id();
      info.name = d.name();
      info.uuid = d.uuid();
      info.chip_name = d.chip_name();
      info.sm_count = d.sm_count();
      info.cc_major = d.compute_capability_major();
      info.cc_minor = d.compute_capability_minor();
      info.core_clock_khz = d.core_clock_khz();
      info.memory_clock_khz = d.memory_clock_khz();
      info.memory_bus_width_bits = d.memory_bus_width_bits();
      info.l2_cache_bytes = d.l2_cache_bytes();
      info.global_memory_bytes = d.global_memory_bytes();
      info.driver_version = d.driver_version();
      session_.AddDevice(std::move(info));
      ++stats.received[wire::RECORD_DEVICE];
      unknown += Unknown(d);
      break;
    }
    case wire::Packet::kKernelBatch:
      unknown += OnKernelBatch(p.kernel_batch());
      break;
    case wire::Packet::kMemcpyBatch:
      unknown += OnMemcpyBatch(p.memcpy_batch());
      break;
    case wire::Packet::kGemmBatch:
      unknown += OnGemmBatch(p.gemm_batch());
      break;
    case wire::Packet::kNvtxBatch:
      unknown += OnNvtxBatch(p.nvtx_batch());
      break;
    case wire::Packet::kCounterBatch:
      unknown += OnCounterBatch(p.counter_batch());
      break;
    case wire::Packet::kPmSampleBatch:
      unknown += OnPmSampleBatch(p.pm_sample_batch());
      break;
    case wire::Packet::kStats:
      OnStats(p.stats().counts());
      stats[ImportStat::k_producer_cupti_dropped] =
          p.stats().cupti_records_dropped();
      // Cumulative in every Stats: the latest is the session's.
      stats[ImportStat::k_producer_activity_buffers_requested] =
          p.stats().activity_buffers_requested();
      stats[ImportStat::k_producer_activity_buffers_completed] =
          p.stats().activity_buffers_completed();
      stats[ImportStat::k_producer_activity_buffers_outstanding] =
          p.stats().activity_buffers_outstanding();
      stats[ImportStat::k_producer_activity_buffers_refused] =
          p.stats().activity_buffers_refused();
      stats[ImportStat::k_producer_kernels_from_launch] =
          p.stats().kernels_from_launch();
      stats[ImportStat::k_producer_kernels_untimed] =
          p.stats().kernels_untimed();
      stats[ImportStat::k_producer_pm_samples] = p.stats().pm_samples();
      stats[ImportStat::k_producer_pm_samples_lost] =
          p.stats().pm_samples_lost();
      break;
    case wire::Packet::kGoodbye:
      OnGoodbye(p.goodbye());
      break;
    case wire::Packet::kHelloReply:
    case wire::Packet::DATA_NOT_SET:
      break;
  }
  CountPacket(p.sequence(), unknown);
  return OkStatus();
}

uint64_t WireSession::OnKernelBatch(const wire::KernelBatch& b) {
  SessionRecords& rec = session_.records();
  uint64_t unknown = Unknown(b);
  for (const auto& k : b.kernels()) {
    KernelRecord r;
    r.correlation_id = k.correlation_id();
    r.start_ns = k.start_ns();
    r.end_ns = k.end_ns();
    r.name_iid = k.name_iid();
    r.graph_node_id = k.graph_node_id();
    r.device_id = k.device_id();
    r.context_id = k.context_id();
    r.stream_id = k.stream_id();
    r.grid[0] = k.grid_x(); r.grid[1] = k.grid_y(); r.grid[2] = k.grid_z();
    r.block[0] = k.block_x(); r.block[1] = k.block_y();
    r.block[2] = k.block_z();
    r.cluster[0] = k.cluster_x(); r.cluster[1] = k.cluster_y();
    r.cluster[2] = k.cluster_z();
    r.registers_per_thread = k.registers_per_thread();
    r.static_shared_memory_bytes = k.static_shared_memory_bytes();
    r.dynamic_shared_memory_bytes = k.dynamic_shared_memory_bytes();
    r.graph_id = k.graph_id();
    unknown += Unknown(k);
    rec.kernels.push_back(r);
  }
  for (const auto& l : b.launches()) {
    LaunchRecord r;
    r.correlation_id = l.correlation_id();
    r.api_start_ns = l.api_start_ns();
    r.api_end_ns = l.api_end_ns();
    r.nvtx_range_id = l.nvtx_range_id();
    r.gemm_call_id = l.gemm_call_id();
    r.thread_id = l.thread_id();
    r.kind = l.kind();
    unknown += Unknown(l);
    rec.launches.push_back(r);
  }
  ImportStats& stats = session_.stats();
  stats.received[wire::RECORD_KERNEL] += b.kernels_size();
  stats.received[wire::RECORD_LAUNCH] += b.launches_size();
  return unknown;
}

uint64_t WireSession::OnMemcpyBatch(const wire::MemcpyBatch& b) {
  uint64_t unknown = Unknown(b);
  for (const auto& m : b.memcpys()) {
    MemcpyRecord r;
    r.correlation_id = m.correlation_id();
    r.start_ns = m.start_ns();
    r.end_ns = m.end_ns();
    r.bytes = m.bytes();
    r.kind = m.kind();
    r.device_id = m.device_id();
    r.context_id = m.context_id();
    r.stream_id = m.stream_id();
    r.src_kind = m.src_kind();
    r.dst_kind = m.dst_kind();
    unknown += Unknown(m);
    session_.records().memcpys.push_back(r);
  }
  session_.stats().received[wire::RECORD_MEMCPY] += b.memcpys_size();
  return unknown;
}

uint64_t WireSession::OnGemmBatch(const wire::GemmBatch& b) {
  SessionRecords& rec = session_.records();
  uint64_t unknown = Unknown(b);
  for (const wire::Gemm& g : b.gemms()) {
    unknown += Unknown(g);
    GemmRecord r;
    r.call_id = g.call_id();
    r.api = g.api();
    r.m = g.m(); r.n = g.n(); r.k = g.k(); r.batch = g.batch();
    r.trans_a = g.trans_a(); r.trans_b = g.trans_b();
    r.a_type = g.a_type(); r.b_type = g.b_type();
    r.c_type = g.c_type(); r.d_type = g.d_type();
    r.compute_type = g.compute_type();
    r.lda = g.lda(); r.ldb = g.ldb(); r.ldc = g.ldc();
    r.a_ptr = g.a_ptr(); r.b_ptr = g.b_ptr();
    r.c_ptr = g.c_ptr(); r.d_ptr = g.d_ptr();
    r.epilogue = g.epilogue();
    r.start_ns = g.start_ns(); r.end_ns = g.end_ns();
    r.thread_id = g.thread_id();
    r.status = g.status();
    r.precision = g.precision();
    rec.gemms.push_back(r);
    for (uint64_t corr : g.correlation_ids()) {
      rec.gemm_links.push_back({corr, r.call_id});
    }
  }
  session_.stats().received[wire::RECORD_GEMM] += b.gemms_size();
  return unknown;
}

uint64_t WireSession::OnNvtxBatch(const wire::NvtxBatch& b) {
  uint64_t unknown = Unknown(b);
  for (const auto& m : b.marks()) unknown += Unknown(m);
  for (const auto& n : b.ranges()) {
    NvtxRecord r;
    r.range_id = n.range_id();
    r.parent_range_id = n.parent_range_id();
    r.domain_iid = n.domain_iid();
    r.name_iid = n.name_iid();
    r.start_ns = n.start_ns();
    r.end_ns = n.end_ns();
    r.thread_id = n.thread_id();
    r.end_thread_id = n.end_thread_id();
    r.depth = n.depth();
    r.kind = n.kind();
    unknown += Unknown(n);
    session_.records().nvtx.push_back(r);
  }
  session_.end().nvtx_marks += b.marks_size();
  ImportStats& stats = session_.stats();
  stats.received[wire::RECORD_NVTX_RANGE] += b.ranges_size();
  stats.received[wire::RECORD_NVTX_MARK] += b.marks_size();
  return unknown;
}

uint64_t WireSession::OnCounterBatch(const wire::CounterBatch& b) {
  uint64_t unknown = Unknown(b);
  for (const auto& c : b.counters()) {
    CounterRecord r;
    r.correlation_id = c.correlation_id();
    r.dram_read_bytes = c.dram_read_bytes();
    r.dram_write_bytes = c.dram_write_bytes();
    r.gpu_time_ns = c.gpu_time_ns();
    for (const auto& m : c.metrics()) unknown += Unknown(m);
    for (const auto& f : c.flops()) {
      unknown += Unknown(f);
      const int prec = f.precision();
      if (prec >= 0 && prec < kNumPrecisions) r.flops[prec] += f.flops();
      r.has_flops = true;
    }
    unknown += Unknown(c);
    session_.records().counters.push_back(r);
  }
  session_.stats().received[wire::RECORD_COUNTERS] += b.counters_size();
  return unknown;
}

uint64_t WireSession::OnPmSampleBatch(const wire::PmSampleBatch& b) {
  uint64_t unknown = Unknown(b);
  for (const auto& s : b.samples()) {
    PmSampleRecord r;
    r.device_id = s.device_id();
    r.start_ns = s.start_ns();
    r.end_ns = s.end_ns();
    r.values = {s.dram_read_bytes(), s.dram_write_bytes(), s.tensor_pipe(),
                s.fma_pipe(), s.sm_cycles()};
    unknown += Unknown(s);
    session_.records().pm_samples.push_back(r);
  }
  session_.stats()[ImportStat::k_pm_samples] += b.samples_size();
  return unknown;
}

void WireSession::OnGoodbye(const wire::Goodbye& g) {
  SessionEnd& e = session_.end();
  e.goodbye = true;
  OnStats(g.totals());
  for (const auto& c : g.totals()) {
    if (c.kind() > 0 && c.kind() < kNumRecordKinds) {
      goodbye_sent_[c.kind()] = c.sent();
    }
  }
  goodbye_packets_sent_ = g.packets_sent();
  e.exit_code = g.exit_code();
  e.end_unix_ns = g.end_unix_ns();
}

void WireSession::UpdateComplete() {
  SessionEnd& e = session_.end();
  e.complete = false;
  if (!e.goodbye || e.sequence_gaps != 0) return;
  if (goodbye_packets_sent_ != 0 && goodbye_packets_sent_ != e.packets) {
    return;
  }
  for (int k = 1; k < kNumRecordKinds; ++k) {
    if (goodbye_sent_[k] != session_.stats().received[k]) return;
  }
  e.complete = true;
}

}  // namespace rooftrace
