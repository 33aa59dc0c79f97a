// The records a session holds (pipeline/session.h), in the compact form the
// pipeline joins: one struct per record kind, with the wire's enum values
// (proto/field_numbers.h) for kinds. Sources fill them: the wire stream's
// decoder (sources/rft/packet_decoder.h), and importers from other tools'
// traces.
#ifndef ROOFTRACE_PIPELINE_RECORDS_H_
#define ROOFTRACE_PIPELINE_RECORDS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "model/precision.h"

namespace rooftrace {

struct KernelRecord {
  uint64_t correlation_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t name_iid = 0;
  uint64_t graph_node_id = 0;
  uint32_t device_id = 0, context_id = 0, stream_id = 0;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t cluster[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_memory_bytes = 0;
  uint32_t dynamic_shared_memory_bytes = 0;
  uint32_t graph_id = 0;

  bool operator==(const KernelRecord&) const = default;
};

struct LaunchRecord {
  uint64_t correlation_id = 0;
  uint64_t api_start_ns = 0;
  uint64_t api_end_ns = 0;
  uint64_t nvtx_range_id = 0;
  uint64_t gemm_call_id = 0;
  uint32_t thread_id = 0;
  int32_t kind = 0;  // wire::ApiKind

  bool operator==(const LaunchRecord&) const = default;
};

struct MemcpyRecord {
  uint64_t correlation_id = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t bytes = 0;
  int32_t kind = 0;  // wire::CopyKind
  uint32_t device_id = 0, context_id = 0, stream_id = 0;
  int32_t src_kind = 0, dst_kind = 0;  // wire::MemoryKind

  bool operator==(const MemcpyRecord&) const = default;
};

// A cuBLAS call as the collector keeps it: the wire's Gemm without the
// batch strides (not stored) and without its correlation ids, which are
// kept apart as GemmLinks (most calls have one or two: a vector per call
// would cost an allocation each).
struct GemmRecord {
  uint64_t call_id = 0;
  int64_t m = 0, n = 0, k = 0, batch = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  uint64_t a_ptr = 0, b_ptr = 0, c_ptr = 0, d_ptr = 0;
  uint64_t start_ns = 0, end_ns = 0;
  int32_t api = 0;                   // wire::GemmApi
  int32_t trans_a = 0, trans_b = 0;  // wire::Transpose
  int32_t a_type = 0, b_type = 0, c_type = 0, d_type = 0;
  int32_t compute_type = 0;
  uint32_t epilogue = 0;
  uint32_t thread_id = 0;
  int32_t status = 0;
  int32_t precision = 0;  // model::Precision (the wire's PrecisionClass)
  // Which operand is the weight when the source knows it (an importer
  // reading a linear layer): 0 unknown (phases infer it from pointers that
  // repeat across steps), 1 a, 2 b. Never on the wire.
  int32_t weight_operand = 0;
  // The framework operator that made the call (an importer: "aten::mm"),
  // as a string iid; 0: not known. Never on the wire.
  uint64_t op_name_iid = 0;
  // Elements of a bias the call adds to its output (GemmShape::
  // bias_elements) when an importer read it from the operation's inputs
  // (aten::addmm); 0: none or not known. Never on the wire.
  int64_t bias_elements = 0;

  bool operator==(const GemmRecord&) const = default;
};

// A kernel the producer tied to a GEMM call by correlation id
// (Gemm.correlation_ids), for launches that carry no gemm_call_id.
// graph_node_id: 0 for every kernel of the correlation id; else only the
// kernel of that graph node (a graph launch's kernels share its
// correlation id: an importer that maps them to the operators captured in
// the graph links each node to its own call).
struct GemmLink {
  uint64_t correlation_id = 0;
  uint64_t call_id = 0;
  uint64_t graph_node_id = 0;

  bool operator==(const GemmLink&) const = default;
};

struct NvtxRecord {
  uint64_t range_id = 0;
  uint64_t parent_range_id = 0;
  uint64_t domain_iid = 0;
  uint64_t name_iid = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t thread_id = 0, end_thread_id = 0;
  uint32_t depth = 0;
  int32_t kind = 0;  // wire::RangeKind

  bool operator==(const NvtxRecord&) const = default;
};

struct CounterRecord {
  uint64_t correlation_id = 0;
  uint64_t dram_read_bytes = 0;
  uint64_t dram_write_bytes = 0;
  std::array<uint64_t, kNumPrecisions> flops{};
  bool has_flops = false;
  // gpu__time_duration of the profiled launch (0: not counted). CUPTI gives
  // kernels that the Range Profiler replayed no activity timestamps
  // (start = end = 0, "could not be collected"), so on the H100 every
  // profiled kernel had no duration without it.
  uint64_t gpu_time_ns = 0;
  // False when the tool measured FLOPs but no DRAM traffic (a CUPTI range
  // profiler asked for instruction counters only): the bytes above are
  // then unknown, not zero. True for every counter record of the wire.
  bool has_dram_bytes = true;

  bool operator==(const CounterRecord&) const = default;
};

// An operation other than a GEMM whose FLOPs and minimum DRAM bytes a
// source computed from its shapes (attention, convolution, normalization,
// elementwise; model/ops.h), tied to the kernels it ran by correlation id
// (OpLink). Like a GEMM call's, its numbers go to its longest kernel, and
// only when that kernel has no counters and no GEMM: they are analytic.
struct OpRecord {
  uint64_t op_id = 0;      // unique in the session
  uint64_t name_iid = 0;   // "aten::scaled_dot_product_attention"
  uint64_t shape_iid = 0;  // what the kernel row shows as its shape
  uint64_t flops = 0;      // 0: none (a data movement)
  uint64_t min_bytes = 0;  // 0: unknown
  int32_t precision = 0;   // model::Precision of the FLOPs
  uint64_t start_ns = 0, end_ns = 0;  // host time of the operation
  uint32_t thread_id = 0;

  bool operator==(const OpRecord&) const = default;
};

// graph_node_id as GemmLink's.
struct OpLink {
  uint64_t correlation_id = 0;
  uint64_t op_id = 0;
  uint64_t graph_node_id = 0;

  bool operator==(const OpLink&) const = default;
};

// One raw counter value of one kernel exactly as the tool that measured it
// recorded it (an Nsight Compute metric, a CUPTI range-profiler counter),
// kept beside the FLOPs and bytes derived from it: a tensor-pipe
// instruction count, say, that is not FLOPs without the instruction shape.
struct MetricRecord {
  uint64_t correlation_id = 0;
  uint64_t name_iid = 0;  // the tool's metric name
  uint64_t unit_iid = 0;  // its unit as the tool wrote it (0: none)
  double value = 0;
  // Within a graph launch `correlation_id`, the one kernel (its graph node)
  // the value is of; 0: every kernel of the correlation. A correlation's
  // metrics are all of one kind or the other.
  uint64_t graph_node_id = 0;

  bool operator==(const MetricRecord&) const = default;
};

// Names of the metrics a source computes for a collective kernel (NCCL's
// all_reduce, all_gather, ...; model/ops.h Collective) rather than reads
// from a counter: the message in bytes, the group's ranks, and the
// algorithm and bus bandwidths in bytes per second. A figure the trace
// does not give is absent, never 0.
inline constexpr char kCollectiveMessageBytes[] = "collective.message_bytes";
inline constexpr char kCollectiveGroupSize[] = "collective.group_size";
inline constexpr char kCollectiveAlgbw[] = "collective.algbw";
inline constexpr char kCollectiveBusbw[] = "collective.busbw";

// Every record of a session, in arrival order per kind.
// One PM sampling interval of one device (libinject's sampling mode,
// wire.PmSample): the device-wide counts between start_ns and end_ns (host
// clock, like kernels'), in pipeline/pm_attribution.h's PmCounter order.
struct PmSampleRecord {
  uint32_t device_id = 0;
  uint64_t start_ns = 0, end_ns = 0;
  std::array<double, 5> values{};

  bool operator==(const PmSampleRecord&) const = default;
};

struct SessionRecords {
  std::vector<KernelRecord> kernels;
  std::vector<LaunchRecord> launches;
  std::vector<MemcpyRecord> memcpys;
  std::vector<GemmRecord> gemms;
  std::vector<GemmLink> gemm_links;
  std::vector<NvtxRecord> nvtx;
  std::vector<CounterRecord> counters;
  std::vector<OpRecord> ops;
  std::vector<OpLink> op_links;
  std::vector<MetricRecord> metrics;
  std::vector<PmSampleRecord> pm_samples;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_RECORDS_H_
