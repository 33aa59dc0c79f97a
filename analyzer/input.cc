#include "analyzer/input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/input_file.h"
#include "sources/registry.h"
#include "store/db.h"
#include "store/store.h"

namespace rooftrace::analyzer {

StatusOr<DetectedInput> DetectInput(const std::string& path) {
  // A PostgreSQL store: StoreReader::Open says if it is not ours.
  if (IsPostgresUrl(path)) return DetectedInput();
  RT_RETURN_IF_ERROR(CheckInputIsAFile(path));
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": " + std::strerror(errno) +
                    "; pass an existing run store (.sqlite) or trace");
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgument(path +
                           ": is a directory; pass a run store or a trace");
  }
  RT_ASSIGN_OR_RETURN(const std::string head, ReadHead(path));
  DetectedInput out;
  for (const TraceSource* s : TraceSources()) {
    if (!head.empty() && s->Detect(path, head)) {
      out.kind = InputKind::kTrace;
      out.source = s;
      return out;
    }
  }
  static constexpr char kSqliteMagic[16] = "SQLite format 3";  // + '\0'
  if (head.size() >= 16 && std::memcmp(head.data(), kSqliteMagic, 16) == 0) {
    return out;  // a store; StoreReader::Open says if it is not ours
  }
  return InvalidArgument(
      path + ": not a rooftrace store or trace (" +
      (head.empty() ? std::string("the file is empty")
                    : "it starts with neither the SQLite header nor a "
                      "trace format rooftrace reads") +
      "); pass a store written by `rooftrace profile -o`/`collect --store`, "
      "or a trace: " + SourceFormatList());
}

StatusOr<InputKind> DetectInputKind(const std::string& path) {
  RT_ASSIGN_OR_RETURN(const DetectedInput in, DetectInput(path));
  return in.kind;
}

AnalyzerInput::~AnalyzerInput() {
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  }
}

StatusOr<std::unique_ptr<AnalyzerInput>> AnalyzerInput::Open(
    const std::string& path, const InputOptions& options) {
  RT_ASSIGN_OR_RETURN(const DetectedInput detected, DetectInput(path));
  std::unique_ptr<AnalyzerInput> in(new AnalyzerInput());
  in->kind_ = detected.kind;
  in->path_ = path;
  if (detected.kind == InputKind::kStore) {
    RT_RETURN_IF_ERROR(in->store_.Open(path, StoreDisplayName(path)));
    return in;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") +
                      "/rooftrace-analyze-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    return Unavailable("cannot create a temporary directory for reading " +
                       path + " (" + std::strerror(errno) +
                       "); set TMPDIR to a writable directory");
  }
  in->temp_dir_ = buf.data();
  const std::string store_path = in->temp_dir_ + "/ingested.sqlite";
  SourceOptions source_options;
  source_options.device_profile_path = options.device_profile_path;
  source_options.capture_paths = options.capture_paths;
  source_options.model = options.model;
  {
    // Read once and deleted: no journal, no syncs.
    RT_ASSIGN_OR_RETURN(
        std::unique_ptr<Store> store,
        Store::Open(store_path, Store::Durability::kScratch));
    RT_ASSIGN_OR_RETURN(const SourceResult result,
                        ReadSourceInto(*detected.source, path,
                                       source_options, store.get()));
    in->ingest_warning_ = result.warning;
    in->cut_short_ = result.cut_short;
  }
  RT_RETURN_IF_ERROR(in->store_.Open(store_path, path));
  return in;
}

}  // namespace rooftrace::analyzer
