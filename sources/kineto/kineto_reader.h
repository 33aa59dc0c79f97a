// Reads a PyTorch profiler (Kineto) Chrome-trace JSON file (plain or gzip)
// into the pipeline: one Session per host process, with
//  - kernels, copies and memsets ("cat" kernel, gpu_memcpy, gpu_memset),
//    joined to their CUDA runtime / driver calls by args.correlation (or,
//    without it, by the ac2g flow that ends where they start);
//    kernels whose call is not in the trace are kept (and counted);
//  - launches: the runtime and driver calls that launch, copy or set
//    memory (sources/nsys/cuda_api_names.h classifies them by name);
//  - GEMM shapes: each kernel launch belongs to the innermost GEMM cpu_op
//    (aten::mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm) with
//    recorded shapes that encloses it on its thread (or, for a kernel
//    without its call, the op its "External id" names), as a GemmRecord
//    (gemm_shapes.h) whose FLOPs and bytes the join counts: analytic;
//  - user annotations (record_function, ProfilerStep#N) as NVTX-like
//    ranges, with parents and depths on their thread; a launch belongs to
//    the innermost one open at its start;
//  - CUPTI range-profiler counters ("cat" cuda_profiler_range) as raw
//    metrics and, from the SASS floating-point instruction counts, measured
//    FLOPs: the n-th range is the n-th kernel (the range profiler
//    serialises kernels, one range each);
//  - devices from "deviceProperties".
// docs/import.md says what is read from where.
//
// Stateless functions; thread-safe.
#ifndef ROOFTRACE_SOURCES_KINETO_KINETO_READER_H_
#define ROOFTRACE_SOURCES_KINETO_KINETO_READER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "pipeline/recorder.h"
#include "sources/source.h"

namespace rooftrace::kineto {

// Whether `head` (a file's first bytes) starts a Kineto / Chrome trace: a
// JSON object (after whitespace) that names "traceEvents".
bool LooksLikeKinetoTrace(std::string_view head);

// Reads `path` into `recorder` (whose run is begun). Errors name the file
// and the fix: a JSON syntax error with its byte offset, a trace without
// GPU kernels, --pid / --rank that match nothing. Nothing is handed to the
// recorder before the whole file has been parsed and checked.
Status ReadKinetoTrace(const std::string& path, const SourceOptions& options,
                       RunRecorder* recorder, SourceResult* result);

// The importer's assembly of a Kineto trace held in memory: `text`
// (`content_size` bytes of JSON; it is padded here) parsed and assembled as
// ReadKinetoTrace does, without counters or captures, into one session per
// selected process, neither started nor handed to a recorder. The live ops
// route (sources/rft/live_ops.h) builds such a trace from a live session so
// that its operators are tied to kernels and costed by this same code.
// `warning` (may be null) receives the import's warning text.
StatusOr<std::vector<std::unique_ptr<Session>>> AssembleKinetoText(
    std::string text, size_t content_size, const std::string& name,
    const SourceOptions& options, std::string* warning);

}  // namespace rooftrace::kineto

#endif  // ROOFTRACE_SOURCES_KINETO_KINETO_READER_H_
