// Reads an Nsight Systems SQLite export (`nsys export --type sqlite`) into
// the pipeline: one Session per profiled process (globalPid) with its
// kernels (CUPTI_ACTIVITY_KIND_KERNEL), kernel/graph launches and copy
// calls (CUPTI_ACTIVITY_KIND_RUNTIME, classified by API name), copies and
// memsets (CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET), NVTX ranges (NVTX_EVENTS,
// with parents and depths; each launch in the innermost push/pop range open
// on its thread at launch time, as libinject records it) and GPUs
// (TARGET_INFO_GPU, mapped per process by TARGET_INFO_CUDA_DEVICE where the
// export has it). Columns are looked up by name, so exports of other nsys
// versions read as far as their columns allow; what was missing is said in
// SourceResult::warning. docs/import.md lists what is read from where.
//
// The tables are streamed, merged by time, and the sessions stored in
// windows (RunRecorder::MaybeFlush): memory does not grow with the file.
//
// Stateless functions; each call opens the file read-only on its own.
#ifndef ROOFTRACE_SOURCES_NSYS_NSYS_READER_H_
#define ROOFTRACE_SOURCES_NSYS_NSYS_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "pipeline/recorder.h"
#include "sources/counter_match.h"
#include "sources/source.h"

namespace rooftrace::nsys {

// Whether each table is read on a thread of its own, beside the pipeline
// (default: when the machine has more than one core). For benchmarks.
void SetTableThreads(bool threaded);
bool TableThreads();

// What the SQLite file at `path` looks like: an Nsight Systems export (its
// tables, and not a rooftrace store's), something else, or a file whose
// table list cannot be read (damaged, not SQLite). Never fails.
enum class ExportProbe { kExport, kNotExport, kUnreadable };
ExportProbe ProbeNsysExport(const std::string& path);
inline bool LooksLikeNsysExport(const std::string& path) {
  return ProbeNsysExport(path) == ExportProbe::kExport;
}

// Everything that can be known to be wrong before a row is written: the
// file opens and is an export with CUDA activity, --pid / --rank name a
// process in it. Errors name the file and the fix.
Status CheckNsysExport(const std::string& path, const SourceOptions& options);

// Reads `path` into `recorder` (whose run is begun): CheckNsysExport()
// first, then every table. A file that breaks part-way keeps what came
// before and says where in result->warning.
Status ReadNsysExport(const std::string& path, const SourceOptions& options,
                      RunRecorder* recorder, SourceResult* result);

}  // namespace rooftrace::nsys

#endif  // ROOFTRACE_SOURCES_NSYS_NSYS_READER_H_
