// The Nsight Compute CSV parser and the per-kernel figures taken from it,
// on small CSVs written here: both layouts, ncu's log lines, quoting,
// thousands separators, auto-scaled units, "n/a", truncation, and the FLOP
// rules (SASS add + mul + 2 fma; tensor-path ops are FLOPs; tensor-pipe
// instructions never are).
#include "sources/ncu/ncu_csv.h"

#include <gtest/gtest.h>

#include <string>

#include "sources/ncu/ncu_kernel.h"

namespace rooftrace::ncu {
namespace {

constexpr char kLongHeader[] =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","
    "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
    "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";

std::string Row(int id, const std::string& kernel, const std::string& metric,
                const std::string& unit, const std::string& value) {
  return "\"" + std::to_string(id) + "\",\"42\",\"app\",\"host\",\"" + kernel +
         "\",\"1\",\"7\",\"(128, 1, 1)\",\"(64, 2, 1)\",\"0\",\"9.0\","
         "\"Command line profiler metrics\",\"" + metric + "\",\"" + unit +
         "\",\"" + value + "\"\n";
}

// Numbers as ncu writes them.
TEST(NcuCsvTest, NumbersWithSeparatorsAndNotAvailable) {
  EXPECT_EQ(ParseNumber("21,760"), 21760.0);
  EXPECT_EQ(ParseNumber("1,235,108,248.43"), 1235108248.43);
  EXPECT_EQ(ParseNumber("-221"), -221.0);
  EXPECT_EQ(ParseNumber("0"), 0.0);
  EXPECT_FALSE(ParseNumber("n/a"));
  EXPECT_FALSE(ParseNumber(""));
  EXPECT_FALSE(ParseNumber("(16, 8, 1)"));
  EXPECT_FALSE(ParseNumber("cudaFuncCachePreferNone"));
  EXPECT_FALSE(ParseNumber("nan"));
  auto d = ParseDim3("(1280, 20, 1)");
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)[0], 1280u);
  EXPECT_EQ((*d)[1], 20u);
  EXPECT_EQ((*d)[2], 1u);
  d = ParseDim3("864");
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)[0], 864u);
  EXPECT_EQ((*d)[1], 1u);
  EXPECT_FALSE(ParseDim3("(1, 2)"));
  EXPECT_FALSE(ParseDim3("n/a"));
}

// Auto-scaled units to bytes, ns, Hz and counts.
TEST(NcuCsvTest, AutoScaledUnits) {
  EXPECT_EQ(ToBase(2.33, "Mbyte", Dimension::kBytes), 2.33e6);
  EXPECT_EQ(ToBase(1, "Kbyte", Dimension::kBytes), 1e3);
  EXPECT_EQ(ToBase(1.5, "Gbyte", Dimension::kBytes), 1.5e9);
  EXPECT_EQ(ToBase(7, "byte", Dimension::kBytes), 7.0);
  EXPECT_FALSE(ToBase(7, "inst", Dimension::kBytes));
  EXPECT_EQ(ToBase(6.75, "us", Dimension::kNanoseconds), 6750.0);
  EXPECT_EQ(ToBase(6.75, "usecond", Dimension::kNanoseconds), 6750.0);
  EXPECT_EQ(ToBase(2, "msecond", Dimension::kNanoseconds), 2e6);
  EXPECT_EQ(ToBase(14976, "nsecond", Dimension::kNanoseconds), 14976.0);
  EXPECT_EQ(ToBase(1, "second", Dimension::kNanoseconds), 1e9);
  EXPECT_EQ(ToBase(1.99, "Ghz", Dimension::kHertz), 1.99e9);
  EXPECT_EQ(ToBase(1500, "Mhz", Dimension::kHertz), 1.5e9);
  EXPECT_EQ(ToBase(5, "cycle/second", Dimension::kHertz), 5.0);
  EXPECT_EQ(ToBase(1.2, "cycle/nsecond", Dimension::kHertz), 1.2e9);
  EXPECT_EQ(ToBase(3, "Kcycle", Dimension::kCount), 3e3);
  EXPECT_EQ(ToBase(3, "inst", Dimension::kCount), 3.0);
  EXPECT_EQ(ToBase(3, "", Dimension::kCount), 3.0);
  EXPECT_FALSE(ToBase(3, "%", Dimension::kCount));
}

// ncu's own lines and the application's output come before the header; a
// rule's row (no metric name) is not a metric; a quoted field may hold
// commas, quotes and newlines.
TEST(NcuCsvTest, LongLayoutAfterLogLines) {
  const std::string text =
      "==PROF== Connected to process 42 (/bin/app)\nhello from the app\n"
      "==PROF== Disconnected from process 42\n" +
      std::string(kLongHeader) +
      Row(0, "k<a, \"\"b\"\">(int)", "dram__bytes_read.sum", "Mbyte", "1.5") +
      Row(0, "k<a, \"\"b\"\">(int)", "gpu__time_duration.sum", "usecond",
          "2,000") +
      "\"0\",\"42\",\"app\",\"host\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, "
      "1)\",\"0\",\"9.0\",\"Occupancy\",\"\",\"\",\"\"\n" +
      Row(1, "multi\nline", "dram__bytes_read.sum", "byte", "10");
  ASSERT_TRUE(LooksLikeNcuCsv(text));
  auto r = ParseNcuCsv(text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->layout, Layout::kLong);
  EXPECT_EQ(r->header_line, 4u);
  ASSERT_EQ(r->kernels.size(), 2u);
  EXPECT_EQ(r->kernels[0].name, "k<a, \"b\">(int)");
  EXPECT_EQ(r->kernels[0].metrics.size(), 2u);
  EXPECT_EQ(r->kernels[0].pid, 42);
  EXPECT_EQ(r->kernels[1].name, "multi\nline");
  EXPECT_EQ(r->metric_rows, 3u);
  const KernelFacts f = DeriveFacts(r->kernels[0]);
  EXPECT_EQ(f.dram_read_bytes, 1500000u);
  EXPECT_EQ(f.duration_ns, 2000000u);
  EXPECT_EQ(f.grid[0], 64u);
  EXPECT_EQ(f.grid[1], 2u);
  EXPECT_EQ(f.block[0], 128u);
}

// --page raw: one row per kernel, the second row holds the units.
TEST(NcuCsvTest, WideLayoutWithUnitsRow) {
  const std::string text =
      "==PROF== Disconnected from process 1\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel "
      "Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\","
      "\"CC\",\"device__attribute_display_name\",\"dram__bytes_write.sum\","
      "\"gpu__time_duration.sum\",\"launch__registers_per_thread\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Kbyte\","
      "\"nsecond\",\"register/thread\"\n"
      "\"0\",\"1\",\"p\",\"h\",\"a\",\"1\",\"7\",\"(16, 8, 1)\",\"(1776, 1, "
      "1)\",\"0\",\"10.0\",\"NVIDIA B200\",\"2\",\"14,976\",\"40\"\n"
      "\"1\",\"1\",\"p\",\"h\",\"b\",\"1\",\"7\",\"(16, 8, 1)\",\"(1, 1, "
      "1)\",\"0\",\"10.0\",\"NVIDIA B200\",\"n/a\",\"5\",\"40\"\n";
  auto r = ParseNcuCsv(text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->layout, Layout::kWide);
  ASSERT_EQ(r->kernels.size(), 2u);
  const KernelFacts f = DeriveFacts(r->kernels[0]);
  EXPECT_EQ(f.device_name, "NVIDIA B200");
  EXPECT_EQ(f.dram_write_bytes, 2000u);
  EXPECT_EQ(f.dram_read_bytes, 0u);  // the write alone is measured
  EXPECT_EQ(f.duration_ns, 14976u);
  EXPECT_EQ(f.registers_per_thread, 40u);
  EXPECT_EQ(f.grid[0], 1776u);
  const KernelFacts g = DeriveFacts(r->kernels[1]);
  EXPECT_FALSE(g.dram_read_bytes);  // n/a is not zero
}

// A file cut inside a row or inside a quoted field, and text that is not
// ncu's, are refused with the line.
TEST(NcuCsvTest, TruncatedAndForeignTextAreRefused) {
  const std::string whole = std::string(kLongHeader) +
                            Row(0, "k", "dram__bytes_read.sum", "byte", "1") +
                            Row(1, "k", "dram__bytes_read.sum", "byte", "2");
  const std::string cut = whole.substr(0, whole.size() - 20);
  auto r = ParseNcuCsv(cut);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 3 has"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("cut short"), std::string::npos);
  r = ParseNcuCsv(whole.substr(0, whole.size() - 2));  // inside a quote
  ASSERT_FALSE(r.ok());
  // Found by the fuzzer: a header naming the value before the metric, and
  // a row that reaches the value but not the name.
  r = ParseNcuCsv(
      "\"ID\",\"Process ID\",\"Kernel Name\",\"Metric Value\",\"Metric "
      "Name\"\n\"0\",\"1\",\"k\",\"5\"\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 2 has 4"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(LooksLikeNcuCsv("\"Time (%)\",\"Total Time (ns)\",\"Name\"\n"));
  EXPECT_FALSE(ParseNcuCsv("a,b,c\n1,2,3\n").ok());
  EXPECT_FALSE(ParseNcuCsv("").ok());
}

Kernel WithMetrics(
    std::initializer_list<std::pair<std::string, std::string>> metrics) {
  Kernel k;
  k.id = 0;
  for (const auto& [name, value] : metrics) {
    k.metrics.push_back({"Command line profiler metrics", name, "inst", value});
  }
  return k;
}

// FLOPs = add + mul + 2 * fma per precision, from either SASS prefix.
TEST(NcuKernelTest, SassFlopsAddMulTwiceFma) {
  const KernelFacts f = DeriveFacts(WithMetrics({
      {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "2,126,643,200"},
      {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "419,430,400"},
      {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "10"},
      {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", "3"},
      {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "221,184"},
  }));
  EXPECT_TRUE(f.has_flops);
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp32)],
            2126643200u + 419430400u + 20u);
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp64)], 6u);
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp16)], 442368u);
}

// Tensor-path ops are FLOPs (a part beside its whole is not added again);
// tensor-pipe instructions never become FLOPs and are flagged.
TEST(NcuKernelTest, TensorOpsAreFlopsInstructionsAreNot) {
  KernelFacts f = DeriveFacts(WithMetrics({
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "1,275,068,416"},
      {"sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", "1,000"},
      {"sm__ops_path_tensor_src_bf16_dst_bf16.sum", "n/a"},
      {"sm__inst_executed_pipe_tensor.sum", "5"},
  }));
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp16Tensor)], 1275068416u);
  EXPECT_TRUE(f.has_tensor_flops);
  EXPECT_FALSE(f.tensor_instructions_without_flops);
  f = DeriveFacts(WithMetrics({
      {"sm__inst_executed_pipe_tensor.sum", "33,554,432,000"},
      {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "0"},
  }));
  for (uint64_t v : f.flops) EXPECT_EQ(v, 0u);
  EXPECT_TRUE(f.has_flops);  // the SASS counters were measured: zero
  EXPECT_TRUE(f.tensor_instructions_without_flops);
}

// The per-instruction tensor counters scripts/gpu-check.sh asks ncu for
// (Hopper: HGMMA, HMMA, IGMMA and fp8 at source level): disjoint kinds,
// summed per class; a source-level counter of the same source type wins
// over its instruction kinds.
TEST(NcuKernelTest, PerInstructionTensorCountersAreSummed) {
  KernelFacts f = DeriveFacts(WithMetrics({
      {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
       "1,000"},
      {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
       "20"},
      {"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", "3"},
      {"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
       "7"},
      {"sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum", "11"},
      {"sm__ops_path_tensor_src_fp8_sparsity_off.sum", "13"},
      {"sm__ops_path_tensor_op_utcqmma_src_fp4_fp6_fp8_dst_fp32.sum", "n/a"},
  }));
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp16Tensor)], 1023u);
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kTf32Tensor)], 7u);
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kInt8Tensor)], 11u);
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp8Tensor)], 13u);
  f = DeriveFacts(WithMetrics({
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "500"},
      {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum", "200"},
      {"sm__ops_path_tensor_op_utcqmma_src_fp4_fp6_fp8_dst_fp32.sum", "9"},
  }));
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp16Tensor)], 500u);
  EXPECT_EQ(f.flops[static_cast<size_t>(Precision::kFp8Tensor)], 9u);
}

// RTX Blackwell (GB20x) names its DRAM counters dram__bytes_op_*.
TEST(NcuKernelTest, RtxBlackwellDramCounterNames) {
  Kernel k = WithMetrics({});
  k.metrics.push_back({"", "dram__bytes_op_read.sum", "Kbyte", "2"});
  k.metrics.push_back({"", "dram__bytes_op_write.sum", "byte", "5"});
  const KernelFacts f = DeriveFacts(k);
  EXPECT_EQ(f.dram_read_bytes, 2000u);
  EXPECT_EQ(f.dram_write_bytes, 5u);
}

}  // namespace
}  // namespace rooftrace::ncu
