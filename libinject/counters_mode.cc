#include "libinject/counters_mode.h"

#include <algorithm>

#include "libinject/counters/counter_session.h"
#include "libinject/counters/failure_modes.h"
#include "libinject/log.h"

namespace rooftrace::inject {

namespace {
// The sequence number of this thread's profiled launch in flight (0: none);
// a thread has at most one (the tracer's counters_launch guard).
thread_local uint64_t t_profiled_seq = 0;
}  // namespace

StatusOr<std::unique_ptr<CountersMode>> CountersMode::Create(
    void* cupti_handle, const Config& config, StringInterner* interner) {
  StatusOr<counters::CuptiProfilerApi> api =
      counters::ResolveCuptiProfilerApi(cupti_handle);
  if (!api.ok()) {
    return Unavailable("counters mode: " + api.status().message() +
                       "; using trace mode");
  }
  return CreateWithApi(*api, config, interner);
}

StatusOr<std::unique_ptr<CountersMode>> CountersMode::CreateWithApi(
    const counters::CuptiProfilerApi& api, const Config& config,
    StringInterner* interner) {
  StatusOr<counters::CounterSet> set =
      counters::ParseCounterSet(config.counters);
  if (!set.ok()) {
    return InvalidArgument(set.status().message() + "; using trace mode");
  }
  counters::CountersOptions options;
  options.set = *set;
  options.filter = config.CountersKernelFilter();
  options.replay = config.counters_kernel_replay
                       ? counters::ReplayChoice::kKernel
                       : counters::ReplayChoice::kAuto;
  StatusOr<std::unique_ptr<counters::CountersRuntime>> runtime =
      counters::CountersRuntime::Create(api, options);
  if (!runtime.ok()) {
    const std::string& line = runtime.status().message();
    // CUPTI failures come as a finished line; selection errors do not.
    if (line.find("trace mode") != std::string::npos) return runtime.status();
    return Status(runtime.status().code(), line + "; using trace mode");
  }
  return std::unique_ptr<CountersMode>(new CountersMode(
      std::move(runtime).value(), interner, !config.nvtx_include.empty(),
      config.counters_tolerance_pct));
}

CountersMode::CountersMode(std::unique_ptr<counters::CountersRuntime> runtime,
                           StringInterner* interner, bool needs_nvtx_path,
                           uint64_t tolerance_pct)
    : runtime_(std::move(runtime)),
      interner_(interner),
      needs_nvtx_path_(needs_nvtx_path),
      facts_(new LaunchFacts[kFactSlots]),
      signed_(new Signed[kFactSlots]),
      tolerance_(static_cast<double>(tolerance_pct) / 100.0) {}

uint64_t CountersMode::SignatureOf(uint64_t correlation_id) const {
  std::lock_guard<std::mutex> lock(facts_mu_);
  const Signed& s = signed_[correlation_id % kFactSlots];
  return s.correlation_id == correlation_id ? s.signature : 0;
}

void CountersMode::NoteSample(uint64_t signature, uint64_t bytes,
                              uint64_t flops) {
  Spread& s = spreads_[signature];
  const auto b = static_cast<double>(bytes);
  const auto f = static_cast<double>(flops);
  if (s.n == 0) {
    s.min_bytes = s.max_bytes = b;
    s.min_flops = s.max_flops = f;
  }
  ++s.n;
  s.sum_bytes += b;
  s.sum_flops += f;
  s.min_bytes = std::min(s.min_bytes, b);
  s.max_bytes = std::max(s.max_bytes, b);
  s.min_flops = std::min(s.min_flops, f);
  s.max_flops = std::max(s.max_flops, f);
  if (tolerance_ <= 0 || s.n < 2) return;
  const double n = static_cast<double>(s.n);
  auto spread = [n](double min, double max, double sum) {
    return sum > 0 ? (max - min) / (sum / n) : 0.0;
  };
  if (spread(s.min_bytes, s.max_bytes, s.sum_bytes) > tolerance_ ||
      spread(s.min_flops, s.max_flops, s.sum_flops) > tolerance_) {
    runtime_->MarkSignatureUnsettled(signature);
  }
}

FilterStats CountersMode::SelectionStats() const {
  return runtime_->filter_stats();
}

void CountersMode::RecordLaunchFacts(const LaunchFacts& facts) {
  std::lock_guard<std::mutex> lock(facts_mu_);
  facts_[facts.correlation_id % kFactSlots] = facts;
}

bool CountersMode::FindLaunchFacts(uint64_t correlation_id,
                                   LaunchFacts* out) const {
  std::lock_guard<std::mutex> lock(facts_mu_);
  const LaunchFacts& f = facts_[correlation_id % kFactSlots];
  if (f.correlation_id != correlation_id || correlation_id == 0) return false;
  *out = f;
  return true;
}

KernelInfo KernelFromLaunch(const CountersMode::LaunchFacts& f,
                            uint64_t gpu_time_ns) {
  KernelInfo k;
  k.correlation_id = f.correlation_id;
  k.start_ns = f.api_start_ns;
  k.end_ns = f.api_start_ns + gpu_time_ns;
  k.device_id = f.device_id;
  k.context_id = f.context_id;
  k.stream_id = f.stream_id;
  k.name_iid = f.name_iid;
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = f.grid[i];
    k.block[i] = f.block[i];
  }
  k.dynamic_shared_memory_bytes = f.dynamic_shared_memory_bytes;
  return k;
}

CountersMode::~CountersMode() = default;

void CountersMode::OnContextCreated(CUcontext ctx, uint32_t device_ordinal) {
  // The failure line is also kept by the runtime for TakeWarnings().
  (void)runtime_->OnContextCreated(ctx, device_ordinal);
  live_contexts_.fetch_add(1, std::memory_order_acq_rel);
}

void CountersMode::OnContextDestroyed(CUcontext ctx) {
  runtime_->OnContextDestroyed(ctx);
  live_contexts_.fetch_sub(1, std::memory_order_acq_rel);
}

bool CountersMode::OnLaunchBegin(CUcontext ctx, uint64_t correlation_id,
                                 std::string_view kernel_name,
                                 std::string_view nvtx_path,
                                 bool in_graph_or_capture,
                                 uint64_t signature) {
  const uint64_t seq = enqueue_seq_.fetch_add(1, std::memory_order_acq_rel) + 1;
  LaunchInfo launch{kernel_name, nvtx_path, in_graph_or_capture, signature};
  const bool profiled = !runtime_->disabled() &&
                        runtime_->OnKernelLaunchBegin(ctx, correlation_id,
                                                      launch);
  if (profiled) {
    t_profiled_seq = seq;
    profiled_begun_.fetch_add(1, std::memory_order_acq_rel);
    if (signature != 0) {
      // Profiled launches take milliseconds of replay: a short lock.
      std::lock_guard<std::mutex> lock(facts_mu_);
      signed_[correlation_id % kFactSlots] = {correlation_id, signature};
    }
  } else {
    last_unprofiled_.store(seq, std::memory_order_release);
  }
  return profiled;
}

void CountersMode::OnLaunchEnd(CUcontext ctx, uint64_t correlation_id,
                               bool launched) {
  runtime_->OnKernelLaunchEnd(ctx, correlation_id, launched);
  const uint64_t seq = t_profiled_seq;
  t_profiled_seq = 0;
  if (seq == 0) return;
  // Every enqueue numbered below `seq` on this context has completed.
  uint64_t settled = settled_.load(std::memory_order_acquire);
  while (settled < seq && !settled_.compare_exchange_weak(
                              settled, seq, std::memory_order_acq_rel)) {
  }
}

CountersMode::ActivityFlush CountersMode::SafeActivityFlush() {
  // Disabled (a failure mid-run): nothing is replayed any more, so the
  // buffer being filled holds only records that complete; buffers kept
  // before come back with the forced flush at exit.
  if (runtime_->disabled()) return ActivityFlush::kDefault;
  const uint64_t begun = profiled_begun_.load(std::memory_order_acquire);
  // No replayed kernel since the last flush: the buffer being filled holds
  // records that complete as the GPU runs them.
  if (begun == profiled_at_last_flush_) return ActivityFlush::kDefault;
  if (live_contexts_.load(std::memory_order_acquire) <= 1 &&
      last_unprofiled_.load(std::memory_order_acquire) <
          settled_.load(std::memory_order_acquire)) {
    return ActivityFlush::kForced;
  }
  return ActivityFlush::kNone;
}

void CountersMode::ActivityFlushed(ActivityFlush kind) {
  if (kind == ActivityFlush::kForced) {
    profiled_at_last_flush_ = profiled_begun_.load(std::memory_order_acquire);
  }
}

void CountersMode::OnGraphLaunch() {
  if (graph_noted_.load(std::memory_order_relaxed) ||
      graph_noted_.exchange(true)) {
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  notes_.emplace_back(counters::CudaGraphNote());
}

void CountersMode::OnCaptureEnded() {
  // Never below zero: an end whose begin came before CUPTI attached.
  int64_t open = captures_.load(std::memory_order_acquire);
  while (open > 0 && !captures_.compare_exchange_weak(
                         open, open - 1, std::memory_order_acq_rel)) {
  }
}

bool CountersMode::disabled() const { return runtime_->disabled(); }

uint32_t CountersMode::passes() const { return runtime_->passes(); }

const std::vector<uint64_t>& CountersMode::MetricIids(
    const counters::MetricSet* set) {
  auto it = iids_.find(set);
  if (it != iids_.end()) return it->second;
  std::vector<uint64_t> iids;
  if (set != nullptr) {
    for (const counters::MetricSpec& m : set->metrics) {
      iids.push_back(interner_->Intern(m.name));
    }
  }
  return iids_.emplace(set, std::move(iids)).first->second;
}

void CountersMode::Flush(bool final, std::vector<KernelCountersInfo>* out) {
  for (const counters::KernelCounters& k : runtime_->Flush(final)) {
    KernelCountersInfo info;
    info.correlation_id = k.correlation_id;
    info.device_id = k.device_id;
    info.dram_read_bytes = k.dram_read_bytes;
    info.dram_write_bytes = k.dram_write_bytes;
    info.gpu_time_ns = k.gpu_time_ns;
    // Precision values are PrecisionClass values (the same numbering).
    for (size_t p = 1; p < k.flops.size(); ++p) {
      if (k.flops[p] != 0) {
        info.flops.emplace_back(static_cast<uint32_t>(p), k.flops[p]);
      }
    }
    const std::vector<uint64_t>& iids = MetricIids(k.metric_set);
    for (size_t i = 0; i < k.raw_values.size() && i < iids.size(); ++i) {
      info.metrics.emplace_back(iids[i], k.raw_values[i]);
    }
    info.passes = k.passes;
    info.range_index = k.range_index;
    if (const uint64_t signature = SignatureOf(k.correlation_id)) {
      uint64_t flops = 0;
      for (size_t p = 1; p < k.flops.size(); ++p) flops += k.flops[p];
      NoteSample(signature, k.dram_read_bytes + k.dram_write_bytes, flops);
    }
    out->push_back(std::move(info));
  }
}

std::vector<std::string> CountersMode::TakeWarnings() {
  std::vector<std::string> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.swap(notes_);
  }
  for (std::string& w : runtime_->TakeWarnings()) out.push_back(std::move(w));
  return out;
}

RecordCountValues CountersMode::Counts() const {
  const FilterStats sel = runtime_->filter_stats();
  const counters::SessionStats ses = runtime_->session_stats();
  RecordCountValues c;
  c.seen = ses.profiled;
  c.filtered = sel.Filtered() + ses.busy_skipped;
  c.dropped = ses.ranges_dropped + ses.concurrent_discarded;
  return c;
}

}  // namespace rooftrace::inject
