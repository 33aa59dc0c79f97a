// A started pipeline Session on an H100 (host "host", pid 42) in `mode`
// ("import", "counters", ...): what the pipeline tests build their records
// into.
#ifndef ROOFTRACE_TESTS_SUPPORT_H100_SESSION_H_
#define ROOFTRACE_TESTS_SUPPORT_H100_SESSION_H_

#include <string>

#include "pipeline/session.h"

namespace rooftrace::test_support {

inline Session StartedH100Session(const std::string& mode) {
  Session s("test");
  SessionHeader h;
  h.host = "host";
  h.pid = 42;
  h.mode = mode;
  s.Start(h);
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  s.AddDevice(d);
  return s;
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_H100_SESSION_H_
