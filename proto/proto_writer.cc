#include "proto/proto_writer.h"

#include <cstring>

#include "proto/field_numbers.h"
#include "proto/framing.h"

namespace rooftrace::inject {

using wire::kWireBytes;
using wire::kWireFixed64;
using wire::kWireVarint;

void ProtoWriter::Varint(uint64_t value) { wire::AppendVarint(out_, value); }

void ProtoWriter::Tag(uint32_t field, uint32_t wire_type) {
  Varint((static_cast<uint64_t>(field) << 3) | wire_type);
}

void ProtoWriter::ForceUint(uint32_t field, uint64_t value) {
  Tag(field, kWireVarint);
  Varint(value);
}

void ProtoWriter::Fixed64(uint32_t field, uint64_t value) {
  if (value == 0) return;
  Tag(field, kWireFixed64);
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  out_->append(bytes, 8);
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
  out_->append(value.data(), value.size());
}

void ProtoWriter::PackedUint(uint32_t field, const uint64_t* values,
                             size_t count) {
  if (count == 0) return;
  const size_t token = BeginMessage(field);
  for (size_t i = 0; i < count; ++i) Varint(values[i]);
  EndMessage(token);
}

size_t ProtoWriter::BeginMessage(uint32_t field) {
  Tag(field, kWireBytes);
  return out_->size();
}

void ProtoWriter::EndMessage(size_t token) {
  const size_t length = out_->size() - token;
  uint8_t header[wire::kMaxVarintBytes];
  const size_t n = wire::EncodeVarint(length, header);
  out_->insert(token, reinterpret_cast<const char*>(header), n);
}

}  // namespace rooftrace::inject
