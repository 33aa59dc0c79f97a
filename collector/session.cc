#include "collector/session.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

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
    default: return "unknown";
  }
}

}  // namespace

Session::Session(std::string peer) : peer_(std::move(peer)), name_(peer_) {}

const std::string* Session::String(uint64_t iid) const {
  auto it = strings_.find(iid);
  return it == strings_.end() ? nullptr : &it->second;
}

size_t Session::RecordCount() const {
  return rec_.kernels.size() + rec_.launches.size() + rec_.memcpys.size() +
         rec_.gemms.size() + rec_.nvtx.size() + rec_.counters.size();
}

namespace {

template <typename T>
void EraseFlagged(std::vector<T>* v, const std::vector<char>& drop,
                  size_t retain) {
  if (drop.empty()) return;
  size_t out = 0;
  for (size_t i = 0; i < v->size(); ++i) {
    if (i < drop.size() && drop[i]) continue;
    if (out != i) (*v)[out] = std::move((*v)[i]);
    ++out;
  }
  v->resize(out);
  // Give the memory back: a long session must not keep its peak capacity.
  if (v->capacity() > std::max(2 * v->size() + 1024, retain)) {
    v->shrink_to_fit();
  }
}

}  // namespace

void Session::DropRecords(const RecordMask& mask, size_t retain) {
  EraseFlagged(&rec_.kernels, mask.kernels, retain);
  EraseFlagged(&rec_.launches, mask.launches, retain);
  EraseFlagged(&rec_.memcpys, mask.memcpys, retain);
  if (!mask.gemms.empty()) {
    EraseFlagged(&rec_.gemms, mask.gemms, retain);
    // A call's links go with it (call ids are unique in a session).
    std::unordered_set<uint64_t> held;
    held.reserve(rec_.gemms.size());
    for (const GemmRecord& g : rec_.gemms) held.insert(g.call_id);
    std::vector<char> drop(rec_.gemm_links.size(), 0);
    for (size_t i = 0; i < drop.size(); ++i) {
      drop[i] = held.count(rec_.gemm_links[i].call_id) == 0;
    }
    EraseFlagged(&rec_.gemm_links, drop, retain);
  }
  EraseFlagged(&rec_.nvtx, mask.nvtx, retain);
  EraseFlagged(&rec_.counters, mask.counters, retain);
}

Status Session::OnHello(const wire::Hello& h) {
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
  has_hello_ = true;
  header_.host = h.host();
  header_.pid = h.pid();
  header_.ppid = h.ppid();
  header_.start_unix_ns = h.start_unix_ns();
  header_.start_ns = h.start_ns();
  header_.producer_version = h.producer_version();
  header_.mode = ModeName(h.mode());
  header_.counter_passes = h.counter_passes();
  header_.protocol_version = h.protocol_version();
  for (int i = 0; i < h.argv_size(); ++i) {
    if (i) header_.argv += ' ';
    header_.argv += h.argv(i);
  }
  name_ = header_.host + ":" + std::to_string(header_.pid);
  ++stats_[ImportStat::k_sessions];
  return OkStatus();
}

void Session::OnStats(
    const google::protobuf::RepeatedPtrField<wire::RecordCount>& counts) {
  // Cumulative: the latest report replaces earlier ones.
  for (const auto& c : counts) {
    const int k = c.kind();
    if (k <= 0 || k >= kNumRecordKinds) continue;
    stats_.producer_dropped[k] = c.dropped();
    stats_.producer_filtered[k] = c.filtered();
  }
}

void Session::CountPacket(uint64_t sequence, uint64_t unknown_fields) {
  ++packets_;
  ++stats_[ImportStat::k_packets];
  if (sequence > last_sequence_ + 1 && last_sequence_ != 0) {
    sequence_gaps_ += sequence - last_sequence_ - 1;
  } else if (last_sequence_ == 0 && sequence > 1) {
    sequence_gaps_ += sequence - 1;
  }
  if (sequence > last_sequence_) last_sequence_ = sequence;
  stats_[ImportStat::k_unknown_fields] += unknown_fields;
}

Status Session::OnPacket(std::string_view payload) {
  // Record packets (all but a handful) take the hand-written decoder; the
  // Hello and the rest go through libprotobuf.
  if (!has_hello_ || reference_decoder_) return OnPacketWithProtobuf(payload);
  PacketDigest& d = digest_;
  switch (DecodeRecordPacket(payload, &rec_, &d)) {
    case PacketDecode::kNotHot:
      return OnPacketWithProtobuf(payload);
    case PacketDecode::kMalformed:
      ++stats_[ImportStat::k_undecodable_packets];
      return OkStatus();
    case PacketDecode::kDecoded:
      break;
  }
  for (const auto& [iid, str] : d.strings) {
    if (iid != 0) strings_[iid].assign(str.data(), str.size());
  }
  for (int k = 0; k < kNumRecordKinds; ++k) stats_.received[k] += d.received[k];
  nvtx_marks_ += d.nvtx_marks;
  CountPacket(d.sequence, d.unknown_fields);
  return OkStatus();
}

Status Session::OnPacketWithProtobuf(std::string_view payload) {
  wire::Packet& p = scratch_;
  if (!p.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    ++stats_[ImportStat::k_undecodable_packets];
    return OkStatus();
  }
  if (has_hello_ && p.has_hello()) {
    // A new session on the same stream (concatenated spool files): the
    // caller ends this one and feeds the payload to a fresh Session.
    restart_pending_ = true;
    return OkStatus();
  }
  if (!has_hello_) {
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
    if (s.iid() != 0) strings_[s.iid()] = s.str();
  }

  switch (p.data_case()) {
    case wire::Packet::kHello:
      unknown += Unknown(p.hello());
      break;
    case wire::Packet::kDevice:
      devices_.push_back(p.device());
      ++stats_.received[wire::RECORD_DEVICE];
      unknown += Unknown(p.device());
      break;
    case wire::Packet::kKernelBatch: {
      const auto& b = p.kernel_batch();
      unknown += Unknown(b);
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
        rec_.kernels.push_back(r);
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
        rec_.launches.push_back(r);
      }
      stats_.received[wire::RECORD_KERNEL] += b.kernels_size();
      stats_.received[wire::RECORD_LAUNCH] += b.launches_size();
      break;
    }
    case wire::Packet::kMemcpyBatch:
      unknown += Unknown(p.memcpy_batch());
      for (const auto& m : p.memcpy_batch().memcpys()) {
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
        rec_.memcpys.push_back(r);
      }
      stats_.received[wire::RECORD_MEMCPY] += p.memcpy_batch().memcpys_size();
      break;
    case wire::Packet::kGemmBatch:
      unknown += Unknown(p.gemm_batch());
      for (const wire::Gemm& g : p.gemm_batch().gemms()) {
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
        rec_.gemms.push_back(r);
        for (uint64_t corr : g.correlation_ids()) {
          rec_.gemm_links.push_back({corr, r.call_id});
        }
      }
      stats_.received[wire::RECORD_GEMM] += p.gemm_batch().gemms_size();
      break;
    case wire::Packet::kNvtxBatch:
      unknown += Unknown(p.nvtx_batch());
      for (const auto& m : p.nvtx_batch().marks()) unknown += Unknown(m);
      for (const auto& n : p.nvtx_batch().ranges()) {
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
        rec_.nvtx.push_back(r);
      }
      nvtx_marks_ += p.nvtx_batch().marks_size();
      stats_.received[wire::RECORD_NVTX_RANGE] +=
          p.nvtx_batch().ranges_size();
      stats_.received[wire::RECORD_NVTX_MARK] += p.nvtx_batch().marks_size();
      break;
    case wire::Packet::kCounterBatch:
      unknown += Unknown(p.counter_batch());
      for (const auto& c : p.counter_batch().counters()) {
        CounterRecord r;
        r.correlation_id = c.correlation_id();
        r.dram_read_bytes = c.dram_read_bytes();
        r.dram_write_bytes = c.dram_write_bytes();
        for (const auto& m : c.metrics()) unknown += Unknown(m);
        for (const auto& f : c.flops()) {
          unknown += Unknown(f);
          const int prec = f.precision();
          if (prec >= 0 && prec < kNumPrecisions) r.flops[prec] += f.flops();
          r.has_flops = true;
        }
        unknown += Unknown(c);
        rec_.counters.push_back(r);
      }
      stats_.received[wire::RECORD_COUNTERS] +=
          p.counter_batch().counters_size();
      break;
    case wire::Packet::kStats:
      OnStats(p.stats().counts());
      stats_[ImportStat::k_producer_cupti_dropped] =
          p.stats().cupti_records_dropped();
      break;
    case wire::Packet::kGoodbye: {
      const auto& g = p.goodbye();
      has_goodbye_ = true;
      OnStats(g.totals());
      for (const auto& c : g.totals()) {
        if (c.kind() > 0 && c.kind() < kNumRecordKinds) {
          goodbye_sent_[c.kind()] = c.sent();
        }
      }
      goodbye_packets_sent_ = g.packets_sent();
      exit_code_ = g.exit_code();
      end_unix_ns_ = g.end_unix_ns();
      break;
    }
    case wire::Packet::kHelloReply:
    case wire::Packet::DATA_NOT_SET:
      break;
  }
  CountPacket(p.sequence(), unknown);
  return OkStatus();
}

bool Session::Complete() const {
  if (!has_goodbye_ || sequence_gaps_ != 0) return false;
  if (goodbye_packets_sent_ != 0 && goodbye_packets_sent_ != packets_) {
    return false;
  }
  for (int k = 1; k < kNumRecordKinds; ++k) {
    if (goodbye_sent_[k] != stats_.received[k]) return false;
  }
  return true;
}

}  // namespace rooftrace
