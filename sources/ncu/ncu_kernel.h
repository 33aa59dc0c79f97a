// What rooftrace takes from one kernel Nsight Compute profiled
// (sources/ncu/ncu_csv.h): DRAM bytes, GPU time, FLOPs per precision from
// the SASS and tensor-path counters, the SM clock the counters ran at,
// launch geometry and the device's name. docs/import.md ("Nsight Compute
// CSV") lists each figure's metrics.
//
// Counting rules:
//  - CUDA-core FLOPs: {sm,smsp}__sass_thread_inst_executed_op_{d,f,h}
//    {add,mul,fma}_pred_on.sum: ADD and MUL 1, FMA 2 per thread
//    instruction (half counted per instruction, as ncu's roofline does).
//  - tensor FLOPs: sm__ops_path_tensor_src_<type>[_dst_<type>].sum count
//    the tensor path's math operations, a multiply and an add each: one op
//    is one FLOP. The per-instruction counters (..._op_hgmma_src_...,
//    _op_hmma_, _op_utchmma_: disjoint kinds, summed) count when no
//    source-level counter of that source type is present; a part beside
//    its whole (_sparsity_off beside the plain name, a dst beside its src)
//    is not added again.
//  - sm__inst_executed_pipe_tensor* count INSTRUCTIONS: never FLOPs (the
//    FLOPs per instruction depend on the instruction's shape). A kernel with
//    such instructions and no tensor FLOP counter is flagged.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_SOURCES_NCU_NCU_KERNEL_H_
#define ROOFTRACE_SOURCES_NCU_NCU_KERNEL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/precision.h"
#include "sources/ncu/ncu_csv.h"

namespace rooftrace::ncu {

struct KernelFacts {
  // DRAM bytes (dram__bytes_{read,write}.sum, or GB20x's
  // dram__bytes_op_{read,write}.sum). With dram__bytes.sum alone read and
  // write are not told apart: the total is in dram_read_bytes and
  // dram_total_only is set.
  std::optional<uint64_t> dram_read_bytes, dram_write_bytes;
  bool dram_total_only = false;
  // GPU time: gpu__time_duration.sum, else the "Duration" of the speed of
  // light section, else sm__cycles_elapsed.avg / .avg.per_second.
  std::optional<uint64_t> duration_ns;
  std::string duration_from;  // the metric(s) it came from
  // FLOPs per model::Precision; has_flops: some FLOP counter had a value.
  std::array<uint64_t, kNumPrecisions> flops{};
  bool has_flops = false;
  bool has_tensor_flops = false;
  // Tensor-pipe instructions executed (> 0) with no tensor FLOP counter.
  bool tensor_instructions_without_flops = false;
  // The SM clock while the counters ran (sm__cycles_elapsed.avg.per_second,
  // else the "SM Frequency" of the speed of light section), Hz.
  std::optional<double> sm_clock_hz;
  std::array<uint32_t, 3> grid{}, block{};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::string device_name;  // device__attribute_display_name; may be empty
};

KernelFacts DeriveFacts(const Kernel& kernel);

// Whether a metric describes the device or the launch rather than the
// kernel's work (device__attribute_*, launch__*, nvlink__*, ...): those are
// not kept as raw per-kernel metrics.
bool IsDescriptiveMetric(std::string_view name);

}  // namespace rooftrace::ncu

#endif  // ROOFTRACE_SOURCES_NCU_NCU_KERNEL_H_
