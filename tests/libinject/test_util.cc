#include "tests/libinject/test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "gtest/gtest.h"
#include "proto/framing.h"
#include "proto/wire_constants.h"

extern char** environ;

namespace rooftrace::inject::testing {

namespace {
std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}
}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = strchr(*e, '=');
    if (eq == nullptr) continue;
    merged[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : env) {
    if (v == "<unset>") {
      merged.erase(k);
    } else {
      merged[k] = v;
    }
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);

  // stdout and stderr go to temp files (no pipe deadlock).
  char out_path[] = "/tmp/rt_out_XXXXXX";
  char err_path[] = "/tmp/rt_err_XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  pid_t pid = -1;
  ProcessResult result;
  if (posix_spawn(&pid, argp[0], &actions, nullptr, argp.data(), envp.data()) !=
      0) {
    ADD_FAILURE() << "cannot start " << argv[0];
  } else {
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
                                         : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  lseek(out_fd, 0, SEEK_SET);
  lseek(err_fd, 0, SEEK_SET);
  result.out = ReadAll(out_fd);
  result.err = ReadAll(err_fd);
  close(out_fd);
  close(err_fd);
  unlink(out_path);
  unlink(err_path);
  return result;
}

std::vector<rooftrace::wire::Packet> DecodeFrames(const std::string& bytes) {
  std::vector<rooftrace::wire::Packet> packets;
  wire::FrameReader reader;
  reader.Feed(bytes);
  std::string_view payload;
  wire::FrameReader::Result r;
  while ((r = reader.Next(&payload)) == wire::FrameReader::Result::kFrame) {
    rooftrace::wire::Packet p;
    EXPECT_TRUE(p.ParseFromArray(payload.data(), static_cast<int>(payload.size())));
    packets.push_back(std::move(p));
  }
  EXPECT_NE(r, wire::FrameReader::Result::kCorrupt) << reader.error();
  EXPECT_EQ(reader.buffered_bytes(), 0u) << "trailing partial frame";
  return packets;
}

std::vector<rooftrace::wire::Packet> ReadTrace(const std::string& path) {
  std::vector<rooftrace::wire::Packet> packets;
  wire::TraceFileReader reader;
  Status s = reader.Open(path);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok()) return packets;
  std::string_view payload;
  for (;;) {
    auto r = reader.Next(&payload);
    if (r != wire::TraceFileReader::Result::kFrame) {
      EXPECT_EQ(r, wire::TraceFileReader::Result::kEnd) << reader.error();
      break;
    }
    rooftrace::wire::Packet p;
    EXPECT_TRUE(p.ParseFromArray(payload.data(), static_cast<int>(payload.size())));
    packets.push_back(std::move(p));
  }
  return packets;
}

std::map<uint64_t, std::string> Strings(
    const std::vector<rooftrace::wire::Packet>& packets) {
  std::map<uint64_t, std::string> out;
  for (const auto& p : packets) {
    for (const auto& s : p.interned_strings()) out[s.iid()] = s.str();
  }
  return out;
}

std::string BuildPath(const std::string& relative) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return relative;
  std::string dir(exe, static_cast<size_t>(n));
  dir = dir.substr(0, dir.rfind('/'));  // <build>/tests
  dir = dir.substr(0, dir.rfind('/'));  // <build>
  return dir + "/" + relative;
}

namespace {
// Temp dirs made by this process, removed when it exits (only by the
// process that made them: forked children leave them alone).
struct TempDirs {
  ~TempDirs() {
    if (getpid() != owner) return;
    for (const auto& d : dirs) {
      std::error_code ignored;
      std::filesystem::remove_all(d, ignored);
    }
  }
  pid_t owner = getpid();
  std::vector<std::string> dirs;
};
TempDirs& AllTempDirs() {
  static TempDirs dirs;
  return dirs;
}
}  // namespace

std::string MakeTempDir(const std::string& tag) {
  const char* base = getenv("TMPDIR");
  std::string templ = std::string(base != nullptr ? base : "/tmp") +
                      "/rt_inject_" + tag + "_XXXXXX";
  char* made = mkdtemp(templ.data());
  EXPECT_NE(made, nullptr);
  AllTempDirs().dirs.push_back(templ);
  return templ;
}

std::vector<std::string> ListFiles(const std::string& dir,
                                   const std::string& suffix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(dir + "/" + name);
    }
  }
  closedir(d);
  return out;
}

TestCollector::TestCollector(const std::string& socket_path,
                             int close_after_frames)
    : path_(socket_path), close_after_(close_after_frames) {
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  unlink(path_.c_str());
  EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(listen(listen_fd_, 16), 0);
  thread_ = std::thread([this] { Run(); });
}

TestCollector::~TestCollector() {
  stop_ = true;
  thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  unlink(path_.c_str());
}

std::vector<rooftrace::wire::Packet> TestCollector::packets() {
  std::lock_guard<std::mutex> lock(mu_);
  return packets_;
}

void TestCollector::Run() {
  std::vector<int> conns;
  std::vector<wire::FrameReader> readers;
  std::vector<int> frames;
  while (!stop_) {
    std::vector<pollfd> fds;
    if (listen_fd_ >= 0) fds.push_back({listen_fd_, POLLIN, 0});
    for (int c : conns) fds.push_back({c, POLLIN, 0});
    poll(fds.data(), fds.size(), 20);
    size_t i = 0;
    if (listen_fd_ >= 0) {
      if (fds[0].revents & POLLIN) {
        const int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          conns.push_back(c);
          readers.emplace_back();
          frames.push_back(0);
        }
      }
      i = 1;
    }
    for (size_t k = 0; k < conns.size(); ++k) {
      if (conns[k] < 0 || i + k >= fds.size()) continue;
      if (!(fds[i + k].revents & (POLLIN | POLLHUP))) continue;
      char buf[65536];
      const ssize_t n = read(conns[k], buf, sizeof buf);
      if (n <= 0) {
        close(conns[k]);
        conns[k] = -1;
        continue;
      }
      readers[k].Feed(buf, static_cast<size_t>(n));
      std::string_view payload;
      while (conns[k] >= 0 &&
             readers[k].Next(&payload) == wire::FrameReader::Result::kFrame) {
        rooftrace::wire::Packet p;
        p.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
        if (p.has_hello()) {
          rooftrace::wire::Packet reply;
          reply.mutable_hello_reply()->set_accepted(true);
          reply.mutable_hello_reply()->set_protocol_version(wire::kProtocolVersion);
          std::string frame;
          wire::AppendFrame(&frame, reply.SerializeAsString());
          (void)!write(conns[k], frame.data(), frame.size());
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          packets_.push_back(std::move(p));
        }
        if (close_after_ > 0 && ++frames[k] >= close_after_) {
          // Gone mid-stream: close, stop listening; what the producer
          // sends afterwards must end up in its spool.
          close(conns[k]);
          conns[k] = -1;
          if (listen_fd_ >= 0) {
            close(listen_fd_);
            listen_fd_ = -1;
            unlink(path_.c_str());
          }
        }
      }
    }
  }
  for (int c : conns) {
    if (c >= 0) close(c);
  }
}

}  // namespace rooftrace::inject::testing
