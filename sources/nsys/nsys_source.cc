#include "sources/nsys/nsys_source.h"

#include <cstring>

#include "sources/nsys/nsys_reader.h"

namespace rooftrace {

bool NsysSource::Detect(const std::string& path, std::string_view head) const {
  static constexpr char kSqliteMagic[16] = "SQLite format 3";  // + '\0'
  if (head.size() < 16 || std::memcmp(head.data(), kSqliteMagic, 16) != 0) {
    return false;
  }
  switch (nsys::ProbeNsysExport(path)) {
    case nsys::ExportProbe::kExport:
      return true;
    case nsys::ExportProbe::kNotExport:
      return false;
    case nsys::ExportProbe::kUnreadable:
      // A damaged export (cut short, overwritten pages): its table list
      // cannot be read, but the CREATE TABLE text near its start names
      // nsys's tables. Read() then says it is damaged and how to redo it.
      for (std::string_view table :
           {"CUPTI_ACTIVITY_KIND_", "NVTX_EVENTS", "CREATE TABLE StringIds",
            "CREATE TABLE TARGET_INFO_"}) {
        if (head.find(table) != std::string_view::npos) return true;
      }
      return false;
  }
  return false;
}

Status NsysSource::Read(const std::string& path, const SourceOptions& options,
                        RunRecorder* recorder, SourceResult* result) const {
  return nsys::ReadNsysExport(path, options, recorder, result);
}

}  // namespace rooftrace
