// The records libinject captures on application threads (launches, cuBLAS
// calls, NVTX ranges and marks) and hands to the sender thread through the
// producer's queue. The queue lives in the producer's live buffer
// (proto/live_buffer.h), which the collector reads when the producer dies:
// this layout is part of the contract between the two, checked by size. (The pipeline's records, pipeline/records.h, are the
// decoded wire records; these are the producer's raw captures.)
//
// Plain old data on purpose: they are copied into preallocated queue slots
// without touching the heap, so producing one costs a few stores. Strings
// travel as interned ids (libinject/string_interner.h), never as pointers.
#ifndef ROOFTRACE_PROTO_CAPTURE_RECORDS_H_
#define ROOFTRACE_PROTO_CAPTURE_RECORDS_H_

#include <cstdint>

namespace rooftrace::inject {

// Kernels launched inside one cuBLAS call that the Gemm record lists; more
// are still linked through Launch.gemm_call_id.
inline constexpr int kMaxGemmCorrelations = 8;

struct LaunchRecord {
  uint64_t correlation_id;
  uint64_t api_start_ns;
  uint64_t api_end_ns;
  uint64_t nvtx_range_id;
  uint64_t gemm_call_id;
  uint32_t thread_id;
  uint32_t kind;  // wire::enums::ApiKind
  uint32_t cbid;
};

struct GemmRecord {
  uint64_t call_id;
  int64_t m, n, k, batch;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  uint64_t a_ptr, b_ptr, c_ptr, d_ptr;
  uint64_t start_ns, end_ns;
  uint64_t correlation_ids[kMaxGemmCorrelations];
  uint32_t correlation_count;
  uint32_t api;               // wire::enums::GemmApi
  uint32_t trans_a, trans_b;  // wire::enums::Transpose
  int32_t a_type, b_type, c_type, d_type, compute_type;
  uint32_t epilogue;
  uint32_t thread_id;
  int32_t status;
  uint32_t precision;  // wire::enums::PrecisionClass
};

struct NvtxRangeRecord {
  uint64_t range_id;
  uint64_t domain_iid;
  uint64_t name_iid;
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t parent_range_id;
  uint32_t thread_id;
  uint32_t end_thread_id;
  uint32_t kind;  // wire::enums::RangeKind
  uint32_t depth;
  uint32_t category;
  uint32_t color_argb;
};

struct NvtxMarkRecord {
  uint64_t domain_iid;
  uint64_t name_iid;
  uint64_t timestamp_ns;
  uint32_t thread_id;
};

enum class RecordType : uint32_t {
  kNone = 0,
  kLaunch,
  kGemm,
  kNvtxRange,
  kNvtxMark,
};

// One queue slot. All union members start at the same address, so a
// producer may copy a member's bytes to &launch whatever its type.
struct CapturedRecord {
  RecordType type;
  union {
    LaunchRecord launch;
    GemmRecord gemm;
    NvtxRangeRecord range;
    NvtxMarkRecord mark;
  };
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_PROTO_CAPTURE_RECORDS_H_
