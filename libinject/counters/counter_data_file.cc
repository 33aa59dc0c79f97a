#include "libinject/counters/counter_data_file.h"

#include <cstring>

namespace rooftrace::counters {
namespace {

constexpr char kMagic[8] = {'R', 'F', 'C', 'N', 'T', 'R', '0', '1'};

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutBytes(std::vector<uint8_t>& out, const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}

// Bounds-checked little-endian reader over the input.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool U32(uint32_t* v) {
    if (size_ - pos_ < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= uint32_t{data_[pos_ + i]} << (8 * i);
    pos_ += 4;
    return true;
  }
  bool U64(uint64_t* v) {
    if (size_ - pos_ < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t{data_[pos_ + i]} << (8 * i);
    pos_ += 8;
    return true;
  }
  bool Bytes(uint64_t n, const uint8_t** p) {
    if (size_ - pos_ < n) return false;
    *p = data_ + pos_;
    pos_ += static_cast<size_t>(n);
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t Fnv1a64(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::vector<uint8_t> SerializeCounterDataFile(const CounterDataFile& file) {
  std::vector<uint8_t> out;
  PutBytes(out, kMagic, sizeof(kMagic));
  PutU32(out, static_cast<uint32_t>(file.chip.size()));
  PutBytes(out, file.chip.data(), file.chip.size());
  PutU32(out, static_cast<uint32_t>(file.metric_names.size()));
  for (const std::string& m : file.metric_names) {
    PutU32(out, static_cast<uint32_t>(m.size()));
    PutBytes(out, m.data(), m.size());
  }
  PutU64(out, file.image.size());
  PutBytes(out, file.image.data(), file.image.size());
  PutU64(out, Fnv1a64(out.data(), out.size()));
  return out;
}

StatusOr<CounterDataFile> ParseCounterDataFile(const uint8_t* data, size_t size,
                                               std::string_view source) {
  const std::string where(source);
  auto corrupt = [&](const std::string& what) {
    return Corrupt(where + ": " + what +
                   ": not a rooftrace counter-data file, or damaged; record "
                   "it again on the GPU");
  };
  if (data == nullptr || size < sizeof(kMagic) ||
      std::memcmp(data, kMagic, sizeof(kMagic)) != 0) {
    return corrupt("missing the RFCNTR01 magic");
  }
  Reader r(data, size);
  const uint8_t* p = nullptr;
  r.Bytes(sizeof(kMagic), &p);
  CounterDataFile out;
  uint32_t chip_len = 0;
  if (!r.U32(&chip_len) || chip_len == 0 || chip_len > kMaxChipNameBytes ||
      !r.Bytes(chip_len, &p)) {
    return corrupt("bad chip name length");
  }
  out.chip.assign(reinterpret_cast<const char*>(p), chip_len);
  uint32_t count = 0;
  if (!r.U32(&count) || count > kMaxMetricCount) {
    return corrupt("bad metric count");
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t len = 0;
    if (!r.U32(&len) || len == 0 || len > kMaxMetricNameBytes ||
        !r.Bytes(len, &p)) {
      return corrupt("bad name of metric " + std::to_string(i));
    }
    out.metric_names.emplace_back(reinterpret_cast<const char*>(p), len);
  }
  uint64_t image_len = 0;
  if (!r.U64(&image_len) || image_len > kMaxCounterImageBytes ||
      !r.Bytes(image_len, &p)) {
    return corrupt("bad counter-data image length");
  }
  out.image.assign(p, p + image_len);
  const size_t checked = r.pos();
  uint64_t checksum = 0;
  if (!r.U64(&checksum)) return corrupt("truncated before the checksum");
  if (checksum != Fnv1a64(data, checked)) return corrupt("checksum mismatch");
  if (r.pos() != size) {
    return corrupt(std::to_string(size - r.pos()) +
                   " unexpected byte(s) after the checksum");
  }
  return out;
}

}  // namespace rooftrace::counters
