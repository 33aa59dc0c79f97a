#include "sources/registry.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "sources/nsys/nsys_source.h"
#include "sources/rft/rft_source.h"

namespace rooftrace {

const std::vector<const TraceSource*>& TraceSources() {
  // Adding a format: its folder under sources/ and one line here.
  static const RftSource rft;
  static const NsysSource nsys;
  static const std::vector<const TraceSource*> sources = {&rft, &nsys};
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

StatusOr<std::string> ReadHead(const std::string& path, size_t max_bytes) {
  // gzread() passes a file that is not gzip through unchanged.
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return NotFound(path + ": cannot read: " + std::strerror(errno));
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(f, gzclose);
  std::string head(max_bytes, '\0');
  const int n = gzread(f, head.data(), static_cast<unsigned>(max_bytes));
  if (n < 0) {
    int code = 0;
    const char* why = gzerror(f, &code);
    return Corrupt(path + ": cannot decompress: " + (why ? why : "error") +
                   "; the gzip file is damaged");
  }
  head.resize(static_cast<size_t>(n));
  return head;
}

StatusOr<const TraceSource*> DetectSource(const std::string& path) {
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

StatusOr<SourceResult> ReadSourceInto(const TraceSource& source,
                                      const std::string& path,
                                      const SourceOptions& options,
                                      RunSink* sink) {
  RecorderOptions ro;
  ro.origin = source.Origin(path);
  ro.device_profile_path = options.device_profile_path;
  ro.flush_records = options.flush_records;
  ro.sink = sink;
  RT_ASSIGN_OR_RETURN(auto recorder, RunRecorder::Create(ro));
  SourceResult result;
  RT_RETURN_IF_ERROR(source.Read(path, options, recorder.get(), &result));
  RT_RETURN_IF_ERROR(recorder->Finish());
  result.run_id = recorder->run_id();
  result.kernels = recorder->kernels_stored();
  return result;
}

}  // namespace rooftrace
