#include "libinject/gemm_shapes.h"

#include "libinject/clock.h"
#include "proto/field_numbers.h"
#include "libinject/session.h"
#include "libinject/thread_state.h"

namespace rooftrace::inject {

namespace {
// cudaDataType values (library_types.h); kept here so this file needs no
// CUDA header.
constexpr int32_t kR32F = 0, kR64F = 1, kR16F = 2, kR8I = 3, kR32I = 10,
                  kR16BF = 14, kR8F_E4M3 = 28, kR8F_E5M2 = 29;
// cublasComputeType_t values (cublas_api.h).
constexpr int32_t kCompute16F = 64, kCompute16FPedantic = 65,
                  kCompute32F = 68, kCompute32FPedantic = 69,
                  kCompute64F = 70, kCompute64FPedantic = 71,
                  kCompute32I = 72, kCompute32IPedantic = 73,
                  kCompute32FFast16F = 74, kCompute32FFast16BF = 75,
                  kCompute32FFastTF32 = 77, kCompute32FEmulated16BFx9 = 78,
                  kCompute64FEmulatedFixedPoint = 79;

uint32_t ByInputType(int32_t a_type, uint32_t otherwise) {
  switch (a_type) {
    case kR16F:
    case kR16BF:
      return wire::enums::kPrecisionFp16Tensor;
    case kR8F_E4M3:
    case kR8F_E5M2:
      return wire::enums::kPrecisionFp8Tensor;
    case kR8I:
      return wire::enums::kPrecisionInt8Tensor;
    default:
      return otherwise;
  }
}
}  // namespace

uint32_t PrecisionClassOf(int32_t compute_type, int32_t a_type) {
  switch (compute_type) {
    case kCompute16F:
    case kCompute16FPedantic:
    case kCompute32FFast16F:
    case kCompute32FFast16BF:
    case kCompute32FEmulated16BFx9:
      return wire::enums::kPrecisionFp16Tensor;
    case kCompute32FFastTF32:
      return wire::enums::kPrecisionTf32Tensor;
    case kCompute32F:
    case kCompute32FPedantic:
      return ByInputType(a_type, wire::enums::kPrecisionFp32);
    case kCompute64F:
    case kCompute64FPedantic:
    case kCompute64FEmulatedFixedPoint:
      return wire::enums::kPrecisionFp64;
    case kCompute32I:
    case kCompute32IPedantic:
      return wire::enums::kPrecisionInt8Tensor;
    // Legacy callers pass a cudaDataType as the compute type.
    case kR32F:
      return ByInputType(a_type, wire::enums::kPrecisionFp32);
    case kR64F:
      return wire::enums::kPrecisionFp64;
    case kR16F:
      return wire::enums::kPrecisionFp16Tensor;
    case kR32I:
      return wire::enums::kPrecisionInt8Tensor;
    default:
      return wire::enums::kPrecisionUnknown;
  }
}

uint32_t TransposeOf(int32_t op) {
  switch (op) {
    case 0: return wire::enums::kTransposeN;
    case 1: return wire::enums::kTransposeT;
    case 2: return wire::enums::kTransposeC;
    case 3: return wire::enums::kTransposeC;  // CUBLAS_OP_CONJG
    default: return wire::enums::kTransposeUnknown;
  }
}

GemmScope::GemmScope(uint32_t api) : thread_(CurrentThread()) {
  if (thread_.gemm_depth++ != 0) return;  // nested: the outer call records
  session_ = Session::Current();
  if (session_ == nullptr) return;
  record_.call_id = session_->NextGemmCallId();
  record_.api = api;
  record_.batch = 1;
  record_.thread_id = thread_.tid;
  thread_.gemm_call_id = record_.call_id;
  thread_.gemm_correlation_count = 0;
  record_.start_ns = MonotonicNs();
}

void GemmScope::Finish(int32_t status) {
  if (session_ == nullptr) return;
  record_.end_ns = MonotonicNs();
  record_.status = status;
  record_.correlation_count = thread_.gemm_correlation_count;
  for (uint32_t i = 0; i < record_.correlation_count &&
                       i < static_cast<uint32_t>(kMaxGemmCorrelations);
       ++i) {
    record_.correlation_ids[i] = thread_.gemm_correlations[i];
  }
  session_->EmitGemm(record_);
}

GemmScope::~GemmScope() {
  --thread_.gemm_depth;
  if (session_ != nullptr) {
    thread_.gemm_call_id = 0;
    thread_.gemm_correlation_count = 0;
  }
}

}  // namespace rooftrace::inject
