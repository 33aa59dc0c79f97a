// Writing the files rooftrace produces (device profiles, calibration results,
// HTML and SVG reports, JUnit XML) so that no reader ever sees half of one.
//
// WriteTextFile writes into a temporary file in the same folder, flushes it
// to the disk (fsync) and renames it over `path`, so `path` holds either the
// old content or the whole new content, even if rooftrace or the machine
// dies midway. Stateless; safe to call from any thread (each call uses its
// own temporary name).
//
// The traps: a symbolic link at `path` is followed (the file it points to is
// replaced, the link stays); a `path` that is not a regular file (/dev/null,
// /dev/stdout, a FIFO) cannot be replaced and is written in place instead,
// without the all-or-nothing guarantee. A crash can leave a
// "<path>.tmp.<pid>.<n>" file behind; it is never read.
#ifndef ROOFTRACE_BASE_FILES_H_
#define ROOFTRACE_BASE_FILES_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace rooftrace {

// Replaces the content of `path` with `text` as described above. Errors
// (kInvalidArgument) name `path`, the system's reason and the fix:
// "out/r.html: cannot write (No such file or directory): check that the
// folder exists and is writable".
Status WriteTextFile(const std::string& path, std::string_view text);

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_FILES_H_
