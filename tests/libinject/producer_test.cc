// The producer end to end in-process: records in, framed packets out to a
// file, a Unix-socket collector, or a spool when the collector is not there
// or goes away; counts in Stats and Goodbye; NVTX handlers' ranges.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "libinject/nvtx_injection.h"
#include "libinject/process.h"
#include "libinject/thread_state.h"
#include "proto/framing.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace pb = rooftrace::wire;

ProducerOptions FileOptions(const std::string& path) {
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = path;
  o.flush_interval_ms = 5;
  return o;
}

NvtxRangeRecord Range(uint64_t id, uint64_t name_iid) {
  NvtxRangeRecord r{};
  r.range_id = id;
  r.name_iid = name_iid;
  r.start_ns = 100 * id;
  r.end_ns = 100 * id + 50;
  r.thread_id = 1;
  r.kind = wire::enums::kRangePushPop;
  return r;
}

std::map<int, pb::RecordCount> Totals(const pb::Packet& goodbye) {
  std::map<int, pb::RecordCount> out;
  for (const auto& c : goodbye.goodbye().totals()) out[c.kind()] = c;
  return out;
}

// Everything emitted arrives once; the stream is Hello ... Stats, Goodbye
// with sequences 1..N, and Goodbye's counts prove completeness.
TEST(ProducerTest, FileSinkStreamIsCompleteAndSequenced) {
  const std::string dir = testing::MakeTempDir("producer");
  Producer producer(FileOptions(dir + "/t.rft"));
  ASSERT_TRUE(producer.Start().ok());
  const uint64_t name = producer.Intern("layer");
  for (uint64_t i = 1; i <= 5000; ++i) producer.EmitRange(Range(i, name));
  LaunchRecord l{};
  l.correlation_id = 7;
  producer.EmitLaunch(l);
  NvtxMarkRecord m{0, name, 5, 1};
  producer.EmitMark(m);
  ASSERT_TRUE(producer.Stop());

  auto packets = testing::ReadTrace(dir + "/t.rft");
  ASSERT_GE(packets.size(), 4u);
  EXPECT_TRUE(packets.front().has_hello());
  EXPECT_EQ(packets.front().hello().pid(), static_cast<uint32_t>(getpid()));
  EXPECT_TRUE(packets[packets.size() - 2].has_stats());
  ASSERT_TRUE(packets.back().has_goodbye());
  for (size_t i = 0; i < packets.size(); ++i) {
    EXPECT_EQ(packets[i].sequence(), i + 1);
  }
  std::set<uint64_t> ids;
  int marks = 0, launches = 0;
  for (const auto& p : packets) {
    for (const auto& r : p.nvtx_batch().ranges()) {
      EXPECT_TRUE(ids.insert(r.range_id()).second);
      EXPECT_EQ(r.end_ns() - r.start_ns(), 50u);
    }
    marks += p.nvtx_batch().marks_size();
    launches += p.kernel_batch().launches_size();
  }
  EXPECT_EQ(ids.size(), 5000u);
  EXPECT_EQ(*ids.begin(), 1u);
  EXPECT_EQ(*ids.rbegin(), 5000u);
  EXPECT_EQ(marks, 1);
  EXPECT_EQ(launches, 1);
  EXPECT_EQ(testing::Strings(packets)[name], "layer");
  auto totals = Totals(packets.back());
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].seen(), 5000u);
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].sent(), 5000u);
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].dropped(), 0u);
  EXPECT_EQ(totals[pb::RECORD_LAUNCH].sent(), 1u);
  EXPECT_EQ(totals[pb::RECORD_NVTX_MARK].sent(), 1u);
  EXPECT_EQ(packets.back().goodbye().packets_sent(), packets.size());
  EXPECT_EQ(packets.back().goodbye().exit_code(), -1);
}

// A full queue drops the newest records and counts them (kDropNewest).
TEST(ProducerTest, FullQueueDropsAndCounts) {
  const std::string dir = testing::MakeTempDir("drops");
  ProducerOptions o = FileOptions(dir + "/t.rft");
  o.config.queue_records = 64;
  Producer producer(o);
  // The sender is not started yet: nothing drains the 64 slots.
  for (uint64_t i = 1; i <= 100; ++i) producer.EmitRange(Range(i, 0));
  ASSERT_TRUE(producer.Start().ok());
  ASSERT_TRUE(producer.Stop());
  auto packets = testing::ReadTrace(dir + "/t.rft");
  size_t ranges = 0;
  for (const auto& p : packets) ranges += p.nvtx_batch().ranges_size();
  EXPECT_EQ(ranges, 64u);
  auto totals = Totals(packets.back());
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].seen(), 100u);
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].sent(), 64u);
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].dropped(), 36u);
}

// A live collector gets Hello (and answers it), records and Goodbye.
TEST(ProducerTest, UnixCollectorReceivesTheStream) {
  const std::string dir = testing::MakeTempDir("unix");
  testing::TestCollector collector(dir + "/c.sock");
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kUnix;
  o.config.sink.path = dir + "/c.sock";
  o.config.spool_dir = dir;
  Producer producer(o);
  ASSERT_TRUE(producer.Start().ok());
  for (uint64_t i = 1; i <= 100; ++i) producer.EmitRange(Range(i, 0));
  ASSERT_TRUE(producer.Stop());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto packets = collector.packets();
  ASSERT_GE(packets.size(), 3u);
  EXPECT_TRUE(packets.front().has_hello());
  EXPECT_TRUE(packets.back().has_goodbye());
  size_t ranges = 0;
  for (const auto& p : packets) ranges += p.nvtx_batch().ranges_size();
  EXPECT_EQ(ranges, 100u);
  EXPECT_TRUE(testing::ListFiles(dir, ".rft").empty()) << "no spool needed";
}

// Nobody listening at start: everything goes to a spool in
// ROOFTRACE_SPOOL_DIR named rooftrace-<host>-<pid>-<start>.rft, complete.
TEST(ProducerTest, UnreachableCollectorSpoolsEverything) {
  const std::string dir = testing::MakeTempDir("unreachable");
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kUnix;
  o.config.sink.path = dir + "/nobody.sock";
  o.config.spool_dir = dir;
  Producer producer(o);
  ASSERT_TRUE(producer.Start().ok());
  for (uint64_t i = 1; i <= 300; ++i) producer.EmitRange(Range(i, 0));
  ASSERT_TRUE(producer.Stop());
  auto spools = testing::ListFiles(dir, ".rft");
  ASSERT_EQ(spools.size(), 1u);
  EXPECT_EQ(producer.spool_path(), spools[0]);
  EXPECT_NE(spools[0].find("/rooftrace-"), std::string::npos);
  EXPECT_NE(spools[0].find("-" + std::to_string(getpid()) + "-"),
            std::string::npos);
  auto packets = testing::ReadTrace(spools[0]);
  ASSERT_TRUE(packets.front().has_hello());
  size_t ranges = 0, hellos = 0;
  for (const auto& p : packets) {
    ranges += p.nvtx_batch().ranges_size();
    hellos += p.has_hello() ? 1 : 0;
  }
  EXPECT_EQ(ranges, 300u);
  // One Hello (#29 D7: it was written twice, both sequence 1), and the
  // packets numbered from it without a repeat or a gap.
  EXPECT_EQ(hellos, 1u);
  for (size_t i = 0; i < packets.size(); ++i) {
    EXPECT_EQ(packets[i].sequence(), i + 1);
  }
  auto totals = Totals(packets.back());
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].sent(), 300u);
  EXPECT_EQ(packets.back().goodbye().packets_sent(), packets.size());
  // The warning said on stderr is repeated in Stats.
  bool warned = false;
  for (const auto& p : packets) {
    for (const auto& w : p.stats().warnings()) {
      warned |= w.find("nobody.sock") != std::string::npos &&
                w.find("spooling to") != std::string::npos;
    }
  }
  EXPECT_TRUE(warned);
}

// No ROOFTRACE_SPOOL_DIR: the spool goes to a private rooftrace-<uid>
// folder of the shared temporary one, created 0600 (issue 18 item 12).
TEST(ProducerTest, DefaultSpoolInASharedFolderIsPrivate) {
  const std::string dir = testing::MakeTempDir("sharedtmp");
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kDefaultSpool;
  o.config.spool_dir = dir;
  o.config.spool_dir_shared = true;
  Producer producer(o);
  ASSERT_TRUE(producer.Start().ok());
  for (uint64_t i = 1; i <= 10; ++i) producer.EmitRange(Range(i, 0));
  ASSERT_TRUE(producer.Stop());
  EXPECT_TRUE(testing::ListFiles(dir, ".rft").empty());
  const std::string own = dir + "/rooftrace-" + std::to_string(geteuid());
  auto spools = testing::ListFiles(own, ".rft");
  ASSERT_EQ(spools.size(), 1u);
  EXPECT_EQ(producer.spool_path(), spools[0]);
  struct stat st {};
  ASSERT_EQ(stat(spools[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(own.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// The collector goes away after 3 frames: what it got plus the spool (which
// restates recent packets; duplicates share a sequence) hold every record,
// and the spool alone decodes with every string it uses.
TEST(ProducerTest, CollectorGoneMidStreamLosesNothing) {
  const std::string dir = testing::MakeTempDir("gone");
  auto collector = std::make_unique<testing::TestCollector>(dir + "/c.sock", 3);
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kUnix;
  o.config.sink.path = dir + "/c.sock";
  o.config.spool_dir = dir;
  o.flush_interval_ms = 2;
  Producer producer(o);
  ASSERT_TRUE(producer.Start().ok());
  uint64_t next = 1;
  for (int burst = 0; burst < 40; ++burst) {
    const uint64_t name = producer.Intern("burst-" + std::to_string(burst));
    for (int i = 0; i < 50; ++i) producer.EmitRange(Range(next++, name));
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  ASSERT_TRUE(producer.Stop());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto received = collector->packets();
  collector.reset();
  auto spools = testing::ListFiles(dir, ".rft");
  ASSERT_EQ(spools.size(), 1u);
  auto spooled = testing::ReadTrace(spools[0]);
  ASSERT_FALSE(spooled.empty());
  ASSERT_TRUE(spooled.front().has_hello());
  EXPECT_EQ(spooled.front().sequence(), 1u);

  std::map<uint64_t, pb::Packet> by_sequence;
  for (const auto& p : received) by_sequence[p.sequence()] = p;
  for (const auto& p : spooled) by_sequence.emplace(p.sequence(), p);
  // No gap in the union of the two.
  ASSERT_FALSE(by_sequence.empty());
  EXPECT_EQ(by_sequence.begin()->first, 1u);
  EXPECT_EQ(by_sequence.rbegin()->first, by_sequence.size());
  std::set<uint64_t> ids;
  for (const auto& [seq, p] : by_sequence) {
    for (const auto& r : p.nvtx_batch().ranges()) ids.insert(r.range_id());
  }
  EXPECT_EQ(ids.size(), next - 1);
  // The spool on its own names every string its ranges use.
  auto strings = testing::Strings(spooled);
  for (const auto& p : spooled) {
    for (const auto& r : p.nvtx_batch().ranges()) {
      ASSERT_TRUE(strings.count(r.name_iid())) << r.name_iid();
    }
  }
  ASSERT_TRUE(by_sequence.rbegin()->second.has_goodbye());
  auto totals = Totals(by_sequence.rbegin()->second);
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].sent(), next - 1);
}

// An invalid kernel regex stops the producer from starting, with the
// variable named.
TEST(ProducerTest, BadRegexRefusesToStart) {
  ProducerOptions o = FileOptions("/dev/null");
  o.config.kernel_exclude = "(";
  Producer producer(o);
  Status s = producer.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ROOFTRACE_KERNEL_EXCLUDE"), std::string::npos);
}

// The NVTX handlers: nesting (parent, depth), per-domain stacks, registered
// strings, start/end across threads, and NVTX's return values.
// A thread opens and ends start/end ranges in a loop while the process
// forks, again and again: a child that ends a range of its own must never
// hang on the table of open ranges (a lock the other thread may have held
// at the fork). Each child gets 5 s before SIGALRM.
TEST(NvtxHandlersTest, ForkWhileAnotherThreadUsesStartEndRangesNeverHangs) {
  const std::string dir = testing::MakeTempDir("nvtx_fork");
  Producer producer(FileOptions(dir + "/t.rft"));
  SetCurrentProducerForTesting(&producer);
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      nvtx::RangeEnd(nvtx::RangeStartA("busy"));
    }
  });
  // Before the fix about one fork in six left the lock held in the child.
  constexpr int kForks = 40;
  int hung = 0;
  for (int i = 0; i < kForks; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(5);
      // The child's own producer, as process.h gives a forked child one.
      ProducerOptions o = FileOptions("/dev/null");
      Producer child(o);
      SetCurrentProducerForTesting(&child);
      nvtx::RangeEnd(nvtx::RangeStartA("child"));
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++hung;
  }
  stop.store(true);
  busy.join();
  SetCurrentProducerForTesting(nullptr);
  EXPECT_EQ(hung, 0) << hung << " of " << kForks << " forked children hung";
}

// A process whose first route is NVTX starts its producer (and sends its
// Hello) before CUDA starts; when CUPTI attaches later, with counters mode,
// the Stats packets say the capabilities and mode as they now are.
TEST(ProducerTest, CapabilitiesAttachedAfterTheHelloAreSentInStats) {
  const std::string dir = testing::MakeTempDir("late_caps");
  ProducerOptions o = FileOptions(dir + "/t.rft");
  o.stats_interval_ms = 1;
  Producer producer(o);
  ASSERT_TRUE(producer.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // Hello out
  producer.AttachActivity(Producer::ActivityHooks{});
  producer.AttachCounters(nullptr);  // mode and capability only
  ASSERT_TRUE(producer.Stop());
  const auto packets = testing::ReadTrace(dir + "/t.rft");
  ASSERT_TRUE(packets.front().has_hello());
  std::set<int> hello(packets.front().hello().capabilities().begin(),
                      packets.front().hello().capabilities().end());
  EXPECT_FALSE(hello.count(pb::CAPABILITY_KERNELS));
  const pb::Stats* last = nullptr;
  for (const auto& p : packets) {
    if (p.has_stats()) last = &p.stats();
  }
  ASSERT_NE(last, nullptr);
  std::set<int> now(last->capabilities().begin(), last->capabilities().end());
  for (int cap : {pb::CAPABILITY_NVTX, pb::CAPABILITY_GEMM_SHAPES,
                  pb::CAPABILITY_KERNELS, pb::CAPABILITY_MEMCPY,
                  pb::CAPABILITY_DEVICE_INFO, pb::CAPABILITY_COUNTERS}) {
    EXPECT_TRUE(now.count(cap)) << "capability " << cap;
  }
  EXPECT_EQ(last->mode(), pb::MODE_COUNTERS);
}

TEST(NvtxHandlersTest, RecordNestingDomainsAndCrossThreadRanges) {
  const std::string dir = testing::MakeTempDir("nvtx");
  Producer producer(FileOptions(dir + "/t.rft"));
  SetCurrentProducerForTesting(&producer);
  ASSERT_TRUE(producer.Start().ok());
  EXPECT_EQ(nvtx::RangePushA("outer"), 0);
  EXPECT_EQ(nvtx::RangePushA("inner"), 1);
  nvtxDomainHandle_t domain = nvtx::DomainCreateA("engine");
  nvtxStringHandle_t step = nvtx::DomainRegisterStringA(domain, "step");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = step;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFFABCDEFu;
  // The domain's stack is separate: depth 0 there.
  EXPECT_EQ(nvtx::DomainRangePushEx(domain, &a), 0);
  // Pop of the default domain ends "inner", leaving the domain range open.
  EXPECT_EQ(nvtx::RangePop(), 1);
  EXPECT_EQ(nvtx::DomainRangePop(domain), 0);
  EXPECT_EQ(nvtx::RangePop(), 0);
  EXPECT_EQ(nvtx::RangePop(), -1);  // pop without push
  nvtxEventAttributes_t wide{};
  wide.version = NVTX_VERSION;
  wide.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  wide.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  wide.message.unicode = L"sch\u00e4tzen \u6f22";
  EXPECT_EQ(nvtx::RangePushEx(&wide), 0);
  EXPECT_EQ(nvtx::RangePop(), 0);
  const nvtxRangeId_t id = nvtx::RangeStartA("load");
  uint32_t other_tid = 0;
  std::thread([&] {
    other_tid = CurrentThread().tid;
    nvtx::RangeEnd(id);
  }).join();
  nvtx::MarkA("here");
  ASSERT_TRUE(producer.Stop());
  SetCurrentProducerForTesting(nullptr);

  auto packets = testing::ReadTrace(dir + "/t.rft");
  auto strings = testing::Strings(packets);
  std::map<std::string, pb::NvtxRange> by_name;
  int marks = 0;
  for (const auto& p : packets) {
    for (const auto& r : p.nvtx_batch().ranges())
      by_name[strings[r.name_iid()]] = r;
    marks += p.nvtx_batch().marks_size();
  }
  ASSERT_EQ(by_name.size(), 5u);
  // Wide messages arrive as UTF-8.
  EXPECT_EQ(by_name.count("sch\xc3\xa4tzen \xe6\xbc\xa2"), 1u);
  const uint32_t tid = CurrentThread().tid;
  const auto& outer = by_name["outer"];
  const auto& inner = by_name["inner"];
  const auto& dstep = by_name["step"];
  const auto& load = by_name["load"];
  EXPECT_EQ(outer.parent_range_id(), 0u);
  EXPECT_EQ(outer.depth(), 0u);
  EXPECT_EQ(inner.parent_range_id(), outer.range_id());
  EXPECT_EQ(inner.depth(), 1u);
  EXPECT_EQ(inner.thread_id(), tid);
  EXPECT_EQ(dstep.parent_range_id(), inner.range_id());
  EXPECT_EQ(strings[dstep.domain_iid()], "engine");
  EXPECT_EQ(dstep.color_argb(), 0xFFABCDEFu);
  EXPECT_LE(outer.start_ns(), inner.start_ns());
  EXPECT_GE(outer.end_ns(), inner.end_ns());
  EXPECT_EQ(load.kind(), pb::RANGE_START_END);
  EXPECT_EQ(load.thread_id(), tid);
  EXPECT_EQ(load.end_thread_id(), other_tid);
  EXPECT_NE(other_tid, tid);
  EXPECT_EQ(marks, 1);
}

}  // namespace
}  // namespace rooftrace::inject

namespace rooftrace::inject {
namespace {

// A collector that accepts but never reads: the sender blocks in send(),
// and Stop() still returns within ROOFTRACE_EXIT_TIMEOUT_MS (the host's
// exit is never held hostage).
TEST(ProducerTest, ExitIsBoundedWhenTheCollectorStalls) {
  const std::string dir = testing::MakeTempDir("stall");
  const std::string path = dir + "/stall.sock";
  const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 4), 0);  // never accepted, never read
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kUnix;
  o.config.sink.path = path;
  o.config.spool_dir = dir;
  o.config.queue_records = 1 << 18;
  o.config.exit_timeout_ms = 300;
  o.hello_reply_timeout_ms = 10;
  // Leaked on purpose, like the process producer: its sender may still be
  // blocked when Stop() gives up.
  auto* producer = new Producer(o);
  for (uint64_t i = 1; i <= 200000; ++i) producer->EmitRange(Range(i, 0));
  ASSERT_TRUE(producer->Start().ok());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(producer->Stop());
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_LT(waited, std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace rooftrace::inject

namespace rooftrace::inject {
namespace {

// A one-connection loopback TCP peer: optionally answers the Hello with a
// refusal, then keeps every byte until the producer closes.
class TcpPeer {
 public:
  explicit TcpPeer(bool refuse) : refuse_(refuse) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    EXPECT_EQ(listen(fd_, 1), 0);
    thread_ = std::thread([this] { Run(); });
  }
  ~TcpPeer() {
    thread_.join();
    close(fd_);
  }
  uint16_t port() const { return port_; }
  std::string bytes() {
    thread_.join();
    thread_ = std::thread([] {});
    return bytes_;
  }

 private:
  void Run() {
    const int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char buf[65536];
    bool replied = false;
    for (;;) {
      const ssize_t n = read(c, buf, sizeof buf);
      if (n <= 0) break;
      bytes_.append(buf, static_cast<size_t>(n));
      if (refuse_ && !replied) {
        pb::Packet reply;
        reply.mutable_hello_reply()->set_accepted(false);
        reply.mutable_hello_reply()->set_reason("protocol 9 required");
        std::string frame;
        wire::AppendFrame(&frame, reply.SerializeAsString());
        (void)!write(c, frame.data(), frame.size());
        replied = true;
      }
    }
    close(c);
  }
  bool refuse_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::string bytes_;
};

// tcp:127.0.0.1:PORT carries the same stream as the other sinks.
TEST(ProducerTest, TcpSinkOnLoopbackCarriesTheStream) {
  TcpPeer peer(/*refuse=*/false);
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kTcp;
  o.config.sink.host = "127.0.0.1";
  o.config.sink.port = peer.port();
  o.config.spool_dir = testing::MakeTempDir("tcp");
  o.hello_reply_timeout_ms = 20;
  Producer producer(o);
  ASSERT_TRUE(producer.Start().ok());
  for (uint64_t i = 1; i <= 1000; ++i) producer.EmitRange(Range(i, 0));
  ASSERT_TRUE(producer.Stop());
  auto packets = testing::DecodeFrames(peer.bytes());
  ASSERT_GE(packets.size(), 3u);
  EXPECT_TRUE(packets.front().has_hello());
  EXPECT_TRUE(packets.back().has_goodbye());
  size_t ranges = 0;
  for (const auto& p : packets) ranges += p.nvtx_batch().ranges_size();
  EXPECT_EQ(ranges, 1000u);
  EXPECT_TRUE(testing::ListFiles(o.config.spool_dir, ".rft").empty());
}

// A collector that refuses the Hello: the producer spools instead, and the
// refusal's reason is in the warning.
TEST(ProducerTest, RefusedHelloSwitchesToTheSpool) {
  TcpPeer peer(/*refuse=*/true);
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kTcp;
  o.config.sink.host = "127.0.0.1";
  o.config.sink.port = peer.port();
  o.config.spool_dir = testing::MakeTempDir("refused");
  Producer producer(o);
  ASSERT_TRUE(producer.Start().ok());
  for (uint64_t i = 1; i <= 10; ++i) producer.EmitRange(Range(i, 0));
  ASSERT_TRUE(producer.Stop());
  auto spools = testing::ListFiles(o.config.spool_dir, ".rft");
  ASSERT_EQ(spools.size(), 1u);
  auto packets = testing::ReadTrace(spools[0]);
  size_t ranges = 0;
  bool warned = false;
  for (const auto& p : packets) {
    ranges += p.nvtx_batch().ranges_size();
    for (const auto& w : p.stats().warnings()) {
      warned |= w.find("refused this session (protocol 9 required)") !=
                std::string::npos;
    }
  }
  EXPECT_EQ(ranges, 10u);
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace rooftrace::inject

namespace rooftrace::inject {
namespace {

// Two live sessions given the same file (e.g. an exec()ed subprocess that
// inherited ROOFTRACE_SINK): the second writes a sibling, nothing is
// truncated; once the first is done, the file can be taken again.
TEST(ProducerTest, SecondWriterOfTheSameFileGetsASibling) {
  const std::string dir = testing::MakeTempDir("shared");
  const std::string path = dir + "/run.rft";
  Producer first(FileOptions(path));
  ASSERT_TRUE(first.Start().ok());
  for (uint64_t i = 1; i <= 10; ++i) first.EmitRange(Range(i, 0));
  // A producer opens its file on its sender thread: the second is started
  // once the first holds the file, else the two race for it (a loaded
  // machine let the second win).
  for (int waited_ms = 0; first.spool_path().empty() && waited_ms < 10000;
       waited_ms += 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(first.spool_path(), path);
  Producer second(FileOptions(path));
  ASSERT_TRUE(second.Start().ok());
  for (uint64_t i = 1; i <= 7; ++i) second.EmitRange(Range(i, 0));
  ASSERT_TRUE(second.Stop());
  ASSERT_TRUE(first.Stop());
  const std::string sibling = dir + "/run-" + std::to_string(getpid()) + ".rft";
  EXPECT_EQ(first.spool_path(), path);
  EXPECT_EQ(second.spool_path(), sibling);
  auto count = [](const std::string& p) {
    size_t n = 0;
    for (const auto& packet : testing::ReadTrace(p)) {
      n += packet.nvtx_batch().ranges_size();
    }
    return n;
  };
  EXPECT_EQ(count(path), 10u);
  EXPECT_EQ(count(sibling), 7u);
  Producer third(FileOptions(path));
  ASSERT_TRUE(third.Start().ok());
  ASSERT_TRUE(third.Stop());
  EXPECT_EQ(third.spool_path(), path);
  EXPECT_EQ(count(path), 0u);  // a new run overwrites the old file
}

}  // namespace
}  // namespace rooftrace::inject
