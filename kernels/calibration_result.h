// The recorded outcome of one `rooftrace calibrate` run: every timed step
// with its shape, expected FLOPs and bytes, and its status. The CUDA runner
// fills it; everything after that (the device profile, the HTML report, the
// summary table) is built from it on the host, so it can be saved as JSON
// (`calibrate --save-result`) and rebuilt later or in tests without a GPU.
//
// Plain data; thread-compatible. The trap: `sample` marks results that were
// not measured (modelled or hand-made fixtures); reports built from them say
// SAMPLE on every page and never present their numbers as measurements.
#ifndef ROOFTRACE_KERNELS_CALIBRATION_RESULT_H_
#define ROOFTRACE_KERNELS_CALIBRATION_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/device_profile.h"
#include "kernels/plan.h"

namespace rooftrace::kernels {

inline constexpr char kCalibrationResultFormat[] =
    "rooftrace-calibration-result";
inline constexpr int kCalibrationResultVersion = 1;

enum class StepStatus { kOk, kSkipped, kFailed };
std::string_view StepStatusName(StepStatus s);  // "ok", "skipped", "failed"

struct StreamRun {
  std::string kernel;      // "copy" or "triad"
  uint64_t elements = 0;   // per buffer
  uint64_t elem_bytes = 4;
  double best_s = 0;       // best of the timed repeats
  double median_s = 0;
  int repeats = 0;

  double Bytes() const;        // StreamCopyBytes / StreamTriadBytes
  double BytesPerS() const;    // Bytes() / best_s; 0 when not timed
};

struct GemmRun {
  std::string type;        // GemmTypeInfo::key: "bf16"
  std::string api;         // "cublas", "cublasLt"
  GemmShape shape{0, 0, 0};
  StepStatus status = StepStatus::kOk;
  std::string note;        // why skipped / the cuBLAS error
  double best_s = 0;
  double median_s = 0;
  int repeats = 0;

  double Flops() const;      // 2MNK
  double FlopsPerS() const;  // 0 unless ok and timed
};

// One of the project's own GEMM kernels, timed and compared with cuBLAS.
struct OwnKernelRun {
  std::string kernel;      // "own_sgemm_tiled", "own_bf16_mma"
  std::string type;        // "fp32", "bf16"
  GemmShape shape{0, 0, 0};
  StepStatus status = StepStatus::kOk;
  std::string note;
  double best_s = 0;
  double cublas_best_s = 0;  // the same shape through cuBLAS
  double max_rel_error = 0;  // max |own - cublas| / max(|cublas|, 1)
  double tolerance = 0;      // what counts as a match
  bool matches_cublas = false;

  double Flops() const;
  double FlopsPerS() const;
};

// Seed 000: one (batch, h, fused) point of y = gelu(x @ M) @ N in fp16.
struct MlpRun {
  int64_t batch = 0;  // B
  int64_t input_dim = 0;  // I
  int h = 0;          // H = I * h
  bool fused = false; // cuBLASLt GELU epilogue vs GEMM + GELU kernel + GEMM
  StepStatus status = StepStatus::kOk;
  std::string note;
  double best_s = 0;  // the whole MLP (all its kernels)
  int repeats = 0;

  int64_t hidden_dim() const { return input_dim * h; }
  double Flops() const;      // 4BIH + 12BH
  double Bytes() const;      // non-fused or epilogue-fused bytes (fp16)
  double Intensity() const;  // Flops() / Bytes()
  double FlopsPerS() const;
};

// Seed 004: one bf16 GEMM of the M-sweep.
struct MSweepRun {
  GemmShape shape{0, 0, 0};
  StepStatus status = StepStatus::kOk;
  std::string note;
  double best_s = 0;
  int repeats = 0;

  double Flops() const;
  double Bytes() const;      // GemmMinBytes in bf16
  double Intensity() const;
  double FlopsPerS() const;
};

// A step that did not run or did not finish, for the summary.
struct StepNote {
  std::string step;  // "gemm fp8", "counter validation"
  StepStatus status = StepStatus::kSkipped;
  std::string message;
};

struct CalibrationResult {
  bool sample = false;  // true: NOT measured (modelled / fixture)
  std::string sample_note;  // how the sample numbers were made
  bool quick = false;
  std::string created_utc;
  std::string rooftrace_version;
  std::string command;  // the command line that produced it
  DeviceIdentity device;
  int sm = 0;  // compute capability, 10*major+minor

  std::vector<StreamRun> stream;
  std::vector<GemmRun> gemm;
  std::vector<OwnKernelRun> own;
  std::vector<MlpRun> mlp;
  std::vector<MSweepRun> msweep;
  std::vector<CounterValidation> validation;
  std::vector<StepNote> notes;
};

std::string CalibrationResultToJson(const CalibrationResult& r);
StatusOr<CalibrationResult> CalibrationResultFromJson(
    std::string_view text, const std::string& source);
StatusOr<CalibrationResult> LoadCalibrationResult(const std::string& path);
Status SaveCalibrationResult(const CalibrationResult& r,
                             const std::string& path);

// The device profile a result implies: DRAM = best STREAM bytes/s, each
// precision's roof = best ok GEMM of the types that map to it (RoofOf), the
// datasheet figures of the matched GPU, skipped/failed types noted.
DeviceProfile BuildProfile(const CalibrationResult& r);

// A result modelled from a datasheet entry (every time = max(FLOP/peak,
// bytes/bandwidth) at the given efficiency), marked sample = true. Used to
// render the SAMPLE report and in tests; never a measurement.
CalibrationResult MakeModelledSample(const DatasheetEntry& gpu, int sm,
                                     uint64_t l2_bytes, bool quick);

}  // namespace rooftrace::kernels

#endif  // ROOFTRACE_KERNELS_CALIBRATION_RESULT_H_
