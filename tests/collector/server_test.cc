// The collector's server in process, on a Unix socket: what it counts as a
// stalled producer (nothing received inside a frame for stall_timeout_ms),
// not its own delay or a frame that arrives slowly.
#include "collector/server.h"
#include "store/store.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/recorder.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::LlmTraceOptions;
using test_support::TraceBuilder;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RecorderOptions ro;
    ro.origin = "collect";
    auto r = CreateStoreRecorder(ro, dir_.File("runs.sqlite"));
    ASSERT_TRUE(r.ok()) << r.status().message();
    recorder_ = std::move(*r);
    ServerOptions so;
    so.listen = {"unix:" + sock_};
    so.stall_timeout_ms = 400;
    so.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_ += line + "\n";
    };
    server_ = std::make_unique<CollectorServer>(recorder_.get(), so);
    ASSERT_TRUE(server_->Listen().ok());
    thread_ = std::thread([this] { (void)server_->Run(&stop_); });
  }
  void TearDown() override {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  int Connect() {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    strncpy(sa.sun_path, sock_.c_str(), sizeof(sa.sun_path) - 1);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    return fd;
  }
  // False once the server has closed the connection.
  static bool Send(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  void WaitForSessions(uint64_t n) {
    for (int i = 0; i < 400 && server_->sessions_ended() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(server_->sessions_ended(), n);
  }
  std::string Log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

  test_support::TempDir dir_{"server"};
  std::string sock_ = dir_.File("s.sock");
  std::unique_ptr<RunRecorder> recorder_;
  std::unique_ptr<CollectorServer> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::string log_;
};

// A frame that takes 1.2 s to arrive, a few bytes every 100 ms, is kept: the
// producer is slow, not stalled. Before, a frame incomplete for longer than
// the timeout closed the connection whether bytes were arriving or not.
TEST_F(ServerTest, AFrameArrivingSlowlyIsKept) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  test_support::GenerateLlmTrace(o, &b);
  const auto& frames = b.Frames();
  ASSERT_GT(frames.size(), 3u);
  const int fd = Connect();
  ASSERT_TRUE(Send(fd, frames[0]));
  const std::string& slow = frames[1];
  const size_t step = slow.size() / 12 + 1;
  bool open = true;
  for (size_t at = 0; open && at < slow.size(); at += step) {
    open = Send(fd, std::string_view(slow).substr(at, step));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (size_t i = 2; open && i < frames.size(); ++i) open = Send(fd, frames[i]);
  EXPECT_TRUE(open) << "the server closed a connection that was sending";
  close(fd);
  WaitForSessions(1);
  EXPECT_EQ(Log().find("stalled"), std::string::npos) << Log();
  EXPECT_EQ(recorder_->kernels_stored(), b.sent(wire::RECORD_KERNEL));
}

// Half a frame and then nothing: closed once the timeout passes, with the
// peer and the reason in the log.
TEST_F(ServerTest, NothingInsideAFrameIsAStall) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  test_support::GenerateLlmTrace(o, &b);
  const auto& frames = b.Frames();
  const int fd = Connect();
  ASSERT_TRUE(Send(fd, frames[0]));
  ASSERT_TRUE(
      Send(fd, std::string_view(frames[1]).substr(0, frames[1].size() / 2)));
  WaitForSessions(1);
  close(fd);
  EXPECT_NE(Log().find("stalled inside a frame for 400 ms"), std::string::npos)
      << Log();
  EXPECT_NE(Log().find("unix peer pid"), std::string::npos) << Log();
}

}  // namespace
}  // namespace rooftrace
