#include "libinject/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace rooftrace::inject {

namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
}  // namespace

void SetLogLevel(LogLevel level) {
  g_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogLevel GetLogLevel() {
  return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed));
}

void Say(LogLevel level, const char* format, ...) {
  if (level == LogLevel::kQuiet ||
      static_cast<int>(level) > g_level.load(std::memory_order_relaxed)) {
    return;
  }
  char line[1024];
  int n = snprintf(line, sizeof line, "rooftrace: ");
  va_list args;
  va_start(args, format);
  const int m = vsnprintf(line + n, sizeof line - n - 1, format, args);
  va_end(args);
  n += m < 0 ? 0 : m;
  if (n > static_cast<int>(sizeof line) - 2) n = sizeof line - 2;
  line[n++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, n);
  (void)ignored;
}

}  // namespace rooftrace::inject
