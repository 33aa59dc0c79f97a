// The precision classes FLOPs are counted in, each with its own compute roof
// (DESIGN.md "Annotation"). One enum for the whole project: the producer
// (libinject) writes its values on the wire as wire::PrecisionClass (same
// order, same values; tests/proto/field_numbers_test.cc holds the two
// together), the collector annotates with it, the store keeps its keys.
//
// Pure data and functions; thread-safe. Needs nothing but the standard
// library, so the injected library can use it.
#ifndef ROOFTRACE_MODEL_PRECISION_H_
#define ROOFTRACE_MODEL_PRECISION_H_

#include <optional>
#include <string_view>

namespace rooftrace {

enum class Precision : int {
  kUnknown = 0,
  kFp64 = 1,
  kFp32 = 2,
  kFp16 = 3,
  kFp64Tensor = 4,
  kTf32Tensor = 5,
  kFp16Tensor = 6,  // fp16 and bf16 on tensor cores
  kFp8Tensor = 7,
  kInt8Tensor = 8,
  // Added later, hence after the rest: values only grow (the wire's).
  kBf16 = 9,        // bf16 on CUDA cores (fp16's is kFp16)
  kFp4Tensor = 10,  // fp4 (E2M1: MXFP4, NVFP4) on tensor cores
  // Integer arithmetic on CUDA cores (int8..int64 elementwise, reductions,
  // scans: index and position math). No vendor publishes its peak; such
  // kernels are judged by intensity (memory-bound below every ridge).
  kInt = 11,
};
inline constexpr int kNumPrecisions = 12;

// "fp64", "fp32", "fp16", "fp64-tensor", "tf32-tensor", "fp16/bf16-tensor",
// "fp8-tensor", "int8-tensor", "bf16", "fp4-tensor", "int"; "unknown" for
// kUnknown.
std::string_view PrecisionName(Precision p);
// Short column-safe key: "fp64", "fp32", "fp16", "fp64_tc", "tf32_tc",
// "bf16_tc", "fp8_tc", "int8_tc", "bf16", "fp4_tc", "int".
std::string_view PrecisionKey(Precision p);
// Either form above; nullopt for anything else.
std::optional<Precision> PrecisionFromKey(std::string_view key);

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_PRECISION_H_
