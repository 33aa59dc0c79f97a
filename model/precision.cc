#include "model/precision.h"

namespace rooftrace {

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp64: return "fp64";
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kFp64Tensor: return "fp64-tensor";
    case Precision::kTf32Tensor: return "tf32-tensor";
    case Precision::kFp16Tensor: return "fp16/bf16-tensor";
    case Precision::kFp8Tensor: return "fp8-tensor";
    case Precision::kInt8Tensor: return "int8-tensor";
    case Precision::kBf16: return "bf16";
    case Precision::kFp4Tensor: return "fp4-tensor";
    case Precision::kInt: return "int";
    case Precision::kUnknown: break;
  }
  return "unknown";
}

std::string_view PrecisionKey(Precision p) {
  switch (p) {
    case Precision::kFp64: return "fp64";
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kFp64Tensor: return "fp64_tc";
    case Precision::kTf32Tensor: return "tf32_tc";
    case Precision::kFp16Tensor: return "bf16_tc";
    case Precision::kFp8Tensor: return "fp8_tc";
    case Precision::kInt8Tensor: return "int8_tc";
    case Precision::kBf16: return "bf16";
    case Precision::kFp4Tensor: return "fp4_tc";
    case Precision::kInt: return "int";
    case Precision::kUnknown: break;
  }
  return "unknown";
}

std::optional<Precision> PrecisionFromKey(std::string_view key) {
  for (int i = 1; i < kNumPrecisions; ++i) {
    auto p = static_cast<Precision>(i);
    if (key == PrecisionKey(p) || key == PrecisionName(p)) return p;
  }
  return std::nullopt;
}

}  // namespace rooftrace
