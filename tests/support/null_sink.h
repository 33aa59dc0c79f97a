// A RunSink whose every call succeeds and keeps nothing (ids are 1): the
// base of the tests' sinks, which override only what they read.
#ifndef ROOFTRACE_TESTS_SUPPORT_NULL_SINK_H_
#define ROOFTRACE_TESTS_SUPPORT_NULL_SINK_H_

#include <cstdint>
#include <vector>

#include "pipeline/sink.h"

namespace rooftrace::test_support {

class NullSink : public RunSink {
 public:
  StatusOr<int64_t> BeginRun(const RunRow&) override { return 1; }
  Status FinishRun(const RunRow&, const ImportStats&) override {
    return OkStatus();
  }
  Status AddRoof(const RoofRow&) override { return OkStatus(); }
  StatusOr<int64_t> AddSession(const SessionRow&,
                               const std::vector<DeviceRow>&) override {
    return 1;
  }
  Status UpdateSession(const SessionRow&) override { return OkStatus(); }
  StatusOr<int64_t> AddGemmCall(const GemmCallRow&) override { return 1; }
  Status AddStep(const StepRow&) override { return OkStatus(); }
  Status AddKernel(const KernelRow&) override { return OkStatus(); }
  Status AddKernelMetric(const KernelMetricRow&) override { return OkStatus(); }
  Status AddMemcpy(const MemcpyRow&) override { return OkStatus(); }
  Status AddNvtx(const NvtxRow&) override { return OkStatus(); }
  Status EndWrite() override { return OkStatus(); }
};

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_NULL_SINK_H_
