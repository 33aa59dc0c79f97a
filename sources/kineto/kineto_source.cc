#include "sources/kineto/kineto_source.h"

#include "sources/kineto/kineto_reader.h"

namespace rooftrace {

bool KinetoSource::Detect(const std::string& /*path*/,
                          std::string_view head) const {
  return kineto::LooksLikeKinetoTrace(head);
}

Status KinetoSource::Read(const std::string& path,
                          const SourceOptions& options, RunRecorder* recorder,
                          SourceResult* result) const {
  return kineto::ReadKinetoTrace(path, options, recorder, result);
}

}  // namespace rooftrace
