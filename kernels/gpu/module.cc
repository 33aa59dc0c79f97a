// librooftrace_calibrate.so: the C entry point over the GPU runner (see
// kernels/gpu_module.h). No exception crosses it.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "kernels/calibration_result.h"
#include "kernels/gpu_module.h"
#include "kernels/gpu_runner.h"

namespace {

char* Copy(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int rooftrace_calibrate_v1(
    const RooftraceCalibrateArgs* args, char** out) {
  using namespace rooftrace;
  try {
    kernels::GpuRunOptions options;
    options.quick = args->quick != 0;
    options.device = args->device;
    options.command = args->command ? args->command : "";
    if (args->progress) {
      auto* fn = args->progress;
      void* ctx = args->context;
      options.progress = [fn, ctx](const std::string& line) {
        fn(line.c_str(), ctx);
      };
    }
    auto result = kernels::RunCalibrationOnGpu(options);
    if (!result.ok()) {
      *out = Copy(result.status().message());
      return result.status().code() == StatusCode::kUnavailable
                 ? kRooftraceCalibrateUnavailable
                 : kRooftraceCalibrateError;
    }
    *out = Copy(kernels::CalibrationResultToJson(*result));
    return kRooftraceCalibrateOk;
  } catch (const std::exception& e) {
    *out = Copy(std::string("calibration failed: ") + e.what());
    return kRooftraceCalibrateError;
  } catch (...) {
    *out = Copy("calibration failed: unknown exception");
    return kRooftraceCalibrateError;
  }
}
