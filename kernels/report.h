// Calibration reports built from a recorded CalibrationResult (never from
// the GPU directly), so they render the same from a live run, from a saved
// `--save-result` file, or from a modelled sample in tests:
//  - the text summary `rooftrace calibrate` prints at the end,
//  - the HTML report (`--html`): the measured roofline (DRAM diagonal and
//    compute roofs) with seed 000's MLP points (fused vs non-fused, batch 16
//    vs 1024) and seed 004's M-sweep, plus every table behind it.
// A result with sample = true is labelled SAMPLE / NOT MEASURED in the page
// title, a banner, the chart and the summary.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_KERNELS_REPORT_H_
#define ROOFTRACE_KERNELS_REPORT_H_

#include <string>

#include "model/device_profile.h"
#include "kernels/calibration_result.h"
#include "report/roofline_svg.h"

namespace rooftrace::kernels {

std::string RenderCalibrationSummary(const CalibrationResult& r,
                                     const DeviceProfile& profile);

// The roofline chart (drawn by report/roofline_svg.h): the measured roofs,
// one series per MLP batch and form, one for the M-sweep.
RooflinePlot CalibrationRooflinePlot(const CalibrationResult& r,
                                     const DeviceProfile& profile);

// A self-contained HTML page (no scripts, no external resources).
std::string RenderCalibrationHtml(const CalibrationResult& r,
                                  const DeviceProfile& profile);

// Human units: "3.00 TB/s", "756.2 TFLOP/s", "1.24 ms".
std::string FormatBytesPerS(double v);
std::string FormatFlopsPerS(double v);
std::string FormatSeconds(double s);

}  // namespace rooftrace::kernels

#endif  // ROOFTRACE_KERNELS_REPORT_H_
