// Builds rooftrace wire streams for tests, benchmarks and the example:
// Hello, Device, kernels with their launches, GEMM calls, copies, NVTX ranges,
// counters, Stats and Goodbye, with interned strings, framed exactly as a
// producer frames them (proto/framing.h).
//
// TraceBuilder is owned by one test or tool; not thread-safe. Records are
// collected into pending batches and become packets on Flush() (and
// automatically every `max_batch_records`), so a test decides which records
// share a packet and in which order packets arrive.
//
// The trap: interned strings are attached to the next packet emitted, which
// may be after the packet that uses them; the collector must resolve names
// at the end of a session, not packet by packet (that is the point).
#ifndef ROOFTRACE_SOURCES_RFT_TESTING_TRACE_BUILDER_H_
#define ROOFTRACE_SOURCES_RFT_TESTING_TRACE_BUILDER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "proto/rooftrace.pb.h"
#include "proto/wire_constants.h"

namespace rooftrace::test_support {

// cudaDataType_t and cublasComputeType_t values used by generated GEMMs.
inline constexpr int32_t kCudaR32F = 0;
inline constexpr int32_t kCudaR64F = 1;
inline constexpr int32_t kCudaR16F = 2;
inline constexpr int32_t kCudaR8I = 3;
inline constexpr int32_t kCudaR32I = 10;
inline constexpr int32_t kCudaR16BF = 14;
inline constexpr int32_t kCudaR8FE4M3 = 28;
inline constexpr int32_t kCublasCompute16F = 64;
inline constexpr int32_t kCublasCompute32F = 68;
inline constexpr int32_t kCublasCompute32FFastTf32 = 77;
inline constexpr int32_t kCublasCompute64F = 70;
inline constexpr int32_t kCublasCompute32I = 72;

struct SessionInfo {
  uint64_t magic = wire::kTraceMagic;
  uint32_t protocol_version = wire::kProtocolVersion;
  std::string producer_version = "rooftrace 0.1.0";
  uint32_t pid = 4242;
  uint32_t ppid = 1;
  std::string host = "testhost";
  std::vector<std::string> argv = {"python3", "serve.py"};
  uint64_t start_unix_ns = 1700000000000000000ull;
  uint64_t start_ns = 1000000000ull;  // CLOCK_MONOTONIC at session start
  wire::Mode mode = wire::MODE_TRACE;
  uint32_t counter_passes = 0;
  // Hello.live_buffer: the producer's live buffer file ("" for none).
  std::string live_buffer;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(SessionInfo info = {});

  // When set, every emitted frame goes to `sink` instead of being kept
  // (for streams too large to hold; Frames()/Framed()/packets() stay empty).
  void set_sink(std::function<void(std::string_view frame)> sink) {
    sink_ = std::move(sink);
  }
  // Pending records that trigger an automatic Flush(); 0: only explicit.
  void set_max_batch_records(size_t n) { max_batch_records_ = n; }
  // Keep the decoded Packet objects (default true; off for big streams).
  void set_keep_packets(bool keep) { keep_packets_ = keep; }

  const SessionInfo& info() const { return info_; }

  // Emits the Hello packet (with the info's magic and version).
  void Hello();
  // Emits a Device packet.
  void AddDevice(uint32_t device_id, std::string_view name);

  // Returns the iid of `s`, defining it (in the next packet) on first use.
  uint64_t Intern(std::string_view s);

  wire::Kernel& AddKernel(std::string_view name, uint64_t correlation_id,
                          uint64_t start_ns, uint64_t end_ns);
  wire::Launch& AddLaunch(uint64_t correlation_id, uint64_t api_start_ns,
                          uint64_t gemm_call_id = 0,
                          uint64_t nvtx_range_id = 0);
  // A GEMM call (column-major, as cuBLAS sees it) with bf16 operands and
  // fp32 compute unless changed on the returned record.
  wire::Gemm& AddGemm(uint64_t call_id, int64_t m, int64_t n, int64_t k,
                      uint64_t a_ptr, uint64_t b_ptr, uint64_t start_ns);
  wire::Memcpy& AddMemcpy(uint64_t correlation_id, wire::CopyKind kind,
                          uint64_t bytes, uint64_t start_ns, uint64_t end_ns);
  wire::NvtxRange& AddNvtxRange(uint64_t range_id, std::string_view name,
                                uint64_t start_ns, uint64_t end_ns,
                                uint64_t parent_range_id = 0,
                                uint32_t depth = 0, uint32_t thread_id = 1);
  wire::KernelCounters& AddCounters(uint64_t correlation_id,
                                    uint64_t dram_read_bytes,
                                    uint64_t dram_write_bytes,
                                    wire::PrecisionClass precision,
                                    uint64_t flops);

  // One PM sample of `device_id` (sampling mode): DRAM bytes read and
  // written between start_ns and end_ns.
  wire::PmSample& AddPmSample(uint32_t device_id, uint64_t start_ns,
                              uint64_t end_ns, double dram_read_bytes,
                              double dram_write_bytes);

  // Emits the pending batches as packets, in this order: kernels+launches,
  // memcpys, gemms, nvtx, counters, PM samples (one packet each when
  // non-empty).
  void Flush();

  // Declares records the producer lost or filtered (reported in Stats and
  // Goodbye).
  void AddDropped(wire::RecordKind kind, uint64_t n);
  void AddFiltered(wire::RecordKind kind, uint64_t n);

  // Flushes, then emits a cumulative Stats packet.
  void Stats();
  // Flushes, then emits Goodbye with totals of everything emitted.
  void Goodbye(int32_t exit_code = 0);

  // Emits an arbitrary packet (sequence and timestamp are filled in).
  void EmitRaw(wire::Packet packet);

  // Records sent so far, per wire::RecordKind.
  uint64_t sent(wire::RecordKind kind) const { return sent_[kind]; }
  uint64_t packets_emitted() const { return sequence_; }

  const std::vector<wire::Packet>& packets() const { return packets_; }
  // Every frame, in order (empty when a sink is set).
  const std::vector<std::string>& Frames() const { return frames_; }
  // All frames concatenated: a valid .rft stream.
  std::string Framed() const;
  // Writes Framed() to `path`.
  Status WriteFile(const std::string& path) const;

 private:
  size_t PendingRecords() const;
  void MaybeAutoFlush();
  void Emit(wire::Packet packet);
  std::vector<wire::RecordCount> Counts() const;

  SessionInfo info_;
  std::function<void(std::string_view)> sink_;
  size_t max_batch_records_ = 4096;
  bool keep_packets_ = true;
  uint64_t sequence_ = 0;
  uint64_t last_timestamp_ns_ = 0;
  std::map<std::string, uint64_t, std::less<>> iids_;
  std::vector<wire::InternedString> pending_strings_;
  wire::KernelBatch kernels_;
  wire::MemcpyBatch memcpys_;
  wire::GemmBatch gemms_;
  wire::NvtxBatch nvtx_;
  wire::CounterBatch counters_;
  wire::PmSampleBatch pm_samples_;
  std::array<uint64_t, 9> sent_{};
  std::array<uint64_t, 9> dropped_{};
  std::array<uint64_t, 9> filtered_{};
  std::vector<wire::Packet> packets_;
  std::vector<std::string> frames_;
};

// ------------------------------------------------------------------------
// A synthetic LLM inference trace: a Llama-like decoder stack in bf16 run by
// an autoregressive engine (one prefill step over batch x prompt tokens, then
// decode steps over batch tokens), with numbers a test can compute by hand.
//
// Per step and layer (PyTorch convention: y = x W^T becomes the cuBLAS call
// m = out_features, n = tokens, k = in_features, A = the weight, B = the
// activation):
//   rmsnorm, GEMM qkv (m = 3h), rope, attention, GEMM o_proj (m = h),
//   residual add, rmsnorm, GEMM gate_up (m = 2i), silu_mul,
//   GEMM down (m = h, k = i), residual add                    -> 11 kernels
// then per step: final rmsnorm, GEMM lm_head (m = vocab, n = batch: only the
// last position of each sequence), argmax sampling, and a device-to-host copy
// of batch x 8 bytes (the sampled token ids) that ends the step.
// Weight pointers repeat across steps; activation pointers are fresh in
// prefill and alternate between two buffers in decode (allocator reuse).
struct LlmTraceOptions {
  int64_t batch = 4;
  int64_t prompt_len = 128;
  int decode_steps = 8;
  int layers = 2;
  int64_t hidden = 1024;
  int64_t intermediate = 2816;
  int64_t vocab = 32000;
  bool nvtx = false;           // "step" ranges (depth 0) and "layer.N" (1)
  bool counters = false;       // counters mode: a KernelCounters per kernel
  bool host_gap_only = false;  // no D2H copies, no NVTX: steps by host gap
  std::string device_name = "NVIDIA H100 80GB HBM3";
  SessionInfo session;
  size_t max_batch_records = 4096;
};

// Labels a generated trace as synthetic wherever a run is shown: the device
// name (report headers, the HTML title, the roofline plot's title), the
// host and the command. The device name keeps the GPU's name, so the
// datasheet roofs still match. rooftrace_example_trace uses it.
void MarkSynthetic(LlmTraceOptions* options);

struct StepTruth {
  std::string phase;         // "prefill" | "decode"
  int64_t token_count = 0;   // batch*prompt_len or batch
  uint64_t kernels = 0;
  uint64_t gemms = 0;
  uint64_t gemm_flops = 0;   // sum of 2*m*n*k over the step's GEMMs
  uint64_t first_kernel_start_ns = 0;
  uint64_t last_kernel_end_ns = 0;
};

struct LlmTraceTruth {
  std::vector<StepTruth> steps;
  uint64_t kernels = 0;
  uint64_t launches = 0;
  uint64_t gemms = 0;
  uint64_t memcpys = 0;
  uint64_t nvtx_ranges = 0;
  uint64_t gemm_flops = 0;
  uint64_t gpu_time_ns = 0;  // sum of kernel durations
};

// Kernels per step of the generated trace.
inline uint64_t LlmKernelsPerStep(const LlmTraceOptions& o) {
  return 11ull * o.layers + 3;
}
inline uint64_t LlmGemmsPerStep(const LlmTraceOptions& o) {
  return 4ull * o.layers + 1;
}

// Appends the whole session (Hello .. Goodbye) to `builder`, which must be
// fresh and built with `options.session`. Returns what was generated.
LlmTraceTruth GenerateLlmTrace(const LlmTraceOptions& options,
                               TraceBuilder* builder);

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_SOURCES_RFT_TESTING_TRACE_BUILDER_H_
