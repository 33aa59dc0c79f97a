// Opens what the user passed to analyze / export / diff: a run store
// (SQLite) or a trace in any format a source reads (sources/registry.h),
// told apart by content, never by extension. A trace is read into a
// temporary store that lives as long as the AnalyzerInput; `export` needs
// that, while `analyze` and `diff` aggregate a trace as they read it
// (analyzer/trace_report.h).
//
// Owned by one command; not thread-safe. The trap: the temporary store is
// deleted in the destructor, so keep the AnalyzerInput alive while reading.
#ifndef ROOFTRACE_ANALYZER_INPUT_H_
#define ROOFTRACE_ANALYZER_INPUT_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "sources/source.h"
#include "store/store_reader.h"

namespace rooftrace::analyzer {

enum class InputKind { kStore, kTrace };

struct DetectedInput {
  InputKind kind = InputKind::kStore;
  const TraceSource* source = nullptr;  // for a trace
};

// Classifies a file by its content: an SQLite file that no source claims
// (an Nsight Systems export is SQLite too) is a store; anything a source
// detects is a trace. Errors name the file.
StatusOr<DetectedInput> DetectInput(const std::string& path);
StatusOr<InputKind> DetectInputKind(const std::string& path);

struct InputOptions {
  // Device profile for annotating a trace (empty: datasheet roofs).
  std::string device_profile_path;
  // Graph-capture traces for a trace's replayed graphs (--capture).
  std::vector<std::string> capture_paths;
  // The model the trace ran (--model; SourceOptions::model).
  std::optional<ModelFacts> model;
};

class AnalyzerInput {
 public:
  ~AnalyzerInput();
  AnalyzerInput(const AnalyzerInput&) = delete;
  AnalyzerInput& operator=(const AnalyzerInput&) = delete;

  // Opens `path` (store or trace).
  static StatusOr<std::unique_ptr<AnalyzerInput>> Open(
      const std::string& path, const InputOptions& options);

  StoreReader& store() { return store_; }
  InputKind kind() const { return kind_; }
  const std::string& path() const { return path_; }
  // For a trace: where the file broke, when it did (already user-readable).
  const std::string& ingest_warning() const { return ingest_warning_; }
  // The trace broke before its end (ingest_warning() says where).
  bool cut_short() const { return cut_short_; }

 private:
  AnalyzerInput() = default;

  StoreReader store_;
  InputKind kind_ = InputKind::kStore;
  std::string path_;
  std::string temp_dir_;  // non-empty for an ingested trace
  std::string ingest_warning_;
  bool cut_short_ = false;
};

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_INPUT_H_
