// A minimal protobuf wire-format writer: varints, fixed64, doubles,
// length-delimited strings and nested messages, packed repeated varints.
//
// Why hand-written: libinject lives inside the host process, which may link
// its own (other version of) libprotobuf; we must not bring a second one.
// Field numbers come from field_numbers.h, checked against the generated
// descriptor by a test. Proto3 semantics: scalar fields equal to zero are
// not written (the reader sees the default either way).
//
// Bytes are gathered in a small buffer of the writer's own and reach
// `*out` in one append when the outermost message ends (EndMessage at
// depth 0), on Flush() and when the writer is destroyed: a record's dozen
// fields cost one string append instead of a dozen.
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
  ~ProtoWriter() { Flush(); }
  ProtoWriter(const ProtoWriter&) = delete;
  ProtoWriter& operator=(const ProtoWriter&) = delete;

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

  // Nested message: Begin writes the tag and a byte for the length and
  // remembers where the payload starts; End writes the (minimal) length
  // varint in front of it, moving the payload only for one of 128 bytes
  // or more.
  // Nesting is allowed; Begin/End must pair like brackets.
  size_t BeginMessage(uint32_t field);
  void EndMessage(size_t token);

  // Moves what is gathered into *out.
  void Flush() {
    if (staged_ == 0) return;
    out_->append(stage_, staged_);
    staged_ = 0;
  }
  std::string* out() {
    Flush();
    return out_;
  }
  // Drops what is gathered and not yet in *out (a message abandoned).
  void Discard() {
    staged_ = 0;
    depth_ = 0;
  }

 private:
  void Tag(uint32_t field, uint32_t wire_type);
  void Varint(uint64_t value);
  void Put(const void* bytes, size_t n);
  // At least `n` bytes free in the gathering buffer, where the caller
  // writes and then adds to staged_.
  uint8_t* Room(size_t n);
  // Bytes written so far, gathered ones included.
  size_t size() const { return out_->size() + staged_; }

  std::string* out_;
  static constexpr size_t kStageBytes = 512;
  char stage_[kStageBytes];
  size_t staged_ = 0;
  int depth_ = 0;  // open nested messages
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_PROTO_PROTO_WRITER_H_
