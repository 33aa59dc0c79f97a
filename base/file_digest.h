// Content hashes of files, for the provenance of imported and ingested runs
// (runs.source_sha256): the SHA-256 `sha256sum` would print, so a user can
// tell which file a run came from.
//
// Pure functions; thread-safe (each call uses its own digest context).
#ifndef ROOFTRACE_BASE_FILE_DIGEST_H_
#define ROOFTRACE_BASE_FILE_DIGEST_H_

#include <atomic>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rooftrace {

// Lower-case hex SHA-256 of the file's bytes as stored (a .gz file's
// compressed bytes). Errors name the file. `stop` (may be null), once
// set, ends a long read at once with kUnavailable ("interrupted"): a
// SIGTERM during the hash of a large file is honoured.
StatusOr<std::string> Sha256OfFile(const std::string& path,
                                   const std::atomic<bool>* stop = nullptr);
// The same of bytes in memory.
std::string Sha256Hex(std::string_view bytes);

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_FILE_DIGEST_H_
