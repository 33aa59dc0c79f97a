// The collector's listening side: Unix sockets (mode 0600) and TCP (loopback
// unless a non-loopback host is named), one non-blocking connection per
// producer, handshake with HelloReply, frames fed to a Session, sessions
// handed to the RunRecorder when they end.
//
// Bad peers are closed with one log line naming the peer and the reason:
// corrupt or oversize frames, wrong magic or version, no Hello within
// hello_timeout_ms, nothing received for stall_timeout_ms inside a frame.
// Connections are read in turns of at most 1 MiB each. Memory per
// connection is bounded by one frame (kMaxFrameBytes) plus its session's
// records and interned strings (max_session_strings / _string_bytes);
// before its Hello, by max_hello_frame_bytes (4 KiB before a required
// token) plus one read. All connections together are bounded by
// memory_budget_bytes: what each connection's frame reader holds (or the
// frame it has announced, known from its first bytes) plus its interned
// strings; a connection whose next frame would pass it is closed, what it
// sent before kept (its session, without a Goodbye, is incomplete, and so
// is the run). Session records are not counted: long sessions store them
// as they settle. A frame that arrives slower than min_frame_bytes_per_s
// (after progress_grace_ms) is closed; when max_connections are open, a
// new peer takes the slot of the slowest idle one, or is refused if none
// is idle.
// With a token, TCP peers must open with Packet.connection_auth holding it
// (docs/wire.md); that frame never reaches the raw stream. TCP needs a
// token unless insecure_tcp (loopback only); wrong tokens are throttled
// and their log lines rate-limited. When accept()
// runs out of descriptors (EMFILE/ENFILE) the listeners are paused for
// 250 ms at a time, with one log line per episode, instead of spinning.
//
// One thread runs Run(); everything else is that thread's. Stop by setting
// the flag passed to Run(): the server stops accepting, reads what every
// connection already sent, ends all sessions, and returns.
#ifndef ROOFTRACE_COLLECTOR_SERVER_H_
#define ROOFTRACE_COLLECTOR_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "pipeline/recorder.h"

namespace rooftrace {

struct ServerOptions {
  std::vector<std::string> listen;  // "unix:PATH" | "tcp:HOST:PORT"
  uint64_t hello_timeout_ms = 10000;
  uint64_t stall_timeout_ms = 30000;
  // Progress floor after the Hello: a frame begun more than
  // progress_grace_ms ago that has arrived at fewer than
  // min_frame_bytes_per_s on average is closed (a peer sending one byte
  // a second resets the stall timer forever). libinject writes a frame at
  // once, so only a stalled or hostile peer is that slow.
  uint64_t min_frame_bytes_per_s = 1024;
  uint64_t progress_grace_ms = 10000;
  size_t max_connections = 1024;
  // When every slot is taken, a new peer takes the slot of the slowest
  // idle one instead of being refused: one silent for evict_idle_ms
  // between frames (or without its Hello), or one whose frame has arrived
  // under min_frame_bytes_per_s for a second; the idlest first. An evicted
  // producer's session is stored as far as it came (libinject falls back
  // to its spool).
  uint64_t evict_idle_ms = 5000;
  // Non-empty: every connection's raw stream is written to
  // DIR/run<ID>-<N>.rft as it arrives.
  std::string raw_dir;
  // With raw_dir: a raw stream whose sessions were all stored is deleted
  // when its connection closes, so only what the store lost (a failed
  // write) stays, for `collect --ingest`. False: every stream is kept
  // (--keep-raw).
  bool delete_stored_raw = false;
  // Before its Hello a peer is unknown: its first frame may hold at most
  // this much (a Hello is small; argv is its largest part).
  size_t max_hello_frame_bytes = 256 << 10;
  // Interned strings one session may define (Packet.interned_strings
  // entries, and their bytes as received); a producer over either is
  // closed, what it sent so far stored.
  uint64_t max_session_strings = 1 << 20;
  uint64_t max_session_string_bytes = 64ull << 20;
  // Frames being received and interned strings, all connections together
  // (collect --memory-budget-mib). Producers send frames of some hundred
  // KiB (libinject's batches), so 1 GiB lets hundreds of producers send at
  // once with room for their strings, while a peer can no longer make the
  // collector hold 64 MiB frames on each of its 1,024 connections (64 GiB:
  // killed for memory, its run left unfinished).
  uint64_t memory_budget_bytes = 1ull << 30;
  // How the user raises it, for the refusal line (profile's embedded
  // collector has no option of its own).
  std::string memory_budget_hint =
      "raise the budget with collect --memory-budget-mib N";
  // Non-empty: TCP peers must send it first (Packet.connection_auth).
  // Required for every TCP listener, loopback included (any local user can
  // reach a loopback port), unless insecure_tcp (loopback only). Unix
  // sockets (0600) do not ask for it.
  std::string token;
  bool insecure_tcp = false;
  // After each refused token the token listeners are left out of poll()
  // this long (peers wait in the backlog): guesses are throttled to about
  // ten a second. Refusals are logged at most once a second, the rest
  // counted in the next line.
  uint64_t auth_failure_pause_ms = 100;
  // Non-zero: every window_ms (from Run()'s start) the settled part of
  // every open session is stored (RunRecorder::FlushDue), then
  // on_window_end is called with the statistics the open sessions hold so
  // far, so that the caller closes the window's run (collect --window).
  // Called on Run()'s thread, between packets.
  uint64_t window_ms = 0;
  std::function<void(const ImportStats& open_sessions)> on_window_end;
  // Where log lines go (default: stderr with a "rooftrace collect: " prefix).
  std::function<void(const std::string&)> log;
};

class CollectorServer {
 public:
  // `recorder` may be null until set_recorder(), so that a collector
  // listens before it begins a run (a failed --listen leaves no run).
  CollectorServer(RunRecorder* recorder, ServerOptions options);
  ~CollectorServer();
  CollectorServer(const CollectorServer&) = delete;
  CollectorServer& operator=(const CollectorServer&) = delete;

  // Binds every --listen address. Errors name the address and the fix; a
  // Unix socket path another collector listens on is refused, a stale
  // one replaced.
  Status Listen();
  // ServerOptions::window_ms and on_window_end, once the recorder exists.
  void set_window(uint64_t window_ms,
                  std::function<void(const ImportStats&)> on_window_end) {
    options_.window_ms = window_ms;
    options_.on_window_end = std::move(on_window_end);
  }
  // Where sessions go; must be set before Run().
  void set_recorder(RunRecorder* recorder) { recorder_ = recorder; }
  // Addresses actually bound ("tcp:127.0.0.1:40123" when port 0 was asked).
  const std::vector<std::string>& bound() const { return bound_; }

  // Serves until `*stop` is true, then drains and ends every session.
  Status Run(const std::atomic<bool>* stop);

  // Connections open now (for profile's wait for its producers).
  size_t open_connections() const { return open_.load(); }
  // Live buffers of producers whose streams ended without a Goodbye while
  // they still held them (a dying process can close its socket before its
  // lock goes): path -> last packet sequence received, for a later sweep
  // (IngestOrphanLiveBuffers) to take only what never arrived.
  const std::map<std::string, uint64_t>& live_buffers_left() const {
    return live_left_;
  }
  uint64_t sessions_ended() const { return ended_.load(); }
  // The most memory_budget_bytes has ever had charged against it.
  uint64_t memory_peak_bytes() const { return memory_peak_.load(); }
  // Raw streams kept because their sessions were not stored in full.
  const std::vector<std::string>& kept_raw() const { return kept_raw_; }

 private:
  struct Connection;
  void Log(const std::string& line);
  Status ListenUnix(const std::string& addr);
  Status ListenTcp(const std::string& addr);
  void Accept(int listen_fd, bool token_required);
  // accept() failed for want of descriptors or memory (EMFILE, ENFILE,
  // ENOBUFS, ENOMEM): stop polling the listeners for kAcceptPauseMs; logs
  // once per episode (until an accept succeeds again).
  void PauseAccepting(int err);
  // All slots are taken: closes the slowest idle connection (see
  // ServerOptions::evict_idle_ms) for `newcomer`; false when none may go.
  bool EvictSlowestIdle(const std::string& newcomer);
  // Reads what is available; false when the connection is to be closed.
  bool ReadFrom(Connection* c, bool draining);
  // Takes every complete frame the reader holds; false once closed.
  bool ReadFrames(Connection* c, bool draining);
  // One frame of the producer's stream, after its ConnectionAuth.
  bool OnFrame(Connection* c, std::string_view payload, bool draining);
  // The first frame: a ConnectionAuth (consumed, token checked where one is
  // required) or not (the stream's first packet).
  enum class AuthResult { kConsumed, kNotAuth, kRefused };
  AuthResult TakeAuth(Connection* c, std::string_view payload);
  // Closes a peer that holds more than its first frame may before a Hello.
  bool CheckBeforeHello(Connection* c);
  // Counts the strings `payload` defines against the session's budget;
  // closes the connection (false) once over it.
  bool ChargeStrings(Connection* c, std::string_view payload);
  // Charges what the connection holds (its frame reader's buffer, or the
  // frame it announced if more, and its strings) against the memory
  // budget; closes it (false) when the others leave too little room.
  bool ChargeMemory(Connection* c);
  // Answers a refused HelloReply with `reason`, logs it (unless
  // `log_reason` is false: the caller did), closes.
  void Refuse(Connection* c, const std::string& reason,
              bool log_reason = true);
  // The same for a wrong or missing token: throttled and rate-limited
  // (ServerOptions::auth_failure_pause_ms).
  void RefuseToken(Connection* c, const std::string& reason);
  // Ends the connection and its session; `reason` (if any) is logged
  // unless `log_reason` is false (the caller logged it).
  void Close(Connection* c, const std::string& reason, bool log_reason = true);
  // Writes received bytes to the connection's raw stream, if it has one.
  void WriteRaw(Connection* c, const char* data, size_t size);
  // A stream that ended without a Goodbye: the records its producer left
  // in its live buffer (sources/rft/live_recovery.h), waiting up to
  // `wait_ms` for a dying producer's lock to go. Returns the buffer read
  // ("" when none), for Close() to remove once the session is stored.
  std::string RecoverLiveBuffer(Connection* c, int wait_ms);
  // A --window has ended: stores what every open session has settled and
  // hands the open sessions' statistics to options_.on_window_end.
  void EndWindow();
  // Deletes a stored connection's raw stream, or keeps it and says where.
  void SettleRaw(Connection* c);

  RunRecorder* recorder_;
  ServerOptions options_;
  std::vector<int> listen_fds_;
  std::vector<bool> listen_needs_token_;  // parallel to listen_fds_
  static constexpr size_t kMaxAuthFrameBytes = 4096;
  std::vector<std::string> unix_paths_;
  std::vector<std::string> bound_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::atomic<size_t> open_{0};
  std::atomic<uint64_t> ended_{0};
  uint64_t memory_used_ = 0;  // the sum of every connection's charge
  std::atomic<uint64_t> memory_peak_{0};
  uint64_t next_conn_id_ = 0;
  static constexpr uint64_t kAcceptPauseMs = 250;
  uint64_t accept_resume_ms_ = 0;  // listeners left out of poll until then
  bool accept_paused_ = false;     // an out-of-descriptors episode is on
  uint64_t token_resume_ms_ = 0;   // token listeners left out until then
  static constexpr uint64_t kAuthLinesPerSecond = 3;
  uint64_t auth_window_ms_ = 0;    // the second refused tokens are logged in
  uint64_t auth_lines_ = 0;        // lines logged in it
  uint64_t auth_unlogged_ = 0;     // refusals since, not logged one by one
  std::vector<std::string> kept_raw_;
  std::map<std::string, uint64_t> live_left_;
  std::vector<char> read_buf_;  // ReadFrom's, allocated on first use
};

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_SERVER_H_
