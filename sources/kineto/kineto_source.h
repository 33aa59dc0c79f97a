// PyTorch profiler (Kineto) Chrome-trace JSON as a source (plain, or gzip:
// the registry's file reader decompresses; sources/kineto/kineto_reader.h
// does the reading). Detected by content: a JSON object that names
// "traceEvents" in the file's first 64 KiB.
#ifndef ROOFTRACE_SOURCES_KINETO_KINETO_SOURCE_H_
#define ROOFTRACE_SOURCES_KINETO_KINETO_SOURCE_H_

#include "sources/source.h"

namespace rooftrace {

class KinetoSource : public TraceSource {
 public:
  std::string_view format() const override { return "kineto"; }
  std::string_view description() const override {
    return "PyTorch profiler (Kineto) JSON";
  }
  bool Detect(const std::string& path, std::string_view head) const override;
  std::string Origin(const std::string& path) const override {
    return "import:" + path;
  }
  Status Read(const std::string& path, const SourceOptions& options,
              RunRecorder* recorder, SourceResult* result) const override;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_KINETO_KINETO_SOURCE_H_
