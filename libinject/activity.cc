#include "libinject/activity.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rooftrace::inject {

ActivityBufferPool::ActivityBufferPool(size_t buffer_count,
                                       size_t buffer_bytes, size_t max_buffers)
    : buffer_bytes_(buffer_bytes),
      buffers_(std::max(buffer_count, max_buffers)),
      free_(std::max(buffer_count, max_buffers)),
      completed_(std::max(buffer_count, max_buffers)) {
  for (size_t i = 0; i < buffer_count; ++i) {
    uint8_t* b = Grow();
    if (b == nullptr) break;
    free_.TryPush(b);
  }
}

std::unique_ptr<ActivityBufferPool> ActivityBufferPool::ForBudget(
    size_t budget_bytes, size_t buffer_bytes, size_t initial_count) {
  const size_t max = std::max<size_t>(1, budget_bytes / buffer_bytes);
  return std::make_unique<ActivityBufferPool>(std::min(initial_count, max),
                                              buffer_bytes, max);
}

ActivityBufferPool::~ActivityBufferPool() {
  for (auto& b : buffers_) std::free(b.load(std::memory_order_relaxed));
}

uint8_t* ActivityBufferPool::Grow() {
  size_t slot = allocated_.load(std::memory_order_relaxed);
  do {
    if (slot >= buffers_.size()) return nullptr;
  } while (!allocated_.compare_exchange_weak(slot, slot + 1,
                                             std::memory_order_acq_rel));
  // CUPTI requires 8-byte alignment; page alignment is harmless.
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(4096, buffer_bytes_));
  buffers_[slot].store(b, std::memory_order_release);
  return b;  // a failed allocation leaves its slot empty for good
}

void ActivityBufferPool::OnRequested(uint8_t** buffer, size_t* size,
                                     size_t* max_records) {
  uint8_t* b = nullptr;
  *max_records = 0;  // as many as fit
  if (free_.TryPop(&b) || (b = Grow()) != nullptr) {
    *buffer = b;
    *size = buffer_bytes_;
    given_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  exhausted_.fetch_add(1, std::memory_order_relaxed);
  *buffer = nullptr;  // CUPTI drops records and counts them
  *size = 0;
}

void ActivityBufferPool::OnCompleted(uint8_t* buffer, size_t valid_bytes) {
  if (buffer == nullptr) return;
  returned_.fetch_add(1, std::memory_order_relaxed);
  if (valid_bytes != 0) {
    // Counted before the push, so a taker never sees the count below zero.
    completed_count_.fetch_add(1, std::memory_order_relaxed);
    if (completed_.TryPush(Completed{buffer, valid_bytes})) return;
    completed_count_.fetch_sub(1, std::memory_order_relaxed);
  }
  // Empty, or not ours (the completed queue holds every buffer of the
  // pool, so TryPush only fails for a foreign one): back to the free list.
  Release(buffer);
}

void ActivityBufferPool::Release(uint8_t* buffer) { free_.TryPush(buffer); }

uint32_t CopyKindFromCupti(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return wire::enums::kCopyHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return wire::enums::kCopyDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return wire::enums::kCopyDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return wire::enums::kCopyHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return wire::enums::kCopyPtoP;
    default:
      return wire::enums::kCopyUnknown;
  }
}

uint32_t MemoryKindFromCupti(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return wire::enums::kMemoryPageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return wire::enums::kMemoryPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return wire::enums::kMemoryDevice;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return wire::enums::kMemoryArray;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return wire::enums::kMemoryManaged;
    default:
      return wire::enums::kMemoryUnknown;
  }
}

std::string FormatUuid(const unsigned char b[16]) {
  char out[48];
  snprintf(out, sizeof out,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
           "%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
           b[11], b[12], b[13], b[14], b[15]);
  return out;
}

namespace {

uint32_t Positive(int32_t v) { return v > 0 ? static_cast<uint32_t>(v) : 0; }

// One CUPTI record each, in CUDA 13's layouts (activity.h), timestamps
// converted to the host clock.
KernelInfo FromKernel(const CUpti_ActivityKernel10& k, uint64_t name_iid,
                      ClockOffset offset) {
  KernelInfo info;
  info.correlation_id = k.correlationId;
  info.start_ns = CuptiToMonotonicNs(k.start, offset);
  info.end_ns = CuptiToMonotonicNs(k.end, offset);
  info.device_id = k.deviceId;
  info.context_id = k.contextId;
  info.stream_id = k.streamId;
  info.name_iid = name_iid;
  info.grid[0] = Positive(k.gridX);
  info.grid[1] = Positive(k.gridY);
  info.grid[2] = Positive(k.gridZ);
  info.block[0] = Positive(k.blockX);
  info.block[1] = Positive(k.blockY);
  info.block[2] = Positive(k.blockZ);
  info.cluster[0] = k.clusterX;
  info.cluster[1] = k.clusterY;
  info.cluster[2] = k.clusterZ;
  info.registers_per_thread = k.registersPerThread;
  info.static_shared_memory_bytes = Positive(k.staticSharedMemory);
  info.dynamic_shared_memory_bytes = Positive(k.dynamicSharedMemory);
  info.graph_id = k.graphId;
  info.graph_node_id = k.graphNodeId;
  return info;
}

MemcpyInfo FromMemcpy(const CUpti_ActivityMemcpy6& m, ClockOffset offset) {
  MemcpyInfo info;
  info.correlation_id = m.correlationId;
  info.start_ns = CuptiToMonotonicNs(m.start, offset);
  info.end_ns = CuptiToMonotonicNs(m.end, offset);
  info.bytes = m.bytes;
  info.kind = CopyKindFromCupti(m.copyKind);
  info.device_id = m.deviceId;
  info.context_id = m.contextId;
  info.stream_id = m.streamId;
  info.src_kind = MemoryKindFromCupti(m.srcKind);
  info.dst_kind = MemoryKindFromCupti(m.dstKind);
  info.graph_id = m.graphId;
  return info;
}

MemcpyInfo FromPeerCopy(const CUpti_ActivityMemcpyPtoP4& m,
                        ClockOffset offset) {
  MemcpyInfo info;
  info.correlation_id = m.correlationId;
  info.start_ns = CuptiToMonotonicNs(m.start, offset);
  info.end_ns = CuptiToMonotonicNs(m.end, offset);
  info.bytes = m.bytes;
  info.kind = wire::enums::kCopyPtoP;
  info.device_id = m.srcDeviceId;
  info.context_id = m.contextId;
  info.stream_id = m.streamId;
  info.src_kind = MemoryKindFromCupti(m.srcKind);
  info.dst_kind = MemoryKindFromCupti(m.dstKind);
  info.graph_id = m.graphId;
  info.dst_device_id = m.dstDeviceId;
  return info;
}

MemcpyInfo FromMemset(const CUpti_ActivityMemset4& m, ClockOffset offset) {
  MemcpyInfo info;
  info.correlation_id = m.correlationId;
  info.start_ns = CuptiToMonotonicNs(m.start, offset);
  info.end_ns = CuptiToMonotonicNs(m.end, offset);
  info.bytes = m.bytes;
  info.kind = wire::enums::kCopyMemset;
  info.device_id = m.deviceId;
  info.context_id = m.contextId;
  info.stream_id = m.streamId;
  info.dst_kind = MemoryKindFromCupti(m.memoryKind);
  info.memset_value = m.value;
  info.graph_id = m.graphId;
  return info;
}

DeviceInfo FromDevice(const CUpti_ActivityDevice5& d) {
  DeviceInfo info;
  info.device_id = d.id;
  info.name = d.name != nullptr ? d.name : "";
  info.uuid = FormatUuid(reinterpret_cast<const unsigned char*>(&d.uuid));
  info.sm_count = d.numMultiprocessors;
  info.cc_major = d.computeCapabilityMajor;
  info.cc_minor = d.computeCapabilityMinor;
  info.core_clock_khz = d.coreClockRate;
  info.l2_cache_bytes = d.l2CacheSize;
  info.global_memory_bytes = d.globalMemorySize;
  return info;
}

template <typename T>
const T& As(const CUpti_Activity* record) {
  return *reinterpret_cast<const T*>(record);
}

}  // namespace

void ActivityDecoder::Decode(uint8_t* buffer, size_t valid_bytes,
                             std::vector<KernelInfo>* kernels,
                             std::vector<MemcpyInfo>* memcpys,
                             std::vector<DeviceInfo>* devices,
                             DecodeCounts* counts) {
  CUpti_Activity* record = nullptr;
  // Not through RT_CUPTI_CALL: the iterator ends with
  // CUPTI_ERROR_MAX_LIMIT_REACHED, which is no error.
  while (api_->ActivityGetNextRecord(buffer, valid_bytes, &record) ==
         CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto& k = As<CUpti_ActivityKernel10>(record);
        ++counts->kernels_seen;
        const char* name = k.name != nullptr ? k.name : "<unknown kernel>";
        if (filter_ != nullptr && !filter_->Keep(name)) {
          ++counts->kernels_filtered;
          break;
        }
        kernels->push_back(FromKernel(k, interner_->Intern(name), offset_));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        ++counts->memcpys_seen;
        memcpys->push_back(
            FromMemcpy(As<CUpti_ActivityMemcpy6>(record), offset_));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        ++counts->memcpys_seen;
        memcpys->push_back(
            FromPeerCopy(As<CUpti_ActivityMemcpyPtoP4>(record), offset_));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        ++counts->memcpys_seen;
        memcpys->push_back(
            FromMemset(As<CUpti_ActivityMemset4>(record), offset_));
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE: {
        ++counts->devices_seen;
        DeviceInfo info = FromDevice(As<CUpti_ActivityDevice5>(record));
        if (enricher_) enricher_(&info);
        devices->push_back(std::move(info));
        break;
      }
      default:
        ++counts->other_records;  // contexts and kinds we do not send
        break;
    }
  }
}

}  // namespace rooftrace::inject
