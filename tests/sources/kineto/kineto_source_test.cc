// PyTorch profiler (Kineto) JSON into the store: every recorded trace of
// ../shared/real-data read in place (counts from the files themselves, by
// category: see each test's comment), GEMM FLOPs against TraceLens's
// reference CSV, CUPTI range-profiler FLOPs against 2*M*N*K, and small
// traces written here for what the recorded ones lack (kernels without
// their launch, several processes and devices, bad input).
#include "sources/kineto/kineto_source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sources/kineto/kineto_reader.h"
#include "sources/registry.h"
#include "store/store.h"
#include "tests/support/counter_checks.h"
#include "tests/support/ncu_rows.h"
#include "tests/support/real_data.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::RealDataFile;
using test_support::RealDataMissing;
using test_support::StoreQuery;
using test_support::TempDir;

constexpr char kBert[] =
    "tracelens/tests/traces/h100/"
    "gaunernst_bert-small-uncased__1016001.redacted.json.gz";
constexpr char kBertGemmCsv[] =
    "tracelens/tests/traces/h100/"
    "gaunernst_bert-small-uncased__1016001_perf_report_csvs_GEMM.csv";
constexpr char kAlexnet[] =
    "hta/tests/data/critical_path/alexnet/"
    "benchmark_result_2869224_1695835535_trace.json.gz";
constexpr char kCuptiProfiler[] =
    "hta/tests/data/cupti_profiler/"
    "benchmark_result_924719_1679055439_trace.json.gz";
constexpr char kTriton[] = "hta/tests/data/triton_example/triton_example.json.gz";
constexpr char kDecode0[] = "nano-vllm-fork/profile_results/decode_gpu_0.json";
constexpr char kDecode100[] =
    "nano-vllm-fork/profile_results/decode_gpu_100.json";
constexpr char kDeepseek[] = "deepseek-profile-data/train.json";
constexpr char kSglangDecode[] =
    "tracelens/tests/traces/inference/sglang_decode/"
    "sglang_Qwen3-8B_decode.json.gz";
constexpr char kSglangDecodeCapture[] =
    "tracelens/tests/traces/inference/sglang_decode/capture_traces/"
    "bs_32_rank0.json.gz";
constexpr char kSglangPrefill[] =
    "tracelens/tests/traces/inference/sglang_prefilldecode/"
    "sglang_Qwen3-8B_prefilldecode.json.gz";
constexpr char kVllmReplay[] =
    "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/"
    "graph_execution.json.gz";
constexpr char kVllmCapture[] =
    "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/"
    "capture_traces/graph_capture_rank_0.1773709679453551615.pt.trace.json.gz";

// The share of the stored kernels' GPU time that has FLOPs or bytes.
double ShareWithFigures(StoreQuery& q) {
  return q.Real(
      "SELECT 1.0 * sum(CASE WHEN flops IS NOT NULL OR dram_bytes IS NOT "
      "NULL THEN duration_ns ELSE 0 END) / sum(duration_ns) FROM kernels");
}

StatusOr<SourceResult> Import(const std::string& file,
                              const std::string& store_path,
                              const SourceOptions& options = {}) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                      Store::Open(store_path, Store::Durability::kScratch));
  static const KinetoSource source;
  return ReadSourceInto(source, file, options, store.get());
}

int64_t Stat(const StoreQuery& q, const std::string& name) {
  return q.Int("SELECT value FROM import_stats WHERE name = '" + name + "'");
}

// A real file imported into a fresh store, or a skip.
class KinetoRealFile {
 public:
  explicit KinetoRealFile(const char* relative) : dir_("kineto") {
    file_ = RealDataFile(relative);
    store_ = dir_.File("runs.sqlite");
  }
  bool present() const { return !file_.empty(); }
  StatusOr<SourceResult> Import(const SourceOptions& o = {}) {
    return rooftrace::Import(file_, store_, o);
  }
  const std::string& file() const { return file_; }
  const std::string& store() const { return store_; }

 private:
  TempDir dir_;
  std::string file_, store_;
};

#define REAL_FILE_OR_SKIP(var, relative)                     \
  KinetoRealFile var(relative);                              \
  if (!var.present()) GTEST_SKIP() << RealDataMissing(relative)

// What each recorded trace holds, counted from the files with Python's json
// module by "cat": kernel events (or, in the range-profiler trace,
// cuda_profiler_range events: it has no kernel events), gpu_memcpy +
// gpu_memset events, and the cuda_runtime / cuda_driver calls rooftrace
// keeps (kernel launches, copies, memsets).
struct RealCounts {
  const char* file;
  int64_t kernels, copies, launches, streams;
};
constexpr RealCounts kRealCounts[] = {
    // 34 cudaLaunchKernel + 22 cuLaunchKernel + 4 cudaLaunchKernelExC +
    // 22 cudaMemsetAsync + 1 cudaMemcpyAsync.
    {kBert, 60, 1, 83, 1},
    // 79 cudaLaunchKernel + 16 cudaMemcpyAsync + 5 cudaMemsetAsync.
    {kAlexnet, 79, 19, 100, 2},
    // 77 ranges; 77 cudaLaunchKernel + 16 cudaMemcpyAsync + 1 cudaMemcpy +
    // 10 cudaMemsetAsync.
    {kCuptiProfiler, 77, 0, 104, 1},
    {kTriton, 1, 0, 1, 1},  // one cuLaunchKernel
    // 11 cuLaunchKernel + 7 cudaLaunchKernel + 1 cuLaunchKernelEx + 11
    // cudaMemcpyAsync.
    {kDecode0, 17, 11, 30, 2},
    // 7 cuLaunchKernel + 5 cudaLaunchKernel + 1 cuLaunchKernelEx + 6
    // cudaMemcpyAsync.
    {kDecode100, 9, 6, 19, 1},
    // 727 cudaLaunchKernel + 196 cudaLaunchKernelExC + 40 cuLaunchKernel +
    // 12 cudaMemsetAsync + 8 cudaMemcpyAsync; streams 7, 23 and 27.
    {kDeepseek, 963, 20, 983, 3},
};

// Every kernel of every recorded trace is stored, each with its launch
// (none of these files has a kernel without one), and the file is told
// from rft by content though it starts with a newline.
TEST(KinetoRealFilesTest, EveryKernelOfEveryFileIsStored) {
  int read = 0;
  for (const RealCounts& c : kRealCounts) {
    SCOPED_TRACE(c.file);
    KinetoRealFile f(c.file);
    if (!f.present()) continue;
    ++read;
    auto source = DetectSource(f.file());
    ASSERT_TRUE(source.ok()) << source.status().message();
    EXPECT_EQ((*source)->format(), "kineto");
    auto result = f.Import();
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(result->kernels, static_cast<uint64_t>(c.kernels));
    StoreQuery q(f.store());
    EXPECT_EQ(q.Int("SELECT count(*) FROM kernels"), c.kernels);
    EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE api_start_ns IS "
                    "NOT NULL"),
              c.kernels);
    EXPECT_EQ(Stat(q, "unmatched_kernel"), 0);
    EXPECT_EQ(Stat(q, "received_launch"), c.launches);
    EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys"), c.copies);
    EXPECT_EQ(q.Int("SELECT count(DISTINCT stream_id) FROM kernels"),
              c.streams);
    EXPECT_EQ(q.Text("SELECT source_format FROM runs"), "kineto");
  }
  if (read == 0) GTEST_SKIP() << RealDataMissing("the Kineto traces");
}

// One CSV line's fields (double-quoted fields may hold commas).
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The H100 BERT trace's GEMMs: for each shape in TraceLens's reference
// report (M, N, K in PyTorch's terms, bias included for addmm), rooftrace's
// analytic FLOPs and minimum bytes are TraceLens's exactly (its FLOPs in
// GFLOP, its bytes in MiB), every call is one kernel, and the kernels carry
// the call's FLOPs as analytic fp16/bf16-tensor work.
TEST(KinetoRealFilesTest, BertGemmFlopsEqualTraceLensPerShape) {
  REAL_FILE_OR_SKIP(f, kBert);
  const std::string csv = RealDataFile(kBertGemmCsv);
  if (csv.empty()) GTEST_SKIP() << RealDataMissing(kBertGemmCsv);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->warning, "");
  StoreQuery q(f.store());
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = CsvFields(line);
  ASSERT_EQ(header[1], "param: M");
  ASSERT_EQ(header[9], "GFLOPS_first");
  ASSERT_EQ(header[10], "Data Moved (MB)_first");
  ASSERT_EQ(header[38], "name_count");
  int shapes = 0;
  int64_t calls = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> row = CsvFields(line);
    if (row.size() < 39) continue;
    SCOPED_TRACE(line.substr(0, 60));
    ++shapes;
    // rooftrace's GEMM is cuBLAS's: m = N, n = M (gemm_shapes.h).
    const std::string where = " FROM gemm_calls WHERE m = " + row[2] +
                              " AND n = " + row[1] + " AND k = " + row[3];
    const auto flops = static_cast<int64_t>(std::llround(std::stod(row[9]) * 1e9));
    const auto bytes =
        static_cast<int64_t>(std::llround(std::stod(row[10]) * 1048576.0));
    EXPECT_EQ(q.Int("SELECT count(DISTINCT flops)" + where), 1);
    EXPECT_EQ(q.Int("SELECT min(flops)" + where), flops);
    EXPECT_EQ(q.Int("SELECT min(min_bytes)" + where), bytes);
    EXPECT_EQ(q.Int("SELECT count(*)" + where), std::stoll(row[38]));
    EXPECT_EQ(q.Int("SELECT sum(kernel_count)" + where), std::stoll(row[38]));
    EXPECT_EQ(q.Int("SELECT count(*) FROM kernels k JOIN gemm_calls g ON "
                    "g.gemm_call_id = k.gemm_call_id WHERE g.m = " + row[2] +
                    " AND g.n = " + row[1] + " AND g.k = " + row[3] +
                    " AND k.flops_bf16_tc = " + std::to_string(flops) +
                    " AND k.flops_source = 'analytic' AND k.bytes_source = "
                    "'analytic' AND k.dram_bytes = " + std::to_string(bytes)),
              std::stoll(row[38]));
    calls += std::stoll(row[38]);
  }
  EXPECT_EQ(shapes, 4);
  EXPECT_EQ(calls, 26);  // the trace's 26 aten::addmm
  EXPECT_EQ(q.Int("SELECT count(*) FROM gemm_calls"), 26);
  // The device and the datasheet entry its name selects.
  EXPECT_EQ(q.Text("SELECT name || '|' || sm_count || '|' || cc_major FROM "
                   "devices"),
            "NVIDIA H100 80GB HBM3|132|9");
  EXPECT_NE(q.Text("SELECT roof_source FROM runs").find("datasheet:"),
            std::string::npos);
  // The ProfilerStep#6 annotation encloses every launch.
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE nvtx_path = "
                  "'ProfilerStep#6'"),
            60);
}

// The H100 BERT trace's other operators (model/ops.h, op_shapes.h). The
// attention is aten::scaled_dot_product_attention -> _scaled_dot_product_
// flash_attention -> _flash_attention_forward, whose Input Dims are
// [[1, 141, 8, 64]] x 3 (batch, length, heads, dim; the SDPA above it has
// [1, 8, 141, 64]), bf16, is_causal "False": FLOPs 4 * B * H * Lq * Lk * D
// = 4 * 1 * 8 * 141 * 141 * 64 = 40,716,288; bytes (Q + K + V + O) =
// 4 * 72,192 elements * 2 = 577,536. Pointwise, 1 x 141 x 512 = 72,192
// elements (bf16, 2 bytes): add 1 FLOP each and 3 tensors moved (433,152
// bytes); native_layer_norm 7 each (505,344) and x, weight[512], bias[512]
// in, y out ((72,192 * 2 + 1,024) * 2 = 290,816 bytes); gelu over
// 1 x 141 x 2048 = 288,768 elements 8 each (2,310,144) and 2 tensors
// (1,155,072 bytes). TraceLens's CSVs beside the trace cover GEMMs and
// kernel times only: no non-GEMM figures to compare with.
TEST(KinetoRealFilesTest, BertAttentionAndPointwiseKernelsAreAnalytic) {
  REAL_FILE_OR_SKIP(f, kBert);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->warning, "");
  StoreQuery q(f.store());
  const std::string op_kernels =
      "SELECT count(*) FROM kernels WHERE gemm_call_id IS NULL AND "
      "flops_source = 'analytic' AND bytes_source = 'analytic'";
  // 4 attention + 10 add (9 add, 1 add_) + 10 layer_norm + 5 gelu, and
  // the attention mask's check (aten::eq over 1 x 141 int64: the integer
  // class, 1 FLOP an element).
  EXPECT_EQ(q.Int(op_kernels), 30);
  EXPECT_EQ(q.Text("SELECT op || ' ' || flops FROM kernels WHERE precision "
                   "= 'int'"),
            "aten::eq 141");
  EXPECT_EQ(q.Int(op_kernels + " AND name LIKE '%flash_fwd_kernel%' AND "
                  "shape = 'b=1 h=8 lq=141 lk=141 d=64' AND precision = "
                  "'bf16_tc' AND flops_bf16_tc = 40716288 AND dram_bytes = "
                  "577536"),
            4);
  EXPECT_EQ(q.Int(op_kernels + " AND shape = '1x141x512' AND flops_fp16 = "
                  "72192 AND dram_bytes = 433152"),
            10);
  EXPECT_EQ(q.Int(op_kernels + " AND name LIKE '%layer_norm%' AND shape = "
                  "'1x141x512' AND flops_fp16 = 505344 AND dram_bytes = "
                  "290816"),
            10);
  EXPECT_EQ(q.Int(op_kernels + " AND shape = '1x141x2048' AND flops_fp16 = "
                  "2310144 AND dram_bytes = 1155072"),
            4);
  // The pooler's gelu, 1 x 141 x 512: 8 * 72,192 FLOPs, 2 tensors moved.
  EXPECT_EQ(q.Int(op_kernels + " AND shape = '1x141x512' AND flops_fp16 = "
                  "577536 AND dram_bytes = 288768"),
            1);
  // Not modelled: 3 embedding gathers (indexSelect) and the mask's
  // aten::all.
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE flops_source = "
                  "'none'"),
            4);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE name LIKE "
                  "'%indexSelect%' AND flops_source = 'none'"),
            3);
}

// The BERT trace is one encoder forward pass (ProfilerStep#6 around it):
// one step, whose GEMMs see 141 tokens, labelled prefill with evidence
// that says it is a single forward pass, every kernel in it.
TEST(KinetoRealFilesTest, BertIsOneForwardPass) {
  REAL_FILE_OR_SKIP(f, kBert);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  EXPECT_EQ(q.Int("SELECT count(*) FROM steps"), 1);
  EXPECT_EQ(q.Text("SELECT phase || '|' || token_count || '|' || "
                   "kernel_count || '|' || evidence FROM steps"),
            "prefill|141|60|GEMMs see 141 tokens in a single forward step "
            "with no decode after it: an encoder, or one prefill; step "
            "ended by the end of the session");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE phase = 'prefill'"),
            60);
}

// The A100 CUPTI range-profiler trace (no kernel events, one
// cuda_profiler_range per kernel with SASS instruction counts): AlexNet's
// fully connected layers at batch 128, 9216 -> 4096 and 4096 -> 4096, run
// as ampere_sgemm kernels (twice each: warm-up and measure) whose measured
// fp32 FLOPs are within 0.1% of 2*M*N*K.
TEST(KinetoRealFilesTest, RangeProfilerFlopsOfAlexNetFcLayers) {
  REAL_FILE_OR_SKIP(f, kCuptiProfiler);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE flops_source = "
                  "'counters'"),
            77);
  const double fc6 = 2.0 * 128 * 4096 * 9216, fc7 = 2.0 * 128 * 4096 * 4096;
  for (double expected : {fc6, fc7}) {
    const std::string near =
        " FROM kernels WHERE name = 'ampere_sgemm_32x32_sliced1x4_tn' AND "
        "abs(flops_fp32 - " + std::to_string(expected) + ") <= " +
        std::to_string(expected * 0.001);
    EXPECT_EQ(q.Int("SELECT count(*)" + near), 2) << expected;
  }
  // 9,667,346,432 FLOPs measured for fc6 (2 x 4,833,673,216 FFMA).
  EXPECT_EQ(q.Int("SELECT max(flops_fp32) FROM kernels WHERE name = "
                  "'ampere_sgemm_32x32_sliced1x4_tn'"),
            9667346432);
  // No DRAM counter was asked for: bytes unknown, not zero.
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE bytes_source = "
                  "'counters' OR dram_read_bytes IS NOT NULL"),
            0);
  // The raw counters are kept: nine per range.
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernel_metrics"), 77 * 9);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernel_metrics WHERE name = "
                  "'smsp__sass_thread_inst_executed_op_ffma_pred_on.sum'"),
            77);
  // record_shapes was off: the linear layers have no shapes, and say so.
  EXPECT_NE(result->warning.find("GEMM operators without usable shapes"),
            std::string::npos)
      << result->warning;
}

// The Triton kernel launched through cuLaunchKernel joins its launch; the
// ProfilerStep annotation is in another pid (no GPU work: no session).
TEST(KinetoRealFilesTest, TritonKernelThroughCuLaunchKernel) {
  REAL_FILE_OR_SKIP(f, kTriton);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  EXPECT_EQ(q.Text("SELECT name || '|' || correlation_id || '|' || thread_id "
                   "|| '|' || grid_x || '|' || block_x || '|' || "
                   "registers_per_thread || '|' || start_ns || '|' || "
                   "duration_ns || '|' || api_start_ns FROM kernels"),
            "triton_poi_fused_add_cos_sin_0|35|1670242|1|128|16|"
            "2413669097444592|1760|2413669097399166");
  EXPECT_EQ(q.Int("SELECT count(*) FROM sessions"), 1);
  EXPECT_EQ(q.Int("SELECT pid FROM sessions"), 1670242);
}

// nano-vllm decode steps on an RTX 4080 Laptop: the cuBLAS GEMMs of 3
// tokens (decode_gpu_0) and of 1 token (decode_gpu_100, gemv kernels), each
// inside aten::linear -> matmul -> mm, get the mm's shape, the weight as
// operand A, and 2*M*N*K analytic FLOPs.
TEST(KinetoRealFilesTest, NanoVllmDecodeGemmsOfThreeTokensAndOne) {
  struct Case {
    const char* file;
    const char* shapes;  // m x n x k of the GEMM kernels, in time order
  };
  const Case cases[] = {
      {kDecode0, "6144x3x1024,1024x3x3072,4096x3x1024"},
      {kDecode100, "1024x1x3072,4096x1x1024"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    KinetoRealFile f(c.file);
    if (!f.present()) GTEST_SKIP() << RealDataMissing(c.file);
    auto result = f.Import();
    ASSERT_TRUE(result.ok()) << result.status().message();
    StoreQuery q(f.store());
    EXPECT_EQ(q.Text("SELECT group_concat(s, ',') FROM (SELECT g.m || 'x' || "
                     "g.n || 'x' || g.k AS s FROM kernels k JOIN gemm_calls g "
                     "ON g.gemm_call_id = k.gemm_call_id ORDER BY "
                     "k.start_ns)"),
              c.shapes);
    EXPECT_EQ(q.Int("SELECT count(*) FROM kernels k JOIN gemm_calls g ON "
                    "g.gemm_call_id = k.gemm_call_id WHERE k.flops = 2 * "
                    "g.m * g.n * g.k AND k.flops_source = 'analytic' AND "
                    "g.weight_operand = 'a' AND k.token_count = g.n"),
              q.Int("SELECT count(*) FROM kernels WHERE gemm_call_id IS NOT "
                    "NULL"));
  }
}

// The H800 training chunk: 963 kernels on streams 7, 23 and 27, and the 42
// user annotations as ranges with paths.
TEST(KinetoRealFilesTest, DeepseekTrainingChunkStreamsAndAnnotations) {
  REAL_FILE_OR_SKIP(f, kDeepseek);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  EXPECT_EQ(q.Text("SELECT group_concat(n, ',') FROM (SELECT stream_id || "
                   "':' || count(*) AS n FROM kernels GROUP BY stream_id "
                   "ORDER BY stream_id)"),
            "7:907,23:16,27:40");
  EXPECT_EQ(Stat(q, "received_nvtx_range"), 42);
  EXPECT_EQ(q.Int("SELECT count(*) FROM nvtx_ranges"), 42);
  EXPECT_EQ(q.Text("SELECT name FROM devices"), "NVIDIA H800");
}

// The H800 MoE chunk is rank 0 of 64 on the NCCL backend, yet holds no
// NCCL kernel: its expert-parallel traffic runs in DeepEP's own kernels
// (dpsk::ep::internode::dispatch / combine), which carry no collective
// arguments. None gets collective figures, and none is guessed.
TEST(KinetoRealFilesTest, DeepseekDeepEpKernelsAreNotCollectives) {
  REAL_FILE_OR_SKIP(f, kDeepseek);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE name LIKE 'nccl%'"), 0);
  EXPECT_GT(q.Int("SELECT count(*) FROM kernels WHERE name LIKE "
                  "'%dpsk::ep::internode::%'"),
            0);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernel_metrics WHERE name LIKE "
                  "'collective.%'"),
            0);
  EXPECT_EQ(result->warning.find("NCCL"), std::string::npos)
      << result->warning;
}

// The same prefill gathers the logits' rows with torch.gather over an
// index expanded from one column (dims [15360, 4096], strides [1, 0]: 15,360
// int64s in memory). Its kernel's bytes are the gathered bf16 elements read
// and written and the stored index: 2 x 62,914,560 x 2 + 15,360 x 8 =
// 251,781,120 (at its logical size the index made it 754,974,720, three
// times the traffic, and the kernel 215% of the DRAM roof).
TEST(KinetoRealFilesTest, SglangGatherWithABroadcastIndexReadsItOnce) {
  REAL_FILE_OR_SKIP(f, kSglangPrefill);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  const std::string where =
      " FROM kernels WHERE op = 'aten::gather' AND shape = "
      "'151936x4096 [15360x4096]'";
  ASSERT_EQ(q.Int("SELECT count(*)" + where), 1);
  const double strided = 2.0 * 15360 * 4096 * 2 + 15360 * 8;
  const double bytes = q.Real("SELECT dram_bytes" + where);
  EXPECT_NEAR(bytes, strided, 0.01 * strided);
  EXPECT_EQ(bytes, strided);
  // Within the MI300X's 5.3 TB/s now.
  EXPECT_LE(q.Real("SELECT fraction_of_roof" + where), 1.0);
}

// SGLang serving Qwen3-8B on MI300X (ROCm), a prefill of 15,360 tokens:
// the serving engine's own operators (aiter's norms, sgl_kernel's
// silu_and_mul and rotary, store_cache) give their kernels the figures
// TraceLens's perf CSVs give for the same calls, to the FLOP and the byte
// (RMSNorm_fwd, UnaryElementwise, RoPE_fwd, InferenceAttention_fwd), and
// so does the prefill attention (aiter::mha_batch_prefill, 36 calls), costed
// with the step annotation around it (execute_15360_context_15(sq15360
// sk15360 sqsq15728640 sqsk15728640)...: 15 prompts of 1,024 tokens):
// 128.85 GFLOP as TraceLens's. All of the GPU time is on the roofline
// (about 86% before these operators were modelled: the GEMMs and the bf16
// copies; 95.9% before the attention).
TEST(KinetoRealFilesTest, SglangServingOperatorsHaveTraceLensFigures) {
  REAL_FILE_OR_SKIP(f, kSglangPrefill);
  auto result = f.Import();
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  auto figures = [&](const std::string& shape) {
    return q.Text("SELECT group_concat(DISTINCT ifnull(flops, '-') || '/' || "
                  "dram_bytes) FROM kernels WHERE shape = '" + shape + "'");
  };
  EXPECT_EQ(figures("491520x128"), "252641280/251658496");
  EXPECT_EQ(figures("122880x128"), "63160320/62914816");
  EXPECT_EQ(figures("15360x12288"), "943718400/1132462080");
  EXPECT_EQ(figures("q=15360x4096 k=15360x1024"), "235929600/314572800");
  EXPECT_EQ(figures("k=15360x1024 v=15360x1024"), "-/125829120");
  // The fused add+norm (72 kernels) and the final norm (1): 15360x4096.
  EXPECT_EQ(q.Text("SELECT group_concat(f, ',') FROM (SELECT DISTINCT "
                   "flops || '/' || dram_bytes AS f FROM kernels WHERE shape "
                   "= '15360x4096' ORDER BY f)"),
            "251688960/251666432,314603520/503324672");
  // bf16 norms are bf16's class (before: labelled fp16); their FLOPs are in
  // the 16-bit CUDA-core column.
  EXPECT_EQ(q.Text("SELECT group_concat(DISTINCT precision) FROM kernels "
                   "WHERE shape = '15360x4096'"),
            "bf16");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE shape = '15360x4096' "
                  "AND flops_fp16 = flops"),
            73);
  EXPECT_EQ(q.Text("SELECT group_concat(DISTINCT flops || '/' || dram_bytes) "
                   "FROM kernels WHERE shape = 'hq=32 hkv=8 d=128 "
                   "prefill=15x15360/15360 decode=0x0/0'"),
            "128849018880/314572800");
  EXPECT_GT(ShareWithFigures(q), 0.999);
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:mi300x");
}

// SGLang's decode at batch 32 replays one captured HIP graph: without the
// capture trace its 544 graph kernels have no operator (0.8% of GPU time
// with figures); with it, each takes its captured operator's shapes: the
// GEMMs see n = 32 tokens through Qwen3-8B's projections. The paged
// attention (21.8% of GPU time; SGLang's profiler names each call site
// sglang_profiler::attention_paged_attention_ragged_N) takes the KV lengths
// of the replay's step annotation (32 decodes attending to 32,785 tokens):
// TraceLens's 0.537 GFLOP and 128.57 MiB per layer, counted once: the QKV
// kernel carries the FLOPs and the reads, the reduce kernel (1.8% of GPU
// time, blank before) the output it writes, 32 x 32 x 128 bf16 values.
// 99.7% of GPU time has figures (97.8% before the reduce kernel had its
// share).
TEST(KinetoRealFilesTest, SglangGraphReplayTakesTheCapturedShapes) {
  REAL_FILE_OR_SKIP(f, kSglangDecode);
  const std::string capture = RealDataFile(kSglangDecodeCapture);
  if (capture.empty()) GTEST_SKIP() << RealDataMissing(kSglangDecodeCapture);
  SourceOptions o;
  o.capture_paths = {capture};
  auto result = f.Import(o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_NE(result->warning.find("1 graph launches matched a captured graph"),
            std::string::npos)
      << result->warning;
  StoreQuery q(f.store());
  EXPECT_EQ(q.Text("SELECT group_concat(s, ',') FROM (SELECT shape || ' x' || "
                   "count(*) AS s FROM kernels WHERE gemm_call_id IS NOT NULL "
                   "GROUP BY shape ORDER BY shape)"),
            "m=151936 n=32 k=4096 batch=1 x1,m=24576 n=32 k=4096 batch=1 x36,"
            "m=4096 n=32 k=12288 batch=1 x36,m=4096 n=32 k=4096 batch=1 x36,"
            "m=6144 n=32 k=4096 batch=1 x36");
  // Every graph kernel has its own node; no two share one.
  EXPECT_EQ(q.Int("SELECT count(DISTINCT graph_node_id) FROM kernels WHERE "
                  "graph_node_id IS NOT NULL AND graph_node_id > 0"),
            544);
  EXPECT_EQ(q.Text("SELECT group_concat(DISTINCT flops || '/' || dram_bytes) "
                   "FROM kernels WHERE name LIKE '%paged_attention_ll4mi_QKV%'"),
            "537149440/134549504");
  EXPECT_EQ(q.Text("SELECT count(*) || ' ' || group_concat(DISTINCT "
                   "ifnull(flops, '-') || '/' || dram_bytes) FROM kernels "
                   "WHERE name LIKE '%paged_attention_ll4mi_reduce%'"),
            "36 -/262144");
  // The two kernels of the 36 layers together: TraceLens's 128.57 MiB each.
  EXPECT_EQ(q.Int("SELECT sum(dram_bytes) FROM kernels WHERE name LIKE "
                  "'%paged_attention_ll4mi%'"),
            36 * 134811648LL);
  EXPECT_GT(ShareWithFigures(q), 0.995);
  // The same trace without its capture: the replay has no operators.
  KinetoRealFile bare(kSglangDecode);
  ASSERT_TRUE(bare.Import().ok());
  StoreQuery b(bare.store());
  EXPECT_LT(b.Real("SELECT 1.0 * sum(CASE WHEN flops IS NOT NULL OR "
                   "dram_bytes IS NOT NULL THEN duration_ns ELSE 0 END) / "
                   "sum(duration_ns) FROM kernels"),
            0.01);
}

// vLLM serving gpt-oss-20b with piecewise graphs: one 8,192-token step of
// 9 prefill chunks and 37 decodes. Its MoE layers (vllm::moe_forward, run
// inside the graphs as triton_kernels' matmul_ogs) hold 78.6% of GPU time;
// their inputs give tokens, the padded hidden size (3,072) and the 32
// experts, and --model gives top-4 routing, the expert width (2,880, padded
// alike to 3,072) and MXFP4 weights: the up projection (the _swiglu
// kernel) and the down one get TraceLens's MoE_unfused figures, 1,236.95
// and 618.48 GFLOP, 528 and 384 MiB. The eager attention between the
// pieces takes the step annotation's aggregates: 65.01 GFLOP and 211.83 MiB
// as TraceLens's InferenceAttention_fwd on the full-attention layers. The
// model's even layers see 128 tokens (layer_types): their KV read is
// capped at the window, 17.18 GFLOP and 153.7 MiB (TraceLens costs every
// layer as full; ops_test derives the capped figures). 15% of GPU time had
// figures with the capture alone; 98.4% with --model, 99.7% with
// Inductor's Triton pointwise kernels (1.3%) costed from their buffers,
// and 99.8% with the routing's top-k and token sort costed from their own
// operators' tensors (100.0% counting the sort's kernels "in op").
TEST(KinetoRealFilesTest, VllmMoeAndAttentionTakeModelAndStep) {
  REAL_FILE_OR_SKIP(f, kVllmReplay);
  const std::string capture = RealDataFile(kVllmCapture);
  if (capture.empty()) GTEST_SKIP() << RealDataMissing(kVllmCapture);
  StatusOr<ModelFacts> model = LoadModelFacts("gpt-oss-20b");
  ASSERT_TRUE(model.ok());
  SourceOptions o;
  o.capture_paths = {capture};
  o.model = *model;
  auto result = f.Import(o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(f.store());
  auto figures = [&](const std::string& where) {
    return q.Text("SELECT group_concat(DISTINCT ifnull(flops, '-') || '/' || "
                  "ifnull(dram_bytes, '-')) FROM kernels WHERE " + where);
  };
  EXPECT_EQ(figures("name LIKE '%matmul_ogs%swiglu%'"),
            "1236950581248/553648128");
  EXPECT_EQ(figures("name LIKE '%matmul_ogs%' AND name NOT LIKE '%swiglu%'"),
            "618475290624/402653184");
  // The step's 24 attention calls, in order, alternate window and full.
  EXPECT_EQ(q.Text("SELECT group_concat(f, ' ') FROM (SELECT flops || '/' "
                   "|| dram_bytes AS f FROM kernels WHERE name = "
                   "'kernel_unified_attention_2d' ORDER BY start_ns LIMIT 4)"),
            "17179869184/161181696 65010180096/222115840 "
            "17179869184/161181696 65010180096/222115840");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE name = "
                  "'kernel_unified_attention_2d' AND flops = 17179869184"),
            12);
  // The finalize sums each token's 4 routed rows: 8192 x 4 x 3072 adds,
  // (32768 + 8192) rows of 3072 bf16 moved (not a TraceLens figure).
  EXPECT_EQ(figures("name LIKE '%_finalize_matmul_scatter%'"),
            "100663296/251658240");
  // Each layer's routing runs as two operators of its own, each costed
  // from its own tensors (op_shapes_test derives the bytes): TopK (the
  // logits read; 4 bf16 values, 4 int16 ids and the bit matrix written:
  // 688,128 B) on its one kernel, and SortTokens (491,648 B) on the
  // longest of its three (the bit-matrix sums, the memset and the
  // compute), the other two "in op SortTokens". No FLOPs: comparisons.
  EXPECT_EQ(figures("name = '_topk_forward'"), "-/688128");
  EXPECT_EQ(q.Text("SELECT count(*) || ' ' || sum(dram_bytes) FROM kernels "
                   "WHERE dram_bytes IS NOT NULL AND op = 'SortTokens'"),
            "24 11799552");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE flops IS NOT NULL AND "
                  "(name LIKE '%routing%' OR name LIKE '%topk%' OR name "
                  "LIKE '%bitmatrix%')"),
            0);
  // Inductor's Triton pointwise kernels move their buffers once: the
  // padding of the hidden states to 3,072 (8192 x 2880 read, 8192 x 3072
  // written, bf16) and the fp32-to-bf16 copy of the rotary table
  // (131072 x 64). The fused embedding reads a few rows of a 201,088-row
  // table its record cannot size: blank.
  EXPECT_EQ(figures("name = 'triton_poi_fused_constant_pad_nd_moe_forward_0'"),
            "-/97517568");
  EXPECT_EQ(figures("name = 'triton_poi_fused__to_copy_1'"), "-/50331648");
  EXPECT_EQ(figures("name = 'triton_poi_fused_0'"), "-/-");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE name LIKE "
                  "'%matmul_ogs%'"),
            48);
  EXPECT_GT(ShareWithFigures(q), 0.995);
  // The token sort's other kernels (0.12% of GPU time) keep its operator
  // and shape without figures, which the report counts "in op SortTokens"
  // (report.h InCostedOp): 100.0% of the GPU time is on the roofline
  // counting them.
  EXPECT_EQ(q.Text("SELECT count(*) || ' ' || group_concat(DISTINCT op) FROM "
                   "kernels WHERE flops IS NULL AND dram_bytes IS NULL AND "
                   "op != '' AND shape != ''"),
            "48 SortTokens");
  EXPECT_GT(q.Real("SELECT 1.0 * sum(CASE WHEN flops IS NOT NULL OR "
                   "dram_bytes IS NOT NULL OR (op != '' AND shape != '') "
                   "THEN duration_ns ELSE 0 END) / sum(duration_ns) FROM "
                   "kernels"),
            0.9995);

  // Without --model the MoE layers stay blank, and the import says how to
  // fill them.
  KinetoRealFile bare(kVllmReplay);
  SourceOptions no_model;
  no_model.capture_paths = {capture};
  auto blank = bare.Import(no_model);
  ASSERT_TRUE(blank.ok()) << blank.status().message();
  EXPECT_NE(blank->warning.find("pass --model CONFIG"), std::string::npos)
      << blank->warning;
  StoreQuery b(bare.store());
  EXPECT_EQ(b.Int("SELECT count(*) FROM kernels WHERE name LIKE "
                  "'%matmul_ogs%' AND flops IS NOT NULL"),
            0);
  EXPECT_LT(ShareWithFigures(b), 0.2);
}

// ------------------------------------------------------------ synthetic

// A Kineto trace written from event lines.
std::string Trace(const std::vector<std::string>& events,
                  const std::string& extra = "") {
  std::string out =
      "\n{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\",\n"
      "\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB "
      "HBM3\", \"numSms\": 132, \"computeMajor\": 9, \"computeMinor\": 0}, "
      "{\"id\": 1, \"name\": \"NVIDIA A100-SXM4-80GB\", \"numSms\": 108}]," +
      extra + "\n\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    out += events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  }
  return out + "]}\n";
}

std::string Launch(int pid, int tid, const std::string& ts, uint64_t corr,
                   const std::string& name = "cudaLaunchKernel") {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" + name +
         "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " +
         std::to_string(tid) + ", \"ts\": " + ts +
         ", \"dur\": 2, \"args\": {\"correlation\": " + std::to_string(corr) +
         "}}";
}

std::string Kernel(int device, int stream, const std::string& ts,
                   uint64_t corr, const std::string& extra_args = "") {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" +
         std::to_string(corr) + "\", \"pid\": " + std::to_string(device) +
         ", \"tid\": " + std::to_string(stream) + ", \"ts\": " + ts +
         ", \"dur\": 3.5, \"args\": {" + extra_args + "\"device\": " +
         std::to_string(device) + ", \"stream\": " + std::to_string(stream) +
         ", \"correlation\": " + std::to_string(corr) +
         ", \"grid\": [4, 2, 1], \"block\": [128, 1, 1], \"registers per "
         "thread\": 32, \"shared memory\": 1024}}";
}

std::string Op(int pid, const std::string& name, const std::string& ts,
               const std::string& dur, const std::string& args) {
  return "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name +
         "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " +
         std::to_string(pid) + ", \"ts\": " + ts + ", \"dur\": " + dur +
         ", \"args\": {" + args + "}}";
}

std::string Annotation(int pid, const std::string& name,
                       const std::string& ts, const std::string& dur) {
  return "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"" + name +
         "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " +
         std::to_string(pid) + ", \"ts\": " + ts + ", \"dur\": " + dur + "}";
}

constexpr char kAddmmArgs[] =
    "\"External id\": 7, \"Input Dims\": [[512], [141, 512], [512, 512], [], "
    "[]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
    "\"c10::BFloat16\", \"Scalar\", \"Scalar\"]";

// A kernel event of the given name, on device 0, stream 7.
std::string NamedKernel(const std::string& name, const std::string& ts,
                        const std::string& dur, uint64_t corr) {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
         "\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts + ", \"dur\": " + dur +
         ", \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " +
         std::to_string(corr) + "}}";
}

// Kernels launched one after another by host thread 100 (launches at 10,
// 20, ... us; kernels from 100 us, 20 us apart, 15 us long; correlation
// ids from 1), appended to `e`.
template <size_t N>
void AppendLaunchedKernels(const char* const (&kernels)[N],
                           std::vector<std::string>* e) {
  for (size_t i = 0; i < N; ++i) {
    e->push_back(Launch(100, 100, std::to_string(10 + 10 * i), i + 1));
    e->push_back(NamedKernel(kernels[i], std::to_string(100 + 20 * i), "15",
                             i + 1));
  }
}

// One gpt-oss-120b MoE layer of rank 0 of 8 as vLLM runs it on Blackwell
// (TensorRT-LLM's MXFP4 x MXFP8 kernels), after an attention call that was
// given 8 of the model's 64 heads: the tensor-parallel degree is 8.
std::vector<std::string> TensorParallelMoeLayer(bool with_attention) {
  std::vector<std::string> e;
  if (with_attention) {
    e.push_back(Op(100, "vllm::unified_attention_with_output", "1", "3",
                   "\"Input Dims\": [[32, 8, 64], [32, 1, 64], [32, 1, 64], "
                   "[32, 8, 64], []], \"Input type\": [\"c10::BFloat16\", "
                   "\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", "
                   "\"\"]"));
  }
  e.push_back(Op(100, "vllm::moe_forward", "5", "60",
                 "\"Input Dims\": [[32, 2880], [32, 128], []], \"Input "
                 "type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\"]"));
  const char* kernels[] = {
      "routingIndicesClusterKernel",
      "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x8x512u2_s6_et64x8_m128x8x32_cga1x1x1_"
      "16dp256b_rM_TN_transOut_schPd2x1x2x1_bN_rgTma_clmp_swiGlu_dynB_sm100f",
      "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x8x512u2_s6_et64x8_m128x8x32_"
      "cga1x1x1_16dp256b_rM_TN_transOut_schPd2x1x2x1_bN_rgTma_clmp_dynB_sm100f",
      "moe::dev::finalize::finalizeKernel"};
  AppendLaunchedKernels(kernels, &e);
  return e;
}

constexpr char kEightRanks[] =
    "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
    "\"world_size\": 8},";

class KinetoSyntheticTest : public ::testing::Test {
 protected:
  KinetoSyntheticTest() : dir_("kineto") {}
  std::string Write(const std::string& text, const std::string& name =
                                                 "trace.json") {
    const std::string path = dir_.File(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string Store() { return dir_.File("runs" + std::to_string(++n_) +
                                         ".sqlite"); }
  // TensorParallelMoeLayer on rank 0 of 8, imported with --model
  // gpt-oss-120b into a new store.
  StatusOr<SourceResult> ImportGptOss120b(bool with_attention) {
    const std::string path = Write(
        Trace(TensorParallelMoeLayer(with_attention), kEightRanks));
    RT_ASSIGN_OR_RETURN(ModelFacts model, LoadModelFacts("gpt-oss-120b"));
    SourceOptions o;
    o.model = model;
    return Import(path, Store(), o);
  }
  TempDir dir_;
  int n_ = 0;
};

// An NCCL all_reduce whose args name the collective (recent PyTorch puts
// record_param_comms's args on the kernel): 4 Mi bf16 elements over 8
// ranks in 100 us. The kernel row's shape says what was read; the message,
// group and bandwidths are metrics (8,388,608 B / 100 us = 83.88608 GB/s,
// x 2*7/8 = 146.80064 GB/s); it has no FLOPs and no DRAM bytes: a
// collective's bytes cross links, not the roof's memory.
TEST_F(KinetoSyntheticTest, NcclKernelGetsMessageAndBusBandwidth) {
  const std::string path = Write(Trace({
      Launch(100, 100, "10", 1, "cudaLaunchKernelExC"),
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
      "\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<"
      "4096ul>)\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 100, "
      "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1, "
      "\"Collective name\": \"allreduce\", \"dtype\": \"BFloat16\", "
      "\"In msg nelems\": 4194304, \"Out msg nelems\": 4194304, "
      "\"Group size\": 8, \"Process Group Name\": \"0\"}}",
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->warning, "");
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT shape || ' ' || flops_source || ' ' || "
                   "bytes_source || ' ' || ifnull(dram_bytes, 'null') FROM "
                   "kernels"),
            "all_reduce bf16 bytes=8388608 ranks=8 none none null");
  EXPECT_EQ(q.Text("SELECT group_concat(name || '=' || value || ' ' || unit, "
                   "', ') FROM (SELECT * FROM kernel_metrics ORDER BY name)"),
            "collective.algbw=83886080000.0 bytes/s, "
            "collective.busbw=146800640000.0 bytes/s, "
            "collective.group_size=8.0 ranks, "
            "collective.message_bytes=8388608.0 bytes");
}

// vLLM's all-reduce through PyTorch's symmetric memory (multimem, no NCCL
// kernel, no record_param_comms): the operator's tensor is the message,
// 2 Mi bf16 = 4,194,304 bytes, and the trace's world size (8) the group;
// in 50 us that is 83.89 GB/s, x 2*7/8 = 146.80 GB/s on the bus.
TEST_F(KinetoSyntheticTest, SymmetricMemoryAllReduceGetsItsMessage) {
  const std::string path = Write(Trace(
      {Op(100, "symm_mem::multimem_all_reduce_", "5", "40",
          "\"Input Dims\": [[512, 4096], [], []], \"Input type\": "
          "[\"c10::BFloat16\", \"\", \"\"]"),
       Launch(100, 100, "10", 1),
       "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
       "\"c10d::symmetric_memory::multimem_all_reduce_kernel\", \"pid\": "
       "0, \"tid\": 7, \"ts\": 20, \"dur\": 50, \"args\": {\"device\": "
       "0, \"stream\": 7, \"correlation\": 1}}"},
      "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, "
      "\"world_size\": 8},"));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->rank, 3);
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT shape FROM kernels"),
            "all_reduce bf16 bytes=4194304 ranks=8");
  EXPECT_EQ(q.Text("SELECT group_concat(name || '=' || value, ', ') FROM "
                   "(SELECT * FROM kernel_metrics ORDER BY name)"),
            "collective.algbw=83886080000.0, collective.busbw=146800640000.0, "
            "collective.group_size=8.0, collective.message_bytes=4194304.0");
}

// Each rank holds 1/8 of every expert's width (2880 / 8 = 360): the up
// projection is 2 x 32 tokens x 4 experts x 2880 x 720 FLOPs, and reads
// 128 experts' 4-bit slices (128 x 2880 x 720 / 2 B) plus 32 x 2880 + 128
// x 360 bf16 activations; the down one half the FLOPs. The kernels' names
// say MXFP8 x MXFP4: the fp8 tensor class, not the activations' bf16. The
// routing reads 32 x 128 bf16 logits and writes 4 ids and weights per
// token: 5 x 4096 FLOPs, 8192 + 768 B.
TEST_F(KinetoSyntheticTest, MoeUnderTensorParallelismTakesOneRanksWidth) {
  auto result = ImportGptOss120b(true);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  auto row = [&](const std::string& like) {
    return q.Text("SELECT ifnull(flops, '-') || '/' || ifnull(dram_bytes, "
                  "'-') || ' ' || ifnull(precision, '-') || ' ' || "
                  "ifnull(shape, '-') FROM kernels WHERE name LIKE '" +
                  like + "'");
  };
  EXPECT_EQ(row("bmm_MxE4m3%"),
            "530841600/132986880 fp8_tc moe up t=32 h=2880 i=360 e=128 k=4 "
            "w4 tp=8");
  EXPECT_EQ(row("bmm_Bfloat16%"),
            "265420800/66631680 fp8_tc moe down t=32 h=2880 i=360 e=128 k=4 "
            "w4 tp=8");
  EXPECT_EQ(row("routing%"), "20480/8960 bf16 moe routing t=32 e=128 k=4");
  EXPECT_EQ(row("%finalizeKernel"),
            "368640/921600 bf16 moe finalize t=32 h=2880 i=360 e=128 k=4 w4 "
            "tp=8");
}

// vLLM's fused-MoE path (Mixtral-8x7B, 32 tokens, top 2 of 8 experts):
// inside vllm::moe_forward the routing runs as operators of its own, whose
// outputs are passed in. Each stage takes its own tensors' bytes on its own
// kernel, not the model-derived routing record of the layer:
// topk_softmax moves 3 x 32 x 2 x 4 B of weights and ids and reads 32 x 8
// bf16 logits (1,280 B); moe_align_block_size reads the 64 ids and writes
// 184 sorted slots, 12 block experts and one count (1,044 B). The grouped
// GEMMs and the sum keep the layer's figures.
TEST_F(KinetoSyntheticTest, FusedMoeRoutingStagesTakeTheirOwnTensors) {
  std::vector<std::string> e;
  e.push_back(Op(100, "vllm::moe_forward", "5", "60",
                 "\"Input Dims\": [[32, 4096], [32, 8], []], \"Input "
                 "type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\"]"));
  e.push_back(Op(100, "_moe_C::topk_softmax", "8", "4",
                 "\"Input Dims\": [[32, 2], [32, 2], [32, 2], [32, 8], []], "
                 "\"Input type\": [\"float\", \"int\", \"int\", "
                 "\"c10::BFloat16\", \"Scalar\"], \"Concrete Inputs\": "
                 "[\"\", \"\", \"\", \"\", \"False\"]"));
  e.push_back(Op(100, "_moe_C::moe_align_block_size", "18", "4",
                 "\"Input Dims\": [[32, 2], [], [], [184], [12], [1]], "
                 "\"Input type\": [\"int\", \"Scalar\", \"Scalar\", "
                 "\"int\", \"int\", \"int\"], \"Concrete Inputs\": "
                 "[\"\", \"8\", \"16\", \"\", \"\", \"\"]"));
  const char* kernels[] = {
      "void vllm::moe::topkGatingSoftmax<8, 8, 4, 16, 32, int>(...)",
      "void vllm::moe::moe_align_block_size_kernel<int>(...)",
      "fused_moe_kernel", "fused_moe_kernel",
      "void vllm::moe::moe_sum_kernel<c10::BFloat16, 2>(...)"};
  AppendLaunchedKernels(kernels, &e);
  const std::string path = Write(Trace(e));
  StatusOr<ModelFacts> model = LoadModelFacts("Mixtral-8x7B");
  ASSERT_TRUE(model.ok());
  SourceOptions o;
  o.model = *model;
  auto result = Import(path, Store(), o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  auto row = [&](const std::string& like) {
    return q.Text("SELECT ifnull(flops, '-') || '/' || ifnull(dram_bytes, "
                  "'-') || ' ' || op FROM kernels WHERE name LIKE '" + like +
                  "'");
  };
  EXPECT_EQ(row("%topkGatingSoftmax%"), "-/1280 _moe_C::topk_softmax");
  EXPECT_EQ(row("%moe_align_block_size_kernel%"),
            "-/1044 _moe_C::moe_align_block_size");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE name = "
                  "'fused_moe_kernel' AND flops > 0 AND op = "
                  "'vllm::moe_forward'"),
            2);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE shape LIKE "
                  "'moe routing%'"),
            0);
}

// On one of several ranks with no attention call to count heads by, the
// tensor-parallel degree is not known: the layer stays blank, and the
// warning says why (not a guess of one rank or of all).
TEST_F(KinetoSyntheticTest, MoeOnSeveralRanksWithoutHeadsStaysBlank) {
  auto result = ImportGptOss120b(false);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_NE(result->warning.find("1 MoE layers on one of several ranks"),
            std::string::npos)
      << result->warning;
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE name LIKE 'bmm%' AND "
                  "flops IS NOT NULL"),
            0);
}

// A vLLM decode step of 4 requests over 4,100 keys (from 1 us, for `dur`
// us), and an attention call in it (8 query heads, 1 KV head, 64 wide,
// bf16; from `ts`, for `dur`).
std::string DecodeStepOf4(const std::string& dur) {
  return Annotation(100,
                    "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4"
                    "(sq4sk4100sqsq4sqsk4100)",
                    "1", dur);
}
std::string AttentionOf4(const std::string& ts, const std::string& dur) {
  return Op(100, "vllm::unified_attention_with_output", ts, dur,
            "\"Input Dims\": [[4, 8, 64], [4, 1, 64], [4, 1, 64], "
            "[4, 8, 64], []], \"Input type\": [\"c10::BFloat16\", "
            "\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", "
            "\"\"]");
}

// vLLM's attention call takes the new tokens' keys (bf16), but reads the
// cached ones from the KV cache its cache write writes into: with an fp8
// (uint8) cache they are read at one byte. A decode step of 4 requests over
// 4,100 keys: 4 new tokens move 4 x (8 + 1) x 128 bf16 values (9,216 B),
// the 4,096 cached keys and values 4,096 x 128 values at the cache's size.
TEST_F(KinetoSyntheticTest, ServingAttentionReadsTheCacheAtItsSize) {
  auto bytes_with_cache = [&](const std::string& cache_type) {
    const std::string path = Write(Trace({
        DecodeStepOf4("100"),
        Op(100, "_C_cache_ops::reshape_and_cache_flash", "2", "5",
           "\"Input Dims\": [[4, 1, 64], [4, 1, 64], [1024, 16, 1, 64], "
           "[1024, 16, 1, 64], [4], [], [], []], \"Input type\": "
           "[\"c10::BFloat16\", \"c10::BFloat16\", \"" + cache_type +
           "\", \"" + cache_type + "\", \"long int\", \"\", \"\", \"\"]"),
        Launch(100, 100, "3", 1),
        NamedKernel("reshape_and_cache_flash_kernel", "20", "2", 1),
        AttentionOf4("10", "5"),
        Launch(100, 100, "11", 2),
        NamedKernel("fmhaSm100aKernel_QkvE4m3OBfloat16", "30", "10", 2),
    }), "trace" + cache_type.substr(0, 3) + ".json");
    auto result = Import(path, Store());
    EXPECT_TRUE(result.ok()) << result.status().message();
    StoreQuery q(dir_.File("runs" + std::to_string(n_) + ".sqlite"));
    return q.Int("SELECT dram_bytes FROM kernels WHERE name LIKE 'fmha%'");
  };
  EXPECT_EQ(bytes_with_cache("unsigned char"), 9216 + 4096 * 128);
  EXPECT_EQ(bytes_with_cache("c10::BFloat16"), 9216 + 4096 * 128 * 2);
}

// A paged decode attention split over the keys runs two kernels: the QKV
// kernel takes the call's FLOPs and the reads, the reduce kernel that
// combines the partitions the output it writes (4 tokens x 8 heads x 64
// bf16 values, 4,096 B): both are on the roofline, and the two add up to
// the call's figures, counted once. A kernel of another name under the
// same call shares the QKV kernel's record, as before.
TEST_F(KinetoSyntheticTest, SplitKvAttentionReduceKernelTakesTheOutput) {
  const std::string path = Write(Trace({
      DecodeStepOf4("100"),
      AttentionOf4("10", "20"),
      Launch(100, 100, "11", 1),
      NamedKernel("paged_attention_v2_kernel", "30", "10", 1),
      Launch(100, 100, "14", 2),
      NamedKernel("paged_attention_v2_reduce_kernel", "41", "2", 2),
      Launch(100, 100, "17", 3),
      NamedKernel("fill_kernel", "44", "1", 3),
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  // 4 tokens: Q and O 4 x 8 x 64, new K and V 4 x 1 x 64 each (bf16), the
  // 4,096 cached keys and values 4,096 x 128 bf16.
  const int64_t call = 4 * (8 + 8 + 1 + 1) * 64 * 2 + 4096 * 128 * 2;
  EXPECT_EQ(q.Text("SELECT group_concat(name || ' ' || ifnull(flops, '-') || "
                   "' ' || ifnull(dram_bytes, '-'), ', ') FROM (SELECT * "
                   "FROM kernels ORDER BY start_ns)"),
            "paged_attention_v2_kernel 8396800 " + std::to_string(call - 4096) +
                ", paged_attention_v2_reduce_kernel - 4096, fill_kernel - -");
}

// A trace of PyTorch 1.8-1.9: capitalized categories (Operator, Runtime,
// Kernel, Memcpy), ProfilerStep#N an operator, "external id" and "Input
// dims" in lower case. Its kernel joins its launch, sits in the step's
// range and carries the addmm's FLOPs, as in a current trace.
TEST_F(KinetoSyntheticTest, PyTorch18CategoriesAreRead) {
  auto old = [](std::string e) {
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{
             {"\"cat\": \"cpu_op\"", "\"cat\": \"Operator\""},
             {"\"cat\": \"user_annotation\"", "\"cat\": \"Operator\""},
             {"\"cat\": \"cuda_runtime\"", "\"cat\": \"Runtime\""},
             {"\"cat\": \"kernel\"", "\"cat\": \"Kernel\""},
             {"External id", "external id"},
             {"Input Dims", "Input dims"}}) {
      for (size_t at; (at = e.find(from)) != std::string::npos;) {
        e.replace(at, from.size(), to);
      }
    }
    return e;
  };
  const std::string path = Write(Trace({
      old(Annotation(100, "ProfilerStep#1", "1000", "100")),
      old(Op(100, "aten::addmm", "1002", "10", kAddmmArgs)),
      old(Launch(100, 100, "1003", 10)),
      old(Kernel(0, 7, "1010", 10, "\"External id\": 7, ")),
      "{\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy HtoD "
      "(Pageable -> Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 1020, "
      "\"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, "
      "\"correlation\": 11, \"bytes\": 4096}}",
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 1u);
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(Stat(q, "unmatched_kernel"), 0);
  EXPECT_EQ(q.Text("SELECT nvtx_path || ' ' || api_start_ns || ' ' || "
                   "flops_bf16_tc FROM kernels"),
            "ProfilerStep#1 1003000 73996800");
  EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys"), 1);
}

// PyTorch 1.8 wrote its GPUs as "computeProperties" (major, minor,
// multiProcessorCount) and thread ids as strings ("tid": "24610"; a GPU
// event's "stream 7" is no id): the GPU is known, so its roofs are, and the
// launch keeps its thread.
TEST_F(KinetoSyntheticTest, PyTorch18DevicesAndStringThreadIds) {
  const std::string path = Write(
      "{\"schemaVersion\": 1, \"computeProperties\": [{\"id\": 0, "
      "\"name\": \"Tesla V100-SXM2-32GB\", \"totalGlobalMem\": 34089730048, "
      "\"major\": 7, \"minor\": 0, \"multiProcessorCount\": 80}],\n"
      "\"traceEvents\": [\n"
      "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", "
      "\"pid\": 300, \"tid\": \"24610\", \"ts\": 100, \"dur\": 20, "
      "\"args\": {\"cbid\": 211, \"correlation\": 5, \"external id\": 9}},\n"
      "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"volta_sgemm_64x64_nn\", "
      "\"pid\": 0, \"tid\": \"stream 7\", \"ts\": 130, \"dur\": 4, "
      "\"args\": {\"queued\": 0, \"device\": 0, \"context\": 1, "
      "\"stream\": 7, \"correlation\": 5, \"external id\": 9, "
      "\"registers per thread\": 64, \"shared memory\": 8192, "
      "\"grid\": [2, 1, 1], \"block\": [128, 1, 1]}}\n"
      "]}\n");
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT name || ' ' || sm_count || ' ' || cc_major || '.' "
                   "|| cc_minor FROM devices"),
            "Tesla V100-SXM2-32GB 80 7.0");
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:v100");
  EXPECT_EQ(q.Text("SELECT thread_id || ' ' || stream_id || ' ' || "
                   "api_start_ns FROM kernels"),
            "24610 7 100000");
}

// PyTorch 1.8's profiler wrote values JSON has no word for: a zero-length
// copy's bandwidth as inf, N/A, nan. They are read as missing and counted;
// the same words inside strings (a kernel named "inf_check", an arg "nan")
// are left alone, and so is every other number.
TEST_F(KinetoSyntheticTest, NonJsonValuesOfOldProfilersReadAsMissing) {
  const std::string path = Write(Trace({
      Launch(100, 100, "10", 1),
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"inf_check nan\", "
      "\"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 3, \"args\": {"
      "\"device\": 0, \"stream\": 7, \"correlation\": 1, "
      "\"est. achieved occupancy %\": nan, \"note\": \"N/A\", "
      "\"queued\": N/A, \"grid\": [4, 2, 1], \"block\": [128, 1, 1]}}",
      "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD "
      "(Pageable -> Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 30, "
      "\"dur\": 0, \"args\": {\"device\": 0, \"stream\": 7, "
      "\"correlation\": 2, \"bytes\": 200, "
      "\"memory bandwidth (GB/s)\": inf}}",
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 1u);
  EXPECT_NE(result->warning.find("3 values that are not JSON"),
            std::string::npos)
      << result->warning;
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT name || ' ' || grid_x || ' ' || block_x FROM "
                   "kernels"),
            "inf_check nan 4 128");
  EXPECT_EQ(q.Int("SELECT bytes FROM memcpys"), 200);
}

// A trace recorded on ROCm names its launches as HIP does: they join their
// kernels by correlation id as CUDA's would (no kernel left unmatched).
TEST_F(KinetoSyntheticTest, HipLaunchesJoinTheirKernels) {
  const std::string path = Write(Trace({
      Launch(100, 100, "10", 1, "hipLaunchKernel"),
      Kernel(0, 7, "20", 1),
      Launch(100, 100, "30", 2, "hipExtModuleLaunchKernel"),
      Kernel(0, 7, "40", 2),
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 2u);
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(Stat(q, "unmatched_kernel"), 0);
  EXPECT_EQ(q.Text("SELECT group_concat(api_start_ns, ',') FROM (SELECT "
                   "api_start_ns FROM kernels ORDER BY start_ns)"),
            "10000,30000");
}

// The dtype as torch spells it ("torch.bfloat16", "float32": newer hooks and
// other tools) sizes the message as c10's "BFloat16" / "Float" do.
TEST_F(KinetoSyntheticTest, TorchSpelledDtypesSizeTheMessage) {
  auto nccl = [](int corr, const std::string& ts, const std::string& dtype) {
    return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
           "\"ncclDevKernel_AllReduce_Sum_RING_LL(ncclDevKernelArgsStorage<"
           "4096ul>)\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts +
           ", \"dur\": 100, \"args\": {\"device\": 0, \"stream\": 7, "
           "\"correlation\": " + std::to_string(corr) +
           ", \"Collective name\": \"all_reduce\", \"dtype\": \"" + dtype +
           "\", \"In msg nelems\": 1000, \"Out msg nelems\": 1000, "
           "\"Group size\": 2}}";
  };
  const std::string path = Write(Trace({
      Launch(100, 100, "10", 1, "cudaLaunchKernelExC"),
      nccl(1, "20", "torch.bfloat16"),
      Launch(100, 100, "200", 2, "cudaLaunchKernelExC"),
      nccl(2, "300", "float32"),
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT group_concat(shape, '; ') FROM (SELECT shape FROM "
                   "kernels ORDER BY start_ns)"),
            "all_reduce bf16 bytes=2000 ranks=2; "
            "all_reduce fp32 bytes=4000 ranks=2");
}

// A kernel whose runtime call is not in the trace is kept and counted; one
// whose cpu_op the External id names still gets the op's GEMM. ts and dur
// are microseconds with fractional nanoseconds, displayTimeUnit "ms"
// notwithstanding.
TEST_F(KinetoSyntheticTest, KernelsWithoutTheirLaunchAreKeptAndCounted) {
  const std::string path = Write(Trace({
      Annotation(100, "ProfilerStep#1", "1000.000", "100"),
      Annotation(100, "forward", "1001.5", "50"),
      Op(100, "aten::addmm", "1002", "10", kAddmmArgs),
      Launch(100, 100, "1003.25", 10),
      Kernel(0, 7, "1010.001", 10),
      Kernel(0, 7, "900.5", 5),
      Kernel(0, 7, "950.5", 6, "\"External id\": 7, "),
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 3u);
  EXPECT_NE(result->warning.find("2 of 3 kernels have no launch event"),
            std::string::npos)
      << result->warning;
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(Stat(q, "unmatched_kernel"), 2);
  EXPECT_EQ(q.Text("SELECT start_ns || ' ' || duration_ns || ' ' || "
                   "api_start_ns || ' ' || nvtx_path || ' ' || grid_x || "
                   "grid_y || ' ' || static_shared_memory_bytes FROM kernels "
                   "WHERE correlation_id = 10"),
            "1010001 3500 1003250 ProfilerStep#1/forward 42 1024");
  // Both the launched kernel and the one the External id names carry the
  // addmm's FLOPs (two GEMM calls would be one; here the op is one call
  // with two kernels: the longer, equal here, carries them once).
  EXPECT_EQ(q.Int("SELECT count(*) FROM gemm_calls"), 1);
  EXPECT_EQ(q.Int("SELECT kernel_count FROM gemm_calls"), 2);
  EXPECT_EQ(q.Int("SELECT sum(flops_bf16_tc) FROM kernels"), 73996800);
  EXPECT_EQ(q.Text("SELECT DISTINCT shape FROM kernels WHERE gemm_call_id IS "
                   "NOT NULL"),
            "m=512 n=141 k=512 batch=1");
}

// Two processes on two devices; --pid keeps one; --pid and --rank that
// match nothing are refused with what the trace holds.
TEST_F(KinetoSyntheticTest, SeveralProcessesDevicesAndFilters) {
  const std::string path = Write(Trace(
      {
          Launch(100, 101, "10", 1),
          Kernel(0, 7, "20", 1),
          Launch(200, 201, "11", 2, "cuLaunchKernel"),
          Kernel(1, 9, "21", 2),
          Launch(200, 202, "12", 3, "cudaMemcpyAsync"),
          "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH "
          "(Device -> Pinned)\", \"pid\": 1, \"tid\": 9, \"ts\": 30, "
          "\"dur\": 1, \"args\": {\"device\": 1, \"stream\": 9, "
          "\"correlation\": 3, \"bytes\": 4096}}",
      },
      "\"distributedInfo\": {\"rank\": 3},"));
  auto all = Import(path, Store());
  ASSERT_TRUE(all.ok()) << all.status().message();
  {
    StoreQuery q(dir_.File("runs1.sqlite"));
    EXPECT_EQ(q.Int("SELECT count(*) FROM sessions"), 2);
    EXPECT_EQ(q.Text("SELECT group_concat(d, ',') FROM (SELECT s.pid || ':' "
                     "|| d.name AS d FROM devices d JOIN sessions s ON "
                     "s.session_id = d.session_id ORDER BY s.pid)"),
              "100:NVIDIA H100 80GB HBM3,200:NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(q.Text("SELECT kind || ' ' || src_kind || ' ' || dst_kind || "
                     "' ' || bytes || ' ' || thread_id FROM memcpys"),
              "dtoh device pinned 4096 202");
  }
  SourceOptions one;
  one.pid = 200;
  ASSERT_TRUE(Import(path, Store(), one).ok());
  StoreQuery q(dir_.File("runs2.sqlite"));
  EXPECT_EQ(q.Text("SELECT group_concat(correlation_id) FROM kernels"), "2");
  one.pid = 300;
  auto none = Import(path, Store(), one);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            path + ": no process 300 in the trace; its processes: 100, 200");
  SourceOptions rank;
  rank.rank = 3;
  EXPECT_TRUE(Import(path, Store(), rank).ok());
  rank.rank = 1;
  auto wrong = Import(path, Store(), rank);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(),
            path + ": the trace is rank 3 (distributedInfo), not --rank 1");
}

// A syntax error names its byte; a trace without GPU activity says how to
// record one; JSON without traceEvents is not taken for a Kineto trace.
TEST_F(KinetoSyntheticTest, BadInputIsRefusedWithWhereAndWhy) {
  const std::string text = "{\"traceEvents\": [{\"ph\": \"X\",, }]}";
  const std::string broken = Write(text, "broken.json");
  auto s = Import(broken, Store());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorrupt);
  const std::string at = "JSON syntax error at byte " +
                         std::to_string(text.find(",,") + 1);
  EXPECT_NE(s.status().message().find(broken + ": " + at),
            std::string::npos)
      << s.status().message();
  // Cut short.
  const std::string cut = Write(Trace({Launch(1, 1, "1", 1)}).substr(0, 200),
                                "cut.json");
  s = Import(cut, Store());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("JSON syntax error at byte"),
            std::string::npos)
      << s.status().message();
  const std::string cpu_only =
      Write(Trace({Launch(1, 1, "1", 1), Annotation(1, "step", "0", "5")}),
            "cpu.json");
  s = Import(cpu_only, Store());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().substr(0, 80),
            ("no GPU kernels in " + cpu_only +
             ": was the profiler run with CUDA activities?")
                .substr(0, 80));
  // A newline-led trace is Kineto's, not an rft stream's (whose detector
  // takes a first byte of 0x0A).
  auto detected = DetectSource(cpu_only);
  ASSERT_TRUE(detected.ok()) << detected.status().message();
  EXPECT_EQ((*detected)->format(), "kineto");
  const std::string other = Write("{\"name\": \"not a trace\"}", "o.json");
  EXPECT_FALSE(DetectSource(other).ok());
  EXPECT_FALSE(kineto::LooksLikeKinetoTrace("\n[1, 2]"));
  EXPECT_TRUE(kineto::LooksLikeKinetoTrace("\n  {\"traceEvents\": []}"));
}

// Memsets, graph launches, and a --counters file that cannot be read.
TEST_F(KinetoSyntheticTest, MemsetsAndRefusedCounters) {
  const std::string path = Write(Trace({
      Launch(5, 5, "1", 1, "cudaMemsetAsync"),
      "{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset "
      "(Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 2, \"dur\": 1, \"args\": "
      "{\"device\": 0, \"stream\": 7, \"correlation\": 1, \"bytes\": 64}}",
      Launch(5, 5, "3", 2, "cudaGraphLaunch"),
      Kernel(0, 7, "4", 2),
      Kernel(0, 7, "5", 2),
  }));
  ASSERT_TRUE(Import(path, Store()).ok());
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT kind || ' ' || dst_kind || ' ' || bytes FROM "
                   "memcpys"),
            "memset device 64");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE api_start_ns = 3000"),
            2);
  SourceOptions o;
  o.counters_path = "ncu.csv";
  EXPECT_FALSE(Import(path, Store(), o).ok());
}

// ------------------------------------------------- --counters ncu.csv

// A kernel event with its own name (Kineto's: demangled by the C++ runtime).
std::string NamedKernel(const std::string& name, const std::string& ts,
                        uint64_t corr) {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
         "\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts +
         ", \"dur\": 3.5, \"args\": {\"device\": 0, \"stream\": 7, "
         "\"correlation\": " + std::to_string(corr) +
         ", \"grid\": [4, 1, 1], \"block\": [128, 1, 1]}}";
}

// One ncu kernel (long layout) of the python3 process on host h, CC 9.0.
std::string NcuKernel(int id, const std::string& name, const std::string& read,
                      const std::string& dfma) {
  return test_support::NcuKernelRows(
      {"100", "python3", "h", "(128, 1, 1)", "(4, 1, 1)", "9.0"}, id, name,
      read, dfma);
}

// The same kernels as Kineto names them and as ncu does: the elementwise
// add demangled by NVIDIA's demangler ("(int)4", "char *", parameters as
// T2, T3), the GEMM mangled.
constexpr char kKinetoAdd[] =
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> "
    ">(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
    "3ul>)";
constexpr char kNcuAdd[] =
    "void at::native::vectorized_elementwise_kernel<(int)4, "
    "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, "
    "(unsigned long)3>>(int, T2, T3)";
constexpr char kKinetoGemm[] = "gemm_bf16(float const*, float*)";
constexpr char kNcuGemm[] = "_Z9gemm_bf16PKfPf";

// Launch order add, gemm, add, gemm, add (correlation ids 1-5); the kernels'
// own start times are not in that order (the third add ran first), launch
// order decides. ncu measured add, gemm, add and a kernel the trace lacks.
class KinetoCountersTest : public KinetoSyntheticTest {
 protected:
  std::string TracePath() {
    return Write(Trace({
        Launch(100, 100, "10", 1), Launch(100, 100, "11", 2),
        Launch(100, 100, "12", 3), Launch(100, 100, "13", 4),
        Launch(100, 100, "14", 5),
        NamedKernel(kKinetoAdd, "20", 1), NamedKernel(kKinetoGemm, "30", 2),
        NamedKernel(kKinetoAdd, "40", 3), NamedKernel(kKinetoGemm, "50", 4),
        NamedKernel(kKinetoAdd, "15", 5),
    }));
  }
  std::string CsvPath() {
    const std::string path = dir_.File("ncu.csv");
    std::ofstream(path)
        << "==PROF== Connected to process 100 (python3)\n"
        << "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel "
           "Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\","
           "\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric "
           "Unit\",\"Metric Value\"\n"
        << NcuKernel(0, kNcuAdd, "1.5", "1,000")
        << NcuKernel(1, kNcuGemm, "2", "2,000")
        << NcuKernel(2, kNcuAdd, "3", "3,000")
        << NcuKernel(3, "other_kernel(int)", "1", "1");
    return path;
  }
};

// Each sample goes to the n-th launch of its kernel (add #0 -> 1, gemm #0
// -> 2, add #1 -> 3) whatever the spelling; the unknown kernel's sample is
// counted unmatched and named in the warning; the raw metrics are kept.
TEST_F(KinetoCountersTest, NcuCountersAttachedByNameAndOccurrence) {
  const std::string csv = CsvPath();
  SourceOptions o;
  o.counters_path = csv;  // read by ReadSourceInto
  auto result = Import(TracePath(), Store(), o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  // dram = read + 1,024 written; fp64 = 2 * dfma.
  EXPECT_EQ(q.Text("SELECT group_concat(correlation_id || ':' || dram_bytes "
                   "|| ':' || flops_fp64 || ':' || bytes_source, ' ') FROM "
                   "(SELECT * FROM kernels WHERE flops_source = 'counters' "
                   "ORDER BY correlation_id)"),
            "1:1501024:2000:counters 2:2001024:4000:counters "
            "3:3001024:6000:counters");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE flops_source = "
                  "'none'"),
            2);
  test_support::ExpectThreeOfFourCountersMatched(
      q, result->warning, csv, "1:1.5 Mbyte 2:2.0 Mbyte 3:3.0 Mbyte");
}

// ncu --launch-skip 1 --launch-count 3: the window is launches 2-4 (gemm,
// add, gemm), so add #0 -> 3, gemm #0 -> 2, and add #1 finds no launch in
// the window.
TEST_F(KinetoCountersTest, LaunchSkipAndCountSetTheWindow) {
  const std::string csv = CsvPath();
  auto read = ReadCounterFile(csv);
  ASSERT_TRUE(read.ok()) << read.status().message();
  auto file = std::make_shared<CounterFile>(**read);
  file->window.launch_skip = 1;
  file->window.launch_count = 3;
  SourceOptions o;
  o.counters_path = csv;
  o.counters = file;
  auto result = Import(TracePath(), Store(), o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT group_concat(correlation_id || ':' || dram_bytes, "
                   "' ') FROM (SELECT * FROM kernels WHERE flops_source = "
                   "'counters' ORDER BY correlation_id)"),
            "2:2001024 3:1501024");
  EXPECT_EQ(Stat(q, "received_counters"), 2);
  EXPECT_EQ(Stat(q, "unmatched_counters"), 2);
  EXPECT_NE(result->warning.find("1 measured more launches than the "
                                 "timeline holds"),
            std::string::npos)
      << result->warning;
}

// A counter file that is not an ncu CSV is refused naming it, before
// anything is written.
TEST_F(KinetoCountersTest, NotAnNcuCsvIsRefused) {
  const std::string other = Write("\"Time (%)\",\"Name\"\n\"1\",\"k\"\n",
                                  "other.csv");
  SourceOptions o;
  o.counters_path = other;
  auto result = Import(TracePath(), Store(), o);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message().rfind("--counters " + other + ": ", 0),
            0u)
      << result.status().message();
}

// An older trace's kernel without args.correlation joins its launch
// through the ac2g flow that ends where it starts.
TEST_F(KinetoSyntheticTest, FlowEventsStandInForAMissingCorrelation) {
  const std::string path = Write(Trace({
      Launch(5, 6, "10", 42),
      "{\"ph\": \"s\", \"id\": 42, \"pid\": 5, \"tid\": 6, \"ts\": 10, "
      "\"cat\": \"ac2g\", \"name\": \"ac2g\"}",
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"old\", \"pid\": 0, "
      "\"tid\": 7, \"ts\": 20.25, \"dur\": 1, \"args\": {\"stream\": 7}}",
      "{\"ph\": \"f\", \"id\": 42, \"pid\": 0, \"tid\": 7, \"ts\": 20.25, "
      "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->warning, "");
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT correlation_id || ' ' || api_start_ns || ' ' || "
                   "thread_id || ' ' || device_id FROM kernels"),
            "42 10000 6 0");
}

// ProfilerStep#N annotations delimit forward steps, as NVTX ranges do: two
// steps of one addmm each (141 tokens: equal neighbours, steady decode).
TEST_F(KinetoSyntheticTest, ProfilerStepsAreForwardSteps) {
  std::vector<std::string> events;
  for (int step = 0; step < 2; ++step) {
    const int base = 1000 + step * 5000;
    events.push_back(Annotation(9, "ProfilerStep#" + std::to_string(step),
                                std::to_string(base), "4000"));
    events.push_back(Op(9, "aten::addmm", std::to_string(base + 10), "100",
                        kAddmmArgs));
    events.push_back(Launch(9, 9, std::to_string(base + 20), 100 + step));
    events.push_back(Kernel(0, 7, std::to_string(base + 200), 100 + step));
  }
  ASSERT_TRUE(Import(Write(Trace(events)), Store()).ok());
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Int("SELECT count(*) FROM steps"), 2);
  EXPECT_EQ(q.Text("SELECT group_concat(nvtx_path || ':' || token_count, ' ') "
                   "FROM (SELECT * FROM kernels ORDER BY start_ns)"),
            "ProfilerStep#0:141 ProfilerStep#1:141");
  EXPECT_EQ(q.Int("SELECT count(DISTINCT step_id) FROM kernels"), 2);
}

// Other operators (op_shapes.h): a launch belongs to the innermost operator
// with figures, so a copy_ inside a matmul is the copy's (no FLOPs, its
// bytes: 2 x 512 fp32 = 4,096) and the mm's kernel the GEMM's; a causal
// SDPA with "Concrete Inputs" before "Input Dims" (1 x 2 x 64 x 32, fp16:
// 4 * 2 * 64 * 64 * 32 / 2 = 524,288 FLOPs, 4 * 4,096 * 2 = 32,768
// bytes); and a kernel without its launch takes the gelu its External id
// names (32 elements * 8 = 256 FLOPs, 2 * 128 = 256 bytes).
TEST_F(KinetoSyntheticTest, OtherOperatorsGiveTheirKernelsFigures) {
  const std::string path = Write(Trace({
      Annotation(100, "ProfilerStep#1", "1000", "200"),
      Op(100, "aten::matmul", "1001", "50",
         "\"Input Dims\": [[4, 8, 16], [16, 32]], \"Input type\": "
         "[\"float\", \"float\"]"),
      Op(100, "aten::copy_", "1002", "5",
         "\"Input Dims\": [[4, 8, 16], [4, 8, 16], []], \"Input type\": "
         "[\"float\", \"float\", \"Scalar\"]"),
      Launch(100, 100, "1003", 20),
      Op(100, "aten::mm", "1010", "10",
         "\"Input Dims\": [[32, 16], [16, 32]], \"Input type\": "
         "[\"float\", \"float\"]"),
      Launch(100, 100, "1012", 21),
      Op(100, "aten::scaled_dot_product_attention", "1100", "20",
         "\"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"0.\", \"True\", "
         "\"\", \"False\"], \"Input Dims\": [[1, 2, 64, 32], [1, 2, 64, 32], "
         "[1, 2, 64, 32], [], [], [], [], []], \"Input type\": "
         "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"\", \"Scalar\", "
         "\"Scalar\", \"\", \"Scalar\"]"),
      Launch(100, 100, "1102", 22),
      Op(100, "aten::gelu", "1150", "10",
         "\"External id\": 9, \"Input Dims\": [[4, 8], []], \"Input type\": "
         "[\"float\", \"\"]"),
      Kernel(0, 7, "1020", 20),
      Kernel(0, 7, "1030", 21),
      Kernel(0, 7, "1120", 22),
      Kernel(0, 7, "1160", 23, "\"External id\": 9, "),
  }));
  auto result = Import(path, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  auto row = [&](int corr) {
    return q.Text(
        "SELECT ifnull(gemm_call_id, '-') || '|' || ifnull(shape, '') || '|' "
        "|| ifnull(flops, '-') || '|' || flops_source || '|' || "
        "ifnull(dram_bytes, '-') || '|' || bytes_source || '|' || "
        "ifnull(precision, '') FROM kernels WHERE correlation_id = " +
        std::to_string(corr));
  };
  EXPECT_EQ(row(20), "-|4x8x16|-|none|4096|analytic|");
  EXPECT_NE(row(21).find("|32768|analytic|"), std::string::npos) << row(21);
  EXPECT_NE(row(21).substr(0, 1), "-");
  EXPECT_EQ(row(22),
            "-|b=1 h=2 lq=64 lk=64 d=32 causal|524288|analytic|32768|"
            "analytic|bf16_tc");
  EXPECT_EQ(row(23), "-|4x8|256|analytic|256|analytic|fp32");
}


// A ROCm rank on the node's GPU 9 writes "device": 9 on its kernels but
// describes its one visible GPU as id 0: one model described, so the
// kernels' device is that model and is judged against its roof. Two
// different models described leave an undescribed device unknown.
TEST_F(KinetoSyntheticTest, NodeDeviceIdsTakeTheOneDescribedModel) {
  auto trace = [](const std::string& devices) {
    return "{\"schemaVersion\": 1, \"deviceProperties\": [" + devices +
           "],\n\"traceEvents\": [\n" + Launch(100, 100, "10", 5) + ",\n" +
           Kernel(9, 3, "20", 5) + "\n]}\n";
  };
  const std::string mi300 =
      "{\"id\": 0, \"name\": \"AMD Instinct MI300X\", \"numSms\": 304}";
  auto one = Import(Write(trace(mi300)), Store());
  ASSERT_TRUE(one.ok()) << one.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT device_id || ' ' || name || ' ' || sm_count "
                   "FROM devices"),
            "9 AMD Instinct MI300X 304");
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:mi300x");
  auto two = Import(
      Write(trace(mi300 + ", {\"id\": 1, \"name\": \"AMD Instinct MI325X\", "
                          "\"numSms\": 304}"),
            "two.json"),
      Store());
  ASSERT_TRUE(two.ok()) << two.status().message();
  StoreQuery q2(dir_.File("runs2.sqlite"));
  EXPECT_EQ(q2.Text("SELECT ifnull(name, '') FROM devices"), "");
}


// A graph captured around two operators (a GEMM and an add, each
// launching one kernel named in the launch's args) and replayed twice:
// every replayed kernel takes its own captured operator's figures, the
// two replays separately (each its own GEMM call), and a graph launch
// whose kernels no capture launched keeps none and is counted. A capture
// trace without a capture in it is refused, naming the file.
// torch.cat of two bf16 [64, 32] tensors (rotary's rotate_half, a KV
// cache's append): the profiler records the list's shapes but not its
// type; PyTorch's cat kernel is instantiated on a 2-byte opaque type, so
// 4,096 elements are read and written at 2 bytes: 16,384 bytes, no FLOPs.
// A cat whose kernel does not say its element size (a plain copy kernel)
// stays blank rather than guessed.
TEST_F(KinetoSyntheticTest, CatTakesItsElementSizeFromItsKernel) {
  constexpr char kCatArgs[] =
      "\"Input Dims\": [[[64, 32], [64, 32]], []], \"Input type\": "
      "[\"TensorList\", \"Scalar\"]";
  const std::string trace = Write(Trace({
      Op(100, "aten::cat", "1000", "20", kCatArgs),
      Launch(100, 100, "1005", 1),
      NamedKernel("void at::native::(anonymous namespace)::"
                  "CatArrayBatchedCopy<at::native::(anonymous namespace)::"
                  "OpaqueType<2u>, unsigned int, 2, 128, 1>(...)",
                  "1010", 1),
      Op(100, "aten::cat", "2000", "20", kCatArgs),
      Launch(100, 100, "2005", 2),
      NamedKernel("void at::native::elementwise_kernel<128, 4>(...)", "2010",
                  2),
  }));
  auto result = Import(trace, Store());
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT group_concat(r, ',') FROM (SELECT correlation_id "
                   "|| ':' || ifnull(shape, '-') || ':' || ifnull(flops, "
                   "'-') || ':' || ifnull(dram_bytes, '-') AS r FROM kernels "
                   "ORDER BY start_ns)"),
            "1:2 tensors 4096 elements x2B:-:16384,2:-:-:-");
}

// For graph capture and replay traces: a kernel launch that names its
// kernel (as a capture records it), a runtime call, and a replayed kernel
// of 5 us on device 0, stream 7.
std::string CaptureLaunch(const std::string& ts, uint64_t corr,
                          const std::string& kernel) {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
         "\"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": " +
         ts + ", \"dur\": 2, \"args\": {\"correlation\": " +
         std::to_string(corr) + ", \"kernel\": \"" + kernel + "\"}}";
}

std::string RuntimeCall(const std::string& name, const std::string& ts,
                        uint64_t corr) {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" + name +
         "\", \"pid\": 100, \"tid\": 100, \"ts\": " + ts +
         ", \"dur\": 1, \"args\": {\"correlation\": " +
         std::to_string(corr) + "}}";
}

std::string ReplayKernel(const std::string& name, const std::string& ts,
                         uint64_t corr) {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
         "\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts +
         ", \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7, "
         "\"correlation\": " + std::to_string(corr) + "}}";
}

TEST_F(KinetoSyntheticTest, GraphReplaysTakeTheirCapturedOperators) {
  const std::string capture = Write(
      Trace({RuntimeCall("cudaStreamBeginCapture", "900", 1),
             Op(100, "aten::mm", "1000", "20",
                "\"Input Dims\": [[32, 4096], [4096, 4096]], \"Input type\": "
                "[\"c10::BFloat16\", \"c10::BFloat16\"]"),
             CaptureLaunch("1005", 2, "gemm_kernel"),
             Op(100, "aten::add", "1030", "10",
                "\"Input Dims\": [[32, 4096], [32, 4096], []], \"Input "
                "type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
                "\"Scalar\"]"),
             CaptureLaunch("1032", 3, "add_kernel"),
             RuntimeCall("cudaStreamEndCapture", "1100", 4)}),
      "capture.json");
  const std::string replay = Write(Trace({
      RuntimeCall("cudaGraphLaunch", "5000", 50),
      ReplayKernel("gemm_kernel", "5010", 50),
      ReplayKernel("add_kernel", "5020", 50),
      RuntimeCall("cudaGraphLaunch", "6000", 60),
      ReplayKernel("gemm_kernel", "6010", 60),
      ReplayKernel("add_kernel", "6020", 60),
      RuntimeCall("cudaGraphLaunch", "7000", 70),
      ReplayKernel("other_kernel", "7010", 70),
  }));
  SourceOptions o;
  o.capture_paths = {capture};
  auto result = Import(replay, Store(), o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_NE(result->warning.find("2 graph launches matched a captured graph "
                                 "(--capture): 4 replayed kernels"),
            std::string::npos)
      << result->warning;
  EXPECT_NE(result->warning.find("1 graph launches matched no captured graph"),
            std::string::npos)
      << result->warning;
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT group_concat(r, ',') FROM (SELECT correlation_id "
                   "|| ':' || graph_node_id || ':' || ifnull(shape, '-') || "
                   "':' || ifnull(flops, '-') || ':' || ifnull(dram_bytes, "
                   "'-') AS r FROM kernels ORDER BY start_ns)"),
            "50:1:m=4096 n=32 k=4096 batch=1:1073741824:34078720,"
            "50:2:32x4096:131072:786432,"
            "60:1:m=4096 n=32 k=4096 batch=1:1073741824:34078720,"
            "60:2:32x4096:131072:786432,"
            "70:0:-:-:-");
  EXPECT_EQ(q.Int("SELECT count(DISTINCT gemm_call_id) FROM kernels"), 2);
  // The replay itself is not a capture.
  o.capture_paths = {replay};
  auto refused = Import(replay, Store(), o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--capture " + replay +
                                            ": no graph capture in it"),
            std::string::npos)
      << refused.status().message();
}

// A full-graph decode step replays every layer's attention in order: with
// --model naming a window on layer 0 and none on layer 1, the first
// captured attention call of each replay is capped at the window and the
// second is not. Decode of 4 requests over 4,100 keys (8 heads, 1 KV head,
// 64 wide, bf16): full, 8 x 128 x 2 x 4,100 FLOPs and 4,096 cached tokens;
// windowed (128), 8 x 128 x 2 x 4 x 128 FLOPs and 4 x 127 cached tokens.
TEST_F(KinetoSyntheticTest, CapturedAttentionTakesItsLayersWindow) {
  const std::string attention_args =
      "\"Input Dims\": [[4, 8, 64], [4, 1, 64], [4, 1, 64], [4, 8, 64], "
      "[]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
      "\"c10::BFloat16\", \"c10::BFloat16\", \"\"]";
  const std::string capture = Write(
      Trace({RuntimeCall("cudaStreamBeginCapture", "900", 1),
             Op(100, "vllm::unified_attention_with_output", "1000", "20",
                attention_args),
             CaptureLaunch("1005", 2, "attention_kernel"),
             Op(100, "vllm::unified_attention_with_output", "1030", "20",
                attention_args),
             CaptureLaunch("1035", 3, "attention_kernel"),
             RuntimeCall("cudaStreamEndCapture", "1100", 4)}),
      "capture.json");
  const std::string replay = Write(Trace({
      Annotation(100,
                 "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4"
                 "(sq4sk4100sqsq4sqsk4100)",
                 "4990", "100"),
      RuntimeCall("cudaGraphLaunch", "5000", 50),
      ReplayKernel("attention_kernel", "5010", 50),
      ReplayKernel("attention_kernel", "5020", 50),
  }));
  StatusOr<ModelFacts> model = ParseModelFacts(
      R"({"model_type": "gpt_oss", "hidden_size": 512,
          "num_hidden_layers": 2, "num_attention_heads": 8,
          "num_key_value_heads": 1, "head_dim": 64, "sliding_window": 128,
          "layer_types": ["sliding_attention", "full_attention"]})",
      "two-layer.json");
  ASSERT_TRUE(model.ok()) << model.status().message();
  SourceOptions o;
  o.capture_paths = {capture};
  o.model = *model;
  auto result = Import(replay, Store(), o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  const int64_t q_side = 4 * (8 + 1) * 128 * 2;
  EXPECT_EQ(q.Text("SELECT group_concat(r, ',') FROM (SELECT flops || '/' || "
                   "dram_bytes AS r FROM kernels ORDER BY start_ns)"),
            std::to_string(8 * 128 * 2 * 4 * 128) + "/" +
                std::to_string(q_side + 4 * 127 * 128 * 2) + "," +
                std::to_string(8 * 128 * 2 * 4100) + "/" +
                std::to_string(q_side + 4096 * 128 * 2));
  EXPECT_NE(q.Text("SELECT shape FROM kernels ORDER BY start_ns LIMIT 1")
                .find(" window=128"),
            std::string::npos);
}

// vLLM captures its tensor-parallel all-reduce into the graphs it replays
// (symm_mem::multimem_all_reduce_ of 2 Mi bf16 on 8 ranks): each replayed
// all-reduce kernel gets the captured operator's message, the capture's
// world size as its group, and bandwidths from its own duration (5 us:
// 838.86 GB/s, x 2*7/8 on the bus); the graph's other kernel gets none of
// them, though it shares the launch's correlation id.
TEST_F(KinetoSyntheticTest, CapturedAllReduceGivesEachReplayItsMessage) {
  const std::string capture = Write(
      Trace({RuntimeCall("cudaStreamBeginCapture", "900", 1),
             Op(100, "aten::add", "1000", "10",
                "\"Input Dims\": [[512, 4096], [512, 4096], []], \"Input "
                "type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
                "\"Scalar\"]"),
             CaptureLaunch("1002", 2, "add_kernel"),
             Op(100, "symm_mem::multimem_all_reduce_", "1020", "20",
                "\"Input Dims\": [[512, 4096], [], []], \"Input type\": "
                "[\"c10::BFloat16\", \"\", \"\"]"),
             CaptureLaunch("1022", 3, "multimem_all_reduce_kernel"),
             RuntimeCall("cudaStreamEndCapture", "1100", 4)},
            kEightRanks),
      "capture.json");
  const std::string replay = Write(Trace({
      RuntimeCall("cudaGraphLaunch", "5000", 50),
      ReplayKernel("add_kernel", "5010", 50),
      ReplayKernel("multimem_all_reduce_kernel", "5020", 50),
      RuntimeCall("cudaGraphLaunch", "6000", 60),
      ReplayKernel("add_kernel", "6010", 60),
      ReplayKernel("multimem_all_reduce_kernel", "6020", 60),
  }, kEightRanks));
  SourceOptions o;
  o.capture_paths = {capture};
  auto result = Import(replay, Store(), o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir_.File("runs1.sqlite"));
  EXPECT_EQ(q.Text("SELECT group_concat(r, ',') FROM (SELECT correlation_id "
                   "|| ':' || graph_node_id || ':' || ifnull(shape, '-') AS r "
                   "FROM kernels ORDER BY start_ns)"),
            "50:1:512x4096,50:2:all_reduce bf16 bytes=4194304 ranks=8,"
            "60:1:512x4096,60:2:all_reduce bf16 bytes=4194304 ranks=8");
  EXPECT_EQ(q.Text("SELECT group_concat(r, ',') FROM (SELECT correlation_id "
                   "|| ':' || graph_node_id || ':' || name || '=' || value AS r "
                   "FROM kernel_metrics WHERE name LIKE '%busbw' ORDER BY "
                   "correlation_id)"),
            "50:2:collective.busbw=1468006400000.0,"
            "60:2:collective.busbw=1468006400000.0");
}

}  // namespace
}  // namespace rooftrace
