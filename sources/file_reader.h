// Reading a trace file for a source: plain or gzip, told apart by content
// (zlib passes a file that is not gzip through unchanged), with a gzip file
// cut short reported as such rather than read as a shorter trace.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_SOURCES_FILE_READER_H_
#define ROOFTRACE_SOURCES_FILE_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace rooftrace {

// Up to `max_bytes` of the start of `path`, decompressed when it is gzip.
StatusOr<std::string> ReadHead(const std::string& path,
                               size_t max_bytes = 64 * 1024);

// The environment variable that sets GzipBudget::max_bytes, in MiB, for
// every command (analyze, export, diff have no option of their own).
inline constexpr char kGzipBudgetEnv[] = "ROOFTRACE_MAX_DECOMPRESSED_MIB";

// How far a gzip file may expand when read, whole (ReadWholeFile: the
// text held in memory) or streamed (FileStream). A file that inflates past
// the budget is refused before it takes the machine's memory or time: an
// 8 MB file can hold 2 GiB of repeated events. A plain file is not bounded here (its size is
// on disk, for the user to see).
struct GzipBudget {
  // 0: $ROOFTRACE_MAX_DECOMPRESSED_MIB when set, else DefaultGzipBudget().
  uint64_t max_bytes = 0;
  // What raises it, for the refusal (e.g. "--max-decompressed-mib N");
  // empty: the environment variable.
  std::string raise_with;
};

// The budget for a gzip file of `compressed_bytes` when none is set:
// 64 times the compressed size, at least 1 GiB, at most a fifth of this
// machine's memory (but never under the 1 GiB floor).
uint64_t DefaultGzipBudget(uint64_t compressed_bytes);

// The budget in force for a file of `compressed_bytes`: `given`'s when it
// sets one, else $ROOFTRACE_MAX_DECOMPRESSED_MIB's, else the default.
// InvalidArgument naming the variable when its value is not a size.
StatusOr<GzipBudget> ResolveGzipBudget(const GzipBudget& given,
                                       uint64_t compressed_bytes);

// The whole of `path`, decompressed when it is gzip, followed by `padding`
// zero bytes that are not part of the returned size's content (a parser
// such as simdjson reads a little past the end). NotFound for a missing
// file; Corrupt, naming the file, for a damaged or truncated gzip file;
// InvalidArgument naming the file, the budget and what raises it for a gzip
// file whose content is larger than `budget` (read no further than that).
// The returned string's size() is content + padding; `content_size` gets
// the content's.
StatusOr<std::string> ReadWholeFile(const std::string& path, size_t padding,
                                    size_t* content_size,
                                    const GzipBudget& budget = GzipBudget());

// A file read a block at a time, decompressed when it is gzip: for a
// reader that parses as it goes and so never holds the whole text. The
// same budget, errors and messages as ReadWholeFile: a gzip file whose
// content passes the budget is refused once the budget is read (nothing
// past it is returned), one cut short is Corrupt at its end.
// Owned by one reader; not thread-safe.
class FileStream {
 public:
  static StatusOr<std::unique_ptr<FileStream>> Open(
      const std::string& path, const GzipBudget& budget = GzipBudget());
  ~FileStream();

  // Reads up to `max_bytes` into `out`; how many, 0 at the end of the file.
  StatusOr<size_t> Read(char* out, size_t max_bytes);
  // The content's size as far as the file tells it without reading it:
  // a plain file's size, a gzip file's trailer (modulo 4 GiB, trusted up to
  // 64 times the compressed size); 0 when unknown.
  uint64_t size_hint() const { return size_hint_; }

 private:
  struct Impl;
  explicit FileStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  uint64_t size_hint_ = 0;
};

// `message` with every `from` (a private copy's path, sources/
// stream_input.h) replaced by `to` (the input as the user named it): a
// reader's message about a copy must not name a file deleted when the
// command ends.
std::string RenamePath(std::string message, const std::string& from,
                       const std::string& to);

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_FILE_READER_H_
