#include "sources/registry.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "base/file_digest.h"
#include "base/input_file.h"
#include "sources/file_reader.h"
#include "sources/kineto/kineto_source.h"
#include "sources/ncu/ncu_source.h"
#include "sources/nsys/nsys_source.h"
#include "sources/rft/live_ops.h"
#include "sources/rft/rft_source.h"

namespace rooftrace {

const std::vector<const TraceSource*>& TraceSources() {
  // Adding a format: its folder under sources/ and one line here.
  // Every detector is strict (rft decodes its first frame up to the Hello's
  // magic; Kineto needs a JSON object naming "traceEvents"; nsys its CUPTI
  // tables; ncu its CSV header), so the order only sets --help's listing.
  static const KinetoSource kineto;
  static const RftSource rft;
  static const NsysSource nsys;
  static const NcuSource ncu;
  static const std::vector<const TraceSource*> sources = {&rft, &kineto,
                                                          &nsys, &ncu};
  return sources;
}

std::string SourceFormatList() {
  std::string out;
  for (const TraceSource* s : TraceSources()) {
    if (!out.empty()) out += ", ";
    out += std::string(s->format()) + " (" + std::string(s->description()) +
           ")";
  }
  return out;
}

StatusOr<const TraceSource*> FindSource(std::string_view format) {
  for (const TraceSource* s : TraceSources()) {
    if (s->format() == format) return s;
  }
  return InvalidArgument("unknown trace format '" + std::string(format) +
                         "'; rooftrace reads " + SourceFormatList());
}

StatusOr<const TraceSource*> DetectSource(const std::string& path) {
  RT_RETURN_IF_ERROR(CheckInputIsAFile(path));
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgument(path + ": is a directory, not a trace file");
  }
  RT_ASSIGN_OR_RETURN(const std::string head, ReadHead(path));
  if (head.empty()) {
    return InvalidArgument(path + ": the file is empty; rooftrace reads " +
                           SourceFormatList());
  }
  for (const TraceSource* s : TraceSources()) {
    if (s->Detect(path, head)) return s;
  }
  return InvalidArgument(path +
                         ": not a trace format rooftrace knows; it reads " +
                         SourceFormatList() +
                         " (name one with --format if detection fails)");
}

StatusOr<std::shared_ptr<const CounterFile>> ReadCounterFile(
    const std::string& path, const GzipBudget& budget) {
  RT_ASSIGN_OR_RETURN(CounterFile file, ncu::ReadNcuCounterFile(path, budget));
  return std::make_shared<const CounterFile>(std::move(file));
}

StatusOr<SourceResult> ReadSourceInto(const TraceSource& source,
                                      const std::string& path,
                                      const SourceOptions& given,
                                      RunSink* sink) {
  SourceOptions options = given;
  if (!options.capture_paths.empty() && source.format() != "kineto") {
    return InvalidArgument(
        path + ": --capture " + options.capture_paths.front() +
        ": only a PyTorch profiler (Kineto) trace's graph launches are "
        "mapped to a capture, and this file is " +
        std::string(source.format()));
  }
  if (!options.counters_path.empty() && options.counters == nullptr) {
    RT_ASSIGN_OR_RETURN(options.counters,
                        ReadCounterFile(options.counters_path,
                                        options.gzip_budget));
  }
  RecorderOptions ro;
  ro.origin = source.Origin(path);
  ro.source_format = std::string(source.format());
  ro.source_file = path;
  ro.labels = options.labels;
  ro.device_profile_path = options.device_profile_path;
  ro.device_key = options.device_key;
  ro.flush_records = options.flush_records;
  ro.sink = sink;
  // A stream's operator ranges (the ops route) are costed by the importer.
  ro.preparer = LiveOpsPreparer(options);
  RT_ASSIGN_OR_RETURN(auto recorder, RunRecorder::Create(ro));
  // The file's hash is computed beside the read (the file is in the page
  // cache for both), on the other core.
  StatusOr<std::string> sha256 = std::string();
  std::thread hasher([&] { sha256 = Sha256OfFile(path); });
  SourceResult result;
  Status read = source.Read(path, options, recorder.get(), &result);
  hasher.join();
  RT_RETURN_IF_ERROR(read);
  RT_RETURN_IF_ERROR(sha256.status());
  recorder->SetSourceSha256(*sha256);
  RT_RETURN_IF_ERROR(recorder->Finish());
  result.run_id = recorder->run_id();
  result.kernels = recorder->kernels_stored();
  return result;
}

}  // namespace rooftrace
