#include "analyzer/input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#ifdef ROOFTRACE_HAVE_INGEST
#include "collector/ingest.h"
#endif

namespace rooftrace::analyzer {

StatusOr<InputKind> DetectInputKind(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": " + std::strerror(errno) +
                    "; pass an existing run store (.sqlite) or trace (.rft)");
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgument(path +
                           ": is a directory; pass a run store or a .rft file");
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    return NotFound(path + ": cannot read: " + std::strerror(errno));
  }
  char head[16] = {};
  const size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  static constexpr char kSqliteMagic[16] = "SQLite format 3";  // + '\0'
  if (n == sizeof(head) && std::memcmp(head, kSqliteMagic, 16) == 0) {
    return InputKind::kStore;
  }
  if (n >= 1 && static_cast<unsigned char>(head[0]) == 0x0A) {
    return InputKind::kTrace;
  }
  return InvalidArgument(
      path + ": not a rooftrace store or trace (" +
      (n == 0 ? std::string("the file is empty")
              : "it starts with neither the SQLite header nor a trace frame") +
      "); pass a store written by `rooftrace profile -o`/`collect --store` or "
      "a .rft trace");
}

AnalyzerInput::~AnalyzerInput() {
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  }
}

StatusOr<std::unique_ptr<AnalyzerInput>> AnalyzerInput::Open(
    const std::string& path, const InputOptions& options) {
  RT_ASSIGN_OR_RETURN(const InputKind kind, DetectInputKind(path));
  std::unique_ptr<AnalyzerInput> in(new AnalyzerInput());
  in->kind_ = kind;
  in->path_ = path;
  if (kind == InputKind::kStore) {
    RT_RETURN_IF_ERROR(in->store_.Open(path, path));
    return in;
  }
#ifdef ROOFTRACE_HAVE_INGEST
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") +
                      "/rooftrace-analyze-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    return Unavailable("cannot create a temporary directory for ingesting " +
                       path + " (" + std::strerror(errno) +
                       "); set TMPDIR to a writable directory");
  }
  in->temp_dir_ = buf.data();
  const std::string store_path = in->temp_dir_ + "/ingested.sqlite";
  IngestOptions ingest_options;
  ingest_options.device_profile_path = options.device_profile_path;
  // Read once and deleted: no journal, no syncs.
  ingest_options.durability = Store::Durability::kScratch;
  RT_ASSIGN_OR_RETURN(const IngestResult result,
                      IngestTraceFile(path, store_path, ingest_options));
  in->ingest_warning_ = result.warning;
  RT_RETURN_IF_ERROR(in->store_.Open(store_path, path));
  return in;
#else
  (void)options;
  return FailedPrecondition(
      path + ": is a .rft trace, but this build has no trace ingest "
             "(collector/ingest.cc); ingest it with `rooftrace collect "
             "--ingest` into a store and analyze the store");
#endif
}

}  // namespace rooftrace::analyzer
