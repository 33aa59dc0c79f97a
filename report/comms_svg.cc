#include "report/comms_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "report/text_util.h"

namespace rooftrace {
namespace {

constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// Whole decades around [lo, hi].
void Decades(double lo, double hi, int* first, int* last) {
  *first = static_cast<int>(std::floor(std::log10(lo)));
  *last = static_cast<int>(std::ceil(std::log10(hi)));
  if (*last <= *first) *last = *first + 1;
}

}  // namespace

std::string RenderCommsRooflineSvg(const Report& report) {
  struct Point {
    double bytes, bw;
    const CollectiveRow* row;
  };
  std::vector<Point> points;
  for (const CollectiveRow& c : report.collectives) {
    // A point needs both coordinates finite and positive (log axes); a
    // damaged figure is left out rather than drawn at "inf" or "nan".
    if (c.message_bytes && *c.message_bytes > 0 &&
        std::isfinite(*c.message_bytes) && c.busbw && *c.busbw > 0 &&
        std::isfinite(*c.busbw)) {
      points.push_back({*c.message_bytes, *c.busbw, &c});
    }
  }
  if (points.empty()) return "";
  const RoofTable& roofs = report.header.roofs;
  const double link =
      std::isfinite(roofs.link_bytes_per_s) ? roofs.link_bytes_per_s : 0;
  double x_lo = points[0].bytes, x_hi = x_lo, y_lo = points[0].bw, y_hi = y_lo;
  for (const Point& p : points) {
    x_lo = std::min(x_lo, p.bytes);
    x_hi = std::max(x_hi, p.bytes);
    y_lo = std::min(y_lo, p.bw);
    y_hi = std::max(y_hi, p.bw);
  }
  if (link > 0) y_hi = std::max(y_hi, link * 1.5);
  int x0, x1, y0, y1;
  Decades(x_lo, x_hi, &x0, &x1);
  Decades(y_lo, y_hi, &y0, &y1);
  const double w = kCommsSvgWidth - kLeft - kRight;
  const double h = kCommsSvgHeight - kTop - kBottom;
  auto X = [&](double v) { return kLeft + w * (std::log10(v) - x0) / (x1 - x0); };
  auto Y = [&](double v) {
    return kTop + h - h * (std::log10(v) - y0) / (y1 - y0);
  };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kCommsSvgWidth
    << "\" height=\"" << kCommsSvgHeight << "\" viewBox=\"0 0 "
    << kCommsSvgWidth << ' ' << kCommsSvgHeight
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<title>Communication roofline</title>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kLeft << "\" y=\"18\" font-size=\"13\">"
    << XmlEscape("Collectives: bus bandwidth against the link roof") << "</text>\n"
    << "<text x=\"" << kLeft << "\" y=\"32\" fill=\"#555\">"
    << XmlEscape(link > 0 ? "link roof " + SiPrefix(link) + "B/s per direction" +
                                (roofs.link_name.empty()
                                     ? std::string()
                                     : " (" + roofs.link_name + ")")
                          : std::string("no link roof known for this GPU: "
                                        "pass --device-profile with a link"))
    << "</text>\n";
  // Axes with a grid line per decade.
  s << "<g stroke=\"#ddd\">\n";
  for (int k = x0; k <= x1; ++k) {
    const double x = X(std::pow(10.0, k));
    s << "<line x1=\"" << Num(x) << "\" y1=\"" << kTop << "\" x2=\"" << Num(x)
      << "\" y2=\"" << Num(kTop + h) << "\"/>\n";
  }
  for (int k = y0; k <= y1; ++k) {
    const double y = Y(std::pow(10.0, k));
    s << "<line x1=\"" << kLeft << "\" y1=\"" << Num(y) << "\" x2=\""
      << Num(kLeft + w) << "\" y2=\"" << Num(y) << "\"/>\n";
  }
  s << "</g>\n<g fill=\"#333\">\n";
  for (int k = x0; k <= x1; ++k) {
    s << "<text x=\"" << Num(X(std::pow(10.0, k))) << "\" y=\""
      << Num(kTop + h + 14) << "\" text-anchor=\"middle\">"
      << SiPrefix(std::pow(10.0, k)) << "B</text>\n";
  }
  for (int k = y0; k <= y1; ++k) {
    s << "<text x=\"" << Num(kLeft - 6) << "\" y=\""
      << Num(Y(std::pow(10.0, k)) + 4) << "\" text-anchor=\"end\">"
      << SiPrefix(std::pow(10.0, k)) << "B/s</text>\n";
  }
  s << "<text x=\"" << Num(kLeft + w / 2) << "\" y=\""
    << Num(kCommsSvgHeight - 12)
    << "\" text-anchor=\"middle\">message size (bytes per call)</text>\n"
    << "</g>\n";
  if (link > 0) {
    const double y = Y(link);
    s << "<line class=\"link-roof\" x1=\"" << kLeft << "\" y1=\"" << Num(y)
      << "\" x2=\"" << Num(kLeft + w) << "\" y2=\"" << Num(y)
      << "\" stroke=\"#d62728\" stroke-width=\"2\"/>\n"
      << "<text x=\"" << Num(kLeft + w - 4) << "\" y=\"" << Num(y - 5)
      << "\" text-anchor=\"end\" fill=\"#d62728\">link roof</text>\n";
  }
  for (const Point& p : points) {
    std::string title = (p.row->shape.empty() ? std::string("collective")
                                              : p.row->shape) +
                        ": busbw " + Fixed(p.bw * 1e-9, 2) + " GB/s";
    if (p.row->fraction_of_link) {
      title += " = " + Fixed(*p.row->fraction_of_link * 100, 1) +
               "% of link roof";
    }
    title += ", " + std::to_string(p.row->count) + " kernels, " +
             Fixed(p.row->total_ns * 1e-6, 3) + " ms";
    s << "<circle class=\"collective\" cx=\"" << Num(X(p.bytes)) << "\" cy=\""
      << Num(Y(p.bw)) << "\" r=\"5\" fill=\"#1f77b4\"><title>"
      << XmlEscape(title) << "</title></circle>\n";
  }
  s << "</svg>";
  return s.str();
}

}  // namespace rooftrace
