// Unit tests of libinject's building blocks: clock conversion, config,
// queue, interner, GEMM transposes (the kernel filter:
// kernel_filter_test.cc).
#include <set>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "libinject/clock.h"
#include "libinject/config.h"
#include "libinject/gemm_shapes.h"
#include "libinject/record_queue.h"
#include "libinject/sink.h"
#include "libinject/string_interner.h"
#include "proto/field_numbers.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

// CUPTI ns + offset; the offset measured from a sample taken between two
// of our clock readings is the midpoint difference.
TEST(ClockTest, ConvertsCuptiTimestampsWithTheMeasuredOffset) {
  // Ours read 1000 and 1100 around a CUPTI reading of 400: midpoint 1050.
  const ClockOffset offset = MeasureClockOffset(1000, 400, 1100);
  EXPECT_EQ(offset.offset_ns, 650);
  EXPECT_EQ(CuptiToMonotonicNs(400, offset), 1050u);
  EXPECT_EQ(CuptiToMonotonicNs(5'000'000'000ull, offset), 5'000'000'650ull);
  // CUPTI's "unknown" stays unknown.
  EXPECT_EQ(CuptiToMonotonicNs(0, offset), 0u);
  // CUPTI's clock ahead of ours: negative offset, clamped at 0.
  const ClockOffset ahead = MeasureClockOffset(100, 10'000, 100);
  EXPECT_EQ(ahead.offset_ns, -9'900);
  EXPECT_EQ(CuptiToMonotonicNs(10'000, ahead), 100u);
  EXPECT_EQ(CuptiToMonotonicNs(50, ahead), 0u);
  // With our timestamp callback registered the offset is zero: identity.
  EXPECT_EQ(CuptiToMonotonicNs(123456789, ClockOffset{}), 123456789u);
}

// MonotonicNs is CLOCK_MONOTONIC and never goes back.
TEST(ClockTest, MonotonicNsDoesNotGoBack) {
  uint64_t last = MonotonicNs();
  for (int i = 0; i < 1000; ++i) {
    const uint64_t now = MonotonicNs();
    EXPECT_GE(now, last);
    last = now;
  }
}

StatusOr<Config> ParseWith(std::map<std::string, std::string> env) {
  return ParseConfig([env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// No variables: trace mode, default spool in TMPDIR, documented defaults.
TEST(ConfigTest, DefaultsWithoutEnvironment) {
  auto c = ParseWith({{"TMPDIR", "/var/tmp"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->disabled);
  EXPECT_EQ(c->sink.kind, SinkSpec::Kind::kDefaultSpool);
  EXPECT_EQ(c->spool_dir, "/var/tmp");
  EXPECT_EQ(c->mode, InjectMode::kTrace);
  EXPECT_EQ(c->sample_every, 1u);
  EXPECT_EQ(c->max_kernels, 0u);
  EXPECT_EQ(c->capture, CaptureMode::kAll);
  // A 32 MiB budget: 4 MiB for strings, the largest power of two of slots
  // that fits the rest.
  EXPECT_EQ(c->queue_records, 0u);
  EXPECT_EQ(c->buffer_bytes, uint64_t{32} << 20);
  EXPECT_EQ(c->StringBytes(), uint64_t{4} << 20);
  EXPECT_LE(c->QueueSlots() * sizeof(LiveSlot), (uint64_t{28} << 20));
  EXPECT_GT(c->QueueSlots() * 2 * sizeof(LiveSlot), (uint64_t{28} << 20));
  EXPECT_EQ(c->on_full, QueueFull::kDrop);
  EXPECT_TRUE(c->live_buffer);
  EXPECT_EQ(c->exit_timeout_ms, 3000u);
  EXPECT_FALSE(c->counters_communication);
  // Issue 26: the lean callback set, every part of trace mode on.
  EXPECT_EQ(c->callbacks, CallbackSet::kLean);
  EXPECT_TRUE(c->parts.AllOn());
  EXPECT_EQ(ParseWith({})->spool_dir, "/tmp");
  // A shared temporary folder: spools go into a private folder in it.
  EXPECT_TRUE(c->spool_dir_shared);
  EXPECT_TRUE(ParseWith({})->spool_dir_shared);
  EXPECT_FALSE(ParseWith({{"ROOFTRACE_SPOOL_DIR", "/var/tmp"}})->spool_dir_shared);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Issue 18 item 12: a trace file holds the host's argv and configuration.
// It is created 0600, never through a symbolic link planted at its path,
// and a spool never reuses an existing file.
TEST(SinkTest, FileSinksAreThisUsersAndFollowNoLink) {
  const std::string dir = testing::MakeTempDir("sink");
  const std::string target = dir + "/victim";
  std::ofstream(target) << "keep";
  ASSERT_EQ(symlink(target.c_str(), (dir + "/link.rft").c_str()), 0);
  EXPECT_FALSE(OpenFileSink(dir + "/link.rft").ok());
  std::string actual;
  auto shared = OpenSharedFileSink(dir + "/link.rft", &actual);
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  EXPECT_NE(actual, dir + "/link.rft");  // a sibling, not the link
  ASSERT_TRUE((*shared)->Write("data").ok());
  EXPECT_EQ(ReadAll(target), "keep");
  auto made = OpenFileSink(dir + "/new.rft");
  ASSERT_TRUE(made.ok()) << made.status().message();
  struct stat st {};
  ASSERT_EQ(stat((dir + "/new.rft").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(OpenFileSink(dir + "/new.rft", /*exclusive=*/true).ok());
  EXPECT_TRUE(OpenFileSink(dir + "/new.rft").ok());  // truncates its own
}

// ROOFTRACE_TOKEN, else the first line of ROOFTRACE_TOKEN_FILE, becomes the
// sink's token; an unreadable or empty token file is refused by name.
TEST(ConfigTest, ReadsTheTokenFromTheEnvironmentOrAFile) {
  const std::string dir = testing::MakeTempDir("token");
  std::ofstream(dir + "/token") << "from-file  \nsecond line\n";
  std::ofstream(dir + "/empty") << "\n";
  auto env = ParseWith({{"ROOFTRACE_TOKEN", "from-env"},
                        {"ROOFTRACE_TOKEN_FILE", dir + "/token"}});
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_EQ(env->sink.token, "from-env");
  auto file = ParseWith({{"ROOFTRACE_SINK", "tcp:127.0.0.1:7788"},
                         {"ROOFTRACE_TOKEN_FILE", dir + "/token"}});
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->sink.token, "from-file");
  EXPECT_EQ(file->sink.port, 7788);
  for (const char* bad : {"/empty", "/missing"}) {
    auto r = ParseWith({{"ROOFTRACE_TOKEN_FILE", dir + bad}});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("ROOFTRACE_TOKEN_FILE"),
              std::string::npos);
  }
  for (const auto& line : file->ToHelloConfig()) {
    EXPECT_EQ(line.find("from-file"), std::string::npos) << line;
  }
}

// With a token, a socket sink's first frame is a Packet holding only
// connection_auth with that token; without one, nothing is sent first.
TEST(SinkTest, SocketSinkSendsItsTokenFirst) {
  const std::string dir = testing::MakeTempDir("token_sink");
  const std::string path = dir + "/s.sock";
  const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  strncpy(sa.sun_path, path.c_str(), sizeof(sa.sun_path) - 1);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  SinkSpec spec;
  spec.kind = SinkSpec::Kind::kUnix;
  spec.path = path;
  spec.token = "t0ken";
  auto sink = ConnectSink(spec, 1000);
  ASSERT_TRUE(sink.ok()) << sink.status().message();
  ASSERT_TRUE((*sink)->Write("after").ok());
  sink->reset();  // closes: the reader below sees the end
  const int fd = accept(listener, nullptr, nullptr);
  ASSERT_GE(fd, 0);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, n);
  close(fd);
  close(listener);
  // 0x0A len | 0x72 len | 0x0A 5 "t0ken", then what was written.
  const std::string auth = std::string("\x0A\x05t0ken", 7);
  const std::string packet = std::string("\x72\x07", 2) + auth;
  EXPECT_EQ(got, std::string("\x0A\x09", 2) + packet + "after");
}

// Spools in /tmp or TMPDIR go to rooftrace-<uid>, 0700; one that another
// user could have made or entered is refused with the fix.
TEST(SinkTest, PrivateSpoolDirIsMadeAndChecked) {
  const std::string parent = testing::MakeTempDir("spooldir");
  auto dir = PrivateSpoolDir(parent);
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, parent + "/rooftrace-" + std::to_string(geteuid()));
  struct stat st {};
  ASSERT_EQ(lstat(dir->c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(PrivateSpoolDir(parent).ok());  // again: the same folder
  ASSERT_EQ(chmod(dir->c_str(), 0777), 0);
  auto open_to_all = PrivateSpoolDir(parent);
  ASSERT_FALSE(open_to_all.ok());
  EXPECT_NE(open_to_all.status().message().find("ROOFTRACE_SPOOL_DIR"),
            std::string::npos);
  ASSERT_EQ(rmdir(dir->c_str()), 0);
  const std::string elsewhere = testing::MakeTempDir("elsewhere");
  ASSERT_EQ(symlink(elsewhere.c_str(), dir->c_str()), 0);
  EXPECT_FALSE(PrivateSpoolDir(parent).ok());  // a link is not the folder
}

// Every variable with a valid value is read.
TEST(ConfigTest, ReadsEveryVariable) {
  auto c = ParseWith({{"ROOFTRACE_SINK", "tcp:127.0.0.1:7070"},
                      {"ROOFTRACE_SPOOL_DIR", "/data/spool"},
                      {"TMPDIR", "/ignored"},
                      {"ROOFTRACE_MODE", "counters"},
                      {"ROOFTRACE_KERNEL_INCLUDE", "gemm"},
                      {"ROOFTRACE_KERNEL_EXCLUDE", "copy"},
                      {"ROOFTRACE_SAMPLE_EVERY", "10"},
                      {"ROOFTRACE_MAX_KERNELS", "5000"},
                      {"ROOFTRACE_BUFFER_MB", "64"},
                      {"ROOFTRACE_ACTIVITY_BUFFER_MB", "512"},
                      {"ROOFTRACE_ON_FULL", "wait"},
                      {"ROOFTRACE_LIVE_BUFFER", "0"},
                      {"ROOFTRACE_CAPTURE", "profiler-api"},
                      {"ROOFTRACE_QUEUE_RECORDS", "1024"},
                      {"ROOFTRACE_LOG", "debug"},
                      {"ROOFTRACE_COUNTERS", "full"},
                      {"ROOFTRACE_NVTX_INCLUDE", "decode"},
                      {"ROOFTRACE_COUNTERS_COMMUNICATION", "profile"},
                      {"ROOFTRACE_COUNTERS_FIRST", "3"},
                      {"ROOFTRACE_COUNTERS_EVERY", "100"},
                      {"ROOFTRACE_COUNTERS_TOLERANCE", "20"},
                      {"ROOFTRACE_COUNTERS_REPLAY", "kernel"},
                      {"ROOFTRACE_EXIT_TIMEOUT_MS", "250"},
                      {"ROOFTRACE_CALLBACKS", "full"},
                      {"ROOFTRACE_TRACE_OFF", "driver,nvtx"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->sink.kind, SinkSpec::Kind::kTcp);
  EXPECT_EQ(c->sink.host, "127.0.0.1");
  EXPECT_EQ(c->sink.port, 7070);
  EXPECT_EQ(c->spool_dir, "/data/spool");
  EXPECT_EQ(c->mode, InjectMode::kCounters);
  EXPECT_EQ(c->kernel_include, "gemm");
  EXPECT_EQ(c->kernel_exclude, "copy");
  EXPECT_EQ(c->sample_every, 10u);
  EXPECT_EQ(c->max_kernels, 5000u);
  EXPECT_EQ(c->capture, CaptureMode::kProfilerApi);
  EXPECT_EQ(c->queue_records, 1024u);
  EXPECT_EQ(c->QueueSlots(), 1024u);  // an explicit size wins over the budget
  EXPECT_EQ(c->buffer_bytes, uint64_t{64} << 20);
  EXPECT_EQ(c->activity_buffer_bytes, uint64_t{512} << 20);
  EXPECT_EQ(c->counters_first, 3u);
  EXPECT_EQ(c->counters_every, 100u);
  EXPECT_EQ(c->CountersKernelFilter().signature_first, 3u);
  EXPECT_EQ(c->CountersKernelFilter().signature_every, 100u);
  EXPECT_EQ(c->counters_tolerance_pct, 20u);
  EXPECT_TRUE(c->counters_kernel_replay);
  EXPECT_EQ(c->on_full, QueueFull::kWait);
  EXPECT_FALSE(c->live_buffer);
  EXPECT_EQ(c->log_level, LogLevel::kDebug);
  EXPECT_EQ(c->counters, "full");
  EXPECT_EQ(c->nvtx_include, "decode");
  EXPECT_TRUE(c->counters_communication);
  EXPECT_EQ(c->exit_timeout_ms, 250u);
  EXPECT_EQ(c->callbacks, CallbackSet::kFull);
  EXPECT_TRUE(c->parts.activity);
  EXPECT_TRUE(c->parts.runtime_callbacks);
  EXPECT_FALSE(c->parts.driver_callbacks);
  EXPECT_FALSE(c->parts.nvtx);
  EXPECT_TRUE(c->parts.cublas);
  EXPECT_TRUE(ParseWith({{"ROOFTRACE_DISABLE", "1"}})->disabled);
}

// Selection values (formerly read a second time by counters mode's
// selector): good ones, and each bad one named with the variable and value.
TEST(ConfigTest, ParsesSelectionVariablesAndRejectsBadOnes) {
  std::map<std::string, std::string> env = {
      {"ROOFTRACE_KERNEL_INCLUDE", "gemm"},
      {"ROOFTRACE_SAMPLE_EVERY", "10"},
      {"ROOFTRACE_MAX_KERNELS", "0"},
      {"ROOFTRACE_NVTX_INCLUDE", "decode"}};
  StatusOr<Config> c = ParseWith(env);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->kernel_include, "gemm");
  EXPECT_EQ(c->kernel_exclude, "");
  EXPECT_EQ(c->sample_every, 10u);
  EXPECT_EQ(c->max_kernels, 0u);
  EXPECT_EQ(c->nvtx_include, "decode");

  for (const char* bad : {"0", "-3", "ten", "5x", " 5"}) {
    env["ROOFTRACE_SAMPLE_EVERY"] = bad;
    StatusOr<Config> r = ParseWith(env);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(
                  std::string("ROOFTRACE_SAMPLE_EVERY='") + bad + "'"),
              std::string::npos);
  }
  env["ROOFTRACE_SAMPLE_EVERY"] = "1";
  env["ROOFTRACE_MAX_KERNELS"] = "99999999999999999999999";
  StatusOr<Config> r = ParseWith(env);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ROOFTRACE_MAX_KERNELS"),
            std::string::npos);
}

// ROOFTRACE_TRACE_OFF: each part by name, any combination, and the value
// the Hello's configuration repeats.
TEST(ConfigTest, TraceOffNamesThePartsSwitchedOff) {
  auto all = ParseTraceOff("activity,runtime,driver,nvtx,cublas");
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->activity || all->runtime_callbacks ||
               all->driver_callbacks || all->nvtx || all->cublas);
  EXPECT_EQ(TraceOffValue(*all), "activity,runtime,driver,nvtx,cublas");
  auto cublas = ParseTraceOff("cublas");
  ASSERT_TRUE(cublas.ok());
  EXPECT_FALSE(cublas->cublas);
  EXPECT_TRUE(cublas->activity && cublas->nvtx && cublas->driver_callbacks);
  EXPECT_EQ(TraceOffValue(*cublas), "cublas");
  EXPECT_TRUE(ParseTraceOff("")->AllOn());
  auto bad = ParseTraceOff("nvtx,kernels");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("activity, runtime, driver, nvtx, cublas"),
            std::string::npos);
  // The run record says what was off; nothing when everything is on.
  Config c;
  c.parts.nvtx = false;
  const auto lines = c.ToHelloConfig();
  EXPECT_NE(std::find(lines.begin(), lines.end(), "ROOFTRACE_TRACE_OFF=nvtx"),
            lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "ROOFTRACE_CALLBACKS=lean"),
            lines.end());
  const auto on = Config().ToHelloConfig();
  EXPECT_EQ(std::count_if(on.begin(), on.end(),
                          [](const std::string& l) {
                            return l.rfind("ROOFTRACE_TRACE_OFF", 0) == 0;
                          }),
            0);
}

// Sinks: the three forms; bad ones name the variable and the expected form.
TEST(ConfigTest, ParsesSinksAndRejectsBadOnes) {
  auto unix_sink = ParseSinkSpec("unix:/run/rt.sock");
  ASSERT_TRUE(unix_sink.ok());
  EXPECT_EQ(unix_sink->kind, SinkSpec::Kind::kUnix);
  EXPECT_EQ(unix_sink->path, "/run/rt.sock");
  auto file = ParseSinkSpec("file:run.rft");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->kind, SinkSpec::Kind::kFile);
  auto v6 = ParseSinkSpec("tcp:[::1]:9000");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9000);
  for (const char* bad : {"udp:1.2.3.4:5", "tcp:host", "tcp:host:0",
                          "tcp:host:70000", "unix:", "just-a-path"}) {
    auto s = ParseSinkSpec(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("ROOFTRACE_SINK"), std::string::npos);
    EXPECT_NE(s.status().message().find(bad), std::string::npos);
    EXPECT_NE(s.status().message().find("unix:PATH"), std::string::npos);
  }
}

// Bad values of the other variables: the message names variable and value.
TEST(ConfigTest, RejectsBadValuesWithTheVariableName) {
  const std::pair<const char*, const char*> bad[] = {
      {"ROOFTRACE_MODE", "fast"},
      {"ROOFTRACE_SAMPLE_EVERY", "0"},
      {"ROOFTRACE_SAMPLE_EVERY", "ten"},
      {"ROOFTRACE_MAX_KERNELS", "-1"},
      {"ROOFTRACE_CAPTURE", "sometimes"},
      {"ROOFTRACE_QUEUE_RECORDS", "8"},
      {"ROOFTRACE_BUFFER_MB", "0"},
      {"ROOFTRACE_BUFFER_MB", "lots"},
      {"ROOFTRACE_ACTIVITY_BUFFER_MB", "0"},
      {"ROOFTRACE_COUNTERS_FIRST", "-1"},
      {"ROOFTRACE_COUNTERS_EVERY", "often"},
      {"ROOFTRACE_COUNTERS_TOLERANCE", "much"},
      {"ROOFTRACE_COUNTERS_REPLAY", "never"},
      {"ROOFTRACE_ON_FULL", "block"},
      {"ROOFTRACE_LIVE_BUFFER", "maybe"},
      {"ROOFTRACE_LOG", "loud"},
      {"ROOFTRACE_COUNTERS", "most"},
      {"ROOFTRACE_EXIT_TIMEOUT_MS", "1e3"},
      {"ROOFTRACE_DISABLE", "maybe"},
      {"ROOFTRACE_COUNTERS_COMMUNICATION", "yes"},
      {"ROOFTRACE_CALLBACKS", "some"},
      {"ROOFTRACE_TRACE_OFF", "gpu"},
      {"ROOFTRACE_TRACE_OFF", "driver,"}};
  for (const auto& [name, value] : bad) {
    auto c = ParseWith({{name, value}});
    ASSERT_FALSE(c.ok()) << name << "=" << value;
    EXPECT_NE(c.status().message().find(name), std::string::npos);
    EXPECT_NE(c.status().message().find(value), std::string::npos);
  }
}

// ROOFTRACE_MODE=sampling with its interval (20 us by default), carried in
// the Hello's config; an interval out of range or a mode not known is
// refused naming the variable.
TEST(ConfigTest, ReadsSamplingModeAndItsInterval) {
  auto c = ParseWith({{"ROOFTRACE_MODE", "sampling"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->mode, InjectMode::kSampling);
  EXPECT_EQ(c->sampling_interval_us, 20u);
  c = ParseWith({{"ROOFTRACE_MODE", "sampling"},
                 {"ROOFTRACE_SAMPLING_INTERVAL_US", "100"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->sampling_interval_us, 100u);
  const std::vector<std::string> hello = c->ToHelloConfig();
  EXPECT_NE(std::find(hello.begin(), hello.end(), "ROOFTRACE_MODE=sampling"),
            hello.end());
  EXPECT_NE(std::find(hello.begin(), hello.end(),
                      "ROOFTRACE_SAMPLING_INTERVAL_US=100"),
            hello.end());
  for (const char* bad : {"0", "2000000", "fast"}) {
    auto b = ParseWith({{"ROOFTRACE_SAMPLING_INTERVAL_US", bad}});
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find("ROOFTRACE_SAMPLING_INTERVAL_US"),
              std::string::npos);
  }
  auto m = ParseWith({{"ROOFTRACE_MODE", "pm"}});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("sampling"), std::string::npos);
}

// A held slot stays taken (and readable) until released; the sequence
// protocol the live buffer's reader relies on: position + 1 once written,
// position + capacity once free.
TEST(BoundedQueueTest, HeldSlotsStayTakenUntilReleased) {
  BoundedQueue<int> q(4);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.TryPush(i));
  int v = -1;
  uint64_t pos = 99;
  ASSERT_TRUE(q.TryPopHeld(&v, &pos));
  EXPECT_EQ(v, 0);
  EXPECT_EQ(pos, 0u);
  EXPECT_FALSE(q.TryPush(4));  // popped but held: still full
  q.Release(pos);
  EXPECT_TRUE(q.TryPush(4));
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE(q.TryPopHeld(&v, &pos));
    EXPECT_EQ(v, i);
    EXPECT_EQ(pos, static_cast<uint64_t>(i));
    q.Release(pos);
  }
  EXPECT_FALSE(q.TryPopHeld(&v, &pos));
}

// Capacity rounds up to a power of two; a full queue refuses, in order.
TEST(BoundedQueueTest, DropsNewestWhenFullAndKeepsOrder) {
  BoundedQueue<int> q(5);
  EXPECT_EQ(q.capacity(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(q.TryPush(i));
  EXPECT_FALSE(q.TryPush(8));
  int v = -1;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(q.TryPop(&v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(q.TryPop(&v));
  EXPECT_TRUE(q.TryPush(9));  // space again after draining
}

// Four producers, one consumer: every value arrives exactly once.
TEST(BoundedQueueTest, ManyProducersLoseNothingThatWasAccepted) {
  BoundedQueue<uint64_t> q(1024);
  std::atomic<uint64_t> accepted{0};
  std::vector<std::thread> producers;
  for (uint64_t t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (uint64_t i = 0; i < 5000; ++i) {
        while (!q.TryPush(t * 1000000 + i)) std::this_thread::yield();
        accepted.fetch_add(1);
      }
    });
  }
  std::set<uint64_t> seen;
  uint64_t v;
  while (seen.size() < 20000) {
    if (q.TryPop(&v)) {
      EXPECT_TRUE(seen.insert(v).second) << "duplicate " << v;
    }
  }
  for (auto& p : producers) p.join();
  EXPECT_EQ(accepted.load(), 20000u);
  EXPECT_FALSE(q.TryPop(&v));
}

// Same string, same id; new strings are pending once; TakeAll restates.
TEST(StringInternerTest, InternsOnceAndReportsPendingDefinitions) {
  StringInterner in;
  EXPECT_EQ(in.Intern("gemm"), 1u);
  EXPECT_EQ(in.Intern("attn"), 2u);
  EXPECT_EQ(in.Intern(std::string("gemm")), 1u);
  std::vector<StringInterner::Definition> defs;
  in.TakePending(&defs);
  ASSERT_EQ(defs.size(), 2u);
  EXPECT_EQ(defs[0].first, 1u);
  EXPECT_EQ(defs[0].second, "gemm");
  defs.clear();
  in.TakePending(&defs);
  EXPECT_TRUE(defs.empty());
  EXPECT_EQ(in.Intern("norm"), 3u);
  in.TakeAll(&defs);
  EXPECT_EQ(defs.size(), 3u);
  defs.clear();
  in.TakePending(&defs);
  EXPECT_TRUE(defs.empty());
}

// The per-thread cache never answers for another interner (even one at the
// same address) and agrees with the locked path across threads.
TEST(StringInternerTest, PerThreadCacheIsPerInterner) {
  for (int round = 0; round < 3; ++round) {
    StringInterner in;  // likely the same address every round
    EXPECT_EQ(in.Intern("first-" + std::to_string(round)), 1u);
    EXPECT_EQ(in.Intern("shared"), 2u);
    EXPECT_EQ(in.Intern("shared"), 2u);
  }
  StringInterner a, b;
  EXPECT_EQ(a.Intern("x"), 1u);
  EXPECT_EQ(b.Intern("y"), 1u);
  EXPECT_EQ(b.Intern("x"), 2u);
  EXPECT_EQ(a.Intern("x"), 1u);
  StringInterner shared;
  std::vector<uint64_t> ids(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) ids[t] = shared.Intern("decode");
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 1, 1, 1}));
  EXPECT_EQ(shared.size(), 1u);
}

// cublasOperation_t -> wire transposes (precision classes: tests/model/
// gemm_test.cc).
TEST(GemmShapesTest, TransposeOfCublasOperations) {
  EXPECT_EQ(TransposeOf(0), wire::enums::kTransposeN);
  EXPECT_EQ(TransposeOf(1), wire::enums::kTransposeT);
  EXPECT_EQ(TransposeOf(2), wire::enums::kTransposeC);
  EXPECT_EQ(TransposeOf(9), wire::enums::kTransposeUnknown);
}

}  // namespace
}  // namespace rooftrace::inject
