#include "report/roofline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "base/json.h"
#include "report/text_util.h"

namespace rooftrace {
namespace {

constexpr double kLeft = 95;
constexpr double kRight = 245;  // room for roof labels
constexpr double kTop = 50;
constexpr double kBottom = 115;  // axis labels, legend, note
constexpr int kLabelledPoints = 10;
constexpr double kLabelGap = 13;
constexpr double kLegendRow = 18;

struct Axes {
  double x_lo, x_hi, y_lo, y_hi;  // log10 bounds
  double px0 = kLeft, px1 = kSvgWidth - kRight;
  double py0 = kTop, py1 = kSvgHeight - kBottom;

  double X(double ai) const {
    return px0 + (std::log10(ai) - x_lo) / (x_hi - x_lo) * (px1 - px0);
  }
  double Y(double flops) const {
    return py1 - (std::log10(flops) - y_lo) / (y_hi - y_lo) * (py1 - py0);
  }
};

// How many coordinates the plot being drawn on this thread had that were
// not finite ("-nan", "inf" in an attribute make the SVG invalid and the
// plot meaningless). Every coordinate goes through Num(), so counting there
// catches each, whatever input made it; RenderRooflinePlot resets it and
// refuses the plot when it is not 0. Per thread: the functions stay safe
// to call from several threads.
thread_local int64_t non_finite_coordinates = 0;

std::string Num(double v) {
  if (!std::isfinite(v)) ++non_finite_coordinates;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string XTick(int k) {
  if (k < 0) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%.*f", -k, std::pow(10.0, k));
    return buf;
  }
  if (k <= 4) return std::to_string(static_cast<long long>(std::pow(10.0, k) + 0.5));
  return "1e" + std::to_string(k);
}

std::string Clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

// A kernel family's name shortened for a label of `width` characters that
// still tells it from its neighbours: namespaces before the kernel's own
// name go ("at::native::", "{anon}::"), and when it is still too long the
// template argument, which is what tells PyTorch's elementwise kernels
// apart, is kept whole where it leaves the name 8 characters and the name
// is clipped instead ("elementwis...<CUDAFunctor_add>"); a longer argument
// is clipped after the name ("elementwise_kernel<direct_c...").
std::string ShortLabel(const std::string& name, size_t width) {
  const size_t open = name.find('<');
  std::string head = name.substr(0, open);
  std::string args = open == std::string::npos ? "" : name.substr(open);
  const size_t ns = head.rfind("::");
  if (ns != std::string::npos) head = head.substr(ns + 2);
  const std::string whole = head + args;
  if (whole.size() <= width) return whole;
  if (args.empty() || args.size() + 8 > width) return Clip(whole, width);
  const size_t room = width - args.size();
  return (head.size() <= room ? head : head.substr(0, room - 3) + "...") +
         args;
}

// One roof level (roofs with the same peak share a line and a label).
struct Level {
  double peak;
  double ridge;
  std::string names;
  bool used = false;
};

// The plot's roofs merged into levels, highest first.
std::vector<Level> MergeRoofs(const RooflinePlot& plot) {
  const double bw = plot.dram_bytes_per_s;
  std::vector<Level> levels;
  for (const RooflinePlot::Roof& roof : plot.roofs) {
    auto it = std::find_if(levels.begin(), levels.end(), [&](const Level& l) {
      return std::fabs(l.peak - roof.peak_flops_per_s) <=
             plot.merge_within * l.peak;
    });
    if (it == levels.end()) {
      levels.push_back({roof.peak_flops_per_s,
                        bw > 0 ? roof.peak_flops_per_s / bw : 0, roof.name});
      it = levels.end() - 1;
    } else {
      it->names += ", " + roof.name;
    }
    it->used = it->used || roof.used;
  }
  std::sort(levels.begin(), levels.end(),
            [](const Level& a, const Level& b) { return a.peak > b.peak; });
  return levels;
}

// Axis ranges in decades, covering points, ridges and roofs, a little past
// the data so points and labels do not sit on the frame.
Axes FitAxes(const RooflinePlot& plot, const std::vector<Level>& levels) {
  double min_x = 1e300, max_x = 0, min_y = 1e300, max_y = 0;
  for (const RooflinePlot::Point& p : plot.points) {
    min_x = std::min(min_x, p.ai);
    max_x = std::max(max_x, p.ai);
    min_y = std::min(min_y, p.flops_per_s);
    max_y = std::max(max_y, p.flops_per_s);
  }
  for (const Level& l : levels) {
    if (l.ridge > 0) {
      min_x = std::min(min_x, l.ridge / 30);
      max_x = std::max(max_x, l.ridge * 8);
    }
    max_y = std::max(max_y, l.peak);
    min_y = std::min(min_y, l.peak / 1e3);
  }
  if (max_x <= 0) { min_x = 0.1; max_x = 1000; }
  if (max_y <= 0) { min_y = 1e9; max_y = 1e15; }
  Axes a;
  a.x_lo = std::log10(min_x) - 0.3;
  a.x_hi = std::log10(max_x) + 0.3;
  a.y_hi = std::log10(max_y) + 0.3;
  a.y_lo = std::log10(min_y) - 0.3;
  if (a.x_hi - a.x_lo < 3) a.x_lo = a.x_hi - 3;
  if (a.x_hi - a.x_lo > 9) a.x_lo = a.x_hi - 9;
  if (a.y_hi - a.y_lo < 3) a.y_lo = a.y_hi - 3;
  if (a.y_hi - a.y_lo > 8) a.y_lo = a.y_hi - 8;
  return a;
}

// Where each legend key sits; keys wrap to a new row at the plot's right
// edge.
struct LegendLayout {
  std::vector<double> key_x, key_y;
  double end_x = 0, end_y = 0;  // after the last key
  int rows = 1;
};
LegendLayout LayOutLegend(const RooflinePlot& plot, const Axes& a) {
  LegendLayout out;
  double lx = a.px0, ly = a.py1 + 66;
  for (const RooflinePlot::LegendKey& key : plot.legend_keys) {
    const double width = 30 + 7.0 * key.text.size();
    if (lx > a.px0 && lx + width - 14 > a.px1) {
      lx = a.px0;
      ly += kLegendRow;
      ++out.rows;
    }
    out.key_x.push_back(lx);
    out.key_y.push_back(ly);
    lx += width;
  }
  out.end_x = lx;
  out.end_y = ly;
  return out;
}

// The opening of a marker's element (attributes up to the stroke colour);
// the caller closes it. `r_text` is the circle's r attribute.
std::string MarkerOpen(const RooflineStyle& style, double x, double y,
                       double r, const std::string& r_text) {
  const std::string fill = style.filled ? style.color : "#ffffff";
  std::ostringstream o;
  switch (style.marker) {
    case RooflineMarker::kCircle:
      o << "<circle cx=\"" << Num(x) << "\" cy=\"" << Num(y) << "\" r=\""
        << r_text << '"';
      break;
    case RooflineMarker::kSquare:
      o << "<rect x=\"" << Num(x - r) << "\" y=\"" << Num(y - r)
        << "\" width=\"" << Num(2 * r) << "\" height=\"" << Num(2 * r) << '"';
      break;
    case RooflineMarker::kDiamond:
      o << "<polygon points=\"" << Num(x) << ',' << Num(y - r) << ' '
        << Num(x + r) << ',' << Num(y) << ' ' << Num(x) << ',' << Num(y + r)
        << ' ' << Num(x - r) << ',' << Num(y) << '"';
      break;
  }
  o << " fill=\"" << fill << "\" fill-opacity=\"0.6\" stroke=\"" << style.color
    << '"';
  return o.str();
}

const char* MarkerTag(const RooflineStyle& style) {
  switch (style.marker) {
    case RooflineMarker::kSquare: return "rect";
    case RooflineMarker::kDiamond: return "polygon";
    case RooflineMarker::kCircle: break;
  }
  return "circle";
}

void WriteFrame(const RooflinePlot& plot, const Axes& a, int height,
                std::ostream& s) {
  const int x_first = static_cast<int>(std::ceil(a.x_lo));
  const int x_last = static_cast<int>(std::floor(a.x_hi));
  const int y_first = static_cast<int>(std::ceil(a.y_lo));
  const int y_last = static_cast<int>(std::floor(a.y_hi));
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kSvgWidth
    << "\" height=\"" << height << "\" viewBox=\"0 0 " << kSvgWidth << ' '
    << height << "\" font-family=\"Helvetica, Arial, sans-serif\" "
    << "font-size=\"12\">\n";
  s << "<rect x=\"0\" y=\"0\" width=\"" << kSvgWidth << "\" height=\""
    << height << "\" fill=\"#ffffff\"/>\n";
  s << "<defs><clipPath id=\"plot\"><rect x=\"" << a.px0 << "\" y=\"" << a.py0
    << "\" width=\"" << a.px1 - a.px0 << "\" height=\"" << a.py1 - a.py0
    << "\"/></clipPath></defs>\n";
  s << "<text x=\"" << kLeft << "\" y=\"26\" font-size=\"16\" font-weight=\"bold\">"
    << XmlEscape(plot.title) << "</text>\n";
  s << "<text x=\"" << kLeft << "\" y=\"42\" fill=\"#555\">"
    << XmlEscape(plot.subtitle) << "</text>\n";

  // Grid and ticks.
  s << "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (int k = x_first; k <= x_last; ++k) {
    const double x = a.X(std::pow(10.0, k));
    s << "<line x1=\"" << Num(x) << "\" y1=\"" << a.py0 << "\" x2=\"" << Num(x)
      << "\" y2=\"" << a.py1 << "\"/>\n";
  }
  for (int k = y_first; k <= y_last; ++k) {
    const double y = a.Y(std::pow(10.0, k));
    s << "<line x1=\"" << a.px0 << "\" y1=\"" << Num(y) << "\" x2=\"" << a.px1
      << "\" y2=\"" << Num(y) << "\"/>\n";
  }
  s << "</g>\n<rect x=\"" << a.px0 << "\" y=\"" << a.py0 << "\" width=\""
    << a.px1 - a.px0 << "\" height=\"" << a.py1 - a.py0
    << "\" fill=\"none\" stroke=\"#333\"/>\n";
  s << "<g fill=\"#333\">\n";
  for (int k = x_first; k <= x_last; ++k) {
    s << "<text x=\"" << Num(a.X(std::pow(10.0, k))) << "\" y=\"" << a.py1 + 18
      << "\" text-anchor=\"middle\">" << XTick(k) << "</text>\n";
  }
  for (int k = y_first; k <= y_last; ++k) {
    s << "<text x=\"" << a.px0 - 6 << "\" y=\"" << Num(a.Y(std::pow(10.0, k)) + 4)
      << "\" text-anchor=\"end\">" << XmlEscape(SiPrefix(std::pow(10.0, k)))
      << "FLOP/s</text>\n";
  }
  s << "</g>\n<text x=\"" << Num((a.px0 + a.px1) / 2) << "\" y=\"" << a.py1 + 40
    << "\" text-anchor=\"middle\">Arithmetic intensity (FLOP/byte, log)</text>\n";
  s << "<text transform=\"translate(18," << Num((a.py0 + a.py1) / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">Achieved FLOP/s (log)</text>\n";
}

// The DRAM diagonal up to the highest ridge, one flat roof per level, and
// their labels in the right margin, pushed apart so they never overlap.
void WriteRoofs(double bw, const std::vector<Level>& levels, const Axes& a,
                std::ostream& s) {
  s << "<g clip-path=\"url(#plot)\" fill=\"none\">\n";
  if (bw > 0) {
    const double top = levels.empty() ? std::pow(10.0, a.y_hi) : levels.front().peak;
    const double x0 = std::pow(10.0, a.x_lo);
    const double x1 = top / bw;
    s << "<line x1=\"" << Num(a.X(x0)) << "\" y1=\"" << Num(a.Y(x0 * bw))
      << "\" x2=\"" << Num(a.X(x1)) << "\" y2=\"" << Num(a.Y(top))
      << "\" stroke=\"#222\" stroke-width=\"2\"><title>"
      << XmlEscape("DRAM roof " + SiPrefix(bw) + "B/s") << "</title></line>\n";
  }
  for (const Level& l : levels) {
    s << "<line x1=\"" << Num(a.X(l.ridge > 0 ? l.ridge : std::pow(10.0, a.x_lo)))
      << "\" y1=\"" << Num(a.Y(l.peak)) << "\" x2=\"" << a.px1 << "\" y2=\""
      << Num(a.Y(l.peak)) << "\" stroke=\"" << (l.used ? "#222" : "#999")
      << "\" stroke-width=\"" << (l.used ? 2 : 1) << "\""
      << (l.used ? "" : " stroke-dasharray=\"5,4\"") << "><title>"
      << XmlEscape(l.names + " roof " + SiPrefix(l.peak) + "FLOP/s, ridge " +
                   Fixed(l.ridge, 1) + " FLOP/byte")
      << "</title></line>\n";
    if (l.ridge > 0) {
      s << "<circle cx=\"" << Num(a.X(l.ridge)) << "\" cy=\"" << Num(a.Y(l.peak))
        << "\" r=\"3.5\" fill=\"" << (l.used ? "#222" : "#999") << "\"/>\n";
    }
  }
  s << "</g>\n";

  std::vector<double> label_y;
  for (const Level& l : levels) {
    double y = a.Y(l.peak) + 4;
    if (!label_y.empty()) y = std::max(y, label_y.back() + kLabelGap);
    label_y.push_back(y);
  }
  s << "<g font-size=\"11\">\n";
  for (size_t i = 0; i < levels.size(); ++i) {
    const Level& l = levels[i];
    s << "<text x=\"" << a.px1 + 6 << "\" y=\"" << Num(label_y[i]) << "\" fill=\""
      << (l.used ? "#111" : "#888") << "\">"
      << XmlEscape(Clip(l.names, 22) + " " + SiPrefix(l.peak) + "FLOP/s, ridge " +
                   Fixed(l.ridge, 0))
      << "</text>\n";
  }
  if (bw > 0) {
    // Along the DRAM diagonal, near its left end, at the line's angle.
    const double decade_x = (a.px1 - a.px0) / (a.x_hi - a.x_lo);
    const double decade_y = (a.py1 - a.py0) / (a.y_hi - a.y_lo);
    const double angle = -std::atan2(decade_y, decade_x) * 180.0 / M_PI;
    double ai = std::pow(10.0, a.x_lo + 0.35);
    if (ai * bw < std::pow(10.0, a.y_lo + 0.3)) ai = std::pow(10.0, a.y_lo + 0.3) / bw;
    const double x = a.X(ai), y = a.Y(ai * bw) - 6;
    s << "<text x=\"" << Num(x) << "\" y=\"" << Num(y) << "\" transform=\"rotate("
      << Num(angle) << ' ' << Num(x) << ' ' << Num(y) << ")\" fill=\"#111\">"
      << XmlEscape("DRAM " + SiPrefix(bw) + "B/s") << "</text>\n";
  }
  s << "</g>\n";
}

struct Placed {
  const RooflinePlot::Point* point;
  double x, y;
};

// Points, largest first so small ones stay visible on top; then labels for
// the highest-ranked ones, skipping ones that collide.
void WritePoints(const RooflinePlot& plot, const Axes& a, std::ostream& s) {
  std::vector<Placed> points;
  for (const RooflinePlot::Point& p : plot.points) {
    points.push_back({&p, a.X(p.ai), a.Y(p.flops_per_s)});
  }
  std::sort(points.begin(), points.end(), [](const Placed& p, const Placed& q) {
    return p.point->radius > q.point->radius;
  });
  s << "<g clip-path=\"url(#plot)\">\n";
  for (const Placed& p : points) {
    const RooflinePlot::Point& pt = *p.point;
    s << MarkerOpen(pt.style, p.x, p.y, pt.radius,
                    pt.radius_text.empty() ? Num(pt.radius) : pt.radius_text)
      << " stroke-width=\"1.2\"><title>" << XmlEscape(pt.title) << "</title></"
      << MarkerTag(pt.style) << ">\n";
  }
  s << "</g>\n";

  std::vector<Placed> by_rank = points;
  std::sort(by_rank.begin(), by_rank.end(), [](const Placed& p, const Placed& q) {
    return p.point->label_rank > q.point->label_rank;
  });
  // Each point's label: ShortLabel, unless another point's name shortens
  // to the same text (hipBLASLt's "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_
  // UserArgs_MT128x256x32_..." kernels differ only past 40 characters):
  // then its first 10 characters and the part from where it differs from
  // the closest of them ("Cijk_Alik_...MT128x256x32_MI16x16x1...").
  std::map<const RooflinePlot::Point*, std::string> label_of;
  std::map<std::string, std::vector<const RooflinePlot::Point*>> by_short;
  for (const Placed& p : points) {
    if (p.point->label.empty()) continue;
    by_short[ShortLabel(p.point->label, 30)].push_back(p.point);
  }
  for (const auto& [short_label, group] : by_short) {
    for (const RooflinePlot::Point* pt : group) {
      const std::string& name = pt->label;
      size_t differs = 0;
      for (const RooflinePlot::Point* other : group) {
        if (other->label == name) continue;
        size_t i = 0;
        while (i < name.size() && i < other->label.size() &&
               name[i] == other->label[i]) {
          ++i;
        }
        differs = std::max(differs, i);
      }
      label_of[pt] = differs <= 10
                         ? short_label
                         : Clip(name.substr(0, 10) + "..." +
                                    name.substr(std::max<size_t>(differs, 12) - 2),
                                30);
    }
  }
  struct Box { double x0, y0, x1, y1; };
  std::vector<Box> boxes;
  s << "<g font-size=\"11\" fill=\"#111\">\n";
  int labelled = 0;
  // Labels already written: two families that shorten alike are told
  // apart by a number (their hover titles give the full names).
  std::map<std::string, int> written;
  for (const Placed& p : by_rank) {
    if (labelled >= kLabelledPoints) break;
    if (p.point->label.empty()) continue;
    const std::string& base = label_of[p.point];
    const int seen = written.count(base) ? written[base] : 0;
    const std::string text =
        seen > 0 ? Clip(base, 26) + " #" + std::to_string(seen + 1) : base;
    const double r = p.point->radius;
    const double w = 7.0 * text.size();  // generous for 11px sans-serif
    for (const double dy : {0.0, -kLabelGap, kLabelGap, -2 * kLabelGap, 2 * kLabelGap}) {
      double x = p.x + r + 3;
      if (x + w > a.px1) x = p.x - r - 3 - w;  // flip to the left side
      const Box b{x, p.y + dy - 9, x + w, p.y + dy + 3};
      if (b.y0 < a.py0 || b.y1 > a.py1 || b.x0 < a.px0) continue;
      const bool hit = std::any_of(boxes.begin(), boxes.end(), [&](const Box& o) {
        return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1;
      });
      if (hit) continue;
      boxes.push_back(b);
      ++written[base];
      s << "<text x=\"" << Num(x) << "\" y=\"" << Num(p.y + dy) << "\">"
        << XmlEscape(text) << "</text>\n";
      ++labelled;
      break;
    }
  }
  s << "</g>\n";
}

void WriteLegend(const RooflinePlot& plot, const LegendLayout& layout,
                 const Axes& a, std::ostream& s) {
  s << "<g font-size=\"12\">\n";
  for (size_t i = 0; i < plot.legend_keys.size(); ++i) {
    const RooflinePlot::LegendKey& key = plot.legend_keys[i];
    const double lx = layout.key_x[i], ly = layout.key_y[i];
    s << MarkerOpen(key.style, lx + 6, ly - 4, 6, "6") << "/><text x=\""
      << Num(lx + 16) << "\" y=\"" << Num(ly) << "\">" << XmlEscape(key.text)
      << "</text>\n";
  }
  if (!plot.legend.empty()) {
    s << "<text x=\"" << Num(layout.end_x + 10) << "\" y=\""
      << Num(layout.end_y) << "\" fill=\"#444\">" << XmlEscape(plot.legend)
      << "</text>\n";
  }
  if (!plot.note.empty()) {
    s << "<text x=\"" << a.px0 << "\" y=\"" << Num(layout.end_y + 22)
      << "\" fill=\"#444\">" << XmlEscape(plot.note) << "</text>\n";
  }
  s << "</g>\n";
}

// The report's roofs: a level is in use when a plotted family runs at one
// of its precisions.
std::vector<RooflinePlot::Roof> ReportRoofs(
    const RoofTable& roofs, const std::vector<const GroupRow*>& placed) {
  std::vector<RooflinePlot::Roof> out;
  for (const Roof& roof : roofs.roofs) {
    const bool used =
        std::any_of(placed.begin(), placed.end(), [&](const GroupRow* g) {
          return g->precision == roof.precision;
        });
    out.push_back({roof.precision, roof.peak_flops_per_s, used});
  }
  return out;
}

// Points above their roof: red, a colour no phase has.
constexpr char kAboveRoofColor[] = "#d62728";

// A family's hover text: its numbers, bound, phase and precision.
std::string FamilyTitle(const GroupRow& g) {
  auto scaled = [](const std::optional<double>& v, double f) {
    return v ? std::optional<double>(*v * f) : std::nullopt;
  };
  return g.name + "\n" + std::to_string(g.count) + " kernels, " +
         Fixed(g.total_ns * 1e-6, 3) + " ms (" + Fixed(g.time_share * 100, 1) +
         "% of GPU time)\nAI " + Fixed(g.ai, 2) + " FLOP/byte, " +
         Fixed(*g.achieved_flops_per_s * 1e-12, 3) + " TFLOP/s, " +
         Fixed(scaled(g.achieved_bytes_per_s, 1e-9), 1) + " GB/s\n" +
         Fixed(scaled(g.fraction_of_roof, 100), 1) + "% of roof, " + g.bound +
         "-bound, " + g.phase + " (" +
         (g.precision.empty() ? "unknown precision" : g.precision) + ")";
}

}  // namespace

const char* PhaseColor(int phase_index) {
  static const char* const kColors[kNumPhases] = {"#1f77b4", "#ff7f0e",
                                                  "#9467bd", "#2ca02c",
                                                  "#7f7f7f"};
  return kColors[std::clamp(phase_index, 0, kNumPhases - 1)];
}

StatusOr<std::string> RenderRooflinePlot(const RooflinePlot& plot) {
  non_finite_coordinates = 0;
  // An input that is not finite counts too, drawn or not: a roof of nan
  // is skipped as "none" by the comparisons below, which would hide it.
  std::vector<double> inputs = {plot.dram_bytes_per_s};
  for (const RooflinePlot::Roof& r : plot.roofs) {
    inputs.push_back(r.peak_flops_per_s);
  }
  for (const RooflinePlot::Point& p : plot.points) {
    inputs.insert(inputs.end(), {p.ai, p.flops_per_s, p.radius});
  }
  for (const double v : inputs) {
    if (!std::isfinite(v)) ++non_finite_coordinates;
  }
  const std::vector<Level> levels = MergeRoofs(plot);
  const Axes a = FitAxes(plot, levels);
  const LegendLayout legend = LayOutLegend(plot, a);
  std::ostringstream s;
  WriteFrame(plot, a, kSvgHeight + static_cast<int>(kLegendRow) * (legend.rows - 1),
             s);
  WriteRoofs(plot.dram_bytes_per_s, levels, a, s);
  WritePoints(plot, a, s);
  WriteLegend(plot, legend, a, s);
  if (!plot.watermark.empty()) {
    const double cx = (a.px0 + a.px1) / 2, cy = (a.py0 + a.py1) / 2;
    s << "<text x=\"" << Num(cx) << "\" y=\"" << Num(cy)
      << "\" text-anchor=\"middle\" font-size=\"48\" fill=\"#d00\" "
         "fill-opacity=\"0.18\" transform=\"rotate(-20 "
      << Num(cx) << ' ' << Num(cy) << ")\">" << XmlEscape(plot.watermark)
      << "</text>\n";
  }
  s << "</svg>\n";
  if (non_finite_coordinates > 0) {
    std::string roofs = "DRAM " + json::FormatNumber(plot.dram_bytes_per_s) +
                        " bytes/s";
    for (const RooflinePlot::Roof& r : plot.roofs) {
      roofs += ", " + r.name + " " + json::FormatNumber(r.peak_flops_per_s) +
               " FLOP/s";
    }
    return InvalidArgument(
        "the roofline plot \"" + plot.title + "\" is not drawn: " +
        std::to_string(non_finite_coordinates) +
        " of its numbers are not finite (roofs: " + roofs +
        "); a roof or point of 0, inf or nan cannot be placed on log axes: "
        "check the device profile's roofs");
  }
  return s.str();
}

std::string SvgOrWarning(const StatusOr<std::string>& svg) {
  if (svg.ok()) return *svg;
  return "<p class=\"warn\">" + XmlEscape(svg.status().message()) + "</p>";
}

StatusOr<std::string> RenderRooflineSvg(const Report& report) {
  return RenderRooflineSvg(report, RooflineSvgText{});
}

StatusOr<std::string> RenderRooflineSvg(const Report& report,
                              const RooflineSvgText& text) {
  const ReportHeader& h = report.header;
  const RoofTable& roofs = h.roofs;

  // Placeable families: FLOPs, bytes and a time.
  std::vector<const GroupRow*> placed;
  int64_t unplaced = 0, unplaced_ns = 0;
  for (const GroupRow& g : report.families) {
    if (g.ai && *g.ai > 0 && g.achieved_flops_per_s && *g.achieved_flops_per_s > 0) {
      placed.push_back(&g);
    } else {
      ++unplaced;
      unplaced_ns += g.total_ns;
    }
  }

  RooflinePlot plot;
  plot.title = "Roofline: " +
               (h.device_name.empty() ? std::string("unknown device") : h.device_name);
  plot.subtitle =
      !text.subtitle.empty()
          ? text.subtitle
          : "roofs: " + (roofs.source.empty() ? std::string("none") : roofs.source) +
                (h.reannotated ? " (re-annotated)" : "") + "; run " +
                std::to_string(h.run.run_id) + ", " +
                std::to_string(report.kernel_count) + " kernels";
  plot.dram_bytes_per_s = roofs.dram_bytes_per_s;
  plot.roofs = ReportRoofs(roofs, placed);
  int64_t above = 0;
  for (const GroupRow* g : placed) {
    RooflinePlot::Point p;
    p.ai = *g->ai;
    p.flops_per_s = *g->achieved_flops_per_s;
    p.radius = 3.0 + 22.0 * std::sqrt(g->time_share);
    p.style.color = PhaseColor(PhaseIndex(g->phase));
    p.title = FamilyTitle(*g);
    if (g->above_roof_count > 0) {
      // Above its roof: a finding, not a measurement; a hollow red
      // diamond, never a point like the others (its phase is in the title).
      ++above;
      p.style.color = kAboveRoofColor;
      p.style.marker = RooflineMarker::kDiamond;
      p.style.filled = false;
      p.title = "MODEL EXCEEDS ROOF: figures suspect\n" + p.title;
    }
    // The family alone: the colour already says the phase.
    p.label = g->key.empty() ? g->name : g->key;
    p.label_rank = static_cast<double>(g->total_ns);
    plot.points.push_back(std::move(p));
  }
  for (const PhaseRow& ph : report.phases) {
    plot.legend_keys.push_back({{PhaseColor(PhaseIndex(ph.phase))}, ph.phase});
  }
  if (above > 0) {
    plot.legend_keys.push_back(
        {{kAboveRoofColor, RooflineMarker::kDiamond, false},
         "model exceeds roof: figures suspect"});
  }
  plot.legend = !text.legend.empty() ? text.legend
                : plot.roofs.empty() && roofs.dram_bytes_per_s <= 0
                    ? "point area ~ GPU time; no roofs known (see --device-profile)"
                    : "point area ~ GPU time of the family; solid roofs: "
                      "precisions in use";
  if (placed.empty()) {
    plot.note = "No family has both FLOPs and bytes: nothing to place on the "
                "roofline (see the table)";
  } else if (unplaced > 0) {
    plot.note = std::to_string(unplaced) +
                " families without FLOPs or bytes are not plotted (" +
                Fixed(report.total_ns ? 100.0 * unplaced_ns / report.total_ns : 0.0, 1) +
                "% of GPU time; see the table)";
  }
  if (report.kernels_above_roof > 0) {
    plot.note += (plot.note.empty() ? "" : "; ") +
                 std::to_string(report.kernels_above_roof) +
                 " kernels computed above their roof (" +
                 Fixed(report.total_ns ? 100.0 * report.ns_above_roof /
                                             report.total_ns
                                       : 0.0,
                       1) +
                 "% of GPU time) are hollow diamonds: the model exceeds the "
                 "roof, their figures are suspect";
  }
  return RenderRooflinePlot(plot);
}

}  // namespace rooftrace
