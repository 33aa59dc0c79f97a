// Reads protobuf wire format field by field, without libprotobuf: for
// libinject (which must not link it) and for the collector's packet decoder
// (sources/rft/packet_decoder.h), where generated parsing was the cost of
// ingest. Header-only so the hot loop inlines.
//
// Accepts exactly what libprotobuf's parser accepts at this level: tags of
// at most five bytes (bits past 32 dropped) with a non-zero field number,
// varints of at most ten bytes, wire types 0, 1, 2, 5 and groups (3 ...
// matching 4, skipped whole, nested at most kMaxGroupDepth deep). Anything else stops the reader with
// ok() false; "at the end" and "malformed" are told apart by ok().
//
// Value type; not thread-safe. The trap: the views it returns point into the
// buffer it was given.
#ifndef ROOFTRACE_PROTO_WIRE_READER_H_
#define ROOFTRACE_PROTO_WIRE_READER_H_

#include <cstdint>
#include <cstring>
#include <string_view>

#include "proto/field_numbers.h"

namespace rooftrace::wire {

class WireReader {
 public:
  static constexpr int kMaxGroupDepth = 100;  // libprotobuf's default

  // `depth`: how deep the message read sits in the outermost one (groups
  // and messages share libprotobuf's recursion limit).
  explicit WireReader(std::string_view data, int depth = 0)
      : p_(reinterpret_cast<const uint8_t*>(data.data())),
        end_(p_ + data.size()),
        depth_(depth) {}

  // Reads the next field: its number and wire type, and its value: varints
  // and fixed-width values in *value (fixed32/64 as raw bits), bytes in
  // *bytes. A group is skipped whole and reported with wire type 3. Returns
  // false at the end of the data or on malformed input (ok() false).
  bool Next(uint32_t* field, uint32_t* wire_type, uint64_t* value,
            std::string_view* bytes) {
    if (p_ == end_) return false;
    uint32_t tag;
    if (!Tag(&tag)) return Fail();
    *field = tag >> 3;
    *wire_type = tag & 7;
    return Value(*field, *wire_type, value, bytes, depth_) || Fail();
  }

  bool ok() const { return ok_; }

  // Reads one varint from the front of `*data` (packed repeated fields);
  // false when it is malformed.
  static bool ReadPackedVarint(std::string_view* data, uint64_t* value) {
    WireReader r(*data);
    if (!r.Varint(value)) return false;
    data->remove_prefix(static_cast<size_t>(
        r.p_ - reinterpret_cast<const uint8_t*>(data->data())));
    return true;
  }

 private:
  bool Fail() {
    ok_ = false;
    p_ = end_;
    return false;
  }

  bool Varint(uint64_t* out) {
    // Fast path: one byte.
    if (p_ < end_ && *p_ < 0x80) {
      *out = *p_++;
      return true;
    }
    uint64_t v = 0;
    for (int i = 0; i < 10; ++i) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (b < 0x80) {
        *out = v;
        return true;
      }
    }
    return false;  // an eleventh byte would follow
  }

  bool Tag(uint32_t* tag) {
    uint64_t v = 0;
    for (int i = 0; i < 5; ++i) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (b < 0x80) {
        // Bits past 32 are dropped, as libprotobuf's tag reader does.
        *tag = static_cast<uint32_t>(v);
        return (*tag >> 3) != 0;
      }
    }
    return false;
  }

  bool Value(uint32_t field, uint32_t wire_type, uint64_t* value,
             std::string_view* bytes, int depth) {
    switch (wire_type) {
      case kWireVarint:
        return Varint(value);
      case kWireFixed64:
        if (end_ - p_ < 8) return false;
        std::memcpy(value, p_, 8);  // little-endian hosts only (x86-64, arm64)
        p_ += 8;
        return true;
      case kWireFixed32: {
        if (end_ - p_ < 4) return false;
        uint32_t v;
        std::memcpy(&v, p_, 4);
        *value = v;
        p_ += 4;
        return true;
      }
      case kWireBytes: {
        uint64_t len;
        if (!Varint(&len) || len > static_cast<uint64_t>(end_ - p_)) {
          return false;
        }
        *bytes = std::string_view(reinterpret_cast<const char*>(p_),
                                  static_cast<size_t>(len));
        p_ += len;
        return true;
      }
      case kWireStartGroup:
        return SkipGroup(field, depth + 1);
      default:  // an end-group outside its group, or wire types 6 and 7
        return false;
    }
  }

  bool SkipGroup(uint32_t field, int depth) {
    if (depth > kMaxGroupDepth) return false;
    for (;;) {
      uint32_t tag;
      if (p_ == end_ || !Tag(&tag)) return false;
      if ((tag & 7) == kWireEndGroup) return (tag >> 3) == field;
      uint64_t v;
      std::string_view b;
      if (!Value(tag >> 3, tag & 7, &v, &b, depth)) return false;
    }
  }

  const uint8_t* p_;
  const uint8_t* end_;
  int depth_;
  bool ok_ = true;
};

}  // namespace rooftrace::wire

#endif  // ROOFTRACE_PROTO_WIRE_READER_H_
