// Rows of an Nsight Compute CSV in its long layout (`ncu --csv
// --metrics ...`: one row per kernel and metric), for tests that build a
// counter file: DRAM read (given, in Mbyte), 1,024 bytes written, a dfma
// instruction count (given) and 3.5 us; and one whole file of a kernel
// measured at a locked SM clock.
#ifndef ROOFTRACE_TESTS_SUPPORT_NCU_ROWS_H_
#define ROOFTRACE_TESTS_SUPPORT_NCU_ROWS_H_

#include <string>
#include <tuple>

namespace rooftrace::test_support {

struct NcuRowContext {
  std::string process_id, process_name, host, block, grid, cc;
};

inline std::string NcuKernelRows(const NcuRowContext& c, int id,
                                 const std::string& name,
                                 const std::string& read_mbyte,
                                 const std::string& dfma) {
  std::string out;
  for (const auto& [metric, unit, value] :
       {std::tuple<std::string, std::string, std::string>{
            "dram__bytes_read.sum", "Mbyte", read_mbyte},
        {"dram__bytes_write.sum", "byte", "1,024"},
        {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", "inst", dfma},
        {"gpu__time_duration.sum", "usecond", "3.5"}}) {
    out += "\"" + std::to_string(id) + "\",\"" + c.process_id + "\",\"" +
           c.process_name + "\",\"" + c.host + "\",\"" + name +
           "\",\"1\",\"7\",\"" + c.block + "\",\"" + c.grid + "\",\"0\",\"" +
           c.cc + "\",\"Command line profiler metrics\",\"" + metric +
           "\",\"" + unit + "\",\"" + value + "\"\n";
  }
  return out;
}

// A whole long-layout file of one kernel of an H100 profiled at the SM clock
// ncu locks (`clock_hz` as ncu prints it, e.g. "1,590,000,000": below the
// 1.98 GHz boost the datasheet's peaks assume; empty: no clock metric): an
// 8192^3 bf16 GEMM, 2 * 8192^3 = 1,099,511,627,776 tensor FLOPs,
// 402,653,184 DRAM bytes read, 1.5 ms. At 1.59 GHz its roof is
// 989.4e12 * 1590 / 1980 = 794.518e12 FLOP/s (AI 2730.67 is past the
// ridge), so it reached 733.008e12 / 794.518e12 = 0.922581 of it, not the
// 0.740861 the boost-clock roof would say.
inline std::string ClockedH100NcuCsv(const std::string& clock_hz) {
  auto row = [](const std::string& metric, const std::string& unit,
                const std::string& value) {
    return "\"0\",\"4242\",\"python3\",\"h\",\"gemm_bf16\",\"1\",\"7\","
           "\"(128, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line "
           "profiler metrics\",\"" + metric + "\",\"" + unit + "\",\"" +
           value + "\"\n";
  };
  return std::string(
             "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel "
             "Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\","
             "\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric "
             "Unit\",\"Metric Value\"\n") +
         row("device__attribute_display_name", "", "NVIDIA H100 80GB HBM3") +
         row("dram__bytes_read.sum", "byte", "402,653,184") +
         row("dram__bytes_write.sum", "byte", "0") +
         row("gpu__time_duration.sum", "msecond", "1.5") +
         row("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "",
             "1,099,511,627,776") +
         (clock_hz.empty() ? std::string()
                           : row("sm__cycles_elapsed.avg.per_second",
                                 "cycle/second", clock_hz));
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_NCU_ROWS_H_
