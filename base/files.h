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

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rooftrace {

// Replaces the content of `path` with `text` as described above. Errors
// (kInvalidArgument) name `path`, the system's reason and the fix:
// "out/r.html: cannot write (No such file or directory): check that the
// folder exists and is writable".
Status WriteTextFile(const std::string& path, std::string_view text);

// Reading the small inputs a command names beside its main one (a device
// profile, a model config, a prediction): a cap that fits their kind,
// since /dev/zero or a FIFO that never ends would otherwise be read into
// memory for ever.
//
// The whole of `path` when it holds at most `max_bytes`: a regular file,
// or a FIFO or pipe (`<(cmd)`, read front to back as it arrives; opening
// one waits for its writer). NotFound for a missing path. InvalidArgument,
// naming `what` (the option: "--device-profile"), the path, the reason
// and the fix: a device, a socket or a folder; more than `max_bytes`
// (reading stops one byte past it); a read error. `kind` says what the
// file should hold ("a device profile"), for the messages; `what` may be
// empty (the path alone names the file).
StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                      uint64_t max_bytes,
                                      const std::string& what,
                                      const std::string& kind);

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_FILES_H_
