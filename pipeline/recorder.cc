#include "pipeline/recorder.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "pipeline/flush.h"
#include "pipeline/join.h"

namespace rooftrace {
namespace {

uint64_t NowUnixNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

std::string DeviceName(const Session& session) {
  return session.devices().empty() ? "" : session.devices().front().name;
}

// The device a session is annotated for: its first.
const DeviceInfo* FirstDevice(const Session& session) {
  return session.devices().empty() ? nullptr : &session.devices().front();
}

// Every record the session holds.
RecordMask AllRecords(const Session& s) {
  RecordMask m;
  m.kernels.assign(s.kernels().size(), 1);
  m.launches.assign(s.launches().size(), 1);
  m.memcpys.assign(s.memcpys().size(), 1);
  m.gemms.assign(s.gemms().size(), 1);
  m.nvtx.assign(s.nvtx_ranges().size(), 1);
  m.counters.assign(s.counters().size(), 1);
  m.ops.assign(s.ops().size(), 1);
  m.metrics.assign(s.metrics().size(), 1);
  m.pm_samples.assign(s.pm_samples().size(), 1);
  return m;
}

// Passes one write's rows on to `inner` until `stop` is set; then refuses
// every further row, so that EmitRows returns at once. Counts the kernel
// and NVTX rows it passed on.
class StopCheckingSink : public RunSink {
 public:
  StopCheckingSink(RunSink* inner, const std::atomic<bool>* stop)
      : inner_(inner), stop_(stop) {}

  bool stopped() const { return stopped_; }
  uint64_t kernels() const { return kernels_; }
  uint64_t ranges() const { return ranges_; }

  RowNeeds Needs() const override { return inner_->Needs(); }
  StatusOr<int64_t> BeginRun(const RunRow& run) override {
    return inner_->BeginRun(run);
  }
  Status FinishRun(const RunRow& run, const ImportStats& stats) override {
    return inner_->FinishRun(run, stats);
  }
  Status AddRoof(const RoofRow& roof) override { return inner_->AddRoof(roof); }
  StatusOr<int64_t> AddSession(const SessionRow& session,
                               const std::vector<DeviceRow>& devices) override {
    RT_RETURN_IF_ERROR(Check());
    return inner_->AddSession(session, devices);
  }
  Status UpdateSession(const SessionRow& session) override {
    RT_RETURN_IF_ERROR(Check());
    return inner_->UpdateSession(session);
  }
  StatusOr<int64_t> AddGemmCall(const GemmCallRow& gemm) override {
    RT_RETURN_IF_ERROR(Check());
    return inner_->AddGemmCall(gemm);
  }
  Status AddStep(const StepRow& step) override {
    RT_RETURN_IF_ERROR(Check());
    return inner_->AddStep(step);
  }
  Status AddKernel(const KernelRow& kernel) override {
    RT_RETURN_IF_ERROR(Check());
    RT_RETURN_IF_ERROR(inner_->AddKernel(kernel));
    ++kernels_;
    return OkStatus();
  }
  Status AddKernelMetric(const KernelMetricRow& metric) override {
    RT_RETURN_IF_ERROR(Check());
    return inner_->AddKernelMetric(metric);
  }
  Status AddMemcpy(const MemcpyRow& memcpy) override {
    RT_RETURN_IF_ERROR(Check());
    return inner_->AddMemcpy(memcpy);
  }
  Status AddNvtx(const NvtxRow& range) override {
    RT_RETURN_IF_ERROR(Check());
    RT_RETURN_IF_ERROR(inner_->AddNvtx(range));
    ++ranges_;
    return OkStatus();
  }
  Status EndWrite() override { return inner_->EndWrite(); }
  void KeptOfFailedWrite(uint64_t* kernels, uint64_t* ranges) const override {
    inner_->KeptOfFailedWrite(kernels, ranges);
  }

 private:
  Status Check() {
    if (!stopped_ && stop_->load(std::memory_order_relaxed)) stopped_ = true;
    return stopped_ ? FailedPrecondition("stopped by a signal") : OkStatus();
  }

  RunSink* inner_;
  const std::atomic<bool>* stop_;
  bool stopped_ = false;
  uint64_t kernels_ = 0;
  uint64_t ranges_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<RunRecorder>> RunRecorder::Create(
    const RecorderOptions& options) {
  return Create(options, nullptr);
}

StatusOr<std::unique_ptr<RunRecorder>> RunRecorder::Create(
    const RecorderOptions& options, std::unique_ptr<RunSink> sink) {
  std::unique_ptr<RunRecorder> r(new RunRecorder());
  r->options_ = options;
  if (const std::string key =
          DatasheetKeyOfProfileArg(options.device_profile_path);
      !key.empty()) {
    // --device-profile KEY: the datasheet's roofs, as --device KEY.
    r->options_.device_key = key;
    r->options_.device_profile_path.clear();
  } else if (!options.device_profile_path.empty()) {
    RT_ASSIGN_OR_RETURN(DeviceProfile p,
                        LoadDeviceProfile(options.device_profile_path));
    r->profile_ = std::move(p);
  }
  r->owned_sink_ = std::move(sink);
  r->sink_ = r->owned_sink_ ? r->owned_sink_.get() : options.sink;
  if (r->sink_ == nullptr) {
    return InvalidArgument("a run needs somewhere to put its rows (no sink)");
  }
  r->run_.origin = options.origin;
  r->run_.command = options.command;
  r->run_.source_format = options.source_format;
  r->run_.source_file = options.source_file;
  r->run_.labels = options.labels;
  r->run_.started_unix_ns = static_cast<int64_t>(NowUnixNs());
  if (r->profile_) {
    r->run_.roof_source = "calibrated:" + options.device_profile_path;
  }
  RT_ASSIGN_OR_RETURN(r->rows_.run_id, r->sink_->BeginRun(r->run_));
  r->run_.run_id = r->rows_.run_id;
  return r;
}

const Roofs& RunRecorder::RoofsFor(const DeviceInfo* device) {
  const std::string device_name = device ? device->name : "";
  const uint64_t clock_khz = device ? device->measured_sm_clock_khz : 0;
  auto key = std::make_pair(device_name, clock_khz);
  auto it = roofs_.find(key);
  if (it != roofs_.end()) return it->second;
  Roofs roofs = profile_ ? RoofsFromProfile(*profile_,
                                            options_.device_profile_path)
                         : RoofsFromDatasheet(options_.device_key.empty()
                                                  ? device_name
                                                  : options_.device_key);
  roofs = ScaleRoofsToClock(std::move(roofs),
                            static_cast<double>(clock_khz) * 1e3);
  return roofs_.emplace(std::move(key), std::move(roofs)).first->second;
}

Status RunRecorder::AddSession(Session* session,
                               const std::atomic<bool>* stop) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session->started()) {
    stats_.Add(session->stats());
    return OkStatus();
  }
  if (!session->Complete()) {
    ++session->stats()[ImportStat::k_sessions_incomplete];
    all_complete_ = false;
  }
  ++sessions_;
  // Looked at before the first row too: preparing and joining millions of
  // records take a second or more (the join looks at it as it goes).
  const auto stopped_before_rows = [&] {
    if (stop == nullptr || !(stopped_ || stop->load())) return false;
    // None of this session's rows is written.
    stopped_ = true;
    stats_.Add(session->stats());
    stats_[ImportStat::k_kernels_not_stored] += session->kernels().size();
    stats_[ImportStat::k_nvtx_ranges_not_stored] +=
        session->nvtx_ranges().size();
    session->DropRecords(AllRecords(*session));
    return true;
  };
  if (stopped_before_rows()) return OkStatus();
  if (!write_error_.ok()) {
    sampled_.EndSession(session);
    pm_sampled_.EndSession(session);
    stats_.Add(session->stats());
    DiscardRecords(session);
    return FailedPrecondition(session->name() + ": not stored: an earlier "
                              "write to the store failed (" +
                              write_error_.message() + ")");
  }
  if (options_.preparer != nullptr) {
    RT_RETURN_IF_ERROR(options_.preparer->Prepare(session));
  }
  if (stopped_before_rows()) return OkStatus();
  const Roofs& roofs = RoofsFor(FirstDevice(*session));
  // The join adds the session's unmatched_* counts to its statistics.
  // A session stored in windows ends with what it still holds (about a
  // window): joined into the windows' JoinedSession, whose memory is there
  // already, not into a second one beside it (which set the peak RSS of a
  // long trace's analysis). A session joined whole gets its own, freed
  // after.
  JoinedSession whole;
  JoinedSession& joined =
      session->flushed().flushes > 0 ? window_join_ : whole;
  JoinInto(session, roofs, options_.annotate, options_.phases, &joined, stop);
  if (stopped_before_rows()) return OkStatus();
  // Sampled counters first: a kernel that takes them inherits nothing.
  sampled_.Apply(*session, &joined, nullptr, &session->stats());
  sampled_.EndSession(session);
  signatures_.Apply(&joined, nullptr, &session->stats());
  pm_sampled_.Apply(*session, &joined, nullptr, &session->stats());
  pm_sampled_.EndSession(session);
  stats_.Add(session->stats());
  any_counters_ |= joined.any_counters;
  any_analytic_ |= joined.any_analytic;
  any_inherited_ |= joined.any_inherited;
  any_sampled_ |= joined.any_sampled;
  for (const JoinedKernel& k : joined.kernels) {
    any_pm_sampled_ |= k.facts.bytes_source == Source::kPmSampled;
  }
  const auto end = static_cast<int64_t>(session->end().end_unix_ns);
  if (end != 0 && (!run_.ended_unix_ns || end > *run_.ended_unix_ns)) {
    run_.ended_unix_ns = end;
  }
  Status s = NoteSession(*session, roofs);
  if (stop == nullptr) {
    if (s.ok()) s = EmitRows(session, joined, nullptr, &rows_, sink_);
  } else {
    StopCheckingSink checked(sink_, stop);
    if (s.ok()) s = EmitRows(session, joined, nullptr, &rows_, &checked);
    if (checked.stopped()) {
      // The rows given so far are a consistent prefix (each refers only
      // to rows before it): they are made durable, the rest not stored.
      kernels_ += checked.kernels();
      stats_[ImportStat::k_kernels_not_stored] +=
          joined.kernels.size() - checked.kernels();
      stats_[ImportStat::k_nvtx_ranges_not_stored] +=
          joined.nvtx.size() - checked.ranges();
      stopped_ = true;
      s = sink_->EndWrite();
      if (!s.ok()) return FailWrite(s, 0, 0);
      return OkStatus();
    }
  }
  if (!s.ok()) return FailWrite(s, joined.kernels.size(), joined.nvtx.size());
  kernels_ += joined.kernels.size();
  return OkStatus();
}

bool RunRecorder::stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_;
}

Status RunRecorder::FailWrite(const Status& error, uint64_t kernels,
                              uint64_t ranges) {
  if (write_error_.ok()) {
    // The write that failed: the sink may have made part of it durable.
    uint64_t kept_kernels = 0, kept_ranges = 0;
    sink_->KeptOfFailedWrite(&kept_kernels, &kept_ranges);
    kept_kernels = std::min(kept_kernels, kernels);
    kept_ranges = std::min(kept_ranges, ranges);
    kernels_ += kept_kernels;
    kernels -= kept_kernels;
    ranges -= kept_ranges;
    write_error_ = error;
  }
  ++stats_[ImportStat::k_store_write_failures];
  stats_[ImportStat::k_kernels_not_stored] += kernels;
  stats_[ImportStat::k_nvtx_ranges_not_stored] += ranges;
  return error;
}

void RunRecorder::DiscardRecords(Session* session) {
  (void)FailWrite(write_error_, session->kernels().size(),
                  session->nvtx_ranges().size());
  session->DropRecords(AllRecords(*session));
}

Status RunRecorder::write_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_error_;
}

Status RunRecorder::NoteSession(const Session& session, const Roofs& roofs) {
  const SessionHeader& h = session.header();
  if (run_.host.empty()) run_.host = h.host;
  if (run_.producer_version.empty()) run_.producer_version = h.producer_version;
  if (run_.command.empty()) run_.command = h.argv;
  if (run_.device_name.empty()) run_.device_name = DeviceName(session);
  if (run_.roof_source.empty() || run_.roof_source == "none") {
    run_.roof_source = roofs.source;
  }
  // Said once, where every report prints the roofs' source.
  if (!roofs.clock_note.empty() && !clock_noted_) {
    run_.roof_source += "; " + roofs.clock_note;
    clock_noted_ = true;
  }
  const auto start = static_cast<int64_t>(h.start_unix_ns);
  if (start != 0 && (!run_start_from_session_ || !run_.started_unix_ns ||
                     start < *run_.started_unix_ns)) {
    run_.started_unix_ns = start;
    run_start_from_session_ = true;
  }
  if (run_.mode.empty()) {
    run_.mode = h.mode;
  } else if (run_.mode != h.mode) {
    run_.mode = "mixed";
  }
  // Every window of every session notes its devices: each is written once.
  for (const DeviceInfo& d : session.devices()) {
    if (!roofs_written_.insert(d.device_id).second) continue;
    for (const RoofRow& row :
         RoofRowsOf(rows_.run_id, d.device_id, RoofsFor(&d))) {
      RT_RETURN_IF_ERROR(sink_->AddRoof(row));
    }
  }
  return OkStatus();
}

size_t RunRecorder::WindowRecords(size_t open_sessions) const {
  if (options_.flush_records == 0) return 0;
  const size_t share =
      options_.memory_records / std::max<size_t>(open_sessions, 1);
  return std::min(options_.flush_records, std::max(kMinWindowRecords, share));
}

Status RunRecorder::MaybeFlush(Session* session, size_t open_sessions) {
  const size_t window = WindowRecords(open_sessions);
  if (window == 0 || !session->started() ||
      session->RecordCount() <
          std::max(window, session->flushed().next_flush_records)) {
    return OkStatus();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.preparer != nullptr && write_error_.ok() &&
      options_.preparer->KeepWhole(*session)) {
    // Held whole until it ends (SessionPreparer): never asked again.
    session->flushed().next_flush_records = SIZE_MAX;
    return OkStatus();
  }
  if (!write_error_.ok()) {
    // Nothing more is written: drop the window so memory stays bounded
    // (the raw stream, if the caller keeps one, still has it).
    DiscardRecords(session);
    return OkStatus();
  }
  return FlushSettled(session, window);
}

Status RunRecorder::FlushDue(Session* session, size_t open_sessions) {
  if (!session->started() || session->RecordCount() == 0) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.preparer != nullptr && write_error_.ok() &&
      options_.preparer->KeepWhole(*session)) {
    return OkStatus();  // joined whole when it ends (SessionPreparer)
  }
  if (!write_error_.ok()) {
    DiscardRecords(session);
    return OkStatus();
  }
  // A session kept whole (flush_records 0) still holds the records of a
  // window at most: the window's rows must reach its run.
  const size_t window =
      std::max(WindowRecords(open_sessions), kMinWindowRecords);
  return FlushSettled(session, window);
}

// Joins what the session holds, stores the settled steps (flush.h) and drops
// their records. The windowed join's statistics are thrown away: the held
// records would be counted again by the next window; the plan counts what
// is unmatched among the dropped records instead.
Status RunRecorder::FlushSettled(Session* session, size_t window) {
  FlushedState& state = session->flushed();
  const Roofs& roofs = RoofsFor(FirstDevice(*session));
  const ImportStats saved = session->stats();
  // One JoinedSession reused for every window: its memory is not touched
  // afresh (and faulted in) each time.
  JoinedSession& joined = window_join_;
  JoinInto(session, roofs, options_.annotate, options_.phases, &joined);
  session->stats() = saved;
  // Counters are waited for until the session holds twice the threshold:
  // past its --max-kernels a producer sends none, and memory must stay
  // bounded (a counter arriving later is kept and counted as unmatched).
  // libinject sends counters every 64 ranges, far inside that.
  const bool wait_for_counters = session->RecordCount() < 2 * window;
  FlushPlan plan = PlanFlush(*session, joined, 2, wait_for_counters);
  if (plan.last_step < 0) {
    // Nothing settled yet (e.g. an NVTX range open since the start): try
    // again at twice the size, so the joins stay linear in the stream.
    state.next_flush_records = 2 * session->RecordCount();
    return OkStatus();
  }
  // Held kernels inherit too (they are joined again next window); only the
  // stored ones are counted, with the plan's counts (which are kept).
  sampled_.Apply(*session, &joined, &plan.scope, &plan.unmatched);
  signatures_.Apply(&joined, &plan.scope, &plan.unmatched);
  pm_sampled_.Apply(*session, &joined, &plan.scope, &plan.unmatched,
                    &plan.drop);
  Status s = NoteSession(*session, roofs);
  if (s.ok()) s = EmitRows(session, joined, &plan.scope, &rows_, sink_);
  if (!s.ok()) {
    // `joined` points into the records: count and drop them all.
    (void)FailWrite(s, session->kernels().size(),
                    session->nvtx_ranges().size());
    session->DropRecords(AllRecords(*session));
    return s;
  }
  session->stats().Add(plan.unmatched);
  ++session->stats()[ImportStat::k_windows_stored];
  kernels_ += plan.kernels;
  // Sources of the kernels stored only: a held kernel may still be waiting
  // for its counters and carry analytic numbers for now.
  for (const JoinedKernel& k : joined.kernels) {
    if (!InScope(&plan.scope, k)) continue;
    any_counters_ |= k.facts.flops_source == Source::kCounters ||
                     k.facts.bytes_source == Source::kCounters;
    any_analytic_ |= k.facts.flops_source == Source::kAnalytic;
    any_inherited_ |= k.facts.flops_source == Source::kInherited ||
                      k.facts.bytes_source == Source::kInherited;
    any_sampled_ |= k.facts.flops_source == Source::kSampled ||
                    k.facts.bytes_source == Source::kSampled;
    any_pm_sampled_ |= k.facts.bytes_source == Source::kPmSampled;
  }
  state.last_step_tokens = joined.steps[plan.last_step].token_count;
  state.steps += static_cast<uint64_t>(plan.last_step) + 1;
  state.kernels += plan.kernels;
  ++state.flushes;
  // `joined` points into the records: done with it. The session keeps its
  // vectors' memory up to one window for the next one.
  session->DropRecords(plan.drop, window);
  const size_t held = session->RecordCount();
  state.next_flush_records = held > window / 2 ? 2 * held : 0;
  return OkStatus();
}

void RunRecorder::SetSourceSha256(std::string sha256) {
  std::lock_guard<std::mutex> lock(mu_);
  run_.source_sha256 = std::move(sha256);
}

void RunRecorder::AddStats(const ImportStats& stats) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.Add(stats);
}

Status RunRecorder::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  finished_ = true;
  // Each source present, '+'-joined in this order ('counters+sampled+
  // analytic+inherited'); 'none' when none is.
  std::string sources;
  for (const auto& [present, name] :
       {std::pair<bool, const char*>{any_counters_, "counters"},
        {any_sampled_, "sampled"},
        {any_pm_sampled_, "pm-sampling"},
        {any_analytic_, "analytic"},
        {any_inherited_, "inherited"}}) {
    if (!present) continue;
    if (!sources.empty()) sources += '+';
    sources += name;
  }
  run_.flops_sources = sources.empty() ? "none" : sources;
  run_.complete = all_complete_ && sessions_ > 0 && write_error_.ok() &&
                          marked_incomplete_.empty()
                      ? 1
                      : 0;
  run_.incomplete_reason = IncompleteReason();
  if (!run_.ended_unix_ns) {
    run_.ended_unix_ns = static_cast<int64_t>(NowUnixNs());
  }
  if (run_.roof_source.empty()) run_.roof_source = "none";
  return sink_->FinishRun(run_, stats_);
}

void RunRecorder::MarkIncomplete(std::string reason) {
  std::lock_guard<std::mutex> lock(mu_);
  marked_incomplete_ = std::move(reason);
}

std::string RunRecorder::IncompleteReason() const {
  std::string reason = marked_incomplete_;
  if (!write_error_.ok()) {
    reason += std::string(reason.empty() ? "" : "; ") +
              "a store write failed (" +
              write_error_.message() + "): " +
             std::to_string(stats_[ImportStat::k_kernels_not_stored]) +
             " kernels and " +
             std::to_string(stats_[ImportStat::k_nvtx_ranges_not_stored]) +
             " NVTX ranges not stored";
  }
  const uint64_t open = stats_[ImportStat::k_sessions_incomplete];
  if (open > 0) {
    reason += (reason.empty() ? "" : "; ") + std::to_string(open) + " of " +
              std::to_string(sessions_) +
              " sessions ended without a Goodbye or with totals that did "
              "not match";
  }
  if (sessions_ == 0) {
    reason += (reason.empty() ? "" : "; ") +
              std::string("no producer session was received");
  }
  return reason;
}

size_t RunRecorder::sampled_entries_held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sampled_.HeldEntries();
}

ImportStats RunRecorder::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

RunRow RunRecorder::run_row() const {
  std::lock_guard<std::mutex> lock(mu_);
  return run_;
}

uint64_t RunRecorder::kernels_stored() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kernels_;
}

}  // namespace rooftrace
