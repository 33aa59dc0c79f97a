#include "sources/kineto/kineto_trace.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <type_traits>
#include <unordered_map>

#include "base/json_checker.h"
#include "model/ops.h"
#include "sources/kineto/op_shapes.h"
#include "sources/nsys/cuda_api_names.h"

namespace rooftrace::kineto {

namespace od = simdjson::ondemand;
using simdjson::error_code;

namespace {

// The strings the kept events name, each distinct one copied once, so
// that the text they were read from can go: a trace names a few thousand
// kernels and operators among millions of events. Views stay valid while
// the pool lives (blocks never move).
class StringPool {
 public:
  std::string_view Keep(std::string_view s) { return ById(Id(s)); }
  // The same as a number (0: the empty string), four bytes where a view
  // would take sixteen.
  uint32_t Id(std::string_view s) {
    if (s.empty()) return 0;
    if (auto it = kept_.find(s); it != kept_.end()) return it->second;
    if (left_ < s.size()) {
      const size_t n = std::max(kBlock, s.size());
      blocks_.push_back(std::make_unique<char[]>(n));
      next_ = blocks_.back().get();
      left_ = n;
    }
    std::memcpy(next_, s.data(), s.size());
    const std::string_view kept(next_, s.size());
    next_ += s.size();
    left_ -= s.size();
    by_id_.push_back(kept);
    const auto id = static_cast<uint32_t>(by_id_.size() - 1);
    kept_.emplace(kept, id);
    return id;
  }
  std::string_view ById(uint32_t id) const { return by_id_[id]; }

 private:
  static constexpr size_t kBlock = size_t{64} << 10;
  std::unordered_map<std::string_view, uint32_t> kept_;
  std::vector<std::string_view> by_id_{std::string_view()};
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  size_t left_ = 0;
};

}  // namespace

struct KinetoTrace::Impl {
  // The text being read (the whole file, or the window of it being
  // streamed); freed once the events are read: what the trace keeps
  // names strings in `pool`.
  std::string text;
  // The top-level object without its events, when read in chunks.
  std::string top;
  od::parser parser;
  std::deque<std::string> unescaped;  // the few strings with escapes
  StringPool pool;
};

namespace {

#define KT_TRY(expr)                               \
  do {                                             \
    if (const error_code e_ = (expr); e_) return e_; \
  } while (0)

// A JSON number, whatever its form (integer, with a fraction); `ok` false
// for any other value, which is left unread (and so skipped).
struct Num {
  bool ok = false;
  bool is_double = false;
  double d = 0;
  int64_t i = 0;
  uint64_t u = 0;  // integers >= 2^63
  bool is_u = false;

  uint64_t U64() const {
    if (!ok) return 0;
    if (is_double) {
      return d > 0 && d < 1.8e19 ? static_cast<uint64_t>(std::llround(d)) : 0;
    }
    if (is_u) return u;
    return i > 0 ? static_cast<uint64_t>(i) : 0;
  }
  uint32_t U32() const {
    const uint64_t v = U64();
    return v > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(v);
  }
  int64_t I64(int64_t fallback = -1) const {
    if (!ok) return fallback;
    if (is_double) return static_cast<int64_t>(d);
    return is_u ? static_cast<int64_t>(u) : i;
  }
  double Double() const {
    if (!ok) return 0;
    return is_double ? d : is_u ? static_cast<double>(u)
                                : static_cast<double>(i);
  }
  // Microseconds (integer, or with a fraction down to ns and beyond) ->
  // nanoseconds, rounded. A double holds today's epoch-based µs with a
  // fraction to about 0.1 ns, so the rounding is exact for ns fractions.
  uint64_t NsOfMicros() const {
    if (!ok) return 0;
    if (!is_double) return U64() * 1000;
    const double v = d * 1000.0;
    return v > 0 && v < 1.8e19 ? static_cast<uint64_t>(std::llround(v)) : 0;
  }
};

error_code ReadNum(od::value v, Num* out) {
  *out = Num();
  od::json_type t;
  KT_TRY(v.type().get(t));
  if (t != od::json_type::number) return simdjson::SUCCESS;
  od::number n;
  KT_TRY(v.get_number().get(n));
  out->ok = true;
  if (n.is_double()) {
    out->is_double = true;
    out->d = n.get_double();
  } else if (n.is_uint64()) {
    out->is_u = true;
    out->u = n.get_uint64();
  } else {
    out->i = n.get_int64();
  }
  return simdjson::SUCCESS;
}

// A process or thread id: a number, or a number written as a string
// (PyTorch 1.8's traces: "tid": "24610"). Other strings ("stream 7") are
// not ids: `out` stays not ok.
error_code ReadId(od::value v, Num* out) {
  *out = Num();
  od::json_type t;
  KT_TRY(v.type().get(t));
  if (t != od::json_type::string) return ReadNum(v, out);
  std::string_view text;
  KT_TRY(v.get_string().get(text));
  int64_t id = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) {
    out->ok = true;
    out->i = id;
  }
  return simdjson::SUCCESS;
}

// Appends code point `c` as UTF-8.
void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    *out += static_cast<char>(c);
  } else if (c < 0x800) {
    *out += static_cast<char>(0xC0 | (c >> 6));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *out += static_cast<char>(0xE0 | (c >> 12));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (c >> 18));
    *out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

uint32_t Hex4(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
  }
  return v;
}

}  // namespace

namespace {

// Strings are read in place (the text stays alive with the trace): a view
// of the raw text up to its closing quote, or, for the rare string with
// escapes (the parser has checked them), an unescaped copy.
class StringReader {
 public:
  explicit StringReader(std::deque<std::string>* store) : store_(*store) {}

  std::string_view View(od::raw_json_string raw) {
    const char* p = raw.raw();
    size_t n = 0;
    bool escaped = false;
    while (p[n] != '"') {
      if (p[n] == '\\') {
        escaped = true;
        ++n;
      }
      ++n;
    }
    if (!escaped) return {p, n};
    return Unescape(p, n);
  }

  // The string value `v`, or empty for another type (left unread).
  error_code Get(od::value v, std::string_view* out) {
    *out = {};
    od::json_type t;
    KT_TRY(v.type().get(t));
    if (t != od::json_type::string) return simdjson::SUCCESS;
    od::raw_json_string raw;
    KT_TRY(v.get_raw_json_string().get(raw));
    *out = View(raw);
    return simdjson::SUCCESS;
  }

 private:
  std::string_view Unescape(const char* p, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      if (p[i] != '\\') {
        s += p[i];
        continue;
      }
      const char e = p[++i];
      switch (e) {
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'n': s += '\n'; break;
        case 'r': s += '\r'; break;
        case 't': s += '\t'; break;
        case 'u': {
          uint32_t c = Hex4(p + i + 1);
          i += 4;
          if (c >= 0xD800 && c < 0xDC00 && i + 6 < n && p[i + 1] == '\\') {
            const uint32_t lo = Hex4(p + i + 3);
            c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
          AppendUtf8(c, &s);
          break;
        }
        default: s += e;  // " \ /
      }
    }
    store_.push_back(std::move(s));
    return store_.back();
  }

  std::deque<std::string>& store_;
};

}  // namespace

namespace {

// Everything rooftrace may want from one event, whatever its category and
// field order; reused from event to event (no allocation per event).
struct Scratch {
  od::raw_json_string ph, cat;
  bool has_ph = false, has_cat = false;
  std::string_view name, arg_name, kernel_arg;
  Num ts, dur, pid, tid, id;
  Num device, context, stream, correlation, external_id, registers, shared,
      bytes;
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  bool has_dims = false, has_types = false;
  OpInputs inputs;
  std::string_view types[kMaxOpInputs];
  int type_count = 0;
  std::string_view concrete[kMaxOpInputs];
  int concrete_count = 0;
  // "Input Strides" as the trace wrote it (read only for the operators
  // whose figures use it: AddHost), then one row per input (rank -1: not
  // one tensor's).
  std::string_view strides_json;
  int64_t strides[kMaxOpInputs][kMaxRank] = {};
  int stride_rank[kMaxOpInputs] = {};
  int stride_count = 0;
  std::vector<Metric> numeric;  // every numeric arg, for profiler ranges
  CommArgs comm;
  bool has_comm = false;  // a "Collective name" arg

  void Reset() {
    has_ph = has_cat = has_dims = has_types = false;
    name = arg_name = kernel_arg = {};
    ts = dur = pid = tid = id = Num();
    device = context = stream = correlation = external_id = registers =
        shared = bytes = Num();
    for (int i = 0; i < 3; ++i) grid[i] = block[i] = 0;
    inputs.count = 0;
    type_count = 0;
    concrete_count = 0;
    strides_json = {};
    stride_count = 0;
    numeric.clear();
    comm = CommArgs();
    has_comm = false;
  }
  bool Ph(std::string_view v) const { return has_ph && ph == v; }
  bool Cat(std::string_view v) const { return has_cat && cat == v; }
};

class EventReader {
 public:
  EventReader(KinetoTrace* trace, std::deque<std::string>* strings,
              StringPool* pool)
      : t_(*trace), strings_(strings), pool_(*pool) {}

  error_code Read(od::object event);

 private:
  error_code ReadFields(od::object event);
  error_code ReadArgs(od::object args);
  error_code ReadTriple(od::value v, uint32_t out[3]);
  error_code ReadDims(od::value v);
  error_code AddListTensor(od::value shape, OpInput* in);
  error_code ReadTypes(od::value v);
  void ParseStrides();
  error_code ReadStrings(od::value v, std::string_view* out, int* count);
  void Dispatch();
  void AddGpu(GpuEvent::Kind kind);
  void AddHost(HostEvent::Kind kind, int32_t api);
  CommArgs KeepComm() {
    CommArgs c = s_.comm;
    c.collective = pool_.Keep(c.collective);
    c.dtype = pool_.Keep(c.dtype);
    return c;
  }

  KinetoTrace& t_;
  StringReader strings_;
  StringPool& pool_;
  Scratch s_;
};

error_code EventReader::Read(od::object event) {
  ++t_.counts.events;
  s_.Reset();
  KT_TRY(ReadFields(event));
  Dispatch();
  return simdjson::SUCCESS;
}

error_code EventReader::ReadFields(od::object event) {
  for (auto field : event) {
    od::field f;
    KT_TRY(std::move(field).get(f));
    const od::raw_json_string k = f.key();
    od::value v = f.value();
    if (k == "ph") {
      s_.has_ph = !v.get_raw_json_string().get(s_.ph);
    } else if (k == "cat") {
      s_.has_cat = !v.get_raw_json_string().get(s_.cat);
    } else if (k == "name") {
      KT_TRY(strings_.Get(v, &s_.name));
    } else if (k == "ts") {
      KT_TRY(ReadNum(v, &s_.ts));
    } else if (k == "dur") {
      KT_TRY(ReadNum(v, &s_.dur));
    } else if (k == "pid") {
      KT_TRY(ReadId(v, &s_.pid));
    } else if (k == "tid") {
      KT_TRY(ReadId(v, &s_.tid));
    } else if (k == "id") {
      KT_TRY(ReadNum(v, &s_.id));
    } else if (k == "args") {
      od::json_type type;
      KT_TRY(v.type().get(type));
      if (type != od::json_type::object) continue;
      od::object args;
      KT_TRY(v.get_object().get(args));
      KT_TRY(ReadArgs(args));
    }
  }
  return simdjson::SUCCESS;
}

error_code EventReader::ReadArgs(od::object args) {
  for (auto field : args) {
    od::field f;
    KT_TRY(std::move(field).get(f));
    const od::raw_json_string k = f.key();
    od::value v = f.value();
    if (k == "grid") {
      KT_TRY(ReadTriple(v, s_.grid));
    } else if (k == "block") {
      KT_TRY(ReadTriple(v, s_.block));
    } else if (k == "Input Dims" || k == "Input dims") {  // dims: PyTorch 1.8
      KT_TRY(ReadDims(v));
    } else if (k == "Input type") {
      KT_TRY(ReadTypes(v));
    } else if (k == "Concrete Inputs") {
      KT_TRY(ReadStrings(v, s_.concrete, &s_.concrete_count));
    } else if (k == "Input Strides") {
      // Skipped over as text here: most cpu_ops are not modelled, and
      // reading every stride cost 3% of a serving trace's parse.
      od::json_type type;
      KT_TRY(v.type().get(type));
      if (type != od::json_type::array) continue;
      od::array strides;
      KT_TRY(v.get_array().get(strides));
      KT_TRY(strides.raw_json().get(s_.strides_json));
    } else if (k == "name") {
      KT_TRY(strings_.Get(v, &s_.arg_name));
    } else if (k == "kernel") {
      KT_TRY(strings_.Get(v, &s_.kernel_arg));
    } else if (k == "Collective name") {
      KT_TRY(strings_.Get(v, &s_.comm.collective));
      s_.has_comm = true;
    } else if (k == "dtype") {
      KT_TRY(strings_.Get(v, &s_.comm.dtype));
    } else {
      Num n;
      KT_TRY(ReadNum(v, &n));
      if (!n.ok) continue;
      if (k == "device") s_.device = n;
      else if (k == "context") s_.context = n;
      else if (k == "stream") s_.stream = n;
      else if (k == "correlation") s_.correlation = n;
      else if (k == "External id" || k == "external id") s_.external_id = n;
      else if (k == "registers per thread") s_.registers = n;
      else if (k == "shared memory") s_.shared = n;
      else if (k == "bytes") s_.bytes = n;
      else if (k == "In msg nelems") s_.comm.in_elements = n.I64();
      else if (k == "Out msg nelems") s_.comm.out_elements = n.I64();
      else if (k == "Group size") s_.comm.group_size = n.I64();
      else s_.numeric.push_back({strings_.View(k), n.Double()});
    }
  }
  return simdjson::SUCCESS;
}

error_code EventReader::ReadTriple(od::value v, uint32_t out[3]) {
  od::json_type type;
  KT_TRY(v.type().get(type));
  if (type != od::json_type::array) return simdjson::SUCCESS;
  od::array a;
  KT_TRY(v.get_array().get(a));
  int i = 0;
  for (auto element : a) {
    od::value e;
    KT_TRY(std::move(element).get(e));
    Num n;
    KT_TRY(ReadNum(e, &n));
    if (i < 3) out[i++] = n.U32();
  }
  return simdjson::SUCCESS;
}

}  // namespace

namespace {

// "Input Dims": one array per input, of numbers (a tensor's shape), of
// arrays (a list of tensors: not one tensor) or empty (a scalar, None).
error_code EventReader::ReadDims(od::value v) {
  od::json_type type;
  KT_TRY(v.type().get(type));
  if (type != od::json_type::array) return simdjson::SUCCESS;
  s_.has_dims = true;
  od::array inputs;
  KT_TRY(v.get_array().get(inputs));
  for (auto element : inputs) {
    od::value input;
    KT_TRY(std::move(element).get(input));
    if (s_.inputs.count == kMaxOpInputs) continue;
    OpInput& in = s_.inputs.in[s_.inputs.count++];
    in = OpInput();
    KT_TRY(input.type().get(type));
    if (type != od::json_type::array) continue;
    od::array dims;
    KT_TRY(input.get_array().get(dims));
    int rank = 0;
    for (auto d : dims) {
      od::value dv;
      KT_TRY(std::move(d).get(dv));
      KT_TRY(dv.type().get(type));
      if (type == od::json_type::array) {  // one tensor of a list
        rank = -1;
        KT_TRY(AddListTensor(dv, &in));
        continue;
      }
      Num n;
      KT_TRY(ReadNum(dv, &n));
      if (!n.ok || rank == kMaxRank) {
        rank = -1;  // too many dimensions
        continue;
      }
      if (rank >= 0) in.dims[rank++] = n.I64(0);
    }
    in.rank = rank;
  }
  return simdjson::SUCCESS;
}

// One tensor's shape inside a list input: counted into the list's size
// and elements (a shape that is not numbers leaves the list unknown).
error_code EventReader::AddListTensor(od::value shape, OpInput* in) {
  od::array dims;
  KT_TRY(shape.get_array().get(dims));
  int64_t elements = 1;
  for (auto d : dims) {
    od::value dv;
    KT_TRY(std::move(d).get(dv));
    Num n;
    KT_TRY(ReadNum(dv, &n));
    const int64_t v = n.ok ? n.I64(-1) : -1;
    if (v < 0 || (v > 0 && elements > INT64_MAX / v)) {
      in->list_size = -1;
      return simdjson::SUCCESS;
    }
    elements *= v;
  }
  if (in->list_size < 0) return simdjson::SUCCESS;
  if (in->list_elements > INT64_MAX - elements) {
    in->list_size = -1;
    return simdjson::SUCCESS;
  }
  ++in->list_size;
  in->list_elements += elements;
  return simdjson::SUCCESS;
}

// "Input Strides" (s_.strides_json): one array per input, as "Input
// Dims" (numbers for a tensor, arrays for a list, empty for a scalar), in
// elements. The text is On-Demand's raw JSON of an array it has checked
// the structure of; a number that does not read leaves its input without
// strides.
void EventReader::ParseStrides() {
  std::string_view t = s_.strides_json;
  s_.stride_count = 0;
  int depth = 0;
  int at = -1;  // the input being read
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '[') {
      ++depth;
      if (depth == 2) {
        if (s_.stride_count == kMaxOpInputs) return;
        at = s_.stride_count++;
        s_.stride_rank[at] = 0;
      } else if (depth > 2 && at >= 0) {
        s_.stride_rank[at] = -1;  // a list's tensors: not kept
      }
    } else if (c == ']') {
      --depth;
    } else if (depth == 2 && at >= 0 && (c == '-' || (c >= '0' && c <= '9'))) {
      int64_t v = 0;
      const auto r = std::from_chars(t.data() + i, t.data() + t.size(), v);
      const bool whole = r.ptr == t.data() + t.size() ||
                         (*r.ptr != '.' && *r.ptr != 'e' && *r.ptr != 'E');
      if (r.ec != std::errc() || !whole || s_.stride_rank[at] < 0 ||
          s_.stride_rank[at] == kMaxRank) {
        s_.stride_rank[at] = -1;
      } else {
        s_.strides[at][s_.stride_rank[at]++] = v;
      }
      if (r.ptr > t.data() + i) i = static_cast<size_t>(r.ptr - t.data()) - 1;
    }
  }
}

error_code EventReader::ReadTypes(od::value v) {
  od::json_type type;
  KT_TRY(v.type().get(type));
  if (type != od::json_type::array) return simdjson::SUCCESS;
  s_.has_types = true;
  return ReadStrings(v, s_.types, &s_.type_count);
}

// An array of strings, one per input; what is not a string reads as empty.
// Dims, types and concrete values may come in any order: they are kept
// aside until the event ends.
error_code EventReader::ReadStrings(od::value v, std::string_view* out,
                                    int* count) {
  od::json_type type;
  KT_TRY(v.type().get(type));
  if (type != od::json_type::array) return simdjson::SUCCESS;
  od::array values;
  KT_TRY(v.get_array().get(values));
  int i = 0;
  for (auto element : values) {
    od::value t;
    KT_TRY(std::move(element).get(t));
    std::string_view name;
    KT_TRY(strings_.Get(t, &name));
    if (i < kMaxOpInputs) out[i++] = name;
  }
  *count = i;
  return simdjson::SUCCESS;
}

}  // namespace

namespace {

void EventReader::Dispatch() {
  if (s_.Ph("M")) {
    if (s_.name == "process_name" && !s_.arg_name.empty()) {
      t_.process_names.emplace_back(s_.pid.I64(), pool_.Keep(s_.arg_name));
    }
    return;
  }
  if (s_.Ph("f") && s_.Cat("ac2g") && s_.id.ok) {
    t_.flow_ends.push_back(
        {s_.pid.I64(), s_.tid.I64(), s_.ts.NsOfMicros(), s_.id.U64()});
    return;
  }
  if (!s_.Ph("X") || !s_.has_cat) return;
  // The capitalized names are the categories of PyTorch 1.8-1.9's traces
  // (Kernel, Memcpy, Memset, Runtime, Operator), where record_function
  // ranges, ProfilerStep#N among them, were operators.
  if (s_.Cat("kernel") || s_.Cat("Kernel")) {
    AddGpu(GpuEvent::Kind::kKernel);
  } else if (s_.Cat("gpu_memcpy") || s_.Cat("Memcpy")) {
    AddGpu(GpuEvent::Kind::kMemcpy);
  } else if (s_.Cat("gpu_memset") || s_.Cat("Memset")) {
    AddGpu(GpuEvent::Kind::kMemset);
  } else if (s_.Cat("cuda_profiler_range")) {
    AddGpu(GpuEvent::Kind::kProfilerRange);
  } else if (s_.Cat("cuda_runtime") || s_.Cat("cuda_driver") ||
             s_.Cat("Runtime")) {
    const int32_t kind = nsys::ClassifyCudaApi(s_.name);
    if (kind != 0) {
      AddHost(HostEvent::Kind::kLaunch, kind);
    } else if (s_.name.find("StreamBeginCapture") != std::string_view::npos) {
      AddHost(HostEvent::Kind::kCapture, 1);
    } else if (s_.name.find("StreamEndCapture") != std::string_view::npos) {
      AddHost(HostEvent::Kind::kCapture, 2);
    }
  } else if (s_.Cat("Operator") &&
             s_.name.substr(0, 13) == "ProfilerStep#") {
    AddHost(HostEvent::Kind::kAnnotation, 0);
  } else if (s_.Cat("cpu_op") || s_.Cat("Operator")) {
    if (s_.has_comm && s_.external_id.ok) {
      // record_param_comms, nccl:all_reduce, ...: found again by External
      // id from a kernel whose own args lack the collective's.
      t_.comm_ops.push_back({s_.external_id.I64(),
                             static_cast<int32_t>(t_.comms.size())});
      t_.comms.push_back(KeepComm());
    }
    if (IsGemmOp(s_.name)) {
      AddHost(HostEvent::Kind::kGemmOp, 0);
    } else if (IsModelledOp(s_.name)) {
      AddHost(HostEvent::Kind::kModelledOp, 0);
    }
  } else if (s_.Cat("user_annotation")) {
    AddHost(HostEvent::Kind::kAnnotation, 0);
  } else if (s_.Cat("gpu_user_annotation")) {
    ++t_.counts.gpu_user_annotations;
  }
}

void EventReader::AddGpu(GpuEvent::Kind kind) {
  GpuEvent g;
  g.kind = kind;
  g.name = pool_.Keep(s_.name);
  g.start_ns = s_.ts.NsOfMicros();
  g.end_ns = g.start_ns + s_.dur.NsOfMicros();
  g.pid = s_.pid.I64();
  g.tid = s_.tid.I64();
  g.device = s_.device.U32();
  g.has_device = s_.device.ok;
  g.context = s_.context.U32();
  g.stream = s_.stream.U32();
  g.correlation = s_.correlation.U64();
  g.has_correlation = s_.correlation.ok;
  g.external_id = s_.external_id.I64();
  for (int i = 0; i < 3; ++i) g.grid[i] = s_.grid[i], g.block[i] = s_.block[i];
  g.registers_per_thread = s_.registers.U32();
  g.shared_memory = s_.shared.U32();
  g.bytes = s_.bytes.U64();
  g.metrics_begin = static_cast<uint32_t>(t_.metrics.size());
  if (kind == GpuEvent::Kind::kProfilerRange) {
    for (const Metric& m : s_.numeric) {
      t_.metrics.push_back({pool_.Keep(m.name), m.value});
    }
  }
  g.metrics_end = static_cast<uint32_t>(t_.metrics.size());
  if (kind == GpuEvent::Kind::kKernel && s_.has_comm) {
    g.comm = static_cast<int32_t>(t_.comms.size());
    t_.comms.push_back(KeepComm());
  }
  t_.gpu.push_back(g);
}

// The product of a tensor input's dimensions.
int64_t ElementsOf(const OpInput& in) {
  int64_t p = 1;
  for (int i = 0; i < in.rank; ++i) p *= in.dims[i];
  return p;
}

void EventReader::AddHost(HostEvent::Kind kind, int32_t api) {
  HostEvent h;
  h.kind = kind;
  h.name = pool_.Keep(s_.name);
  h.start_ns = s_.ts.NsOfMicros();
  h.end_ns = h.start_ns + s_.dur.NsOfMicros();
  h.pid = s_.pid.I64();
  h.tid = s_.tid.I64();
  h.api_kind = api;
  h.correlation = s_.correlation.U64();
  h.has_correlation = s_.correlation.ok;
  h.external_id = s_.external_id.I64();
  h.kernel = pool_.Keep(s_.kernel_arg);
  if (kind == HostEvent::Kind::kGemmOp ||
      kind == HostEvent::Kind::kModelledOp) {
    if (!s_.has_dims || !s_.has_types) {
      ++(kind == HostEvent::Kind::kGemmOp
             ? t_.counts.gemm_ops_without_shapes
             : t_.counts.modelled_ops_without_shapes);
      return;
    }
    h.inputs = static_cast<int32_t>(t_.op_inputs.size());
    h.input_count = s_.inputs.count;
    if (!s_.strides_json.empty()) ParseStrides();
    for (int i = 0; i < s_.inputs.count; ++i) {
      const OpInput& in = s_.inputs.in[i];
      PackedInput p;
      p.type = i < s_.type_count ? pool_.Id(s_.types[i]) : 0;
      p.concrete = i < s_.concrete_count ? pool_.Id(s_.concrete[i]) : 0;
      p.rank = in.rank;
      p.list_size = in.list_size;
      p.dims = static_cast<uint32_t>(t_.op_dims.size());
      // The dimensions up to the last one not zero (the rest read as
      // zero), then a list's element count.
      int n = kMaxRank;
      while (n > 0 && in.dims[n - 1] == 0) --n;
      p.dim_count = static_cast<uint8_t>(n);
      t_.op_dims.insert(t_.op_dims.end(), in.dims, in.dims + n);
      if (in.list_elements != 0) {
        p.has_list_elements = true;
        t_.op_dims.push_back(in.list_elements);
      }
      // Strides are kept only where they change what the tensor holds (a
      // broadcast dimension): most tensors are contiguous, and a trace's
      // memory is mostly its operators' inputs.
      if (i < s_.stride_count && in.rank > 0 &&
          s_.stride_rank[i] == in.rank &&
          StoredElements(in.dims, s_.strides[i], in.rank) <
              ElementsOf(in)) {
        p.has_strides = true;
        t_.op_dims.insert(t_.op_dims.end(), s_.strides[i],
                          s_.strides[i] + in.rank);
      }
      t_.op_inputs.push_back(p);
    }
  }
  t_.host.push_back(h);
}

}  // namespace

namespace {

error_code ReadDevice(od::object o, StringReader* strings, DeviceProps* p) {
  for (auto field : o) {
    od::field f;
    KT_TRY(std::move(field).get(f));
    const od::raw_json_string k = f.key();
    od::value v = f.value();
    if (k == "name") {
      KT_TRY(strings->Get(v, &p->name));
      continue;
    }
    Num n;
    KT_TRY(ReadNum(v, &n));
    // numSms / computeMajor / computeMinor; PyTorch 1.8's
    // computeProperties say multiProcessorCount / major / minor.
    if (k == "id") p->id = n.U32();
    else if (k == "numSms" || k == "multiProcessorCount") p->sm_count = n.U32();
    else if (k == "computeMajor" || k == "major") p->cc_major = n.U32();
    else if (k == "computeMinor" || k == "minor") p->cc_minor = n.U32();
    else if (k == "totalGlobalMem") p->global_memory_bytes = n.U64();
  }
  return simdjson::SUCCESS;
}

error_code ReadDevices(od::value v, StringReader* strings,
                       std::vector<DeviceProps>* out) {
  od::json_type type;
  KT_TRY(v.type().get(type));
  if (type != od::json_type::array) return simdjson::SUCCESS;
  od::array a;
  KT_TRY(v.get_array().get(a));
  for (auto element : a) {
    od::value d;
    KT_TRY(std::move(element).get(d));
    KT_TRY(d.type().get(type));
    if (type != od::json_type::object) continue;
    od::object o;
    KT_TRY(d.get_object().get(o));
    DeviceProps p;
    KT_TRY(ReadDevice(o, strings, &p));
    out->push_back(p);
  }
  return simdjson::SUCCESS;
}

error_code ReadEvents(od::array events, EventReader* reader) {
  for (auto element : events) {
    od::value e;
    KT_TRY(std::move(element).get(e));
    od::json_type type;
    KT_TRY(e.type().get(type));
    if (type != od::json_type::object) continue;
    od::object o;
    KT_TRY(e.get_object().get(o));
    KT_TRY(reader->Read(o));
  }
  return simdjson::SUCCESS;
}

// The top-level object's members rooftrace reads; *has_events when it
// held a "traceEvents" array.
error_code ReadTop(od::object top, KinetoTrace* t, EventReader* reader,
                   StringReader* strings, bool* has_events) {
  for (auto field : top) {
    od::field f;
    KT_TRY(std::move(field).get(f));
    const od::raw_json_string k = f.key();
    od::value v = f.value();
    od::json_type type;
    KT_TRY(v.type().get(type));
    if (k == "traceEvents" && type == od::json_type::array) {
      *has_events = true;
      od::array events;
      KT_TRY(v.get_array().get(events));
      KT_TRY(ReadEvents(events, reader));
    } else if (k == "deviceProperties" || k == "computeProperties") {
      KT_TRY(ReadDevices(v, strings, &t->devices));
    } else if (k == "schemaVersion") {
      Num n;
      KT_TRY(ReadNum(v, &n));
      t->schema_version = n.I64();
    } else if (k == "distributedInfo" && type == od::json_type::object) {
      od::object info;
      KT_TRY(v.get_object().get(info));
      for (auto member : info) {
        od::field m;
        KT_TRY(std::move(member).get(m));
        const bool rank = m.key() == "rank";
        if (!rank && m.key() != "world_size") continue;
        Num n;
        KT_TRY(ReadNum(m.value(), &n));
        if (n.ok) (rank ? t->rank : t->world_size) = n.I64();
      }
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace

namespace {

error_code ReadDocument(od::document& doc, KinetoTrace* t, EventReader* reader,
                        StringReader* strings, bool* has_events) {
  od::json_type type;
  KT_TRY(doc.type().get(type));
  if (type == od::json_type::object) {
    od::object top;
    KT_TRY(doc.get_object().get(top));
    KT_TRY(ReadTop(top, t, reader, strings, has_events));
  } else if (type == od::json_type::array) {
    // The Chrome trace format's other form: a bare array of events.
    *has_events = true;
    od::array events;
    KT_TRY(doc.get_array().get(events));
    KT_TRY(ReadEvents(events, reader));
  }
  return simdjson::SUCCESS;
}

// Where a text simdjson refused breaks, for the message: line, column and
// byte offset from the strict checker (base/json_checker.h), which re-reads
// it only on this path.
Status SyntaxError(const std::string& path, std::string_view text,
                   error_code code) {
  const std::string fix =
      "; the file is damaged or was cut short: save the trace again "
      "(torch.profiler export_chrome_trace)";
  if (code == simdjson::CAPACITY) {
    return InvalidArgument(path + ": " + std::to_string(text.size()) +
                           " bytes of JSON, more than the 4 GiB simdjson "
                           "parses at once; profile a shorter window");
  }
  const json::internal::CheckResult check =
      json::internal::CheckText(text, path);
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

// The values older PyTorch profilers wrote that JSON has no word for: a
// zero-duration copy's "memory bandwidth (GB/s)": inf, an unmeasured
// occupancy: nan, N/A. Longest first, so "-Infinity" is not read as "-inf".
constexpr std::string_view kNonJsonValues[] = {
    "-Infinity", "Infinity", "-inf", "-nan", "-NaN", "inf", "nan", "NaN",
    "N/A"};

// Rewrites, in place and at the same length, every such value (outside
// strings, where a value starts) as one JSON reads as missing: `null`, or
// `""` for three letters, padded with spaces. Returns how many it rewrote.
// Runs only after a parse failed, over the whole text.
uint64_t BlankNonJsonValues(std::string* text, size_t size) {
  uint64_t rewritten = 0;
  char* p = text->data();
  bool in_string = false;
  char last = 0;  // the last character outside strings that is not space
  for (size_t i = 0; i < size; ++i) {
    const char c = p[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
        last = '"';
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (last == ':' || last == ',' || last == '[') {
      for (std::string_view v : kNonJsonValues) {
        if (size - i < v.size() || std::string_view(p + i, v.size()) != v) {
          continue;
        }
        const size_t end = i + v.size();
        if (end < size && std::strchr(",]} \n\r\t", p[end]) == nullptr) {
          continue;  // a longer word: not this value
        }
        const std::string_view blank = v.size() >= 4 ? "null" : "\"\"";
        std::memcpy(p + i, blank.data(), blank.size());
        std::memset(p + i + blank.size(), ' ', v.size() - blank.size());
        ++rewritten;
        i = end - 1;
        break;
      }
    }
    last = p[i];
  }
  return rewritten;
}

}  // namespace

KinetoTrace::KinetoTrace() : impl_(std::make_unique<Impl>()) {}
KinetoTrace::~KinetoTrace() = default;

size_t KinetoTrace::Padding() { return simdjson::SIMDJSON_PADDING; }

OpInputs KinetoTrace::InputsOf(const HostEvent& h) const {
  OpInputs in;
  if (h.inputs < 0) return in;
  in.count = std::min(h.input_count, kMaxOpInputs);
  for (int i = 0; i < in.count; ++i) {
    const PackedInput& p = op_inputs[h.inputs + i];
    OpInput& out = in.in[i];
    out.rank = p.rank;
    out.list_size = p.list_size;
    out.type = impl_->pool.ById(p.type);
    out.concrete = impl_->pool.ById(p.concrete);
    const int64_t* dims = op_dims.data() + p.dims;
    std::copy(dims, dims + p.dim_count, out.dims);
    if (p.has_list_elements) out.list_elements = dims[p.dim_count];
    if (p.has_strides) {
      const int64_t* strides =
          dims + p.dim_count + (p.has_list_elements ? 1 : 0);
      out.has_strides = true;
      std::copy(strides, strides + p.rank, out.strides);
    }
  }
  return in;
}

namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The bytes the chunked reading overwrites (a separator between two events
// becomes the ']' of one chunk, then the '[' of the next), put back when
// it is done or gives up.
class Patches {
 public:
  explicit Patches(std::string* text) : text_(*text) {}
  ~Patches() { Restore(); }
  void Set(size_t at, char c) {
    saved_.emplace_back(at, text_[at]);
    text_[at] = c;
  }
  void Restore() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      text_[it->first] = it->second;
    }
    saved_.clear();
  }

 private:
  std::string& text_;
  std::vector<std::pair<size_t, char>> saved_;
};

}  // namespace

// Reads the "traceEvents" array a chunk of events at a time, so that
// simdjson's structural index (four bytes per JSON token: about as large
// as the text itself) covers one chunk rather than the whole file: the
// import's peak memory is then the text and little more. The rest of the
// top-level object (devices, rank, schema) is read from a small document
// made of what precedes the array's '[' and follows its ']'. Chunks end
// at a "}" "," "{" between two events; one that split anything else (a
// string holding those bytes, an array of objects) is not valid JSON on
// its own, so any doubt is an error, and the caller then reads the file
// whole. False when the file is not laid out so (a bare array, no
// "traceEvents" key found by a plain search) or a chunk does not parse;
// the trace's outputs are then partly filled and must be dropped.
bool KinetoTrace::ReadInChunks(size_t content, size_t chunk_bytes) {
  Impl& impl = *impl_;
  std::string& text = impl.text;
  size_t i = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
  while (i < content && IsSpace(text[i])) ++i;
  if (i >= content || text[i] != '{') return false;
  constexpr std::string_view kKey = "\"traceEvents\"";
  const size_t key = text.find(kKey, i);
  if (key == std::string::npos || key >= content) return false;
  size_t open = key + kKey.size();
  while (open < content && IsSpace(text[open])) ++open;
  if (open >= content || text[open] != ':') return false;
  ++open;
  while (open < content && IsSpace(text[open])) ++open;
  if (open >= content || text[open] != '[') return false;
  // The last ']' of the text: the array's when nothing after it holds one;
  // else the array is found to close earlier, in its last chunk.
  size_t last = content;
  while (last > open + 1 && text[last - 1] != ']') --last;
  if (last <= open + 1) return false;
  --last;

  EventReader reader(this, &impl.unescaped, &impl.pool);
  Patches patches(&text);
  size_t close = 0;  // the array's ']', once known
  size_t begin = open;  // the chunk's '['
  while (close == 0) {
    size_t end = last;  // the chunk's ']'
    for (size_t at = begin + chunk_bytes; at < last;) {
      const void* brace = memchr(&text[at], '}', last - at);
      if (brace == nullptr) break;
      const size_t b = static_cast<size_t>(static_cast<const char*>(brace) -
                                           text.data());
      size_t comma = b + 1;
      while (comma < last && IsSpace(text[comma])) ++comma;
      size_t next = comma + 1;
      while (next < last && IsSpace(text[next])) ++next;
      if (comma < last && text[comma] == ',' && next < last &&
          text[next] == '{') {
        end = comma;
        break;
      }
      at = b + 1;
    }
    if (end != last) patches.Set(end, ']');
    od::document doc;
    od::array events;
    if (impl.parser.iterate(&text[begin], end + 1 - begin, text.size() - begin)
            .get(doc) ||
        doc.get_array().get(events) || ReadEvents(events, &reader)) {
      return false;
    }
    ++counts.chunks;
    // Text after the chunk's array: the events' array closed there, and
    // what follows is the rest of the top-level object.
    const char* after = nullptr;
    if (doc.current_location().get(after) == simdjson::SUCCESS) {
      size_t c = static_cast<size_t>(after - text.data());
      while (c > begin && IsSpace(text[c - 1])) --c;
      if (c <= begin + 1 || c > end || text[c - 1] != ']') return false;
      close = c - 1;
    } else if (end == last) {
      close = last;
    } else {
      patches.Set(end, '[');
      begin = end;
    }
  }
  patches.Restore();

  // Everything but the events, checked and read as a document of its own.
  impl.top.reserve(open + 1 + (content - close) + Padding());
  impl.top.assign(text, 0, open + 1);
  impl.top.append(text, close, content - close);
  const size_t top_size = impl.top.size();
  impl.top.append(Padding(), '\0');
  StringReader strings(&impl.unescaped);
  bool has_events = false;
  od::document doc;
  error_code err =
      impl.parser.iterate(impl.top.data(), top_size, impl.top.size()).get(doc);
  if (!err) err = ReadDocument(doc, this, &reader, &strings, &has_events);
  return !err && has_events;
}

// Parse of a text whose non-JSON values were just blanked: a second blanking
// finds none, so this recurses once.
StatusOr<std::unique_ptr<KinetoTrace>> KinetoTrace::ParseAgain(
    std::string text, size_t content_size, const std::string& path,
    size_t chunk_bytes, uint64_t blanked) {
  StatusOr<std::unique_ptr<KinetoTrace>> t =
      Parse(std::move(text), content_size, path, chunk_bytes);
  if (t.ok()) (*t)->counts.non_json_values += blanked;
  return t;
}

StatusOr<std::unique_ptr<KinetoTrace>> KinetoTrace::Parse(
    std::string text, size_t content_size, const std::string& path,
    size_t chunk_bytes) {
  std::unique_ptr<KinetoTrace> t(new KinetoTrace());
  if (text.size() < content_size + Padding()) {
    return InternalError(path + ": JSON text given without its padding");
  }
  t->impl_->text = std::move(text);
  t->content_bytes = content_size;
  if (content_size > chunk_bytes) {
    if (t->ReadInChunks(content_size, chunk_bytes)) {
      t->Finish();
      return t;
    }
    // A value that is not JSON (PyTorch 1.8's inf, N/A) is blanked and the
    // chunks read again, without first indexing the whole text to find the
    // error; otherwise the file is not laid out as PyTorch writes it, or it
    // is damaged: read whole, afresh.
    std::string whole = std::move(t->impl_->text);
    if (uint64_t blanked = BlankNonJsonValues(&whole, content_size)) {
      return ParseAgain(std::move(whole), content_size, path, chunk_bytes,
                        blanked);
    }
    t.reset(new KinetoTrace());
    t->impl_->text = std::move(whole);
  }
  Impl& impl = *t->impl_;
  StringReader strings(&impl.unescaped);
  EventReader reader(t.get(), &impl.unescaped, &impl.pool);
  bool has_events = false;
  error_code err;
  {
    od::document doc;
    err = impl.parser.iterate(impl.text.data(), content_size, impl.text.size())
              .get(doc);
    if (!err) err = ReadDocument(doc, t.get(), &reader, &strings, &has_events);
  }
  if (err) {
    // Values PyTorch 1.8 wrote that are not JSON are read as missing.
    std::string& text = impl.text;
    const uint64_t blanked =
        err == simdjson::CAPACITY ? 0 : BlankNonJsonValues(&text, content_size);
    if (blanked == 0) {
      return SyntaxError(path, {text.data(), content_size}, err);
    }
    return ParseAgain(std::move(text), content_size, path, chunk_bytes,
                      blanked);
  }
  if (!has_events) {
    return InvalidArgument(path +
                           ": JSON without a \"traceEvents\" array: not a "
                           "Chrome trace (PyTorch profiler) file");
  }
  t->Finish();
  return t;
}

KinetoTrace::EventMark KinetoTrace::Mark() const {
  EventMark m;
  m.sizes = {gpu.size(),      host.size(),  metrics.size(),
             flow_ends.size(), op_inputs.size(), op_dims.size(),
             comms.size(),    comm_ops.size(), process_names.size()};
  m.counts = counts;
  return m;
}

void KinetoTrace::RollBack(const EventMark& m) {
  gpu.resize(m.sizes[0]);
  host.resize(m.sizes[1]);
  metrics.resize(m.sizes[2]);
  flow_ends.resize(m.sizes[3]);
  op_inputs.resize(m.sizes[4]);
  op_dims.resize(m.sizes[5]);
  comms.resize(m.sizes[6]);
  comm_ops.resize(m.sizes[7]);
  process_names.resize(m.sizes[8]);
  counts = m.counts;
}

void KinetoTrace::ReleaseEvents() {
  auto drop = [](auto& v) { std::decay_t<decltype(v)>().swap(v); };
  drop(gpu);
  drop(host);
  drop(metrics);
  drop(flow_ends);
  drop(op_inputs);
  drop(op_dims);
  drop(comms);
  drop(comm_ops);
}

void KinetoTrace::ReserveFor(double factor) {
  // Room for what the file holds if the rest is like its first chunk, and
  // a quarter more: growing a vector by doubling copies it, old and new
  // side by side, and leaves up to half of it unused; room reserved and
  // never used costs address space, not memory (its pages are never
  // touched). A file whose size is unknown grows as before.
  if (!(factor > 1) || factor > 1e6) return;
  const double f = factor * 1.25;
  auto reserve = [f](auto& v) {
    v.reserve(static_cast<size_t>(static_cast<double>(v.size()) * f) + 64);
  };
  reserve(gpu);
  reserve(host);
  reserve(op_inputs);
  reserve(op_dims);
  reserve(flow_ends);
}

void KinetoTrace::Finish() {
  Impl& impl = *impl_;
  for (DeviceProps& d : devices) d.name = impl.pool.Keep(d.name);
  // What the trace keeps names the pool, never the text nor the parser:
  // the text and the structural index go now rather than stay beside what
  // the pipeline builds.
  impl.parser = od::parser();
  std::string().swap(impl.text);
  std::string().swap(impl.top);
}

namespace {

// The first event separator at or after `from` in text[0, to): a ',' between
// a '}' and a '{' (spaces around it allowed), the place a chunk can end
// (ReadInChunks says why a wrong guess is safe). npos when there is none;
// *resume is then where the search goes on once more text has come (a
// '}' whose separator may continue past `to`).
size_t FindSeparator(const std::string& text, size_t from, size_t to,
                     size_t* resume) {
  for (size_t at = from; at < to;) {
    const void* brace = memchr(&text[at], '}', to - at);
    if (brace == nullptr) break;
    const size_t b =
        static_cast<size_t>(static_cast<const char*>(brace) - text.data());
    size_t comma = b + 1;
    while (comma < to && IsSpace(text[comma])) ++comma;
    size_t next = comma + 1;
    while (next < to && IsSpace(text[next])) ++next;
    if (next >= to) {
      *resume = b;
      return std::string::npos;
    }
    if (text[comma] == ',' && text[next] == '{') return comma;
    at = b + 1;
  }
  *resume = to;
  return std::string::npos;
}

}  // namespace

// ReadInChunks over a window of the file rather than the whole text: the
// window holds the chunk being parsed and what has been read past it, and
// slides on; the chunks end where ReadInChunks would end them. The text
// before the events' '[' and after their ']' is kept to be read as the
// top-level object at the end.
StatusOr<KinetoTrace::Streamed> KinetoTrace::Stream(FileStream* file,
                                                    size_t chunk_bytes,
                                                    size_t* small_size) {
  Impl& impl = *impl_;
  std::string& buf = impl.text;
  size_t len = 0;
  bool eof = false;
  // Reads until the window holds `want` bytes or the file ends.
  auto fill = [&](size_t want) -> Status {
    while (!eof && len < want) {
      if (buf.size() < want + Padding()) {
        buf.resize(std::max(want, buf.size() * 2) + Padding());
      }
      RT_ASSIGN_OR_RETURN(const size_t n,
                          file->Read(&buf[len], buf.size() - Padding() - len));
      eof = n == 0;
      len += n;
      content_bytes += n;
    }
    return OkStatus();
  };
  RT_RETURN_IF_ERROR(fill(chunk_bytes + 1));
  if (eof && len <= chunk_bytes) {  // small: read whole, as Parse does
    buf.resize(len + Padding());
    std::memset(&buf[len], 0, Padding());
    *small_size = len;
    return Streamed::kSmall;
  }
  size_t i = 0;
  if (buf.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
  while (i < len && IsSpace(buf[i])) ++i;
  if (i >= len || buf[i] != '{') return Streamed::kWhole;
  // The events' key, within the first few chunks (what precedes it is
  // the devices and the profiler's settings: kilobytes).
  constexpr std::string_view kKey = "\"traceEvents\"";
  size_t key = std::string::npos;
  for (;;) {
    key = std::string_view(buf.data(), len).find(kKey, i);
    if (key != std::string::npos || eof || len > 4 * chunk_bytes) break;
    RT_RETURN_IF_ERROR(fill(len + chunk_bytes));
  }
  if (key == std::string::npos) return Streamed::kWhole;
  RT_RETURN_IF_ERROR(fill(key + kKey.size() + 4096));
  size_t open = key + kKey.size();
  while (open < len && IsSpace(buf[open])) ++open;
  if (open >= len || buf[open] != ':') return Streamed::kWhole;
  ++open;
  while (open < len && IsSpace(buf[open])) ++open;
  if (open >= len || buf[open] != '[') return Streamed::kWhole;
  impl.top.assign(buf, 0, open + 1);

  EventReader reader(this, &impl.unescaped, &impl.pool);
  size_t begin = open;  // the chunk's '['
  size_t close = 0;     // the events' ']', once known
  for (;;) {
    RT_RETURN_IF_ERROR(fill(begin + chunk_bytes + 1));
    size_t at = std::min(begin + chunk_bytes, len);
    size_t end = std::string::npos;  // the chunk's ']': a separator
    bool last = false;
    size_t last_from = len;  // the last chunk's ']' is before this
    od::document doc;
    for (int tries = 0;; ++tries) {
      for (;;) {
        size_t resume = len;
        end = FindSeparator(buf, at, len, &resume);
        if (end != std::string::npos || eof) break;
        RT_RETURN_IF_ERROR(fill(len + chunk_bytes));
        at = resume;
      }
      // At the end of the file, the last chunk ends at the last ']' of the
      // text, which is the events' when nothing after them holds one
      // (else, at the one before, and so on).
      last = end == std::string::npos;
      if (last) {
        end = std::min(last_from, len);
        while (end > begin + 1 && buf[end - 1] != ']') --end;
        if (end <= begin + 1) return Streamed::kWhole;
        --end;
      } else {
        buf[end] = ']';
      }
      const EventMark mark = Mark();
      od::array events;
      if (!impl.parser
               .iterate(&buf[begin], end + 1 - begin, buf.size() - begin)
               .get(doc) &&
          !doc.get_array().get(events) && !ReadEvents(events, &reader)) {
        break;
      }
      // A separator inside a string ("},{" in a name) ends a chunk that
      // does not parse: the chunk is read again to the next separator,
      // what it had read dropped. Anything else (damage, a value that is
      // not JSON) goes on failing, and the file is read whole.
      if (tries == kSeparatorTries) return Streamed::kWhole;
      RollBack(mark);
      if (last) {
        last_from = end;  // a ']' in a string after the events
        continue;
      }
      buf[end] = ',';
      at = end + 1;
    }
    ++counts.chunks;
    const char* after = nullptr;
    if (doc.current_location().get(after) == simdjson::SUCCESS) {
      // The events' array closed inside the chunk.
      size_t c = static_cast<size_t>(after - buf.data());
      while (c > begin && IsSpace(buf[c - 1])) --c;
      if (c <= begin + 1 || c > end || buf[c - 1] != ']') {
        return Streamed::kWhole;
      }
      close = c - 1;
      if (!last) buf[end] = ',';
      break;
    }
    if (last) {
      close = end;
      break;
    }
    if (counts.chunks == 1) {
      ReserveFor(static_cast<double>(file->size_hint()) /
                 static_cast<double>(content_bytes - (len - end)));
    }
    // The next chunk starts at the separator, made its '['; what the
    // window held before it goes.
    buf[end] = '[';
    std::memmove(&buf[0], &buf[end], len - end);
    len -= end;
    begin = 0;
  }
  // Everything but the events: what preceded them, what follows their ']'
  // in the window and in the rest of the file.
  impl.top.append(buf, close, len - close);
  std::string().swap(buf);
  for (;;) {
    constexpr size_t kBlock = size_t{1} << 20;
    const size_t old = impl.top.size();
    impl.top.resize(old + kBlock);
    RT_ASSIGN_OR_RETURN(const size_t n, file->Read(&impl.top[old], kBlock));
    impl.top.resize(old + n);
    content_bytes += n;
    if (n == 0) break;
  }
  const size_t top_size = impl.top.size();
  impl.top.append(Padding(), '\0');
  StringReader strings(&impl.unescaped);
  bool has_events = false;
  od::document doc;
  error_code err =
      impl.parser.iterate(impl.top.data(), top_size, impl.top.size()).get(doc);
  if (!err) err = ReadDocument(doc, this, &reader, &strings, &has_events);
  if (err || !has_events) return Streamed::kWhole;
  return Streamed::kDone;
}

StatusOr<std::unique_ptr<KinetoTrace>> KinetoTrace::Read(
    const std::string& path, const GzipBudget& budget, size_t chunk_bytes) {
  {
    RT_ASSIGN_OR_RETURN(std::unique_ptr<FileStream> file,
                        FileStream::Open(path, budget));
    std::unique_ptr<KinetoTrace> t(new KinetoTrace());
    size_t small = 0;
    RT_ASSIGN_OR_RETURN(const Streamed streamed,
                        t->Stream(file.get(), chunk_bytes, &small));
    if (streamed == Streamed::kDone) {
      t->Finish();
      return t;
    }
    if (streamed == Streamed::kSmall) {
      return Parse(std::move(t->impl_->text), small, path, chunk_bytes);
    }
  }
  // Not laid out as PyTorch writes it (a bare array), a chunk that does
  // not parse (damage, a value that is not JSON, a separator inside a
  // string): read whole, afresh, as before streaming, so that the errors
  // and what is read are Parse's.
  size_t content = 0;
  RT_ASSIGN_OR_RETURN(std::string text,
                      ReadWholeFile(path, Padding(), &content, budget));
  return Parse(std::move(text), content, path, chunk_bytes);
}

}  // namespace rooftrace::kineto
