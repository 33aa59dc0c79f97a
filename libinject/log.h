// libinject's messages: stderr only (never the host's stdout), one line
// each, prefixed "rooftrace: ". Level from ROOFTRACE_LOG. Say() writes with
// one write(2) so lines from several threads do not interleave; no heap.
// Thread-safe.
#ifndef ROOFTRACE_LIBINJECT_LOG_H_
#define ROOFTRACE_LIBINJECT_LOG_H_

#include <atomic>

namespace rooftrace::inject {

enum class LogLevel { kQuiet = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

// printf-style; the prefix and the newline are added.
void Say(LogLevel level, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// Says the message only the first time `flag` is seen unset.
#define RT_SAY_ONCE(flag, level, ...)                            \
  do {                                                           \
    if (!(flag).exchange(true)) ::rooftrace::inject::Say(level, __VA_ARGS__); \
  } while (0)

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_LOG_H_
