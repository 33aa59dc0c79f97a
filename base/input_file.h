// Inputs named on the command line (traces, stores, live buffers) are read
// more than once: their first bytes tell their format, then they are read
// from the start (a store is opened by SQLite, which seeks). The commands
// that read traces first copy a stream ("-", a pipe, a FIFO) to a file
// (sources/stream_input.h); what reaches this check unresolved (a run
// store for `history`, a socket, a device) is refused by name before
// anything opens it (opening a FIFO blocks until something writes to it).
//
// Header-only and stateless; thread-safe.
#ifndef ROOFTRACE_BASE_INPUT_FILE_H_
#define ROOFTRACE_BASE_INPUT_FILE_H_

#include <sys/stat.h>

#include <string>

#include "base/status.h"

namespace rooftrace {

// OK for a regular file, and for a path that does not exist or is a
// folder (the caller says so in its own words); kInvalidArgument naming
// the path and the fix for "-" and anything that is not a regular file.
inline Status CheckInputIsAFile(const std::string& path) {
  const std::string fix =
      ": this input must be a file (a trace is read from a pipe or "
      "standard input by analyze, diff, export, import and collect "
      "--ingest; a run store never, SQLite reads it by seeking): write it "
      "to one first (e.g. `cat ... > runs.sqlite`) and name that";
  if (path == "-") {
    return InvalidArgument("- (standard input) cannot be read" + fix);
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode) ||
      S_ISREG(st.st_mode)) {
    return OkStatus();
  }
  const char* what = S_ISFIFO(st.st_mode)   ? "a pipe or FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
                         ? "a device"
                         : "not a regular file";
  return InvalidArgument(path + ": " + what + ", not a file" + fix);
}

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_INPUT_FILE_H_
