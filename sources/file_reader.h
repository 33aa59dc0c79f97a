// Reading a trace file for a source: plain or gzip, told apart by content
// (zlib passes a file that is not gzip through unchanged), with a gzip file
// cut short reported as such rather than read as a shorter trace.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_SOURCES_FILE_READER_H_
#define ROOFTRACE_SOURCES_FILE_READER_H_

#include <cstddef>
#include <string>

#include "base/status.h"

namespace rooftrace {

// Up to `max_bytes` of the start of `path`, decompressed when it is gzip.
StatusOr<std::string> ReadHead(const std::string& path,
                               size_t max_bytes = 64 * 1024);

// The whole of `path`, decompressed when it is gzip, followed by `padding`
// zero bytes that are not part of the returned size's content (a parser
// such as simdjson reads a little past the end). NotFound for a missing
// file; Corrupt, naming the file, for a damaged or truncated gzip file.
// The returned string's size() is content + padding; `content_size` gets
// the content's.
StatusOr<std::string> ReadWholeFile(const std::string& path, size_t padding,
                                    size_t* content_size);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_FILE_READER_H_
