#include "libinject/sink.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "proto/field_numbers.h"
#include "proto/framing.h"

namespace rooftrace::inject {

Sink::~Sink() = default;

namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

class FdSink : public Sink {
 public:
  FdSink(int fd, bool socket, std::string name)
      : fd_(fd), socket_(socket), name_(std::move(name)) {}
  ~FdSink() override {
    if (fd_ >= 0) close(fd_);
  }

  Status Write(std::string_view bytes) override {
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
      const ssize_t n = socket_ ? send(fd_, p, left, MSG_NOSIGNAL)
                                : write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Unavailable(name_ + ": write failed: " + ErrnoText(errno));
      }
      if (n == 0) return Unavailable(name_ + ": peer closed the connection");
      p += n;
      left -= static_cast<size_t>(n);
    }
    return OkStatus();
  }

  StatusOr<std::string> ReadSome(int timeout_ms) override {
    if (!socket_) return std::string();
    pollfd pfd{fd_, POLLIN, 0};
    const int r = poll(&pfd, 1, timeout_ms);
    if (r <= 0) return std::string();
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return std::string();
      return Unavailable(name_ + ": read failed: " + ErrnoText(errno));
    }
    if (n == 0) return Unavailable(name_ + ": peer closed the connection");
    return std::string(buf, static_cast<size_t>(n));
  }

  bool is_socket() const override { return socket_; }
  const std::string& name() const override { return name_; }

 private:
  int fd_;
  bool socket_;
  std::string name_;
};

// Connects `fd` to `addr` within `timeout_ms` (non-blocking connect + poll).
Status ConnectWithTimeout(int fd, const sockaddr* addr, socklen_t len,
                          int timeout_ms, const std::string& name) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int r = connect(fd, addr, len);
  if (r != 0 && errno == EINPROGRESS) {
    pollfd pfd{fd, POLLOUT, 0};
    r = poll(&pfd, 1, timeout_ms);
    if (r == 0) {
      return Unavailable(name + ": connect timed out after " +
                         std::to_string(timeout_ms) + " ms");
    }
    int err = 0;
    socklen_t err_len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
    if (err != 0) {
      errno = err;
      r = -1;
    } else {
      r = 0;
    }
  }
  if (r != 0) {
    return Unavailable(name + ": cannot connect: " + ErrnoText(errno) +
                       " (is `rooftrace collect` listening there?)");
  }
  fcntl(fd, F_SETFL, flags);
  // A stalled collector must not block the sender forever.
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return OkStatus();
}

// Sends the collector's token as the connection's first frame (a Packet
// holding only connection_auth, docs/wire.md); nothing without a token.
// Takes ownership of `sink`.
StatusOr<std::unique_ptr<Sink>> SendToken(std::unique_ptr<Sink> sink,
                                          const std::string& token) {
  if (token.empty()) return sink;
  namespace f = wire::fields;
  std::string auth;
  auth.push_back(static_cast<char>(f::connection_auth::kToken << 3 |
                                   wire::kWireBytes));
  wire::AppendVarint(&auth, token.size());
  auth += token;
  std::string packet;
  packet.push_back(static_cast<char>(f::packet::kConnectionAuth << 3 |
                                     wire::kWireBytes));
  wire::AppendVarint(&packet, auth.size());
  packet += auth;
  std::string frame;
  wire::AppendFrame(&frame, packet);
  Status s = sink->Write(frame);
  if (!s.ok()) return s;
  return sink;
}

}  // namespace

StatusOr<std::unique_ptr<Sink>> OpenFileSink(const std::string& path,
                                             bool exclusive) {
  const int fd =
      open(path.c_str(),
           O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW |
               (exclusive ? O_EXCL : 0),
           0600);
  if (fd < 0) {
    return Unavailable("spool file " + path + " cannot be created: " +
                       ErrnoText(errno) +
                       " (set ROOFTRACE_SPOOL_DIR to a writable directory)");
  }
  return std::unique_ptr<Sink>(new FdSink(fd, false, "file:" + path));
}

std::string SiblingPath(const std::string& path, const std::string& tag) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot != std::string::npos && dot > 0 &&
      (slash == std::string::npos || dot > slash + 1)) {
    return path.substr(0, dot) + "-" + tag + path.substr(dot);
  }
  return path + "-" + tag;
}

StatusOr<std::string> PrivateSpoolDir(const std::string& parent) {
  const std::string dir = parent + "/rooftrace-" + std::to_string(geteuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Unavailable("spool folder " + dir + " cannot be created: " +
                       ErrnoText(errno) +
                       " (set ROOFTRACE_SPOOL_DIR to a writable directory)");
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    return Unavailable("spool folder " + dir +
                       " is not a private directory of this user (a link, "
                       "another user's, or open to others): remove it, or "
                       "set ROOFTRACE_SPOOL_DIR to a directory of your own");
  }
  return dir;
}

StatusOr<std::unique_ptr<Sink>> OpenSharedFileSink(const std::string& path,
                                                   std::string* actual_path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
    if (ftruncate(fd, 0) != 0) {
      const int err = errno;
      close(fd);
      return Unavailable("trace file " + path + " cannot be truncated: " +
                         ErrnoText(err));
    }
    *actual_path = path;
    return std::unique_ptr<Sink>(new FdSink(fd, false, "file:" + path));
  }
  if (fd >= 0) close(fd);
  // Taken by another live process of the same run (or not creatable).
  const std::string sibling = SiblingPath(path, std::to_string(getpid()));
  auto sink = OpenFileSink(sibling);
  if (sink.ok()) *actual_path = sibling;
  return sink;
}

StatusOr<std::unique_ptr<Sink>> ConnectSink(const SinkSpec& spec,
                                            int timeout_ms) {
  if (spec.kind == SinkSpec::Kind::kFile) {
    std::string ignored;
    return OpenSharedFileSink(spec.path, &ignored);
  }
  if (spec.kind == SinkSpec::Kind::kUnix) {
    const std::string name = "unix:" + spec.path;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (spec.path.size() >= sizeof addr.sun_path) {
      return InvalidArgument(name + ": socket path is longer than " +
                             std::to_string(sizeof addr.sun_path - 1) +
                             " bytes; use a shorter path");
    }
    std::memcpy(addr.sun_path, spec.path.data(), spec.path.size());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Unavailable(name + ": socket(): " + ErrnoText(errno));
    Status s = ConnectWithTimeout(fd, reinterpret_cast<sockaddr*>(&addr),
                                  sizeof addr, timeout_ms, name);
    if (!s.ok()) {
      close(fd);
      return s;
    }
    return SendToken(std::unique_ptr<Sink>(new FdSink(fd, true, name)),
                     spec.token);
  }
  if (spec.kind == SinkSpec::Kind::kTcp) {
    const std::string name =
        "tcp:" + spec.host + ":" + std::to_string(spec.port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(spec.port);
    const int gai = getaddrinfo(spec.host.c_str(), port.c_str(), &hints, &res);
    if (gai != 0 || res == nullptr) {
      return Unavailable(name + ": cannot resolve host: " + gai_strerror(gai));
    }
    Status last = Unavailable(name + ": no address");
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
      const int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                            ai->ai_protocol);
      if (fd < 0) continue;
      last = ConnectWithTimeout(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms,
                                name);
      if (last.ok()) {
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        freeaddrinfo(res);
        return SendToken(std::unique_ptr<Sink>(new FdSink(fd, true, name)),
                         spec.token);
      }
      close(fd);
    }
    freeaddrinfo(res);
    return last;
  }
  return InvalidArgument("no sink given");
}

}  // namespace rooftrace::inject
