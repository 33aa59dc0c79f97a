// Soak of a long-running collector: one producer process streams N kernels
// (tests/support/paced_stream.h, as fast as the socket takes them) into a
// real `rooftrace collect --window W` process. Prints, once a second, the
// collector's resident memory (VmRSS) and CPU so far; at the end its peak
// and post-warm-up RSS range, CPU per kernel, the windows stored and
// whether every kernel sent was received and stored (in its window's
// aggregates; as a row where --store-kernels keeps one) with the FLOPs it
// was sent with.
//   collect_soak_bench [--kernels N] [--window 1s]
//                      [--counters | --sampled K:N]
//                      [--rooftrace PATH] [--keep DIR]
//                      [-- EXTRA COLLECT ARGS...]
// Trace mode (libinject's default) unless:
//   --counters   counters mode, every kernel with its counters;
//   --sampled K:N  counters mode as libinject samples it per signature
//                (ROOFTRACE_COUNTERS_FIRST / _EVERY, default 2:1000): the
//                first K launches of each family with counters, then every
//                N-th; the collector gives the others their family's
//                sampled figures (pipeline/sampled.h), which here are the
//                same FLOPs and bytes, so the totals stay exact.
// The recorder folds the samples of stored windows into running figures
// per signature, so neither form grows with the session.
// Default 2 M kernels (some minutes on a shared 2-core machine); the full
// soak is --kernels 100000000. Words after `--` go to `collect` as they
// are (e.g. `-- --store-kernels none`).
#include <signal.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proto/framing.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/paced_stream.h"
#include "tests/support/sqlite_query.h"

namespace ts = rooftrace::test_support;
namespace fs = std::filesystem;

namespace {

// VmRSS of `pid` in KiB (0 when gone).
uint64_t RssKib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

// User + system CPU seconds of `pid` so far.
double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), {});
  const size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream rest(text.substr(close_paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

int ConnectUnix(const std::string& path) {
  for (int i = 0; i < 2000; ++i) {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    strncpy(sa.sun_path, path.c_str(), sizeof(sa.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) return fd;
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

// The producer: a child process streaming `s` into `path`.
pid_t StartProducer(const std::string& path, const ts::PacedStream& s) {
  fflush(stdout);  // the child must not print the parent's buffer again
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = ConnectUnix(path);
  if (fd < 0) _exit(90);
  ts::SessionInfo info;
  if (s.counters) {
    info.mode = rooftrace::wire::MODE_COUNTERS;
    info.counter_passes = 1;
  }
  info.pid = static_cast<uint32_t>(getpid());
  ts::TraceBuilder b(info);
  bool ok = true;
  b.set_sink([&](std::string_view frame) {
    for (size_t at = 0; ok && at < frame.size();) {
      const ssize_t n = write(fd, frame.data() + at, frame.size() - at);
      if (n <= 0) ok = false;
      else at += static_cast<size_t>(n);
    }
  });
  ts::SendPacedStream(s, &b);
  close(fd);
  _exit(ok ? 0 : 91);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t kernels = 2000000;
  std::string window = "1s";
  std::string rooftrace = std::string(ROOFTRACE_BINARY_DIR) + "/bin/rooftrace";
  std::string keep;
  bool trace_mode = true;
  uint64_t counters_first = 0, counters_every = 0;
  std::vector<std::string> extra;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : ""; };
    if (a == "--kernels") kernels = strtoull(next().c_str(), nullptr, 10);
    else if (a == "--window") window = next();
    else if (a == "--rooftrace") rooftrace = next();
    else if (a == "--keep") keep = next();
    else if (a == "--counters") trace_mode = false;
    else if (a == "--sampled") {
      const std::string v = next();
      char* end = nullptr;
      counters_first = strtoull(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != ':' ||
          !(counters_every = strtoull(end + 1, &end, 10)) || *end != '\0') {
        fprintf(stderr,
                "collect_soak_bench: --sampled '%s': expected K:N, the "
                "first K launches of a signature profiled then one in N "
                "(N >= 1), e.g. --sampled 2:1000\n",
                v.c_str());
        return 2;
      }
      trace_mode = false;
    }
    else if (a == "--") { extra.assign(argv + i + 1, argv + argc); break; }
    else {
      fprintf(stderr, "collect_soak_bench: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  const fs::path dir = keep.empty() ? fs::temp_directory_path() /
                                          ("rooftrace_soak_" +
                                           std::to_string(getpid()))
                                    : fs::path(keep);
  fs::create_directories(dir);
  const std::string sock = (dir / "soak.sock").string();
  const std::string store = (dir / "soak.sqlite").string();
  fs::remove(store);
  std::vector<std::string> args = {rooftrace, "collect", "--listen",
                                   "unix:" + sock, "--store", store,
                                   "--window", window};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t collector = fork();
  if (collector == 0) {
    const int log = open((dir / "collect.log").c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(log, 2);
    std::vector<char*> cargs;
    for (auto& s : args) cargs.push_back(s.data());
    cargs.push_back(nullptr);
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  ts::PacedStream s;
  s.kernels_per_batch = 1000;
  s.batches = std::max<uint64_t>(1, kernels / s.kernels_per_batch);
  s.batch_ms = 0;
  s.counters = !trace_mode;
  s.counters_first = counters_first;
  s.counters_every = counters_every;
  const uint64_t sent = s.batches * s.kernels_per_batch;
  std::string mode = trace_mode ? "trace mode" : "counters mode, every kernel";
  if (counters_every > 0) {
    mode = "counters mode, sampled " + std::to_string(counters_first) + ":" +
           std::to_string(counters_every);
  }
  printf("collect_soak_bench: %llu kernels (%s), window %s, collect %s\n",
         static_cast<unsigned long long>(sent), mode.c_str(), window.c_str(),
         extra.empty() ? "(no extra args)" : "(extra args given)");
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t producer = StartProducer(sock, s);
  std::vector<uint64_t> rss;
  int status = 0;
  printf("%8s %10s %10s\n", "t_s", "rss_MiB", "cpu_s");
  while (waitpid(producer, &status, WNOHANG) == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double t = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    rss.push_back(RssKib(collector));
    printf("%8.1f %10.1f %10.2f\n", t, rss.back() / 1024.0,
           CpuSeconds(collector));
    fflush(stdout);
  }
  const int producer_rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  // The last packets are read and stored when the connection closes.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu = CpuSeconds(collector);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  kill(collector, SIGTERM);
  int cstatus = 0;
  waitpid(collector, &cstatus, 0);
  ts::StoreQuery q(store);
  const int64_t runs = q.Int("SELECT COUNT(*) FROM runs");
  const int64_t received =
      q.Int("SELECT SUM(value) FROM import_stats WHERE name = "
            "'received_kernel'");
  const int64_t stored = q.Int("SELECT COUNT(*) FROM kernel_rows");
  // Every kernel is in its window's aggregates, whatever --store-kernels
  // kept as rows.
  const int64_t aggregated =
      q.Int("SELECT COALESCE(SUM(launches), 0) FROM kernel_aggregates");
  // Counters mode: every launch has the FLOPs it was sent with, measured
  // or sampled (the families' samples are all alike).
  const int64_t with_flops = q.Int(
      "SELECT COALESCE(SUM(flops_launches), 0) FROM kernel_aggregates");
  const double flops = q.Real(
      "SELECT COALESCE(SUM(flops), 0) FROM kernel_aggregates");
  const int64_t sampled = q.Int(
      "SELECT COALESCE(SUM(value), 0) FROM import_stats WHERE name = "
      "'kernels_sampled'");
  const int64_t incomplete =
      q.Int("SELECT COUNT(*) FROM runs WHERE complete IS NOT 1");
  // Flat: the RSS range over the second half of the samples.
  uint64_t lo = 0, hi = 0, peak = 0;
  for (size_t i = 0; i < rss.size(); ++i) {
    peak = std::max(peak, rss[i]);
    if (i < rss.size() / 2) continue;
    lo = lo == 0 ? rss[i] : std::min(lo, rss[i]);
    hi = std::max(hi, rss[i]);
  }
  printf("producer exit %d, collect exit %d\n", producer_rc,
         WIFEXITED(cstatus) ? WEXITSTATUS(cstatus) : -1);
  printf("wall %.1f s, %.3f M kernels/s end to end\n", wall,
         static_cast<double>(sent) / wall / 1e6);
  printf("collector CPU %.2f s = %.3f us per kernel\n", cpu,
         cpu / static_cast<double>(sent) * 1e6);
  printf("collector RSS peak %.1f MiB; second half %.1f .. %.1f MiB\n",
         peak / 1024.0, lo / 1024.0, hi / 1024.0);
  printf("windows stored %lld (incomplete %lld); kernels sent %llu, "
         "received %lld, in the windows' aggregates %lld, rows stored %lld\n",
         static_cast<long long>(runs), static_cast<long long>(incomplete),
         static_cast<unsigned long long>(sent),
         static_cast<long long>(received), static_cast<long long>(aggregated),
         static_cast<long long>(stored));
  bool figures_ok = true;
  if (!trace_mode) {
    const double expected = static_cast<double>(sent) *
                            static_cast<double>(s.flops_per_kernel);
    figures_ok = with_flops == static_cast<int64_t>(sent) && flops == expected;
    printf("counters: %lld kernels took sampled figures; %lld with FLOPs, "
           "%.6g FLOPs in all (sent %.6g): %s\n",
           static_cast<long long>(sampled), static_cast<long long>(with_flops),
           flops, expected, figures_ok ? "exact" : "DIFFERENT");
  }
  const bool lost = received != static_cast<int64_t>(sent) ||
                    aggregated != static_cast<int64_t>(sent);
  if (keep.empty()) fs::remove_all(dir);
  if (lost || producer_rc != 0) {
    fprintf(stderr, "collect_soak_bench: records were lost\n");
    return 1;
  }
  if (!figures_ok) {
    fprintf(stderr, "collect_soak_bench: the stored FLOPs are not those "
                    "sent\n");
    return 1;
  }
  return 0;
}
