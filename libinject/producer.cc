#include "libinject/producer.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include "libinject/clock.h"
#include "libinject/log.h"
#include "libinject/sender.h"
#include "libinject/sink.h"
#include "libinject/tracer.h"
#include "proto/field_numbers.h"

namespace rooftrace::inject {

namespace {

uint32_t KindOf(RecordType type) {
  switch (type) {
    case RecordType::kLaunch:
      return wire::enums::kRecordLaunch;
    case RecordType::kGemm:
      return wire::enums::kRecordGemm;
    case RecordType::kNvtxRange:
      return wire::enums::kRecordNvtxRange;
    case RecordType::kNvtxMark:
      return wire::enums::kRecordNvtxMark;
    default:
      return wire::enums::kRecordUnknown;
  }
}

size_t BytesOf(RecordType type) {
  switch (type) {
    case RecordType::kLaunch:
      return sizeof(LaunchRecord);
    case RecordType::kGemm:
      return sizeof(GemmRecord);
    case RecordType::kNvtxRange:
      return sizeof(NvtxRangeRecord);
    case RecordType::kNvtxMark:
      return sizeof(NvtxMarkRecord);
    default:
      return 0;
  }
}

void ReadCmdline(std::vector<std::string>* argv) {
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

Producer::Producer(ProducerOptions options)
    : options_(std::move(options)),
      hello_(MakeHelloInfo(options_.config)) {
  CreateLiveBuffer();
  capturing_.store(options_.config.capture == CaptureMode::kAll);
  // Trace mode's filter exists from the start: the activity decoder may be
  // attached to it before Start() (CUPTI attaches first). In counters mode
  // it keeps every kernel record, decided by the mode and not by whether
  // counters mode attaches (CUPTI may attach after Start(), or never); the
  // counters filter is built here only to refuse a bad pattern early.
  const Config& c = options_.config;
  StatusOr<std::unique_ptr<KernelFilter>> trace =
      KernelFilter::Create(c.TraceKernelFilter());
  if (!trace.ok()) {
    filter_status_ = trace.status();
    return;
  }
  filter_ = std::move(trace).value();
  if (c.mode == InjectMode::kCounters) {
    StatusOr<std::unique_ptr<KernelFilter>> counters =
        KernelFilter::Create(c.CountersKernelFilter());
    if (!counters.ok()) filter_status_ = counters.status();
  }
}

static_assert(kLiveRecordKinds == wire::enums::kRecordKindCount);

void Producer::CreateLiveBuffer() {
  const Config& c = options_.config;
  const uint64_t slots = c.QueueSlots();
  const uint64_t strings = c.StringBytes();
  if (c.live_buffer) {
    StatusOr<std::string> dir = c.spool_dir;
    if (c.spool_dir_shared) dir = PrivateSpoolDir(c.spool_dir);
    if (dir.ok()) {
      const std::string path = *dir + "/rooftrace-" + hello_.host + "-" +
                               std::to_string(hello_.pid) + "-" +
                               std::to_string(hello_.start_unix_ns) + ".live";
      // The Hello as a reader of the file alone will need it (it names the
      // file, as the stream's Hello will).
      hello_.live_buffer = path;
      std::string hello_frame;
      PacketEncoder encoder;
      EncodeHello(encoder.Begin(hello_.start_ns), wire::fields::packet::kHello,
                  hello_);
      encoder.Finish({}, &hello_frame);
      auto file = LiveBuffer::Create(path, slots, strings, hello_frame,
                                     hello_.pid, hello_.start_unix_ns);
      if (file.ok()) {
        live_ = std::move(*file);
      } else {
        live_status_ = file.status();
      }
    } else {
      live_status_ = dir.status();
    }
  }
  if (live_ == nullptr) {
    if (!live_status_.ok()) {
      Say(LogLevel::kInfo,
          "%s: records still queued are lost if this process ends abruptly",
          live_status_.message().c_str());
    }
    auto anonymous = LiveBuffer::CreateAnonymous(slots, strings, hello_.pid,
                                                 hello_.start_unix_ns);
    if (!anonymous.ok()) {
      live_status_ = anonymous.status();
      own_counts_ = std::make_unique<LiveCounts>();
      counts_ = own_counts_.get();
      return;
    }
    live_ = std::move(*anonymous);
  }
  live_status_ = OkStatus();
  counts_ = &live_->header()->counts;
  queue_ = std::make_unique<BoundedQueue<CapturedRecord>>(
      live_->slots(), static_cast<size_t>(live_->capacity()));
  hello_.live_buffer = live_->path();
  interner_.set_mirror(live_.get());
}

Producer::~Producer() { Stop(); }

Status Producer::Start() {
  // A bad regex is refused whatever the mode (see the constructor). CUPTI
  // may already be attached (it attaches first, so the Hello can announce
  // kernels): a producer that stands aside takes it along.
  if (!filter_status_.ok() || queue_ == nullptr) {
    if (tracer_) tracer_->Detach();
    return !filter_status_.ok() ? filter_status_ : live_status_;
  }
  started_ = true;
  sender_running_.store(true);
  sender_ = std::make_unique<Sender>(this);
  sender_thread_ = std::thread([this] { sender_->Run(); });
  return OkStatus();
}

bool Producer::Stop(int32_t exit_code) {
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
    // The sender (and the Sender it runs) is left to the process's end.
    sender_thread_.detach();
    (void)sender_.release();
    Say(LogLevel::kWarn,
        "could not finish sending within %llu ms "
        "(ROOFTRACE_EXIT_TIMEOUT_MS): the trace may be incomplete",
        static_cast<unsigned long long>(options_.config.exit_timeout_ms));
    return false;
  }
  sender_thread_.join();
  // The Goodbye is written: nothing is left for a reader to recover.
  if (live_) live_->Retire();
  if (tracer_) tracer_->Finalize();
  return true;
}

void Producer::set_tracer(std::unique_ptr<CuptiTracer> tracer) {
  tracer_ = std::move(tracer);
}

namespace {
thread_local bool t_sender_thread = false;
}  // namespace

void Producer::MarkSenderThread() { t_sender_thread = true; }

void Producer::Emit(RecordType type, const void* record) {
  const uint32_t kind = KindOf(type);
  counts_->seen[kind].fetch_add(1, std::memory_order_relaxed);
  const size_t bytes = BytesOf(type);
  if (bytes == 0 || queue_ == nullptr) return;
  // Only the record's own bytes are copied into the slot (a Launch is a
  // sixth of the union).
  auto fill = [&](CapturedRecord& slot) {
    slot.type = type;
    std::memcpy(&slot.launch, record, bytes);
  };
  if (queue_->TryEmplace(fill)) return;
  if (options_.config.on_full == QueueFull::kWait && WaitForRoom(fill)) return;
  counts_->dropped[kind].fetch_add(1, std::memory_order_relaxed);
}

template <typename Fill>
bool Producer::WaitForRoom(Fill& fill) {
  // Never on the sender's own thread, never once it has stopped, and not
  // again at a head where waiting already gave up (until the sender moves).
  if (t_sender_thread || !sender_running_.load(std::memory_order_relaxed) ||
      stalled_at_head_.load(std::memory_order_relaxed) == queue_->head()) {
    return false;
  }
  waits_.fetch_add(1, std::memory_order_relaxed);
  constexpr uint64_t kGiveUpNs = 1000000000ull;  // no progress for 1 s
  uint64_t head = queue_->head();
  uint64_t since = MonotonicNs();
  for (int round = 0;; ++round) {
    if (round < 16) {
      sched_yield();
    } else {
      const timespec pause{0, 50 * 1000};  // the sender drains every 1 ms
      nanosleep(&pause, nullptr);
    }
    if (queue_->TryEmplace(fill)) return true;
    if (!sender_running_.load(std::memory_order_relaxed)) return false;
    const uint64_t now_head = queue_->head();
    const uint64_t now = MonotonicNs();
    if (now_head != head) {
      head = now_head;
      since = now;
    } else if (now - since > kGiveUpNs) {
      if (stalled_at_head_.exchange(head) != head) {
        Warn("ROOFTRACE_ON_FULL=wait: the sender made no progress for 1 s; "
             "records are dropped (counted) until it does");
      }
      return false;
    }
  }
}

void Producer::AttachActivity(ActivityHooks hooks) {
  std::lock_guard<std::mutex> lock(mu_);
  activity_ = std::move(hooks);
  hello_.capabilities.push_back(wire::enums::kCapKernels);
  hello_.capabilities.push_back(wire::enums::kCapMemcpy);
  hello_.capabilities.push_back(wire::enums::kCapDeviceInfo);
}

void Producer::AttachCounters(CountersMode* counters) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_ = counters;
  hello_.mode = wire::enums::kModeCounters;
  hello_.capabilities.push_back(wire::enums::kCapCounters);
}

void Producer::AttachSampling(SamplingMode* sampling) {
  std::lock_guard<std::mutex> lock(mu_);
  sampling_ = sampling;
  hello_.mode = wire::enums::kModeSampling;
  hello_.capabilities.push_back(wire::enums::kCapPmSampling);
}

void Producer::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
  }
  cv_.notify_one();
}

void Producer::Warn(const std::string& line) {
  Say(LogLevel::kWarn, "%s", line.c_str());
  std::lock_guard<std::mutex> lock(mu_);
  warnings_.push_back(line);
}

std::string Producer::spool_path() {
  std::lock_guard<std::mutex> lock(mu_);
  return spool_path_;
}

// ------------------------------------------------------------- sender side

bool Producer::WaitForWork(uint64_t wait_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  if (wait_ms > 0) {
    cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                 [this] { return wake_ || stop_requested_; });
  }
  wake_ = false;
  return !stop_requested_;
}

HelloInfo Producer::hello() {
  std::lock_guard<std::mutex> lock(mu_);
  return hello_;
}

Producer::ActivityHooks Producer::activity() {
  std::lock_guard<std::mutex> lock(mu_);
  return activity_;
}

CountersMode* Producer::counters() {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

SamplingMode* Producer::sampling() {
  std::lock_guard<std::mutex> lock(mu_);
  return sampling_;
}

std::vector<std::string> Producer::TakeWarnings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

void Producer::set_spool_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  spool_path_ = path;
}

int32_t Producer::exit_code() {
  std::lock_guard<std::mutex> lock(mu_);
  return exit_code_;
}

CountTable Producer::ProducedCounts() const {
  CountTable t{};
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    t[k].seen = counts_->seen[k].load(std::memory_order_relaxed);
    t[k].dropped = counts_->dropped[k].load(std::memory_order_relaxed);
    t[k].filtered = counts_->filtered[k].load(std::memory_order_relaxed);
  }
  return t;
}

void Producer::CountLost(const CountTable& lost) {
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    counts_->dropped[k].fetch_add(lost[k].sent, std::memory_order_relaxed);
  }
}

void Producer::SenderDone() {
  sender_running_.store(false);
  {
    std::lock_guard<std::mutex> lock(mu_);
    sender_done_ = true;
  }
  cv_.notify_all();
}

}  // namespace rooftrace::inject
