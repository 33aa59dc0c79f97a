// Bounded multi-producer / multi-consumer queue of fixed-size values
// (records for the sender; CUPTI buffers for the buffer pool).
//
// Policy: kDropNewest. When the queue is full, TryPush() fails at once and
// the caller counts a drop; an application thread never waits for the
// sender or the collector. Slots are allocated once at construction; push
// and pop never touch the heap. Lock-free (a sequence number per slot).
#ifndef ROOFTRACE_LIBINJECT_RECORD_QUEUE_H_
#define ROOFTRACE_LIBINJECT_RECORD_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace rooftrace::inject {

enum class QueueFullPolicy { kDropNewest };
inline constexpr const char* kQueueFullPolicyName = "drop-newest";

template <typename T>
class BoundedQueue {
 public:
  // `capacity` is rounded up to a power of two (at least 2).
  explicit BoundedQueue(size_t capacity) {
    size_t c = 2;
    while (c < capacity) c <<= 1;
    mask_ = c - 1;
    slots_ = std::unique_ptr<Slot[]>(new Slot[c]);
    for (size_t i = 0; i < c; ++i) {
      slots_[i].seq.store(i, std::memory_order_relaxed);
    }
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
      const size_t seq = slot.seq.load(std::memory_order_acquire);
      const intptr_t diff =
          static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          fill(slot.value);
          slot.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Consumer side. False when empty.
  bool TryPop(T* out) {
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[pos & mask_];
      const size_t seq = slot.seq.load(std::memory_order_acquire);
      const intptr_t diff =
          static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          *out = slot.value;
          slot.seq.store(pos + mask_ + 1, std::memory_order_release);
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
  struct Slot {
    std::atomic<size_t> seq;
    T value;
  };
  std::unique_ptr<Slot[]> slots_;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> tail_{0};
  alignas(64) std::atomic<size_t> head_{0};
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_RECORD_QUEUE_H_
