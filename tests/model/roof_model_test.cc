// Roof model: analytic GEMM numbers, precision classes, and the annotation
// of kernels against H100 SXM datasheet roofs (bf16 989.4 TFLOP/s dense,
// 3.35 TB/s), every expectation computed by hand in the comments.
#include "model/roof_model.h"

#include <gtest/gtest.h>

namespace rooftrace {
namespace {

constexpr int32_t kBf16 = 14, kFp32 = 0, kFp64 = 1, kFp8 = 28, kInt8 = 3;

GemmShape Bf16(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  GemmShape g;
  g.m = m; g.n = n; g.k = k; g.batch = batch;
  g.a_type = g.b_type = g.c_type = g.d_type = kBf16;
  g.compute_type = 68;  // CUBLAS_COMPUTE_32F
  return g;
}

KernelFacts Analytic(const GemmShape& g, uint64_t duration_ns) {
  KernelFacts f;
  f.duration_ns = duration_ns;
  f.flops[static_cast<int>(GemmPrecision(g))] = GemmFlops(g);
  f.flops_source = Source::kAnalytic;
  f.dram_bytes = GemmMinBytes(g);
  f.bytes_source = Source::kAnalytic;
  return f;
}

// Decode-shaped GEMM, 4096x4096 weight times 8 tokens.
TEST(GemmModelTest, DecodeShapedGemmFlopsAndMinimumBytes) {
  const GemmShape g = Bf16(4096, 8, 4096);
  // 2 * 4096 * 8 * 4096
  EXPECT_EQ(GemmFlops(g), 268435456u);
  // (4096*4096 + 4096*8 + 4096*8) * 2 bytes
  EXPECT_EQ(GemmMinBytes(g), 33685504u);
  EXPECT_EQ(GemmPrecision(g), Precision::kFp16Tensor);
}

// Strided batched attention GEMM: batch multiplies both figures.
TEST(GemmModelTest, BatchMultipliesFlopsAndBytes) {
  const GemmShape g = Bf16(128, 128, 64, 32);
  EXPECT_EQ(GemmFlops(g), 2ull * 128 * 128 * 64 * 32);
  EXPECT_EQ(GemmMinBytes(g), (128ull * 64 + 64 * 128 + 128 * 128) * 2 * 32);
}

// fp8 inputs with a bf16 output: each operand at its own element size.
TEST(GemmModelTest, MixedElementSizesCountEachOperand) {
  GemmShape g = Bf16(1024, 1024, 1024);
  g.a_type = g.b_type = kFp8;
  // 1 MiB (A) + 1 MiB (B) + 2 MiB (D)
  EXPECT_EQ(GemmMinBytes(g), 4194304u);
  EXPECT_EQ(GemmPrecision(g), Precision::kFp8Tensor);
}

// Precision classes from data and compute types.
TEST(GemmModelTest, PrecisionClassFromTypes) {
  GemmShape g = Bf16(8, 8, 8);
  g.a_type = g.b_type = kFp32;
  g.compute_type = 68;
  EXPECT_EQ(GemmPrecision(g), Precision::kFp32);
  g.compute_type = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32
  EXPECT_EQ(GemmPrecision(g), Precision::kTf32Tensor);
  g.compute_type = 75;  // CUBLAS_COMPUTE_32F_FAST_16BF
  EXPECT_EQ(GemmPrecision(g), Precision::kFp16Tensor);
  g.a_type = g.b_type = kFp64;
  g.compute_type = 70;
  EXPECT_EQ(GemmPrecision(g), Precision::kFp64Tensor);
  g.a_type = g.b_type = kInt8;
  g.compute_type = 72;  // CUBLAS_COMPUTE_32I
  EXPECT_EQ(GemmPrecision(g), Precision::kInt8Tensor);
  g.a_type = 99;
  EXPECT_EQ(GemmPrecision(g), Precision::kUnknown);
  EXPECT_EQ(GemmMinBytes(g), 0u);
}

// H100 SXM: ridge for bf16 = 989.4e12 / 3.35e12 = 295.34 FLOP/byte.
TEST(RoofsTest, DatasheetRoofsAndRidge) {
  const Roofs r = RoofsFromDatasheet("NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.source, "datasheet:h100-sxm");
  EXPECT_EQ(r.kind, "datasheet");
  EXPECT_DOUBLE_EQ(r.Peak(Precision::kFp16Tensor), 989.4e12);
  EXPECT_DOUBLE_EQ(r.dram_bytes_per_s, 3350e9);
  EXPECT_NEAR(r.Ridge(Precision::kFp16Tensor), 295.343, 1e-3);
  const Roofs unknown = RoofsFromDatasheet("Some Future GPU");
  EXPECT_EQ(unknown.source, "none");
  EXPECT_FALSE(unknown.known());
}

// V100 has no fp64/tf32 tensor peak: those FLOPs fall back to the CUDA-core
// roofs (7.8 and 15.7 TFLOP/s).
TEST(RoofsTest, TensorClassWithoutPeakFallsBackToItsUnit) {
  const Roofs r = RoofsFromDatasheet("v100");
  EXPECT_DOUBLE_EQ(r.Peak(Precision::kFp64Tensor), 7.8e12);
  EXPECT_DOUBLE_EQ(r.Peak(Precision::kTf32Tensor), 15.7e12);
  EXPECT_DOUBLE_EQ(r.Peak(Precision::kFp8Tensor), 125e12);
}

// The classes added later: bf16 on CUDA cores has its own roof where the
// datasheet lists one (A100: 39 TFLOP/s, half of fp16's 78; H100: 133.8,
// equal) and fp16's elsewhere (L40S: 91.6); fp4 tensor GEMMs have a roof
// on B200 (9 PFLOP/s dense) and MI355X (twice fp8), none on H100.
TEST(RoofsTest, Bf16AndFp4Classes) {
  EXPECT_DOUBLE_EQ(RoofsFromDatasheet("a100-80gb").Peak(Precision::kBf16),
                   39e12);
  EXPECT_DOUBLE_EQ(RoofsFromDatasheet("a100-80gb").Peak(Precision::kFp16),
                   78e12);
  EXPECT_DOUBLE_EQ(RoofsFromDatasheet("h100-sxm").Peak(Precision::kBf16),
                   133.8e12);
  EXPECT_DOUBLE_EQ(RoofsFromDatasheet("l40s").Peak(Precision::kBf16),
                   91.6e12);
  EXPECT_DOUBLE_EQ(RoofsFromDatasheet("b200").Peak(Precision::kFp4Tensor),
                   9000e12);
  EXPECT_DOUBLE_EQ(RoofsFromDatasheet("mi355x").Peak(Precision::kFp4Tensor),
                   2 * RoofsFromDatasheet("mi355x").Peak(Precision::kFp8Tensor));
  EXPECT_EQ(RoofsFromDatasheet("h100-sxm").Peak(Precision::kFp4Tensor), 0);
  EXPECT_EQ(PrecisionKey(Precision::kBf16), "bf16");
  EXPECT_EQ(PrecisionKey(Precision::kFp4Tensor), "fp4_tc");
  EXPECT_EQ(PrecisionFromKey("fp4-tensor"), Precision::kFp4Tensor);
}

// A calibrated profile: measured figures win, the rest fall back to the
// datasheet figures the profile carries; the source names the file.
TEST(RoofsTest, CalibratedProfileRoofs) {
  DeviceProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  p.measured_dram_bytes_per_s = 3.0e12;
  p.datasheet_dram_bytes_per_s = 3.35e12;
  p.roof(Precision::kFp16Tensor).measured_flops_per_s = 750e12;
  p.roof(Precision::kFp16Tensor).datasheet_flops_per_s = 989.4e12;
  p.roof(Precision::kFp32).datasheet_flops_per_s = 67e12;
  const Roofs r = RoofsFromProfile(p, "h100.json");
  EXPECT_EQ(r.source, "calibrated:h100.json");
  EXPECT_EQ(r.kind, "calibrated");
  EXPECT_DOUBLE_EQ(r.Peak(Precision::kFp16Tensor), 750e12);
  EXPECT_DOUBLE_EQ(r.Peak(Precision::kFp32), 67e12);
  EXPECT_DOUBLE_EQ(r.Ridge(Precision::kFp16Tensor), 250.0);
}

// Decode GEMM 4096x8x4096 in 12 us: AI = 268435456 / 33685504 = 7.9689;
// bandwidth 33685504 B / 12 us = 2.807 TB/s; roof = 7.9689 * 3.35e12 =
// 26.70 TFLOP/s; achieved 22.37 TFLOP/s; fraction = 2.807 / 3.35 = 0.838.
TEST(AnnotateTest, DecodeGemmIsMemoryBound) {
  const Roofs r = RoofsFromDatasheet("h100-sxm");
  const Annotation a = Annotate(Analytic(Bf16(4096, 8, 4096), 12000), r);
  EXPECT_EQ(a.precision, Precision::kFp16Tensor);
  ASSERT_TRUE(a.ai && a.roof_flops_per_s && a.fraction_of_roof);
  EXPECT_NEAR(*a.ai, 7.968872, 1e-6);
  EXPECT_NEAR(*a.achieved_flops_per_s, 2.23696e13, 1e9);
  EXPECT_NEAR(*a.achieved_bytes_per_s, 2.80713e12, 1e8);
  EXPECT_NEAR(*a.roof_flops_per_s, 2.669572e13, 1e8);
  EXPECT_NEAR(*a.fraction_of_roof, 0.83795, 1e-4);
  EXPECT_EQ(a.bound, Bound::kMemory);
  EXPECT_EQ(*a.flops, 268435456u);
}

// Prefill-sized 8192^3 GEMM in 1.4 ms: AI = 2*8192^3 / (3*8192^2*2) =
// 2730.7 > ridge 295.3; achieved 1.0995e12 / 1.4e-3 = 785.4 TFLOP/s;
// fraction = 785.4 / 989.4 = 0.7938.
TEST(AnnotateTest, LargeGemmIsComputeBound) {
  const Roofs r = RoofsFromDatasheet("h100-sxm");
  const Annotation a = Annotate(Analytic(Bf16(8192, 8192, 8192), 1400000), r);
  EXPECT_NEAR(*a.ai, 2730.667, 1e-3);
  EXPECT_DOUBLE_EQ(*a.roof_flops_per_s, 989.4e12);
  EXPECT_NEAR(*a.fraction_of_roof, 0.79381, 1e-4);
  EXPECT_EQ(a.bound, Bound::kCompute);
}

// An 8x8x8 GEMM in 3 us: 1024 FLOPs, 384 bytes -> 0.34 GFLOP/s and
// 0.13 GB/s, far below both roofs and short: latency bound.
TEST(AnnotateTest, TinyShortKernelIsLatencyBound) {
  const Roofs r = RoofsFromDatasheet("h100-sxm");
  const Annotation a = Annotate(Analytic(Bf16(8, 8, 8), 3000), r);
  EXPECT_NEAR(*a.ai, 1024.0 / 384.0, 1e-9);
  EXPECT_EQ(a.bound, Bound::kLatency);
  // The same kernel taking 30 us is no longer "short": AI 2.67 < ridge.
  EXPECT_EQ(Annotate(Analytic(Bf16(8, 8, 8), 30000), r).bound,
            Bound::kMemory);
}

// A copy kernel with counted bytes and zero FLOPs: 100 MB in 50 us =
// 2 TB/s, fraction = 2 / 3.35 = 0.597, judged on bandwidth: memory.
TEST(AnnotateTest, KernelWithoutFlopsJudgedOnBandwidth) {
  const Roofs r = RoofsFromDatasheet("h100-sxm");
  KernelFacts f;
  f.duration_ns = 50000;
  f.flops_source = Source::kCounters;  // counted, and zero
  f.dram_bytes = 100000000;
  f.bytes_source = Source::kCounters;
  const Annotation a = Annotate(f, r);
  EXPECT_FALSE(a.ai.has_value());
  EXPECT_FALSE(a.roof_flops_per_s.has_value());
  EXPECT_EQ(*a.flops, 0u);
  EXPECT_NEAR(*a.fraction_of_roof, 0.597015, 1e-6);
  EXPECT_EQ(a.bound, Bound::kMemory);
}

// Counters report FLOPs in two classes: the dominant one (most FLOPs)
// picks the roof; all classes add up to the achieved rate.
TEST(AnnotateTest, DominantPrecisionPicksTheRoof) {
  const Roofs r = RoofsFromDatasheet("h100-sxm");
  KernelFacts f;
  f.duration_ns = 1000000;  // 1 ms
  f.flops[static_cast<int>(Precision::kFp32)] = 1000000000;       // 1e9
  f.flops[static_cast<int>(Precision::kFp16Tensor)] = 400000000000;  // 4e11
  f.flops_source = Source::kCounters;
  f.dram_bytes = 1000000000;  // 1e9: AI = 401
  f.bytes_source = Source::kCounters;
  const Annotation a = Annotate(f, r);
  EXPECT_EQ(a.precision, Precision::kFp16Tensor);
  EXPECT_NEAR(*a.ai, 401.0, 1e-9);
  // roof = min(989.4e12, 401 * 3.35e12) = 989.4e12; achieved 4.01e14.
  EXPECT_NEAR(*a.fraction_of_roof, 4.01e14 / 989.4e12, 1e-9);
  EXPECT_EQ(a.bound, Bound::kCompute);
}

// Nothing known but the duration: no AI, no roof, bound unknown; and
// unknown roofs leave the bound unknown while AI is still computed.
TEST(AnnotateTest, UnknownsStayUnknown) {
  const Roofs r = RoofsFromDatasheet("h100-sxm");
  KernelFacts f;
  f.duration_ns = 5000;
  const Annotation a = Annotate(f, r);
  EXPECT_FALSE(a.flops.has_value());
  EXPECT_FALSE(a.fraction_of_roof.has_value());
  EXPECT_EQ(a.bound, Bound::kUnknown);
  const Annotation b =
      Annotate(Analytic(Bf16(4096, 8, 4096), 12000), Roofs{});
  EXPECT_NEAR(*b.ai, 7.968872, 1e-6);
  EXPECT_FALSE(b.roof_flops_per_s.has_value());
  EXPECT_EQ(b.bound, Bound::kUnknown);
}

// A kernel whose precision has no peak on the device (bf16 on CUDA cores
// where only tensor peaks are known) but with FLOPs and bytes: below the
// ridge of every roof the device has it is memory-bound on AI*B; above the
// lowest ridge the bound stays unknown, unless its bytes moved faster than
// DRAM allows, which is above any roof.
TEST(AnnotateTest, UnknownPeakBelowEveryRidgeIsMemoryBound) {
  Roofs r;
  r.dram_bytes_per_s = 1e12;
  r.peak_flops_per_s[static_cast<int>(Precision::kFp64)] = 50e12;  // ridge 50
  r.peak_flops_per_s[static_cast<int>(Precision::kFp16Tensor)] = 1000e12;
  ASSERT_EQ(r.Peak(Precision::kBf16), 0);  // no fp16 vector peak either
  EXPECT_EQ(r.LowestPeak(), 50e12);
  KernelFacts f;
  f.duration_ns = 100000;  // 100 us
  f.flops[static_cast<int>(Precision::kBf16)] = 4'000'000'000;  // 40 TFLOP/s
  f.flops_source = Source::kAnalytic;
  f.dram_bytes = 50'000'000'000 / 1000;  // 50 MB: 0.5 TB/s, AI 80
  f.bytes_source = Source::kAnalytic;
  // AI 80 is past the fp64 ridge (50): the peak decides, and it is unknown.
  Annotation a = Annotate(f, r);
  EXPECT_EQ(a.bound, Bound::kUnknown);
  EXPECT_FALSE(a.fraction_of_roof.has_value());
  // AI 8 (500 MB): below every ridge, memory-bound on AI*B = 8 TFLOP/s;
  // 40 TFLOP/s achieved is 5x that (500 MB in 100 us: 5 TB/s).
  f.dram_bytes = 500'000'000;
  a = Annotate(f, r);
  EXPECT_EQ(a.bound, Bound::kMemory);
  ASSERT_TRUE(a.fraction_of_roof.has_value());
  EXPECT_NEAR(*a.fraction_of_roof, 5.0, 1e-12);
  EXPECT_NEAR(*a.roof_flops_per_s, 8e12, 1);
  // 1 ms instead: 0.5 TB/s, half of the memory roof.
  f.duration_ns = 1'000'000;
  a = Annotate(f, r);
  EXPECT_EQ(a.bound, Bound::kMemory);
  EXPECT_NEAR(*a.fraction_of_roof, 0.5, 1e-12);
  // Past the lowest ridge but bytes faster than DRAM: above any roof,
  // bound unknown, fraction at least bytes/s over B.
  f.dram_bytes = 40'000'000;  // AI 100; 40 MB in 10 us = 4 TB/s
  f.duration_ns = 10000;
  a = Annotate(f, r);
  EXPECT_EQ(a.bound, Bound::kUnknown);
  ASSERT_TRUE(a.fraction_of_roof.has_value());
  EXPECT_NEAR(*a.fraction_of_roof, 4.0, 1e-12);
}

// Counters measured at 1.59 GHz on an H100 SXM (boost 1.98 GHz): an
// 8192^3 bf16 GEMM in 1.5 ms is judged against 989.4e12 * 1590 / 1980 =
// 794.518e12 FLOP/s. 2 * 8192^3 = 1,099,511,627,776 FLOPs over 402,653,184
// minimum bytes (AI 2730.67, past the ridge): achieved 733.008e12 FLOP/s,
// 0.9226 of the scaled roof (0.7409 of the boost-clock one). DRAM stays
// 3.35e12 B/s.
TEST(RoofClockTest, ComputeRoofsScaledToTheMeasuredClockDramNot) {
  const Roofs boost = RoofsFromDatasheet("h100-sxm");
  EXPECT_DOUBLE_EQ(boost.sm_clock_hz, 1980e6);
  const Roofs r = ScaleRoofsToClock(boost, 1590e6);
  EXPECT_NEAR(r.Peak(Precision::kFp16Tensor), 794.518181818e12, 1e3);
  EXPECT_NEAR(r.Peak(Precision::kFp32), 67e12 * 1590 / 1980, 1e3);
  EXPECT_DOUBLE_EQ(r.dram_bytes_per_s, 3350e9);
  EXPECT_DOUBLE_EQ(r.sm_clock_hz, 1590e6);
  EXPECT_EQ(r.source, "datasheet:h100-sxm");
  EXPECT_EQ(r.clock_note,
            "compute roofs scaled to 1.59 GHz (the clock the counters ran "
            "at) from 1.98 GHz; DRAM roof not scaled (the memory clock is "
            "not locked with the SM clock)");
  const Annotation a = Annotate(Analytic(Bf16(8192, 8192, 8192), 1500000), r);
  EXPECT_NEAR(*a.roof_flops_per_s, 794.518181818e12, 1e3);
  EXPECT_NEAR(*a.fraction_of_roof, 0.922581, 1e-6);
  EXPECT_EQ(a.bound, Bound::kCompute);
  const Annotation unscaled =
      Annotate(Analytic(Bf16(8192, 8192, 8192), 1500000), boost);
  EXPECT_NEAR(*unscaled.fraction_of_roof, 0.740861, 1e-6);
}

// No measured clock, or one at or above the roofs' own: nothing changes and
// nothing is said.
TEST(RoofClockTest, NoMeasuredClockOrNotBelowLeavesRoofs) {
  const Roofs boost = RoofsFromDatasheet("h100-sxm");
  for (double hz : {0.0, 1980e6, 2100e6}) {
    const Roofs r = ScaleRoofsToClock(boost, hz);
    EXPECT_EQ(r.peak_flops_per_s, boost.peak_flops_per_s) << hz;
    EXPECT_EQ(r.clock_note, "") << hz;
  }
  // Unknown roofs stay unknown, without a note.
  EXPECT_EQ(ScaleRoofsToClock(Roofs{}, 1590e6).clock_note, "");
}

// B200's datasheet figures name no boost clock: the roofs are not scaled
// by a guessed one, and the note says why.
TEST(RoofClockTest, RoofsWithoutAClockStayUnscaledAndSaySo) {
  const Roofs b200 = RoofsFromDatasheet("b200");
  ASSERT_TRUE(b200.known());
  EXPECT_EQ(b200.sm_clock_hz, 0);
  const Roofs r = ScaleRoofsToClock(b200, 1500e6);
  EXPECT_EQ(r.peak_flops_per_s, b200.peak_flops_per_s);
  EXPECT_EQ(r.clock_note,
            "compute roofs not scaled to the 1.50 GHz SM clock the kernels "
            "ran at: the roofs (datasheet:b200) name no clock they assume");
}

// A calibrated profile's roofs assume its maximum SM clock: measured
// 1,000 TFLOP/s bf16 at 2.0 GHz is 750 TFLOP/s at 1.5 GHz.
TEST(RoofClockTest, CalibratedProfileScaledFromItsSmClock) {
  DeviceProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  p.device.sm_clock_mhz = 2000;
  p.measured_dram_bytes_per_s = 3e12;
  p.roof(Precision::kFp16Tensor).measured_flops_per_s = 1000e12;
  const Roofs r = ScaleRoofsToClock(RoofsFromProfile(p, "p.json"), 1500e6);
  EXPECT_NEAR(r.Peak(Precision::kFp16Tensor), 750e12, 1e3);
  EXPECT_DOUBLE_EQ(r.dram_bytes_per_s, 3e12);
  EXPECT_NE(r.clock_note.find("from 2.00 GHz"), std::string::npos);
}

TEST(AnnotateTest, NamesOfSourcesAndBounds) {
  EXPECT_EQ(SourceName(Source::kCounters), "counters");
  EXPECT_EQ(SourceName(Source::kAnalytic), "analytic");
  EXPECT_EQ(SourceName(Source::kNone), "none");
  EXPECT_EQ(BoundName(Bound::kLatency), "latency");
  EXPECT_EQ(BoundName(Bound::kUnknown), "unknown");
}

// A sampled kernel's stored source is its own label; every label of the
// form counters (sampled ...) reads back as sampled, nothing else does.
TEST(AnnotateTest, SampledSourceNamesAreRecognized) {
  EXPECT_EQ(SourceName(Source::kSampled), "counters (sampled)");
  EXPECT_TRUE(IsSampledSourceName("counters (sampled)"));
  EXPECT_TRUE(IsSampledSourceName("counters (sampled 3 of 120, spread 0.4%)"));
  EXPECT_FALSE(IsSampledSourceName("counters"));
  EXPECT_FALSE(IsSampledSourceName("inherited"));
  EXPECT_FALSE(IsSampledSourceName(""));
}

}  // namespace
}  // namespace rooftrace
