// What sampled counters (pipeline/sampled.h) add to a counters-mode join:
// a generated session of N kernels over S signatures, profiled as counters
// mode's default does (first 2 launches of each signature, then 1 in
// 1000), joined whole; CPU time of the join alone and of the join plus
// SampledCounters::Apply, per kernel, best of 3.
//   sampled_bench [--kernels N] [--signatures S]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pipeline/join.h"
#include "pipeline/sampled.h"
#include "pipeline/session.h"

namespace rt = rooftrace;

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

rt::Session MakeSession(size_t kernels, size_t signatures, size_t* profiled) {
  rt::Session s("bench");
  rt::SessionHeader h;
  h.mode = "counters";
  s.Start(h);
  rt::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  s.AddDevice(d);
  const size_t names = std::max<size_t>(1, signatures / 4);
  for (size_t n = 0; n < names; ++n) {
    s.SetString(n + 1, "kernel_" + std::to_string(n));
  }
  std::vector<uint64_t> launches(signatures, 0);
  *profiled = 0;
  uint64_t t = 1000;
  for (size_t i = 0; i < kernels; ++i) {
    const size_t sig = (i * 7919) % signatures;  // interleaved signatures
    rt::KernelRecord k;
    k.correlation_id = i + 1;
    k.name_iid = sig % names + 1;
    k.grid[0] = static_cast<uint32_t>(64 + sig / names);
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = k.block[2] = 1;
    k.start_ns = t;
    k.end_ns = t + 5000;
    t += 6000;
    s.records().kernels.push_back(k);
    const uint64_t ordinal = ++launches[sig];
    if (ordinal <= 2 || (ordinal - 2) % 1000 == 0) {
      rt::CounterRecord c;
      c.correlation_id = k.correlation_id;
      c.dram_read_bytes = 1000000 + sig;
      c.dram_write_bytes = 500000;
      c.has_flops = true;
      c.flops[static_cast<int>(rt::Precision::kFp32)] = 2000000;
      s.records().counters.push_back(c);
      ++*profiled;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t kernels = 500000, signatures = 400;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--kernels") == 0) {
      kernels = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--signatures") == 0) {
      signatures = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "sampled_bench: unknown option %s (known: "
                           "--kernels N, --signatures S)\n", argv[i]);
      return 2;
    }
  }
  if (kernels == 0 || signatures == 0) {
    std::fprintf(stderr, "sampled_bench: --kernels and --signatures must "
                         "be above 0\n");
    return 2;
  }
  size_t profiled = 0;
  rt::Session s = MakeSession(kernels, signatures, &profiled);
  const rt::Roofs roofs = rt::RoofsFromDatasheet("NVIDIA H100 80GB HBM3");
  double join_best = 1e30, sampled_best = 1e30;
  uint64_t given = 0;
  for (int rep = 0; rep < 3; ++rep) {
    rt::JoinedSession j;
    const double a = CpuSeconds();
    rt::JoinInto(&s, roofs, {}, {}, &j);
    const double b = CpuSeconds();
    rt::SampledCounters sampled;
    rt::ImportStats stats;
    sampled.Apply(s, &j, nullptr, &stats);
    const double c = CpuSeconds();
    join_best = std::min(join_best, b - a);
    sampled_best = std::min(sampled_best, c - b);
    given = stats[rt::ImportStat::k_kernels_sampled];
  }
  std::printf("sampled_bench: %zu kernels, %zu signatures, %zu profiled, "
              "%llu given sampled counters\n",
              kernels, signatures, profiled,
              static_cast<unsigned long long>(given));
  std::printf("  join:                 %.3f s  (%.0f ns/kernel)\n", join_best,
              join_best / kernels * 1e9);
  std::printf("  SampledCounters::Apply: %.3f s  (%.0f ns/kernel, %.0f%% of "
              "the join)\n",
              sampled_best, sampled_best / kernels * 1e9,
              100 * sampled_best / join_best);
  return 0;
}
