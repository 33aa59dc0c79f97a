// Post-hoc ingest of a trace file (.rft spool or raw trace): the same
// decode -> join -> annotate pipeline as a live collector, into any sink
// (the store; the analyzer's in-memory report).
#ifndef ROOFTRACE_SOURCES_RFT_INGEST_H_
#define ROOFTRACE_SOURCES_RFT_INGEST_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/recorder.h"
#include "pipeline/sink.h"
#include "store/store.h"

namespace rooftrace {

struct IngestOptions {
  // Calibrated device profile (rooftrace calibrate); empty: datasheet roofs.
  std::string device_profile_path;
  // Progress lines on stderr for long files.
  bool progress = false;
  // Labels of the run (collect --label).
  RunLabels labels;
  // Records a session may hold before its settled steps are stored
  // (RecorderOptions::flush_records; 0: store each session whole).
  size_t flush_records = RecorderOptions().flush_records;
  // Set (by a SIGINT/SIGTERM handler): stop reading, store what was read,
  // and store the run as incomplete, saying so. Not owned; may be null.
  const std::atomic<bool>* stop = nullptr;
  // The input as the user named it ("- (standard input)", a FIFO) when
  // trace_path is a private copy of it (sources/stream_input.h): the run's
  // origin and every message name it, never the copy. Empty: trace_path.
  std::string shown_name;
  // Non-empty: the file is read to its end and the run stored incomplete
  // for this reason (a stream a stop signal cut while it was arriving),
  // with IngestResult::interrupted set and this as its warning.
  std::string incomplete_reason;
  // Which kernel rows the run keeps (collect --store-kernels).
  StoreKernels store_kernels = StoreKernels::kAll;
  // collect --recovers-run: the files are the raw streams a collector kept
  // of this incomplete run; the run they are stored as replaces it
  // (store/run_replace.h). 0: none. Store-path ingests only.
  int64_t recovers_run = 0;
};

struct IngestResult {
  int64_t run_id = 0;
  uint64_t frames = 0;
  uint64_t kernels = 0;
  // Non-empty when the file was truncated or corrupt part-way: what was
  // read is stored, and this says where it broke (already user-readable).
  std::string warning;
  // The stop flag ended the read before the end of the file.
  bool interrupted = false;
  // The stop flag came while the records recovered from a live buffer were
  // being stored (`interrupted` too): the run holds a part of them, the
  // buffer is kept, and only a recovery (recovers_run) of this run stores
  // the rest without storing that part twice.
  bool stopped_storing_recovered = false;
  // The file ends inside a frame or a frame is corrupt: `warning` says at
  // which byte, and the run is stored incomplete for that reason.
  bool cut_short = false;
  // Live buffers of producers that ended without a Goodbye whose records
  // were read into the run (IngestFileInto never removes them: the caller
  // does once the run holds everything, see IngestTraceFile).
  std::vector<std::string> live_buffers_read;
  // With IngestOptions::recovers_run: whether that run was replaced, or why
  // it was kept (Store::replace_note).
  std::string replace_note;
};

// Ingests `trace_path` as one new run into `sink`. Errors name the file
// and the fix; kResourceExhausted: the sink refused a write (a full disk),
// the run is stored incomplete and the file can be ingested again.
StatusOr<IngestResult> IngestTraceFile(const std::string& trace_path,
                                       RunSink* sink,
                                       const IngestOptions& options);
// The same into the SQLite store at `store_path` (created if missing).
StatusOr<IngestResult> IngestTraceFile(
    const std::string& trace_path, const std::string& store_path,
    const IngestOptions& options,
    Store::Durability durability = Store::Durability::kDurable);
// Several files as one run (the raw streams of one collector run), in
// order, into the store at `store_path`; `shown_names[i]` names
// `trace_paths[i]` in messages (IngestOptions::shown_name is not used).
// The run's source hash is kept only for a single file.
StatusOr<IngestResult> IngestTraceFiles(
    const std::vector<std::string>& trace_paths,
    const std::vector<std::string>& shown_names,
    const std::string& store_path, const IngestOptions& options);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_RFT_INGEST_H_
