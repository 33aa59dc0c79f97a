// The rooftrace wire stream as a source: .rft spool files and raw traces
// written by libinject (docs/wire.md). Detected by its first frame: a
// Trace.packet field holding a Hello with rooftrace's magic.
#ifndef ROOFTRACE_SOURCES_RFT_RFT_SOURCE_H_
#define ROOFTRACE_SOURCES_RFT_RFT_SOURCE_H_

#include "sources/source.h"

namespace rooftrace {

class RftSource : public TraceSource {
 public:
  std::string_view format() const override { return "rft"; }
  std::string_view description() const override {
    return "rooftrace trace or .rft spool";
  }
  bool Detect(const std::string& path, std::string_view head) const override;
  std::string Origin(const std::string& path) const override {
    return "ingest:" + path;
  }
  Status Read(const std::string& path, const SourceOptions& options,
              RunRecorder* recorder, SourceResult* result) const override;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_RFT_RFT_SOURCE_H_
