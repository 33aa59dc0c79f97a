// Streams as a shell gives them, for tests of inputs read from a FIFO or
// from standard input: the bytes are written by a thread of the test while
// the code under test reads.
//
// Not thread-safe; one feed per stream, destroyed on the thread that made it.
#ifndef ROOFTRACE_TESTS_SUPPORT_STREAM_FEED_H_
#define ROOFTRACE_TESTS_SUPPORT_STREAM_FEED_H_

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace rooftrace::test_support {

// Writes every byte it can of `bytes` to `fd`, then closes it. A reader
// that stopped reading ends the writing (EPIPE; SIGPIPE is ignored).
inline void WriteAndClose(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(fd);
}

// Writes `bytes` into the FIFO at `path` once a reader opens it (within
// 10 s; a reader that never comes is not waited for further).
class FifoFeed {
 public:
  FifoFeed(const std::string& path, std::string bytes)
      : bytes_(std::move(bytes)) {
    signal(SIGPIPE, SIG_IGN);
    thread_ = std::thread([this, path] {
      for (int waited = 0; waited < 10000; waited += 5) {
        const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
          fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
          WriteAndClose(fd, bytes_);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~FifoFeed() { thread_.join(); }
  FifoFeed(const FifoFeed&) = delete;
  FifoFeed& operator=(const FifoFeed&) = delete;

 private:
  std::string bytes_;
  std::thread thread_;
};

// Standard input is a pipe carrying `bytes` while it lives; restored after.
class StdinFeed {
 public:
  explicit StdinFeed(std::string bytes) : bytes_(std::move(bytes)) {
    signal(SIGPIPE, SIG_IGN);
    int p[2];
    if (pipe(p) != 0) return;
    saved_ = dup(0);
    dup2(p[0], 0);
    close(p[0]);
    thread_ = std::thread([this, w = p[1]] { WriteAndClose(w, bytes_); });
  }
  ~StdinFeed() {
    // The read end goes first: a writer blocked on a full pipe ends.
    if (saved_ >= 0) {
      dup2(saved_, 0);
      close(saved_);
    }
    if (thread_.joinable()) thread_.join();
  }
  StdinFeed(const StdinFeed&) = delete;
  StdinFeed& operator=(const StdinFeed&) = delete;

 private:
  std::string bytes_;
  int saved_ = -1;
  std::thread thread_;
};

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_STREAM_FEED_H_
