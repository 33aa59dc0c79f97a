#include "proto/framing.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <sys/stat.h>

namespace rooftrace::wire {

size_t AppendVarint(std::string* out, uint64_t value) {
  uint8_t tmp[kMaxVarintBytes];
  size_t n = EncodeVarint(value, tmp);
  out->append(reinterpret_cast<const char*>(tmp), n);
  return n;
}

size_t FrameHeaderBytes(size_t payload_bytes) {
  uint8_t tmp[kMaxVarintBytes];
  return 1 + EncodeVarint(payload_bytes, tmp);
}

void AppendFrame(std::string* out, std::string_view payload) {
  out->push_back(static_cast<char>(kPacketTag));
  AppendVarint(out, payload.size());
  out->append(payload.data(), payload.size());
}

std::string HumanBytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= (1ull << 30) && bytes % (1ull << 20) != 0) {
    snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  } else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) {
    snprintf(buf, sizeof buf, "%llu MiB",
             static_cast<unsigned long long>(bytes >> 20));
  } else if (bytes >= 1000000) {
    snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  } else {
    snprintf(buf, sizeof buf, "%llu bytes",
             static_cast<unsigned long long>(bytes));
  }
  return buf;
}

FrameReader::FrameReader(size_t max_frame_bytes)
    : max_frame_bytes_(max_frame_bytes) {}

void FrameReader::Feed(const void* data, size_t size) {
  if (corrupt_ || size == 0) return;
  // Compact before growing so a long stream does not grow the buffer.
  if (start_ > 0 && (start_ == buffer_.size() || start_ >= buffer_.size() / 2)) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(static_cast<const char*>(data), size);
}

FrameReader::Result FrameReader::Fail(std::string message) {
  corrupt_ = true;
  error_ = std::move(message);
  return Result::kCorrupt;
}

FrameReader::Result FrameReader::Next(std::string_view* payload) {
  if (corrupt_) return Result::kCorrupt;
  const size_t avail = buffer_.size() - start_;
  if (avail == 0) {
    // A buffer grown for a big frame is given back once it is taken, so
    // that an idle connection holds no memory the collector's budget
    // (collector/server.h) no longer counts.
    constexpr size_t kKeepCapacity = 1 << 20;
    if (buffer_.capacity() > kKeepCapacity) {
      std::string().swap(buffer_);
      start_ = 0;
    }
    return Result::kNeedMore;
  }
  const auto* p = reinterpret_cast<const uint8_t*>(buffer_.data() + start_);
  if (p[0] != kPacketTag) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "frame %llu at byte %llu starts with 0x%02x, not 0x%02x "
             "(a Trace.packet field)",
             static_cast<unsigned long long>(frames_read_ + 1),
             static_cast<unsigned long long>(consumed_offset_), p[0],
             kPacketTag);
    return Fail(msg);
  }
  uint64_t length = 0;
  size_t i = 1;
  int shift = 0;
  for (;; ++i) {
    if (i > kMaxVarintBytes) {
      char msg[128];
      snprintf(msg, sizeof msg,
               "frame %llu at byte %llu has a length longer than 10 bytes",
               static_cast<unsigned long long>(frames_read_ + 1),
               static_cast<unsigned long long>(consumed_offset_));
      return Fail(msg);
    }
    if (i >= avail) return Result::kNeedMore;
    const uint8_t b = p[i];
    if (shift < 64) length |= static_cast<uint64_t>(b & 0x7f) << shift;
    shift += 7;
    if ((b & 0x80) == 0) break;
  }
  const size_t header = i + 1;
  if (length > max_frame_bytes_) {
    char msg[192];
    snprintf(msg, sizeof msg,
             "frame %llu at byte %llu declares %s (limit %s)",
             static_cast<unsigned long long>(frames_read_ + 1),
             static_cast<unsigned long long>(consumed_offset_),
             HumanBytes(length).c_str(), HumanBytes(max_frame_bytes_).c_str());
    return Fail(msg);
  }
  if (avail - header < length) return Result::kNeedMore;
  *payload = std::string_view(buffer_.data() + start_ + header, length);
  start_ += header + length;
  consumed_offset_ += header + length;
  ++frames_read_;
  return Result::kFrame;
}

size_t FrameReader::pending_frame_bytes() const {
  const size_t avail = buffer_.size() - start_;
  if (corrupt_ || avail == 0) return avail;
  const auto* p = reinterpret_cast<const uint8_t*>(buffer_.data() + start_);
  uint64_t length = 0;
  int shift = 0;
  for (size_t i = 1; i < avail && i <= kMaxVarintBytes; ++i) {
    if (shift < 64) length |= static_cast<uint64_t>(p[i] & 0x7f) << shift;
    shift += 7;
    if ((p[i] & 0x80) == 0) {
      // Next() refuses a length over the limit: never more than that here.
      const uint64_t frame =
          i + 1 + std::min<uint64_t>(length, max_frame_bytes_);
      return std::max<size_t>(avail, static_cast<size_t>(frame));
    }
  }
  return avail;
}

TraceFileReader::~TraceFileReader() {
  if (file_ != nullptr) fclose(file_);
}

Status TraceFileReader::Open(const std::string& path, size_t max_frame_bytes) {
  path_ = path;
  reader_ = FrameReader(max_frame_bytes);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": " + strerror(errno) +
                    ": check the path of the trace file");
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgument(path + ": is a directory, not a trace file");
  }
  file_ = fopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    return Unavailable(path + ": cannot open: " + strerror(errno));
  }
  file_bytes_ = static_cast<uint64_t>(st.st_size);
  return OkStatus();
}

TraceFileReader::Result TraceFileReader::Next(std::string_view* payload) {
  constexpr size_t kChunk = 1 << 20;
  // On the heap, once per reading thread: a static thread_local array
  // would be static TLS that every thread of the process pays for, and
  // threads with small stacks (an embedded HTTP server's) cannot start.
  static thread_local std::unique_ptr<char[]> chunk_holder;
  if (!chunk_holder) chunk_holder = std::make_unique<char[]>(kChunk);
  char* const chunk = chunk_holder.get();
  for (;;) {
    switch (reader_.Next(payload)) {
      case FrameReader::Result::kFrame:
        return Result::kFrame;
      case FrameReader::Result::kCorrupt:
        error_ = path_ + ": " + reader_.error() +
                 ": the file is corrupt or not a rooftrace trace";
        return Result::kCorrupt;
      case FrameReader::Result::kNeedMore:
        break;
    }
    if (eof_ || file_ == nullptr) {
      if (reader_.buffered_bytes() == 0) return Result::kEnd;
      char msg[200];
      snprintf(msg, sizeof msg,
               ": ends inside frame %llu (%zu bytes of it at byte %llu): the "
               "trace was cut short; the %llu frames before it are intact",
               static_cast<unsigned long long>(reader_.frames_read() + 1),
               reader_.buffered_bytes(),
               static_cast<unsigned long long>(reader_.consumed_offset()),
               static_cast<unsigned long long>(reader_.frames_read()));
      error_ = path_ + msg;
      return Result::kTruncated;
    }
    size_t n = fread(chunk, 1, kChunk, file_);
    if (n < kChunk) {
      if (ferror(file_)) {
        error_ = path_ + ": read error: " + strerror(errno);
        return Result::kIoError;
      }
      eof_ = true;
    }
    bytes_read_ += n;
    reader_.Feed(chunk, n);
  }
}

}  // namespace rooftrace::wire
