// One run being recorded: turns every ended session into rows (join,
// annotate, steps, figures of kernels without their op inherited by
// signature across the run (pipeline/inherit.h); pipeline/emit_rows.h) for
// its sink (the store, the
// in-memory report) and keeps the run record and its import statistics up
// to date. A long session is stored in windows: once
// it holds `flush_records` records, its settled forward steps are joined,
// stored and dropped (MaybeFlush), so a producer that runs for hours costs
// bounded memory. Used by `collect` (one run per server
// lifetime), `profile` (one run per command) and every source reading a
// file (one run per file).
//
// Thread-safe: AddSession / AddStats / Finish take one mutex, so connection
// threads may end sessions concurrently (writes are serialised).
//
// The trap: a sink that refuses a write (a full disk) fails the run. From
// the first refused write on nothing more is written (a later write could
// only leave a run with holes nobody can see); what would have been is
// counted (store_write_failures, kernels_not_stored,
// nvtx_ranges_not_stored) and Finish() stores the run as incomplete with
// the reason. Callers keep the raw stream to re-ingest it.
#ifndef ROOFTRACE_PIPELINE_RECORDER_H_
#define ROOFTRACE_PIPELINE_RECORDER_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/status.h"
#include "model/device_profile.h"
#include "model/roof_model.h"
#include "pipeline/emit_rows.h"
#include "pipeline/import_stats.h"
#include "pipeline/inherit.h"
#include "pipeline/join.h"
#include "pipeline/pm_sampled.h"
#include "pipeline/rows.h"
#include "pipeline/sampled.h"
#include "pipeline/session.h"
#include "pipeline/sink.h"

namespace rooftrace {

// The smallest window a session is given, however many are open: a few
// forward steps of a small model, so that settled steps exist to store.
inline constexpr size_t kMinWindowRecords = 4096;

// Work a source does on a session's records before the pipeline joins
// them. The live ops route's (sources/rft/live_ops.h) ties the operator
// ranges a Python host sent to the kernels they launched and costs them
// with the importer's op models. Called with the recorder's lock held, for
// one session at a time.
class SessionPreparer {
 public:
  virtual ~SessionPreparer() = default;
  // Whether `session` must be joined whole when it ends, never in windows:
  // a window stored early would miss what only arrives later (operators
  // come after the kernels they launched). Asked when a window is due.
  virtual bool KeepWhole(const Session& session) const = 0;
  // Called once, when `session` has ended, before it is joined.
  virtual Status Prepare(Session* session) = 0;
};

struct RecorderOptions {
  std::string origin;   // 'profile' | 'collect' | 'ingest:<file>'
  std::string command;  // profile: the command; else the first session's argv
  // Where the data comes from (runs.source_*): the format a source reads
  // and its file; empty for a live collection.
  std::string source_format;
  std::string source_file;
  // The user's labels (--label KEY=VALUE), stored with the run row.
  RunLabels labels;
  // Overrides the device every session names for its roofs (a datasheet
  // key, import --device); empty: each session's own device.
  std::string device_key;
  // Calibrated device profile; empty: datasheet roofs by device name.
  std::string device_profile_path;
  AnnotateOptions annotate;
  PhaseOptions phases;
  // Records a session may hold before its settled steps are stored and
  // dropped (0: keep every session whole until it ends). Small windows stay
  // in cache and reuse their memory: 64 Ki records joined 2x faster per
  // kernel than 512 Ki (collector_ingest_bench).
  size_t flush_records = 1u << 16;
  // Records all open sessions together may hold: with many producers at
  // once, each session's window shrinks to memory_records / sessions open
  // (never below kMinWindowRecords), so the collector's memory does not
  // grow with the number of producers either.
  size_t memory_records = 1u << 20;
  // Where the rows go: not owned, must outlive the recorder (see also
  // Create()'s owned sink).
  RunSink* sink = nullptr;
  // Run on every started session before it is joined; null: none.
  std::shared_ptr<SessionPreparer> preparer;
};

class RunRecorder {
 public:
  // Loads the device profile and begins the run in options.sink.
  static StatusOr<std::unique_ptr<RunRecorder>> Create(
      const RecorderOptions& options);
  // The same with a sink the recorder owns (options.sink is ignored).
  static StatusOr<std::unique_ptr<RunRecorder>> Create(
      const RecorderOptions& options, std::unique_ptr<RunSink> sink);

  // Joins, annotates and stores an ended session (a session without a
  // Hello only contributes its statistics).
  // `stop` (may be null; a SIGINT/SIGTERM handler's flag): once set, no
  // more of the session's rows are written. A session of millions of
  // records (a recovered live buffer) takes seconds to store, and a stop
  // must end that within a moment. The rows given before are made durable,
  // the rest are counted as not stored, stopped() says so, and later
  // sessions given with a stop are not stored at all.
  Status AddSession(Session* session, const std::atomic<bool>* stop = nullptr);
  // Called after each packet of a live session: when it holds
  // `flush_records` records, stores its settled steps and drops them from
  // it (see FlushSettled in recorder.cc for what "settled" means). Cheap
  // when below the threshold.
  // `open_sessions`: how many sessions the caller has open at once (the
  // session's share of memory_records).
  Status MaybeFlush(Session* session, size_t open_sessions = 1);
  // A time window of the caller (collect --window) has ended: stores what
  // of `session` is settled now, whatever its size (MaybeFlush waits for
  // a window of records), so that the rows reach the sink before the
  // caller closes the window's run. What is not settled yet (the last
  // steps, a range still open) stays held for the next window.
  Status FlushDue(Session* session, size_t open_sessions = 1);
  // The window of a session while `open_sessions` are open (0: none).
  size_t WindowRecords(size_t open_sessions) const;
  // Statistics of a connection or file that produced no session.
  void AddStats(const ImportStats& stats);
  // The SHA-256 of the source file (runs.source_sha256), once known;
  // written by Finish().
  void SetSourceSha256(std::string sha256);
  // Writes the final run record and import statistics. Idempotent.
  Status Finish();
  // Stores the run as incomplete for `reason` (e.g. the read was
  // interrupted), whatever its sessions say.
  void MarkIncomplete(std::string reason);
  // The first write the sink refused (OK when none): once set, the run is
  // incomplete and nothing more is written.
  Status write_error() const;

  // The stop flag ended a session's write (AddSession's `stop`): the run
  // holds a part of that session at most, and AddSession stores nothing
  // more.
  bool stopped() const;

  int64_t run_id() const { return rows_.run_id; }
  ImportStats stats() const;
  RunRow run_row() const;
  uint64_t kernels_stored() const;
  // Counter samples and launches kept unfolded for live counters-mode
  // sessions (SampledCounters::HeldEntries): about a window's worth.
  size_t sampled_entries_held() const;

 private:
  RunRecorder() = default;
  // The roofs of a session's device (nullptr: a session without devices),
  // scaled to the SM clock its kernels were measured at, if one was.
  const Roofs& RoofsFor(const DeviceInfo* device);
  Status FlushSettled(Session* session, size_t window);
  // Run fields that come from a session's header and devices.
  Status NoteSession(const Session& session, const Roofs& roofs);
  // Records a refused write of `kernels` kernels and `ranges` NVTX ranges;
  // returns the error to hand back.
  Status FailWrite(const Status& error, uint64_t kernels, uint64_t ranges);
  // After a refused write: counts what `session` holds as not stored and
  // drops it (memory stays bounded).
  void DiscardRecords(Session* session);
  // One sentence for runs.incomplete_reason ("" when complete).
  std::string IncompleteReason() const;

  RecorderOptions options_;
  mutable std::mutex mu_;
  std::unique_ptr<RunSink> owned_sink_;
  RunSink* sink_ = nullptr;  // owned_sink_ or options_.sink
  bool stopped_ = false;     // see stopped()
  std::optional<DeviceProfile> profile_;
  // By device name and measured SM clock (kHz, 0: none).
  std::map<std::pair<std::string, uint64_t>, Roofs> roofs_;
  bool clock_noted_ = false;  // a roofs' clock_note is in run_.roof_source
  std::set<uint32_t> roofs_written_;  // device ids whose roofs were given
  RowContext rows_;  // run id and step numbering
  RunRow run_;
  ImportStats stats_;
  bool any_counters_ = false, any_analytic_ = false, any_inherited_ = false;
  bool any_sampled_ = false, any_pm_sampled_ = false;
  bool all_complete_ = true;
  uint64_t sessions_ = 0;
  bool run_start_from_session_ = false;
  uint64_t kernels_ = 0;
  bool finished_ = false;
  Status write_error_;  // the first refused write
  std::string marked_incomplete_;  // MarkIncomplete's reason
  JoinedSession window_join_;  // FlushSettled's, reused (guarded by mu_)
  // Figures of kernels without their op, learned across the run's sessions
  // and windows (guarded by mu_; rows point into it until the sink call
  // returns).
  SignatureFigures signatures_;
  // Counters of profiled launches per kernel signature, per session, for
  // the launches counters mode did not profile (guarded by mu_; rows point
  // into the JoinedSession).
  SampledCounters sampled_;
  // Sampling mode: PM samples given to kernels by time overlap, last (a
  // kernel keeps the FLOPs it inherited and takes measured bytes).
  PmSampledBytes pm_sampled_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_RECORDER_H_
