// A source: one trace format rooftrace reads, turned into the pipeline's
// sessions (pipeline/session.h) and handed to a RunRecorder, which joins,
// annotates and emits the rows to whatever sink the command chose (the
// store, the in-memory report). The wire stream of libinject (.rft) is one;
// other tools' traces (Kineto JSON, Nsight Systems SQLite, Nsight Compute
// CSV) are others. Each lives in its own folder under sources/ and is
// listed once in sources/registry.cc.
//
// Implementations are stateless and thread-safe; Read() is called once per
// file.
#ifndef ROOFTRACE_SOURCES_SOURCE_H_
#define ROOFTRACE_SOURCES_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "base/status.h"
#include "model/model_facts.h"
#include "pipeline/recorder.h"
#include "sources/counter_match.h"
#include "sources/file_reader.h"

namespace rooftrace {

// What the user asked of a read (import / analyze / export options).
struct SourceOptions {
  // Calibrated device profile (rooftrace calibrate); empty: datasheet roofs.
  std::string device_profile_path;
  // A datasheet key that overrides the device the file names (import
  // --device); empty: the file's own device.
  std::string device_key;
  // Keep only this rank / process where a file holds several.
  std::optional<int64_t> rank;
  std::optional<int64_t> pid;
  // Per-kernel counters from another file to attach to this one's kernels
  // (import --counters ncu.csv); empty: none.
  std::string counters_path;
  // The counters of counters_path, read once with the counter file's
  // reader (registry.h's ReadCounterFile: import does it once for all its
  // files; ReadSourceInto when the caller has not) before Read() is called;
  // null when counters_path is empty. A source with a
  // timeline matches them to its kernels (MatchCounters); a source without
  // one refuses them with a message naming both files.
  std::shared_ptr<const CounterFile> counters;
  // Traces recorded while a serving engine captured its CUDA / HIP graphs
  // (import --capture): a graph replayed in the file being read has
  // kernels without operators or shapes; each replayed kernel takes the
  // operator its launch had at capture time. Only the Kineto source reads
  // them; the others refuse them.
  std::vector<std::string> capture_paths;
  // The model the trace ran (import/analyze --model): the sizes operator
  // arguments do not give (experts per token, an expert's width), for
  // mixture-of-experts operators. Absent: those stay blank, and the
  // import says how many and how to fill them.
  std::optional<ModelFacts> model;
  // How far a gzip file (the trace, its captures, its counters) may expand
  // when read (import --max-decompressed-mib, ROOFTRACE_MAX_DECOMPRESSED_MIB).
  GzipBudget gzip_budget;
  // Progress lines on stderr for long files.
  bool progress = false;
  // Labels of the run each file becomes (import --label).
  RunLabels labels;
  // RecorderOptions::flush_records for sources that stream long sessions.
  size_t flush_records = RecorderOptions().flush_records;
};

// What a read found besides its rows.
struct SourceResult {
  int64_t run_id = 0;
  uint64_t kernels = 0;
  // Non-empty when the file broke part-way or parts were skipped: what was
  // read is kept, and this says what and where (user-readable).
  std::string warning;
  // The file broke before its end (cut short, a corrupt frame): what was
  // read is kept, the run is incomplete, `warning` says where it broke.
  bool cut_short = false;
  // The distributed rank the file says it is (a Kineto trace's
  // distributedInfo); absent when it says none.
  std::optional<int64_t> rank;
};

// How a source describes the file it read, for the run row.
struct SourceIdentity {
  std::string format;  // "rft", "kineto", ...
  std::string file;
};

class TraceSource {
 public:
  virtual ~TraceSource() = default;

  // Short name: what --format takes ("rft", "kineto", "nsys", "ncu").
  virtual std::string_view format() const = 0;
  // One line for --help and errors ("PyTorch profiler (Kineto) JSON").
  virtual std::string_view description() const = 0;
  // Whether the file is in this format, judged by its content: `head` is
  // its first bytes (decompressed when the file is gzip), at most 64 KiB;
  // `path` is there for formats that must look further (an SQLite file).
  virtual bool Detect(const std::string& path, std::string_view head) const = 0;
  // The run's origin (RecorderOptions::origin), e.g. "ingest:run.rft".
  virtual std::string Origin(const std::string& path) const = 0;
  // Reads `path` into `recorder`, whose run is begun and not finished.
  // Errors name the file and the fix; a file that breaks part-way keeps
  // what came before and says so in result->warning.
  virtual Status Read(const std::string& path, const SourceOptions& options,
                      RunRecorder* recorder, SourceResult* result) const = 0;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_SOURCE_H_
