#include "libinject/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "libinject/record_queue.h"

namespace rooftrace::inject {

namespace {

Status BadValue(const char* name, const std::string& value,
                const std::string& expected) {
  return InvalidArgument(std::string(name) + "='" + value +
                         "' is not valid: expected " + expected);
}

StatusOr<uint64_t> ParseCount(const char* name, const std::string& value,
                              uint64_t min_value, uint64_t max_value) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) {
    return BadValue(name, value, "a whole number");
  }
  errno = 0;
  const unsigned long long v = strtoull(value.c_str(), nullptr, 10);
  if (errno != 0 || v < min_value || v > max_value) {
    return BadValue(name, value,
                    "a number from " + std::to_string(min_value) + " to " +
                        std::to_string(max_value));
  }
  return static_cast<uint64_t>(v);
}

// The first line of `path` (trailing blanks dropped), for
// ROOFTRACE_TOKEN_FILE.
StatusOr<std::string> ReadTokenFile(const std::string& path) {
  FILE* f = fopen(path.c_str(), "re");
  if (f == nullptr) {
    return InvalidArgument("ROOFTRACE_TOKEN_FILE='" + path +
                           "' cannot be read: " + strerror(errno) +
                           ": give a readable file whose first line is the "
                           "collector's token");
  }
  std::string token;
  for (int ch; (ch = fgetc(f)) != EOF && ch != '\n' && token.size() < 4096;) {
    token.push_back(static_cast<char>(ch));
  }
  fclose(f);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) {
    return InvalidArgument("ROOFTRACE_TOKEN_FILE='" + path +
                           "': its first line is empty: write the token there");
  }
  return token;
}

}  // namespace

namespace {
struct PartName {
  const char* name;
  bool TraceParts::*member;
};
constexpr PartName kPartNames[] = {
    {"activity", &TraceParts::activity},
    {"runtime", &TraceParts::runtime_callbacks},
    {"driver", &TraceParts::driver_callbacks},
    {"nvtx", &TraceParts::nvtx},
    {"cublas", &TraceParts::cublas},
};
}  // namespace

StatusOr<TraceParts> ParseTraceOff(const std::string& value) {
  TraceParts parts;
  size_t begin = 0;
  while (begin <= value.size()) {
    size_t end = value.find(',', begin);
    if (end == std::string::npos) end = value.size();
    const std::string part = value.substr(begin, end - begin);
    bool known = false;
    for (const PartName& p : kPartNames) {
      if (part == p.name) {
        parts.*(p.member) = false;
        known = true;
      }
    }
    if (!known && !(part.empty() && value.empty())) {
      return BadValue("ROOFTRACE_TRACE_OFF", value,
                      "a comma-separated list of activity, runtime, driver, "
                      "nvtx, cublas (the parts of trace mode to switch off)");
    }
    begin = end + 1;
  }
  return parts;
}

std::string TraceOffValue(const TraceParts& parts) {
  std::string out;
  for (const PartName& p : kPartNames) {
    if (parts.*(p.member)) continue;
    if (!out.empty()) out += ',';
    out += p.name;
  }
  return out;
}

StatusOr<SinkSpec> ParseSinkSpec(const std::string& value) {
  SinkSpec spec;
  const std::string expected =
      "unix:PATH, tcp:HOST:PORT or file:PATH (e.g. "
      "ROOFTRACE_SINK=unix:/tmp/rooftrace.sock)";
  const size_t colon = value.find(':');
  if (colon == std::string::npos) return BadValue("ROOFTRACE_SINK", value, expected);
  const std::string scheme = value.substr(0, colon);
  const std::string rest = value.substr(colon + 1);
  if (scheme == "file" || scheme == "unix") {
    if (rest.empty()) return BadValue("ROOFTRACE_SINK", value, expected);
    spec.kind = scheme == "file" ? SinkSpec::Kind::kFile : SinkSpec::Kind::kUnix;
    spec.path = rest;
    return spec;
  }
  if (scheme == "tcp") {
    const size_t port_colon = rest.rfind(':');
    if (port_colon == std::string::npos || port_colon == 0) {
      return BadValue("ROOFTRACE_SINK", value, expected);
    }
    spec.kind = SinkSpec::Kind::kTcp;
    spec.host = rest.substr(0, port_colon);
    if (spec.host.size() > 2 && spec.host.front() == '[' && spec.host.back() == ']') {
      spec.host = spec.host.substr(1, spec.host.size() - 2);
    }
    auto port = ParseCount("ROOFTRACE_SINK port", rest.substr(port_colon + 1), 1,
                           65535);
    if (!port.ok()) return BadValue("ROOFTRACE_SINK", value, expected);
    spec.port = static_cast<uint16_t>(*port);
    return spec;
  }
  return BadValue("ROOFTRACE_SINK", value, expected);
}

StatusOr<Config> ParseConfig(const EnvLookup& lookup) {
  Config config;
  auto get = [&](const char* name) -> const char* {
    const char* v = lookup(name);
    return (v != nullptr && v[0] != '\0') ? v : nullptr;
  };
  if (const char* v = get("ROOFTRACE_DISABLE")) {
    const std::string s = v;
    if (s == "1" || s == "true" || s == "yes") {
      config.disabled = true;
    } else if (s != "0" && s != "false" && s != "no") {
      return BadValue("ROOFTRACE_DISABLE", s, "1 (stand aside) or 0");
    }
  }
  if (const char* v = get("ROOFTRACE_LOG")) {
    const std::string s = v;
    if (s == "quiet") config.log_level = LogLevel::kQuiet;
    else if (s == "warn") config.log_level = LogLevel::kWarn;
    else if (s == "info") config.log_level = LogLevel::kInfo;
    else if (s == "debug") config.log_level = LogLevel::kDebug;
    else return BadValue("ROOFTRACE_LOG", s, "quiet, warn, info or debug");
  }
  if (const char* v = get("ROOFTRACE_SINK")) {
    RT_ASSIGN_OR_RETURN(config.sink, ParseSinkSpec(v));
  }
  if (const char* v = get("ROOFTRACE_SPOOL_DIR")) {
    config.spool_dir = v;
  } else if (const char* t = get("TMPDIR")) {
    config.spool_dir = t;
    config.spool_dir_shared = true;
  } else {
    config.spool_dir = "/tmp";
    config.spool_dir_shared = true;
  }
  if (const char* v = get("ROOFTRACE_MODE")) {
    const std::string s = v;
    if (s == "trace") config.mode = InjectMode::kTrace;
    else if (s == "counters") config.mode = InjectMode::kCounters;
    else if (s == "sampling") config.mode = InjectMode::kSampling;
    else return BadValue("ROOFTRACE_MODE", s, "trace, counters or sampling");
  }
  if (const char* v = get("ROOFTRACE_CALLBACKS")) {
    const std::string s = v;
    if (s == "lean") config.callbacks = CallbackSet::kLean;
    else if (s == "full") config.callbacks = CallbackSet::kFull;
    else {
      return BadValue("ROOFTRACE_CALLBACKS", s,
                      "lean (the default: the callbacks every join needs) or "
                      "full (also the profiler start / stop callbacks)");
    }
  }
  if (const char* v = get("ROOFTRACE_TRACE_OFF")) {
    RT_ASSIGN_OR_RETURN(config.parts, ParseTraceOff(v));
  }
  if (const char* v = get("ROOFTRACE_KERNEL_INCLUDE")) config.kernel_include = v;
  if (const char* v = get("ROOFTRACE_KERNEL_EXCLUDE")) config.kernel_exclude = v;
  if (const char* v = get("ROOFTRACE_SAMPLE_EVERY")) {
    RT_ASSIGN_OR_RETURN(config.sample_every,
                        ParseCount("ROOFTRACE_SAMPLE_EVERY", v, 1, 1u << 30));
  }
  if (const char* v = get("ROOFTRACE_MAX_KERNELS")) {
    RT_ASSIGN_OR_RETURN(config.max_kernels,
                        ParseCount("ROOFTRACE_MAX_KERNELS", v, 0, ~0ull >> 1));
  }
  if (const char* v = get("ROOFTRACE_CAPTURE")) {
    const std::string s = v;
    if (s == "all") config.capture = CaptureMode::kAll;
    else if (s == "profiler-api") config.capture = CaptureMode::kProfilerApi;
    else return BadValue("ROOFTRACE_CAPTURE", s, "all or profiler-api");
  }
  if (const char* v = get("ROOFTRACE_QUEUE_RECORDS")) {
    RT_ASSIGN_OR_RETURN(config.queue_records,
                        ParseCount("ROOFTRACE_QUEUE_RECORDS", v, 64, 1u << 24));
  }
  if (const char* v = get("ROOFTRACE_BUFFER_MB")) {
    RT_ASSIGN_OR_RETURN(const uint64_t mb,
                        ParseCount("ROOFTRACE_BUFFER_MB", v, 1, 16384));
    config.buffer_bytes = mb << 20;
  }
  if (const char* v = get("ROOFTRACE_ACTIVITY_BUFFER_MB")) {
    RT_ASSIGN_OR_RETURN(const uint64_t mb,
                        ParseCount("ROOFTRACE_ACTIVITY_BUFFER_MB", v, 1, 65536));
    config.activity_buffer_bytes = mb << 20;
  }
  if (const char* v = get("ROOFTRACE_ON_FULL")) {
    const std::string s = v;
    if (s == "drop") config.on_full = QueueFull::kDrop;
    else if (s == "wait") config.on_full = QueueFull::kWait;
    else return BadValue("ROOFTRACE_ON_FULL", s, "drop or wait");
  }
  if (const char* v = get("ROOFTRACE_LIVE_BUFFER")) {
    const std::string s = v;
    if (s == "1" || s == "yes") config.live_buffer = true;
    else if (s == "0" || s == "no") config.live_buffer = false;
    else return BadValue("ROOFTRACE_LIVE_BUFFER", s, "1 or 0");
  }
  if (const char* v = get("ROOFTRACE_COUNTERS")) {
    const std::string s = v;
    if (s != "default" && s != "full") {
      return BadValue("ROOFTRACE_COUNTERS", s, "default or full");
    }
    config.counters = s;
  }
  if (const char* v = get("ROOFTRACE_NVTX_INCLUDE")) config.nvtx_include = v;
  if (const char* v = get("ROOFTRACE_COUNTERS_COMMUNICATION")) {
    const std::string s = v;
    if (s == "profile")
      config.counters_communication = true;
    else if (s == "skip")
      config.counters_communication = false;
    else {
      return BadValue("ROOFTRACE_COUNTERS_COMMUNICATION", s,
                      "skip (the default: NCCL and other communication "
                      "kernels are not profiled, their replay can hang) or "
                      "profile");
    }
  }
  if (const char* v = get("ROOFTRACE_COUNTERS_FIRST")) {
    RT_ASSIGN_OR_RETURN(config.counters_first,
                        ParseCount("ROOFTRACE_COUNTERS_FIRST", v, 0, 1000000));
  }
  if (const char* v = get("ROOFTRACE_COUNTERS_EVERY")) {
    RT_ASSIGN_OR_RETURN(config.counters_every,
                        ParseCount("ROOFTRACE_COUNTERS_EVERY", v, 0, 1000000000));
  }
  if (const char* v = get("ROOFTRACE_COUNTERS_REPLAY")) {
    const std::string s = v;
    if (s == "auto")
      config.counters_kernel_replay = false;
    else if (s == "kernel")
      config.counters_kernel_replay = true;
    else {
      return BadValue("ROOFTRACE_COUNTERS_REPLAY", s,
                      "auto (the default: a metric set that fits one pass "
                      "is collected without replay) or kernel (replay every "
                      "profiled kernel)");
    }
  }
  if (const char* v = get("ROOFTRACE_COUNTERS_TOLERANCE")) {
    RT_ASSIGN_OR_RETURN(config.counters_tolerance_pct,
                        ParseCount("ROOFTRACE_COUNTERS_TOLERANCE", v, 0, 1000));
  }
  if (const char* v = get("ROOFTRACE_SAMPLING_INTERVAL_US")) {
    RT_ASSIGN_OR_RETURN(
        config.sampling_interval_us,
        ParseCount("ROOFTRACE_SAMPLING_INTERVAL_US", v, 1, 1000000));
  }
  if (const char* v = get("ROOFTRACE_EXIT_TIMEOUT_MS")) {
    RT_ASSIGN_OR_RETURN(config.exit_timeout_ms,
                        ParseCount("ROOFTRACE_EXIT_TIMEOUT_MS", v, 0, 600000));
  }
  // After ROOFTRACE_SINK, which fills the rest of config.sink.
  if (const char* v = get("ROOFTRACE_TOKEN")) {
    config.sink.token = v;
  } else if (const char* f = get("ROOFTRACE_TOKEN_FILE")) {
    RT_ASSIGN_OR_RETURN(config.sink.token, ReadTokenFile(f));
  }
  return config;
}

KernelFilterConfig Config::TraceKernelFilter() const {
  KernelFilterConfig f;
  if (mode == InjectMode::kCounters) return f;  // every kernel record
  f.kernel_include = kernel_include;
  f.kernel_exclude = kernel_exclude;
  f.sample_every = sample_every;
  f.max_kernels = max_kernels;
  return f;
}

KernelFilterConfig Config::CountersKernelFilter() const {
  KernelFilterConfig f;
  f.kernel_include = kernel_include;
  f.kernel_exclude = kernel_exclude;
  f.nvtx_include = nvtx_include;
  f.sample_every = sample_every;
  f.max_kernels = max_kernels;
  f.exclude_communication = !counters_communication;
  f.signature_first = counters_first;
  f.signature_every = counters_every;
  return f;
}

uint64_t Config::StringBytes() const {
  // An eighth of the budget, within [256 KiB, 16 MiB]: kernel names and
  // NVTX messages, each stored once.
  const uint64_t share = buffer_bytes / 8;
  return std::min<uint64_t>(std::max<uint64_t>(share, 256u << 10), 16u << 20);
}

uint64_t Config::QueueSlots() const {
  if (queue_records != 0) return BoundedQueue<CapturedRecord>::RoundCapacity(queue_records);
  const uint64_t strings = StringBytes();
  const uint64_t room = buffer_bytes > strings ? buffer_bytes - strings : 0;
  uint64_t slots = 64;
  while (slots * 2 * sizeof(LiveSlot) <= room) slots *= 2;
  return slots;
}

std::vector<std::string> Config::ToHelloConfig() const {
  std::vector<std::string> out;
  out.push_back(std::string("ROOFTRACE_MODE=") +
                (mode == InjectMode::kTrace      ? "trace"
                 : mode == InjectMode::kCounters ? "counters"
                                                 : "sampling"));
  out.push_back(std::string("ROOFTRACE_CAPTURE=") +
                (capture == CaptureMode::kAll ? "all" : "profiler-api"));
  out.push_back(std::string("ROOFTRACE_CALLBACKS=") +
                (callbacks == CallbackSet::kLean ? "lean" : "full"));
  // Only when something is off: a run without a part records less.
  if (!parts.AllOn()) out.push_back("ROOFTRACE_TRACE_OFF=" + TraceOffValue(parts));
  out.push_back("ROOFTRACE_SAMPLE_EVERY=" + std::to_string(sample_every));
  out.push_back("ROOFTRACE_MAX_KERNELS=" + std::to_string(max_kernels));
  out.push_back("ROOFTRACE_QUEUE_RECORDS=" + std::to_string(QueueSlots()));
  out.push_back("ROOFTRACE_BUFFER_MB=" + std::to_string(buffer_bytes >> 20));
  out.push_back("ROOFTRACE_ACTIVITY_BUFFER_MB=" +
                std::to_string(activity_buffer_bytes >> 20));
  out.push_back(std::string("ROOFTRACE_ON_FULL=") +
                (on_full == QueueFull::kWait ? "wait" : "drop"));
  if (!kernel_include.empty()) out.push_back("ROOFTRACE_KERNEL_INCLUDE=" + kernel_include);
  if (!kernel_exclude.empty()) out.push_back("ROOFTRACE_KERNEL_EXCLUDE=" + kernel_exclude);
  if (!nvtx_include.empty()) out.push_back("ROOFTRACE_NVTX_INCLUDE=" + nvtx_include);
  if (mode == InjectMode::kCounters) {
    out.push_back(std::string("ROOFTRACE_COUNTERS_COMMUNICATION=") +
                  (counters_communication ? "profile" : "skip"));
    out.push_back("ROOFTRACE_COUNTERS_FIRST=" + std::to_string(counters_first));
    out.push_back("ROOFTRACE_COUNTERS_EVERY=" + std::to_string(counters_every));
    out.push_back("ROOFTRACE_COUNTERS_TOLERANCE=" +
                  std::to_string(counters_tolerance_pct));
    out.push_back(std::string("ROOFTRACE_COUNTERS_REPLAY=") +
                  (counters_kernel_replay ? "kernel" : "auto"));
  }
  if (mode == InjectMode::kSampling) {
    out.push_back("ROOFTRACE_SAMPLING_INTERVAL_US=" +
                  std::to_string(sampling_interval_us));
  }
  return out;
}

}  // namespace rooftrace::inject
