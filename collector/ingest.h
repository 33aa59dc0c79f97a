// Post-hoc ingest of a trace file (.rft spool or raw trace) into a store:
// the same decode -> join -> annotate -> store pipeline as a live collector.
// The analyzer uses it to read .rft files (annotating on the fly).
#ifndef ROOFTRACE_COLLECTOR_INGEST_H_
#define ROOFTRACE_COLLECTOR_INGEST_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "collector/recorder.h"

namespace rooftrace {

struct IngestOptions {
  // Calibrated device profile (rooftrace calibrate); empty: datasheet roofs.
  std::string device_profile_path;
  // Progress lines on stderr for long files.
  bool progress = false;
  // Records a session may hold before its settled steps are stored
  // (RecorderOptions::flush_records; 0: store each session whole).
  size_t flush_records = RecorderOptions().flush_records;
  // Store::Durability::kScratch for a temporary store (the analyzer's).
  Store::Durability durability = Store::Durability::kDurable;
  // When set, the rows go to this writer and no store is opened
  // (RecorderOptions::writer; the analyzer aggregates a .rft in memory).
  RunWriter* writer = nullptr;
};

struct IngestResult {
  int64_t run_id = 0;
  uint64_t frames = 0;
  uint64_t kernels = 0;
  // Non-empty when the file was truncated or corrupt part-way: what was
  // read is stored, and this says where it broke (already user-readable).
  std::string warning;
};

// Ingests `trace_path` into the SQLite store at `store_path` (created if
// missing) as one new run, or into options.writer when set (store_path is
// then unused). Errors name the file and the fix.
StatusOr<IngestResult> IngestTraceFile(const std::string& trace_path,
                                       const std::string& store_path,
                                       const IngestOptions& options);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_INGEST_H_
