// Per-thread state of libinject: the OS thread id, the NVTX push/pop stack,
// the cuBLAS call in progress (re-entry depth and the kernels it launched)
// and the CUPTI API call in progress.
//
// One thread_local instance per thread, reached through CurrentThread(). A
// fork bumps the process generation; a thread whose state is from an older
// generation (the forking thread, continuing in the child) starts clean, so
// a child never reuses its parent's thread id or open ranges.
// Not shared between threads: no locks.
#ifndef ROOFTRACE_LIBINJECT_THREAD_STATE_H_
#define ROOFTRACE_LIBINJECT_THREAD_STATE_H_

#include <atomic>
#include <cstdint>

#include "proto/capture_records.h"

namespace rooftrace::inject {

inline constexpr int kMaxNvtxDepth = 128;

struct NvtxFrame {
  uint64_t range_id;
  uint64_t domain_iid;
  uint64_t name_iid;
  uint64_t start_ns;
  uint64_t parent_range_id;
  uint32_t depth;  // within its domain
  uint32_t category;
  uint32_t color_argb;
};

struct ThreadState {
  uint64_t generation = 0;
  uint32_t tid = 0;

  // NVTX push/pop ranges open on this thread, innermost last. Deeper
  // nesting than kMaxNvtxDepth is counted in `overflow` and not recorded.
  NvtxFrame frames[kMaxNvtxDepth];
  uint32_t frame_count = 0;
  uint32_t overflow = 0;

  // cuBLAS / cuBLASLt interposition: depth > 1 means a hooked call made
  // from inside another (cublasGemmEx -> cublasLtMatmul), not recorded again.
  uint32_t gemm_depth = 0;
  uint64_t gemm_call_id = 0;
  uint64_t gemm_correlations[kMaxGemmCorrelations];
  uint32_t gemm_correlation_count = 0;
  // The outermost hooked call's record while it is being made (its shape
  // is a part of a launch's kernel signature in counters mode); null
  // outside a hooked call.
  const GemmRecord* gemm_record = nullptr;

  // CUPTI API callbacks: runtime depth > 0 means a driver call made by the
  // runtime (the runtime call is the one recorded).
  uint32_t runtime_depth = 0;
  uint64_t runtime_start_ns = 0;
  uint64_t driver_start_ns = 0;
  // Counters mode: correlation id + 1 of the launch this thread is in
  // (between its API enter and exit), profiled or not; 0 when none.
  uint64_t counters_launch = 0;

  uint64_t InnermostRangeId() const {
    return frame_count == 0 ? 0 : frames[frame_count - 1].range_id;
  }
};

// Incremented in the child after every fork (an atfork handler registered
// when the library loads).
extern std::atomic<uint64_t> g_fork_generation;

namespace internal {
// Every thread's state, constant-initialized: an access is a TLS address
// and no initialization guard (every launch callback takes it, some twice).
extern constinit thread_local ThreadState t_thread_state;
// A state first used in `generation` (a new thread, or the forking thread
// continuing in the child): its own thread id, nothing open.
void StartGeneration(ThreadState& state, uint64_t generation);
}  // namespace internal

// This thread's state, reset if it is from before a fork. No heap. Inline:
// it is on every launch callback's path (issue 26).
inline ThreadState& CurrentThread() {
  ThreadState& state = internal::t_thread_state;
  const uint64_t generation = g_fork_generation.load(std::memory_order_relaxed);
  if (state.generation != generation) [[unlikely]] {
    internal::StartGeneration(state, generation);
  }
  return state;
}

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_THREAD_STATE_H_
