#include "sources/rft/live_recovery.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "proto/field_numbers.h"
#include "proto/framing.h"
#include "proto/live_buffer.h"

namespace rooftrace {

namespace {

// Record kinds that application threads put in the queue (the others come
// from CUPTI's buffers and the counters, which a live buffer does not hold).
constexpr int kQueuedKinds[] = {
    wire::enums::kRecordLaunch, wire::enums::kRecordGemm,
    wire::enums::kRecordNvtxRange, wire::enums::kRecordNvtxMark};

// Records the producer took (seen, neither dropped nor filtered) but the
// session never got, recovered ones included; its counts are the header's,
// current to the moment it ended. Known only when the session holds the
// producer's whole stream (from its Hello, no sequence missing): records
// that went elsewhere (to a collector before the spool, or stored before
// from its socket) are not lost, and this session cannot tell them apart.
// At most a queue's worth can be lost (a record is lost only while it is
// being written into its slot); counts that say more, or that drop more
// than was seen, are not the producer's (a damaged or forged header) and
// are not used. Returns false, counting nothing, when the loss is unknown;
// `*why` says why.
bool CountLost(const inject::LiveContents& live, Session* session,
               uint64_t* lost, std::string* why) {
  *lost = 0;
  if (session->end().sequence_gaps != 0) {
    *why = "part of its stream went elsewhere";
    return false;
  }
  ImportStats& stats = session->stats();
  uint64_t total = 0;
  for (int k : kQueuedKinds) {
    if (live.dropped[k] > live.seen[k] ||
        live.filtered[k] > live.seen[k] - live.dropped[k]) {
      *why = "its counts drop more records than it saw";
      return false;
    }
    const uint64_t taken = live.seen[k] - live.dropped[k] - live.filtered[k];
    if (taken > stats.received[k]) total += taken - stats.received[k];
    if (total > live.capacity) {
      *why = "its counts claim more than its queue holds (" +
             std::to_string(live.capacity) + " records)";
      return false;
    }
  }
  for (int k : kQueuedKinds) {
    stats.producer_dropped[k] = std::max(stats.producer_dropped[k],
                                         live.dropped[k]);
    stats.producer_filtered[k] = std::max(stats.producer_filtered[k],
                                          live.filtered[k]);
  }
  *lost = total;
  return true;
}

// Records of the queued kinds the session has received.
uint64_t QueuedReceived(Session& session) {
  uint64_t n = 0;
  for (int k : kQueuedKinds) n += session.stats().received[k];
  return n;
}

// Decodes `frames` (whole frames) into `ws`. Sets `*stopped` (and stops)
// when `stop` is set before the last frame.
Status Feed(const std::string& frames, WireSession* ws,
            const std::atomic<bool>* stop = nullptr, bool* stopped = nullptr) {
  wire::FrameReader reader;
  reader.Feed(frames);
  std::string_view payload;
  while (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
    if (stop != nullptr && stop->load()) {
      *stopped = true;
      return OkStatus();
    }
    RT_RETURN_IF_ERROR(ws->OnPacket(payload));
  }
  return OkStatus();
}

// The recovery of `session`'s buffer at `path` was stopped (`read` of its
// records decoded into the session so far).
void Interrupted(const Session& session, const std::string& path,
                 uint64_t read, LiveRecovery* out) {
  out->interrupted = true;
  out->partial = read > 0;
  out->summary = session.name() + ": the recovery of its live buffer was "
                 "interrupted" +
                 (read > 0 ? " (" + std::to_string(read) +
                                 " of its records read)"
                           : std::string()) +
                 "; " + path + " is kept: ingest it again for its records";
}

// The records of `live` after sequence `last` go into `ws`; counts and the
// summary.
Status Apply(const inject::LiveContents& live, const std::string& path,
             uint64_t last, WireSession* ws, LiveRecovery* out,
             const std::atomic<bool>* stop) {
  Session& session = ws->session();
  std::string frames;
  const inject::RecoveryCounts counts =
      inject::EncodeRecovered(live, last, last + 1, 4096, &frames, stop);
  if (counts.stopped) {
    Interrupted(session, path, 0, out);
    return OkStatus();
  }
  // The re-encoded packets go through the same decoder as the stream's.
  const uint64_t before = QueuedReceived(session);
  bool stopped = false;
  RT_RETURN_IF_ERROR(Feed(frames, ws, stop, &stopped));
  if (stopped) {
    Interrupted(session, path, QueuedReceived(session) - before, out);
    return OkStatus();
  }
  out->recovered = counts.total();
  std::string unknown_why;
  const bool known = CountLost(live, &session, &out->lost, &unknown_why);
  session.stats()[ImportStat::k_records_recovered] += out->recovered;
  session.stats()[ImportStat::k_records_lost_at_exit] += out->lost;
  out->consumed_path = path;
  out->frames = std::move(frames);
  out->summary = session.name() + " ended without a Goodbye: " +
                 std::to_string(out->recovered) +
                 " records recovered from its live buffer" +
                 (!known ? ", loss at its end not counted (" + unknown_why +
                               ")"
                  : out->lost == 0
                      ? std::string(", none lost")
                      : ", " + std::to_string(out->lost) +
                            " lost (being written when it ended)") +
                 "; kernels CUPTI had not handed over are not counted";
  return OkStatus();
}

}  // namespace

StatusOr<LiveRecovery> RecoverFromLiveBuffer(WireSession* ws, uid_t owner_uid,
                                             int wait_ms,
                                             const std::string& at,
                                             const std::atomic<bool>* stop) {
  LiveRecovery out;
  Session& session = ws->session();
  if (!ws->has_hello() || ws->live_buffer().empty() || session.end().goodbye) {
    return out;
  }
  out.attempted = true;
  const std::string& path = at.empty() ? ws->live_buffer() : at;
  const SessionHeader& h = session.header();
  inject::LiveContents live;
  inject::LiveReadResult result = inject::LiveReadResult::kOwnerAlive;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    RT_RETURN_IF_ERROR(inject::ReadLiveBuffer(path, owner_uid, h.pid,
                                              h.start_unix_ns, &live,
                                              &result, stop));
    if (result == inject::LiveReadResult::kRead) break;
    if (result == inject::LiveReadResult::kStopped) {
      Interrupted(session, path, 0, &out);
      return out;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      out.owner_alive = true;
      out.summary = session.name() + " ended its stream without a Goodbye "
                    "but still runs: its unsent records stay in " + path;
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  RT_RETURN_IF_ERROR(
      Apply(live, path, session.end().last_sequence, ws, &out, stop));
  return out;
}

StatusOr<LiveRecovery> RecoverOrphanLiveBuffer(const std::string& path,
                                               uid_t owner_uid,
                                               uint64_t received_through,
                                               WireSession* ws,
                                               const std::atomic<bool>* stop) {
  LiveRecovery out;
  out.attempted = true;
  inject::LiveContents live;
  inject::LiveReadResult result = inject::LiveReadResult::kOwnerAlive;
  RT_RETURN_IF_ERROR(
      inject::ReadLiveBuffer(path, owner_uid, 0, 0, &live, &result, stop));
  if (result == inject::LiveReadResult::kStopped) {
    Interrupted(ws->session(), path, 0, &out);
    return out;
  }
  if (result != inject::LiveReadResult::kRead) {
    out.owner_alive = true;
    out.summary = path + ": its producer still runs; not read";
    return out;
  }
  if (live.hello_frame.empty()) {
    return Corrupt("live buffer " + path + " keeps no Hello");
  }
  RT_RETURN_IF_ERROR(Feed(live.hello_frame, ws));
  if (!ws->has_hello()) {
    return Corrupt("live buffer " + path + ": its Hello does not decode");
  }
  RT_RETURN_IF_ERROR(Apply(live, path,
                           std::max<uint64_t>(received_through, 1), ws, &out,
                           stop));
  return out;
}

}  // namespace rooftrace
