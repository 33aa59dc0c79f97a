// The CUDA runner of `rooftrace calibrate` (see kernels/gpu_runner.h).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/formulas.h"
#include "kernels/gpu/blas.h"
#include "kernels/gpu/check.h"
#include "kernels/gpu/device_kernels.h"
#include "kernels/gpu_runner.h"

namespace rooftrace::kernels {
namespace gpu {
namespace {

constexpr size_t kWorkspaceBytes = 64ull << 20;
constexpr int kWarmups = 2;

// An NVTX range for the lifetime of the object, named after the kernel or
// step, so a trace of calibration names every kernel it contains.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

// Device memory owned for one step.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  Status Allocate(size_t bytes, const char* what) {
    cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
      ptr_ = nullptr;
      cudaGetLastError();  // clear the sticky-free error state
      return Status(StatusCode::kResourceExhausted,
                    std::string("cudaMalloc of ") + std::to_string(bytes >> 20) +
                        " MiB for " + what + " failed: " +
                        cudaGetErrorName(e));
    }
    bytes_ = bytes;
    return OkStatus();
  }
  template <typename T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

struct Timing {
  double best_s = 0, median_s = 0;
  int repeats = 0;
};

// Times `body` (asynchronous work on `stream`) with CUDA events. After
// kWarmups untimed calls and one call to estimate its length, each of the
// `repeats` samples times `inner` back-to-back calls (inner chosen so a
// sample lasts at least kMinSampleS) and divides: a kernel of a few
// microseconds is then timed with the queue full, not with the launch
// latency of the first call. Returns the best and median per-call time.
constexpr double kMinSampleS = 200e-6;
constexpr int kMaxInner = 200;

StatusOr<double> ElapsedS(cudaEvent_t start, cudaEvent_t stop) {
  RT_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  RT_CUDA(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e-3;
}

StatusOr<Timing> TimeIt(cudaStream_t stream, int repeats,
                        const std::function<Status()>& body) {
  for (int i = 0; i < kWarmups; ++i) RT_RETURN_IF_ERROR(body());
  RT_CUDA(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  RT_CUDA(cudaEventCreate(&start));
  if (cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) {
    cudaEventDestroy(start);
    return CudaStatus(e, "cudaEventCreate(&stop)");
  }
  auto sample = [&](int inner) -> StatusOr<double> {
    RT_CUDA(cudaEventRecord(start, stream));
    for (int i = 0; i < inner; ++i) RT_RETURN_IF_ERROR(body());
    RT_CUDA(cudaEventRecord(stop, stream));
    RT_ASSIGN_OR_RETURN(double s, ElapsedS(start, stop));
    return s / inner;
  };
  std::vector<double> times;
  Status status;
  auto estimate = sample(1);
  if (!estimate.ok()) status = estimate.status();
  int inner = 1;
  if (status.ok() && *estimate > 0) {
    inner = static_cast<int>(
        std::min<double>(kMaxInner, std::ceil(kMinSampleS / *estimate)));
    inner = std::max(inner, 1);
  }
  for (int i = 0; i < repeats && status.ok(); ++i) {
    auto t = sample(inner);
    if (!t.ok()) {
      status = t.status();
      break;
    }
    times.push_back(*t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  RT_RETURN_IF_ERROR(status);
  if (times.empty()) return InternalError("TimeIt: no repeats requested");
  std::sort(times.begin(), times.end());
  Timing t;
  t.repeats = static_cast<int>(times.size());
  t.best_s = times.front();
  t.median_s = times[times.size() / 2];
  return t;
}

std::string Shape(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string Tflops(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f TFLOP/s", v / 1e12);
  return buf;
}

// The NVIDIA driver's version string from NVML, when the library is there
// (it ships with the driver). Loaded at run time: no link dependency.
std::string DriverVersionFromNvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "";
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto version =
      reinterpret_cast<VersionFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
  std::string out;
  if (init && version && shutdown && init() == 0) {
    char buf[96] = {};
    if (version(buf, sizeof buf) == 0) out = buf;
    shutdown();
  }
  dlclose(lib);
  return out;
}

std::string UuidText(const cudaUUID_t& u) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  snprintf(buf, sizeof buf,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
           "%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
           b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

StatusOr<DeviceIdentity> Probe(int device, int* sm) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    const std::string why =
        e != cudaSuccess
            ? std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) +
                  " (" + cudaGetErrorString(e) + ")"
            : std::string("the CUDA driver reports no GPU");
    const std::string hint =
        e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice
            ? " (no NVIDIA driver is loaded, or no GPU is visible)"
            : "";
    return Unavailable(
        "no usable NVIDIA GPU: " + why + hint +
        ". Calibration runs the reference kernels on a GPU: run it on a "
        "machine with an NVIDIA GPU and driver, or render a recorded result "
        "with --from-result result.json");
  }
  if (device < 0 || device >= count) {
    return Unavailable("--device " + std::to_string(device) +
                       " does not exist: this machine has " +
                       std::to_string(count) + " GPU(s), ordinals 0.." +
                       std::to_string(count - 1));
  }
  RT_CUDA(cudaSetDevice(device));
  cudaDeviceProp prop{};
  RT_CUDA(cudaGetDeviceProperties(&prop, device));
  DeviceIdentity id;
  id.name = prop.name;
  id.uuid = UuidText(prop.uuid);
  id.chip = "sm_" + std::to_string(prop.major * 10 + prop.minor);
  *sm = prop.major * 10 + prop.minor;
  id.sm_count = prop.multiProcessorCount;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) ==
      cudaSuccess) {
    id.sm_clock_mhz = khz / 1000.0;
  }
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) ==
      cudaSuccess) {
    id.memory_clock_mhz = khz / 1000.0;
  }
  id.memory_bus_width_bits = prop.memoryBusWidth;
  id.memory_bytes = prop.totalGlobalMem;
  id.l2_bytes = static_cast<uint64_t>(prop.l2CacheSize);
  int v = 0;
  cudaDriverGetVersion(&v);
  const std::string nvml = DriverVersionFromNvml();
  id.driver_version = (nvml.empty() ? "" : nvml + ", ") + "CUDA " +
                      std::to_string(v / 1000) + "." +
                      std::to_string((v % 1000) / 10);
  cudaRuntimeGetVersion(&v);
  id.runtime_version =
      std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  return id;
}

std::string NowUtc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Max |x - ref| / max |ref| of two float arrays on the device.
StatusOr<double> MaxRelError(const float* x, const float* ref, size_t n) {
  std::vector<float> hx(n), hr(n);
  RT_CUDA(cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
  RT_CUDA(
      cudaMemcpy(hr.data(), ref, n * sizeof(float), cudaMemcpyDeviceToHost));
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(hx[i])) return std::numeric_limits<double>::infinity();
    max_diff = std::max(max_diff, std::fabs(double(hx[i]) - hr[i]));
    max_ref = std::max(max_ref, std::fabs(double(hr[i])));
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

StatusOr<double> MaxRelErrorHalf(const __half* x, const __half* ref,
                                 size_t n) {
  std::vector<__half> hx(n), hr(n);
  RT_CUDA(cudaMemcpy(hx.data(), x, n * 2, cudaMemcpyDeviceToHost));
  RT_CUDA(cudaMemcpy(hr.data(), ref, n * 2, cudaMemcpyDeviceToHost));
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = __half2float(hx[i]), b = __half2float(hr[i]);
    if (!std::isfinite(a)) return std::numeric_limits<double>::infinity();
    max_diff = std::max(max_diff, std::fabs(a - b));
    max_ref = std::max(max_ref, std::fabs(b));
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

// Holds the handles and the stream of one calibration run.
class Runner {
 public:
  explicit Runner(const GpuRunOptions& options) : options_(options) {}
  ~Runner() {
    if (lt_) cublasLtDestroy(lt_);
    if (blas_) cublasDestroy(blas_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  Status Init() {
    RT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    RT_CUBLAS(cublasCreate(&blas_));
    RT_CUBLAS(cublasSetStream(blas_, stream_));
    RT_CUBLAS(cublasLtCreate(&lt_));
    RT_RETURN_IF_ERROR(workspace_.Allocate(kWorkspaceBytes, "cuBLASLt workspace"));
    return OkStatus();
  }

  void Progress(const std::string& what) {
    if (!options_.progress) return;
    char buf[32];
    snprintf(buf, sizeof buf, "[%d/%d] ", ++step_, total_steps_);
    options_.progress(buf + what);
  }

  void set_total_steps(int n) { total_steps_ = n; }

  // ------------------------------------------------------------- STREAM
  Status Stream(const CalibrationPlan& plan, CalibrationResult* r) {
    const size_t n = plan.stream_elements;
    DeviceBuffer a, b, c;
    RT_RETURN_IF_ERROR(a.Allocate(n * 4, "STREAM a"));
    RT_RETURN_IF_ERROR(b.Allocate(n * 4, "STREAM b"));
    RT_RETURN_IF_ERROR(c.Allocate(n * 4, "STREAM c"));
    RT_RETURN_IF_ERROR(LaunchFill(a.get(), n, FillType::kFp32, 1, 1, stream_));
    RT_RETURN_IF_ERROR(LaunchFill(b.get(), n, FillType::kFp32, 2, 1, stream_));
    RT_RETURN_IF_ERROR(LaunchFill(c.get(), n, FillType::kFp32, 3, 1, stream_));
    for (const char* kernel : {"copy", "triad"}) {
      const bool copy = std::string(kernel) == "copy";
      const std::string name = std::string("rooftrace:stream_") + kernel;
      auto t = TimeIt(stream_, plan.stream_repeats, [&]() -> Status {
        NvtxRange range(name);
        return copy ? LaunchStreamCopy(a.get<float>(), c.get<float>(), n,
                                       stream_)
                    : LaunchStreamTriad(a.get<float>(), b.get<float>(),
                                        c.get<float>(), 3.0f, n, stream_);
      });
      RT_RETURN_IF_ERROR(t.status());
      StreamRun s;
      s.kernel = kernel;
      s.elements = n;
      s.best_s = t->best_s;
      s.median_s = t->median_s;
      s.repeats = t->repeats;
      char buf[160];
      snprintf(buf, sizeof buf, "stream %s %.0f MiB/buffer: %.1f GB/s",
               kernel, n * 4.0 / (1 << 20), s.BytesPerS() / 1e9);
      Progress(buf);
      r->stream.push_back(s);
    }
    return OkStatus();
  }

  // ------------------------------------------------------- peak GEMMs
  void PeakGemms(const CalibrationPlan& plan, CalibrationResult* r) {
    for (const auto& [type, why] : SkippedGemmTypes(r->sm)) {
      GemmRun g;
      g.type = std::string(GemmTypeInfoOf(type).key);
      g.api = "cublasLt";
      g.shape = plan.peak_shapes.front();
      g.status = StepStatus::kSkipped;
      g.note = why;
      r->gemm.push_back(g);
      if (options_.progress) options_.progress("skipped: " + why);
    }
    for (GemmType type : plan.gemm_types) {
      for (const GemmShape& s : plan.peak_shapes) {
        GemmRun g;
        g.type = std::string(GemmTypeInfoOf(type).key);
        g.api = "cublasLt";
        g.shape = s;
        g.repeats = plan.gemm_repeats;
        Status st = PeakGemm(type, s, plan.gemm_repeats, &g);
        if (!st.ok()) {
          g.status = StepStatus::kFailed;
          g.note = st.message();
          r->notes.push_back({"gemm " + g.type + " " +
                                  Shape(s.m, s.n, s.k),
                              StepStatus::kFailed, st.message()});
          Progress("gemm " + g.type + " " + Shape(s.m, s.n, s.k) +
                   ": FAILED: " + st.message());
          cudaGetLastError();
        } else {
          Progress("gemm " + g.type + " " + Shape(s.m, s.n, s.k) + ": " +
                   Tflops(g.FlopsPerS()));
        }
        r->gemm.push_back(g);
      }
    }
  }

  Status PeakGemm(GemmType type, const GemmShape& s, int repeats, GemmRun* g) {
    const LtGemmSpec spec = PeakSpec(type, s.m, s.n, s.k);
    DeviceBuffer a, b, c;
    RT_RETURN_IF_ERROR(
        a.Allocate(size_t(s.m) * s.k * ElementBytes(spec.a_type), "A"));
    RT_RETURN_IF_ERROR(
        b.Allocate(size_t(s.k) * s.n * ElementBytes(spec.b_type), "B"));
    RT_RETURN_IF_ERROR(
        c.Allocate(size_t(s.m) * s.n * ElementBytes(spec.c_type), "C"));
    FillType fill = FillType::kFp32;
    float scale = 1;
    switch (type) {
      case GemmType::kFp64: fill = FillType::kFp64; break;
      case GemmType::kFp32:
      case GemmType::kTf32: fill = FillType::kFp32; break;
      case GemmType::kFp16: fill = FillType::kFp16; break;
      case GemmType::kBf16: fill = FillType::kBf16; break;
      case GemmType::kFp8: fill = FillType::kFp8E4M3; break;
      case GemmType::kInt8: fill = FillType::kInt8; scale = 8; break;
    }
    RT_RETURN_IF_ERROR(
        LaunchFill(a.get(), size_t(s.m) * s.k, fill, 11, scale, stream_));
    RT_RETURN_IF_ERROR(
        LaunchFill(b.get(), size_t(s.k) * s.n, fill, 12, scale, stream_));
    RT_ASSIGN_OR_RETURN(auto gemm, LtGemm::Create(lt_, spec, workspace_.get(),
                                                  workspace_.bytes()));
    const std::string name =
        "rooftrace:gemm_" + g->type + "_" + Shape(s.m, s.n, s.k);
    RT_ASSIGN_OR_RETURN(Timing t, TimeIt(stream_, repeats, [&]() -> Status {
      NvtxRange range(name);
      return gemm->Run(a.get(), b.get(), c.get(), stream_);
    }));
    g->best_s = t.best_s;
    g->median_s = t.median_s;
    g->repeats = t.repeats;
    return OkStatus();
  }

  // ----------------------------------------------------- own kernels
  void OwnKernels(const CalibrationPlan& plan, CalibrationResult* r) {
    for (bool bf16 : {false, true}) {
      OwnKernelRun o;
      o.kernel = bf16 ? "own_bf16_mma" : "own_sgemm_tiled";
      o.type = bf16 ? "bf16" : "fp32";
      o.shape = bf16 ? plan.own_bf16_shape : plan.own_fp32_shape;
      Status st = OwnGemm(bf16, o.shape, plan.gemm_repeats, &o);
      if (!st.ok()) {
        o.status = st.code() == StatusCode::kFailedPrecondition
                       ? StepStatus::kSkipped
                       : StepStatus::kFailed;
        o.note = st.message();
        r->notes.push_back({o.kernel, o.status, st.message()});
        Progress(o.kernel + ": " + std::string(StepStatusName(o.status)) +
                 ": " + st.message());
        cudaGetLastError();
      } else {
        char buf[200];
        snprintf(buf, sizeof buf,
                 "%s %s: %.1f TFLOP/s (cuBLAS %.1f), max rel. error %.2g "
                 "(tolerance %.2g): %s",
                 o.kernel.c_str(),
                 Shape(o.shape.m, o.shape.n, o.shape.k).c_str(),
                 o.FlopsPerS() / 1e12, o.Flops() / o.cublas_best_s / 1e12,
                 o.max_rel_error, o.tolerance,
                 o.matches_cublas ? "matches cuBLAS" : "DOES NOT MATCH cuBLAS");
        Progress(buf);
      }
      r->own.push_back(o);
    }
  }

  Status OwnGemm(bool bf16, const GemmShape& s, int repeats,
                 OwnKernelRun* o) {
    const size_t mk = size_t(s.m) * s.k, kn = size_t(s.k) * s.n,
                 mn = size_t(s.m) * s.n;
    const size_t in_bytes = bf16 ? 2 : 4;
    DeviceBuffer a, b, c_own, c_ref;
    RT_RETURN_IF_ERROR(a.Allocate(mk * in_bytes, "A"));
    RT_RETURN_IF_ERROR(b.Allocate(kn * in_bytes, "B"));
    RT_RETURN_IF_ERROR(c_own.Allocate(mn * 4, "C (own)"));
    RT_RETURN_IF_ERROR(c_ref.Allocate(mn * 4, "C (cuBLAS)"));
    const FillType fill = bf16 ? FillType::kBf16 : FillType::kFp32;
    RT_RETURN_IF_ERROR(LaunchFill(a.get(), mk, fill, 21, 1, stream_));
    RT_RETURN_IF_ERROR(LaunchFill(b.get(), kn, fill, 22, 1, stream_));
    const std::string name = "rooftrace:" + o->kernel + "_" +
                             Shape(s.m, s.n, s.k);
    RT_ASSIGN_OR_RETURN(Timing own, TimeIt(stream_, repeats, [&]() -> Status {
      NvtxRange range(name);
      return bf16 ? LaunchOwnBf16Gemm(int(s.m), int(s.n), int(s.k),
                                      a.get<__nv_bfloat16>(),
                                      b.get<__nv_bfloat16>(),
                                      c_own.get<float>(), stream_)
                  : LaunchOwnSgemm(int(s.m), int(s.n), int(s.k),
                                   a.get<float>(), b.get<float>(),
                                   c_own.get<float>(), stream_);
    }));
    // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
    const float alpha = 1, beta = 0;
    const cudaDataType_t t = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const std::string ref_name = "rooftrace:cublas_reference_" + o->type +
                                 "_" + Shape(s.m, s.n, s.k);
    RT_ASSIGN_OR_RETURN(Timing ref, TimeIt(stream_, repeats, [&]() -> Status {
      NvtxRange range(ref_name);
      RT_CUBLAS(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, int(s.n),
                             int(s.m), int(s.k), &alpha, b.get(), t, int(s.n),
                             a.get(), t, int(s.k), &beta, c_ref.get(),
                             CUDA_R_32F, int(s.n), CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT));
      return OkStatus();
    }));
    RT_CUDA(cudaStreamSynchronize(stream_));
    RT_ASSIGN_OR_RETURN(double err,
                        MaxRelError(c_own.get<float>(), c_ref.get<float>(), mn));
    o->best_s = own.best_s;
    o->cublas_best_s = ref.best_s;
    o->max_rel_error = err;
    // Same inputs, fp32 accumulation on both sides: only the summation
    // order differs. bf16 products are exact in fp32, so the tolerances
    // bound rounding of K-long sums, not input precision.
    o->tolerance = bf16 ? 1e-3 : 1e-4;
    o->matches_cublas = err <= o->tolerance;
    return OkStatus();
  }

  // ------------------------------------------------------- seed 000 MLP
  void Mlp(const CalibrationPlan& plan, CalibrationResult* r) {
    for (int64_t batch : plan.mlp_batches) {
      for (int h : plan.mlp_h) {
        MlpRun runs[2];
        Status st = MlpPoint(batch, plan.mlp_input_dim, h, plan.mlp_repeats,
                             runs);
        for (MlpRun& m : runs) {
          m.batch = batch;
          m.input_dim = plan.mlp_input_dim;
          m.h = h;
          char buf[200];
          if (!st.ok()) {
            m.status = StepStatus::kFailed;
            m.note = st.message();
            snprintf(buf, sizeof buf, "mlp %s batch %lld h %d: FAILED: %s",
                     m.fused ? "fused" : "non-fused",
                     static_cast<long long>(batch), h, st.message().c_str());
          } else {
            snprintf(buf, sizeof buf,
                     "mlp %s batch %lld h %d: %s, %.1f FLOP/B, %.2f TFLOP/s",
                     m.fused ? "fused" : "non-fused",
                     static_cast<long long>(batch), h,
                     FormatTime(m.best_s).c_str(), m.Intensity(),
                     m.FlopsPerS() / 1e12);
          }
          Progress(buf);
          r->mlp.push_back(m);
        }
        if (!st.ok()) {
          r->notes.push_back({"mlp batch " + std::to_string(batch) + " h " +
                                  std::to_string(h),
                              StepStatus::kFailed, st.message()});
          cudaGetLastError();
        }
      }
    }
  }

  static std::string FormatTime(double s) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
    return buf;
  }

  // runs[0] = non-fused, runs[1] = fused.
  Status MlpPoint(int64_t batch, int64_t in_dim, int h, int repeats,
                  MlpRun* runs) {
    runs[0].fused = false;
    runs[1].fused = true;
    const int64_t hid = in_dim * h;
    DeviceBuffer x, w1, w2, t, g, y, y_fused;
    RT_RETURN_IF_ERROR(x.Allocate(size_t(batch) * in_dim * 2, "x"));
    RT_RETURN_IF_ERROR(w1.Allocate(size_t(in_dim) * hid * 2, "M"));
    RT_RETURN_IF_ERROR(w2.Allocate(size_t(hid) * in_dim * 2, "N"));
    RT_RETURN_IF_ERROR(t.Allocate(size_t(batch) * hid * 2, "x@M"));
    RT_RETURN_IF_ERROR(g.Allocate(size_t(batch) * hid * 2, "gelu(x@M)"));
    RT_RETURN_IF_ERROR(y.Allocate(size_t(batch) * in_dim * 2, "y"));
    RT_RETURN_IF_ERROR(y_fused.Allocate(size_t(batch) * in_dim * 2, "y"));
    // Scale the weights so activations stay O(1) in fp16.
    RT_RETURN_IF_ERROR(LaunchFill(x.get(), size_t(batch) * in_dim,
                                  FillType::kFp16, 31, 1, stream_));
    RT_RETURN_IF_ERROR(LaunchFill(w1.get(), size_t(in_dim) * hid,
                                  FillType::kFp16, 32,
                                  float(1.7 / std::sqrt(double(in_dim))),
                                  stream_));
    RT_RETURN_IF_ERROR(LaunchFill(w2.get(), size_t(hid) * in_dim,
                                  FillType::kFp16, 33,
                                  float(1.7 / std::sqrt(double(hid))),
                                  stream_));
    // Row-major T[BxH] = x[BxI] M[IxH] is column-major T^T = M^T x^T with
    // m = H, n = B, k = I and no transposes; likewise y^T = N^T G^T.
    LtGemmSpec s1{CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F,
                  CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N, hid, batch, in_dim,
                  CUBLASLT_EPILOGUE_DEFAULT};
    LtGemmSpec s1_gelu = s1;
    s1_gelu.epilogue = CUBLASLT_EPILOGUE_GELU;
    LtGemmSpec s2{CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F,
                  CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N, in_dim, batch, hid,
                  CUBLASLT_EPILOGUE_DEFAULT};
    RT_ASSIGN_OR_RETURN(auto gemm1, LtGemm::Create(lt_, s1, workspace_.get(),
                                                   workspace_.bytes()));
    RT_ASSIGN_OR_RETURN(auto gemm1_gelu,
                        LtGemm::Create(lt_, s1_gelu, workspace_.get(),
                                       workspace_.bytes()));
    RT_ASSIGN_OR_RETURN(auto gemm2, LtGemm::Create(lt_, s2, workspace_.get(),
                                                   workspace_.bytes()));
    const std::string tag =
        "_b" + std::to_string(batch) + "_h" + std::to_string(h);
    // Range names built once: the timed loop should only launch.
    const std::string n_nonfused = "rooftrace:mlp_nonfused" + tag,
                      n_gemm1 = "rooftrace:mlp_gemm1" + tag,
                      n_gelu = "rooftrace:mlp_gelu" + tag,
                      n_gemm2 = "rooftrace:mlp_gemm2" + tag,
                      n_fused = "rooftrace:mlp_fused" + tag,
                      n_gemm1_gelu = "rooftrace:mlp_gemm1_gelu_epilogue" + tag;
    RT_ASSIGN_OR_RETURN(Timing nonfused,
                        TimeIt(stream_, repeats, [&]() -> Status {
      NvtxRange range(n_nonfused);
      {
        NvtxRange r1(n_gemm1);
        RT_RETURN_IF_ERROR(gemm1->Run(w1.get(), x.get(), t.get(), stream_));
      }
      {
        NvtxRange r2(n_gelu);
        RT_RETURN_IF_ERROR(LaunchGeluFp16(t.get<__half>(), g.get<__half>(),
                                          size_t(batch) * hid, stream_));
      }
      NvtxRange r3(n_gemm2);
      return gemm2->Run(w2.get(), g.get(), y.get(), stream_);
    }));
    RT_ASSIGN_OR_RETURN(Timing fused, TimeIt(stream_, repeats, [&]() -> Status {
      NvtxRange range(n_fused);
      {
        NvtxRange r1(n_gemm1_gelu);
        RT_RETURN_IF_ERROR(
            gemm1_gelu->Run(w1.get(), x.get(), g.get(), stream_));
      }
      NvtxRange r2(n_gemm2);
      return gemm2->Run(w2.get(), g.get(), y_fused.get(), stream_);
    }));
    RT_CUDA(cudaStreamSynchronize(stream_));
    runs[0].best_s = nonfused.best_s;
    runs[0].repeats = nonfused.repeats;
    runs[1].best_s = fused.best_s;
    runs[1].repeats = fused.repeats;
    // Both forms compute the same function: their outputs must agree to
    // fp16 rounding (the GELU formulas may differ in the last bits).
    RT_ASSIGN_OR_RETURN(double err,
                        MaxRelErrorHalf(y_fused.get<__half>(), y.get<__half>(),
                                        size_t(batch) * in_dim));
    if (!(err <= 2e-2)) {
      char buf[160];
      snprintf(buf, sizeof buf,
               "fused and non-fused outputs differ: max rel. error %.3g "
               "(limit 2e-2)", err);
      return InternalError(buf);
    }
    return OkStatus();
  }

  // ------------------------------------------------- seed 004 M-sweep
  void MSweep(const CalibrationPlan& plan, CalibrationResult* r) {
    const int64_t n = plan.msweep_n, k = plan.msweep_k;
    const int64_t max_m = *std::max_element(plan.msweep_m.begin(),
                                            plan.msweep_m.end());
    DeviceBuffer w, x, y;
    Status st = w.Allocate(size_t(k) * n * 2, "W");
    if (st.ok()) st = x.Allocate(size_t(max_m) * k * 2, "X");
    if (st.ok()) st = y.Allocate(size_t(max_m) * n * 2, "Y");
    if (st.ok()) {
      st = LaunchFill(w.get(), size_t(k) * n, FillType::kBf16, 41, 1, stream_);
    }
    if (st.ok()) {
      st = LaunchFill(x.get(), size_t(max_m) * k, FillType::kBf16, 42, 1,
                      stream_);
    }
    for (int64_t m : plan.msweep_m) {
      MSweepRun run;
      run.shape = {m, n, k};
      Status one = st;
      if (one.ok()) one = MSweepPoint(m, n, k, plan.msweep_repeats, w, x, y, &run);
      char buf[200];
      if (!one.ok()) {
        run.status = StepStatus::kFailed;
        run.note = one.message();
        r->notes.push_back({"m-sweep M=" + std::to_string(m),
                            StepStatus::kFailed, one.message()});
        snprintf(buf, sizeof buf, "m-sweep bf16 %s: FAILED: %s",
                 Shape(m, n, k).c_str(), one.message().c_str());
        cudaGetLastError();
      } else {
        snprintf(buf, sizeof buf, "m-sweep bf16 %s: %s, %.1f FLOP/B, %.2f TFLOP/s",
                 Shape(m, n, k).c_str(), FormatTime(run.best_s).c_str(),
                 run.Intensity(), run.FlopsPerS() / 1e12);
      }
      Progress(buf);
      r->msweep.push_back(run);
    }
  }

  Status MSweepPoint(int64_t m, int64_t n, int64_t k, int repeats,
                     const DeviceBuffer& w, const DeviceBuffer& x,
                     const DeviceBuffer& y, MSweepRun* run) {
    // Row-major Y[MxN] = X[MxK] W[KxN] is column-major Y^T = W^T X^T.
    LtGemmSpec spec{CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
                    CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
                    CUBLASLT_EPILOGUE_DEFAULT};
    RT_ASSIGN_OR_RETURN(auto gemm, LtGemm::Create(lt_, spec, workspace_.get(),
                                                  workspace_.bytes()));
    const std::string name = "rooftrace:msweep_bf16_" + Shape(m, n, k);
    RT_ASSIGN_OR_RETURN(Timing t, TimeIt(stream_, repeats, [&]() -> Status {
      NvtxRange range(name);
      return gemm->Run(w.get(), x.get(), y.get(), stream_);
    }));
    run->best_s = t.best_s;
    run->repeats = t.repeats;
    return OkStatus();
  }

 private:
  const GpuRunOptions& options_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;
  int step_ = 0, total_steps_ = 0;
};

}  // namespace
}  // namespace gpu

bool GpuAvailable(std::string* why) {
  int sm = 0;
  auto id = gpu::Probe(0, &sm);
  if (!id.ok() && why) *why = id.status().message();
  return id.ok();
}

StatusOr<OwnKernelRun> RunOwnGemmCheck(bool bf16, const GemmShape& shape,
                                       int repeats) {
  GpuRunOptions options;
  gpu::Runner runner(options);
  RT_RETURN_IF_ERROR(runner.Init());
  OwnKernelRun o;
  o.kernel = bf16 ? "own_bf16_mma" : "own_sgemm_tiled";
  o.type = bf16 ? "bf16" : "fp32";
  o.shape = shape;
  RT_RETURN_IF_ERROR(runner.OwnGemm(bf16, shape, repeats, &o));
  return o;
}

StatusOr<CalibrationResult> RunCalibrationOnGpu(const GpuRunOptions& options) {
  CalibrationResult r;
  RT_ASSIGN_OR_RETURN(r.device, gpu::Probe(options.device, &r.sm));
  r.quick = options.quick;
  r.command = options.command;
  r.created_utc = gpu::NowUtc();
  const CalibrationPlan plan = MakePlan(options.quick, r.device.l2_bytes, r.sm);
  if (options.progress) {
    options.progress("calibrating " + r.device.name + " (" + r.device.chip +
                     ", " + std::to_string(r.device.sm_count) + " SMs, L2 " +
                     std::to_string(r.device.l2_bytes >> 20) + " MiB)" +
                     (options.quick ? ", --quick" : ""));
    for (const std::string& line : DescribePlan(plan)) {
      options.progress("  plan: " + line);
    }
  }
  gpu::Runner runner(options);
  RT_RETURN_IF_ERROR(runner.Init());
  runner.set_total_steps(
      2 + static_cast<int>(plan.gemm_types.size() * plan.peak_shapes.size()) +
      2 + static_cast<int>(plan.mlp_batches.size() * plan.mlp_h.size() * 2) +
      static_cast<int>(plan.msweep_m.size()));
  if (Status s = runner.Stream(plan, &r); !s.ok()) {
    r.notes.push_back({"stream", StepStatus::kFailed, s.message()});
    if (options.progress) options.progress("stream: FAILED: " + s.message());
    cudaGetLastError();
  }
  runner.PeakGemms(plan, &r);
  runner.OwnKernels(plan, &r);
  runner.Mlp(plan, &r);
  runner.MSweep(plan, &r);
  r.notes.push_back(
      {"counter validation", StepStatus::kSkipped,
       "needs a counters-mode recording of this run: `rooftrace profile "
       "--mode counters -o cal.sqlite -- rooftrace calibrate --quick "
       "--save-result r.json`, then `rooftrace calibrate --from-result "
       "r.json --counters-store cal.sqlite -o profile.json`"});
  return r;
}

}  // namespace rooftrace::kernels
