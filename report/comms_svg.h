// The measured communication roofline, as a small standalone SVG: each kind
// of collective call of a report (Report::collectives) placed by its
// message size (x, bytes, log) and its bus bandwidth (y, GB/s, log) under
// the GPU's link roof (RoofTable::link_bytes_per_s, one direction), a
// horizontal line. Small messages sit far below the roof (latency-bound),
// large ones approach it: the distance is what tuning a collective can win.
//
// Pure function; thread-safe.
#ifndef ROOFTRACE_REPORT_COMMS_SVG_H_
#define ROOFTRACE_REPORT_COMMS_SVG_H_

#include <string>

#include "report/report.h"

namespace rooftrace {

inline constexpr int kCommsSvgWidth = 560;
inline constexpr int kCommsSvgHeight = 320;

// Empty when no collective has both a message size and a bus bandwidth.
// Without a link roof the points are drawn and the plot says there is none.
std::string RenderCommsRooflineSvg(const Report& report);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_COMMS_SVG_H_
