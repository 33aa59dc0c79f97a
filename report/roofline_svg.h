// Roofline plots as standalone SVG documents: log-log axes (arithmetic
// intensity in FLOP/byte against FLOP/s), the DRAM roof and one compute roof
// per level with its ridge point, points with a hover title, a legend.
//
// RenderRooflinePlot draws any RooflinePlot; RenderRooflineSvg builds one
// from a report (one point per kernel family, sized by its share of GPU
// time and coloured by phase). `rooftrace calibrate` and `rooftrace
// predict` draw theirs through the same code.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_REPORT_ROOFLINE_SVG_H_
#define ROOFTRACE_REPORT_ROOFLINE_SVG_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "report/report.h"

namespace rooftrace {

inline constexpr int kSvgWidth = 960;
inline constexpr int kSvgHeight = 620;  // grows by a row per wrapped legend row

// How a point (and its legend key) is drawn.
enum class RooflineMarker { kCircle, kSquare, kDiamond };
struct RooflineStyle {
  std::string color;  // "#1f77b4"
  RooflineMarker marker = RooflineMarker::kCircle;
  bool filled = true;  // false: white inside, coloured outline
};

// What a roofline plot shows, whatever measured or predicted it. Texts are
// plain (the renderer escapes them).
struct RooflinePlot {
  std::string title;
  std::string subtitle;
  // Large faint text across the plot ("SAMPLE - NOT MEASURED"); empty: none.
  std::string watermark;

  double dram_bytes_per_s = 0;  // <= 0: no DRAM roof, no ridges
  // One compute roof per precision, in any order. Roofs whose peaks are
  // within `merge_within` (relative) of each other share one line and one
  // label; a shared line is solid when one of its roofs is `used`, else
  // dashed.
  struct Roof {
    std::string name;
    double peak_flops_per_s = 0;
    bool used = false;
  };
  std::vector<Roof> roofs;
  double merge_within = 1e-6;

  struct Point {
    double ai = 0;           // > 0
    double flops_per_s = 0;  // > 0
    double radius = 4.5;     // pixels
    std::string radius_text;  // the r attribute; empty: one decimal
    RooflineStyle style;
    std::string title;  // hover text
    // Written beside the point for the ten points of highest label_rank
    // whose label fits without overlap; empty: never. Shortened to 30
    // characters keeping what tells kernel families apart (the namespaces
    // go first, the template argument stays: "elementwise_kern...<
    // direct_copy_kernel_cuda>"); labels that still shorten alike are
    // numbered ("... #2"). The hover title has the full text.
    std::string label;
    double label_rank = 0;
  };
  std::vector<Point> points;

  // Under the plot: one key per entry (wrapping to further rows when they
  // do not fit), then `legend` after the last key, then `note` on a line of
  // its own. Empty texts are left out.
  struct LegendKey {
    RooflineStyle style;
    std::string text;
  };
  std::vector<LegendKey> legend_keys;
  std::string legend;
  std::string note;
};
// Refused (kInvalidArgument, naming the plot and its roofs) when any
// coordinate is not a finite number: a roof or point of 0, inf or nan (a
// DRAM bandwidth of 1e-300 gave x="-nan") has no place on log axes, and an
// SVG with "nan" in an attribute is invalid.
StatusOr<std::string> RenderRooflinePlot(const RooflinePlot& plot);

// For a plot inside an HTML page: the SVG, or the refusal as a warning
// paragraph in its place (the rest of the page still holds).
std::string SvgOrWarning(const StatusOr<std::string>& svg);

// The report's plot. Families without FLOPs or bytes cannot be placed and
// are listed in a note under the plot.
StatusOr<std::string> RenderRooflineSvg(const Report& report);

// The texts that say what the points are, for plots of something other than
// a measured run (`rooftrace predict` places predicted ops); empty fields
// keep the defaults ("roofs: ...; run N, K kernels" and "point area ~ GPU
// time of the family; ...").
struct RooflineSvgText {
  std::string subtitle;
  std::string legend;
};
StatusOr<std::string> RenderRooflineSvg(const Report& report,
                                        const RooflineSvgText& text);

// Phase colours of the plot (kPhaseNames order).
const char* PhaseColor(int phase_index);

}  // namespace rooftrace

#endif  // ROOFTRACE_REPORT_ROOFLINE_SVG_H_
