#include "analyzer/expect.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "analyzer/input.h"
#include "analyzer/predict.h"
#include "report/text_util.h"
#include "base/json.h"

namespace rooftrace::analyzer {
namespace {

bool In(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

// A number member of `obj` (0 when absent or null).
double Num(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v && v->is_number() ? v->as_number() : 0;
}
std::string Str(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}

// Reads one GEMM object {m, n, k, batch, a_bytes, b_bytes, c_bytes}.
Status ReadGemm(const json::ObjectReader& r, ExpectedGemm* g) {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  RT_RETURN_IF_ERROR(r.Int64("m", &m));
  RT_RETURN_IF_ERROR(r.Int64("n", &n));
  RT_RETURN_IF_ERROR(r.Int64("k", &k));
  RT_RETURN_IF_ERROR(r.Int64("batch", &batch));
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) {
    return r.Error("m", "and n, k, batch must be > 0");
  }
  g->m_lo = g->m_hi = m;
  g->n_lo = g->n_hi = n;
  g->k_lo = g->k_hi = k;
  g->batch = batch;
  RT_RETURN_IF_ERROR(r.Number("a_bytes", &g->a_bytes));
  RT_RETURN_IF_ERROR(r.Number("b_bytes", &g->b_bytes));
  RT_RETURN_IF_ERROR(r.Number("c_bytes", &g->c_bytes));
  return OkStatus();
}

bool SameDims(const ExpectedGemm& a, const ExpectedGemm& b) {
  return a.phase == b.phase && a.m_lo == b.m_lo && a.m_hi == b.m_hi &&
         a.n_lo == b.n_lo && a.n_hi == b.n_hi && a.k_lo == b.k_lo &&
         a.k_hi == b.k_hi && a.batch == b.batch && a.a_bytes == b.a_bytes &&
         a.b_bytes == b.b_bytes && a.c_bytes == b.c_bytes &&
         a.peak_flops_per_s == b.peak_flops_per_s;
}

void Widen(const ExpectedGemm& from, ExpectedGemm* to) {
  to->m_lo = std::min(to->m_lo, from.m_lo);
  to->m_hi = std::max(to->m_hi, from.m_hi);
  to->n_lo = std::min(to->n_lo, from.n_lo);
  to->n_hi = std::max(to->n_hi, from.n_hi);
  to->k_lo = std::min(to->k_lo, from.k_lo);
  to->k_hi = std::max(to->k_hi, from.k_hi);
}

// Prefill (or an encoder's forward pass) before decode.
int PhaseRank(const std::string& phase) { return phase == "decode" ? 1 : 0; }

}  // namespace

std::optional<KernelShape> ParseKernelShape(std::string_view text) {
  KernelShape s;
  bool m = false, n = false, k = false;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    const size_t end = std::min(text.find(' ', pos), text.size());
    const std::string_view word = text.substr(pos, end - pos);
    pos = end;
    if (word.empty()) continue;
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = word.substr(0, eq);
    const std::string_view value = word.substr(eq + 1);
    int64_t v = 0;
    const auto [ptr, ec] =
        std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || v <= 0) {
      return std::nullopt;
    }
    if (key == "m") {
      s.m = v;
      m = true;
    } else if (key == "n") {
      s.n = v;
      n = true;
    } else if (key == "k") {
      s.k = v;
      k = true;
    } else if (key == "batch") {
      s.batch = v;
    }
  }
  if (!m || !n || !k) return std::nullopt;
  return s;
}

namespace {

StatusOr<Expectation> FromParsed(const StatusOr<json::Value>& parsed,
                                 const std::string& source) {
  const std::string fix =
      "write the prediction with `rooftrace predict ... --format json > "
      "prediction.json`";
  if (!parsed.ok()) {
    return Status(parsed.status().code() == StatusCode::kNotFound
                      ? StatusCode::kNotFound
                      : StatusCode::kInvalidArgument,
                  "--expect " + parsed.status().message() + "; " + fix);
  }
  const json::Value& root = *parsed;
  if (!root.is_object() || Str(root, "format") != kPredictionFormat) {
    return InvalidArgument("--expect " + source +
                           ": not a rooftrace prediction (no \"format\": \"" +
                           kPredictionFormat + "\"); " + fix);
  }
  if (Num(root, "version") > kPredictionVersion) {
    return InvalidArgument(
        "--expect " + source + ": prediction version " +
        std::to_string(static_cast<int>(Num(root, "version"))) +
        " is newer than this rooftrace reads (" +
        std::to_string(kPredictionVersion) + "); upgrade rooftrace");
  }
  Expectation e;
  e.source = source;
  if (const json::Value* m = root.Find("model"); m && m->is_object()) {
    e.model = Str(*m, "name");
  }
  if (const json::Value* d = root.Find("device"); d && d->is_object()) {
    e.device = Str(*d, "name");
    e.roof_source = Str(*d, "roof_source");
    e.dram_bytes_per_s = Num(*d, "dram_bytes_per_s");
  }
  if (e.dram_bytes_per_s <= 0) {
    return InvalidArgument("--expect " + source +
                           ": device.dram_bytes_per_s is missing or not > 0; " +
                           fix);
  }
  if (const json::Value* o = root.Find("options"); o && o->is_object()) {
    auto n = [&](const char* k) {
      return std::to_string(static_cast<int64_t>(Num(*o, k)));
    };
    const json::Value* m = root.Find("model");
    const json::Value* enc = m && m->is_object() ? m->Find("encoder") : nullptr;
    const bool encoder = enc && enc->is_bool() && enc->as_bool();
    e.workload = "batch " + n("batch") + ", prompt " + n("prompt") +
                 (encoder ? " (one forward pass)" : ", generate " + n("generate")) +
                 ", tp " + n("tp");
  }
  const json::ObjectReader top(source, "", root, fix);
  RT_ASSIGN_OR_RETURN(const json::Value* ops, top.ArrayOf("ops"));
  if (ops == nullptr) {
    return InvalidArgument("--expect " + source + ": no \"ops\" array; " + fix);
  }
  std::vector<std::string> op_order;
  std::vector<ExpectedGemm> raw;
  for (size_t i = 0; i < ops->as_array().size(); ++i) {
    const json::Value& op = ops->as_array()[i];
    RT_ASSIGN_OR_RETURN(const json::ObjectReader r, top.Element("ops", i, op));
    std::string name, phase;
    double peak = 0;
    RT_RETURN_IF_ERROR(r.String("op", &name));
    RT_RETURN_IF_ERROR(r.String("phase", &phase));
    RT_RETURN_IF_ERROR(r.Number("peak_flops_per_s", &peak));
    if (phase != "prefill" && phase != "forward" &&
        phase.rfind("decode", 0) != 0) {
      continue;
    }
    auto it = std::find(op_order.begin(), op_order.end(), name);
    const int order = static_cast<int>(it - op_order.begin());
    if (it == op_order.end()) op_order.push_back(name);
    ExpectedGemm base;
    base.phase = phase.rfind("decode", 0) == 0 ? "decode" : phase;
    base.order = order;
    base.peak_flops_per_s = peak;
    RT_ASSIGN_OR_RETURN(const json::Value* gemm, r.Object("gemm"));
    if (gemm != nullptr) {
      RT_ASSIGN_OR_RETURN(const json::ObjectReader gr, r.Child("gemm", *gemm));
      ExpectedGemm g = base;
      g.label = name;
      RT_RETURN_IF_ERROR(ReadGemm(gr, &g));
      raw.push_back(std::move(g));
    }
    RT_ASSIGN_OR_RETURN(const json::Value* parts, r.ArrayOf("parts"));
    if (parts == nullptr) continue;
    for (size_t j = 0; j < parts->as_array().size(); ++j) {
      RT_ASSIGN_OR_RETURN(const json::ObjectReader pr,
                          r.Element("parts", j, parts->as_array()[j]));
      ExpectedGemm g = base;
      std::string part;
      RT_RETURN_IF_ERROR(pr.String("part", &part));
      g.label = part.empty() ? name : name + "." + part;
      RT_RETURN_IF_ERROR(ReadGemm(pr, &g));
      raw.push_back(std::move(g));
    }
  }
  // Decode-first and decode-last of one form become one range; identical
  // forms of different ops share one entry (their kernels cannot be told
  // apart by shape).
  for (ExpectedGemm& g : raw) {
    auto same_form = std::find_if(
        e.gemms.begin(), e.gemms.end(), [&](const ExpectedGemm& x) {
          return x.label == g.label && x.phase == g.phase;
        });
    if (same_form != e.gemms.end()) {
      Widen(g, &*same_form);
      continue;
    }
    e.gemms.push_back(std::move(g));
  }
  // Whole ops name a shared entry before parts: "o_proj / qkv.q / ...".
  std::vector<ExpectedGemm> merged;
  std::vector<std::vector<std::string>> labels;
  auto is_part = [](const std::string& l) {
    return l.find('.') != std::string::npos;
  };
  for (ExpectedGemm& g : e.gemms) {
    auto twin =
        std::find_if(merged.begin(), merged.end(),
                     [&](const ExpectedGemm& x) { return SameDims(x, g); });
    if (twin == merged.end()) {
      labels.push_back({g.label});
      merged.push_back(std::move(g));
      continue;
    }
    std::vector<std::string>& l = labels[twin - merged.begin()];
    auto at =
        is_part(g.label) ? l.end() : std::find_if(l.begin(), l.end(), is_part);
    // The entry is reported where its first whole op sits.
    if (at == l.begin()) twin->order = g.order;
    l.insert(at, g.label);
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    merged[i].label.clear();
    for (const std::string& l : labels[i]) {
      merged[i].label += (merged[i].label.empty() ? "" : " / ") + l;
    }
  }
  e.gemms = std::move(merged);
  if (e.gemms.empty()) {
    return InvalidArgument("--expect " + source +
                           ": the prediction has no GEMM to match kernels "
                           "against; " +
                           fix);
  }
  return e;
}

}  // namespace

StatusOr<Expectation> ParseExpectation(std::string_view json_text,
                                       const std::string& source) {
  return FromParsed(json::Parse(json_text, source), source);
}

StatusOr<Expectation> LoadExpectation(const std::string& path) {
  // A prediction lists a model's ops per phase: megabytes at most.
  constexpr uint64_t kMaxPredictionBytes = uint64_t{64} << 20;
  // FromParsed puts "--expect" before the message.
  return FromParsed(json::ParseFile(path, kMaxPredictionBytes, "",
                                    "a prediction (rooftrace predict "
                                    "--format json)"),
                    path);
}

std::optional<double> ExpectRow::efficiency() const {
  if (measured_s <= 0) return std::nullopt;
  return predicted_s / measured_s;
}

std::string_view ExpectRow::predicted_bound() const {
  return predicted_math_s >= predicted_mem_s ? "compute" : "memory";
}

std::string ExpectRow::measured_bound() const {
  std::string best = "unknown";
  double best_s = -1;
  for (const auto& [bound, s] : bound_time_s) {
    if (s > best_s) {
      best = bound;
      best_s = s;
    }
  }
  return best;
}

ExpectMatcher::ExpectMatcher(Expectation expectation)
    : expectation_(std::move(expectation)) {
  rows_.resize(expectation_.gemms.size());
  for (size_t i = 0; i < rows_.size(); ++i) {
    const ExpectedGemm& g = expectation_.gemms[i];
    rows_[i].row.phase = g.phase;
    rows_[i].row.op = g.label;
    rows_[i].row.order = g.order;
  }
}

void ExpectMatcher::Add(const KernelRow& k) {
  const double seconds = static_cast<double>(k.duration_ns) * 1e-9;
  const std::optional<KernelShape> s =
      k.shape.empty() ? std::nullopt : ParseKernelShape(k.shape);
  if (!s) {
    ++totals_.other_kernels;
    totals_.other_s += seconds;
    return;
  }
  // Candidates: the token-side dimension is m or n.
  int best = -1;
  int64_t best_tokens = 0, best_cols = 0;
  for (size_t i = 0; i < expectation_.gemms.size(); ++i) {
    const ExpectedGemm& g = expectation_.gemms[i];
    if (s->batch != g.batch || !In(s->k, g.k_lo, g.k_hi)) continue;
    int64_t tokens = 0, cols = 0;
    if (In(s->m, g.m_lo, g.m_hi) && In(s->n, g.n_lo, g.n_hi)) {
      tokens = s->m;
      cols = s->n;
    } else if (In(s->n, g.m_lo, g.m_hi) && In(s->m, g.n_lo, g.n_hi)) {
      tokens = s->n;
      cols = s->m;
    } else {
      continue;
    }
    const bool phase_agrees = k.phase == g.phase;
    if (best < 0 ||
        (phase_agrees && k.phase != expectation_.gemms[best].phase)) {
      best = static_cast<int>(i);
      best_tokens = tokens;
      best_cols = cols;
    }
  }
  if (best < 0) {
    UnmatchedShape& u = unmatched_[std::string(k.shape)];
    u.shape = std::string(k.shape);
    ++u.kernels;
    u.time_s += seconds;
    ++totals_.unmatched_gemm_kernels;
    totals_.unmatched_gemm_s += seconds;
    return;
  }
  const ExpectedGemm& g = expectation_.gemms[best];
  Accumulator& acc = rows_[best];
  ExpectRow& row = acc.row;
  ++row.kernels;
  row.measured_s += seconds;
  row.bound_time_s[k.bound.empty() ? "unknown" : std::string(k.bound)] +=
      seconds;
  if (row.shape.empty()) row.shape = std::string(k.shape);
  if (std::find(acc.shapes_seen.begin(), acc.shapes_seen.end(), k.shape) ==
      acc.shapes_seen.end()) {
    if (acc.shapes_seen.size() < 4096) acc.shapes_seen.emplace_back(k.shape);
    ++row.shapes;
  }
  // One prediction per cuBLAS call: its kernels share a correlation id.
  const bool same_call = k.correlation_id && acc.last_correlation &&
                         *k.correlation_id == *acc.last_correlation;
  acc.last_correlation = k.correlation_id;
  ++totals_.matched_kernels;
  totals_.matched_s += seconds;
  if (same_call) return;
  ++row.calls;
  const double M = static_cast<double>(best_tokens);
  const double N = static_cast<double>(best_cols);
  const double K = static_cast<double>(s->k);
  const double batch = static_cast<double>(s->batch);
  const double flops = 2 * M * N * K * batch;
  const double bytes =
      (M * K * g.a_bytes + K * N * g.b_bytes + M * N * g.c_bytes) * batch;
  const double t_math = g.peak_flops_per_s > 0 ? flops / g.peak_flops_per_s : 0;
  const double t_mem = bytes / expectation_.dram_bytes_per_s;
  row.predicted_math_s += t_math;
  row.predicted_mem_s += t_mem;
  row.predicted_s += std::max(t_math, t_mem);
}

ExpectReport ExpectMatcher::Finish() const {
  ExpectReport r = totals_;
  r.expectation = expectation_;
  for (const Accumulator& a : rows_) {
    if (a.row.kernels > 0) r.rows.push_back(a.row);
  }
  std::stable_sort(r.rows.begin(), r.rows.end(),
                   [](const ExpectRow& a, const ExpectRow& b) {
                     if (PhaseRank(a.phase) != PhaseRank(b.phase)) {
                       return PhaseRank(a.phase) < PhaseRank(b.phase);
                     }
                     return a.order < b.order;
                   });
  for (const auto& [shape, u] : unmatched_) r.unmatched_shapes.push_back(u);
  std::sort(r.unmatched_shapes.begin(), r.unmatched_shapes.end(),
            [](const UnmatchedShape& a, const UnmatchedShape& b) {
              return a.time_s != b.time_s ? a.time_s > b.time_s
                                          : a.shape < b.shape;
            });
  if (r.unmatched_shapes.size() > 10) r.unmatched_shapes.resize(10);
  return r;
}

StatusOr<ExpectReport> CompareRunWithExpectation(const std::string& input,
                                                 int64_t run_id,
                                                 const Expectation& expected) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<AnalyzerInput> in,
                      AnalyzerInput::Open(input, InputOptions{}));
  ExpectMatcher matcher(expected);
  RT_RETURN_IF_ERROR(
      in->store().ForEachKernel(run_id, [&](const KernelRow& k) {
        matcher.Add(k);
        return OkStatus();
      }));
  return matcher.Finish();
}

std::string NoShapesMessage(const ExpectReport& report) {
  return "nothing to compare: none of the run's " +
         std::to_string(report.other_kernels) +
         " kernels carries a GEMM shape (m, n, k) to match against the "
         "prediction's ops. Shapes come from rooftrace's own capture "
         "(libinject's cuBLAS hooks) or a PyTorch profiler trace recorded "
         "with record_shapes=True; an Nsight Systems export has none";
}

// ------------------------------------------------------------- writers

namespace {

std::string Ms(double s) { return Fixed(s * 1e3, 3); }
std::string Us(double s) { return Fixed(s * 1e6, 2); }

std::vector<std::string> Cells(const ExpectRow& r) {
  return {r.phase,
          r.op,
          std::to_string(r.kernels),
          std::to_string(r.calls),
          Ms(r.predicted_s),
          Ms(r.measured_s),
          Fixed(r.efficiency() ? std::optional<double>(*r.efficiency() * 100)
                               : std::nullopt,
                1),
          Us(r.calls ? r.predicted_s / r.calls : 0),
          Us(r.calls ? r.measured_s / r.calls : 0),
          std::string(r.predicted_bound()),
          r.measured_bound(),
          r.shapes > 1 ? r.shape + " (+" + std::to_string(r.shapes - 1) + ")"
                       : r.shape};
}

const std::vector<std::string>& Titles() {
  static const std::vector<std::string> kTitles = {
      "phase",        "op",          "kernels",        "calls",
      "predicted ms", "measured ms", "efficiency %",   "pred us/call",
      "meas us/call", "pred bound",  "measured bound", "shape"};
  return kTitles;
}

void WriteTable(const ExpectReport& r, std::ostream& out) {
  const Expectation& e = r.expectation;
  out << "\nMeasured vs predicted (" << e.source << ": " << e.model << ", "
      << e.workload << ", roofs " << e.roof_source << ")\n"
      << "  efficiency = predicted roofline time / measured time; kernels "
         "matched to ops by GEMM shape\n";
  if (r.no_shapes()) {
    out << NoShapesMessage(r) << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const ExpectRow& row : r.rows) rows.push_back(Cells(row));
  std::vector<size_t> w(Titles().size());
  for (size_t c = 0; c < w.size(); ++c) w[c] = Titles()[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c)
      w[c] = std::max(w[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool left = c < 2 || c >= 9;
      const std::string fill(w[c] - cells[c].size(), ' ');
      s += (c ? "  " : "") + (left ? cells[c] + fill : fill + cells[c]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(Titles());
  for (const auto& row : rows) line(row);
  if (rows.empty()) {
    out << "(no GEMM kernel of the run has a predicted shape)\n";
  }
  out << "  matched:   " << r.matched_kernels << " GEMM kernels, "
      << Ms(r.matched_s) << " ms\n"
      << "  unmatched: " << r.unmatched_gemm_kernels
      << " GEMM kernels whose shape no op has, " << Ms(r.unmatched_gemm_s)
      << " ms";
  for (size_t i = 0; i < r.unmatched_shapes.size() && i < 5; ++i) {
    const UnmatchedShape& u = r.unmatched_shapes[i];
    out << (i ? "; " : ": ") << u.shape << " x" << u.kernels;
  }
  out << "\n  other:     " << r.other_kernels
      << " kernels without a GEMM shape (attention, norms, elementwise), "
      << Ms(r.other_s) << " ms\n";
}

void WriteCsv(const ExpectReport& r, std::ostream& out) {
  out << "phase,op,kernels,calls,predicted_s,measured_s,efficiency,"
         "predicted_bound,measured_bound,shape,shapes\n";
  for (const ExpectRow& row : r.rows) {
    out << row.phase << ',' << CsvField(row.op) << ',' << row.kernels << ','
        << row.calls << ',' << Plain(row.predicted_s) << ','
        << Plain(row.measured_s) << ',' << Plain(row.efficiency()) << ','
        << row.predicted_bound() << ',' << CsvField(row.measured_bound()) << ','
        << CsvField(row.shape) << ',' << row.shapes << '\n';
  }
}

void WriteJson(const ExpectReport& r, std::ostream& out) {
  const Expectation& e = r.expectation;
  out << "{\"prediction\":" << JsonString(e.source)
      << ",\"model\":" << JsonString(e.model)
      << ",\"device\":" << JsonString(e.device)
      << ",\"roof_source\":" << JsonString(e.roof_source)
      << ",\"workload\":" << JsonString(e.workload) << ",\"rows\":[";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const ExpectRow& row = r.rows[i];
    out << (i ? "," : "") << "{\"phase\":" << JsonString(row.phase)
        << ",\"op\":" << JsonString(row.op) << ",\"kernels\":" << row.kernels
        << ",\"calls\":" << row.calls
        << ",\"predicted_s\":" << JsonNumber(row.predicted_s)
        << ",\"measured_s\":" << JsonNumber(row.measured_s)
        << ",\"efficiency\":" << JsonNumber(row.efficiency())
        << ",\"predicted_bound\":" << JsonString(row.predicted_bound())
        << ",\"measured_bound\":" << JsonString(row.measured_bound())
        << ",\"shape\":" << JsonString(row.shape)
        << ",\"shapes\":" << row.shapes << "}";
  }
  out << "],\"matched_kernels\":" << r.matched_kernels
      << ",\"matched_s\":" << JsonNumber(r.matched_s)
      << ",\"unmatched_gemm_kernels\":" << r.unmatched_gemm_kernels
      << ",\"unmatched_gemm_s\":" << JsonNumber(r.unmatched_gemm_s)
      << ",\"unmatched_shapes\":[";
  for (size_t i = 0; i < r.unmatched_shapes.size(); ++i) {
    const UnmatchedShape& u = r.unmatched_shapes[i];
    out << (i ? "," : "") << "{\"shape\":" << JsonString(u.shape)
        << ",\"kernels\":" << u.kernels
        << ",\"time_s\":" << JsonNumber(u.time_s) << "}";
  }
  out << "],\"other_kernels\":" << r.other_kernels
      << ",\"other_s\":" << JsonNumber(r.other_s) << "}\n";
}

}  // namespace

Status WriteRunAgainstExpectation(const std::string& input, int64_t run_id,
                                  const Expectation& expected,
                                  std::string_view format, std::ostream& out) {
  RT_ASSIGN_OR_RETURN(const ExpectReport report,
                      CompareRunWithExpectation(input, run_id, expected));
  WriteExpectReport(report, format, out);
  return OkStatus();
}

void WriteExpectReport(const ExpectReport& report, std::string_view format,
                       std::ostream& out) {
  if (format == "csv") {
    WriteCsv(report, out);
  } else if (format == "json") {
    WriteJson(report, out);
  } else {
    WriteTable(report, out);
  }
}

}  // namespace rooftrace::analyzer
