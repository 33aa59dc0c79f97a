// The built-in datasheet: dense peaks, ridge points as the seeds state them,
// and device-name matching.
#include "model/datasheet.h"
#include "model/roof_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rooftrace {
namespace {

double Peak(const char* key, Precision p) {
  const DatasheetEntry* e = FindDatasheetEntry(key);
  EXPECT_NE(e, nullptr) << key;
  return e ? e->peak_flops_per_s[static_cast<int>(p)] : 0;
}

double Ridge(const char* key) {
  const DatasheetEntry* e = FindDatasheetEntry(key);
  EXPECT_NE(e, nullptr) << key;
  if (!e) return 0;
  return RidgePoint(e->peak_flops_per_s[static_cast<int>(HeadlinePrecision(*e))],
                    e->dram_bytes_per_s);
}

// Seed 003's table: ridge = peak fp16 / bandwidth, rounded.
TEST(DatasheetTest, RidgePointsFromSeed003Figures) {
  struct Row { double tflops, gbps; int ridge; };
  const Row rows[] = {{65, 320, 203},  {125, 900, 139}, {312, 1555, 201},
                      {312, 2039, 153}, {990, 3350, 296}, {121, 300, 403}};
  for (const auto& r : rows) {
    EXPECT_EQ(std::lround(RidgePoint(r.tflops * 1e12, r.gbps * 1e9)), r.ridge);
  }
  // Seed 004: MI300X 1307 TFLOP/s over 5.3 TB/s.
  EXPECT_NEAR(RidgePoint(1307e12, 5.3e12), 246.6, 0.05);
}

// The built-in table reproduces the seeds' ridge points.
TEST(DatasheetTest, TableRidgePointsMatchSeeds) {
  EXPECT_EQ(std::lround(Ridge("t4")), 203);
  EXPECT_EQ(std::lround(Ridge("v100")), 139);
  EXPECT_EQ(std::lround(Ridge("a100-40gb")), 201);
  EXPECT_EQ(std::lround(Ridge("a100-80gb")), 153);
  EXPECT_EQ(std::lround(Ridge("l4")), 403);
  // 989.4 dense over 3.35 TB/s: 295.3, the seed's 990 gives 295.5 -> 296.
  EXPECT_NEAR(Ridge("h100-sxm"), 296, 1.0);
  EXPECT_NEAR(Ridge("mi300x"), 246.6, 0.3);
}

// Dense figures only: H100 SXM bf16 is 989, not the 1979 sparsity figure.
TEST(DatasheetTest, DensePeaksNotSparsity) {
  EXPECT_NEAR(Peak("h100-sxm", Precision::kFp16Tensor), 989.4e12, 1e12);
  EXPECT_NEAR(Peak("h100-sxm", Precision::kFp8Tensor), 1978.9e12, 1e12);
  EXPECT_NEAR(Peak("a100-80gb", Precision::kTf32Tensor), 156e12, 1e12);
  EXPECT_NEAR(Peak("b200", Precision::kFp16Tensor), 2250e12, 1e12);
  EXPECT_EQ(Peak("t4", Precision::kFp8Tensor), 0);  // Turing has no fp8
}

// Every required device is present with a bandwidth and a bf16 peak.
// Vector (non-tensor) 16-bit peaks for B200 and the Instinct parts, where
// bf16 norm and activation kernels run (docs/device-profile.md names the
// sources): B200 twice its fp32 (75 TFLOP/s), CDNA3/CDNA4 at their fp32
// vector peak.
TEST(DatasheetTest, VectorSixteenBitPeaks) {
  EXPECT_NEAR(Peak("b200", Precision::kFp32), 75e12, 1e9);
  EXPECT_NEAR(Peak("b200", Precision::kFp16), 150e12, 1e9);
  EXPECT_NEAR(Peak("b200", Precision::kBf16), 150e12, 1e9);
  for (const char* key : {"mi300x", "mi325x"}) {
    EXPECT_NEAR(Peak(key, Precision::kFp16), 163.4e12, 1e9) << key;
    EXPECT_NEAR(Peak(key, Precision::kBf16), 163.4e12, 1e9) << key;
  }
  EXPECT_NEAR(Peak("mi355x", Precision::kFp16), 157.3e12, 1e9);
  EXPECT_NEAR(Peak("mi355x", Precision::kBf16), 157.3e12, 1e9);
}

TEST(DatasheetTest, RequiredDevicesPresent) {
  for (const char* key : {"t4", "v100", "a100-40gb", "a100-80gb", "h100-sxm",
                          "h100-pcie", "h200", "l4", "l40s", "b200",
                          "mi300x", "mi325x", "mi355x"}) {
    const DatasheetEntry* e = FindDatasheetEntry(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_GT(e->dram_bytes_per_s, 0) << key;
    EXPECT_GT(e->peak_flops_per_s[static_cast<int>(Precision::kFp16Tensor)], 0)
        << key;
  }
}

// CUDA device names as the driver reports them map to the right entry.
TEST(DatasheetTest, MatchesCudaDeviceNames) {
  auto key = [](const char* name) -> std::string {
    const DatasheetEntry* e = FindDatasheetEntry(name);
    return e ? std::string(e->key) : "none";
  };
  EXPECT_EQ(key("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(key("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(key("NVIDIA H200"), "h200");
  EXPECT_EQ(key("NVIDIA A100-SXM4-80GB"), "a100-80gb");
  EXPECT_EQ(key("NVIDIA A100-SXM4-40GB"), "a100-40gb");
  EXPECT_EQ(key("NVIDIA L4"), "l4");
  EXPECT_EQ(key("NVIDIA L40S"), "l40s");
  EXPECT_EQ(key("Tesla T4"), "t4");
  EXPECT_EQ(key("Tesla V100-SXM2-16GB"), "v100");
  EXPECT_EQ(key("NVIDIA B200"), "b200");
  // ROCm traces name their GPU in deviceProperties the same way.
  EXPECT_EQ(key("AMD Instinct MI300X"), "mi300x");
  EXPECT_EQ(key("AMD Instinct MI325X"), "mi325x");
  EXPECT_EQ(key("AMD Instinct MI355X"), "mi355x");
  EXPECT_EQ(key("NVIDIA GeForce RTX 4090"), "none");
}

// Each boost clock reproduces its entry's fp32 peak as SMs x fp32 lanes per
// SM x 2 (an FMA) x clock, within the datasheet's rounding (2%): the clock
// the compute roofs assume is the one their figures were computed at.
TEST(DatasheetTest, BoostClocksReproduceFp32Peaks) {
  struct Gpu { const char* key; int sms; int lanes; };
  const Gpu gpus[] = {{"t4", 40, 64},       {"v100", 80, 64},
                      {"a100-80gb", 108, 64}, {"a100-40gb", 108, 64},
                      {"h100-pcie", 114, 128}, {"h100-sxm", 132, 128},
                      {"h200", 132, 128},    {"l40s", 142, 128},
                      {"l4", 58, 128},       {"mi300x", 304, 128},
                      {"mi325x", 304, 128},  {"mi355x", 256, 128}};
  for (const Gpu& g : gpus) {
    const DatasheetEntry* e = FindDatasheetEntry(g.key);
    ASSERT_NE(e, nullptr) << g.key;
    const double fp32 = e->peak_flops_per_s[static_cast<int>(Precision::kFp32)];
    const double computed = g.sms * g.lanes * 2.0 * e->boost_clock_hz;
    EXPECT_NEAR(computed / fp32, 1.0, 0.02) << g.key;
  }
  // Not published with B200's dense figures: 0, never guessed.
  EXPECT_EQ(FindDatasheetEntry("b200")->boost_clock_hz, 0);
}

// Every GPU of the table has a link roof (docs/device-profile.md names the
// sources): per GPU and direction, NVLink's generation in its name, xGMI
// for Instinct, the PCIe slot where there is no NVLink. The datasheet
// roofs carry it for collectives to be judged against.
TEST(DatasheetTest, EveryGpuHasALinkRoof) {
  for (const DatasheetEntry& e : Datasheet()) {
    const DatasheetLink* link = FindDatasheetLink(e);
    ASSERT_NE(link, nullptr) << e.key;
    EXPECT_GT(link->bytes_per_s, 0) << e.key;
    EXPECT_FALSE(link->name.empty()) << e.key;
  }
  EXPECT_EQ(FindDatasheetLink(*FindDatasheetEntry("h100-sxm"))->bytes_per_s,
            450e9);
  const DatasheetLink* b200 = FindDatasheetLink(*FindDatasheetEntry("b200"));
  EXPECT_EQ(b200->bytes_per_s, 900e9);
  EXPECT_NE(b200->name.find("NVLink 5"), std::string_view::npos);
  const DatasheetLink* mi300x =
      FindDatasheetLink(*FindDatasheetEntry("mi300x"));
  EXPECT_NE(mi300x->name.find("xGMI"), std::string_view::npos);
  EXPECT_NE(FindDatasheetLink(*FindDatasheetEntry("l40s"))->name.find("PCIe"),
            std::string_view::npos);
  const Roofs roofs = RoofsFromDatasheet("NVIDIA B200");
  EXPECT_EQ(roofs.link_bytes_per_s, 900e9);
  EXPECT_NE(roofs.link_name.find("NVLink 5"), std::string::npos);
}

TEST(DatasheetTest, PrecisionKeysRoundTrip) {
  for (int i = 1; i < kNumPrecisions; ++i) {
    auto p = static_cast<Precision>(i);
    auto back = PrecisionFromKey(PrecisionKey(p));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, p);
  }
  EXPECT_FALSE(PrecisionFromKey("fp128").has_value());
}

}  // namespace
}  // namespace rooftrace
