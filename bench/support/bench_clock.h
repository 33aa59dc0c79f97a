// The clocks the benchmarks' figures are read from: this process's CPU
// time (user + system, std::clock) and a steady wall clock, in seconds.
// On the shared development machine wall time is mostly waiting for a
// core, so the benchmarks print both.
#ifndef ROOFTRACE_BENCH_SUPPORT_BENCH_CLOCK_H_
#define ROOFTRACE_BENCH_SUPPORT_BENCH_CLOCK_H_

#include <chrono>
#include <ctime>

namespace rooftrace::bench {

inline double CpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

inline double WallSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace rooftrace::bench

#endif  // ROOFTRACE_BENCH_SUPPORT_BENCH_CLOCK_H_
