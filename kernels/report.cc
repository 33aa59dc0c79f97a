#include "kernels/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "kernels/formulas.h"
#include "report/text_util.h"

namespace rooftrace::kernels {
namespace {

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, fmt, v);
  return buf;
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

RooflinePlot CalibrationRooflinePlot(const CalibrationResult& r,
                                     const DeviceProfile& p) {
  RooflinePlot plot;
  plot.title = "Roofline of " + p.device.name;
  if (r.sample) {
    plot.title = "SAMPLE - NOT MEASURED - " + plot.title;
    plot.watermark = "SAMPLE - NOT MEASURED";
  }
  plot.subtitle = std::string(r.sample ? "roofs and points modelled"
                                       : "roofs and points measured") +
                  " by rooftrace calibrate: seed 000's MLP, seed 004's M-sweep";

  // One series per MLP batch and form, one for the M-sweep.
  const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                           "#9467bd"};
  auto add_point = [&](const RooflineStyle& style, const std::string& series,
                       const std::string& which, double ai, double flops) {
    RooflinePlot::Point pt;
    pt.ai = ai;
    pt.flops_per_s = flops;
    pt.style = style;
    pt.title = series + " " + which + ": " + Fmt("%.3g FLOP/B, ", ai) +
               FormatFlopsPerS(flops);
    plot.points.push_back(std::move(pt));
  };
  int ci = 0;
  for (int64_t batch : {int64_t{16}, int64_t{1024}}) {
    for (bool fused : {false, true}) {
      const RooflineStyle style{kColors[ci++],
                                batch == 16 ? RooflineMarker::kCircle
                                            : RooflineMarker::kSquare,
                                fused};
      const std::string series =
          std::string(fused ? "fused (cuBLASLt GELU epilogue)"
                            : "non-fused (GEMM, GELU, GEMM)") +
          ", batch " + std::to_string(batch);
      const size_t before = plot.points.size();
      for (const MlpRun& m : r.mlp) {
        if (m.batch != batch || m.fused != fused || m.FlopsPerS() <= 0) continue;
        add_point(style, series, "h=" + std::to_string(m.h), m.Intensity(),
                  m.FlopsPerS());
      }
      if (plot.points.size() > before) plot.legend_keys.push_back({style, series});
    }
  }
  const RooflineStyle sweep{kColors[4], RooflineMarker::kDiamond, true};
  const std::string sweep_series = "bf16 GEMM M-sweep, N=K=4096 (seed 004)";
  const size_t before = plot.points.size();
  for (const MSweepRun& m : r.msweep) {
    if (m.FlopsPerS() <= 0) continue;
    add_point(sweep, sweep_series, "M=" + std::to_string(m.shape.m),
              m.Intensity(), m.FlopsPerS());
  }
  if (plot.points.size() > before) plot.legend_keys.push_back({sweep, sweep_series});

  // Every measured roof; the MLP/M-sweep one solid. Roofs within 0.5% of
  // each other (fp8 and int8, fp64-tensor and fp32 on some parts) share one
  // line and one label.
  plot.dram_bytes_per_s = p.DramBytesPerS();
  plot.merge_within = 0.005;
  for (int i = 1; i < kNumPrecisions; ++i) {
    const auto prec = static_cast<Precision>(i);
    if (p.roof(prec).measured_flops_per_s > 0) {
      plot.roofs.push_back({std::string(PrecisionName(prec)),
                            p.roof(prec).measured_flops_per_s,
                            prec == Precision::kFp16Tensor});
    }
  }
  if (plot.roofs.empty() && p.PeakFlopsPerS(Precision::kFp16Tensor) > 0) {
    plot.roofs.push_back({"fp16/bf16-tensor (datasheet)",
                          p.PeakFlopsPerS(Precision::kFp16Tensor), true});
  }
  plot.legend = "solid roof: fp16/bf16-tensor, the points' precision";
  if (plot.points.empty()) plot.note = "No point to plot (see the steps below)";
  return plot;
}

std::string RenderCalibrationHtml(const CalibrationResult& r,
                                  const DeviceProfile& p) {
  std::ostringstream o;
  const std::string title =
      std::string(r.sample ? "SAMPLE (not measured): " : "") +
      "rooftrace calibration of " + p.device.name;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
    << XmlEscape(title) << "</title>\n<style>body{font-family:sans-serif;margin:2em;"
    << "max-width:1100px}table{border-collapse:collapse;margin:1em 0}"
    << "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    << "th{background:#f4f4f4}td.l,th.l{text-align:left}"
    << ".sample{background:#fdd;border:2px solid #d00;padding:1em;"
    << "font-weight:bold}.bad{color:#c00}</style></head><body>\n";
  o << "<h1>" << XmlEscape(title) << "</h1>\n";
  if (r.sample) {
    o << "<p class=\"sample\">SAMPLE &mdash; NOT MEASURED. " << XmlEscape(r.sample_note)
      << ". Run <code>rooftrace calibrate --html report.html</code> on the GPU "
         "for real figures.</p>\n";
  }
  o << "<p>Device: <b>" << XmlEscape(p.device.name) << "</b> (" << XmlEscape(p.device.chip)
    << ", " << p.device.sm_count << " SMs, driver "
    << XmlEscape(p.device.driver_version) << ", runtime "
    << XmlEscape(p.device.runtime_version) << ", UUID " << XmlEscape(p.device.uuid)
    << "). rooftrace " << XmlEscape(r.rooftrace_version) << ", "
    << XmlEscape(r.created_utc) << (r.quick ? ", --quick" : "")
    << ". Command: <code>" << XmlEscape(r.command) << "</code></p>\n";

  o << "<h2>Roofline</h2>\n"
    << SvgOrWarning(RenderRooflinePlot(CalibrationRooflinePlot(r, p)));
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
    << "</td><td></td><td class=l>" << XmlEscape(p.dram_kernel)
    << "</td><td class=l>read + write bytes</td></tr>\n";
  for (int i = 1; i < kNumPrecisions; ++i) {
    const auto prec = static_cast<Precision>(i);
    const PrecisionRoof& roof = p.roof(prec);
    if (roof.measured_flops_per_s <= 0 && roof.datasheet_flops_per_s <= 0 &&
        roof.note.empty()) {
      continue;
    }
    o << "<tr><td class=l>" << XmlEscape(std::string(PrecisionName(prec)))
      << "</td><td>" << FormatFlopsPerS(roof.measured_flops_per_s)
      << "</td><td>" << FormatFlopsPerS(roof.datasheet_flops_per_s)
      << "</td><td>" << (roof.Ratio() > 0 ? Fmt("%.2f", roof.Ratio()) : "-")
      << "</td><td>" << (p.Ridge(prec) > 0 ? Fmt("%.1f", p.Ridge(prec)) : "-")
      << "</td><td class=l>" << XmlEscape(roof.kernel) << "</td><td class=l>"
      << XmlEscape(roof.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>STREAM</h2>\n<table><tr><th class=l>kernel</th><th>elements</th>"
       "<th>bytes moved</th><th>best</th><th>median</th><th>bandwidth</th>"
       "</tr>\n";
  for (const StreamRun& s : r.stream) {
    o << "<tr><td class=l>" << XmlEscape(s.kernel) << "</td><td>" << s.elements
      << "</td><td>" << Fmt("%.4g", s.Bytes()) << "</td><td>"
      << FormatSeconds(s.best_s) << "</td><td>" << FormatSeconds(s.median_s)
      << "</td><td>" << FormatBytesPerS(s.BytesPerS()) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>GEMM peaks (cuBLAS / cuBLASLt)</h2>\n<table><tr><th class=l>type"
       "</th><th class=l>api</th><th>shape</th><th>status</th><th>best</th>"
       "<th>FLOP/s</th><th class=l>note</th></tr>\n";
  for (const GemmRun& g : r.gemm) {
    o << "<tr><td class=l>" << XmlEscape(g.type) << "</td><td class=l>"
      << XmlEscape(g.api) << "</td><td>" << Shape(g.shape) << "</td><td>"
      << StepStatusName(g.status) << "</td><td>" << FormatSeconds(g.best_s)
      << "</td><td>" << FormatFlopsPerS(g.FlopsPerS()) << "</td><td class=l>"
      << XmlEscape(g.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>Own reference kernels vs cuBLAS</h2>\n<table><tr><th class=l>"
       "kernel</th><th>shape</th><th>status</th><th>own</th><th>cuBLAS</th>"
       "<th>own FLOP/s</th><th>max rel. error</th><th>tolerance</th>"
       "<th>match</th><th class=l>note</th></tr>\n";
  for (const OwnKernelRun& k : r.own) {
    o << "<tr><td class=l>" << XmlEscape(k.kernel) << "</td><td>" << Shape(k.shape)
      << "</td><td>" << StepStatusName(k.status) << "</td><td>"
      << FormatSeconds(k.best_s) << "</td><td>"
      << FormatSeconds(k.cublas_best_s) << "</td><td>"
      << FormatFlopsPerS(k.FlopsPerS()) << "</td><td>"
      << Fmt("%.2g", k.max_rel_error) << "</td><td>"
      << Fmt("%.2g", k.tolerance) << "</td><td"
      << (k.matches_cublas ? ">yes" : " class=bad>NO") << "</td><td class=l>"
      << XmlEscape(k.note) << "</td></tr>\n";
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
      << XmlEscape(m.note) << "</td></tr>\n";
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
      << (m.note.empty() ? "" : ": ") << XmlEscape(m.note) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2>Counter validation</h2>\n";
  if (p.validation.empty()) {
    o << "<p>Not run (needs counters mode).</p>\n";
  } else {
    o << "<table><tr><th class=l>kernel</th><th class=l>quantity</th>"
         "<th>expected</th><th>counted</th><th>error</th></tr>\n";
    for (const CounterValidation& v : p.validation) {
      o << "<tr><td class=l>" << XmlEscape(v.kernel) << "</td><td class=l>"
        << XmlEscape(v.quantity) << "</td><td>" << Fmt("%.6g", v.expected)
        << "</td><td>" << Fmt("%.6g", v.counted) << "</td><td>"
        << Fmt("%+.2f%%", v.ErrorPercent()) << "</td></tr>\n";
    }
    o << "</table>\n";
  }
  if (!r.notes.empty()) {
    o << "<h2>Skipped and failed steps</h2>\n<ul>\n";
    for (const StepNote& n : r.notes) {
      o << "<li>" << StepStatusName(n.status) << ": " << XmlEscape(n.step)
        << " &mdash; " << XmlEscape(n.message) << "</li>\n";
    }
    o << "</ul>\n";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace rooftrace::kernels
