// Nsight Systems SQLite exports (`nsys export --type sqlite`) as a source
// (sources/nsys/nsys_reader.h does the reading). Detected by content: an
// SQLite file with nsys's tables (StringIds and CUPTI_ACTIVITY_KIND_*,
// NVTX_EVENTS or TARGET_INFO_*); a rooftrace store (schema_info) is not one.
// A damaged file whose table list cannot be read is one when its first
// bytes name nsys's tables, so that the error says what it is.
#ifndef ROOFTRACE_SOURCES_NSYS_NSYS_SOURCE_H_
#define ROOFTRACE_SOURCES_NSYS_NSYS_SOURCE_H_

#include "sources/source.h"

namespace rooftrace {

class NsysSource : public TraceSource {
 public:
  std::string_view format() const override { return "nsys"; }
  std::string_view description() const override {
    return "Nsight Systems SQLite export";
  }
  bool Detect(const std::string& path, std::string_view head) const override;
  std::string Origin(const std::string& path) const override {
    return "import:" + path;
  }
  Status Read(const std::string& path, const SourceOptions& options,
              RunRecorder* recorder, SourceResult* result) const override;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_NSYS_NSYS_SOURCE_H_
