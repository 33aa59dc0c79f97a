// The one framing library of rooftrace: writes and reads `Trace.packet`
// frames (tag 0x0A, varint length, payload) with a hard size limit.
//
// Used by libinject's sinks (writer side), the collector's connections and
// spool ingest, and the analyzer (reader side). No dependency on libprotobuf,
// so it links into the injected library.
#ifndef ROOFTRACE_PROTO_FRAMING_H_
#define ROOFTRACE_PROTO_FRAMING_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "base/status.h"
#include "proto/wire_constants.h"

namespace rooftrace::wire {

// Appends `value` as a base-128 varint. Returns the bytes written (1..10).
size_t AppendVarint(std::string* out, uint64_t value);
// Writes `value` as a varint into `dst` (at least kMaxVarintBytes long).
// Inline: the producer's encoder calls it twice per field.
inline size_t EncodeVarint(uint64_t value, uint8_t* dst) {
  size_t n = 0;
  while (value >= 0x80) {
    dst[n++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  dst[n++] = static_cast<uint8_t>(value);
  return n;
}

// Appends one frame holding `payload` (an encoded Packet).
void AppendFrame(std::string* out, std::string_view payload);

// Bytes of framing in front of a payload of `payload_bytes`.
size_t FrameHeaderBytes(size_t payload_bytes);

// Incremental frame reader over a byte stream that arrives in any chunking.
// Owned by one connection or file reader; not thread-safe.
// "Need more bytes" (kNeedMore) is not "corrupt": only a wrong tag, a varint
// longer than 10 bytes, or a declared length above the limit is kCorrupt, and
// kCorrupt is sticky (the stream cannot be resynchronised).
class FrameReader {
 public:
  enum class Result { kFrame, kNeedMore, kCorrupt };

  explicit FrameReader(size_t max_frame_bytes = kMaxFrameBytes);

  // Appends bytes received from the peer or file.
  void Feed(const void* data, size_t size);
  void Feed(std::string_view bytes) { Feed(bytes.data(), bytes.size()); }

  // Extracts the next complete frame. On kFrame, `*payload` points into the
  // reader's buffer and stays valid until the next Feed() or Next().
  Result Next(std::string_view* payload);

  // Why the stream is corrupt (empty otherwise), e.g.
  // "frame 1832 at byte 123456 declares 3.1 GB (limit 64 MiB)".
  const std::string& error() const { return error_; }
  // Bytes buffered but not yet part of a returned frame: at end of input,
  // non-zero means the stream was truncated.
  size_t buffered_bytes() const { return buffer_.size() - start_; }
  uint64_t frames_read() const { return frames_read_; }
  // Stream offset of the first byte not yet returned as part of a frame.
  uint64_t consumed_offset() const { return consumed_offset_; }
  // Whether the buffered partial frame declares more than the limit without
  // being complete; used to close peers that would make us buffer too much.
  size_t max_frame_bytes() const { return max_frame_bytes_; }
  // What the frame at the front will hold once complete (its header and
  // declared payload) when its header has arrived, else what is buffered:
  // the memory the peer has asked for, known from the frame's first bytes.
  size_t pending_frame_bytes() const;
  // The bytes the buffer holds allocated. Once every frame is taken, a
  // buffer grown past 1 MiB is given back.
  size_t capacity_bytes() const { return buffer_.capacity(); }

 private:
  Result Fail(std::string message);

  size_t max_frame_bytes_;
  std::string buffer_;
  size_t start_ = 0;  // first unconsumed byte in buffer_
  uint64_t frames_read_ = 0;
  uint64_t consumed_offset_ = 0;
  bool corrupt_ = false;
  std::string error_;
};

// Reads frames from a trace file (.rft spool or raw trace) in chunks, with
// bounded memory. Not thread-safe.
class TraceFileReader {
 public:
  enum class Result { kFrame, kEnd, kCorrupt, kTruncated, kIoError };

  TraceFileReader() = default;
  ~TraceFileReader();
  TraceFileReader(const TraceFileReader&) = delete;
  TraceFileReader& operator=(const TraceFileReader&) = delete;

  // Opens `path`. Errors name the file and the fix.
  Status Open(const std::string& path,
              size_t max_frame_bytes = kMaxFrameBytes);

  // Next frame; `*payload` stays valid until the next call.
  // kEnd: clean end of file. kTruncated: the file ends inside a frame.
  // kCorrupt / kIoError: see error().
  Result Next(std::string_view* payload);

  // One line naming the file, the frame and byte offset, and what is wrong.
  const std::string& error() const { return error_; }
  uint64_t frames_read() const { return reader_.frames_read(); }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t file_bytes() const { return file_bytes_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  FILE* file_ = nullptr;
  FrameReader reader_;
  uint64_t bytes_read_ = 0;
  uint64_t file_bytes_ = 0;
  bool eof_ = false;
  std::string error_;
};

// "64 MiB", "3.1 GB": sizes for messages.
std::string HumanBytes(uint64_t bytes);

}  // namespace rooftrace::wire

#endif  // ROOFTRACE_PROTO_FRAMING_H_
