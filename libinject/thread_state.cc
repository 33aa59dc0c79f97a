#include "libinject/thread_state.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rooftrace::inject {

std::atomic<uint64_t> g_fork_generation{1};

namespace {
void BumpForkGeneration() {
  g_fork_generation.fetch_add(1, std::memory_order_relaxed);
}
// Registered when the library loads, so that every fork is seen (also one
// before the process producer starts, and in tests).
[[maybe_unused]] const int kForkHandler =
    pthread_atfork(nullptr, nullptr, &BumpForkGeneration);
}  // namespace

namespace internal {

constinit thread_local ThreadState t_thread_state{};

void StartGeneration(ThreadState& state, uint64_t generation) {
  state.generation = generation;
  state.tid = static_cast<uint32_t>(syscall(SYS_gettid));
  state.frame_count = 0;
  state.overflow = 0;
  state.gemm_depth = 0;
  state.gemm_call_id = 0;
  state.gemm_correlation_count = 0;
  state.runtime_depth = 0;
}

}  // namespace internal

}  // namespace rooftrace::inject
