// CUPTI activity buffers: the pool CUPTI fills and the decoder that turns
// completed buffers into Kernel / Memcpy / Device records.
//
// ActivityBufferPool: `buffer_count` buffers are allocated when the pool is
// created; OnRequested()/OnCompleted() run on CUPTI's threads and move
// pointers through lock-free queues (no locks). When all are in use the pool
// grows, one buffer per request, up to `max_buffers` (the only heap use, in
// CUPTI's buffer request, as NVIDIA's samples and Kineto allocate there):
// a refused request is costly, since CUPTI then dropped every later record
// of that queue (counters mode on the H100: one refusal, then 1,167 of
// 1,407 kernel records lost). Past `max_buffers` the pool hands CUPTI no
// buffer, so CUPTI drops records and counts them (reported as
// Stats.cupti_records_dropped). Buffers are freed with the pool.
// ForBudget() sizes it by bytes (ROOFTRACE_ACTIVITY_BUFFER_MB): what
// matters is the memory CUPTI may hold, and CUPTI keeps a buffer that
// holds an incomplete record however little of it is used.
// Thread-safe.
//
// ActivityDecoder: sender thread only. Reads records with the table's
// ActivityGetNextRecord, converts timestamps with CuptiToMonotonicNs(),
// interns kernel names and applies the KernelFilter.
#ifndef ROOFTRACE_LIBINJECT_ACTIVITY_H_
#define ROOFTRACE_LIBINJECT_ACTIVITY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "libinject/clock.h"
#include "libinject/cupti_api.h"
#include "proto/wire_encoder.h"
#include "libinject/kernel_filter.h"
#include "libinject/record_queue.h"
#include "libinject/string_interner.h"

namespace rooftrace::inject {

class ActivityBufferPool {
 public:
  struct Completed {
    uint8_t* buffer = nullptr;
    size_t valid_bytes = 0;
  };

  // max_buffers below buffer_count means buffer_count (no growth).
  ActivityBufferPool(size_t buffer_count, size_t buffer_bytes,
                     size_t max_buffers = 0);
  // Buffers of `buffer_bytes`, as many as `budget_bytes` holds (at least
  // one); up to `initial_count` of them allocated now.
  static std::unique_ptr<ActivityBufferPool> ForBudget(size_t budget_bytes,
                                                       size_t buffer_bytes,
                                                       size_t initial_count);
  ~ActivityBufferPool();
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  // CUPTI's buffer-requested callback.
  void OnRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  // CUPTI's buffer-completed callback. A buffer with no valid bytes goes
  // straight back to the pool.
  void OnCompleted(uint8_t* buffer, size_t valid_bytes);

  // Sender side.
  bool TakeCompleted(Completed* out) {
    if (!completed_.TryPop(out)) return false;
    completed_count_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  // Completed buffers not yet taken (for the debug log).
  size_t completed_count() const {
    return completed_count_.load(std::memory_order_relaxed);
  }
  void Release(uint8_t* buffer);

  size_t buffer_bytes() const { return buffer_bytes_; }
  // Buffers allocated so far (the initial ones and those grown).
  size_t buffer_count() const {
    return allocated_.load(std::memory_order_acquire);
  }
  // The most buffers it will hold.
  size_t max_buffers() const { return buffers_.size(); }
  uint64_t times_exhausted() const {
    return exhausted_.load(std::memory_order_relaxed);
  }
  // Requests answered with a buffer, and buffers CUPTI handed back (empty
  // ones included), since the pool was made.
  uint64_t buffers_given() const {
    return given_.load(std::memory_order_relaxed);
  }
  uint64_t buffers_returned() const {
    return returned_.load(std::memory_order_relaxed);
  }

 private:
  uint8_t* Grow();

  size_t buffer_bytes_;
  // max_buffers slots, filled in order; allocated_ counts the filled ones.
  std::vector<std::atomic<uint8_t*>> buffers_;
  std::atomic<size_t> allocated_{0};
  std::atomic<size_t> completed_count_{0};
  BoundedQueue<uint8_t*> free_;
  BoundedQueue<Completed> completed_;
  std::atomic<uint64_t> exhausted_{0};
  std::atomic<uint64_t> given_{0};
  std::atomic<uint64_t> returned_{0};
};

// Counts of one decode pass (added to the producer's Stats by the caller).
struct DecodeCounts {
  uint64_t kernels_seen = 0;
  uint64_t kernels_filtered = 0;
  uint64_t memcpys_seen = 0;
  uint64_t devices_seen = 0;
  uint64_t other_records = 0;
};

class ActivityDecoder {
 public:
  ActivityDecoder(const CuptiApi* api, StringInterner* interner,
                  KernelFilter* filter)
      : api_(api), interner_(interner), filter_(filter) {}

  void set_clock_offset(ClockOffset offset) { offset_ = offset; }
  // Fills what the CUPTI device record lacks (memory clock, bus width, PCI
  // bus, driver version) from the driver; unset in tests.
  void set_device_enricher(std::function<void(DeviceInfo*)> fn) {
    enricher_ = std::move(fn);
  }

  // Appends the records of one completed buffer.
  void Decode(uint8_t* buffer, size_t valid_bytes,
              std::vector<KernelInfo>* kernels,
              std::vector<MemcpyInfo>* memcpys,
              std::vector<DeviceInfo>* devices, DecodeCounts* counts);

 private:
  const CuptiApi* api_;
  StringInterner* interner_;
  KernelFilter* filter_;
  ClockOffset offset_;
  std::function<void(DeviceInfo*)> enricher_;
};

// CUPTI memcpy / memory kinds -> wire enums (exposed for tests).
uint32_t CopyKindFromCupti(uint32_t cupti_copy_kind);
uint32_t MemoryKindFromCupti(uint32_t cupti_memory_kind);
// "GPU-5fd3c2a1-...": the usual text form of a CUDA UUID.
std::string FormatUuid(const unsigned char bytes[16]);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_ACTIVITY_H_
