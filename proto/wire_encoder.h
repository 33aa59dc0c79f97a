// Encodes libinject's records as rooftrace.wire messages with ProtoWriter.
// The producer's side of the wire contract, without libprotobuf: libinject
// encodes its stream with it, and the collector re-encodes the records it
// recovers from a dead producer's live buffer (proto/live_buffer.h) with
// the same code, so both streams decode alike.
//
// One function per message; each writes the message as field `field` of the
// enclosing message (e.g. Kernel as KernelBatch.kernels). PacketEncoder
// wraps a payload into a framed Packet with sequence, timestamp and the
// interned strings it defines. Sender thread only; allocates.
#ifndef ROOFTRACE_PROTO_WIRE_ENCODER_H_
#define ROOFTRACE_PROTO_WIRE_ENCODER_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/capture_records.h"
#include "proto/proto_writer.h"
#include "proto/field_numbers.h"

namespace rooftrace::inject {

// An interned string: (iid, text), defined once in Packet.interned_strings.
using StringDefinition = std::pair<uint64_t, std::string_view>;

// A kernel activity record, independent of the CUPTI struct version.
struct KernelInfo {
  uint64_t correlation_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint64_t name_iid = 0;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t cluster[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_memory_bytes = 0;
  uint32_t dynamic_shared_memory_bytes = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};

struct MemcpyInfo {
  uint64_t correlation_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t bytes = 0;
  uint32_t kind = 0;  // wire::enums::CopyKind
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t src_kind = 0;  // wire::enums::MemoryKind
  uint32_t dst_kind = 0;
  uint32_t memset_value = 0;
  uint32_t graph_id = 0;
  uint32_t dst_device_id = 0;
};

struct DeviceInfo {
  uint32_t device_id = 0;
  std::string name;
  std::string uuid;
  uint32_t sm_count = 0;
  uint32_t cc_major = 0;
  uint32_t cc_minor = 0;
  uint64_t core_clock_khz = 0;
  uint64_t memory_clock_khz = 0;
  uint32_t memory_bus_width_bits = 0;
  uint64_t l2_cache_bytes = 0;
  uint64_t global_memory_bytes = 0;
  std::string chip_name;
  uint32_t pci_bus_id = 0;
  std::string driver_version;
};

// Hardware counters of one kernel launch (counters mode), independent of
// the counters library's structs: metric names are already interned.
struct KernelCountersInfo {
  uint64_t correlation_id = 0;
  uint32_t device_id = 0;
  uint64_t dram_read_bytes = 0;
  uint64_t dram_write_bytes = 0;
  uint64_t gpu_time_ns = 0;
  // (wire::enums::PrecisionClass, FLOPs), classes with FLOPs only.
  std::vector<std::pair<uint32_t, uint64_t>> flops;
  // (interned metric name, raw value in the metric's unit).
  std::vector<std::pair<uint64_t, double>> metrics;
  uint32_t passes = 0;
  uint64_t range_index = 0;
};

// One PM sampling interval of one device (sampling mode): device-wide
// counts between start_ns and end_ns (host clock), in the order of
// wire.PmSample (DRAM read, DRAM write, tensor pipe, FMA pipe, SM cycles);
// a counter the chip's set left out is 0.
struct PmSampleInfo {
  uint32_t device_id = 0;
  uint64_t start_ns = 0, end_ns = 0;
  double values[5] = {0, 0, 0, 0, 0};
};

struct HelloInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string host;
  std::vector<std::string> argv;
  uint64_t start_unix_ns = 0;
  uint64_t start_ns = 0;
  std::vector<uint32_t> capabilities;  // wire::enums::Capability
  uint32_t mode = wire::enums::kModeTrace;
  uint32_t counter_passes = 0;
  std::vector<std::string> config;
  // The producer's live buffer file ("" when it has none).
  std::string live_buffer;
};

// Per record kind: seen / sent / dropped / filtered, cumulative.
struct RecordCountValues {
  uint64_t seen = 0;
  uint64_t sent = 0;
  uint64_t dropped = 0;
  uint64_t filtered = 0;
};
using CountTable = std::array<RecordCountValues, wire::enums::kRecordKindCount>;

struct StatsInfo {
  CountTable counts{};
  uint64_t packets_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t cupti_records_dropped = 0;
  // CUPTI activity buffers (Stats.activity_buffers_*).
  uint64_t activity_buffers_requested = 0;
  uint64_t activity_buffers_completed = 0;
  uint64_t activity_buffers_outstanding = 0;
  uint64_t activity_buffers_refused = 0;
  uint64_t kernels_from_launch = 0;  // Stats.kernels_from_launch
  uint64_t kernels_untimed = 0;      // Stats.kernels_untimed
  uint64_t pm_samples = 0;           // Stats.pm_samples
  uint64_t pm_samples_lost = 0;      // Stats.pm_samples_lost
  uint32_t counter_passes = 0;
  std::vector<std::string> warnings;
  // As of this packet (they grow when CUPTI attaches after the Hello).
  std::vector<uint32_t> capabilities;
  uint32_t mode = 0;
};

void EncodeHello(ProtoWriter& w, uint32_t field, const HelloInfo& hello);
void EncodeDevice(ProtoWriter& w, uint32_t field, const DeviceInfo& device);
void EncodeKernel(ProtoWriter& w, uint32_t field, const KernelInfo& kernel);
void EncodeLaunch(ProtoWriter& w, uint32_t field, const LaunchRecord& launch);
void EncodeMemcpy(ProtoWriter& w, uint32_t field, const MemcpyInfo& copy);
void EncodeGemm(ProtoWriter& w, uint32_t field, const GemmRecord& gemm);
void EncodeNvtxRange(ProtoWriter& w, uint32_t field, const NvtxRangeRecord& r);
void EncodeNvtxMark(ProtoWriter& w, uint32_t field, const NvtxMarkRecord& m);
void EncodeKernelCounters(ProtoWriter& w, uint32_t field,
                          const KernelCountersInfo& counters);
void EncodePmSample(ProtoWriter& w, uint32_t field, const PmSampleInfo& s);
void EncodeStats(ProtoWriter& w, uint32_t field, const StatsInfo& stats);
void EncodeGoodbye(ProtoWriter& w, uint32_t field, const CountTable& totals,
                   uint64_t packets_sent, uint64_t end_unix_ns,
                   uint64_t end_ns, int32_t exit_code);

// Builds framed packets: `sequence` from 1 without gaps.
class PacketEncoder {
 public:
  // Starts a packet: the caller writes exactly one `data` field into
  // writer() (e.g. wire::fields::packet::kKernelBatch), then calls Finish().
  ProtoWriter& Begin(uint64_t timestamp_ns);
  // Attaches `definitions`, frames the packet and appends the frame to
  // `*frames`. Returns the packet's sequence number.
  uint64_t Finish(const std::vector<StringDefinition>& definitions,
                  std::string* frames);

  uint64_t next_sequence() const { return next_sequence_; }
  // Re-encoding a pass for another sink reuses its sequence numbers.
  void set_next_sequence(uint64_t sequence) { next_sequence_ = sequence; }

 private:
  std::string payload_;
  ProtoWriter writer_{&payload_};
  uint64_t next_sequence_ = 1;
};

// Encodes `items` as packets of at most `max_batch` items each: field
// `packet_field` of the Packet holds the batch message, whose repeated
// field `item_field` holds the items (encode_item(writer, field, item)).
// The first packet carries `*definitions`, which is then emptied. Returns
// the number of packets.
template <typename T, typename EncodeItem>
uint64_t EncodeInBatches(PacketEncoder& enc, const std::vector<T>& items,
                         size_t max_batch, uint32_t packet_field,
                         uint32_t item_field, EncodeItem encode_item,
                         uint64_t timestamp_ns,
                         std::vector<StringDefinition>* definitions,
                         std::string* frames) {
  uint64_t packets = 0;
  const size_t batch = max_batch == 0 ? 1 : max_batch;
  for (size_t begin = 0; begin < items.size(); begin += batch) {
    const size_t end = items.size() - begin < batch ? items.size() : begin + batch;
    ProtoWriter& w = enc.Begin(timestamp_ns);
    const size_t t = w.BeginMessage(packet_field);
    for (size_t i = begin; i < end; ++i) encode_item(w, item_field, items[i]);
    w.EndMessage(t);
    enc.Finish(*definitions, frames);
    definitions->clear();
    ++packets;
  }
  return packets;
}

}  // namespace rooftrace::inject

namespace rooftrace::inject {
// Reads Packet.hello_reply from an encoded Packet. False when the packet is
// not a HelloReply or is malformed.
bool ParseHelloReply(std::string_view packet, bool* accepted,
                     uint32_t* protocol_version, std::string* reason);
}  // namespace rooftrace::inject

#endif  // ROOFTRACE_PROTO_WIRE_ENCODER_H_
