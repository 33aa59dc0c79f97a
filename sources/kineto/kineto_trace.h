// One PyTorch profiler (Kineto) Chrome-trace JSON file, parsed with
// simdjson's On-Demand API (one pass, no tree) into flat vectors of the
// events rooftrace uses, either streamed from the file a window at a time
// (Read: memory is the events kept, a window and the structural index of
// one chunk of events, never the text) or over a padded text (Parse): GPU activity
// (kernels, copies, memsets, CUPTI range-profiler ranges with their counter
// values), CUDA launches and copy calls, the GEMM operators and the other
// modelled operators (op_shapes.h) among the cpu_ops with their input
// shapes, collectives' arguments, user annotations, devices and the
// distributed rank. Everything else (python_function, other cpu_ops,
// instant events) is skipped without a copy.
//
// Times: Chrome-trace `ts` and `dur` are microseconds, whatever
// `displayTimeUnit` says (it only tells a viewer how to display them);
// they are turned into integer nanoseconds, rounded to the nearest.
//
// Names are string_views into the trace's own copies of them (each
// distinct string once), not into the text, which is freed once read:
// valid while the KinetoTrace lives.
// On-Demand checks the whole text's structure, strings and UTF-8, and
// every value it reads; a malformed number inside a value rooftrace skips
// (a python_function's args) may go unnoticed.
// Owned by one reader; not thread-safe.
#ifndef ROOFTRACE_SOURCES_KINETO_KINETO_TRACE_H_
#define ROOFTRACE_SOURCES_KINETO_KINETO_TRACE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "sources/file_reader.h"
#include "sources/kineto/gemm_shapes.h"

namespace rooftrace::kineto {

// The arguments PyTorch gives a collective (ProcessGroupNCCL's
// record_param_comms): on the NCCL kernel's own args in recent traces, on
// the `record_param_comms` / `nccl:*` cpu_op in all. Counts are -1 when
// absent.
struct CommArgs {
  std::string_view collective;  // "Collective name": "allreduce", ...
  std::string_view dtype;       // "BFloat16", "Float", ...
  int64_t in_elements = -1, out_elements = -1;  // "In/Out msg nelems"
  int64_t group_size = -1;                      // "Group size"
};

// A cpu_op carrying CommArgs, found again by its External id.
struct CommOp {
  int64_t external_id = -1;
  int32_t comm = -1;  // index into KinetoTrace::comms
};

// A GPU-side event: "cat" kernel, gpu_memcpy, gpu_memset or
// cuda_profiler_range.
struct GpuEvent {
  enum class Kind : uint8_t { kKernel, kMemcpy, kMemset, kProfilerRange };
  Kind kind = Kind::kKernel;
  bool has_device = false;
  bool has_correlation = false;
  int32_t comm = -1;  // kernels: index into KinetoTrace::comms, -1 none
  std::string_view name;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t device = 0, context = 0, stream = 0;
  uint64_t correlation = 0;
  int64_t external_id = -1;
  int64_t pid = -1, tid = -1;  // the trace's row (device, stream)
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0, shared_memory = 0;
  uint64_t bytes = 0;
  // Counter values of a profiler range: KinetoTrace::metrics[begin, end).
  uint32_t metrics_begin = 0, metrics_end = 0;
};

// A host-side event: a CUDA API call that launches or copies ("cat"
// cuda_runtime / cuda_driver), a GEMM operator or another operator with
// analytic figures (cpu_op; op_shapes.h) or a user annotation
// (record_function, ProfilerStep#N).
struct HostEvent {
  // kCapture: a stream's graph capture beginning (api_kind 1) or ending
  // (2): cudaStreamBeginCapture, hipStreamEndCapture, ...
  enum class Kind : uint8_t {
    kLaunch,
    kGemmOp,
    kModelledOp,
    kAnnotation,
    kCapture
  };
  Kind kind = Kind::kLaunch;
  std::string_view name;
  uint64_t start_ns = 0, end_ns = 0;
  int64_t pid = -1, tid = -1;
  uint64_t correlation = 0;
  bool has_correlation = false;
  int64_t external_id = -1;
  int32_t api_kind = 0;  // launches: wire::ApiKind
  // Launches: the kernel launched, when the profiler named it in the
  // call's args ("kernel": recent PyTorch does, on CUDA and ROCm).
  std::string_view kernel;
  // Ops: their inputs, KinetoTrace::op_inputs[inputs, inputs +
  // input_count) (KinetoTrace::InputsOf); -1 none.
  int32_t inputs = -1;
  int32_t input_count = 0;
};

// The end of an "ac2g" flow ("ph" "f"): its id is the correlation id of
// the GPU event that starts at (pid, tid, ts).
struct FlowEnd {
  int64_t pid = -1, tid = -1;
  uint64_t ts_ns = 0;
  uint64_t id = 0;
};

// An operator's input as the trace keeps it (InputsOf gives it back as an
// OpInput): its strings as numbers in the trace's string pool, its
// dimensions (and broadcast strides) in KinetoTrace::op_dims. 24 bytes
// where an OpInput takes 160:
// shaped operators are a third of a trace's events.
struct PackedInput {
  uint32_t type = 0, concrete = 0;
  int32_t rank = -1;
  int32_t list_size = 0;
  uint32_t dims = 0;  // op_dims[dims, dims + dim_count), list elements after
  uint8_t dim_count = 0;
  bool has_list_elements = false;
  // `rank` strides follow (after the list elements): kept only when they
  // store fewer elements than the shape (OpInput::has_strides).
  bool has_strides = false;
};

struct Metric {
  std::string_view name;
  double value = 0;
};

// One entry of the top-level "deviceProperties".
struct DeviceProps {
  uint32_t id = 0;
  std::string_view name;
  uint32_t sm_count = 0, cc_major = 0, cc_minor = 0;
  uint64_t global_memory_bytes = 0;
};

// What was skipped, for the import warning.
struct ParseCounts {
  uint64_t events = 0;
  uint64_t gpu_user_annotations = 0;
  uint64_t gemm_ops_without_shapes = 0;
  uint64_t modelled_ops_without_shapes = 0;
  uint64_t chunks = 0;  // the events were read in; 0: read whole
  // Values that are not JSON (inf, nan, NaN, Infinity, N/A: PyTorch
  // 1.8-1.9's profiler wrote them) read as missing.
  uint64_t non_json_values = 0;
};

class KinetoTrace {
 public:
  // Parses `text` (content_size bytes followed by at least simdjson's
  // padding of zero bytes; sources/file_reader.h ReadWholeFile). `path`
  // names the file in errors: a syntax error gives its line, column and
  // byte offset; a file that is JSON but no Chrome trace says so.
  // Events are read `chunk_bytes` of text at a time when the file is laid
  // out as PyTorch writes it (one top-level object with a "traceEvents"
  // array), so that simdjson's index covers one chunk, not the whole text:
  // peak memory is about the text's size plus a chunk's index. Anything
  // else, or a chunk that does not parse, is read whole (the errors then
  // say where the text breaks).
  static constexpr size_t kChunkBytes = size_t{16} << 20;
  static StatusOr<std::unique_ptr<KinetoTrace>> Parse(
      std::string text, size_t content_size, const std::string& path,
      size_t chunk_bytes = kChunkBytes);
  // Reads the file at `path` (plain or gzip, within `budget`: ReadWholeFile's
  // errors) as Parse reads its text, but streamed: the file is read a
  // window at a time and each chunk of events parsed as it comes, so the
  // whole text is never held (peak memory: the events kept, a window of
  // about two chunks and its index). A small file (at most a chunk), one
  // not laid out as PyTorch writes it, or one whose chunks do not parse
  // is read again whole with Parse, whose answer (and error) it gives.
  static StatusOr<std::unique_ptr<KinetoTrace>> Read(
      const std::string& path, const GzipBudget& budget = GzipBudget(),
      size_t chunk_bytes = kChunkBytes);
  // The padding ReadWholeFile must add for Parse.
  static size_t Padding();
  ~KinetoTrace();

  // The inputs of operator event `h` (kGemmOp / kModelledOp).
  OpInputs InputsOf(const HostEvent& h) const;
  // Frees the events (gpu, host and what they index: inputs, metrics,
  // flows, comms) once the reader has turned them into sessions; the
  // rest (devices, processes, rank, counts) stays.
  void ReleaseEvents();

  std::vector<GpuEvent> gpu;
  std::vector<HostEvent> host;
  std::vector<Metric> metrics;
  std::vector<FlowEnd> flow_ends;
  // The inputs of every shaped operator, one after another: an operator
  // has two to five, and a fixed OpInputs each (ten) would be most of the
  // events' memory. Read them with InputsOf.
  std::vector<PackedInput> op_inputs;
  std::vector<int64_t> op_dims;
  std::vector<CommArgs> comms;
  std::vector<CommOp> comm_ops;
  std::vector<DeviceProps> devices;
  std::vector<std::pair<int64_t, std::string_view>> process_names;
  std::optional<int64_t> rank;        // distributedInfo.rank
  std::optional<int64_t> world_size;  // distributedInfo.world_size
  int64_t schema_version = -1;
  ParseCounts counts;
  uint64_t content_bytes = 0;  // the JSON text's size

 private:
  KinetoTrace();
  bool ReadInChunks(size_t content, size_t chunk_bytes);
  // Stream()'s outcome: read; a small file, whole in the text, for Parse;
  // to be read whole.
  enum class Streamed { kDone, kSmall, kWhole };
  StatusOr<Streamed> Stream(FileStream* file, size_t chunk_bytes,
                            size_t* small_size);
  // Keeps what the trace names in the pool and frees the text.
  void Finish();
  // Reserves the event vectors for `factor` times what they hold.
  void ReserveFor(double factor);
  // The events read so far, to drop those of a chunk read again.
  struct EventMark {
    std::array<size_t, 9> sizes{};
    ParseCounts counts;
  };
  EventMark Mark() const;
  void RollBack(const EventMark& mark);
  // How many more separators a streamed chunk may try to end at.
  static constexpr int kSeparatorTries = 64;
  static StatusOr<std::unique_ptr<KinetoTrace>> ParseAgain(
      std::string text, size_t content_size, const std::string& path,
      size_t chunk_bytes, uint64_t blanked);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rooftrace::kineto

#endif  // ROOFTRACE_SOURCES_KINETO_KINETO_TRACE_H_
