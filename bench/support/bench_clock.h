// The two clocks the benchmarks print: CPU seconds of this process (what a
// loaded, shared machine moves least) and wall seconds.
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
