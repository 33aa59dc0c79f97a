// A recovered run replaces its incomplete twin (#37.4).
//
// When a store write fails mid-collect, the collector finishes its run as
// incomplete (the twin) and keeps the raw streams of the sessions it could
// not store whole, with a command that stores them again:
// `collect --store S --label ... --recovers-run N --ingest RAW...`. That
// command stores the streams as one new run which, in the transaction that
// finishes it, takes the twin's place: the twin's labels the new run lacks
// are copied to it, and every row of the twin is deleted. No kernel is then
// stored twice (the streams hold each session whole from its Hello, the
// twin at most the part committed before the failure) and `history`
// sees one run.
//
// Why a new run and not the twin completed in place: the twin's
// kernel_aggregates were summed in the memory of the collector that failed
// and written at most once a second, so they need not match its rows; the
// new run's are summed from every kernel it stores.
//
// The twin is replaced only when that loses nothing:
//   - it is not complete, and no process writes it now (its lease,
//     store/run_lease.h, is free; the replacing Store then holds it, so two
//     recoveries cannot both take it);
//   - every session it holds is one of the new run's (the same producer:
//     host, pid and start time of its Hello); a twin that also holds
//     sessions stored whole before the failure (whose raw streams were
//     deleted once stored) is kept;
//   - the new run holds, of each of those sessions, at least as many
//     kernels and NVTX ranges as the twin (a stream cut shorter than what
//     the twin stored, or an ingest stopped early, holds less; completeness
//     is no test, since a producer that ended without a Goodbye leaves
//     both runs incomplete), and was stored without a refused write.
// Otherwise the twin stays as it was and the Store says why.
#ifndef ROOFTRACE_STORE_RUN_REPLACE_H_
#define ROOFTRACE_STORE_RUN_REPLACE_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace rooftrace {

class Db;

// Whether run `twin` of the store open as `db` (`lease_path`: the file or
// URL the leases are taken on) may be replaced: it exists, is not complete
// and no process writes it. InvalidArgument naming the run and the fix
// otherwise.
Status CheckReplaceableRun(Db* db, const std::string& lease_path,
                           int64_t twin);

// Inside the open transaction that finishes run `run`: replaces `twin` by
// `run` when `write_failures` is 0 and `run` holds every session of the
// twin at least as fully (see above). `*note` says what was done or why
// the twin was kept, for the user.
Status ReplaceTwinRun(Db* db, int64_t twin, int64_t run,
                      uint64_t write_failures, std::string* note);

// The words a printed recovery command gives for run `twin`
// (" --recovers-run N"; "" for 0, a run never begun), for collect and
// profile alike.
std::string RecoversRunWords(int64_t twin);

}  // namespace rooftrace

#endif  // ROOFTRACE_STORE_RUN_REPLACE_H_
