// The limits a collector sets its peers (collector/server.h), as
// command-line options: `collect` and `profile` (whose embedded collector
// serves the command's processes) take the same ones, with the same help,
// defaults and checks. Defaults are ServerOptions' own.
//
// Not thread-safe; used once while a command parses its options.
#ifndef ROOFTRACE_COLLECTOR_SERVER_LIMITS_H_
#define ROOFTRACE_COLLECTOR_SERVER_LIMITS_H_

#include <boost/program_options.hpp>

#include <cstdint>

#include "base/status.h"
#include "collector/server.h"

namespace rooftrace {

// As given on the command line. Signed, so that a negative value is
// refused rather than wrapped to 2^64 - 1.
struct ServerLimitFlags {
  ServerLimitFlags();
  int64_t hello_timeout_ms, stall_timeout_ms;
  int64_t min_frame_bytes_per_s, progress_grace_ms;
  int64_t max_connections, evict_idle_ms;
  int64_t memory_budget_mib;
};

// Adds --hello-timeout-ms, --stall-timeout-ms, --min-frame-bytes-per-s,
// --progress-grace-ms, --max-connections, --evict-idle-ms and
// --memory-budget-mib, bound to `flags`.
void AddServerLimitOptions(boost::program_options::options_description* desc,
                           ServerLimitFlags* flags);

// Checks every value against its range and copies it into `so`. The error
// names the option, the value given and what to give.
Status ApplyServerLimits(const ServerLimitFlags& flags, ServerOptions* so);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_SERVER_LIMITS_H_
