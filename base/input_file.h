// Inputs named on the command line (traces, stores, live buffers) are read
// more than once: their first bytes tell their format, then they are read
// from the start (a store is opened by SQLite, which seeks). A pipe, a
// FIFO, a socket, a device or standard input cannot be read that way, and
// opening a FIFO blocks until something writes to it, so they are refused
// by name before anything opens them.
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
      ": rooftrace reads an input twice (its first bytes to know its "
      "format, then all of it), so it must be a file: write it to one "
      "first (e.g. `cat ... > trace.rft`) and name that";
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
