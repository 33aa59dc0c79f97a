// What `profile` needs to wait for the processes its command leaves
// running (issue 18 item 4): which descendants are alive, and whether a
// trace or spool file is still being written, so that it is never
// ingested half-written nor deleted under its writer.
//
// Plain functions over /proc and the file system; no state, thread-safe.
// The traps: a process id can be reused, and a writer in another PID
// namespace names its file with an id of that namespace. A file whose
// writer's id belongs to another live process is judged still being
// written: kept, never deleted, the safe way to be wrong. The other way
// (the id means nothing here) is caught by OpenInAnyOf over the live
// descendants; profile asks both.
#ifndef ROOFTRACE_COLLECTOR_PROFILE_WAIT_H_
#define ROOFTRACE_COLLECTOR_PROFILE_WAIT_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rooftrace {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t pgid = 0;    // its process group: the terminal signals a group
  std::string comm;  // /proc/PID/comm: the name, at most 15 characters
};

// Every live (not zombie) descendant of `root`, children before their own
// children, from /proc. Empty where /proc cannot be read.
std::vector<ProcessInfo> ListDescendants(pid_t root);

// Whether process `pid` ignores signal `sig` (SigIgn of /proc/PID/status):
// a shell's `app &` ignores SIGINT and SIGQUIT, so Ctrl-C does not end it.
// False where it cannot be read.
bool IgnoresSignal(pid_t pid, int sig);

// "pid 4242 app" or "pid 4242 app, pid 4243 python3"; past `max_named`
// processes, ", and N more".
std::string DescribeProcesses(const std::vector<ProcessInfo>& processes,
                              size_t max_named = 5);

// The process that writes a trace file, as its name tells: a spool
// `rooftrace-<host>-<pid>-<start_unix_ns>.rft` (libinject's default
// spool; the host may hold dashes), or a `file:` sink's sibling
// `<name>-<pid>.rft` (libinject writes one when another live process holds
// `<name>.rft`). None when the name carries no process id.
std::optional<pid_t> TraceWriterPid(std::string_view file_name);

// True when a live process may still append to the regular file at `path`:
// the process its name names (TraceWriterPid) is alive, or a process holds
// the file's flock (the first process of a `file:` sink, whose file name
// carries no id).
bool StillBeingWritten(const std::string& path);

// True when one of `processes` holds the file at `path` open (its
// /proc/PID/fd entries, compared by device and inode): exact where the
// name's process id is not (a writer in another PID namespace names its
// spool with an id this one does not know).
bool OpenInAnyOf(const std::string& path,
                 const std::vector<ProcessInfo>& processes);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_PROFILE_WAIT_H_
