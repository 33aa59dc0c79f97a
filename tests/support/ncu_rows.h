// Rows of an Nsight Compute CSV in its long layout (`ncu --csv
// --metrics ...`: one row per kernel and metric), for tests that build a
// counter file: DRAM read (given, in Mbyte), 1,024 bytes written, a dfma
// instruction count (given) and 3.5 us.
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

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_NCU_ROWS_H_
