// Where framed packets go: a Unix socket, a TCP connection (loopback unless
// told otherwise) or a spool file (.rft, the same framing).
//
// Used only by the sender thread; not thread-safe. Write() either writes all
// bytes or returns an error (the sender then switches to a spool file).
// Sockets use MSG_NOSIGNAL (no SIGPIPE in the host) and a send timeout, so a
// stalled collector cannot block the sender forever.
#ifndef ROOFTRACE_LIBINJECT_SINK_H_
#define ROOFTRACE_LIBINJECT_SINK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "libinject/config.h"

namespace rooftrace::inject {

class Sink {
 public:
  virtual ~Sink();
  // Writes every byte or fails (the peer went away, disk full, timeout).
  virtual Status Write(std::string_view bytes) = 0;
  // Reads what the peer sent within `timeout_ms` (sockets only; files
  // return an empty string at once).
  virtual StatusOr<std::string> ReadSome(int timeout_ms) = 0;
  virtual bool is_socket() const = 0;
  // "unix:/tmp/c.sock", "file:/tmp/x.rft".
  virtual const std::string& name() const = 0;
};

// "<dir>/<stem>-<tag><ext>": a sibling of `path` ("run.rft" -> "run-42.rft").
std::string SiblingPath(const std::string& path, const std::string& tag);

// Creates `path` for writing, mode 0600 (a trace holds the host's argv and
// configuration): never through a symbolic link (O_NOFOLLOW), and with
// `exclusive` never onto an existing file (O_EXCL: spools are named
// uniquely, so an existing one is someone else's). Without it an existing
// regular file is truncated.
StatusOr<std::unique_ptr<Sink>> OpenFileSink(const std::string& path,
                                             bool exclusive = false);
// `<parent>/rooftrace-<uid>`, created 0700 when missing, for spools in a
// shared temporary folder: refused (with the fix) when it exists but is
// not a directory of this user that only this user may enter.
StatusOr<std::string> PrivateSpoolDir(const std::string& parent);
// For ROOFTRACE_SINK=file:PATH, which every process of a run inherits: the
// first live process takes PATH (an exclusive flock, released at its exit);
// another process started while it runs writes "<name>-<pid>.rft" beside it
// instead of truncating it. `*actual_path` says which.
StatusOr<std::unique_ptr<Sink>> OpenSharedFileSink(const std::string& path,
                                                   std::string* actual_path);
// Connects within `timeout_ms`; errors name the address and the fix.
StatusOr<std::unique_ptr<Sink>> ConnectSink(const SinkSpec& spec,
                                            int timeout_ms);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_SINK_H_
