#include "analyzer/predict_format.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "report/report.h"
#include "report/roofline_svg.h"
#include "report/text_util.h"
#include "model/datasheet.h"

namespace rooftrace::analyzer {
namespace {

std::string Us(double seconds) { return Fixed(seconds * 1e6, 2); }
std::string Ms(double seconds) { return Fixed(seconds * 1e3, 3); }
std::string Mb(double bytes) { return Fixed(bytes * 1e-6, 3); }

std::string Int(int64_t v) { return std::to_string(v); }

std::string Dims(const OpCost& o, int64_t v) { return o.m > 0 ? Int(v) : "-"; }

const PhaseTotals* PhaseOf(const Prediction& p, const OpCost& o) {
  return p.Phase(o.phase);
}

// Share of its phase's step that one op's instances take (roofline time).
double StepShare(const Prediction& p, const OpCost& o) {
  const PhaseTotals* t = PhaseOf(p, o);
  if (t == nullptr || t->roofline_s <= 0) return 0;
  return o.count * o.roofline_s() / t->roofline_s;
}

std::string RoofLine(const Prediction& p) {
  const PredictDevice& d = p.device;
  std::string out =
      d.roof_source + ": DRAM " + SiPrefix(d.dram_bytes_per_s) + "B/s";
  for (int i = kNumPrecisions - 1; i > 0; --i) {
    const double peak = d.peak_flops_per_s[i];
    if (peak <= 0) continue;
    out += "; " + std::string(PrecisionKey(static_cast<Precision>(i))) + " " +
           SiPrefix(peak) + "FLOP/s (ridge " +
           Fixed(RidgePoint(peak, d.dram_bytes_per_s), 1) + ")";
  }
  return out;
}

std::string LinkLine(const Prediction& p) {
  const PredictDevice& d = p.device;
  if (d.link_bytes_per_s <= 0) return "unknown (pass --link-bandwidth)";
  return SiPrefix(d.link_bytes_per_s) + "B/s per GPU, one direction (" +
         d.link_source + ")" + (p.options.tp > 1 ? "" : "; unused at --tp 1");
}

std::string ModelLine(const ModelConfig& m) {
  std::string out = m.model_type + ", " + Int(m.num_layers) +
                    " layers, hidden " + Int(m.hidden_size) + ", " +
                    Int(m.num_heads) + " heads (" + Int(m.num_kv_heads) +
                    " KV, head_dim " + Int(m.head_dim) + "), MLP " +
                    Int(m.intermediate_size) + (m.gated_mlp ? " gated" : "");
  if (m.moe()) {
    out += " x " + Int(m.num_experts) + " experts (top " +
           Int(m.experts_per_token) + ")";
  }
  out += ", vocab " + Int(m.vocab_size) +
         (m.tie_word_embeddings ? " (tied embeddings)" : "");
  if (m.sliding_window > 0) {
    out += ", sliding window " + Int(m.sliding_window);
    if (m.MixedAttention()) {
      out += " on " + Int(m.WindowedLayerCount()) + " of " +
             Int(m.num_layers) + " layers";
    }
  }
  char buf[48];
  std::snprintf(buf, sizeof(buf), "; %.2f B parameters",
                static_cast<double>(m.ParameterCount()) * 1e-9);
  return out + buf;
}

std::string WorkloadLine(const Prediction& p) {
  const PredictOptions& o = p.options;
  const std::string generate =
      p.model.encoder ? " (one forward pass)"
                      : ", generate " + Int(o.generate);
  return "batch " + Int(o.batch) + ", prompt " + Int(o.prompt) + generate +
         ", tp " + Int(o.tp) + "; weights " +
         std::string(DtypeName(o.weights)) + ", activations " +
         std::string(DtypeName(o.activations)) + ", KV cache " +
         std::string(DtypeName(o.kv_cache)) + "; attention " +
         std::string(AttentionImplName(o.attention)) + ", MLP fusion " +
         std::string(MlpFusionName(o.mlp_fusion));
}

std::string ComputeBoundLine(const Prediction& p) {
  auto from = [](const std::optional<int64_t>& b) {
    return b ? "from batch " + Int(*b)
             : std::string("never below batch 16777216");
  };
  std::string out = "GEMMs " + from(p.decode_gemm_compute_bound_batch) +
                    ", whole step " + from(p.decode_step_compute_bound_batch);
  if (!p.decode_step_compute_bound_batch) {
    out +=
        " (attention reads each sequence's KV cache at an intensity the "
        "batch does not raise)";
  }
  return out;
}

// (label, value) rows of the header, shared by table and HTML.
std::vector<std::pair<std::string, std::string>> HeaderItems(
    const Prediction& p) {
  std::vector<std::pair<std::string, std::string>> items = {
      {"model",
       p.model.name + " (" + p.model.source + "): " + ModelLine(p.model)},
      {"device", p.device.name},
      {"roofs", RoofLine(p)},
      {"link", LinkLine(p)},
      {"workload", WorkloadLine(p)},
      {"GEMM roof", std::string(PrecisionName(p.compute)) + " " +
                        SiPrefix(p.compute_peak_flops_per_s) +
                        "FLOP/s, ridge " +
                        Fixed(RidgePoint(p.compute_peak_flops_per_s,
                                         p.device.dram_bytes_per_s),
                              1) +
                        " FLOP/byte"},
      {"per GPU",
       "weights " + Fixed(p.weight_bytes_per_gpu * 1e-9, 2) + " GB" +
           (p.model.encoder
                ? std::string(", no KV cache (an encoder)")
                : ", KV cache " +
                      Fixed(p.kv_bytes_per_token_per_gpu * 1e-6, 4) +
                      " MB per token")},
      {"bytes",
       "minimum traffic, each operand moved once: intensities are "
       "upper bounds, times lower bounds (docs/predict.md)"},
  };
  return items;
}

std::vector<std::pair<std::string, std::string>> TotalItems(
    const Prediction& p) {
  std::vector<std::pair<std::string, std::string>> items;
  if (p.model.encoder) {
    items.push_back({"forward step", ">= " + Ms(p.ttft_lower_s) + " ms (<= " +
                                         Ms(p.ttft_upper_s) +
                                         " ms with nothing overlapped)"});
    items.push_back({"decode", "- (an encoder: one forward pass, no decode)"});
    return items;
  }
  items.push_back({"time to first token", ">= " + Ms(p.ttft_lower_s) +
                                              " ms (<= " + Ms(p.ttft_upper_s) +
                                              " ms with nothing overlapped)"});
  if (p.tpot_lower_s) {
    const int64_t P = p.options.prompt, G = p.options.generate;
    items.push_back(
        {"time per output token",
         ">= " + Ms(*p.tpot_lower_s) + " ms (<= " + Ms(*p.tpot_upper_s) +
             " ms), mean of " + Int(G - 1) + " decode steps at KV length " +
             Int(P + 1) + (G > 2 ? ".." + Int(P + G - 1) : std::string())});
    items.push_back(
        {"decode tokens/s", "<= " + Fixed(*p.decode_tokens_per_s_upper, 1) +
                                " (batch / time per output token)"});
  } else {
    items.push_back({"time per output token",
                     "- (--generate 1: the prefill makes the only token)"});
  }
  items.push_back({"end to end", ">= " + Ms(p.end_to_end_lower_s) + " ms"});
  items.push_back({"decode compute-bound", ComputeBoundLine(p)});
  return items;
}

// One cell row of the op table.
std::vector<std::string> OpCells(const Prediction& p, const OpCost& o) {
  return {o.phase,
          o.op,
          Int(o.count),
          Dims(o, o.m),
          Dims(o, o.n),
          Dims(o, o.k),
          Dims(o, o.batch),
          Fixed(o.flops * 1e-9, 3),
          Mb(o.weight_bytes),
          Mb(o.kv_bytes),
          Mb(o.act_bytes),
          Fixed(o.intensity(), 1),
          std::string(o.bound()),
          Us(o.t_math_s),
          Us(o.t_mem_s),
          Us(o.t_comm_s),
          Us(o.roofline_s()),
          Us(o.sum_s()),
          Fixed(StepShare(p, o) * 100, 1)};
}

const std::vector<std::string>& OpTitles() {
  static const std::vector<std::string> kTitles = {
      "phase",  "op",      "count",   "M",      "N",     "K",     "batch",
      "GFLOP",  "MB wts",  "MB kv",   "MB act", "AI",    "bound", "math us",
      "mem us", "comm us", "roof us", "sum us", "step %"};
  return kTitles;
}

std::vector<std::string> PhaseCells(const PhaseTotals& t) {
  return {t.phase,
          Int(t.tokens),
          Int(t.ctx),
          Fixed(t.flops * 1e-9, 2),
          Fixed(t.bytes * 1e-9, 3),
          Fixed(t.intensity(), 1),
          Ms(t.t_math_s),
          Ms(t.t_mem_s),
          Ms(t.t_comm_s),
          Ms(t.roofline_s),
          Ms(t.sum_s),
          Mb(t.attention_flash_bytes) + " / " + Mb(t.attention_unfused_bytes),
          Mb(t.mlp_intermediate_bytes[0]) + " / " +
              Mb(t.mlp_intermediate_bytes[1]) + " / " +
              Mb(t.mlp_intermediate_bytes[2])};
}

const std::vector<std::string>& PhaseTitles() {
  static const std::vector<std::string> kTitles = {
      "phase",
      "tokens",
      "ctx",
      "GFLOP",
      "GB",
      "AI",
      "math ms",
      "mem ms",
      "comm ms",
      "roof ms",
      "sum ms",
      "attention MB flash / unfused",
      "MLP intermediates MB unfused / epilogue / full"};
  return kTitles;
}

// Columns aligned; the first two left, the others right.
void WriteAligned(const std::vector<std::string>& titles,
                  const std::vector<std::vector<std::string>>& rows,
                  size_t left_columns, std::ostream& out) {
  std::vector<size_t> w(titles.size());
  for (size_t c = 0; c < titles.size(); ++c) w[c] = titles[c].size();
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string fill(w[c] - cells[c].size(), ' ');
      s += (c ? "  " : "") +
           (c < left_columns ? cells[c] + fill : fill + cells[c]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(titles);
  for (const auto& r : rows) line(r);
}

class TableWriter : public PredictionWriter {
 public:
  void Write(const Prediction& p, std::ostream& out) const override {
    out << "rooftrace predict: " << p.model.name << " on " << p.device.name
        << "\n";
    for (const auto& [k, v] : HeaderItems(p)) {
      out << "  " << k << ":"
          << std::string(std::max<size_t>(1, 11 - k.size()), ' ') << v << "\n";
    }
    for (const std::string& w : p.warnings) out << "  WARNING:   " << w << "\n";
    out << "\nOps (one instance; count = instances per forward step; MB and "
           "times per instance)\n";
    std::vector<std::vector<std::string>> rows;
    for (const OpCost& o : p.ops) rows.push_back(OpCells(p, o));
    WriteAligned(OpTitles(), rows, 2, out);
    out << "\nForward steps (all ops, all instances)\n";
    rows.clear();
    for (const PhaseTotals& t : p.phases) rows.push_back(PhaseCells(t));
    WriteAligned(PhaseTitles(), rows, 1, out);
    out << "\nTotals\n";
    for (const auto& [k, v] : TotalItems(p)) {
      out << "  " << k << ":"
          << std::string(std::max<size_t>(1, 22 - k.size()), ' ') << v << "\n";
    }
  }
};

class CsvWriter : public PredictionWriter {
 public:
  void Write(const Prediction& p, std::ostream& out) const override {
    out << "phase,op,kind,precision,count,m,n,k,batch,flops,weight_bytes,"
           "kv_bytes,act_bytes,bytes,comm_bytes,intensity,bound,t_math_s,"
           "t_mem_s,t_comm_s,roofline_s,sum_s,step_share\n";
    for (const OpCost& o : p.ops) {
      out << o.phase << ',' << CsvField(o.op) << ',' << OpKindName(o.kind)
          << ',' << PrecisionKey(o.precision) << ',' << o.count << ',' << o.m
          << ',' << o.n << ',' << o.k << ',' << o.batch << ',' << Plain(o.flops)
          << ',' << Plain(o.weight_bytes) << ',' << Plain(o.kv_bytes) << ','
          << Plain(o.act_bytes) << ',' << Plain(o.bytes()) << ','
          << Plain(o.comm_bytes) << ',' << Plain(o.intensity()) << ','
          << o.bound() << ',' << Plain(o.t_math_s) << ',' << Plain(o.t_mem_s)
          << ',' << Plain(o.t_comm_s) << ',' << Plain(o.roofline_s()) << ','
          << Plain(o.sum_s()) << ',' << Plain(StepShare(p, o)) << '\n';
    }
  }
};

class JsonWriter : public PredictionWriter {
 public:
  void Write(const Prediction& p, std::ostream& out) const override {
    out << json::Write(PredictionToJson(p)) << "\n";
  }
};

void HtmlTable(const std::vector<std::string>& titles,
               const std::vector<std::vector<std::string>>& rows,
               size_t left_columns, std::ostream& out) {
  out << "<div class=\"wide\"><table><thead><tr>";
  for (size_t c = 0; c < titles.size(); ++c) {
    out << "<th" << (c < left_columns ? " class=\"l\"" : "") << ">"
        << XmlEscape(titles[c]) << "</th>";
  }
  out << "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    out << "<tr>";
    for (size_t c = 0; c < r.size(); ++c) {
      out << "<td" << (c < left_columns ? " class=\"l\"" : "") << ">"
          << XmlEscape(r[c]) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
}

void WriteItems(const std::vector<std::pair<std::string, std::string>>& items,
                std::ostream& out) {
  out << "<dl>\n";
  for (const auto& [k, v] : items) {
    out << "<dt>" << XmlEscape(k) << "</dt><dd>" << XmlEscape(v) << "</dd>\n";
  }
  out << "</dl>\n";
}

class HtmlWriter : public PredictionWriter {
 public:
  void Write(const Prediction& p, std::ostream& out) const override {
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<title>rooftrace prediction: "
        << XmlEscape(p.model.name + " on " + p.device.name)
        << "</title>\n<style>\n"
        << "body{font-family:sans-serif;margin:24px;color:#222}"
           "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
           "table{border-collapse:collapse;font-size:12px}"
           ".wide{overflow-x:auto}td,th{padding:2px 6px;border-bottom:1px "
           "solid #ddd;text-align:right;white-space:nowrap}"
           "th{background:#f3f3f3}td.l,th.l{text-align:left}"
           "dl{display:grid;grid-template-columns:max-content auto;gap:2px "
           "16px;font-size:13px}dt{font-weight:bold}dd{margin:0}"
           ".warn{color:#b00;font-weight:bold}\n"
        << "</style></head><body>\n<h1>rooftrace prediction</h1>\n";
    WriteItems(HeaderItems(p), out);
    for (const std::string& w : p.warnings) {
      out << "<p class=\"warn\">" << XmlEscape(w) << "</p>\n";
    }
    out << "<h2>Totals</h2>\n";
    WriteItems(TotalItems(p), out);
    out << "<h2>Roofline</h2>\n" << SvgOrWarning(RenderPredictionSvg(p))
        << "\n";
    out << "<h2>Forward steps</h2>\n";
    std::vector<std::vector<std::string>> rows;
    for (const PhaseTotals& t : p.phases) rows.push_back(PhaseCells(t));
    HtmlTable(PhaseTitles(), rows, 1, out);
    out << "<h2>Ops (one instance; count = instances per forward step)</h2>\n";
    rows.clear();
    for (const OpCost& o : p.ops) rows.push_back(OpCells(p, o));
    HtmlTable(OpTitles(), rows, 2, out);
    out << "</body></html>\n";
  }
};

// The op is plotted for decode-last only when it differs from
// decode-first (attention grows with the KV length; the rest does not).
bool SameAsDecodeFirst(const Prediction& p, const OpCost& o) {
  for (const OpCost& f : p.ops) {
    if (f.phase == "decode-first" && f.op == o.op) {
      return f.flops == o.flops && f.bytes() == o.bytes();
    }
  }
  return false;
}

}  // namespace

StatusOr<std::string> RenderPredictionSvg(const Prediction& p) {
  Report r;
  ReportHeader& h = r.header;
  h.device_name = p.device.name;
  h.input_kind = "prediction";
  h.roofs.source = p.device.roof_source;
  h.roofs.dram_bytes_per_s = p.device.dram_bytes_per_s;
  for (int i = 1; i < kNumPrecisions; ++i) {
    const double peak = p.device.peak_flops_per_s[i];
    if (peak <= 0) continue;
    Roof roof;
    roof.precision = std::string(PrecisionKey(static_cast<Precision>(i)));
    roof.peak_flops_per_s = peak;
    roof.dram_bytes_per_s = p.device.dram_bytes_per_s;
    roof.ridge_flops_per_byte = RidgePoint(peak, p.device.dram_bytes_per_s);
    roof.source = p.device.roof_source;
    h.roofs.roofs.push_back(std::move(roof));
  }
  std::sort(h.roofs.roofs.begin(), h.roofs.roofs.end(),
            [](const Roof& a, const Roof& b) {
              return a.peak_flops_per_s < b.peak_flops_per_s;
            });
  bool have_decode = false;
  for (const OpCost& o : p.ops) {
    const std::optional<double> ai = o.intensity();
    if (!ai || o.roofline_s() <= 0) continue;
    if (o.phase == "decode-last" && SameAsDecodeFirst(p, o)) continue;
    const bool decode = o.phase.rfind("decode", 0) == 0;
    have_decode = have_decode || decode;
    const double t = o.count * o.roofline_s();
    GroupRow g;
    g.key = o.op;
    g.name = o.op + " (" + o.phase + ")";
    g.family = o.op;
    g.precision = std::string(PrecisionKey(o.precision));
    g.count = o.count;
    g.total_ns = static_cast<int64_t>(t * 1e9 + 0.5);
    g.mean_ns = o.roofline_s() * 1e9;
    g.time_share = StepShare(p, o);
    g.flops = o.count * o.flops;
    g.bytes = o.count * o.bytes();
    g.ai = ai;
    g.achieved_flops_per_s = o.flops / o.roofline_s();
    g.achieved_bytes_per_s = o.bytes() / o.roofline_s();
    g.fraction_of_roof = std::max(o.t_math_s, o.t_mem_s) / o.roofline_s();
    g.bound = std::string(o.bound());
    g.phase = decode ? "decode" : o.phase == "forward" ? "forward" : "prefill";
    g.phase_share = 1;
    g.flops_source = "analytic";
    g.bytes_source = "analytic";
    r.families.push_back(std::move(g));
    ++r.kernel_count;
    r.total_ns += static_cast<int64_t>(t * 1e9 + 0.5);
  }
  const char* first = p.model.encoder ? "forward" : "prefill";
  for (const char* phase : {first, "decode"}) {
    if (phase[0] == 'd' && !have_decode) continue;
    PhaseRow row;
    row.phase = phase;
    r.phases.push_back(std::move(row));
  }
  RooflineSvgText text;
  text.subtitle = "predicted: " + p.model.name + ", batch " +
                  Int(p.options.batch) + ", prompt " + Int(p.options.prompt) +
                  ", generate " + Int(p.options.generate) + ", tp " +
                  Int(p.options.tp) + "; roofs " + p.device.roof_source;
  text.legend =
      "point area ~ share of the predicted step time; bytes are lower bounds";
  return RenderRooflineSvg(r, text);
}

std::unique_ptr<PredictionWriter> MakePredictionWriter(
    std::string_view format) {
  if (format == "table") return std::make_unique<TableWriter>();
  if (format == "csv") return std::make_unique<CsvWriter>();
  if (format == "json") return std::make_unique<JsonWriter>();
  if (format == "html") return std::make_unique<HtmlWriter>();
  return nullptr;
}

}  // namespace rooftrace::analyzer
