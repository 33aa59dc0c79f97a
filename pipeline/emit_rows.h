// The one mapping from a joined session to the rows of docs/store.md
// (pipeline/rows.h): session and device rows, steps, GEMM calls, kernels
// with their annotation, copies and NVTX ranges, handed to a RunSink. Every
// sink (the store, the in-memory report) gets the same rows.
//
// Pure function of its inputs apart from the sink calls and the context it
// advances; thread-compatible.
#ifndef ROOFTRACE_PIPELINE_EMIT_ROWS_H_
#define ROOFTRACE_PIPELINE_EMIT_ROWS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/roof_model.h"
#include "pipeline/flush.h"
#include "pipeline/join.h"
#include "pipeline/rows.h"
#include "pipeline/session.h"
#include "pipeline/sink.h"

namespace rooftrace {

// Run-wide numbering that continues across windows and sessions.
struct RowContext {
  int64_t run_id = 0;
  int64_t steps = 0;  // step ids given so far in the run
};

// Emits the rows of `joined` (a window with `scope`, or the whole ended
// session with nullptr) to `sink`, then EndWrite(). The session's row is
// added by its first write (its id kept in session->flushed()) and brought
// up to date by its last.
Status EmitRows(Session* session, const JoinedSession& joined,
                const WriteScope* scope, RowContext* context, RunSink* sink);

// The roof rows of one device: one per precision class with a peak.
std::vector<RoofRow> RoofRowsOf(int64_t run_id, uint32_t device_id,
                                const Roofs& roofs);

// Text of the wire's enum values as the store keeps them.
std::string_view CopyKindName(int wire_copy_kind);      // "htod", ...
std::string_view MemoryKindName(int wire_memory_kind);  // "pinned", "" ...
std::string_view TransposeName(int wire_transpose);     // "n", "t", "c", ""
std::string_view GemmApiName(int wire_gemm_api);        // "cublasGemmEx", ...

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_EMIT_ROWS_H_
