// A fake of CUPTI's activity buffers for tests without a GPU: it asks the
// tracer for buffers, writes CUpti_ActivityKernel10 records into them and
// hands them back through CuptiTracer's buffer callbacks, keeping what
// CUDA 13's cupti_activity.h says about flushing:
//
//  - cuptiActivityFlushAll, default flush (flag 0): "it returns all the
//    activity buffers which have all the activity records completed,
//    buffers need not to be full though. It doesn't return buffers which
//    have one or more incomplete records."
//  - With CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: "it returns all the activity
//    buffers including the ones which have one or more incomplete activity
//    records."
//  - cuptiActivityFlushPeriod: the periodic flush "can return only those
//    activity buffers which are full and have all the activity records
//    completed" (here: a full buffer is returned at once if complete).
//  - CUpti_BuffersCallbackRequestFunc: "The callback function can decline
//    the request by setting *buffer to NULL. In this case CUPTI may drop
//    activity records." Here the record that needed the buffer is dropped
//    and counted for cuptiActivityGetNumDroppedRecords, whose count resets
//    at each read; the next record asks again.
//  - A record is complete when "it has all the information filled up
//    including the timestamps". A kernel the Range Profiler replayed gets
//    no timestamps (start = end = 0, which the header's kernel record
//    describes as "timestamp information could not be collected for the
//    kernel"): this fake never completes it.
//
// What the header does not say and the fake takes from the H100 (run 7 of
// docs/validation/2026-11-24-h100): a flush closes the buffer being filled
// (later records go to a new buffer) whether or not it returns it. 947
// kernel records came back in 32 buffers of 4 MiB (~30 each, about one
// second of 30 ms profiled launches, the period of libinject's flush),
// where one buffer holds thousands.
//
// One global instance (Fake()); tests Reset() it. Not thread-safe: records
// are added and flushes made by the test's thread or the sender thread,
// never both at once in the tests that use it (the sender only flushes).
#ifndef ROOFTRACE_TESTS_LIBINJECT_FAKE_ACTIVITY_H_
#define ROOFTRACE_TESTS_LIBINJECT_FAKE_ACTIVITY_H_

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "libinject/cupti_api.h"
#include "libinject/tracer.h"

namespace rooftrace::inject::fake {

class FakeActivity {
 public:
  struct Buffer {
    uint8_t* data = nullptr;
    size_t size = 0;
    size_t used = 0;
    int incomplete = 0;  // records never completed
  };

  void Reset() {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = Buffer{};
    closed_.clear();
    dropped_since_read_ = 0;
    dropped_total_ = 0;
    requests_ = refusals_ = normal_flushes_ = forced_flushes_ = 0;
  }

  // A kernel launched: its record goes to the current buffer. `complete`:
  // its timestamps are filled (an ordinary kernel that ran); false for a
  // kernel the Range Profiler replayed.
  void AddKernel(uint32_t correlation, const char* name, bool complete,
                 uint64_t start = 0, uint64_t end = 0) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = correlation;
    k.name = name;
    k.start = complete ? start : 0;
    k.end = complete ? end : 0;
    k.contextId = 1;
    k.streamId = 7;
    k.gridX = 4;
    k.gridY = k.gridZ = 1;
    k.blockX = 128;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 256;
    std::vector<Buffer> deliver;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (current_.data != nullptr &&
          current_.used + sizeof k > current_.size) {
        // Full: handed back now if complete, else kept until forced.
        Close(&deliver);
      }
      if (current_.data == nullptr && !Request()) {
        ++dropped_since_read_;
        ++dropped_total_;
      } else {
        std::memcpy(current_.data + current_.used, &k, sizeof k);
        current_.used += sizeof k;
        if (!complete) ++current_.incomplete;
      }
    }
    Deliver(deliver);
  }

  // cuptiActivityFlushAll.
  CUptiResult FlushAll(uint32_t flag) {
    std::vector<Buffer> deliver;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const bool forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
      ++(forced ? forced_flushes_ : normal_flushes_);
      if (current_.data != nullptr && current_.used > 0) {
        closed_.push_back(current_);
        current_ = Buffer{};
      }
      std::vector<Buffer> kept;
      for (const Buffer& b : closed_) {
        (forced || b.incomplete == 0 ? deliver : kept).push_back(b);
      }
      closed_.swap(kept);
    }
    Deliver(deliver);
    return CUPTI_SUCCESS;
  }

  // cuptiActivityGetNumDroppedRecords: dropped since the previous read.
  CUptiResult Dropped(size_t* dropped) {
    std::lock_guard<std::mutex> lock(mu_);
    *dropped = dropped_since_read_;
    dropped_since_read_ = 0;
    return CUPTI_SUCCESS;
  }

  // Buffers CUPTI holds and did not hand back (closed, incomplete).
  size_t stranded() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_.size();
  }
  uint64_t dropped_total() {
    std::lock_guard<std::mutex> lock(mu_);
    return dropped_total_;
  }
  uint64_t normal_flushes() {
    std::lock_guard<std::mutex> lock(mu_);
    return normal_flushes_;
  }
  uint64_t forced_flushes() {
    std::lock_guard<std::mutex> lock(mu_);
    return forced_flushes_;
  }
  uint64_t refusals() {
    std::lock_guard<std::mutex> lock(mu_);
    return refusals_;
  }

 private:
  bool Request() {
    uint8_t* b = nullptr;
    size_t size = 0, max_records = 0;
    ++requests_;
    CuptiTracer::BufferRequested(&b, &size, &max_records);
    if (b == nullptr || size < sizeof(CUpti_ActivityKernel10)) {
      ++refusals_;
      return false;
    }
    current_ = Buffer{b, size, 0, 0};
    return true;
  }
  void Close(std::vector<Buffer>* deliver) {
    if (current_.incomplete == 0) {
      deliver->push_back(current_);
    } else {
      closed_.push_back(current_);
    }
    current_ = Buffer{};
  }
  // Outside the lock: BufferCompleted may wake the sender, which flushes.
  static void Deliver(const std::vector<Buffer>& buffers) {
    for (const Buffer& b : buffers) {
      CuptiTracer::BufferCompleted(nullptr, 0, b.data, b.size, b.used);
    }
  }

  std::mutex mu_;
  Buffer current_;
  std::vector<Buffer> closed_;
  uint64_t dropped_since_read_ = 0;
  uint64_t dropped_total_ = 0;
  uint64_t requests_ = 0, refusals_ = 0;
  uint64_t normal_flushes_ = 0, forced_flushes_ = 0;
};

inline FakeActivity& Fake() {
  static FakeActivity fake;
  return fake;
}

// cuptiActivityGetNextRecord over the fake's back-to-back kernel records.
inline CUptiResult FakeNextRecord(uint8_t* buffer, size_t valid,
                                  CUpti_Activity** record) {
  uint8_t* next = *record == nullptr
                      ? buffer
                      : reinterpret_cast<uint8_t*>(*record) +
                            sizeof(CUpti_ActivityKernel10);
  if (next + sizeof(CUpti_ActivityKernel10) > buffer + valid) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

// The activity entries of a CuptiApi, pointing at Fake().
inline void InstallFakeActivity(CuptiApi* api) {
  api->ActivityGetNextRecord = &FakeNextRecord;
  api->ActivityFlushAll = [](uint32_t flag) { return Fake().FlushAll(flag); };
  api->ActivityGetNumDroppedRecords = [](CUcontext, uint32_t, size_t* d) {
    return Fake().Dropped(d);
  };
}

}  // namespace rooftrace::inject::fake

#endif  // ROOFTRACE_TESTS_LIBINJECT_FAKE_ACTIVITY_H_
