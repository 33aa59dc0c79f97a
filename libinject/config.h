// libinject's configuration, read once from the environment (the names are
// fixed and shared with `rooftrace profile`; docs/libinject.md lists them).
//
// ParseConfig() takes the lookup as a parameter so tests can drive it
// without touching the process environment. Errors name the variable, the
// bad value and the fix.
#ifndef ROOFTRACE_LIBINJECT_CONFIG_H_
#define ROOFTRACE_LIBINJECT_CONFIG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "libinject/kernel_filter.h"
#include "libinject/log.h"

namespace rooftrace::inject {

struct SinkSpec {
  enum class Kind { kDefaultSpool, kFile, kUnix, kTcp };
  Kind kind = Kind::kDefaultSpool;
  std::string path;  // kFile, kUnix
  std::string host;  // kTcp
  uint16_t port = 0;  // kTcp
  // kUnix, kTcp: the collector's shared token (ROOFTRACE_TOKEN, or the first
  // line of ROOFTRACE_TOKEN_FILE), sent first as Packet.connection_auth when
  // non-empty. Never written to a file sink.
  std::string token;
};

enum class CaptureMode { kAll, kProfilerApi };
// What an application thread does when the record queue is full: drop the
// record and count it (the default: the host never waits), or wait for the
// sender to make room (lossless, for offline profiling runs; bounded: a
// sender that makes no progress for a second is given up on).
enum class QueueFull { kDrop, kWait };
// kSampling: trace mode plus device-wide PM sampling (sampling_mode.h).
enum class InjectMode { kTrace, kCounters, kSampling };
// Which CUPTI API callbacks trace mode enables (ROOFTRACE_CALLBACKS,
// api_callbacks.h): kLean, the default, is the smallest set that keeps
// every kernel, copy and memset joined to its launch; kFull adds the
// callbacks that join nothing in trace mode (cu(da)ProfilerStart / Stop
// outside ROOFTRACE_CAPTURE=profiler-api), as before issue 26.
enum class CallbackSet { kLean, kFull };

// The parts of trace mode, each of which can be switched off
// (ROOFTRACE_TRACE_OFF=activity,runtime,driver,nvtx,cublas) to measure what
// it costs a launch (bench/launch/, docs/overhead.md). Switching one off
// loses what it records: it is a measuring tool, not a tuning knob.
struct TraceParts {
  bool activity = true;           // CUPTI activity kinds (kernels, copies)
  bool runtime_callbacks = true;  // runtime API callbacks (Launch records)
  bool driver_callbacks = true;   // driver API callbacks (Launch records)
  bool nvtx = true;               // NVTX injection (ranges)
  bool cublas = true;             // cuBLAS / cuBLASLt hooks (GEMM shapes)
  bool AllOn() const {
    return activity && runtime_callbacks && driver_callbacks && nvtx && cublas;
  }
};

struct Config {
  bool disabled = false;
  SinkSpec sink;
  std::string spool_dir;  // resolved: ROOFTRACE_SPOOL_DIR, TMPDIR, /tmp
  // spool_dir is a shared temporary folder (TMPDIR or /tmp, not
  // ROOFTRACE_SPOOL_DIR): spools go into a private rooftrace-<uid> in it.
  bool spool_dir_shared = false;
  InjectMode mode = InjectMode::kTrace;
  CallbackSet callbacks = CallbackSet::kLean;
  TraceParts parts;
  std::string kernel_include;
  std::string kernel_exclude;
  uint64_t sample_every = 1;
  uint64_t max_kernels = 0;  // 0 = unlimited
  CaptureMode capture = CaptureMode::kAll;
  // The memory budget of the live buffer (record queue and strings),
  // ROOFTRACE_BUFFER_MB; the queue gets the largest power-of-two number of
  // slots that fits with the strings' share.
  uint64_t buffer_bytes = uint64_t{32} << 20;
  // The most memory CUPTI's activity buffers may take,
  // ROOFTRACE_ACTIVITY_BUFFER_MB (ActivityBufferPool::ForBudget). CUPTI
  // keeps a buffer holding an incomplete record until a forced flush, so
  // this, not a buffer count, is what bounds how many it can hold back.
  uint64_t activity_buffer_bytes = uint64_t{256} << 20;
  // ROOFTRACE_QUEUE_RECORDS: an explicit queue size (0: from buffer_bytes).
  uint64_t queue_records = 0;
  QueueFull on_full = QueueFull::kDrop;
  // ROOFTRACE_LIVE_BUFFER=0 keeps the queue in private memory (nothing
  // survives an abrupt end).
  bool live_buffer = true;
  LogLevel log_level = LogLevel::kWarn;
  std::string counters = "default";
  std::string nvtx_include;
  // Counters mode: also profile communication kernels (NCCL, ...); off by
  // default (ROOFTRACE_COUNTERS_COMMUNICATION=profile turns it on).
  bool counters_communication = false;
  // Counters mode, sampled per kernel signature (kernel_filter.h): the
  // first ROOFTRACE_COUNTERS_FIRST launches of each signature are profiled,
  // then one in ROOFTRACE_COUNTERS_EVERY; the collector gives the others
  // their signature's sampled figures (pipeline/sampled.h). Two first
  // launches give a spread at once; one in 1000 keeps watching long runs.
  // EVERY=1 (or both 0) profiles every selected launch.
  uint64_t counters_first = 2;
  uint64_t counters_every = 1000;
  // Percent: a signature whose samples' DRAM bytes or FLOPs spread more
  // ((max - min) / mean) is profiled ten times as often
  // (ROOFTRACE_COUNTERS_TOLERANCE; 0: never).
  uint64_t counters_tolerance_pct = 5;
  // Counters mode: a metric set that fits one pass is collected without
  // kernel replay (ROOFTRACE_COUNTERS_REPLAY=auto, the default); =kernel
  // replays always (to measure what replay costs).
  bool counters_kernel_replay = false;
  // Sampling mode: the PM sampling interval (ROOFTRACE_SAMPLING_INTERVAL_US,
  // microseconds, 1..1000000; default 20: a 20 us kernel spans one or two
  // samples).
  uint64_t sampling_interval_us = 20;
  uint64_t exit_timeout_ms = 3000;

  // Queue slots and bytes for strings, from the budget (or queue_records).
  uint64_t QueueSlots() const;
  uint64_t StringBytes() const;

  // "KEY=value" lines for Hello.config (what matters for the run record).
  std::vector<std::string> ToHelloConfig() const;
  // The kernel filter of each mode, from the same variables: trace mode's
  // chooses the kernel records sent (in counters mode it keeps them all, so
  // unselected kernels keep their timing); counters mode's chooses the
  // launches profiled (with the NVTX condition).
  KernelFilterConfig TraceKernelFilter() const;
  KernelFilterConfig CountersKernelFilter() const;
};

using EnvLookup = std::function<const char*(const char* name)>;

// Reads every ROOFTRACE_* variable through `lookup` (getenv in production).
StatusOr<Config> ParseConfig(const EnvLookup& lookup);

// "activity,runtime,driver,nvtx,cublas" (any of them, comma-separated; ""
// for none): the parts ROOFTRACE_TRACE_OFF switches off.
StatusOr<TraceParts> ParseTraceOff(const std::string& value);
// The ROOFTRACE_TRACE_OFF value naming the parts that are off ("" for none).
std::string TraceOffValue(const TraceParts& parts);

// "unix:PATH" | "tcp:HOST:PORT" | "file:PATH".
StatusOr<SinkSpec> ParseSinkSpec(const std::string& value);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_CONFIG_H_
