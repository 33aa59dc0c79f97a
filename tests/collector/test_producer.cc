// A stand-in for libinject in integration tests: streams a generated LLM
// trace to a collector over a Unix or TCP socket (ROOFTRACE_SINK or --sink).
//   test_producer [--sink ADDR] [--pid N] [--steps N] [--exit-code N]
//                 [--pause-after N --ready-file F]   (write N frames, touch F,
//                                                     then wait to be killed)
//                 [--garbage]                         (send bytes that are
//                                                     not a frame)
//                 [--nvtx]                            ("step" and "layer.N"
//                                                     NVTX ranges)
//                 [--spool]                           (write a spool in
//                                                     $ROOFTRACE_SPOOL_DIR
//                                                     named as libinject
//                                                     names its own)
// Exits with --exit-code (default 0) after closing the connection.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>

#include "proto/framing.h"
#include "sources/rft/testing/trace_builder.h"

using rooftrace::test_support::GenerateLlmTrace;
using rooftrace::test_support::LlmTraceOptions;
using rooftrace::test_support::TraceBuilder;

namespace {

int Connect(const std::string& sink) {
  if (sink.rfind("unix:", 0) == 0) {
    const std::string path = sink.substr(5);
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    strncpy(sa.sun_path, path.c_str(), sizeof(sa.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return -1;
    return fd;
  }
  if (sink.rfind("tcp:", 0) == 0) {
    const std::string rest = sink.substr(4);
    const size_t colon = rest.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(atoi(rest.c_str() + colon + 1)));
    inet_pton(AF_INET, rest.substr(0, colon).c_str(), &sa.sin_addr);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return -1;
    return fd;
  }
  return -1;
}

// A spool like libinject's own (sender.cc DefaultSpoolPath):
// $ROOFTRACE_SPOOL_DIR/rooftrace-<host>-<pid>-<start_unix_ns>.rft.
int OpenSpool() {
  const char* dir = getenv("ROOFTRACE_SPOOL_DIR");
  const long long ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::string path = std::string(dir ? dir : ".") +
                           "/rooftrace-test-host-" +
                           std::to_string(getpid()) + "-" +
                           std::to_string(ns) + ".rft";
  return open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sink = getenv("ROOFTRACE_SINK") ? getenv("ROOFTRACE_SINK") : "";
  std::string ready_file;
  int exit_code = 0;
  long pause_after = -1;
  bool garbage = false, spool = false;
  LlmTraceOptions o;
  o.decode_steps = 4;
  o.max_batch_records = 50;
  o.session.pid = static_cast<uint32_t>(getpid());
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : ""; };
    if (a == "--sink") sink = next();
    else if (a == "--pid") o.session.pid = static_cast<uint32_t>(atoi(next().c_str()));
    else if (a == "--steps") o.decode_steps = atoi(next().c_str());
    else if (a == "--exit-code") exit_code = atoi(next().c_str());
    else if (a == "--pause-after") pause_after = atol(next().c_str());
    else if (a == "--ready-file") ready_file = next();
    else if (a == "--garbage") garbage = true;
    else if (a == "--nvtx") o.nvtx = true;
    else if (a == "--spool") spool = true;
  }
  const int fd = spool ? OpenSpool() : Connect(sink);
  if (fd < 0) {
    fprintf(stderr, "test_producer: cannot connect to '%s'\n", sink.c_str());
    return 90;
  }
  if (garbage) {
    WriteAll(fd, std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    usleep(200000);
    close(fd);
    return exit_code;
  }
  // Like libinject: with ROOFTRACE_TOKEN, the first frame holds only
  // Packet.connection_auth.
  if (const char* token = getenv("ROOFTRACE_TOKEN"); token && *token) {
    rooftrace::wire::Packet auth;
    auth.mutable_connection_auth()->set_token(token);
    std::string frame;
    rooftrace::wire::AppendFrame(&frame, auth.SerializeAsString());
    if (!WriteAll(fd, frame)) return 91;
  }
  TraceBuilder b(o.session);
  long frames = 0;
  bool ok = true;
  b.set_sink([&](std::string_view frame) {
    if (!ok) return;
    if (pause_after >= 0 && frames == pause_after) {
      std::ofstream(ready_file) << frames << "\n";
      for (;;) pause();  // until killed
    }
    ok = WriteAll(fd, std::string(frame));
    if (++frames == 1 && ok && !spool) {
      // Read the HelloReply like a real producer: an unread reply would make
      // a TCP close reset the connection and discard our last bytes.
      rooftrace::wire::FrameReader reader;
      std::string_view payload;
      char buf[4096];
      while (reader.Next(&payload) != rooftrace::wire::FrameReader::Result::kFrame) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) { ok = false; return; }
        reader.Feed(buf, static_cast<size_t>(n));
      }
      rooftrace::wire::Packet reply;
      reply.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
      if (!reply.hello_reply().accepted()) {
        fprintf(stderr, "test_producer: refused: %s\n",
                reply.hello_reply().reason().c_str());
        ok = false;
      }
    }
  });
  GenerateLlmTrace(o, &b);
  close(fd);
  return ok ? exit_code : 91;
}
