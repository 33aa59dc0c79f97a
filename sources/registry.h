// The sources rooftrace knows (sources/source.h), listed in one place
// (registry.cc), and what every command that reads a trace does with them:
// detect a file's format by its content (never its extension; gzip is read
// transparently), and read one file as one run into a sink.
//
// Thread-safe (the list is immutable).
#ifndef ROOFTRACE_SOURCES_REGISTRY_H_
#define ROOFTRACE_SOURCES_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "pipeline/sink.h"
#include "sources/file_reader.h"
#include "sources/source.h"

namespace rooftrace {

// Every source, in detection order.
const std::vector<const TraceSource*>& TraceSources();

// "rft, kineto, ..." for --help and errors.
std::string SourceFormatList();

// The source named `format` (--format); InvalidArgument listing the known
// formats otherwise.
StatusOr<const TraceSource*> FindSource(std::string_view format);

// The source whose Detect() accepts `path`. NotFound for a missing file;
// InvalidArgument naming the file, what it looks like and the formats
// rooftrace reads otherwise.
StatusOr<const TraceSource*> DetectSource(const std::string& path);

// The counter file of import --counters (an Nsight Compute CSV), read once
// for every file the counters are attached to. Errors name the file and
// the fix. A gzip file is read within `budget`.
StatusOr<std::shared_ptr<const CounterFile>> ReadCounterFile(
    const std::string& path, const GzipBudget& budget = GzipBudget());

// Reads `path` with `source` as one new run into `sink`: a RunRecorder with
// the source's origin, the source's Read(), then the run's end. A
// counters_path whose counters are not yet read is read first, before the
// run begins.
StatusOr<SourceResult> ReadSourceInto(const TraceSource& source,
                                      const std::string& path,
                                      const SourceOptions& options,
                                      RunSink* sink);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_REGISTRY_H_
