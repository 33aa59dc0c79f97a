// A minimal protobuf wire-format writer: varints, fixed64, doubles,
// length-delimited strings and nested messages, packed repeated varints.
//
// Why hand-written: libinject lives inside the host process, which may link
// its own (other version of) libprotobuf; we must not bring a second one.
// Field numbers come from field_numbers.h, checked against the generated
// descriptor by a test. Proto3 semantics: scalar fields equal to zero are
// not written (the reader sees the default either way).
//
// Owned by one encoder (the sender thread); not thread-safe. Allocates
// (std::string), so never used on application threads.
#ifndef ROOFTRACE_PROTO_PROTO_WRITER_H_
#define ROOFTRACE_PROTO_PROTO_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rooftrace::inject {

class ProtoWriter {
 public:
  explicit ProtoWriter(std::string* out) : out_(out) {}

  // Scalars; zero values are skipped (proto3 default).
  void Uint(uint32_t field, uint64_t value) {
    if (value != 0) ForceUint(field, value);
  }
  // Signed 32/64-bit int fields (int32/int64, not sint): negative values are
  // written as 10-byte two's complement varints, as protobuf does.
  void Int(uint32_t field, int64_t value) {
    if (value != 0) ForceUint(field, static_cast<uint64_t>(value));
  }
  void Bool(uint32_t field, bool value) {
    if (value) ForceUint(field, 1);
  }
  void Fixed64(uint32_t field, uint64_t value);
  void Double(uint32_t field, double value);
  // Written even when empty only if `always` (repeated string elements).
  void String(uint32_t field, std::string_view value, bool always = false);
  // Always writes the field, even for 0 (elements of unpacked repeated).
  void ForceUint(uint32_t field, uint64_t value);
  // Packed repeated varints; nothing is written for an empty list.
  void PackedUint(uint32_t field, const uint64_t* values, size_t count);

  // Nested message: Begin writes the tag and remembers where the payload
  // starts; End inserts the (minimal) length varint in front of it.
  // Nesting is allowed; Begin/End must pair like brackets.
  size_t BeginMessage(uint32_t field);
  void EndMessage(size_t token);

  std::string* out() { return out_; }

 private:
  void Tag(uint32_t field, uint32_t wire_type);
  void Varint(uint64_t value);

  std::string* out_;
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_PROTO_PROTO_WRITER_H_
