// The boundary between `rooftrace calibrate` and its CUDA half. The GPU
// runner and the cuBLAS/cuBLASLt libraries it needs live in a module
// (librooftrace_calibrate.so, built with CUDA) that CalibrateMain loads with
// dlopen only when a calibration runs: every other rooftrace command starts
// without mapping cuBLAS (about 0.2 s per start otherwise).
//
// C ABI, versioned by the entry point's name; the result crosses it as the
// JSON of a CalibrationResult (kernels/calibration_result.h).
#ifndef ROOFTRACE_KERNELS_GPU_MODULE_H_
#define ROOFTRACE_KERNELS_GPU_MODULE_H_

extern "C" {

struct RooftraceCalibrateArgs {
  int quick;            // 0 or 1
  int device;           // CUDA device ordinal
  const char* command;  // recorded in the result
  // One call per progress line; may be null.
  void (*progress)(const char* line, void* context);
  void* context;
};

// Return codes of the entry point.
enum {
  kRooftraceCalibrateOk = 0,           // *out: the result JSON
  kRooftraceCalibrateUnavailable = 1,  // *out: why there is no usable GPU
  kRooftraceCalibrateError = 2,        // *out: the error
};

// *out is allocated with malloc(); the caller frees it.
typedef int (*RooftraceCalibrateFn)(const RooftraceCalibrateArgs* args,
                                    char** out);

}  // extern "C"

namespace rooftrace::kernels {
inline constexpr char kCalibrateModuleFile[] = "librooftrace_calibrate.so";
inline constexpr char kCalibrateEntryPoint[] = "rooftrace_calibrate_v1";
// Overrides where the module is looked for (a full path).
inline constexpr char kCalibrateModuleEnv[] = "ROOFTRACE_CALIBRATE_MODULE";
}  // namespace rooftrace::kernels

#endif  // ROOFTRACE_KERNELS_GPU_MODULE_H_
