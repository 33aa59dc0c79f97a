// The CUPTI entry points trace mode uses, as a table of function pointers
// resolved at run time from a dlopen()ed libcupti.
//
// Why a table: libinject must load into processes that have no CUDA at all,
// so it carries no link-time dependency on libcupti. Tests fill the table
// with fakes (e.g. ActivityGetNextRecord walking synthetic records) to drive
// the real buffer and callback handling without a GPU.
// Immutable once loaded; thread-safe to share.
#ifndef ROOFTRACE_LIBINJECT_CUPTI_API_H_
#define ROOFTRACE_LIBINJECT_CUPTI_API_H_

#include <cupti.h>

#include <string>

#include "base/status.h"

namespace rooftrace::inject {

struct CuptiApi {
  void* handle = nullptr;  // dlopen handle (null for fakes)
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetVersion)(uint32_t*) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc,
                           void*) = nullptr;
  CUptiResult (*SubscribeV2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc,
                             void*, CUpti_SubscriberParams*) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle,
                                CUpti_CallbackDomain,
                                CUpti_CallbackId) = nullptr;
  CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle,
                              CUpti_CallbackDomain) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t,
                                 const char**) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(
      CUpti_BuffersCallbackRequestFunc,
      CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(
      CUpti_TimestampCallbackFunc) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t,
                                       CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t,
                                              size_t*) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult (*Finalize)() = nullptr;
  // Counters mode: the device of a created context.
  CUptiResult (*GetDeviceId)(CUcontext, uint32_t*) = nullptr;

  // "cuptiSubscribe: CUPTI_ERROR_NO_DEVICE (no CUDA-capable device)".
  std::string Describe(const char* call, CUptiResult result) const;
};

// Opens libcupti (library path first, then the CUPTI directory found at
// build time) and resolves every entry point. The error says which library
// or symbol is missing and how to fix it (LD_LIBRARY_PATH).
StatusOr<CuptiApi> LoadCuptiApi();

}  // namespace rooftrace::inject

// Wraps one CUPTI call: evaluates to a Status that names the call text and
// CUPTI's result string.
#define RT_CUPTI_CALL(api, call_expr, ...)                              \
  ([&]() -> ::rooftrace::Status {                                       \
    if ((api).call_expr == nullptr) {                                   \
      return ::rooftrace::Unavailable("cupti" #call_expr                \
                                      " is not available");            \
    }                                                                   \
    const CUptiResult rt_r_ = (api).call_expr(__VA_ARGS__);             \
    if (rt_r_ == CUPTI_SUCCESS) return ::rooftrace::OkStatus();         \
    return ::rooftrace::Unavailable((api).Describe("cupti" #call_expr,  \
                                                   rt_r_));             \
  }())

#endif  // ROOFTRACE_LIBINJECT_CUPTI_API_H_
