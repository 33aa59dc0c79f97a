// The live ops route's collector side (sources/rft/live_ops.h): operator
// ranges a Python host sent are tied to the kernels they launched and
// costed by the Kineto importer's own code, so that a live run equals an
// import of a torch.profiler trace of the same work.
#include "sources/rft/live_ops.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "base/json_quote.h"
#include "pipeline/recorder.h"
#include "proto/field_numbers.h"
#include "proto/wire_constants.h"
#include "sources/file_reader.h"
#include "sources/kineto/kineto_reader.h"
#include "sources/kineto/kineto_trace.h"
#include "tests/support/h100_session.h"
#include "tests/support/null_sink.h"
#include "tests/support/real_data.h"

namespace rooftrace {
namespace {

using test_support::RealDataFile;
using test_support::RealDataMissing;

constexpr uint64_t kDomain = 900, kUserDomain = 901;

// A live session as libinject's stream leaves it: one H100, the ops
// route's domain defined.
Session LiveSession() {
  Session s = test_support::StartedH100Session("trace");
  s.SetString(kDomain, wire::kTorchOpsDomain);
  s.SetString(kUserDomain, "user");
  return s;
}

uint64_t next_iid = 1000;

void AddKernel(Session* s, uint64_t corr, std::string_view name,
               uint32_t thread, uint64_t launch_ns) {
  const uint64_t iid = next_iid++;
  s->SetString(iid, name);
  KernelRecord k;
  k.correlation_id = corr;
  k.name_iid = iid;
  k.start_ns = launch_ns + 5000;
  k.end_ns = launch_ns + 25000;
  k.stream_id = 7;
  s->records().kernels.push_back(k);
  LaunchRecord l;
  l.correlation_id = corr;
  l.api_start_ns = launch_ns;
  l.api_end_ns = launch_ns + 3000;
  l.thread_id = thread;
  l.kind = wire::enums::kApiKernelLaunch;
  s->records().launches.push_back(l);
}

void AddRange(Session* s, uint64_t domain, std::string_view text,
              uint32_t thread, uint64_t start, uint64_t end) {
  const uint64_t iid = next_iid++;
  s->SetString(iid, text);
  NvtxRecord r;
  r.range_id = iid;
  r.domain_iid = domain;
  r.name_iid = iid;
  r.start_ns = start;
  r.end_ns = end;
  r.thread_id = thread;
  r.end_thread_id = thread;
  r.kind = wire::enums::kRangePushPop;
  s->records().nvtx.push_back(r);
}

constexpr char kAddmm[] =
    "aten::addmm\t{\"Input Dims\":[[2816],[16,1024],[1024,2816],[],[]],"
    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
    "\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"]}";
constexpr char kLinear[] =
    "aten::linear\t{\"Input Dims\":[[16,1024],[2816,1024],[2816]],"
    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}";
constexpr char kSilu[] =
    "aten::silu\t{\"Input Dims\":[[16,2816]],\"Input type\":[\"c10::BFloat16\"]}";

// A launch inside aten::linear > aten::addmm gets the GEMM of the innermost
// (addmm, in the linear: weight known); a launch inside aten::silu gets the
// op's figures; a launch on another thread, at the same time, gets nothing.
TEST(LiveOpsTest, TiesEachLaunchToTheInnermostOperatorOnItsThread) {
  Session s = LiveSession();
  AddRange(&s, kDomain, kLinear, 11, 1'000'000, 1'200'000);
  AddRange(&s, kDomain, kAddmm, 11, 1'010'000, 1'150'000);
  AddKernel(&s, 1, "sm90_xmma_gemm_bf16bf16_bf16f32", 11, 1'050'000);
  AddRange(&s, kDomain, kSilu, 11, 1'300'000, 1'400'000);
  AddKernel(&s, 2, "vectorized_elementwise_kernel<silu>", 11, 1'350'000);
  AddKernel(&s, 3, "vectorized_elementwise_kernel<other>", 12, 1'350'000);
  StatusOr<LiveOpsResult> r = CostLiveOps(&s, SourceOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ops, 3u);
  EXPECT_EQ(r->malformed, 0u);
  EXPECT_EQ(r->kernels, 2u);
  // The GEMM, in cuBLAS's terms as the importer and libinject give it.
  ASSERT_EQ(s.gemms().size(), 1u);
  const GemmRecord& g = s.gemms()[0];
  EXPECT_EQ(g.m, 2816);
  EXPECT_EQ(g.n, 16);
  EXPECT_EQ(g.k, 1024);
  ASSERT_EQ(s.gemm_links().size(), 1u);
  EXPECT_EQ(s.gemm_links()[0].correlation_id, 1u);
  EXPECT_EQ(s.gemm_links()[0].call_id, g.call_id);
  // silu: 4 FLOPs per element, read and written once in bf16.
  ASSERT_EQ(s.ops().size(), 1u);
  EXPECT_EQ(s.ops()[0].flops, 4u * 16 * 2816);
  EXPECT_EQ(s.ops()[0].min_bytes, 2u * 2 * 16 * 2816);
  EXPECT_EQ(*s.String(s.ops()[0].name_iid), "aten::silu");
  ASSERT_EQ(s.op_links().size(), 1u);
  EXPECT_EQ(s.op_links()[0].correlation_id, 2u);
  EXPECT_EQ(s.stats()[ImportStat::k_ops_received], 3u);
  EXPECT_EQ(s.stats()[ImportStat::k_kernels_from_ops], 2u);
}

// A launch libinject tied to its cuBLAS call keeps that call: the hook's
// shapes are the same GEMM seen from above.
TEST(LiveOpsTest, TheCublasCallOfALaunchWinsOverItsOperator) {
  Session s = LiveSession();
  AddRange(&s, kDomain, kAddmm, 11, 1'010'000, 1'150'000);
  AddKernel(&s, 1, "sm90_xmma_gemm_bf16bf16_bf16f32", 11, 1'050'000);
  GemmRecord cublas;
  cublas.call_id = 5;
  cublas.m = 2816;
  cublas.n = 16;
  cublas.k = 1024;
  s.records().gemms.push_back(cublas);
  s.records().launches.back().gemm_call_id = 5;
  ASSERT_TRUE(CostLiveOps(&s, SourceOptions()).ok());
  ASSERT_EQ(s.gemms().size(), 1u);
  EXPECT_EQ(s.gemms()[0].call_id, 5u);
  EXPECT_TRUE(s.gemm_links().empty());
}

// Ranges that are not "NAME<TAB>{JSON}" are counted and skipped; the rest
// are still costed.
TEST(LiveOpsTest, MalformedRangesAreCountedAndTheRestCosted) {
  Session s = LiveSession();
  AddRange(&s, kDomain, "aten::silu no tab", 11, 1'300'000, 1'400'000);
  AddRange(&s, kDomain, "aten::silu\t{\"Input Dims\":[[16,", 11, 1'300'000,
           1'400'000);
  AddRange(&s, kDomain, kSilu, 11, 1'300'000, 1'400'000);
  AddKernel(&s, 2, "vectorized_elementwise_kernel<silu>", 11, 1'350'000);
  StatusOr<LiveOpsResult> r = CostLiveOps(&s, SourceOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ops, 3u);
  EXPECT_EQ(r->malformed, 2u);
  EXPECT_EQ(r->kernels, 1u);
  EXPECT_EQ(s.stats()[ImportStat::k_ops_malformed], 2u);
}

// Without the ops route's domain nothing changes, and the host's own NVTX
// ranges are never taken for operators.
TEST(LiveOpsTest, ASessionWithoutOperatorRangesIsLeftAlone) {
  Session s = LiveSession();
  AddRange(&s, kUserDomain, kSilu, 11, 1'300'000, 1'400'000);
  AddKernel(&s, 2, "vectorized_elementwise_kernel<silu>", 11, 1'350'000);
  const SessionRecords before = s.records();
  EXPECT_FALSE(HoldsOpsRanges(s));
  StatusOr<LiveOpsResult> r = CostLiveOps(&s, SourceOptions());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ops, 0u);
  EXPECT_EQ(s.records().ops, before.ops);
  EXPECT_EQ(s.records().gemms, before.gemms);
  EXPECT_TRUE(s.op_links().empty());
}

// torch's NVTX emission with shapes: the name, then sizes as JSON; other
// texts are not operators.
TEST(LiveOpsTest, ReadsTorchsNvtxShapeRanges) {
  EXPECT_EQ(EmitNvtxOpText("aten::addmm, seq = 12, op_id = 7, sizes = "
                           "[[2816], [16, 1024], [1024, 2816], [], []], "
                           "input_op_ids = [(5, 0), (6, 0)]"),
            "aten::addmm\t{\"Input Dims\":[[2816], [16, 1024], [1024, "
            "2816], [], []]}");
  EXPECT_EQ(EmitNvtxOpText("aten::silu, op_id = 3, sizes = [[16, 2816]]"),
            "aten::silu\t{\"Input Dims\":[[16, 2816]]}");
  EXPECT_FALSE(EmitNvtxOpText("aten::addmm, seq = 12, op_id = 7"));
  EXPECT_FALSE(EmitNvtxOpText("forward"));
  EXPECT_FALSE(EmitNvtxOpText("aten::mm, sizes = [[16, 1024]"));
  EXPECT_FALSE(EmitNvtxOpText("aten::mm, sizes = [[1]] trailing"));
  EXPECT_EQ(TorchTypeOfKernelName("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn"),
            "c10::BFloat16");
  EXPECT_EQ(TorchTypeOfKernelName("ampere_fp16_s16816gemm_fp16_128x128"),
            "c10::Half");
  EXPECT_EQ(TorchTypeOfKernelName(
                "void at::native::vectorized_elementwise_kernel<4, "
                "at::native::silu_kernel, float>"),
            "float");
  EXPECT_EQ(TorchTypeOfKernelName("void at::native::reduce_kernel<512>"), "");
  EXPECT_EQ(TorchTypeOfKernelName("cast_kernel<float, c10::Half>"), "");
}

// A live session (or an nsys export) with torch's NVTX shape ranges: each
// operator is typed from its kernel's name and costed like the ops route's;
// one whose kernels name no type stays blank.
TEST(LiveOpsTest, CostsTorchsNvtxShapeRangesTypedByTheirKernels) {
  Session s = LiveSession();
  AddRange(&s, kUserDomain,
           "aten::addmm, seq = 4, op_id = 9, sizes = [[2816], [16, 1024], "
           "[1024, 2816], [], []], input_op_ids = [(1, 0)]",
           11, 1'010'000, 1'150'000);
  AddKernel(&s, 1, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn", 11, 1'050'000);
  AddRange(&s, kUserDomain, "aten::silu, op_id = 10, sizes = [[16, 2816]]",
           11, 1'300'000, 1'400'000);
  AddKernel(&s, 2, "void at::native::reduce_kernel<512>", 11, 1'350'000);
  EXPECT_TRUE(HoldsOpsRanges(s));
  StatusOr<LiveOpsResult> r = CostLiveOps(&s, SourceOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ops, 2u);
  EXPECT_EQ(r->kernels, 1u);
  ASSERT_EQ(s.gemms().size(), 1u);
  EXPECT_EQ(s.gemms()[0].m, 2816);
  EXPECT_EQ(s.gemms()[0].k, 1024);
  EXPECT_EQ(s.gemms()[0].a_type, 14);  // CUDA_R_16BF
  EXPECT_TRUE(s.ops().empty());
}

// ---- live equals post-hoc, on the recorded real traces

// What the equality compares of each stored kernel.
struct KernelFigures {
  std::optional<int64_t> correlation_id;
  std::string name, op, shape, phase, flops_source, bytes_source, precision;
  std::optional<int64_t> flops, dram_bytes;
  int64_t duration_ns = 0;
  bool operator==(const KernelFigures&) const = default;
};

class KernelSink : public test_support::NullSink {
 public:
  Status AddKernel(const KernelRow& r) override {
    rows.push_back({r.correlation_id, std::string(r.name), std::string(r.op),
                    std::string(r.shape), std::string(r.phase),
                    std::string(r.flops_source), std::string(r.bytes_source),
                    std::string(r.precision), r.flops, r.dram_bytes,
                    r.duration_ns});
    return OkStatus();
  }
  std::vector<KernelFigures> rows;
};

// The args JSON of operator event `h` as torch's profiler writes a cpu_op's
// ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"), from
// what the importer kept of it. A tensor list keeps its count and total
// elements; strides are written where the importer kept them (inputs with
// a broadcast dimension), [] elsewhere.
std::string ArgsOf(const kineto::KinetoTrace& t, const kineto::HostEvent& h) {
  const kineto::OpInputs in = t.InputsOf(h);
  std::string dims = "[", types = "[", concrete = "[", strides = "[";
  for (int i = 0; i < in.count; ++i) {
    const kineto::OpInput& x = in.in[i];
    if (i > 0) dims += ",", types += ",", concrete += ",", strides += ",";
    strides += "[";
    for (int d = 0; x.has_strides && d < x.rank; ++d) {
      if (d > 0) strides += ",";
      strides += std::to_string(x.strides[d]);
    }
    strides += "]";
    dims += "[";
    if (x.list_size > 0) {
      // Shapes summing to the list's elements (the importer keeps no more).
      for (int e = 0; e < x.list_size; ++e) {
        if (e > 0) dims += ",";
        const int64_t n = e == 0 ? x.list_elements - (x.list_size - 1) : 1;
        dims += "[" + std::to_string(n) + "]";
      }
    } else {
      for (int d = 0; d < x.rank; ++d) {
        if (d > 0) dims += ",";
        dims += std::to_string(x.dims[d]);
      }
    }
    dims += "]";
    types += json::Quote(x.type);
    concrete += json::Quote(x.concrete);
  }
  return "{\"Input Dims\":" + dims + "],\"Input type\":" + types +
         "],\"Input Strides\":" + strides + "],\"Concrete Inputs\":" +
         concrete + "]}";
}

// Imported and live forms of one recorded trace's sessions.
struct BothForms {
  std::vector<std::unique_ptr<Session>> imported, live;
};

// The trace as `import` reads it, and as the live path would receive the
// same run: its kernels, launches (without the importer's GEMM links),
// copies, annotations and devices, and its operators as the ops route's
// ranges, nothing costed.
BothForms Convert(const std::string& path) {
  BothForms out;
  size_t content = 0;
  StatusOr<std::string> text =
      ReadWholeFile(path, kineto::KinetoTrace::Padding(), &content);
  EXPECT_TRUE(text.ok()) << text.status().message();
  if (!text.ok()) return out;
  auto imported = kineto::AssembleKinetoText(text->substr(0, content),
                                             content, path, SourceOptions(),
                                             nullptr);
  EXPECT_TRUE(imported.ok()) << imported.status().message();
  auto trace = kineto::KinetoTrace::Parse(std::move(*text), content, path);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  if (!imported.ok() || !trace.ok()) return out;
  for (std::unique_ptr<Session>& s : *imported) {
    auto live = std::make_unique<Session>(*s);
    SessionRecords& rec = live->records();
    rec.gemms.clear();
    rec.gemm_links.clear();
    rec.ops.clear();
    rec.op_links.clear();
    rec.metrics.clear();
    for (LaunchRecord& l : rec.launches) l.gemm_call_id = 0;
    uint64_t iid = 1;
    for (const auto& [k, v] : live->strings()) iid = std::max(iid, k + 1);
    const uint64_t domain = iid++;
    live->SetString(domain, wire::kTorchOpsDomain);
    // The session's pid is in its name ("PATH:pid N").
    const std::string& name = s->name();
    const int64_t pid = std::stoll(name.substr(name.rfind(' ') + 1));
    uint64_t range = 1u << 30;
    for (const kineto::HostEvent& h : (*trace)->host) {
      if (h.pid != pid || h.inputs < 0 ||
          (h.kind != kineto::HostEvent::Kind::kGemmOp &&
           h.kind != kineto::HostEvent::Kind::kModelledOp)) {
        continue;
      }
      const uint64_t text_iid = iid++;
      live->SetString(text_iid,
                      std::string(h.name) + "\t" + ArgsOf(**trace, h));
      NvtxRecord r;
      r.range_id = range++;
      r.domain_iid = domain;
      r.name_iid = text_iid;
      r.start_ns = h.start_ns;
      r.end_ns = h.end_ns;
      r.thread_id = static_cast<uint32_t>(h.tid);
      r.end_thread_id = r.thread_id;
      r.kind = wire::enums::kRangePushPop;
      rec.nvtx.push_back(r);
    }
    for (Session* each : {s.get(), live.get()}) {
      SessionHeader header;
      header.host = "kineto";
      header.pid = static_cast<uint32_t>(pid);
      header.mode = "import";
      each->Start(header);
      each->end().complete = true;
    }
    out.imported.push_back(std::move(s));
    out.live.push_back(std::move(live));
  }
  return out;
}

// Every kernel row of `sessions` recorded as one run; with the ops
// route's preparer when `live`.
std::vector<KernelFigures> Record(std::vector<std::unique_ptr<Session>>& ss,
                                  bool live) {
  KernelSink sink;
  RecorderOptions ro;
  ro.origin = "test";
  ro.sink = &sink;
  if (live) ro.preparer = LiveOpsPreparer(SourceOptions());
  auto recorder = RunRecorder::Create(ro);
  EXPECT_TRUE(recorder.ok());
  if (!recorder.ok()) return {};
  for (auto& s : ss) EXPECT_TRUE((*recorder)->AddSession(s.get()).ok());
  EXPECT_TRUE((*recorder)->Finish().ok());
  return sink.rows;
}

double ShareWithFigures(const std::vector<KernelFigures>& rows) {
  double all = 0, with = 0;
  for (const KernelFigures& k : rows) {
    all += static_cast<double>(k.duration_ns);
    if (k.flops || k.dram_bytes) with += static_cast<double>(k.duration_ns);
  }
  return all > 0 ? with / all : 0;
}

class LiveEqualsImportTest : public testing::TestWithParam<const char*> {};

// Each real trace with shapes, converted into what the live path receives,
// gives kernel for kernel the FLOPs, bytes, op, shape and phase that
// `import` gives the original, and the same coverage.
TEST_P(LiveEqualsImportTest, KernelForKernel) {
  const std::string path = RealDataFile(GetParam());
  if (path.empty()) GTEST_SKIP() << RealDataMissing(GetParam());
  BothForms both = Convert(path);
  ASSERT_FALSE(both.imported.empty());
  const std::vector<KernelFigures> imported = Record(both.imported, false);
  const std::vector<KernelFigures> live = Record(both.live, true);
  ASSERT_EQ(imported.size(), live.size());
  size_t costed = 0, differ = 0;
  for (size_t i = 0; i < imported.size(); ++i) {
    costed += imported[i].flops || imported[i].dram_bytes;
    if (imported[i] == live[i]) continue;
    if (++differ <= 5) {
      ADD_FAILURE() << "kernel " << i << " (" << imported[i].name
                    << "): import op '" << imported[i].op << "' shape '"
                    << imported[i].shape << "' flops "
                    << imported[i].flops.value_or(-1) << " bytes "
                    << imported[i].dram_bytes.value_or(-1) << " phase "
                    << imported[i].phase << "; live op '" << live[i].op
                    << "' shape '" << live[i].shape << "' flops "
                    << live[i].flops.value_or(-1) << " bytes "
                    << live[i].dram_bytes.value_or(-1) << " phase "
                    << live[i].phase;
    }
  }
  EXPECT_EQ(differ, 0u) << "of " << imported.size() << " kernels";
  EXPECT_GT(costed, 0u);
  EXPECT_DOUBLE_EQ(ShareWithFigures(live), ShareWithFigures(imported));
  printf("%s: %zu kernels, %zu costed, %.1f%% of GPU time with figures, "
         "live = import\n",
         GetParam(), imported.size(), costed,
         100 * ShareWithFigures(live));
}

INSTANTIATE_TEST_SUITE_P(
    RealTraces, LiveEqualsImportTest,
    testing::Values(
        "tracelens/tests/traces/h100/"
        "gaunernst_bert-small-uncased__1016001.redacted.json.gz",
        "nano-vllm-fork/profile_results/decode_gpu_0.json",
        "tracelens/tests/traces/inference/sglang_decode/"
        "sglang_Qwen3-8B_decode.json.gz",
        "tracelens/tests/traces/inference/sglang_prefilldecode/"
        "sglang_Qwen3-8B_prefilldecode.json.gz",
        "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/"
        "graph_execution.json.gz"));

}  // namespace
}  // namespace rooftrace
