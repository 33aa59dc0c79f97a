// The ops route's way into the stream: operator records handed over by the
// injected Python startup hook (libinject/python/rooftrace_torch_ops.py),
// which reads them from torch's own CPU-only profiler, become NVTX-like
// ranges of the domain kOpsDomain, one per operator. Each range's name is
// the operator as the hook describes it: its name, a tab, then a JSON
// object with the profiler's record_shapes fields ("Input Dims", "Input
// type", "Input Strides", "Concrete Inputs"), the same fields a Kineto
// trace's cpu_op carries, so the collector costs them with the importer's
// op models (sources/rft/live_ops.h). Ranges travel, are stored and are
// recovered like any NVTX range; nothing on the wire is new.
//
// Thread-safe: SubmitOps may be called from any thread (the hook calls it
// from the host's Python thread that ends a window). It allocates (string
// interning), which is fine there: it is never called from a CUDA or CUPTI
// callback.
#ifndef ROOFTRACE_LIBINJECT_OPS_ROUTE_H_
#define ROOFTRACE_LIBINJECT_OPS_ROUTE_H_

#include <cstddef>
#include <cstdint>

#include "libinject/producer.h"
#include "proto/wire_constants.h"

namespace rooftrace::inject {

// The NVTX domain of operator ranges (the name format is the wire
// contract's, proto/wire_constants.h).
inline constexpr const char* kOpsDomain = wire::kTorchOpsDomain;

// What one SubmitOps call did with its lines.
struct OpsSubmitted {
  uint64_t accepted = 0;  // ranges emitted (a full queue still counts them
                          // as seen and dropped in the producer's stats)
  uint64_t malformed = 0;  // lines that are not "START END TID DEPTH\tDESC"
};

// Emits one range per line of `buf` (`len` bytes, lines ended by '\n'):
// "START_NS END_NS THREAD_ID DEPTH\tDESCRIPTION", times in CLOCK_MONOTONIC
// nanoseconds (the wire's clock), the thread the kernel-time id the host's
// launches carry (gettid). A line with END < START, a zero time or no
// description is malformed and skipped.
OpsSubmitted SubmitOps(Producer* producer, const char* buf, size_t len);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_OPS_ROUTE_H_
