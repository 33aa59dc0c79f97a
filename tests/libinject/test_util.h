// Helpers for libinject's tests: run a program with extra environment and
// capture its exit code / stdout / stderr; read a trace (spool) with
// libprotobuf; a tiny collector (Unix socket) built on proto/framing.
#ifndef ROOFTRACE_TESTS_LIBINJECT_TEST_UTIL_H_
#define ROOFTRACE_TESTS_LIBINJECT_TEST_UTIL_H_

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proto/rooftrace.pb.h"

namespace rooftrace::inject::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

// Runs argv[0] with the current environment plus `env` (a value of
// "<unset>" removes the variable).
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env);

// All packets of a trace file; fails the test on a corrupt file.
std::vector<rooftrace::wire::Packet> ReadTrace(const std::string& path);
// Decodes framed bytes.
std::vector<rooftrace::wire::Packet> DecodeFrames(const std::string& bytes);

// Every string defined by `packets` (iid -> text).
std::map<uint64_t, std::string> Strings(
    const std::vector<rooftrace::wire::Packet>& packets);

// `relative` under the build directory, found from this test binary's own
// location (<build>/tests/<binary>), so carried builds work anywhere.
std::string BuildPath(const std::string& relative);

// A fresh empty directory under the test's temp dir.
std::string MakeTempDir(const std::string& tag);
// Files in `dir` ending in `suffix`.
std::vector<std::string> ListFiles(const std::string& dir,
                                   const std::string& suffix);

// A collector stand-in on a Unix socket: accepts connections, answers the
// Hello with HelloReply(accepted), keeps every packet. With
// `close_after_frames` > 0 it closes each connection after that many frames
// (the collector "goes away" mid-stream) and stops listening.
class TestCollector {
 public:
  explicit TestCollector(const std::string& socket_path,
                         int close_after_frames = 0);
  ~TestCollector();
  std::vector<rooftrace::wire::Packet> packets();

 private:
  void Run();
  std::string path_;
  int close_after_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<rooftrace::wire::Packet> packets_;
  std::thread thread_;
};

}  // namespace rooftrace::inject::testing

#endif  // ROOFTRACE_TESTS_LIBINJECT_TEST_UTIL_H_
