#include "sources/rft/testing/trace_builder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "proto/framing.h"

namespace rooftrace::test_support {

TraceBuilder::TraceBuilder(SessionInfo info) : info_(std::move(info)) {}

void TraceBuilder::Hello() {
  wire::Packet p;
  auto* h = p.mutable_hello();
  h->set_magic(info_.magic);
  h->set_protocol_version(info_.protocol_version);
  h->set_producer_version(info_.producer_version);
  h->set_pid(info_.pid);
  h->set_ppid(info_.ppid);
  h->set_host(info_.host);
  for (const auto& a : info_.argv) h->add_argv(a);
  h->set_start_unix_ns(info_.start_unix_ns);
  h->set_start_ns(info_.start_ns);
  h->add_capabilities(wire::CAPABILITY_KERNELS);
  h->add_capabilities(wire::CAPABILITY_MEMCPY);
  h->add_capabilities(wire::CAPABILITY_NVTX);
  h->add_capabilities(wire::CAPABILITY_GEMM_SHAPES);
  h->add_capabilities(wire::CAPABILITY_DEVICE_INFO);
  if (info_.mode == wire::MODE_COUNTERS) {
    h->add_capabilities(wire::CAPABILITY_COUNTERS);
  }
  h->set_mode(info_.mode);
  h->set_counter_passes(info_.counter_passes);
  if (!info_.live_buffer.empty()) h->set_live_buffer(info_.live_buffer);
  h->add_config("ROOFTRACE_MODE=" + std::string(info_.mode == wire::MODE_COUNTERS
                                                    ? "counters"
                                                    : "trace"));
  Emit(std::move(p));
}

void TraceBuilder::AddDevice(uint32_t device_id, std::string_view name) {
  wire::Packet p;
  auto* d = p.mutable_device();
  d->set_device_id(device_id);
  d->set_name(std::string(name));
  d->set_uuid("GPU-00000000-0000-0000-0000-00000000000" +
              std::to_string(device_id % 10));
  d->set_sm_count(132);
  d->set_compute_capability_major(9);
  d->set_compute_capability_minor(0);
  d->set_core_clock_khz(1980000);
  d->set_memory_clock_khz(2619000);
  d->set_memory_bus_width_bits(5120);
  d->set_l2_cache_bytes(50ull << 20);
  d->set_global_memory_bytes(80ull << 30);
  d->set_chip_name("GH100");
  d->set_driver_version("13000");
  ++sent_[wire::RECORD_DEVICE];
  Emit(std::move(p));
}

uint64_t TraceBuilder::Intern(std::string_view s) {
  auto it = iids_.find(s);
  if (it != iids_.end()) return it->second;
  const uint64_t iid = iids_.size() + 1;
  iids_.emplace(std::string(s), iid);
  wire::InternedString is;
  is.set_iid(iid);
  is.set_str(std::string(s));
  pending_strings_.push_back(std::move(is));
  return iid;
}

wire::Kernel& TraceBuilder::AddKernel(std::string_view name,
                                      uint64_t correlation_id,
                                      uint64_t start_ns, uint64_t end_ns) {
  MaybeAutoFlush();
  auto* k = kernels_.add_kernels();
  k->set_correlation_id(correlation_id);
  k->set_start_ns(start_ns);
  k->set_end_ns(end_ns);
  k->set_name_iid(Intern(name));
  k->set_context_id(1);
  k->set_stream_id(7);
  k->set_grid_x(132);
  k->set_grid_y(1);
  k->set_grid_z(1);
  k->set_block_x(256);
  k->set_block_y(1);
  k->set_block_z(1);
  k->set_registers_per_thread(64);
  ++sent_[wire::RECORD_KERNEL];
  return *k;
}

wire::Launch& TraceBuilder::AddLaunch(uint64_t correlation_id,
                                      uint64_t api_start_ns,
                                      uint64_t gemm_call_id,
                                      uint64_t nvtx_range_id) {
  MaybeAutoFlush();
  auto* l = kernels_.add_launches();
  l->set_correlation_id(correlation_id);
  l->set_thread_id(info_.pid);
  l->set_api_start_ns(api_start_ns);
  l->set_api_end_ns(api_start_ns + 3000);
  l->set_kind(wire::API_KERNEL_LAUNCH);
  l->set_gemm_call_id(gemm_call_id);
  l->set_nvtx_range_id(nvtx_range_id);
  ++sent_[wire::RECORD_LAUNCH];
  return *l;
}

wire::Gemm& TraceBuilder::AddGemm(uint64_t call_id, int64_t m, int64_t n,
                                  int64_t k, uint64_t a_ptr, uint64_t b_ptr,
                                  uint64_t start_ns) {
  MaybeAutoFlush();
  auto* g = gemms_.add_gemms();
  g->set_call_id(call_id);
  g->set_api(wire::GEMM_API_GEMM_EX);
  g->set_m(m);
  g->set_n(n);
  g->set_k(k);
  g->set_batch(1);
  g->set_trans_a(wire::TRANSPOSE_T);
  g->set_trans_b(wire::TRANSPOSE_N);
  g->set_a_type(kCudaR16BF);
  g->set_b_type(kCudaR16BF);
  g->set_c_type(kCudaR16BF);
  g->set_d_type(kCudaR16BF);
  g->set_compute_type(kCublasCompute32F);
  g->set_lda(k);
  g->set_ldb(k);
  g->set_ldc(m);
  g->set_a_ptr(a_ptr);
  g->set_b_ptr(b_ptr);
  g->set_c_ptr(b_ptr + 0x100000000ull);
  g->set_d_ptr(b_ptr + 0x100000000ull);
  g->set_start_ns(start_ns);
  g->set_end_ns(start_ns + 8000);
  g->set_thread_id(info_.pid);
  g->set_precision(wire::PRECISION_FP16_TENSOR);
  ++sent_[wire::RECORD_GEMM];
  return *g;
}

wire::Memcpy& TraceBuilder::AddMemcpy(uint64_t correlation_id,
                                      wire::CopyKind kind, uint64_t bytes,
                                      uint64_t start_ns, uint64_t end_ns) {
  MaybeAutoFlush();
  auto* c = memcpys_.add_memcpys();
  c->set_correlation_id(correlation_id);
  c->set_kind(kind);
  c->set_bytes(bytes);
  c->set_start_ns(start_ns);
  c->set_end_ns(end_ns);
  c->set_context_id(1);
  c->set_stream_id(7);
  c->set_src_kind(kind == wire::COPY_HTOD ? wire::MEMORY_PAGEABLE
                                          : wire::MEMORY_DEVICE);
  c->set_dst_kind(kind == wire::COPY_DTOH ? wire::MEMORY_PAGEABLE
                                          : wire::MEMORY_DEVICE);
  ++sent_[wire::RECORD_MEMCPY];
  return *c;
}

wire::NvtxRange& TraceBuilder::AddNvtxRange(uint64_t range_id,
                                            std::string_view name,
                                            uint64_t start_ns, uint64_t end_ns,
                                            uint64_t parent_range_id,
                                            uint32_t depth,
                                            uint32_t thread_id) {
  MaybeAutoFlush();
  auto* r = nvtx_.add_ranges();
  r->set_range_id(range_id);
  r->set_name_iid(Intern(name));
  r->set_start_ns(start_ns);
  r->set_end_ns(end_ns);
  r->set_thread_id(thread_id);
  r->set_end_thread_id(thread_id);
  r->set_parent_range_id(parent_range_id);
  r->set_kind(wire::RANGE_PUSH_POP);
  r->set_depth(depth);
  ++sent_[wire::RECORD_NVTX_RANGE];
  return *r;
}

wire::KernelCounters& TraceBuilder::AddCounters(uint64_t correlation_id,
                                                uint64_t dram_read_bytes,
                                                uint64_t dram_write_bytes,
                                                wire::PrecisionClass precision,
                                                uint64_t flops) {
  MaybeAutoFlush();
  auto* c = counters_.add_counters();
  c->set_correlation_id(correlation_id);
  c->set_dram_read_bytes(dram_read_bytes);
  c->set_dram_write_bytes(dram_write_bytes);
  // Counters mode measures FLOPs of every kernel, zero included.
  auto* f = c->add_flops();
  f->set_precision(flops > 0 ? precision : wire::PRECISION_FP32);
  f->set_flops(flops);
  auto* mv = c->add_metrics();
  mv->set_metric_iid(Intern("dram__bytes_read.sum"));
  mv->set_value(static_cast<double>(dram_read_bytes));
  c->set_passes(1);
  ++sent_[wire::RECORD_COUNTERS];
  return *c;
}

size_t TraceBuilder::PendingRecords() const {
  return kernels_.kernels_size() + kernels_.launches_size() +
         memcpys_.memcpys_size() + gemms_.gemms_size() + nvtx_.ranges_size() +
         nvtx_.marks_size() + counters_.counters_size() +
         pm_samples_.samples_size();
}

void TraceBuilder::MaybeAutoFlush() {
  if (max_batch_records_ > 0 && PendingRecords() >= max_batch_records_) {
    Flush();
  }
}

void TraceBuilder::Flush() {
  if (kernels_.kernels_size() + kernels_.launches_size() > 0) {
    wire::Packet p;
    p.mutable_kernel_batch()->Swap(&kernels_);
    Emit(std::move(p));
  }
  if (memcpys_.memcpys_size() > 0) {
    wire::Packet p;
    p.mutable_memcpy_batch()->Swap(&memcpys_);
    Emit(std::move(p));
  }
  if (gemms_.gemms_size() > 0) {
    wire::Packet p;
    p.mutable_gemm_batch()->Swap(&gemms_);
    Emit(std::move(p));
  }
  if (nvtx_.ranges_size() + nvtx_.marks_size() > 0) {
    wire::Packet p;
    p.mutable_nvtx_batch()->Swap(&nvtx_);
    Emit(std::move(p));
  }
  if (counters_.counters_size() > 0) {
    wire::Packet p;
    p.mutable_counter_batch()->Swap(&counters_);
    Emit(std::move(p));
  }
  if (pm_samples_.samples_size() > 0) {
    wire::Packet p;
    p.mutable_pm_sample_batch()->Swap(&pm_samples_);
    Emit(std::move(p));
  }
}

wire::PmSample& TraceBuilder::AddPmSample(uint32_t device_id,
                                          uint64_t start_ns, uint64_t end_ns,
                                          double dram_read_bytes,
                                          double dram_write_bytes) {
  MaybeAutoFlush();
  wire::PmSample* s = pm_samples_.add_samples();
  s->set_device_id(device_id);
  s->set_start_ns(start_ns);
  s->set_end_ns(end_ns);
  s->set_dram_read_bytes(dram_read_bytes);
  s->set_dram_write_bytes(dram_write_bytes);
  return *s;
}

void TraceBuilder::AddDropped(wire::RecordKind kind, uint64_t n) {
  dropped_[kind] += n;
}
void TraceBuilder::AddFiltered(wire::RecordKind kind, uint64_t n) {
  filtered_[kind] += n;
}

std::vector<wire::RecordCount> TraceBuilder::Counts() const {
  std::vector<wire::RecordCount> out;
  for (int kind = 1; kind < 9; ++kind) {
    if (sent_[kind] + dropped_[kind] + filtered_[kind] == 0) continue;
    wire::RecordCount c;
    c.set_kind(static_cast<wire::RecordKind>(kind));
    c.set_seen(sent_[kind] + dropped_[kind] + filtered_[kind]);
    c.set_sent(sent_[kind]);
    c.set_dropped(dropped_[kind]);
    c.set_filtered(filtered_[kind]);
    out.push_back(std::move(c));
  }
  return out;
}

void TraceBuilder::Stats() {
  Flush();
  wire::Packet p;
  auto* s = p.mutable_stats();
  for (auto& c : Counts()) *s->add_counts() = std::move(c);
  s->set_packets_sent(sequence_ + 1);
  Emit(std::move(p));
}

void TraceBuilder::Goodbye(int32_t exit_code) {
  Flush();
  wire::Packet p;
  auto* g = p.mutable_goodbye();
  for (auto& c : Counts()) *g->add_totals() = std::move(c);
  g->set_packets_sent(sequence_ + 1);
  g->set_end_unix_ns(info_.start_unix_ns + last_timestamp_ns_ -
                     std::min(last_timestamp_ns_, info_.start_ns));
  g->set_end_ns(last_timestamp_ns_);
  g->set_exit_code(exit_code);
  Emit(std::move(p));
}

void TraceBuilder::EmitRaw(wire::Packet packet) { Emit(std::move(packet)); }

void TraceBuilder::Emit(wire::Packet packet) {
  packet.set_sequence(++sequence_);
  last_timestamp_ns_ = std::max(last_timestamp_ns_ + 1000, info_.start_ns);
  packet.set_timestamp_ns(last_timestamp_ns_);
  for (auto& s : pending_strings_) {
    *packet.add_interned_strings() = std::move(s);
  }
  pending_strings_.clear();
  std::string frame;
  wire::AppendFrame(&frame, packet.SerializeAsString());
  if (sink_) {
    sink_(frame);
  } else {
    frames_.push_back(std::move(frame));
  }
  if (keep_packets_ && !sink_) packets_.push_back(std::move(packet));
}

std::string TraceBuilder::Framed() const {
  std::string out;
  size_t total = 0;
  for (const auto& f : frames_) total += f.size();
  out.reserve(total);
  for (const auto& f : frames_) out += f;
  return out;
}

Status TraceBuilder::WriteFile(const std::string& path) const {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return Unavailable(path + ": cannot create: " + strerror(errno));
  }
  for (const auto& frame : frames_) {
    if (fwrite(frame.data(), 1, frame.size(), f) != frame.size()) {
      fclose(f);
      return Unavailable(path + ": write failed: " + strerror(errno));
    }
  }
  if (fclose(f) != 0) {
    return Unavailable(path + ": close failed: " + strerror(errno));
  }
  return OkStatus();
}

// ------------------------------------------------------------------ LLM trace
namespace {

constexpr double kPeakBf16 = 989.4e12 * 0.6;  // achieved tensor FLOP/s
constexpr double kDramBw = 3.35e12 * 0.75;    // achieved DRAM B/s
constexpr uint64_t kLaunchHostNs = 5000;      // host time per launch
constexpr uint64_t kKernelFloorNs = 2500;     // smallest kernel duration
constexpr uint64_t kWeightBase = 0x7f0000000000ull;
constexpr uint64_t kPrefillActBase = 0x7e0000000000ull;
constexpr uint64_t kDecodeActBase = 0x7d0000000000ull;

uint64_t Duration(double flops, double bytes) {
  const double t = std::max(flops / kPeakBf16, bytes / kDramBw) * 1e9;
  return std::max<uint64_t>(kKernelFloorNs, static_cast<uint64_t>(t));
}

class LlmGenerator {
 public:
  LlmGenerator(const LlmTraceOptions& o, TraceBuilder* b) : o_(o), b_(b) {
    host_ns_ = o.session.start_ns + 1000000;
    gpu_ns_ = host_ns_;
  }

  LlmTraceTruth Run() {
    b_->set_max_batch_records(o_.max_batch_records);
    b_->Hello();
    b_->AddDevice(0, o_.device_name);
    const int steps = 1 + o_.decode_steps;
    for (int s = 0; s < steps; ++s) Step(s);
    b_->Goodbye(0);
    return truth_;
  }

 private:
  uint64_t WeightPtr(int layer, int which) const {
    return kWeightBase + static_cast<uint64_t>(layer) * 0x10000000ull +
           static_cast<uint64_t>(which) * 0x1000000ull;
  }
  uint64_t ActPtr(int step, int index) const {
    if (step == 0) {
      return kPrefillActBase + static_cast<uint64_t>(index) * 0x100000ull;
    }
    // Decode steps reuse two buffers per GEMM (a caching allocator).
    return kDecodeActBase + static_cast<uint64_t>(step % 2) * 0x10000000ull +
           static_cast<uint64_t>(index) * 0x10000ull;
  }

  // Launches one kernel: host API call, GPU execution after the previous
  // kernel and after the launch.
  void Launch(std::string_view name, double flops, double bytes,
              uint64_t gemm_call_id, StepTruth* st) {
    const uint64_t corr = ++corr_;
    const uint64_t api = host_ns_;
    host_ns_ += kLaunchHostNs;
    const uint64_t start = std::max(gpu_ns_, api + 2000);
    const uint64_t end = start + Duration(flops, bytes);
    gpu_ns_ = end + 1000;
    b_->AddLaunch(corr, api, gemm_call_id, current_range_);
    b_->AddKernel(name, corr, start, end);
    if (o_.counters) {
      const auto read = static_cast<uint64_t>(bytes * 0.8);
      const auto write = static_cast<uint64_t>(bytes) - read;
      b_->AddCounters(corr, read, write,
                      flops > 0 ? wire::PRECISION_FP16_TENSOR
                                : wire::PRECISION_UNKNOWN,
                      static_cast<uint64_t>(flops));
    }
    ++truth_.kernels;
    ++truth_.launches;
    truth_.gpu_time_ns += end - start;
    ++st->kernels;
    if (st->first_kernel_start_ns == 0) st->first_kernel_start_ns = start;
    st->last_kernel_end_ns = end;
  }

  void Gemm(std::string_view name, int step, int layer, int which,
            int64_t m, int64_t n, int64_t k, StepTruth* st) {
    const uint64_t call = ++gemm_call_;
    b_->AddGemm(call, m, n, k, WeightPtr(layer, which),
                ActPtr(step, layer * 8 + which), host_ns_);
    const double flops = 2.0 * m * n * k;
    const double bytes = 2.0 * (m * k + k * n + m * n);
    Launch(name, flops, bytes, call, st);
    ++truth_.gemms;
    ++st->gemms;
    st->gemm_flops += static_cast<uint64_t>(flops);
    truth_.gemm_flops += static_cast<uint64_t>(flops);
  }

  void Elementwise(std::string_view name, int64_t tokens, double per_token,
                   StepTruth* st) {
    Launch(name, 0, per_token * tokens, 0, st);
  }

  uint64_t OpenRange(std::string_view name, uint32_t depth) {
    const uint64_t id = ++range_id_;
    open_.push_back({id, std::string(name), host_ns_, current_range_, depth});
    current_range_ = id;
    return id;
  }
  void CloseRange() {
    auto r = open_.back();
    open_.pop_back();
    b_->AddNvtxRange(r.id, r.name, r.start, host_ns_, r.parent, r.depth,
                     o_.session.pid);
    ++truth_.nvtx_ranges;
    current_range_ = r.parent;
  }

  void Step(int s) {
    const bool prefill = s == 0;
    const int64_t tokens = prefill ? o_.batch * o_.prompt_len : o_.batch;
    const int64_t h = o_.hidden;
    const int64_t inter = o_.intermediate;
    const int64_t ctx = o_.prompt_len + s;  // keys attended per query
    StepTruth st;
    st.phase = prefill ? "prefill" : "decode";
    st.token_count = tokens;
    if (o_.nvtx) OpenRange(prefill ? "prefill" : "decode", 0);
    for (int l = 0; l < o_.layers; ++l) {
      if (o_.nvtx) OpenRange("layer." + std::to_string(l), 1);
      Elementwise("_Z14rmsnorm_kernelIN3c108BFloat16EEvPT_PKS2_S5_fii", tokens,
                  4.0 * h, &st);
      Gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
           s, l, 0, 3 * h, tokens, h, &st);
      Elementwise("_Z23rotary_embedding_kernelIN3c108BFloat16ELb1EEvPKlPT_S5_",
                  tokens, 8.0 * h, &st);
      // Attention: flash-style, reads K and V of `ctx` positions.
      const double attn_flops =
          prefill ? 2.0 * o_.batch * o_.prompt_len * o_.prompt_len * h
                  : 4.0 * o_.batch * ctx * h;
      const double attn_bytes = prefill ? 8.0 * tokens * h
                                        : 4.0 * o_.batch * ctx * h;
      Launch(prefill ? "_Z16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4EEEvv"
                     : "_Z24flash_fwd_splitkv_kernelI23Flash_fwd_kernel_traitsILi128ELi64ELi128ELi4EEEvv",
             attn_flops, attn_bytes, 0, &st);
      Gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64",
           s, l, 1, h, tokens, h, &st);
      Elementwise("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_",
                  tokens, 6.0 * h, &st);
      Elementwise("_Z14rmsnorm_kernelIN3c108BFloat16EEvPT_PKS2_S5_fii", tokens,
                  4.0 * h, &st);
      Gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64",
           s, l, 2, 2 * inter, tokens, h, &st);
      Elementwise("_Z19silu_and_mul_kernelIN3c108BFloat16EEvPT_PKS2_i", tokens,
                  6.0 * inter, &st);
      Gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
           s, l, 3, h, tokens, inter, &st);
      Elementwise("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_",
                  tokens, 6.0 * h, &st);
      if (o_.nvtx) CloseRange();
    }
    Elementwise("_Z14rmsnorm_kernelIN3c108BFloat16EEvPT_PKS2_S5_fii", tokens,
                4.0 * h, &st);
    Gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", s,
         o_.layers, 0, o_.vocab, o_.batch, h, &st);
    Elementwise("_Z13argmax_kernelIN3c108BFloat16EEvPKT_Pli", o_.batch,
                2.0 * o_.vocab, &st);
    if (o_.nvtx) CloseRange();
    if (!o_.host_gap_only) {
      // The host waits for the sampled tokens: the copy ends the step.
      const uint64_t corr = ++corr_;
      const uint64_t api = host_ns_;
      const uint64_t start = std::max(gpu_ns_, api + 2000);
      const uint64_t end = start + 3000;
      auto& l = b_->AddLaunch(corr, api, 0, 0);
      l.set_kind(wire::API_MEMCPY);
      b_->AddMemcpy(corr, wire::COPY_DTOH, 8 * o_.batch, start, end);
      ++truth_.memcpys;
      gpu_ns_ = end + 1000;
      host_ns_ = std::max(host_ns_, end) + 20000;
    } else {
      // No copy: the host pauses 5 ms between steps (tokenizer, scheduler).
      host_ns_ = std::max(host_ns_, gpu_ns_) + 5000000;
    }
    gpu_ns_ = std::max(gpu_ns_, host_ns_);
    truth_.steps.push_back(st);
  }

  struct Open {
    uint64_t id;
    std::string name;
    uint64_t start;
    uint64_t parent;
    uint32_t depth;
  };

  const LlmTraceOptions& o_;
  TraceBuilder* b_;
  LlmTraceTruth truth_;
  uint64_t host_ns_ = 0;
  uint64_t gpu_ns_ = 0;
  uint64_t corr_ = 0;
  uint64_t gemm_call_ = 0;
  uint64_t range_id_ = 0;
  uint64_t current_range_ = 0;
  std::vector<Open> open_;
};

}  // namespace

void MarkSynthetic(LlmTraceOptions* options) {
  options->device_name =
      "SYNTHETIC " + options->device_name + " (generated, not a GPU recording)";
  options->session.host = "synthetic";
  std::vector<std::string> argv = {"SYNTHETIC:", "rooftrace_example_trace"};
  argv.insert(argv.end(), options->session.argv.begin(),
              options->session.argv.end());
  options->session.argv = std::move(argv);
}

LlmTraceTruth GenerateLlmTrace(const LlmTraceOptions& options,
                               TraceBuilder* builder) {
  LlmGenerator gen(options, builder);
  return gen.Run();
}

}  // namespace rooftrace::test_support
