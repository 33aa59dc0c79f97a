// The PostgreSQL backend of store/db.h, through libpq: a shared store that
// many collectors write at once. Statements are prepared on the server
// once per connection; values travel as text (the server parses them as
// the column's type), results come back as text and are parsed here.
#include <libpq-fe.h>
#include <poll.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/url_secrets.h"
#include "store/db.h"

namespace rooftrace {
namespace {

// Type oids of the server's catalog (pg_type), fixed since PostgreSQL 7.
constexpr Oid kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kOidOid = 26;
constexpr Oid kFloat4Oid = 700, kFloat8Oid = 701, kNumericOid = 1700;

// Rows a streaming statement fetches at a time.
constexpr int kFetchRows = 4096;

// libpq's messages may span lines and end in a newline; ours are one line.
std::string Trim(const char* message) {
  std::string s;
  for (const char* p = message ? message : "unknown error"; *p; ++p) {
    if (*p == '\n' || *p == '\t') {
      if (!s.empty() && s.back() != ' ') s += ' ';
    } else {
      s += *p;
    }
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

// Writes queued before their results are read (kQueueWrites at most).
constexpr int kQueueWrites = 256;

// How often a wait for the server looks at the stop check, and how long a
// server may stay silent after a stop before its statement is cancelled.
// A wait begun more than kStopGraceMs after the stop (another
// connection's, the run's last update) gives up after kLateGraceMs of
// silence, so that all of them together end within about a second.
constexpr int kPollSliceMs = 100;
constexpr int64_t kStopGraceMs = 1000;
constexpr int64_t kLateGraceMs = 200;
// How long a cancel request may take before the command goes on without
// its answer (PQcancel waits for the server to close the request's
// connection, which a server that never answers does not do).
constexpr int kCancelWaitMs = 200;

std::atomic<bool (*)()> g_stop_check{nullptr};
// When a wait first saw the stop (steady ms; 0: not yet).
std::atomic<int64_t> g_stop_seen_ms{0};

bool StopAsked() {
  bool (*stopped)() = g_stop_check.load();
  return stopped != nullptr && stopped();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits up to `ms` for `events` on `fd`: >0 ready, 0 not yet, <0 an error
// (errno; EINTR, a signal, counts as not yet).
int PollFor(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  const int n = poll(&p, 1, ms);
  if (n < 0 && errno == EINTR) return 0;
  return n;
}

// Asks the server to cancel what `conn` runs. libpq's PQcancel connects
// to the server again and waits for it to close that connection, which a
// server that accepts and never answers does not do: it runs on a thread
// of its own, waited for at most kCancelWaitMs and then left behind (it
// holds only its PGcancel, freed when it ends).
void CancelStatement(PGconn* conn) {
  PGcancel* cancel = PQgetCancel(conn);
  if (cancel == nullptr) return;
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto done = std::make_shared<Done>();
  std::thread([cancel, done] {
    char error[256];
    (void)PQcancel(cancel, error, sizeof error);
    PQfreeCancel(cancel);
    std::lock_guard<std::mutex> lock(done->mu);
    done->done = true;
    done->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(done->mu);
  done->cv.wait_for(lock, std::chrono::milliseconds(kCancelWaitMs),
                    [&] { return done->done; });
}

// The connection, and what is in flight on it.
//
// Every wait for the server goes through Await(): the connection is in
// libpq's nonblocking mode, and the socket is polled in slices of
// kPollSliceMs, so that a server that says nothing (paused, or not a
// PostgreSQL server at all) is given up on: after answer_ms of silence,
// or a second after the command was asked to stop (SetDbStopCheck). The
// statement is then cancelled and the connection marked failed: every
// later call on it fails at once with the same reason.
//
// Writes: a statement that returns nothing, run inside a transaction (a
// batch's inserts), is sent in libpq's pipeline mode and its result read
// later, so a batch of rows costs one round trip instead of one per row.
// Anything that needs an answer first reads every queued result (Sync());
// an error among them is returned there, and the transaction it aborted
// fails its COMMIT.
//
// COPY: a COPY's rows are sent and its verdict read later (copy_pending),
// so that the server stores one batch while the caller builds the next
// (client and server each took about half of a kernel row's wall time,
// one after the other). Anything that uses the connection reads it first
// (Land()); a refused COPY is returned by the next Sync() (Commit's), and
// its transaction is aborted in any case.
//
// Reads: when a cursor's batch comes back full, the FETCH of its next
// batch is sent at once (SendAhead), so that the server makes that batch
// while the caller reads this one (on a 2-core machine the server's share
// of history --check no longer adds to the client's). The cursor's next
// step takes it (TakeAhead); anything else that uses the connection first
// reads its answer and keeps it for the cursor (Land()). One FETCH ahead
// at a time.
struct PgConn {
  PGconn* conn = nullptr;
  int queued = 0;
  // Each call that waits for the server's answer (Db::RoundTrips).
  int64_t round_trips = 0;
  // The cursor a FETCH was sent ahead for (empty: none); whether its
  // answer is still to be read, and the answer once read.
  std::string ahead_cursor;
  bool ahead_pending = false;
  Result ahead;
  // The longest silence of the server inside one wait (0: no limit).
  int64_t answer_ms = 0;
  // Set once a wait was given up: why. The connection is then unusable.
  Status failed;
  // A COPY whose data was all sent and whose result is still to be read,
  // and the error of one that was refused, until Sync() returns it.
  bool copy_pending = false;
  Status copy_error;

  // The error text for a failed call: why a wait was given up, else the
  // result's (null: the connection's) message.
  std::string ErrorText(const PGresult* r) const {
    if (!failed.ok()) return std::string(failed.message());
    return Trim(r != nullptr ? PQresultErrorMessage(r) : PQerrorMessage(conn));
  }

  // Sends what libpq holds and waits until PQgetResult() will not block,
  // within the limits above.
  Status Await() {
    if (!failed.ok()) return failed;
    int64_t heard = NowMs();  // when the server last showed life
    for (;;) {
      const int unsent = PQflush(conn);
      if (unsent < 0) return Broken();
      if (unsent == 0 && PQisBusy(conn) == 0) return OkStatus();
      const int ready =
          PollFor(PQsocket(conn),
                  static_cast<short>(POLLIN | (unsent > 0 ? POLLOUT : 0)),
                  kPollSliceMs);
      if (ready < 0) return Broken();
      const int64_t now = NowMs();
      if (ready > 0) {
        if (PQconsumeInput(conn) != 1) return Broken();
        heard = now;
      }
      if (StopAsked()) {
        int64_t first = 0;
        (void)g_stop_seen_ms.compare_exchange_strong(first, now);
        first = g_stop_seen_ms.load();
        const int64_t grace =
            now >= first + kStopGraceMs ? kLateGraceMs : kStopGraceMs;
        if (now - std::max(heard, first) >= grace) {
          return GiveUp(
              "interrupted: asked to stop while the server was not "
              "answering; its statement was cancelled");
        }
      }
      if (answer_ms > 0 && now - heard >= answer_ms) {
        return GiveUp("the server did not answer for " +
                      std::to_string(answer_ms / 1000) +
                      " s; its statement was cancelled (raise the limit "
                      "with ROOFTRACE_DB_TIMEOUT_S=SECONDS)");
      }
    }
  }
  Status GiveUp(const std::string& why) {
    CancelStatement(conn);
    failed = Unavailable(why);
    return failed;
  }
  Status Broken() {
    failed = Unavailable(Trim(PQerrorMessage(conn)));
    return failed;
  }
  // The next result of what was sent (null at its end, or when the wait
  // was given up: `failed` then says why).
  PGresult* NextResult() {
    if (!Await().ok()) return nullptr;
    return PQgetResult(conn);
  }
  // What PQexec() gives for what was sent: the last result, or the first
  // error; null when the wait was given up or nothing could be sent.
  Result Collect(bool sent) {
    if (!sent) {
      if (failed.ok() && PQstatus(conn) == CONNECTION_BAD) (void)Broken();
      return nullptr;
    }
    Result last;
    while (PGresult* r = NextResult()) {
      const ExecStatusType status = PQresultStatus(r);
      if (last != nullptr && PQresultStatus(last.get()) == PGRES_FATAL_ERROR) {
        PQclear(r);
      } else {
        last.reset(r);
      }
      // As PQexec: a COPY hands the connection over to the copy (libpq
      // gives its COPY result again until the data is sent).
      if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT ||
          status == PGRES_COPY_BOTH) {
        break;
      }
    }
    if (!failed.ok()) return nullptr;
    return last;
  }

  // Everything that waits for an answer goes through these, so that it is
  // counted and finds the connection idle.
  Result Exec(const std::string& sql) {
    Land();
    ++round_trips;
    return Collect(failed.ok() && PQsendQuery(conn, sql.c_str()) == 1);
  }
  Result ExecParams(const std::string& sql, int n,
                    const char* const* values) {
    Land();
    ++round_trips;
    return Collect(failed.ok() &&
                   PQsendQueryParams(conn, sql.c_str(), n, nullptr, values,
                                     nullptr, nullptr, 0) == 1);
  }
  Result ExecPrepared(const std::string& name, int n,
                      const char* const* values) {
    Land();
    ++round_trips;
    return Collect(failed.ok() &&
                   PQsendQueryPrepared(conn, name.c_str(), n, values, nullptr,
                                       nullptr, 0) == 1);
  }
  Result Prepare(const std::string& name, const std::string& sql) {
    Land();
    ++round_trips;
    return Collect(failed.ok() && PQsendPrepare(conn, name.c_str(),
                                                sql.c_str(), 0, nullptr) == 1);
  }

  // Sends `fetch` for `cursor` without waiting for it; false (nothing
  // sent) while another FETCH is ahead or writes are queued.
  bool SendAhead(const std::string& cursor, const std::string& fetch) {
    if (!failed.ok() || !ahead_cursor.empty() || Pipelining() ||
        copy_pending) {
      return false;
    }
    if (PQsendQuery(conn, fetch.c_str()) != 1) return false;
    ++round_trips;
    ahead_cursor = cursor;
    ahead_pending = true;
    return true;
  }
  // Reads the answer of the FETCH ahead, if still in flight, into `ahead`
  // (null when the connection broke).
  void Land() {
    LandCopy();
    if (!ahead_pending) return;
    ahead_pending = false;
    ahead.reset();
    while (PGresult* r = NextResult()) {
      if (ahead == nullptr) {
        ahead.reset(r);
      } else {
        PQclear(r);
      }
    }
  }
  // True when a FETCH was sent ahead for `cursor`: its answer into `*out`.
  bool TakeAhead(const std::string& cursor, Result* out) {
    if (ahead_cursor.empty() || ahead_cursor != cursor) return false;
    Land();
    ahead_cursor.clear();
    *out = std::move(ahead);
    return true;
  }
  // Forgets a FETCH sent ahead for `cursor` (it is being closed).
  void DropAhead(const std::string& cursor) {
    Result unused;
    (void)TakeAhead(cursor, &unused);
  }

  bool Pipelining() const {
    return PQpipelineStatus(conn) != PQ_PIPELINE_OFF;
  }
  // Reads the verdict of the COPY sent last, if still to be read; its
  // error is kept for Sync().
  void LandCopy() {
    if (!copy_pending) return;
    copy_pending = false;
    Result done = Collect(true);
    if ((done == nullptr || PQresultStatus(done.get()) != PGRES_COMMAND_OK) &&
        copy_error.ok()) {
      copy_error = Unavailable(ErrorText(done.get()));
    }
  }
  // Sends `copy` (a COPY ... FROM STDIN) with `data` as its rows, after the
  // queued writes (a COPY cannot be pipelined) and the COPY before it: one
  // round trip to start it; its verdict is read later (copy_pending).
  Status CopyIn(const std::string& copy, std::string_view data) {
    RT_RETURN_IF_ERROR(Sync());
    Land();
    ++round_trips;
    Result started = Collect(failed.ok() &&
                             PQsendQuery(conn, copy.c_str()) == 1);
    if (started == nullptr) return Unavailable(ErrorText(nullptr));
    if (PQresultStatus(started.get()) != PGRES_COPY_IN) {
      return Unavailable(ErrorText(started.get()));
    }
    // Nonblocking: libpq takes the data as its buffer allows; Await()
    // below sends the rest and waits for the server's verdict.
    size_t sent = 0;
    while (sent < data.size()) {
      const int n = static_cast<int>(
          std::min<size_t>(data.size() - sent, size_t{1} << 20));
      const int rc = PQputCopyData(conn, data.data() + sent, n);
      if (rc < 0) return Broken();
      if (rc == 0) {
        if (PQflush(conn) < 0) return Broken();
        (void)PollFor(PQsocket(conn), POLLOUT, kPollSliceMs);
        continue;
      }
      sent += static_cast<size_t>(n);
    }
    int ended = 0;
    while ((ended = PQputCopyEnd(conn, nullptr)) == 0) {
      if (PQflush(conn) < 0) return Broken();
      (void)PollFor(PQsocket(conn), POLLOUT, kPollSliceMs);
    }
    if (ended < 0) return Broken();
    // All of it into the socket, so that the server has it while we go on.
    int unsent = 0;
    while ((unsent = PQflush(conn)) > 0) {
      (void)PollFor(PQsocket(conn), POLLOUT, kPollSliceMs);
    }
    if (unsent < 0) return Broken();
    copy_pending = true;
    return OkStatus();
  }
  Status Queue(const char* name, int n, const char* const* values) {
    Land();
    if (!failed.ok()) return failed;
    if (!Pipelining() && PQenterPipelineMode(conn) != 1) {
      return Unavailable(Trim(PQerrorMessage(conn)));
    }
    if (PQsendQueryPrepared(conn, name, n, values, nullptr, nullptr, 0) !=
        1) {
      Status e = Unavailable(Trim(PQerrorMessage(conn)));
      (void)Sync();
      return e;
    }
    return ++queued >= kQueueWrites ? Sync() : OkStatus();
  }
  // Reads the results of the queued writes: the first error among them.
  Status Sync() {
    Land();
    Status first = std::exchange(copy_error, OkStatus());
    if (!Pipelining()) return first;
    ++round_trips;
    if (!failed.ok()) {
      if (first.ok()) first = failed;
    } else if (PQpipelineSync(conn) != 1) {
      if (first.ok()) first = Unavailable(Trim(PQerrorMessage(conn)));
    } else {
      // Each write's result is followed by a null; the sync ends it all.
      int nulls = 0;
      while (true) {
        PGresult* r = NextResult();
        if (r == nullptr) {
          if (!failed.ok()) {
            if (first.ok()) first = failed;
            break;
          }
          if (++nulls > queued + 1 || PQstatus(conn) == CONNECTION_BAD) {
            if (first.ok()) first = Unavailable(Trim(PQerrorMessage(conn)));
            break;
          }
          continue;
        }
        const ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_FATAL_ERROR && first.ok()) {
          first = Unavailable(Trim(PQresultErrorMessage(r)));
        }
        PQclear(r);
        if (st == PGRES_PIPELINE_SYNC) break;
      }
    }
    queued = 0;
    // Only an idle connection leaves pipeline mode; one given up on stays
    // failed anyway.
    if (failed.ok()) (void)PQexitPipelineMode(conn);
    return first;
  }
};

// The length of the valid UTF-8 sequence at the start of `s`, 0 if none.
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0x01 && c < 0x80) return 1;  // NUL is no character to PostgreSQL
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;
    if (c == 0xF4 && b(1) >= 0x90) return 0;
    return 4;
  }
  return 0;
}

// `v` into `out` as PostgreSQL's text takes it: valid UTF-8 without NUL.
// A byte that is not (an application's NVTX name in another encoding) is
// stored as U+FFFD, so one odd name does not fail a whole run's write.
void AssignUtf8(std::string_view v, std::string* out) {
  out->clear();
  size_t i = 0;
  while (i < v.size()) {
    const size_t n = Utf8Length(v.substr(i));
    if (n == 0) {
      *out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out->append(v.data() + i, n);
      i += n;
    }
  }
}

class PgStatement : public DbStatement {
 public:
  PgStatement(PgConn* pg, std::string name, std::string sql, int params,
              Db::Fetch fetch, bool returns_id, std::string cursor)
      : pg_(pg),
        conn_(pg->conn),
        name_(std::move(name)),
        sql_(std::move(sql)),
        fetch_(fetch),
        returns_id_(returns_id),
        cursor_(std::move(cursor)),
        values_(params),
        nulls_(params, true),
        pointers_(params) {
    // A write that returns nothing may be queued (PgConn).
    size_t i = sql_.find_first_not_of(" \n");
    const std::string verb = sql_.substr(i == std::string::npos ? 0 : i, 6);
    queueable_ = fetch_ == Db::Fetch::kAll && !returns_id_ &&
                 (verb == "INSERT" || verb == "UPDATE" || verb == "DELETE") &&
                 sql_.find("RETURNING") == std::string::npos;
  }
  ~PgStatement() override {
    Reset();
    (void)pg_->Sync();
    if (!name_.empty()) {
      Result r = pg_->Exec("DEALLOCATE " + name_);
    }
  }

  void BindInt(int i, int64_t v) override {
    if (!Valid(i)) return;
    char buf[24];
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    values_[i - 1] = buf;
    nulls_[i - 1] = false;
  }
  void BindReal(int i, double v) override {
    if (!Valid(i)) return;
    if (std::isnan(v)) return BindNull(i);  // as SQLite stores it
    if (std::isinf(v)) {
      values_[i - 1] = v > 0 ? "Infinity" : "-Infinity";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v);  // round-trips exactly
      values_[i - 1] = buf;
    }
    nulls_[i - 1] = false;
  }
  void BindText(int i, std::string_view v) override {
    if (!Valid(i)) return;
    AssignUtf8(v, &values_[i - 1]);
    nulls_[i - 1] = false;
  }
  void BindNull(int i) override {
    if (!Valid(i)) return;
    nulls_[i - 1] = true;
  }

  StatusOr<bool> Step() override {
    if (!started_) Start();
    RT_RETURN_IF_ERROR(start_error_);
    if (!result_) return false;
    if (++row_ < PQntuples(result_.get())) return true;
    // A full batch of a cursor: there may be more.
    if (fetch_ == Db::Fetch::kStream && cursor_open_ &&
        PQntuples(result_.get()) == kFetchRows) {
      RT_RETURN_IF_ERROR(FetchBatch());
      row_ = 0;
      return PQntuples(result_.get()) > 0;
    }
    return false;
  }
  void Reset() override {
    result_.reset();
    if (cursor_open_) {
      pg_->DropAhead(cursor_);
      (void)pg_->Sync();
      Result r = pg_->Exec("CLOSE " + cursor_);
      cursor_open_ = false;
    }
    started_ = false;
    start_error_ = OkStatus();
    inserted_.reset();
    row_ = -1;
  }
  std::optional<int64_t> InsertedId() override { return inserted_; }

  // Before the first Step() these run the statement (its first rows are
  // then what Step() reads); an error is returned by that Step().
  int ColumnCount() override {
    if (!started_) Start();
    return result_ ? PQnfields(result_.get()) : 0;
  }
  std::string ColumnName(int col) override {
    if (!started_) Start();
    return result_ ? PQfname(result_.get(), col) : "";
  }
  DbType ColumnType(int col) override {
    if (PQgetisnull(result_.get(), row_, col)) return DbType::kNull;
    switch (PQftype(result_.get(), col)) {
      case kInt8Oid: case kInt4Oid: case kInt2Oid: case kOidOid:
        return DbType::kInt;
      case kFloat8Oid: case kFloat4Oid: case kNumericOid:
        return DbType::kReal;
      default:
        return DbType::kText;
    }
  }
  int64_t Int(int col) override {
    if (PQgetisnull(result_.get(), row_, col)) return 0;
    const char* v = PQgetvalue(result_.get(), row_, col);
    if (ColumnType(col) == DbType::kReal) {
      return static_cast<int64_t>(std::strtod(v, nullptr));
    }
    return std::strtoll(v, nullptr, 10);
  }
  double Real(int col) override {
    if (PQgetisnull(result_.get(), row_, col)) return 0;
    return std::strtod(PQgetvalue(result_.get(), row_, col), nullptr);
  }
  std::string_view Text(int col) override {
    if (PQgetisnull(result_.get(), row_, col)) return {};
    const char* v = PQgetvalue(result_.get(), row_, col);
    const Oid type = PQftype(result_.get(), col);
    if (type != kFloat8Oid && type != kFloat4Oid) {
      return std::string_view(
          v, static_cast<size_t>(PQgetlength(result_.get(), row_, col)));
    }
    // A real as SQLite prints it, so that exports of both backends match.
    // Sized for every column at once: growing it would move the texts of
    // the row's other columns, which callers may still hold (an export
    // reads the whole row before writing it).
    if (text_.size() <= static_cast<size_t>(col)) {
      text_.resize(std::max<size_t>(col + 1, PQnfields(result_.get())));
    }
    char* s = sqlite3_mprintf("%!.15g", std::strtod(v, nullptr));
    text_[col] = s ? s : "";
    sqlite3_free(s);
    return text_[col];
  }

 private:
  bool Valid(int i) const {
    return i >= 1 && static_cast<size_t>(i) <= values_.size();
  }
  const char* const* Params() {
    for (size_t i = 0; i < values_.size(); ++i) {
      pointers_[i] = nulls_[i] ? nullptr : values_[i].c_str();
    }
    return pointers_.data();
  }
  Status Error(const PGresult* r) {
    return Unavailable(pg_->ErrorText(r));
  }
  Status Run() {
    pg_->Land();  // the connection's status below is then its own
    const int n = static_cast<int>(values_.size());
    // Inside a transaction (a batch), a write is queued: no result to wait
    // for now.
    if (queueable_ &&
        (pg_->Pipelining() || PQtransactionStatus(conn_) == PQTRANS_INTRANS)) {
      return pg_->Queue(name_.c_str(), n, Params());
    }
    RT_RETURN_IF_ERROR(pg_->Sync());
    if (fetch_ == Db::Fetch::kStream) {
      // A cursor over the query, read a batch at a time; it lives in the
      // reader's transaction.
      Result r = pg_->ExecParams(
          "DECLARE " + cursor_ + " NO SCROLL CURSOR FOR " + sql_, n, Params());
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return Error(r.get());
      cursor_open_ = true;
      return FetchBatch();
    }
    result_ = pg_->ExecPrepared(name_, n, Params());
    const ExecStatusType st = PQresultStatus(result_.get());
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      Status e = Error(result_.get());
      result_.reset();
      return e;
    }
    if (returns_id_) {
      // INSERT ... RETURNING id: one row, or none when ON CONFLICT DO
      // NOTHING inserted nothing.
      if (PQntuples(result_.get()) > 0 && !PQgetisnull(result_.get(), 0, 0)) {
        inserted_ = std::strtoll(PQgetvalue(result_.get(), 0, 0), nullptr, 10);
      }
      result_.reset();
    }
    return OkStatus();
  }
  Status FetchBatch() {
    const std::string fetch =
        "FETCH " + std::to_string(kFetchRows) + " FROM " + cursor_;
    if (!pg_->TakeAhead(cursor_, &result_)) {
      RT_RETURN_IF_ERROR(pg_->Sync());
      result_ = pg_->Exec(fetch);
    }
    if (PQresultStatus(result_.get()) != PGRES_TUPLES_OK) {
      Status e = Error(result_.get());
      result_.reset();
      return e;
    }
    // A full batch: there may be more, which the server makes meanwhile.
    if (PQntuples(result_.get()) == kFetchRows) {
      (void)pg_->SendAhead(cursor_, fetch);
    }
    return OkStatus();
  }
  void Start() {
    started_ = true;
    row_ = -1;
    start_error_ = Run();
  }

  PgConn* pg_;
  PGconn* conn_;
  std::string name_;
  std::string sql_;
  Db::Fetch fetch_;
  bool returns_id_;
  bool queueable_ = false;
  std::string cursor_;
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
  std::vector<const char*> pointers_;
  Result result_;
  Status start_error_;
  bool started_ = false;
  bool cursor_open_ = false;
  int row_ = -1;
  std::optional<int64_t> inserted_;
  std::vector<std::string> text_;
};

class PgDb : public Db {
 public:
  PgDb(PGconn* conn, std::string name, int64_t answer_ms)
      : conn_(conn), name_(std::move(name)) {
    pg_.conn = conn;
    pg_.answer_ms = answer_ms;
  }
  ~PgDb() override {
    (void)pg_.Sync();
    PQfinish(conn_);
  }

  DbBackend backend() const override { return DbBackend::kPostgres; }
  const std::string& name() const override { return name_; }
  std::string ErrorMessage() override { return pg_.ErrorText(nullptr); }

  Status Exec(std::string_view sql) override {
    RT_RETURN_IF_ERROR(pg_.Sync());
    Result r = pg_.Exec(PostgresSql(sql));
    const ExecStatusType st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      return Unavailable(pg_.ErrorText(r.get()));
    }
    return OkStatus();
  }
  StatusOr<std::unique_ptr<DbStatement>> Prepare(std::string_view sql,
                                                 Fetch fetch) override {
    return PrepareStatement(PostgresSql(sql), fetch, false);
  }
  StatusOr<std::unique_ptr<DbStatement>> PrepareInsert(
      std::string_view sql, std::string_view id_column) override {
    return PrepareStatement(
        PostgresSql(sql) + " RETURNING " + std::string(id_column),
        Fetch::kAll, true);
  }

  Status Begin() override { return Exec("BEGIN"); }
  Status Commit() override {
    // A queued write that failed aborted the transaction.
    if (Status s = pg_.Sync(); !s.ok()) {
      (void)Rollback();
      return s;
    }
    // COMMIT of a transaction an error aborted "succeeds" as a ROLLBACK.
    if (PQtransactionStatus(conn_) == PQTRANS_INERROR) {
      (void)Rollback();
      return Unavailable(
          "the transaction was rolled back after an earlier error");
    }
    Result r = pg_.Exec("COMMIT");
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      Status e = Unavailable(pg_.ErrorText(r.get()));
      if (InTransaction()) (void)Rollback();
      return e;
    }
    if (std::strcmp(PQcmdStatus(r.get()), "ROLLBACK") == 0) {
      return Unavailable("the transaction was rolled back");
    }
    return OkStatus();
  }
  Status Rollback() override {
    (void)pg_.Sync();  // the error that brought us here was returned
    return Exec("ROLLBACK");
  }
  bool InTransaction() override {
    (void)pg_.Sync();  // an error there leaves the transaction aborted
    const PGTransactionStatusType st = PQtransactionStatus(conn_);
    return st == PQTRANS_INTRANS || st == PQTRANS_INERROR ||
           st == PQTRANS_ACTIVE;
  }
  Status LockSchema() override {
    // One key for every rooftrace store ("roof"): held to the end of the
    // transaction.
    return Exec("SELECT pg_advisory_xact_lock(1919905638)");
  }

  StatusOr<std::vector<std::string>> Tables() override {
    RT_RETURN_IF_ERROR(pg_.Sync());
    Result r = pg_.Exec(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_type = "
        "'BASE TABLE' ORDER BY table_name COLLATE \"C\"");
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      return Unavailable(pg_.ErrorText(r.get()));
    }
    std::vector<std::string> out;
    for (int i = 0; i < PQntuples(r.get()); ++i) {
      out.emplace_back(PQgetvalue(r.get(), i, 0));
    }
    return out;
  }
  bool HasColumn(std::string_view table, std::string_view column) override {
    const std::string t(table), c(column);
    const char* params[] = {t.c_str(), c.c_str()};
    if (!pg_.Sync().ok()) return false;
    Result r = pg_.ExecParams(
        "SELECT 1 FROM information_schema.columns WHERE "
        "table_schema = current_schema() AND table_name = $1 AND "
        "column_name = $2",
        2, params);
    return PQresultStatus(r.get()) == PGRES_TUPLES_OK &&
           PQntuples(r.get()) > 0;
  }
  bool ConcurrentWriters() const override { return true; }
  Status PrepareForWrites(bool) override { return OkStatus(); }
  int64_t RoundTrips() const override { return pg_.round_trips; }
  bool CanCopyRows() const override { return true; }
  Status CopyRows(std::string_view table, std::string_view columns,
                  int num_columns, const std::vector<DbCell>& cells) override {
    const std::string head =
        "COPY " + std::string(table) + " (" + std::string(columns) + ")";
    RT_ASSIGN_OR_RETURN(const std::vector<char>* kinds,
                        CopyKinds(table, columns, num_columns));
    if (BinaryCopyFits(*kinds, num_columns, cells)) {
      return pg_.CopyIn(head + " FROM STDIN (FORMAT binary)",
                        BinaryCopyData(*kinds, num_columns, cells));
    }
    return pg_.CopyIn(head + " FROM STDIN", TextCopyData(num_columns, cells));
  }

 private:
  StatusOr<std::unique_ptr<DbStatement>> PrepareStatement(
      const std::string& sql, Fetch fetch, bool returns_id) {
    RT_RETURN_IF_ERROR(pg_.Sync());
    int params = 0;
    for (size_t p = sql.find('$'); p != std::string::npos;
         p = sql.find('$', p + 1)) {
      params = std::max(params, std::atoi(sql.c_str() + p + 1));
    }
    std::string name;
    if (fetch == Fetch::kAll) {
      name = "rt_s" + std::to_string(++statements_);
      Result r = pg_.Prepare(name, sql);
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
        return Unavailable(pg_.ErrorText(r.get()));
      }
    }
    return std::unique_ptr<DbStatement>(
        new PgStatement(&pg_, name, sql, params, fetch, returns_id,
                        "rt_c" + std::to_string(++cursors_)));
  }

  // COPY's text format: tab-separated, \N for NULL, a row a line; a real
  // as BindReal writes it (round-trips exactly).
  const std::string& TextCopyData(int num_columns,
                                  const std::vector<DbCell>& cells) {
    std::string& data = copy_buf_;
    data.clear();
    char buf[32];
    for (size_t i = 0; i < cells.size(); ++i) {
      const DbCell& c = cells[i];
      if (i % num_columns != 0) data += '\t';
      if (c.type == DbType::kInt) {
        data.append(buf, std::to_chars(buf, buf + sizeof buf, c.i).ptr);
      } else if (c.type == DbType::kReal && !std::isnan(c.r)) {
        if (std::isinf(c.r)) {
          data += c.r > 0 ? "Infinity" : "-Infinity";
        } else {
          data.append(buf, static_cast<size_t>(std::snprintf(
                               buf, sizeof buf, "%.17g", c.r)));
        }
      } else {
        data += "\\N";
      }
      if (i % num_columns == static_cast<size_t>(num_columns) - 1) {
        data += '\n';
      }
    }
    return data;
  }

  // The PostgreSQL type of each of `columns` of `table`, as binary COPY
  // needs it: 'i' BIGINT, 'r' DOUBLE PRECISION, '?' another (text COPY
  // then). Asked once per table and columns, and kept.
  StatusOr<const std::vector<char>*> CopyKinds(std::string_view table,
                                               std::string_view columns,
                                               int num_columns) {
    std::string key = std::string(table) + "(" + std::string(columns) + ")";
    if (key == copy_kinds_key_) return &copy_kinds_;
    RT_RETURN_IF_ERROR(pg_.Sync());
    const std::string t(table);
    const char* params[] = {t.c_str()};
    Result r = pg_.ExecParams(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped",
        1, params);
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      return Unavailable(pg_.ErrorText(r.get()));
    }
    std::vector<char> kinds;
    size_t from = 0;
    for (int c = 0; c < num_columns; ++c) {
      size_t to = columns.find(',', from);
      if (to == std::string_view::npos) to = columns.size();
      std::string_view name = columns.substr(from, to - from);
      from = to + 1;
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name[0]))) {
        name.remove_prefix(1);
      }
      while (!name.empty() &&
             std::isspace(static_cast<unsigned char>(name.back()))) {
        name.remove_suffix(1);
      }
      char kind = '?';
      for (int row = 0; row < PQntuples(r.get()); ++row) {
        if (name != PQgetvalue(r.get(), row, 0)) continue;
        const std::string_view type = PQgetvalue(r.get(), row, 1);
        if (type == "bigint") kind = 'i';
        if (type == "double precision") kind = 'r';
      }
      kinds.push_back(kind);
    }
    copy_kinds_ = std::move(kinds);
    copy_kinds_key_ = std::move(key);
    return &copy_kinds_;
  }

  // Whether every cell goes into its column as binary COPY can write it:
  // an integer into BIGINT, a number into DOUBLE PRECISION (an integer
  // converted, as the server converts its text), NULL anywhere.
  static bool BinaryCopyFits(const std::vector<char>& kinds, int num_columns,
                             const std::vector<DbCell>& cells) {
    if (kinds.size() != static_cast<size_t>(num_columns)) return false;
    for (size_t i = 0; i < cells.size(); ++i) {
      const char kind = kinds[i % num_columns];
      const DbType type = cells[i].type;
      if (type == DbType::kNull) continue;
      if (kind == '?' || (kind == 'i' && type != DbType::kInt) ||
          (kind == 'r' && type != DbType::kInt && type != DbType::kReal)) {
        return false;
      }
    }
    return true;
  }

  // COPY's binary format: a header, then per row its number of fields and
  // each field's length (-1: NULL) and big-endian bytes, then -1. The
  // server reads the numbers as they are, without parsing text (about a
  // fifth of its time for a kernel row). A NaN is stored as NULL, as the
  // text format (and BindReal) do.
  const std::string& BinaryCopyData(const std::vector<char>& kinds,
                                    int num_columns,
                                    const std::vector<DbCell>& cells) {
    std::string& data = copy_buf_;
    data.clear();
    static constexpr char kHeader[] = "PGCOPY\n\377\r\n\0";
    data.append(kHeader, sizeof kHeader - 1);
    data.append(8, '\0');  // flags, header extension length
    const auto put = [&data](auto v) {
      char b[sizeof v];
      for (size_t k = 0; k < sizeof v; ++k) {
        b[k] = static_cast<char>(v >> (8 * (sizeof v - 1 - k)));
      }
      data.append(b, sizeof v);
    };
    const size_t rows = cells.size() / static_cast<size_t>(num_columns);
    data.reserve(19 + rows * (2 + static_cast<size_t>(num_columns) * 12) + 2);
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i % num_columns == 0) put(static_cast<uint16_t>(num_columns));
      const DbCell& c = cells[i];
      if (c.type == DbType::kNull ||
          (c.type == DbType::kReal && std::isnan(c.r))) {
        put(static_cast<uint32_t>(-1));
        continue;
      }
      put(uint32_t{8});
      if (kinds[i % num_columns] == 'i') {
        put(static_cast<uint64_t>(c.i));
      } else {
        const double r = c.type == DbType::kInt ? static_cast<double>(c.i)
                                                : c.r;
        uint64_t bits = 0;
        std::memcpy(&bits, &r, sizeof bits);
        put(bits);
      }
    }
    put(static_cast<uint16_t>(-1));
    return data;
  }

  PGconn* conn_;
  PgConn pg_;
  std::string copy_buf_;  // CopyRows' data, kept for its capacity
  // The columns' kinds CopyKinds() found last, for copy_kinds_key_.
  std::string copy_kinds_key_;
  std::vector<char> copy_kinds_;
  std::string name_;
  int statements_ = 0;
  int cursors_ = 0;
};

// Notices ("relation already exists, skipping") are not the user's
// business.
void IgnoreNotice(void*, const char*) {}

// libpq's `connect_timeout` as a limit in ms (libpq: 0 or less waits for
// ever, 1 is taken as 2); nullopt when `text` is not a number.
std::optional<int64_t> ConnectTimeoutMs(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return std::nullopt;
  if (v <= 0) return int64_t{0};
  return std::min<long long>(std::max<long long>(v, 2), 1LL << 40) * 1000;
}

// Connects to `url` without blocking, within `limits.connect_ms` and
// giving up at once when the command is asked to stop. Errors name the
// store by `name` and never quote the URL's password (libpq echoes a
// malformed URL, or the part of it it took for a host or a port).
StatusOr<PGconn*> Connect(const std::string& url, const std::string& name,
                          const DbWaitLimits& limits) {
  const std::vector<std::string> secrets = UrlPasswords(url);
  const std::string fix =
      "): check the URL (postgresql://USER@HOST:PORT/DATABASE, or "
      "postgresql:///DATABASE?host=/SOCKET/DIR; a password belongs in "
      "PGPASSWORD or ~/.pgpass) and that the server runs";
  auto failure = [&](PGconn* conn, const std::string& why) {
    if (conn != nullptr) PQfinish(conn);
    return Unavailable(name + ": cannot connect to PostgreSQL (" +
                       RemoveSecrets(HidePasswords(why), secrets) + fix);
  };
  PGconn* conn = PQconnectStart(url.c_str());
  if (conn == nullptr) return failure(nullptr, "out of memory");
  const int64_t deadline =
      limits.connect_ms > 0 ? NowMs() + limits.connect_ms : 0;
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (st != PGRES_POLLING_OK) {
    if (st == PGRES_POLLING_FAILED || PQstatus(conn) == CONNECTION_BAD) {
      return failure(conn, Trim(PQerrorMessage(conn)));
    }
    const short events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
    int ready = 0;
    while (ready == 0) {
      if (StopAsked()) {
        PQfinish(conn);
        return Unavailable(name +
                           ": interrupted while connecting to PostgreSQL");
      }
      if (deadline != 0 && NowMs() >= deadline) {
        return failure(
            conn, "no answer within " +
                      std::to_string(limits.connect_ms / 1000) +
                      " s; set connect_timeout in the URL or "
                      "PGCONNECT_TIMEOUT for another limit");
      }
      ready = PollFor(PQsocket(conn), events, kPollSliceMs);
    }
    if (ready < 0) return failure(conn, std::strerror(errno));
    st = PQconnectPoll(conn);
  }
  return conn;
}

}  // namespace

void SetDbStopCheck(bool (*stopped)()) {
  g_stop_check.store(stopped);
  g_stop_seen_ms.store(0);
}

StatusOr<DbWaitLimits> DbWaitLimitsFor(const std::string& url) {
  DbWaitLimits limits;
  // connect_timeout: the URL's, else the environment's (libpq's own
  // option, read here because a nonblocking connect does not apply it).
  const char* connect = std::getenv("PGCONNECT_TIMEOUT");
  std::string from_url;
  char* error = nullptr;
  if (PQconninfoOption* options = PQconninfoParse(url.c_str(), &error)) {
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (std::strcmp(o->keyword, "connect_timeout") == 0 &&
          o->val != nullptr) {
        from_url = o->val;
      }
    }
    PQconninfoFree(options);
  }
  PQfreemem(error);  // a malformed URL is reported by the connect
  if (!from_url.empty()) connect = from_url.c_str();
  if (connect != nullptr && *connect != '\0') {
    const std::optional<int64_t> ms = ConnectTimeoutMs(connect);
    if (!ms) {
      return InvalidArgument(
          std::string(from_url.empty() ? "PGCONNECT_TIMEOUT" :
                                         "the URL's connect_timeout") +
          " '" + connect + "': not a number of seconds; give a whole number "
          "(0: no limit)");
    }
    limits.connect_ms = *ms;
  }
  if (const char* answer = std::getenv("ROOFTRACE_DB_TIMEOUT_S");
      answer != nullptr && *answer != '\0') {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(answer, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > (1LL << 30)) {
      return InvalidArgument(std::string("ROOFTRACE_DB_TIMEOUT_S=") + answer +
                             ": not a number of seconds; give a whole "
                             "number (0: no limit), e.g. "
                             "ROOFTRACE_DB_TIMEOUT_S=600");
    }
    limits.answer_ms = v * 1000;
  }
  return limits;
}

StatusOr<std::unique_ptr<Db>> OpenPostgresDb(const std::string& url,
                                             bool read_only) {
  const std::string name = StoreDisplayName(url);
  StatusOr<DbWaitLimits> limits = DbWaitLimitsFor(url);
  if (!limits.ok()) {
    return InvalidArgument(name + ": " + limits.status().message());
  }
  RT_ASSIGN_OR_RETURN(PGconn* conn, Connect(url, name, *limits));
  // Every later wait is Await()'s: nothing blocks in libpq.
  if (PQsetnonblocking(conn, 1) != 0) {
    const std::string why = Trim(PQerrorMessage(conn));
    PQfinish(conn);
    return Unavailable(name + ": cannot use the connection (" + why + ")");
  }
  auto db = std::make_unique<PgDb>(conn, name, limits->answer_ms);
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  if (read_only) {
    // One snapshot for every query of the reader, and cursors need a
    // transaction to live in.
    RT_RETURN_IF_ERROR(
        db->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  }
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace rooftrace
