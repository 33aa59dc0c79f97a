// Bounded multi-producer / multi-consumer queue of fixed-size values
// (records for the sender; CUPTI buffers for the buffer pool).
//
// Policy: the caller's. When the queue is full, TryPush() fails at once and
// the caller counts a drop or, in lossless mode, tries again (the producer
// decides: producer.h). Slots are allocated once at construction, or given
// (the producer's live buffer: proto/live_buffer.h, whose reader relies on
// the sequence protocol below); push and pop never touch the heap.
// Lock-free (a sequence number per slot: position + 1 once written,
// position + capacity once free again). A slot stores its sequence minus
// its index, so all-zero memory is a fresh empty queue: a live buffer's
// pages are taken only as records reach them, never all at start.
#ifndef ROOFTRACE_LIBINJECT_RECORD_QUEUE_H_
#define ROOFTRACE_LIBINJECT_RECORD_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "proto/live_buffer.h"

namespace rooftrace::inject {

template <typename T>
class BoundedQueue {
 public:
  using Slot = SequencedSlot<T>;

  // `capacity` is rounded up to a power of two (at least 2).
  explicit BoundedQueue(size_t capacity) {
    const size_t c = RoundCapacity(capacity);
    owned_ = std::unique_ptr<Slot[]>(new Slot[c]);
    for (size_t i = 0; i < c; ++i) {
      owned_[i].seq.store(0, std::memory_order_relaxed);
    }
    Init(owned_.get(), c);
  }
  // Over `slots` (`capacity` of them, a power of two), owned elsewhere.
  BoundedQueue(Slot* slots, size_t capacity) { Init(slots, capacity); }

  static size_t RoundCapacity(size_t capacity) {
    size_t c = 2;
    while (c < capacity) c <<= 1;
    return c;
  }
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  size_t capacity() const { return mask_ + 1; }

  // Producer side. False when full (the record is dropped by the caller).
  bool TryPush(const T& value) {
    return TryEmplace([&value](T& slot) { slot = value; });
  }

  // Like TryPush, but `fill(T&)` writes the slot in place, so a producer
  // copies only the bytes it uses (a small record in a large union).
  template <typename Fill>
  bool TryEmplace(Fill&& fill) {
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[pos & mask_];
      const size_t seq = Load(slot, pos);
      const intptr_t diff =
          static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          fill(slot.value);
          Store(slot, pos, pos + 1);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Consumer side, for a single consumer that frees slots itself: copies
  // the next value out and says its position, but keeps the slot taken
  // until Release(position), so the value stays readable in the slot
  // (the live buffer's reader finds it there if this process dies before
  // the value reached the stream). False when empty.
  bool TryPopHeld(T* out, uint64_t* position) {
    return TryPopHeldWith([out](const T& value) { *out = value; }, position);
  }
  // Like TryPopHeld, but hands the value to `visit(const T&)` in its slot,
  // so a consumer copies only the part it uses (a small record in a large
  // union).
  template <typename Visit>
  bool TryPopHeldWith(Visit&& visit, uint64_t* position) {
    const size_t pos = head_.load(std::memory_order_relaxed);
    Slot& slot = slots_[pos & mask_];
    if (Load(slot, pos) != pos + 1) return false;  // empty (or being written)
    visit(static_cast<const T&>(slot.value));
    head_.store(pos + 1, std::memory_order_relaxed);
    *position = pos;
    return true;
  }
  // Frees the slot of a position TryPopHeld() returned.
  void Release(uint64_t position) {
    Store(slots_[position & mask_], position, position + mask_ + 1);
  }
  // The next position TryPopHeld() will return.
  uint64_t head() const { return head_.load(std::memory_order_relaxed); }

  // Consumer side. False when empty.
  bool TryPop(T* out) {
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[pos & mask_];
      const size_t seq = Load(slot, pos);
      const intptr_t diff =
          static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          *out = slot.value;
          Store(slot, pos, pos + mask_ + 1);
          return true;
        }
      } else if (diff < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // Approximate number of queued values (for stats and tests).
  size_t SizeApprox() const {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    const size_t head = head_.load(std::memory_order_relaxed);
    return tail >= head ? tail - head : 0;
  }

 private:
  // Given slots must be zero-filled (a fresh mapping is).
  void Init(Slot* slots, size_t capacity) {
    slots_ = slots;
    mask_ = capacity - 1;
  }
  // The sequence of the slot of `pos` (stored as sequence - slot index).
  size_t Load(const Slot& slot, size_t pos) const {
    return slot.seq.load(std::memory_order_acquire) + (pos & mask_);
  }
  void Store(Slot& slot, size_t pos, size_t seq) {
    slot.seq.store(seq - (pos & mask_), std::memory_order_release);
  }

  std::unique_ptr<Slot[]> owned_;
  Slot* slots_ = nullptr;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> tail_{0};
  alignas(64) std::atomic<size_t> head_{0};
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_RECORD_QUEUE_H_
