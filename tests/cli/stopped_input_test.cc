// Issue 37 item 8: SIGTERM or SIGINT while a stream input (standard input,
// a FIFO) was still arriving killed `collect --ingest` by the signal (exit
// 143), stored no run and left its rooftrace-stream-* copy behind, although
// `collect --help` promises exit 3 and an incomplete run; messages named
// the private copy (deleted by then) instead of the input. Each case runs
// the real binary on a FIFO whose writer sends part of a trace and then
// waits, as a producer still writing does.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

// A FIFO at `path` whose writer sends `head` and then keeps the stream
// open until the reader goes or the FIFO is destroyed.
class HeldFifo {
 public:
  HeldFifo(const std::string& path, std::string head)
      : path_(path), head_(std::move(head)) {
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    thread_ = std::thread([this] {
      const int fd = open(path_.c_str(), O_WRONLY);
      if (fd < 0) return;
      signal(SIGPIPE, SIG_IGN);
      (void)!write(fd, head_.data(), head_.size());
      sent_ = true;
      while (!done_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      close(fd);
    });
  }
  ~HeldFifo() {
    done_ = true;
    const int fd = open(path_.c_str(), O_RDONLY | O_NONBLOCK);
    thread_.join();
    if (fd >= 0) close(fd);
    unlink(path_.c_str());
  }
  bool sent() const { return sent_; }

 private:
  std::string path_, head_;
  std::atomic<bool> done_{false}, sent_{false};
  std::thread thread_;
};

std::vector<std::string> StreamCopiesIn(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with("rooftrace-stream-")) {
      out.push_back(e.path().string());
    }
  }
  return out;
}

TEST(StoppedInputTest, StopSignalWhileAStreamArrivesStoresAnIncompleteRun) {
  struct Case {
    bool stdin_input;
    int signo;
    const char* name;
  };
  for (const Case c : {Case{true, SIGTERM, "SIGTERM"},
                       Case{false, SIGTERM, "SIGTERM"},
                       Case{true, SIGINT, "SIGINT"}}) {
    SCOPED_TRACE(std::string(c.stdin_input ? "stdin " : "fifo ") + c.name);
    test_support::TempDir dir{"stopped_input"};
    const std::string trace = test_support::WriteLlmTrace(dir);
    std::ifstream in(trace, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 4000u);
    // Two thirds of the trace: the cut falls inside a frame.
    const std::string head = bytes.substr(0, bytes.size() * 2 / 3 + 1);
    const std::string fifo = dir.File("producer.fifo");
    HeldFifo writer(fifo, head);
    const std::string store = dir.File("runs.sqlite");
    const std::string tmp = dir.File("tmp");
    std::filesystem::create_directories(tmp);
    const std::string log = dir.File("collect.log");
    const std::string given = c.stdin_input ? "-" : fifo;
    const pid_t pid = test_support::SpawnLogged(
        {std::string(ROOFTRACE_BINARY_DIR) + "/bin/rooftrace", "collect",
         "--store", store, "--ingest", given},
        dir.path().string(), log, {"TMPDIR=" + tmp},
        c.stdin_input ? fifo : "/dev/null");
    // The bytes are sent, then given time to reach the copy.
    for (int i = 0; i < 500 && !writer.sent(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ASSERT_FALSE(StreamCopiesIn(tmp).empty()) << "no copy under way";
    kill(pid, c.signo);
    const int code =
        test_support::WaitExitWithin(pid, std::chrono::seconds(10));
    const std::string out = testing::ReadFile(log);
    EXPECT_EQ(code, 3) << out;
    EXPECT_NE(out.find("stored INCOMPLETE"), std::string::npos) << out;
    EXPECT_NE(out.find(std::string(c.name) + " arrived while " +
                       (c.stdin_input ? "- (standard input)" : fifo) +
                       " was still arriving: the " +
                       std::to_string(head.size()) + " bytes"),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("rooftrace-stream-"), std::string::npos) << out;
    EXPECT_EQ(out.find("syntax error"), std::string::npos) << out;
    EXPECT_TRUE(StreamCopiesIn(tmp).empty());
    test_support::StoreQuery q(store);
    EXPECT_EQ(q.Int("SELECT count(*) FROM runs"), 1);
    EXPECT_EQ(q.Int("SELECT count(*) FROM runs WHERE complete = 0"), 1);
    EXPECT_GT(q.Int("SELECT count(*) FROM kernels"), 0);
    EXPECT_EQ(q.Text("SELECT origin FROM runs"),
              "ingest:" + (c.stdin_input ? std::string("-") : fifo));
    EXPECT_NE(q.Text("SELECT incomplete_reason FROM runs")
                  .find(std::string(c.name) + " arrived while"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace rooftrace
