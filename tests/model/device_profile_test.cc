#include "model/device_profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/json.h"
#include "model/roof_model.h"

namespace rooftrace {
namespace {

// Numbers are invented for the test (sample = true), chosen so ratios and
// ridges are easy to compute by hand.
DeviceProfile MakeProfile() {
  DeviceProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  p.device.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  p.device.chip = "sm_90";
  p.device.sm_count = 132;
  p.device.sm_clock_mhz = 1980;
  p.device.memory_clock_mhz = 2619;
  p.device.memory_bus_width_bits = 5120;
  p.device.memory_bytes = 85520809984ull;
  p.device.l2_bytes = 52428800;
  p.device.driver_version = "13.0";
  p.device.runtime_version = "13.0";
  EXPECT_TRUE(FillDatasheet(&p));
  p.measured_dram_bytes_per_s = 3.0e12;
  p.dram_kernel = "stream-triad";
  p.roof(Precision::kFp16Tensor).measured_flops_per_s = 750e12;
  p.roof(Precision::kFp16Tensor).kernel = "cublasLt bf16 8192x8192x8192";
  p.roof(Precision::kFp8Tensor).note = "skipped: test";
  p.validation.push_back({"gemm_own_fp32 1024^3", "flops", 2147483648.0,
                          2190433320.96});
  p.rooftrace_version = "0.1.0";
  p.created_utc = "2026-11-23T00:00:00Z";
  p.sample = true;
  return p;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dp_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// The datasheet fills in from the CUDA device name; derived figures follow.
TEST(DeviceProfileTest, DerivedFiguresUseMeasuredRoofsFirst) {
  DeviceProfile p = MakeProfile();
  EXPECT_EQ(p.datasheet_key, "h100-sxm");
  EXPECT_DOUBLE_EQ(p.datasheet_dram_bytes_per_s, 3350e9);
  EXPECT_DOUBLE_EQ(p.DramBytesPerS(), 3.0e12);
  EXPECT_DOUBLE_EQ(p.DramRatio(), 3.0e12 / 3.35e12);
  // bf16: measured 750 TFLOP/s over 3 TB/s = 250 FLOP/byte.
  EXPECT_DOUBLE_EQ(p.Ridge(Precision::kFp16Tensor), 250.0);
  EXPECT_DOUBLE_EQ(p.roof(Precision::kFp16Tensor).Ratio(), 750.0 / 989.4);
  EXPECT_EQ(p.RoofSource(Precision::kFp16Tensor), "measured");
  // fp64: not measured, datasheet 34 TFLOP/s over measured 3 TB/s.
  EXPECT_DOUBLE_EQ(p.PeakFlopsPerS(Precision::kFp64), 34e12);
  EXPECT_EQ(p.RoofSource(Precision::kFp64), "measured+datasheet");
  EXPECT_EQ(p.roof(Precision::kFp64).Ratio(), 0.0);
  // 2% over: (2190433320.96 - 2147483648) / 2147483648.
  EXPECT_NEAR(p.validation[0].ErrorPercent(), 2.0, 1e-9);
}

// An unknown GPU keeps zero datasheet figures and says so.
TEST(DeviceProfileTest, UnknownGpuHasNoDatasheet) {
  DeviceProfile p;
  p.device.name = "Imaginary GPU 9000";
  EXPECT_FALSE(FillDatasheet(&p));
  EXPECT_EQ(p.datasheet_dram_bytes_per_s, 0.0);
  EXPECT_EQ(p.RoofSource(Precision::kFp32), "none");
}

// Save then load gives back every field.
TEST(DeviceProfileTest, SaveLoadRoundTrips) {
  const DeviceProfile p = MakeProfile();
  const std::string path = TempPath("rt.json");
  ASSERT_TRUE(SaveDeviceProfile(p, path).ok());
  auto back = LoadDeviceProfile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->device.name, p.device.name);
  EXPECT_EQ(back->device.uuid, p.device.uuid);
  EXPECT_EQ(back->device.chip, "sm_90");
  EXPECT_EQ(back->device.sm_count, 132);
  EXPECT_EQ(back->device.memory_bytes, 85520809984ull);
  EXPECT_EQ(back->device.l2_bytes, 52428800u);
  EXPECT_EQ(back->device.memory_bus_width_bits, 5120);
  EXPECT_EQ(back->datasheet_key, "h100-sxm");
  EXPECT_EQ(back->measured_dram_bytes_per_s, 3.0e12);
  EXPECT_EQ(back->datasheet_dram_bytes_per_s, 3350e9);
  EXPECT_EQ(back->dram_kernel, "stream-triad");
  for (int i = 1; i < kNumPrecisions; ++i) {
    EXPECT_EQ(back->roofs[i].measured_flops_per_s,
              p.roofs[i].measured_flops_per_s) << i;
    EXPECT_EQ(back->roofs[i].datasheet_flops_per_s,
              p.roofs[i].datasheet_flops_per_s) << i;
    EXPECT_EQ(back->roofs[i].kernel, p.roofs[i].kernel) << i;
    EXPECT_EQ(back->roofs[i].note, p.roofs[i].note) << i;
  }
  ASSERT_EQ(back->validation.size(), 1u);
  EXPECT_EQ(back->validation[0].kernel, "gemm_own_fp32 1024^3");
  EXPECT_EQ(back->validation[0].counted, 2190433320.96);
  EXPECT_TRUE(back->sample);
  EXPECT_EQ(back->created_utc, "2026-11-23T00:00:00Z");
  std::filesystem::remove(path);
}

// The written file carries the derived ratio and ridge for human readers.
TEST(DeviceProfileTest, JsonCarriesRatioAndRidge) {
  auto v = json::Parse(DeviceProfileToJson(MakeProfile()));
  ASSERT_TRUE(v.ok());
  const json::Value* bf16 = v->Find("compute")->Find("bf16_tc");
  ASSERT_NE(bf16, nullptr);
  EXPECT_DOUBLE_EQ(bf16->Find("ridge_flops_per_byte")->as_number(), 250.0);
  EXPECT_DOUBLE_EQ(bf16->Find("ratio")->as_number(), 750.0 / 989.4);
  EXPECT_EQ(bf16->Find("source")->as_string(), "measured");
  EXPECT_EQ(v->Find("format")->as_string(), "rooftrace-device-profile");
  EXPECT_EQ(v->Find("version")->as_number(), 1.0);
  EXPECT_NEAR(v->Find("counter_validation")->as_array()[0]
                  .Find("error_pct")->as_number(), 2.0, 1e-9);
}

std::string LoadError(const std::string& text) {
  auto p = DeviceProfileFromJson(text, "p.json");
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? "" : p.status().message();
}

// Every kind of bad file gets one message naming the file, the problem and
// the fix.
TEST(DeviceProfileTest, BadFilesAreRefusedWithTheFix) {
  auto missing = LoadDeviceProfile(TempPath("does-not-exist.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(
                "does-not-exist.json: cannot open the device profile"),
            std::string::npos);
  EXPECT_NE(missing.status().message().find("rooftrace calibrate"),
            std::string::npos);

  EXPECT_EQ(LoadError("{\"format\": 1,}").substr(0, 38),
            "p.json:1:14: trailing comma before '}'");
  EXPECT_NE(LoadError("[1]").find("p.json: not a rooftrace device profile"),
            std::string::npos);
  EXPECT_NE(LoadError("{\"format\": \"something-else\", \"version\": 1}")
                .find("\"format\" is not \"rooftrace-device-profile\""),
            std::string::npos);
  const std::string head =
      "{\"format\": \"rooftrace-device-profile\", \"version\": ";
  EXPECT_NE(LoadError(head + "2}").find(
                "version 2 was written by a newer rooftrace"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "1.5}").find("version must be a whole number"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "1, \"dram\": {\"measured_bytes_per_s\": \"3\"}}")
                .find("p.json: dram.measured_bytes_per_s must be a number "
                      "(found string)"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "1, \"dram\": {\"measured_bytes_per_s\": -1}}")
                .find("dram.measured_bytes_per_s must not be negative"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "1, \"dram\": {}}").find("no DRAM bandwidth"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "1, \"dram\": {\"measured_bytes_per_s\": 1e12}, "
                             "\"compute\": {\"bf16_tc\": {}}}")
                .find("no compute roof"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "1, \"compute\": {\"fp32\": []}}")
                .find("compute.fp32 must be an object"),
            std::string::npos);
}

// Issue 37 item 12: a DRAM bandwidth of 1e-300 was accepted and made every
// ridge inf and the SVG's coordinates nan. A roof outside what a GPU can
// have (kMin/kMax*PerS) is refused, naming the file and the field; 0 still
// means "not measured", and the widest real roofs still load.
TEST(DeviceProfileTest, RoofsOutsidePhysicalRangesAreRefused) {
  const std::string head =
      "{\"format\": \"rooftrace-device-profile\", \"version\": 1, ";
  const std::string fp32 = "\"compute\": {\"fp32\": {\"measured_flops_per_s\": "
                           "5e13}}";
  const std::string dram = "\"dram\": {\"measured_bytes_per_s\": 3e12}";
  struct Case {
    std::string text, field;
  };
  const std::vector<Case> cases = {
      {head + "\"dram\": {\"measured_bytes_per_s\": 1e-300}, " + fp32 + "}",
       "dram.measured_bytes_per_s is 1e-300 bytes/s, outside what a GPU can "
       "have (1000000000 to 100000000000000"},
      {head + "\"dram\": {\"datasheet_bytes_per_s\": 1e300}, " + fp32 + "}",
       "dram.datasheet_bytes_per_s is 1e+300 bytes/s"},
      {head + "\"dram\": {\"measured_bytes_per_s\": 5e8}, " + fp32 + "}",
       "dram.measured_bytes_per_s is 500000000 bytes/s"},
      {head + dram +
           ", \"compute\": {\"fp32\": {\"measured_flops_per_s\": 1e-300}}}",
       "compute.fp32.measured_flops_per_s is 1e-300 FLOP/s"},
      {head + dram +
           ", \"compute\": {\"bf16_tc\": {\"datasheet_flops_per_s\": "
           "2e19}}}",
       "compute.bf16_tc.datasheet_flops_per_s is 2e+19 FLOP/s"},
  };
  for (const Case& c : cases) {
    const std::string error = LoadError(c.text);
    EXPECT_NE(error.find("p.json: " + c.field), std::string::npos)
        << c.text << "\n" << error;
  }
  // The edges and 0 ("not measured") load.
  auto edges = DeviceProfileFromJson(
      head + "\"dram\": {\"measured_bytes_per_s\": 1e14, "
             "\"datasheet_bytes_per_s\": 0}, \"compute\": {\"fp32\": "
             "{\"measured_flops_per_s\": 1e9}, \"fp4_tc\": "
             "{\"datasheet_flops_per_s\": 1e18}}}",
      "p.json");
  ASSERT_TRUE(edges.ok()) << edges.status().message();
  EXPECT_EQ(edges->DramBytesPerS(), 1e14);
}

// A minimal hand-written profile loads; unknown keys and precision classes
// from a newer writer are skipped.
TEST(DeviceProfileTest, MinimalHandWrittenProfileLoads) {
  auto p = DeviceProfileFromJson(
      R"({"format": "rooftrace-device-profile", "version": 1,
          "future_field": {"x": 1},
          "dram": {"measured_bytes_per_s": 2e12},
          "compute": {"fp32": {"measured_flops_per_s": 5e13},
                      "fp4_tc": {"measured_flops_per_s": 2e16}}})",
      "min.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->DramBytesPerS(), 2e12);
  EXPECT_EQ(p->PeakFlopsPerS(Precision::kFp32), 5e13);
  EXPECT_DOUBLE_EQ(p->Ridge(Precision::kFp32), 25.0);
  EXPECT_EQ(p->PeakFlopsPerS(Precision::kFp64), 0.0);
  EXPECT_FALSE(p->sample);
  EXPECT_EQ(p->LinkBytesPerS(), 0.0);  // no link: none, not guessed
}

// A hand-written link roof (a measured bandwidth) is read, preferred to
// the datasheet's, refused when negative, and survives a save and load;
// the roofs built from the profile carry it.
TEST(DeviceProfileTest, LinkRoofIsReadAndPreferred) {
  auto p = DeviceProfileFromJson(
      R"({"format": "rooftrace-device-profile", "version": 1,
          "device": {"name": "NVIDIA B200"},
          "dram": {"measured_bytes_per_s": 7e12},
          "link": {"measured_bytes_per_s": 7.5e11,
                   "datasheet_bytes_per_s": 9e11, "name": "NVLink 5"},
          "compute": {"fp32": {"measured_flops_per_s": 5e13}}})",
      "link.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->LinkBytesPerS(), 7.5e11);
  const Roofs roofs = RoofsFromProfile(*p, "link.json");
  EXPECT_EQ(roofs.link_bytes_per_s, 7.5e11);
  EXPECT_EQ(roofs.link_name, "NVLink 5");
  auto again = DeviceProfileFromJson(DeviceProfileToJson(*p), "again.json");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->measured_link_bytes_per_s, 7.5e11);
  EXPECT_EQ(again->datasheet_link_bytes_per_s, 9e11);
  EXPECT_EQ(again->link_name, "NVLink 5");
  auto bad = DeviceProfileFromJson(
      R"({"format": "rooftrace-device-profile", "version": 1,
          "dram": {"measured_bytes_per_s": 7e12},
          "link": {"measured_bytes_per_s": -1},
          "compute": {"fp32": {"measured_flops_per_s": 5e13}}})",
      "neg.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("link.measured_bytes_per_s"),
            std::string::npos)
      << bad.status().message();
  // A profile written before links: its GPU's datasheet link.
  auto old = DeviceProfileFromJson(
      R"({"format": "rooftrace-device-profile", "version": 1,
          "device": {"name": "NVIDIA B200"}, "datasheet_key": "b200",
          "dram": {"measured_bytes_per_s": 7e12},
          "compute": {"fp32": {"measured_flops_per_s": 5e13}}})",
      "old.json");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(RoofsFromProfile(*old, "old.json").link_bytes_per_s, 900e9);
}

}  // namespace
}  // namespace rooftrace
