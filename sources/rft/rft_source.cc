#include "sources/rft/rft_source.h"

#include "sources/rft/ingest_internal.h"

namespace rooftrace {

bool RftSource::Detect(const std::string&, std::string_view head) const {
  // 0x0A: field 1 (Trace.packet), length-delimited, the first byte of every
  // rooftrace stream. Read() checks the Hello and says what is wrong.
  return !head.empty() && static_cast<unsigned char>(head[0]) == 0x0A;
}

Status RftSource::Read(const std::string& path, const SourceOptions& options,
                       RunRecorder* recorder, SourceResult* result) const {
  RT_RETURN_IF_ERROR(CheckTraceFile(path));
  IngestResult ingest;
  RT_RETURN_IF_ERROR(
      IngestFileInto(path, recorder, &ingest, options.progress));
  result->warning = ingest.warning;
  return OkStatus();
}

}  // namespace rooftrace
