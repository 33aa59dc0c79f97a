// Reading trace files into a run that is already open (collect --ingest of
// several files, profile's leftover spool files). IngestTraceFile
// (sources/rft/ingest.h) is the one-file, one-run front door.
#ifndef ROOFTRACE_SOURCES_RFT_INGEST_INTERNAL_H_
#define ROOFTRACE_SOURCES_RFT_INGEST_INTERNAL_H_

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "sources/rft/ingest.h"
#include "pipeline/recorder.h"

namespace rooftrace {

// Checks that `path` starts like a rooftrace trace (a Hello with our magic
// and a readable version). Errors name the file, what is wrong and the fix.
Status CheckTraceFile(const std::string& path);

// Reads every session of `path` into `recorder`. A corrupt or truncated tail
// keeps what came before and is described in result->warning; so does a
// `stop` flag set part-way (result->interrupted).
// Stores the sessions kept in the live buffers (*.live) of `dir` whose
// producers are gone and whose streams never reached a collector (a
// process killed before its Hello went out, or one whose lock outlived its
// socket): `rooftrace profile` sweeps its private folder with it after the
// command. `received` maps a buffer to the last sequence a collector
// already stored of it (records up to it are skipped); `read_by_spools`
// are buffers a spool's ingest already read (IngestResult::
// live_buffers_read), skipped: their records are in that session. One
// stderr line per buffer. Returns the buffers whose producers are gone
// but whose sessions the store refused: they are left in place, for the
// caller to keep.
std::vector<std::string> IngestOrphanLiveBuffers(
    const std::string& dir, RunRecorder* recorder,
    const std::map<std::string, uint64_t>& received,
    const std::set<std::string>& read_by_spools);

Status IngestFileInto(const std::string& path, RunRecorder* recorder,
                      IngestResult* result, bool progress,
                      const std::atomic<bool>* stop = nullptr);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_RFT_INGEST_INTERNAL_H_
