// Maps 64-bit ids (correlation ids, GEMM call ids) to record indices for
// the join: open addressing with linear probing in one array, so building
// it allocates once instead of once per entry as std::unordered_map does,
// and a reused index allocates nothing. The first index inserted for an id
// stays (as unordered_map::emplace does).
//
// Value type; not thread-safe.
#ifndef ROOFTRACE_PIPELINE_FLAT_INDEX_H_
#define ROOFTRACE_PIPELINE_FLAT_INDEX_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rooftrace {

class FlatIndex {
 public:
  // Empties the index and sizes it for `n` ids; keeps the memory it has.
  // At most two thirds full: a found id takes two probes on average, most
  // in one cache line. (Half full at most, the index of a 5 M-launch
  // import took 256 MiB, not 128, beside the records at the reader's and
  // the join's peaks.)
  void Reset(size_t n) {
    size_t cap = 16;
    while (cap < n + n / 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    size_ = 0;
  }

  // Inserts id -> index unless `id` is present. Ids are any 64-bit value.
  void Emplace(uint64_t id, int32_t index) {
    for (size_t i = Hash(id) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.index < 0) {
        s = {id, index};
        ++size_;
        return;
      }
      if (s.id == id) return;
    }
  }

  // The index of `id`, or -1.
  int32_t Find(uint64_t id) const {
    if (size_ == 0) return -1;
    for (size_t i = Hash(id) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.index < 0) return -1;
      if (s.id == id) return s.index;
    }
  }

  bool empty() const { return size_ == 0; }

  // The farthest any id sits from the slot its hash names (0: every id in
  // its own slot): how long the longest Find is. For tests and benchmarks.
  size_t LongestProbe() const {
    size_t longest = 0;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].index < 0) continue;
      longest = std::max(longest, (i - Hash(slots_[i].id)) & mask_);
    }
    return longest;
  }

 private:
  struct Slot {
    uint64_t id = 0;
    int32_t index = -1;  // -1: empty
  };
  static size_t Hash(uint64_t id) {
    // Ids are often consecutive: mix them so runs do not cluster. (Keeping
    // blocks of eight consecutive ids in neighbouring slots, for the cache,
    // was tried: 5% off a join whose ids are consecutive, but four times the
    // mean probe length and a slower join of strided ids.)
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return static_cast<size_t>(id);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_FLAT_INDEX_H_
