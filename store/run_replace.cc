#include "store/run_replace.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "store/db.h"
#include "store/run_lease.h"
#include "store/store.h"

namespace rooftrace {
namespace {

// `sql` prepared with `params` bound to its placeholders in order.
StatusOr<std::unique_ptr<DbStatement>> Bound(
    Db* db, const std::string& sql, std::initializer_list<int64_t> params) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<DbStatement> q, db->Prepare(sql));
  q->Reset();
  int at = 0;
  for (const int64_t v : params) q->BindInt(++at, v);
  return q;
}

// The integer `sql` (with `params` bound) answers: its first column of its
// first row; -1 for no row or NULL.
StatusOr<int64_t> QueryInt(Db* db, const std::string& sql,
                           std::initializer_list<int64_t> params) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<DbStatement> q, Bound(db, sql, params));
  RT_ASSIGN_OR_RETURN(const bool row, q->Step());
  if (!row || q->ColumnType(0) == DbType::kNull) return int64_t{-1};
  return q->Int(0);
}

// Runs `sql` (with `params` bound) to its end.
Status Run(Db* db, const std::string& sql,
           std::initializer_list<int64_t> params) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<DbStatement> q, Bound(db, sql, params));
  for (;;) {
    RT_ASSIGN_OR_RETURN(const bool row, q->Step());
    if (!row) return OkStatus();
  }
}

std::string RunName(int64_t run) { return "run " + std::to_string(run); }

}  // namespace

Status CheckReplaceableRun(Db* db, const std::string& lease_path,
                           int64_t twin) {
  const std::string fix =
      ": give --recovers-run the run the collector named with the raw "
      "streams, or leave it out to store them as a new run";
  // 0: no such run; 1: incomplete (complete 0 or unset); 2: complete.
  StatusOr<int64_t> state = QueryInt(
      db,
      "SELECT COUNT(*) + COALESCE(MAX(CASE WHEN complete = 1 THEN 1 ELSE 0 "
      "END), 0) FROM runs WHERE run_id = ?",
      {twin});
  if (!state.ok()) {
    return InvalidArgument(db->name() + ": cannot read " + RunName(twin) +
                           ": " + state.status().message());
  }
  if (*state == 0) {
    return InvalidArgument(db->name() + " holds no " + RunName(twin) + fix);
  }
  if (*state == 2) {
    return InvalidArgument(db->name() + ": " + RunName(twin) +
                           " is complete: there is nothing to recover" + fix);
  }
  // A run whose `complete` is unset may still be being written: never
  // taken from a live writer.
  if (!RunsBeingWritten(db, lease_path, {twin}).empty()) {
    return InvalidArgument(db->name() + ": " + RunName(twin) +
                           " is being written by another process now: "
                           "store the streams once that process has ended");
  }
  return OkStatus();
}

Status ReplaceTwinRun(Db* db, int64_t twin, int64_t run,
                      uint64_t write_failures, std::string* note) {
  const std::string kept = "incomplete " + RunName(twin) + " is kept: ";
  if (write_failures != 0) {
    *note = kept + "this run lost writes too";
    return OkStatus();
  }
  // The producer of a session is its host, pid and start time (its Hello).
  const std::string same_producer =
      "COALESCE(r.host, '') = COALESCE(t.host, '') AND r.pid = t.pid AND "
      "r.start_unix_ns = t.start_unix_ns";
  // The twin's sessions that this run does not hold at all...
  RT_ASSIGN_OR_RETURN(
      const int64_t foreign,
      QueryInt(db,
               "SELECT COUNT(*) FROM sessions t WHERE t.run_id = ? AND NOT "
               "EXISTS (SELECT 1 FROM sessions r WHERE r.run_id = ? AND " +
                   same_producer + ")",
               {twin, run}));
  if (foreign > 0) {
    *note = kept + "it holds " + std::to_string(foreign) +
            " session(s) the streams do not (stored whole before the "
            "failure), so replacing it would lose them";
    return OkStatus();
  }
  // ... or holds fewer of their kernels or NVTX ranges than the twin: a
  // stream cut shorter than what the twin stored, or an ingest stopped
  // early.
  // (Completeness is no test: a producer that ended without a Goodbye
  // leaves both runs incomplete, the recovered one holding all of it.)
  const auto rows = [](const char* table, const char* s) {
    return std::string("(SELECT COUNT(*) FROM ") + table + " x WHERE " +
           "x.run_id = " + s + ".run_id AND x.session_id = " + s +
           ".session_id)";
  };
  // kernel_rows has no index on run_id (schema 9): a run's rows are read
  // within its run_kernel_ids range, not by scanning every run's.
  const auto kernels = [](const char* s) {
    return std::string("(SELECT COUNT(*) FROM kernel_rows x, run_kernel_ids "
                       "k WHERE k.run_id = ") + s + ".run_id AND x.kernel_id "
           "BETWEEN k.first_kernel_id AND k.last_kernel_id AND x.run_id = " +
           s + ".run_id AND x.session_id = " + s + ".session_id)";
  };
  RT_ASSIGN_OR_RETURN(
      const int64_t shorter,
      QueryInt(db,
               "SELECT COUNT(*) FROM sessions t WHERE t.run_id = ? AND NOT "
               "EXISTS (SELECT 1 FROM sessions r WHERE r.run_id = ? AND " +
                   same_producer + " AND " + kernels("r") + " >= " +
                   kernels("t") + " AND " +
                   rows("nvtx_ranges", "r") + " >= " +
                   rows("nvtx_ranges", "t") + ")",
               {twin, run}));
  if (shorter > 0) {
    *note = kept + "the streams hold less of " + std::to_string(shorter) +
            " of its session(s) than it does (cut short, or the ingest was "
            "stopped)";
    return OkStatus();
  }
  // Labels the command did not give again come from the twin.
  RT_RETURN_IF_ERROR(Run(db,
                         "INSERT INTO run_labels (run_id, key, value) SELECT "
                         "?, key, value FROM run_labels t WHERE t.run_id = ? "
                         "ON CONFLICT (run_id, key) DO NOTHING",
                         {run, twin}));
  // Every table that has rows per run (whatever the schema version holds),
  // the run row last; kernel_rows first, within the twin's range while
  // its run_kernel_ids row is there to give it.
  RT_RETURN_IF_ERROR(Run(db,
                         "DELETE FROM kernel_rows WHERE kernel_id IN (SELECT "
                         "x.kernel_id FROM kernel_rows x, run_kernel_ids k "
                         "WHERE k.run_id = ? AND x.kernel_id BETWEEN "
                         "k.first_kernel_id AND k.last_kernel_id AND "
                         "x.run_id = k.run_id)",
                         {twin}));
  RT_ASSIGN_OR_RETURN(const std::vector<std::string> tables, db->Tables());
  for (const std::string& table : tables) {
    if (table == "runs" || table == "kernel_rows" ||
        !db->HasColumn(table, "run_id")) {
      continue;
    }
    RT_RETURN_IF_ERROR(
        Run(db, "DELETE FROM " + table + " WHERE run_id = ?", {twin}));
  }
  RT_RETURN_IF_ERROR(Run(db, "DELETE FROM runs WHERE run_id = ?", {twin}));
  *note = "it replaces incomplete " + RunName(twin);
  return OkStatus();
}

std::string RecoversRunWords(int64_t twin) {
  return twin > 0 ? " --recovers-run " + std::to_string(twin) : "";
}

Status Store::ReplaceWhenFinished(int64_t twin) {
  RT_RETURN_IF_ERROR(CheckReplaceableRun(db_.get(), lease_path_, twin));
  if (Status s = twin_lease_.Take(db_.get(), lease_path_, twin); !s.ok()) {
    return InvalidArgument(path_ + ": cannot hold " + RunName(twin) +
                           " while its streams are stored: " + s.message());
  }
  twin_ = twin;
  replace_note_.clear();
  return OkStatus();
}

Status Store::FinishReplace(int64_t run_id, const ImportStats& stats) {
  if (twin_ == 0 || twin_ == run_id) return OkStatus();
  // The run's last rows and its kernel id range go in first: the twin is
  // judged against what this run holds in the store.
  RT_RETURN_IF_ERROR(FlushKernels());
  RT_RETURN_IF_ERROR(UpdateKernelIds());
  return ReplaceTwinRun(db_.get(), twin_, run_id,
                        stats[ImportStat::k_store_write_failures] +
                            stats[ImportStat::k_kernels_not_stored] +
                            stats[ImportStat::k_nvtx_ranges_not_stored],
                        &replace_note_);
}

}  // namespace rooftrace
