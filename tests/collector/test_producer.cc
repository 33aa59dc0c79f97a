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
//                 [--dead N]                          (die as a SIGKILLed
//                                                     producer does: N NVTX
//                                                     ranges committed in a
//                                                     live buffer in
//                                                     $ROOFTRACE_SPOOL_DIR,
//                                                     no stream at all; with
//                                                     --spool, a spool whose
//                                                     Hello names it and 3
//                                                     ranges, no Goodbye)
//                 [--paced BATCHES --batch-ms MS --kernels-per-batch K
//                  --step-batch N --drop-batch N --dropped N]
//                                                     (tests/support/
//                                                     paced_stream.h: a
//                                                     stream of known totals
//                                                     sent over time)
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

#include "proto/field_numbers.h"
#include "proto/framing.h"
#include "proto/live_buffer.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/paced_stream.h"

using rooftrace::test_support::GenerateLlmTrace;
using rooftrace::test_support::LlmTraceOptions;
using rooftrace::test_support::SendPacedStream;
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
// The same name with `ext` (.rft, .live) for the process started at `ns`.
std::string SpoolName(long long ns, const char* ext) {
  const char* dir = getenv("ROOFTRACE_SPOOL_DIR");
  return std::string(dir ? dir : ".") + "/rooftrace-test-host-" +
         std::to_string(getpid()) + "-" + std::to_string(ns) + ext;
}

long long NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int OpenSpool(long long ns = NowNs()) {
  const std::string path = SpoolName(ns, ".rft");
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

// A producer that dies without clean-up (as if SIGKILLed): `ranges` NVTX
// ranges named "dead" (ids from 1,000,000) committed in its live buffer,
// and, with `spool`, a spool whose Hello names the buffer holding three
// ranges (ids 1..3) and no Goodbye. Returns the exit code (never returns
// on success: _exit, so nothing retires the buffer).
int DieWithALiveBuffer(uint64_t ranges, bool spool) {
  using rooftrace::test_support::SessionInfo;
  const long long ns = NowNs();
  SessionInfo info;
  info.pid = static_cast<uint32_t>(getpid());
  info.start_unix_ns = static_cast<uint64_t>(ns);
  info.live_buffer = SpoolName(ns, ".live");
  TraceBuilder hello(info);
  hello.Hello();
  uint64_t capacity = 8;
  while (capacity < ranges) capacity *= 2;
  auto live = rooftrace::inject::LiveBuffer::Create(
      info.live_buffer, capacity, 4096, hello.Framed(), info.pid,
      info.start_unix_ns);
  if (!live.ok()) {
    fprintf(stderr, "test_producer: %s\n", live.status().message().c_str());
    return 92;
  }
  (*live)->AppendString(1, "dead");
  rooftrace::inject::LiveSlot* slots = (*live)->slots();
  for (uint64_t p = 0; p < ranges; ++p) {
    rooftrace::inject::CapturedRecord r{};
    r.type = rooftrace::inject::RecordType::kNvtxRange;
    r.range.range_id = 1000000 + p;
    r.range.name_iid = 1;
    r.range.start_ns = 2000000000ull + p * 1000;
    r.range.end_ns = r.range.start_ns + 500;
    slots[p].value = r;
    slots[p].seq.store(1);  // committed: position p stored as p + 1 - p
  }
  (*live)->header()->counts.seen[rooftrace::wire::enums::kRecordNvtxRange]
      .store(ranges + (spool ? 3 : 0));
  if (spool) {
    TraceBuilder b(info);
    b.Hello();
    for (uint64_t i = 1; i <= 3; ++i) {
      b.AddNvtxRange(i, "dead", 1000000000ull + i * 1000,
                     1000000000ull + i * 1000 + 500);
    }
    b.Flush();
    const int fd = OpenSpool(ns);
    if (fd < 0 || !WriteAll(fd, b.Framed())) return 93;
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string sink = getenv("ROOFTRACE_SINK") ? getenv("ROOFTRACE_SINK") : "";
  std::string ready_file;
  int exit_code = 0;
  long pause_after = -1;
  bool garbage = false, spool = false;
  long dead = -1;
  bool paced = false;
  rooftrace::test_support::PacedStream ps;
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
    else if (a == "--dead") dead = atol(next().c_str());
    else if (a == "--paced") { paced = true; ps.batches = strtoull(next().c_str(), nullptr, 10); }
    else if (a == "--batch-ms") ps.batch_ms = strtoull(next().c_str(), nullptr, 10);
    else if (a == "--kernels-per-batch") ps.kernels_per_batch = strtoull(next().c_str(), nullptr, 10);
    else if (a == "--step-batch") ps.step_batch = strtoull(next().c_str(), nullptr, 10);
    else if (a == "--drop-batch") ps.drop_batch = strtoull(next().c_str(), nullptr, 10);
    else if (a == "--dropped") ps.dropped = strtoull(next().c_str(), nullptr, 10);
  }
  if (paced) {
    o.session.mode = rooftrace::wire::MODE_COUNTERS;
    o.session.counter_passes = 1;
  }
  if (dead >= 0) return DieWithALiveBuffer(static_cast<uint64_t>(dead), spool);
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
  if (paced) {
    SendPacedStream(ps, &b);
  } else {
    GenerateLlmTrace(o, &b);
  }
  close(fd);
  return ok ? exit_code : 91;
}
