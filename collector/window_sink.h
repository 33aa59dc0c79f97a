// The sink between a long-running collector's RunRecorder and its store:
// cuts the one run the recorder writes into consecutive time windows
// (collect --window), each stored as its own run with the collector's
// labels plus `window` (0, 1, ...) and `window_start` (UTC, ISO 8601), so
// `history`, `diff` and the trend page read a server's windows as they read
// nightly runs. Without windows it passes every row through unchanged.
// Either way it shows every kernel row to a WindowObserver (the Prometheus
// metrics, collector/metrics.h).
//
// Rows name the run and session the recorder knows; a session that spans
// windows gets a session row (and its devices) in each window it has rows
// in, and each window's run gets every roof seen so far, so a window reads
// alone. A window's import statistics are what the collector's cumulative
// statistics (ended sessions and open ones) grew by during it: a window in
// which a producer lost records carries those losses, as a run does. A
// window's run begins with its first row or statistics (the first window's
// at once, so a store that cannot take a run fails the start): a window in
// which nothing arrived stores no run and is counted (idle_windows()).
//
// The trap: a window holds the rows that settled during it (the server
// stores each open session's settled steps at the window's end), not the
// kernels that ran in it; a session's last two steps wait for the next.
//
// Owned by the recorder (RunRecorder::Create's sink); EndWindow() is called
// by the collector's server thread between writes, which is the thread
// every other call comes from (CollectorServer::Run), so no lock.
#ifndef ROOFTRACE_COLLECTOR_WINDOW_SINK_H_
#define ROOFTRACE_COLLECTOR_WINDOW_SINK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <functional>

#include "base/status.h"
#include "pipeline/import_stats.h"
#include "pipeline/recorder.h"
#include "pipeline/rows.h"
#include "pipeline/sink.h"
#include "store/store.h"

namespace rooftrace {

// One kernel row as the metrics see it: the producer and device it ran on
// and the figures a window sums.
struct ObservedKernel {
  std::string_view host;
  std::string_view device;  // "<id>:<name>", e.g. "0:NVIDIA H100 80GB HBM3"
  std::string_view family, phase;
  const KernelRow* row = nullptr;
};

// Sees the rows a WindowSink passes on. Called on the sink's thread.
class WindowObserver {
 public:
  virtual ~WindowObserver() = default;
  virtual void OnKernel(const ObservedKernel& kernel) = 0;
  // Every row of one write has been given (the store committed them).
  virtual void OnWriteEnd() = 0;
  // Window `index` [start, end) is stored as run `run_id` with `stats`.
  virtual void OnWindowEnd(uint64_t index, int64_t run_id,
                           const ImportStats& stats) = 0;
};

// "5m", "60s", "500ms", "1h" -> nanoseconds. Errors name `flag` and the
// accepted forms.
StatusOr<uint64_t> ParseWindowDuration(const std::string& text,
                                       const std::string& flag);

// "2026-11-29T13:40:00Z" (seconds; UTC).
std::string UtcIso8601(int64_t unix_ns);

// `a - b` counter by counter, never below zero (a session's join may
// recount what an earlier window counted).
ImportStats StatsSince(const ImportStats& a, const ImportStats& b);

class WindowSink : public RunSink {
 public:
  // `windowed`: label each run as a window (EndWindow starts the next one);
  // else one run as the recorder writes it. `observer` may be null; not
  // owned, must outlive the sink.
  WindowSink(std::unique_ptr<RunSink> store, bool windowed,
             WindowObserver* observer);

  // Ends the current window at `end_unix_ns` as a run of its own and
  // begins the next. `run_so_far`: the recorder's run row (host, mode,
  // device, roof source); `cumulative`: the collector's statistics so far,
  // ended sessions and open ones together.
  Status EndWindow(const RunRow& run_so_far, const ImportStats& cumulative,
                   int64_t end_unix_ns);

  uint64_t window_index() const { return index_; }
  // Windows in which nothing arrived, stored as no run.
  uint64_t idle_windows() const { return idle_; }
  int64_t current_run_id() const { return run_id_; }
  // Run ids of every window ended so far, in order.
  const std::vector<int64_t>& ended_runs() const { return ended_; }

  RowNeeds Needs() const override { return store_->Needs(); }
  StatusOr<int64_t> BeginRun(const RunRow& run) override;
  Status FinishRun(const RunRow& run, const ImportStats& stats) override;
  Status AddRoof(const RoofRow& roof) override;
  StatusOr<int64_t> AddSession(const SessionRow& session,
                               const std::vector<DeviceRow>& devices) override;
  Status UpdateSession(const SessionRow& session) override;
  StatusOr<int64_t> AddGemmCall(const GemmCallRow& gemm) override;
  Status AddStep(const StepRow& step) override;
  Status AddKernel(const KernelRow& kernel) override;
  Status AddKernelMetric(const KernelMetricRow& metric) override;
  Status AddMemcpy(const MemcpyRow& memcpy) override;
  Status AddNvtx(const NvtxRow& range) override;
  Status EndWrite() override;
  void KeptOfFailedWrite(uint64_t* kernels, uint64_t* ranges) const override {
    store_->KeptOfFailedWrite(kernels, ranges);
  }

 private:
  // A session's row and devices with their text owned (rows hold views).
  struct KnownSession {
    std::string host, argv, producer_version, mode;
    SessionRow row;
    std::vector<std::string> device_text;  // 4 per device
    std::vector<DeviceRow> devices;
    std::map<int64_t, std::string> device_names;  // id -> "<id>:<name>"
    void Own(const SessionRow& s, const std::vector<DeviceRow>& d);
  };
  // The run row a window is stored with.
  RunRow WindowRun(const RunRow& base, int64_t end_unix_ns) const;
  // Begins the current window's run in the store, if not yet.
  Status BeginWindow();
  // Moves on to the next window, starting at `start_unix_ns`.
  void NextWindow(int64_t start_unix_ns);
  // The current window's id for the recorder's session `id`, adding the
  // session's row (and devices) to the window first if it has none there.
  StatusOr<int64_t> SessionInWindow(int64_t id);
  // `row` with the current window's run and session ids.
  template <typename Row>
  StatusOr<Row> InWindow(const Row& row) {
    Row r = row;
    r.run_id = run_id_;
    RT_ASSIGN_OR_RETURN(r.session_id, SessionInWindow(row.session_id));
    return r;
  }

  std::unique_ptr<RunSink> store_;
  const bool windowed_;
  WindowObserver* observer_;
  RunRow base_;                 // the recorder's BeginRun row
  uint64_t index_ = 0;          // the current window
  int64_t run_id_ = 0;          // its run in the store, once begun_
  bool begun_ = false;
  uint64_t idle_ = 0;
  int64_t start_unix_ns_ = 0;   // its start
  ImportStats stats_at_start_;  // cumulative statistics when it began
  std::vector<int64_t> ended_;
  std::vector<RoofRow> roofs_;  // every roof given, for each new window
  // By the id the recorder knows (the one returned by its AddSession).
  std::map<int64_t, KnownSession> sessions_;
  std::map<int64_t, int64_t> in_window_;  // recorder id -> this window's
  // Sources of the window's kernels (runs.flops_sources).
  std::set<std::string, std::less<>> sources_;
};

// A RunRecorder storing into the store at `store_path` through a
// WindowSink (what `collect` and `profile` run).
struct WindowedRecorder {
  std::unique_ptr<RunRecorder> recorder;
  WindowSink* windows = nullptr;  // owned by the recorder
};
// `windowed`: runs cut by WindowSink::EndWindow; `observer` may be null;
// `store_kernels`: the kernel rows each run keeps (its aggregates always).
// Errors name the store and the fix.
StatusOr<WindowedRecorder> CreateWindowedRecorder(
    const RecorderOptions& options, const std::string& store_path,
    bool windowed, WindowObserver* observer,
    StoreKernels store_kernels = StoreKernels::kAll);

// ServerOptions::on_window_end for `w`: ends its window with the
// recorder's statistics plus the open sessions'; a failure is logged with
// `log` (the next window still begins).
std::function<void(const ImportStats&)> WindowEnder(
    const WindowedRecorder& w, std::function<void(const std::string&)> log);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_WINDOW_SINK_H_
