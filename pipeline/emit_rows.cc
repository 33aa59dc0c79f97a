#include "pipeline/emit_rows.h"

#include <optional>
#include <string>

#include "proto/field_numbers.h"

namespace rooftrace {
namespace {

namespace we = wire::enums;

std::optional<int64_t> OptI(int64_t v, bool known) {
  return known ? std::optional<int64_t>(v) : std::nullopt;
}

SessionRow SessionRowOf(int64_t run_id, const Session& s) {
  const SessionHeader& h = s.header();
  const SessionEnd& e = s.end();
  SessionRow r;
  r.session_id = s.flushed().session_row;
  r.run_id = run_id;
  r.host = h.host;
  r.pid = h.pid;
  r.ppid = h.ppid;
  r.start_unix_ns = static_cast<int64_t>(h.start_unix_ns);
  r.start_ns = static_cast<int64_t>(h.start_ns);
  r.argv = h.argv;
  r.producer_version = h.producer_version;
  r.mode = h.mode;
  r.counter_passes = h.counter_passes;
  r.packets = static_cast<int64_t>(e.packets);
  r.last_sequence = static_cast<int64_t>(e.last_sequence);
  r.sequence_gaps = static_cast<int64_t>(e.sequence_gaps);
  r.goodbye = e.goodbye;
  r.complete = s.Complete();
  return r;
}

std::vector<DeviceRow> DeviceRowsOf(int64_t run_id, const Session& s) {
  std::vector<DeviceRow> rows;
  rows.reserve(s.devices().size());
  for (const DeviceInfo& d : s.devices()) {
    DeviceRow r;
    r.run_id = run_id;
    r.device_id = d.device_id;
    r.name = d.name;
    r.uuid = d.uuid;
    r.chip_name = d.chip_name;
    r.sm_count = d.sm_count;
    r.cc_major = d.cc_major;
    r.cc_minor = d.cc_minor;
    r.core_clock_khz = static_cast<int64_t>(d.core_clock_khz);
    r.memory_clock_khz = static_cast<int64_t>(d.memory_clock_khz);
    r.measured_sm_clock_khz = static_cast<int64_t>(d.measured_sm_clock_khz);
    r.memory_bus_width_bits = d.memory_bus_width_bits;
    r.l2_cache_bytes = static_cast<int64_t>(d.l2_cache_bytes);
    r.global_memory_bytes = static_cast<int64_t>(d.global_memory_bytes);
    r.driver_version = d.driver_version;
    rows.push_back(r);
  }
  return rows;
}

GemmCallRow GemmCallRowOf(const RowContext& c, int64_t session_id,
                          const JoinedGemm& jg) {
  const GemmRecord& g = *jg.gemm;
  GemmCallRow r;
  r.run_id = c.run_id;
  r.session_id = session_id;
  r.call_id = static_cast<int64_t>(g.call_id);
  r.api = GemmApiName(g.api);
  r.m = g.m;
  r.n = g.n;
  r.k = g.k;
  r.batch = g.batch > 0 ? g.batch : 1;
  r.trans_a = TransposeName(g.trans_a);
  r.trans_b = TransposeName(g.trans_b);
  r.a_type = g.a_type;
  r.b_type = g.b_type;
  r.c_type = g.c_type;
  r.d_type = g.d_type;
  r.compute_type = g.compute_type;
  r.lda = g.lda;
  r.ldb = g.ldb;
  r.ldc = g.ldc;
  // Device pointers above 2^63 keep their bits (read back as signed).
  r.a_ptr = static_cast<int64_t>(g.a_ptr);
  r.b_ptr = static_cast<int64_t>(g.b_ptr);
  r.c_ptr = static_cast<int64_t>(g.c_ptr);
  r.d_ptr = static_cast<int64_t>(g.d_ptr);
  r.epilogue = g.epilogue;
  r.start_ns = static_cast<int64_t>(g.start_ns);
  r.end_ns = static_cast<int64_t>(g.end_ns);
  r.thread_id = g.thread_id;
  r.status = g.status;
  r.precision = jg.precision == Precision::kUnknown
                    ? std::string_view()
                    : PrecisionKey(jg.precision);
  r.flops = OptI(static_cast<int64_t>(jg.flops), jg.flops != 0);
  r.min_bytes = OptI(static_cast<int64_t>(jg.min_bytes), jg.min_bytes != 0);
  r.weight_operand = jg.weight == 1 ? "a" : jg.weight == 2 ? "b" : "";
  r.token_count = OptI(jg.token_count, jg.token_count >= 0);
  r.kernel_count = static_cast<int64_t>(jg.kernel_count);
  return r;
}

// `shape` is the caller's buffer the row's shape text points into.
// Columns `needs` leaves out are not written (they keep what `r` had:
// the defaults, as EmitRows never writes them).
void FillKernelRow(const RowContext& c, int64_t session_id,
                   int64_t step_base, const JoinedSession& j,
                   const JoinedKernel& jk,
                   const std::vector<int64_t>& gemm_row,
                   const RowNeeds& needs, std::string* shape, KernelRow* r) {
  const KernelRecord& k = *jk.kernel;
  const NameInfo& name = j.names[jk.name];
  const KernelFacts& f = jk.facts;
  // Annotated here, not kept per kernel from the join (join.h).
  const Annotation a = j.AnnotationOf(jk);
  const JoinedGemm* g = jk.gemm >= 0 ? &j.gemms[jk.gemm] : nullptr;
  r->run_id = c.run_id;
  r->session_id = session_id;
  r->correlation_id = static_cast<int64_t>(k.correlation_id);
  r->device_id = k.device_id;
  r->context_id = k.context_id;
  r->stream_id = k.stream_id;
  r->name = name.name;
  r->demangled = name.demangled;
  r->family = name.family;
  r->start_ns = static_cast<int64_t>(k.start_ns);
  r->end_ns = static_cast<int64_t>(k.end_ns);
  r->duration_ns = static_cast<int64_t>(f.duration_ns);
  if (needs.kernel_details) {
    for (int i = 0; i < 3; ++i) {
      r->grid[i] = k.grid[i];
      r->block[i] = k.block[i];
      r->cluster[i] = k.cluster[i];
    }
    r->registers_per_thread = k.registers_per_thread;
    r->static_shared_memory_bytes = k.static_shared_memory_bytes;
    r->dynamic_shared_memory_bytes = k.dynamic_shared_memory_bytes;
    r->graph_id = k.graph_id;
    r->graph_node_id = static_cast<int64_t>(k.graph_node_id);
    r->thread_id = jk.launch ? std::optional<int64_t>(jk.launch->thread_id)
                             : std::nullopt;
    r->api_start_ns =
        jk.launch ? std::optional<int64_t>(jk.launch->api_start_ns)
                  : std::nullopt;
  }
  r->nvtx_path = jk.nvtx_path >= 0 ? std::string_view(j.paths[jk.nvtx_path])
                                   : std::string_view();
  r->gemm_call_id = g && gemm_row[jk.gemm] != 0
                        ? std::optional<int64_t>(gemm_row[jk.gemm])
                        : std::nullopt;
  shape->clear();
  if (g) {
    GemmShapeText(*g->gemm, shape);
  } else if (jk.op >= 0) {
    *shape = j.ops[jk.op].shape;
  } else if (jk.inherited_shape != nullptr) {
    *shape = *jk.inherited_shape;
  }
  r->shape = *shape;
  r->op = std::string_view();
  if (g) {
    if (g->op_name != nullptr) r->op = *g->op_name;
  } else if (jk.op >= 0) {
    r->op = j.ops[jk.op].name;
  }
  r->token_count = g ? OptI(g->token_count, g->token_count >= 0)
                     : std::nullopt;
  r->precision = a.precision == Precision::kUnknown
                     ? std::string_view()
                     : PrecisionKey(a.precision);
  r->flops = a.flops ? std::optional<int64_t>(*a.flops) : std::nullopt;
  if (needs.kernel_details) {
    const bool flops_known = f.flops_source != Source::kNone;
    for (int p = 0; p < kNumPrecisions; ++p) {
      r->flops_by_precision[p] =
          OptI(static_cast<int64_t>(f.flops[p]), flops_known && p > 0);
    }
    const bool dram = jk.counters && jk.counters->has_dram_bytes;
    const bool sampled_dram = (f.bytes_source == Source::kSampled ||
                               f.bytes_source == Source::kPmSampled) &&
                              jk.sampled != nullptr &&
                              jk.sampled->has_dram_bytes;
    r->dram_read_bytes =
        dram ? std::optional<int64_t>(jk.counters->dram_read_bytes)
        : sampled_dram
            ? std::optional<int64_t>(jk.sampled->dram_read_bytes)
            : std::nullopt;
    r->dram_write_bytes =
        dram ? std::optional<int64_t>(jk.counters->dram_write_bytes)
        : sampled_dram
            ? std::optional<int64_t>(jk.sampled->dram_write_bytes)
            : std::nullopt;
  }
  // A sampled kernel's sources carry its own label (k of n, spread; or
  // PM sampling's exact / attributed with its error).
  auto source = [&jk](Source s) {
    return (s == Source::kSampled || s == Source::kPmSampled) &&
                   jk.sampled != nullptr
               ? std::string_view(jk.sampled->label)
               : SourceName(s);
  };
  r->flops_source = source(f.flops_source);
  r->dram_bytes = OptI(static_cast<int64_t>(f.dram_bytes),
                       f.bytes_source != Source::kNone);
  r->bytes_source = source(f.bytes_source);
  r->ai = a.ai;
  r->achieved_flops_per_s = a.achieved_flops_per_s;
  r->achieved_bytes_per_s = a.achieved_bytes_per_s;
  r->roof_flops_per_s = a.roof_flops_per_s;
  r->fraction_of_roof = a.fraction_of_roof;
  r->bound = BoundName(a.bound);
  r->step_id = OptI(step_base + 1 + jk.step, jk.step >= 0);
  r->phase = jk.step >= 0 ? std::string_view(j.steps[jk.step].phase)
                          : std::string_view();
}

MemcpyRow MemcpyRowOf(const RowContext& c, int64_t session_id,
                      int64_t step_base, const JoinedSession& j,
                      const JoinedMemcpy& jm) {
  const MemcpyRecord& m = *jm.memcpy;
  const uint64_t d = m.end_ns > m.start_ns ? m.end_ns - m.start_ns : 0;
  MemcpyRow r;
  r.run_id = c.run_id;
  r.session_id = session_id;
  r.correlation_id = static_cast<int64_t>(m.correlation_id);
  r.kind = CopyKindName(m.kind);
  r.bytes = static_cast<int64_t>(m.bytes);
  r.start_ns = static_cast<int64_t>(m.start_ns);
  r.end_ns = static_cast<int64_t>(m.end_ns);
  r.duration_ns = static_cast<int64_t>(d);
  r.device_id = m.device_id;
  r.context_id = m.context_id;
  r.stream_id = m.stream_id;
  r.src_kind = MemoryKindName(m.src_kind);
  r.dst_kind = MemoryKindName(m.dst_kind);
  r.thread_id = jm.launch ? std::optional<int64_t>(jm.launch->thread_id)
                          : std::nullopt;
  r.nvtx_path = jm.nvtx_path >= 0 ? std::string_view(j.paths[jm.nvtx_path])
                                  : std::string_view();
  if (d > 0) {
    r.achieved_bytes_per_s =
        static_cast<double>(m.bytes) * 1e9 / static_cast<double>(d);
  }
  r.step_id = OptI(step_base + 1 + jm.step, jm.step >= 0);
  r.phase = jm.step >= 0 ? std::string_view(j.steps[jm.step].phase)
                         : std::string_view();
  return r;
}

NvtxRow NvtxRowOf(const RowContext& c, int64_t session_id,
                  const JoinedSession& j, const JoinedNvtx& jn) {
  const NvtxRecord& n = *jn.range;
  NvtxRow r;
  r.run_id = c.run_id;
  r.session_id = session_id;
  r.range_id = static_cast<int64_t>(n.range_id);
  r.parent_range_id =
      OptI(static_cast<int64_t>(n.parent_range_id), n.parent_range_id != 0);
  r.domain = jn.domain;
  r.name = jn.name;
  r.kind = n.kind == we::kRangeStartEnd ? "start_end" : "push_pop";
  r.depth = n.depth;
  r.start_ns = static_cast<int64_t>(n.start_ns);
  r.end_ns = OptI(static_cast<int64_t>(n.end_ns), n.end_ns != 0);
  r.thread_id = n.thread_id;
  r.end_thread_id = n.end_thread_id;
  r.path = jn.path >= 0 ? std::string_view(j.paths[jn.path])
                        : std::string_view();
  return r;
}

}  // namespace

Status EmitRows(Session* session, const JoinedSession& j,
                const WriteScope* scope, RowContext* c, RunSink* sink) {
  int64_t session_id = session->flushed().session_row;
  if (session_id == 0) {
    RT_ASSIGN_OR_RETURN(session_id,
                        sink->AddSession(SessionRowOf(c->run_id, *session),
                                         DeviceRowsOf(c->run_id, *session)));
    session->flushed().session_row = session_id;
  } else if (scope == nullptr) {
    // The last write of a session stored in windows: its totals are final.
    RT_RETURN_IF_ERROR(sink->UpdateSession(SessionRowOf(c->run_id, *session)));
  }
  // Step ids are unique per run: they continue after the run's last one.
  const int64_t step_base = c->steps;
  const size_t steps = StepsInScope(scope, j.steps.size());
  for (size_t i = 0; i < steps; ++i) {
    const StepInfo& st = j.steps[i];
    StepRow r;
    r.run_id = c->run_id;
    r.step_id = step_base + 1 + static_cast<int64_t>(i);
    r.session_id = session_id;
    r.start_ns = static_cast<int64_t>(st.start_ns);
    r.end_ns = static_cast<int64_t>(st.end_ns);
    r.phase = st.phase;
    r.token_count = OptI(st.token_count, st.token_count >= 0);
    r.boundary = st.boundary;
    r.evidence = st.evidence;
    r.kernel_count = static_cast<int64_t>(st.kernel_count);
    r.gemm_count = static_cast<int64_t>(st.gemm_count);
    r.gpu_time_ns = static_cast<int64_t>(st.gpu_time_ns);
    RT_RETURN_IF_ERROR(sink->AddStep(r));
  }
  c->steps += static_cast<int64_t>(steps);

  const RowNeeds needs = sink->Needs();
  std::vector<int64_t> gemm_row(j.gemms.size(), 0);
  for (size_t i = 0; i < j.gemms.size() && needs.gemm_calls; ++i) {
    if (scope && !scope->gemms[i]) continue;
    RT_ASSIGN_OR_RETURN(gemm_row[i], sink->AddGemmCall(GemmCallRowOf(
                                         *c, session_id, j.gemms[i])));
  }

  std::string shape;
  KernelRow row;
  for (const JoinedKernel& jk : j.kernels) {
    if (!InScope(scope, jk)) continue;
    FillKernelRow(*c, session_id, step_base, j, jk, gemm_row, needs, &shape,
                  &row);
    RT_RETURN_IF_ERROR(sink->AddKernel(row));
    if (!needs.kernel_metrics) continue;
    for (int m = jk.metrics_begin; m < jk.metrics_end; ++m) {
      const MetricRecord& mr = session->metrics()[j.metric_order[m]];
      KernelMetricRow mrow;
      mrow.run_id = c->run_id;
      mrow.session_id = session_id;
      mrow.correlation_id = static_cast<int64_t>(mr.correlation_id);
      mrow.graph_node_id = static_cast<int64_t>(mr.graph_node_id);
      const std::string* name = session->String(mr.name_iid);
      const std::string* unit = session->String(mr.unit_iid);
      mrow.name = name ? std::string_view(*name) : std::string_view("?");
      mrow.value = mr.value;
      mrow.unit = unit ? std::string_view(*unit) : std::string_view();
      RT_RETURN_IF_ERROR(sink->AddKernelMetric(mrow));
    }
  }
  for (size_t i = 0; i < j.memcpys.size(); ++i) {
    if (scope && !scope->memcpys[i]) continue;
    RT_RETURN_IF_ERROR(sink->AddMemcpy(
        MemcpyRowOf(*c, session_id, step_base, j, j.memcpys[i])));
  }
  for (size_t i = 0; i < j.nvtx.size() && needs.nvtx; ++i) {
    if (scope && !scope->nvtx[i]) continue;
    RT_RETURN_IF_ERROR(sink->AddNvtx(NvtxRowOf(*c, session_id, j, j.nvtx[i])));
  }
  return sink->EndWrite();
}

std::vector<RoofRow> RoofRowsOf(int64_t run_id, uint32_t device_id,
                                const Roofs& roofs) {
  std::vector<RoofRow> rows;
  if (!roofs.known()) return rows;
  for (int p = 1; p < kNumPrecisions; ++p) {
    const double peak = roofs.peak_flops_per_s[p];
    if (peak <= 0) continue;
    const auto prec = static_cast<Precision>(p);
    RoofRow r;
    r.run_id = run_id;
    r.device_id = device_id;
    r.precision = std::string(PrecisionKey(prec));
    r.peak_flops_per_s = peak;
    r.dram_bytes_per_s = roofs.dram_bytes_per_s;
    r.ridge_flops_per_byte = roofs.Ridge(prec);
    r.source = roofs.kind;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string_view CopyKindName(int k) {
  switch (k) {
    case we::kCopyHtoD: return "htod";
    case we::kCopyDtoH: return "dtoh";
    case we::kCopyDtoD: return "dtod";
    case we::kCopyHtoH: return "htoh";
    case we::kCopyPtoP: return "ptop";
    case we::kCopyMemset: return "memset";
    default: return "unknown";
  }
}

std::string_view MemoryKindName(int k) {
  switch (k) {
    case we::kMemoryPageable: return "pageable";
    case we::kMemoryPinned: return "pinned";
    case we::kMemoryDevice: return "device";
    case we::kMemoryArray: return "array";
    case we::kMemoryManaged: return "managed";
    default: return "";
  }
}

std::string_view TransposeName(int t) {
  switch (t) {
    case we::kTransposeN: return "n";
    case we::kTransposeT: return "t";
    case we::kTransposeC: return "c";
    default: return "";
  }
}

std::string_view GemmApiName(int a) {
  switch (a) {
    case we::kGemmApiSgemm: return "cublasSgemm";
    case we::kGemmApiDgemm: return "cublasDgemm";
    case we::kGemmApiHgemm: return "cublasHgemm";
    case we::kGemmApiGemmEx: return "cublasGemmEx";
    case we::kGemmApiSgemmStridedBatched: return "cublasSgemmStridedBatched";
    case we::kGemmApiDgemmStridedBatched: return "cublasDgemmStridedBatched";
    case we::kGemmApiHgemmStridedBatched: return "cublasHgemmStridedBatched";
    case we::kGemmApiGemmStridedBatchedEx: return "cublasGemmStridedBatchedEx";
    case we::kGemmApiSgemmBatched: return "cublasSgemmBatched";
    case we::kGemmApiDgemmBatched: return "cublasDgemmBatched";
    case we::kGemmApiHgemmBatched: return "cublasHgemmBatched";
    case we::kGemmApiGemmBatchedEx: return "cublasGemmBatchedEx";
    case we::kGemmApiLtMatmul: return "cublasLtMatmul";
    default: return "";
  }
}

}  // namespace rooftrace
