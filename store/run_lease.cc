#include "store/run_lease.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "store/db.h"

namespace rooftrace {
namespace {

// One byte at offset run_id: a lock past the end of an empty file is
// allowed, so the file never grows.
struct flock ByteOf(int64_t run_id, short type) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = run_id;
  l.l_len = 1;
  return l;
}

std::string AdvisoryCall(const char* fn, int64_t run_id) {
  return std::string("SELECT ") + fn + "(" + std::to_string(kRunLeaseClass) +
         ", " + std::to_string(static_cast<int32_t>(run_id)) + ")";
}

// Runs `sql` (a SELECT) to its end.
Status RunQuery(Db* db, const std::string& sql) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<DbStatement> q, db->Prepare(sql));
  for (;;) {
    RT_ASSIGN_OR_RETURN(const bool row, q->Step());
    if (!row) return OkStatus();
  }
}

}  // namespace

std::string RunLeaseFile(const std::string& path) { return path + ".writing"; }

RunLease::~RunLease() {
  Release();
  if (fd_ >= 0) close(fd_);
}

Status RunLease::Take(Db* db, const std::string& path, int64_t run_id) {
  Release();
  db_ = db->backend() == DbBackend::kPostgres ? db : nullptr;
  run_id_ = run_id;
  if (db_ != nullptr) {
    RT_RETURN_IF_ERROR(RunQuery(db, AdvisoryCall("pg_advisory_lock", run_id)));
    held_ = true;
    return OkStatus();
  }
  if (fd_ < 0) {
    fd_ = open(RunLeaseFile(path).c_str(),
               O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) {
      return Unavailable(RunLeaseFile(path) + ": " + strerror(errno));
    }
  }
  struct flock l = ByteOf(run_id, F_WRLCK);
  if (fcntl(fd_, F_OFD_SETLK, &l) != 0) {
    return Unavailable(RunLeaseFile(path) + ": cannot lock run " +
                       std::to_string(run_id) + ": " + strerror(errno));
  }
  held_ = true;
  return OkStatus();
}

void RunLease::Release() {
  if (!held_) return;
  held_ = false;
  if (db_ != nullptr) {
    // A connection that is gone has dropped it already.
    (void)RunQuery(db_, AdvisoryCall("pg_advisory_unlock", run_id_));
    return;
  }
  struct flock l = ByteOf(run_id_, F_UNLCK);
  (void)fcntl(fd_, F_OFD_SETLK, &l);
}

std::set<int64_t> RunsBeingWritten(Db* db, const std::string& path,
                                   const std::vector<int64_t>& runs) {
  std::set<int64_t> out;
  if (runs.empty()) return out;
  if (db->backend() == DbBackend::kPostgres) {
    StatusOr<std::unique_ptr<DbStatement>> q = db->Prepare(
        "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND "
        "granted AND objsubid = 2 AND classid = " +
        std::to_string(kRunLeaseClass) +
        " AND database = (SELECT oid FROM pg_database WHERE datname = "
        "current_database())");
    if (!q.ok()) return out;
    std::set<int64_t> held;
    for (;;) {
      StatusOr<bool> row = (*q)->Step();
      if (!row.ok() || !*row) break;
      held.insert((*q)->Int(0));
    }
    for (const int64_t r : runs) {
      if (held.count(static_cast<uint32_t>(static_cast<int32_t>(r)))) {
        out.insert(r);
      }
    }
    return out;
  }
  const int fd = open(RunLeaseFile(path).c_str(),
                      O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return out;
  for (const int64_t r : runs) {
    // Asks whether a read lock could be had: not while a writer holds its
    // write lock on the byte.
    struct flock l = ByteOf(r, F_RDLCK);
    if (fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK) out.insert(r);
  }
  close(fd);
  return out;
}

}  // namespace rooftrace
