// Decodes one producer's wire stream (docs/wire.md) into a pipeline
// Session: the Hello, Device packets, record batches (through the
// hand-written decoder, sources/rft/packet_decoder.h), interned strings,
// producer statistics and the Goodbye, with packet sequence accounting.
// Fed frame payloads in arrival order by a live connection (collector
// server) or a .rft file reader (sources/rft/ingest.h).
//
// Owned by one connection or file reader; not thread-safe.
// The trap: the first packet must be a Hello with our magic and a protocol
// version we can read; OnPacket() says so with a refusal the caller must
// send back (HelloReply) and log, and nothing else of that stream is kept.
#ifndef ROOFTRACE_SOURCES_RFT_WIRE_SESSION_H_
#define ROOFTRACE_SOURCES_RFT_WIRE_SESSION_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "pipeline/session.h"
#include "proto/rooftrace.pb.h"
#include "sources/rft/packet_decoder.h"

namespace rooftrace {

class WireSession {
 public:
  // `peer` names the producer in messages until the Hello names it better.
  explicit WireSession(std::string peer);

  // Decodes one frame payload. Returns an error only when the stream must
  // be refused (first packet not a Hello, wrong magic, newer protocol); the
  // message is the reason, for the HelloReply and the log. A payload that
  // is not a Packet is counted (undecodable_packets) and skipped.
  Status OnPacket(std::string_view payload);

  // Decodes every packet with libprotobuf's generated parser instead of the
  // hand-written decoder: the reference the tests and the fuzzer compare
  // that decoder against.
  void UseReferenceDecoder() { reference_decoder_ = true; }

  // What was decoded so far; session().end() is brought up to date after
  // every packet (Complete() once the Goodbye's totals match).
  Session& session() { return session_; }
  const Session& session() const { return session_; }

  bool has_hello() const { return session_.started(); }
  // True after OnPacket() met a second Hello: it was not consumed; end this
  // session and feed that payload to a new one.
  bool restart_pending() const { return restart_pending_; }
  // The producer's live buffer file named by its Hello ("" when none):
  // sources/rft/live_recovery.h reads it when the stream ends without a
  // Goodbye.
  const std::string& live_buffer() const { return live_buffer_; }

 private:
  Status OnHello(const wire::Hello& hello);
  // A Hello of this session's producer (pid, start time, host, live
  // buffer) at a sequence already received: a restatement, not a new
  // session.
  bool IsRestatedHello(const wire::Packet& p) const;
  // Decodes a packet with libprotobuf's generated parser.
  Status OnPacketWithProtobuf(std::string_view payload);
  // Per packet kind, for OnPacketWithProtobuf; each returns the unknown
  // fields it skipped.
  uint64_t OnKernelBatch(const wire::KernelBatch& b);
  uint64_t OnMemcpyBatch(const wire::MemcpyBatch& b);
  uint64_t OnGemmBatch(const wire::GemmBatch& b);
  uint64_t OnNvtxBatch(const wire::NvtxBatch& b);
  uint64_t OnCounterBatch(const wire::CounterBatch& b);
  uint64_t OnPmSampleBatch(const wire::PmSampleBatch& b);
  void OnGoodbye(const wire::Goodbye& g);
  void CountPacket(uint64_t sequence, uint64_t unknown_fields);
  void OnStats(const google::protobuf::RepeatedPtrField<wire::RecordCount>&
                   counts);
  // Whether the Goodbye's totals match what arrived, into session_.end().
  void UpdateComplete();

  Session session_;
  bool restart_pending_ = false;
  wire::Packet scratch_;
  PacketDigest digest_;  // scratch of the hand-written decoder
  bool reference_decoder_ = false;
  std::string live_buffer_;
  uint64_t goodbye_packets_sent_ = 0;
  std::array<uint64_t, kNumRecordKinds> goodbye_sent_{};
};

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_RFT_WIRE_SESSION_H_
