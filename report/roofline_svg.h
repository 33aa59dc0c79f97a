// The roofline plot of a report as a standalone SVG document: log-log axes
// (arithmetic intensity in FLOP/byte against FLOP/s), the DRAM roof and one
// compute roof per precision class with its ridge point, one point per
// kernel family sized by its share of GPU time and coloured by phase, with
// a hover title carrying the numbers.
//
// Pure function; thread-safe.
#ifndef ROOFTRACE_REPORT_ROOFLINE_SVG_H_
#define ROOFTRACE_REPORT_ROOFLINE_SVG_H_

#include <string>

#include "report/report.h"

namespace rooftrace {

inline constexpr int kSvgWidth = 960;
inline constexpr int kSvgHeight = 620;

// Families without FLOPs or bytes cannot be placed and are listed in a note
// under the plot.
std::string RenderRooflineSvg(const Report& report);

// The texts that say what the points are, for plots of something other than
// a measured run (`rooftrace predict` places predicted ops); empty fields
// keep the defaults ("roofs: ...; run N, K kernels" and "point area ~ GPU
// time of the family; ...").
struct RooflineSvgText {
  std::string subtitle;
  std::string legend;
};
std::string RenderRooflineSvg(const Report& report,
                              const RooflineSvgText& text);

// Phase colours of the plot (kPhaseNames order).
const char* PhaseColor(int phase_index);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_ROOFLINE_SVG_H_
