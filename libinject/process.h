// The process's producer and its lifecycle: which entry route starts it,
// how a forked child gets its own, and the exit path.
//
// One producer per process, created by whichever route arrives first
// (InitializeInjection, InitializeInjectionNvtx2, the LD_PRELOAD
// constructor, or the first record of a preloaded process that did not yet
// link CUDA) and never destroyed. CUPTI is attached to it once. At exit
// (atexit) it is stopped: bounded flush, Goodbye, CUPTI finalized. In a
// forked child the parent's producer is abandoned untouched and the child
// gets its own on its first record.
//
// Thread-safe: every function may be called from any thread, also from the
// hooks of a host that is forking or exiting. The trap: nothing here may
// take a lock that a thread of the parent could have held across fork()
// without the atfork handlers releasing it in the child.
#ifndef ROOFTRACE_LIBINJECT_PROCESS_H_
#define ROOFTRACE_LIBINJECT_PROCESS_H_

#include "libinject/producer.h"

namespace rooftrace::inject {

enum class EntryRoute { kCudaInjection, kNvtxInjection, kPreload };

// The producer of this process, or null (disabled, standing aside, not yet
// started). In a forked child, starts the child's own producer.
Producer* CurrentProducer();
// Starts the process producer once, whatever the route; later calls return
// the same producer (or null when standing aside). Starts CUPTI tracing for
// kCudaInjection, and for kPreload when the host already links CUDA.
Producer* StartProcessProducer(EntryRoute route);
// LD_PRELOAD into a host without CUDA yet: the process producer starts on
// the first CurrentProducer() call (a cuBLAS hook, an NVTX call) instead.
void StartOnFirstRecord();
// Tests: makes `producer` what CurrentProducer() returns (NVTX handlers and
// cuBLAS hooks reach the producer through it). Null restores none.
void SetCurrentProducerForTesting(Producer* producer);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_PROCESS_H_
