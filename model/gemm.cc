#include "model/gemm.h"

namespace rooftrace {
namespace {

using namespace cuda_type;       // NOLINT: the values of one header
using namespace cublas_compute;  // NOLINT

// The class of work on inputs of `in` when the compute type does not decide
// it (compute 32F, a legacy data-type compute, or none given).
Precision ByInputType(int32_t in) {
  switch (in) {
    case kR16F:
    case kR16BF:
      return Precision::kFp16Tensor;
    case kR8I:
      return Precision::kInt8Tensor;
    case kR32F:
      return Precision::kFp32;
    case kR64F:
      return Precision::kFp64Tensor;
    default:
      return Precision::kUnknown;
  }
}

}  // namespace

int ElementBytes(int32_t t) {
  switch (t) {
    case kR8I: case kR8U: case kR8FE4M3: case kR8FE5M2: return 1;
    case kR16F: case kR16BF: case kR16I: return 2;
    case kR32F: case kR32I: case kR32U: case kC16F: return 4;
    case kR64F: case kR64I: case kC32F: return 8;
    case kC64F: return 16;
    default: return 0;
  }
}

Precision GemmPrecision(const GemmShape& g) {
  const int32_t in = g.a_type >= 0 ? g.a_type : g.b_type;
  if (in == kR8FE4M3 || in == kR8FE5M2) return Precision::kFp8Tensor;
  // Two E2M1 values a byte (MXFP4, NVFP4): no whole element size, so such
  // a GEMM's minimum bytes stay unknown (ElementBytes 0).
  if (in == kR4FE2M1) return Precision::kFp4Tensor;
  switch (g.compute_type) {
    case k16F:
    case k16FPedantic:
    case k32FFast16F:
    case k32FFast16BF:
    case k32FEmulated16BFx9:
      return Precision::kFp16Tensor;
    case k32FFastTf32:
      return Precision::kTf32Tensor;
    case k64F:
    case k64FPedantic:
    case k64FEmulatedFixedPoint:
      return Precision::kFp64Tensor;
    case k32I:
    case k32IPedantic:
      return in == kR8I ? Precision::kInt8Tensor : Precision::kUnknown;
    case k32F:
    case k32FPedantic:
    case -1:
      return ByInputType(in);
    // Legacy APIs pass a cudaDataType_t as the compute type.
    case kR32F:
      return ByInputType(in);
    case kR64F:
      return Precision::kFp64Tensor;
    case kR16F:
      return Precision::kFp16Tensor;
    case kR32I:
      return in == kR8I ? Precision::kInt8Tensor : Precision::kUnknown;
    default:
      return Precision::kUnknown;
  }
}

uint64_t GemmFlops(const GemmShape& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return 0;
  const uint64_t mn_batch = static_cast<uint64_t>(g.m) *
                            static_cast<uint64_t>(g.n) *
                            static_cast<uint64_t>(g.batch);
  return 2ull * mn_batch * static_cast<uint64_t>(g.k) +
         (g.bias_elements > 0 ? mn_batch : 0);
}

uint64_t GemmMinBytes(const GemmShape& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return 0;
  const int ea = ElementBytes(g.a_type);
  const int eb = ElementBytes(g.b_type >= 0 ? g.b_type : g.a_type);
  const int32_t out_type =
      g.d_type >= 0 ? g.d_type : (g.c_type >= 0 ? g.c_type : g.a_type);
  const int ed = ElementBytes(out_type);
  if (ea == 0 || eb == 0 || ed == 0) return 0;
  const auto m = static_cast<uint64_t>(g.m), n = static_cast<uint64_t>(g.n),
             k = static_cast<uint64_t>(g.k);
  const uint64_t bias =
      g.bias_elements > 0 ? static_cast<uint64_t>(g.bias_elements) * ed : 0;
  return (m * k * ea + k * n * eb + m * n * ed) *
             static_cast<uint64_t>(g.batch) +
         bias;
}

}  // namespace rooftrace
