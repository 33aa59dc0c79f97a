#include "libinject/producer.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include "libinject/clock.h"
#include "libinject/log.h"
#include "libinject/sender.h"
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
      hello_(MakeHelloInfo(options_.config)),
      queue_(options_.config.queue_records) {
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

Producer::~Producer() { Stop(); }

Status Producer::Start() {
  // A bad regex is refused whatever the mode (see the constructor). CUPTI
  // may already be attached (it attaches first, so the Hello can announce
  // kernels): a producer that stands aside takes it along.
  if (!filter_status_.ok()) {
    if (tracer_) tracer_->Detach();
    return filter_status_;
  }
  started_ = true;
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
  if (tracer_) tracer_->Finalize();
  return true;
}

void Producer::set_tracer(std::unique_ptr<CuptiTracer> tracer) {
  tracer_ = std::move(tracer);
}

void Producer::Emit(RecordType type, const void* record) {
  const uint32_t kind = KindOf(type);
  seen_[kind].fetch_add(1, std::memory_order_relaxed);
  const size_t bytes = BytesOf(type);
  if (bytes == 0) return;
  // Only the record's own bytes are copied into the slot (a Launch is a
  // sixth of the union).
  const bool queued = queue_.TryEmplace([&](CapturedRecord& slot) {
    slot.type = type;
    std::memcpy(&slot.launch, record, bytes);
  });
  if (!queued) dropped_[kind].fetch_add(1, std::memory_order_relaxed);
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
    t[k].seen = seen_[k].load(std::memory_order_relaxed);
    t[k].dropped = dropped_[k].load(std::memory_order_relaxed);
    t[k].filtered = filtered_[k].load(std::memory_order_relaxed);
  }
  return t;
}

void Producer::CountLost(const CountTable& lost) {
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    dropped_[k].fetch_add(lost[k].sent, std::memory_order_relaxed);
  }
}

void Producer::SenderDone() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    sender_done_ = true;
  }
  cv_.notify_all();
}

}  // namespace rooftrace::inject
