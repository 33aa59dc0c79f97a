#include "proto/proto_writer.h"

#include <cstring>

#include "proto/field_numbers.h"
#include "proto/framing.h"

namespace rooftrace::inject {

using wire::kWireBytes;
using wire::kWireFixed64;
using wire::kWireVarint;

void ProtoWriter::Put(const void* bytes, size_t n) {
  if (staged_ + n > kStageBytes) Flush();
  if (n > kStageBytes) {
    out_->append(static_cast<const char*>(bytes), n);
    return;
  }
  std::memcpy(stage_ + staged_, bytes, n);
  staged_ += n;
}

uint8_t* ProtoWriter::Room(size_t n) {
  if (staged_ + n > kStageBytes) Flush();
  return reinterpret_cast<uint8_t*>(stage_ + staged_);
}

void ProtoWriter::Varint(uint64_t value) {
  staged_ += wire::EncodeVarint(value, Room(wire::kMaxVarintBytes));
}

void ProtoWriter::Tag(uint32_t field, uint32_t wire_type) {
  Varint((static_cast<uint64_t>(field) << 3) | wire_type);
}

void ProtoWriter::ForceUint(uint32_t field, uint64_t value) {
  // Tag and value encoded in place: a record is mostly such fields.
  uint8_t* at = Room(2 * wire::kMaxVarintBytes);
  size_t n = wire::EncodeVarint(
      (static_cast<uint64_t>(field) << 3) | kWireVarint, at);
  n += wire::EncodeVarint(value, at + n);
  staged_ += n;
}

void ProtoWriter::Fixed64(uint32_t field, uint64_t value) {
  if (value == 0) return;
  Tag(field, kWireFixed64);
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  Put(bytes, 8);
}

void ProtoWriter::Double(uint32_t field, double value) {
  uint64_t bits;
  static_assert(sizeof bits == sizeof value);
  std::memcpy(&bits, &value, sizeof bits);
  Fixed64(field, bits);  // +0.0 has all bits zero and is skipped, as proto3
}

void ProtoWriter::String(uint32_t field, std::string_view value, bool always) {
  if (value.empty() && !always) return;
  Tag(field, kWireBytes);
  Varint(value.size());
  Put(value.data(), value.size());
}

void ProtoWriter::PackedUint(uint32_t field, const uint64_t* values,
                             size_t count) {
  if (count == 0) return;
  const size_t token = BeginMessage(field);
  for (size_t i = 0; i < count; ++i) Varint(values[i]);
  EndMessage(token);
}

size_t ProtoWriter::BeginMessage(uint32_t field) {
  // The tag and one byte kept for the length: most nested messages (a
  // record in a batch) are under 128 bytes, and their length then goes in
  // place instead of moving the payload to make room for it.
  uint8_t* at = Room(wire::kMaxVarintBytes + 1);
  size_t n = wire::EncodeVarint(
      (static_cast<uint64_t>(field) << 3) | kWireBytes, at);
  at[n++] = 0;
  staged_ += n;
  ++depth_;
  return size();
}

void ProtoWriter::EndMessage(size_t token) {
  const size_t length = size() - token;
  uint8_t header[wire::kMaxVarintBytes];
  const size_t n = wire::EncodeVarint(length, header);
  // The byte kept for the length is gathered still, or already in *out.
  const size_t at = token - 1;
  if (at >= out_->size()) {
    stage_[at - out_->size()] = static_cast<char>(header[0]);
  } else {
    (*out_)[at] = static_cast<char>(header[0]);
  }
  if (n > 1) {
    Flush();
    out_->insert(token, reinterpret_cast<const char*>(header) + 1, n - 1);
  }
  if (--depth_ == 0) Flush();
}
}  // namespace rooftrace::inject
