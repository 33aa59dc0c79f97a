// Host-side calibration logic: formulas, plan, recorded results, the device
// profile they imply and the reports. No GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "base/json.h"
#include "kernels/calibration_result.h"
#include "kernels/formulas.h"
#include "kernels/plan.h"
#include "kernels/report.h"

namespace rooftrace::kernels {
namespace {

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos;
       p = haystack.find(needle, p + 1)) {
    ++n;
  }
  return n;
}

// Points of a roofline chart (report/roofline_svg.h): the markers that carry
// a hover title (ridge marks and legend keys carry none).
size_t PlottedPoints(const std::string& html) {
  return Count(html, "</title></circle>") + Count(html, "</title></rect>") +
         Count(html, "</title></polygon>");
}

// Seed 000's formulas at B=16, I=H=1024 in fp16, computed by hand:
// FLOP 4*16*1024*1024 + 12*16*1024; bytes 4BI + 4IH + 8BH (non-fused),
// 4BI + 4IH (ideal), and the cuBLASLt epilogue form 4BI + 4IH + 4BH.
TEST(FormulasTest, Seed000MlpMatchesTheSeed) {
  EXPECT_EQ(MlpFlops(16, 1024, 1024), 67305472.0);
  EXPECT_EQ(MlpBytes(16, 1024, 1024, 2, MlpFusion::kNonFused), 4390912.0);
  EXPECT_EQ(MlpBytes(16, 1024, 1024, 2, MlpFusion::kIdealFused), 4259840.0);
  EXPECT_EQ(MlpBytes(16, 1024, 1024, 2, MlpFusion::kEpilogueFused),
            4325376.0);
  // Large batch, h = 9: H = 9216.
  const double flops = 4.0 * 1024 * 1024 * 9216 + 12.0 * 1024 * 9216;
  EXPECT_EQ(MlpFlops(1024, 1024, 9216), flops);
  const double nonfused_bytes =
      4.0 * 1024 * 1024 + 4.0 * 1024 * 9216 + 8.0 * 1024 * 9216;
  EXPECT_DOUBLE_EQ(MlpIntensity(1024, 1024, 9216, 2, MlpFusion::kNonFused),
                   flops / nonfused_bytes);
  // Fusion only ever raises the intensity.
  EXPECT_LT(MlpIntensity(16, 1024, 4096, 2, MlpFusion::kNonFused),
            MlpIntensity(16, 1024, 4096, 2, MlpFusion::kEpilogueFused));
  EXPECT_LT(MlpIntensity(16, 1024, 4096, 2, MlpFusion::kEpilogueFused),
            MlpIntensity(16, 1024, 4096, 2, MlpFusion::kIdealFused));
}

// GEMM, STREAM and GELU byte and FLOP counts.
TEST(FormulasTest, GemmStreamAndGeluCounts) {
  EXPECT_EQ(GemmFlops(8192, 8192, 8192), 1099511627776.0);
  EXPECT_EQ(GemmFlops(2, 3, 4, 5), 240.0);
  // Decode-shaped GEMM of seed 004: M=1, N=K=4096, bf16.
  EXPECT_EQ(GemmMinBytes(1, 4096, 4096, 2, 2), 33570816.0);
  EXPECT_DOUBLE_EQ(GemmIntensity(1, 4096, 4096, 2),
                   33554432.0 / 33570816.0);
  // fp8 inputs, bf16 output: 1-byte A/B, 2-byte C.
  EXPECT_EQ(GemmMinBytes(10, 20, 30, 1, 2), 300.0 + 600.0 + 400.0);
  EXPECT_EQ(StreamCopyBytes(1 << 26, 4), 536870912.0);
  EXPECT_EQ(StreamTriadBytes(1 << 26, 4), 805306368.0);
  EXPECT_EQ(StreamTriadFlops(1000), 2000.0);
  EXPECT_EQ(GeluFlops(100), 1200.0);
  EXPECT_EQ(GeluBytes(100, 2), 400.0);
}

// STREAM buffers are at least 8x L2 and at least 256 MiB.
TEST(PlanTest, StreamBuffersExceedEightTimesL2) {
  EXPECT_EQ(MakePlan(false, 50ull << 20, 90).stream_elements,
            (400ull << 20) / 4);
  EXPECT_EQ(MakePlan(true, 4ull << 20, 75).stream_elements,
            (256ull << 20) / 4);
  // 40 MiB + 1 byte of L2 rounds up to whole MiB: 321 MiB.
  EXPECT_EQ(MakePlan(false, (40ull << 20) + 1, 80).stream_elements,
            (321ull << 20) / 4);
}

// The full plan has every seed point; --quick keeps the ends of each sweep.
TEST(PlanTest, SweepsMatchTheSeeds) {
  const CalibrationPlan full = MakePlan(false, 50ull << 20, 90);
  EXPECT_EQ(full.mlp_batches, (std::vector<int64_t>{16, 1024}));
  EXPECT_EQ(full.mlp_input_dim, 1024);
  EXPECT_EQ(full.mlp_h, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(full.msweep_m,
            (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
                                  1024, 2048, 4096, 8192}));
  EXPECT_EQ(full.msweep_n, 4096);
  EXPECT_EQ(full.msweep_k, 4096);
  ASSERT_FALSE(full.peak_shapes.empty());
  EXPECT_EQ(full.peak_shapes.front(), (GemmShape{8192, 8192, 8192}));
  // Own kernels need M, N multiples of 64 and K of 16.
  for (const GemmShape& s : {full.own_fp32_shape, full.own_bf16_shape}) {
    EXPECT_EQ(s.m % 64, 0);
    EXPECT_EQ(s.n % 64, 0);
    EXPECT_EQ(s.k % 16, 0);
  }

  const CalibrationPlan quick = MakePlan(true, 50ull << 20, 90);
  EXPECT_EQ(quick.msweep_m,
            (std::vector<int64_t>{1, 4, 16, 64, 256, 1024, 4096, 8192}));
  EXPECT_EQ(quick.mlp_h, (std::vector<int>{1, 3, 5, 9}));
  EXPECT_EQ(quick.peak_shapes.size(), 1u);
  EXPECT_LT(quick.gemm_repeats, full.gemm_repeats);
}

// Which GPU runs which type, and which roof each type measures.
TEST(PlanTest, PrecisionSupportFollowsComputeCapability) {
  auto keys = [](int sm) {
    std::string s;
    for (GemmType t : MakePlan(true, 1 << 20, sm).gemm_types) {
      s += std::string(GemmTypeInfoOf(t).key) + " ";
    }
    return s;
  };
  EXPECT_EQ(keys(90), "fp64 fp32 tf32 fp16 bf16 fp8 int8 ");
  EXPECT_EQ(keys(89), "fp64 fp32 tf32 fp16 bf16 fp8 int8 ");
  EXPECT_EQ(keys(80), "fp64 fp32 tf32 fp16 bf16 int8 ");
  EXPECT_EQ(keys(75), "fp64 fp32 fp16 int8 ");
  EXPECT_EQ(keys(70), "fp64 fp32 fp16 ");
  std::string why;
  EXPECT_FALSE(GemmTypeSupported(GemmType::kFp8, 80, &why));
  EXPECT_EQ(why,
            "fp8 GEMM needs sm_89 (Ada) or sm_90 (Hopper) or newer; this GPU "
            "is sm_80");
  EXPECT_EQ(SkippedGemmTypes(80).size(), 1u);
  EXPECT_EQ(RoofOf(GemmType::kFp64, 90), Precision::kFp64Tensor);
  EXPECT_EQ(RoofOf(GemmType::kFp64, 89), Precision::kFp64);
  EXPECT_EQ(RoofOf(GemmType::kBf16, 90), Precision::kFp16Tensor);
  EXPECT_EQ(RoofOf(GemmType::kFp16, 75), Precision::kFp16Tensor);
  EXPECT_EQ(RoofOf(GemmType::kTf32, 80), Precision::kTf32Tensor);
  EXPECT_EQ(RoofOf(GemmType::kInt8, 80), Precision::kInt8Tensor);
  EXPECT_EQ(GemmTypeFromKey("bf16"), GemmType::kBf16);
  EXPECT_EQ(GemmTypeFromKey("fp4"), std::nullopt);
}

// A small hand-made result with numbers chosen for hand computation.
CalibrationResult HandResult() {
  CalibrationResult r;
  r.device.name = "NVIDIA H100 80GB HBM3";
  r.device.chip = "sm_90";
  r.device.sm_count = 132;
  r.sm = 90;
  r.created_utc = "2026-11-23T00:00:00Z";
  r.rooftrace_version = "0.1.0";
  r.command = "rooftrace calibrate (hand-made test result)";
  // triad: 12e6 bytes in 4 us = 3 TB/s; copy: 8e6 bytes in 4 us = 2 TB/s.
  r.stream.push_back({"triad", 1000000, 4, 4e-6, 5e-6, 5});
  r.stream.push_back({"copy", 1000000, 4, 4e-6, 5e-6, 5});
  GemmRun bf16{"bf16", "cublasLt", {8192, 8192, 8192}, StepStatus::kOk, "",
               1.5e-3, 1.6e-3, 3};
  GemmRun fp16 = bf16;
  fp16.type = "fp16";
  fp16.best_s = 1.4e-3;
  GemmRun fp8 = bf16;
  fp8.type = "fp8";
  fp8.status = StepStatus::kFailed;
  fp8.note = "cublasLtMatmul(...) failed: CUBLAS_STATUS_NOT_SUPPORTED";
  fp8.best_s = 0;
  GemmRun fp64 = bf16;
  fp64.type = "fp64";
  fp64.best_s = 0.02;
  r.gemm = {bf16, fp16, fp8, fp64};
  OwnKernelRun own;
  own.kernel = "own_sgemm_tiled";
  own.type = "fp32";
  own.shape = {2048, 2048, 2048};
  own.best_s = 2e-3;
  own.cublas_best_s = 1e-3;
  own.max_rel_error = 3e-7;
  own.tolerance = 1e-4;
  own.matches_cublas = true;
  r.own.push_back(own);
  for (int64_t b : {16, 1024}) {
    for (bool fused : {false, true}) {
      MlpRun m;
      m.batch = b;
      m.input_dim = 1024;
      m.h = 4;
      m.fused = fused;
      m.best_s = fused ? 20e-6 : 30e-6;
      m.repeats = 5;
      r.mlp.push_back(m);
    }
  }
  MSweepRun s;
  s.shape = {1, 4096, 4096};
  s.best_s = 20e-6;
  r.msweep.push_back(s);
  s.shape = {8192, 4096, 4096};
  s.best_s = 0.4e-3;
  r.msweep.push_back(s);
  s.shape = {16, 4096, 4096};
  s.status = StepStatus::kFailed;
  s.note = "CUBLAS_STATUS_EXECUTION_FAILED";
  s.best_s = 0;
  r.msweep.push_back(s);
  r.validation.push_back({"own_sgemm_tiled 2048^3", "flops", 17179869184.0,
                          17179869184.0 * 1.01});
  r.notes.push_back({"gemm fp8 8192x8192x8192", StepStatus::kFailed,
                     "CUBLAS_STATUS_NOT_SUPPORTED"});
  return r;
}

// The profile takes the best STREAM and the best GEMM of each roof class,
// and records why fp8 has no measurement.
TEST(BuildProfileTest, BestRunPerRoofClass) {
  const DeviceProfile p = BuildProfile(HandResult());
  EXPECT_EQ(p.datasheet_key, "h100-sxm");
  EXPECT_DOUBLE_EQ(p.measured_dram_bytes_per_s, 3e12);
  EXPECT_EQ(p.dram_kernel, "stream-triad 3 x 4 MiB fp32");
  // fp16 (1.4 ms) beats bf16 (1.5 ms) for the fp16/bf16 tensor roof.
  const PrecisionRoof& tc = p.roof(Precision::kFp16Tensor);
  EXPECT_DOUBLE_EQ(tc.measured_flops_per_s, 1099511627776.0 / 1.4e-3);
  EXPECT_EQ(tc.kernel, "cublasLt fp16 8192x8192x8192");
  EXPECT_DOUBLE_EQ(p.Ridge(Precision::kFp16Tensor),
                   1099511627776.0 / 1.4e-3 / 3e12);
  // fp64 on sm_90 measures the fp64 tensor roof: 1.0995e12 / 0.02 s.
  EXPECT_DOUBLE_EQ(p.roof(Precision::kFp64Tensor).measured_flops_per_s,
                   1099511627776.0 / 0.02);
  EXPECT_EQ(p.roof(Precision::kFp64).measured_flops_per_s, 0.0);
  const PrecisionRoof& fp8 = p.roof(Precision::kFp8Tensor);
  EXPECT_EQ(fp8.measured_flops_per_s, 0.0);
  EXPECT_EQ(fp8.note,
            "fp8: failed (cublasLtMatmul(...) failed: "
            "CUBLAS_STATUS_NOT_SUPPORTED)");
  EXPECT_DOUBLE_EQ(fp8.datasheet_flops_per_s, 1978.9e12);
  ASSERT_EQ(p.validation.size(), 1u);
  EXPECT_NEAR(p.validation[0].ErrorPercent(), 1.0, 1e-9);
  EXPECT_FALSE(p.sample);
}

// Derived per-run figures.
TEST(CalibrationResultTest, DerivedFiguresPerRun) {
  const CalibrationResult r = HandResult();
  EXPECT_DOUBLE_EQ(r.stream[0].BytesPerS(), 3e12);
  EXPECT_DOUBLE_EQ(r.stream[1].BytesPerS(), 2e12);
  // MLP B=16, I=1024, H=4096 non-fused in 30 us.
  const double flops = 4.0 * 16 * 1024 * 4096 + 12.0 * 16 * 4096;
  EXPECT_DOUBLE_EQ(r.mlp[0].Flops(), flops);
  EXPECT_DOUBLE_EQ(r.mlp[0].FlopsPerS(), flops / 30e-6);
  EXPECT_DOUBLE_EQ(r.mlp[0].Bytes(),
                   2.0 * (2 * 16 * 1024 + 2 * 1024 * 4096 + 4 * 16 * 4096));
  EXPECT_DOUBLE_EQ(r.mlp[1].Bytes(),
                   2.0 * (2 * 16 * 1024 + 2 * 1024 * 4096 + 2 * 16 * 4096));
  EXPECT_DOUBLE_EQ(r.msweep[0].Intensity(), 33554432.0 / 33570816.0);
  // A failed run has no rate.
  EXPECT_EQ(r.msweep[2].FlopsPerS(), 0.0);
  EXPECT_EQ(r.gemm[2].FlopsPerS(), 0.0);
}

// Saving and loading a result keeps every recorded field.
TEST(CalibrationResultTest, JsonRoundTrips) {
  const CalibrationResult r = HandResult();
  auto back = CalibrationResultFromJson(CalibrationResultToJson(r), "r.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  // Writing the loaded result again gives the same text.
  EXPECT_EQ(CalibrationResultToJson(*back), CalibrationResultToJson(r));
  EXPECT_EQ(back->device.name, r.device.name);
  EXPECT_EQ(back->sm, 90);
  ASSERT_EQ(back->gemm.size(), 4u);
  EXPECT_EQ(back->gemm[2].status, StepStatus::kFailed);
  EXPECT_EQ(back->gemm[2].note, r.gemm[2].note);
  EXPECT_EQ(back->mlp[3].batch, 1024);
  EXPECT_TRUE(back->mlp[3].fused);
  EXPECT_EQ(back->msweep[1].shape, (GemmShape{8192, 4096, 4096}));
  EXPECT_EQ(back->own[0].max_rel_error, 3e-7);
  EXPECT_EQ(back->notes[0].message, "CUBLAS_STATUS_NOT_SUPPORTED");
}

// Damaged result files are refused with the member path.
TEST(CalibrationResultTest, BadFilesNameTheMember) {
  const std::string head =
      "{\"format\": \"rooftrace-calibration-result\", \"version\": 1, ";
  auto bad_status = CalibrationResultFromJson(
      head + "\"gemm\": [{\"type\": \"bf16\", \"m\": 1, \"n\": 1, \"k\": 1, "
             "\"status\": \"great\"}]}",
      "r.json");
  ASSERT_FALSE(bad_status.ok());
  EXPECT_NE(bad_status.status().message().find(
                "r.json: gemm[0].status must be \"ok\", \"skipped\" or "
                "\"failed\""),
            std::string::npos)
      << bad_status.status().message();
  auto bad_type = CalibrationResultFromJson(
      head + "\"gemm\": [{\"type\": \"fp4\", \"m\": 1, \"n\": 1, \"k\": 1}]}",
      "r.json");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.status().message().find("gemm[0].type \"fp4\" is not"),
            std::string::npos);
  auto negative = CalibrationResultFromJson(
      head + "\"stream\": [{\"kernel\": \"copy\", \"best_s\": -1}]}", "r.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("stream[0].best_s must not be "
                                             "negative"),
            std::string::npos);
  auto zero_shape = CalibrationResultFromJson(
      head + "\"msweep\": [{\"m\": 0, \"n\": 1, \"k\": 1}]}", "r.json");
  ASSERT_FALSE(zero_shape.ok());
  auto newer = CalibrationResultFromJson(
      "{\"format\": \"rooftrace-calibration-result\", \"version\": 9}",
      "r.json");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("version 9 is not supported"),
            std::string::npos);
  auto profile_instead = CalibrationResultFromJson(
      "{\"format\": \"rooftrace-device-profile\", \"version\": 1}", "p.json");
  ASSERT_FALSE(profile_instead.ok());
  EXPECT_NE(profile_instead.status().message().find(
                "p.json: not a rooftrace calibration result"),
            std::string::npos);
  auto missing = LoadCalibrationResult("/nonexistent/r.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// The modelled sample is marked as such everywhere and follows the roofline
// model it was built from.
TEST(ModelledSampleTest, IsMarkedAndFollowsTheModel) {
  const DatasheetEntry* h100 = FindDatasheetEntry("h100-sxm");
  ASSERT_NE(h100, nullptr);
  const CalibrationResult r = MakeModelledSample(*h100, 90, 50ull << 20, true);
  EXPECT_TRUE(r.sample);
  const DeviceProfile p = BuildProfile(r);
  EXPECT_TRUE(p.sample);
  // 0.9 x 3.35 TB/s and 0.8 x 989.4 TFLOP/s.
  EXPECT_NEAR(p.measured_dram_bytes_per_s, 0.9 * 3350e9, 1);
  EXPECT_NEAR(p.roof(Precision::kFp16Tensor).measured_flops_per_s,
              0.8 * 989.4e12 * (1099511627776.0 / 0.8 / 989.4e12) /
                  (1099511627776.0 / 0.8 / 989.4e12 + 4e-6),
              1e9);
  // Batch 16 is memory bound: fused (fewer bytes) beats non-fused at every h.
  for (size_t i = 0; i + 1 < r.mlp.size(); i += 2) {
    ASSERT_FALSE(r.mlp[i].fused);
    ASSERT_TRUE(r.mlp[i + 1].fused);
    if (r.mlp[i].batch == 16) {
      EXPECT_LT(r.mlp[i + 1].best_s, r.mlp[i].best_s) << "h=" << r.mlp[i].h;
    }
  }
  // Every point lies under its roof.
  const double bw = p.DramBytesPerS();
  const double peak = p.PeakFlopsPerS(Precision::kFp16Tensor);
  for (const MSweepRun& m : r.msweep) {
    EXPECT_LE(m.FlopsPerS(), std::min(peak, m.Intensity() * bw) * 1.000001);
  }
}

// The HTML report: title, banner and chart say SAMPLE for a sample and
// nothing of the kind for a measured result; one chart point per ok run;
// device strings are escaped.
TEST(ReportTest, HtmlMarksSamplesAndPlotsEveryOkPoint) {
  CalibrationResult measured = HandResult();
  measured.device.name = "GPU <x> & \"y\"";
  const std::string html = RenderCalibrationHtml(measured, BuildProfile(measured));
  EXPECT_EQ(html.find("SAMPLE"), std::string::npos);
  EXPECT_NE(html.find("GPU &lt;x&gt; &amp; &quot;y&quot;"), std::string::npos);
  EXPECT_EQ(html.find("GPU <x>"), std::string::npos);
  // 4 MLP points + 2 ok M-sweep points (the failed one is not plotted).
  EXPECT_EQ(PlottedPoints(html), 6u);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("CUBLAS_STATUS_EXECUTION_FAILED"), std::string::npos);
  EXPECT_NE(html.find("+1.00%"), std::string::npos);  // counter validation

  const DatasheetEntry* h100 = FindDatasheetEntry("h100-sxm");
  const CalibrationResult sample =
      MakeModelledSample(*h100, 90, 50ull << 20, false);
  const std::string sample_html =
      RenderCalibrationHtml(sample, BuildProfile(sample));
  EXPECT_NE(sample_html.find("<title>SAMPLE (not measured)"),
            std::string::npos);
  EXPECT_NE(sample_html.find("class=\"sample\">SAMPLE &mdash; NOT MEASURED"),
            std::string::npos);
  EXPECT_NE(sample_html.find(">SAMPLE - NOT MEASURED</text>"),
            std::string::npos);
  // Full plan: 2 batches x 9 h x 2 forms + 14 M-sweep points.
  EXPECT_EQ(PlottedPoints(sample_html), 36u + 14u);
}

// The text summary lists each measured roof with its ratio and ridge.
TEST(ReportTest, SummaryListsRoofsAndFindings) {
  const CalibrationResult r = HandResult();
  const std::string s = RenderCalibrationSummary(r, BuildProfile(r));
  EXPECT_NE(s.find("DRAM: 3.00 TB/s measured (stream-triad 3 x 4 MiB fp32), "
                   "datasheet 3.35 TB/s, ratio 0.90"),
            std::string::npos)
      << s;
  // 1099511627776 / 1.4e-3 = 785.37 TFLOP/s; / 989.4 = 0.79; / 3e12 = 261.8
  EXPECT_NE(s.find("785.37 TFLOP/s"), std::string::npos) << s;
  EXPECT_NE(s.find("0.79"), std::string::npos);
  EXPECT_NE(s.find("261.8"), std::string::npos);
  EXPECT_NE(s.find("matches cuBLAS"), std::string::npos);
  EXPECT_NE(s.find("failed: gemm fp8 8192x8192x8192 - "
                   "CUBLAS_STATUS_NOT_SUPPORTED"),
            std::string::npos);
  EXPECT_EQ(s.find("SAMPLE"), std::string::npos);
}

TEST(ReportTest, UnitsAreHuman) {
  EXPECT_EQ(FormatBytesPerS(3.02e12), "3.02 TB/s");
  EXPECT_EQ(FormatBytesPerS(850e9), "850.00 GB/s");
  EXPECT_EQ(FormatFlopsPerS(756.2e12), "756.20 TFLOP/s");
  EXPECT_EQ(FormatFlopsPerS(0), "-");
  EXPECT_EQ(FormatSeconds(1.24e-3), "1.240 ms");
  EXPECT_EQ(FormatSeconds(12.5e-6), "12.5 us");
}

}  // namespace
}  // namespace rooftrace::kernels

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "kernels/counter_validation.h"
#include "tests/support/sqlite_query.h"

namespace rooftrace::kernels {
namespace {

// What each reference kernel of the hand result must count.
TEST(CounterValidationTest, ExpectedCountsOfReferenceKernels) {
  const std::vector<ExpectedCounts> e = ExpectedReferenceCounts(HandResult());
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].range, "rooftrace:stream_triad");
  EXPECT_EQ(e[0].dram_bytes, 12e6);  // 3 x 1e6 x 4 bytes
  EXPECT_EQ(e[0].flops, 2e6);
  EXPECT_EQ(e[1].range, "rooftrace:stream_copy");
  EXPECT_EQ(e[1].dram_bytes, 8e6);
  EXPECT_FALSE(e[1].flops.has_value());
  EXPECT_EQ(e[2].range, "rooftrace:own_sgemm_tiled_2048x2048x2048");
  EXPECT_EQ(e[2].flops, 17179869184.0);  // 2 x 2048^3
  EXPECT_FALSE(e[2].dram_bytes.has_value());
}

// The median of the counted launches is compared; kernels outside the
// reference ranges and uncounted quantities are ignored.
TEST(CounterValidationTest, MedianOfCountedLaunches) {
  const double f = 17179869184.0;
  std::vector<CountedKernel> k = {
      {"calibrate/rooftrace:own_sgemm_tiled_2048x2048x2048", f * 1.02, 3e7},
      {"rooftrace:own_sgemm_tiled_2048x2048x2048", f, std::nullopt},
      {"rooftrace:own_sgemm_tiled_2048x2048x2048", f * 0.5, std::nullopt},
      {"rooftrace:stream_triad", std::nullopt, 12.6e6},
      {"rooftrace:stream_triad", std::nullopt, 12.0e6},
      {"rooftrace:gemm_bf16_8192x8192x8192", 1.0, 1.0},
      {"", 5.0, 5.0},
  };
  const std::vector<CounterValidation> v = ValidateCounters(HandResult(), k);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].kernel, "stream_triad n=1000000");
  EXPECT_EQ(v[0].quantity, "dram_bytes");
  EXPECT_DOUBLE_EQ(v[0].counted, 12.3e6);  // median of two
  EXPECT_NEAR(v[0].ErrorPercent(), 2.5, 1e-9);
  EXPECT_EQ(v[1].kernel, "own_sgemm_tiled 2048x2048x2048");
  EXPECT_EQ(v[1].quantity, "flops");
  EXPECT_DOUBLE_EQ(v[1].counted, f);
  EXPECT_DOUBLE_EQ(v[1].ErrorPercent(), 0.0);
}

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "");
}

// Reads counted kernels from a store with the documented kernels columns:
// newest run by default, analytic figures are not counts.
TEST(CounterValidationTest, ReadsCountedKernelsFromAStore) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("cv_store_" + std::to_string(::getpid()) + ".sqlite"))
          .string();
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // A store of the documented schema (docs/store.md) with two runs.
  Exec(db, test_support::DocsStoreDdl(ROOFTRACE_SOURCE_DIR));
  Exec(db,
       "INSERT INTO schema_info VALUES ('schema_version', '3');"
       "INSERT INTO runs (run_id) VALUES (1), (2);"
       "INSERT INTO kernels (run_id, session_id, name, start_ns, nvtx_path, "
       "flops, flops_source, dram_bytes, bytes_source) VALUES "
       "(1, 1, 'k', 1, 'rooftrace:stream_copy', NULL, 'none', 111, "
       "'counters'),"
       "(2, 1, 'k', 2, 'rooftrace:stream_copy', NULL, 'none', 222, "
       "'counters'),"
       "(2, 1, 'k', 3, 'rooftrace:own_bf16_mma_64x64x16', 131072, "
       "'counters', 99, 'analytic'),"
       "(2, 1, 'k', 4, 'app/other', 7, 'counters', 7, 'counters');");
  sqlite3_close(db);

  auto newest = ReadCountedKernels(path, -1);
  ASSERT_TRUE(newest.ok()) << newest.status().message();
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[0].dram_bytes, 222.0);
  EXPECT_FALSE((*newest)[0].flops.has_value());
  EXPECT_EQ((*newest)[1].flops, 131072.0);
  EXPECT_FALSE((*newest)[1].dram_bytes.has_value());  // analytic, not counted

  auto first = ReadCountedKernels(path, 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].dram_bytes, 111.0);
  std::filesystem::remove(path);

  auto missing = ReadCountedKernels(path, -1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("--mode counters"),
            std::string::npos);

  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, "CREATE TABLE other (x INTEGER);");
  sqlite3_close(db);
  auto not_store = ReadCountedKernels(path, -1);
  ASSERT_FALSE(not_store.ok());
  EXPECT_NE(not_store.status().message().find("not a rooftrace store"),
            std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rooftrace::kernels

namespace rooftrace::kernels {
namespace {

// Seed 004 on H100 datasheet roofs: ridge 989.4/3.35 = 295.34 FLOP/B, so an
// M x 4096 x 4096 bf16 GEMM crosses at M = R*2*4096^2 / (2*4096^2 -
// R*2*8192) = 345.1; a GEMM whose intensity can never reach the ridge gets 0.
TEST(FormulasTest, RidgeCrossingOfTheMSweep) {
  const double ridge = 989.4e12 / 3350e9;
  const double m = GemmRidgeCrossingM(4096, 4096, 2, ridge);
  EXPECT_NEAR(m, ridge * 2 * 4096.0 * 4096 /
                     (2 * 4096.0 * 4096 - ridge * 2 * 8192), 1e-9);
  EXPECT_NEAR(m, 345.1, 0.1);
  // At the crossing the intensity equals the ridge.
  const double ai = GemmFlops(1, 4096, 4096) * m /
                    (2.0 * (m * 4096 + 4096.0 * 4096 + m * 4096));
  EXPECT_NEAR(ai, ridge, 1e-6);
  // N = K = 256 in bf16 tops out at 2*256*256/(2*512) = 128 FLOP/B.
  EXPECT_EQ(GemmRidgeCrossingM(256, 256, 2, 295.0), 0.0);
}

}  // namespace
}  // namespace rooftrace::kernels

namespace rooftrace::kernels {
namespace {

// A result where every step failed still renders: no points, no roofs, the
// failures listed, and no NaN in the chart.
TEST(ReportTest, EmptyResultRendersWithoutPoints) {
  CalibrationResult r;
  r.device.name = "Unknown GPU";
  r.notes.push_back({"stream", StepStatus::kFailed, "cudaMalloc failed"});
  const DeviceProfile p = BuildProfile(r);
  const std::string html = RenderCalibrationHtml(r, p);
  EXPECT_EQ(PlottedPoints(html), 0u);
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("inf"), std::string::npos);
  EXPECT_NE(html.find("failed: stream &mdash; cudaMalloc failed"),
            std::string::npos);
  const std::string summary = RenderCalibrationSummary(r, p);
  EXPECT_NE(summary.find("DRAM: - measured"), std::string::npos) << summary;
}

}  // namespace
}  // namespace rooftrace::kernels
