// The rows of a run, defined once: what the pipeline hands to every sink
// (the SQLite store, the in-memory report, exports) and what the store
// reader hands back to the analyzer. One struct per table of docs/store.md,
// with the table's columns in the store's types: integers as int64_t, a
// column that may be NULL as std::optional, text as std::string_view where
// empty means NULL.
//
// Plain data; thread-compatible. The trap: text fields are views. Rows the
// pipeline emits point into the joined session (valid during the sink
// call); rows the store reader yields point into SQLite's buffers (valid
// during the callback). Copy what must outlive the call.
//
// A reader may fill only some columns (store/store_reader.h says which);
// the others keep their defaults.
#ifndef ROOFTRACE_PIPELINE_ROWS_H_
#define ROOFTRACE_PIPELINE_ROWS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/precision.h"

namespace rooftrace {

// A run's labels (run_labels, schema 6): KEY=VALUE pairs the user gave
// (`--label commit=abc123`), in the order given; keys are unique.
using RunLabels = std::vector<std::pair<std::string, std::string>>;

// runs: one row per run (a `profile`, a `collect` server lifetime, an
// ingested or imported file).
struct RunRow {
  int64_t run_id = 0;
  std::string command;
  std::string host;
  std::optional<int64_t> started_unix_ns;
  std::optional<int64_t> ended_unix_ns;
  std::string mode;  // trace | counters | mixed | import
  std::string device_name;
  std::string roof_source;
  std::string flops_sources;  // counters | analytic | counters+analytic | none
  std::string producer_version;
  // 1 complete, 0 known incomplete, nullopt: never finished (the writer was
  // killed). Readers must treat nullopt as incomplete.
  std::optional<int64_t> complete;
  // Why the run is incomplete (complete = 0), in one sentence: a failed
  // store write and what it lost, sessions without a Goodbye; empty when
  // complete or unknown.
  std::string incomplete_reason;
  std::string origin;  // profile | collect | ingest:<file> | import:<file>
  // Where the data came from: the format a source read ('rft', 'kineto',
  // ...; empty for a live collection), the file, and its SHA-256.
  std::string source_format;
  std::string source_file;
  std::string source_sha256;
  // The user's labels (table run_labels): what `history --where` selects
  // runs by. Empty for a store older than schema 6.
  RunLabels labels;
  // Which kernel rows the run kept (runs.store_kernels, schema 8): 'all',
  // 'sampled' or 'none' (then only kernel_aggregates); empty: a run of an
  // older schema, every kernel row and no aggregates.
  std::string store_kernels;
};

// sessions: one producer (process) of a run.
struct SessionRow {
  int64_t session_id = 0;
  int64_t run_id = 0;
  std::string_view host;
  int64_t pid = 0, ppid = 0;
  int64_t start_unix_ns = 0, start_ns = 0;
  std::string_view argv, producer_version, mode;
  int64_t counter_passes = 0;
  int64_t packets = 0, last_sequence = 0, sequence_gaps = 0;
  bool goodbye = false;
  bool complete = false;
};

// devices: a GPU a session ran on.
struct DeviceRow {
  int64_t run_id = 0, session_id = 0;
  int64_t device_id = 0;
  std::string_view name, uuid, chip_name;
  int64_t sm_count = 0, cc_major = 0, cc_minor = 0;
  int64_t core_clock_khz = 0, memory_clock_khz = 0;
  // The SM clock the kernels were measured at (DeviceInfo); 0: not measured.
  int64_t measured_sm_clock_khz = 0;
  int64_t memory_bus_width_bits = 0, l2_cache_bytes = 0,
          global_memory_bytes = 0;
  std::string_view driver_version;
};

// roofs: one compute roof of one device of a run (a precision with a peak).
struct RoofRow {
  int64_t run_id = 0;
  int64_t device_id = 0;
  std::string precision;  // store key: 'bf16_tc', 'fp32', ...
  double peak_flops_per_s = 0;
  double dram_bytes_per_s = 0;
  double ridge_flops_per_byte = 0;
  std::string source;  // 'calibrated' | 'datasheet'
};

// steps: one forward step (pipeline/phases.h) with its phase.
struct StepRow {
  int64_t run_id = 0, step_id = 0, session_id = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::string_view phase;
  std::optional<int64_t> token_count;
  std::string_view boundary, evidence;
  int64_t kernel_count = 0, gemm_count = 0, gpu_time_ns = 0;
};

// gemm_calls: one cuBLAS call (or framework matmul) with its shape.
struct GemmCallRow {
  int64_t gemm_call_id = 0;  // assigned by the sink
  int64_t run_id = 0, session_id = 0;
  int64_t call_id = 0;
  std::string_view api;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string_view trans_a, trans_b;
  int64_t a_type = 0, b_type = 0, c_type = 0, d_type = 0, compute_type = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t a_ptr = 0, b_ptr = 0, c_ptr = 0, d_ptr = 0;
  int64_t epilogue = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t thread_id = 0, status = 0;
  std::string_view precision;
  std::optional<int64_t> flops, min_bytes;
  std::string_view weight_operand;  // 'a' | 'b' | empty
  std::optional<int64_t> token_count;
  int64_t kernel_count = 0;
};

// kernels: one kernel execution with its annotation.
struct KernelRow {
  int64_t kernel_id = 0;  // assigned by the store
  int64_t run_id = 0, session_id = 0;
  std::optional<int64_t> correlation_id;
  std::optional<int64_t> device_id, context_id, stream_id;
  std::string_view name;       // as reported (mangled)
  std::string_view demangled;  // may be empty
  std::string_view family;     // may be empty (then derive from name)
  std::optional<int64_t> start_ns, end_ns;
  // Never negative: a reader turns damage into 0 (it must not shrink sums).
  int64_t duration_ns = 0;
  std::array<int64_t, 3> grid{}, block{}, cluster{};
  int64_t registers_per_thread = 0;
  int64_t static_shared_memory_bytes = 0, dynamic_shared_memory_bytes = 0;
  int64_t graph_id = 0, graph_node_id = 0;
  std::optional<int64_t> thread_id;  // the launching thread
  std::optional<int64_t> api_start_ns;
  std::string_view nvtx_path;
  // The framework operator that launched the kernel ("aten::mm",
  // "aiter::rmsnorm"), where the source knew one; empty otherwise. Stored
  // since store schema 7 (kernels.op).
  std::string_view op;
  std::optional<int64_t> gemm_call_id;
  std::string_view shape;  // 'm=8 n=4096 k=4096 batch=1'
  std::optional<int64_t> token_count;
  std::string_view precision;  // dominant class key ('bf16_tc', ...)
  std::optional<int64_t> flops;
  // FLOPs per precision class (index = Precision); nullopt when the kernel's
  // FLOPs are unknown (flops_source 'none').
  std::array<std::optional<int64_t>, kNumPrecisions> flops_by_precision{};
  std::string_view flops_source;  // counters | analytic | none
  std::optional<int64_t> dram_bytes, dram_read_bytes, dram_write_bytes;
  std::string_view bytes_source;
  std::optional<double> ai, achieved_flops_per_s, achieved_bytes_per_s;
  std::optional<double> roof_flops_per_s, fraction_of_roof;
  std::string_view bound;
  std::optional<int64_t> step_id;
  std::string_view phase;
};

// kernel_aggregates (schema 8): the kernels of one run that share a
// grouping key (name, shape, phase, operator, precision, bound, figure
// sources, token count, whether a GEMM call launched them), summed as a
// report sums them (report/report.cc Accumulator), so that a report
// grouped by any of those (history, an aggregate-only run's analyze) needs
// one row per group instead of one per kernel. Sources are stored as
// their class: 'counters (sampled)' for every sampled variant,
// 'pm-sampling' for every PM-sampled one.
struct KernelAggregateRow {
  int64_t run_id = 0;
  std::string_view name, demangled, family;
  std::string_view shape, phase, op, precision, bound;
  std::string_view flops_source, bytes_source;
  std::optional<int64_t> token_count;
  bool gemm_call = false;  // launched by a GEMM call (gemm_call_id set)
  int64_t launches = 0;
  int64_t time_ns = 0, min_ns = 0, max_ns = 0;
  // Over the launches whose FLOPs (bytes; fraction of roof) are known:
  // their number, their time, and the sum.
  int64_t flops_launches = 0, flops_time_ns = 0;
  double flops = 0;
  int64_t bytes_launches = 0, bytes_time_ns = 0;
  double dram_bytes = 0;
  double fraction_weighted = 0;  // sum of fraction_of_roof x duration
  int64_t fraction_time_ns = 0;
  // FLOPs and bytes of the launches that have both (arithmetic intensity).
  double ai_flops = 0, ai_bytes = 0;
  // Launches whose fraction of roof is above 1 (report.h AboveRoof).
  int64_t above_roof_launches = 0, above_roof_ns = 0;
};

// kernel_metrics: one raw counter value of one kernel, exactly as the tool
// that measured it recorded it (pipeline/records.h MetricRecord). Tied to
// its kernel by (session_id, correlation_id, graph_node_id).
struct KernelMetricRow {
  int64_t run_id = 0, session_id = 0;
  int64_t correlation_id = 0;
  // The kernel's graph node within a graph launch; 0: every kernel of the
  // correlation (MetricRecord::graph_node_id).
  int64_t graph_node_id = 0;
  std::string_view name;
  double value = 0;
  std::string_view unit;  // empty: none
};

// memcpys: one copy or memset.
struct MemcpyRow {
  int64_t run_id = 0, session_id = 0;
  std::optional<int64_t> correlation_id;
  std::string_view kind;  // htod | dtoh | dtod | htoh | ptop | memset
  int64_t bytes = 0;
  std::optional<int64_t> start_ns, end_ns;
  int64_t duration_ns = 0;
  std::optional<int64_t> device_id, context_id, stream_id;
  std::string_view src_kind, dst_kind;
  std::optional<int64_t> thread_id;
  std::string_view nvtx_path;
  std::optional<double> achieved_bytes_per_s;
  std::optional<int64_t> step_id;
  std::string_view phase;
};

// nvtx_ranges: one NVTX range (or an imported annotation).
struct NvtxRow {
  int64_t run_id = 0, session_id = 0;
  int64_t range_id = 0;
  std::optional<int64_t> parent_range_id;
  std::string_view domain, name;
  std::string_view kind;  // push_pop | start_end
  std::optional<int64_t> depth;
  std::optional<int64_t> start_ns, end_ns;
  std::optional<int64_t> thread_id, end_thread_id;
  std::string_view path;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_ROWS_H_
