// `rooftrace analyze` end to end on the golden store: table, CSV and JSON
// cells against hand-computed values, the SVG and HTML outputs (well-formed,
// self-contained, rendered headless), and bad input with exit code 2.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "base/json.h"
#include "analyzer/commands.h"
#include "sources/registry.h"
#include "store/store.h"
#include "tests/support/golden_store.h"
#include "tests/support/real_data.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/store_schema1.h"
#include "tests/support/xml_check.h"

namespace rooftrace {
namespace {

using testing::ReadFile;
using testing::RunMain;
using testing::TempDir;
using testing::TestStore;

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

std::string LineStartingWith(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

class AnalyzeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("analyze-cli");
    store_ = dir_ + "/golden.sqlite";
    TestStore s(store_);
    testing::BuildGoldenRun(s);
    s.AddRun(2, "Test GPU 2TB");  // empty run
  }
  int Analyze(std::vector<std::string> args, std::string* out,
              std::string* err = nullptr) {
    std::string ignored;
    return RunMain(AnalyzeMain, "analyze", args, out, err ? err : &ignored);
  }

  void TearDown() override { testing::RemoveTempDir(dir_); }

  std::string dir_;
  std::string store_;
};

// #29 Messages: a run whose store filled up before any of its kernels was
// stored (complete 0, kernels_not_stored 40) is INCOMPLETE, not a program
// without GPU work: analyze and diff exit 3 and say so. They said "empty
// run; check that the profiled program launched GPU work" and exited 2.
TEST_F(AnalyzeCliTest, RunThatLostAllItsKernelsIsIncomplete) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE runs SET complete = 0, incomplete_reason = "
                         "'a store write failed (disk full): 40 kernels and 0 "
                         "NVTX ranges not stored' WHERE run_id = 2;"
                         "INSERT INTO import_stats VALUES (2, "
                         "'kernels_not_stored', 40)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  std::string out, err;
  EXPECT_EQ(Analyze({store_, "--run", "2"}, &out, &err), 3) << err;
  EXPECT_NE(err.find("run 2 has no kernels and is INCOMPLETE (a store write "
                     "failed (disk full)"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("launched GPU work"), std::string::npos) << err;
  EXPECT_EQ(RunMain(DiffMain, "diff",
                    {store_, store_, "--baseline-run", "1",
                     "--candidate-run", "2"},
                    &out, &err),
            3)
      << err;
  EXPECT_NE(err.find("INCOMPLETE"), std::string::npos) << err;
}

// The family table: every cell of the GEMM row, hand-computed.
TEST_F(AnalyzeCliTest, TableCellsMatchHandComputedValues) {
  std::string out;
  ASSERT_EQ(Analyze({store_, "--run", "1"}, &out), 0) << out;
  EXPECT_EQ(Words(LineStartingWith(out, "ampere_bf16_s16816gemm")),
            (std::vector<std::string>{
                "ampere_bf16_s16816gemm", "5",
                "0.340",    // 340 us
                "67.7",     // 340 / 502 us
                "68.00",    // mean us
                "150.400",  // 3 x 50 + 2 x 0.2 GFLOP
                "340.000",  // 3 x 100 + 2 x 20 MB
                "442.35",   // 150.4 GFLOP / 340 MB
                "442.353",  // 150.4 GFLOP / 340 us
                "1000.0",   // 340 MB / 340 us
                "50.0", "compute", "prefill", "88%"}));  // 300 of 340 us
  EXPECT_EQ(Words(LineStartingWith(out, "at::native::elementwise_kernel")),
            (std::vector<std::string>{
                "at::native::elementwise_kernel<CUDAFunctor_add>", "2", "0.160",
                "31.9", "80.00", "-", "80.000", "-", "-", "500.0", "25.0",
                "memory", "decode"}));
  EXPECT_NE(out.find("  device:   Test GPU 2TB\n"), std::string::npos);
  EXPECT_NE(out.find("  roofs:    datasheet:test\n"), std::string::npos);
  EXPECT_NE(out.find("DRAM 2 TB/s; bf16_tc 1 PFLOP/s (ridge 500.0); fp32 50 "
                     "TFLOP/s (ridge 25.0)"),
            std::string::npos);
  EXPECT_NE(out.find("  import:   dropped 4, unmatched 2\n"), std::string::npos);
  EXPECT_NE(out.find("5 of 8 kernels have FLOPs, 7 have bytes"), std::string::npos);
  // Phase summary: prefill 300 us of 502, 150 GFLOP, AI 500, 50 %; decode
  // 0.4 GFLOP, AI 10, 30 %. The store has no step rows: 0 steps.
  EXPECT_EQ(Words(LineStartingWith(out, "prefill ")),
            (std::vector<std::string>{"prefill", "0", "3", "0.300", "59.8",
                                      "150.000", "500.00", "50.0", "500.000"}));
  EXPECT_EQ(Words(LineStartingWith(out, "decode ")),
            (std::vector<std::string>{"decode", "0", "4", "0.200", "39.8",
                                      "0.400", "10.00", "30.0", "10.000"}));
}

// CSV keeps raw units in every column.
TEST_F(AnalyzeCliTest, CsvColumnsCarryRawUnits) {
  std::string out;
  ASSERT_EQ(Analyze({store_, "--run", "1", "--format", "csv"}, &out), 0);
  std::istringstream in(out);
  std::string header, gemm;
  std::getline(in, header);
  std::getline(in, gemm);
  const std::vector<std::string> h = SplitCsv(header);
  const std::vector<std::string> v = SplitCsv(gemm);
  ASSERT_EQ(h.size(), 30u);  // above_roof_count, above_roof_ns, note last
  ASSERT_EQ(v.size(), h.size()) << gemm;
  auto cell = [&](const std::string& name) {
    for (size_t i = 0; i < h.size(); ++i) {
      if (h[i] == name) return v[i];
    }
    ADD_FAILURE() << "no column " << name;
    return std::string();
  };
  auto num = [&](const std::string& name) { return std::stod(cell(name)); };
  EXPECT_EQ(cell("name"), "ampere_bf16_s16816gemm");
  EXPECT_EQ(cell("count"), "5");
  EXPECT_EQ(cell("total_ns"), "340000");
  EXPECT_DOUBLE_EQ(num("mean_ns"), 68000);
  EXPECT_NEAR(num("time_share"), 340000.0 / 502000.0, 1e-9);
  EXPECT_DOUBLE_EQ(num("flops"), 1.504e11);
  EXPECT_DOUBLE_EQ(num("bytes"), 3.4e8);
  EXPECT_NEAR(num("ai"), 1.504e11 / 3.4e8, 1e-6);
  // %.9g keeps 9 significant digits.
  EXPECT_NEAR(num("achieved_flops_per_s"), 1.504e11 / 340e-6, 4.5e14 * 1e-8);
  EXPECT_NEAR(num("achieved_bytes_per_s"), 1e12, 1);
  EXPECT_DOUBLE_EQ(num("fraction_of_roof"), 0.5);
  EXPECT_EQ(cell("bound"), "compute");
  EXPECT_EQ(cell("phase"), "prefill");
  EXPECT_NEAR(num("phase_share"), 300000.0 / 340000.0, 1e-9);
  EXPECT_EQ(cell("precision"), "bf16_tc");
  EXPECT_EQ(cell("flops_source"), "analytic");
  EXPECT_EQ(cell("bytes_source"), "counters");
  // Issue 18 items 19 and 22: the time spread and the shapes, appended.
  EXPECT_DOUBLE_EQ(num("median_ns"), 100000);
  EXPECT_DOUBLE_EQ(num("min_ns"), 20000);
  EXPECT_DOUBLE_EQ(num("max_ns"), 100000);
  EXPECT_NEAR(num("stddev_ns"), 39191.835884530846, 1e-6);
  EXPECT_EQ(cell("shape"), "m=4096 n=4096 k=4096 batch=1");
  // The framework's convention needs the kernels' token count, which this
  // run's GEMM has not: empty, not guessed.
  EXPECT_EQ(cell("framework_shape"), "");
  EXPECT_EQ(cell("above_roof_count"), "0");  // the golden run is within
  EXPECT_EQ(cell("note"), "");
  EXPECT_EQ(cell("shape_count"), "2");
  EXPECT_NEAR(num("shape_share"), 300000.0 / 340000.0, 1e-9);
}

// JSON parses strictly and carries the same numbers.
TEST_F(AnalyzeCliTest, JsonIsStrictAndCarriesTheReport) {
  std::string out;
  ASSERT_EQ(Analyze({store_, "--run", "1", "--format", "json", "--by", "kernel"},
                    &out),
            0);
  StatusOr<json::Value> v = json::Parse(out, "analyze.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->Find("device")->as_string(), "Test GPU 2TB");
  EXPECT_EQ(v->Find("dropped")->as_number(), 4);
  EXPECT_EQ(v->Find("unmatched")->as_number(), 2);
  EXPECT_EQ(v->Find("kernel_count")->as_number(), 8);
  EXPECT_EQ(v->Find("roofs")->as_array().size(), 2u);
  const json::Array& groups = v->Find("groups")->as_array();
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].Find("key")->as_string(), testing::kGemmA);
  EXPECT_DOUBLE_EQ(groups[0].Find("ai")->as_number(), 500);
  EXPECT_DOUBLE_EQ(groups[0].Find("achieved_flops_per_s")->as_number(), 5e14);
  EXPECT_TRUE(groups[3].Find("ai")->is_null());  // my_tiny_kernel
  for (const char* k : {"median_ns", "min_ns", "max_ns", "stddev_ns",
                        "shape_count", "shape_share"}) {
    EXPECT_NE(groups[0].Find(k), nullptr) << k;
  }
  const json::Array& phases = v->Find("phases")->as_array();
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_DOUBLE_EQ(phases[1].Find("fraction_of_roof")->as_number(), 0.3);
}

double Attr(const std::string& element, const std::string& name) {
  const std::regex re(name + "=\"([-0-9.]+)\"");
  std::smatch m;
  if (!std::regex_search(element, m, re)) return NAN;
  return std::stod(m[1]);
}

// The SVG is well-formed, names the roofs and ridges, and places one point
// per family and phase on log-log axes: the prefill GEMMs (AI 500, 500
// TFLOP/s) right at the bf16 ridge, the decode GEMMs (AI 10, 10 TFLOP/s)
// left of the fp32 ridge (25).
TEST_F(AnalyzeCliTest, SvgIsWellFormedAndPlacesThePoints) {
  std::string out;
  const std::string svg_path = dir_ + "/roofline.svg";
  ASSERT_EQ(Analyze({store_, "--run", "1", "--svg", svg_path}, &out), 0);
  const std::string svg = ReadFile(svg_path);
  std::string root;
  EXPECT_EQ(testing::CheckXmlWellFormed(svg, &root), "");
  EXPECT_EQ(root, "svg");
  EXPECT_NE(svg.find(">bf16_tc 1 PFLOP/s, ridge 500<"), std::string::npos);
  EXPECT_NE(svg.find(">fp32 50 TFLOP/s, ridge 25<"), std::string::npos);
  EXPECT_NE(svg.find(">DRAM 2 TB/s<"), std::string::npos);
  // The elementwise family (no FLOPs) and the tiny kernel cannot be placed.
  EXPECT_NE(svg.find("2 families without FLOPs or bytes are not plotted"),
            std::string::npos);

  // Ridge markers (r=3.5) in roof order (bf16 first), then the points.
  const std::regex circle("<circle [^>]*>");
  std::vector<std::string> ridges;
  std::string prefill, decode;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle);
       it != std::sregex_iterator(); ++it) {
    const std::string c = it->str();
    const size_t end = it->position() + it->length();
    if (c.find("r=\"3.5\"") != std::string::npos) ridges.push_back(c);
    if (svg.compare(end, 40, "<title>ampere_bf16_s16816gemm (prefill)\n") == 0) {
      prefill = c;
    }
    if (svg.compare(end, 39, "<title>ampere_bf16_s16816gemm (decode)\n") == 0) {
      decode = c;
    }
  }
  ASSERT_EQ(ridges.size(), 2u);
  ASSERT_FALSE(prefill.empty());
  ASSERT_FALSE(decode.empty());
  const double bf16_x = Attr(ridges[0], "cx"), bf16_y = Attr(ridges[0], "cy");
  const double fp32_x = Attr(ridges[1], "cx"), fp32_y = Attr(ridges[1], "cy");
  EXPECT_LT(fp32_x, bf16_x);
  EXPECT_LT(bf16_y, fp32_y);  // the higher roof is higher up
  const double decade_x = (bf16_x - fp32_x) / std::log10(500.0 / 25);
  const double decade_y = (fp32_y - bf16_y) / std::log10(1000.0 / 50);
  // Prefill: AI 500 is the bf16 ridge; 500 TFLOP/s is 0.301 decades below
  // the 1 PFLOP/s roof.
  EXPECT_NEAR(Attr(prefill, "cx"), bf16_x, 0.1);
  EXPECT_NEAR(Attr(prefill, "cy"), bf16_y + std::log10(2.0) * decade_y, 0.1);
  // Decode: AI 10 is log10(25/10) decades left of the fp32 ridge; 10 TFLOP/s
  // is 2 decades below the bf16 roof.
  EXPECT_NEAR(Attr(decode, "cx"), fp32_x - std::log10(2.5) * decade_x, 0.1);
  EXPECT_NEAR(Attr(decode, "cy"), bf16_y + 2 * decade_y, 0.1);
  // Area ~ time: radius 3 + 22 * sqrt(share of GPU time).
  EXPECT_NEAR(Attr(prefill, "r"), 3 + 22 * std::sqrt(300000.0 / 502000), 0.06);
  EXPECT_NEAR(Attr(decode, "r"), 3 + 22 * std::sqrt(40000.0 / 502000), 0.06);
  EXPECT_NE(svg.find("<title>ampere_bf16_s16816gemm (prefill)\n3 kernels, 0.300 "
                     "ms (59.8% of GPU time)\nAI 500.00 FLOP/byte, 500.000 "
                     "TFLOP/s, 1000.0 GB/s\n50.0% of roof, compute-bound, "
                     "prefill (bf16_tc)</title>"),
            std::string::npos);
}

bool HasPngSize(const std::string& png, uint32_t w, uint32_t h) {
  if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return false;
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) | uint32_t(uint8_t(png[at + 3]));
  };
  return be32(16) == w && be32(20) == h;
}

// --html and --svg say where they wrote, on stderr (stdout is the report,
// which may be CSV or JSON) (issue 18 item 22).
TEST_F(AnalyzeCliTest, HtmlAndSvgSayWhereTheyWrote) {
  std::string out, err;
  const std::string html = dir_ + "/r.html", svg = dir_ + "/r.svg";
  ASSERT_EQ(Analyze({store_, "--run", "1", "--html", html, "--svg", svg,
                     "--format", "json"},
                    &out, &err),
            0)
      << err;
  EXPECT_NE(err.find("wrote " + html), std::string::npos) << err;
  EXPECT_NE(err.find("wrote " + svg), std::string::npos) << err;
  EXPECT_TRUE(json::Parse(out, "out.json").ok());
}

// The HTML report is self-contained (no network reference) and renders in
// headless chromium into a non-trivial screenshot.
TEST_F(AnalyzeCliTest, HtmlIsSelfContainedAndRendersHeadless) {
  std::string out;
  const std::string html_path = dir_ + "/report.html";
  ASSERT_EQ(Analyze({store_, "--run", "1", "--html", html_path}, &out), 0);
  const std::string html = ReadFile(html_path);
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // The only URL is the SVG namespace, which is never fetched.
  size_t urls = 0;
  for (size_t p = html.find("http://"); p != std::string::npos;
       p = html.find("http://", p + 1)) {
    ++urls;
    EXPECT_EQ(html.compare(p, 26, "http://www.w3.org/2000/svg"), 0);
  }
  EXPECT_EQ(urls, 1u);
  // The inline SVG is well-formed on its own.
  const size_t b = html.find("<svg"), e = html.find("</svg>");
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(testing::CheckXmlWellFormed(html.substr(b, e + 6 - b)), "");

  const char* chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) {
    GTEST_SKIP() << "chromium not installed: headless render skipped";
  }
  const std::string png = dir_ + "/report.png";
  const std::string cmd =
      std::string(chromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update "
      "--disable-sync --user-data-dir=" + dir_ + "/chromium-profile" +
      " --screenshot=" + png + " --window-size=1200,900 file://" + html_path +
      " >" + dir_ + "/chromium.log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << ReadFile(dir_ + "/chromium.log");
  const std::string image = ReadFile(png);
  EXPECT_TRUE(HasPngSize(image, 1200, 900));
  // A blank page compresses to a few kB; text, axes and roofs do not.
  EXPECT_GT(image.size(), 30000u);
}

// Bad input: one clear message naming the input, exit code 2.
TEST_F(AnalyzeCliTest, BadInputExitsWithTwoAndSaysWhy) {
  std::string out, err;
  EXPECT_EQ(Analyze({dir_ + "/missing.sqlite"}, &out, &err), 2);
  EXPECT_NE(err.find(dir_ + "/missing.sqlite: No such file"), std::string::npos) << err;

  const std::string text = dir_ + "/notes.txt";
  { std::ofstream(text) << "not a trace"; }
  EXPECT_EQ(Analyze({text}, &out, &err), 2);
  EXPECT_NE(err.find("not a rooftrace store or trace"), std::string::npos) << err;

  EXPECT_EQ(Analyze({store_, "--run", "7"}, &out, &err), 2);
  EXPECT_NE(err.find("run 7 not found; runs in this store: 1, 2"), std::string::npos);

  EXPECT_EQ(Analyze({store_, "--run", "2"}, &out, &err), 2);
  EXPECT_NE(err.find("run 2 has no kernels"), std::string::npos);

  EXPECT_EQ(Analyze({store_, "--by", "colour"}, &out, &err), 2);
  EXPECT_NE(err.find("--by 'colour' is not one of"), std::string::npos);
  // A store from before schema 7 keeps no operator names: --by op and
  // --by category need the trace, or the trace imported again.
  const std::string old = dir_ + "/schema6.sqlite";
  std::filesystem::copy_file(store_, old);
  ASSERT_EQ(test_support::ExecSql(old, test_support::kDowngradeToSchema6), "");
  for (const char* by : {"op", "category"}) {
    EXPECT_EQ(Analyze({old, "--run", "1", "--by", by}, &out, &err), 2);
    EXPECT_NE(err.find("was written before stores kept the operator that "
                       "launched each kernel (store schema 7)"),
              std::string::npos)
        << err;
  }
  EXPECT_EQ(Analyze({old, "--run", "1", "--by", "family"}, &out, &err), 0)
      << err;
  EXPECT_EQ(Analyze({store_, "--capture", dir_ + "/capture.json"}, &out, &err),
            2);
  EXPECT_NE(err.find("--capture maps a trace's replayed graphs"),
            std::string::npos)
      << err;

  EXPECT_EQ(Analyze({store_, "--format", "xml"}, &out, &err), 2);
  EXPECT_EQ(Analyze({}, &out, &err), 2);
  EXPECT_NE(err.find("no input"), std::string::npos);

  EXPECT_EQ(Analyze({store_, "--run", "1", "--svg", dir_ + "/no/such/dir/r.svg"},
                    &out, &err),
            2);
  EXPECT_NE(err.find("r.svg: cannot write"), std::string::npos) << err;

  EXPECT_EQ(Analyze({store_, "--run", "1", "--device-profile", "no-such-gpu"},
                    &out, &err),
            2);
  EXPECT_NE(err.find("--device-profile no-such-gpu: no such file and not a "
                     "datasheet key"),
            std::string::npos)
      << err;
}

// --device-profile with a datasheet key re-annotates and says so.
TEST_F(AnalyzeCliTest, DeviceProfileReannotatesAndSaysSo) {
  std::string out;
  ASSERT_EQ(Analyze({store_, "--run", "1", "--device-profile", "h100-sxm", "--by",
                     "kernel"},
                    &out),
            0);
  EXPECT_NE(out.find("roofs:    datasheet:h100-sxm (re-annotated by the analyzer)"),
            std::string::npos);
  // GEMM A: 500 TFLOP/s of 989.4 -> 50.5 %.
  const std::vector<std::string> w =
      Words(LineStartingWith(out, "ampere_bf16_s16816gemm_bf16_128x128"));
  ASSERT_EQ(w.size(), 13u);
  EXPECT_EQ(w[10], "50.5");
}

}  // namespace
}  // namespace rooftrace

namespace rooftrace {
namespace {

// Odd rows a buggy or foreign writer could leave (NULL name and times,
// negative and zero durations, text where numbers belong, huge values):
// the report still builds and every output stays well-formed.
TEST(AnalyzeOddStoreTest, OddRowsNeverBreakTheOutputs) {
  const std::string dir = testing::TempDir("odd");
  const std::string path = dir + "/odd.sqlite";
  {
    testing::TestStore s(path);
    s.AddRun(1, "Weird <GPU> & \"co\"");
    s.AddRoof(1, "bf16_tc", 1e15, 2e12);
    s.Exec("INSERT INTO kernels (run_id, session_id, name) VALUES (1, 1, NULL)");
    s.Exec("INSERT INTO kernels (run_id, session_id, name, duration_ns, flops, "
           "dram_bytes, precision) VALUES (1, 1, 'neg<k>', -5, 1e300, 1e-300, "
           "'bf16_tc')");
    s.Exec("INSERT INTO kernels (run_id, session_id, name, start_ns, end_ns, "
           "flops, dram_bytes, fraction_of_roof, phase, bound) VALUES (1, 1, "
           "'zero&dur', 10, 10, 'abc', 5, 1e308, 'sideways', 'weird')");
    s.Exec("INSERT INTO kernels (run_id, session_id, name, duration_ns, flops, "
           "dram_bytes, precision, family) VALUES (1, 1, '_Z3', 1000, 1e9, 1e6, "
           "'nonsense_tc', '')");
  }
  std::string out, err;
  const std::string svg = dir + "/o.svg", html = dir + "/o.html";
  ASSERT_EQ(testing::RunMain(AnalyzeMain, "analyze", {path, "--svg", svg, "--html", html},
                             &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("4 kernels"), std::string::npos) << out;
  // A kernel without a name is listed, named as such.
  EXPECT_NE(out.find("\n(unnamed) "), std::string::npos) << out;
  // Damaged values stay one cell wide; the negative duration counts as 0.
  EXPECT_EQ(out.find("000000000000000000"), std::string::npos) << out;
  EXPECT_EQ(out.find("-0."), std::string::npos) << out;
  EXPECT_EQ(testing::CheckXmlWellFormed(testing::ReadFile(svg)), "");
  const std::string h = testing::ReadFile(html);
  const size_t b = h.find("<svg"), e = h.find("</svg>");
  EXPECT_EQ(testing::CheckXmlWellFormed(h.substr(b, e + 6 - b)), "");
  EXPECT_NE(h.find("Weird &lt;GPU&gt; &amp; &quot;co&quot;"), std::string::npos);
  for (const char* by : {"kernel", "family", "phase", "nvtx", "step"}) {
    ASSERT_EQ(testing::RunMain(AnalyzeMain, "analyze",
                               {path, "--format", "json", "--by", by}, &out, &err),
              0)
        << by << ": " << err;
    StatusOr<json::Value> v = json::Parse(out, "odd.json");
    EXPECT_TRUE(v.ok()) << by << ": " << v.status().message();
  }
  ASSERT_EQ(testing::RunMain(ExportMain, "export", {path, "--perfetto", dir + "/o.json"},
                             &out, &err),
            0)
      << err;
  EXPECT_TRUE(json::Parse(testing::ReadFile(dir + "/o.json"), "o.json").ok());
  testing::RemoveTempDir(dir);
}

// A run that lost rows (complete = 0, with its reason) or whose writer
// never finished (complete NULL) is flagged loudly: on stderr, in the
// table header's first lines and in a banner at the top of the HTML.
TEST_F(AnalyzeCliTest, IncompleteRunIsFlaggedEverywhere) {
  for (const std::string complete : {"0", "NULL"}) {
    SCOPED_TRACE("complete = " + complete);
    const std::string store = dir_ + "/incomplete.sqlite";
    {
      TestStore s(store);
      testing::BuildGoldenRun(s);
      s.Exec("UPDATE runs SET complete = " + complete +
             ", incomplete_reason = " +
             (complete == "0" ? "'a store write failed (disk full)'"
                              : "NULL"));
    }
    const std::string html = dir_ + "/incomplete.html";
    std::string out, err;
    ASSERT_EQ(Analyze({store, "--html", html}, &out, &err), 0) << err;
    EXPECT_NE(err.find("WARNING: run 1 is INCOMPLETE"), std::string::npos)
        << err;
    const std::string head = out.substr(0, out.find("device:"));
    EXPECT_NE(head.find("INCOMPLETE"), std::string::npos) << out;
    EXPECT_NE(out.find(complete == "0" ? "disk full" : "never finished"),
              std::string::npos)
        << out;
    const std::string page = ReadFile(html);
    const size_t banner = page.find("class=\"incomplete\"");
    ASSERT_NE(banner, std::string::npos) << page.substr(0, 2000);
    EXPECT_LT(banner, page.find("<table"));
    EXPECT_NE(page.find("INCOMPLETE", banner), std::string::npos);
  }
  // A complete run has none of it.
  std::string out, err;
  ASSERT_EQ(Analyze({store_, "--run", "1"}, &out, &err), 0);
  EXPECT_EQ(err.find("INCOMPLETE"), std::string::npos) << err;
  EXPECT_EQ(out.find("INCOMPLETE"), std::string::npos) << out;
}

// A negative --top used to wrap to 2^64-3 (show everything): exit 2 with
// one line naming it.
TEST_F(AnalyzeCliTest, NegativeTopIsRefused) {
  std::string out, err;
  EXPECT_EQ(Analyze({store_, "--run", "1", "--top", "-3"}, &out, &err), 2);
  EXPECT_NE(err.find("--top -3"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(Analyze({store_, "--run", "1", "--top", "2"}, &out, &err), 0);
}

// Runs `fn` as it would run for a user who cannot write `dir_`: in a child
// that drops to the user nobody when this process is root (a mode of 0555
// does not stop root), else in-process. Returns its exit code.
int RunWithoutWriteAccess(int (*fn)(int, char**), const std::string& name,
                          const std::vector<std::string>& args,
                          std::string* out, std::string* err) {
  if (geteuid() != 0) return RunMain(fn, name, args, out, err);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(99);
    std::string o, e;
    const int rc = RunMain(fn, name, args, &o, &e);
    const std::string all = o + "\n--stderr--\n" + e;
    (void)!write(pipe_fds[1], all.data(), all.size());
    _exit(rc);
  }
  close(pipe_fds[1]);
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) {
    all.append(buf, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const size_t split = all.find("\n--stderr--\n");
  *out = all.substr(0, split);
  *err = split == std::string::npos ? "" : all.substr(split + 12);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// analyze, diff and export read a WAL-mode store in a folder they cannot
// write (they failed with "attempt to write a readonly database"), and
// reading one in a writable folder leaves no -shm or -wal beside it.
TEST_F(AnalyzeCliTest, ReadOnlyFolderStoreIsReadWithoutSideFiles) {
  const std::string ro = dir_ + "/ro";
  std::filesystem::create_directories(ro);
  const std::string store = ro + "/runs.sqlite";
  std::filesystem::copy_file(store_, store);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  std::filesystem::permissions(store, std::filesystem::perms(0644));
  const auto side_files = [&] {
    return std::filesystem::exists(store + "-wal") ||
           std::filesystem::exists(store + "-shm");
  };
  // A writable folder: read, and nothing left beside the store.
  std::string out, err;
  ASSERT_EQ(Analyze({store, "--run", "1"}, &out, &err), 0) << err;
  EXPECT_FALSE(side_files());
  std::filesystem::remove(store + "-wal");
  std::filesystem::remove(store + "-shm");

  std::filesystem::permissions(ro, std::filesystem::perms(0555));
  const std::string json = dir_ + "/trace.json";
  if (geteuid() == 0) std::filesystem::permissions(
      dir_, std::filesystem::perms(0777));
  EXPECT_EQ(RunWithoutWriteAccess(AnalyzeMain, "analyze", {store, "--run", "1"},
                                  &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("ampere_bf16_s16816gemm"), std::string::npos) << out;
  EXPECT_EQ(RunWithoutWriteAccess(DiffMain, "diff",
                                  {store, store, "--baseline-run", "1",
                                   "--candidate-run", "1"},
                                  &out, &err),
            0)
      << err;
  EXPECT_EQ(RunWithoutWriteAccess(ExportMain, "export",
                                  {store, "--run", "1", "--perfetto", json},
                                  &out, &err),
            0)
      << err;
  EXPECT_TRUE(std::filesystem::exists(json));
  EXPECT_FALSE(side_files());
  std::filesystem::permissions(ro, std::filesystem::perms(0755));
}

// The run's labels (schema 6's run_labels) are in every header: the table's
// labels line, the JSON run object and the HTML report; a run without any
// has no labels line.
TEST_F(AnalyzeCliTest, HeaderShowsTheRunsLabels) {
  // Scenario: run 1 labelled commit=abc123 and note='two words'.
  {
    TestStore s(store_ + ".labelled");
    testing::BuildGoldenRun(s);
    s.Exec("INSERT INTO run_labels VALUES (1, 'commit', 'abc123'), "
           "(1, 'note', 'two words')");
  }
  const std::string labelled = store_ + ".labelled";
  std::string out;
  ASSERT_EQ(Analyze({labelled}, &out), 0);
  EXPECT_NE(out.find("  labels:   commit=abc123 note='two words'\n"),
            std::string::npos)
      << out;
  ASSERT_EQ(Analyze({labelled, "--format", "json"}, &out), 0);
  StatusOr<json::Value> v = json::Parse(out, "analyze.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const json::Value* labels = v->Find("run")->Find("labels");
  ASSERT_NE(labels, nullptr);
  EXPECT_EQ(labels->Find("commit")->as_string(), "abc123");
  EXPECT_EQ(labels->Find("note")->as_string(), "two words");
  const std::string html = dir_ + "/labels.html";
  ASSERT_EQ(Analyze({labelled, "--html", html}, &out), 0);
  EXPECT_NE(ReadFile(html).find("<dt>labels</dt><dd>commit=abc123 "),
            std::string::npos);
  ASSERT_EQ(Analyze({store_, "--run", "1"}, &out), 0);
  EXPECT_EQ(out.find("labels:"), std::string::npos) << out;
}

// A store keeps each kernel's operator (schema 7): grouped by operator or
// category, the imported BERT trace reads as the trace itself does.
TEST_F(AnalyzeCliTest, StoreGroupsByOperatorAsItsTraceDoes) {
  const char kBert[] =
      "tracelens/tests/traces/h100/"
      "gaunernst_bert-small-uncased__1016001.redacted.json.gz";
  const std::string trace = test_support::RealDataFile(kBert);
  if (trace.empty()) GTEST_SKIP() << test_support::RealDataMissing(kBert);
  const std::string store = dir_ + "/bert.sqlite";
  {
    auto source = DetectSource(trace);
    ASSERT_TRUE(source.ok()) << source.status().message();
    auto writer = Store::Open(store);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    ASSERT_TRUE(ReadSourceInto(**source, trace, {}, writer->get()).ok());
  }
  for (const char* by : {"op", "category"}) {
    std::string from_trace, from_store, err;
    ASSERT_EQ(Analyze({trace, "--by", by, "--format", "csv"}, &from_trace,
                      &err),
              0)
        << err;
    ASSERT_EQ(Analyze({store, "--by", by, "--format", "csv"}, &from_store,
                      &err),
              0)
        << err;
    EXPECT_EQ(from_store, from_trace) << by;
    EXPECT_NE(from_store.find(std::string(by) == "op" ? "\naten::addmm,"
                                                      : "\nGEMM,"),
              std::string::npos)
        << from_store;
  }
}

}  // namespace
}  // namespace rooftrace
