// What libinject records about one cuBLAS / cuBLASLt call: transposes as
// wire enums (the precision class comes from model/gemm.h), and the scope
// object that makes one Gemm record per outermost hooked call.
//
// GemmScope lives on the calling thread's stack inside a hook. The
// thread-local depth makes calls a hooked call makes itself (cublasGemmEx
// -> cublasLtMatmul) forward without a second record, and lets the CUPTI
// launch callback tag kernels with the call's id. No heap.
#ifndef ROOFTRACE_LIBINJECT_GEMM_SHAPES_H_
#define ROOFTRACE_LIBINJECT_GEMM_SHAPES_H_

#include <cstdint>

#include "proto/capture_records.h"

namespace rooftrace::inject {

class Producer;
struct ThreadState;

// cublasOperation_t (0 N, 1 T, 2 C, 3 conjg) -> wire::enums::Transpose.
uint32_t TransposeOf(int32_t cublas_operation);

class GemmScope {
 public:
  explicit GemmScope(uint32_t api);
  ~GemmScope();
  GemmScope(const GemmScope&) = delete;
  GemmScope& operator=(const GemmScope&) = delete;

  // True for the outermost hooked call on this thread, with a producer.
  bool recording() const { return producer_ != nullptr; }
  // The record to fill (shape, types, pointers); call Finish() after the
  // real call with its status.
  GemmRecord& record() { return record_; }
  void Finish(int32_t status);

 private:
  ThreadState& thread_;
  Producer* producer_ = nullptr;
  GemmRecord record_{};
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_GEMM_SHAPES_H_
