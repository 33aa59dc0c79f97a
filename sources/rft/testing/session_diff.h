// Compares two sessions fed the same packets: what the hand-written packet
// decoder kept against what libprotobuf's parser kept
// (WireSession::UseReferenceDecoder). For packet_decoder_test and the collector
// fuzzer. Header-only: the fuzzer compiles the collector sources itself.
#ifndef ROOFTRACE_SOURCES_RFT_TESTING_SESSION_DIFF_H_
#define ROOFTRACE_SOURCES_RFT_TESTING_SESSION_DIFF_H_

#include <string>
#include <vector>

#include "sources/rft/wire_session.h"

namespace rooftrace::test_support {

namespace session_diff_internal {

template <typename T>
void DiffRecords(const char* what, const std::vector<T>& a,
                 const std::vector<T>& b, std::string* out) {
  if (a.size() != b.size()) {
    *out += std::string(what) + ": " + std::to_string(a.size()) + " vs " +
            std::to_string(b.size()) + " records; ";
    return;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) {
      *out += std::string(what) + " #" + std::to_string(i) + " differs; ";
      return;
    }
  }
}

}  // namespace session_diff_internal

// Empty when `a` and `b` hold the same records, strings and statistics;
// otherwise what differs first, per part.
inline std::string DiffSessions(const WireSession& wa, const WireSession& wb) {
  using session_diff_internal::DiffRecords;
  const Session& a = wa.session();
  const Session& b = wb.session();
  std::string out;
  DiffRecords("kernels", a.kernels(), b.kernels(), &out);
  DiffRecords("launches", a.launches(), b.launches(), &out);
  DiffRecords("memcpys", a.memcpys(), b.memcpys(), &out);
  DiffRecords("gemms", a.gemms(), b.gemms(), &out);
  DiffRecords("gemm links", a.gemm_links(), b.gemm_links(), &out);
  DiffRecords("nvtx ranges", a.nvtx_ranges(), b.nvtx_ranges(), &out);
  DiffRecords("counters", a.counters(), b.counters(), &out);
  DiffRecords("pm samples", a.pm_samples(), b.pm_samples(), &out);
  if (a.strings() != b.strings()) out += "interned strings differ; ";
  if (!(a.stats() == b.stats())) {
    for (const auto& [name, value] : a.stats().Named()) {
      for (const auto& [name_b, value_b] : b.stats().Named()) {
        if (name == name_b && value != value_b) {
          out += "stat " + name + ": " + std::to_string(value) + " vs " +
                 std::to_string(value_b) + "; ";
        }
      }
    }
  }
  const SessionEnd& ea = a.end();
  const SessionEnd& eb = b.end();
  if (ea.packets != eb.packets || ea.last_sequence != eb.last_sequence ||
      ea.sequence_gaps != eb.sequence_gaps ||
      ea.nvtx_marks != eb.nvtx_marks || wa.has_hello() != wb.has_hello() ||
      ea.goodbye != eb.goodbye || ea.complete != eb.complete ||
      wa.restart_pending() != wb.restart_pending()) {
    out += "packet counts or sequence differ; ";
  }
  return out;
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_SOURCES_RFT_TESTING_SESSION_DIFF_H_
