#include "kernels/calibration_result.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/files.h"
#include "base/json.h"
#include "kernels/formulas.h"

namespace rooftrace::kernels {
namespace {

constexpr char kFix[] =
    "it must be a file written by `rooftrace calibrate --save-result`";
constexpr double kFp16Bytes = 2.0;
constexpr double kBf16Bytes = 2.0;

double PerS(double amount, double seconds) {
  return seconds > 0 ? amount / seconds : 0.0;
}

std::string ShapeText(const GemmShape& s) {
  char buf[80];
  snprintf(buf, sizeof buf, "%lldx%lldx%lld", static_cast<long long>(s.m),
           static_cast<long long>(s.n), static_cast<long long>(s.k));
  return buf;
}

void SetShape(json::Value* v, const GemmShape& s) {
  v->Set("m", static_cast<int64_t>(s.m));
  v->Set("n", static_cast<int64_t>(s.n));
  v->Set("k", static_cast<int64_t>(s.k));
}

Status ReadShape(const json::ObjectReader& r, GemmShape* s) {
  RT_RETURN_IF_ERROR(r.Int64("m", &s->m));
  RT_RETURN_IF_ERROR(r.Int64("n", &s->n));
  RT_RETURN_IF_ERROR(r.Int64("k", &s->k));
  if (s->m <= 0 || s->n <= 0 || s->k <= 0) {
    return r.Error("m", "and n, k must be positive");
  }
  return OkStatus();
}

Status ReadStatus(const json::ObjectReader& r, StepStatus* out) {
  std::string s = "ok";
  RT_RETURN_IF_ERROR(r.String("status", &s));
  if (s == "ok") *out = StepStatus::kOk;
  else if (s == "skipped") *out = StepStatus::kSkipped;
  else if (s == "failed") *out = StepStatus::kFailed;
  else return r.Error("status", "must be \"ok\", \"skipped\" or \"failed\" (found \"" + s + "\")");
  return OkStatus();
}

Status NonNegative(const json::ObjectReader& r, std::string_view key,
                   double v) {
  if (v < 0) return r.Error(key, "must not be negative");
  return OkStatus();
}

// Calls `fn(reader, index)` for each element of the array member `key`.
template <typename Fn>
Status ForEach(const json::ObjectReader& top, std::string_view key, Fn fn) {
  RT_ASSIGN_OR_RETURN(const json::Value* arr, top.ArrayOf(key));
  if (!arr) return OkStatus();
  const json::Array& a = arr->as_array();
  for (size_t i = 0; i < a.size(); ++i) {
    RT_ASSIGN_OR_RETURN(json::ObjectReader r, top.Element(key, i, a[i]));
    RT_RETURN_IF_ERROR(fn(r));
  }
  return OkStatus();
}

}  // namespace

std::string_view StepStatusName(StepStatus s) {
  switch (s) {
    case StepStatus::kOk: return "ok";
    case StepStatus::kSkipped: return "skipped";
    case StepStatus::kFailed: return "failed";
  }
  return "?";
}

double StreamRun::Bytes() const {
  return kernel == "copy" ? StreamCopyBytes(elements, elem_bytes)
                          : StreamTriadBytes(elements, elem_bytes);
}
double StreamRun::BytesPerS() const { return PerS(Bytes(), best_s); }

double GemmRun::Flops() const { return GemmFlops(shape.m, shape.n, shape.k); }
double GemmRun::FlopsPerS() const {
  return status == StepStatus::kOk ? PerS(Flops(), best_s) : 0.0;
}

double OwnKernelRun::Flops() const {
  return GemmFlops(shape.m, shape.n, shape.k);
}
double OwnKernelRun::FlopsPerS() const {
  return status == StepStatus::kOk ? PerS(Flops(), best_s) : 0.0;
}

double MlpRun::Flops() const { return MlpFlops(batch, input_dim, hidden_dim()); }
double MlpRun::Bytes() const {
  return MlpBytes(batch, input_dim, hidden_dim(), kFp16Bytes,
                  fused ? MlpFusion::kEpilogueFused : MlpFusion::kNonFused);
}
double MlpRun::Intensity() const { return Flops() / Bytes(); }
double MlpRun::FlopsPerS() const {
  return status == StepStatus::kOk ? PerS(Flops(), best_s) : 0.0;
}

double MSweepRun::Flops() const {
  return GemmFlops(shape.m, shape.n, shape.k);
}
double MSweepRun::Bytes() const {
  return GemmMinBytes(shape.m, shape.n, shape.k, kBf16Bytes, kBf16Bytes);
}
double MSweepRun::Intensity() const { return Flops() / Bytes(); }
double MSweepRun::FlopsPerS() const {
  return status == StepStatus::kOk ? PerS(Flops(), best_s) : 0.0;
}

// ------------------------------------------------------------------ writer
std::string CalibrationResultToJson(const CalibrationResult& r) {
  json::Value root;
  root.Set("format", kCalibrationResultFormat);
  root.Set("version", kCalibrationResultVersion);
  root.Set("sample", r.sample);
  root.Set("sample_note", r.sample_note);
  root.Set("quick", r.quick);
  root.Set("created_utc", r.created_utc);
  root.Set("rooftrace_version", r.rooftrace_version);
  root.Set("command", r.command);
  root.Set("sm", r.sm);
  root.Set("device", DeviceIdentityToJson(r.device));

  json::Value stream = json::Value::MakeArray();
  for (const StreamRun& s : r.stream) {
    json::Value v;
    v.Set("kernel", s.kernel);
    v.Set("elements", static_cast<uint64_t>(s.elements));
    v.Set("elem_bytes", static_cast<uint64_t>(s.elem_bytes));
    v.Set("best_s", s.best_s);
    v.Set("median_s", s.median_s);
    v.Set("repeats", s.repeats);
    v.Set("bytes", s.Bytes());  // derived, for readers of the file
    v.Set("bytes_per_s", s.BytesPerS());
    stream.Append(std::move(v));
  }
  root.Set("stream", std::move(stream));

  json::Value gemm = json::Value::MakeArray();
  for (const GemmRun& g : r.gemm) {
    json::Value v;
    v.Set("type", g.type);
    v.Set("api", g.api);
    SetShape(&v, g.shape);
    v.Set("status", StepStatusName(g.status));
    v.Set("note", g.note);
    v.Set("best_s", g.best_s);
    v.Set("median_s", g.median_s);
    v.Set("repeats", g.repeats);
    v.Set("flops", g.Flops());
    v.Set("flops_per_s", g.FlopsPerS());
    gemm.Append(std::move(v));
  }
  root.Set("gemm", std::move(gemm));

  json::Value own = json::Value::MakeArray();
  for (const OwnKernelRun& o : r.own) {
    json::Value v;
    v.Set("kernel", o.kernel);
    v.Set("type", o.type);
    SetShape(&v, o.shape);
    v.Set("status", StepStatusName(o.status));
    v.Set("note", o.note);
    v.Set("best_s", o.best_s);
    v.Set("cublas_best_s", o.cublas_best_s);
    v.Set("max_rel_error", o.max_rel_error);
    v.Set("tolerance", o.tolerance);
    v.Set("matches_cublas", o.matches_cublas);
    v.Set("flops_per_s", o.FlopsPerS());
    own.Append(std::move(v));
  }
  root.Set("own", std::move(own));

  json::Value mlp = json::Value::MakeArray();
  for (const MlpRun& m : r.mlp) {
    json::Value v;
    v.Set("batch", static_cast<int64_t>(m.batch));
    v.Set("input_dim", static_cast<int64_t>(m.input_dim));
    v.Set("h", m.h);
    v.Set("fused", m.fused);
    v.Set("status", StepStatusName(m.status));
    v.Set("note", m.note);
    v.Set("best_s", m.best_s);
    v.Set("repeats", m.repeats);
    v.Set("flops", m.Flops());
    v.Set("bytes", m.Bytes());
    v.Set("intensity", m.Intensity());
    v.Set("flops_per_s", m.FlopsPerS());
    mlp.Append(std::move(v));
  }
  root.Set("mlp", std::move(mlp));

  json::Value msweep = json::Value::MakeArray();
  for (const MSweepRun& m : r.msweep) {
    json::Value v;
    SetShape(&v, m.shape);
    v.Set("status", StepStatusName(m.status));
    v.Set("note", m.note);
    v.Set("best_s", m.best_s);
    v.Set("repeats", m.repeats);
    v.Set("flops", m.Flops());
    v.Set("bytes", m.Bytes());
    v.Set("intensity", m.Intensity());
    v.Set("flops_per_s", m.FlopsPerS());
    msweep.Append(std::move(v));
  }
  root.Set("msweep", std::move(msweep));

  json::Value val = json::Value::MakeArray();
  for (const CounterValidation& c : r.validation) {
    json::Value v;
    v.Set("kernel", c.kernel);
    v.Set("quantity", c.quantity);
    v.Set("expected", c.expected);
    v.Set("counted", c.counted);
    v.Set("error_pct", c.ErrorPercent());
    val.Append(std::move(v));
  }
  root.Set("counter_validation", std::move(val));

  json::Value notes = json::Value::MakeArray();
  for (const StepNote& n : r.notes) {
    json::Value v;
    v.Set("step", n.step);
    v.Set("status", StepStatusName(n.status));
    v.Set("message", n.message);
    notes.Append(std::move(v));
  }
  root.Set("notes", std::move(notes));
  return json::Write(root);
}

// ------------------------------------------------------------------ reader
StatusOr<CalibrationResult> CalibrationResultFromJson(
    std::string_view text, const std::string& source) {
  auto parsed = json::Parse(text, source);
  if (!parsed.ok()) {
    return Corrupt(parsed.status().message() + " (" + kFix + ")");
  }
  const json::Value& root = *parsed;
  const json::Value* format = root.Find("format");
  if (!root.is_object() || !format || !format->is_string() ||
      format->as_string() != kCalibrationResultFormat) {
    return Corrupt(source + ": not a rooftrace calibration result (\"format\""
                   " is not \"" + kCalibrationResultFormat + "\"); " + kFix);
  }
  const std::string fix = kFix;
  json::ObjectReader top(source, "", root, fix);
  int version = 0;
  RT_RETURN_IF_ERROR(top.Int("version", &version));
  if (version < 1 || version > kCalibrationResultVersion) {
    return InvalidArgument(
        source + ": calibration result version " + std::to_string(version) +
        " is not supported (this rooftrace reads version " +
        std::to_string(kCalibrationResultVersion) +
        "); re-run `rooftrace calibrate --save-result` with this rooftrace");
  }
  CalibrationResult r;
  RT_RETURN_IF_ERROR(top.Bool("sample", &r.sample));
  RT_RETURN_IF_ERROR(top.String("sample_note", &r.sample_note));
  RT_RETURN_IF_ERROR(top.Bool("quick", &r.quick));
  RT_RETURN_IF_ERROR(top.String("created_utc", &r.created_utc));
  RT_RETURN_IF_ERROR(top.String("rooftrace_version", &r.rooftrace_version));
  RT_RETURN_IF_ERROR(top.String("command", &r.command));
  RT_RETURN_IF_ERROR(top.Int("sm", &r.sm));
  RT_ASSIGN_OR_RETURN(const json::Value* dev, top.Object("device"));
  if (dev) {
    RT_ASSIGN_OR_RETURN(json::ObjectReader d, top.Child("device", *dev));
    RT_RETURN_IF_ERROR(DeviceIdentityFromJson(d, &r.device));
  }

  RT_RETURN_IF_ERROR(ForEach(top, "stream", [&](const json::ObjectReader& e) {
    StreamRun s;
    RT_RETURN_IF_ERROR(e.String("kernel", &s.kernel));
    if (s.kernel != "copy" && s.kernel != "triad") {
      return e.Error("kernel", "must be \"copy\" or \"triad\"");
    }
    RT_RETURN_IF_ERROR(e.Uint64("elements", &s.elements));
    RT_RETURN_IF_ERROR(e.Uint64("elem_bytes", &s.elem_bytes));
    RT_RETURN_IF_ERROR(e.Number("best_s", &s.best_s));
    RT_RETURN_IF_ERROR(NonNegative(e, "best_s", s.best_s));
    RT_RETURN_IF_ERROR(e.Number("median_s", &s.median_s));
    RT_RETURN_IF_ERROR(e.Int("repeats", &s.repeats));
    r.stream.push_back(std::move(s));
    return OkStatus();
  }));

  RT_RETURN_IF_ERROR(ForEach(top, "gemm", [&](const json::ObjectReader& e) {
    GemmRun g;
    RT_RETURN_IF_ERROR(e.String("type", &g.type));
    if (!GemmTypeFromKey(g.type)) {
      return e.Error("type", "\"" + g.type + "\" is not a GEMM type "
                     "(fp64, fp32, tf32, fp16, bf16, fp8, int8)");
    }
    RT_RETURN_IF_ERROR(e.String("api", &g.api));
    RT_RETURN_IF_ERROR(ReadShape(e, &g.shape));
    RT_RETURN_IF_ERROR(ReadStatus(e, &g.status));
    RT_RETURN_IF_ERROR(e.String("note", &g.note));
    RT_RETURN_IF_ERROR(e.Number("best_s", &g.best_s));
    RT_RETURN_IF_ERROR(NonNegative(e, "best_s", g.best_s));
    RT_RETURN_IF_ERROR(e.Number("median_s", &g.median_s));
    RT_RETURN_IF_ERROR(e.Int("repeats", &g.repeats));
    r.gemm.push_back(std::move(g));
    return OkStatus();
  }));

  RT_RETURN_IF_ERROR(ForEach(top, "own", [&](const json::ObjectReader& e) {
    OwnKernelRun o;
    RT_RETURN_IF_ERROR(e.String("kernel", &o.kernel));
    RT_RETURN_IF_ERROR(e.String("type", &o.type));
    RT_RETURN_IF_ERROR(ReadShape(e, &o.shape));
    RT_RETURN_IF_ERROR(ReadStatus(e, &o.status));
    RT_RETURN_IF_ERROR(e.String("note", &o.note));
    RT_RETURN_IF_ERROR(e.Number("best_s", &o.best_s));
    RT_RETURN_IF_ERROR(NonNegative(e, "best_s", o.best_s));
    RT_RETURN_IF_ERROR(e.Number("cublas_best_s", &o.cublas_best_s));
    RT_RETURN_IF_ERROR(e.Number("max_rel_error", &o.max_rel_error));
    RT_RETURN_IF_ERROR(e.Number("tolerance", &o.tolerance));
    RT_RETURN_IF_ERROR(e.Bool("matches_cublas", &o.matches_cublas));
    r.own.push_back(std::move(o));
    return OkStatus();
  }));

  RT_RETURN_IF_ERROR(ForEach(top, "mlp", [&](const json::ObjectReader& e) {
    MlpRun m;
    RT_RETURN_IF_ERROR(e.Int64("batch", &m.batch));
    RT_RETURN_IF_ERROR(e.Int64("input_dim", &m.input_dim));
    RT_RETURN_IF_ERROR(e.Int("h", &m.h));
    if (m.batch <= 0 || m.input_dim <= 0 || m.h <= 0) {
      return e.Error("batch", "and input_dim, h must be positive");
    }
    RT_RETURN_IF_ERROR(e.Bool("fused", &m.fused));
    RT_RETURN_IF_ERROR(ReadStatus(e, &m.status));
    RT_RETURN_IF_ERROR(e.String("note", &m.note));
    RT_RETURN_IF_ERROR(e.Number("best_s", &m.best_s));
    RT_RETURN_IF_ERROR(NonNegative(e, "best_s", m.best_s));
    RT_RETURN_IF_ERROR(e.Int("repeats", &m.repeats));
    r.mlp.push_back(std::move(m));
    return OkStatus();
  }));

  RT_RETURN_IF_ERROR(ForEach(top, "msweep", [&](const json::ObjectReader& e) {
    MSweepRun m;
    RT_RETURN_IF_ERROR(ReadShape(e, &m.shape));
    RT_RETURN_IF_ERROR(ReadStatus(e, &m.status));
    RT_RETURN_IF_ERROR(e.String("note", &m.note));
    RT_RETURN_IF_ERROR(e.Number("best_s", &m.best_s));
    RT_RETURN_IF_ERROR(NonNegative(e, "best_s", m.best_s));
    RT_RETURN_IF_ERROR(e.Int("repeats", &m.repeats));
    r.msweep.push_back(std::move(m));
    return OkStatus();
  }));

  RT_RETURN_IF_ERROR(
      ForEach(top, "counter_validation", [&](const json::ObjectReader& e) {
        CounterValidation c;
        RT_RETURN_IF_ERROR(e.String("kernel", &c.kernel));
        RT_RETURN_IF_ERROR(e.String("quantity", &c.quantity));
        RT_RETURN_IF_ERROR(e.Number("expected", &c.expected));
        RT_RETURN_IF_ERROR(e.Number("counted", &c.counted));
        r.validation.push_back(std::move(c));
        return OkStatus();
      }));

  RT_RETURN_IF_ERROR(ForEach(top, "notes", [&](const json::ObjectReader& e) {
    StepNote n;
    RT_RETURN_IF_ERROR(e.String("step", &n.step));
    RT_RETURN_IF_ERROR(ReadStatus(e, &n.status));
    RT_RETURN_IF_ERROR(e.String("message", &n.message));
    r.notes.push_back(std::move(n));
    return OkStatus();
  }));
  return r;
}

StatusOr<CalibrationResult> LoadCalibrationResult(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFound(path + ": cannot open the calibration result (" +
                    std::strerror(errno) + "); check the path");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return CalibrationResultFromJson(text.str(), path);
}

Status SaveCalibrationResult(const CalibrationResult& r,
                             const std::string& path) {
  return WriteTextFile(path, CalibrationResultToJson(r));
}

// ------------------------------------------------------------- the profile
DeviceProfile BuildProfile(const CalibrationResult& r) {
  DeviceProfile p;
  p.device = r.device;
  FillDatasheet(&p);
  p.rooftrace_version = r.rooftrace_version;
  p.created_utc = r.created_utc;
  p.sample = r.sample;

  for (const StreamRun& s : r.stream) {
    if (s.BytesPerS() > p.measured_dram_bytes_per_s) {
      p.measured_dram_bytes_per_s = s.BytesPerS();
      char buf[96];
      snprintf(buf, sizeof buf, "stream-%s %d x %.0f MiB fp32",
               s.kernel.c_str(), s.kernel == "copy" ? 2 : 3,
               s.elements * static_cast<double>(s.elem_bytes) / (1 << 20));
      p.dram_kernel = buf;
    }
  }
  for (const GemmRun& g : r.gemm) {
    auto type = GemmTypeFromKey(g.type);
    if (!type) continue;
    PrecisionRoof& roof = p.roof(RoofOf(*type, r.sm));
    if (g.status == StepStatus::kOk) {
      if (g.FlopsPerS() > roof.measured_flops_per_s) {
        roof.measured_flops_per_s = g.FlopsPerS();
        roof.kernel = g.api + " " + g.type + " " + ShapeText(g.shape);
      }
    } else if (roof.note.find(g.type + ":") == std::string::npos) {
      // One note per type (the first shape's reason), kept even when another
      // type of the same class measured the roof (fp16 vs bf16).
      roof.note += std::string(roof.note.empty() ? "" : "; ") + g.type +
                   ": " + std::string(StepStatusName(g.status)) +
                   (g.note.empty() ? "" : " (" + g.note + ")");
    }
  }
  p.validation = r.validation;
  return p;
}

// ---------------------------------------------------------- modelled sample
namespace {

// Modelled time of one kernel: the slower of its compute and memory time at
// the given efficiencies, plus a fixed launch cost.
struct Model {
  double dram, launch_s;
  double Time(double flops, double bytes, double peak) const {
    const double compute = peak > 0 ? flops / peak : 0.0;
    return std::max(compute, bytes / dram) + launch_s;
  }
};

}  // namespace

CalibrationResult MakeModelledSample(const DatasheetEntry& gpu, int sm,
                                     uint64_t l2_bytes, bool quick) {
  constexpr double kComputeEff = 0.8, kDramEff = 0.9, kLaunchS = 4e-6;
  CalibrationResult r;
  r.sample = true;
  r.sample_note =
      "Every time modelled from the " +
      std::string(gpu.name) +
      " datasheet as max(FLOP / (0.8 * peak), bytes / (0.9 * bandwidth)) + "
      "4 us per kernel";
  r.quick = quick;
  r.created_utc = "sample";
  r.rooftrace_version = "sample";
  r.command = "modelled sample (no GPU was used)";
  r.device.name = std::string(gpu.name) + " (modelled)";
  r.device.chip = "sm_" + std::to_string(sm);
  r.device.l2_bytes = l2_bytes;
  r.sm = sm;
  const CalibrationPlan plan = MakePlan(quick, l2_bytes, sm);
  const Model model{kDramEff * gpu.dram_bytes_per_s, kLaunchS};
  auto peak = [&](Precision p) {
    return kComputeEff * gpu.peak_flops_per_s[static_cast<int>(p)];
  };

  for (const char* k : {"copy", "triad"}) {
    StreamRun s;
    s.kernel = k;
    s.elements = plan.stream_elements;
    s.best_s = s.median_s = s.Bytes() / model.dram;
    s.repeats = plan.stream_repeats;
    r.stream.push_back(s);
  }
  for (const auto& [type, why] : SkippedGemmTypes(sm)) {
    GemmRun g;
    g.type = std::string(GemmTypeInfoOf(type).key);
    g.api = "cublasLt";
    g.shape = plan.peak_shapes.front();
    g.status = StepStatus::kSkipped;
    g.note = why;
    r.gemm.push_back(g);
  }
  for (GemmType t : plan.gemm_types) {
    const GemmTypeInfo& info = GemmTypeInfoOf(t);
    const double pk = peak(RoofOf(t, sm));
    for (const GemmShape& s : plan.peak_shapes) {
      GemmRun g;
      g.type = std::string(info.key);
      g.api = "cublasLt";
      g.shape = s;
      if (pk <= 0) {
        g.status = StepStatus::kSkipped;
        g.note = "no datasheet peak to model";
      } else {
        g.best_s = g.median_s = model.Time(
            g.Flops(),
            GemmMinBytes(s.m, s.n, s.k, info.ab_elem_bytes, info.c_elem_bytes),
            pk);
      }
      g.repeats = plan.gemm_repeats;
      r.gemm.push_back(g);
    }
  }
  for (bool bf16 : {false, true}) {
    OwnKernelRun o;
    o.kernel = bf16 ? "own_bf16_mma" : "own_sgemm_tiled";
    o.type = bf16 ? "bf16" : "fp32";
    o.shape = bf16 ? plan.own_bf16_shape : plan.own_fp32_shape;
    o.tolerance = bf16 ? 1e-3 : 1e-4;  // as the GPU runner
    // Modelled at half (fp32) and 30% (bf16) of the cuBLAS rate.
    const double cublas_peak =
        peak(bf16 ? Precision::kFp16Tensor : Precision::kFp32);
    const double share = bf16 ? 0.3 : 0.5;
    if (bf16 && sm < 80) {
      o.status = StepStatus::kSkipped;
      o.note = "own_bf16_mma needs bf16 mma.sync (sm_80 or newer)";
    } else if (cublas_peak <= 0) {
      o.status = StepStatus::kSkipped;
      o.note = "no datasheet peak to model";
    } else {
      o.best_s = o.Flops() / (share * cublas_peak);
      o.cublas_best_s = o.Flops() / cublas_peak;
      o.matches_cublas = true;
      o.note = bf16 ? "modelled at 30% of the cuBLAS rate"
                    : "modelled at half the cuBLAS rate";
    }
    r.own.push_back(o);
  }
  const double fp16_peak = peak(Precision::kFp16Tensor);
  for (int64_t b : plan.mlp_batches) {
    for (int h : plan.mlp_h) {
      for (bool fused : {false, true}) {
        MlpRun m;
        m.batch = b;
        m.input_dim = plan.mlp_input_dim;
        m.h = h;
        m.fused = fused;
        m.repeats = plan.mlp_repeats;
        const uint64_t I = m.input_dim, H = m.hidden_dim();
        const double e = kFp16Bytes;
        // GEMM 1 (x@M -> BxH), GELU, GEMM 2 (BxH @ HxI).
        const double g1 = model.Time(GemmFlops(b, H, I),
                                     GemmMinBytes(b, H, I, e, e), fp16_peak);
        const double g2 = model.Time(GemmFlops(b, I, H),
                                     GemmMinBytes(b, I, H, e, e), fp16_peak);
        const double gelu =
            fused ? 0.0 : model.Time(GeluFlops(b * H), GeluBytes(b * H, e), 0);
        m.best_s = g1 + gelu + g2;
        r.mlp.push_back(m);
      }
    }
  }
  for (int64_t m : plan.msweep_m) {
    MSweepRun s;
    s.shape = {m, plan.msweep_n, plan.msweep_k};
    s.repeats = plan.msweep_repeats;
    s.best_s = model.Time(s.Flops(), s.Bytes(), fp16_peak);
    r.msweep.push_back(s);
  }
  r.notes.push_back({"counter validation", StepStatus::kSkipped,
                     "a modelled sample has no counters"});
  return r;
}

}  // namespace rooftrace::kernels
