#include "libinject/gemm_shapes.h"

#include "libinject/clock.h"
#include "libinject/process.h"
#include "libinject/thread_state.h"
#include "proto/field_numbers.h"

namespace rooftrace::inject {

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
  producer_ = CurrentProducer();
  // ROOFTRACE_TRACE_OFF=cublas (measuring only): the hooks forward alone.
  if (producer_ != nullptr && !producer_->config().parts.cublas) {
    producer_ = nullptr;
  }
  if (producer_ == nullptr) return;
  record_.call_id = producer_->NextGemmCallId();
  record_.api = api;
  record_.batch = 1;
  record_.thread_id = thread_.tid;
  thread_.gemm_call_id = record_.call_id;
  thread_.gemm_correlation_count = 0;
  thread_.gemm_record = &record_;
  record_.start_ns = MonotonicNs();
}

void GemmScope::Finish(int32_t status) {
  if (producer_ == nullptr) return;
  record_.end_ns = MonotonicNs();
  record_.status = status;
  record_.correlation_count = thread_.gemm_correlation_count;
  for (uint32_t i = 0; i < record_.correlation_count &&
                       i < static_cast<uint32_t>(kMaxGemmCorrelations);
       ++i) {
    record_.correlation_ids[i] = thread_.gemm_correlations[i];
  }
  producer_->EmitGemm(record_);
}

GemmScope::~GemmScope() {
  --thread_.gemm_depth;
  if (producer_ != nullptr) {
    thread_.gemm_call_id = 0;
    thread_.gemm_correlation_count = 0;
    thread_.gemm_record = nullptr;
  }
}

}  // namespace rooftrace::inject
