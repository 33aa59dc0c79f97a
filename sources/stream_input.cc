#include "sources/stream_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <utility>

namespace rooftrace {

namespace {

constexpr char kSqliteMagic[16] = "SQLite format 3";  // + '\0'

bool IsSqlite(const std::string& head) {
  return head.size() >= sizeof kSqliteMagic &&
         std::memcmp(head.data(), kSqliteMagic, sizeof kSqliteMagic) == 0;
}

Status SqliteFromAStream(const std::string& path) {
  return InvalidArgument(
      path + ": an SQLite database (an nsys export or a rooftrace store) "
             "cannot be read from a pipe or standard input: SQLite reads it "
             "by seeking; write it to a file first (e.g. `cat ... > "
             "export.sqlite`) and name that");
}

std::string Mib(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

// Closes the descriptor it holds unless it is standard input.
class InputFd {
 public:
  explicit InputFd(int fd) : fd_(fd) {}
  ~InputFd() {
    if (fd_ > 0) close(fd_);
  }
  InputFd(const InputFd&) = delete;
  InputFd& operator=(const InputFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// read() that retries when a signal interrupts it, unless `stop` is set
// (then -1 with errno EINTR).
ssize_t ReadSome(int fd, char* buf, size_t size,
                 const std::atomic<bool>* stop) {
  for (;;) {
    if (stop != nullptr && stop->load()) {
      errno = EINTR;
      return -1;
    }
    const ssize_t n = read(fd, buf, size);
    if (n >= 0 || errno != EINTR) return n;
  }
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

StreamInputs::~StreamInputs() {
  std::error_code ec;
  for (const auto& copy : copies_) std::filesystem::remove(copy, ec);
  if (!dir_.empty()) std::filesystem::remove(dir_, ec);
}

std::string StreamInputs::Shown(std::string message) const {
  for (size_t i = 0; i < copies_.size(); ++i) {
    message = RenamePath(std::move(message), copies_[i], names_[i]);
  }
  return message;
}

StatusOr<std::string> StreamInputs::Resolve(const std::string& path,
                                            const GzipBudget& given,
                                            const std::atomic<bool>* stop) {
  const bool is_stdin = path == "-";
  struct stat st {};
  if (!is_stdin && (stat(path.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode))) {
    return path;
  }
  if (is_stdin && stdin_read_) {
    return InvalidArgument(
        "- (standard input) is named twice: it can be read once; write one "
        "of the inputs to a file and name that");
  }
  // A stream's size is unknown: the budget is the one set, else the
  // ceiling of the default (a fifth of memory, at least 1 GiB).
  RT_ASSIGN_OR_RETURN(
      const GzipBudget budget,
      ResolveGzipBudget(given, std::numeric_limits<uint64_t>::max()));
  const std::string raise_with = budget.raise_with.empty()
                                     ? std::string(kGzipBudgetEnv) + "=N"
                                     : budget.raise_with;
  const std::string name = is_stdin ? "- (standard input)" : path;
  int fd = 0;
  if (!is_stdin) {
    // A FIFO's open waits for its writer, as any reader of one does.
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == EINTR && stop != nullptr && stop->load()) {
      // Stopped before its writer came: nothing arrived, nothing to keep.
      return Unavailable(path + ": stopped by a signal before anything was "
                       "written to it");
    }
    if (fd < 0) {
      return InvalidArgument(path + ": cannot open it (" + strerror(errno) +
                             ")");
    }
  }
  stdin_read_ = stdin_read_ || is_stdin;
  const InputFd in(fd);
  if (dir_.empty()) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "rooftrace-stream-XXXXXX")
            .string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return InvalidArgument(name + ": cannot copy it to a temporary file (" +
                             tmpl + ": " + strerror(errno) +
                             "): set TMPDIR to a folder you may write");
    }
    dir_ = tmpl;
  }
  const std::string copy =
      dir_ + "/" + std::to_string(copies_.size() + 1) + "-" +
      (is_stdin ? std::string("stdin")
                : std::filesystem::path(path).filename().string());
  const int out = open(copy.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                       0600);
  if (out < 0) {
    return InvalidArgument(name + ": cannot copy it to " + copy + " (" +
                           strerror(errno) + ")");
  }
  copies_.push_back(copy);
  names_.push_back(name);
  std::string head;
  uint64_t total = 0;
  static thread_local char buf[1 << 16];
  Status failed;
  for (;;) {
    const ssize_t n = ReadSome(in.get(), buf, sizeof buf, stop);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) {
      // Stopped while the stream was still arriving: what came is the
      // input (the caller stores it as incomplete).
      stopped_ = name;
      stopped_bytes_ = total;
      break;
    }
    if (n < 0) {
      failed = InvalidArgument(name + ": reading it failed (" +
                               strerror(errno) + ")");
      break;
    }
    // No format rooftrace reads begins with a zero byte (a trace's first
    // frame tag, gzip's magic, JSON, CSV, SQLite's header): /dev/zero on
    // standard input is refused before gigabytes are copied.
    if (total == 0 && buf[0] == '\0') {
      failed = InvalidArgument(
          name + ": begins with a zero byte, which no trace rooftrace reads "
                 "does (/dev/zero?): give a trace");
      break;
    }
    if (head.size() < sizeof kSqliteMagic) {
      head.append(buf, std::min(static_cast<size_t>(n),
                                sizeof kSqliteMagic - head.size()));
      if (IsSqlite(head)) {
        failed = SqliteFromAStream(name);
        break;
      }
    }
    total += static_cast<uint64_t>(n);
    if (total > budget.max_bytes) {
      failed = InvalidArgument(
          name + ": more than " + Mib(budget.max_bytes) +
          " came from the stream, past the budget for an input read from a "
          "pipe: write it to a file first, or raise the budget with " +
          raise_with);
      break;
    }
    if (!WriteAll(out, buf, static_cast<size_t>(n))) {
      failed = InvalidArgument(name + ": cannot copy it to " + copy + " (" +
                               strerror(errno) +
                               "): set TMPDIR to a folder with room");
      break;
    }
  }
  if (close(out) != 0 && failed.ok()) {
    failed = InvalidArgument(name + ": cannot copy it to " + copy + " (" +
                             strerror(errno) + ")");
  }
  if (failed.ok() && total == 0) {
    failed = stopped_.empty()
                 ? InvalidArgument(name + ": the stream was empty: give a trace")
                 : Unavailable(name + ": stopped by a signal before anything "
                                    "arrived from it");
  }
  if (failed.ok()) {
    // A gzip stream: what it holds decides.
    auto inner = ReadHead(copy, sizeof kSqliteMagic);
    if (inner.ok() && IsSqlite(*inner)) failed = SqliteFromAStream(name);
  }
  if (!failed.ok()) {
    std::error_code ec;
    std::filesystem::remove(copy, ec);
    copies_.pop_back();
    names_.pop_back();
    return failed;
  }
  return copy;
}

}  // namespace rooftrace
