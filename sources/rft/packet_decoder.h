// Decodes the packets that carry records (kernel, memcpy, GEMM, NVTX and
// counter batches: all but a handful of a session's packets) straight from
// the wire into a session's compact records, without libprotobuf's
// generated messages, which cost more than everything else ingest does.
//
// The result is what libprotobuf's parser followed by Session's conversion
// gives (tests/collector/packet_decoder_test.cc compares the two on valid,
// mutated and random packets; so does the collector fuzzer): the same
// records, the same unknown-field count, and the same packets refused as
// malformed, including interned strings that are not valid UTF-8. A packet
// with a Hello, Device, Stats, Goodbye or HelloReply is left to libprotobuf
// (kNotHot): they are few, and their strings and nesting are not worth a
// second reader.
//
// Stateless; thread-compatible. The trap: the digest's string views point
// into the payload.
#ifndef ROOFTRACE_SOURCES_RFT_PACKET_DECODER_H_
#define ROOFTRACE_SOURCES_RFT_PACKET_DECODER_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/import_stats.h"
#include "pipeline/records.h"

namespace rooftrace {

enum class PacketDecode {
  kDecoded,    // records appended, digest filled
  kMalformed,  // libprotobuf would refuse it: nothing appended
  kNotHot,     // not a record packet: decode it with libprotobuf
};

// What a record packet says besides its records.
struct PacketDigest {
  uint64_t sequence = 0;
  uint64_t unknown_fields = 0;  // at every level of the packet
  uint64_t nvtx_marks = 0;
  uint64_t pm_samples = 0;  // PmSample records (no wire::RecordKind)
  std::array<uint64_t, kNumRecordKinds> received{};  // by wire::RecordKind
  // Interned strings in packet order (iid, bytes), iid 0 included.
  std::vector<std::pair<uint64_t, std::string_view>> strings;
  // Scratch: the payload's data fields in order (field number, bytes), and
  // records of members a later one replaced (libprotobuf parses those too,
  // so they must be well-formed, but keeps nothing of them).
  std::vector<std::pair<uint32_t, std::string_view>> data_parts;
  SessionRecords replaced;
};

// Appends the records of `payload` to `records` and describes the rest of
// it in `digest` (reset first; its vectors keep their capacity).
PacketDecode DecodeRecordPacket(std::string_view payload,
                                SessionRecords* records,
                                PacketDigest* digest);

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing past U+10FFFF): libprotobuf refuses proto3 strings that are not.
bool IsValidUtf8(std::string_view s);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_RFT_PACKET_DECODER_H_
