#include "libinject/counters/failure_modes.h"

#include <gtest/gtest.h>

#include <string>

namespace rooftrace::counters {
namespace {

bool Has(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

// Restricted counters: the line says both ways to enable them.
TEST(FailureModesTest, InsufficientPrivilegesSaysHowToEnable) {
  CounterFailureReport r = ClassifyCuptiFailure(
      CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiRangeProfilerEnable");
  EXPECT_EQ(r.kind, CounterFailure::kInsufficientPrivileges);
  EXPECT_TRUE(Has(r.line, "NVreg_RestrictProfilingToAdminUsers=0")) << r.line;
  EXPECT_TRUE(Has(r.line, "CAP_SYS_ADMIN")) << r.line;
  EXPECT_TRUE(Has(r.line, "cuptiRangeProfilerEnable")) << r.line;
  EXPECT_TRUE(Has(r.line, "using trace mode")) << r.line;
}

// Every failure kind is one line that ends by falling back to trace mode.
TEST(FailureModesTest, EachResultMapsToItsKindInOneLine) {
  struct Case {
    CUptiResult result;
    CounterFailure kind;
    std::string_view must_say;
  };
  const Case cases[] = {
      {CUPTI_ERROR_HARDWARE_BUSY, CounterFailure::kHardwareBusy, "DCGM"},
      {CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, CounterFailure::kMigUnsupported,
       "MIG"},
      {CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED,
       CounterFailure::kConfidentialCompute, "confidential"},
      {CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED,
       CounterFailure::kVirtualGpu, "virtualized"},
      {CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
       CounterFailure::kVirtualGpu, "vGPU"},
      {CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED, CounterFailure::kUnsupportedDevice,
       "WSL"},
      {CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED,
       CounterFailure::kOtherCuptiClient, "another CUPTI"},
      {CUPTI_ERROR_NOT_INITIALIZED, CounterFailure::kNoDevice, "driver"},
      {CUPTI_ERROR_OUT_OF_MEMORY, CounterFailure::kOutOfMemory,
       "ROOFTRACE_MAX_KERNELS"},
      {CUPTI_ERROR_NOT_SUPPORTED, CounterFailure::kNotSupported, "MPS"},
      {CUPTI_ERROR_UNKNOWN, CounterFailure::kOther, "999"},
  };
  for (const Case& c : cases) {
    CounterFailureReport r = ClassifyCuptiFailure(c.result, "call");
    EXPECT_EQ(r.kind, c.kind) << r.line;
    EXPECT_TRUE(Has(r.line, c.must_say)) << r.line;
    EXPECT_FALSE(Has(r.line, "\n")) << r.line;
    EXPECT_TRUE(r.line.rfind("counters mode off (call): ", 0) == 0) << r.line;
    EXPECT_TRUE(Has(r.line, "; using trace mode")) << r.line;
  }
}

CUpti_Profiler_DeviceSupported_Params AllSupported() {
  CUpti_Profiler_DeviceSupported_Params p{};
  p.isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.architecture = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.sli = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.vGpu = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.confidentialCompute = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.cmp = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.wsl = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  return p;
}

// The device-support answer: supported is no failure; each unsupported item
// names its own reason.
TEST(FailureModesTest, DeviceSupportNamesTheUnsupportedItem) {
  EXPECT_FALSE(ClassifyDeviceSupport(AllSupported()).has_value());

  CUpti_Profiler_DeviceSupported_Params cc = AllSupported();
  cc.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  cc.confidentialCompute = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  std::optional<CounterFailureReport> r = ClassifyDeviceSupport(cc);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, CounterFailure::kConfidentialCompute);

  CUpti_Profiler_DeviceSupported_Params vgpu = AllSupported();
  vgpu.vGpu = CUPTI_PROFILER_CONFIGURATION_DISABLED;
  r = ClassifyDeviceSupport(vgpu);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, CounterFailure::kVirtualGpu);
  EXPECT_TRUE(Has(r->line, "enable")) << r->line;

  CUpti_Profiler_DeviceSupported_Params old = AllSupported();
  old.architecture = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  r = ClassifyDeviceSupport(old);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, CounterFailure::kUnsupportedDevice);

  CUpti_Profiler_DeviceSupported_Params other = AllSupported();
  other.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  r = ClassifyDeviceSupport(other);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, CounterFailure::kNotSupported);
}

// The CUDA graph note says what is and is not counted.
TEST(FailureModesTest, GraphNoteSaysWhatIsNotCounted) {
  std::string note(CudaGraphNote());
  EXPECT_TRUE(Has(note, "cudaGraphLaunch"));
  EXPECT_TRUE(Has(note, "not counted"));
  EXPECT_TRUE(Has(note, "stream capture"));
}

}  // namespace
}  // namespace rooftrace::counters
