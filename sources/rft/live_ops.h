// The live ops route's collector side: a live session's operator ranges
// (the NVTX domain wire::kTorchOpsDomain, sent by the injected Python
// startup hook through libinject/ops_route.h) tied to the kernels they
// launched and costed by the importer itself.
//
// The session's kernels, launches, annotations (NVTX ranges and the hook's
// record_function ranges) and operators are written out as the Kineto
// trace torch.profiler would have written for the same run, and that text
// goes through the Kineto importer's parser and assembler
// (kineto::AssembleKinetoText): the same sweep gives each launch the
// innermost operator open on its thread, and the same op models
// (sources/kineto/op_shapes.h, gemm_shapes.h) cost it. What that gives, the
// GEMM calls and operators with their links by correlation id and the
// collectives' metrics, is added to the live session; everything else of
// the live session (its kernels, cuBLAS calls, counters, NVTX ranges) stays
// as it was. A launch whose cuBLAS call libinject recorded keeps that call:
// it is exact, an operator's shapes are the same GEMM seen from above. So a
// live run and an import of a torch.profiler trace of the same work give
// the same figures (tests/sources/rft/live_ops_test.cc proves it on the
// recorded real traces).
//
// Thread-compatible: one session at a time (the recorder's lock).
#ifndef ROOFTRACE_SOURCES_RFT_LIVE_OPS_H_
#define ROOFTRACE_SOURCES_RFT_LIVE_OPS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "pipeline/recorder.h"
#include "pipeline/session.h"
#include "sources/source.h"

namespace rooftrace {

// What CostLiveOps did.
struct LiveOpsResult {
  uint64_t ops = 0;        // operator ranges found
  uint64_t malformed = 0;  // of them, unreadable (skipped)
  uint64_t kernels = 0;    // kernels tied to an operator or its GEMM
  std::string warning;     // the importer's warning, if any
};

// Whether `session` holds any operator range: of the ops route's domain,
// or a range of torch's NVTX emission with shapes (EmitNvtxOpText).
bool HoldsOpsRanges(const Session& session);

// torch's NVTX emission with shapes (emit_nvtx(record_shapes=True), and
// nsys --pytorch=autograd-shapes-nvtx) names a range "aten::addmm, seq =
// 12, op_id = 7, sizes = [[16, 1024], [1024, 2816], []], input_op_ids =
// [...]": that range as the ops route's text, "NAME<TAB>{"Input Dims":
// [...]}", or nullopt for any other text. It has no types: CostLiveOps
// gives its tensors the type its kernels' names say
// (TorchTypeOfKernelName), and leaves it uncosted when none says one.
std::optional<std::string> EmitNvtxOpText(std::string_view text);

// The torch type a kernel's name says its data is ("c10::BFloat16" for
// ..._bf16_..., "c10::Half", "float", "double"); empty when it names none,
// or more than one.
std::string_view TorchTypeOfKernelName(std::string_view kernel);

// Ties `session`'s operator ranges to its kernels and costs them (above).
// A session without operator ranges is left untouched. Errors only for a
// failure of the importer itself; a range that cannot be read is counted.
// The counts also go to the session's statistics (ops_received,
// ops_malformed, kernels_from_ops).
StatusOr<LiveOpsResult> CostLiveOps(Session* session,
                                    const SourceOptions& options);

// The recorder's preparer for live and .rft sessions (RecorderOptions::
// preparer): sessions with operator ranges are joined whole, after
// CostLiveOps.
std::shared_ptr<SessionPreparer> LiveOpsPreparer(const SourceOptions& options);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_RFT_LIVE_OPS_H_
