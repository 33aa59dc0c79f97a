#include "report/report_sink.h"

#include <algorithm>

namespace rooftrace {
namespace {

// Run id of the one run a trace makes (as in a fresh store).
constexpr int64_t kTraceRunId = 1;

}  // namespace

StatusOr<int64_t> ReportSink::BeginRun(const RunRow& run) {
  run_ = run;
  return kTraceRunId;
}

Status ReportSink::FinishRun(const RunRow& run, const ImportStats& stats) {
  run_ = run;
  import_stats_.clear();
  for (const auto& [name, value] : stats.Named()) {
    import_stats_.emplace_back(name, static_cast<int64_t>(value));
  }
  std::sort(import_stats_.begin(), import_stats_.end());
  return OkStatus();
}

Status ReportSink::AddRoof(const RoofRow& roof) {
  roof_rows_.push_back(roof);
  return OkStatus();
}

StatusOr<int64_t> ReportSink::AddSession(
    const SessionRow&, const std::vector<DeviceRow>& devices) {
  // The store's device name: the first session's lowest device id.
  if (device_name_.empty() && !devices.empty()) {
    const auto first = std::min_element(
        devices.begin(), devices.end(),
        [](const auto& a, const auto& b) { return a.device_id < b.device_id; });
    device_name_ = std::string(first->name);
    // --device-profile's roofs at the clock this device was measured at,
    // before its kernels arrive.
    builder_->SetMeasuredSmClock(first->measured_sm_clock_khz);
  }
  return ++sessions_;
}

Status ReportSink::AddKernel(const KernelRow& kernel) {
  builder_->Add(kernel);
  return OkStatus();
}

void ReportSink::FillHeader() {
  std::vector<RoofRow> rows = roof_rows_;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RoofRow& a, const RoofRow& b) {
                     return a.device_id != b.device_id
                                ? a.device_id < b.device_id
                                : a.peak_flops_per_s < b.peak_flops_per_s;
                   });
  RunRow run = run_;
  run.run_id = kTraceRunId;
  // The builder's options: --device-profile's roofs as scaled to the
  // measured clock.
  FillReportHeader(run, device_name_, rows, std::move(import_stats_),
                   builder_->options(), &builder_->header());
}

}  // namespace rooftrace
