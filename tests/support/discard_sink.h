// A RunSink that keeps nothing: for fuzzers and benchmarks that drive a
// source or the pipeline and want no SQLite cost. It touches each row's
// text views and numbers (they must be valid during the call, and the work
// must not be optimized away) and counts what it saw.
// Not thread-safe (a RunRecorder calls its sink from one thread).
#ifndef ROOFTRACE_TESTS_SUPPORT_DISCARD_SINK_H_
#define ROOFTRACE_TESTS_SUPPORT_DISCARD_SINK_H_

#include <cstdint>
#include <vector>

#include "pipeline/sink.h"
#include "tests/support/null_sink.h"

namespace rooftrace::test_support {

class DiscardSink : public NullSink {
 public:
  StatusOr<int64_t> AddSession(const SessionRow&,
                               const std::vector<DeviceRow>&) override {
    return ++sessions_;
  }
  StatusOr<int64_t> AddGemmCall(const GemmCallRow&) override {
    return ++gemms_;
  }
  Status AddKernel(const KernelRow& k) override {
    ++kernels_;
    timed_kernels_ += k.duration_ns > 0;
    duration_sum_ += k.duration_ns;
    bytes_ += k.name.size() + k.nvtx_path.size();
    return OkStatus();
  }
  Status AddNvtx(const NvtxRow& n) override {
    bytes_ += n.name.size() + n.path.size() + n.domain.size();
    return OkStatus();
  }

  int64_t sessions() const { return sessions_; }
  int64_t gemms() const { return gemms_; }
  uint64_t kernels() const { return kernels_; }
  // Kernels with a duration above zero.
  uint64_t timed_kernels() const { return timed_kernels_; }
  int64_t duration_sum() const { return duration_sum_; }

 private:
  int64_t sessions_ = 0, gemms_ = 0, duration_sum_ = 0;
  uint64_t kernels_ = 0, timed_kernels_ = 0, bytes_ = 0;
};

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_DISCARD_SINK_H_
