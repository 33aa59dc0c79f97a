// libinject inside real host processes (no GPU here): the NVTX program,
// the cuBLAS programs and a host linking libprotobuf, run with and without
// the library. Every case asserts the host's exit code and stdout are
// unchanged, then what the trace holds. This is the host-safety matrix.
#include <regex>
#include <set>

#include "gtest/gtest.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace pb = rooftrace::wire;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kLib = testing::BuildPath(ROOFTRACE_INJECT_LIB_REL);
const std::string ROOFTRACE_NVTX_APP =
    testing::BuildPath(ROOFTRACE_NVTX_APP_REL);
const std::string ROOFTRACE_PROTOBUF_APP =
    testing::BuildPath(ROOFTRACE_PROTOBUF_APP_REL);
const std::string ROOFTRACE_CUBLAS_FAKE_APP =
    testing::BuildPath(ROOFTRACE_CUBLAS_FAKE_APP_REL);
const std::string ROOFTRACE_CUBLAS_REAL_APP =
    testing::BuildPath(ROOFTRACE_CUBLAS_REAL_APP_REL);

using Env = std::map<std::string, std::string>;

// The library through both NVTX and LD_PRELOAD, writing `spool`.
Env Injected(const std::string& spool) {
  return {{"NVTX_INJECTION64_PATH", kLib},
          {"LD_PRELOAD", kLib},
          {"ROOFTRACE_SINK", "file:" + spool}};
}

// Without the library: the baseline the injected run must match.
ProcessResult Baseline(const std::vector<std::string>& argv) {
  return RunProcess(argv, {{"NVTX_INJECTION64_PATH", "<unset>"},
                           {"LD_PRELOAD", "<unset>"},
                           {"CUDA_INJECTION64_PATH", "<unset>"}});
}

std::map<std::string, uint32_t> Tids(const std::string& err) {
  std::map<std::string, uint32_t> out;
  std::regex line("tid (\\w+)=(\\d+)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), line);
       it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = static_cast<uint32_t>(std::stoul((*it)[2]));
  }
  return out;
}

struct Decoded {
  std::vector<pb::Packet> packets;
  std::map<uint64_t, std::string> strings;
  std::map<std::string, std::vector<pb::NvtxRange>> ranges;  // by name
  std::vector<pb::Gemm> gemms;
  int marks = 0;
};

Decoded Decode(std::vector<pb::Packet> packets) {
  Decoded d;
  d.packets = std::move(packets);
  d.strings = testing::Strings(d.packets);
  for (const auto& p : d.packets) {
    for (const auto& r : p.nvtx_batch().ranges()) {
      d.ranges[d.strings[r.name_iid()]].push_back(r);
    }
    for (const auto& g : p.gemm_batch().gemms()) d.gemms.push_back(g);
    d.marks += p.nvtx_batch().marks_size();
  }
  return d;
}

// Lines we print are ours ("rooftrace: ...") or the test app's "tid".
void ExpectOnlyOurLinesAdded(const std::string& err) {
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    EXPECT_TRUE(line.rfind("rooftrace: ", 0) == 0 || line.rfind("tid ", 0) == 0)
        << "unexpected stderr line: " << line;
  }
}

// The NVTX program under NVTX_INJECTION64_PATH + LD_PRELOAD: exact ranges,
// nesting, thread ids, registered strings and domains; host unchanged.
TEST(NvtxIntegrationTest, SpoolHoldsExactRangesNestingAndThreads) {
  const std::string dir = testing::MakeTempDir("nvtx_app");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "basic"});
  const ProcessResult run =
      RunProcess({ROOFTRACE_NVTX_APP, "basic"}, Injected(dir + "/t.rft"));
  EXPECT_EQ(run.exit_code, 7);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  ExpectOnlyOurLinesAdded(run.err);
  const auto tids = Tids(run.err);
  ASSERT_EQ(tids.size(), 2u) << run.err;

  Decoded d = Decode(testing::ReadTrace(dir + "/t.rft"));
  ASSERT_TRUE(d.packets.front().has_hello());
  EXPECT_EQ(d.packets.front().hello().pid(), tids.at("main"));
  ASSERT_TRUE(d.packets.back().has_goodbye());
  ASSERT_EQ(d.ranges.size(), 5u);
  for (const char* name :
       {"outer", "inner", "cross-thread", "worker", "decode-step"}) {
    ASSERT_EQ(d.ranges[name].size(), 1u) << name;
  }
  const auto& outer = d.ranges["outer"][0];
  const auto& inner = d.ranges["inner"][0];
  const auto& cross = d.ranges["cross-thread"][0];
  const auto& worker = d.ranges["worker"][0];
  const auto& step = d.ranges["decode-step"][0];
  EXPECT_EQ(outer.thread_id(), tids.at("main"));
  EXPECT_EQ(outer.depth(), 0u);
  EXPECT_EQ(outer.parent_range_id(), 0u);
  EXPECT_EQ(inner.parent_range_id(), outer.range_id());
  EXPECT_EQ(inner.depth(), 1u);
  EXPECT_LE(outer.start_ns(), inner.start_ns());
  EXPECT_GE(outer.end_ns(), inner.end_ns());
  EXPECT_EQ(cross.kind(), pb::RANGE_START_END);
  EXPECT_EQ(cross.thread_id(), tids.at("main"));
  EXPECT_EQ(cross.end_thread_id(), tids.at("worker"));
  EXPECT_EQ(worker.thread_id(), tids.at("worker"));
  EXPECT_EQ(worker.parent_range_id(), 0u);
  EXPECT_EQ(d.strings[step.domain_iid()], "engine");
  EXPECT_EQ(step.category(), 3u);
  EXPECT_EQ(step.color_argb(), 0xFF00FF00u);
  EXPECT_EQ(d.marks, 1);
  std::map<int, pb::RecordCount> totals;
  for (const auto& c : d.packets.back().goodbye().totals()) totals[c.kind()] = c;
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].seen(), 5u);
  EXPECT_EQ(totals[pb::RECORD_NVTX_RANGE].sent(), 5u);
}

// NVTX_INJECTION64_PATH alone (no LD_PRELOAD) is enough for NVTX, and with
// no ROOFTRACE_SINK the spool lands in ROOFTRACE_SPOOL_DIR, said once.
TEST(NvtxIntegrationTest, NvtxRouteAloneWritesTheDefaultSpool) {
  const std::string dir = testing::MakeTempDir("nvtx_only");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "basic"});
  const ProcessResult run = RunProcess(
      {ROOFTRACE_NVTX_APP, "basic"},
      {{"NVTX_INJECTION64_PATH", kLib}, {"LD_PRELOAD", "<unset>"},
       {"ROOFTRACE_SINK", "<unset>"}, {"ROOFTRACE_SPOOL_DIR", dir}});
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  auto spools = testing::ListFiles(dir, ".rft");
  ASSERT_EQ(spools.size(), 1u);
  EXPECT_NE(run.err.find("rooftrace: no ROOFTRACE_SINK set: writing spool " +
                         spools[0]),
            std::string::npos)
      << run.err;
  Decoded d = Decode(testing::ReadTrace(spools[0]));
  EXPECT_EQ(d.ranges.size(), 5u);
}

// Collector unreachable at start: the spool is written and complete, one
// line says so, the host is unchanged.
TEST(HostSafetyTest, CollectorUnreachableSpoolsEverything) {
  const std::string dir = testing::MakeTempDir("unreach");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "loop", "200"});
  Env env = Injected("unused");
  env["ROOFTRACE_SINK"] = "unix:" + dir + "/nobody.sock";
  env["ROOFTRACE_SPOOL_DIR"] = dir;
  const ProcessResult run = RunProcess({ROOFTRACE_NVTX_APP, "loop", "200"}, env);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  ExpectOnlyOurLinesAdded(run.err);
  std::regex spooling("spooling to");
  EXPECT_EQ(std::distance(std::sregex_iterator(run.err.begin(), run.err.end(),
                                               spooling),
                          std::sregex_iterator()),
            1)
      << run.err;
  auto spools = testing::ListFiles(dir, ".rft");
  ASSERT_EQ(spools.size(), 1u);
  Decoded d = Decode(testing::ReadTrace(spools[0]));
  EXPECT_EQ(d.ranges["step"].size(), 200u);
  ASSERT_TRUE(d.packets.back().has_goodbye());
}

// The collector dies mid-stream: collector + spool hold every range.
TEST(HostSafetyTest, CollectorKilledMidStreamLosesNothing) {
  const std::string dir = testing::MakeTempDir("killed");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "loop", "1500"});
  auto collector =
      std::make_unique<testing::TestCollector>(dir + "/c.sock", 3);
  Env env = Injected("unused");
  env["ROOFTRACE_SINK"] = "unix:" + dir + "/c.sock";
  env["ROOFTRACE_SPOOL_DIR"] = dir;
  const ProcessResult run =
      RunProcess({ROOFTRACE_NVTX_APP, "loop", "1500"}, env);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  EXPECT_NE(run.err.find("went away"), std::string::npos) << run.err;
  auto received = collector->packets();
  collector.reset();
  auto spools = testing::ListFiles(dir, ".rft");
  ASSERT_EQ(spools.size(), 1u);
  std::map<uint64_t, pb::Packet> by_sequence;
  for (const auto& p : received) by_sequence[p.sequence()] = p;
  for (const auto& p : testing::ReadTrace(spools[0])) {
    by_sequence.emplace(p.sequence(), p);
  }
  std::set<uint64_t> ids;
  for (const auto& [seq, p] : by_sequence) {
    for (const auto& r : p.nvtx_batch().ranges()) ids.insert(r.range_id());
  }
  EXPECT_EQ(ids.size(), 1500u);
  EXPECT_EQ(by_sequence.rbegin()->first, by_sequence.size()) << "gap";
  EXPECT_TRUE(by_sequence.rbegin()->second.has_goodbye());
}

// The host forks a child that emits NVTX: the child has its own session
// (own pid, own Hello, own file), the parent's trace is intact.
TEST(HostSafetyTest, ForkedChildStartsItsOwnSession) {
  const std::string dir = testing::MakeTempDir("fork");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "fork"});
  const ProcessResult run =
      RunProcess({ROOFTRACE_NVTX_APP, "fork"}, Injected(dir + "/t.rft"));
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  const auto tids = Tids(run.err);
  ASSERT_TRUE(tids.count("child")) << run.err;
  Decoded parent = Decode(testing::ReadTrace(dir + "/t.rft"));
  const std::string child_path =
      dir + "/t-child-" + std::to_string(tids.at("child")) + ".rft";
  Decoded child = Decode(testing::ReadTrace(child_path));
  EXPECT_EQ(parent.packets.front().hello().pid(), tids.at("main"));
  EXPECT_EQ(child.packets.front().hello().pid(), tids.at("child"));
  EXPECT_EQ(child.packets.front().hello().ppid(), tids.at("main"));
  EXPECT_EQ(parent.ranges.size(), 6u);  // basic's five + after-fork
  EXPECT_EQ(parent.ranges["after-fork"].size(), 1u);
  EXPECT_EQ(parent.ranges.count("child"), 0u);
  ASSERT_EQ(child.ranges.size(), 1u);
  ASSERT_EQ(child.ranges["child"].size(), 3u);
  for (const auto& r : child.ranges["child"]) {
    EXPECT_EQ(r.thread_id(), tids.at("child"));
    EXPECT_EQ(r.parent_range_id(), 0u);  // the parent's open ranges are not
  }
  EXPECT_TRUE(parent.packets.back().has_goodbye());
  EXPECT_TRUE(child.packets.back().has_goodbye());
}

// A host linking the full libprotobuf: its protobuf keeps working, output
// unchanged, and its NVTX range is recorded.
TEST(HostSafetyTest, HostWithItsOwnLibprotobufIsUnaffected) {
  const std::string dir = testing::MakeTempDir("protobuf");
  const ProcessResult base = Baseline({ROOFTRACE_PROTOBUF_APP});
  const ProcessResult run =
      RunProcess({ROOFTRACE_PROTOBUF_APP}, Injected(dir + "/t.rft"));
  EXPECT_EQ(base.exit_code, 3);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  EXPECT_NE(run.out.find("protobuf ok"), std::string::npos);
  Decoded d = Decode(testing::ReadTrace(dir + "/t.rft"));
  EXPECT_EQ(d.ranges["serialize"].size(), 1u);
}

// A preloaded helper process that never uses NVTX, cuBLAS or CUDA leaves
// no trace (no session, no spool, nothing said).
TEST(HostSafetyTest, ProcessThatRecordsNothingLeavesNoTrace) {
  const std::string dir = testing::MakeTempDir("quiet");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "quiet"});
  const ProcessResult run = RunProcess(
      {ROOFTRACE_NVTX_APP, "quiet"},
      {{"NVTX_INJECTION64_PATH", kLib}, {"LD_PRELOAD", kLib},
       {"ROOFTRACE_SINK", "<unset>"}, {"ROOFTRACE_SPOOL_DIR", dir}});
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(testing::ListFiles(dir, ".rft").empty());
}

// ROOFTRACE_DISABLE=1: nothing written, nothing said, host unchanged.
TEST(HostSafetyTest, DisabledStandsAsideCompletely) {
  const std::string dir = testing::MakeTempDir("disabled");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "basic"});
  Env env = Injected(dir + "/t.rft");
  env["ROOFTRACE_DISABLE"] = "1";
  const ProcessResult run = RunProcess({ROOFTRACE_NVTX_APP, "basic"}, env);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  EXPECT_EQ(run.err.find("rooftrace:"), std::string::npos) << run.err;
  EXPECT_TRUE(testing::ListFiles(dir, ".rft").empty());
}

// A bad setting: one line naming it, then the library stands aside.
TEST(HostSafetyTest, BadConfigurationSaysOneLineAndStandsAside) {
  const std::string dir = testing::MakeTempDir("badcfg");
  const ProcessResult base = Baseline({ROOFTRACE_NVTX_APP, "basic"});
  Env env = Injected(dir + "/t.rft");
  env["ROOFTRACE_SAMPLE_EVERY"] = "0";
  const ProcessResult run = RunProcess({ROOFTRACE_NVTX_APP, "basic"}, env);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  EXPECT_NE(run.err.find("rooftrace: ROOFTRACE_SAMPLE_EVERY='0' is not valid"),
            std::string::npos)
      << run.err;
  EXPECT_TRUE(testing::ListFiles(dir, ".rft").empty());
}

// Counters mode in a process that never starts CUDA (NVTX only): nothing to
// count, so trace mode records the ranges, quietly (helper processes of a
// profiled command must not each print a line), and the host is unchanged.
TEST(HostSafetyTest, CountersModeWithoutCudaRecordsTraceModeQuietly) {
  const std::string dir = testing::MakeTempDir("counters");
  const ProcessResult base = RunProcess({ROOFTRACE_NVTX_APP, "basic"}, {});
  Env env = Injected(dir + "/t.rft");
  env["ROOFTRACE_MODE"] = "counters";
  const ProcessResult run = RunProcess({ROOFTRACE_NVTX_APP, "basic"}, env);
  EXPECT_EQ(run.exit_code, 7);
  EXPECT_EQ(run.out, base.out);
  EXPECT_EQ(run.err.find("counters mode"), std::string::npos) << run.err;
  Decoded d = Decode(testing::ReadTrace(dir + "/t.rft"));
  EXPECT_EQ(d.ranges.size(), 5u);
  EXPECT_EQ(d.packets.front().hello().mode(), pb::MODE_TRACE);
}

std::set<std::string> Symbols(const std::string& flags) {
  const std::string out_path = testing::MakeTempDir("nm") + "/nm.txt";
  const std::string cmd = "nm -D " + flags + " " + kLib + " > " + out_path;
  EXPECT_EQ(system(cmd.c_str()), 0) << cmd;
  std::set<std::string> names;
  FILE* f = fopen(out_path.c_str(), "r");
  char line[512];
  while (f != nullptr && fgets(line, sizeof line, f) != nullptr) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    names.insert(s.substr(s.rfind(' ') + 1));
  }
  if (f != nullptr) fclose(f);
  return names;
}

// The library exports exactly its entry points (the ops route's included)
// and the cuBLAS hooks, and
// needs no C++ runtime, CUDA, CUPTI or protobuf library at load time.
TEST(HostSafetyTest, ExportsExactlyTheEntryPointsAndHooks) {
  const std::set<std::string> expected = {
      "InitializeInjection",        "InitializeInjectionNvtx2",
      "cublasSgemm_v2",             "cublasDgemm_v2",
      "cublasHgemm",                "cublasGemmEx",
      "cublasSgemmStridedBatched",  "cublasDgemmStridedBatched",
      "cublasHgemmStridedBatched",  "cublasGemmStridedBatchedEx",
      "cublasSgemmBatched",         "cublasDgemmBatched",
      "cublasHgemmBatched",         "cublasGemmBatchedEx",
      "cublasSgemm_v2_64",          "cublasDgemm_v2_64",
      "cublasHgemm_64",             "cublasGemmEx_64",
      "cublasSgemmStridedBatched_64", "cublasDgemmStridedBatched_64",
      "cublasHgemmStridedBatched_64", "cublasGemmStridedBatchedEx_64",
      "cublasSgemmBatched_64",      "cublasDgemmBatched_64",
      "cublasHgemmBatched_64",      "cublasGemmBatchedEx_64",
      "cublasLtMatmul",             "RooftraceSubmitOps"};
  EXPECT_EQ(Symbols("--defined-only"), expected);
  for (const std::string& u : Symbols("--undefined-only")) {
    EXPECT_EQ(u.find("GLIBCXX"), std::string::npos) << u;
    EXPECT_EQ(u.find("CXXABI"), std::string::npos) << u;
    EXPECT_EQ(u.find("_ZN"), std::string::npos) << u;  // no C++ symbol
    EXPECT_EQ(u.find("cupti"), std::string::npos) << u;
  }
  const std::string out_path = testing::MakeTempDir("readelf") + "/needed.txt";
  const std::string cmd = "readelf -d " + kLib +
                          " | grep NEEDED > " + out_path;
  ASSERT_EQ(system(cmd.c_str()), 0);
  FILE* f = fopen(out_path.c_str(), "r");
  char line[512];
  while (f != nullptr && fgets(line, sizeof line, f) != nullptr) {
    const std::string s(line);
    EXPECT_TRUE(s.find("libc.so") != std::string::npos ||
                s.find("libm.so") != std::string::npos ||
                s.find("ld-linux") != std::string::npos)
        << "unexpected dependency: " << s;
  }
  if (f != nullptr) fclose(f);
}

// cuBLAS calls through the stand-in libraries: each call's shape recorded
// once (cublasGemmEx runs cublasLtMatmul inside: still one record), every
// status passed back unchanged, the real functions called exactly once.
TEST(CublasIntegrationTest, ShapesRecordedOnceAndStatusesUnchanged) {
  const std::string dir = testing::MakeTempDir("cublas_fake");
  const ProcessResult base = Baseline({ROOFTRACE_CUBLAS_FAKE_APP});
  const ProcessResult run =
      RunProcess({ROOFTRACE_CUBLAS_FAKE_APP}, Injected(dir + "/t.rft"));
  EXPECT_EQ(base.exit_code, 5);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  EXPECT_EQ(base.out,
            "sgemm status 7\ngemmex status 13\nlt descriptors 0\n"
            "ltmatmul status 13\nstrided status 0\nstrided64 status 15\n"
            "real cublasLtMatmul ran 2 times\n");
  Decoded d = Decode(testing::ReadTrace(dir + "/t.rft"));
  ASSERT_EQ(d.gemms.size(), 5u);
  const pb::Gemm& s = d.gemms[0];
  EXPECT_EQ(s.call_id(), 1u);
  EXPECT_EQ(s.api(), pb::GEMM_API_SGEMM);
  EXPECT_EQ(s.m(), 128);
  EXPECT_EQ(s.n(), 256);
  EXPECT_EQ(s.k(), 64);
  EXPECT_EQ(s.batch(), 1);
  EXPECT_EQ(s.trans_a(), pb::TRANSPOSE_N);
  EXPECT_EQ(s.trans_b(), pb::TRANSPOSE_T);
  EXPECT_EQ(s.lda(), 128);
  EXPECT_EQ(s.ldb(), 256);
  EXPECT_EQ(s.ldc(), 128);
  EXPECT_EQ(s.a_ptr(), 0x1000u);
  EXPECT_EQ(s.b_ptr(), 0x2000u);
  EXPECT_EQ(s.c_ptr(), 0x3000u);
  EXPECT_EQ(s.status(), 7);
  EXPECT_EQ(s.precision(), pb::PRECISION_FP32);

  const pb::Gemm& ex = d.gemms[1];
  EXPECT_EQ(ex.api(), pb::GEMM_API_GEMM_EX);  // not LT_MATMUL: no double count
  EXPECT_EQ(ex.m(), 4096);
  EXPECT_EQ(ex.n(), 16);
  EXPECT_EQ(ex.k(), 4096);
  EXPECT_EQ(ex.trans_a(), pb::TRANSPOSE_T);
  EXPECT_EQ(ex.a_type(), 14);  // CUDA_R_16BF
  EXPECT_EQ(ex.compute_type(), 68);
  EXPECT_EQ(ex.precision(), pb::PRECISION_FP16_TENSOR);
  EXPECT_EQ(ex.status(), 13);

  const pb::Gemm& lt = d.gemms[2];
  EXPECT_EQ(lt.api(), pb::GEMM_API_LT_MATMUL);
  EXPECT_EQ(lt.m(), 8);
  EXPECT_EQ(lt.n(), 1024);
  EXPECT_EQ(lt.k(), 512);
  EXPECT_EQ(lt.batch(), 4);
  EXPECT_EQ(lt.stride_c(), 8 * 1024);
  EXPECT_EQ(lt.trans_b(), pb::TRANSPOSE_T);
  EXPECT_EQ(lt.a_type(), 28);  // CUDA_R_8F_E4M3
  EXPECT_EQ(lt.d_type(), 14);
  EXPECT_EQ(lt.epilogue(), 32u);  // CUBLASLT_EPILOGUE_GELU
  EXPECT_EQ(lt.precision(), pb::PRECISION_FP8_TENSOR);
  EXPECT_EQ(lt.d_ptr(), 0xF000u);
  EXPECT_EQ(lt.status(), 13);

  const pb::Gemm& sb = d.gemms[3];
  EXPECT_EQ(sb.api(), pb::GEMM_API_SGEMM_STRIDED_BATCHED);
  EXPECT_EQ(sb.batch(), 12);
  EXPECT_EQ(sb.stride_a(), 1024);
  EXPECT_EQ(sb.stride_b(), 512);
  EXPECT_EQ(sb.stride_c(), 2048);
  EXPECT_EQ(sb.status(), 0);

  const pb::Gemm& big = d.gemms[4];  // ILP64: m beyond 32 bits survives
  EXPECT_EQ(big.api(), pb::GEMM_API_GEMM_STRIDED_BATCHED_EX);
  EXPECT_EQ(big.m(), 5000000000ll);
  EXPECT_EQ(big.lda(), 5000000000ll);
  EXPECT_EQ(big.batch(), 2);
  EXPECT_EQ(big.stride_b(), 1024);
  EXPECT_EQ(big.precision(), pb::PRECISION_TF32_TENSOR);
  EXPECT_EQ(big.status(), 15);  // CUBLAS_STATUS_NOT_SUPPORTED
  for (const auto& g : d.gemms) {
    EXPECT_LE(g.start_ns(), g.end_ns());
    EXPECT_EQ(g.thread_id(), d.packets.front().hello().pid());
  }
}

// The real CUDA libraries, no GPU and no driver: the real calls fail and
// the failures reach the host unchanged; CUPTI cannot attach and the
// library says so in one line and stands aside; shapes are still recorded.
TEST(CublasIntegrationTest, RealLibrariesWithoutGpuPassErrorsThrough) {
  const std::string dir = testing::MakeTempDir("cublas_real");
  const ProcessResult base = Baseline({ROOFTRACE_CUBLAS_REAL_APP});
  const ProcessResult run =
      RunProcess({ROOFTRACE_CUBLAS_REAL_APP}, Injected(dir + "/t.rft"));
  EXPECT_EQ(base.exit_code, 5);
  EXPECT_EQ(run.exit_code, base.exit_code);
  EXPECT_EQ(run.out, base.out);
  ExpectOnlyOurLinesAdded(run.err);
  // Standing aside from CUPTI is said once, not per route.
  std::regex aside("kernels and copies are not recorded");
  EXPECT_LE(std::distance(
                std::sregex_iterator(run.err.begin(), run.err.end(), aside),
                std::sregex_iterator()),
            1)
      << run.err;
  Decoded d = Decode(testing::ReadTrace(dir + "/t.rft"));
  ASSERT_EQ(d.gemms.size(), 5u);
  std::regex status_line("(\\w+) status (\\d+)");
  std::vector<int> printed;
  for (auto it = std::sregex_iterator(base.out.begin(), base.out.end(),
                                      status_line);
       it != std::sregex_iterator(); ++it) {
    printed.push_back(std::stoi((*it)[2]));
  }
  ASSERT_EQ(printed.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(d.gemms[i].status(), printed[i]);
  EXPECT_NE(printed[0], 0) << "no GPU: the real cuBLAS call must fail";
  // Hello does not claim kernels: CUPTI stood aside.
  for (int cap : d.packets.front().hello().capabilities()) {
    EXPECT_NE(cap, pb::CAPABILITY_KERNELS);
  }
}

}  // namespace
}  // namespace rooftrace::inject
