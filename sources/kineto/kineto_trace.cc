#include "sources/kineto/kineto_trace.h"

#include <simdjson.h>

#include <cmath>

#include "base/json_checker.h"
#include "sources/nsys/cuda_api_names.h"

namespace rooftrace::kineto {

namespace dom = simdjson::dom;

struct KinetoTrace::Impl {
  std::string text;  // what the parser's string views point into
  dom::parser parser;
};

namespace {

// ------------------------------------------------------------ numbers

// A number as an unsigned integer (negative and non-numbers: `fallback`).
uint64_t U64(dom::element e, uint64_t fallback = 0) {
  switch (e.type()) {
    case dom::element_type::INT64: {
      const int64_t v = int64_t(e);
      return v >= 0 ? static_cast<uint64_t>(v) : fallback;
    }
    case dom::element_type::UINT64:
      return uint64_t(e);
    case dom::element_type::DOUBLE: {
      const double v = double(e);
      return v >= 0 && v < 1.8e19 ? static_cast<uint64_t>(std::llround(v))
                                  : fallback;
    }
    default:
      return fallback;
  }
}

uint32_t U32(dom::element e) {
  const uint64_t v = U64(e);
  return v > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(v);
}

// An id that may be negative or a string ("Traces"): -1 for a string.
int64_t I64(dom::element e) {
  switch (e.type()) {
    case dom::element_type::INT64:
      return int64_t(e);
    case dom::element_type::UINT64:
      return static_cast<int64_t>(uint64_t(e));
    case dom::element_type::DOUBLE:
      return static_cast<int64_t>(double(e));
    default:
      return -1;
  }
}

double Number(dom::element e) {
  switch (e.type()) {
    case dom::element_type::INT64:
      return static_cast<double>(int64_t(e));
    case dom::element_type::UINT64:
      return static_cast<double>(uint64_t(e));
    case dom::element_type::DOUBLE:
      return double(e);
    default:
      return 0;
  }
}

bool IsNumber(dom::element e) {
  const auto t = e.type();
  return t == dom::element_type::INT64 || t == dom::element_type::UINT64 ||
         t == dom::element_type::DOUBLE;
}

// Microseconds (integer, or with a fraction down to ns and beyond) ->
// nanoseconds, rounded. A double holds today's epoch-based µs with a
// fraction to about 0.1 ns, so the rounding is exact for ns fractions.
uint64_t NsOfMicros(dom::element e) {
  switch (e.type()) {
    case dom::element_type::INT64: {
      const int64_t v = int64_t(e);
      return v > 0 ? static_cast<uint64_t>(v) * 1000 : 0;
    }
    case dom::element_type::UINT64:
      return uint64_t(e) * 1000;
    case dom::element_type::DOUBLE: {
      const double v = double(e) * 1000.0;
      return v > 0 && v < 1.8e19 ? static_cast<uint64_t>(std::llround(v))
                                 : 0;
    }
    default:
      return 0;
  }
}

std::string_view Str(dom::element e) {
  std::string_view s;
  if (e.get_string().get(s)) return {};
  return s;
}

void ReadTriple(dom::element e, uint32_t out[3]) {
  dom::array a;
  if (e.get_array().get(a)) return;
  int i = 0;
  for (dom::element v : a) {
    if (i == 3) break;
    out[i++] = U32(v);
  }
}

}  // namespace

namespace {

// The fields every trace event may have; `args` is read by kind.
struct EventFields {
  std::string_view ph, cat, name;
  dom::element ts, dur, pid, tid, args;
  bool has_ts = false, has_dur = false, has_pid = false, has_tid = false,
       has_args = false;

  uint64_t StartNs() const { return has_ts ? NsOfMicros(ts) : 0; }
  uint64_t EndNs() const {
    return StartNs() + (has_dur ? NsOfMicros(dur) : 0);
  }
  int64_t Pid() const { return has_pid ? I64(pid) : -1; }
  int64_t Tid() const { return has_tid ? I64(tid) : -1; }
};

EventFields FieldsOf(dom::object event) {
  EventFields f;
  for (dom::key_value_pair kv : event) {
    const std::string_view k = kv.key;
    if (k == "ph") {
      f.ph = Str(kv.value);
    } else if (k == "cat") {
      f.cat = Str(kv.value);
    } else if (k == "name") {
      f.name = Str(kv.value);
    } else if (k == "ts") {
      f.ts = kv.value, f.has_ts = true;
    } else if (k == "dur") {
      f.dur = kv.value, f.has_dur = true;
    } else if (k == "pid") {
      f.pid = kv.value, f.has_pid = true;
    } else if (k == "tid") {
      f.tid = kv.value, f.has_tid = true;
    } else if (k == "args") {
      f.args = kv.value, f.has_args = kv.value.is_object();
    }
  }
  return f;
}

// "Input Dims" and "Input type" of a cpu_op.
void ReadInputs(dom::element dims, dom::element types, OpInputs* out) {
  dom::array a;
  if (!dims.get_array().get(a)) {
    for (dom::element input : a) {
      if (out->count == kMaxOpInputs) break;
      OpInput& in = out->in[out->count++];
      dom::array d;
      if (input.get_array().get(d) || d.size() > kMaxRank) continue;
      int rank = 0;
      for (dom::element v : d) {
        if (!IsNumber(v)) {  // a list of tensors: not one tensor
          rank = -1;
          break;
        }
        in.dims[rank++] = I64(v);
      }
      in.rank = rank;
    }
  }
  dom::array t;
  if (types.get_array().get(t)) return;
  int i = 0;
  for (dom::element v : t) {
    if (i == out->count) break;
    out->in[i++].type = Str(v);
  }
}

class EventReader {
 public:
  explicit EventReader(KinetoTrace* trace) : t_(*trace) {}

  void Read(dom::object event) {
    ++t_.counts.events;
    const EventFields f = FieldsOf(event);
    if (f.ph == "X") {
      ReadComplete(f);
    } else if (f.ph == "M" && f.name == "process_name" && f.has_args) {
      dom::element name;
      if (!f.args["name"].get(name)) {
        t_.process_names.emplace_back(f.Pid(), Str(name));
      }
    }
  }

 private:
  void ReadComplete(const EventFields& f) {
    const std::string_view c = f.cat;
    if (c == "kernel") {
      ReadGpu(f, GpuEvent::Kind::kKernel);
    } else if (c == "gpu_memcpy") {
      ReadGpu(f, GpuEvent::Kind::kMemcpy);
    } else if (c == "gpu_memset") {
      ReadGpu(f, GpuEvent::Kind::kMemset);
    } else if (c == "cuda_profiler_range") {
      ReadGpu(f, GpuEvent::Kind::kProfilerRange);
    } else if (c == "cuda_runtime" || c == "cuda_driver") {
      const int32_t kind = nsys::ClassifyCudaApi(f.name);
      if (kind != 0) ReadHost(f, HostEvent::Kind::kLaunch, kind);
    } else if (c == "cpu_op") {
      if (IsGemmOp(f.name)) ReadHost(f, HostEvent::Kind::kGemmOp, 0);
    } else if (c == "user_annotation") {
      ReadHost(f, HostEvent::Kind::kAnnotation, 0);
    } else if (c == "gpu_user_annotation") {
      ++t_.counts.gpu_user_annotations;
    }
  }

  void ReadGpu(const EventFields& f, GpuEvent::Kind kind);
  void ReadHost(const EventFields& f, HostEvent::Kind kind, int32_t api);

  KinetoTrace& t_;
};

void EventReader::ReadGpu(const EventFields& f, GpuEvent::Kind kind) {
  GpuEvent g;
  g.kind = kind;
  g.name = f.name;
  g.start_ns = f.StartNs();
  g.end_ns = f.EndNs();
  g.pid = f.Pid();
  g.tid = f.Tid();
  g.metrics_begin = g.metrics_end = static_cast<uint32_t>(t_.metrics.size());
  dom::object args;
  if (f.has_args && !f.args.get_object().get(args)) {
    for (dom::key_value_pair kv : args) {
      const std::string_view k = kv.key;
      if (k == "device") {
        g.device = U32(kv.value), g.has_device = true;
      } else if (k == "context") {
        g.context = U32(kv.value);
      } else if (k == "stream") {
        g.stream = U32(kv.value);
      } else if (k == "correlation") {
        g.correlation = U64(kv.value), g.has_correlation = true;
      } else if (k == "External id") {
        g.external_id = I64(kv.value);
      } else if (k == "grid") {
        ReadTriple(kv.value, g.grid);
      } else if (k == "block") {
        ReadTriple(kv.value, g.block);
      } else if (k == "registers per thread") {
        g.registers_per_thread = U32(kv.value);
      } else if (k == "shared memory") {
        g.shared_memory = U32(kv.value);
      } else if (k == "bytes") {
        g.bytes = U64(kv.value);
      } else if (kind == GpuEvent::Kind::kProfilerRange &&
                 IsNumber(kv.value)) {
        t_.metrics.push_back({k, Number(kv.value)});
      }
    }
  }
  g.metrics_end = static_cast<uint32_t>(t_.metrics.size());
  t_.gpu.push_back(g);
}

void EventReader::ReadHost(const EventFields& f, HostEvent::Kind kind,
                           int32_t api) {
  HostEvent h;
  h.kind = kind;
  h.name = f.name;
  h.start_ns = f.StartNs();
  h.end_ns = f.EndNs();
  h.pid = f.Pid();
  h.tid = f.Tid();
  h.api_kind = api;
  dom::element dims, types;
  bool has_dims = false, has_types = false;
  dom::object args;
  if (f.has_args && !f.args.get_object().get(args)) {
    for (dom::key_value_pair kv : args) {
      const std::string_view k = kv.key;
      if (k == "correlation") {
        h.correlation = U64(kv.value), h.has_correlation = true;
      } else if (k == "External id") {
        h.external_id = I64(kv.value);
      } else if (k == "Input Dims") {
        dims = kv.value, has_dims = true;
      } else if (k == "Input type") {
        types = kv.value, has_types = true;
      }
    }
  }
  if (kind == HostEvent::Kind::kGemmOp) {
    if (!has_dims || !has_types) {
      ++t_.counts.gemm_ops_without_shapes;
      return;
    }
    OpInputs in;
    ReadInputs(dims, types, &in);
    h.inputs = static_cast<int32_t>(t_.op_inputs.size());
    t_.op_inputs.push_back(in);
  }
  t_.host.push_back(h);
}

}  // namespace

namespace {

void ReadDevices(dom::element e, std::vector<DeviceProps>* out) {
  dom::array a;
  if (e.get_array().get(a)) return;
  for (dom::element d : a) {
    dom::object o;
    if (d.get_object().get(o)) continue;
    DeviceProps p;
    for (dom::key_value_pair kv : o) {
      const std::string_view k = kv.key;
      if (k == "id") {
        p.id = U32(kv.value);
      } else if (k == "name") {
        p.name = Str(kv.value);
      } else if (k == "numSms") {
        p.sm_count = U32(kv.value);
      } else if (k == "computeMajor") {
        p.cc_major = U32(kv.value);
      } else if (k == "computeMinor") {
        p.cc_minor = U32(kv.value);
      } else if (k == "totalGlobalMem") {
        p.global_memory_bytes = U64(kv.value);
      }
    }
    out->push_back(p);
  }
}

// Where a text simdjson refused breaks, for the message: line, column and
// byte offset from the strict checker (base/json_checker.h), which re-reads
// it only on this path.
Status SyntaxError(const std::string& path, std::string_view text,
                   simdjson::error_code code) {
  const json::internal::CheckResult check =
      json::internal::CheckText(text, path);
  const std::string fix =
      "; the file is damaged or was cut short: save the trace again "
      "(torch.profiler export_chrome_trace)";
  if (!check.status.ok()) {
    // The checker says "PATH:LINE:COLUMN: what".
    std::string where = check.status.message();
    if (where.compare(0, path.size() + 1, path + ":") == 0) {
      where.erase(0, path.size() + 1);
    }
    return Corrupt(path + ": JSON syntax error at byte " +
                   std::to_string(check.offset) + " (line:column " + where +
                   ")" + fix);
  }
  return Corrupt(path + ": not JSON rooftrace can read (" +
                 simdjson::error_message(code) + ")" + fix);
}

}  // namespace

KinetoTrace::KinetoTrace() : impl_(std::make_unique<Impl>()) {}
KinetoTrace::~KinetoTrace() = default;

size_t KinetoTrace::Padding() { return simdjson::SIMDJSON_PADDING; }

StatusOr<std::unique_ptr<KinetoTrace>> KinetoTrace::Parse(
    std::string text, size_t content_size, const std::string& path) {
  std::unique_ptr<KinetoTrace> t(new KinetoTrace());
  t->impl_->text = std::move(text);
  const std::string& buf = t->impl_->text;
  if (buf.size() < content_size + Padding()) {
    return InternalError(path + ": JSON text given without its padding");
  }
  dom::element root;
  const simdjson::error_code err =
      t->impl_->parser.parse(buf.data(), content_size, false).get(root);
  if (err) return SyntaxError(path, {buf.data(), content_size}, err);
  dom::array events;
  bool has_events = false;
  dom::object top;
  if (!root.get_object().get(top)) {
    for (dom::key_value_pair kv : top) {
      const std::string_view k = kv.key;
      if (k == "traceEvents") {
        has_events = !kv.value.get_array().get(events);
      } else if (k == "deviceProperties") {
        ReadDevices(kv.value, &t->devices);
      } else if (k == "schemaVersion") {
        t->schema_version = I64(kv.value);
      } else if (k == "distributedInfo") {
        dom::element rank;
        if (!kv.value["rank"].get(rank) && IsNumber(rank)) t->rank = I64(rank);
      }
    }
  } else {
    // The Chrome trace format's other form: a bare array of events.
    has_events = !root.get_array().get(events);
  }
  if (!has_events) {
    return InvalidArgument(path +
                           ": JSON without a \"traceEvents\" array: not a "
                           "Chrome trace (PyTorch profiler) file");
  }
  EventReader reader(t.get());
  for (dom::element e : events) {
    dom::object o;
    if (!e.get_object().get(o)) reader.Read(o);
  }
  return t;
}

}  // namespace rooftrace::kineto
