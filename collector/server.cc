#include "collector/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "proto/field_numbers.h"
#include "proto/framing.h"
#include "proto/rooftrace.pb.h"
#include "proto/wire_reader.h"
#include "sources/rft/live_recovery.h"
#include "sources/rft/wire_session.h"

namespace rooftrace {
namespace {

uint64_t NowMs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Someone accepts connections on the Unix socket at `path` (a live
// collector), as opposed to a socket file left by one that died.
bool SocketIsLive(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path.data(), path.size());
  const bool live =
      connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  close(fd);
  return live;
}

// A decimal port 0..65535 (0: the kernel picks a free one); getaddrinfo
// would take 99999 or 65536 and wrap them.
bool ValidPort(const std::string& port) {
  if (port.empty() || port.size() > 5) return false;
  for (char ch : port) {
    if (ch < '0' || ch > '9') return false;
  }
  return std::stoul(port) <= 65535;
}

bool IsLoopbackHost(const std::string& host) {
  return host.empty() || host == "localhost" || host == "127.0.0.1" ||
         host == "::1" || host.rfind("127.", 0) == 0;
}

// Equal in time that depends only on the length of `expected` (the
// server's token), not on where a guess first differs.
bool ConstantTimeEquals(std::string_view given, std::string_view expected) {
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g =
        i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(expected[i]);
  }
  return diff == 0;
}

// Whether `packet` carries Packet.connection_auth, and its token.
bool FindAuth(std::string_view packet, std::string_view* token) {
  namespace f = wire::fields;
  wire::WireReader r(packet);
  uint32_t field, wt;
  uint64_t v;
  std::string_view b;
  bool found = false;
  while (r.Next(&field, &wt, &v, &b)) {
    if (field != f::packet::kConnectionAuth || wt != wire::kWireBytes) continue;
    found = true;
    wire::WireReader auth(b);
    while (auth.Next(&field, &wt, &v, &b)) {
      if (field == f::connection_auth::kToken && wt == wire::kWireBytes) {
        *token = b;
      }
    }
  }
  return found;
}

// Interned strings `packet` defines: how many, and their bytes.
void CountStrings(std::string_view packet, uint64_t* strings,
                  uint64_t* bytes) {
  wire::WireReader r(packet);
  uint32_t field, wt;
  uint64_t v;
  std::string_view b;
  while (r.Next(&field, &wt, &v, &b)) {
    if (field == wire::fields::packet::kInternedStrings &&
        wt == wire::kWireBytes) {
      ++*strings;
      *bytes += b.size();
    }
  }
}

}  // namespace

struct CollectorServer::Connection {
  int fd = -1;
  uint64_t id = 0;
  std::string peer;
  wire::FrameReader reader;
  std::unique_ptr<WireSession> wire;  // the producer's stream, decoded
  ImportStats stats;  // frames and bytes of this connection
  uint64_t opened_ms = 0;
  uint64_t last_bytes_ms = 0;  // when bytes last arrived
  // When the frame being received began arriving (0: between frames), and
  // how many frames have been taken (a read that completes one and begins
  // the next starts the clock again).
  uint64_t frame_started_ms = 0;
  uint64_t frames_taken = 0;
  FILE* raw = nullptr;
  std::string raw_path;
  bool stored = true;  // false once a session of it could not be stored
  bool closed = false;
  // The ConnectionAuth prefix (docs/wire.md) is still to come or to end:
  // its bytes gather in auth_buf (at most kMaxAuthBytes and its header).
  bool auth_pending = true;
  bool token_required = false;  // a TCP peer of a server with a token
  // A Unix-socket peer's uid: its live buffer must be that user's file.
  bool unix_peer = false;
  uid_t peer_uid = 0;
  std::string auth_buf;
  // Interned strings the current session defined (its budget).
  uint64_t strings = 0;
  uint64_t string_bytes = 0;
  // What ChargeMemory last counted for it in memory_used_.
  uint64_t charged = 0;
};

CollectorServer::CollectorServer(RunRecorder* recorder, ServerOptions options)
    : recorder_(recorder), options_(std::move(options)) {}

CollectorServer::~CollectorServer() {
  for (auto& c : conns_) {
    if (!c->closed) Close(c.get(), "collector shutting down");
  }
  for (int fd : listen_fds_) close(fd);
  for (const auto& p : unix_paths_) unlink(p.c_str());
}

void CollectorServer::Log(const std::string& line) {
  if (options_.log) {
    options_.log(line);
  } else {
    fprintf(stderr, "rooftrace collect: %s\n", line.c_str());
  }
}

Status CollectorServer::Listen() {
  for (const std::string& addr : options_.listen) {
    if (addr.rfind("unix:", 0) == 0) {
      RT_RETURN_IF_ERROR(ListenUnix(addr));
    } else if (addr.rfind("tcp:", 0) == 0) {
      RT_RETURN_IF_ERROR(ListenTcp(addr));
    } else {
      return InvalidArgument("--listen " + addr +
                             ": expected unix:PATH or tcp:HOST:PORT");
    }
  }
  return OkStatus();
}

Status CollectorServer::ListenUnix(const std::string& addr) {
  const std::string path = addr.substr(5);
  sockaddr_un sa{};
  if (path.empty() || path.size() >= sizeof(sa.sun_path)) {
    return InvalidArgument("--listen " + addr + ": a Unix socket path must "
                           "have 1 to " +
                           std::to_string(sizeof(sa.sun_path) - 1) +
                           " characters");
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return InvalidArgument("--listen " + addr + ": " + path +
                             " exists and is not a socket: choose another "
                             "path");
    }
    if (SocketIsLive(path)) {
      return FailedPrecondition("--listen " + addr +
                                ": another collector is listening on " +
                                path + ": stop it, or choose another path");
    }
    unlink(path.c_str());  // a stale socket of an earlier collector
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path.data(), path.size());
  // The socket is created 0600: only this user's producers may connect.
  const mode_t old = umask(0177);
  const int rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  umask(old);
  if (rc != 0 || listen(fd, 128) != 0) {
    const std::string err = strerror(errno);
    close(fd);
    return Unavailable("--listen " + addr + ": cannot listen: " + err +
                       ": check the directory exists and is writable");
  }
  chmod(path.c_str(), 0600);
  SetNonBlocking(fd);
  listen_fds_.push_back(fd);
  listen_needs_token_.push_back(false);  // 0600: this user's processes only
  unix_paths_.push_back(path);
  bound_.push_back(addr);
  return OkStatus();
}

Status CollectorServer::ListenTcp(const std::string& addr) {
  const std::string rest = addr.substr(4);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("--listen " + addr +
                           ": expected tcp:HOST:PORT, e.g. "
                           "tcp:127.0.0.1:7788");
  }
  std::string host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  if (!ValidPort(port)) {
    return InvalidArgument("--listen " + addr + ": port " + port +
                           " is not a number from 1 to 65535 (0: any free "
                           "port)");
  }
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "localhost") host = "127.0.0.1";
  if (!IsLoopbackHost(host) && options_.token.empty()) {
    return FailedPrecondition(
        "--listen " + addr +
        ": a listener other hosts can reach needs a shared token: write "
        "one to a file only you can read and pass --token-file FILE (or "
        "set ROOFTRACE_TOKEN), and give producers the same in "
        "ROOFTRACE_TOKEN or ROOFTRACE_TOKEN_FILE; or listen on "
        "tcp:127.0.0.1:PORT");
  }
  if (options_.token.empty() && !options_.insecure_tcp) {
    return FailedPrecondition(
        "--listen " + addr +
        ": TCP needs a shared token, on loopback too (any user of this "
        "machine can connect to a loopback port): write one of at least "
        "16 characters to a file only you can read (chmod 600) and pass "
        "--token-file FILE (or set ROOFTRACE_TOKEN), and give producers "
        "the same in ROOFTRACE_TOKEN or ROOFTRACE_TOKEN_FILE; or use a "
        "unix: socket; or --insecure-tcp to accept anyone on loopback");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res) {
    return InvalidArgument("--listen " + addr + ": cannot resolve host '" +
                           host + "' and port '" + port +
                           "': give a numeric port and a local address");
  }
  const int fd = socket(res->ai_family, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
      listen(fd, 128) != 0) {
    const std::string err = strerror(errno);
    freeaddrinfo(res);
    close(fd);
    return Unavailable("--listen " + addr + ": cannot listen: " + err +
                       ": choose a free port");
  }
  freeaddrinfo(res);
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  char buf[INET6_ADDRSTRLEN] = {0};
  int bound_port = 0;
  if (ss.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    bound_port = ntohs(in->sin_port);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    bound_port = ntohs(in6->sin6_port);
  }
  SetNonBlocking(fd);
  listen_fds_.push_back(fd);
  listen_needs_token_.push_back(!options_.token.empty());
  bound_.push_back("tcp:" + std::string(buf) + ":" +
                   std::to_string(bound_port));
  if (options_.token.empty()) {
    Log("WARNING: --insecure-tcp: " + bound_.back() +
        " asks for no token: any user of this machine can send data into "
        "this run; use --token-file for a shared machine");
  }
  return OkStatus();
}

void CollectorServer::Accept(int listen_fd, bool token_required) {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    const int fd = accept(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM) {
        PauseAccepting(errno);
      }
      return;  // EAGAIN: accepted everything pending
    }
    if (accept_paused_) {
      accept_paused_ = false;
      Log("accepting connections again");
    }
    SetNonBlocking(fd);
    std::string peer;
    bool unix_peer = false;
    uid_t peer_uid = 0;
    if (ss.ss_family == AF_UNIX) {
      ucred cred{};
      socklen_t cl = sizeof cred;
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
        peer = "unix peer pid " + std::to_string(cred.pid);
        peer_uid = cred.uid;
        unix_peer = true;
      } else {
        peer = "unix peer";
      }
    } else {
      char buf[INET6_ADDRSTRLEN] = {0};
      int port = 0;
      if (ss.ss_family == AF_INET) {
        auto* in = reinterpret_cast<sockaddr_in*>(&ss);
        inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
        port = ntohs(in->sin_port);
      } else {
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
        inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
        port = ntohs(in6->sin6_port);
      }
      peer = "tcp peer " + std::string(buf) + ":" + std::to_string(port);
    }
    if (open_.load() >= options_.max_connections && !EvictSlowestIdle(peer)) {
      Log("refused " + peer + ": " + std::to_string(options_.max_connections) +
          " connections already open (the limit, --max-connections), none "
          "of them idle");
      ImportStats s;
      ++s[ImportStat::k_refused_sessions];
      recorder_->AddStats(s);
      close(fd);
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->id = ++next_conn_id_;
    c->peer = peer;
    c->token_required = token_required;
    c->unix_peer = unix_peer;
    c->peer_uid = peer_uid;
    c->wire = std::make_unique<WireSession>(peer);
    c->opened_ms = c->last_bytes_ms = NowMs();
    if (!options_.raw_dir.empty()) {
      const std::string path = options_.raw_dir + "/run" +
                               std::to_string(recorder_->run_id()) + "-" +
                               std::to_string(c->id) + ".rft";
      c->raw = fopen(path.c_str(), "wb");
      if (c->raw == nullptr) {
        Log("cannot keep the raw stream of " + peer + " in " + path + ": " +
            strerror(errno));
      } else {
        c->raw_path = path;
      }
    }
    ++open_;
    conns_.push_back(std::move(c));
  }
}

bool CollectorServer::EvictSlowestIdle(const std::string& newcomer) {
  const uint64_t now = NowMs();
  Connection* victim = nullptr;
  // Bytes per second of a connection that may go (lower goes first), and
  // how long it has been idle or slow, for the log.
  double victim_rate = 0;
  uint64_t victim_for_ms = 0;
  for (auto& c : conns_) {
    if (c->closed) continue;
    double rate;
    uint64_t for_ms;
    if (c->reader.buffered_bytes() > 0 && c->frame_started_ms != 0) {
      // Inside a frame: slow once it has come under the floor for 1 s.
      for_ms = now - c->frame_started_ms;
      if (for_ms < 1000) continue;
      rate = 1000.0 * static_cast<double>(c->reader.buffered_bytes()) /
             static_cast<double>(for_ms);
      if (rate >= static_cast<double>(options_.min_frame_bytes_per_s)) {
        continue;
      }
    } else {
      // Between frames (or before the Hello): idle long enough.
      for_ms = now - c->last_bytes_ms;
      if (for_ms < options_.evict_idle_ms) continue;
      rate = 0;
    }
    if (victim == nullptr || rate < victim_rate ||
        (rate == victim_rate && for_ms > victim_for_ms)) {
      victim = c.get();
      victim_rate = rate;
      victim_for_ms = for_ms;
    }
  }
  if (victim == nullptr) return false;
  ++victim->stats[ImportStat::k_timed_out_connections];
  Close(victim, "evicted for " + newcomer + ": all " +
                    std::to_string(options_.max_connections) +
                    " connection slots were taken and this one was the "
                    "slowest (" +
                    (victim_rate == 0
                         ? "idle for " + std::to_string(victim_for_ms) + " ms"
                         : std::to_string(static_cast<uint64_t>(victim_rate)) +
                               " bytes/s for " +
                               std::to_string(victim_for_ms) + " ms") +
                    "); what it sent is kept");
  return true;
}

void CollectorServer::PauseAccepting(int err) {
  // The listener stays readable while connections wait: polling it again
  // at once would spin. Waiting peers stay in the backlog meanwhile.
  accept_resume_ms_ = NowMs() + kAcceptPauseMs;
  if (accept_paused_) return;  // said once per episode
  accept_paused_ = true;
  Log(std::string("cannot accept connections: ") + strerror(err) + " (" +
      std::to_string(open_.load()) +
      " connections open): pausing the listener " +
      std::to_string(kAcceptPauseMs) +
      " ms at a time until descriptors free up; raise the limit (ulimit -n) "
      "to at least " + std::to_string(options_.max_connections + 64) +
      " (the collector holds up to " +
      std::to_string(options_.max_connections) +
      " connections), or hold fewer with --max-connections");
}

void CollectorServer::Close(Connection* c, const std::string& reason,
                            bool log_reason) {
  if (c->closed) return;
  c->closed = true;
  memory_used_ -= c->charged;  // its buffer goes with it
  c->charged = 0;
  if (!reason.empty() && log_reason) {
    Log("closed " + c->wire->session().name() + " (" + c->peer +
        "): " + reason);
  }
  close(c->fd);
  const std::string recovered_from =
      RecoverLiveBuffer(c, /*wait_ms=*/reason.empty() ? 250 : 0);
  c->wire->session().stats().Add(c->stats);
  Status s = recorder_->AddSession(&c->wire->session());
  if (!s.ok()) {
    c->stored = false;
    Log("cannot store the session of " + c->peer + ": " + s.message());
  }
  // The live buffer goes once what it held is stored or in the raw stream.
  if (!recovered_from.empty() && (s.ok() || c->raw != nullptr)) {
    unlink(recovered_from.c_str());
  }
  SettleRaw(c);
  --open_;
  ++ended_;
}

std::string CollectorServer::RecoverLiveBuffer(Connection* c, int wait_ms) {
  // Only a local peer's: a TCP producer's buffer is on another machine.
  if (!c->unix_peer) return "";
  auto recovery = RecoverFromLiveBuffer(c->wire.get(), c->peer_uid, wait_ms);
  if (!recovery.ok()) {
    Log("cannot recover the records of " + c->peer + ": " +
        recovery.status().message());
    return "";
  }
  if (recovery->summary.empty()) return "";
  Log(recovery->summary);
  if (recovery->owner_alive) {
    live_left_[c->wire->live_buffer()] =
        c->wire->session().end().last_sequence;
  }
  WriteRaw(c, recovery->frames.data(), recovery->frames.size());
  return recovery->consumed_path;
}

void CollectorServer::WriteRaw(Connection* c, const char* data, size_t size) {
  if (c->raw == nullptr || fwrite(data, 1, size, c->raw) == size) return;
  Log("cannot keep the raw stream of " + c->peer + " in " + c->raw_path +
      ": " + strerror(errno) + " (the file holds only what came before)");
  fclose(c->raw);
  c->raw = nullptr;
}

void CollectorServer::SettleRaw(Connection* c) {
  const bool was_open = c->raw != nullptr;
  if (c->raw != nullptr && fclose(c->raw) != 0) {
    Log("cannot keep the raw stream of " + c->peer + " in " + c->raw_path +
        ": " + strerror(errno));
  }
  c->raw = nullptr;
  if (c->raw_path.empty()) return;
  // Once a write failed, no later session is stored either.
  const bool stored = c->stored && recorder_->write_error().ok();
  if (stored && options_.delete_stored_raw) {
    unlink(c->raw_path.c_str());
    return;
  }
  if (!stored) {
    kept_raw_.push_back(c->raw_path);
    Log("kept the raw stream of " + c->peer + " in " + c->raw_path +
        (was_open ? "" : " (incomplete: see above)") +
        ": its sessions were not stored in full");
  }
}

bool CollectorServer::ReadFrom(Connection* c, bool draining) {
  // The server's one thread reads into one buffer, on the heap: as a
  // static thread_local array it was static TLS that every thread of the
  // process paid for (collect --metrics-listen's HTTP threads, whose
  // stacks are small, could not start).
  constexpr size_t kBufBytes = 256 * 1024;
  if (read_buf_.empty()) read_buf_.resize(kBufBytes);
  char* const buf = read_buf_.data();
  // Outside the drain, one call reads at most this much, so that a producer
  // that never stops sending does not keep the others waiting.
  constexpr size_t kReadBudget = 4 * kBufBytes;
  for (size_t read_bytes = 0; draining || read_bytes < kReadBudget;) {
    const ssize_t n = read(c->fd, buf, kBufBytes);
    if (n == 0) {
      if (c->reader.buffered_bytes() > 0) {
        ++c->stats[ImportStat::k_truncated_streams];
        Close(c, "stream ended inside a frame (" +
                     std::to_string(c->reader.buffered_bytes()) +
                     " bytes of an incomplete frame dropped)");
      } else {
        Close(c, "");
      }
      return false;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      if (errno == EINTR) continue;
      // A producer that sent its Goodbye and closed without reading our
      // HelloReply resets the connection: a clean end, not a failure.
      const bool clean = errno == ECONNRESET &&
                         c->wire->session().end().goodbye &&
                         c->reader.buffered_bytes() == 0;
      Close(c, clean ? std::string()
                     : std::string("read failed: ") + strerror(errno));
      return false;
    }
    read_bytes += static_cast<size_t>(n);
    c->last_bytes_ms = NowMs();
    c->stats[ImportStat::k_bytes] += static_cast<uint64_t>(n);
    const bool inside_frame = c->reader.buffered_bytes() > 0;
    const uint64_t frames_before = c->frames_taken;
    // Until the first frame says whether it is a ConnectionAuth (never
    // written raw: it holds the token), the bytes wait in auth_buf.
    if (c->auth_pending) {
      c->auth_buf.append(buf, static_cast<size_t>(n));
    } else {
      WriteRaw(c, buf, static_cast<size_t>(n));
    }
    c->reader.Feed(buf, static_cast<size_t>(n));
    if (!ReadFrames(c, draining) || !CheckBeforeHello(c) ||
        !ChargeMemory(c)) {
      return false;
    }
    // The progress clock: a frame begins with the first of its bytes read.
    if (c->reader.buffered_bytes() == 0) {
      c->frame_started_ms = 0;
    } else if (!inside_frame || c->frames_taken != frames_before) {
      c->frame_started_ms = c->last_bytes_ms;
    }
  }
  return true;  // budget spent: the rest on the next turn
}

bool CollectorServer::ReadFrames(Connection* c, bool draining) {
  std::string_view payload;
  for (;;) {
    const auto r = c->reader.Next(&payload);
    if (r == wire::FrameReader::Result::kNeedMore) return true;
    if (r == wire::FrameReader::Result::kCorrupt) {
      ++c->stats[ImportStat::k_corrupt_frames];
      Close(c, c->reader.error() + ": not a rooftrace stream or corrupt");
      return false;
    }
    ++c->frames_taken;
    if (c->auth_pending) {
      const AuthResult a = TakeAuth(c, payload);
      if (a == AuthResult::kRefused) return false;
      if (a == AuthResult::kConsumed) continue;
    }
    ++c->stats[ImportStat::k_frames];
    if (!OnFrame(c, payload, draining)) return false;
  }
}

CollectorServer::AuthResult CollectorServer::TakeAuth(
    Connection* c, std::string_view payload) {
  std::string_view token;
  const bool has_auth = FindAuth(payload, &token);
  // The raw stream starts after the ConnectionAuth frame: auth_buf begins
  // with this first frame.
  const size_t skip =
      has_auth ? wire::FrameHeaderBytes(payload.size()) + payload.size() : 0;
  if (skip < c->auth_buf.size()) {
    WriteRaw(c, c->auth_buf.data() + skip, c->auth_buf.size() - skip);
  }
  std::string().swap(c->auth_buf);
  c->auth_pending = false;
  if (c->token_required && !has_auth) {
    RefuseToken(c, "sent no token: this collector requires one (set "
                   "ROOFTRACE_TOKEN or ROOFTRACE_TOKEN_FILE for the "
                   "producer)");
    return AuthResult::kRefused;
  }
  if (c->token_required && !ConstantTimeEquals(token, options_.token)) {
    RefuseToken(c, "wrong token: give the producer the collector's token "
                   "(ROOFTRACE_TOKEN or ROOFTRACE_TOKEN_FILE)");
    return AuthResult::kRefused;
  }
  return has_auth ? AuthResult::kConsumed : AuthResult::kNotAuth;
}

bool CollectorServer::CheckBeforeHello(Connection* c) {
  if (c->wire->has_hello()) return true;
  // Before its token, a peer may send only the small ConnectionAuth frame.
  const size_t limit = c->auth_pending && c->token_required
                           ? kMaxAuthFrameBytes
                           : options_.max_hello_frame_bytes;
  const size_t held = c->reader.buffered_bytes();
  if (held <= limit) return true;
  ++c->stats[ImportStat::k_refused_sessions];
  Close(c, "sent " + wire::HumanBytes(held) + " of a first frame without " +
               (c->auth_pending && c->token_required ? "its token"
                                                     : "a Hello") +
               " (limit " + wire::HumanBytes(limit) +
               " before the Hello): not a rooftrace producer");
  return false;
}

bool CollectorServer::ChargeStrings(Connection* c, std::string_view payload) {
  CountStrings(payload, &c->strings, &c->string_bytes);
  if (c->strings <= options_.max_session_strings &&
      c->string_bytes <= options_.max_session_string_bytes) {
    return true;
  }
  Close(c, "defined " + std::to_string(c->strings) + " interned strings (" +
               wire::HumanBytes(c->string_bytes) + ") in one session: over "
               "the limit of " + std::to_string(options_.max_session_strings) +
               " strings or " +
               wire::HumanBytes(options_.max_session_string_bytes) +
               " per session");
  return false;
}

bool CollectorServer::ChargeMemory(Connection* c) {
  const uint64_t frame = c->reader.pending_frame_bytes();
  const uint64_t need =
      std::max<uint64_t>(frame, c->reader.capacity_bytes()) + c->string_bytes;
  const uint64_t others = memory_used_ - c->charged;
  if (others + need <= options_.memory_budget_bytes) {
    memory_used_ = others + need;
    c->charged = need;
    if (memory_used_ > memory_peak_.load()) memory_peak_.store(memory_used_);
    return true;
  }
  ++c->stats[ImportStat::k_memory_refused_connections];
  Close(c, "its next frame (" + wire::HumanBytes(frame) + ") and its " +
               wire::HumanBytes(c->string_bytes) +
               " of interned strings would take what the collector holds "
               "for all connections to " + wire::HumanBytes(others + need) +
               ", over its memory budget of " +
               wire::HumanBytes(options_.memory_budget_bytes) +
               "; what it sent before is kept; " +
               options_.memory_budget_hint);
  return false;
}

void CollectorServer::RefuseToken(Connection* c, const std::string& reason) {
  const uint64_t now = NowMs();
  token_resume_ms_ = now + options_.auth_failure_pause_ms;
  // At most kAuthLinesPerSecond lines a second; the rest are counted in
  // the next line (25,000 wrong tries made 25,000 lines).
  if (now - auth_window_ms_ >= 1000) {
    auth_window_ms_ = now;
    auth_lines_ = 0;
  }
  std::string line;
  if (auth_lines_ < kAuthLinesPerSecond) {
    ++auth_lines_;
    line = "closed " + c->peer + ": refused: " + reason;
    if (auth_unlogged_ > 0) {
      line += " (and " + std::to_string(auth_unlogged_) +
              " more refused tokens since the last line)";
    }
    line += "; token failures are throttled to one per " +
            std::to_string(options_.auth_failure_pause_ms) + " ms";
    auth_unlogged_ = 0;
  } else {
    ++auth_unlogged_;
  }
  if (!line.empty()) Log(line);
  Refuse(c, reason, /*log_reason=*/false);
}

void CollectorServer::Refuse(Connection* c, const std::string& reason,
                             bool log_reason) {
  wire::Packet reply;
  auto* hr = reply.mutable_hello_reply();
  hr->set_accepted(false);
  hr->set_protocol_version(wire::kProtocolVersion);
  hr->set_reason(reason);
  std::string frame;
  wire::AppendFrame(&frame, reply.SerializeAsString());
  (void)!send(c->fd, frame.data(), frame.size(), MSG_NOSIGNAL);
  ++c->stats[ImportStat::k_refused_sessions];
  Close(c, "refused: " + reason, log_reason);
}

bool CollectorServer::OnFrame(Connection* c, std::string_view payload,
                              bool draining) {
  if (!ChargeStrings(c, payload)) return false;
  const bool had_hello = c->wire->has_hello();
  Status s = c->wire->OnPacket(payload);
  if (s.ok() && c->wire->restart_pending()) {
    c->wire->session().stats().Add(c->stats);
    c->stats = ImportStats();
    Status stored = recorder_->AddSession(&c->wire->session());
    if (!stored.ok()) {
      c->stored = false;
      Log("cannot store the session of " + c->peer + ": " + stored.message());
    }
    c->wire = std::make_unique<WireSession>(c->peer);
    c->strings = c->string_bytes = 0;  // a new session, a new budget
    if (!ChargeStrings(c, payload)) return false;
    s = c->wire->OnPacket(payload);
  }
  if (!s.ok()) {
    Refuse(c, s.message());
    return false;
  }
  // A long session stores its settled steps as it goes (bounded memory).
  Status f = recorder_->MaybeFlush(&c->wire->session(), conns_.size());
  if (!f.ok()) {
    c->stored = false;
    Log("cannot store part of the session of " + c->peer + ": " +
        f.message());
  }
  if (!had_hello && c->wire->has_hello() && !draining) {
    wire::Packet reply;
    reply.mutable_hello_reply()->set_accepted(true);
    reply.mutable_hello_reply()->set_protocol_version(wire::kProtocolVersion);
    std::string frame;
    wire::AppendFrame(&frame, reply.SerializeAsString());
    // Best effort: a producer that never reads replies is fine (one gone
    // already is no SIGPIPE: profile runs this server in its own process).
    (void)!send(c->fd, frame.data(), frame.size(), MSG_NOSIGNAL);
  }
  return true;
}

void CollectorServer::EndWindow() {
  ImportStats open;
  for (auto& c : conns_) {
    if (c->closed) continue;
    Status f = recorder_->FlushDue(&c->wire->session(), conns_.size());
    if (!f.ok()) {
      c->stored = false;
      Log("cannot store part of the session of " + c->peer + ": " +
          f.message());
    }
    // As Close() will count them: the connection's own and its session's.
    open.Add(c->stats);
    open.Add(c->wire->session().stats());
  }
  options_.on_window_end(open);
}

Status CollectorServer::Run(const std::atomic<bool>* stop) {
  std::vector<pollfd> fds;
  uint64_t window_end_ms = NowMs() + options_.window_ms;
  while (!stop->load()) {
    fds.clear();
    // While accepting is paused the listeners are left out (fd -1: poll
    // skips it), so that a readable listener does not wake us at once.
    const uint64_t turn_ms = NowMs();
    const bool accepting = turn_ms >= accept_resume_ms_;
    // After a refused token the token listeners rest a moment (throttle).
    const bool token_accepting = turn_ms >= token_resume_ms_;
    for (size_t l = 0; l < listen_fds_.size(); ++l) {
      const bool on = accepting && (token_accepting || !listen_needs_token_[l]);
      fds.push_back({on ? listen_fds_[l] : -1, POLLIN, 0});
    }
    for (auto& c : conns_) fds.push_back({c->fd, POLLIN, 0});
    const int rc = poll(fds.data(), fds.size(), 50);
    if (rc < 0 && errno != EINTR) {
      return Unavailable(std::string("poll failed: ") + strerror(errno));
    }
    size_t i = 0;
    for (; i < listen_fds_.size(); ++i) {
      if (fds[i].revents & POLLIN) Accept(listen_fds_[i], listen_needs_token_[i]);
    }
    const size_t first_conn = listen_fds_.size();
    for (size_t j = first_conn; j < fds.size(); ++j) {
      Connection* c = conns_[j - first_conn].get();
      // An evicted connection (closed by Accept above) is not read: its
      // descriptor may already be a new peer's.
      if (!c->closed && (fds[j].revents & (POLLIN | POLLHUP | POLLERR))) {
        ReadFrom(c, false);
      }
    }
    // Timeouts: no Hello in time, or nothing received for stall_timeout_ms
    // while inside a frame. Measured from the last bytes received, not from
    // the last frame completed: a server slowed by its store reads data
    // waiting on every turn and must not blame the producer for its delay.
    const uint64_t now = NowMs();
    for (auto& c : conns_) {
      if (c->closed) continue;
      if (!c->wire->has_hello() &&
          now - c->opened_ms > options_.hello_timeout_ms) {
        ++c->stats[ImportStat::k_timed_out_connections];
        Close(c.get(), std::string("sent no ") +
                           (c->auth_pending && c->token_required ? "token"
                                                                 : "Hello") +
                           " within " +
                           std::to_string(options_.hello_timeout_ms) +
                           " ms (--hello-timeout-ms)");
      } else if (c->reader.buffered_bytes() > 0 &&
                 now - c->last_bytes_ms > options_.stall_timeout_ms) {
        ++c->stats[ImportStat::k_timed_out_connections];
        Close(c.get(), "stalled inside a frame for " +
                           std::to_string(options_.stall_timeout_ms) +
                           " ms (--stall-timeout-ms)");
      } else if (c->wire->has_hello() && c->reader.buffered_bytes() > 0 &&
                 c->frame_started_ms != 0 &&
                 now - c->frame_started_ms > options_.progress_grace_ms &&
                 c->reader.buffered_bytes() * 1000 <
                     options_.min_frame_bytes_per_s *
                         (now - c->frame_started_ms)) {
        // Bytes keep coming, too few to matter: each one resets the stall
        // timer, so only a floor on the rate frees the slot.
        ++c->stats[ImportStat::k_timed_out_connections];
        const uint64_t ms = now - c->frame_started_ms;
        Close(c.get(), "sent " + std::to_string(c->reader.buffered_bytes()) +
                           " bytes of a frame in " + std::to_string(ms) +
                           " ms, under the floor of " +
                           std::to_string(options_.min_frame_bytes_per_s) +
                           " bytes/s: too slow to be a producer "
                           "(--min-frame-bytes-per-s)");
      }
    }
    std::erase_if(conns_, [](const auto& c) { return c->closed; });
    if (options_.window_ms > 0 && options_.on_window_end &&
        NowMs() >= window_end_ms) {
      EndWindow();
      // A window is never shortened to catch up after a slow store write.
      window_end_ms = std::max(window_end_ms + options_.window_ms,
                               NowMs() + options_.window_ms / 2);
    }
  }
  // Stop accepting; read what every producer already sent; end sessions.
  for (int fd : listen_fds_) close(fd);
  listen_fds_.clear();
  listen_needs_token_.clear();
  for (const auto& p : unix_paths_) unlink(p.c_str());
  unix_paths_.clear();
  for (auto& c : conns_) {
    if (!c->closed && ReadFrom(c.get(), true)) Close(c.get(), "");
  }
  conns_.clear();
  if (auth_unlogged_ > 0) {
    Log(std::to_string(auth_unlogged_) +
        " more connections were refused for a wrong or missing token after "
        "the last line");
    auth_unlogged_ = 0;
  }
  return OkStatus();
}

}  // namespace rooftrace
