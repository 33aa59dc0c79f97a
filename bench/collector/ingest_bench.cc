// Collector ingest throughput: kernel records per second through
//   (0) decode alone, the whole session held (a short session);
//   (0w) decode alone in windows of 64 Ki records, each dropped once
//       decoded (the least work the collector can do per record);
//   (1) decode + join + annotate, one core, in windows as the collector
//       stores a long session: a RunRecorder whose rows are thrown away;
//   (2) the same into the SQLite store (`collect --ingest`, WAL);
// on one generated LLM stream in the same run, and the ratios; then, each in
// a fresh process so that nothing else counts in its peak RSS, a collector
// serving P producer processes over a Unix socket, at two run lengths.
//   ingest_bench [--kernels N] [--producers P]
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "collector/server.h"
#include "pipeline/recorder.h"
#include "pipeline/session.h"
#include "pipeline/sink.h"
#include "proto/framing.h"
#include "sources/rft/testing/trace_builder.h"
#include "sources/rft/wire_session.h"
#include "store/store.h"
#include "tests/support/discard_sink.h"

namespace rt = rooftrace;
namespace ts = rooftrace::test_support;
namespace fs = std::filesystem;

namespace {

// CPU time of this process (all threads): steadier than wall time on a
// shared machine.
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

double Seconds(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a)
      .count();
}

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

ts::LlmTraceOptions Options(uint64_t kernels, uint32_t pid) {
  ts::LlmTraceOptions o;
  o.layers = 8;
  o.session.pid = pid;
  o.decode_steps = static_cast<int>(kernels / ts::LlmKernelsPerStep(o));
  o.max_batch_records = 2000;
  return o;
}

std::vector<std::string> Frames(uint64_t kernels, uint32_t pid) {
  const auto o = Options(kernels, pid);
  ts::TraceBuilder b(o.session);
  b.set_keep_packets(false);
  ts::GenerateLlmTrace(o, &b);
  return b.Frames();
}

// Calls fn(payload) for every frame of a framed stream.
template <typename Fn>
void ForEachPacket(const std::string& stream, Fn fn) {
  rt::wire::FrameReader reader;
  reader.Feed(stream);
  std::string_view payload;
  while (reader.Next(&payload) == rt::wire::FrameReader::Result::kFrame) {
    fn(payload);
  }
}

// Rows the recorder emits, thrown away: the collector's own path
// (RunRecorder::MaybeFlush and AddSession, rows built for every kernel)
// minus the store.
using rt::test_support::DiscardSink;

// One session of `stream` through `rec`, as `collect --ingest` runs it;
// returns the kernels stored, or 0 on error (printed).
uint64_t Record(const std::string& stream,
                rt::StatusOr<std::unique_ptr<rt::RunRecorder>> rec) {
  if (!rec.ok()) {
    fprintf(stderr, "ingest_bench: %s\n", rec.status().message().c_str());
    return 0;
  }
  rt::WireSession wire("bench");
  ForEachPacket(stream, [&](std::string_view payload) {
    (void)wire.OnPacket(payload);
    (void)(*rec)->MaybeFlush(&wire.session());
  });
  (void)(*rec)->AddSession(&wire.session());
  (void)(*rec)->Finish();
  return (*rec)->kernels_stored();
}

// One producer process: generates its stream, sends it, waits for the
// collector to close the connection.
[[noreturn]] void Produce(const std::string& socket_path, uint64_t kernels,
                          uint32_t pid) {
  std::string st;
  for (const auto& f : Frames(kernels, pid)) st += f;
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  strncpy(sa.sun_path, socket_path.c_str(), sizeof(sa.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) _exit(1);
  size_t off = 0;
  while (off < st.size()) {
    const ssize_t w =
        write(fd, st.data() + off, std::min<size_t>(65536, st.size() - off));
    if (w <= 0) _exit(1);
    off += static_cast<size_t>(w);
  }
  shutdown(fd, SHUT_WR);
  char buf[256];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  _exit(0);
}

struct Served {
  double seconds = -1;
  uint64_t kernels = 0;
  long peak_rss_kb = 0;
};

// A collector (CollectorServer + RunRecorder into SQLite) in a fresh child
// process serving `producers` producer processes of `per` kernels each; the
// child's peak RSS is the collector's alone (the producers are separate
// processes, and the child is forked before the bench holds any stream).
Served ServeProducers(const std::string& dir, int producers, uint64_t per) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    rt::RecorderOptions ro;
    ro.origin = "bench";
    auto rec = rt::CreateStoreRecorder(
        ro, dir + "/bench" + std::to_string(per) + ".sqlite");
    if (!rec.ok()) _exit(1);
    rt::ServerOptions so;
    so.listen = {"unix:" + dir + "/s.sock"};
    rt::CollectorServer server(rec->get(), so);
    if (!server.Listen().ok()) _exit(1);
    // Producers are forked before any thread starts.
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<pid_t> kids;
    for (int p = 0; p < producers; ++p) {
      const pid_t k = fork();
      if (k == 0) Produce(dir + "/s.sock", per, 100 + static_cast<uint32_t>(p));
      kids.push_back(k);
    }
    // The server on the process's main thread, as `rooftrace collect` runs
    // it (its allocations in glibc's main arena).
    std::atomic<bool> stop{false};
    std::thread waiter([&] {
      for (pid_t k : kids) waitpid(k, nullptr, 0);
      while (server.sessions_ended() < static_cast<uint64_t>(producers)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      stop.store(true);
    });
    (void)server.Run(&stop);
    waiter.join();
    (void)(*rec)->Finish();
    Served r;
    r.seconds = Seconds(t0);
    r.kernels = (*rec)->kernels_stored();
    r.peak_rss_kb = PeakRssKb();
    if (write(fds[1], &r, sizeof r) != sizeof r) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Served r;
  if (read(fds[0], &r, sizeof r) != sizeof r) r = Served{};
  close(fds[0]);
  waitpid(child, nullptr, 0);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t kernels = 200000;
  int producers = 64;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--kernels")) kernels = strtoull(argv[++i], nullptr, 10);
    if (!strcmp(argv[i], "--producers")) producers = atoi(argv[++i]);
  }
  const std::string dir = (fs::temp_directory_path() /
                           ("rt_bench_" + std::to_string(getpid()))).string();
  fs::create_directories(dir);

  // (3) first, so that the children it forks hold no stream of this process.
  const uint64_t per = kernels / static_cast<uint64_t>(std::max(producers, 1));
  const Served small = ServeProducers(dir, producers, per);
  const Served large = ServeProducers(dir, producers, 4 * per);

  const auto frames = Frames(kernels, 1);
  std::string stream;
  for (const auto& f : frames) stream += f;

  // (0) decode alone (the whole session held, as a short session is).
  auto t0 = std::chrono::steady_clock::now();
  double c0 = CpuSeconds();
  {
    rt::WireSession s0("bench");
    ForEachPacket(stream, [&](std::string_view p) { (void)s0.OnPacket(p); });
  }
  const double t_parse = Seconds(t0);
  const double ct_parse = CpuSeconds() - c0;

  // (0w) decode alone in windows: each window's records dropped once decoded.
  t0 = std::chrono::steady_clock::now();
  c0 = CpuSeconds();
  {
    rt::WireSession w0("bench");
    rt::Session& s0 = w0.session();
    const size_t window = rt::RecorderOptions().flush_records;
    rt::RecordMask all;
    ForEachPacket(stream, [&](std::string_view p) {
      (void)w0.OnPacket(p);
      if (s0.RecordCount() < window) return;
      all.kernels.assign(s0.kernels().size(), 1);
      all.launches.assign(s0.launches().size(), 1);
      all.memcpys.assign(s0.memcpys().size(), 1);
      all.gemms.assign(s0.gemms().size(), 1);
      all.nvtx.assign(s0.nvtx_ranges().size(), 1);
      all.counters.assign(s0.counters().size(), 1);
      s0.DropRecords(all, window);
    });
  }
  const double t_parse_windows = Seconds(t0);
  const double ct_parse_windows = CpuSeconds() - c0;

  // (1) decode + join + annotate, in windows as the collector runs a long
  // session, the rows built and thrown away.
  DiscardSink discard;
  rt::RecorderOptions no_store;
  no_store.origin = "bench";
  no_store.sink = &discard;
  t0 = std::chrono::steady_clock::now();
  c0 = CpuSeconds();
  const uint64_t joined_kernels =
      Record(stream, rt::RunRecorder::Create(no_store));
  const double t_decode = Seconds(t0);
  const double ct_decode = CpuSeconds() - c0;
  const double n = static_cast<double>(joined_kernels);
  if (joined_kernels == 0) return 1;

  // (2) the same into SQLite: what `rooftrace collect --ingest` does.
  rt::RecorderOptions ro;
  const std::string store_path = dir + "/bench.sqlite";
  ro.origin = "bench";
  t0 = std::chrono::steady_clock::now();
  c0 = CpuSeconds();
  if (Record(stream, rt::CreateStoreRecorder(ro, store_path)) !=
      joined_kernels) {
    return 1;
  }
  const double t_store = Seconds(t0);
  const double ct_store = CpuSeconds() - c0;
  printf("stream: %.0f kernel records (+ launches, GEMM calls, copies), %s\n",
         n, rt::wire::HumanBytes(stream.size()).c_str());
  printf("decode alone (whole session held): %.3f s, %.2f M kernel "
         "records/s\n",
         t_parse, n / t_parse / 1e6);
  printf("decode alone (in windows, records dropped): %.3f s, %.2f M kernel "
         "records/s\n",
         t_parse_windows, n / t_parse_windows / 1e6);
  printf("decode+join+annotate (in windows, as collected): %.3f s, %.2f M "
         "kernel records/s\n",
         t_decode, n / t_decode / 1e6);
  printf("decode+join+annotate+SQLite: %.3f s, %.2f M kernel records/s\n",
         t_store, n / t_store / 1e6);
  printf("SQLite path / decode alone: %.2fx (whole session held), %.2fx (in "
         "windows); / decode+join+annotate: %.2fx\n",
         t_store / t_parse, t_store / t_parse_windows, t_store / t_decode);
  printf("cpu: decode held %.3f s, decode in windows %.3f s, "
         "decode+join+annotate %.3f s (%.2f M kernel records/s), +SQLite "
         "%.3f s\n",
         ct_parse, ct_parse_windows, ct_decode, n / ct_decode / 1e6, ct_store);
  printf("store size: %s\n",
         rt::wire::HumanBytes(fs::file_size(store_path)).c_str());
  for (const Served* r : {&small, &large}) {
    printf("%d producer processes x %llu kernels over a Unix socket into "
           "SQLite: %.3f s, %.2f M kernel records/s, %llu kernels stored, "
           "collector peak RSS %ld MiB\n",
           producers,
           static_cast<unsigned long long>(r == &small ? per : 4 * per),
           r->seconds, static_cast<double>(r->kernels) / r->seconds / 1e6,
           static_cast<unsigned long long>(r->kernels), r->peak_rss_kb / 1024);
  }
  fs::remove_all(dir);
  return 0;
}
