// Inputs that are streams: "-" (standard input), a pipe or a FIFO (a
// shell's `<(cmd)` names one /dev/fd/N). Every command reads an input
// twice (its first bytes tell the format, then all of it), which a stream
// cannot give. The formats read front to back (a rooftrace trace or
// spool, Kineto JSON plain or gzip, an ncu CSV) are copied once into a
// private temporary file that the command then reads as any file; an
// SQLite database (an nsys export, a rooftrace store) is read by seeking
// and is refused from a stream, naming what it is. A socket or a device
// stays refused (base/input_file.h).
//
// The copy is bounded like a gzip file's content (sources/file_reader.h):
// the caller's budget (import --max-decompressed-mib), else
// $ROOFTRACE_MAX_DECOMPRESSED_MIB, else a fifth of this machine's memory
// (at least 1 GiB), since a Kineto trace is held whole to be parsed. Past
// it the copy stops and the input is refused, naming the budget.
//
// Not thread-safe: one per command, alive while the paths it returned are
// read; destroying it removes the copies.
#ifndef ROOFTRACE_SOURCES_STREAM_INPUT_H_
#define ROOFTRACE_SOURCES_STREAM_INPUT_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "sources/file_reader.h"

namespace rooftrace {

class StreamInputs {
 public:
  StreamInputs() = default;
  ~StreamInputs();
  StreamInputs(const StreamInputs&) = delete;
  StreamInputs& operator=(const StreamInputs&) = delete;

  // `path` itself when it is not a stream (a regular file, a missing path,
  // a folder, a URL: the caller judges those); else the path of its copy,
  // read to the end of the stream. Errors (bad input: exit 2) name `path`:
  // standard input named twice, an empty stream, an SQLite database, a
  // stream past `budget`, a copy that could not be written.
  //
  // `stop` (a SIGINT/SIGTERM handler's flag; may be null) ends the copy of
  // a stream still arriving: what came is kept as the copy, returned, and
  // stopped() says so from then on (the caller stores it as incomplete,
  // and resolves nothing more: a FIFO's open would wait for its writer).
  // The signal must be installed without SA_RESTART, so that a read
  // waiting on the stream returns.
  StatusOr<std::string> Resolve(const std::string& path,
                                const GzipBudget& budget = GzipBudget(),
                                const std::atomic<bool>* stop = nullptr);

  // The stream whose copy `stop` ended, as the user named it ("- (standard
  // input)", the FIFO's path), and the bytes that came; empty: none.
  const std::string& stopped() const { return stopped_; }
  uint64_t stopped_bytes() const { return stopped_bytes_; }

  // `message` with the path of every copy replaced by the input as the
  // user named it: a reader's error about a copy must not name a private
  // file that is deleted when the command ends.
  std::string Shown(std::string message) const;

 private:
  std::string dir_;  // private folder of the copies ("" until the first)
  std::vector<std::string> copies_;
  std::vector<std::string> names_;  // as given, by copies_ index
  bool stdin_read_ = false;
  std::string stopped_;
  uint64_t stopped_bytes_ = 0;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_SOURCES_STREAM_INPUT_H_
