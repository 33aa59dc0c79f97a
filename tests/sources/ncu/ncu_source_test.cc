// Nsight Compute CSVs into the store: the recorded files read in place (a
// V100 GEMM run, GPT-2 attention kernels in an older layout, RTX 5090
// kernels with auto-scaled units, 64 B200 kernels of a --page raw export),
// every kernel row stored with the figures the CSV gives, and bad input
// refused with nothing written.
#include "sources/ncu/ncu_source.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "sources/registry.h"
#include "store/store.h"
#include "tests/support/ncu_rows.h"
#include "tests/support/real_data.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::RealDataFile;
using test_support::RealDataMissing;
using test_support::StoreQuery;
using test_support::TempDir;

constexpr char kV100[] = "cuda-roofline-wangzy0327/src/output.csv";
constexpr char kGpt2Torch[] =
    "actual-parameter-collection/attention/actual_parameter_analysis/data/"
    "5-9/gpt2_torch_nsight.csv";
constexpr char kGpt2Flash[] =
    "actual-parameter-collection/attention/actual_parameter_analysis/data/"
    "5-9/gpt2_flashattn_nsight.csv";
constexpr char kRtx5090Gemm[] =
    "llm-perf-opt/reports/20251107-dsocr/ncu-v2/"
    "kernel_0003_0a7671622339a06b4a022feebfe90426/ncu.details.csv";
constexpr char kB200Raw[] =
    "roofline-analysis-meinie0826/decodebench/results/ncu/"
    "flashinfer_paged_decode__gqa_bf16_b64_ctx4k_p64.ncu.csv";

StatusOr<SourceResult> Import(const std::string& file,
                              const std::string& store_path,
                              const SourceOptions& options = {}) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                      Store::Open(store_path, Store::Durability::kScratch));
  // As `rooftrace import` does: one transaction per run, dropped on error.
  store->set_atomic_runs(true);
  static const NcuSource source;
  StatusOr<SourceResult> r = ReadSourceInto(source, file, options, store.get());
  if (!r.ok()) (void)store->AbortRun();
  return r;
}

// "ID 10": the kernel ncu numbered 10 (correlation id 11 in the store).
std::string Kernel(const StoreQuery& q, int id, const std::string& columns) {
  return q.Text("SELECT " + columns + " FROM kernels WHERE correlation_id = " +
                std::to_string(id + 1));
}

#define REAL_FILE(var, relative)                              \
  const std::string var = RealDataFile(relative);             \
  if (var.empty()) GTEST_SKIP() << RealDataMissing(relative)

// V100, `ncu --csv --metrics` after ncu's and the application's lines: 11
// kernels (IDs 0-10), 15 metrics each. No gpu__time_duration.sum: the
// duration is sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second.
TEST(NcuRealFileTest, V100GemmFiguresAsTheCsvSaysThem) {
  REAL_FILE(file, kV100);
  auto source = DetectSource(file);
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->format(), "ncu");
  TempDir dir("ncu");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 11u);
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels"), 11);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE flops_source = "
                  "'counters' AND bytes_source = 'counters'"),
            11);
  // ID 10, cutlass_70_tensorop_s884gemm_f16_128x128_nn (the fp16 GEMM
  // 20480^3 on tensor cores):
  //   dram__bytes.sum 25,174,959,968 byte (read and write not apart);
  //   224,198,002.15 cycles / 1,236,080,147.79 cycle/s = 181,378,208 ns;
  //   fp32 = fadd 0 + fmul 419,430,400 + 2 * ffma 0 = 419,430,400; the
  //   h* counters are 0; sm__inst_executed_pipe_tensor.sum 33,554,432,000
  //   instructions: no tensor FLOPs (no sm__ops_path_tensor_* metric).
  EXPECT_EQ(Kernel(q, 10,
                   "dram_bytes || ' ' || dram_read_bytes || ' ' || "
                   "dram_write_bytes || ' ' || duration_ns || ' ' || "
                   "flops_fp32 || ' ' || flops_fp16 || ' ' || flops_bf16_tc "
                   "|| ' ' || grid_x || ',' || grid_y || ',' || grid_z || ' ' "
                   "|| block_x || ',' || block_y || ',' || block_z"),
            "25174959968 25174959968 0 181378208 419430400 0 0 1280,20,1 "
            "128,1,1");
  EXPECT_EQ(q.Text("SELECT value || ' ' || unit FROM kernel_metrics WHERE "
                   "correlation_id = 11 AND name = "
                   "'sm__inst_executed_pipe_tensor.sum'"),
            "33554432000.0 inst");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernel_metrics"), 11 * 15);
  // ID 4, a cutlass SIMT GEMM: dram 205,394,417,472; 582,304,151.08 /
  // 1,233,398,550.71 = 472,113,536 ns; fp32 = 2,126,643,200 (fadd) +
  // 419,430,400 (fmul) = 2,546,073,600.
  EXPECT_EQ(Kernel(q, 4, "dram_bytes || ' ' || duration_ns || ' ' || "
                         "flops_fp32 || ' ' || flops"),
            "205394417472 472113536 2546073600 2546073600");
  // ncu runs kernels one at a time: start times follow back to back.
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels a JOIN kernels b ON "
                  "b.correlation_id = a.correlation_id + 1 WHERE "
                  "b.start_ns = a.end_ns"),
            10);
  // The SM clock the counters ran at (mean of the 11 kernels', ~1.234 GHz).
  EXPECT_NEAR(static_cast<double>(q.Int("SELECT core_clock_khz FROM devices")),
              1234000.0, 2000.0);
  EXPECT_EQ(q.Text("SELECT cc_major || '.' || cc_minor FROM devices"), "7.0");
  const std::string& w = result->warning;
  EXPECT_NE(w.find("11 of 11 kernels have no gpu__time_duration.sum: "
                   "duration from sm__cycles_elapsed.avg / "
                   "sm__cycles_elapsed.avg.per_second"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("11 of 11 kernels have dram__bytes.sum only"),
            std::string::npos);
  EXPECT_NE(w.find("7 of 11 kernels (first: 'void cutlass::Kernel<"),
            std::string::npos);
  EXPECT_NE(w.find("their tensor FLOPs are missing"), std::string::npos);
  EXPECT_NE(w.find("the CSV names no GPU"), std::string::npos);
  EXPECT_LT(w.size(), 1200u);  // the first kernel's name is cut short
  // --device gives the roofs: no word about the missing name then.
  SourceOptions o;
  o.device_key = "v100";
  auto with_device = Import(file, dir.File("v100.sqlite"), o);
  ASSERT_TRUE(with_device.ok()) << with_device.status().message();
  EXPECT_EQ(with_device->warning.find("names no GPU"), std::string::npos);
  EXPECT_GT(StoreQuery(dir.File("v100.sqlite"))
                .Int("SELECT count(*) FROM kernels WHERE roof_flops_per_s > 0"),
            0);
}

// The older layout (a "Kernel Time" column, launch geometry as metrics of
// the Launch Statistics section, rules' rows): 26 and 10 kernels.
// rooftrace's own recording (docs/validation/2026-11-24-h100/run6): ncu
// 2025.3.1 over hf_generate.py at batch 8, prompt 512, one layer, on an
// H100, gzip-compressed: 249 kernels, 10 metrics each. ID 62 is the
// prefill's q/o projection, nvjet bf16: sm__ops_path_tensor_op_hgmma_src_
// bf16_dst_fp32 = 34,359,738,368 = 2 * 4096 (8 x 512 tokens) * 2048 * 2048
// exactly; DRAM 18,425,088 read + 19,115,520 written; 47,552 ns.
TEST(NcuRecordedTest, H100ExampleGemmFlopsAreTwoMnk) {
  const std::string file =
      std::string(ROOFTRACE_TEST_DATA_DIR) + "/ncu/h100_hf_generate_tiny.csv.gz";
  TempDir dir("ncu");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 249u);
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels"), 249);
  EXPECT_EQ(Kernel(q, 62, "flops_bf16_tc || ' ' || flops || ' ' || "
                          "dram_read_bytes || ' ' || dram_write_bytes || ' ' "
                          "|| duration_ns || ' ' || flops_source"),
            "34359738368 34359738368 18425088 19115520 47552 counters");
  EXPECT_EQ(34359738368LL, 2LL * 4096 * 2048 * 2048);
}

// ------------------------------------- roofs at the clock the counters ran at

// The file: test_support::ClockedH100NcuCsv (tests/support/ncu_rows.h).
TEST(NcuRoofClockTest, ComputeRoofsScaledToTheClockTheCountersRanAt) {
  TempDir dir("ncu_clock");
  const std::string file = dir.File("clocked.csv");
  std::ofstream(file) << test_support::ClockedH100NcuCsv("1,590,000,000");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT core_clock_khz FROM devices"), 1590000);
  // The stored roofs are the scaled ones; DRAM keeps the datasheet's.
  EXPECT_NEAR(q.Real("SELECT peak_flops_per_s FROM roofs WHERE precision "
                       "= 'bf16_tc'"),
              794.518181818e12, 1e4);
  EXPECT_NEAR(q.Real("SELECT dram_bytes_per_s FROM roofs WHERE precision "
                       "= 'bf16_tc'"),
              3350e9, 1);
  EXPECT_NEAR(q.Real("SELECT roof_flops_per_s FROM kernels"),
              794.518181818e12, 1e4);
  EXPECT_NEAR(q.Real("SELECT fraction_of_roof FROM kernels"), 0.922581,
              1e-6);
  EXPECT_EQ(q.Text("SELECT bound FROM kernels"), "compute");
  // Said where every report prints the roofs.
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs"),
            "datasheet:h100-sxm; compute roofs scaled to 1.59 GHz (the clock "
            "the counters ran at) from 1.98 GHz; DRAM roof not scaled (the "
            "memory clock is not locked with the SM clock)");
}

// Without a clock metric nothing says what clock the counters ran at: the
// boost-clock roofs stay, and so does the fraction (0.740861).
TEST(NcuRoofClockTest, NoClockMetricKeepsBoostClockRoofs) {
  TempDir dir("ncu_clock");
  const std::string file = dir.File("unclocked.csv");
  std::ofstream(file) << test_support::ClockedH100NcuCsv("");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(store);
  EXPECT_NEAR(q.Real("SELECT fraction_of_roof FROM kernels"), 0.740861,
              1e-6);
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:h100-sxm");
}

// The recorded V100 run (--clock-control base: ~1.234 GHz) judged against
// the v100 datasheet roofs (1.53 GHz boost): every compute roof stored is
// the datasheet's times clock / 1.53 GHz, DRAM 900 GB/s as published, and
// every kernel's roof is min(scaled peak, AI x DRAM).
TEST(NcuRealFileTest, V100CountersJudgedAgainstRoofsAtTheirClock) {
  REAL_FILE(file, kV100);
  TempDir dir("ncu");
  const std::string store = dir.File("runs.sqlite");
  SourceOptions o;
  o.device_key = "v100";
  auto result = Import(file, store, o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(store);
  const double clock_hz =
      static_cast<double>(q.Int("SELECT core_clock_khz FROM devices")) * 1e3;
  EXPECT_NEAR(clock_hz, 1234e6, 2e6);
  const double ratio = clock_hz / 1530e6;
  EXPECT_NEAR(q.Real("SELECT peak_flops_per_s FROM roofs WHERE precision "
                       "= 'fp32'"),
              15.7e12 * ratio, 1e3);
  EXPECT_NEAR(q.Real("SELECT peak_flops_per_s FROM roofs WHERE precision "
                       "= 'bf16_tc'"),
              125e12 * ratio, 1e3);
  EXPECT_NEAR(q.Real("SELECT dram_bytes_per_s FROM roofs WHERE precision "
                       "= 'fp32'"),
              900e9, 1);
  // ID 4, the SIMT GEMM (fp32): 2,546,073,600 FLOPs over 205,394,417,472
  // bytes, so memory bound: roof AI x 900e9, whatever the clock.
  EXPECT_NEAR(q.Real("SELECT roof_flops_per_s FROM kernels WHERE "
                       "correlation_id = 5"),
              2546073600.0 / 205394417472.0 * 900e9, 1);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels k JOIN roofs r ON "
                  "r.precision = k.precision WHERE k.roof_flops_per_s > "
                  "r.peak_flops_per_s * 1.000001"),
            0);
  EXPECT_NE(q.Text("SELECT roof_source FROM runs")
                .find("datasheet:v100; compute roofs scaled to 1.23 GHz (the "
                      "clock the counters ran at) from 1.53 GHz"),
            std::string::npos)
      << q.Text("SELECT roof_source FROM runs");
}

TEST(NcuRealFileTest, Gpt2OlderLayoutEveryKernelStored) {
  REAL_FILE(torch, kGpt2Torch);
  REAL_FILE(flash, kGpt2Flash);
  TempDir dir("ncu");
  const std::string store = dir.File("runs.sqlite");
  auto t = Import(torch, store);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto f = Import(flash, store);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(t->kernels, 26u);
  EXPECT_EQ(f->kernels, 10u);
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE run_id = " +
                  std::to_string(t->run_id)),
            26);
  // gpt2_torch ID 0 (a uniform_ random fill): dram__bytes.sum 256; grid
  // 864, block 256, 47 registers; 8,768 ns from cycles; fp32 = 2 *
  // 1,474,560 ffma = 2,949,120; fp16 = 2 * 221,184 hfma = 442,368.
  EXPECT_EQ(q.Text("SELECT dram_bytes || ' ' || grid_x || ' ' || block_x || "
                   "' ' || registers_per_thread || ' ' || duration_ns || ' ' "
                   "|| flops_fp32 || ' ' || flops_fp16 FROM kernels WHERE "
                   "correlation_id = 1 AND run_id = " +
                   std::to_string(t->run_id)),
            "256 864 256 47 8768 2949120 442368");
  // 16 of its kernels ran tensor-pipe instructions with no FLOP counter.
  EXPECT_NE(t->warning.find("16 of 26 kernels (first:"), std::string::npos)
      << t->warning;
  EXPECT_NE(f->warning.find("6 of 10 kernels (first:"), std::string::npos)
      << f->warning;
}

// RTX 5090, a newer ncu: "Mbyte", "us", "Ghz", "n/a", tensor-path ops.
TEST(NcuRealFileTest, NewerLayoutAutoScaledUnitsAndTensorOps) {
  REAL_FILE(file, kRtx5090Gemm);
  TempDir dir("ncu");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 1u);
  StoreQuery q(store);
  // cutlass_80_wmma_tensorop_bf16 GEMM: dram__bytes_read.sum 3.35 Mbyte =
  // 3,350,000 byte, write 0; gpu__time_duration.sum 23.42 us = 23,420 ns;
  // sm__ops_path_tensor_src_bf16_dst_fp32.sum 1,275,068,416 ops = FLOPs
  // (bf16_dst_bf16 is n/a); grid (152, 4, 1), block (128, 1, 1); SM
  // Frequency 1.99 Ghz.
  EXPECT_EQ(Kernel(q, 0,
                   "dram_read_bytes || ' ' || dram_write_bytes || ' ' || "
                   "duration_ns || ' ' || flops_bf16_tc || ' ' || flops || "
                   "' ' || precision || ' ' || grid_x || ',' || grid_y || "
                   "' ' || block_x"),
            "3350000 0 23420 1275068416 1275068416 bf16_tc 152,4 128");
  EXPECT_EQ(q.Int("SELECT core_clock_khz FROM devices"), 1990000);
  EXPECT_EQ(q.Text("SELECT unit FROM kernel_metrics WHERE name = "
                   "'dram__bytes_read.sum'"),
            "Mbyte");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernel_metrics WHERE name = "
                  "'flop_count_hp.sum'"),
            0);  // n/a is not stored as a value
}

// B200, `--page raw`: one row per kernel after a units row; 64 kernels with
// the GPU's name and gpu__time_duration.sum, no DRAM or FLOP counters.
TEST(NcuRealFileTest, RawPageSixtyFourKernels) {
  REAL_FILE(file, kB200Raw);
  auto source = DetectSource(file);
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->format(), "ncu");
  TempDir dir("ncu");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 64u);
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels"), 64);
  // ID 0: PersistentVariableLengthMergeStatesKernel, 14976 ns, grid
  // (1776, 1, 1), block (16, 8, 1), 40 registers, 8704 dynamic shared.
  EXPECT_EQ(Kernel(q, 0,
                   "duration_ns || ' ' || grid_x || ' ' || block_x || ',' || "
                   "block_y || ' ' || registers_per_thread || ' ' || "
                   "dynamic_shared_memory_bytes || ' ' || bytes_source"),
            "14976 1776 16,8 40 8704 none");
  EXPECT_EQ(q.Text("SELECT DISTINCT name FROM devices"), "NVIDIA B200");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernel_metrics WHERE name LIKE "
                  "'device__attribute%'"),
            0);
  EXPECT_NE(result->warning.find("64 of 64 kernels have no DRAM bytes"),
            std::string::npos)
      << result->warning;
}

// ------------------------------------------------------------- bad input

class NcuBadInputTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_.File(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  TempDir dir_{"ncu_bad"};
};

constexpr char kHeader[] =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","
    "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
    "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
constexpr char kRow[] =
    "\"0\",\"1\",\"a\",\"h\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\","
    "\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes.sum\","
    "\"byte\",\"1\"\n";

// Another tool's CSV, an empty file and a truncated CSV: one message
// naming the file and the fix; an existing store keeps only what it had.
TEST_F(NcuBadInputTest, RefusedWithNothingWritten) {
  const std::string store = dir_.File("runs.sqlite");
  ASSERT_TRUE(Import(Write("good.csv", std::string(kHeader) + kRow), store)
                  .ok());
  const std::string nsys_stats = Write(
      "kern_sum.csv",
      "\"Time (%)\",\"Total Time (ns)\",\"Instances\",\"Name\"\n"
      "\"50.0\",\"1000\",\"2\",\"k\"\n");
  auto other = DetectSource(nsys_stats);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("kern_sum.csv"), std::string::npos);
  const std::string truncated = std::string(kHeader) + kRow + kRow;
  for (const std::string& file :
       {nsys_stats, Write("empty.csv", ""),
        Write("cut.csv", truncated.substr(0, truncated.size() - 30)),
        Write("header_only.csv", kHeader)}) {
    auto r = Import(file, store);
    ASSERT_FALSE(r.ok()) << file;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind(file + ": ", 0), 0u)
        << r.status().message();
    EXPECT_TRUE(r.status().message().find("ncu --import") !=
                    std::string::npos ||
                r.status().message().find("--kernel-name") !=
                    std::string::npos)
        << r.status().message();
  }
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels"), 1);
}

// --pid names a process of the file or is refused with the list; --rank
// and --counters make no sense for an ncu CSV.
TEST_F(NcuBadInputTest, OptionsTheFileCannotHonour) {
  const std::string file = Write("one.csv", std::string(kHeader) + kRow);
  const std::string store = dir_.File("runs.sqlite");
  SourceOptions o;
  o.pid = 7;
  auto r = Import(file, store, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the CSV has 1"), std::string::npos)
      << r.status().message();
  o = {};
  o.rank = 0;
  EXPECT_FALSE(Import(file, store, o).ok());
  o = {};
  o.counters_path = file;
  r = Import(file, store, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no timeline"), std::string::npos);
  o = {};
  o.pid = 1;
  EXPECT_TRUE(Import(file, store, o).ok());
}

}  // namespace
}  // namespace rooftrace
