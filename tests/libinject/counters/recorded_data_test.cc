// Evaluates counter-data images recorded on a GPU
// (tests/libinject/counters/data/*.rfcd, written by counters_gpu_test with
// ROOFTRACE_COUNTERS_RECORD_DIR) on the CPU with the real cuptiProfilerHostEvaluateToGpuValues. Skips while
// no recording has been committed.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "libinject/counters/counter_data_file.h"
#include "libinject/counters/flop_evaluation.h"
#include "libinject/counters/metric_config.h"

namespace rooftrace::counters {
namespace {

std::vector<std::filesystem::path> Recordings() {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path dir =
      std::filesystem::path(ROOFTRACE_SOURCE_DIR) /
      "tests/libinject/counters/data";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".rfcd") out.push_back(e.path());
  }
  return out;
}

// The table set (default or full) whose names the recording carries.
StatusOr<MetricSet> SetFor(const CounterDataFile& f) {
  for (CounterSet s : {CounterSet::kDefault, CounterSet::kFull}) {
    StatusOr<MetricSet> set = MetricSetForChip(f.chip, s);
    if (!set.ok()) return set.status();
    std::vector<std::string> names;
    for (const MetricSpec& m : set->metrics) names.push_back(m.name);
    if (names == f.metric_names) return set;
  }
  return NotFound("recording's metrics are not a table set of " + f.chip);
}

// Every recorded range evaluates to finite, non-negative values, and every
// range moved DRAM bytes and took time.
TEST(RecordedCounterDataTest, RecordedImagesEvaluateOnCpu) {
  std::vector<std::filesystem::path> files = Recordings();
  if (files.empty()) {
    GTEST_SKIP() << "no recorded counter data in "
                    "tests/libinject/counters/data yet "
                    "(docs/counters.md, GPU run 1)";
  }
  StatusOr<CuptiProfilerApi> api =
      LoadCuptiProfilerApi(ROOFTRACE_CUPTI_LIBRARY);
  ASSERT_TRUE(api.ok()) << api.status().message();
  for (const std::filesystem::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    StatusOr<CounterDataFile> f =
        ParseCounterDataFile(bytes.data(), bytes.size(), path.string());
    ASSERT_TRUE(f.ok()) << f.status().message();
    StatusOr<MetricSet> set = SetFor(*f);
    ASSERT_TRUE(set.ok()) << path << ": " << set.status().message();
    std::vector<const char*> names = set->Names();
    StatusOr<ProfilerHost> host = CreateHostWithMetrics(*api, f->chip, names);
    ASSERT_TRUE(host.ok()) << host.status().message();
    StatusOr<size_t> ranges = CounterDataRangeCount(*api, f->image);
    ASSERT_TRUE(ranges.ok()) << ranges.status().message();
    ASSERT_GT(*ranges, 0u) << path;
    for (size_t r = 0; r < *ranges; ++r) {
      StatusOr<std::vector<double>> v =
          EvaluateRange(*api, *host, f->image, r, names);
      ASSERT_TRUE(v.ok()) << path << " range " << r << ": "
                          << v.status().message();
      StatusOr<KernelCounters> k = EvaluateKernelCounters(*set, *v);
      ASSERT_TRUE(k.ok());
      EXPECT_TRUE(k->invalid_metrics.empty()) << path << " range " << r;
      EXPECT_GT(k->dram_read_bytes + k->dram_write_bytes, 0u) << path;
      EXPECT_GT(k->gpu_time_ns, 0u) << path;
    }
  }
}

}  // namespace
}  // namespace rooftrace::counters
