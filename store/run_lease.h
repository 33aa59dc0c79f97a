// Telling a run being written from one whose writer died. Both leave the
// run's `complete` NULL; only the first must be spared by readers that
// judge runs (`history --check` called it incomplete, exit 3, "store it
// again", while another process was still writing it).
//
// A writer holds a lease on each run from BeginRun to FinishRun or
// AbortRun; the operating system or the server drops it with the writer's
// process or connection, so a crash leaves no lease behind and nothing
// needs cleaning:
//   - SQLite: an open-file-description write lock (F_OFD_SETLK) on byte
//     run_id of STORE.writing, a side file beside the store (created by
//     writers, empty, never removed: a reader must not write);
//   - PostgreSQL: a session advisory lock (kRunLeaseClass, run_id) on the
//     writer's connection, seen by readers in pg_locks.
//
// Not thread-safe; a RunLease belongs to one Store, which releases it
// before closing its connection.
#ifndef ROOFTRACE_STORE_RUN_LEASE_H_
#define ROOFTRACE_STORE_RUN_LEASE_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace rooftrace {

class Db;

// The first key of the advisory locks ("RTRC"): no other program's
// two-key advisory locks should share it.
inline constexpr int32_t kRunLeaseClass = 0x52545243;

// The lease file of the SQLite store at `path`.
std::string RunLeaseFile(const std::string& path);

class RunLease {
 public:
  RunLease() = default;
  ~RunLease();
  RunLease(const RunLease&) = delete;
  RunLease& operator=(const RunLease&) = delete;

  // Takes the lease on `run_id` of the store `path`, open as `db` (the
  // writer's connection, which must outlive the lease). A lease that
  // cannot be taken is no reason to lose a run: the error is for the
  // caller to say, and the run reads as before (never finished).
  Status Take(Db* db, const std::string& path, int64_t run_id);
  // Drops the lease held, if any.
  void Release();

 private:
  Db* db_ = nullptr;  // PostgreSQL only; null for SQLite
  int fd_ = -1;
  int64_t run_id_ = 0;
  bool held_ = false;
};

// Of `runs` (runs whose `complete` is NULL), those whose writer holds the
// lease now: runs being written. `db` is a reader's connection to `path`.
// Empty when it cannot tell (no lease file: no writer of this kind).
std::set<int64_t> RunsBeingWritten(Db* db, const std::string& path,
                                   const std::vector<int64_t>& runs);

}  // namespace rooftrace

#endif  // ROOFTRACE_STORE_RUN_LEASE_H_
