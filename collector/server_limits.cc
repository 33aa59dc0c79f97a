#include "collector/server_limits.h"

#include <string>

namespace po = boost::program_options;

namespace rooftrace {

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

// `value` of `--name` lies in [lo, hi]; else one line naming it.
Status InRange(const char* name, int64_t value, int64_t lo, int64_t hi,
               const std::string& unit) {
  if (value >= lo && value <= hi) return OkStatus();
  return InvalidArgument(std::string("--") + name + " " +
                         std::to_string(value) + ": give " +
                         std::to_string(lo) + " to " + std::to_string(hi) +
                         " (" + unit + ")");
}

}  // namespace

ServerLimitFlags::ServerLimitFlags() {
  const ServerOptions d;
  hello_timeout_ms = static_cast<int64_t>(d.hello_timeout_ms);
  stall_timeout_ms = static_cast<int64_t>(d.stall_timeout_ms);
  min_frame_bytes_per_s = static_cast<int64_t>(d.min_frame_bytes_per_s);
  progress_grace_ms = static_cast<int64_t>(d.progress_grace_ms);
  max_connections = static_cast<int64_t>(d.max_connections);
  evict_idle_ms = static_cast<int64_t>(d.evict_idle_ms);
  memory_budget_mib = static_cast<int64_t>(d.memory_budget_bytes >> 20);
}

void AddServerLimitOptions(po::options_description* desc,
                           ServerLimitFlags* f) {
  desc->add_options()(
      "hello-timeout-ms",
      po::value(&f->hello_timeout_ms)->default_value(f->hello_timeout_ms),
      "close a connection that sends no Hello (no token, where one is "
      "asked) this long after it opened")(
      "stall-timeout-ms",
      po::value(&f->stall_timeout_ms)->default_value(f->stall_timeout_ms),
      "close a connection that sends nothing this long inside a frame")(
      "min-frame-bytes-per-s",
      po::value(&f->min_frame_bytes_per_s)
          ->default_value(f->min_frame_bytes_per_s),
      "progress floor after the Hello: a frame that has arrived at fewer "
      "bytes per second than this, on average since it began, is closed "
      "once --progress-grace-ms have passed (a peer sending a byte now and "
      "then would otherwise hold its slot for ever; libinject writes a "
      "frame at once). 0: no floor")(
      "progress-grace-ms",
      po::value(&f->progress_grace_ms)->default_value(f->progress_grace_ms),
      "how long a frame may take before the progress floor applies")(
      "max-connections",
      po::value(&f->max_connections)->default_value(f->max_connections),
      "connections held at once (each needs a file descriptor: ulimit -n "
      "must allow this many and some 64 more). When all are taken, a new "
      "peer takes the slot of the idlest one (see --evict-idle-ms), and "
      "is refused only when none is idle")(
      "evict-idle-ms",
      po::value(&f->evict_idle_ms)->default_value(f->evict_idle_ms),
      "when every connection slot is taken, a peer silent this long "
      "between frames (or before its Hello), or under the progress floor "
      "for 1 s inside a frame, may lose its slot to a new peer, the "
      "idlest first; its session is stored as far as it came (libinject "
      "falls back to its spool)")(
      "memory-budget-mib",
      po::value(&f->memory_budget_mib)->default_value(f->memory_budget_mib),
      "memory, in MiB, the collector may hold for all connections "
      "together (frames being received, or announced, and interned "
      "strings); a producer whose next frame would pass it is closed, "
      "what it sent before is stored and the run is incomplete");
}

Status ApplyServerLimits(const ServerLimitFlags& f, ServerOptions* so) {
  RT_RETURN_IF_ERROR(InRange("hello-timeout-ms", f.hello_timeout_ms, 100,
                             kHourMs, "milliseconds"));
  RT_RETURN_IF_ERROR(InRange("stall-timeout-ms", f.stall_timeout_ms, 100,
                             kHourMs, "milliseconds"));
  RT_RETURN_IF_ERROR(InRange("min-frame-bytes-per-s", f.min_frame_bytes_per_s,
                             0, 1ll << 30, "bytes per second; 0: no floor"));
  RT_RETURN_IF_ERROR(InRange("progress-grace-ms", f.progress_grace_ms, 100,
                             kHourMs, "milliseconds"));
  RT_RETURN_IF_ERROR(InRange("max-connections", f.max_connections, 1, 65536,
                             "connections"));
  RT_RETURN_IF_ERROR(InRange("evict-idle-ms", f.evict_idle_ms, 100, kHourMs,
                             "milliseconds"));
  RT_RETURN_IF_ERROR(InRange("memory-budget-mib", f.memory_budget_mib, 1,
                             1ll << 30, "MiB for all connections together"));
  so->hello_timeout_ms = static_cast<uint64_t>(f.hello_timeout_ms);
  so->stall_timeout_ms = static_cast<uint64_t>(f.stall_timeout_ms);
  so->min_frame_bytes_per_s = static_cast<uint64_t>(f.min_frame_bytes_per_s);
  so->progress_grace_ms = static_cast<uint64_t>(f.progress_grace_ms);
  so->max_connections = static_cast<size_t>(f.max_connections);
  so->evict_idle_ms = static_cast<uint64_t>(f.evict_idle_ms);
  so->memory_budget_bytes = static_cast<uint64_t>(f.memory_budget_mib) << 20;
  return OkStatus();
}

}  // namespace rooftrace
