// Kernels without their op, end to end (issue 28, item 3): a Kineto trace
// written here whose first kernels ran before the profiler's first CPU
// event (their correlation ids have no runtime event and they name no
// External id) is imported into a store; those kernels inherit the figures
// of identical kernels that have their op, unless their signature ran two
// shapes, and the report says `inherited`.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "pipeline/recorder.h"
#include "report/report.h"
#include "report/report_format.h"
#include "sources/file_reader.h"
#include "sources/kineto/kineto_source.h"
#include "store/store.h"
#include "store/store_reader.h"
#include "tests/support/real_data.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::StoreQuery;
using test_support::TempDir;

// One event per call, in the trace's JSON.
std::string CpuOp(int64_t ts, const std::string& dims) {
  return "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
         "\"pid\": 100, \"tid\": 100, \"ts\": " + std::to_string(ts) +
         ", \"dur\": 10, \"args\": {\"Input Dims\": " + dims +
         ", \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}}";
}

std::string Launch(int64_t ts, int corr) {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
         "\"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": " +
         std::to_string(ts) + ", \"dur\": 2, \"args\": {\"correlation\": " +
         std::to_string(corr) + "}}";
}

// A kernel of `name` at grid 12x1x1, block 256, 154 registers, 73,728
// bytes of shared memory: the same signature for every kernel of a name.
std::string GpuKernel(const std::string& name, int64_t ts, int corr) {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
         "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(ts) +
         ", \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7, "
         "\"correlation\": " + std::to_string(corr) +
         ", \"grid\": [12, 1, 1], \"block\": [256, 1, 1], "
         "\"registers per thread\": 154, \"shared memory\": 73728}}";
}

std::string Trace(const std::vector<std::string>& events) {
  std::string out =
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": "
      "\"NVIDIA H100 80GB HBM3\", \"numSms\": 132, \"computeMajor\": 9, "
      "\"computeMinor\": 0}],\n\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    out += events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  }
  return out + "]}\n";
}

constexpr char kOneShape[] = "ampere_bf16_s16816gemm_bf16_128x64_ldg8_tn";
constexpr char kTwoShapes[] = "ampere_bf16_s16816gemm_bf16_64x64_ldg8_tn";
constexpr char kDims141[] = "[[141, 512], [512, 512]]";
constexpr char kDims64[] = "[[64, 512], [512, 512]]";

// The import statistic `name` of the store `q` reads.
int64_t Stat(StoreQuery& q, const std::string& name) {
  return q.Int("SELECT value FROM import_stats WHERE name = '" + name + "'");
}

// Imports the trace file `trace` into a scratch store at `path`.
void ImportFile(const std::string& trace, const std::string& path) {
  auto store = Store::Open(path, Store::Durability::kScratch);
  ASSERT_TRUE(store.ok()) << store.status().message();
  RecorderOptions ro;
  ro.origin = "import:trace.json";
  ro.source_format = "kineto";
  ro.sink = store->get();
  auto rec = RunRecorder::Create(ro);
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  SourceResult result;
  ASSERT_TRUE(KinetoSource().Read(trace, {}, rec->get(), &result).ok());
  ASSERT_TRUE((*rec)->Finish().ok());
}

// Imports `events` as a trace into a scratch store at `path`.
void ImportTrace(const TempDir& dir, const std::vector<std::string>& events,
                 const std::string& path) {
  const std::string trace = dir.File("trace.json");
  std::ofstream(trace, std::ios::binary) << Trace(events);
  ImportFile(trace, path);
}

// Two aten::mm of 141 x 512 x 512 ran `kOneShape`; two of different shapes
// (141 and 64 tokens) ran `kTwoShapes`. Kernels 3 and 4, one of each name,
// ran at 10-20 us, before the first CPU event (1,000 us): no runtime event
// has their correlation id.
TEST(KinetoInheritTest, KernelsWithoutTheirLaunchInheritFromIdenticalOnes) {
  TempDir dir("kineto_inherit");
  const std::string path = dir.File("runs.sqlite");
  ImportTrace(dir,
              {
                  GpuKernel(kOneShape, 10, 3),
                  GpuKernel(kTwoShapes, 20, 4),
                  CpuOp(1000, kDims141), Launch(1002, 10),
                  GpuKernel(kOneShape, 1010, 10),
                  CpuOp(1100, kDims141), Launch(1102, 11),
                  GpuKernel(kOneShape, 1110, 11),
                  CpuOp(1200, kDims141), Launch(1202, 20),
                  GpuKernel(kTwoShapes, 1210, 20),
                  CpuOp(1300, kDims64), Launch(1302, 21),
                  GpuKernel(kTwoShapes, 1310, 21),
              },
              path);
  if (HasFatalFailure()) return;
  StoreQuery q(path);
  auto row = [&](int corr) {
    return q.Text(
        "SELECT ifnull(api_start_ns, '-') || '|' || ifnull(gemm_call_id, "
        "'-') || '|' || ifnull(shape, '') || '|' || ifnull(flops_bf16_tc, "
        "'-') || '|' || flops_source || '|' || ifnull(dram_bytes, '-') || "
        "'|' || bytes_source || '|' || ifnull(precision, '') || '|' || bound "
        "FROM kernels WHERE correlation_id = " + std::to_string(corr));
  };
  // 2 * 141 * 512 * 512 = 73,924,608 FLOPs; (141*512 + 512*512 + 141*512)
  // * 2 bytes = 813,056. The kernels with their op carry them as analytic.
  const std::string teacher = row(10);
  EXPECT_NE(teacher.find("|m=512 n=141 k=512 batch=1|73924608|analytic|"
                         "813056|analytic|bf16_tc|"),
            std::string::npos)
      << teacher;
  // Kernel 3: no launch, no call; the same figures and shape, inherited,
  // and annotated from them (bound is not 'unknown').
  const std::string orphan = row(3);
  EXPECT_EQ(orphan.substr(0, orphan.rfind('|')),
            "-|-|m=512 n=141 k=512 batch=1|73924608|inherited|813056|"
            "inherited|bf16_tc");
  EXPECT_EQ(orphan.substr(orphan.rfind('|') + 1),
            teacher.substr(teacher.rfind('|') + 1));
  // Kernel 4: its signature ran 141 and 64 tokens: blank, and counted.
  EXPECT_EQ(row(4), "-|-||-|none|-|none||unknown");
  auto stat = [&](const std::string& name) { return Stat(q, name); };
  EXPECT_EQ(stat("kernels_inherited"), 1);
  EXPECT_EQ(stat("kernels_signature_ambiguous"), 1);
  EXPECT_EQ(stat("unmatched_kernel"), 2);
  EXPECT_EQ(q.Text("SELECT flops_sources FROM runs"), "analytic+inherited");

  // The report says where the figures came from: the run's sources in the
  // header and the kernel group's in its row.
  StoreReader reader;
  ASSERT_TRUE(reader.Open(path, path).ok());
  ReportOptions options;
  options.group_by = GroupBy::kKernel;
  auto report = BuildReport(reader, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::ostringstream table;
  MakeReportWriter("table")->Write(*report, table);
  EXPECT_NE(table.str().find("FLOPs/bytes analytic+inherited"),
            std::string::npos)
      << table.str();
  bool group_seen = false;
  for (const GroupRow& g : report->groups) {
    if (g.name.find("128x64") == std::string::npos) continue;
    group_seen = true;
    EXPECT_EQ(g.flops_source, "analytic+inherited");
    EXPECT_EQ(g.bytes_source, "analytic+inherited");
  }
  EXPECT_TRUE(group_seen);
  std::ostringstream json;
  MakeReportWriter("json")->Write(*report, json);
  EXPECT_NE(json.str().find("\"flops_source\":\"analytic+inherited\""),
            std::string::npos);
}

// A repeating run of kernels whose GEMM kernel ran two shapes (141 and 64
// tokens: its signature decides nothing). Before the first CPU event, two
// of its GEMM kernels ran without their launch, amid elementwise kernels
// no operator gives figures. The first sits between the same neighbours
// (a, b) as exactly one launched GEMM kernel, of 141 tokens: it takes that
// kernel's figures by position. The second sits between c and c, as do
// two launched ones of 141 and of 64 tokens: the alignment is not unique,
// and it stays blank, counted.
TEST(KinetoInheritTest, KernelsWithoutTheirLaunchInheritByUniquePosition) {
  TempDir dir("kineto_position");
  int corr = 0;
  std::vector<std::string> e;
  auto orphan = [&](const std::string& name) {
    ++corr;
    e.push_back(GpuKernel(name, 10 * corr, corr));
    return corr;
  };
  int64_t ts = 1000;
  auto launched = [&](const std::string& name, const char* dims) {
    ++corr;
    if (dims != nullptr) e.push_back(CpuOp(ts, dims));
    e.push_back(Launch(ts + 2, corr));
    e.push_back(GpuKernel(name, ts + 10, corr));
    ts += 100;
  };
  orphan("elementwise_a");
  const int unique = orphan(kTwoShapes);
  orphan("elementwise_b");
  orphan("elementwise_c");
  const int ambiguous = orphan(kTwoShapes);
  orphan("elementwise_c");
  launched("elementwise_a", nullptr);
  launched(kTwoShapes, kDims141);
  launched("elementwise_b", nullptr);
  launched("elementwise_d", nullptr);
  launched("elementwise_c", nullptr);
  launched(kTwoShapes, kDims141);
  launched("elementwise_c", nullptr);
  launched("elementwise_d", nullptr);
  launched("elementwise_c", nullptr);
  launched(kTwoShapes, kDims64);
  launched("elementwise_c", nullptr);
  const std::string path = dir.File("runs.sqlite");
  ImportTrace(dir, e, path);
  if (HasFatalFailure()) return;

  StoreQuery q(path);
  auto row = [&](int c) {
    return q.Text("SELECT ifnull(shape, '') || '|' || ifnull(flops_bf16_tc, "
                  "'-') || '|' || flops_source || '|' || ifnull(dram_bytes, "
                  "'-') || '|' || bytes_source FROM kernels WHERE "
                  "correlation_id = " + std::to_string(c));
  };
  EXPECT_EQ(row(unique),
            "m=512 n=141 k=512 batch=1|73924608|inherited|813056|inherited");
  EXPECT_EQ(row(ambiguous), "|-|none|-|none");
  auto stat = [&](const std::string& name) { return Stat(q, name); };
  EXPECT_EQ(stat("kernels_inherited_by_position"), 1);
  EXPECT_EQ(stat("kernels_position_ambiguous"), 1);
  // Both were blank by their signature; one of them is no longer.
  EXPECT_EQ(stat("kernels_signature_ambiguous"), 1);
  EXPECT_EQ(stat("kernels_inherited"), 0);
  EXPECT_EQ(stat("unmatched_kernel"), 6);
}

// `trace` (a recorded Kineto file) as if the profiler had started late:
// every host event (operator, annotation, launch, flow) before the launch
// of the kernel at `fraction` of its kernels in start order removed, and
// the External ids of the kernels those launches ran with them (else a
// kernel finds its operator through them). Written to `out`; "" when
// done, else what went wrong.
std::string StartLate(const std::string& trace, double fraction,
                      const std::string& out) {
  size_t size = 0;
  StatusOr<std::string> text =
      ReadWholeFile(trace, simdjson::SIMDJSON_PADDING, &size);
  if (!text.ok()) return text.status().message();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text->data(), size, false).get(doc) != simdjson::SUCCESS) {
    return "not JSON";
  }
  simdjson::dom::array events;
  if (doc["traceEvents"].get(events) != simdjson::SUCCESS) return "no events";
  auto cat_of = [](simdjson::dom::element e) {
    std::string_view cat;
    return e["cat"].get(cat) == simdjson::SUCCESS ? cat : std::string_view();
  };
  auto corr_of = [](simdjson::dom::element e) {
    int64_t c = -1;
    return e["args"]["correlation"].get(c) == simdjson::SUCCESS ? c : -1;
  };
  auto ts_of = [](simdjson::dom::element e, double absent) {
    double ts = absent;
    return e["ts"].get(ts) == simdjson::SUCCESS ? ts : absent;
  };
  std::vector<std::pair<double, int64_t>> kernels;  // (ts, correlation)
  std::map<int64_t, double> launch_ts;
  for (simdjson::dom::element e : events) {
    const std::string_view cat = cat_of(e);
    if (cat == "kernel") kernels.push_back({ts_of(e, 0), corr_of(e)});
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      launch_ts[corr_of(e)] = ts_of(e, 0);
    }
  }
  std::sort(kernels.begin(), kernels.end());
  const auto cut = static_cast<size_t>(fraction * kernels.size());
  if (cut >= kernels.size() || !launch_ts.count(kernels[cut].second)) {
    return "no launch to cut at";
  }
  const double start = launch_ts[kernels[cut].second];
  const std::set<std::string_view> host = {
      "cpu_op",      "user_annotation", "cuda_runtime", "cuda_driver",
      "python_function", "Trace",       "fwdbwd",       "ac2g"};
  std::set<int64_t> dropped;
  std::string kept;
  for (simdjson::dom::element e : events) {
    const std::string_view cat = cat_of(e);
    if (host.count(cat) && ts_of(e, start) < start) {
      if (cat == "cuda_runtime" || cat == "cuda_driver") {
        dropped.insert(corr_of(e));
      }
      continue;
    }
    std::string event = simdjson::minify(e);
    if (cat == "kernel" && dropped.count(corr_of(e))) {
      const std::string id = "\"External id\":";
      const size_t at = event.find(id);
      if (at != std::string::npos) event.replace(at, id.size(), "\"_\":");
    }
    kept += (kept.empty() ? "" : ",\n") + event;
  }
  std::string json = "{";
  for (auto field : doc.get_object()) {
    if (field.key == "traceEvents") continue;
    json += "\"" + std::string(field.key) + "\":" + simdjson::minify(field.value) +
            ",";
  }
  std::ofstream(out, std::ios::binary)
      << json << "\"traceEvents\":[\n" << kept << "]}\n";
  return "";
}

// The SGLang prefill trace (Qwen3-8B on an MI300X: one step of 36 layers,
// 527 kernels, every one with figures) as if the profiler had started at
// the launch of its 159th kernel: 157 kernels ran without their launch
// and their step annotation (so the attention calls before the cut have no
// KV lengths and stay blank). 115 of them take their figures by signature
// (116 kernels do: one is launched, without an operator) and 20 more by
// their place among the later layers' kernels; none is left blank by
// disagreeing places. Every kernel that inherits, by position or by
// signature, gets exactly the figures and shape the whole trace gives it,
// but two rocprim kernels of a signature that ran two sizes of which the
// launched kernels showed one (the signature rule's limit, not
// position's). 95.9% of GPU time has figures (the whole trace: 100%).
TEST(KinetoInheritRealTest, LateStartOrphansInheritBySignatureAndPosition) {
  constexpr char kPrefill[] =
      "tracelens/tests/traces/inference/sglang_prefilldecode/"
      "sglang_Qwen3-8B_prefilldecode.json.gz";
  const std::string trace = test_support::RealDataFile(kPrefill);
  if (trace.empty()) GTEST_SKIP() << test_support::RealDataMissing(kPrefill);
  TempDir dir("kineto_late_start");
  const std::string late = dir.File("late.json");
  ASSERT_EQ(StartLate(trace, 0.3, late), "");
  const std::string full_store = dir.File("full.sqlite");
  const std::string late_store = dir.File("late.sqlite");
  ImportFile(trace, full_store);
  ImportFile(late, late_store);
  if (HasFatalFailure()) return;

  StoreQuery q(late_store);
  auto stat = [&](const std::string& name) { return Stat(q, name); };
  EXPECT_EQ(stat("unmatched_kernel"), 157);
  EXPECT_EQ(stat("kernels_inherited"), 116);
  EXPECT_EQ(stat("kernels_inherited_by_position"), 20);
  EXPECT_EQ(stat("kernels_position_ambiguous"), 0);
  q.Text("ATTACH '" + full_store + "' AS f");
  EXPECT_EQ(q.Text(
                "SELECT count(*) || ' ' || sum(same) || ' ' || ifnull("
                "group_concat(CASE WHEN same THEN NULL ELSE family END), '') "
                "FROM (SELECT ifnull(l.flops, -1) = ifnull(w.flops, -1) AND "
                "ifnull(l.dram_bytes, -1) = ifnull(w.dram_bytes, -1) AND "
                "l.shape IS w.shape AS same, l.family FROM kernels l JOIN "
                "f.kernels w ON l.correlation_id = w.correlation_id AND "
                "l.start_ns = w.start_ns WHERE l.api_start_ns IS NULL AND "
                "(l.flops_source = 'inherited' OR l.bytes_source = "
                "'inherited'))"),
            "135 133 rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel,"
            "rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel");
  EXPECT_NEAR(q.Real("SELECT 1.0 * sum(CASE WHEN flops IS NOT NULL OR "
                     "dram_bytes IS NOT NULL THEN duration_ns ELSE 0 END) / "
                     "sum(duration_ns) FROM kernels"),
              0.959, 0.0005);
}

}  // namespace
}  // namespace rooftrace
