// A RunSink that builds a report as a run's rows arrive, with nothing
// written to disk: the analyzer reads a trace (any source) through the
// pipeline into this sink and gets the report a store of the same rows
// would give (tests/analyzer/trace_input_test.cc compares the two). Memory
// is the grouped output and the bounded busy timeline (busy_time.h).
//
// Not thread-safe (the recorder serialises calls). Kernels are visited in
// the order they are emitted (window by window) rather than by start time,
// which can change only the last bits of floating-point sums.
#ifndef ROOFTRACE_REPORT_REPORT_SINK_H_
#define ROOFTRACE_REPORT_REPORT_SINK_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/sink.h"
#include "report/report.h"

namespace rooftrace {

class ReportSink : public RunSink {
 public:
  // `builder` receives every kernel row; not owned.
  explicit ReportSink(ReportBuilder* builder) : builder_(builder) {}

  // The report reads kernel, metric (for collectives' bandwidths) and copy
  // rows, and of a kernel row only the columns ReportBuilder::Add does (the
  // ones StoreReader::ForEachKernel fills are a superset).
  RowNeeds Needs() const override {
    RowNeeds n;
    n.gemm_calls = false;
    n.kernel_details = false;
    n.nvtx = false;
    return n;
  }

  StatusOr<int64_t> BeginRun(const RunRow& run) override;
  Status FinishRun(const RunRow& run, const ImportStats& stats) override;
  Status AddRoof(const RoofRow& roof) override;
  StatusOr<int64_t> AddSession(const SessionRow& session,
                               const std::vector<DeviceRow>& devices) override;
  Status UpdateSession(const SessionRow&) override { return OkStatus(); }
  StatusOr<int64_t> AddGemmCall(const GemmCallRow&) override { return 0; }
  Status AddStep(const StepRow& step) override {
    builder_->AddStep(step.phase);
    return OkStatus();
  }
  Status AddKernel(const KernelRow& kernel) override;
  Status AddKernelMetric(const KernelMetricRow& m) override {
    builder_->AddKernelMetric(m);
    return OkStatus();
  }
  Status AddMemcpy(const MemcpyRow& m) override {
    builder_->AddCopy(m);
    return OkStatus();
  }
  Status AddNvtx(const NvtxRow&) override { return OkStatus(); }
  // A write is a window (or a whole session): complete, so the busy
  // timeline may fold it.
  Status EndWrite() override {
    builder_->EndBatch();
    return OkStatus();
  }

  // Fills the builder's header from what the run recorded (as BuildReport
  // does from a store), with the builder's options (--device-profile
  // re-annotation, its roofs scaled to the measured SM clock).
  void FillHeader();

 private:
  ReportBuilder* builder_;
  RunRow run_;
  std::vector<RoofRow> roof_rows_;
  std::vector<std::pair<std::string, int64_t>> import_stats_;
  std::string device_name_;
  int64_t sessions_ = 0;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_REPORT_SINK_H_
