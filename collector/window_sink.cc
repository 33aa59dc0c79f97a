#include "collector/window_sink.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <algorithm>

#include "model/kernel_names.h"
#include "store/store.h"

namespace rooftrace {
namespace {

int64_t NowUnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// runs.flops_sources order (RunRecorder::Finish).
constexpr const char* kSourceOrder[] = {"counters", "sampled", "pm-sampling",
                                        "analytic", "inherited"};

}  // namespace

StatusOr<uint64_t> ParseWindowDuration(const std::string& text,
                                       const std::string& flag) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  const std::string unit = text.substr(digits);
  uint64_t scale = 0;
  if (unit == "ms") scale = 1000000ull;
  else if (unit == "s") scale = 1000000000ull;
  else if (unit == "m") scale = 60ull * 1000000000ull;
  else if (unit == "h") scale = 3600ull * 1000000000ull;
  const uint64_t n =
      digits > 0 && digits <= 9 ? std::stoull(text.substr(0, digits)) : 0;
  // Under 100 ms a window would hold too little to settle a step.
  if (scale == 0 || n == 0 || n * scale < 100000000ull) {
    return InvalidArgument(flag + " '" + text +
                           "': give a whole number and a unit, at least "
                           "100ms: e.g. 500ms, 60s, 5m, 1h");
  }
  return n * scale;
}

std::string UtcIso8601(int64_t unix_ns) {
  const time_t secs = static_cast<time_t>(unix_ns / 1000000000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ImportStats StatsSince(const ImportStats& a, const ImportStats& b) {
  auto sub = [](const auto& x, const auto& y, auto* out) {
    for (size_t i = 0; i < x.size(); ++i) {
      (*out)[i] = x[i] > y[i] ? x[i] - y[i] : 0;
    }
  };
  ImportStats d;
  sub(a.values, b.values, &d.values);
  sub(a.received, b.received, &d.received);
  sub(a.producer_dropped, b.producer_dropped, &d.producer_dropped);
  sub(a.producer_filtered, b.producer_filtered, &d.producer_filtered);
  sub(a.unmatched, b.unmatched, &d.unmatched);
  return d;
}

void WindowSink::KnownSession::Own(const SessionRow& s,
                                   const std::vector<DeviceRow>& d) {
  host = s.host;
  argv = s.argv;
  producer_version = s.producer_version;
  mode = s.mode;
  row = s;
  row.host = host;
  row.argv = argv;
  row.producer_version = producer_version;
  row.mode = mode;
  if (d.empty()) return;  // an update keeps the devices it had
  device_text.clear();
  device_text.reserve(4 * d.size());  // no reallocation: views point in
  devices = d;
  for (DeviceRow& dev : devices) {
    for (std::string_view* field :
         {&dev.name, &dev.uuid, &dev.chip_name, &dev.driver_version}) {
      device_text.emplace_back(*field);
      *field = device_text.back();
    }
    device_names[dev.device_id] =
        std::to_string(dev.device_id) + ":" + std::string(dev.name);
  }
}

WindowSink::WindowSink(std::unique_ptr<RunSink> store, bool windowed,
                       WindowObserver* observer)
    : store_(std::move(store)), windowed_(windowed), observer_(observer) {}

RunRow WindowSink::WindowRun(const RunRow& base, int64_t end_unix_ns) const {
  RunRow r = base;
  r.run_id = run_id_;
  if (!windowed_) return r;
  r.labels = base_.labels;
  r.labels.emplace_back("window", std::to_string(index_));
  r.labels.emplace_back("window_start", UtcIso8601(start_unix_ns_));
  r.started_unix_ns = start_unix_ns_;
  r.ended_unix_ns = end_unix_ns;
  std::string sources;
  for (const char* s : kSourceOrder) {
    if (!sources_.contains(std::string_view(s))) continue;
    if (!sources.empty()) sources += '+';
    sources += s;
  }
  r.flops_sources = sources.empty() ? "none" : sources;
  return r;
}

Status WindowSink::BeginWindow() {
  if (begun_) return OkStatus();
  RunRow r = base_;
  if (windowed_) {
    r.labels.emplace_back("window", std::to_string(index_));
    r.labels.emplace_back("window_start", UtcIso8601(start_unix_ns_));
    r.started_unix_ns = start_unix_ns_;
  }
  RT_ASSIGN_OR_RETURN(run_id_, store_->BeginRun(r));
  begun_ = true;
  // A window reads alone: every device's roofs are in its run.
  for (RoofRow roof : roofs_) {
    roof.run_id = run_id_;
    RT_RETURN_IF_ERROR(store_->AddRoof(roof));
  }
  if (!roofs_.empty()) RT_RETURN_IF_ERROR(store_->EndWrite());
  return OkStatus();
}

void WindowSink::NextWindow(int64_t start_unix_ns) {
  ++index_;
  start_unix_ns_ = start_unix_ns;
  begun_ = false;
  in_window_.clear();
  sources_.clear();
}

StatusOr<int64_t> WindowSink::BeginRun(const RunRow& run) {
  base_ = run;
  start_unix_ns_ = run.started_unix_ns ? *run.started_unix_ns : NowUnixNs();
  // The first window begins at once: a store that cannot take a run says
  // so before any producer is accepted.
  RT_RETURN_IF_ERROR(BeginWindow());
  return run_id_;
}

Status WindowSink::EndWindow(const RunRow& run_so_far,
                             const ImportStats& cumulative,
                             int64_t end_unix_ns) {
  const ImportStats stats = StatsSince(cumulative, stats_at_start_);
  stats_at_start_ = cumulative;
  if (!begun_ && stats == ImportStats()) {
    // Nothing arrived: an idle server leaves no empty runs behind.
    ++idle_;
    NextWindow(end_unix_ns);
    return OkStatus();
  }
  RT_RETURN_IF_ERROR(BeginWindow());
  RunRow r = WindowRun(run_so_far, end_unix_ns);
  // A window is complete unless a store write failed in it; what the
  // producers lost is in its statistics, as in any run's.
  const bool failed = stats[ImportStat::k_store_write_failures] > 0 ||
                      stats[ImportStat::k_kernels_not_stored] > 0;
  r.complete = failed ? 0 : 1;
  r.incomplete_reason =
      failed ? "a store write failed in this window: " +
                   std::to_string(stats[ImportStat::k_kernels_not_stored]) +
                   " kernels not stored"
             : "";
  if (r.roof_source.empty()) r.roof_source = "none";
  RT_RETURN_IF_ERROR(store_->FinishRun(r, stats));
  if (observer_ != nullptr) observer_->OnWindowEnd(index_, run_id_, stats);
  ended_.push_back(run_id_);
  NextWindow(end_unix_ns);
  return OkStatus();
}

Status WindowSink::FinishRun(const RunRow& run, const ImportStats& stats) {
  const ImportStats window =
      windowed_ ? StatsSince(stats, stats_at_start_) : stats;
  if (windowed_ && !begun_ && window == ImportStats() &&
      run.complete == 1) {
    ++idle_;  // the last window had nothing: no run for it
    return OkStatus();
  }
  RT_RETURN_IF_ERROR(BeginWindow());
  RunRow r = WindowRun(run, run.ended_unix_ns ? *run.ended_unix_ns
                                              : NowUnixNs());
  if (windowed_) {
    // The last window: the run's verdict (sessions without a Goodbye, a
    // failed write) is its own.
    r.complete = run.complete;
    r.incomplete_reason = run.incomplete_reason;
    r.ended_unix_ns = std::max<int64_t>(NowUnixNs(), start_unix_ns_);
  }
  RT_RETURN_IF_ERROR(store_->FinishRun(r, window));
  if (observer_ != nullptr) observer_->OnWindowEnd(index_, run_id_, window);
  ended_.push_back(run_id_);
  return OkStatus();
}

Status WindowSink::AddRoof(const RoofRow& roof) {
  roofs_.push_back(roof);
  if (!begun_) return BeginWindow();  // which gives it every roof
  RoofRow r = roof;
  r.run_id = run_id_;
  return store_->AddRoof(r);
}

StatusOr<int64_t> WindowSink::AddSession(const SessionRow& session,
                                         const std::vector<DeviceRow>& devices) {
  RT_RETURN_IF_ERROR(BeginWindow());
  SessionRow s = session;
  s.run_id = run_id_;
  std::vector<DeviceRow> d = devices;
  for (DeviceRow& dev : d) dev.run_id = run_id_;
  RT_ASSIGN_OR_RETURN(const int64_t id, store_->AddSession(s, d));
  sessions_[id].Own(s, d);
  in_window_[id] = id;
  return id;
}

StatusOr<int64_t> WindowSink::SessionInWindow(int64_t id) {
  RT_RETURN_IF_ERROR(BeginWindow());
  auto it = in_window_.find(id);
  if (it != in_window_.end()) return it->second;
  auto known = sessions_.find(id);
  if (known == sessions_.end()) return id;  // not one of ours: as given
  SessionRow s = known->second.row;
  s.session_id = 0;
  s.run_id = run_id_;
  std::vector<DeviceRow> d = known->second.devices;
  for (DeviceRow& dev : d) dev.run_id = run_id_;
  RT_ASSIGN_OR_RETURN(const int64_t here, store_->AddSession(s, d));
  in_window_[id] = here;
  return here;
}

Status WindowSink::UpdateSession(const SessionRow& session) {
  auto known = sessions_.find(session.session_id);
  if (known != sessions_.end()) known->second.Own(session, {});
  RT_ASSIGN_OR_RETURN(const int64_t here, SessionInWindow(session.session_id));
  SessionRow s = session;
  s.session_id = here;
  s.run_id = run_id_;
  return store_->UpdateSession(s);
}

StatusOr<int64_t> WindowSink::AddGemmCall(const GemmCallRow& gemm) {
  RT_ASSIGN_OR_RETURN(const GemmCallRow g, InWindow(gemm));
  return store_->AddGemmCall(g);
}

Status WindowSink::AddStep(const StepRow& step) {
  RT_ASSIGN_OR_RETURN(const StepRow s, InWindow(step));
  return store_->AddStep(s);
}

Status WindowSink::AddKernel(const KernelRow& kernel) {
  RT_ASSIGN_OR_RETURN(const KernelRow k, InWindow(kernel));
  for (std::string_view src : {k.flops_source, k.bytes_source}) {
    if (!src.empty() && src != "none" && !sources_.contains(src)) {
      sources_.emplace(src);
    }
  }
  if (observer_ != nullptr) {
    ObservedKernel o;
    std::string family;
    if (k.family.empty()) family = KernelFamily(k.name);
    o.family = k.family.empty() ? std::string_view(family) : k.family;
    o.phase = k.phase;
    o.row = &k;
    auto known = sessions_.find(kernel.session_id);
    if (known != sessions_.end()) {
      o.host = known->second.host;
      auto dev = known->second.device_names.find(k.device_id.value_or(-1));
      if (dev != known->second.device_names.end()) o.device = dev->second;
    }
    observer_->OnKernel(o);
  }
  return store_->AddKernel(k);
}

Status WindowSink::AddKernelMetric(const KernelMetricRow& metric) {
  RT_ASSIGN_OR_RETURN(const KernelMetricRow m, InWindow(metric));
  return store_->AddKernelMetric(m);
}

Status WindowSink::AddMemcpy(const MemcpyRow& memcpy) {
  RT_ASSIGN_OR_RETURN(const MemcpyRow m, InWindow(memcpy));
  return store_->AddMemcpy(m);
}

Status WindowSink::AddNvtx(const NvtxRow& range) {
  RT_ASSIGN_OR_RETURN(const NvtxRow n, InWindow(range));
  return store_->AddNvtx(n);
}

Status WindowSink::EndWrite() {
  RT_RETURN_IF_ERROR(store_->EndWrite());
  if (observer_ != nullptr) observer_->OnWriteEnd();
  return OkStatus();
}

StatusOr<WindowedRecorder> CreateWindowedRecorder(
    const RecorderOptions& options, const std::string& store_path,
    bool windowed, WindowObserver* observer, StoreKernels store_kernels) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                      Store::Open(store_path, Store::Durability::kDurable));
  store->set_store_kernels(store_kernels);
  auto sink = std::make_unique<WindowSink>(std::move(store), windowed,
                                           observer);
  WindowedRecorder w;
  w.windows = sink.get();
  RT_ASSIGN_OR_RETURN(w.recorder, RunRecorder::Create(options, std::move(sink)));
  return w;
}

std::function<void(const ImportStats&)> WindowEnder(
    const WindowedRecorder& w, std::function<void(const std::string&)> log) {
  RunRecorder* recorder = w.recorder.get();
  WindowSink* windows = w.windows;
  return [recorder, windows, log](const ImportStats& open) {
    ImportStats so_far = recorder->stats();
    so_far.Add(open);
    const uint64_t index = windows->window_index();
    Status s = windows->EndWindow(recorder->run_row(), so_far, NowUnixNs());
    if (!s.ok()) log("window " + std::to_string(index) + ": " + s.message());
  };
}

}  // namespace rooftrace
