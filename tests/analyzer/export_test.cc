// `rooftrace export`: the Perfetto JSON of the golden run is valid trace
// event JSON with kernels on stream tracks, NVTX on thread tracks and the
// annotation in args; --csv writes one file per table with the run's rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "base/json.h"
#include "analyzer/commands.h"
#include "tests/support/golden_store.h"

namespace rooftrace {
namespace {

using testing::ReadFile;
using testing::RunMain;
using testing::TempDir;
using testing::TestStore;

// Checks the trace event format's structure: every event has ph, name, pid;
// complete events have tid, ts and dur >= 0; metadata names processes and
// threads; events on one track nest (no partial overlap). Returns the first
// problem, or "".
std::string CheckTraceEvents(const json::Value& root) {
  if (!root.is_object()) return "root is not an object";
  const json::Value* events = root.Find("traceEvents");
  if (!events || !events->is_array()) return "no traceEvents array";
  std::map<std::pair<double, double>, std::vector<std::pair<double, double>>> tracks;
  for (const json::Value& e : events->as_array()) {
    const json::Value* ph = e.Find("ph");
    const json::Value* name = e.Find("name");
    const json::Value* pid = e.Find("pid");
    if (!ph || !ph->is_string()) return "event without ph";
    if (!name || !name->is_string()) return "event without name";
    if (!pid || !pid->is_number()) return "event without pid";
    if (ph->as_string() == "M") {
      const json::Value* args = e.Find("args");
      if (!args || !args->Find("name")) return "metadata without args.name";
      continue;
    }
    if (ph->as_string() == "b" || ph->as_string() == "e") {
      if (!e.Find("id") || !e.Find("ts")) return "async event without id/ts";
      continue;
    }
    if (ph->as_string() != "X") return "unexpected ph " + ph->as_string();
    const json::Value* tid = e.Find("tid");
    const json::Value* ts = e.Find("ts");
    const json::Value* dur = e.Find("dur");
    if (!tid || !tid->is_number() || !ts || !ts->is_number() || !dur ||
        !dur->is_number()) {
      return "complete event without tid/ts/dur: " + name->as_string();
    }
    if (dur->as_number() < 0) return "negative dur: " + name->as_string();
    tracks[{pid->as_number(), tid->as_number()}].push_back(
        {ts->as_number(), ts->as_number() + dur->as_number()});
  }
  for (auto& [track, spans] : tracks) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        const bool overlap = spans[i].first < spans[j].second;
        const bool nested = spans[i].second <= spans[j].second;
        if (overlap && !nested) return "partially overlapping events on a track";
      }
    }
  }
  return "";
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("export");
    store_ = dir_ + "/golden.sqlite";
    TestStore s(store_);
    testing::BuildGoldenRun(s);
    testing::BuildGoldenRun(s, 2);  // a second run the export must skip
    // Two overlapping start/end ranges on one thread.
    s.Exec("INSERT INTO nvtx_ranges (run_id, session_id, name, kind, start_ns, "
           "end_ns, thread_id) VALUES (1, 1, 'request 1', 'start_end', 1000000, "
           "1500000, 11), (1, 1, 'request 2', 'start_end', 1200000, 1800000, 11)");
  }
  void TearDown() override { testing::RemoveTempDir(dir_); }
  std::string dir_, store_;
};

// Kernels sit on per-stream tracks of the GPU process, NVTX on the host
// thread, and each kernel carries its numbers.
TEST_F(ExportTest, PerfettoJsonHasTracksAndAnnotations) {
  const std::string path = dir_ + "/trace.json";
  std::string out, err;
  ASSERT_EQ(RunMain(ExportMain, "export", {store_, "--run", "1", "--perfetto", path},
                    &out, &err),
            0)
      << err;
  EXPECT_EQ(out, "wrote " + path + ": run 1, 8 kernels, 1 copies, 3 NVTX ranges\n");
  StatusOr<json::Value> v = json::Parse(ReadFile(path), path);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(CheckTraceEvents(*v), "");

  std::map<std::string, int> by_cat;
  std::map<std::string, std::string> thread_names, process_names;
  const json::Value* gemm = nullptr;
  for (const json::Value& e : v->Find("traceEvents")->as_array()) {
    const std::string ph = e.Find("ph")->as_string();
    const std::string key = std::to_string(static_cast<int64_t>(e.Find("pid")->as_number()));
    if (ph == "M") {
      const std::string n = e.Find("args")->Find("name")->as_string();
      if (e.Find("name")->as_string() == "thread_name") {
        thread_names[key + "/" + std::to_string(static_cast<int64_t>(
                                      e.Find("tid")->as_number()))] = n;
      } else {
        process_names[key] = n;
      }
      continue;
    }
    if (ph == "b" || ph == "e") {
      ++by_cat["async " + ph];
      continue;
    }
    ++by_cat[e.Find("cat")->as_string()];
    if (!gemm && e.Find("cat")->as_string() == "kernel") gemm = &e;
  }
  EXPECT_EQ(by_cat["kernel"], 8);
  EXPECT_EQ(by_cat["memcpy"], 1);
  EXPECT_EQ(by_cat["nvtx"], 1);  // the push/pop range, a complete event
  // Overlapping start/end ranges become async pairs, which need no nesting.
  EXPECT_EQ(by_cat["async b"], 2);
  EXPECT_EQ(by_cat["async e"], 2);
  EXPECT_EQ(process_names["1000000000"], "GPU 0 Test GPU 2TB");
  EXPECT_EQ(thread_names["1000000000/7"], "stream 7");
  EXPECT_EQ(thread_names["1000000000/8"], "stream 8");  // decode GEMMs
  // The host process is keyed by the producer's pid (sessions.pid).
  EXPECT_EQ(process_names["4242"], "host process 4242");
  EXPECT_EQ(thread_names["4242/11"], "thread 11 (NVTX)");

  // First kernel: GEMM A at 1 ms for 100 us.
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->Find("name")->as_string(), testing::kGemmA);
  EXPECT_DOUBLE_EQ(gemm->Find("ts")->as_number(), 1000.0);
  EXPECT_DOUBLE_EQ(gemm->Find("dur")->as_number(), 100.0);
  EXPECT_DOUBLE_EQ(gemm->Find("tid")->as_number(), 7);
  const json::Value* args = gemm->Find("args");
  EXPECT_EQ(args->Find("family")->as_string(), "ampere_bf16_s16816gemm");
  EXPECT_EQ(args->Find("phase")->as_string(), "prefill");
  EXPECT_EQ(args->Find("bound")->as_string(), "compute");
  EXPECT_DOUBLE_EQ(args->Find("flops")->as_number(), 5e10);
  EXPECT_DOUBLE_EQ(args->Find("dram_bytes")->as_number(), 1e8);
  EXPECT_DOUBLE_EQ(args->Find("ai_flops_per_byte")->as_number(), 500);
  EXPECT_DOUBLE_EQ(args->Find("achieved_tflops_per_s")->as_number(), 500);
  EXPECT_DOUBLE_EQ(args->Find("achieved_gb_per_s")->as_number(), 1000);
  EXPECT_DOUBLE_EQ(args->Find("percent_of_roof")->as_number(), 50);
  EXPECT_EQ(args->Find("shape")->as_string(), "m=4096 n=4096 k=4096 batch=1");
}

// One CSV per table; only the chosen run's rows; NULL stays empty.
TEST_F(ExportTest, CsvWritesOneFilePerTableForTheRun) {
  const std::string csv = dir_ + "/csv";
  std::string out, err;
  ASSERT_EQ(RunMain(ExportMain, "export", {store_, "--run", "2", "--csv", csv},
                    &out, &err),
            0)
      << err;
  EXPECT_EQ(out, "wrote 10 CSV files for run 2 into " + csv + "\n");
  for (const char* t : {"runs", "sessions", "devices", "roofs", "import_stats",
                        "kernels", "memcpys", "gemm_calls", "nvtx_ranges",
                        "steps"}) {
    EXPECT_TRUE(std::filesystem::exists(csv + "/" + t + ".csv")) << t;
  }
  std::istringstream kernels(ReadFile(csv + "/kernels.csv"));
  std::string header, line;
  std::getline(kernels, header);
  EXPECT_EQ(header.rfind("kernel_id,run_id,session_id,correlation_id,", 0), 0u);
  int rows = 0;
  std::string tiny;
  while (std::getline(kernels, line)) {
    ++rows;
    EXPECT_EQ(line.find(",2,2,"), line.find(',')) << line;  // run 2, session 2
    if (line.find("my_tiny_kernel") != std::string::npos) tiny = line;
  }
  EXPECT_EQ(rows, 8);
  // my_tiny_kernel has no FLOPs: the flops cell is empty, not 0.
  EXPECT_NE(tiny.find(",,"), std::string::npos);
  EXPECT_EQ(ReadFile(csv + "/steps.csv").find('\n') + 1,
            ReadFile(csv + "/steps.csv").size());  // header only
}

// Bad usage and bad input exit with 2.
TEST_F(ExportTest, BadUsageExitsWithTwo) {
  std::string out, err;
  EXPECT_EQ(RunMain(ExportMain, "export", {store_}, &out, &err), 2);
  EXPECT_NE(err.find("exactly one of --perfetto FILE or --csv DIR"), std::string::npos);
  EXPECT_EQ(RunMain(ExportMain, "export",
                    {store_, "--run", "5", "--perfetto", dir_ + "/x.json"}, &out,
                    &err),
            2);
  EXPECT_NE(err.find("run 5 not found"), std::string::npos);
  EXPECT_EQ(RunMain(ExportMain, "export",
                    {dir_ + "/nope.rft", "--perfetto", dir_ + "/x.json"}, &out,
                    &err),
            2);
  EXPECT_NE(err.find("nope.rft"), std::string::npos);
}

}  // namespace
}  // namespace rooftrace
