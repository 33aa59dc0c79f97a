// Recovers what a producer recorded but never wrote, from its live buffer
// (proto/live_buffer.h), once its stream has ended without a Goodbye and
// the producer is gone: the records still in its queue are re-encoded with
// the producer's own encoder and decoded into the session as if they had
// arrived, after the last packet that did. What the producer had taken but
// neither sent nor kept is counted (records_lost_at_exit).
//
// Called by the collector's server when a connection ends, and by the
// reader of a spool file at its end. Not thread-safe (one WireSession).
#ifndef ROOFTRACE_SOURCES_RFT_LIVE_RECOVERY_H_
#define ROOFTRACE_SOURCES_RFT_LIVE_RECOVERY_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "sources/rft/wire_session.h"

namespace rooftrace {

struct LiveRecovery {
  bool attempted = false;  // the stream had a live buffer and no Goodbye
  bool owner_alive = false;  // still running after the wait: not touched
  // The stop flag ended the recovery: nothing of the buffer went into the
  // session (unless `partial`), the buffer is left for the next reader
  // (consumed_path stays empty) and `summary` says so.
  bool interrupted = false;
  // Interrupted while its records were being decoded into the session:
  // the session holds a part of them.
  bool partial = false;
  uint64_t recovered = 0;
  uint64_t lost = 0;
  // One line for the log ("" when nothing was attempted).
  std::string summary;
  // The re-encoded frames, for a caller that keeps the raw stream.
  std::string frames;
  // The buffer read ("" when none): the caller removes it once what it
  // held is stored (or kept elsewhere), never before.
  std::string consumed_path;
};

// Reads `session`'s live buffer if its stream has no Goodbye. The file
// must belong to `owner_uid` (the peer's uid, or the spool file's owner).
// While its producer still holds it, polls for up to `wait_ms` (a process
// that was killed closes its socket a moment before its lock goes) and
// then leaves it alone. A buffer read is not removed here (see
// consumed_path). An unreadable or foreign buffer is an error naming it;
// the session is unchanged then. `at`: where the buffer is when it was
// moved from where the Hello names it ("": there).
// `stop` (may be null; a SIGINT/SIGTERM handler's flag) is looked at
// while the buffer is read, re-encoded and decoded (each takes seconds for
// millions of records): once set, the recovery ends within milliseconds,
// `interrupted`.
StatusOr<LiveRecovery> RecoverFromLiveBuffer(
    WireSession* session, uid_t owner_uid, int wait_ms,
    const std::string& at = "", const std::atomic<bool>* stop = nullptr);

// A live buffer found without its stream: its producer died before its
// Hello reached a collector (or the collector stopped waiting for it).
// Rebuilds the session into `*session` (a fresh one) from the Hello the
// buffer keeps and its records; `received_through` is the last sequence a
// collector already stored of this producer (0: none).
// `stop`: as for RecoverFromLiveBuffer.
StatusOr<LiveRecovery> RecoverOrphanLiveBuffer(
    const std::string& path, uid_t owner_uid, uint64_t received_through,
    WireSession* session, const std::atomic<bool>* stop = nullptr);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_RFT_LIVE_RECOVERY_H_
