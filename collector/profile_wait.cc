#include "collector/profile_wait.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>

namespace rooftrace {
namespace {

// Linux never gives a process id above PID_MAX_LIMIT (2^22); a spool's
// start time in Unix nanoseconds is far above it.
constexpr uint64_t kPidMaxLimit = 4194304;

// All digits, and their value; false for an empty or non-numeric field.
bool Digits(std::string_view s, uint64_t* value) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *value);
  if (r.ec == std::errc::result_out_of_range) *value = UINT64_MAX;
  return true;
}

// pid, name, state and parent of /proc/PID/stat ("4242 (my app) S 1 ...":
// the name may hold spaces and parentheses, so it ends at the last ')').
struct StatLine {
  pid_t pid = 0, ppid = 0, pgid = 0;
  char state = '?';
  std::string comm;
};

bool ReadStat(pid_t pid, StatLine* out) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const size_t open = line.find('(');
  const size_t close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open ||
      close + 4 > line.size()) {
    return false;
  }
  std::istringstream rest(line.substr(close + 2));
  long ppid = 0, pgid = 0;
  if (!(rest >> out->state >> ppid >> pgid)) return false;
  out->pid = pid;
  out->ppid = static_cast<pid_t>(ppid);
  out->pgid = static_cast<pid_t>(pgid);
  out->comm = line.substr(open + 1, close - open - 1);
  return true;
}

bool Alive(pid_t pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

}  // namespace

std::vector<ProcessInfo> ListDescendants(pid_t root) {
  std::multimap<pid_t, StatLine> children;  // by parent
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return {};
  while (const dirent* e = readdir(proc)) {
    uint64_t pid = 0;
    StatLine st;
    if (!Digits(e->d_name, &pid) || pid >= kPidMaxLimit ||
        !ReadStat(static_cast<pid_t>(pid), &st)) {
      continue;
    }
    children.emplace(st.ppid, std::move(st));
  }
  closedir(proc);
  std::vector<ProcessInfo> out;
  std::vector<pid_t> parents = {root};
  for (size_t i = 0; i < parents.size(); ++i) {
    const auto [begin, end] = children.equal_range(parents[i]);
    for (auto it = begin; it != end; ++it) {
      // A zombie has ended: its parent has yet to reap it.
      if (it->second.state == 'Z' || it->second.state == 'X') continue;
      out.push_back({it->second.pid, it->second.pgid, it->second.comm});
      parents.push_back(it->second.pid);
    }
  }
  return out;
}

bool IgnoresSignal(pid_t pid, int sig) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("SigIgn:", 0) != 0) continue;
    uint64_t mask = 0;
    std::istringstream(line.substr(7)) >> std::hex >> mask;
    return sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1) != 0;
  }
  return false;
}

std::string DescribeProcesses(const std::vector<ProcessInfo>& processes,
                              size_t max_named) {
  std::string out;
  for (size_t i = 0; i < processes.size() && i < max_named; ++i) {
    if (!out.empty()) out += ", ";
    out += "pid " + std::to_string(processes[i].pid) + " " + processes[i].comm;
  }
  if (processes.size() > max_named) {
    out += ", and " + std::to_string(processes.size() - max_named) + " more";
  }
  return out;
}

std::optional<pid_t> TraceWriterPid(std::string_view file_name) {
  if (const size_t slash = file_name.rfind('/');
      slash != std::string_view::npos) {
    file_name.remove_prefix(slash + 1);
  }
  constexpr std::string_view kExt = ".rft";
  if (file_name.size() <= kExt.size() ||
      file_name.substr(file_name.size() - kExt.size()) != kExt) {
    return std::nullopt;
  }
  std::string_view stem = file_name.substr(0, file_name.size() - kExt.size());
  size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  uint64_t last = 0;
  if (!Digits(stem.substr(dash + 1), &last) || last == 0) return std::nullopt;
  if (last < kPidMaxLimit) return static_cast<pid_t>(last);  // <name>-<pid>
  // rooftrace-<host>-<pid>-<start_unix_ns>
  if (stem.rfind("rooftrace-", 0) != 0) return std::nullopt;
  stem = stem.substr(0, dash);
  dash = stem.rfind('-');
  uint64_t pid = 0;
  if (dash == std::string_view::npos || dash < 10 ||  // a host is named
      !Digits(stem.substr(dash + 1), &pid) || pid == 0 || pid >= kPidMaxLimit) {
    return std::nullopt;
  }
  return static_cast<pid_t>(pid);
}

bool StillBeingWritten(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (const auto pid = TraceWriterPid(path); pid && Alive(*pid)) return true;
  // libinject's `file:` sink holds an exclusive flock on its file while it
  // writes (libinject/sink.cc OpenSharedFileSink).
  const int fd = open(
      path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return false;
  const bool locked = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // releases our shared lock, if we took it
  return locked;
}

bool OpenInAnyOf(const std::string& path,
                 const std::vector<ProcessInfo>& processes) {
  struct stat want {};
  if (stat(path.c_str(), &want) != 0) return false;
  for (const ProcessInfo& p : processes) {
    const std::string fd_dir = "/proc/" + std::to_string(p.pid) + "/fd";
    DIR* fds = opendir(fd_dir.c_str());
    if (fds == nullptr) continue;
    bool found = false;
    while (const dirent* e = readdir(fds)) {
      struct stat st {};
      if (e->d_name[0] == '.' ||
          stat((fd_dir + "/" + e->d_name).c_str(), &st) != 0) {
        continue;
      }
      if (st.st_dev == want.st_dev && st.st_ino == want.st_ino) {
        found = true;
        break;
      }
    }
    closedir(fds);
    if (found) return true;
  }
  return false;
}

}  // namespace rooftrace
