// The ops route's cost in the collector (prints figures; never a timed
// test): a synthetic live session of N kernels, each launched inside an
// operator range (alternately aten::addmm inside aten::linear, and
// aten::silu), as libinject's stream leaves it. Times, over --repeat runs,
// (process CPU time) the whole session joined and rows emitted (discarded) without the route's
// preparer and with it (CostLiveOps: the Kineto text written, parsed and
// assembled, the records added), and prints the cost per kernel and per
// operator. Compare with the same session's join alone.
//   live_ops_bench [--kernels N] [--repeat R]
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/recorder.h"
#include "proto/field_numbers.h"
#include "proto/wire_constants.h"
#include "sources/rft/live_ops.h"
#include "tests/support/discard_sink.h"

namespace rt = rooftrace;

namespace {

constexpr char kLinear[] =
    "aten::linear\t{\"Input Dims\":[[16,4096],[4096,4096],[4096]],"
    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}";
constexpr char kAddmm[] =
    "aten::addmm\t{\"Input Dims\":[[4096],[16,4096],[4096,4096],[],[]],"
    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
    "\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"]}";
constexpr char kSilu[] =
    "aten::silu\t{\"Input Dims\":[[16,4096]],\"Input type\":"
    "[\"c10::BFloat16\"]}";

// N kernels, 3 operators per 2 kernels, one thread.
std::unique_ptr<rt::Session> Build(size_t n, uint64_t* ops) {
  auto s = std::make_unique<rt::Session>("bench");
  rt::SessionHeader h;
  h.host = "bench";
  h.pid = 1;
  h.mode = "trace";
  s->Start(h);
  rt::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.cc_major = 9;
  s->AddDevice(d);
  s->SetString(1, rt::wire::kTorchOpsDomain);
  s->SetString(2, kLinear);
  s->SetString(3, kAddmm);
  s->SetString(4, kSilu);
  s->SetString(5, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128");
  s->SetString(6, "vectorized_elementwise_kernel<silu_kernel>");
  rt::SessionRecords& r = s->records();
  uint64_t t = 1'000'000'000, range = 1;
  auto add_range = [&](uint64_t name, uint64_t start, uint64_t end) {
    rt::NvtxRecord x;
    x.range_id = range++;
    x.domain_iid = 1;
    x.name_iid = name;
    x.start_ns = start;
    x.end_ns = end;
    x.thread_id = 7;
    x.end_thread_id = 7;
    x.kind = rt::wire::enums::kRangePushPop;
    r.nvtx.push_back(x);
    ++*ops;
  };
  for (size_t i = 0; i < n; ++i) {
    const bool gemm = i % 2 == 0;
    if (gemm) {
      add_range(2, t, t + 20'000);
      add_range(3, t + 2'000, t + 18'000);
    } else {
      add_range(4, t, t + 10'000);
    }
    rt::LaunchRecord l;
    l.correlation_id = i + 1;
    l.api_start_ns = t + 5'000;
    l.api_end_ns = t + 8'000;
    l.thread_id = 7;
    l.kind = rt::wire::enums::kApiKernelLaunch;
    r.launches.push_back(l);
    rt::KernelRecord k;
    k.correlation_id = i + 1;
    k.name_iid = gemm ? 5 : 6;
    k.start_ns = t + 30'000;
    k.end_ns = t + 50'000;
    k.stream_id = 7;
    r.kernels.push_back(k);
    t += 60'000;
  }
  return s;
}

// Process CPU time: on a shared 2-core machine wall time measures the
// neighbours; the work is single-threaded.
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double JoinSeconds(size_t n, bool live, uint64_t* ops) {
  std::unique_ptr<rt::Session> s = Build(n, ops);
  rt::test_support::DiscardSink sink;
  rt::RecorderOptions ro;
  ro.origin = "bench";
  ro.sink = &sink;
  if (live) ro.preparer = rt::LiveOpsPreparer(rt::SourceOptions());
  auto rec = rt::RunRecorder::Create(ro);
  if (!rec.ok()) {
    fprintf(stderr, "live_ops_bench: %s\n", rec.status().message().c_str());
    exit(1);
  }
  const double t0 = CpuSeconds();
  if (!(*rec)->AddSession(s.get()).ok() || !(*rec)->Finish().ok()) {
    fprintf(stderr, "live_ops_bench: the session was not recorded\n");
    exit(1);
  }
  return CpuSeconds() - t0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t kernels = 200000;
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--kernels") && i + 1 < argc) {
      kernels = strtoull(argv[++i], nullptr, 10);
    } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: live_ops_bench [--kernels N] [--repeat R]\n");
      return 2;
    }
  }
  std::vector<double> plain, live;
  uint64_t ops = 0;
  for (int r = 0; r < repeat; ++r) {
    uint64_t unused = 0;
    plain.push_back(JoinSeconds(kernels, false, &unused));
    ops = 0;
    live.push_back(JoinSeconds(kernels, true, &ops));
  }
  std::sort(plain.begin(), plain.end());
  std::sort(live.begin(), live.end());
  auto per = [&](double s, double n) { return s / n * 1e9; };
  printf("%zu kernels, %llu operator ranges, %d runs each (alternated)\n",
         kernels, static_cast<unsigned long long>(ops), repeat);
  printf("join + rows without the route: %.3f s CPU median (%.3f..%.3f), "
         "%.0f ns/kernel\n",
         plain[plain.size() / 2], plain.front(), plain.back(),
         per(plain[plain.size() / 2], static_cast<double>(kernels)));
  printf("with the route (CostLiveOps): %.3f s CPU median (%.3f..%.3f), "
         "%.0f ns/kernel\n",
         live[live.size() / 2], live.front(), live.back(),
         per(live[live.size() / 2], static_cast<double>(kernels)));
  const double added = live[live.size() / 2] - plain[plain.size() / 2];
  printf("added by the route: %.0f ns per kernel, %.0f ns per operator "
         "(medians)\n",
         per(added, static_cast<double>(kernels)),
         per(added, static_cast<double>(ops)));
  return 0;
}
