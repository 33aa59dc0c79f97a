// One producer session (a process or forked child): the Hello, the records
// of every packet in compact form, interned strings, producer statistics and
// the Goodbye. The collector feeds it frame payloads in arrival order;
// joining happens later (collector/join.h), because records of one kernel
// may arrive in any packet and in any order: once the session ends, or
// earlier for its settled forward steps (RunRecorder::FlushSettled), which
// are stored and then dropped from here with DropRecords(), so a long
// session holds a bounded window of records.
//
// Owned by one connection or file reader; not thread-safe.
// The trap: the first packet must be a Hello with our magic and a protocol
// version we can read; OnPacket() says so with a refusal the caller must
// send back (HelloReply) and log, and nothing else of that stream is kept.
#ifndef ROOFTRACE_COLLECTOR_SESSION_H_
#define ROOFTRACE_COLLECTOR_SESSION_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "model/datasheet.h"
#include "collector/import_stats.h"
#include "collector/packet_decoder.h"
#include "collector/records.h"
#include "proto/rooftrace.pb.h"

namespace rooftrace {

// What earlier flushes of a session already stored (RunRecorder).
struct FlushedState {
  int64_t session_row = 0;        // sessions.session_id; 0: not stored yet
  int64_t last_step_tokens = -1;  // token count of the last stored step
  uint64_t steps = 0, kernels = 0, flushes = 0;
  size_t next_flush_records = 0;  // RecordCount() that triggers a try
};

// Which records DropRecords() removes: one flag per record, in the order
// of the accessors below (an empty vector drops none of that kind).
struct RecordMask {
  std::vector<char> kernels, launches, memcpys, gemms, nvtx, counters;
};

// Session identity and what its Hello declared.
struct SessionHeader {
  std::string host;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_unix_ns = 0;
  uint64_t start_ns = 0;
  std::string argv;  // space-joined
  std::string producer_version;
  std::string mode;  // "trace" | "counters" | "unknown"
  uint32_t counter_passes = 0;
  uint32_t protocol_version = 0;
};

class Session {
 public:
  // `peer` names the producer in messages until the Hello names it better.
  explicit Session(std::string peer);

  // Decodes one frame payload. Returns an error only when the stream must
  // be refused (first packet not a Hello, wrong magic, newer protocol); the
  // message is the reason, for the HelloReply and the log. A payload that
  // is not a Packet is counted (undecodable_packets) and skipped.
  Status OnPacket(std::string_view payload);

  // Decodes every packet with libprotobuf's generated parser instead of the
  // hand-written decoder (collector/packet_decoder.h): the reference the
  // tests and the fuzzer compare that decoder against.
  void UseReferenceDecoder() { reference_decoder_ = true; }

  bool has_hello() const { return has_hello_; }
  // True after OnPacket() met a second Hello: it was not consumed; end this
  // session and feed that payload to a new one.
  bool restart_pending() const { return restart_pending_; }
  bool has_goodbye() const { return has_goodbye_; }
  // Whether the Goodbye's totals match what arrived (and no packet is
  // missing). Meaningful once the stream has ended.
  bool Complete() const;
  // "host:pid" once the Hello arrived, else the peer given at construction.
  const std::string& name() const { return name_; }

  const SessionHeader& header() const { return header_; }
  const std::vector<wire::Device>& devices() const { return devices_; }
  const std::vector<KernelRecord>& kernels() const { return rec_.kernels; }
  const std::vector<LaunchRecord>& launches() const { return rec_.launches; }
  const std::vector<MemcpyRecord>& memcpys() const { return rec_.memcpys; }
  const std::vector<GemmRecord>& gemms() const { return rec_.gemms; }
  // Correlation ids the GEMM calls held here listed, by call id.
  const std::vector<GemmLink>& gemm_links() const { return rec_.gemm_links; }
  const std::vector<NvtxRecord>& nvtx_ranges() const { return rec_.nvtx; }
  const std::vector<CounterRecord>& counters() const { return rec_.counters; }
  uint64_t nvtx_marks() const { return nvtx_marks_; }
  uint64_t packets() const { return packets_; }
  uint64_t last_sequence() const { return last_sequence_; }
  uint64_t sequence_gaps() const { return sequence_gaps_; }
  int32_t exit_code() const { return exit_code_; }
  uint64_t end_unix_ns() const { return end_unix_ns_; }

  // The interned string `iid`, or nullptr when never defined.
  const std::string* String(uint64_t iid) const;
  const std::unordered_map<uint64_t, std::string>& strings() const {
    return strings_;
  }

  // Counters of this session (frames and bytes are added by the reader).
  ImportStats& stats() { return stats_; }
  const ImportStats& stats() const { return stats_; }

  // Records held, for memory accounting.
  size_t RecordCount() const;

  // Removes the records flagged in `mask` (already stored and joined);
  // pointers into the record vectors are invalid afterwards. Each record
  // vector keeps its memory for up to `retain` records (the next window
  // fills it again without growing) and gives back the rest.
  void DropRecords(const RecordMask& mask, size_t retain = 0);
  FlushedState& flushed() { return flushed_; }
  const FlushedState& flushed() const { return flushed_; }

 private:
  Status OnHello(const wire::Hello& hello);
  // Decodes a packet with libprotobuf's generated parser.
  Status OnPacketWithProtobuf(std::string_view payload);
  void CountPacket(uint64_t sequence, uint64_t unknown_fields);
  void OnStats(const google::protobuf::RepeatedPtrField<wire::RecordCount>&
                   counts);

  std::string peer_;
  std::string name_;
  bool has_hello_ = false;
  bool has_goodbye_ = false;
  bool restart_pending_ = false;
  SessionHeader header_;
  wire::Packet scratch_;
  PacketDigest digest_;  // scratch of the hand-written decoder
  bool reference_decoder_ = false;
  std::unordered_map<uint64_t, std::string> strings_;
  std::vector<wire::Device> devices_;
  SessionRecords rec_;
  uint64_t nvtx_marks_ = 0;
  uint64_t packets_ = 0;
  uint64_t last_sequence_ = 0;
  uint64_t sequence_gaps_ = 0;
  uint64_t goodbye_packets_sent_ = 0;
  std::array<uint64_t, kNumRecordKinds> goodbye_sent_{};
  int32_t exit_code_ = -1;
  uint64_t end_unix_ns_ = 0;
  ImportStats stats_;
  FlushedState flushed_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_SESSION_H_
