#include "kernels/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "kernels/formulas.h"

namespace rooftrace::kernels {
namespace {

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Html(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string Scaled(double v, const char* unit,
                   const std::vector<std::pair<double, const char*>>& scales) {
  if (v <= 0) return "-";
  for (const auto& [f, prefix] : scales) {
    if (v >= f) return Fmt("%.2f", v / f) + " " + prefix + unit;
  }
  return Fmt("%.3g", v) + " " + unit;
}

std::string Shape(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k);
}

// One plotted series.
struct Series {
  std::string label;
  std::string color;
  std::string marker;  // "circle", "square", "diamond"
  bool filled;
  std::vector<std::pair<double, double>> points;  // (AI, FLOP/s)
  std::vector<std::string> point_labels;          // optional, per point
};

// Log-log axes mapping data to pixels.
struct Axes {
  double x0, x1, y0, y1;  // data range (log10)
  double left = 80, top = 40, width = 720, height = 460;
  double X(double v) const {
    return left + (std::log10(v) - x0) / (x1 - x0) * width;
  }
  double Y(double v) const {
    return top + height - (std::log10(v) - y0) / (y1 - y0) * height;
  }
};

std::string P(double v) { return Fmt("%.1f", v); }

// The SVG shape of one point of a series at (x, y) pixels.
std::string Marker(const Series& s, double x, double y) {
  const std::string fill = s.filled ? s.color : "white";
  std::ostringstream o;
  if (s.marker == "circle") {
    o << "<circle cx=\"" << P(x) << "\" cy=\"" << P(y) << "\" r=\"4.5\" fill=\""
      << fill << "\" stroke=\"" << s.color << "\" stroke-width=\"1.8\"/>";
  } else if (s.marker == "square") {
    o << "<rect x=\"" << P(x - 4) << "\" y=\"" << P(y - 4)
      << "\" width=\"8\" height=\"8\" fill=\"" << fill << "\" stroke=\""
      << s.color << "\" stroke-width=\"1.8\"/>";
  } else {
    o << "<polygon points=\"" << P(x) << "," << P(y - 5) << " " << P(x + 5)
      << "," << P(y) << " " << P(x) << "," << P(y + 5) << " " << P(x - 5)
      << "," << P(y) << "\" fill=\"" << fill << "\" stroke=\"" << s.color
      << "\"/>";
  }
  return o.str();
}

}  // namespace

std::string FormatBytesPerS(double v) {
  return Scaled(v, "B/s", {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}});
}
std::string FormatFlopsPerS(double v) {
  return Scaled(v, "FLOP/s", {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}});
}
std::string FormatSeconds(double s) {
  if (s <= 0) return "-";
  if (s >= 1) return Fmt("%.3f s", s);
  if (s >= 1e-3) return Fmt("%.3f ms", s * 1e3);
  return Fmt("%.1f us", s * 1e6);
}

std::string RenderCalibrationSummary(const CalibrationResult& r,
                                     const DeviceProfile& p) {
  std::ostringstream o;
  if (r.sample) {
    o << "SAMPLE - NOT MEASURED: " << r.sample_note << "\n";
  }
  o << "device: " << p.device.name << " (" << p.device.chip << ", "
    << p.device.sm_count << " SMs)";
  if (!p.datasheet_key.empty()) o << ", datasheet entry " << p.datasheet_key;
  o << "\n";
  const char* measured = r.sample ? "modelled" : "measured";
  o << "DRAM: " << FormatBytesPerS(p.measured_dram_bytes_per_s) << " "
    << measured << " (" << (p.dram_kernel.empty() ? "-" : p.dram_kernel)
    << "), datasheet " << FormatBytesPerS(p.datasheet_dram_bytes_per_s);
  if (p.DramRatio() > 0) o << Fmt(", ratio %.2f", p.DramRatio());
  o << "\n";
  char line[256];
  snprintf(line, sizeof line, "%-18s %16s %16s %6s %10s  %s\n", "precision",
           measured, "datasheet", "ratio", "ridge F/B", "kernel / note");
  o << line;
  for (int i = 1; i < kNumPrecisions; ++i) {
    const auto prec = static_cast<Precision>(i);
    const PrecisionRoof& roof = p.roof(prec);
    if (roof.measured_flops_per_s <= 0 && roof.note.empty()) continue;
    snprintf(line, sizeof line, "%-18s %16s %16s %6s %10s  %s\n",
             std::string(PrecisionName(prec)).c_str(),
             FormatFlopsPerS(roof.measured_flops_per_s).c_str(),
             FormatFlopsPerS(roof.datasheet_flops_per_s).c_str(),
             roof.Ratio() > 0 ? Fmt("%.2f", roof.Ratio()).c_str() : "-",
             p.Ridge(prec) > 0 ? Fmt("%.1f", p.Ridge(prec)).c_str() : "-",
             (roof.kernel + (roof.note.empty() ? "" : "  [" + roof.note + "]"))
                 .c_str());
    o << line;
  }
  for (const OwnKernelRun& k : r.own) {
    o << "own kernel " << k.kernel << " " << Shape(k.shape) << ": "
      << std::string(StepStatusName(k.status));
    if (k.status == StepStatus::kOk) {
      o << ", " << FormatFlopsPerS(k.FlopsPerS()) << ", "
        << (k.matches_cublas ? "matches" : "DOES NOT MATCH") << " cuBLAS"
        << Fmt(" (max rel. error %.2g", k.max_rel_error)
        << Fmt(", tolerance %.2g)", k.tolerance);
    }
    if (!k.note.empty()) o << " - " << k.note;
    o << "\n";
  }
  if (!r.msweep.empty()) {
    const GemmShape& s0 = r.msweep.front().shape;
    const double m_star = GemmRidgeCrossingM(
        s0.n, s0.k, 2.0, p.Ridge(Precision::kFp16Tensor));
    if (m_star > 0) {
      o << "m-sweep: an M x " << s0.n << " x " << s0.k
        << " bf16 GEMM crosses the ridge at M = " << Fmt("%.0f", m_star)
        << " (roofline model)\n";
    }
  }
  for (const CounterValidation& v : p.validation) {
    o << "counter validation " << v.kernel << " " << v.quantity << ": counted "
      << Fmt("%.6g", v.counted) << " vs expected " << Fmt("%.6g", v.expected)
      << Fmt(" (%+.2f%%)", v.ErrorPercent()) << "\n";
  }
  for (const StepNote& n : r.notes) {
    o << std::string(StepStatusName(n.status)) << ": " << n.step << " - "
      << n.message << "\n";
  }
  return o.str();
}

std::string RenderRooflineSvg(const CalibrationResult& r,
                              const DeviceProfile& p) {
  std::vector<Series> series;
  const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                           "#9467bd"};
  int ci = 0;
  for (int64_t batch : {int64_t{16}, int64_t{1024}}) {
    for (bool fused : {false, true}) {
      Series s;
      s.label = std::string(fused ? "fused (cuBLASLt GELU epilogue)"
                                  : "non-fused (GEMM, GELU, GEMM)") +
                ", batch " + std::to_string(batch);
      s.color = kColors[ci++];
      s.marker = batch == 16 ? "circle" : "square";
      s.filled = fused;
      for (const MlpRun& m : r.mlp) {
        if (m.batch != batch || m.fused != fused || m.FlopsPerS() <= 0) continue;
        s.points.emplace_back(m.Intensity(), m.FlopsPerS());
        s.point_labels.push_back("h=" + std::to_string(m.h));
      }
      if (!s.points.empty()) series.push_back(std::move(s));
    }
  }
  {
    Series s;
    s.label = "bf16 GEMM M-sweep, N=K=4096 (seed 004)";
    s.color = kColors[4];
    s.marker = "diamond";
    s.filled = true;
    for (const MSweepRun& m : r.msweep) {
      if (m.FlopsPerS() <= 0) continue;
      s.points.emplace_back(m.Intensity(), m.FlopsPerS());
      s.point_labels.push_back("M=" + std::to_string(m.shape.m));
    }
    if (!s.points.empty()) series.push_back(std::move(s));
  }

  // Roofs to draw: every precision with a peak, the MLP/M-sweep one bold.
  const double bw = p.DramBytesPerS();
  struct Roof {
    Precision prec;
    double peak;
  };
  std::vector<Roof> roofs;
  for (int i = 1; i < kNumPrecisions; ++i) {
    const auto prec = static_cast<Precision>(i);
    if (p.roof(prec).measured_flops_per_s > 0) {
      roofs.push_back({prec, p.roof(prec).measured_flops_per_s});
    }
  }
  // Roofs within 0.5% of each other (fp8 and int8, fp64-tensor and fp32 on
  // some parts) share one line and one label.
  std::vector<std::pair<Roof, std::string>> merged;
  for (const Roof& rf : roofs) {
    bool joined = false;
    for (auto& [m, label] : merged) {
      if (std::fabs(m.peak - rf.peak) <= 0.005 * m.peak) {
        label += ", " + std::string(PrecisionName(rf.prec));
        if (rf.prec == Precision::kFp16Tensor) m.prec = rf.prec;
        joined = true;
        break;
      }
    }
    if (!joined) merged.push_back({rf, std::string(PrecisionName(rf.prec))});
  }
  if (merged.empty() && p.PeakFlopsPerS(Precision::kFp16Tensor) > 0) {
    merged.push_back({{Precision::kFp16Tensor,
                       p.PeakFlopsPerS(Precision::kFp16Tensor)},
                      "fp16/bf16-tensor (datasheet)"});
  }

  // Data range, padded to whole decades.
  double xmin = 1, xmax = 1e3, ymin = 1e12, ymax = 1e15;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  }
  for (const auto& [rf, label] : merged) {
    ymax = std::max(ymax, rf.peak);
    if (bw > 0) xmax = std::max(xmax, 4 * rf.peak / bw);
  }
  Axes ax;
  ax.x0 = std::floor(std::log10(xmin));
  ax.x1 = std::ceil(std::log10(xmax));
  ax.y0 = std::floor(std::log10(ymin));
  ax.y1 = std::ceil(std::log10(ymax * 1.5));

  std::ostringstream o;
  const double W = ax.left + ax.width + 20,
               Hh = ax.top + ax.height + 60 + 16.0 * series.size();
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W
    << "\" height=\"" << Hh << "\" viewBox=\"0 0 " << W << " " << Hh
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect x=\"" << ax.left << "\" y=\"" << ax.top << "\" width=\""
    << ax.width << "\" height=\"" << ax.height
    << "\" fill=\"white\" stroke=\"#444\"/>\n";
  // Decade grid and labels.
  for (int e = static_cast<int>(ax.x0); e <= static_cast<int>(ax.x1); ++e) {
    const double x = ax.X(std::pow(10.0, e));
    o << "<line x1=\"" << P(x) << "\" y1=\"" << ax.top << "\" x2=\"" << P(x)
      << "\" y2=\"" << ax.top + ax.height
      << "\" stroke=\"#ddd\" stroke-dasharray=\"3,3\"/>\n";
    o << "<text x=\"" << P(x) << "\" y=\"" << ax.top + ax.height + 16
      << "\" text-anchor=\"middle\">1e" << e << "</text>\n";
  }
  for (int e = static_cast<int>(ax.y0); e <= static_cast<int>(ax.y1); ++e) {
    const double y = ax.Y(std::pow(10.0, e));
    o << "<line x1=\"" << ax.left << "\" y1=\"" << P(y) << "\" x2=\""
      << ax.left + ax.width << "\" y2=\"" << P(y)
      << "\" stroke=\"#ddd\" stroke-dasharray=\"3,3\"/>\n";
    o << "<text x=\"" << ax.left - 6 << "\" y=\"" << P(y + 4)
      << "\" text-anchor=\"end\">1e" << e << "</text>\n";
  }
  o << "<text x=\"" << ax.left + ax.width / 2 << "\" y=\""
    << ax.top + ax.height + 36
    << "\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n";
  o << "<text transform=\"translate(18," << ax.top + ax.height / 2
    << ") rotate(-90)\" text-anchor=\"middle\">performance (FLOP/s)</text>\n";
  std::string title = "Roofline of " + p.device.name;
  if (r.sample) title = "SAMPLE - NOT MEASURED - " + title;
  o << "<text x=\"" << ax.left << "\" y=\"24\" font-size=\"15\" "
       "font-weight=\"bold\">"
    << Html(title) << "</text>\n";

  // Roofs: the DRAM diagonal up to each compute roof, then flat.
  const double xl = std::pow(10.0, ax.x0), xr = std::pow(10.0, ax.x1);
  const double ybot = std::pow(10.0, ax.y0);
  for (const auto& [rf, label] : merged) {
    const bool main = rf.prec == Precision::kFp16Tensor;
    const double ridge = bw > 0 ? rf.peak / bw : xl;
    const double xs = bw > 0 ? std::max(xl, ybot / bw) : xl;
    o << "<polyline fill=\"none\" stroke=\"" << (main ? "#000" : "#999")
      << "\" stroke-width=\"" << (main ? 2.5 : 1.2) << "\""
      << (main ? "" : " stroke-dasharray=\"6,3\"") << " points=\"";
    if (bw > 0 && ridge > xs) {
      o << P(ax.X(xs)) << "," << P(ax.Y(xs * bw)) << " ";
    }
    o << P(ax.X(std::max(ridge, xl))) << "," << P(ax.Y(rf.peak)) << " "
      << P(ax.X(xr)) << "," << P(ax.Y(rf.peak)) << "\"/>\n";
    o << "<text x=\"" << P(ax.X(xr) - 4) << "\" y=\"" << P(ax.Y(rf.peak) - 4)
      << "\" text-anchor=\"end\" fill=\"" << (main ? "#000" : "#777") << "\">"
      << Html(label) << " " << FormatFlopsPerS(rf.peak) << (main ? Fmt(", ridge %.0f F/B", ridge) : "")
      << "</text>\n";
  }
  if (bw > 0) {
    const double xs = std::max(xl, ybot / bw) * 3;
    o << "<text x=\"" << P(ax.X(xs) - 6) << "\" y=\"" << P(ax.Y(xs * bw) - 8)
      << "\" text-anchor=\"end\" fill=\"#000\">DRAM " << FormatBytesPerS(bw)
      << "</text>\n";
  }

  // Points.
  for (const Series& s : series) {
    for (size_t i = 0; i < s.points.size(); ++i) {
      const double x = ax.X(s.points[i].first), y = ax.Y(s.points[i].second);
      o << "<g><title>" << Html(s.label) << " "
        << Html(i < s.point_labels.size() ? s.point_labels[i] : "") << ": "
        << Fmt("%.3g FLOP/B, ", s.points[i].first)
        << FormatFlopsPerS(s.points[i].second) << "</title>"
        << Marker(s, x, y);
      o << "</g>\n";
    }
  }
  // Legend.
  double ly = ax.top + ax.height + 58;
  for (const Series& s : series) {
    o << Marker(s, ax.left + 14, ly - 4) << "<text x=\"" << ax.left + 26
      << "\" y=\"" << P(ly) << "\">" << Html(s.label) << "</text>\n";
    ly += 16;
  }
  if (r.sample) {
    o << "<text x=\"" << ax.left + ax.width / 2 << "\" y=\""
      << ax.top + ax.height / 2
      << "\" text-anchor=\"middle\" font-size=\"48\" fill=\"#d00\" "
         "fill-opacity=\"0.18\" transform=\"rotate(-20 "
      << ax.left + ax.width / 2 << " " << ax.top + ax.height / 2
      << ")\">SAMPLE - NOT MEASURED</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

std::string RenderCalibrationHtml(const CalibrationResult& r,
                                  const DeviceProfile& p) {
  std::ostringstream o;
  const std::string title =
      std::string(r.sample ? "SAMPLE (not measured): " : "") +
      "rooftrace calibration of " + p.device.name;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
    << Html(title) << "</title>\n<style>body{font-family:sans-serif;margin:2em;"
    << "max-width:1100px}table{border-collapse:collapse;margin:1em 0}"
    << "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    << "th{background:#f4f4f4}td.l,th.l{text-align:left}"
    << ".sample{background:#fdd;border:2px solid #d00;padding:1em;"
    << "font-weight:bold}.bad{color:#c00}</style></head><body>\n";
  o << "<h1>" << Html(title) << "</h1>\n";
  if (r.sample) {
    o << "<p class=\"sample\">SAMPLE &mdash; NOT MEASURED. " << Html(r.sample_note)
      << ". Run <code>rooftrace calibrate --html report.html</code> on the GPU "
         "for real figures.</p>\n";
  }
  o << "<p>Device: <b>" << Html(p.device.name) << "</b> (" << Html(p.device.chip)
    << ", " << p.device.sm_count << " SMs, driver "
    << Html(p.device.driver_version) << ", runtime "
    << Html(p.device.runtime_version) << ", UUID " << Html(p.device.uuid)
    << "). rooftrace " << Html(r.rooftrace_version) << ", "
    << Html(r.created_utc) << (r.quick ? ", --quick" : "")
    << ". Command: <code>" << Html(r.command) << "</code></p>\n";

  o << "<h2>Roofline</h2>\n" << RenderRooflineSvg(r, p);
  o << "<p>Seed 000 predicts the non-fused MLP below the fused one at batch "
       "16, where both are memory bound and the fused form moves fewer bytes "
       "per FLOP. The fused points use cuBLASLt's GELU epilogue, which still "
       "writes and reads the GELU output once (bytes 2BI+2IH+2BH elements, "
       "not seed 000's ideal 2BI+2IH).</p>\n";

  o << "<h2>Roofs</h2>\n<table><tr><th class=l>roof</th><th>measured</th>"
       "<th>datasheet</th><th>ratio</th><th>ridge (FLOP/B)</th>"
       "<th class=l>kernel</th><th class=l>note</th></tr>\n";
  o << "<tr><td class=l>DRAM</td><td>"
    << FormatBytesPerS(p.measured_dram_bytes_per_s) << "</td><td>"
    << FormatBytesPerS(p.datasheet_dram_bytes_per_s) << "</td><td>"
    << (p.DramRatio() > 0 ? Fmt("%.2f", p.DramRatio()) : "-")
    << "</td><td></td><td class=l>" << Html(p.dram_kernel)
    << "</td><td class=l>read + write bytes</td></tr>\n";
  for (int i = 1; i < kNumPrecisions; ++i) {
    const auto prec = static_cast<Precision>(i);
    const PrecisionRoof& roof = p.roof(prec);
    if (roof.measured_flops_per_s <= 0 && roof.datasheet_flops_per_s <= 0 &&
        roof.note.empty()) {
      continue;
    }
    o << "<tr><td class=l>" << Html(std::string(PrecisionName(prec)))
      << "</td><td>" << FormatFlopsPerS(roof.measured_flops_per_s)
      << "</td><td>" << FormatFlopsPerS(roof.datasheet_flops_per_s)
      << "</td><td>" << (roof.Ratio() > 0 ? Fmt("%.2f", roof.Ratio()) : "-")
      << "</td><td>" << (p.Ridge(prec) > 0 ? Fmt("%.1f", p.Ridge(prec)) : "-")
      << "</td><td class=l>" << Html(roof.kernel) << "</td><td class=l>"
      << Html(roof.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>STREAM</h2>\n<table><tr><th class=l>kernel</th><th>elements</th>"
       "<th>bytes moved</th><th>best</th><th>median</th><th>bandwidth</th>"
       "</tr>\n";
  for (const StreamRun& s : r.stream) {
    o << "<tr><td class=l>" << Html(s.kernel) << "</td><td>" << s.elements
      << "</td><td>" << Fmt("%.4g", s.Bytes()) << "</td><td>"
      << FormatSeconds(s.best_s) << "</td><td>" << FormatSeconds(s.median_s)
      << "</td><td>" << FormatBytesPerS(s.BytesPerS()) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>GEMM peaks (cuBLAS / cuBLASLt)</h2>\n<table><tr><th class=l>type"
       "</th><th class=l>api</th><th>shape</th><th>status</th><th>best</th>"
       "<th>FLOP/s</th><th class=l>note</th></tr>\n";
  for (const GemmRun& g : r.gemm) {
    o << "<tr><td class=l>" << Html(g.type) << "</td><td class=l>"
      << Html(g.api) << "</td><td>" << Shape(g.shape) << "</td><td>"
      << StepStatusName(g.status) << "</td><td>" << FormatSeconds(g.best_s)
      << "</td><td>" << FormatFlopsPerS(g.FlopsPerS()) << "</td><td class=l>"
      << Html(g.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>Own reference kernels vs cuBLAS</h2>\n<table><tr><th class=l>"
       "kernel</th><th>shape</th><th>status</th><th>own</th><th>cuBLAS</th>"
       "<th>own FLOP/s</th><th>max rel. error</th><th>tolerance</th>"
       "<th>match</th><th class=l>note</th></tr>\n";
  for (const OwnKernelRun& k : r.own) {
    o << "<tr><td class=l>" << Html(k.kernel) << "</td><td>" << Shape(k.shape)
      << "</td><td>" << StepStatusName(k.status) << "</td><td>"
      << FormatSeconds(k.best_s) << "</td><td>"
      << FormatSeconds(k.cublas_best_s) << "</td><td>"
      << FormatFlopsPerS(k.FlopsPerS()) << "</td><td>"
      << Fmt("%.2g", k.max_rel_error) << "</td><td>"
      << Fmt("%.2g", k.tolerance) << "</td><td"
      << (k.matches_cublas ? ">yes" : " class=bad>NO") << "</td><td class=l>"
      << Html(k.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>Seed 000: MLP gelu(x@M)@N, fp16, I = 1024</h2>\n<table><tr>"
       "<th>batch</th><th>h</th><th>H</th><th class=l>form</th><th>FLOP</th>"
       "<th>bytes</th><th>intensity</th><th>best</th><th>FLOP/s</th>"
       "<th>status</th></tr>\n";
  for (const MlpRun& m : r.mlp) {
    o << "<tr><td>" << m.batch << "</td><td>" << m.h << "</td><td>"
      << m.hidden_dim() << "</td><td class=l>"
      << (m.fused ? "fused" : "non-fused") << "</td><td>"
      << Fmt("%.4g", m.Flops()) << "</td><td>" << Fmt("%.4g", m.Bytes())
      << "</td><td>" << Fmt("%.1f", m.Intensity()) << "</td><td>"
      << FormatSeconds(m.best_s) << "</td><td>"
      << FormatFlopsPerS(m.FlopsPerS()) << "</td><td>"
      << StepStatusName(m.status) << (m.note.empty() ? "" : ": ")
      << Html(m.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>Seed 004: bf16 GEMM M-sweep</h2>\n";
  if (!r.msweep.empty()) {
    const GemmShape& s0 = r.msweep.front().shape;
    const double m_star = GemmRidgeCrossingM(
        s0.n, s0.k, 2.0, p.Ridge(Precision::kFp16Tensor));
    o << "<p>By the roofline model (minimum bytes), an M x " << s0.n << " x "
      << s0.k << " bf16 GEMM reaches the fp16/bf16-tensor ridge of "
      << Fmt("%.0f", p.Ridge(Precision::kFp16Tensor)) << " FLOP/byte at M = "
      << (m_star > 0 ? Fmt("%.0f", m_star) : std::string("never"))
      << ": smaller M (decode: M = batch tokens) is memory bound, larger M "
         "(prefill: M = batch x prompt) compute bound.</p>\n";
  }
  o << "<table><tr><th>M</th><th>N</th>"
       "<th>K</th><th>intensity</th><th>best</th><th>FLOP/s</th><th>bound "
       "(by ridge)</th><th>status</th></tr>\n";
  const double ridge = p.Ridge(Precision::kFp16Tensor);
  for (const MSweepRun& m : r.msweep) {
    o << "<tr><td>" << m.shape.m << "</td><td>" << m.shape.n << "</td><td>"
      << m.shape.k << "</td><td>" << Fmt("%.1f", m.Intensity()) << "</td><td>"
      << FormatSeconds(m.best_s) << "</td><td>"
      << FormatFlopsPerS(m.FlopsPerS()) << "</td><td>"
      << (ridge <= 0 ? "-" : m.Intensity() < ridge ? "memory" : "compute")
      << "</td><td>" << StepStatusName(m.status)
      << (m.note.empty() ? "" : ": ") << Html(m.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>Counter validation</h2>\n";
  if (p.validation.empty()) {
    o << "<p>Not run (needs counters mode).</p>\n";
  } else {
    o << "<table><tr><th class=l>kernel</th><th class=l>quantity</th>"
         "<th>expected</th><th>counted</th><th>error</th></tr>\n";
    for (const CounterValidation& v : p.validation) {
      o << "<tr><td class=l>" << Html(v.kernel) << "</td><td class=l>"
        << Html(v.quantity) << "</td><td>" << Fmt("%.6g", v.expected)
        << "</td><td>" << Fmt("%.6g", v.counted) << "</td><td>"
        << Fmt("%+.2f%%", v.ErrorPercent()) << "</td></tr>\n";
    }
    o << "</table>\n";
  }
  if (!r.notes.empty()) {
    o << "<h2>Skipped and failed steps</h2>\n<ul>\n";
    for (const StepNote& n : r.notes) {
      o << "<li>" << StepStatusName(n.status) << ": " << Html(n.step)
        << " &mdash; " << Html(n.message) << "</li>\n";
    }
    o << "</ul>\n";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace rooftrace::kernels
