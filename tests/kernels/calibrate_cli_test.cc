// `rooftrace calibrate` as a user runs it, without a GPU: the no-GPU answer,
// rendering a recorded result, the modelled sample, and bad input.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/cli.h"
#include "tests/support/sqlite_query.h"
#include "kernels/commands.h"
#include "model/device_profile.h"
#include "kernels/calibration_result.h"

namespace rooftrace {
namespace {

struct CliRun {
  int code;
  std::string out, err;
};

CliRun Calibrate(std::vector<std::string> args) {
  args.insert(args.begin(), "calibrate");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = CalibrateMain(static_cast<int>(args.size()), argv.data());
  CliRun r{code, testing::internal::GetCapturedStdout(),
        testing::internal::GetCapturedStderr()};
  return r;
}

class CalibrateCliTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("calibrate_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const {
    return (dir_ / name).string();
  }
  // A recorded result (hand-made; the numbers are not from a GPU).
  std::string WriteResult(bool own_matches) {
    kernels::CalibrationResult r;
    r.device.name = "NVIDIA A100-SXM4-80GB";
    r.sm = 80;
    r.stream.push_back({"triad", 1 << 20, 4, 6e-6, 7e-6, 3});
    r.gemm.push_back({"bf16", "cublasLt", {8192, 8192, 8192},
                      kernels::StepStatus::kOk, "", 4e-3, 4e-3, 3});
    kernels::OwnKernelRun o;
    o.kernel = "own_sgemm_tiled";
    o.type = "fp32";
    o.shape = {2048, 2048, 2048};
    o.best_s = 1e-3;
    o.max_rel_error = own_matches ? 1e-7 : 0.5;
    o.tolerance = 1e-4;
    o.matches_cublas = own_matches;
    r.own.push_back(o);
    const std::string path = Path(own_matches ? "good.json" : "bad-own.json");
    EXPECT_TRUE(kernels::SaveCalibrationResult(r, path).ok());
    return path;
  }
  std::filesystem::path dir_;
};

// Plain `calibrate` on this machine (no GPU): a clear message, exit 2, and
// no profile written.
TEST_F(CalibrateCliTest, NoGpuIsAClearUsageError) {
  const CliRun r = Calibrate({"--quick", "-o", Path("profile.json")});
  EXPECT_EQ(r.code, kExitUsage);
#ifdef ROOFTRACE_HAVE_CUDA
  EXPECT_NE(r.err.find("rooftrace calibrate: no usable NVIDIA GPU"),
            std::string::npos)
      << r.err;
#else
  EXPECT_NE(r.err.find("calibration needs the CUDA build"), std::string::npos)
      << r.err;
#endif
  EXPECT_NE(r.err.find("--from-result"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(Path("profile.json")));
}

#ifdef ROOFTRACE_HAVE_CUDA
// The CUDA half is a module loaded on demand; a missing one is named with
// the fix.
TEST_F(CalibrateCliTest, MissingGpuModuleIsNamed) {
  ::setenv("ROOFTRACE_CALIBRATE_MODULE", Path("nope.so").c_str(), 1);
  const CliRun r = Calibrate({"--quick", "-o", Path("profile.json")});
  ::unsetenv("ROOFTRACE_CALIBRATE_MODULE");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("cannot load the calibration module "
                       "librooftrace_calibrate.so"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(Path("nope.so")), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(Path("profile.json")));
}
#endif

// A recorded result renders to a profile, a report and a summary.
TEST_F(CalibrateCliTest, FromResultWritesProfileAndReport) {
  const std::string result = WriteResult(true);
  const CliRun r = Calibrate({"--from-result", result, "-o", Path("p.json"),
                           "--html", Path("r.html")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto p = LoadDeviceProfile(Path("p.json"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  // triad: 3 x 2^20 x 4 bytes in 6 us.
  EXPECT_DOUBLE_EQ(p->measured_dram_bytes_per_s, 3.0 * 4 * (1 << 20) / 6e-6);
  EXPECT_EQ(p->datasheet_key, "a100-80gb");
  EXPECT_DOUBLE_EQ(p->roof(Precision::kFp16Tensor).measured_flops_per_s,
                   1099511627776.0 / 4e-3);
  std::ifstream html(Path("r.html"));
  std::string text((std::istreambuf_iterator<char>(html)), {});
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_EQ(text.find("SAMPLE"), std::string::npos);
  EXPECT_NE(r.out.find("device profile: " + Path("p.json")), std::string::npos);
}

// An own kernel that disagrees with cuBLAS is a finding: exit 1, named.
TEST_F(CalibrateCliTest, OwnKernelMismatchExitsOne) {
  const CliRun r = Calibrate({"--from-result", WriteResult(false)});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("own_sgemm_tiled does not match cuBLAS"),
            std::string::npos)
      << r.err;
}

// The modelled sample renders a report labelled SAMPLE and writes no
// profile.
TEST_F(CalibrateCliTest, SampleRendersALabelledReportOnly) {
  const CliRun r = Calibrate({"--sample", "h100-sxm", "--quick", "--html",
                           Path("s.html")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("SAMPLE - NOT MEASURED", 0), 0u) << r.out;
  std::ifstream html(Path("s.html"));
  std::string text((std::istreambuf_iterator<char>(html)), {});
  EXPECT_NE(text.find("<title>SAMPLE (not measured)"), std::string::npos);

  const CliRun with_output =
      Calibrate({"--sample", "h100-sxm", "-o", Path("p.json")});
  EXPECT_EQ(with_output.code, kExitUsage);
  EXPECT_NE(with_output.err.find("writes no device profile"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(Path("p.json")));
}

// Bad input: each named, exit 2.
TEST_F(CalibrateCliTest, BadInputIsNamed) {
  CliRun r = Calibrate({"--from-result", Path("missing.json")});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find(Path("missing.json") + ": cannot open"),
            std::string::npos)
      << r.err;

  std::ofstream(Path("broken.json")) << "{\"format\": ";
  r = Calibrate({"--from-result", Path("broken.json")});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find(Path("broken.json") + ":1:12:"), std::string::npos)
      << r.err;

  r = Calibrate({"--sample", "gpu9000"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--sample 'gpu9000' is not a GPU"), std::string::npos);

  r = Calibrate({"--sample", "h100-sxm", "--from-result", "x.json"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("exclude each other"), std::string::npos);

  r = Calibrate({"--from-result", WriteResult(true), "-o",
                 Path("no/such/dir/p.json")});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("no/such/dir/p.json: cannot write"), std::string::npos)
      << r.err;

  r = Calibrate({"--bogus"});
  EXPECT_EQ(r.code, kExitUsage);
}

// --counters-store fills the profile's counter validation from the counted
// launches of the reference kernels.
TEST_F(CalibrateCliTest, CountersStoreFillsValidation) {
  const std::string result = WriteResult(true);
  const std::string store = Path("cal.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK);
  // 2 x 2048^3 = 17179869184 FLOPs expected; 1% over counted.
  // Triad of 2^20 floats must move 12582912 bytes; counted exactly.
  // A store of the documented schema (docs/store.md); run 2 (the newest)
  // holds the calibration; run 1 an application kernel only.
  const std::string sql =
      test_support::DocsStoreDdl(ROOFTRACE_SOURCE_DIR) +
      "INSERT INTO schema_info VALUES ('schema_version', '3');"
      "INSERT INTO runs (run_id) VALUES (1), (2);"
      "INSERT INTO kernels (run_id, session_id, name, start_ns, nvtx_path, "
      "flops, flops_source, dram_bytes, bytes_source) VALUES "
      "(2, 1, 'k', 1, 'rooftrace:own_sgemm_tiled_2048x2048x2048', "
      "17351667877, 'counters', NULL, 'none'), "
      "(2, 1, 'k', 2, 'rooftrace:stream_triad', NULL, 'none', 12582912, "
      "'counters'), "
      "(1, 1, 'k', 3, 'app/step', 1000, 'counters', 10, 'counters');";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  CliRun r = Calibrate({"--from-result", result, "--counters-store", store,
                        "-o", Path("p.json")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto p = LoadDeviceProfile(Path("p.json"));
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->validation.size(), 2u);
  EXPECT_EQ(p->validation[0].quantity, "dram_bytes");
  EXPECT_DOUBLE_EQ(p->validation[0].ErrorPercent(), 0.0);
  EXPECT_EQ(p->validation[1].quantity, "flops");
  EXPECT_NEAR(p->validation[1].ErrorPercent(), 1.0, 1e-6);
  EXPECT_NE(r.out.find("counter validation own_sgemm_tiled 2048x2048x2048 "
                       "flops"),
            std::string::npos)
      << r.out;

  // A store without calibration's ranges is refused, named.
  r = Calibrate({"--from-result", result, "--counters-store", store, "--run",
                 "1"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("no counted FLOPs or DRAM bytes"), std::string::npos)
      << r.err;
  // Without --from-result the option makes no sense.
  r = Calibrate({"--counters-store", store});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("works with --from-result"), std::string::npos);
}

}  // namespace
}  // namespace rooftrace
