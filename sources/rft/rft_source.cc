#include "sources/rft/rft_source.h"

#include <cstdint>
#include <optional>

#include "proto/field_numbers.h"
#include "proto/wire_constants.h"
#include "sources/rft/ingest_internal.h"

namespace rooftrace {
namespace {

// A varint at data[*pos], or nullopt when it is longer than 10 bytes or
// runs past the end of `data`.
std::optional<uint64_t> Varint(std::string_view data, size_t* pos) {
  uint64_t value = 0;
  for (size_t i = 0; i < wire::kMaxVarintBytes && *pos < data.size(); ++i) {
    const uint8_t b = static_cast<uint8_t>(data[(*pos)++]);
    value |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) return value;
  }
  return std::nullopt;
}

}  // namespace

// Every rooftrace stream starts with one frame, Trace.packet (tag 0x0A) and
// a length within kMaxFrameBytes, whose Packet holds the session's Hello:
// its sequence and timestamp (varints), then field 3 (Hello) whose first
// field is the fixed64 magic. Text that happens to start with '\n' (0x0A)
// -- JSON, CSV -- fails the nested Hello long before. The magic's value and
// the protocol version are checked by Read(), which says what is wrong.
bool RftSource::Detect(const std::string&, std::string_view head) const {
  namespace f = wire::fields;
  size_t pos = 0;
  if (head.empty() || static_cast<uint8_t>(head[pos++]) != wire::kPacketTag) {
    return false;
  }
  const std::optional<uint64_t> frame = Varint(head, &pos);
  if (!frame || *frame == 0 || *frame > wire::kMaxFrameBytes) return false;
  const size_t end = pos + *frame < head.size() ? pos + *frame : head.size();
  const std::string_view packet = head.substr(0, end);
  while (pos < packet.size()) {
    const std::optional<uint64_t> key = Varint(packet, &pos);
    if (!key) return false;
    const uint64_t field = *key >> 3, type = *key & 7;
    if ((field == f::packet::kSequence || field == f::packet::kTimestampNs) &&
        type == 0) {
      if (!Varint(packet, &pos)) return false;
      continue;
    }
    if (field != f::packet::kHello || type != 2) return false;
    const std::optional<uint64_t> hello = Varint(packet, &pos);
    if (!hello || *hello < 9 || *hello > *frame) return false;
    // Hello.magic: field 1, wire type 1 (fixed64), then 8 bytes.
    return pos + 9 <= packet.size() &&
           static_cast<uint8_t>(packet[pos]) == ((f::hello::kMagic << 3) | 1);
  }
  return false;
}

Status RftSource::Read(const std::string& path, const SourceOptions& options,
                       RunRecorder* recorder, SourceResult* result) const {
  if (!options.counters_path.empty()) {
    return InvalidArgument(
        path + ": --counters " + options.counters_path +
        ": a rooftrace trace measures its own counters (rooftrace profile "
        "--mode counters); import it without --counters");
  }
  RT_RETURN_IF_ERROR(CheckTraceFile(path));
  IngestResult ingest;
  RT_RETURN_IF_ERROR(
      IngestFileInto(path, recorder, &ingest, options.progress));
  result->warning = ingest.warning;
  result->cut_short = ingest.cut_short;
  return OkStatus();
}

}  // namespace rooftrace
