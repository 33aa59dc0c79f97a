#include "sources/rft/ingest.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/command_name.h"
#include "base/file_digest.h"
#include "base/input_file.h"
#include "sources/file_reader.h"
#include "sources/rft/ingest_internal.h"
#include "proto/live_buffer.h"
#include "sources/rft/live_ops.h"
#include "sources/rft/live_recovery.h"
#include "sources/rft/wire_session.h"
#include "proto/framing.h"

namespace rooftrace {

namespace {

// A producer's live buffer (proto/live_buffer.h) rather than a stream: its
// first eight bytes are the live buffer's magic.
bool IsLiveBuffer(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  uint64_t magic = 0;
  const bool read = fread(&magic, sizeof magic, 1, f) == 1;
  fclose(f);
  return read && magic == inject::kLiveMagic;
}

// After the records recovered from the live buffer at `live` (`recovered`
// of them) were given to the recorder with the stop flag: when the flag
// ended their store, the ingest ends as interrupted and says what is kept.
void NoteStoppedStore(const RunRecorder& recorder, const std::string& live,
                      uint64_t recovered, IngestResult* result) {
  if (!recorder.stopped()) return;
  result->interrupted = true;
  result->stopped_storing_recovered = true;
  result->warning = "stopped while the " + std::to_string(recovered) +
                    " records recovered from " + live +
                    " were being stored: the run holds a part of them; " +
                    live + " is kept";
}

// The session a live buffer keeps, for a producer whose stream never
// reached a collector (killed before its Hello went out). The file is the
// user's input: left in place, as a spool is.
// A stop during the recovery stores none of it: every record is still in
// the buffer, which stays for the next ingest.
Status IngestLiveBuffer(const std::string& path, RunRecorder* recorder,
                        IngestResult* result,
                        const std::atomic<bool>* stop) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": cannot read it");
  }
  WireSession session(path);
  RT_ASSIGN_OR_RETURN(
      LiveRecovery recovery,
      RecoverOrphanLiveBuffer(path, st.st_uid, 0, &session, stop));
  if (recovery.owner_alive) {
    return FailedPrecondition(
        path + ": the process that writes this live buffer still runs; "
               "ingest it once that process has ended");
  }
  if (recovery.interrupted) {
    result->interrupted = true;
    result->warning = recovery.summary;
    return OkStatus();
  }
  fprintf(stderr, "%s: %s\n", CommandName(), recovery.summary.c_str());
  result->kernels += session.session().kernels().size();
  RT_RETURN_IF_ERROR(recorder->AddSession(&session.session(), stop));
  NoteStoppedStore(*recorder, path, recovery.recovered, result);
  return OkStatus();
}

}  // namespace

Status CheckTraceFile(const std::string& path) {
  // Before IsLiveBuffer opens it: a FIFO would block the open.
  RT_RETURN_IF_ERROR(CheckInputIsAFile(path));
  if (IsLiveBuffer(path)) {
    // Judged by its header, before any run is begun: a damaged, oversized
    // (a sparse 1 TiB file) or still-held buffer is bad input, never a
    // pass over the whole file nor an empty run.
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
      return NotFound(path + ": cannot read it");
    }
    inject::LiveReadResult state = inject::LiveReadResult::kOwnerAlive;
    if (Status s = inject::CheckLiveBuffer(path, st.st_uid, &state);
        !s.ok()) {
      return InvalidArgument(s.message() +
                             ": give a live buffer a rooftrace producer "
                             "left, or its .rft spool");
    }
    if (state != inject::LiveReadResult::kRead) {
      return InvalidArgument(
          path + ": the process that writes this live buffer still runs; "
                 "ingest it once that process has ended");
    }
    return OkStatus();  // read by IngestLiveBuffer
  }
  wire::TraceFileReader reader;
  RT_RETURN_IF_ERROR(reader.Open(path));
  std::string_view payload;
  switch (reader.Next(&payload)) {
    case wire::TraceFileReader::Result::kFrame:
      break;
    case wire::TraceFileReader::Result::kEnd:
      return InvalidArgument(path + ": empty file: not a rooftrace trace "
                             "(give a .rft spool or raw trace)");
    default:
      return InvalidArgument(reader.error() +
                             ": not a rooftrace trace (give a .rft spool or "
                             "raw trace)");
  }
  WireSession probe(path);
  Status s = probe.OnPacket(payload);
  if (!s.ok()) {
    return InvalidArgument(path + ": " + s.message());
  }
  if (!probe.has_hello()) {
    return InvalidArgument(path +
                           ": the first frame is not a rooftrace packet: "
                           "not a rooftrace trace (give a .rft spool or raw "
                           "trace)");
  }
  return OkStatus();
}

namespace {

// A spool whose producer ended without a Goodbye: the records it left in
// its live buffer (named by the Hello; the spool file's owner must own it).
// Its producer is gone or still writing; it is not waited for. A buffer
// no longer where the Hello names it is looked for beside the spool under
// the same name: the two were moved together (`profile` keeps both in
// OUTPUT.raw/ when the store refused a write).
// A stop during the recovery leaves the buffer (`*interrupted`: the
// summary, which says so; `*partial`: the session holds a part of it).
// `*recovered`: how many records the buffer gave.
std::string RecoverSpooled(const std::string& path, WireSession* session,
                           const std::atomic<bool>* stop,
                           std::string* interrupted, bool* partial,
                           uint64_t* recovered) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  std::string at;
  const std::string& named = session->live_buffer();
  struct stat live_st {};
  if (!named.empty() && lstat(named.c_str(), &live_st) != 0) {
    const std::filesystem::path beside =
        std::filesystem::path(path).parent_path() /
        std::filesystem::path(named).filename();
    if (lstat(beside.c_str(), &live_st) == 0) at = beside.string();
  }
  auto recovery =
      RecoverFromLiveBuffer(session, st.st_uid, /*wait_ms=*/0, at, stop);
  if (recovery.ok() && recovery->interrupted) {
    *interrupted = path + ": " + recovery->summary;
    *partial = recovery->partial;
    return "";
  }
  if (!recovery.ok()) {
    fprintf(stderr, "%s: %s: %s\n", CommandName(), path.c_str(),
            recovery.status().message().c_str());
    return "";
  }
  if (!recovery->summary.empty()) {
    fprintf(stderr, "%s: %s: %s\n", CommandName(), path.c_str(),
            recovery->summary.c_str());
  }
  *recovered = recovery->recovered;
  return recovery->consumed_path;
}

}  // namespace

std::vector<std::string> IngestOrphanLiveBuffers(
    const std::string& dir, RunRecorder* recorder,
    const std::map<std::string, uint64_t>& received,
    const std::set<std::string>& read_by_spools) {
  std::vector<std::string> not_stored;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".live") continue;
    const std::string path = entry.path().string();
    if (read_by_spools.count(path) != 0) continue;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) continue;
    WireSession session(path);
    const auto known = received.find(path);
    const uint64_t through = known == received.end() ? 0 : known->second;
    auto recovery = RecoverOrphanLiveBuffer(path, st.st_uid, through, &session);
    if (!recovery.ok()) {
      fprintf(stderr, "%s: %s\n", CommandName(),
              recovery.status().message().c_str());
      continue;
    }
    fprintf(stderr, "%s: %s\n", CommandName(), recovery->summary.c_str());
    if (recovery->owner_alive) continue;
    if (Status s = recorder->AddSession(&session.session()); !s.ok()) {
      fprintf(stderr, "%s: %s: %s (the buffer is kept)\n", CommandName(),
              path.c_str(), s.message().c_str());
      not_stored.push_back(path);
    } else {
      unlink(path.c_str());
    }
  }
  return not_stored;
}

Status IngestFileInto(const std::string& path, RunRecorder* recorder,
                      IngestResult* result, bool progress,
                      const std::atomic<bool>* stop) {
  if (IsLiveBuffer(path)) {
    return IngestLiveBuffer(path, recorder, result, stop);
  }
  wire::TraceFileReader reader;
  RT_RETURN_IF_ERROR(reader.Open(path));
  auto session = std::make_unique<WireSession>(path);
  ImportStats file_stats;
  std::string_view payload;
  uint64_t next_progress = 64ull << 20;
  // The first refused store write. Reading goes on to the end of the file
  // all the same (nothing more is written): every kernel of the file is
  // then counted, stored or kernels_not_stored, and the sessions too.
  Status write_failed;
  const auto note = [&](Status s) {
    if (!s.ok() && !recorder->write_error().ok()) {
      if (write_failed.ok()) write_failed = std::move(s);
      return OkStatus();
    }
    return s;
  };
  // `whole`: the session's stream was read to its end. Only then are the
  // records its live buffer kept after it recovered: past a part not read
  // (the rest of a cut or interrupted file) they would be stored after a
  // hole, and its loss counted against records that are only unread. The
  // buffer is never removed here (IngestResult::live_buffers_read).
  auto end_session = [&](bool whole) -> Status {
    std::string recovered;  // the live buffer whose records it holds
    uint64_t recovered_records = 0;
    if (whole) {
      std::string interrupted;
      bool partial = false;
      const std::string live =
          RecoverSpooled(path, session.get(), stop, &interrupted, &partial,
                         &recovered_records);
      if (!live.empty()) result->live_buffers_read.push_back(live);
      recovered = live;
      if (!interrupted.empty()) {
        result->interrupted = true;
        result->warning = interrupted;
        if (partial) {
          // A part of the buffer is in the session: storing it would take
          // as long as the stop was meant to spare, and the next ingest
          // stores it again. The spool and the buffer hold all of it.
          session = std::make_unique<WireSession>(path);
          return OkStatus();
        }
      }
    }
    // A recovered buffer's records take seconds to store: a stop ends that.
    Status s = recorder->AddSession(&session->session(),
                                    recovered.empty() ? nullptr : stop);
    session = std::make_unique<WireSession>(path);
    if (s.ok() && !recovered.empty()) {
      NoteStoppedStore(*recorder, recovered, recovered_records, result);
    }
    return note(std::move(s));
  };
  for (;;) {
    if (stop != nullptr && stop->load()) {
      result->interrupted = true;
      result->warning = path + ": interrupted after " +
                        std::to_string(reader.frames_read()) +
                        " frames; the rest of the file is not stored";
      break;
    }
    const auto r = reader.Next(&payload);
    if (r == wire::TraceFileReader::Result::kFrame) {
      ++file_stats[ImportStat::k_frames];
      file_stats[ImportStat::k_bytes] +=
          payload.size() + wire::FrameHeaderBytes(payload.size());
      Status s = session->OnPacket(payload);
      if (s.ok() && session->restart_pending()) {
        // A second Hello in one file starts the next session.
        RT_RETURN_IF_ERROR(end_session(/*whole=*/true));
        s = session->OnPacket(payload);
      }
      if (s.ok()) {
        RT_RETURN_IF_ERROR(note(recorder->MaybeFlush(&session->session())));
      }
      if (!s.ok()) {
        ++file_stats[ImportStat::k_refused_sessions];
        result->warning = path + ": frame " +
                          std::to_string(reader.frames_read()) + ": " +
                          s.message() + "; the rest of the file is skipped";
        break;
      }
      if (progress && reader.bytes_read() >= next_progress) {
        fprintf(stderr, "%s: %s: %s of %s read\n", CommandName(),
                path.c_str(),
                wire::HumanBytes(reader.bytes_read()).c_str(),
                wire::HumanBytes(reader.file_bytes()).c_str());
        next_progress += 64ull << 20;
      }
      continue;
    }
    if (r == wire::TraceFileReader::Result::kEnd) break;
    if (r == wire::TraceFileReader::Result::kTruncated) {
      ++file_stats[ImportStat::k_truncated_streams];
    } else if (r == wire::TraceFileReader::Result::kCorrupt) {
      ++file_stats[ImportStat::k_corrupt_frames];
    } else {
      return Unavailable(reader.error());
    }
    // Not a warning only: a run read from a cut file is missing its end,
    // so it is stored incomplete and every reader says so.
    result->cut_short = true;
    result->warning = reader.error() +
                      "; the frames before it were read";
    recorder->MarkIncomplete(result->warning);
    break;
  }
  result->frames += reader.frames_read();
  result->kernels += session->session().kernels().size();
  recorder->AddStats(file_stats);
  RT_RETURN_IF_ERROR(
      end_session(/*whole=*/!result->interrupted && !result->cut_short));
  return write_failed;
}

namespace {

// IngestTraceFile and IngestTraceFiles: `paths` as one new run into `sink`,
// each named in messages by its `shown[i]`.
StatusOr<IngestResult> IngestInto(const std::vector<std::string>& paths,
                                  const std::vector<std::string>& shown,
                                  RunSink* sink,
                                  const IngestOptions& options) {
  for (const std::string& path : paths) {
    RT_RETURN_IF_ERROR(CheckTraceFile(path));
  }
  // What the reader says names the file it read: a copy's path becomes
  // the name the user gave.
  const auto named = [&](std::string message) {
    for (size_t i = 0; i < paths.size(); ++i) {
      message = RenamePath(std::move(message), paths[i], shown[i]);
    }
    return message;
  };
  std::string all_shown;
  for (const std::string& name : shown) {
    all_shown += (all_shown.empty() ? "" : " ") + name;
  }
  RecorderOptions ro;
  ro.origin = "ingest:" + all_shown;
  ro.source_format = "rft";
  ro.source_file = all_shown;
  ro.labels = options.labels;
  ro.device_profile_path = options.device_profile_path;
  ro.flush_records = options.flush_records;
  ro.sink = sink;
  // Operator ranges (the ops route) are costed by the importer.
  ro.preparer = LiveOpsPreparer(SourceOptions());
  RT_ASSIGN_OR_RETURN(auto recorder, RunRecorder::Create(ro));
  IngestResult result;
  Status read;
  // Each file is a stream of its own, read with results of its own (a
  // session is whole by its own file's end): one cut short (a raw stream
  // whose write failed holds only what came before) does not end the
  // others, and the run says it was cut.
  for (const std::string& path : paths) {
    IngestResult one;
    read = IngestFileInto(path, recorder.get(), &one, options.progress,
                          options.stop);
    result.frames += one.frames;
    result.kernels += one.kernels;
    result.live_buffers_read.insert(result.live_buffers_read.end(),
                                    one.live_buffers_read.begin(),
                                    one.live_buffers_read.end());
    if (!one.warning.empty() &&
        (result.warning.empty() || one.interrupted || one.cut_short)) {
      result.warning = one.warning;
    }
    result.interrupted = result.interrupted || one.interrupted;
    result.stopped_storing_recovered =
        result.stopped_storing_recovered || one.stopped_storing_recovered;
    result.cut_short = result.cut_short || one.cut_short;
    if (!read.ok() || one.interrupted) break;
  }
  const std::string& trace_path = paths.back();
  if (read.ok() && !options.incomplete_reason.empty()) {
    // The file ends where the stream was cut, maybe inside a frame: the
    // reason is the cut, not a damaged file.
    result.interrupted = true;
    result.cut_short = false;
    result.warning = options.incomplete_reason;
  }
  result.warning = named(std::move(result.warning));
  if (!read.ok()) read = Status(read.code(), named(read.message()));
  if (result.interrupted || result.cut_short) {
    recorder->MarkIncomplete(result.warning);
  }
  if (!read.ok() && !recorder->write_error().ok()) {
    // The store refused a write: the run says so, the file is untouched.
    const Status finish = recorder->Finish();
    return Status(StatusCode::kResourceExhausted,
                  all_shown + ": run " + std::to_string(recorder->run_id()) +
                      (finish.ok() ? " stored INCOMPLETE" : " not stored") +
                      ": " + recorder->write_error().message() +
                      "; the trace file is unchanged: ingest it again once "
                      "the store has room");
  }
  if (!read.ok()) {
    // The run was begun: it is finished as incomplete, with the reason,
    // rather than left with `complete` unset; the error goes back as it is.
    recorder->MarkIncomplete(read.message());
    (void)recorder->Finish();
    return read;
  }
  // A stop (SIGTERM) during the hash of a large file ends it at once: the
  // file was read whole, the run is stored without its hash.
  // Several files have no one hash: none is kept.
  StatusOr<std::string> sha256 =
      paths.size() == 1 ? Sha256OfFile(trace_path, options.stop)
                        : StatusOr<std::string>(std::string());
  if (sha256.ok()) {
    if (!sha256->empty()) recorder->SetSourceSha256(std::move(*sha256));
  } else if (options.stop == nullptr || !options.stop->load()) {
    recorder->MarkIncomplete(sha256.status().message());
    (void)recorder->Finish();
    return sha256.status();
  }
  RT_RETURN_IF_ERROR(recorder->Finish());
  result.run_id = recorder->run_id();
  result.kernels = recorder->kernels_stored();
  // A live buffer goes once the run holds everything it held: the file was
  // read to its end and every write was stored. (A run with a recovered
  // session is incomplete by nature, its producer sent no Goodbye; reading
  // the file again would add nothing.) Otherwise it stays for the next
  // ingest, which the message asks for.
  if (!result.interrupted && !result.cut_short) {
    for (const std::string& live : result.live_buffers_read) {
      unlink(live.c_str());
    }
  }
  return result;
}

}  // namespace

StatusOr<IngestResult> IngestTraceFile(const std::string& trace_path,
                                       RunSink* sink,
                                       const IngestOptions& options) {
  return IngestInto(
      {trace_path},
      {options.shown_name.empty() ? trace_path : options.shown_name}, sink,
      options);
}

StatusOr<IngestResult> IngestTraceFile(const std::string& trace_path,
                                       const std::string& store_path,
                                       const IngestOptions& options,
                                       Store::Durability durability) {
  // The file is checked before the store is created or touched.
  RT_RETURN_IF_ERROR(CheckTraceFile(trace_path));
  StatusOr<std::unique_ptr<Store>> store = Store::Open(store_path, durability);
  if (!store.ok()) {
    // Nothing was begun: a store that cannot be opened is bad input.
    return InvalidArgument(store.status().message());
  }
  (*store)->set_store_kernels(options.store_kernels);
  return IngestTraceFile(trace_path, store->get(), options);
}

StatusOr<IngestResult> IngestTraceFiles(
    const std::vector<std::string>& trace_paths,
    const std::vector<std::string>& shown_names,
    const std::string& store_path, const IngestOptions& options) {
  if (trace_paths.empty() || shown_names.size() != trace_paths.size()) {
    return InvalidArgument("no trace file to ingest");
  }
  // The files are checked before the store is created or touched.
  for (const std::string& path : trace_paths) {
    RT_RETURN_IF_ERROR(CheckTraceFile(path));
  }
  StatusOr<std::unique_ptr<Store>> store = Store::Open(store_path);
  if (!store.ok()) {
    // Nothing was begun: a store that cannot be opened is bad input.
    return InvalidArgument(store.status().message());
  }
  (*store)->set_store_kernels(options.store_kernels);
  if (options.recovers_run != 0) {
    RT_RETURN_IF_ERROR((*store)->ReplaceWhenFinished(options.recovers_run));
  }
  StatusOr<IngestResult> result =
      IngestInto(trace_paths, shown_names, store->get(), options);
  if (result.ok()) result->replace_note = (*store)->replace_note();
  return result;
}

}  // namespace rooftrace
