#include "libinject/session.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "libinject/clock.h"
#include "libinject/counters_mode.h"
#include "proto/field_numbers.h"
#include "libinject/log.h"
#include "libinject/thread_state.h"
#include "libinject/tracer.h"
#include "proto/framing.h"

namespace rooftrace::inject {

namespace f = wire::fields;

namespace {

uint32_t KindOf(RecordType type) {
  switch (type) {
    case RecordType::kLaunch: return wire::enums::kRecordLaunch;
    case RecordType::kGemm: return wire::enums::kRecordGemm;
    case RecordType::kNvtxRange: return wire::enums::kRecordNvtxRange;
    case RecordType::kNvtxMark: return wire::enums::kRecordNvtxMark;
    default: return wire::enums::kRecordUnknown;
  }
}

std::string ReadCmdline(std::vector<std::string>* argv) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv->push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return all;
}

}  // namespace

HelloInfo MakeHelloInfo(const Config& config) {
  HelloInfo h;
  h.pid = static_cast<uint32_t>(getpid());
  h.ppid = static_cast<uint32_t>(getppid());
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) h.host = host;
  ReadCmdline(&h.argv);
  h.start_unix_ns = RealtimeNs();
  h.start_ns = MonotonicNs();
  h.capabilities = {wire::enums::kCapNvtx, wire::enums::kCapGemmShapes};
  h.mode = wire::enums::kModeTrace;  // AttachCounters() switches it
  h.config = config.ToHelloConfig();
  return h;
}

// Records of one sender pass, grouped by packet type.
struct Session::Cycle {
  std::vector<LaunchRecord> launches;
  std::vector<GemmRecord> gemms;
  std::vector<NvtxRangeRecord> ranges;
  std::vector<NvtxMarkRecord> marks;
  std::vector<KernelInfo> kernels;
  std::vector<MemcpyInfo> memcpys;
  std::vector<DeviceInfo> devices;
  std::vector<KernelCountersInfo> counters;
  bool stats = false;
  bool goodbye = false;
  int32_t exit_code = -1;
  bool empty() const {
    return launches.empty() && gemms.empty() && ranges.empty() &&
           marks.empty() && kernels.empty() && memcpys.empty() &&
           devices.empty() && counters.empty() && !stats && !goodbye;
  }
};

Session::Session(SessionOptions options)
    : options_(std::move(options)),
      hello_(MakeHelloInfo(options_.config)),
      queue_(options_.config.queue_records) {
  capturing_.store(options_.config.capture == CaptureMode::kAll);
}

Session::~Session() {
  Stop();
}

Status Session::Start() {
  const Config& c = options_.config;
  // Built in every mode: a bad regex is refused whatever the mode.
  RT_ASSIGN_OR_RETURN(KernelFilter configured,
                      KernelFilter::Create(c.kernel_include, c.kernel_exclude,
                                           c.sample_every, c.max_kernels));
  if (c.mode == InjectMode::kCounters) {
    // The filters choose the launches counters mode profiles; trace mode
    // keeps every kernel record, so unselected kernels keep their timing.
    // Decided by the mode, not by AttachCounters(): CUPTI may attach after
    // Start() (NVTX route first), or counters mode may not start at all.
    RT_ASSIGN_OR_RETURN(filter_, KernelFilter::Create("", "", 1, 0));
  } else {
    filter_ = std::move(configured);
  }
  started_ = true;
  sender_ = std::thread([this] { SenderMain(); });
  return OkStatus();
}

void Session::set_tracer(std::unique_ptr<CuptiTracer> tracer) {
  tracer_ = std::move(tracer);
}

void Session::Emit(RecordType type, const void* record) {
  const uint32_t kind = KindOf(type);
  seen_[kind].fetch_add(1, std::memory_order_relaxed);
  size_t bytes = 0;
  switch (type) {
    case RecordType::kLaunch: bytes = sizeof(LaunchRecord); break;
    case RecordType::kGemm: bytes = sizeof(GemmRecord); break;
    case RecordType::kNvtxRange: bytes = sizeof(NvtxRangeRecord); break;
    case RecordType::kNvtxMark: bytes = sizeof(NvtxMarkRecord); break;
    default: return;
  }
  // Only the record's own bytes are copied into the slot (a Launch is a
  // sixth of the union).
  const bool queued = queue_.TryEmplace([&](Record& slot) {
    slot.type = type;
    std::memcpy(&slot.launch, record, bytes);
  });
  if (!queued) dropped_[kind].fetch_add(1, std::memory_order_relaxed);
}

void Session::AttachActivity(ActivityHooks hooks) {
  std::lock_guard<std::mutex> lock(mu_);
  activity_ = std::move(hooks);
  hello_.capabilities.push_back(wire::enums::kCapKernels);
  hello_.capabilities.push_back(wire::enums::kCapMemcpy);
  hello_.capabilities.push_back(wire::enums::kCapDeviceInfo);
}

void Session::AttachCounters(CountersMode* counters) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_ = counters;
  hello_.mode = wire::enums::kModeCounters;
  hello_.capabilities.push_back(wire::enums::kCapCounters);
}

void Session::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
  }
  cv_.notify_one();
}

void Session::Warn(const std::string& line) {
  Say(LogLevel::kWarn, "%s", line.c_str());
  std::lock_guard<std::mutex> lock(mu_);
  warnings_.push_back(line);
}

std::string Session::spool_path() {
  std::lock_guard<std::mutex> lock(mu_);
  return spool_path_;
}

std::string Session::DefaultSpoolPath() const {
  return options_.config.spool_dir + "/rooftrace-" + hello_.host + "-" +
         std::to_string(hello_.pid) + "-" +
         std::to_string(hello_.start_unix_ns) + ".rft";
}

// ------------------------------------------------------------------ sender

void Session::OpenSink() {
  const SinkSpec& spec = options_.config.sink;
  if (spec.kind == SinkSpec::Kind::kDefaultSpool) {
    const std::string path = DefaultSpoolPath();
    auto sink = OpenFileSink(path);
    if (!sink.ok()) {
      Warn(sink.status().message() + "; nothing will be recorded");
      return;
    }
    sink_ = std::move(*sink);
    {
      std::lock_guard<std::mutex> lock(mu_);
      spool_path_ = path;
    }
    Say(LogLevel::kWarn, "no ROOFTRACE_SINK set: writing spool %s",
        path.c_str());
    return;
  }
  if (spec.kind == SinkSpec::Kind::kFile) {
    std::string actual;
    auto file = OpenSharedFileSink(spec.path, &actual);
    if (file.ok()) {
      sink_ = std::move(*file);
      std::lock_guard<std::mutex> lock(mu_);
      spool_path_ = actual;
      if (actual != spec.path) {
        Say(LogLevel::kInfo, "%s is written by another process of this run: "
            "writing %s", spec.path.c_str(), actual.c_str());
      }
      return;
    }
    Warn(file.status().message() + "; nothing will be recorded");
    return;
  }
  auto sink = ConnectSink(spec, options_.connect_timeout_ms);
  if (sink.ok()) {
    sink_ = std::move(*sink);
    return;
  }
  SwitchToSpool(sink.status().message());
}

bool Session::SwitchToSpool(const std::string& why) {
  const std::string path = DefaultSpoolPath();
  auto spool = OpenFileSink(path);
  if (!spool.ok()) {
    sink_.reset();
    Warn(why + "; and " + spool.status().message() +
         ": records from now on are lost (counted as dropped)");
    return false;
  }
  sink_ = std::move(*spool);
  {
    std::lock_guard<std::mutex> lock(mu_);
    spool_path_ = path;
  }
  Warn(why + "; spooling to " + path +
       " instead (nothing captured is lost; load it with `rooftrace collect "
       "--ingest " + path + "`)");
  // The spool is a complete stream on its own: the Hello (sequence 1 again)
  // restating every string defined so far, then the packets the collector
  // may not have read before it went away (the collector drops sequences it
  // already has), then what comes next.
  std::string head;
  const uint64_t next = encoder_.next_sequence();
  encoder_.set_next_sequence(1);
  HelloInfo hello;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hello = hello_;
  }
  ProtoWriter& w = encoder_.Begin(hello.start_ns);
  EncodeHello(w, f::packet::kHello, hello);
  std::vector<StringInterner::Definition> all;
  interner_.TakeAll(&all);
  encoder_.Finish(all, &head);
  encoder_.set_next_sequence(next);
  for (const std::string& frames : replay_) head += frames;
  replay_.clear();
  replay_bytes_ = 0;
  if (!sink_->Write(head).ok()) {
    Warn(sink_->name() + ": cannot write the spool; records from now on are "
         "lost (counted as dropped)");
    sink_.reset();
    return false;
  }
  return true;
}

void Session::RememberForReplay(const std::string& frames) {
  replay_.push_back(frames);
  replay_bytes_ += frames.size();
  while (replay_bytes_ > kReplayBytes && replay_.size() > 1) {
    replay_bytes_ -= replay_.front().size();
    replay_.pop_front();
  }
}

void Session::WriteHello() {
  HelloInfo hello;
  {
    // Capabilities attached before this point are included; CUPTI attached
    // later (an NVTX-first process that initialises CUDA afterwards) still
    // sends kernels, the Hello just does not announce them.
    std::lock_guard<std::mutex> lock(mu_);
    hello = hello_;
  }
  ProtoWriter& w = encoder_.Begin(hello.start_ns);
  EncodeHello(w, f::packet::kHello, hello);
  std::vector<StringInterner::Definition> none;
  encoder_.Finish(none, &hello_frame_);
  if (sink_ == nullptr) return;
  if (sink_->Write(hello_frame_).ok()) {
    ++packets_sent_;
    bytes_sent_ += hello_frame_.size();
    if (sink_->is_socket()) WaitForHelloReply();
    return;
  }
  if (sink_->is_socket()) {
    if (SwitchToSpool("collector at " + sink_->name() +
                      " closed the connection at Hello")) {
      ++packets_sent_;
      bytes_sent_ += hello_frame_.size();
    }
  } else {
    Warn(sink_->name() + ": cannot write the trace; nothing will be recorded");
    sink_.reset();
  }
}

void Session::WaitForHelloReply() {
  wire::FrameReader reader;
  const uint64_t deadline =
      MonotonicNs() + static_cast<uint64_t>(options_.hello_reply_timeout_ms) * 1000000ull;
  while (MonotonicNs() < deadline) {
    const int left_ms =
        static_cast<int>((deadline - MonotonicNs()) / 1000000ull) + 1;
    auto bytes = sink_->ReadSome(left_ms);
    if (!bytes.ok()) {
      SwitchToSpool("collector at " + sink_->name() +
                    " closed the connection after Hello");
      return;
    }
    if (bytes->empty()) continue;
    reader.Feed(*bytes);
    std::string_view payload;
    if (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
      bool accepted = false;
      uint32_t version = 0;
      std::string reason;
      if (ParseHelloReply(payload, &accepted, &version, &reason) && !accepted) {
        SwitchToSpool("collector at " + sink_->name() +
                      " refused this session (" + reason + ")");
      }
      return;
    }
  }
  // No reply: an older or busy collector; keep streaming.
  Say(LogLevel::kDebug, "no HelloReply from %s within %d ms; streaming anyway",
      sink_->name().c_str(), options_.hello_reply_timeout_ms);
}

bool Session::WriteFrames(const std::string& frames) {
  if (sink_ == nullptr) return false;
  return sink_->Write(frames).ok();
}

void Session::SenderMain() {
  // The host's signals are for the host's threads.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "rooftrace-send");

  OpenSink();
  WriteHello();
  last_stats_ns_ = MonotonicNs();
  for (;;) {
    // Producers never wake the sender (no syscalls on their side), so it
    // polls: every flush interval when idle, every millisecond while the
    // queue is an eighth full or more, at once after a pass that hit its
    // limit.
    const size_t queued = queue_.SizeApprox();
    const uint64_t wait_ms =
        queued >= queue_.capacity() ? 0
        : queued >= queue_.capacity() / 8 ? 1
                                          : options_.flush_interval_ms;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (wait_ms > 0) {
        cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                     [this] { return wake_ || stop_requested_; });
      }
      wake_ = false;
      if (stop_requested_) break;
    }
    RunCycle(false);
  }
  std::function<void()> flush;
  {
    std::lock_guard<std::mutex> lock(mu_);
    flush = activity_.flush;
  }
  if (flush) flush();  // CUPTI hands over every buffer it still holds
  RunCycle(true);
  sink_.reset();  // closes
  {
    std::lock_guard<std::mutex> lock(mu_);
    sender_done_ = true;
  }
  cv_.notify_all();
}

void Session::DrainInto(Cycle* cycle, bool final_pass) {
  ActivityHooks hooks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hooks = activity_;
  }
  if (hooks.pool != nullptr && hooks.decoder != nullptr) {
    ActivityBufferPool::Completed done;
    while (hooks.pool->TakeCompleted(&done)) {
      hooks.decoder->Decode(done.buffer, done.valid_bytes, &cycle->kernels,
                            &cycle->memcpys, &cycle->devices, &decode_counts_);
      hooks.pool->Release(done.buffer);
    }
  }
  CountersMode* counters = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counters = counters_;
  }
  if (counters != nullptr) counters->Flush(final_pass, &cycle->counters);
  // Bounded per pass so a flood cannot starve the writes; the final pass
  // takes everything.
  const size_t limit = final_pass ? ~size_t{0} : queue_.capacity();
  Record r;
  for (size_t i = 0; i < limit && queue_.TryPop(&r); ++i) {
    switch (r.type) {
      case RecordType::kLaunch: cycle->launches.push_back(r.launch); break;
      case RecordType::kGemm: cycle->gemms.push_back(r.gemm); break;
      case RecordType::kNvtxRange: cycle->ranges.push_back(r.range); break;
      case RecordType::kNvtxMark: cycle->marks.push_back(r.mark); break;
      default: break;
    }
  }
}

StatsInfo Session::SnapshotStats() {
  StatsInfo s;
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    s.counts[k].seen = seen_[k].load(std::memory_order_relaxed);
    s.counts[k].dropped = dropped_[k].load(std::memory_order_relaxed);
    s.counts[k].filtered = filtered_[k].load(std::memory_order_relaxed);
    s.counts[k].sent = sent_[k].sent;
  }
  s.counts[wire::enums::kRecordKernel].seen += decode_counts_.kernels_seen;
  s.counts[wire::enums::kRecordKernel].filtered += decode_counts_.kernels_filtered;
  s.counts[wire::enums::kRecordMemcpy].seen += decode_counts_.memcpys_seen;
  s.counts[wire::enums::kRecordDevice].seen += decode_counts_.devices_seen;
  s.packets_sent = packets_sent_;
  s.bytes_sent = bytes_sent_;
  std::function<uint64_t()> dropped_records;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped_records = activity_.dropped_records;
    s.warnings.swap(warnings_);
  }
  if (dropped_records) s.cupti_records_dropped = dropped_records();
  CountersMode* counters = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counters = counters_;
  }
  if (counters != nullptr) {
    const RecordCountValues c = counters->Counts();
    RecordCountValues& out = s.counts[wire::enums::kRecordCounters];
    out.seen += c.seen;
    out.dropped += c.dropped;
    out.filtered += c.filtered;
    s.counter_passes = counters->passes();
    for (std::string& line : counters->TakeWarnings()) {
      Say(LogLevel::kWarn, "%s", line.c_str());
      s.warnings.push_back(std::move(line));
    }
  }
  return s;
}

namespace {

template <typename T, typename Fn>
void EncodeChunks(PacketEncoder& enc, const std::vector<T>& items,
                  size_t max_batch, uint32_t packet_field, uint32_t item_field,
                  Fn encode_item,
                  std::vector<StringInterner::Definition>* definitions,
                  std::string* frames, uint64_t* packets) {
  for (size_t begin = 0; begin < items.size(); begin += max_batch) {
    const size_t end = std::min(items.size(), begin + max_batch);
    ProtoWriter& w = enc.Begin(MonotonicNs());
    const size_t t = w.BeginMessage(packet_field);
    for (size_t i = begin; i < end; ++i) encode_item(w, item_field, items[i]);
    w.EndMessage(t);
    enc.Finish(*definitions, frames);
    definitions->clear();  // defined once, in the first packet of the pass
    ++*packets;
  }
}

}  // namespace

void Session::EncodeCycle(const Cycle& c, std::string* frames,
                          CountTable* sent) {
  std::vector<StringInterner::Definition> defs;
  interner_.TakePending(&defs);
  uint64_t packets = 0;
  const size_t max_batch = options_.max_batch_records;
  for (const DeviceInfo& d : c.devices) {
    ProtoWriter& w = encoder_.Begin(MonotonicNs());
    EncodeDevice(w, f::packet::kDevice, d);
    encoder_.Finish(defs, frames);
    defs.clear();
    ++packets;
  }
  EncodeChunks(encoder_, c.kernels, max_batch, f::packet::kKernelBatch,
               f::kernel_batch::kKernels, EncodeKernel, &defs, frames, &packets);
  EncodeChunks(encoder_, c.launches, max_batch, f::packet::kKernelBatch,
               f::kernel_batch::kLaunches, EncodeLaunch, &defs, frames,
               &packets);
  EncodeChunks(encoder_, c.memcpys, max_batch, f::packet::kMemcpyBatch,
               f::memcpy_batch::kMemcpys, EncodeMemcpy, &defs, frames,
               &packets);
  // KernelCounters carry a dozen metric values each: smaller batches.
  EncodeChunks(encoder_, c.counters, std::max<size_t>(1, max_batch / 4),
               f::packet::kCounterBatch, f::counter_batch::kCounters,
               EncodeKernelCounters, &defs, frames, &packets);
  EncodeChunks(encoder_, c.gemms, max_batch, f::packet::kGemmBatch,
               f::gemm_batch::kGemms, EncodeGemm, &defs, frames, &packets);
  EncodeChunks(encoder_, c.ranges, max_batch, f::packet::kNvtxBatch,
               f::nvtx_batch::kRanges, EncodeNvtxRange, &defs, frames,
               &packets);
  EncodeChunks(encoder_, c.marks, max_batch, f::packet::kNvtxBatch,
               f::nvtx_batch::kMarks, EncodeNvtxMark, &defs, frames, &packets);
  (*sent)[wire::enums::kRecordDevice].sent += c.devices.size();
  (*sent)[wire::enums::kRecordKernel].sent += c.kernels.size();
  (*sent)[wire::enums::kRecordLaunch].sent += c.launches.size();
  (*sent)[wire::enums::kRecordMemcpy].sent += c.memcpys.size();
  (*sent)[wire::enums::kRecordGemm].sent += c.gemms.size();
  (*sent)[wire::enums::kRecordCounters].sent += c.counters.size();
  (*sent)[wire::enums::kRecordNvtxRange].sent += c.ranges.size();
  (*sent)[wire::enums::kRecordNvtxMark].sent += c.marks.size();

  // Definitions taken with no record in this pass still need a packet:
  // they ride on a Stats packet.
  if (!c.stats && !c.goodbye && defs.empty()) return;
  // Stats and Goodbye state the counts as they will be once this pass's
  // frames are written.
  StatsInfo stats = SnapshotStats();
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    stats.counts[k].sent += (*sent)[k].sent;
  }
  stats.packets_sent = packets_sent_ + packets + 1;
  stats.bytes_sent = bytes_sent_ + frames->size();
  {
    ProtoWriter& w = encoder_.Begin(MonotonicNs());
    EncodeStats(w, f::packet::kStats, stats);
    encoder_.Finish(defs, frames);
    defs.clear();
    ++packets;
  }
  if (c.goodbye) {
    ProtoWriter& w = encoder_.Begin(MonotonicNs());
    EncodeGoodbye(w, f::packet::kGoodbye, stats.counts,
                  packets_sent_ + packets + 1, RealtimeNs(), MonotonicNs(),
                  c.exit_code);
    encoder_.Finish(defs, frames);
    ++packets;
  }
}

void Session::RunCycle(bool final_pass) {
  Cycle cycle;
  DrainInto(&cycle, final_pass);
  const uint64_t now = MonotonicNs();
  if (final_pass ||
      now - last_stats_ns_ >= options_.stats_interval_ms * 1000000ull) {
    cycle.stats = true;
    last_stats_ns_ = now;
  }
  if (final_pass) {
    cycle.goodbye = true;
    std::lock_guard<std::mutex> lock(mu_);
    cycle.exit_code = exit_code_;
  }
  if (cycle.empty()) return;

  const uint64_t first_sequence = encoder_.next_sequence();
  std::string frames;
  CountTable sent{};
  EncodeCycle(cycle, &frames, &sent);
  if (frames.empty()) return;
  const bool to_socket = sink_ != nullptr && sink_->is_socket();
  bool written = WriteFrames(frames);
  if (!written && to_socket) {
    // The collector went away: the spool gets this pass too.
    if (SwitchToSpool("collector at " + sink_->name() + " went away")) {
      written = WriteFrames(frames);
    }
  } else if (written && to_socket) {
    RememberForReplay(frames);
  }
  if (!written) {
    // No sink at all: everything of this pass is lost; say so in counts.
    for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
      dropped_[k].fetch_add(sent[k].sent, std::memory_order_relaxed);
    }
    return;
  }
  const uint64_t packets = encoder_.next_sequence() - first_sequence;
  packets_sent_ += packets;
  bytes_sent_ += frames.size();
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    sent_[k].sent += sent[k].sent;
  }
}

bool Session::Stop(int32_t exit_code) {
  if (!started_ || stopped_) return true;
  stopped_ = true;
  std::unique_lock<std::mutex> lock(mu_);
  stop_requested_ = true;
  exit_code_ = exit_code;
  cv_.notify_all();
  const bool done = cv_.wait_for(
      lock, std::chrono::milliseconds(options_.config.exit_timeout_ms),
      [this] { return sender_done_; });
  lock.unlock();
  if (!done) {
    sender_.detach();
    Say(LogLevel::kWarn,
        "could not finish sending within %llu ms "
        "(ROOFTRACE_EXIT_TIMEOUT_MS): the trace may be incomplete",
        static_cast<unsigned long long>(options_.config.exit_timeout_ms));
    return false;
  }
  sender_.join();
  if (tracer_) tracer_->Finalize();
  return true;
}

// ---------------------------------------------------------- process session

namespace {

std::atomic<Session*> g_current{nullptr};
std::mutex g_init_mu;
bool g_process_init_done = false;
std::atomic<bool> g_child_pending{false};
// Preloaded into a process that does not (yet) link CUDA: the session
// starts with its first record, so helper processes that never touch NVTX,
// cuBLAS or CUDA leave no trace at all.
std::atomic<bool> g_preload_pending{false};

void ForkPrepare() { g_init_mu.lock(); }
void ForkParent() { g_init_mu.unlock(); }
void ForkChild() {
  g_init_mu.unlock();
  g_fork_generation.fetch_add(1);
  // The parent's session (its queue, sender thread and sink) belongs to the
  // parent; it is abandoned here, never touched again.
  if (g_current.exchange(nullptr) != nullptr) g_child_pending.store(true);
}

void AtExit() {
  Session* s = g_current.load();
  if (s != nullptr) s->Stop(-1);
}

// A forked child writing to the parent's file would truncate it: the child
// gets "<name>-child-<pid>.rft" next to it.
std::string ChildFilePath(const std::string& path, pid_t pid) {
  return SiblingPath(path, "child-" + std::to_string(pid));
}

Session* CreateSession(bool forked_child = false) {
  auto config = ParseConfig([](const char* name) { return getenv(name); });
  if (!config.ok()) {
    Say(LogLevel::kWarn, "%s; rooftrace stands aside",
        config.status().message().c_str());
    return nullptr;
  }
  SetLogLevel(config->log_level);
  if (config->disabled) {
    Say(LogLevel::kInfo, "ROOFTRACE_DISABLE=1: standing aside");
    return nullptr;
  }
  SessionOptions options;
  options.config = std::move(*config);
  if (forked_child && options.config.sink.kind == SinkSpec::Kind::kFile) {
    options.config.sink.path = ChildFilePath(options.config.sink.path, getpid());
  }
  return new Session(std::move(options));
}

// Starts the sender of a created session; null (and one line) on failure.
Session* StartOrStandAside(Session* session) {
  if (session == nullptr) return nullptr;
  Status s = session->Start();
  if (!s.ok()) {
    Say(LogLevel::kWarn, "%s; rooftrace stands aside", s.message().c_str());
    return nullptr;  // leaked on purpose: CUPTI may hold a pointer to it
  }
  return session;
}

bool WantsCupti(EntryRoute route) {
  return route == EntryRoute::kCudaInjection ||
         (route == EntryRoute::kPreload && HostLinksCuda() &&
          getenv("CUDA_INJECTION64_PATH") == nullptr);
}

}  // namespace

Session* Session::Current() {
  Session* s = g_current.load(std::memory_order_acquire);
  if (s != nullptr) return s;
  if (g_preload_pending.load(std::memory_order_relaxed) &&
      g_preload_pending.exchange(false)) {
    return StartProcessSession(EntryRoute::kPreload);
  }
  if (!g_child_pending.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (g_child_pending.exchange(false)) {
    // A forked child: its own session, NVTX and cuBLAS only (CUDA does not
    // survive fork; a child that execs is a new process anyway).
    g_current.store(StartOrStandAside(CreateSession(/*forked_child=*/true)),
                    std::memory_order_release);
  }
  return g_current.load(std::memory_order_acquire);
}

void Session::SetCurrentForTesting(Session* session) {
  g_current.store(session, std::memory_order_release);
}

void Session::StartOnFirstRecord() {
  g_preload_pending.store(true, std::memory_order_release);
}

Session* Session::StartProcessSession(EntryRoute route) {
  g_preload_pending.store(false, std::memory_order_relaxed);
  Session* session = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_init_mu);
    if (!g_process_init_done) {
      g_process_init_done = true;
      Session* created = CreateSession();
      // CUPTI first, so the Hello announces kernels when they will come.
      if (created != nullptr && WantsCupti(route)) StartCuptiTracing(created);
      created = StartOrStandAside(created);
      if (created != nullptr) {
        g_current.store(created, std::memory_order_release);
        pthread_atfork(ForkPrepare, ForkParent, ForkChild);
        atexit(AtExit);
      }
    }
    session = g_current.load(std::memory_order_acquire);
  }
  if (session == nullptr) return Current();
  if (WantsCupti(route)) StartCuptiTracing(session);  // once per session
  return session;
}

}  // namespace rooftrace::inject
