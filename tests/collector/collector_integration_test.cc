// End to end: producer processes streaming concurrently into
// `rooftrace collect`, SIGTERM mid-stream, bad peers, TCP, and
// `rooftrace profile` with a stand-in producer.
#include <arpa/inet.h>
#include <fcntl.h>
#include <pty.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proto/framing.h"
#include "proto/live_buffer.h"
#include "tests/support/sqlite_query.h"
#include "sources/rft/testing/trace_builder.h"

namespace rooftrace {
namespace {

namespace fs = std::filesystem;
using test_support::StoreQuery;

const std::string kTests = std::string(ROOFTRACE_BINARY_DIR) + "/tests";
const std::string kCli = kTests + "/collector_cli";
const std::string kProducer = kTests + "/test_producer";

// In a forked child: adds `env` (KEY=value) and runs `argv`; never returns.
[[noreturn]] void ExecWith(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env) {
  for (const auto& kv : env) putenv(strdup(kv.c_str()));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

// Every child a test started, so that a test that stops at a failed
// assertion does not leave a paused producer or a collector holding the
// output ctest waits on (TearDown ends those still running).
std::vector<pid_t>& Spawned() {
  static std::vector<pid_t> pids;
  return pids;
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& err_file = "",
            const std::vector<std::string>& env = {}) {
  const pid_t pid = fork();
  if (pid > 0) Spawned().push_back(pid);
  if (pid == 0) {
    if (!err_file.empty()) {
      const int fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 2);
      dup2(fd, 1);
    }
    ExecWith(argv, env);
  }
  return pid;
}

// Exit code, or -1 when it did not exit within `timeout_ms`.
int Wait(pid_t pid, int timeout_ms = 20000) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

bool WaitForFile(const std::string& path, int timeout_ms = 10000) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// A socket connected to the Unix socket at `path`, retried while the
// collector has bound it but not yet called listen(); -1 after 10 s.
int ConnectWhenListening(const std::string& path) {
  for (int waited = 0; waited < 10000; waited += 5) {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    strncpy(sa.sun_path, path.c_str(), sizeof(sa.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
      return fd;
    }
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Whether the file at `path` comes to hold `text` within `timeout_ms`.
bool WaitForText(const std::string& path, const std::string& text,
                 int timeout_ms = 10000) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    if (Slurp(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The pid a shell wrote with `echo $! > FILE`, once it is there.
pid_t PidFrom(const std::string& file) {
  if (!WaitForFile(file)) return -1;
  for (int waited = 0; waited < 5000; waited += 5) {
    const std::string text = Slurp(file);
    if (!text.empty() && text.back() == '\n') return std::stoi(text);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

// The private folder profile says it kept for the spools of processes
// its command left running ("... are kept in DIR; ..." or "DIR (being
// written: ...)"); "" when it kept none.
std::string KeptFolder(const std::string& log) {
  const std::string tag = "are kept in ";
  const size_t at = log.find(tag);
  if (at == std::string::npos) return "";
  const size_t from = at + tag.size();
  return log.substr(from, log.find_first_of(" ;", from) - from);
}

// Removes a kept private folder once a test is done with it: only one
// named as profile names them.
void RemoveKeptFolder(const std::string& dir) {
  const std::string ours =
      (fs::temp_directory_path() / "rooftrace-").string();
  if (dir.rfind(ours, 0) == 0 && dir.size() == ours.size() + 6) {
    fs::remove_all(dir);
  }
}

// Ends a process a test left running (not our child: reparented away).
void KillAndForget(pid_t pid) {
  if (pid > 0) kill(pid, SIGKILL);
}

class CollectorIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("rt_ci_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = dir_ + "/runs.sqlite";
    sock_ = dir_ + "/c.sock";
    log_ = dir_ + "/collector.log";
  }
  void TearDown() override {
    // Only a child not yet reaped answers waitpid with 0: a pid already
    // waited for (and perhaps reused by another process) is left alone.
    for (const pid_t pid : Spawned()) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
    Spawned().clear();
    fs::remove_all(dir_);
  }

  // The collector's socket accepts connections: it has said "listening
  // on" (after listen()). The socket file alone appears at bind(), a
  // moment before, when a producer's connect is still refused.
  bool WaitListening(int timeout_ms = 10000) {
    for (int waited = 0; waited < timeout_ms; waited += 5) {
      if (Slurp(log_).find("listening on") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // A generated LLM trace of `decode_steps` decode steps as dir_/t.rft,
  // with the kernels it holds in `kernels`; empty when it could not be
  // written.
  std::string WriteLlmTrace(int decode_steps, int64_t* kernels = nullptr) {
    test_support::LlmTraceOptions o;
    o.decode_steps = decode_steps;
    test_support::TraceBuilder b(o.session);
    test_support::GenerateLlmTrace(o, &b);
    const std::string trace = dir_ + "/t.rft";
    if (!b.WriteFile(trace).ok()) return std::string();
    if (kernels) *kernels = static_cast<int64_t>(b.sent(wire::RECORD_KERNEL));
    return trace;
  }

  pid_t StartCollector(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {kCli, "collect", "--store", store_};
    if (extra.empty()) extra = {"--listen", "unix:" + sock_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const pid_t pid = Spawn(argv, log_);
    return pid;
  }

  std::string dir_, store_, sock_, log_;
};

// 8 producer processes stream 125 kernels each at the same time: every
// kernel is stored exactly once, every session complete; the socket is 0600.
TEST_F(CollectorIntegrationTest, ConcurrentProducersStoredExactlyOnce) {
  const pid_t collector = StartCollector();
  ASSERT_TRUE(WaitListening()) << Slurp(log_);
  EXPECT_EQ(fs::status(sock_).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  std::vector<pid_t> producers;
  for (int i = 0; i < 8; ++i) {
    producers.push_back(Spawn({kProducer, "--sink", "unix:" + sock_}));
  }
  for (pid_t p : producers) EXPECT_EQ(Wait(p), 0);
  // Let the collector read the last bytes, then stop it.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(collector, SIGTERM);
  ASSERT_EQ(Wait(collector), 0) << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sessions"), 8);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sessions WHERE complete=1"), 8);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 8 * 125);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM (SELECT DISTINCT session_id, "
                  "correlation_id FROM kernels)"),
            8 * 125);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps WHERE phase='prefill'"), 8);
  EXPECT_EQ(q.Text("SELECT origin FROM runs"), "collect");
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 1);
  EXPECT_FALSE(fs::exists(sock_));
}

// Producers pause after 20 frames without closing; SIGTERM then stores every
// kernel they had sent (counted by regenerating the same stream here).
TEST_F(CollectorIntegrationTest, SigtermMidStreamLosesNothingSent) {
  const pid_t collector = StartCollector();
  ASSERT_TRUE(WaitListening());
  constexpr int kProducers = 4;
  std::vector<pid_t> producers;
  for (int i = 0; i < kProducers; ++i) {
    producers.push_back(Spawn({kProducer, "--sink", "unix:" + sock_, "--pid",
                               std::to_string(1000 + i), "--pause-after", "20",
                               "--ready-file",
                               dir_ + "/ready" + std::to_string(i)}));
  }
  for (int i = 0; i < kProducers; ++i) {
    ASSERT_TRUE(WaitForFile(dir_ + "/ready" + std::to_string(i)));
  }
  // Kernels in the first 20 frames of the same generated stream.
  test_support::LlmTraceOptions o;
  o.decode_steps = 4;
  o.max_batch_records = 50;
  int64_t expected = 0;
  for (int i = 0; i < kProducers; ++i) {
    o.session.pid = 1000 + i;
    test_support::TraceBuilder b(o.session);
    int frames = 0;
    b.set_sink([&](std::string_view frame) {
      if (frames++ >= 20) return;
      wire::FrameReader r;
      r.Feed(frame);
      std::string_view payload;
      r.Next(&payload);
      wire::Packet p;
      p.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
      expected += p.kernel_batch().kernels_size();
    });
    test_support::GenerateLlmTrace(o, &b);
  }
  ASSERT_GT(expected, 0);
  kill(collector, SIGTERM);
  EXPECT_EQ(Wait(collector, 10000), 0) << Slurp(log_);
  for (pid_t p : producers) {
    kill(p, SIGKILL);
    Wait(p);
  }
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), expected);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sessions WHERE goodbye=0"), kProducers);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE "
                  "name='sessions_incomplete'"),
            kProducers);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
}

// Garbage bytes and a silent client are closed with a log line naming the
// peer and the reason; a good producer next to them is stored intact.
TEST_F(CollectorIntegrationTest, BadPeersClosedOthersUndisturbed) {
  const pid_t collector = StartCollector(
      {"--listen", "unix:" + sock_, "--hello-timeout-ms", "300"});
  ASSERT_TRUE(WaitListening());
  const int silent = ConnectWhenListening(sock_);
  ASSERT_GE(silent, 0);
  const pid_t garbage = Spawn({kProducer, "--sink", "unix:" + sock_, "--garbage"});
  const pid_t good = Spawn({kProducer, "--sink", "unix:" + sock_});
  EXPECT_EQ(Wait(garbage), 0);
  EXPECT_EQ(Wait(good), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  kill(collector, SIGTERM);
  ASSERT_EQ(Wait(collector), 0);
  close(silent);
  const std::string log = Slurp(log_);
  EXPECT_NE(log.find("starts with 0x47"), std::string::npos) << log;
  EXPECT_NE(log.find("sent no Hello within 300 ms"), std::string::npos) << log;
  EXPECT_NE(log.find("unix peer pid"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 125);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE name='corrupt_frames'"), 1);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE "
                  "name='timed_out_connections'"),
            1);
}

// TCP on an ephemeral loopback port, and --ingest of a spool file.
TEST_F(CollectorIntegrationTest, TcpLoopbackAndIngest) {
  const pid_t collector =
      StartCollector({"--listen", "tcp:127.0.0.1:0", "--insecure-tcp"});
  std::string addr;
  for (int i = 0; i < 2000 && addr.empty(); ++i) {
    const std::string log = Slurp(log_);
    const size_t at = log.find("listening on tcp:");
    if (at != std::string::npos && log.find(',', at) != std::string::npos) {
      addr = log.substr(at + 13, log.find(',', at) - at - 13);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(addr.empty()) << Slurp(log_);
  EXPECT_EQ(addr.rfind("tcp:127.0.0.1:", 0), 0u) << addr;
  EXPECT_NE(Slurp(log_).find("WARNING: --insecure-tcp: " + addr +
                             " asks for no token"),
            std::string::npos)
      << Slurp(log_);
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", addr})), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(collector, SIGTERM);
  ASSERT_EQ(Wait(collector), 0);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 125);

  test_support::LlmTraceOptions o;
  test_support::TraceBuilder b(o.session);
  test_support::GenerateLlmTrace(o, &b);
  ASSERT_TRUE(b.WriteFile(dir_ + "/spool.rft").ok());
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest",
                        dir_ + "/spool.rft"})),
            0);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels WHERE run_id=2"), 225);
  EXPECT_EQ(q.Text("SELECT origin FROM runs WHERE run_id=2"),
            "ingest:" + dir_ + "/spool.rft");
  // A file that is not a trace: exit 2, message names it.
  std::ofstream(dir_ + "/bad.rft") << "not a trace";
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest",
                        dir_ + "/bad.rft"},
                       log_)),
            2);
  EXPECT_NE(Slurp(log_).find("bad.rft"), std::string::npos);
}

// collect --token-file on TCP: a producer with the token (ROOFTRACE_TOKEN)
// is stored, one without it is refused and told why (#18.13).
TEST_F(CollectorIntegrationTest, TokenFileIsAskedOfTcpProducers) {
  std::ofstream(dir_ + "/token") << "s3cret-token-of-24-chars\n";
  fs::permissions(dir_ + "/token", fs::perms::owner_read | fs::perms::owner_write);
  const pid_t collector = StartCollector(
      {"--listen", "tcp:127.0.0.1:0", "--token-file", dir_ + "/token"});
  std::string addr;
  for (int i = 0; i < 2000 && addr.empty(); ++i) {
    const std::string log = Slurp(log_);
    const size_t at = log.find("listening on tcp:");
    if (at != std::string::npos && log.find(',', at) != std::string::npos) {
      addr = log.substr(at + 13, log.find(',', at) - at - 13);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(addr.empty()) << Slurp(log_);
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", addr}, dir_ + "/with.log",
                       {"ROOFTRACE_TOKEN=s3cret-token-of-24-chars"})),
            0)
      << Slurp(dir_ + "/with.log");
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", addr}, dir_ + "/without.log",
                       {"ROOFTRACE_TOKEN="})),
            91);
  EXPECT_NE(Slurp(dir_ + "/without.log").find("sent no token"),
            std::string::npos)
      << Slurp(dir_ + "/without.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(collector, SIGTERM);
  ASSERT_EQ(Wait(collector), 0);
  EXPECT_NE(Slurp(log_).find("refused: sent no token"), std::string::npos)
      << Slurp(log_);
  EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM kernels"), 125);
}

// profile runs the command with the injection environment (a stand-in
// producer reads ROOFTRACE_SINK), passes its exit code through and stores
// the run.
TEST_F(CollectorIntegrationTest, ProfilePassesExitCodeAndStoresRun) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", kProducer,
                         "--exit-code", "3"},
                        log_, {fake});
  EXPECT_EQ(Wait(p), 3) << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 125);
  EXPECT_EQ(q.Text("SELECT origin FROM runs"), "profile");
  EXPECT_EQ(q.Text("SELECT command FROM runs"), kProducer + " --exit-code 3");
  const std::string out = Slurp(log_);
  EXPECT_NE(out.find("sm90_xmma_gemm"), std::string::npos) << out;
  EXPECT_NE(out.find("prefill"), std::string::npos) << out;
}

// Missing command, unknown command, no injection library: exit 2 with a
// message saying what to do.
TEST_F(CollectorIntegrationTest, ProfileBadInvocationsExitTwo) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  EXPECT_EQ(Wait(Spawn({kCli, "profile", "-o", store_}, log_, {fake})), 2);
  EXPECT_NE(Slurp(log_).find("no command given"), std::string::npos);
  EXPECT_EQ(Wait(Spawn({kCli, "profile", "--", "true"}, log_,
                       {"ROOFTRACE_INJECT_LIB=" + dir_ + "/missing.so"})),
            2);
  EXPECT_NE(Slurp(log_).find("injection library was not found"),
            std::string::npos);
}

// #29 D12: a command that is not there exits 127, as a shell's would (it
// used to exit 2), with one line naming it; nothing is stored.
TEST_F(CollectorIntegrationTest, MissingCommandExits127) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  EXPECT_EQ(Wait(Spawn({kCli, "profile", "-o", store_, "--",
                        "no-such-command-xyz"},
                       log_, {fake})),
            127);
  EXPECT_NE(Slurp(log_).find("no-such-command-xyz: command not found"),
            std::string::npos)
      << Slurp(log_);
  EXPECT_FALSE(fs::exists(store_));
}

// A command that says which signals it got: it traps USR1 and QUIT,
// writes "ready" once the traps are set, and leaves after its first signal
// (or 10 s).
std::vector<std::string> SignalRecorder(const std::string& got,
                                        const std::string& ready) {
  const std::string script =
      "trap 'echo USR1 >> " + got + "; exit 0' USR1; "
      "trap 'echo QUIT >> " + got + "; exit 0' QUIT; "
      "trap 'echo INT >> " + got + "; exit 0' INT; "
      "echo > " + ready + "; i=0; "
      "while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done";
  return {"/bin/sh", "-c", script};
}

// Issue 18 item 10: USR1 or QUIT sent to profile ended it (their default
// action) and orphaned the command. They are passed on: the command gets
// the signal once, and profile returns the command's exit code.
TEST_F(CollectorIntegrationTest, ProfilePassesOtherSignalsOn) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  for (const int sig : {SIGUSR1, SIGQUIT}) {
    const std::string got = dir_ + "/got." + std::to_string(sig);
    const std::string ready = dir_ + "/ready." + std::to_string(sig);
    std::vector<std::string> argv = {kCli, "profile", "-o",
                                     dir_ + "/sig" + std::to_string(sig) +
                                         ".sqlite", "--"};
    for (const auto& a : SignalRecorder(got, ready)) argv.push_back(a);
    const pid_t p = Spawn(argv, log_, {fake});
    ASSERT_TRUE(WaitForFile(ready)) << Slurp(log_);
    kill(p, sig);
    EXPECT_EQ(Wait(p), 0) << "signal " << sig << ": " << Slurp(log_);
    EXPECT_EQ(Slurp(got), std::string(sig == SIGUSR1 ? "USR1" : "QUIT") + "\n");
  }
}

// Issue 18 item 5: Ctrl-C at a terminal signals the whole foreground
// process group, the profiled command included; profile passed it on
// again, so the command got SIGINT twice (Python: two KeyboardInterrupts).
// Here profile runs on a pseudo-terminal and ^C is typed: the command must
// count exactly one SIGINT.
TEST_F(CollectorIntegrationTest, TerminalCtrlCReachesTheCommandOnce) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const std::string got = dir_ + "/ints";
  const std::string ready = dir_ + "/ready";
  const std::string script =
      "import signal, sys, time\n"
      "n = 0\n"
      "def on_int(*_):\n"
      "    global n\n"
      "    n += 1\n"
      "signal.signal(signal.SIGINT, on_int)\n"
      "open(sys.argv[2], 'w').write('ready')\n"
      "end = time.time() + 10\n"
      "while n == 0 and time.time() < end: time.sleep(0.01)\n"
      "time.sleep(0.5)\n"
      "open(sys.argv[1], 'w').write(str(n))\n";
  int master = -1;
  const pid_t p = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(p, 0);
  if (p == 0) {
    const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    putenv(strdup(fake.c_str()));
    execl(kCli.c_str(), kCli.c_str(), "profile", "-o",
          (dir_ + "/tty.sqlite").c_str(), "--", "/usr/bin/env", "python3",
          "-c", script.c_str(), got.c_str(), ready.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_TRUE(WaitForFile(ready)) << Slurp(log_);
  ASSERT_EQ(write(master, "\x03", 1), 1);  // ^C: SIGINT to the group
  EXPECT_EQ(Wait(p), 0) << Slurp(log_);
  close(master);
  EXPECT_EQ(Slurp(got), "1") << Slurp(log_);
}

// Issue 18 item 4: `sh -c 'app &'` exits at once; the app records kernels
// and NVTX ranges a second later. profile used to stop its collector and
// delete its socket after 5 s of no connection, so the app's records went
// nowhere. It waits for the app, says so once, and stores all of it.
TEST_F(CollectorIntegrationTest, ProfileWaitsForWhatTheCommandLeftRunning) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  test_support::LlmTraceOptions o;
  o.decode_steps = 4;
  o.max_batch_records = 50;
  o.nvtx = true;
  test_support::TraceBuilder b(o.session);
  const test_support::LlmTraceTruth truth = test_support::GenerateLlmTrace(o, &b);
  ASSERT_GT(truth.nvtx_ranges, 0u);
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", "/bin/sh", "-c",
                         "(sleep 1; exec " + kProducer + " --nvtx) &"},
                        log_, {fake});
  EXPECT_EQ(Wait(p), 0) << Slurp(log_);
  const std::string log = Slurp(log_);
  // The subshell and its `sleep 1`, then the app in the subshell's place:
  // one line when the wait starts, none as it goes on.
  EXPECT_EQ(Count(log, "waiting for"), 1u) << log;
  EXPECT_NE(log.find("the command exited; waiting for 2 processes it left "
                     "running (pid "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("Ctrl-C stops waiting and keeps what was received"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("INCOMPLETE"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"),
            static_cast<int64_t>(truth.kernels));
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges"),
            static_cast<int64_t>(truth.nvtx_ranges));
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 1);
}

// Issue 18 item 4: SIGTERM while profile waits for two processes the
// command left running, one connected and one writing a spool (it could
// not reach the socket), both paused mid-stream. profile stops waiting
// without signalling them, stores what was received, marks the run
// incomplete with the reason, keeps the spool being written (it used to
// delete its folder), says how to store it, and exits 3.
TEST_F(CollectorIntegrationTest, SigtermWhileWaitingKeepsTheRestForLater) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const std::string script =
      kProducer + " --pause-after 20 --ready-file " + dir_ + "/r1 & echo $! > " +
      dir_ + "/p1; " + kProducer + " --spool --pause-after 5 --ready-file " +
      dir_ + "/r2 & echo $! > " + dir_ + "/p2";
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", "/bin/sh", "-c",
                         script},
                        log_, {fake});
  const pid_t connected = PidFrom(dir_ + "/p1");
  const pid_t spooling = PidFrom(dir_ + "/p2");
  ASSERT_TRUE(WaitForFile(dir_ + "/r1")) << Slurp(log_);
  ASSERT_TRUE(WaitForFile(dir_ + "/r2")) << Slurp(log_);
  const bool waiting =
      WaitForText(log_, "waiting for 2 processes it left running");
  kill(p, SIGTERM);
  const int rc = Wait(p);
  const std::string log = Slurp(log_);
  // Both are still running: profile did not signal them.
  EXPECT_EQ(kill(connected, 0), 0);
  EXPECT_EQ(kill(spooling, 0), 0);
  KillAndForget(connected);
  KillAndForget(spooling);
  ASSERT_TRUE(waiting) << log;
  EXPECT_EQ(rc, 3) << log;
  EXPECT_NE(log.find("INCOMPLETE: profile stopped waiting (SIGTERM) for 2 "
                     "processes the command left running (pid "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("rooftrace collect --store " + store_ + " --ingest "),
            std::string::npos)
      << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
  EXPECT_NE(q.Text("SELECT incomplete_reason FROM runs")
                .find("profile stopped waiting (SIGTERM)"),
            std::string::npos);
  EXPECT_NE(q.Text("SELECT incomplete_reason FROM runs")
                .find("1 spool was still being written"),
            std::string::npos);
  EXPECT_GT(q.Int("SELECT COUNT(*) FROM kernels"), 0);  // the connected one
  // The spool is kept where its writer writes it, named in the message.
  const std::string tag = "(being written: ";
  const size_t at = log.find(tag);
  ASSERT_NE(at, std::string::npos) << log;
  const std::string spool =
      log.substr(at + tag.size(), log.find(')', at) - at - tag.size());
  ASSERT_TRUE(fs::exists(spool)) << log;
  EXPECT_NE(spool.find("-" + std::to_string(spooling) + "-"),
            std::string::npos);
  // Once its writer has ended, it is stored as the message says.
  for (int i = 0; i < 1000 && kill(spooling, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::string later = dir_ + "/later.sqlite";
  Wait(Spawn({kCli, "collect", "--store", later, "--ingest", spool}));
  EXPECT_GT(StoreQuery(later).Int("SELECT COUNT(*) FROM kernels"), 0);
  EXPECT_EQ(KeptFolder(log), fs::path(spool).parent_path().string());
  RemoveKeptFolder(KeptFolder(log));
}

// profile on a pseudo-terminal, its stderr to `log`; *master is the
// terminal's side to type on.
pid_t SpawnOnPty(const std::vector<std::string>& argv, const std::string& log,
                 const std::vector<std::string>& env, int* master) {
  const pid_t pid = forkpty(master, nullptr, nullptr, nullptr);
  if (pid > 0) Spawned().push_back(pid);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    ExecWith(argv, env);
  }
  return pid;
}

// Ctrl-C while profile waits for a process the command left running
// (started by Python, so it does not ignore SIGINT): the terminal signals
// that process too, and it ends, half a second later, by recording its
// kernels. profile gives it the time to, and the run is whole.
TEST_F(CollectorIntegrationTest, CtrlCWhileWaitingLetsEndingProcessesFlush) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const std::string ready = dir_ + "/ready";
  const std::string child =
      "import os, signal, sys, time\n"
      "got = []\n"
      "signal.signal(signal.SIGINT, lambda *_: got.append(1))\n"
      "open(sys.argv[2], 'w').write('ready')\n"
      "end = time.time() + 10\n"
      "while not got and time.time() < end: time.sleep(0.01)\n"
      "time.sleep(0.5)\n"  // ending takes a while
      "os.execv(sys.argv[1], [sys.argv[1]])\n";
  const std::string parent =
      "import subprocess, sys\n"
      "subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2], "
      "sys.argv[3]])\n";
  int master = -1;
  const pid_t p = SpawnOnPty({kCli, "profile", "-o", store_, "--",
                              "/usr/bin/env", "python3", "-c", parent, child,
                              kProducer, ready},
                             log_, {fake}, &master);
  ASSERT_GE(p, 0);
  ASSERT_TRUE(WaitForFile(ready)) << Slurp(log_);
  ASSERT_TRUE(WaitForText(log_, "waiting for 1 process it left running"))
      << Slurp(log_);
  ASSERT_EQ(write(master, "\x03", 1), 1);  // ^C: SIGINT to the group
  EXPECT_EQ(Wait(p), 0) << Slurp(log_);
  close(master);
  const std::string log = Slurp(log_);
  RemoveKeptFolder(KeptFolder(log));  // none, unless the test fails
  EXPECT_NE(log.find("stopping; the processes that got SIGINT have 5 s to "
                     "end"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("INCOMPLETE"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 125);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 1);
}

// Ctrl-C while profile waits for `app &`, which ignores SIGINT (a shell's
// background job): nothing is ending, so profile stops at once, the run
// incomplete, exit 3.
TEST_F(CollectorIntegrationTest, CtrlCStopsAtOnceWhenLeftProcessesIgnoreIt) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  int master = -1;
  const pid_t p = SpawnOnPty(
      {kCli, "profile", "-o", store_, "--", "/bin/sh", "-c",
       kProducer + " --pause-after 5 --ready-file " + dir_ +
           "/ready & echo $! > " + dir_ + "/pid"},
      log_, {fake}, &master);
  ASSERT_GE(p, 0);
  const pid_t app = PidFrom(dir_ + "/pid");
  ASSERT_TRUE(WaitForFile(dir_ + "/ready")) << Slurp(log_);
  ASSERT_TRUE(WaitForText(log_, "waiting for 1 process it left running"))
      << Slurp(log_);
  const auto typed = std::chrono::steady_clock::now();
  ASSERT_EQ(write(master, "\x03", 1), 1);
  const int rc = Wait(p);
  const auto took = std::chrono::steady_clock::now() - typed;
  close(master);
  const std::string log = Slurp(log_);
  EXPECT_EQ(kill(app, 0), 0) << "the app ignores SIGINT";
  KillAndForget(app);
  EXPECT_EQ(rc, 3) << log;
  EXPECT_LT(took, std::chrono::seconds(3)) << log;
  EXPECT_EQ(log.find("stopping;"), std::string::npos) << log;
  EXPECT_NE(log.find("INCOMPLETE: profile stopped waiting (SIGINT)"),
            std::string::npos)
      << log;
  // Its folder is kept for the spool it may write.
  const std::string kept = KeptFolder(log);
  EXPECT_TRUE(fs::is_directory(kept)) << log;
  RemoveKeptFolder(kept);
}

// A command that starts a daemon: with --wait-descendants=no profile
// returns once the command has exited, says the daemon goes on, and the
// run is not marked incomplete (the daemon sent nothing).
TEST_F(CollectorIntegrationTest, ProfileNeedNotWaitForADaemon) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const pid_t p = Spawn({kCli, "profile", "-o", store_,
                         "--wait-descendants=no", "--", "/bin/sh", "-c",
                         kProducer + "; sleep 30 & echo $! > " + dir_ +
                             "/daemon"},
                        log_, {fake});
  const int rc = Wait(p, 15000);
  const pid_t daemon = PidFrom(dir_ + "/daemon");
  const std::string log = Slurp(log_);
  EXPECT_EQ(kill(daemon, 0), 0);
  KillAndForget(daemon);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("1 process the command left running goes on (pid " +
                     std::to_string(daemon) + " sleep)"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("INCOMPLETE"), std::string::npos) << log;
  EXPECT_EQ(log.find("waiting for"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 125);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 1);
  // The private folder stays for the daemon's spools; it holds none.
  const std::string kept = KeptFolder(log);
  EXPECT_TRUE(fs::is_directory(kept)) << log;
  EXPECT_TRUE(fs::is_empty(kept)) << log;  // the socket is gone too
  RemoveKeptFolder(kept);
}

// The same with the real libinject and an NVTX app: its ranges, recorded
// a second after the command exited, are in the run.
TEST_F(CollectorIntegrationTest, ProfileWaitsForALeftRunningNvtxApp) {
  const std::string lib =
      std::string(ROOFTRACE_BINARY_DIR) + "/lib/librooftrace_inject.so";
  const std::string app =
      std::string(ROOFTRACE_BINARY_DIR) + "/tests/libinject_apps/rt_nvtx_app";
  if (!fs::exists(lib) || !fs::exists(app)) {
    GTEST_SKIP() << lib << " or " << app << " not built (needs the CUDA "
                 << "toolkit)";
  }
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", "/bin/sh", "-c",
                         "(sleep 1; exec " + app + " basic) &"},
                        log_, {"ROOFTRACE_INJECT_LIB=" + lib});
  EXPECT_EQ(Wait(p), 0) << Slurp(log_);
  EXPECT_NE(Slurp(log_).find("waiting for 2 processes it left running"),
            std::string::npos)
      << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name IN "
                  "('outer', 'inner')"),
            2);
}

// With the real libinject built: profile a trivial command end to end.
TEST_F(CollectorIntegrationTest, ProfileWithRealInjectLibrary) {
  const std::string lib =
      std::string(ROOFTRACE_BINARY_DIR) + "/lib/librooftrace_inject.so";
  if (!fs::exists(lib)) {
    GTEST_SKIP() << lib << " not built (needs the CUDA toolkit)";
  }
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", "/bin/sh", "-c",
                         "exit 4"},
                        log_, {"ROOFTRACE_INJECT_LIB=" + lib});
  EXPECT_EQ(Wait(p), 4) << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 1);
}

// The NVTX test program of libinject's tests, run under the real library.
std::string NvtxApp() {
  return std::string(ROOFTRACE_BINARY_DIR) + "/tests/libinject_apps/rt_nvtx_app";
}

std::string InjectLib() {
  return std::string(ROOFTRACE_BINARY_DIR) + "/lib/librooftrace_inject.so";
}

// A forked child records three NVTX ranges and ends with _exit() 1 ms
// later: no atexit, no Goodbye, and (unless the machine delays it past the
// sender's first pass, 50 ms) its sender never wrote them. The ranges are
// in the store all the same, read from its live buffer.
TEST_F(CollectorIntegrationTest, RangesOfAChildThatExitsAbruptlyAreStored) {
  if (!fs::exists(InjectLib()) || !fs::exists(NvtxApp())) {
    GTEST_SKIP() << "libinject not built (needs the CUDA toolkit)";
  }
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", NvtxApp(),
                         "fork-exit"},
                        log_, {"ROOFTRACE_INJECT_LIB=" + InjectLib()});
  EXPECT_EQ(Wait(p), 7) << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'child'"), 3)
      << Slurp(log_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'outer'"), 1);
  const int64_t recovered = q.Int(
      "SELECT value FROM import_stats WHERE name = 'records_recovered'");
  EXPECT_LE(recovered, 3);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'records_lost_at_exit'"),
            0);
  if (recovered > 0) {
    EXPECT_NE(Slurp(log_).find("records recovered from its live buffer"),
              std::string::npos)
        << Slurp(log_);
  }
}

// A producer SIGKILLed right after recording 20,000 ranges in a tight loop
// (most still queued or in a pass being written): every range is stored,
// none twice, and nothing is counted lost.
TEST_F(CollectorIntegrationTest, SigkilledProducerLosesNoRecordedRange) {
  if (!fs::exists(InjectLib()) || !fs::exists(NvtxApp())) {
    GTEST_SKIP() << "libinject not built (needs the CUDA toolkit)";
  }
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", NvtxApp(),
                         "kill-self", "20000"},
                        log_, {"ROOFTRACE_INJECT_LIB=" + InjectLib()});
  EXPECT_EQ(Wait(p), 128 + SIGKILL) << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'step'"),
            20000)
      << Slurp(log_);
  EXPECT_EQ(q.Int("SELECT COUNT(DISTINCT range_id) FROM nvtx_ranges "
                  "WHERE name = 'step'"),
            20000);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'records_lost_at_exit'"),
            0);
}

// A producer killed before any collector read its stream (here: a socket
// that accepts connections but never reads) leaves only its live buffer;
// `collect --ingest FILE.live` stores every range it held, and leaves the
// file in place as it leaves a spool.
TEST_F(CollectorIntegrationTest, IngestOfALiveBufferStoresWhatItHeld) {
  if (!fs::exists(InjectLib()) || !fs::exists(NvtxApp())) {
    GTEST_SKIP() << "libinject not built (needs the CUDA toolkit)";
  }
  const int deaf = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_.c_str());
  ASSERT_EQ(bind(deaf, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(listen(deaf, 4), 0);
  const pid_t app = Spawn({NvtxApp(), "kill-self", "20000"}, log_,
                          {"NVTX_INJECTION64_PATH=" + InjectLib(),
                           "LD_PRELOAD=" + InjectLib(),
                           "ROOFTRACE_SINK=unix:" + sock_,
                           "ROOFTRACE_SPOOL_DIR=" + dir_});
  EXPECT_EQ(Wait(app), 128 + SIGKILL) << Slurp(log_);
  close(deaf);
  std::vector<std::string> live;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() == ".live") live.push_back(e.path().string());
  }
  ASSERT_EQ(live.size(), 1u) << Slurp(log_);
  const std::string ingest_log = dir_ + "/ingest.log";
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest",
                        live[0]},
                       ingest_log)),
            0)
      << Slurp(ingest_log);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(DISTINCT range_id) FROM nvtx_ranges "
                  "WHERE name = 'step'"),
            20000)
      << Slurp(ingest_log);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'records_lost_at_exit'"),
            0);
  EXPECT_TRUE(fs::exists(live[0]));
}

// A host records 200,000 NVTX ranges in a tight loop into a 1 MiB buffer
// (about 2,700 records): by default most are dropped and counted; with
// --lossless the host waits and every range is stored, none dropped.
TEST_F(CollectorIntegrationTest, LosslessProfileKeepsEveryRangeOfABurst) {
  if (!fs::exists(InjectLib()) || !fs::exists(NvtxApp())) {
    GTEST_SKIP() << "libinject not built (needs the CUDA toolkit)";
  }
  const std::string lossy = dir_ + "/lossy.sqlite";
  pid_t p = Spawn({kCli, "profile", "-o", lossy, "--buffer-mb", "1", "--",
                   NvtxApp(), "burst", "200000"},
                  log_, {"ROOFTRACE_INJECT_LIB=" + InjectLib()});
  ASSERT_EQ(Wait(p), 7) << Slurp(log_);
  StoreQuery dropped(lossy);
  const int64_t kept =
      dropped.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'burst'");
  EXPECT_LT(kept, 200000);
  EXPECT_EQ(dropped.Int("SELECT value FROM import_stats "
                        "WHERE name = 'producer_dropped_nvtx_range'"),
            200000 - kept);
  p = Spawn({kCli, "profile", "-o", store_, "--buffer-mb", "1", "--lossless",
             "--", NvtxApp(), "burst", "200000"},
            log_, {"ROOFTRACE_INJECT_LIB=" + InjectLib()});
  ASSERT_EQ(Wait(p), 7) << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'burst'"),
            200000);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'producer_dropped_nvtx_range'"),
            0);
}

// The store cannot grow (a full disk: SQLite's max_page_count through the
// store's test hook ROOFTRACE_TEST_STORE_PAGE_BUDGET): collect exits 3, the
// run is stored incomplete with the reason and the kernels it lost, and
// the raw stream is kept; ingested again it gives every kernel.
TEST_F(CollectorIntegrationTest, FullStoreMarksRunIncompleteAndKeepsRaw) {
  const pid_t collector =
      Spawn({kCli, "collect", "--store", store_, "--listen", "unix:" + sock_},
            log_, {"ROOFTRACE_TEST_STORE_PAGE_BUDGET=0"});
  ASSERT_TRUE(WaitListening()) << Slurp(log_);
  // 61 steps of 25 kernels: far more than the store's empty pages hold.
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", "unix:" + sock_, "--steps",
                        "60"})),
            0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(collector, SIGTERM);
  EXPECT_EQ(Wait(collector), 3) << Slurp(log_);
  const std::string log = Slurp(log_);
  EXPECT_NE(log.find("INCOMPLETE"), std::string::npos) << log;
  EXPECT_NE(log.find("1525 kernels not stored"), std::string::npos) << log;
  EXPECT_EQ(log.find("kernels stored in"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
  EXPECT_NE(q.Text("SELECT incomplete_reason FROM runs").find("full"),
            std::string::npos);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE "
                  "name='kernels_not_stored'"),
            1525);
  const std::string raw = store_ + ".raw/run1-1.rft";
  ASSERT_TRUE(fs::exists(raw)) << log;
  EXPECT_NE(log.find(raw), std::string::npos) << log;
  const std::string again = dir_ + "/again.sqlite";
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", again, "--ingest", raw})),
            0);
  StoreQuery a(again);
  EXPECT_EQ(a.Int("SELECT COUNT(*) FROM kernels"), 1525);
  EXPECT_EQ(a.Int("SELECT complete FROM runs"), 1);
}

// A store that takes every row keeps no raw stream (unless --keep-raw).
TEST_F(CollectorIntegrationTest, StoredStreamsLeaveNoRawFiles) {
  const pid_t collector = StartCollector();
  ASSERT_TRUE(WaitListening());
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", "unix:" + sock_})), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(collector, SIGTERM);
  EXPECT_EQ(Wait(collector), 0) << Slurp(log_);
  EXPECT_FALSE(fs::exists(store_ + ".raw"));
}

// --ingest into a full store: exit 3, the run says why, the file is kept.
TEST_F(CollectorIntegrationTest, IngestIntoFullStoreExitsIncomplete) {
  const std::string trace = WriteLlmTrace(60);
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest", trace},
                       log_, {"ROOFTRACE_TEST_STORE_PAGE_BUDGET=0"})),
            3);
  const std::string log = Slurp(log_);
  EXPECT_NE(log.find("ingest it again"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
  EXPECT_TRUE(fs::exists(trace));
}

// --ingest of a trace cut at 50 %: what was read is stored as an
// incomplete run saying at which byte the file broke, exit 3 (issue 18
// item 18: it was exit 0 with "0 kernels").
TEST_F(CollectorIntegrationTest, IngestOfACutTraceExitsIncomplete) {
  test_support::LlmTraceOptions o;
  o.decode_steps = 4;
  o.max_batch_records = 20;
  test_support::TraceBuilder b(o.session);
  test_support::GenerateLlmTrace(o, &b);
  const std::string bytes = b.Framed();
  const std::string cut = dir_ + "/cut.rft";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest", cut},
                       log_)),
            3);
  const std::string log = Slurp(log_);
  EXPECT_NE(log.find("cut short"), std::string::npos) << log;
  EXPECT_NE(log.find("at byte"), std::string::npos) << log;
  EXPECT_NE(log.find("stored INCOMPLETE"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
  EXPECT_GT(q.Int("SELECT COUNT(*) FROM kernels"), 0);
  EXPECT_NE(q.Text("SELECT incomplete_reason FROM runs").find("at byte"),
            std::string::npos);
}

// profile into a full store: the command's exit code 0 becomes 3, the
// summary says INCOMPLETE, the raw stream is kept beside the store.
TEST_F(CollectorIntegrationTest, ProfileIntoFullStoreExitsIncomplete) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const pid_t p = Spawn({kCli, "profile", "-o", store_, "--", kProducer,
                         "--steps", "60"},
                        log_, {fake, "ROOFTRACE_TEST_STORE_PAGE_BUDGET=0"});
  EXPECT_EQ(Wait(p), 3) << Slurp(log_);
  const std::string log = Slurp(log_);
  EXPECT_NE(log.find("INCOMPLETE"), std::string::npos) << log;
  EXPECT_NE(log.find(store_ + ".raw/"), std::string::npos) << log;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
}

// The words of the line in `log` that follows `marker` ("" when none).
std::vector<std::string> WordsAfter(const std::string& log,
                                   const std::string& marker) {
  const size_t at = log.find(marker);
  if (at == std::string::npos) return {};
  const size_t from = at + marker.size();
  std::istringstream line(log.substr(from, log.find('\n', from) - from));
  std::vector<std::string> words;
  for (std::string w; line >> w;) words.push_back(w);
  return words;
}

// #29: profile into a store that refuses its writes, after two producers
// died leaving live buffers in profile's private folder: one whose stream
// never went out (its buffer alone), one that had fallen back to a spool
// that names its buffer. What the buffers hold could not be stored: they
// are kept beside the store and the message's command to store them again
// names what it needs; run as printed, it stores every range. (The buffers
// used to go with the private folder: the spool alone gave 3 ranges of
// 10,003 and the other buffer's 20,000 were gone.)
TEST_F(CollectorIntegrationTest, ProfileIntoFullStoreKeepsLiveBuffers) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const pid_t p = Spawn(
      {kCli, "profile", "-o", store_, "--", "/bin/sh", "-c",
       kProducer + " --dead 20000; " + kProducer + " --dead 10000 --spool"},
      log_, {fake, "ROOFTRACE_TEST_STORE_PAGE_BUDGET=0"});
  EXPECT_EQ(Wait(p), 3) << Slurp(log_);
  const std::string log = Slurp(log_);
  EXPECT_EQ(StoreQuery(store_).Int("SELECT complete FROM runs"), 0);
  std::vector<std::string> again =
      WordsAfter(log, "store them again with: ");
  ASSERT_GE(again.size(), 5u) << log;
  ASSERT_EQ(again[0], "rooftrace") << log;
  again[0] = kCli;
  // The files come after --ingest (--recovers-run names the run before).
  const auto files = std::find(again.begin(), again.end(), "--ingest");
  ASSERT_NE(files, again.end()) << log;
  for (auto f = files + 1; f != again.end(); ++f) {
    EXPECT_TRUE(fs::exists(*f)) << *f << "\n" << log;
  }
  const std::string again_log = dir_ + "/again.log";
  EXPECT_EQ(Wait(Spawn(again, again_log)), 0) << Slurp(again_log);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges "
                  "WHERE name = 'dead' AND run_id > 1"),
            30003)
      << log << Slurp(again_log);
  // The spool's buffer was found beside it, not named on the line.
  EXPECT_EQ(q.Int("SELECT SUM(value) FROM import_stats WHERE run_id > 1 "
                  "AND name = 'records_recovered'"),
            30000);
  EXPECT_EQ(Slurp(again_log).find("cannot open"), std::string::npos)
      << Slurp(again_log);
  // The recovered run replaced profile's incomplete run 1 (#37.4): both
  // are incomplete (their producers sent no Goodbye), the recovered one
  // holds all of it.
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 1) << Slurp(again_log);
  EXPECT_NE(Slurp(again_log).find("it replaces incomplete run 1"),
            std::string::npos)
      << Slurp(again_log);
}

// A producer that died after falling back to its spool: profile reads the
// spool and, through it, the live buffer the spool names; the sweep for
// buffers without a stream does not read that buffer a second time. (It
// did: its records were stored twice, 10,003 ranges stored as 20,003.)
TEST_F(CollectorIntegrationTest, ProfileReadsASpoolsLiveBufferOnce) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  EXPECT_EQ(Wait(Spawn({kCli, "profile", "-o", store_, "--", kProducer,
                        "--dead", "10000", "--spool"},
                       log_, {fake})),
            0)
      << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'dead'"),
            10003)
      << Slurp(log_);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'records_recovered'"),
            10000);
}

// #29 D6: the limits a collector sets its peers are options of `collect`
// and of `profile` (its embedded collector), listed in --help. A value
// out of range exits 2 with one line naming the option, before anything
// listens or runs. (They were fixed in the code, or, for profile, not
// settable at all.)
TEST_F(CollectorIntegrationTest, ServerLimitOptionsAreCheckedAndNamed) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--hello-timeout-ms", "0"},       {"--stall-timeout-ms", "-1"},
      {"--min-frame-bytes-per-s", "-5"}, {"--progress-grace-ms", "99"},
      {"--max-connections", "0"},        {"--evict-idle-ms", "-1"},
      {"--memory-budget-mib", "0"},      {"--max-connections", "65537"}};
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  for (const std::string command : {"collect", "profile"}) {
    const std::string help_log = dir_ + "/help.log";
    ASSERT_EQ(Wait(Spawn({kCli, command, "--help"}, help_log)), 0);
    const std::string help = Slurp(help_log);
    for (const auto& [option, value] : bad) {
      EXPECT_NE(help.find(option), std::string::npos) << command << option;
      std::vector<std::string> argv = {kCli, command, option, value};
      if (command == "collect") {
        argv.insert(argv.end(), {"--store", store_, "--listen",
                                 "unix:" + sock_});
      } else {
        argv.insert(argv.end(), {"-o", store_, "--", "/bin/true"});
      }
      EXPECT_EQ(Wait(Spawn(argv, log_, {fake}), 5000), 2)
          << command << " " << option << " " << value << ": " << Slurp(log_);
      EXPECT_NE(Slurp(log_).find(option + " " + value + ": give "),
                std::string::npos)
          << command << ": " << Slurp(log_);
      EXPECT_FALSE(fs::exists(store_)) << command << " " << option;
    }
  }
}

// A connected Unix-socket peer of the collector at `sock` that has sent
// the Hello of a producer with `pid` (and then `extra` bytes).
int PeerAfterHello(const std::string& sock, uint32_t pid,
                   const std::string& extra = "") {
  const int fd = ConnectWhenListening(sock);
  test_support::SessionInfo info;
  info.pid = pid;
  test_support::TraceBuilder b(info);
  b.Hello();
  const std::string bytes = b.Framed() + extra;
  EXPECT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
  return fd;
}

// #29 D6: the options reach the collector. A silent peer is closed after
// --hello-timeout-ms; a frame trickling in under --min-frame-bytes-per-s
// is closed after --progress-grace-ms; a frame announced past
// --memory-budget-mib is refused naming the option; with
// --max-connections 1 a new peer takes the slot of one idle for
// --evict-idle-ms. A real producer is then stored whole.
TEST_F(CollectorIntegrationTest, ServerLimitOptionsTakeEffect) {
  const pid_t collector = StartCollector(
      {"--listen", "unix:" + sock_, "--hello-timeout-ms", "300",
       "--min-frame-bytes-per-s", "100000", "--progress-grace-ms", "300",
       "--max-connections", "1", "--evict-idle-ms", "200",
       "--memory-budget-mib", "1"});
  ASSERT_TRUE(WaitListening()) << Slurp(log_);
  const int silent = ConnectWhenListening(sock_);
  EXPECT_TRUE(WaitForText(log_, "sent no Hello within 300 ms")) << Slurp(log_);
  close(silent);

  std::string big;
  wire::AppendFrame(&big, std::string(64 << 10, 'x'));
  const int slow = PeerAfterHello(sock_, 11, big.substr(0, 16));
  for (int i = 0; i < 40 && !WaitForText(log_, "under the floor", 50); ++i) {
    (void)!send(slow, "x", 1, MSG_NOSIGNAL);  // closed at the end
  }
  EXPECT_NE(Slurp(log_).find("under the floor of 100000 bytes/s"),
            std::string::npos)
      << Slurp(log_);
  close(slow);

  std::string huge;
  wire::AppendFrame(&huge, std::string(2 << 20, 'x'));
  const int greedy = PeerAfterHello(sock_, 12, huge.substr(0, 16));
  EXPECT_TRUE(WaitForText(log_, "collect --memory-budget-mib N"))
      << Slurp(log_);
  close(greedy);

  const int idle = PeerAfterHello(sock_, 13);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", "unix:" + sock_})), 0)
      << Slurp(log_);
  EXPECT_TRUE(WaitForText(log_, "all 1 connection slots were taken"))
      << Slurp(log_);
  close(idle);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(collector, SIGTERM);
  EXPECT_EQ(Wait(collector), 0) << Slurp(log_);
  EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM kernels"), 125)
      << Slurp(log_);
}

// A second collector on the socket path of a live one refuses with a
// clear message and leaves it alone (it used to unlink the live socket);
// a stale socket file (no one listening) is replaced.
TEST_F(CollectorIntegrationTest, LiveSocketIsNotTakenOver) {
  const pid_t first = StartCollector();
  ASSERT_TRUE(WaitListening()) << Slurp(log_);
  close(ConnectWhenListening(sock_));  // listening, not only bound
  const std::string second_log = dir_ + "/second.log";
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", dir_ + "/second.sqlite",
                        "--listen", "unix:" + sock_},
                       second_log)),
            2);
  EXPECT_NE(Slurp(second_log).find("another collector is listening on " +
                                   sock_),
            std::string::npos)
      << Slurp(second_log);
  EXPECT_TRUE(fs::exists(sock_));
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", "unix:" + sock_})), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(first, SIGTERM);
  ASSERT_EQ(Wait(first), 0) << Slurp(log_);
  EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM kernels"), 125);

  // A socket file nobody listens on: taken over.
  const int stale = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  strncpy(sa.sun_path, sock_.c_str(), sizeof(sa.sun_path) - 1);
  ASSERT_EQ(bind(stale, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  close(stale);
  const pid_t again = StartCollector();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Wait(Spawn({kProducer, "--sink", "unix:" + sock_})), 0)
      << Slurp(log_);
  kill(again, SIGTERM);
  EXPECT_EQ(Wait(again), 0) << Slurp(log_);
}

// Another program's SQLite database at `path`: an nsys export's kernel
// table and a row in it, in rollback-journal mode (SQLite's default).
void WriteForeignDatabase(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, "
                         "end INT); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL "
                         "VALUES (1, 2)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
}

// #29 D3: `collect --ingest`, a listening `collect` and `profile` given
// another program's database (here an nsys export) as their store refuse
// it with exit 2 and leave it byte for byte as it was: no header change,
// no journal_mode=wal, no -wal/-shm beside it. (Its header used to be
// rewritten before it was refused.)
TEST_F(CollectorIntegrationTest, ForeignDatabaseIsLeftByteForByte) {
  const std::string foreign = dir_ + "/export.sqlite";
  WriteForeignDatabase(foreign);
  const std::string before = Slurp(foreign);
  ASSERT_GT(before.size(), 100u);
  const std::string trace = WriteLlmTrace(1);
  ASSERT_FALSE(trace.empty());
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const std::vector<std::vector<std::string>> commands = {
      {kCli, "collect", "--store", foreign, "--ingest", trace},
      {kCli, "collect", "--store", foreign, "--listen", "unix:" + sock_},
      {kCli, "profile", "-o", foreign, "--", kProducer}};
  for (const auto& argv : commands) {
    EXPECT_EQ(Wait(Spawn(argv, log_, {fake})), 2)
        << argv[1] << ": " << Slurp(log_);
    EXPECT_NE(Slurp(log_).find("another program"), std::string::npos)
        << argv[1] << ": " << Slurp(log_);
    EXPECT_TRUE(Slurp(foreign) == before) << argv[1] << " changed the file";
    EXPECT_FALSE(fs::exists(foreign + "-wal")) << argv[1];
    EXPECT_FALSE(fs::exists(foreign + "-shm")) << argv[1];
  }
}

// A live buffer at `path` as a producer leaves it, its Hello that of
// `info`; written by a child that then writes a byte to `ready` and waits
// for one on `hold` (-1: ends at once, so its lock is gone as after a
// SIGKILL). Returns the child's pid.
pid_t WriteLiveBuffer(const std::string& path,
                      const test_support::SessionInfo& info, int hold = -1,
                      int ready = -1) {
  test_support::TraceBuilder hello(info);
  hello.Hello();
  const std::string frame = hello.Framed();
  const pid_t child = fork();
  if (child == 0) {
    auto live = inject::LiveBuffer::Create(path, 64, 4096, frame, info.pid,
                                           info.start_unix_ns);
    if (!live.ok()) _exit(1);
    char c = 0;
    if (ready >= 0) (void)!write(ready, &c, 1);
    if (hold >= 0) (void)!read(hold, &c, 1);
    _exit(0);
  }
  return child;
}

// #29 D12, D13: `collect --ingest` of a live buffer it cannot read exits 2
// at once with one line naming the file, and stores nothing (the store is
// not even created): one cut in half, one made a sparse 1 TiB file behind
// its valid header, one its producer still holds. They used to exit 1 and
// leave an empty run with `complete` unset; the 1 TiB file was hashed
// whole (over 10 minutes), deaf to SIGTERM. The intact buffer is stored.
TEST_F(CollectorIntegrationTest, UnreadableLiveBufferExitsTwoWithNoRun) {
  test_support::SessionInfo info;
  const std::string good = dir_ + "/good.live";
  int status = 0;
  const pid_t writer = WriteLiveBuffer(good, info);
  ASSERT_EQ(waitpid(writer, &status, 0), writer);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const std::string cut = dir_ + "/cut.live";
  const std::string sparse = dir_ + "/sparse.live";
  fs::copy_file(good, cut);
  fs::copy_file(good, sparse);
  fs::resize_file(cut, fs::file_size(good) / 2);
  fs::resize_file(sparse, 1ull << 40);
  int hold[2], ready[2];
  ASSERT_EQ(pipe(hold), 0);
  ASSERT_EQ(pipe(ready), 0);
  info.pid += 1;
  const std::string held = dir_ + "/held.live";
  const pid_t holder = WriteLiveBuffer(held, info, hold[0], ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);  // created and locked
  for (const auto& [path, says] :
       std::vector<std::pair<std::string, std::string>>{
           {cut, "does not describe its size"},
           {sparse, "does not describe its size"},
           {held, "still runs"}}) {
    EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest",
                          path},
                         log_)),
              2)
        << Slurp(log_);
    EXPECT_NE(Slurp(log_).find(path), std::string::npos) << Slurp(log_);
    EXPECT_NE(Slurp(log_).find(says), std::string::npos) << Slurp(log_);
    EXPECT_FALSE(fs::exists(store_)) << path;
  }
  ASSERT_EQ(write(hold[1], "x", 1), 1);
  waitpid(holder, nullptr, 0);
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest", good},
                       log_)),
            0)
      << Slurp(log_);
  EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM runs"), 1);
}

// #29 Messages: the lines an ingest writes about live buffers begin with
// the command that runs: a spool whose buffer cannot be read ("rooftrace
// collect: SPOOL: live buffer ...: cannot open it"), a buffer ingested
// alone ("... records recovered"). They said "rooftrace:".
TEST_F(CollectorIntegrationTest, LiveBufferLinesNameTheCommand) {
  test_support::SessionInfo info;
  info.live_buffer = dir_ + "/gone.live";
  test_support::TraceBuilder b(info);
  b.Hello();
  b.AddNvtxRange(1, "step", 1000000000ull, 1000000500ull);
  b.Flush();
  const std::string spool = dir_ + "/spool.rft";
  ASSERT_TRUE(b.WriteFile(spool).ok());
  info.pid += 1;
  info.live_buffer.clear();
  const std::string live = dir_ + "/dead.live";
  int status = 0;
  const pid_t writer = WriteLiveBuffer(live, info);
  ASSERT_EQ(waitpid(writer, &status, 0), writer);
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest", spool,
                        live},
                       log_)),
            0)
      << Slurp(log_);
  const std::string log = Slurp(log_);
  EXPECT_NE(log.find("rooftrace collect: " + spool + ": live buffer " +
                     dir_ + "/gone.live"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("rooftrace collect: testhost:" +
                     std::to_string(info.pid) + " ended without a Goodbye"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("rooftrace: "), std::string::npos) << log;
}

// #29 D15: TCP asks for a token on loopback too (any local user can reach
// a loopback port; it used to need none there): without one, exit 2
// naming --token-file and --insecure-tcp. A token file others may read
// (0644) or a token under 16 characters is refused the same way, before
// anything starts.
TEST_F(CollectorIntegrationTest, TcpNeedsAPrivateLongTokenUnlessInsecure) {
  const std::string good = dir_ + "/good.token", open = dir_ + "/open.token",
                    shorter = dir_ + "/short.token";
  std::ofstream(good) << "0123456789abcdef0123\n";
  std::ofstream(open) << "0123456789abcdef0123\n";
  std::ofstream(shorter) << "s3cret\n";
  const auto owner_only = fs::perms::owner_read | fs::perms::owner_write;
  fs::permissions(good, owner_only);
  fs::permissions(shorter, owner_only);
  fs::permissions(open, owner_only | fs::perms::group_read |
                            fs::perms::others_read);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases =
      {{{}, "TCP needs a shared token, on loopback too"},
       {{}, "--insecure-tcp"},
       {{"--token-file", open}, "other users may read it (mode 0644): "
                                "chmod 600 " + open},
       {{"--token-file", shorter}, "the token has 6 characters; use at "
                                   "least 16"}};
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> argv = {kCli, "collect", "--store", store_,
                                     "--listen", "tcp:127.0.0.1:0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    EXPECT_EQ(Wait(Spawn(argv, log_, {"ROOFTRACE_TOKEN="}), 5000), 2)
        << Slurp(log_);
    EXPECT_NE(Slurp(log_).find(message), std::string::npos) << Slurp(log_);
    EXPECT_FALSE(fs::exists(store_));
  }
  // A short ROOFTRACE_TOKEN too; a private, long one starts.
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--listen",
                        "tcp:127.0.0.1:0"},
                       log_, {"ROOFTRACE_TOKEN=short"}),
                 5000),
            2);
  EXPECT_NE(Slurp(log_).find("ROOFTRACE_TOKEN: the token has 5 characters"),
            std::string::npos)
      << Slurp(log_);
  const pid_t collector = StartCollector(
      {"--listen", "tcp:127.0.0.1:0", "--token-file", good});
  EXPECT_TRUE(WaitForText(log_, "listening on tcp:127.0.0.1:")) << Slurp(log_);
  kill(collector, SIGTERM);
  EXPECT_EQ(Wait(collector), 0) << Slurp(log_);
}

// #29 D14: `collect --ingest` reads a FIFO (what a shell's <(cat x.rft)
// gives) and "-" (standard input) as it reads a file: every kernel is
// stored. A store on standard input is refused, naming what it is and the
// fix, and nothing is stored. (A FIFO was refused by name; before that,
// opening it blocked for ever.)
TEST_F(CollectorIntegrationTest, PipeAndStdinAreIngestedAsStreams) {
  int64_t kernels = 0;
  const std::string trace = WriteLlmTrace(4, &kernels);
  ASSERT_GT(kernels, 0);
  ASSERT_FALSE(trace.empty());
  const std::string fifo = dir_ + "/trace.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const pid_t from_fifo =
      Spawn({kCli, "collect", "--store", store_, "--ingest", fifo}, log_);
  {
    std::ofstream(fifo, std::ios::binary) << Slurp(trace);  // waits for it
  }
  EXPECT_EQ(Wait(from_fifo), 0) << Slurp(log_);
  EXPECT_EQ(Wait(Spawn({"/bin/sh", "-c",
                        "cat " + trace + " | " + kCli + " collect --store " +
                            store_ + " --ingest -"},
                       log_)),
            0)
      << Slurp(log_);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"),
            2 * kernels);
  const std::string other = dir_ + "/other.sqlite";
  EXPECT_EQ(Wait(Spawn({"/bin/sh", "-c",
                        "cat " + store_ + " | " + kCli + " collect --store " +
                            other + " --ingest -"},
                       log_)),
            2)
      << Slurp(log_);
  EXPECT_NE(Slurp(log_).find("an SQLite database"), std::string::npos)
      << Slurp(log_);
  EXPECT_NE(Slurp(log_).find("write it to a file first"), std::string::npos);
  EXPECT_FALSE(fs::exists(other));
}

// #29 Messages: six `collect --ingest` into the same new store at once
// all store their run. The store's file exists, empty, for a moment before
// its header is written, and its tables before its schema version: both
// were taken for a file that is not a store, and of four such ingests
// three were refused with a misleading message.
TEST_F(CollectorIntegrationTest, ConcurrentIngestsIntoANewStoreAllSucceed) {
  const std::string trace = WriteLlmTrace(1);
  ASSERT_FALSE(trace.empty());
  std::vector<pid_t> ingests;
  for (int i = 0; i < 6; ++i) {
    ingests.push_back(Spawn({kCli, "collect", "--store", store_, "--ingest",
                             trace},
                            dir_ + "/ingest" + std::to_string(i) + ".log"));
  }
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(Wait(ingests[i]), 0)
        << Slurp(dir_ + "/ingest" + std::to_string(i) + ".log");
  }
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(DISTINCT run_id) FROM runs WHERE complete = 1"),
            6);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 6 * 50);
}

// #29 D10: user B runs `collect --ingest` into user A's store, in a folder
// both may write. It is refused (exit 2, naming the store, its owner and
// mode) and leaves nothing beside it: B's -wal/-shm files used to stay
// there, after which A got "attempt to write a readonly database". Run as
// root, B is uid 65534; otherwise the store is made read-only.
TEST_F(CollectorIntegrationTest, AnotherUsersStoreIsRefusedWithoutSideFiles) {
  const std::string trace = WriteLlmTrace(1);
  ASSERT_FALSE(trace.empty());
  ASSERT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest", trace},
                       log_)),
            0)
      << Slurp(log_);
  ASSERT_FALSE(fs::exists(store_ + "-wal"));
  const bool root = getuid() == 0;
  fs::permissions(dir_, fs::perms::all);  // a folder both users may write
  fs::permissions(trace, fs::perms::owner_read | fs::perms::group_read |
                             fs::perms::others_read);
  if (!root) {
    fs::permissions(store_, fs::perms::owner_read | fs::perms::group_read |
                                fs::perms::others_read);
  }
  const std::string before = Slurp(store_);
  const std::string err = dir_ + "/b.log";
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    dup2(fd, 2);
    dup2(fd, 1);
    if (root && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(99);
    ExecWith({kCli, "collect", "--store", store_, "--ingest", trace}, {});
  }
  EXPECT_EQ(Wait(pid), 2) << Slurp(err);
  EXPECT_NE(Slurp(err).find(store_ + ": this user cannot write the store"),
            std::string::npos)
      << Slurp(err);
  EXPECT_FALSE(fs::exists(store_ + "-wal"));
  EXPECT_FALSE(fs::exists(store_ + "-shm"));
  EXPECT_TRUE(Slurp(store_) == before);
  // Its owner still writes it.
  fs::permissions(store_, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--ingest", trace},
                       log_)),
            0)
      << Slurp(log_);
}

// A --listen that cannot start (bad spec, port out of range, port in use)
// exits 2 with one line naming it, and leaves no run row behind.
TEST_F(CollectorIntegrationTest, FailedListenLeavesNoRun) {
  const int busy = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(busy, reinterpret_cast<sockaddr*>(&in), sizeof in), 0);
  ASSERT_EQ(listen(busy, 1), 0);
  socklen_t len = sizeof in;
  getsockname(busy, reinterpret_cast<sockaddr*>(&in), &len);
  const std::string busy_port = std::to_string(ntohs(in.sin_port));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tcp:127.0.0.1:99999", "port 99999"},
      {"tcp:127.0.0.1:65536", "port 65536"},
      {"tcp:127.0.0.1:-1", "port -1"},
      {"tcp:127.0.0.1:http", "port http"},
      {"tcp:127.0.0.1", "expected tcp:HOST:PORT"},
      {"udp:1234", "expected unix:PATH or tcp:HOST:PORT"},
      {"tcp:127.0.0.1:" + busy_port, "choose a free port"},
      // Beyond loopback without a token (#18.13): refused before binding.
      {"tcp:0.0.0.0:0", "needs a shared token: write one to a file"},
  };
  for (const auto& [spec, message] : cases) {
    SCOPED_TRACE(spec);
    // No token from the environment of whoever runs the test; loopback
    // without one is allowed by --insecure-tcp (beyond it, never).
    EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--listen",
                          spec, "--insecure-tcp"},
                         log_, {"ROOFTRACE_TOKEN="})),
              2);
    const std::string log = Slurp(log_);
    EXPECT_NE(log.find(message), std::string::npos) << log;
    EXPECT_TRUE(!fs::exists(store_) ||
                StoreQuery(store_).Int("SELECT COUNT(*) FROM runs") == 0);
  }
  close(busy);
  // A --token-file that cannot be read is refused before anything starts.
  EXPECT_EQ(Wait(Spawn({kCli, "collect", "--store", store_, "--listen",
                        "tcp:127.0.0.1:0", "--token-file",
                        dir_ + "/no-such-token"},
                       log_)),
            2);
  EXPECT_NE(Slurp(log_).find("--token-file " + dir_ + "/no-such-token"),
            std::string::npos)
      << Slurp(log_);
}

// Options profile used to take: --sample-every -1 (became 2^64-1), --top
// -3, a --kernels regex libinject cannot compile, a directory as the
// command (exit 127 without a word). Each: exit 2, one line naming it.
TEST_F(CollectorIntegrationTest, ProfileRefusesBadOptionsWithOneLine) {
  const std::string fake = "ROOFTRACE_INJECT_LIB=" + kTests +
                           "/librooftrace_fake_inject.so";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases =
      {
          {{"--sample-every", "-1", "--", kProducer}, "--sample-every -1"},
          {{"--top", "-3", "--", kProducer}, "--top -3"},
          {{"--buffer-mb", "0", "--", kProducer}, "--buffer-mb 0"},
          {{"--kernels", "gemm(", "--", kProducer}, "--kernels 'gemm('"},
          {{"--", dir_}, dir_ + " is a directory"},
          {{"--wait-descendants", "maybe", "--", kProducer},
           "--wait-descendants maybe"},
      };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(message);
    std::vector<std::string> argv = {kCli, "profile", "-o", store_};
    argv.insert(argv.end(), args.begin(), args.end());
    EXPECT_EQ(Wait(Spawn(argv, log_, {fake})), 2);
    const std::string log = Slurp(log_);
    EXPECT_NE(log.find(message), std::string::npos) << log;
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
    EXPECT_FALSE(fs::exists(store_));
  }
}

}  // namespace
}  // namespace rooftrace
