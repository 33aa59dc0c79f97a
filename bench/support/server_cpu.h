// The CPU time a PostgreSQL server has used, for benchmarks that print
// what a store's work costs on the server's side too.
#ifndef ROOFTRACE_BENCH_SUPPORT_SERVER_CPU_H_
#define ROOFTRACE_BENCH_SUPPORT_SERVER_CPU_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace rooftrace::bench {

// CPU seconds the server `postmaster` and its children (one per
// connection) have used: what a read or write costs on the server's side,
// on the same cores here. Only live processes count: read it while the
// connections to measure are open.
inline double ServerCpuSeconds(pid_t postmaster) {
  double ticks = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::FILE* f = std::fopen((e.path() / "stat").c_str(), "r");
    if (f == nullptr) continue;
    char line[1024];
    const size_t n = std::fread(line, 1, sizeof line - 1, f);
    std::fclose(f);
    line[n] = '\0';
    // pid (comm) state ppid ... utime stime: fields 4, 14 and 15; comm may
    // hold spaces, so count from its closing parenthesis.
    const char* p = std::strrchr(line, ')');
    if (p == nullptr) continue;
    long long ppid = 0;
    unsigned long long utime = 0, stime = 0;
    if (std::sscanf(p + 2,
                    "%*c %lld %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu",
                    &ppid, &utime, &stime) != 3) {
      continue;
    }
    if (ppid == postmaster || std::atoll(line) == postmaster) {
      ticks += static_cast<double>(utime + stime);
    }
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace rooftrace::bench

#endif  // ROOFTRACE_BENCH_SUPPORT_SERVER_CPU_H_
