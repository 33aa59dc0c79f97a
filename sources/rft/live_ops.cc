#include "sources/rft/live_ops.h"

#include <simdjson.h>

#include <algorithm>
#include <optional>
#include <charconv>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/json_quote.h"
#include "proto/field_numbers.h"
#include "proto/wire_constants.h"
#include "sources/kineto/kineto_reader.h"

namespace rooftrace {
namespace {

// Nanoseconds as Chrome-trace microseconds with three decimals (the
// importer rounds them back to the same nanosecond).
void AppendUint(std::string* out, uint64_t v) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

void AppendMicros(std::string* out, uint64_t ns) {
  AppendUint(out, ns / 1000);
  const uint64_t frac = ns % 1000;
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out->append(digits, 4);
}

// The start of one complete ("X") event up to its args.
void BeginEvent(std::string* out, std::string_view cat, std::string_view name,
                uint64_t pid, uint64_t tid, uint64_t start_ns,
                uint64_t end_ns) {
  if (out->back() != '[') out->push_back(',');
  out->append("{\"ph\":\"X\",\"cat\":\"");
  out->append(cat);
  out->append("\",\"name\":");
  out->append(json::Quote(name));
  out->append(",\"pid\":");
  AppendUint(out, pid);
  out->append(",\"tid\":");
  AppendUint(out, tid);
  out->append(",\"ts\":");
  AppendMicros(out, start_ns);
  out->append(",\"dur\":");
  AppendMicros(out, end_ns > start_ns ? end_ns - start_ns : 0);
}

// The CUDA call name the importer classifies as launch kind `kind`
// (sources/nsys/cuda_api_names.h); empty for kinds it does not keep.
std::string_view LaunchName(int32_t kind) {
  switch (kind) {
    case wire::enums::kApiKernelLaunch: return "cudaLaunchKernel";
    case wire::enums::kApiGraphLaunch: return "cudaGraphLaunch";
    case wire::enums::kApiMemcpy: return "cudaMemcpyAsync";
    case wire::enums::kApiMemset: return "cudaMemsetAsync";
    default: return "";
  }
}

// One operator range read: its name and its args object's text.
struct OpText {
  std::string_view name, args;
  bool annotation = false;  // a record_function range ("Scope": "user")
  // The args have dims but no "Input type" (torch's NVTX emission): its
  // inputs are typed from the operator's kernels.
  bool untyped = false;
};

// Splits "NAME<TAB>{ARGS}" and checks ARGS is one JSON object; false for
// anything else.
bool ReadOpText(std::string_view text, simdjson::dom::parser* parser,
                OpText* out) {
  const size_t tab = text.rfind('\t');
  if (tab == std::string_view::npos || tab == 0) return false;
  out->name = text.substr(0, tab);
  out->args = text.substr(tab + 1);
  if (out->args.size() < 2 || out->args.front() != '{' ||
      out->args.back() != '}') {
    return false;
  }
  simdjson::dom::object object;
  if (parser->parse(out->args.data(), out->args.size()).get(object) !=
      simdjson::SUCCESS) {
    return false;
  }
  std::string_view scope;
  out->annotation =
      object["Scope"].get(scope) == simdjson::SUCCESS && scope == "user";
  simdjson::dom::array dims, types;
  out->untyped = object["Input Dims"].get(dims) == simdjson::SUCCESS &&
                 object["Input type"].get(types) != simdjson::SUCCESS;
  return true;
}

// The position just past the bracketed list starting at `text[i]` ('['),
// or npos when it does not close.
size_t ListEnd(std::string_view text, size_t i) {
  int depth = 0;
  for (; i < text.size(); ++i) {
    if (text[i] == '[') ++depth;
    if (text[i] == ']' && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

// The type an untyped operator's tensors are given: its kernels' (the
// first of them whose name says one); empty when none does.
std::string_view TypeFromKernels(
    const std::vector<std::pair<uint64_t, uint64_t>>& launches,
    uint64_t start_ns, uint64_t end_ns,
    const std::unordered_map<uint64_t, std::string_view>& kernel_of_corr) {
  auto it = std::lower_bound(launches.begin(), launches.end(),
                             std::make_pair(start_ns, uint64_t{0}));
  for (; it != launches.end() && it->first <= end_ns; ++it) {
    auto k = kernel_of_corr.find(it->second);
    if (k == kernel_of_corr.end()) continue;
    const std::string_view type = TorchTypeOfKernelName(k->second);
    if (!type.empty()) return type;
  }
  return "";
}

// `args` ({"Input Dims":[...]}) with "Input type": `type` for each of its
// inputs, "Scalar" for those without dimensions ([]).
std::string TypedArgs(std::string_view args, std::string_view type,
                      simdjson::dom::parser* parser) {
  simdjson::dom::object object;
  simdjson::dom::array dims;
  if (parser->parse(args.data(), args.size()).get(object) !=
          simdjson::SUCCESS ||
      object["Input Dims"].get(dims) != simdjson::SUCCESS) {
    return std::string(args);
  }
  std::string types = ",\"Input type\":[";
  int i = 0;
  for (simdjson::dom::element d : dims) {
    if (i++ > 0) types += ",";
    simdjson::dom::array a;
    const bool scalar = d.get(a) != simdjson::SUCCESS || a.size() == 0;
    types += "\"";
    types += scalar ? std::string_view("Scalar") : type;
    types += "\"";
  }
  types += "]}";
  std::string out(args.substr(0, args.size() - 1));
  return out + types;
}

// The largest key of `map` (0 when empty).
template <typename Map>
uint64_t MaxKey(const Map& map) {
  uint64_t m = 0;
  for (const auto& [k, v] : map) m = std::max<uint64_t>(m, k);
  return m;
}

// Adds what the importer gave `from` (GEMM calls, operators, their links,
// collectives' metrics) to `to`, under ids of its own. Returns the kernels'
// correlation ids that received something.
std::unordered_set<uint64_t> Transplant(const Session& from, Session* to) {
  SessionRecords& rec = to->records();
  // Strings: new ids above every id the live session has.
  uint64_t next_iid = MaxKey(to->strings()) + 1;
  std::unordered_map<uint64_t, uint64_t> iids;
  auto iid = [&](uint64_t old) -> uint64_t {
    if (old == 0) return 0;
    auto [it, fresh] = iids.try_emplace(old, 0);
    if (fresh) {
      const std::string* s = from.String(old);
      if (s == nullptr) return it->second;
      it->second = next_iid++;
      to->SetString(it->second, *s);
    }
    return it->second;
  };
  uint64_t call_base = 0, op_base = 0;
  for (const GemmRecord& g : rec.gemms) call_base = std::max(call_base, g.call_id);
  for (const GemmLink& l : rec.gemm_links) {
    call_base = std::max(call_base, l.call_id);
  }
  for (const LaunchRecord& l : rec.launches) {
    call_base = std::max(call_base, l.gemm_call_id);
  }
  for (const OpRecord& o : rec.ops) op_base = std::max(op_base, o.op_id);
  // Launches libinject already tied to a cuBLAS call keep it.
  std::unordered_set<uint64_t> cublas;
  for (const LaunchRecord& l : rec.launches) {
    if (l.gemm_call_id != 0) cublas.insert(l.correlation_id);
  }
  for (const GemmLink& l : rec.gemm_links) cublas.insert(l.correlation_id);

  std::unordered_set<uint64_t> given;
  std::unordered_set<uint64_t> calls_used;
  auto link_call = [&](uint64_t corr, uint64_t call, uint64_t node) {
    if (call == 0 || cublas.count(corr) != 0) return;
    rec.gemm_links.push_back({corr, call_base + call, node});
    calls_used.insert(call);
    given.insert(corr);
  };
  for (const LaunchRecord& l : from.launches()) {
    link_call(l.correlation_id, l.gemm_call_id, 0);
  }
  for (const GemmLink& l : from.gemm_links()) {
    link_call(l.correlation_id, l.call_id, l.graph_node_id);
  }
  for (const GemmRecord& g : from.gemms()) {
    if (calls_used.count(g.call_id) == 0) continue;
    GemmRecord c = g;
    c.call_id = call_base + g.call_id;
    c.op_name_iid = iid(g.op_name_iid);
    rec.gemms.push_back(c);
  }
  std::unordered_set<uint64_t> ops_used;
  for (const OpLink& l : from.op_links()) {
    rec.op_links.push_back({l.correlation_id, op_base + l.op_id,
                            l.graph_node_id});
    ops_used.insert(l.op_id);
    given.insert(l.correlation_id);
  }
  for (const OpRecord& o : from.ops()) {
    if (ops_used.count(o.op_id) == 0) continue;
    OpRecord c = o;
    c.op_id = op_base + o.op_id;
    c.name_iid = iid(o.name_iid);
    c.shape_iid = iid(o.shape_iid);
    rec.ops.push_back(c);
  }
  for (const MetricRecord& m : from.metrics()) {
    MetricRecord c = m;
    c.name_iid = iid(m.name_iid);
    c.unit_iid = iid(m.unit_iid);
    rec.metrics.push_back(c);
  }
  return given;
}

class Preparer : public SessionPreparer {
 public:
  explicit Preparer(const SourceOptions& options) : options_(options) {}
  bool KeepWhole(const Session& session) const override {
    return HoldsOpsRanges(session);
  }
  Status Prepare(Session* session) override {
    RT_ASSIGN_OR_RETURN(LiveOpsResult r, CostLiveOps(session, options_));
    if (!r.warning.empty()) {
      fprintf(stderr, "rooftrace: %s: ops route: %s\n",
              session->name().c_str(), r.warning.c_str());
    }
    return OkStatus();
  }

 private:
  SourceOptions options_;
};

// The string ids naming the ops route's domain in `session`.
std::vector<uint64_t> OpsDomainIids(const Session& session) {
  std::vector<uint64_t> out;
  for (const auto& [iid, s] : session.strings()) {
    if (s == wire::kTorchOpsDomain) out.push_back(iid);
  }
  return out;
}

}  // namespace

std::optional<std::string> EmitNvtxOpText(std::string_view text) {
  // "NAME, seq = N, op_id = M, sizes = [[16, 1024], [1024, 2816], []],
  // input_op_ids = [...]": torch's NVTX emission (emit_nvtx with
  // record_shapes), fields in that order, each but the name optional; only
  // a range with sizes is an operator to cost.
  const size_t sizes = text.find(", sizes = [");
  if (sizes == std::string_view::npos || sizes == 0) return std::nullopt;
  size_t name_end = sizes;
  for (std::string_view field : {", seq = ", ", op_id = "}) {
    const size_t at = text.find(field);
    if (at != std::string_view::npos && at < name_end) name_end = at;
  }
  const std::string_view name = text.substr(0, name_end);
  if (name.find('\t') != std::string_view::npos) return std::nullopt;
  const size_t begin = sizes + 10;  // the '['
  const size_t end = ListEnd(text, begin);
  if (end == std::string_view::npos) return std::nullopt;
  const std::string_view rest = text.substr(end);
  if (!rest.empty() && rest.substr(0, 17) != ", input_op_ids = ") {
    return std::nullopt;
  }
  return std::string(name) + "\t{\"Input Dims\":" +
         std::string(text.substr(begin, end - begin)) + "}";
}

std::string_view TorchTypeOfKernelName(std::string_view kernel) {
  auto has = [&](std::string_view s) {
    return kernel.find(s) != std::string_view::npos;
  };
  // Names that say a type outright: one of them, or none (a cast names
  // two). "f32" alone is often a GEMM's accumulator ("bf16f32_f32"), so it
  // counts only when nothing else is named.
  const bool bf16 = has("bf16") || has("BFloat16") || has("bfloat16");
  std::string rest(kernel);
  for (size_t at; (at = rest.find("bf16")) != std::string::npos;) {
    rest.erase(at, 4);
  }
  const bool f16 = rest.find("f16") != std::string::npos || has("fp16") ||
                   has("Half") || has("half");
  const bool f64 = has("double") || has("fp64") || has("dgemm");
  const bool f32 = has("float");
  const int named = bf16 + f16 + f64 + f32;
  if (named == 0 && (has("fp32") || has("f32") || has("sgemm") ||
                     has("tf32"))) {
    return "float";
  }
  if (named != 1) return "";
  return bf16 ? "c10::BFloat16" : f16 ? "c10::Half" : f64 ? "double" : "float";
}

bool HoldsOpsRanges(const Session& session) {
  const std::vector<uint64_t> domains = OpsDomainIids(session);
  for (const NvtxRecord& r : session.nvtx_ranges()) {
    if (std::find(domains.begin(), domains.end(), r.domain_iid) !=
        domains.end()) {
      return true;
    }
    const std::string* name = session.String(r.name_iid);
    if (name != nullptr && name->find(", sizes = [") != std::string::npos &&
        EmitNvtxOpText(*name)) {
      return true;
    }
  }
  return false;
}

StatusOr<LiveOpsResult> CostLiveOps(Session* session,
                                    const SourceOptions& options) {
  LiveOpsResult result;
  if (!HoldsOpsRanges(*session)) return result;
  const std::vector<uint64_t> domains = OpsDomainIids(*session);
  const uint64_t pid = session->header().pid;
  // Untyped operators (torch's NVTX emission) take their kernels' type:
  // launches per thread by time, kernels' names by correlation.
  std::unordered_map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>>
      launches_of_thread;
  std::unordered_map<uint64_t, std::string_view> kernel_of_corr;
  std::string text = "{\"traceEvents\":[";
  simdjson::dom::parser parser;
  std::string emitted;
  for (const NvtxRecord& r : session->nvtx_ranges()) {
    const std::string* name = session->String(r.name_iid);
    if (name == nullptr || r.end_ns < r.start_ns) continue;
    const bool op = std::find(domains.begin(), domains.end(), r.domain_iid) !=
                    domains.end();
    std::string_view op_text;
    if (op) {
      op_text = *name;
    } else if (std::optional<std::string> e = EmitNvtxOpText(*name)) {
      emitted = std::move(*e);
      op_text = emitted;
    } else {
      // The host's own NVTX ranges: annotations, as record_function's.
      BeginEvent(&text, "user_annotation", *name, pid, r.thread_id,
                 r.start_ns, r.end_ns);
      text.append("}");
      continue;
    }
    ++result.ops;
    OpText t;
    if (!ReadOpText(op_text, &parser, &t)) {
      ++result.malformed;
      continue;
    }
    std::string typed;
    if (t.untyped) {
      if (kernel_of_corr.empty()) {
        for (const KernelRecord& k : session->kernels()) {
          const std::string* kn = session->String(k.name_iid);
          if (kn != nullptr) kernel_of_corr.emplace(k.correlation_id, *kn);
        }
        for (const LaunchRecord& l : session->launches()) {
          launches_of_thread[l.thread_id].emplace_back(l.api_start_ns,
                                                       l.correlation_id);
        }
        for (auto& [tid, v] : launches_of_thread) std::sort(v.begin(), v.end());
      }
      const std::string_view type = TypeFromKernels(
          launches_of_thread[r.thread_id], r.start_ns, r.end_ns,
          kernel_of_corr);
      if (!type.empty()) {
        typed = TypedArgs(t.args, type, &parser);
        t.args = typed;
      }
    }
    BeginEvent(&text, t.annotation ? "user_annotation" : "cpu_op", t.name,
               pid, r.thread_id, r.start_ns, r.end_ns);
    text.append(",\"args\":");
    text.append(t.args);
    text.append("}");
  }
  session->stats()[ImportStat::k_ops_received] += result.ops;
  session->stats()[ImportStat::k_ops_malformed] += result.malformed;
  if (result.ops == result.malformed) return result;
  for (const LaunchRecord& l : session->launches()) {
    const std::string_view name = LaunchName(l.kind);
    if (name.empty()) continue;
    BeginEvent(&text, "cuda_runtime", name, pid, l.thread_id, l.api_start_ns,
               l.api_end_ns);
    text.append(",\"args\":{\"correlation\":");
    AppendUint(&text, l.correlation_id);
    text.append("}}");
  }
  bool kernels = false;
  for (const KernelRecord& k : session->kernels()) {
    const std::string* name = session->String(k.name_iid);
    BeginEvent(&text, "kernel", name != nullptr ? *name : "?", k.device_id,
               k.stream_id, k.start_ns, k.end_ns);
    text.append(",\"args\":{\"device\":");
    AppendUint(&text, k.device_id);
    text.append(",\"stream\":");
    AppendUint(&text, k.stream_id);
    text.append(",\"correlation\":");
    AppendUint(&text, k.correlation_id);
    text.append(",\"grid\":[");
    for (int i = 0; i < 3; ++i) {
      if (i > 0) text.push_back(',');
      AppendUint(&text, k.grid[i]);
    }
    text.append("],\"block\":[");
    for (int i = 0; i < 3; ++i) {
      if (i > 0) text.push_back(',');
      AppendUint(&text, k.block[i]);
    }
    text.append("]}}");
    kernels = true;
  }
  text.append("]}");
  // A host without GPU work (a CPU-only torch): operators are kept as
  // ranges, nothing to cost.
  if (!kernels) return result;
  const size_t size = text.size();
  StatusOr<std::vector<std::unique_ptr<Session>>> assembled =
      kineto::AssembleKinetoText(std::move(text), size,
                                 session->name() + " (ops route)", options,
                                 &result.warning);
  if (!assembled.ok()) {
    return InternalError(session->name() + ": the ops route's operators could "
                    "not be assembled: " + assembled.status().message());
  }
  std::unordered_set<uint64_t> given;
  for (const std::unique_ptr<Session>& s : *assembled) {
    for (uint64_t corr : Transplant(*s, session)) given.insert(corr);
  }
  for (const KernelRecord& k : session->kernels()) {
    result.kernels += given.count(k.correlation_id);
  }
  session->stats()[ImportStat::k_kernels_from_ops] += result.kernels;
  return result;
}

std::shared_ptr<SessionPreparer> LiveOpsPreparer(const SourceOptions& options) {
  return std::make_shared<Preparer>(options);
}

}  // namespace rooftrace
